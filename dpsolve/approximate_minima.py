r"""Approximate Minima Perturbation: objective perturbation's privacy constants and the
settings :func:`dpsolve.objective_perturbation` plans from them.

Objective perturbation (Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 2, with Kifer, Smith &
Thakurta 2012's constants) run with an approximate minimiser, as Iyengar et al. 2019's
Approximate Minima Perturbation (AMP): ``b`` perturbs the objective, the inner solve stops at a
gap ``g`` fixed in advance, and an output noise ``b_2`` pays for the inexactness. Everything the
method decides before it reads the data is here, from public constants only:

* **privacy constants**: the Jacobian term (:func:`objective_jacobian_term`), the epsilon' of
  gamma-norm objective noise (:func:`objective_perturbation_constants`, CMS 2011's own rule in
  :func:`cms_objective_constants`), the sigma of Gaussian objective noise
  (:func:`gaussian_objective_sigma`, :func:`gaussian_objective_constants`) and the split of
  delta between the two noises (:func:`resolve_objective_noise`);
* **the settings search**: the objective noise, the output share of epsilon and the extra
  regularisation Delta that minimise the utility bound
  (:func:`objective_perturbation_settings`; the bound itself is
  :func:`dpsolve.solvers.objective_perturbation.objective_perturbation_bound`);
* **the inner tolerance** g of ``tolerance="auto"`` (:func:`auto_tolerance`);
* :func:`plan_settings`, all of these for one fit, each computed once.
"""
import collections
import functools
import math

import numpy as np

from . import _fixed_iteration as fixed
from ._capabilities import multinomial_solvers
from ._validation import check_choice, check_real
from .privacy.calibration import OUTPUT_NOISES, check_noise_scale, resolve_output_noise
from .privacy.mechanisms import gaussian_sigma_analytic, gaussian_sigma_classic
from .problem import Problem, reject_multinomial


# -- privacy constants ---------------------------------------------------------------------------
def objective_jacobian_term(cB2, n, mu):
    """The Jacobian term ``ln(1 + cB^2/(n mu))`` of objective perturbation's privacy loss under
    replace-one neighbours: the most the log-determinant of the perturbed objective's Hessian
    can change when one record is replaced.

    With ``H_0 >= n mu I`` the Hessian (sum form) of everything but the replaced record, the two
    neighbours' Hessians are ``H_0 + a x x^T`` and ``H_0 + a' x' x'^T`` (``0 <= a, a' <= c``,
    ``||x||, ||x'|| <= B``), whose determinants are ``det H_0 (1 + a x^T H_0^{-1} x)``, each in
    ``det H_0 [1, 1 + cB^2/(n mu)]``. CMS 2011 (Thm 9) bound the ratio by the square of that,
    ``ln(1 + 2cB^2/(n mu) + c^2 B^4/(n^2 mu^2))``, through the rank-two difference of the two
    Hessians; the factor it loses is what Redberg, Koskela & Wang (2023) also remove.

    Parameters
    ----------
    cB2 : float
        The loss's curvature bound c times the squared row bound B^2.
    n : int
        Number of records.
    mu : float
        The perturbed objective's regularisation ``lambda + Delta``, ``> 0``.

    Returns
    -------
    float
    """
    return math.log1p(cB2 / (n * mu))


def objective_perturbation_constants(problem, epsilon, extra_reg=None):
    """Constants of epsilon-DP objective perturbation (CMS 2011 Alg. 2 with the tight Jacobian
    term) for an objective-perturbation budget ``epsilon``: returns
    ``(epsilon_prime, extra_reg)``.

    With ``c`` the bound on ``loss''`` (1/4 logistic, 1/(2h) huber_hinge; the loss's
    ``curvature``), B the row bound and ``mu = lambda + Delta`` the regularisation of the
    perturbed objective, the noise may spend
    ``epsilon' = epsilon - ln(1 + cB^2/(n mu))`` (:func:`objective_jacobian_term`), for any
    ``Delta >= 0`` fixed from public constants that leaves ``epsilon' > 0``.

    ``extra_reg=None`` is CMS 2011's rule as they state it, kept as a labelled reproduction:
    ``epsilon' = epsilon - ln(1 + 2cB^2/(n lambda) + c^2 B^4/(n^2 lambda^2))`` and
    ``Delta = 0`` if that is positive, else ``Delta = cB^2 / (n (e^{epsilon/4} - 1)) - lambda``
    and ``epsilon' = epsilon / 2`` (sound, with the looser Jacobian term). (diffprivlib uses
    ``cB`` for ``cB^2``, which is not conservative for B > 1.)
    :func:`objective_perturbation_settings` chooses ``Delta`` from the utility
    bound instead.

    Parameters
    ----------
    problem : Problem
        Gives n, lambda (``reg``, ``> 0``), B (``row_norm``) and c (the loss's ``curvature``).
    epsilon : float
        The objective-perturbation budget, ``> 0``.
    extra_reg : float, optional
        Delta ``>= 0``; None for CMS 2011's rule.

    Returns
    -------
    epsilon_prime : float
        The epsilon left for the noise in the objective.
    extra_reg : float
        The extra regularisation Delta.

    Raises
    ------
    ValueError
        If ``extra_reg`` leaves ``epsilon' <= 0``; the message gives the smallest Delta that
        does not.
    """
    c = problem.loss_object.curvature
    n, lam, B2 = problem.n, problem.reg, problem.row_norm ** 2
    if extra_reg is None:
        return cms_objective_constants(c * B2, n, lam, epsilon)
    extra_reg = check_real(extra_reg, "extra_reg", low=0.0, low_inclusive=True)
    eps_prime = epsilon - objective_jacobian_term(c * B2, n, lam + extra_reg)
    if not eps_prime > 0.0:
        _no_objective_budget(c * B2, n, lam, epsilon, extra_reg)
    return eps_prime, extra_reg


def _no_objective_budget(cB2, n, lam, epsilon, extra_reg):
    smallest = max(cB2 / (n * math.expm1(min(epsilon, 700.0))) - lam, 0.0)
    raise ValueError(f"extra_reg={extra_reg:g} leaves no epsilon for the objective noise "
                     f"at epsilon={epsilon:g}: it must exceed {smallest:.6g}")


