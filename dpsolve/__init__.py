"""dpsolve: Cython-accelerated solvers for differentially private empirical risk minimisation.

Main entry points: :class:`Problem` (data, loss, constraint); the solvers :func:`noisy_sgd`
(seed 000, SGD1) and :func:`clipped_gd` (seed 004, DP-GD), :func:`minibatch_sgd` (seed 001); :func:`reference_minimizer` and
:func:`excess_risk` (certified exact minimisers), the theorems' bounds in :mod:`dpsolve.bounds`, and :class:`Fit` (what a solver released).
"""
from . import bounds, datasets
from .fit import Fit
from ._clipped_gd import clipped_gd
from ._minibatch_sgd import minibatch_sgd
from ._noisy_sgd import noisy_sgd
from .privacy import PrivacyWarning
from .problem import Problem
from .reference import ReferenceSolution, excess_risk, reference_minimizer

__all__ = ["Fit", "PrivacyWarning", "Problem", "ReferenceSolution", "bounds", "clipped_gd",
           "excess_risk", "minibatch_sgd",
           "noisy_sgd", "reference_minimizer"]
__version__ = "0.1.0"
