"""Noise calibration of single mechanisms: Gaussian (classic and analytic), Laplace, gamma-norm.

See docs/conventions.md, "Noise mechanisms". Sensitivities are L2 unless a name says L1; every
function returns the noise parameter for the sensitivity it is given, under whatever neighbour
relation that sensitivity was computed for.

Every calibration here errs on the private side by construction: a noise scale is rounded up (the
least float at or above the exact one, or above it by a few ulps where the exact one is only
bounded), an epsilon read from a noise is rounded up, and the analytic Gaussian mechanism's delta
is a certified upper bound (:func:`gaussian_log_delta`).
"""
import math
import struct
import sys
from fractions import Fraction

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

    The formula is a source's, reproduced as it is stated (rounded to nearest, not up): for
    every epsilon < 1 and every float delta it is at least 1.0078 times the exact least noise
    (:func:`gaussian_sigma_analytic`; the ratio falls towards 1 only as delta goes to 0, and is
    least at the smallest subnormal delta), so its few roundings, relative 1e-15, never bring
    it below what the claim needs.

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
    ratio = 1.25 / float(delta)
    # for subnormal deltas 1.25 / delta overflows; its logarithm does not
    log_ratio = math.log(ratio) if ratio < math.inf else math.log(1.25) - math.log(delta)
    return sensitivity * math.sqrt(2.0 * log_ratio) / epsilon


def _quotient_up(x, y):
    """The least float at or above the exact ``x / y`` (``x >= 0``, ``y > 0``): the quotient
    rounded to nearest, raised by one ulp when the exact product of it and ``y`` is below ``x``."""
    x, y = float(x), float(y)
    q = x / y
    if q < math.inf and Fraction(q) * Fraction(y) < Fraction(x):
        q = math.nextafter(q, math.inf)
    return q


def _quotient_down(x, y):
    """The greatest float at or below the exact ``x / y`` (``x >= 0``, ``y > 0``): a noise
    multiplier ``sigma / sensitivity`` an accountant reads, never more noise than was added."""
    x, y = float(x), float(y)
    q = x / y
    if q > 0.0 and Fraction(q) * Fraction(y) > Fraction(x):
        q = math.nextafter(q, 0.0)
    return q


def _product_up(x, y):
    """The least float at or above the exact ``x y`` (``x, y >= 0``): the product rounded to
    nearest, raised by one ulp when it is below the exact product."""
    x, y = float(x), float(y)
    p = x * y
    if p < math.inf and Fraction(p) < Fraction(x) * Fraction(y):
        p = math.nextafter(p, math.inf)
    return p


#: Significant bits of a noise multiplier found by a search over an accountant
#: (:func:`multiplier_onto_grid`): grid points 0.1-0.2% apart, coarser by six orders of magnitude
#: than the accountants' numerical noise across CPUs (docs/conventions.md).
MULTIPLIER_GRID_BITS = 10


def multiplier_onto_grid(m, steps_up=0):
    """The least point at or above ``m > 0`` (normal) of the public grid of noise multipliers,
    the floats of :data:`MULTIPLIER_GRID_BITS` significant bits; ``steps_up`` more grid points
    above it.

    A search over an accountant finds a multiplier that depends on floating-point details below
    its tolerance (NumPy's SIMD loops, the C math library): rounded up onto this grid, the
    result is the same on every machine unless the search's answers straddle a grid point, and
    rounding up never lowers the noise. Computed exactly (``frexp``/``ldexp``, no rounding).

    Parameters
    ----------
    m : float
        A noise multiplier ``sigma / sensitivity``, positive and normal.
    steps_up : int, default 0
        Grid points to go up from the least one at or above ``m``.

    Returns
    -------
    float
        The grid point: ``k 2^(e - MULTIPLIER_GRID_BITS)`` with integer
        ``2^(MULTIPLIER_GRID_BITS - 1) <= k < 2^MULTIPLIER_GRID_BITS`` and ``2^(e-1) <= m``.
    """
    fraction, exponent = math.frexp(float(m))          # m = fraction 2^exponent, 1/2 <= fraction < 1
    point = math.ldexp(math.ceil(math.ldexp(fraction, MULTIPLIER_GRID_BITS)),
                       exponent - MULTIPLIER_GRID_BITS)
    for _ in range(int(steps_up)):
        # one step of the point's own binade (2^exponent itself starts the next one)
        fraction, exponent = math.frexp(point)
        point = math.ldexp(math.ldexp(fraction, MULTIPLIER_GRID_BITS) + 1.0,
                           exponent - MULTIPLIER_GRID_BITS)
    return point


