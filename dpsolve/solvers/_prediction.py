r"""The ridge chosen for prediction (the estimators' ``reg="auto"``): the constants every
solver's rule shares, the generic rule, and the one entry point that asks a solver's hook.

The derivation is in :mod:`dpsolve.tuning`'s docstring; each solver whose noise shrinks as the
ridge grows states its own rule (``Hooks.prediction_reg``) in its module.
"""
import math

from ._registry import get

#: The public guess of ``||theta_0|| B``: how many logits the reference model's margin can
#: move across rows of norm at most B.
MARGIN_SCALE = 30.0

#: Points of a search grid of lambda (public: a function of n only), for a solver whose rule
#: is a search.
GRID_POINTS = 121


def prediction_constants(problem):
    """``(n, p, floor, R_0)`` of ``problem`` for a prediction rule: p counts every parameter
    (``p K`` for more than two classes), ``floor = 1/n`` (scikit-learn's ``C = 1``) and
    ``R_0 = MARGIN_SCALE / B`` the public stand-in for ``||theta_0 - c||``.

    Parameters
    ----------
    problem : Problem
        Only its public constants are read.

    Returns
    -------
    tuple of (int, int, float, float)
    """
    n, p, B = problem.n, problem.p, problem.row_norm
    if problem.n_classes and problem.n_classes > 2:
        p = p * problem.n_classes
    return n, p, 1.0 / n, MARGIN_SCALE / B if B > 0 else MARGIN_SCALE


def prediction_reg(spec, problem, epsilon, delta=None):
    r"""The ridge ``lambda`` minimising the unregularised excess-risk bound of ``spec``'s
    release on ``problem`` at ``(epsilon, delta)``, at least ``1/n``: the solver's own rule
    (``spec.hooks.prediction_reg``), or the gradient methods' (Bassily, Feldman, Talwar &
    Thakurta 2019; Feldman, Koren & Talwar 2020),
    ``lambda = (L / R_0) sqrt(p) / (n epsilon)``. A loss without a finite Lipschitz constant
    gets ``1/n``.

    Parameters
    ----------
    spec : SolverSpec
        The solver.
    problem : Problem
        Its ``reg`` is ignored; only public constants are read.
    epsilon : float
        The fit's epsilon.
    delta : float or None
        The fit's delta (None or 0: pure).

    Returns
    -------
    float
    """
    n, p, floor, R0 = prediction_constants(problem)
    L = problem.lipschitz
    if not math.isfinite(L):
        return floor
    if spec.hooks.prediction_reg is not None:
        return max(floor, spec.hooks.prediction_reg(problem, epsilon, delta))
    return max(floor, (L / R0) * math.sqrt(p) / (n * epsilon))


def choice_reg(problem, epsilon, delta=None):
    """The ridge at which :func:`dpsolve.choose_solver` compares the solvers for a fit whose
    ridge is chosen for prediction too: objective perturbation's where it takes the loss and
    the geometry (the likely winner there, as its noise shrinks when the ridge grows), else None
    (the Problem's own).

    Parameters
    ----------
    problem : Problem
        Only its public constants are read.
    epsilon : float
        The fit's epsilon.
    delta : float or None
        The fit's delta (None: pure).

    Returns
    -------
    float or None
    """
    spec = get("objective_perturbation")
    # its rule reads row_norm as an l2 bound: no ridge from it over the l1 ball
    if not spec.takes(problem.loss_object) or problem.constraint not in spec.constraints:
        return None
    return prediction_reg(spec, problem, epsilon, delta)