@functools.lru_cache(maxsize=256)
def gaussian_objective_tail(delta):
    """The z of :func:`gaussian_objective_sigma`: ``P(|<b, x>| + |<b, x'>| > 2 B sigma z) <=
    delta`` for ``b ~ N(0, sigma^2 I)`` and any ``||x||, ||x'|| <= B``.

    The smaller of the union bound ``4 Phi_bar(z) = delta`` and the chi-square bound
    ``exp(-z^2 / 2) = delta`` (both hold: ``|<b, x>| + |<b, x'>| <= 2 B ||P b||`` with P the
    projection on span{x, x'}, and ``||P b||^2 / sigma^2`` is at most chi-square with 2 degrees
    of freedom).
    Cached on delta: the search for objective perturbation's settings asks for the same delta
    thousands of times.

    Parameters
    ----------
    delta : float
        In (0, 1).

    Returns
    -------
    float
        z.
    """
    from scipy import stats
    union = float(stats.norm.isf(delta / 4.0))
    chi2 = math.sqrt(2.0 * -math.log(delta))
    return min(union, chi2)


def _objective_tail(z):
    """``P(|<b, x>| + |<b, x'>| > 2 B sigma z)`` is at most this (see
    :func:`gaussian_objective_tail`): ``min(1, 4 Phi_bar(z), exp(-z^2/2))``."""
    from scipy import special
    return min(1.0, 2.0 * special.erfc(z / math.sqrt(2.0)), math.exp(-0.5 * z * z))


@functools.lru_cache(maxsize=1)
def _tail_crossing():
    """Where ``4 Phi_bar(z) = exp(-z^2/2)`` (about 1.26): the chi-square bound is the smaller
    below it, the union bound above."""
    from scipy import optimize, special
    return optimize.brentq(lambda z: 2.0 * special.erfc(z / math.sqrt(2.0))
                           - math.exp(-0.5 * z * z), 0.5, 3.0, xtol=1e-12)


def gaussian_objective_delta(s, room):
    r"""The delta that Gaussian objective perturbation's privacy-loss bound gives at
    ``s = B / sigma`` when ``room = epsilon - J`` is left beyond the Jacobian term: an upper
    bound on ``E[(1 - e^{epsilon - loss})_+]``, the exact delta of a privacy loss
    (:func:`gaussian_objective_sigma`).

    With ``W = (|<b, x>| + |<b, x'>|) / (2 B sigma)`` the loss is at most
    ``J + 2 s W + 2 s^2``; ``h(w) = (1 - e^{room - 2 s w - 2 s^2})_+`` is increasing, so
    ``E h(W) = h(0) + int_0^inf h'(w) P(W > w) dw`` with ``P(W > w) <= T(w)``, the chi-square
    bound ``e^{-w^2/2}`` below ``w_c`` (:func:`_tail_crossing`) and the union bound
    ``4 Phi_bar(w)`` above (each holds everywhere). With ``a = 2s``,
    ``w_0 = max(0, (room - 2 s^2) / a)`` and ``k = min(1, e^{room - 2 s^2})`` the integral is
    ``k int_{w_0}^inf a e^{-a (w - w_0)} T(w) dw``, in closed form: on the chi-square piece
    ``a sqrt(2 pi) e^{a w_0 + a^2/2} (Phi_bar(w_0 + a) - Phi_bar(w_1 + a))``, on the union piece
    from ``L`` on ``4 (e^{-a (L - w_0)} Phi_bar(L) - e^{a w_0 + a^2/2} Phi_bar(L + a))``
    (by parts, and ``e^{-a w} phi(w) = e^{a^2/2} phi(w + a)``), in logarithms where they would
    overflow.

    Parameters
    ----------
    s : float
        ``B / sigma``, ``> 0``.
    room : float
        ``epsilon - J``, ``> 0``.

    Returns
    -------
    float
        The delta bound.
    """
    # the search for objective perturbation's settings calls this some 10^4 times: scipy's
    # log_ndtr and the crossing looked up once, log Phi_bar(x) = log_ndtr(-x) inline, the
    # arithmetic unchanged (the same operations in the same order)
    log_ndtr, crossing = _delta_constants()
    a = 2.0 * s
    excess = room - 2.0 * s * s
    w0 = max(0.0, excess / a)
    head = -math.expm1(excess) if excess < 0.0 else 0.0
    scale = math.exp(min(0.0, excess))
    total = 0.0
    if w0 < crossing:
        upper, lower = float(log_ndtr(-(w0 + a))), float(log_ndtr(-(crossing + a)))
        log_piece = (a * w0 + 0.5 * a * a + _HALF_LOG_2PI + math.log(a)
                     + upper + math.log1p(-math.exp(lower - upper)))
        total += math.exp(log_piece)
    start = max(w0, crossing)
    first = math.exp(-a * (start - w0) + float(log_ndtr(-start)))
    second = math.exp(a * w0 + 0.5 * a * a + float(log_ndtr(-(start + a))))
    total += 4.0 * max(first - second, 0.0)
    return head + scale * total


#: ``0.5 ln(2 pi)``, as :func:`gaussian_objective_delta` computed it in place.
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


@functools.lru_cache(maxsize=1)
def _delta_constants():
    """``(scipy.special.log_ndtr, _tail_crossing())`` for :func:`gaussian_objective_delta`."""
    from scipy import special
    return special.log_ndtr, _tail_crossing()


