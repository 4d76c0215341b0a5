"""Excess-risk bounds from the theorems behind dpsolve's solvers, and minimax lower bounds.

Every function says which normalisation it returns: ``form="mean"`` bounds
``F(theta) - F(theta*)`` for the mean-form objective (dpsolve's canonical form), ``form="sum"``
bounds ``L(theta) - L(theta*)`` for the sum ``L = n F`` that seed 000 uses
(shared/REFERENCE.md section 1). Bounds stated with ``O(.)`` are returned with constant 1 and say
so: they give the scaling, not a guaranteed number.

Constants come from the Problem: ``G = problem.gradient_bound`` (``L + lambda R``, the
Lipschitz constant of a per-sample term of the regularised objective over C),
``||C||_2 = problem.diameter`` (``2R``), ``Delta = problem.reg``.
"""
import math

from ._validation import check_choice, check_real
from .problem import Problem

FORMS = ("mean", "sum")


def _check(problem, epsilon, delta=None, form="mean"):
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    check_real(epsilon, "epsilon", low=0.0)
    if delta is not None:
        check_real(delta, "delta", low=0.0, high=1.0)
    check_choice(form, "form", FORMS)


def _in_form(sum_value, problem, form):
    return sum_value if form == "sum" else sum_value / problem.n


def sgd1_lipschitz_bound(problem, epsilon, delta, *, form="mean"):
    r"""Seed 000, Theorem 2, case 1 (eq. 9): SGD1 with step sizes (4) on an L-Lipschitz loss.

    .. math:: E[L(\theta_T) - L(\theta^*)] = O\!\left(\frac{G \|C\|_2 \ln^2(1.25 n^2/\delta) \sqrt{p}}{\epsilon}\right)

    in sum form (divided by n for ``form="mean"``), with the O-constant set to 1.
    Infinite without a constraint.
    """
    _check(problem, epsilon, delta, form)
    n = problem.n
    value = (problem.gradient_bound * problem.diameter * math.log(1.25 * n * n / delta) ** 2
             * math.sqrt(problem.p) / epsilon)
    return _in_form(value, problem, form)


def sgd1_strongly_convex_bound(problem, epsilon, delta, *, form="mean"):
    r"""Seed 000, Theorem 2, case 2 (eq. 10): SGD1 with ``eta(t) = 1/(Delta n t)`` on an
    L-Lipschitz, Delta-strongly convex loss (Delta = ``problem.reg``).

    .. math:: E[L(\theta_T) - L(\theta^*)] = O\!\left(\frac{G^2 \ln^3(1.25 n^2/\delta)\, p}{n \Delta \epsilon^2}\right)

    in sum form (divided by n for ``form="mean"``), with the O-constant set to 1. Needs
    ``reg > 0``; infinite when the gradient bound is (no constraint and ``reg > 0``).
    """
    _check(problem, epsilon, delta, form)
    if problem.reg <= 0.0:
        raise ValueError("the strongly convex bound needs problem.reg > 0")
    n = problem.n
    value = (problem.gradient_bound ** 2 * math.log(1.25 * n * n / delta) ** 3 * problem.p
             / (n * problem.reg * epsilon ** 2))
    return _in_form(value, problem, form)


def lower_bound_lipschitz(problem, epsilon, *, form="mean"):
    r"""Bassily-Smith-Thakurta 2014 lower bound for (epsilon, delta)-DP ERM, Lipschitz convex
    losses (shared/REFERENCE.md section 7), constant 1:

    .. math:: \Omega\!\left(G \|C\|_2 \min\left(1, \frac{\sqrt{p}}{\epsilon n}\right)\right)

    in mean form (times n for ``form="sum"``). A minimax rate (for delta = o(1/n)): some
    dataset is this hard; a particular dataset may do better.
    """
    _check(problem, epsilon, None, form)
    value = problem.gradient_bound * problem.diameter * min(
        1.0, math.sqrt(problem.p) / (epsilon * problem.n))
    return value if form == "mean" else value * problem.n


def lower_bound_strongly_convex(problem, epsilon, *, form="mean"):
    r"""Bassily-Smith-Thakurta 2014 lower bound for (epsilon, delta)-DP ERM, lambda-strongly
    convex losses (shared/REFERENCE.md section 7), constant 1:

    .. math:: \Omega\!\left(\min\left(G \|C\|_2, \frac{G^2 p}{\lambda \epsilon^2 n^2}\right)\right)

    in mean form (times n for ``form="sum"``). Needs ``reg > 0``.
    """
    _check(problem, epsilon, None, form)
    if problem.reg <= 0.0:
        raise ValueError("the strongly convex lower bound needs problem.reg > 0")
    G, n = problem.gradient_bound, problem.n
    value = min(G * problem.diameter, G * G * problem.p / (problem.reg * epsilon ** 2 * n * n))
    return value if form == "mean" else value * n
