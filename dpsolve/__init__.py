"""dpsolve: Cython-accelerated solvers for differentially private empirical risk minimisation.

Main entry points: :class:`Problem` (data, loss, constraint); the solvers :func:`noisy_sgd`
(Bassily-Smith-Thakurta 2014),
:func:`clipped_gd` (DP-GD with per-sample clipping, from the DP-GD lecture notes),
:func:`minibatch_sgd` (Song-Chaudhuri-Sarwate 2013), :func:`output_perturbation`
(Chaudhuri-Monteleoni-Sarwate 2011) and :func:`objective_perturbation` (Iyengar et al. 2019's
approximate minima perturbation); the multi-party solvers over :class:`Parties`,
:func:`multiparty_gd` (the multi-party SGD notes' gradient descent, and Jayaraman et al. 2018's
gradient perturbation) and
:func:`aggregated_output_perturbation` (Jayaraman et al. 2018's model aggregation);
:func:`joint_sgd` (Huang et al. 2023, joint DP across data owners; more in
:mod:`dpsolve.joint`); :func:`reference_minimizer` and :func:`excess_risk` (certified exact
minimisers); :func:`excess_population_risk` (the excess population risk on a distribution whose
risk is known, :mod:`dpsolve.population`); the theorems' bounds in :mod:`dpsolve.bounds`; and
:class:`Fit` (what a solver released). A privacy budget across fits is a
:class:`BudgetAccountant`; private hyperparameter selection is :mod:`dpsolve.private_selection`,
scikit-learn estimators :mod:`dpsolve.estimators`. Accounting and noise are in
:mod:`dpsolve.privacy`, statistical privacy audits in :mod:`dpsolve.audit`. Conventions shared by
all of them: docs/conventions.md; the source
documents: docs/sources.md.
"""
from . import (_version, audit, bounds, chunked, datasets, joint, population, privacy,
               private_selection)
from .fit import Fit
from .parties import Parties
from .privacy import BudgetAccountant, PrivacyWarning
from .problem import Problem
from .solvers import registry as _registry
from .solvers.choose import choose_solver
from .reference import ReferenceSolution, excess_risk, reference_minimizer
from .population import excess_population_risk

# every registered solver's public function under its name (``dpsolve.noisy_sgd``, ...): the
# registry is the one list, so registering a solver exports it
globals().update({_spec.name: _spec.function for _spec in _registry()})

__all__ = ["BudgetAccountant", "Fit", "Parties", "PrivacyWarning", "Problem", "ReferenceSolution",
           "audit", "bounds", "choose_solver", "datasets", "excess_population_risk", "excess_risk",
           "joint", "population", "privacy", "private_selection", "reference_minimizer"]
__all__ = sorted(__all__ + [_spec.name for _spec in _registry()])
__version__ = _version.__version__