def gaussian_objective_sigma(cB2, B, n, mu, epsilon, delta):
    r"""Standard deviation sigma of the Gaussian b (sum form) for which objective perturbation
    is ``(epsilon, delta)``-DP under replace-one neighbours, or inf if the Jacobian term alone
    spends epsilon. dpsolve's analysis, after Kifer, Smith & Thakurta 2012 (Thm 2, the Gaussian
    variant) and with the Jacobian term of Redberg, Koskela & Wang 2023
    (:func:`objective_jacobian_term`); the proof is sketched in docs/perturbation.md.

    The output theta determines the noise, ``b = -grad L(theta; D)`` (L the sum-form perturbed
    objective without b). For the neighbour D', ``b' = b + u`` with ``u = loss'(z) x -
    loss'(z') x'`` (``|loss'| <= 1``, so ``||u|| <= 2B`` and ``|<b, u>| <= |<b, x>| + |<b,
    x'>|``). The privacy loss at theta is
    ``(2 <b, u> + ||u||^2) / (2 sigma^2) + J(theta)`` with ``|J| <= ln(1 + cB^2/(n mu))``, so it
    is at most ``J + 2 s W + 2 s^2`` with ``s = B / sigma`` and W from
    :func:`gaussian_objective_tail`. The exact delta of a privacy loss at epsilon is
    ``E[(1 - e^{epsilon - loss})_+]``; :func:`gaussian_objective_delta` bounds it through W's
    tail, and sigma is the smallest (to a relative 1e-4, rounded up) that brings the bound to
    delta. Tail-only (``P(loss > epsilon) <= delta``, Kifer et al.'s form of the argument) it
    would be 14% larger at epsilon - J = 1, delta = 1e-6, and 28% at 0.1.

    Parameters
    ----------
    cB2 : float
        The loss's curvature bound times the squared row bound.
    B : float
        The row bound.
    n : int
        Number of records.
    mu : float
        ``lambda + Delta``, ``> 0``.
    epsilon : float
        The objective's budget, ``> 0``.
    delta : float
        Its delta, in (0, 1).

    Returns
    -------
    float
        sigma (sum form: the objective gets ``<b, theta> / n`` in mean form), or inf when
        ``epsilon <= J``: no finite noise then makes the objective private. Callers turn inf
        into their own error (:func:`gaussian_objective_constants`' ValueError names epsilon
        and the smallest extra regularisation that leaves room) or skip the setting (the
        search of :func:`objective_perturbation_settings`).
    """
    s = _objective_s(epsilon - objective_jacobian_term(cB2, n, mu), delta)
    return B / s if s > 0.0 else math.inf


@functools.lru_cache(maxsize=16384)
def _objective_s(room, delta):
    """The largest ``s = B / sigma`` (to 1e-4 relative, rounded down) whose
    :func:`gaussian_objective_delta` is at most ``delta``; 0 when ``room <= 0``.

    A bisection: from the tail-only s (feasible), doubling to an infeasible s, then halving the
    bracket ``[low, high]`` until ``high - low <= 1e-4 low``; ``low`` is returned. The bound
    increases with s, so a midpoint at or below an s already found feasible is feasible, and
    one at or above an s found infeasible is not: the bisection is decided there without
    evaluating the bound. Secant steps (in ``(ln s, ln delta)``, with Illinois' modification)
    narrow that bracket of evaluated points, so most midpoints are decided without an
    evaluation (about 9 evaluations instead of 17), and the result is the plain bisection's.
    A midpoint is decided that way only when the bound at the point that decides it is beyond
    ``delta`` by a relative 1e-10 (far above the closed form's rounding), or at that point
    itself. Cached: the settings search asks for a few thousand (room, delta) pairs, many
    more than once."""
    if not room > 0.0:
        return 0.0
    # the tail-only solution is feasible (the integral is at most T(w_0) = delta there)
    z = gaussian_objective_tail(delta)
    low = room / (z + math.sqrt(z * z + 2.0 * room))
    target = delta * (1.0 - 1e-9)           # room for the closed form's rounding (~1e-12)
    f_low = gaussian_objective_delta(low, room)
    if f_low > target:
        return low                          # numerically at the edge: keep the tail-only s
    high, f_high = low, f_low
    while f_high <= target:
        low, f_low, high = high, f_high, 2.0 * high
        if high > 1e6:
            return low
        f_high = gaussian_objective_delta(high, room)
    # a (bound fa <= target) and b (fb > target): the closest evaluated points to the root
    a, fa, b, fb = low, f_low, high, f_high
    surely_below, surely_above = target * (1.0 - 1e-10), target * (1.0 + 1e-10)
    la = math.log(fa / target) if fa > 0.0 else -math.inf
    lb = math.log(fb / target)
    side = 0                                # which end the last evaluation moved
    while high - low > 1e-4 * low:
        mid = 0.5 * (low + high)
        if mid <= a and (mid == a or fa <= surely_below):
            low = mid
            continue
        if mid >= b and (mid == b or fb > surely_above):
            high = mid
            continue
        x = mid
        if math.isfinite(la):
            log_a, log_b = math.log(a), math.log(b)
            guess = math.exp(log_a + (log_b - log_a) * (-la) / (lb - la))
            if a < guess < b:
                x = guess
        fx = gaussian_objective_delta(x, room)
        if fx <= target:
            a, fa = x, fx
            la = math.log(fx / target) if fx > 0.0 else -math.inf
            if side == -1:
                lb *= 0.5
            side = -1
        else:
            b, fb = x, fx
            lb = math.log(fx / target)
            if side == 1:
                la *= 0.5
            side = 1
        if x == mid:
            if fx <= target:
                low = mid
            else:
                high = mid
    return low


def gaussian_objective_constants(problem, epsilon, delta, extra_reg):
    """``(sigma, extra_reg)`` of Gaussian objective perturbation at the budget
    ``(epsilon, delta)`` and a fixed ``Delta = extra_reg`` (:func:`gaussian_objective_sigma`).

    Parameters
    ----------
    problem : Problem
        Gives n, lambda, B and c.
    epsilon : float
        The objective's budget, ``> 0``.
    delta : float
        Its delta, in (0, 1).
    extra_reg : float
        Delta ``>= 0``.

    Returns
    -------
    sigma : float
        The noise's standard deviation (sum form).
    extra_reg : float
        Delta, checked.

    Raises
    ------
    ValueError
        If ``extra_reg`` leaves no epsilon beyond the Jacobian term (the message gives the
        smallest Delta that does).
    """
    c = problem.loss_object.curvature
    n, lam, B = problem.n, problem.reg, problem.row_norm
    extra_reg = check_real(extra_reg, "extra_reg", low=0.0, low_inclusive=True)
    sigma = gaussian_objective_sigma(c * B * B, B, n, lam + extra_reg, epsilon, delta)
    if not math.isfinite(sigma):
        _no_objective_budget(c * B * B, n, lam, epsilon, extra_reg)
    return sigma, extra_reg


