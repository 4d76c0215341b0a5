"""Noise calibration of single mechanisms: Gaussian (classic and analytic), Laplace, gamma-norm.

See docs/conventions.md, "Noise mechanisms". Sensitivities are L2 unless a name says L1; every
function returns the noise parameter for the sensitivity it is given, under whatever neighbour
relation that sensitivity was computed for.
"""
import math

from scipy import optimize, special

from .._validation import check_real


def _checks(sensitivity, epsilon, delta=None):
    check_real(sensitivity, "sensitivity", low=0.0)
    check_real(epsilon, "epsilon", low=0.0)
    if delta is not None:
        check_real(delta, "delta", low=0.0, high=1.0)


def gaussian_sigma_classic(sensitivity, epsilon, delta):
    r"""Classic Gaussian mechanism: ``sigma = Delta sqrt(2 ln(1.25/delta)) / epsilon``.

    (epsilon, delta)-DP for L2 sensitivity Delta, **only for epsilon < 1** (Dwork & Roth 2014,
    Thm A.1; as in Chen's 2019 slides, and Lemma 2 of the multi-party SGD notes). Raises
    ValueError for epsilon >= 1: use :func:`gaussian_sigma_analytic`, which is exact for every
    epsilon.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity Delta of the query, ``> 0``.
    epsilon : float
        Target epsilon, in (0, 1).
    delta : float
        Target delta, in (0, 1).

    Returns
    -------
    float
        The noise standard deviation per coordinate, ``Delta sqrt(2 ln(1.25/delta)) / epsilon``.
    """
    _checks(sensitivity, epsilon, delta)
    if epsilon >= 1.0:
        raise ValueError(f"the classic Gaussian mechanism needs epsilon < 1, got {epsilon:g}; "
                         "use gaussian_sigma_analytic")
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def gaussian_log_delta(mu, epsilon):
    r"""Exact ``ln delta(epsilon)`` of the Gaussian mechanism with ``mu = Delta / sigma``.

    .. math:: \delta(\epsilon) = \Phi\left(\frac{\mu}{2} - \frac{\epsilon}{\mu}\right)
              - e^{\epsilon}\,\Phi\left(-\frac{\mu}{2} - \frac{\epsilon}{\mu}\right)

    (Balle & Wang 2018, Thm 8; equivalently mu-GDP, Dong, Roth & Su 2022). A composition of
    Gaussian mechanisms with ``mu_i`` is exactly Gaussian with ``mu = sqrt(sum mu_i^2)``.
    Computed in log space so that tiny deltas (1e-12 and below) keep full relative precision.

    Parameters
    ----------
    mu : float
        ``Delta / sigma``, ``>= 0`` (``inf`` for a release without noise).
    epsilon : float
        The epsilon at which delta is evaluated, ``>= 0``.

    Returns
    -------
    float
        ``ln delta(epsilon)``: ``-inf`` for ``mu <= 0`` (and wherever delta underflows to 0),
        ``0`` for ``mu = inf``.
    """
    if mu <= 0.0:
        return -math.inf
    if math.isinf(mu):
        return 0.0
    x = special.log_ndtr(mu / 2.0 - epsilon / mu)
    y = epsilon + special.log_ndtr(-mu / 2.0 - epsilon / mu)
    if y - x < -_CANCELLATION:
        return float(x + math.log(-math.expm1(y - x)))
    # x and y agree to within their rounding (mu tiny, or epsilon far above mu^2): their
    # difference is noise, and taken as delta = 0 it would certify any sigma. Bound delta from
    # above instead, by the smaller of Phi(a) = e^x (delta is Phi(a) minus a positive term) and
    # delta(0) = erf(mu / (2 sqrt 2)), which erf computes to full precision for tiny mu
    return float(min(x, math.log(math.erf(mu / (2.0 * math.sqrt(2.0))))))


#: Below this gap between the logs of the two terms of delta(epsilon) their difference is lost
#: in rounding (their absolute error is about 1e-16): :func:`gaussian_log_delta` then bounds
#: delta by delta(0) instead.
_CANCELLATION = 1e-6