# -- certified evaluation of the Gaussian mechanism's delta --------------------------------------
#
# Every quantity below is an interval [lo, hi] of floats that contains the real number. An
# endpoint computed by a short chain of floating-point operations from exact floats is moved
# outward (_dn, _up) by a margin that covers the chain's rounding, counted in unit roundoffs
# u = 2^-53: IEEE 754 rounds +, -, *, / and sqrt correctly (one roundoff each, for results in the
# normal range; the margins add a few subnormal spacings for the others); exp, log, log1p and
# expm1 of the C library and Python's hypot are charged _LIBM roundoffs (2 ulps, twice the 1 ulp
# that glibc's manual lists as their largest known error on x86_64); scipy's erfcx is charged
# _ERFCX roundoffs (8 ulps) on [0, _CF_FROM), the one range where it is used: Johnson's Faddeeva
# package fits it there by Chebyshev polynomials to near machine precision, 4 ulps at worst in
# 177,000 points against mpmath (tests/test_calibration_conservative.py measures it again).
_UNIT = 2.0 ** -53
_LIBM = 4
_ERFCX = 16
_SUBNORMAL = 2.0 ** -1074
#: margins of _up and _dn by number of roundoffs: (n + 1) (1 + 1e-3) u covers n roundoffs of the
#: chain and the rounding of the margin's own addition, with room for second-order terms
_MARGIN = tuple((n + 1) * 1.001 * _UNIT for n in range(64))
_SPACINGS = tuple((n + 1) * _SUBNORMAL for n in range(64))
#: _dn(x, 2) and _up(x, 2) for x > 0 written out in the hot loops as products by 1 -+ 4u, which
#: cover a chain of two roundoffs and the product's own
_SHRINK, _GROW = 1.0 - _MARGIN[3], 1.0 + _MARGIN[3]
#: float64 nearest 1/sqrt(2), 1/sqrt(pi), ln sqrt(pi) and ln 2 (each within half an ulp, so one
#: roundoff each, already counted in the chains that use them)
_INV_SQRT2 = 0.7071067811865476
_INV_SQRT_PI = 0.5641895835477563
_LN_SQRT_PI = 0.5723649429247001
_LN2 = 0.6931471805599453
_LN2_BELOW, _LN2_ABOVE = math.nextafter(_LN2, 0.0), math.nextafter(_LN2, 1.0)
_SQRT2 = 1.4142135623730951
#: Laplace's continued fraction (the backward recurrence of _rho_tail) serves u >= _CF_FROM, where
#: it contracts in at most ~200 steps; below, scipy's erfcx(u) and the forward recurrence, whose
#: error grows by 1 + u / rho_k a step there (below 2.8, falling with k), inside a-priori bounds
_CF_FROM = 1.0
#: The series of _log_f_bound serves ratios t_j below this bound (at most about 60 terms)
_SERIES_BELOW = 0.5
#: The largest u whose square is finite: above it ln delta < -u^2 is below every float
_HUGE_U = math.sqrt(sys.float_info.max)


def _up(x, roundings):
    """A float at least the real number that ``x`` approximates with relative error at most
    ``roundings`` unit roundoffs (``x`` itself when it is infinite)."""
    y = x + abs(x) * _MARGIN[roundings] + _SPACINGS[roundings]
    return y if y == y else x


def _dn(x, roundings):
    """A float at most the real number that ``x`` approximates with relative error at most
    ``roundings`` unit roundoffs (``x`` itself when it is infinite)."""
    y = x - abs(x) * _MARGIN[roundings] - _SPACINGS[roundings]
    return y if y == y else x