def resolve_objective_noise(objective_noise, noise, delta):
    """The split of delta between objective perturbation's two noises: returns
    ``(output noise, objective delta, delta passed on for the output noise)``.

    Gaussian objective noise takes all of delta when the output noise is gamma-norm (its
    default then) and half when the output noise is Gaussian too; gamma-norm objective noise
    leaves delta to the output noise (Gaussian by default when delta is given).

    Parameters
    ----------
    objective_noise : {"gamma_norm", "gaussian"}
        The objective noise.
    noise : {"gamma_norm", "gaussian"} or None
        The output noise as the user gave it.
    delta : float or None
        The solver's delta.

    Returns
    -------
    noise : str or None
        The output noise (None: :func:`resolve_output_noise`'s default for the delta passed on).
    delta_objective : float
        The objective noise's delta (0 for gamma-norm).
    delta_output : float or None
        What to pass to :func:`resolve_output_noise` as its delta.

    Raises
    ------
    TypeError
        For Gaussian objective noise without delta.
    """
    objective_noise = check_choice(objective_noise, "objective_noise", OUTPUT_NOISES)
    if objective_noise == "gamma_norm":
        return noise, 0.0, delta
    if delta is None:
        raise TypeError('objective_noise="gaussian" needs delta')
    delta = check_real(delta, "delta", low=0.0, high=1.0)
    if noise is None:
        noise = "gamma_norm"
    noise = check_choice(noise, "noise", OUTPUT_NOISES)
    if noise == "gamma_norm":
        return noise, delta, None
    return noise, delta / 2.0, delta / 2.0


def cms_objective_constants(cB2, n, lam, epsilon):
    """CMS 2011's two-branch rule for ``(epsilon', Delta)`` from ``c B^2``, n, lambda and the
    objective budget epsilon (see :func:`objective_perturbation_constants`).

    Parameters
    ----------
    cB2 : float
        The loss's curvature bound times the squared row bound.
    n : int
        Number of records.
    lam : float
        The regularisation lambda, ``> 0``.
    epsilon : float
        The objective-perturbation budget, ``> 0``.

    Returns
    -------
    epsilon_prime, extra_reg : float
        ``(epsilon - ln(1 + 2a + a^2), 0)`` with ``a = cB^2/(n lambda)`` when that is positive,
        else ``(epsilon / 2, cB^2 / (n (e^{epsilon/4} - 1)) - lambda)``.
    """
    eps_prime = epsilon - math.log1p(2.0 * cB2 / (n * lam) + (cB2 / (n * lam)) ** 2)
    if eps_prime > 0.0:
        return eps_prime, 0.0
    return epsilon / 2.0, cB2 / (n * math.expm1(epsilon / 4.0)) - lam


# -- the utility bound the settings minimise ----------------------------------------------------
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


#: Output-noise shares the objective-perturbation search tries first (geometric, 1e-4 .. 0.5),
#: before refining around the best.
_FRACTIONS = tuple(float(f) for f in np.geomspace(1e-4, 0.5, 25))

#: What the objective-perturbation bound needs of a Problem: public constants only.
_OPConstants = collections.namedtuple("_OPConstants", "n p lam B c l0 beta")


def _op_constants(problem):
    loss = problem.loss_object
    return _OPConstants(problem.n, problem.p, problem.reg, problem.row_norm, loss.curvature,
                        loss.max_value_at_zero(), problem.smoothness)


def _objective_moments(k, objective, eps_obj, mu):
    """``(E||v||, E||v||^2, noise parameter)`` of the objective noise ``v = b/n`` at the budget
    ``eps_obj`` and ``mu = lambda + Delta``, or None where the Jacobian term spends it all.
    ``objective``: ``("gamma_norm", 0)`` (the parameter returned is epsilon'), ``("cms", 0)``
    (CMS 2011's constants, with mu from their rule) or ``("gaussian", delta_obj)`` (sigma)."""
    kind, delta_obj = objective
    cB2 = k.c * k.B * k.B
    if kind == "gaussian":
        sigma = gaussian_objective_sigma(cB2, k.B, k.n, mu, eps_obj, delta_obj)
        if not math.isfinite(sigma):
            return None
        return (*noise_moments("gaussian", sigma / k.n, k.p), sigma)
    if kind == "cms":
        eps_prime = cms_objective_constants(cB2, k.n, k.lam, eps_obj)[0]
    else:
        eps_prime = eps_obj - objective_jacobian_term(cB2, k.n, mu)
    if not eps_prime > 0.0:
        return None
    return (*noise_moments("gamma_norm", 2.0 * k.B / eps_prime / k.n, k.p), eps_prime)


def _perturbed_minimiser_bound(k, v1, v2, mu, tolerance):
    r"""Bound on ``F(theta_tilde) - F*`` for the inner solution ``theta_tilde`` of objective
    perturbation (before the output noise), the smaller of two analyses (both hold, so their
    minimum does), with ``v = b/n`` (``v1 = E||v||``, ``v2 = E||v||^2``), ``Delta = mu -
    lambda``, ``r = sqrt(2g/mu)``:

    * through lambda-strong convexity of F: ``||grad F(theta_tilde)|| <= gamma + ||v|| +
      Delta ||theta_tilde||`` with ``gamma = sqrt(2 mu g)`` and ``||theta_tilde|| <=
      (2||v|| + sqrt(2 mu l_0))/mu + r``, so ``F - F* <= (A + C||v||)^2 / (2 lambda)`` with
      ``A = gamma + Delta (sqrt(2 mu l_0)/mu + r)``, ``C = 1 + 2 Delta/mu``;
    * through mu-strong convexity of ``G = F + (Delta/2)||.||^2``: its minimiser moves by at
      most ``||v||/mu`` under the linear term, so ``G(theta_tilde) - G* <= ||v|| (||v||/mu + r)
      + g``, and ``F(theta_tilde) - F* <= G(theta_tilde) - G* + (G* - F*)``. The bias of
      Delta: with ``a = F(0) - F*``, ``b = F* >= (lambda/2)||theta*||^2`` (losses >= 0, so
      ``a + b <= l_0``) and t = Delta/lambda, convexity along ``s theta*`` gives
      ``G* - F* <= (1 - s) a + s^2 t b <= l_0 max(1 - s, s^2 t)`` for every s in [0, 1]; at
      ``s = 2 / (1 + sqrt(1 + 4t))`` that is ``l_0 (1 - s)``: about ``Delta l_0 / lambda``
      for a small Delta, never above ``l_0``. The noise is divided by mu, not lambda."""
    extra = mu - k.lam
    r = math.sqrt(2.0 * tolerance / mu)
    A = math.sqrt(2.0 * mu * tolerance) + extra * (math.sqrt(2.0 * mu * k.l0) / mu + r)
    C = 1.0 + 2.0 * extra / mu
    through_lambda = (A * A + 2.0 * A * C * v1 + C * C * v2) / (2.0 * k.lam)
    t = extra / k.lam
    bias = k.l0 * (1.0 - 2.0 / (1.0 + math.sqrt(1.0 + 4.0 * t)))
    through_mu = v2 / mu + v1 * r + tolerance + bias
    return min(through_lambda, through_mu)


