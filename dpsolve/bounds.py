"""Excess-risk bounds from the theorems behind dpsolve's solvers, and minimax lower bounds.

Every function says which normalisation it returns: ``form="mean"`` bounds
``F(theta) - F(theta*)`` for the mean-form objective (dpsolve's canonical form), ``form="sum"``
bounds ``L(theta) - L(theta*)`` for the sum ``L = n F`` that the multi-party SGD notes (after
Bassily-Smith-Thakurta 2014) use (docs/conventions.md, "The objective: mean form"). Bounds stated
with ``O(.)`` are returned with constant 1 and say so: they give the scaling, not a guaranteed
number.

Constants come from the Problem: ``G = problem.gradient_bound`` (``L + lambda R``, the
Lipschitz constant of a per-sample term of the regularised objective over C),
``||C||_2 = problem.diameter`` (``2R``), ``Delta = problem.reg``. The dimension ``p`` in the
formulas is the number of parameters, ``p K`` for the multinomial loss (theta of shape (p, K),
Frobenius norms): the theorems hold in any Euclidean space of that dimension. Bounds of solvers
that do not take the multinomial loss raise ValueError for it.

This module holds the theory no single solver owns: the minimax lower bounds
(:func:`lower_bound_lipschitz`, :func:`lower_bound_strongly_convex`; over the l1 ball,
:func:`l1_erm_lower_bound`; on the excess *population* risk, :func:`dp_sco_lower_bound`), the
optimal DP-SCO rate and its crossover
(:func:`dp_sco_rate`), the minimiser's norm
(:func:`minimizer_norm_bound`), noisy projected gradient descent
(:func:`gradient_perturbation_bound`) and the arguments and forms every bound shares. Each
solver's own bound is in its solver's module, beside the spec's ``bound`` that evaluates it at
a plan (``dpsolve.solvers.<name>``: :func:`~dpsolve.solvers.noisy_sgd.noisy_sgd_lipschitz_bound`,
:func:`~dpsolve.solvers.clipped_gd.clipped_gd_bound`, ...), and is still given here under its
name, the same object. The bound of joint-DP noisy SGD (Huang et al. 2023, Theorem 3.1) depends
on the joint model's gradient bound and is with that model: :func:`dpsolve.joint.joint_sgd_bound`.
The settings that minimise objective perturbation's bound, and the privacy constants it rests
on, are with the method: :mod:`dpsolve.solvers.objective_perturbation.approximate_minima`.
"""
import dataclasses
import math

import numpy as np

from ._capabilities import multinomial_solvers
from ._moved import moved_names
from ._validation import check_choice, check_int, check_real
from .problem import Problem, reject_multinomial

FORMS = ("mean", "sum")


def parameter_count(problem):
    """Number of parameters (noisy coordinates): p, or p K for multinomial.

    Parameters
    ----------
    problem : Problem

    Returns
    -------
    int
    """
    return math.prod(problem.theta_shape)


def check_bound_arguments(problem, epsilon, delta=None, form="mean", constraint="l2"):
    """TypeError or ValueError, naming the argument, for a bound's common arguments.

    Parameters
    ----------
    problem : Problem
        Must be a Problem whose ``constraint`` is ``constraint``: a bound proved over the l2
        ball says nothing over the l1 ball, whose rows are bounded in l-inf (and conversely).
    epsilon : float
        Must be ``> 0``.
    delta : float or None, default None
        In (0, 1) when given.
    form : {"mean", "sum"}, default "mean"
        One of :data:`FORMS`.
    constraint : {"l2", "l1"}, default "l2"
        The geometry the bound is stated for.
    """
    require_constraint(problem, constraint, "this bound")
    check_real(epsilon, "epsilon", low=0.0)
    if delta is not None:
        check_real(delta, "delta", low=0.0, high=1.0)
    check_choice(form, "form", FORMS)