def _rho_tail(u, count):
    r"""Intervals of ``rho_1, ..., rho_count`` at ``u >= _CF_FROM`` (the ratios of
    :func:`_mills`), by the backward recurrence ``rho_{k-1} = (k - 1) / (2 (u + rho_k))`` from
    ``0 <= rho_K <= K / (2u)``: the map is decreasing, so an interval maps to an interval, and it
    contracts by ``rho_k / (u + rho_k)``, small for ``k << u^2`` (Laplace's continued fraction
    for the Mills ratio)."""
    # enough steps for rho_1 to reach the interval's floor of ~10 roundoffs (measured: 200 at
    # u = 1, 65 at u = 2, 11 at u = 10)
    steps = max(count + 1, 8 + int(200.0 / min(u, 1e3) ** 1.65))
    lo, hi = 0.0, _up(steps / (2.0 * u), 1)
    out = [None] * (steps - 1)
    shrink, grow, spacing = _SHRINK, _GROW, _SPACINGS[3]
    twice = 2.0 * u
    for k in range(steps - 1, 0, -1):
        lo, hi = k / (twice + 2.0 * hi) * shrink - spacing, k / (twice + 2.0 * lo) * grow + spacing
        out[k - 1] = (lo, hi)
    return out[:count]


def _mills(u, count=1):
    r"""Intervals of ``ln erfc(u)``, ``ln erfcx(u)`` and of the ratios ``rho_1, ..., rho_count``.

    With :math:`M_k(u) = \frac{2}{\sqrt\pi}\int_0^\infty t^k e^{-t^2 - 2ut}\,dt`
    (:math:`M_0 = \operatorname{erfcx}(u)`), :math:`\rho_k = M_k / M_{k-1}`. Integration by parts
    gives :math:`2 M_k = (k-1) M_{k-2} - 2u M_{k-1}`, so
    :math:`\rho_1 = 1/(\sqrt\pi\,\operatorname{erfcx}(u)) - u` and
    :math:`\rho_k = (k-1)/(2\rho_{k-1}) - u`. The moments are log-convex (Cauchy-Schwarz), so
    :math:`\rho_k` increases with k, and the recurrence then bounds it a priori:
    :math:`(-u + \sqrt{u^2 + 2(k-1)})/2 \le \rho_k \le (-u + \sqrt{u^2 + 2k})/2`.

    Returns
    -------
    tuple
        ``(g_lo, g_hi, x_lo, x_hi, rhos)``: ``ln erfc(u)`` in ``[g_lo, g_hi]``,
        ``ln erfcx(u)`` in ``[x_lo, x_hi]``, ``rhos[k - 1]`` the interval of ``rho_k``.
    """
    sq_lo, sq_hi = _dn(u * u, 1), _up(u * u, 1)
    if u >= _CF_FROM:
        rhos = _rho_tail(u, max(count, 1))
        r_lo, r_hi = rhos[0]
        # erfcx(u) = 1 / (sqrt(pi) (u + rho_1)); ln(u + rho_1) >= ln 1.31 > 0.27 turns the sum's
        # roundoff into at most 3.7 roundoffs of the logarithm, plus the logarithm's own
        m_lo, m_hi = _dn(math.log(u + r_lo), 4 + _LIBM), _up(math.log(u + r_hi), 4 + _LIBM)
        x_lo, x_hi = _dn(-_LN_SQRT_PI - m_hi, 2), _up(-_LN_SQRT_PI - m_lo, 2)
        g_lo, g_hi = _dn(x_lo - sq_hi, 1), _up(x_hi - sq_lo, 1)
        return g_lo, g_hi, x_lo, x_hi, rhos[:count]
    if u >= 0.0:
        e = float(special.erfcx(u))
        ln_e = math.log(e)
        # the relative error of e is an absolute error of its logarithm (|ln e| < 0.85 here)
        err = (_ERFCX + 1 + _LIBM * abs(ln_e)) * _UNIT
        x_lo, x_hi = _dn(ln_e - err, 1), _up(ln_e + err, 1)
        g_lo, g_hi = _dn(x_lo - sq_hi, 1), _up(x_hi - sq_lo, 1)
        p = _INV_SQRT_PI / e
        first = (_dn(_dn(p, _ERFCX + 2) - u, 1), _up(_up(p, _ERFCX + 2) - u, 1))
    else:
        # erfc(u) = 2 - erfc(-u) lies in (1, 2]: no cancellation
        w = -u
        wg_lo, wg_hi = _mills(w)[:2]
        e_lo, e_hi = max(_dn(math.exp(wg_lo), _LIBM), 0.0), min(_up(math.exp(wg_hi), _LIBM), 1.0)
        g_lo = _dn(math.log(_dn(2.0 - e_hi, 1)), _LIBM)
        g_hi = _up(math.log(_up(2.0 - e_lo, 1)), _LIBM)
        x_lo, x_hi = _dn(sq_lo + g_lo, 1), _up(sq_hi + g_hi, 1)
        # rho_1 = e^{-u^2} / (sqrt(pi) erfc(u)) + |u|, a sum of positive terms
        y_lo = _dn(math.exp(_dn(-sq_hi - g_hi, 1)) * _INV_SQRT_PI, _LIBM + 2)
        y_hi = _up(math.exp(_up(-sq_lo - g_lo, 1)) * _INV_SQRT_PI, _LIBM + 2)
        first = (_dn(y_lo + w, 1), _up(y_hi + w, 1))
    rhos = [first]
    for k in range(2, count + 1):
        # forward: the error grows by 1 + u / rho_k a step (_CF_FROM), and the a-priori bounds
        # cap it and keep every lower end positive
        p_lo, p_hi = rhos[-1]
        lo = _dn(_dn((k - 1) / (2.0 * p_hi), 1) - u, 1)
        hi = _up(_up((k - 1) / (2.0 * p_lo), 1) - u, 1)
        if u >= 0.0:
            # sqrt(u^2 + 2j) <= u + sqrt(2j), and >= max(u, sqrt(2j))
            prior_lo = _dn((k - 1) / _up(2.0 * u + math.sqrt(2.0 * (k - 1)), 2), 1)
            prior_hi = _up(math.sqrt(0.5 * k), 1)
            if u > 0.0:
                prior_hi = min(prior_hi, _up(k / (2.0 * u), 1))
        else:
            prior_lo, prior_hi = -u, _up(-u + math.sqrt(0.5 * k), 2)
        rhos.append((max(lo, prior_lo), min(hi, prior_hi)))
    return g_lo, g_hi, x_lo, x_hi, rhos