def perturbed_minimiser_bound(problem, objective, delta_objective, epsilon_objective, mu,
                              tolerance):
    """Bound on ``F(theta_tilde) - F*`` (mean form) for objective perturbation's inner solution
    ``theta_tilde``, before the output noise: the smaller of the two analyses of
    :func:`_perturbed_minimiser_bound`, at the expected norms of the objective noise.

    Parameters
    ----------
    problem : Problem
        Gives n, p, lambda, B, the loss's curvature bound and its largest value at 0.
    objective : {"gamma_norm", "gaussian", "cms"}
        The objective noise (``"cms"``: gamma-norm at CMS 2011's constants).
    delta_objective : float
        The objective noise's delta (0 for gamma-norm).
    epsilon_objective : float
        The objective noise's share of epsilon.
    mu : float
        ``lambda + Delta``.
    tolerance : float
        The inner solve's gap g.

    Returns
    -------
    float
    """
    k = _op_constants(problem)
    moments = _objective_moments(k, (objective, delta_objective), epsilon_objective, mu)
    return _perturbed_minimiser_bound(k, moments[0], moments[1], mu, tolerance)


def _objective_perturbation_value(k, epsilon, fraction, mu, unit, noise, tolerance,
                                  objective):
    """The bound of
    :func:`~dpsolve.solvers.objective_perturbation.objective_perturbation_bound` (mean form) for
    the constants ``k`` at the split ``fraction`` and the total regularisation
    ``mu = lambda + Delta``, with the output noise's scale per unit of sensitivity ``unit``;
    inf where the objective has no budget."""
    moments = _objective_moments(k, objective, (1.0 - fraction) * epsilon, mu)
    if moments is None or not math.isfinite(unit):
        return math.inf
    r = math.sqrt(2.0 * tolerance / mu)
    _, m2 = noise_moments(noise, unit * 2.0 * r, k.p)
    return (_perturbed_minimiser_bound(k, moments[0], moments[1], mu, tolerance)
            + 0.5 * (k.beta + k.lam) * m2)


def _unit_output_scale(noise, epsilon, delta, calibration):
    """Output-noise scale per unit of L2 sensitivity at this epsilon: exact (Balle–Wang) for
    Gaussian noise under an accountant, which a single Gaussian release's accountants agree
    with; inf where the classic mechanism is not defined (epsilon >= 1)."""
    if noise == "gamma_norm":
        return 1.0 / epsilon
    if calibration == "paper":
        return gaussian_sigma_classic(1.0, epsilon, delta) if epsilon < 1.0 else math.inf
    return gaussian_sigma_analytic(1.0, epsilon, delta)


def _sign_or_one(x):
    """``np.sign(x) + (x == 0)`` for a float: -1.0 or 1.0 (nan for nan)."""
    if x > 0.0:
        return 1.0
    if x < 0.0:
        return -1.0
    return x if x != x else 1.0


def _brent_step(a, b, xm, best, second, third, e, rat, tol1, tol2, golden_mean):
    """One step proposal of :func:`_bounded_minimum`: a parabolic fit through the three best
    points when it is acceptable, else a golden-section step into the larger part of
    ``[a, b]`` (SciPy's operations in SciPy's order).

    Parameters
    ----------
    a, b, xm : float
        The bracket and its midpoint.
    best, second, third : tuple of float
        ``(x, f(x))`` of the best point and of the previous two (SciPy's ``xf``, ``nfc``,
        ``fulc``).
    e, rat : float
        The step before last and the last step.
    tol1, tol2 : float
        The tolerances at the best point.
    golden_mean : float

    Returns
    -------
    e, rat : float
        The new pair (``rat`` the step to take, before its floor at ``tol1``).
    """
    xf, fx = best
    nfc, fnfc = second
    fulc, ffulc = third
    golden = True
    if abs(e) > tol1:               # try a parabolic fit
        golden = False
        r = (xf - nfc) * (fx - ffulc)
        q = (xf - fulc) * (fx - fnfc)
        p = (xf - fulc) * q - (xf - nfc) * r
        q = 2.0 * (q - r)
        if q > 0.0:
            p = -p
        q = abs(q)
        r = e
        e = rat
        if abs(p) < abs(0.5 * q * r) and p > q * (a - xf) and p < q * (b - xf):
            rat = (p + 0.0) / q
            x = xf + rat
            if (x - a) < tol2 or (b - x) < tol2:
                rat = tol1 * _sign_or_one(xm - xf)
        else:
            golden = True
    if golden:                      # a golden-section step
        e = a - xf if xf >= xm else b - xf
        rat = golden_mean * e
    return e, rat


def _bounded_minimum(func, x1, x2, xatol, maxfun=500):
    """The ``x`` of ``scipy.optimize.minimize_scalar(func, bounds=(x1, x2), method="bounded",
    options={"xatol": xatol})``: Brent's bounded minimisation, transcribed step for step from
    SciPy's ``_minimize_scalar_bounded`` (1.17) with Python floats instead of NumPy scalars
    (the same IEEE operations in the same order, so the same points and the same result; the
    settings search runs it some 300 times, where NumPy's scalar overhead was a third of
    the time)."""
    sqrt_eps = math.sqrt(2.2e-16)
    golden_mean = 0.5 * (3.0 - math.sqrt(5.0))
    a, b = x1, x2
    fulc = a + golden_mean * (b - a)
    nfc, xf = fulc, fulc
    rat = e = 0.0
    x = xf
    fx = func(x)
    num = 1
    ffulc = fnfc = fx
    xm = 0.5 * (a + b)
    tol1 = sqrt_eps * abs(xf) + xatol / 3.0
    tol2 = 2.0 * tol1
    while abs(xf - xm) > (tol2 - 0.5 * (b - a)):
        e, rat = _brent_step(a, b, xm, (xf, fx), (nfc, fnfc), (fulc, ffulc), e, rat, tol1,
                             tol2, golden_mean)
        step = abs(rat)
        if not step >= tol1:            # np.maximum(|rat|, tol1), nan propagated
            step = step if step != step else tol1
        x = xf + _sign_or_one(rat) * step
        fu = func(x)
        num += 1
        if fu <= fx:
            if x >= xf:
                a = xf
            else:
                b = xf
            fulc, ffulc = nfc, fnfc
            nfc, fnfc = xf, fx
            xf, fx = x, fu
        else:
            if x < xf:
                a = x
            else:
                b = x
            if fu <= fnfc or nfc == xf:
                fulc, ffulc = nfc, fnfc
                nfc, fnfc = x, fu
            elif fu <= ffulc or fulc == xf or fulc == nfc:
                fulc, ffulc = x, fu
        xm = 0.5 * (a + b)
        tol1 = sqrt_eps * abs(xf) + xatol / 3.0
        tol2 = 2.0 * tol1
        if num >= maxfun:
            break
    return xf


