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
  for Gaussian noise (:func:`~.privacy_constants.gaussian_objective_sigma`);
* output perturbation: ``theta_lambda + u`` with ``||u||`` of scale ``2L / (n lambda epsilon)``
  and a ``beta``-smooth loss, ``E = beta E||u||^2 / 2``;
* AdaSSP (Wang 2018) adds the ridge its noise needs by itself: ``lambda = 1/n``;
* the gradient methods (DP-GD, DP-SGD): their noise does not shrink with ``lambda``; the
  regulariser of the DP stochastic convex optimisation rates (Bassily, Feldman, Talwar &
  Thakurta 2019; Feldman, Koren & Talwar 2020), ``lambda = (L / R_0) sqrt(p) / (n epsilon)``.

Each of these rules lives with its solver (``SolverSpec.hooks.prediction_reg``, in the solver's
module); the gradient methods' is the rule for a solver without one
(:func:`dpsolve.solvers._prediction.prediction_reg`).

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
from .solvers import get
from .solvers._prediction import MARGIN_SCALE, choice_reg
from .solvers._prediction import prediction_reg as _prediction_reg

__all__ = ["MARGIN_SCALE", "choice_reg", "prediction_options", "prediction_reg"]


def prediction_reg(problem, solver, epsilon, delta=None):
    r"""The ridge ``lambda`` that minimises the unregularised excess-risk bound of ``solver``'s
    release on ``problem`` at ``(epsilon, delta)`` (module docstring), at least ``1/n``: the
    solver's own rule (``SolverSpec.hooks.prediction_reg``), or the gradient methods'.

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
    return _prediction_reg(get(solver), problem, epsilon, delta)


def prediction_options(solver):
    """The options a fit of ``solver`` at its prediction ridge takes unless the caller sets
    them (``SolverSpec.hooks.prediction_options``).

    Parameters
    ----------
    solver : str
        A registered solver's name.

    Returns
    -------
    mapping
    """
    return get(solver).hooks.prediction_options