def _log1mexp(t, upper):
    """A bound on ``ln(1 - e^t)`` for a float ``t < 0``, above it if ``upper`` else below."""
    if t >= 0.0:
        return 0.0 if upper else -math.inf
    bound = _up if upper else _dn
    if t <= -_LN2:
        # log1p's condition number at -q, q <= 1/2, is below 1.45
        return bound(math.log1p(-math.exp(t)), 3 * _LIBM)
    # 1 - e^t <= 1/2: expm1's roundoff becomes an absolute error of the logarithm below 1.45 of
    # its roundoffs relative to |ln(1 - e^t)| >= ln 2
    return bound(math.log(-math.expm1(t)), 3 * _LIBM)


def _log_erfcx_bound(x, upper):
    """A bound on ``ln erfcx(x)``, above it if ``upper`` else below."""
    if x > _HUGE_U:
        # 0 < erfcx(x) < 1 / (sqrt(pi) x)
        return _up(-_LN_SQRT_PI - math.log(x), 2 + _LIBM) if upper else -math.inf
    return _mills(x)[3 if upper else 2]


def _log_f_bound(u, h, upper):
    r"""A bound on :math:`\ln F(u, h)`, above it if ``upper`` else below, where
    :math:`F(u, h) = \tfrac12 e^{-u^2}(\operatorname{erfcx}(u) - \operatorname{erfcx}(u + h))`,
    for floats u and ``h > 0``.

    :math:`\ln F = \ln\tfrac12 + \ln\operatorname{erfc}(u) + \ln S` with
    :math:`S = 1 - q`, :math:`q = \operatorname{erfcx}(u + h) / \operatorname{erfcx}(u)`. Where the
    two terms are close (``q`` near 1) ``S`` is summed from the Taylor series of erfcx about u,
    :math:`S = \sum_{k \ge 1} (-1)^{k+1} T_k`, :math:`T_k = \frac{(2h)^k}{k!}\rho_1\cdots\rho_k`
    (:func:`_mills`), whose ratios :math:`t_k = T_k / T_{k-1} = 2h\rho_k / k` are at most
    :math:`R_k = h(-u + \sqrt{u^2 + 2k})/k`, decreasing in k: when :math:`R_1 \le 1/2` the
    terms decrease, so :math:`S = T_1 Y_1` with :math:`Y_k = 1 - t_{k+1} Y_{k+1}`, and every tail
    :math:`Y_n` lies in :math:`[1 - t_{n+1}, 1]` (an alternating series): no difference of close
    numbers is taken, and the truncation is part of the interval. Elsewhere :math:`S \ge 0.3`
    and :math:`\ln S = \ln(1 - e^{\ln q})` loses nothing.
    """
    # R_1 = 2 h rho_1_max, rho_1_max = (-u + sqrt(u^2 + 2)) / 2, bounded above
    if u >= 0.0:
        r1 = _up(2.0 * h / _dn(u + math.hypot(u, _SQRT2), _LIBM + 2), 1)
    else:
        r1 = _up(h * (-u + math.hypot(u, _SQRT2)), _LIBM + 3)
    if r1 <= _SERIES_BELOW:
        # the first n + 1 ratios, enough that t_2 ... t_{n+1} < 2^-56 (for tightness only: the
        # tail's interval holds for any n)
        n, product, w2 = 1, 1.0, u * u
        while n < 200:
            j = n + 1
            root = math.sqrt(w2 + 2.0 * j)
            product *= 2.0 * h / (u + root) if u >= 0.0 else h * (root - u) / j
            if product <= 2.0 ** -56:
                break
            n += 1
        g_lo, g_hi, _, _, rhos = _mills(u, n + 1)
        h2 = 2.0 * h
        shrink, grow, spacing = _SHRINK, _GROW, _SPACINGS[3]
        y_lo, y_hi = max(_dn(1.0 - _up(h2 * rhos[n][1] / (n + 1), 2), 1), 0.0), 1.0
        for k in range(n, 1, -1):
            r_lo, r_hi = rhos[k - 1]
            # t_k = 2 h rho_k / k, two roundoffs; 1 - t y >= 1/2, two roundoffs relative to it
            t_lo, t_hi = h2 * r_lo / k * shrink - spacing, h2 * r_hi / k * grow + spacing
            y_lo, y_hi = (max((1.0 - t_hi * y_hi) * shrink - spacing, 0.0),
                          min((1.0 - t_lo * y_lo) * grow + spacing, 1.0))
        # ln S = ln 2h + ln rho_1 + ln Y_1
        bound, r, y, g = ((_up, rhos[0][1], y_hi, g_hi) if upper
                          else (_dn, rhos[0][0], y_lo, g_lo))
        s = bound(bound(bound(math.log(h2), _LIBM) + bound(math.log(r), _LIBM), 1)
                  + bound(math.log(y), _LIBM), 1)
    else:
        g_lo, g_hi, lxu_lo, lxu_hi, _ = _mills(u)
        bound = _up if upper else _dn
        # ln(1 - q) decreases in ln q: its upper bound needs ln q's lower bound, at v's upper end
        v = bound(u + h, 1)
        if v < 0.0:
            # ln q = (v - u)(v + u) + ln erfc(v) - ln erfc(u): no large terms to cancel
            d = (_up if upper else _dn)(v - u, 1)
            total = (_dn if upper else _up)(v + u, 1)
            gv = _mills(v)[0 if upper else 1]
            if upper:
                log_q = _dn(_dn(_dn(d * total, 1) + gv, 1) - g_hi, 1)
            else:
                log_q = _up(_up(_up(d * total, 1) + gv, 1) - g_lo, 1)
        elif upper:
            log_q = _dn(_log_erfcx_bound(v, False) - lxu_hi, 1)
        else:
            log_q = _up(_log_erfcx_bound(v, True) - lxu_lo, 1)
        s = _log1mexp(log_q, upper)
        g = g_hi if upper else g_lo
    # ln 2 lies between the two floats around it: g - ln 2 may cancel (u << 0), so its bound
    # takes the float on the safe side rather than a relative margin
    if upper:
        return _up(_up(g - _LN2_BELOW, 1) + s, 1)
    return _dn(_dn(g - _LN2_ABOVE, 1) + s, 1)