def _best_mu(k, epsilon, fraction, unit, noise, tolerance, objective):
    """The total regularisation ``mu >= lambda`` that minimises the bound at this split: a
    bounded search in log mu above the smallest mu whose Jacobian term leaves some of the
    objective's budget, and ``Delta = 0`` itself when lambda alone leaves some."""
    eps_obj = (1.0 - fraction) * epsilon
    floor = k.c * k.B * k.B / (k.n * math.expm1(eps_obj)) if eps_obj < 700.0 else 0.0
    low = max(k.lam, floor * (1.0 + 1e-9))

    def value(t):
        return _objective_perturbation_value(k, epsilon, fraction, math.exp(t), unit, noise,
                                             tolerance, objective)

    t = _bounded_minimum(value, math.log(low), math.log(low) + 30.0, 1e-6)
    at_low = value(math.log(low))
    at_t = value(t)
    if at_low <= at_t:
        return low, at_low                      # exactly lambda (Delta = 0) when low is lambda
    return max(low, math.exp(t)), at_t


@functools.lru_cache(maxsize=256)
def _objective_perturbation_search(k, epsilon, delta, output_fraction, extra_reg, noise,
                                   tolerance, calibration, objective):
    """The search of :func:`objective_perturbation_settings` (arguments checked, ``delta`` the
    output noise's; a pure function of public constants, cached)."""
    done = {}

    def at(fraction):
        # a pure function of the split: the refinement's last point is asked for again
        if fraction not in done:
            done[fraction] = _at(fraction)
        return done[fraction]

    def _at(fraction):
        unit = _unit_output_scale(noise, fraction * epsilon, delta, calibration)
        if extra_reg == "auto":
            return _best_mu(k, epsilon, fraction, unit, noise, tolerance, objective)
        eps_obj = (1.0 - fraction) * epsilon
        if extra_reg == "cms":
            mu = k.lam + cms_objective_constants(k.c * k.B ** 2, k.n, k.lam, eps_obj)[1]
        else:
            mu = k.lam + extra_reg
        return mu, _objective_perturbation_value(k, epsilon, fraction, mu, unit, noise,
                                                 tolerance, objective)

    if output_fraction == "auto":
        results = [at(f) for f in _FRACTIONS]
        best = min(range(len(results)), key=lambda i: results[i][1])
        lo = _FRACTIONS[max(best - 1, 0)]
        hi = _FRACTIONS[min(best + 1, len(_FRACTIONS) - 1)]
        fraction = math.exp(_bounded_minimum(lambda t: at(math.exp(t))[1], math.log(lo),
                                             math.log(hi), 1e-3))
        mu, value = at(fraction)
        if results[best][1] <= value:
            fraction, (mu, value) = _FRACTIONS[best], results[best]
    else:
        fraction = output_fraction
        mu, value = at(fraction)
    extra = extra_reg if extra_reg not in ("auto", "cms") else mu - k.lam
    return fraction, extra, value


def _one_objective_noise(problem, epsilon, delta, objective_noise, output_fraction, extra_reg,
                         noise, tolerance, calibration):
    """objective_perturbation_settings for one kind of objective noise (arguments checked)."""
    noise, delta_obj, delta_out = resolve_objective_noise(objective_noise, noise, delta)
    if objective_noise == "gaussian" and extra_reg == "cms":
        raise ValueError('extra_reg="cms" is CMS 2011\'s rule for their (gamma-norm) objective '
                         'noise; with objective_noise="gaussian" use "auto" or a number')
    share = 0.5 if output_fraction == "auto" else output_fraction
    noise, epsilon, delta_out, calibration = resolve_output_noise(
        noise, epsilon, delta_out, calibration, problem.n, share)
    kind = "cms" if extra_reg == "cms" else objective_noise
    objective = (kind, delta_obj)
    k = _op_constants(problem)
    fraction, extra, value = _objective_perturbation_search(
        k, epsilon, delta_out, output_fraction, extra_reg, noise, tolerance, calibration,
        objective)
    eps_obj = (1.0 - fraction) * epsilon
    # these check a fixed extra_reg (ValueError naming the smallest usable one)
    if objective_noise == "gaussian":
        sigma, extra = gaussian_objective_constants(problem, eps_obj, delta_obj, extra)
        parameter = {"objective_sigma": sigma}
    else:
        eps_prime, extra = objective_perturbation_constants(
            problem, eps_obj, None if extra_reg == "cms" else extra)
        parameter = {"epsilon_prime": eps_prime}
    if not math.isfinite(value):
        raise ValueError(f"objective perturbation has no usable settings at epsilon={epsilon:g} "
                         f"(noise={noise!r}, calibration={calibration!r}, output_fraction="
                         f"{fraction:g}): the classic Gaussian mechanism needs the output "
                         "share of epsilon below 1")
    return {"objective_noise": objective_noise, "output_fraction": fraction,
            "extra_reg": extra, **parameter, "noise": noise, "delta_objective": delta_obj,
            "delta_output": delta_out, "bound": value}


