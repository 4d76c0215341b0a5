"""The solver registry: one module per algorithm, each declaring a :class:`SolverSpec`.

``registry()`` returns the specs in a fixed order; the CLI, sweeps, the tests' common checks and
the benchmarks iterate over it. A solver module holds its public function, its ``plan`` (defaults
and calibration from public constants), its ``run`` (the kernel call) and its ``bound``, and
registers its spec; the public functions stay at the top level (``dpsolve.noisy_sgd``, ...).
Adding a solver: docs/adding_a_solver.md.
"""
from .. import _capabilities
from ._lifecycle import Bound, Plan, Released, SolverSpec, document, fit

_REGISTRY = {}


def register(spec):
    """Add ``spec`` to the registry (at import of its module); names are unique.

    Parameters
    ----------
    spec : SolverSpec
        The solver's spec. Registering the same object again is a no-op; another spec under a
        registered name raises ValueError.

    Returns
    -------
    SolverSpec
        ``spec`` itself.
    """
    if not isinstance(spec, SolverSpec):
        raise TypeError(f"spec must be a SolverSpec, got {type(spec).__name__}")
    if spec.name in _REGISTRY:
        if _REGISTRY[spec.name] is not spec:
            raise ValueError(f"a solver named {spec.name!r} is already registered")
        return spec
    _REGISTRY[spec.name] = spec
    # for the messages that name the solvers taking a sparse X or loss='multinomial'
    _capabilities.record(spec.name, spec.sparse, spec.losses)
    return spec


def registry():
    """The registered solvers' specs, in registration order (a tuple).

    Returns
    -------
    tuple of SolverSpec
        One spec per registered solver.
    """
    return tuple(_REGISTRY.values())


def get(name):
    """The spec of the solver called ``name``; ValueError naming the solvers otherwise.

    Parameters
    ----------
    name : str
        The solver's name (``SolverSpec.name``, e.g. ``"noisy_sgd"``).

    Returns
    -------
    SolverSpec
        Its spec.
    """
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown solver {name!r}; the solvers are "
                         f"{', '.join(_REGISTRY)}") from None


# The built-in solvers, in the order the docs list them.
from . import (noisy_sgd, clipped_gd, minibatch_sgd, output_perturbation,  # noqa: E402
               objective_perturbation, multiparty_gd, aggregated_output_perturbation, joint_sgd)
from . import dp_sgd  # noqa: E402  (the worked example of docs/adding_a_solver.md)
from . import adassp  # noqa: E402

__all__ = ["Bound", "Plan", "Released", "SolverSpec", "document", "fit", "get", "register",
           "registry"]