def _log_delta_bound(mu, epsilon, upper=True):
    """A bound on the exact ``ln delta(epsilon)`` of the Gaussian mechanism with
    ``mu = Delta / sigma`` (:func:`gaussian_log_delta`), above it if ``upper`` else below."""
    if mu <= 0.0 or epsilon == math.inf:
        return -math.inf
    if mu == math.inf:
        return 0.0
    a = epsilon / mu
    if a == math.inf:
        return -sys.float_info.max if upper else -math.inf
    # u = (epsilon / mu - mu / 2) / sqrt(2) and its rounding error, bounded term by term: the
    # quotient and the subtraction one roundoff each, mu / 2 exact but for subnormals, 1/sqrt(2)
    # and the product one roundoff each
    b = 0.5 * mu
    d = a - b
    err_d = (a + b + abs(d)) * (1.01 * _UNIT) + _SUBNORMAL
    u = d * _INV_SQRT2
    err_u = err_d * 0.7072 + abs(u) * (2.0 * _UNIT) + _SUBNORMAL
    h = mu * _INV_SQRT2
    # delta decreases in u and increases in h (F is an integral of phi(a - s) (1 - e^{-mu s})
    # over s > 0, with a = -sqrt(2) u and mu = sqrt(2) h)
    if upper:
        u = _dn(u - err_u, 1)
        if u > _HUGE_U:
            return -sys.float_info.max
        return min(_log_f_bound(u, _up(h, 2), True), 0.0)
    u, h = _up(u + err_u, 1), _dn(h, 2)
    if u > _HUGE_U or h <= 0.0:
        return -math.inf
    return _log_f_bound(u, h, False)


