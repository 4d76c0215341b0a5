"""The solver registry: one module per algorithm, each declaring a :class:`SolverSpec`.

``registry()`` returns the specs in a fixed order; the CLI, sweeps, the tests' common checks and
the benchmarks iterate over it. A solver module holds its public function, its ``plan`` (defaults
and calibration from public constants), its ``run`` (the kernel call) and its ``bound``, and
registers its spec; the public functions stay at the top level (``dpsolve.noisy_sgd``, ...).
Adding a solver: docs/adding_a_solver.md.
"""
from ._accepts import Accepts
from ._hooks import Hooks
from ._lifecycle import (Bound, Measured, Plan, Released, SolverSpec, Target, document, lifecycle,
                         plan_fit, run_plan, run_solver)
from ._registry import get, register, registry

# The built-in solvers, in the order the docs list them.
from . import (noisy_sgd, clipped_gd, minibatch_sgd, output_perturbation,
               objective_perturbation, multiparty_gd, aggregated_output_perturbation, joint_sgd)
from . import dp_sgd  # (the worked example of docs/adding_a_solver.md)
from . import adassp
from . import phased_erm
from . import sco_sgd  # (Bassily-Feldman-Talwar-Thakurta 2019, the DP-SCO baseline)
from . import frank_wolfe

__all__ = ["Accepts", "Bound", "Hooks", "Measured", "Plan", "Released", "SolverSpec", "Target",
           "document", "get", "lifecycle", "plan_fit", "register", "registry", "run_plan",
           "run_solver"]
