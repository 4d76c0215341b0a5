r"""Regularisation chosen for prediction: the estimators' ``reg="auto"``.

A private fit at a fixed ridge ``lambda`` answers the wrong question for a user who judges the
model by AUC or log-loss: its noise is bounded on the *regularised* objective, and a ``lambda``
that is large for the data (``1e-3`` on a few thousand records, several times scikit-learn's
``1/n``) erases
the rare class, while one that is small lets the noise dominate. Here ``lambda`` is the
minimiser, over a public grid, of a bound on the *unregularised* excess risk of the solver's
release, from public constants only (n, p, the row bound B, epsilon, delta, the loss):

.. math::

    L(\hat\theta) - L(\theta_0) \le \frac{\lambda}{2} \|\theta_0 - c\|^2 + E(\lambda),

where ``theta_0`` is any reference predictor, ``c`` the regulariser's centre (the private base
rate on the intercept, docs/intercepts.md) and ``E`` the solver's noise term:

* objective perturbation (Chaudhuri, Monteleoni & Sarwate 2011): the release minimises
  ``F_lambda + <b, theta>/n``, so ``F_lambda(theta_hat) - min F_lambda <= ||b||^2 / (n^2
  lambda)`` and ``E = E||b||^2 / (n^2 lambda)``, with ``E||b||^2 = p (p + 1) (2B/epsilon')^2``
  for gamma-norm noise (``epsilon' = epsilon - ln(1 + c B^2 / (n lambda))``) and ``p sigma^2``
  for Gaussian noise (:func:`~dpsolve.approximate_minima.gaussian_objective_sigma`);
* output perturbation: ``theta_lambda + u`` with ``||u||`` of scale ``2L / (n lambda epsilon)``
  and a ``beta``-smooth loss, ``E = beta E||u||^2 / 2``;
* AdaSSP (Wang 2018) adds the ridge its noise needs by itself: ``lambda = 1/n``;
* the gradient methods (DP-GD, DP-SGD): their noise does not shrink with ``lambda``; the
  regulariser of the DP stochastic convex optimisation rates (Bassily, Feldman, Talwar &
  Thakurta 2019; Feldman, Koren & Talwar 2020), ``lambda = (L / R_0) sqrt(p) / (n epsilon)``.

``||theta_0 - c||`` is unknown; it is replaced by the public ``R_0 = MARGIN_SCALE / B``: a model
whose margins swing by up to ``MARGIN_SCALE`` logits across rows of norm B. The bound's
trade-off is lopsided — too much regularisation shrinks every probability to the base rate and
the rare class is never predicted, too little adds noise a user sees as a small loss of AUC — so
``MARGIN_SCALE`` is generous (30). ``lambda`` is never below ``1/n``, scikit-learn's ``C = 1``
(the choice of the non-private baseline users compare with).

How it behaves as ``n epsilon`` grows: ``lambda`` falls like ``p B^2 / (n epsilon MARGIN_SCALE)``
for objective perturbation (like ``(n epsilon)^{-2/3}`` for output perturbation), until it
meets ``1/n``; with a centre at the base rate, a large ``lambda`` shrinks the model towards the
constant predictor of the base rate, never past it.
"""
import math

import numpy as np

from .approximate_minima import gaussian_objective_sigma, objective_jacobian_term

__all__ = ["MARGIN_SCALE", "prediction_reg"]

#: The public guess of ``||theta_0|| B``: how many logits the reference model's margin can
#: move across rows of norm at most B.
MARGIN_SCALE = 30.0

# the search grid of lambda (public: a function of n only)
_GRID = 121


def prediction_reg(problem, solver, epsilon, delta=None):
    r"""The ridge ``lambda`` that minimises the unregularised excess-risk bound of ``solver``'s
    release on ``problem`` at ``(epsilon, delta)`` (module docstring), at least ``1/n``.

    Reads only public constants of ``problem`` (n, p, the row bound, the loss's constants).

    Parameters
    ----------
    problem : Problem
        Its ``reg`` is ignored.
    solver : str
        A registered solver's name.
    epsilon : float
        The fit's epsilon.
    delta : float or None
        The fit's delta (None or 0: pure).

    Returns
    -------
    float
    """
    n, p, B = problem.n, problem.p, problem.row_norm
    if problem.n_classes and problem.n_classes > 2:
        p = p * problem.n_classes
    floor = 1.0 / n
    R0 = MARGIN_SCALE / B if B > 0 else MARGIN_SCALE
    L = problem.lipschitz
    if solver == "adassp" or not math.isfinite(L):
        # AdaSSP sets its own ridge from the noise (Wang 2018); the floor is scikit-learn's
        return floor
    if solver == "objective_perturbation":
        grid = np.geomspace(floor, 1e4, _GRID)
        values = [lam * R0 * R0 / 2.0 + _objective_noise(problem, lam, epsilon, delta, p)
                  / (n * n * lam) for lam in grid]
        return float(grid[int(np.argmin(values))])
    if solver == "output_perturbation":
        beta = problem.smoothness
        # E||u||^2 = p (p + 1) (2L / (n lam eps))^2; minimise lam R0^2/2 + beta E||u||^2 / 2
        lam = (2.0 * beta * p * (p + 1) * (2.0 * L / (n * epsilon)) ** 2 / R0 ** 2) ** (1 / 3)
        return max(floor, lam)
    return max(floor, (L / R0) * math.sqrt(p) / (n * epsilon))


def _objective_noise(problem, lam, epsilon, delta, p):
    """``E||b||^2`` of objective perturbation's noise (sum form) at ridge ``lam``; inf where
    the Jacobian term alone spends epsilon."""
    cB2 = problem.loss_object.curvature * problem.row_norm ** 2
    if delta:
        sigma = gaussian_objective_sigma(cB2, problem.row_norm, problem.n, lam, epsilon, delta)
        return p * sigma * sigma
    eps_prime = epsilon - objective_jacobian_term(cB2, problem.n, lam)
    if eps_prime <= 0.0:
        return math.inf
    return p * (p + 1) * (2.0 * problem.row_norm / eps_prime) ** 2