def objective_perturbation_settings(problem, epsilon, delta=None, *, objective_noise="auto",
                                    output_fraction="auto", extra_reg="auto", noise=None,
                                    tolerance=1e-12, calibration="pld"):
    r"""The objective noise, the split and the extra regularisation of
    :func:`dpsolve.objective_perturbation`, chosen from public constants only: the ones that
    minimise :func:`dpsolve.solvers.objective_perturbation.objective_perturbation_bound`.

    Objective perturbation may add any ``Delta >= 0`` to the regulariser, fixed before seeing
    the data, as long as the Jacobian term ``ln(1 + cB^2/(n (lambda + Delta)))`` leaves some of
    the objective's budget (:func:`objective_jacobian_term`). CMS
    2011's rule takes ``Delta = 0`` whenever that is positive, which can leave almost nothing:
    at n = 1000, lambda = 1e-3, epsilon_obj = 0.45 (logistic, B = 1) their constants leave
    ``epsilon' = 0.004`` and a noise scale of 500. Here ``mu = lambda + Delta`` minimises the
    bound for each split (a 1-D search in log mu), and the split f (``output_fraction``) is
    searched over a geometric grid from 1e-4 to 0.5, then refined around the best. With
    ``delta`` given and ``objective_noise="auto"``, both objective noises are searched and the
    smaller bound wins (gamma-norm noise has ``E||b||^2 = p(p+1) s^2``, Gaussian ``p sigma^2``:
    Gaussian wins in high dimension). Only n, p, lambda, B, the loss's constants, epsilon,
    delta, the noises and the tolerance enter: the choice is public. For Gaussian output noise
    the search uses the exact Gaussian calibration (Balle–Wang) that a single release's
    accountants agree with; the fit then calibrates with ``calibration``.

    Parameters
    ----------
    problem : Problem
        With ``reg > 0`` and ``radius=None``.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float, optional
        Target delta, in (0, 1), or None for epsilon-DP.
    objective_noise : {"auto", "gamma_norm", "gaussian"}, default "auto"
        The noise b in the objective; ``"gaussian"`` needs delta; ``"auto"``: gamma-norm
        without delta, else the one with the smaller bound.
    output_fraction : "auto" or float, default "auto"
        The split f in (0, 1), or ``"auto"`` to search it.
    extra_reg : "auto", "cms" or float, default "auto"
        Delta ``>= 0``; ``"cms"`` for CMS 2011's rule (gamma-norm objective noise only);
        ``"auto"`` to search it.
    noise : {"gamma_norm", "gaussian"}, optional
        The output noise; default Gaussian when gamma-norm objective noise is given delta,
        else gamma-norm. Delta is split evenly when both noises are Gaussian.
    tolerance : float, default 1e-12
        The inner solver's gap g, in (0, 1e-2].
    calibration : str, default "pld"
        For Gaussian output noise: ``"paper"`` (classic mechanism, which needs
        ``f epsilon < 1``) or an accountant.

    Returns
    -------
    dict
        ``objective_noise``, ``output_fraction``, ``extra_reg`` (Delta), ``epsilon_prime``
        (gamma-norm objective noise) or ``objective_sigma`` (Gaussian, sum form), ``noise``
        (the output noise), ``delta_objective``, ``delta_output`` and ``bound`` (the
        mean-form bound at those settings, with the search's calibration).

    Raises
    ------
    ValueError
        For an invalid argument, or a fixed ``extra_reg`` that leaves the objective no budget.
    TypeError
        For ``objective_noise="gaussian"`` or ``noise="gaussian"`` without delta.
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    check_real(epsilon, "epsilon", low=0.0)
    reject_multinomial(problem, "objective_perturbation_settings", multinomial_solvers())
    if problem.reg <= 0.0 or problem.radius is not None:
        raise ValueError("objective perturbation needs reg > 0 and radius=None")
    # either objective noise has a scale of at least B / epsilon (sum form, epsilon' <= epsilon):
    # an epsilon that puts it beyond float64's range is refused before the search
    check_noise_scale("objective_perturbation", problem.row_norm / epsilon, epsilon,
                      "objective noise scale")
    check_choice(objective_noise, "objective_noise", ("auto",) + OUTPUT_NOISES)
    if output_fraction != "auto":
        output_fraction = check_real(output_fraction, "output_fraction", low=0.0, high=1.0)
    if isinstance(extra_reg, str):
        check_choice(extra_reg, "extra_reg", ("auto", "cms"))
    else:
        extra_reg = check_real(extra_reg, "extra_reg", low=0.0, low_inclusive=True)
    tolerance = check_real(tolerance, "tolerance", low=0.0, high=1e-2, high_inclusive=True)
    args = (output_fraction, extra_reg, noise, tolerance, calibration)
    if objective_noise != "auto":
        return _one_objective_noise(problem, epsilon, delta, objective_noise, *args)
    if delta is None or delta == 0 or extra_reg == "cms":
        return _one_objective_noise(problem, epsilon, delta, "gamma_norm", *args)
    found, errors = [], []
    for kind in OUTPUT_NOISES:
        try:
            found.append(_one_objective_noise(problem, epsilon, delta, kind, *args))
        except ValueError as error:     # this kind cannot take these options; the other may
            errors.append(error)
    if not found:
        raise errors[0]
    return min(found, key=lambda settings: settings["bound"])


# -- the inner tolerance ------------------------------------------------------------------------
#: The inner solve's tolerance g (its certified gap) from which ``tolerance="auto"`` starts,
#: and the largest it takes.
DEFAULT_TOLERANCE = 1e-12


def auto_tolerance(problem, epsilon, delta=None, *, objective_noise="auto",
                   output_fraction="auto", extra_reg="auto", noise=None, calibration="pld",
                   centre_bound=0.0):
    """The inner solve's tolerance g for ``tolerance="auto"``: twice the float64 floor of the
    fixed-iteration solver at the chosen settings (what secure mode can deliver by
    construction, :func:`dpsolve._fixed_iteration.float_floor`), at most 1e-12.

    A smaller g needs less output noise (sensitivity ``2 sqrt(2g/(lambda + Delta))``), so a
    smaller share of epsilon, so more epsilon' for the objective noise. The floor depends on
    the settings and the settings on g: three rounds of (settings at g, floor at those
    settings) from g = 1e-12, each only ever lowering g while it stays above twice the floor.
    From public constants only.

    Parameters
    ----------
    problem : Problem
        With ``reg > 0`` and ``radius=None``.
    epsilon : float
        Target epsilon.
    delta : float, optional
        Target delta (Gaussian output noise), or None.
    objective_noise, output_fraction, extra_reg, noise, calibration
        As :func:`dpsolve.objective_perturbation` takes them.
    centre_bound : float, default 0
        A bound on the regularisers' centre's norm (the centre moves the minimiser, and with
        it the floor).

    Returns
    -------
    float
        g, in ``[2 * floor, 1e-12]`` (1e-12 when the floor is above 5e-13).
    """
    options = {"objective_noise": objective_noise, "output_fraction": output_fraction,
               "extra_reg": extra_reg, "noise": noise, "calibration": calibration}
    return _auto_tolerance(problem, epsilon, delta, options, centre_bound)[0]


def _at_tolerance(problem, epsilon, delta, tolerance, options, centre_bound):
    """``(settings, objective noise scale, fixed-iteration plan)`` at the inner tolerance g:
    :func:`objective_perturbation_settings` at g, the scale of the objective noise they give
    (sum form), and the fixed-iteration solver's plan for the perturbed objective (its K, and
    the float64 floor :func:`auto_tolerance` compares with g)."""
    chosen = objective_perturbation_settings(problem, epsilon, delta, tolerance=tolerance,
                                             **options)
    if chosen["objective_noise"] == "gaussian":
        scale = chosen["objective_sigma"]
    else:
        scale = 2.0 * problem.row_norm / chosen["epsilon_prime"]
    inner = fixed.objective_plan(problem, tolerance, chosen["extra_reg"], scale,
                                 chosen["objective_noise"], centre_norm=centre_bound)
    return chosen, scale, inner


def _auto_tolerance(problem, epsilon, delta, options, centre_bound):
    """:func:`auto_tolerance`'s g and :func:`_at_tolerance` at it: each g the rounds try is
    planned once (a round asks again for the g the previous one accepted), and the plan keeps
    the one at the g returned instead of searching the settings again."""
    planned = {}

    def floor(tolerance):
        if tolerance not in planned:
            planned[tolerance] = _at_tolerance(problem, epsilon, delta, tolerance, options,
                                               centre_bound)
        return planned[tolerance][2].floor

    tolerance = accepted = DEFAULT_TOLERANCE
    for _ in range(3):
        candidate = 2.0 * floor(tolerance)
        if not candidate < tolerance:
            break
        tolerance = candidate
        # the floor grows (slowly) as g falls: keep only a g above its own floor
        if floor(tolerance) <= tolerance:
            accepted = tolerance
    return accepted, planned[accepted]


# -- one fit's plan ------------------------------------------------------------------------------
#: What :func:`plan_settings` returns.
Settings = collections.namedtuple("Settings", [
    "tolerance", "objective_noise", "output_fraction", "extra_reg", "noise", "calibration",
    "epsilon", "epsilon_objective", "epsilon_output", "epsilon_prime", "delta_objective",
    "delta_output", "objective_scale", "jacobian_term", "output_sensitivity", "inner"])
Settings.__doc__ = """Objective perturbation's settings for one fit (:func:`plan_settings`).