def _log_delta_interval(mu, epsilon):
    """``(lower, upper)`` bounds on the exact ``ln delta(epsilon)`` (:func:`_log_delta_bound`)."""
    return _log_delta_bound(mu, epsilon, False), _log_delta_bound(mu, epsilon, True)


def gaussian_log_delta(mu, epsilon):
    r"""A certified upper bound on ``ln delta(epsilon)`` of the Gaussian mechanism with
    ``mu = Delta / sigma``.

    .. math:: \delta(\epsilon) = \Phi\left(\frac{\mu}{2} - \frac{\epsilon}{\mu}\right)
              - e^{\epsilon}\,\Phi\left(-\frac{\mu}{2} - \frac{\epsilon}{\mu}\right)

    (Balle & Wang 2018, Thm 8; equivalently mu-GDP, Dong, Roth & Su 2022). A composition of
    Gaussian mechanisms with ``mu_i`` is exactly Gaussian with ``mu = sqrt(sum mu_i^2)``.

    With :math:`u = (\epsilon/\mu - \mu/2)/\sqrt2` and :math:`h = \mu/\sqrt2`, the identity
    :math:`e^{\epsilon}\Phi(-\mu/2 - \epsilon/\mu) = \tfrac12 e^{-u^2}\operatorname{erfcx}(u + h)`
    removes the exponentials that cancel, and

    .. math:: \delta = \tfrac12\,\operatorname{erfc}(u)\,(1 - q), \qquad
              q = \operatorname{erfcx}(u + h) / \operatorname{erfcx}(u).

    Where the two terms are close (q near 1, as for small mu or large epsilon / mu^2), ``1 - q``
    is summed from the Taylor series of erfcx about u, whose terms alternate and decrease, with
    their ratios bounded a priori, and the truncation bounded by the next term; elsewhere
    ``1 - q >= 0.3`` and is taken directly. erfcx and the series' ratios come from Laplace's
    continued fraction for ``u >= 1``. Every operation is bounded in interval arithmetic (IEEE
    rounding; the C library's exp and log within 2 ulps; scipy's erfcx within 8 ulps on [0, 1),
    its only use), and the rounding of u and h is charged through the monotonicity of delta
    (decreasing in u, increasing in h). The result is therefore never below the exact
    ``ln delta``, and above it by at most about ``1e-14 max(1, |ln delta|)`` (5e-12 at
    delta = 1e-300): a calibration that checks this bound errs on the private side.

    (Why not the difference of the two terms' logarithms, ``log_ndtr(a)`` and
    ``epsilon + log_ndtr(b)``: each is rounded to about ``|ln delta| 1e-16``, and where the terms
    are close their difference keeps ``1e-16 |ln delta| / (1 - q)`` of relative error, 2e-7 near
    delta = 1e-240, enough for a calibration to return noise whose exact delta exceeds its
    target.)

    Parameters
    ----------
    mu : float
        ``Delta / sigma``, ``>= 0`` (``inf`` for a release without noise).
    epsilon : float
        The epsilon at which delta is evaluated, ``>= 0``.

    Returns
    -------
    float
        An upper bound on ``ln delta(epsilon)``: ``-inf`` for ``mu <= 0`` (delta is 0), ``0``
        for ``mu = inf``, and the most negative float where ``ln delta`` is below every float.
    """
    return _log_delta_bound(mu, epsilon)