def require_constraint(problem, constraint, what):
    """TypeError unless ``problem`` is a Problem; ValueError, naming ``constraint``, unless its
    geometry is ``constraint``: a constant derived for rows bounded in l2 (the l2 ball, or a
    ridge without a ball) is not one for rows bounded in l-infinity over the l1 ball, and
    conversely, though both read ``problem.row_norm``.

    Parameters
    ----------
    problem : Problem
    constraint : {"l2", "l1"}
        The geometry ``what`` is stated for.
    what : str
        What refuses, for the message (``"this bound"``, a function's name).
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    if problem.constraint != constraint:
        raise ValueError(f"{what} is for constraint={constraint!r} problems, got a Problem "
                         f"with constraint={problem.constraint!r}")


def in_form(sum_value, problem, form):
    """A sum-form value in ``form`` (divided by n for ``"mean"``).

    Parameters
    ----------
    sum_value : float or ndarray
        The value in sum form.
    problem : Problem
        Gives n.
    form : {"mean", "sum"}
        The form wanted.

    Returns
    -------
    float or ndarray
    """
    return sum_value if form == "sum" else sum_value / problem.n


def from_mean(mean_value, problem, form):
    """A mean-form value in ``form`` (times n for ``"sum"``).

    Parameters
    ----------
    mean_value : float or ndarray
        The value in mean form.
    problem : Problem
        Gives n.
    form : {"mean", "sum"}
        The form wanted.

    Returns
    -------
    float or ndarray
    """
    return mean_value if form == "mean" else mean_value * problem.n


def noise_moments(noise, scale, p):
    """``(E||b||, E||b||^2)`` for gamma-norm noise of scale s (``||b|| ~ Gamma(p, s)``) or
    Gaussian noise of standard deviation s (``E||b|| <= s sqrt(p)`` by Jensen).

    Parameters
    ----------
    noise : {"gamma_norm", "gaussian"}
    scale : float
        s.
    p : int
        The dimension.

    Returns
    -------
    tuple of float
    """
    if noise == "gamma_norm":
        return p * scale, p * (p + 1) * scale * scale
    return scale * math.sqrt(p), p * scale * scale


def lower_bound_lipschitz(problem, epsilon, *, form="mean"):
    r"""Bassily-Smith-Thakurta 2014 lower bound for (epsilon, delta)-DP ERM, Lipschitz convex
    losses (docs/conventions.md, "Utility lower bounds"), constant 1:

    .. math:: \Omega\!\left(G \|C\|_2 \min\left(1, \frac{\sqrt{p}}{\epsilon n}\right)\right)

    in mean form (times n for ``form="sum"``). A minimax rate (for delta = o(1/n)): some
    dataset is this hard; a particular dataset may do better. ``p`` is the number of
    parameters (``p K`` for multinomial).

    Parameters
    ----------
    problem : Problem
        Gives n, p, ``G = problem.gradient_bound`` and ``||C||_2 = problem.diameter``.
    epsilon : float
        Target epsilon, ``> 0``.
    form : {"mean", "sum"}, default "mean"
        Normalisation: ``F(theta) - F(theta*)`` (mean form) or ``n`` times it (sum
        form, ``L = n F``).

    Returns
    -------
    float
        The lower bound (constant 1).
    """
    check_bound_arguments(problem, epsilon, None, form)
    value = problem.gradient_bound * problem.diameter * min(
        1.0, math.sqrt(parameter_count(problem)) / (epsilon * problem.n))
    return from_mean(value, problem, form)


def lower_bound_strongly_convex(problem, epsilon, *, form="mean"):
    r"""Bassily-Smith-Thakurta 2014 lower bound for (epsilon, delta)-DP ERM, lambda-strongly
    convex losses (docs/conventions.md, "Utility lower bounds"), constant 1:

    .. math:: \Omega\!\left(\min\left(G \|C\|_2, \frac{G^2 p}{\lambda \epsilon^2 n^2}\right)\right)

    in mean form (times n for ``form="sum"``). Needs ``reg > 0``. ``p`` is the number of
    parameters (``p K`` for multinomial).

    Parameters
    ----------
    problem : Problem
        With ``reg > 0`` (lambda); gives n, p, ``G = problem.gradient_bound`` and
        ``||C||_2 = problem.diameter``.
    epsilon : float
        Target epsilon, ``> 0``.
    form : {"mean", "sum"}, default "mean"
        Normalisation: ``F(theta) - F(theta*)`` (mean form) or ``n`` times it (sum
        form, ``L = n F``).

    Returns
    -------
    float
        The lower bound (constant 1).
    """
    check_bound_arguments(problem, epsilon, None, form)
    if problem.reg <= 0.0:
        raise ValueError("the strongly convex lower bound needs problem.reg > 0")
    G, n = problem.gradient_bound, problem.n
    value = min(G * problem.diameter,
                G * G * parameter_count(problem) / (problem.reg * epsilon ** 2 * n * n))
    return from_mean(value, problem, form)


# -- stochastic convex optimisation: the excess population risk -------------------------------
def dp_sco_lower_bound(problem, epsilon):
    r"""Bassily-Feldman-Talwar-Thakurta 2019 lower bound on the excess *population* risk of an
    (epsilon, delta)-DP algorithm, convex Lipschitz losses over a set of diameter D (their
    Appendix C: the non-private lower bound and the reduction from the private ERM lower bound
    of Bassily-Smith-Thakurta 2014), constant 1:

    .. math:: \Omega\!\left(L D \max\left(\frac{1}{\sqrt{n}},
              \min\left(1, \frac{\sqrt{p}}{\epsilon n}\right)\right)\right).

    The paper states it as ``Omega(.)`` without a constant (for ``delta = o(1/n)``), and this
    returns it with the constant set to 1: a scaling, not a guaranteed number. A minimax rate:
    *some* distribution is this hard; a particular one (such as
    :class:`dpsolve.population.SphereSource`'s) may do better. The population risk has no
    regulariser, so L is the loss's own Lipschitz constant (``problem.lipschitz``, not
    ``problem.gradient_bound``); ``p`` is the number of parameters (``p K`` for multinomial).

    Parameters
    ----------
    problem : Problem
        Gives n, p, ``L = problem.lipschitz`` and ``D = problem.diameter``.
    epsilon : float
        Target epsilon, ``> 0``.

    Returns
    -------
    float
        The lower bound (constant 1) on ``L(theta) - min_C L``; infinite without a constraint.
    """
    check_bound_arguments(problem, epsilon)
    n = problem.n
    private = min(1.0, math.sqrt(parameter_count(problem)) / (epsilon * n))
    return problem.lipschitz * problem.diameter * max(1.0 / math.sqrt(n), private)


@dataclasses.dataclass(frozen=True)
class DpScoRate:
    """The optimal DP-SCO rate's two terms (:func:`dp_sco_rate`), constant 1.

    Attributes
    ----------
    statistical : float
        ``L D / sqrt(n)``: the non-private rate.
    private : float
        ``L D sqrt(p ln(1/delta)) / (n epsilon)``: the price of privacy.
    rate : float
        The larger of the two.
    crossover_p : float
        ``n epsilon^2 / ln(1/delta)``: the dimension at which the two terms are equal; below
        it privacy costs nothing in rate.
    private_dominates : bool
        Whether ``p > crossover_p`` (the private term is the larger).
    regime : str
        ``"private"`` or ``"statistical"``: the term that is the rate (a theorem page fits
        each regime's cells apart).
    """

    statistical: float
    private: float
    rate: float
    crossover_p: float
    private_dominates: bool

    @property
    def regime(self):
        return "private" if self.private_dominates else "statistical"


def dp_sco_rate(n, p, epsilon, delta, *, lipschitz=1.0, diameter=1.0):
    r"""The optimal excess population risk of (epsilon, delta)-DP stochastic convex
    optimisation, Bassily-Feldman-Talwar-Thakurta 2019 (reached in linear time by
    Feldman-Koren-Talwar 2020), up to constants and logarithms:

    .. math:: L D \max\left(\frac{1}{\sqrt{n}}, \frac{\sqrt{p \ln(1/\delta)}}{n \epsilon}\right),

    with its two terms and the crossover ``p = n epsilon^2 / ln(1/delta)`` where the private
    term takes over from the statistical one: privacy is free in rate below it.

    Parameters
    ----------
    n : int
        The number of records, ``>= 1``.
    p : int
        The dimension (number of parameters), ``>= 1``.
    epsilon : float
        ``> 0``.
    delta : float
        In (0, 1).
    lipschitz : float, default 1.0
        L, the loss's Lipschitz constant (``problem.lipschitz``).
    diameter : float, default 1.0
        D, the diameter of the constraint set (``problem.diameter``, 2R).

    Returns
    -------
    DpScoRate
        Both terms (constant 1), the rate, the crossover dimension and which term dominates.
    """
    n = check_int(n, "n", low=1)
    p = check_int(p, "p", low=1)
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    delta = check_real(delta, "delta", low=0.0, high=1.0)
    scale = check_real(lipschitz, "lipschitz", low=0.0) * check_real(diameter, "diameter",
                                                                       low=0.0)
    log_term = math.log(1.0 / delta)
    statistical = scale / math.sqrt(n)
    private = scale * math.sqrt(p * log_term) / (n * epsilon)
    crossover = n * epsilon * epsilon / log_term
    return DpScoRate(statistical, private, max(statistical, private), crossover, p > crossover)


def l1_erm_lower_bound(problem, epsilon, *, form="mean"):
    r"""Talwar-Thakurta-Zhang 2015 lower bound for DP ERM over the l1 ball, constant 1:

    .. math:: \tilde\Omega\!\left(R L \min\left(1, (n \epsilon)^{-2/3}\right)\right)

    in mean form (times n for ``form="sum"``), with ``R = problem.radius`` (the l1 ball) and
    ``L = problem.lipschitz`` (the per-sample gradient's l-infinity bound). Talwar, Thakurta &
    Zhang 2015 show, for the squared loss on ``||x||_inf <= 1``, ``|y| <= 1``,
    ``||theta||_1 <= 1`` (a fingerprinting-code construction, at a constant epsilon and
    ``delta = o(1/n^2)``, with p large enough to hold it), that some dataset leaves every such
    algorithm an excess empirical risk of order ``1/n^{2/3}`` up to logarithmic factors: their
    private Frank-Wolfe's rate (:func:`dpsolve.solvers.frank_wolfe.frank_wolfe_bound`) is
    optimal up to those factors, and the dimension enters only through them. Returned with
    constant 1, the logarithms dropped, scaled by R L (the problem's units) and with epsilon
    in ``n epsilon`` as in the upper bound: a scaling, not a guaranteed number.

    Parameters
    ----------
    problem : Problem
        With ``constraint="l1"``; gives n, R and L.
    epsilon : float
        Target epsilon, ``> 0``.
    form : {"mean", "sum"}, default "mean"
        Normalisation: ``F(theta) - F(theta*)`` (mean form) or ``n`` times it (sum
        form, ``L = n F``).

    Returns
    -------
    float
        The lower bound (constant 1).
    """
    check_bound_arguments(problem, epsilon, None, form, constraint="l1")
    value = problem.radius * problem.lipschitz * min(
        1.0, (epsilon * problem.n) ** (-2.0 / 3.0))
    return from_mean(value, problem, form)


# -- the minimiser's norm -----------------------------------------------------------------------
def minimizer_norm_bound(problem):
    r"""A data-independent bound R on ``||theta*||`` (and on ``||theta_0 - theta*||`` from 0).

    The radius when the Problem has one. Without a constraint (``reg > 0``),
    ``lambda ||theta*||^2 / 2 <= F(theta*) <= F(0) <= max_y loss(0; y)``, so
    ``R = sqrt(2 max_y loss(0; y) / lambda)``: ``ln 2`` for logistic, 1 for hinge,
    ``B_y^2 / 2`` for squared, ``ln K`` for multinomial (Frobenius norm).

    Parameters
    ----------
    problem : Problem
        With a radius, or ``reg > 0``.

    Returns
    -------
    float
        R: ``problem.radius``, or ``sqrt(2 max_y loss(0; y) / lambda)``.
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    if problem.radius is not None:
        return problem.radius
    return math.sqrt(2.0 * _max_loss_at_zero(problem) / problem.reg)


def _max_loss_at_zero(problem):
    """``max_y loss(0; y)`` (the loss object's ``max_value_at_zero``)."""
    return problem.loss_object.max_value_at_zero()


# -- noisy projected gradient descent (Jayaraman et al. 2018's gradient perturbation) ------------
def gradient_perturbation_bound(problem, steps, sigma):
    r"""Bound on ``E F(theta_T) - F(theta*)`` (mean form) for T steps of projected gradient
    descent with step ``1/beta_F`` and gradient noise ``N(0, sigma^2 I_p)`` from 0, on a
    ``lambda``-strongly convex, ``beta_F``-smooth objective (``beta_F = beta + lambda``,
    ``q = lambda / beta_F``):

    .. math:: \frac{\beta_F}{2}(1 - q)^{2T} R^2 + \frac{p \sigma^2}{2 \lambda (2 - q)}.

    The gradient step is a ``(1 - q)``-contraction and the projection is non-expansive, so
    ``E||theta_T - theta*||^2 <= (1-q)^{2T} R^2 + p sigma^2 / (beta_F^2 q (2 - q))``; and
    ``F(theta) - F* <= (beta_F/2)||theta - theta*||^2`` when ``grad F(theta*) = 0``, i.e. when
    the minimiser is inside the projection ball (always for ``radius=None``, where the ball is
    :func:`minimizer_norm_bound`'s). With a radius the minimiser may lie on the sphere and the
    value is used only to choose T. The same holds for Jayaraman et al.'s party-weighted objective
    (its weights sum to 1, so beta and lambda are the same). Numpy arrays broadcast.

    Parameters
    ----------
    problem : Problem
        A smooth loss with ``reg > 0`` (ValueError otherwise); not multinomial.
    steps : int or array_like of int
        Number of steps T.
    sigma : float or array_like of float
        Standard deviation of the gradient noise per coordinate.

    Returns
    -------
    float or ndarray
        The bound (mean form), broadcast over ``steps`` and ``sigma``.
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    reject_multinomial(problem, "gradient_perturbation_bound (multiparty_gd)",
                       multinomial_solvers())
    lam = problem.reg
    beta = problem.smoothness + lam
    if lam <= 0.0 or not math.isfinite(beta):
        raise ValueError("the bound needs a smooth loss and problem.reg > 0")
    q = lam / beta
    R = minimizer_norm_bound(problem)
    steps = np.asarray(steps, dtype=float)
    sigma = np.asarray(sigma, dtype=float)
    value = (0.5 * beta * (1.0 - q) ** (2.0 * steps) * R * R
             + problem.p * sigma ** 2 / (2.0 * lam * (2.0 - q)))
    return float(value) if np.ndim(value) == 0 else value


# Each solver's bound moved to its solver's module (beside its ``bound``) and stays here under
# its name, the same object; the names of a release that cited the notes' algorithm numbers are
# deprecated.
__getattr__, __dir__ = moved_names(
    __name__, {"noisy_sgd_lipschitz_bound": "dpsolve.solvers.noisy_sgd",
               "noisy_sgd_strongly_convex_bound": "dpsolve.solvers.noisy_sgd",
               "dpgd_last_iterate_applies": "dpsolve.solvers.clipped_gd",
               "dpgd_optimisation_error": "dpsolve.solvers.clipped_gd",
               "clipped_gd_bound": "dpsolve.solvers.clipped_gd",
               "minibatch_sgd_bound": "dpsolve.solvers.minibatch_sgd",
               "output_perturbation_bound": "dpsolve.solvers.output_perturbation",
               "objective_perturbation_bound": "dpsolve.solvers.objective_perturbation",
               "multiparty_gd_bound": "dpsolve.solvers.multiparty_gd",
               "frank_wolfe_bound": "dpsolve.solvers.frank_wolfe"},
    deprecated={"sgd1_lipschitz_bound": "noisy_sgd_lipschitz_bound",
                "sgd1_strongly_convex_bound": "noisy_sgd_strongly_convex_bound",
                "sgd2_bound": "multiparty_gd_bound",
                # the settings search lives with the method now
                "objective_perturbation_settings": (
                    "dpsolve.solvers.objective_perturbation.approximate_minima",
                    "objective_perturbation_settings",
                    "dpsolve.bounds.objective_perturbation_settings is deprecated: use "
                    "dpsolve.approximate_minima.objective_perturbation_settings")})