def gaussian_epsilon(mu, delta):
    """Smallest epsilon with ``delta(epsilon) <= delta`` for the Gaussian mechanism with
    ``mu = Delta / sigma`` (exact; conservative side of the root guaranteed).

    The inverse of :func:`gaussian_log_delta` in epsilon (Balle & Wang 2018): a root search whose
    result is stepped up until ``delta(epsilon) <= delta`` holds exactly.

    Parameters
    ----------
    mu : float
        ``Delta / sigma``, ``>= 0`` (``inf`` for a release without noise); for a composition of
        Gaussian releases, ``sqrt(sum mu_i^2)``.
    delta : float
        Target delta, in (0, 1).

    Returns
    -------
    float
        The epsilon, ``>= 0``: 0 when ``mu = 0`` or ``delta(0) <= delta`` already, ``inf`` when
        ``mu = inf``.
    """
    check_real(delta, "delta", low=0.0, high=1.0)
    if mu == 0.0:
        return 0.0
    if math.isinf(mu):
        return math.inf
    log_delta = math.log(delta)
    if gaussian_log_delta(mu, 0.0) <= log_delta:
        return 0.0
    hi = max(1.0, mu * mu)
    while gaussian_log_delta(mu, hi) > log_delta:
        hi *= 2.0
        if math.isinf(hi):          # no finite epsilon reaches a delta this small
            return math.inf
    # a relative tolerance only: an absolute one is no precision at all for a root of 1e-9
    try:
        eps = optimize.brentq(lambda e: gaussian_log_delta(mu, e) - log_delta, 0.0, hi,
                              xtol=1e-300, rtol=1e-14)
    except RuntimeError:            # no convergence where delta is flat: the safe end
        eps = hi
    # the root may land a hair on the wrong side: step up until delta(eps) <= delta holds, by a
    # doubling step (a fixed one can take forever where delta is flat in epsilon)
    step = 1e-14
    while gaussian_log_delta(mu, eps) > log_delta:
        eps, step = min(max(eps * (1.0 + step), 1e-300), hi), 2.0 * step
    return float(eps)


def gaussian_sigma_analytic(sensitivity, epsilon, delta):
    """Smallest sigma for which the Gaussian mechanism is (epsilon, delta)-DP, exactly
    (Balle & Wang 2018), for every epsilon > 0. dp_accounting's root finder can land a hair on
    the non-conservative side; the result is re-checked with the exact delta and stepped up.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity Delta of the query, ``> 0``.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float
        Target delta, in (0, 1).

    Returns
    -------
    float
        The noise standard deviation sigma per coordinate: ``Delta / mu`` with mu the largest
        ratio for which :func:`gaussian_log_delta` at ``epsilon`` is at most ``ln delta``.
    """
    _checks(sensitivity, epsilon, delta)
    log_delta = math.log(delta)
    lo, hi = 1e-3, 1.0      # bracket mu = Delta / sigma
    while gaussian_log_delta(hi, epsilon) <= log_delta:
        lo, hi = hi, hi * 2.0
    while gaussian_log_delta(lo, epsilon) > log_delta:
        lo /= 2.0
    try:
        mu = optimize.brentq(lambda m: gaussian_log_delta(m, epsilon) - log_delta, lo, hi,
                             xtol=max(lo * 1e-15, 1e-300), rtol=1e-15)
    except RuntimeError:            # no convergence where delta is flat: the safe end
        mu = lo
    # step down to the conservative side by a doubling step, never past lo (which holds)
    step = 1e-14
    while gaussian_log_delta(mu, epsilon) > log_delta:
        mu, step = max(mu * (1.0 - step), lo), min(2.0 * step, 0.5)
    return sensitivity / mu


def laplace_scale(l1_sensitivity, epsilon):
    """Per-coordinate Laplace scale ``b = Delta_1 / epsilon`` for L1 sensitivity Delta_1
    (epsilon-DP). With only an L2 bound, ``Delta_1 <= sqrt(p) Delta_2``.

    The Laplace mechanism of Dwork, McSherry, Nissim & Smith (2006) (Dwork & Roth 2014,
    Thm 3.6).

    Parameters
    ----------
    l1_sensitivity : float
        L1 sensitivity ``Delta_1`` of the query, ``> 0``.
    epsilon : float
        Target epsilon, ``> 0``.

    Returns
    -------
    float
        The scale ``b = Delta_1 / epsilon`` of each coordinate's Laplace noise.
    """
    _checks(l1_sensitivity, epsilon)
    return l1_sensitivity / epsilon


def gamma_norm_scale(l2_sensitivity, epsilon):
    """Scale ``s = Delta_2 / epsilon`` of the gamma-norm (l2-Laplace) mechanism, density
    proportional to ``exp(-||z|| / s)``: epsilon-DP for L2 sensitivity Delta_2.
    Song-Chaudhuri-Sarwate 2013's ``exp(-(alpha/2) ||z||)`` is ``Delta_2 = 2``,
    ``epsilon = alpha``.

    Parameters
    ----------
    l2_sensitivity : float
        L2 sensitivity ``Delta_2`` of the query, ``> 0``.
    epsilon : float
        Target epsilon, ``> 0``.

    Returns
    -------
    float
        The scale ``s = Delta_2 / epsilon``; the noise norm is ``Gamma(p, s)``-distributed
        (:func:`~dpsolve.privacy.gamma_norm_noise` draws it).
    """
    _checks(l2_sensitivity, epsilon)
    return l2_sensitivity / epsilon