def _log_target(delta):
    """A float at most ``ln delta`` (the logarithm's rounding charged)."""
    return _dn(math.log(delta), _LIBM)


def _rank(x):
    """The position of a float ``x >= 0`` in the order of float64 (consecutive floats differ by
    1)."""
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _unrank(i):
    return struct.unpack("<d", struct.pack("<q", i))[0]


def _least_passing(start, passes, floor):
    """The least float ``x >= floor`` near ``start`` for which ``passes(x)`` holds, by doubling
    steps from ``start`` and bisection between a failing and a passing float: the result always
    passes, and the float below it fails (``passes`` is false below a threshold and true above
    it, up to rounding noise in the bound it checks, where any passing float is kept)."""
    ok, floor_rank = _rank(start), _rank(floor)
    if passes(start):
        bad, step = None, 1
        while bad is None and ok > floor_rank:
            candidate = max(ok - step, floor_rank)
            if passes(_unrank(candidate)):
                ok, step = candidate, 2 * step
            else:
                bad = candidate
        if bad is None:
            return _unrank(ok)
    else:
        bad, step = ok, 1
        while True:
            candidate = min(bad + step, _rank(math.inf))
            if passes(_unrank(candidate)):
                ok = candidate
                break
            bad, step = candidate, 2 * step
    while ok - bad > 1:
        middle = (ok + bad) // 2
        if passes(_unrank(middle)):
            ok = middle
        else:
            bad = middle
    return _unrank(ok)


