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

The bound of joint-DP noisy SGD (Huang et al. 2023, Theorem 3.1) depends on the joint model's
gradient bound and is with that model: :func:`dpsolve.joint.joint_sgd_bound`. The settings
that minimise objective perturbation's bound, and the privacy constants it rests on, are with
the method: :mod:`dpsolve.approximate_minima`.
"""
import math
import warnings

import numpy as np

from . import approximate_minima
from ._capabilities import multinomial_solvers
from ._deprecation import deprecated_alias
from ._validation import check_choice, check_int, check_real
from .approximate_minima import noise_moments
from .privacy.calibration import dpgd_noise, output_noise_scale, resolve_output_noise
from .problem import Problem, reject_multinomial

FORMS = ("mean", "sum")


def _dimension(problem):
    """Number of parameters (noisy coordinates): p, or p K for multinomial."""
    return math.prod(problem.theta_shape)


def _check(problem, epsilon, delta=None, form="mean"):
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    check_real(epsilon, "epsilon", low=0.0)
    if delta is not None:
        check_real(delta, "delta", low=0.0, high=1.0)
    check_choice(form, "form", FORMS)


def _in_form(sum_value, problem, form):
    """A sum-form value in ``form`` (divided by n for ``"mean"``)."""
    return sum_value if form == "sum" else sum_value / problem.n


def _from_mean(mean_value, problem, form):
    """A mean-form value in ``form`` (times n for ``"sum"``)."""
    return mean_value if form == "mean" else mean_value * problem.n


def noisy_sgd_lipschitz_bound(problem, epsilon, delta, *, form="mean"):
    r"""Theorem 2, case 1 (eq. 9), of the multi-party SGD notes (after Bassily-Smith-Thakurta
    2014): SGD1 with step sizes (4) on an L-Lipschitz loss.

    .. math:: E[L(\theta_T) - L(\theta^*)] = O\!\left(\frac{G \|C\|_2 \ln^2(1.25 n^2/\delta) \sqrt{p}}{\epsilon}\right)

    in sum form (divided by n for ``form="mean"``), with the O-constant set to 1.
    Infinite without a constraint. Not for multinomial problems (SGD1 does not take them).

    Parameters
    ----------
    problem : Problem
        Gives n, p, ``G = problem.gradient_bound`` and ``||C||_2 = problem.diameter``.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float
        Target delta, in (0, 1).
    form : {"mean", "sum"}, default "mean"
        Normalisation: ``F(theta) - F(theta*)`` (mean form) or ``n`` times it (sum
        form, ``L = n F``).

    Returns
    -------
    float
        The bound (constant 1), ``inf`` without a constraint.
    """
    _check(problem, epsilon, delta, form)
    reject_multinomial(problem, "noisy_sgd_lipschitz_bound (Bassily-Smith-Thakurta 2014)",
                       multinomial_solvers())
    n = problem.n
    value = (problem.gradient_bound * problem.diameter * math.log(1.25 * n * n / delta) ** 2
             * math.sqrt(problem.p) / epsilon)
    return _in_form(value, problem, form)


def noisy_sgd_strongly_convex_bound(problem, epsilon, delta, *, form="mean"):
    r"""Theorem 2, case 2 (eq. 10), of the multi-party SGD notes: SGD1 with
    ``eta(t) = 1/(Delta n t)`` on an L-Lipschitz, Delta-strongly convex loss
    (Delta = ``problem.reg``).

    .. math:: E[L(\theta_T) - L(\theta^*)] = O\!\left(\frac{G^2 \ln^3(1.25 n^2/\delta)\, p}{n \Delta \epsilon^2}\right)

    in sum form (divided by n for ``form="mean"``), with the O-constant set to 1. Needs
    ``reg > 0``; infinite when the gradient bound is (no constraint and ``reg > 0``). Not for
    multinomial problems (SGD1 does not take them).

    Parameters
    ----------
    problem : Problem
        With ``reg > 0`` (Delta); gives n, p and ``G = problem.gradient_bound``.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float
        Target delta, in (0, 1).
    form : {"mean", "sum"}, default "mean"
        Normalisation: ``F(theta) - F(theta*)`` (mean form) or ``n`` times it (sum
        form, ``L = n F``).

    Returns
    -------
    float
        The bound (constant 1).
    """
    _check(problem, epsilon, delta, form)
    reject_multinomial(problem, "noisy_sgd_strongly_convex_bound (Bassily-Smith-Thakurta 2014)",
                       multinomial_solvers())
    if problem.reg <= 0.0:
        raise ValueError("the strongly convex bound needs problem.reg > 0")
    n = problem.n
    value = (problem.gradient_bound ** 2 * math.log(1.25 * n * n / delta) ** 3 * problem.p
             / (n * problem.reg * epsilon ** 2))
    return _in_form(value, problem, form)


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
    _check(problem, epsilon, None, form)
    value = problem.gradient_bound * problem.diameter * min(
        1.0, math.sqrt(_dimension(problem)) / (epsilon * problem.n))
    return _from_mean(value, problem, form)


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
    _check(problem, epsilon, None, form)
    if problem.reg <= 0.0:
        raise ValueError("the strongly convex lower bound needs problem.reg > 0")
    G, n = problem.gradient_bound, problem.n
    value = min(G * problem.diameter,
                G * G * _dimension(problem) / (problem.reg * epsilon ** 2 * n * n))
    return _from_mean(value, problem, form)


# -- DP-GD with clipping (the DP-GD lecture notes) ----------------------------------------------
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


def dpgd_last_iterate_applies(problem):
    """Whether :func:`dpgd_optimisation_error` has a bound for the last iterate: a smooth loss
    and ``lambda > 0`` (strong convexity).

    Parameters
    ----------
    problem : Problem

    Returns
    -------
    bool
    """
    return math.isfinite(problem.smoothness) and problem.reg > 0.0


def dpgd_optimisation_error(problem, clip_norm, steps, noise_std, output="average"):
    r"""Bound on ``E F(theta) - F(theta*)`` for T steps of projected gradient descent from 0
    with gradient noise ``N(0, s^2 I_p)``, with dpsolve's default step sizes (numpy arrays
    broadcast over ``steps`` and ``noise_std``).

    ``output="average"`` (the average ``theta_bar`` of the iterates):

    * smooth loss, ``eta = 1 / beta_F`` with ``beta_F = beta + lambda``:
      ``beta_F R^2 / (2T) + p s^2 / (2 beta_F)``;
    * non-smooth loss, ``eta = R / sqrt(T (G^2 + p s^2))`` with ``G = C + lambda R``:
      ``R sqrt((G^2 + p s^2) / T)``,

    with R from :func:`minimizer_norm_bound` (the standard analysis of (sub)gradient descent
    with unbiased gradient noise, e.g. Bubeck 2015, Thms 3.2 and 6.3 with exact gradients
    of variance ``p s^2``).

    ``output="last"`` (the last iterate; smooth loss and ``lambda > 0`` only, else ValueError):
    with ``eta = 1 / beta_F`` the gradient step contracts distances to theta* by
    ``1 - kappa``, ``kappa = lambda / beta_F``, the projection onto a convex set holding theta*
    does not expand them, and the noise adds ``eta^2 p s^2`` in expectation, so
    ``E||theta_T - theta*||^2 <= d_T = (1 - kappa)^{2T} R^2 + p s^2 / (beta_F lambda)``
    (the geometric sum, with ``1 - (1 - kappa)^2 >= kappa``). Then ``F - F* <= G sqrt(d_T)``
    (F is G-Lipschitz on C), and without a constraint, where ``grad F(theta*) = 0``, also
    ``<= beta_F d_T / 2``. The noise term is divided by lambda instead of beta_F, but the
    optimisation term decays geometrically instead of as 1/T: at large n lambda this bound is
    the smaller, with far fewer steps. (Measured, the average still does better there: its
    bound's noise term, which grows with T, ignores that averaging cancels noise;
    docs/clipped_gd.md.)

    Valid when the clipping norm C is at least the Lipschitz constant L (then clipping never
    changes a gradient); with ``C < L`` the clipped gradient is biased and no such bound holds.
    For multinomial, p is the number of noisy coordinates ``p K``.

    Parameters
    ----------
    problem : Problem
        Gives p, ``beta`` (``problem.smoothness``), lambda (``problem.reg``) and R.
    clip_norm : float
        Clipping norm C, at least ``problem.lipschitz`` for the bound to hold (not checked here).
    steps : int or array_like of int
        Number of steps T.
    noise_std : float or array_like of float
        Standard deviation s of the gradient noise per coordinate.
    output : {"average", "last"}, default "average"
        Which iterate the bound is for.

    Returns
    -------
    float or ndarray
        The bound (mean form), broadcast over ``steps`` and ``noise_std``.
    """
    output = check_choice(output, "output", ("average", "last"))
    R = minimizer_norm_bound(problem)
    steps = np.asarray(steps, dtype=float)
    noise = np.asarray(noise_std, dtype=float)
    p = _dimension(problem)
    beta = problem.smoothness + problem.reg
    G = clip_norm + problem.reg * R
    if output == "last":
        if not dpgd_last_iterate_applies(problem):
            raise ValueError("the last-iterate bound needs a smooth loss and reg > 0 "
                             "(strong convexity); use output='average'")
        kappa = problem.reg / beta
        distance2 = (1.0 - kappa) ** (2.0 * steps) * R * R + p * noise ** 2 / (beta * problem.reg)
        value = G * np.sqrt(distance2)
        if problem.radius is None:
            value = np.minimum(value, 0.5 * beta * distance2)
        return value
    if math.isfinite(beta):
        return beta * R * R / (2.0 * steps) + p * noise ** 2 / (2.0 * beta)
    return R * np.sqrt((G * G + p * noise ** 2) / steps)


def clipped_gd_bound(problem, epsilon, delta, *, steps, clip_norm=None, calibration="pld",
                     output="average", form="mean"):
    r"""Excess-risk bound of :func:`dpsolve.clipped_gd` (the lecture notes' DP-GD) with its default
    step size and ``output`` (the average of the iterates, or the last one under strong
    convexity), at the noise its calibration gives for T = ``steps``.

    The noise is ``s = 4 C T sqrt(ln(2T/delta)) / (epsilon n)`` for ``calibration="paper"``,
    else the accountant's least noise for T Gaussian releases of sensitivity ``2C/n``
    (``"pld"``: exactly ``s = (2C/n) sqrt(T) sigma_1``, ``sigma_1`` the analytic Gaussian noise
    for (epsilon, delta) at sensitivity 1); the bound is :func:`dpgd_optimisation_error` at that
    noise. With ``"pld"`` and a smooth loss it is minimised at
    ``T* = beta_F R n / (2 C sqrt(p) sigma_1)``, where it equals ``2 R C sqrt(p) sigma_1 / n``,
    the rate ``O(R L sqrt(p ln(1/delta)) / (epsilon n))`` of docs/conventions.md ("Utility lower
    bounds").

    Mean form (times n for ``form="sum"``), explicit constants, valid for ``C >= L``
    (``clip_norm`` defaults to L).

    Parameters
    ----------
    problem : Problem
        The problem :func:`dpsolve.clipped_gd` is run on.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float
        Target delta, in (0, 1).
    steps : int
        Number of steps T.
    clip_norm : float, optional
        Clipping norm C, ``>= problem.lipschitz`` (ValueError otherwise); default L.
    calibration : {"pld", "rdp", "zcdp", "strong", "basic", "paper"}, default "pld"
        How the noise is calibrated, as in :func:`dpsolve.clipped_gd`.
    output : {"average", "last"}, default "average"
        The iterate released (:func:`dpgd_optimisation_error`; ``"last"`` needs a smooth loss
        and ``reg > 0``).
    form : {"mean", "sum"}, default "mean"
        Normalisation: ``F(theta) - F(theta*)`` (mean form) or ``n`` times it (sum
        form, ``L = n F``).

    Returns
    -------
    float
        The bound.
    """
    _check(problem, epsilon, delta, form)
    clip = problem.lipschitz if clip_norm is None else check_real(clip_norm, "clip_norm", low=0.0)
    if clip < problem.lipschitz:
        raise ValueError(f"the bound needs clip_norm >= the Lipschitz constant "
                         f"{problem.lipschitz:g}; clipping below it biases the gradient")
    noise = dpgd_noise(problem.n, clip, steps, epsilon, delta, calibration)
    value = float(dpgd_optimisation_error(problem, clip, steps, noise, output))
    return _from_mean(value, problem, form)


# -- mini-batch SGD with gamma-norm noise (Song-Chaudhuri-Sarwate 2013) -------------------------
def minibatch_sgd_bound(problem, epsilon, *, batch_size, form="mean"):
    r"""Excess-risk bound for :func:`dpsolve.minibatch_sgd` with ``schedule="inv"``
    (``eta_t = 1/(lambda t)``) on a smooth loss, for the last iterate after its one pass of
    ``T = ceil(n / b)`` steps.

    Song, Chaudhuri & Sarwate (2013) state no convergence theorem. This is the standard
    analysis of SGD on a lambda-strongly convex objective (Rakhlin, Shamir & Sridharan 2012,
    Lemma 1: ``E ||w_T - w*||^2 <= 4 M^2 / (lambda^2 T)`` when ``E ||g_t||^2 <= M^2``), turned
    into objective values by smoothness:

    .. math:: E[F(w_T)] - F(w^*) \le \frac{\beta_F}{2} E\|w_T - w^*\|^2
              \le \frac{2 \beta_F M^2}{\lambda^2 T}, \qquad
              M^2 = G^2 + \frac{p (p + 1) s^2}{b^2},

    with ``G = L + lambda r`` (the batch gradient plus regulariser, r the projection radius),
    ``s = 2L/epsilon`` the noise scale (``||Z|| ~ Gamma(p, s)``, so ``E ||Z||^2 = p (p+1) s^2``),
    ``beta_F = beta + lambda``. Mean form (times n for ``form="sum"``), explicit constants. The
    last batch may be smaller than b; the bound then uses it for every step (conservative).
    Not for multinomial problems (minibatch_sgd does not take them).

    Parameters
    ----------
    problem : Problem
        A smooth loss with ``reg > 0`` (ValueError otherwise).
    epsilon : float
        Epsilon of the gamma-norm noise, ``> 0`` (pure epsilon-DP).
    batch_size : int
        Batch size b, in [1, n].
    form : {"mean", "sum"}, default "mean"
        Normalisation: ``F(theta) - F(theta*)`` (mean form) or ``n`` times it (sum
        form, ``L = n F``).

    Returns
    -------
    float
        The bound.
    """
    _check(problem, epsilon, None, form)
    reject_multinomial(problem, "minibatch_sgd_bound", multinomial_solvers())
    if problem.reg <= 0.0:
        raise ValueError("the bound needs problem.reg > 0")
    beta = problem.smoothness + problem.reg
    if not math.isfinite(beta):
        raise ValueError(f"the bound needs a smooth loss; {problem.loss} is not")
    n, p, lam, L = problem.n, problem.p, problem.reg, problem.lipschitz
    b = check_int(batch_size, "batch_size", low=1)
    if b > n:
        raise ValueError(f"batch_size must be <= n={n}, got {b}")
    smallest = n - (math.ceil(n / b) - 1) * b
    r = 1.0 / lam if problem.radius is None else min(1.0 / lam, problem.radius)
    s = 2.0 * L / epsilon
    M2 = (L + lam * r) ** 2 + p * (p + 1) * s * s / smallest ** 2
    value = 2.0 * beta * M2 / (lam * lam * math.ceil(n / b))
    return _from_mean(value, problem, form)


# -- output and objective perturbation ----------------------------------------------------------
def output_perturbation_bound(problem, epsilon, delta=None, *, noise=None, tolerance=1e-10,
                              calibration="pld", form="mean"):
    r"""Excess-risk bound of :func:`dpsolve.output_perturbation` at its noise, explicit constants:

    * with a constraint (the released vector is projected onto C, and F is G-Lipschitz on C with
      ``G = L + lambda R``): ``g + G E||b||``;
    * without one, smooth loss: ``g + (beta + lambda) E||b||^2 / 2`` (the linear term has mean 0);
    * without one, hinge: ``g + L E||b|| + lambda E||b||^2 / 2``,

    with g the tolerance and b the output noise (``E||b|| = p s``, ``E||b||^2 = p(p+1)s^2`` for
    gamma-norm of scale s; ``sqrt(p) sigma`` and ``p sigma^2`` for Gaussian; p is ``p K`` for
    multinomial). Chaudhuri et al. (2011) bound the generalisation error rather than this; these
    follow from Lipschitz continuity or smoothness of F at a g-optimal point. Mean form (times n
    for ``form="sum"``).

    Parameters
    ----------
    problem : Problem
        With ``reg > 0`` (ValueError otherwise).
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float, optional
        None (or 0) for gamma-norm noise; in (0, 1) for Gaussian noise.
    noise : {"gamma_norm", "gaussian"}, optional
        The output noise; default ``"gamma_norm"`` without ``delta`` (epsilon-DP), else
        ``"gaussian"``.
    tolerance : float, default 1e-10
        The optimisation tolerance g of the non-private minimiser, in (0, 1e-2].
    calibration : {"pld", "rdp", "zcdp", "strong", "basic", "paper"}, default "pld"
        Calibration of Gaussian noise (ignored for gamma-norm), as in
        :func:`dpsolve.output_perturbation`.
    form : {"mean", "sum"}, default "mean"
        Normalisation: ``F(theta) - F(theta*)`` (mean form) or ``n`` times it (sum
        form, ``L = n F``).

    Returns
    -------
    float
        The bound.
    """
    _check(problem, epsilon, None, form)
    if problem.reg <= 0.0:
        raise ValueError("output perturbation needs problem.reg > 0")
    noise, epsilon, delta, calibration = resolve_output_noise(noise, epsilon, delta,
                                                              calibration, problem.n)
    tolerance = check_real(tolerance, "tolerance", low=0.0, high=1e-2, high_inclusive=True)
    n, p, lam, L = problem.n, _dimension(problem), problem.reg, problem.lipschitz
    sensitivity = 2.0 * L / (n * lam) + 2.0 * math.sqrt(2.0 * tolerance / lam)
    scale = output_noise_scale(noise, epsilon, delta, sensitivity, calibration)
    m1, m2 = noise_moments(noise, scale, p)
    if problem.radius is not None:
        value = tolerance + (L + lam * problem.radius) * m1
    elif math.isfinite(problem.smoothness):
        value = tolerance + 0.5 * (problem.smoothness + lam) * m2
    else:
        value = tolerance + L * m1 + 0.5 * lam * m2
    return _from_mean(value, problem, form)


def objective_perturbation_settings(problem, epsilon, delta=None, **options):
    """Deprecated alias of
    :func:`dpsolve.approximate_minima.objective_perturbation_settings`, which computes the same.

    The settings search lives with the method now; calling this emits a DeprecationWarning
    naming the new function (see docs/changelog.md, "Unreleased").

    Parameters
    ----------
    problem, epsilon, delta, **options
        As in :func:`dpsolve.approximate_minima.objective_perturbation_settings`.

    Returns
    -------
    dict
        As :func:`dpsolve.approximate_minima.objective_perturbation_settings` returns it.
    """
    warnings.warn("dpsolve.bounds.objective_perturbation_settings is deprecated: use "
                  "dpsolve.approximate_minima.objective_perturbation_settings",
                  DeprecationWarning, stacklevel=2)
    return approximate_minima.objective_perturbation_settings(problem, epsilon, delta,
                                                              **options)


def objective_perturbation_bound(problem, epsilon, delta=None, *, objective_noise="auto",
                                 output_fraction="auto", extra_reg="auto", noise=None,
                                 tolerance=1e-12, calibration="pld", form="mean"):
    r"""Excess-risk bound of :func:`dpsolve.objective_perturbation`, explicit constants.

    With ``v = b/n`` the objective noise, Delta the extra regularisation, ``mu = lambda + Delta``,
    ``gamma = sqrt(2 mu g)`` the certified gradient norm and ``r = sqrt(2g/mu)``, the inner
    solution's excess risk is bounded by the smaller of two analyses
    (both hold, so their minimum does): through lambda-strong convexity of F,
    ``(A + C||v||)^2 / (2 lambda)`` with ``A = gamma + Delta (sqrt(2 mu l_0)/mu + r)``,
    ``C = 1 + 2 Delta / mu`` (``l_0`` = max loss at 0); through mu-strong convexity of the
    regularised objective, ``||v||^2/mu + ||v|| r + g + l_0 (1 - 2/(1 + sqrt(1 + 4 Delta /
    lambda)))`` (the last term, Delta's bias, is about ``Delta l_0 / lambda`` for a small Delta
    and never above ``l_0``). The output noise
    ``b_2`` adds ``(beta + lambda) E||b_2||^2 / 2``. Expectations use the moments of b
    (gamma-norm: ``||b|| ~ Gamma(p, 2B/epsilon')``; Gaussian: ``E||b||^2 = p sigma^2``). This is
    ``O(p^2 / (n^2 epsilon^2 lambda))`` for gamma-norm noise, the rate of Chaudhuri et al.
    (2011), and ``O(p log(1/delta) / (n^2 epsilon^2 lambda))`` for Gaussian noise. Mean form
    (times n for ``form="sum"``). Not for multinomial problems (objective_perturbation does not
    take them).

    Parameters
    ----------
    problem : Problem
        With ``reg > 0`` and ``radius=None`` (ValueError otherwise).
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float, optional
        None (or 0) for epsilon-DP; in (0, 1) for (epsilon, delta).
    objective_noise : {"auto", "gamma_norm", "gaussian"}, default "auto"
        As in :func:`~dpsolve.approximate_minima.objective_perturbation_settings`.
    output_fraction : "auto" or float, default "auto"
        In (0, 1): the share of epsilon spent on the output noise ``b_2``; the rest goes to the
        objective noise b. ``"auto"``: the share
        :func:`~dpsolve.approximate_minima.objective_perturbation_settings` chooses, as the
        solver does by default.
    extra_reg : "auto", "cms" or float, default "auto"
        Delta, as in
        :func:`~dpsolve.approximate_minima.objective_perturbation_settings`.
    noise : {"gamma_norm", "gaussian"}, optional
        The output noise ``b_2``, as in
        :func:`~dpsolve.approximate_minima.objective_perturbation_settings`.
    tolerance : float, default 1e-12
        The optimisation tolerance g of the inner solver, in (0, 1e-2].
    calibration : {"pld", "rdp", "zcdp", "strong", "basic", "paper"}, default "pld"
        Calibration of Gaussian output noise (ignored for gamma-norm), as in
        :func:`dpsolve.objective_perturbation`.
    form : {"mean", "sum"}, default "mean"
        Normalisation: ``F(theta) - F(theta*)`` (mean form) or ``n`` times it (sum
        form, ``L = n F``).

    Returns
    -------
    float
        The bound.
    """
    _check(problem, epsilon, None, form)
    reject_multinomial(problem, "objective_perturbation_bound", multinomial_solvers())
    settings = approximate_minima.objective_perturbation_settings(
        problem, epsilon, delta, objective_noise=objective_noise,
        output_fraction=output_fraction, extra_reg=extra_reg, noise=noise, tolerance=tolerance,
        calibration=calibration)
    fraction, extra, noise = (settings["output_fraction"], settings["extra_reg"],
                              settings["noise"])
    p, lam = problem.p, problem.reg
    mu = lam + extra
    r = math.sqrt(2.0 * tolerance / mu)
    inner = approximate_minima.perturbed_minimiser_bound(
        problem, "cms" if extra_reg == "cms" else settings["objective_noise"],
        settings["delta_objective"], (1.0 - fraction) * epsilon, mu, tolerance)
    scale = output_noise_scale(noise, fraction * epsilon, settings["delta_output"], 2.0 * r,
                               calibration)
    _, m2 = noise_moments(noise, scale, p)
    value = inner + 0.5 * (problem.smoothness + lam) * m2
    return _from_mean(value, problem, form)


# -- multi-party gradient descent (SGD2; Jayaraman et al. 2018's gradient perturbation) ---------
def _projection_radius(problem):
    return problem.radius if problem.radius is not None else minimizer_norm_bound(problem)


def multiparty_gd_bound(problem, parties, sigma, steps, *, form="mean"):
    r"""Theorem 4 (eq. 11) of the multi-party SGD notes, SGD2 on a Delta-strongly convex
    objective, explicit constants:

    .. math:: E[L(\theta) - L(\theta^*)] \le \frac{8 m p (\sigma^2 + n^2 G^2)}{n \lambda T}

    in sum form (divided by n for ``form="mean"``), with m parties each adding ``N(0, sigma^2
    I_p)``, ``Delta = lambda`` (``problem.reg``) and ``G = L + lambda R`` the per-sample gradient
    bound over the projection ball (R the radius, or :func:`minimizer_norm_bound`).

    The notes only sketch the proof ("pick eta appropriately"). It holds for
    :func:`dpsolve.multiparty_gd`'s default SGD2 steps ``eta_k = 2/(n lambda (k+1))`` with the
    weighted average: for projected SGD with unbiased gradients of second moment at most
    ``Gt^2 = n^2 G^2 + m p sigma^2`` on an ``n lambda``-strongly convex sum, Lacoste-Julien, Schmidt
    & Bach (2012) give ``2 Gt^2 / (n lambda (T + 1))``, and ``m p (sigma^2 + n^2 G^2) >= Gt^2``.
    ``parties`` is the number of parties m (or a Parties); numpy arrays broadcast over ``sigma``
    and ``steps``.

    Parameters
    ----------
    problem : Problem
        With ``reg > 0`` (lambda); not multinomial.
    parties : int or Parties
        The number of parties m (``>= 1``), or a Parties (its ``m``).
    sigma : float or array_like of float
        Standard deviation of each party's noise per coordinate.
    steps : int or array_like of int
        Number of iterations T.
    form : {"mean", "sum"}, default "mean"
        Normalisation: ``F(theta) - F(theta*)`` (mean form) or ``n`` times it (sum
        form, ``L = n F``).

    Returns
    -------
    float or ndarray
        The bound (explicit constants), broadcast over ``sigma`` and ``steps``.
    """
    _check(problem, 1.0, None, form)
    reject_multinomial(problem, "multiparty_gd_bound (the multi-party SGD notes' Theorem 4)",
                       multinomial_solvers())
    if problem.reg <= 0.0:
        raise ValueError("multiparty_gd_bound (the multi-party SGD notes' Theorem 4) needs a "
                         "strongly convex objective: problem.reg > 0")
    m = parties.m if hasattr(parties, "m") else check_int(parties, "parties", low=1)
    n, p, lam = problem.n, problem.p, problem.reg
    G = problem.lipschitz + lam * _projection_radius(problem)
    sigma = np.asarray(sigma, dtype=float)
    steps = np.asarray(steps, dtype=float)
    value = 8.0 * m * p * (sigma ** 2 + (n * G) ** 2) / (n * lam * steps)
    value = _in_form(value, problem, form)
    return float(value) if np.ndim(value) == 0 else value


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


# the names of a release that cited the notes' algorithm numbers
sgd1_lipschitz_bound = deprecated_alias(__name__, "sgd1_lipschitz_bound",
                                        noisy_sgd_lipschitz_bound)
sgd1_strongly_convex_bound = deprecated_alias(__name__, "sgd1_strongly_convex_bound",
                                              noisy_sgd_strongly_convex_bound)
sgd2_bound = deprecated_alias(__name__, "sgd2_bound", multiparty_gd_bound)