``epsilon_prime`` is None for Gaussian objective noise, whose standard deviation (sum form)
is ``objective_scale``; for gamma-norm noise ``objective_scale = 2B / epsilon'``. ``inner`` is
the fixed-iteration solver's plan (:func:`dpsolve._fixed_iteration.objective_plan`) at the
settings, before the cap on its steps."""


def plan_settings(problem, epsilon, delta=None, *, tolerance="auto", centre_bound=0.0,
                  objective_noise="auto", output_fraction="auto", extra_reg="auto", noise=None,
                  calibration="pld"):
    """Everything :func:`dpsolve.objective_perturbation` plans from public constants, each
    computed once: the inner tolerance (:func:`auto_tolerance` for ``"auto"``), the settings
    at it (:func:`objective_perturbation_settings`, which also resolves the two noises and the
    split of delta), the objective noise's scale and Jacobian term, the output sensitivity
    ``2 sqrt(2g / (lambda + Delta))`` and the fixed-iteration solver's plan.

    Parameters
    ----------
    problem : Problem
        With ``reg > 0`` and ``radius=None``.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float, optional
        Target delta, in (0, 1), or None for epsilon-DP.
    tolerance : "auto" or float, default "auto"
        The inner solve's gap g, in (0, 1e-2].
    centre_bound : float, default 0
        A public bound on the regularisers' centre's norm.
    objective_noise, output_fraction, extra_reg, noise, calibration
        As :func:`dpsolve.objective_perturbation` takes them.

    Returns
    -------
    Settings

    Raises
    ------
    ValueError, TypeError
        As :func:`objective_perturbation_settings`, and for a tolerance that is neither
        ``"auto"`` nor a number in (0, 1e-2].
    """
    options = {"objective_noise": objective_noise, "output_fraction": output_fraction,
               "extra_reg": extra_reg, "noise": noise, "calibration": calibration}
    if isinstance(tolerance, str) and tolerance == "auto":
        tolerance, (chosen, scale, inner) = _auto_tolerance(problem, epsilon, delta, options,
                                                             centre_bound)
    elif isinstance(tolerance, str):
        raise ValueError(f"tolerance must be 'auto' or a number in (0, 1e-2], got {tolerance!r}")
    else:
        tolerance = check_real(tolerance, "tolerance", low=0.0, high=1e-2, high_inclusive=True)
        chosen, scale, inner = _at_tolerance(problem, epsilon, delta, tolerance, options,
                                             centre_bound)
    # the search checked epsilon and calibration, and resolved both noises and delta's split
    epsilon = float(epsilon)
    fraction, extra = chosen["output_fraction"], chosen["extra_reg"]
    lam = problem.reg
    eps_obj = (1.0 - fraction) * epsilon
    if chosen["objective_noise"] == "gaussian":
        eps_prime = None
        c = problem.loss_object.curvature
        jacobian = objective_jacobian_term(c * problem.row_norm ** 2, problem.n, lam + extra)
    else:
        eps_prime = chosen["epsilon_prime"]
        jacobian = eps_obj - eps_prime
    return Settings(
        tolerance=tolerance, objective_noise=chosen["objective_noise"], output_fraction=fraction,
        extra_reg=extra, noise=chosen["noise"], calibration=calibration, epsilon=epsilon,
        epsilon_objective=eps_obj, epsilon_output=fraction * epsilon, epsilon_prime=eps_prime,
        delta_objective=chosen["delta_objective"], delta_output=chosen["delta_output"],
        objective_scale=scale, jacobian_term=jacobian,
        output_sensitivity=2.0 * math.sqrt(2.0 * tolerance / (lam + extra)), inner=inner)