def gaussian_epsilon(mu, delta):
    """Smallest epsilon with ``delta(epsilon) <= delta`` for the Gaussian mechanism with
    ``mu = Delta / sigma``, rounded up: never below the exact epsilon.

    The inverse of :func:`gaussian_log_delta` in epsilon (Balle & Wang 2018): a root search, then
    the least float epsilon at which the certified upper bound on ``ln delta(epsilon)`` is at most
    a lower bound on ``ln delta``. The exact delta at the returned epsilon is therefore at most
    ``delta``, and the epsilon exceeds the exact one by the bound's error in ``ln delta`` (at
    most about ``1e-14 max(1, |ln delta|)``) divided by ``|d ln delta / d epsilon|``.

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
        ``mu = inf`` or no finite epsilon reaches ``delta``.
    """
    check_real(delta, "delta", low=0.0, high=1.0)
    if mu == 0.0:
        return 0.0
    if math.isinf(mu):
        return math.inf
    target = _log_target(delta)

    def passes(eps):
        return gaussian_log_delta(mu, eps) <= target

    if passes(0.0):
        return 0.0
    hi = max(1.0, mu * mu)
    while not passes(hi):
        hi *= 2.0
        if math.isinf(hi):          # no finite epsilon reaches a delta this small
            return math.inf
    # a relative tolerance only: an absolute one is no precision at all for a root of 1e-9
    try:
        eps = optimize.brentq(lambda e: gaussian_log_delta(mu, e) - target, 0.0, hi,
                              xtol=1e-300, rtol=1e-14)
    except RuntimeError:            # no convergence where delta is flat: the safe end
        eps = hi
    return float(_least_passing(min(max(eps, 0.0), hi), passes, 0.0))


def gaussian_sigma_analytic(sensitivity, epsilon, delta):
    """Smallest sigma for which the Gaussian mechanism is (epsilon, delta)-DP (Balle & Wang 2018),
    for every epsilon > 0, rounded up: never below the exact least sigma.

    A root search over ``mu = Delta / sigma``, then the least float sigma at which the certified
    upper bound of :func:`gaussian_log_delta`, at an upper bound on ``Delta / sigma`` (the
    quotient rounded up), is at most a lower bound on ``ln delta``. The exact delta of the
    returned sigma is therefore at most ``delta``. sigma exceeds the exact least noise by the
    bound's error in ``ln delta`` (at most about ``1e-14 max(1, |ln delta|)``) divided by the
    slope ``|d ln delta / d ln sigma|``, which grows like ``2 |ln delta|``: 4 to 15 ulps
    measured at delta <= 1e-5, about a hundred where mu and epsilon are both tiny (the slope
    near 1, and scipy's erfcx charged 8 ulps), as at epsilon = delta = 1e-6.

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
        The noise standard deviation sigma per coordinate: the least float at which the
        certified delta at ``epsilon`` is at most ``delta``.
    """
    _checks(sensitivity, epsilon, delta)
    target = _log_target(delta)

    def excess(m):
        return gaussian_log_delta(m, epsilon) - target

    lo, hi = 1e-3, 1.0      # bracket mu = Delta / sigma
    while excess(hi) <= 0.0:
        lo, hi = hi, hi * 2.0
    while excess(lo) > 0.0:
        lo /= 2.0
    try:
        mu = optimize.brentq(excess, lo, hi, xtol=max(lo * 1e-15, 1e-300), rtol=1e-15)
    except RuntimeError:            # no convergence where delta is flat: the safe end
        mu = lo

    def passes(sigma):
        # the exact mu = Delta / sigma is at most the quotient rounded up
        return gaussian_log_delta(math.nextafter(sensitivity / sigma, math.inf),
                                  epsilon) <= target

    return _least_passing(sensitivity / mu, passes, _SUBNORMAL)


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
        The scale ``b = Delta_1 / epsilon`` of each coordinate's Laplace noise, rounded up (the
        least float at or above the exact quotient): the mechanism's privacy loss
        ``Delta_1 / b`` is then at most epsilon, where the nearest float could exceed it by half
        an ulp.
    """
    _checks(l1_sensitivity, epsilon)
    return _quotient_up(l1_sensitivity, epsilon)


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
        The scale ``s = Delta_2 / epsilon``, rounded up (the least float at or above the exact
        quotient, so that ``Delta_2 / s <= epsilon``); the noise norm is ``Gamma(p, s)``-distributed
        (:func:`~dpsolve.privacy.gamma_norm_noise` draws it).
    """
    _checks(l2_sensitivity, epsilon)
    return _quotient_up(l2_sensitivity, epsilon)
