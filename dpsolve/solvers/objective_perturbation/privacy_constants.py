r"""Objective perturbation's privacy constants: how much noise makes the perturbed objective
private, and how delta is split between its two noises.

Objective perturbation (Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 2, with Kifer, Smith &
Thakurta 2012's constants) adds a random linear term ``<b, theta> / n`` to the objective. What
it may spend on b, from public constants only:

* the Jacobian term (:func:`objective_jacobian_term`), which the noise cannot pay for;
* the epsilon' of gamma-norm objective noise (:func:`objective_perturbation_constants`, CMS
  2011's own rule in :func:`cms_objective_constants`);
* the sigma of Gaussian objective noise (:func:`gaussian_objective_sigma`,
  :func:`gaussian_objective_constants`, through the privacy loss's tail
  :func:`gaussian_objective_tail` and its delta :func:`gaussian_objective_delta`);
* the split of delta between the objective noise and the output noise
  (:func:`resolve_objective_noise`).

:mod:`~.approximate_minima` searches the settings (the split of epsilon, the extra
regularisation, the inner tolerance) that minimise the utility bound with these constants, and
re-exports each name here.
"""
import functools
import math

from ..._validation import check_choice, check_real
from ...bounds import require_constraint
from ...privacy.calibration import OUTPUT_NOISES

__all__ = ["objective_jacobian_term", "objective_perturbation_constants",
           "gaussian_objective_tail", "gaussian_objective_delta", "gaussian_objective_sigma",
           "gaussian_objective_constants", "resolve_objective_noise", "cms_objective_constants"]


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
    require_constraint(problem, "l2", "objective_perturbation_constants")
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
