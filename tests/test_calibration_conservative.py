"""Every calibration errs on the private side, checked against exact arithmetic.

The analytic Gaussian mechanism's delta (Balle & Wang 2018),
``delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)``, is evaluated by mpmath to 60
significant digits (more working digits where the two terms cancel), at ``mu = Delta / sigma``
taken exactly from the returned float sigma. A returned sigma must give an exact delta at most
the target, a returned epsilon an exact delta at most the given one, and the certified
``gaussian_log_delta`` must never be below the exact ``ln delta``: no tolerance on that side.

The points are adversarial: delta down to 1e-300, epsilon from 1e-6 to 1e3, mu and epsilon/mu
tiny (the two terms of delta agree to many digits), the boundaries between the evaluation's
branches (the series and the direct difference, Laplace's continued fraction and erfcx, u of
either sign), and a derandomised hypothesis search. The other calibrations (Laplace and
gamma-norm scales, the classic Gaussian, sqrt(T) times a unit sigma, the zCDP inversion, an
accountant's multiplier times a sensitivity) are checked with exact rationals or mpmath.

Tightness is checked too, with tolerances from the bound's error budget (``LOG_SLACK``) read
through the exact slope of ``ln delta``: a bound that errs on the private side by a wide margin
would pass the safety checks and cost noise.
"""
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpsolve.privacy import calibration, mechanisms
from dpsolve.privacy.mechanisms import (gamma_norm_scale, gaussian_epsilon, gaussian_log_delta,
                                        gaussian_sigma_analytic, gaussian_sigma_classic,
                                        laplace_scale)

mp = pytest.importorskip("mpmath")

#: Significant digits of every exact delta.
DIGITS = 60
#: Unit roundoff of float64.
UNIT = 2.0 ** -53
#: The certified bound's budget, relative to max(1, |ln delta|): its interval charges the
#: rounding of a few dozen operations of a few roundoffs each, scipy's erfcx at 16 roundoffs
#: twice, and the rounding of u through u^2 (about 8 u^2 roundoffs): together below 1000
#: roundoffs of max(1, |ln delta|), the measured worst being under 100.
LOG_SLACK = 1000 * UNIT


# -- exact values ---------------------------------------------------------------------------------
def exact_delta(mu, eps):
    """delta(eps) of the Gaussian mechanism at ``mu`` (an mpf, or a float taken exactly), to
    DIGITS significant digits: the working precision grows by the digits the two terms share."""
    extra = 10
    while True:
        with mp.workdps(DIGITS + extra):
            mu_, eps_ = mp.mpf(mu), mp.mpf(eps)
            first = mp.ncdf(mu_ / 2 - eps_ / mu_)
            delta = first - mp.exp(eps_) * mp.ncdf(-mu_ / 2 - eps_ / mu_)
            lost = int(mp.log10(first / delta)) + 1 if delta > 0 else 2 * extra
            if delta > 0 and lost + 5 <= extra:
                return +delta
        extra = max(2 * extra, lost + 10)


def exact_delta_of_sigma(sensitivity, sigma, eps):
    """delta(eps) at the exact ``mu = sensitivity / sigma`` of two floats."""
    with mp.workdps(DIGITS + 400):
        mu = mp.mpf(sensitivity) / mp.mpf(sigma)
    return exact_delta(mu, eps)


def slope(sensitivity, sigma, eps):
    """``|d ln delta / d ln sigma|`` at the exact ``mu = sensitivity / sigma``: since
    ``e^eps phi(b) = phi(a)``, ``d delta / d mu = phi(a)``, and the slope is
    ``mu phi(a) / delta``."""
    with mp.workdps(DIGITS + 400):
        mu = mp.mpf(sensitivity) / mp.mpf(sigma)
        return mu * mp.npdf(mu / 2 - mp.mpf(eps) / mu) / exact_delta(mu, eps)


def epsilon_slope(mu, eps):
    """``|d ln delta / d epsilon| = e^eps Phi(b) / delta``."""
    with mp.workdps(DIGITS + 400):
        mu, eps = mp.mpf(mu), mp.mpf(eps)
        return mp.exp(eps) * mp.ncdf(-mu / 2 - eps / mu) / exact_delta(mu, eps)


def assert_sigma_conservative_and_tight(sensitivity, epsilon, delta):
    sigma = gaussian_sigma_analytic(sensitivity, epsilon, delta)
    exact = exact_delta_of_sigma(sensitivity, sigma, epsilon)
    assert exact <= delta, (epsilon, delta, sigma, float(exact / delta - 1))
    # tight: sigma exceeds the exact least noise by at most the bound's slack (and that of
    # ln delta's rounding, 4 roundoffs) read through the slope, plus one ulp of rounding up
    log_slack = LOG_SLACK * max(1.0, abs(math.log(delta))) + 5 * UNIT * abs(math.log(delta))
    relative = log_slack / abs(float(slope(sensitivity, sigma, epsilon))) + 2 * UNIT
    below = sigma * (1.0 - relative)
    assert exact_delta_of_sigma(sensitivity, below, epsilon) > delta, (epsilon, delta, sigma)


# -- the analytic Gaussian mechanism's sigma ------------------------------------------------------
#: The points where the uncertified closed form returned too little noise (exact delta above the
#: target by up to a relative 2e-7), the two terms cancelling to within their rounding, and a
#: grid over epsilon in [1e-6, 1e3] and delta in [1e-300, 0.3].
SIGMA_POINTS = [
    (1e-6, 1e-6), (1e-3, 1e-15), (0.05, 1e-100), (0.05, 1e-300), (0.1, 1e-8),
    (0.001389208009822439, 2.087071334435676e-265), (1e-4, 0.2),
    (1e-30, 1e-20), (1e-20, 1e-18), (1e-10, 1e-17), (1e-6, 1e-30), (1e-6, 1e-300),
] + [(eps, delta) for eps in (1e-6, 1e-2, 1.0, 30.0, 1e3) for delta in (1e-300, 1e-40, 1e-6, 0.3)]


@pytest.mark.parametrize("epsilon, delta", SIGMA_POINTS)
def test_analytic_sigma_is_never_below_the_exact_least_noise(epsilon, delta):
    assert_sigma_conservative_and_tight(1.0, epsilon, delta)


@pytest.mark.parametrize("sensitivity", [0.3, 7.0, 1e-200, 3e150])
def test_analytic_sigma_holds_for_any_sensitivity(sensitivity):
    # sigma is searched for the sensitivity given, so Delta / sigma is checked as the mechanism
    # reads it, not sigma_1 scaled by Delta after the fact
    for epsilon, delta in [(0.05, 1e-300), (1.0, 1e-6), (1e-3, 1e-15)]:
        assert_sigma_conservative_and_tight(sensitivity, epsilon, delta)


@settings(max_examples=15, derandomize=True, deadline=None)
@given(st.floats(-6.0, 3.0), st.floats(-300.0, -0.5))
def test_analytic_sigma_searched(log_epsilon, log_delta):
    epsilon, delta = 10.0 ** log_epsilon, 10.0 ** log_delta
    sigma = gaussian_sigma_analytic(1.0, epsilon, delta)
    assert exact_delta_of_sigma(1.0, sigma, epsilon) <= delta


@pytest.mark.slow
@settings(max_examples=2000, derandomize=True, deadline=None)
@given(st.floats(-6.0, 3.0), st.floats(-300.0, -0.5), st.floats(-3.0, 3.0))
def test_analytic_sigma_searched_widely(log_epsilon, log_delta, log_sensitivity):
    epsilon, delta = 10.0 ** log_epsilon, 10.0 ** log_delta
    assert_sigma_conservative_and_tight(10.0 ** log_sensitivity, epsilon, delta)


# -- epsilon from a noise -------------------------------------------------------------------------
EPSILON_POINTS = [
    (1e-5, 1e-12), (1e-3, 1e-100), (3.825005918339202e-05, 1.2647698018541754e-240),
    (0.5, 1e-8), (1e-9, 1e-300), (5e-324 * 2 ** 60, 1e-300),
] + [(mu, delta) for mu in (1e-8, 1e-3, 0.3, 3.0, 30.0) for delta in (1e-300, 1e-20, 1e-5, 0.3)]


@pytest.mark.parametrize("mu, delta", EPSILON_POINTS)
def test_epsilon_of_a_gaussian_is_never_below_the_exact_one(mu, delta):
    eps = gaussian_epsilon(mu, delta)
    if eps == 0.0:
        assert exact_delta(mu, 0.0) <= delta
        return
    assert exact_delta(mu, eps) <= delta, (mu, delta, eps)
    # tight: a relative LOG_SLACK-worth below, the exact delta is above the target, unless
    # delta's slope in epsilon is so flat there that the float below is as good
    step = LOG_SLACK * max(1.0, abs(math.log(delta))) + 5 * UNIT * abs(math.log(delta))
    below = eps - step / float(epsilon_slope(mu, eps)) - 2 * eps * UNIT
    if below > 0.0:
        assert exact_delta(mu, below) > delta, (mu, delta, eps)


@pytest.mark.slow
@settings(max_examples=1000, derandomize=True, deadline=None)
@given(st.floats(-9.0, 2.5), st.floats(-300.0, -0.5))
def test_epsilon_searched_widely(log_mu, log_delta):
    mu, delta = 10.0 ** log_mu, 10.0 ** log_delta
    eps = gaussian_epsilon(mu, delta)
    assert exact_delta(mu, eps) <= delta


# -- the certified delta itself -------------------------------------------------------------------
def _branch_points():
    """(mu, epsilon) at the evaluation's branch boundaries: u = (eps/mu - mu/2)/sqrt(2) at 0,
    at 1 (Laplace's continued fraction or erfcx), h = mu/sqrt(2) where the series' first ratio
    bound R_1 = h(-u + sqrt(u^2 + 2)) is 1/2 (series or direct difference), v = u + h < 0."""
    points = []
    for u in (-2.0, -0.3, -1e-9, 0.0, 1e-9, 0.7, 1.0 - 1e-12, 1.0, 1.0 + 1e-12, 3.0, 26.0,
              1e4):
        for ratio in (1e-12, 1e-3, 0.5 * (1 - 1e-12), 0.5, 0.5 * (1 + 1e-12), 2.0, 30.0):
            h = ratio / (-u + math.hypot(u, math.sqrt(2.0)))
            mu = math.sqrt(2.0) * h
            eps = mu * (math.sqrt(2.0) * u + mu / 2.0)
            if eps >= 0.0:
                points.append((mu, eps))
    return points


CANCELLING = [(mu, ratio * mu * mu) for mu in (1e-9, 1e-5, 1e-2, 0.3)
              for ratio in (1e-3, 1.0, 1e3, 1e6)] + [
    (1 / 735.4288432306231, 0.05), (1 / 24755.115130507394, 0.001389208009822439),
    (3.825005918339202e-05, 0.0012503954467696827), (1.0, 1.0), (3.0, 2.0), (100.0, 1.0),
    (1e-300, 0.0), (1e-3, 0.0)]


@pytest.mark.parametrize("mu, epsilon", _branch_points() + CANCELLING)
def test_certified_log_delta_brackets_the_exact_one(mu, epsilon):
    exact = exact_delta(mu, epsilon)
    with mp.workdps(DIGITS):
        log_exact = mp.log(exact)
    upper = gaussian_log_delta(mu, epsilon)
    assert upper >= log_exact, (mu, epsilon, upper, float(log_exact))
    lower, upper_again = mechanisms._log_delta_interval(mu, epsilon)
    assert upper_again == upper and lower <= log_exact
    assert upper - log_exact <= LOG_SLACK * max(1.0, abs(float(log_exact))), (mu, epsilon)


def _check_log_delta(log_mu, log_ratio):
    """The certified log delta is at or above the exact one, and within LOG_SLACK of it."""
    # epsilon relative to mu^2 sets how far the two terms cancel
    mu = 10.0 ** log_mu
    epsilon = mu * mu * 10.0 ** log_ratio
    exact = exact_delta(mu, epsilon)
    with mp.workdps(DIGITS):
        log_exact = mp.log(exact)
    upper = gaussian_log_delta(mu, epsilon)
    assert log_exact <= upper <= log_exact + LOG_SLACK * max(1.0, abs(float(log_exact)))


@settings(max_examples=25, derandomize=True, deadline=None)
@given(st.floats(-9.0, 2.5), st.floats(-6.0, 3.0))
def test_certified_log_delta_searched(log_mu, log_ratio):
    _check_log_delta(log_mu, log_ratio)


@pytest.mark.slow
@settings(max_examples=3000, derandomize=True, deadline=None)
@given(st.floats(-12.0, 4.0), st.floats(-8.0, 4.0))
def test_certified_log_delta_searched_widely(log_mu, log_ratio):
    _check_log_delta(log_mu, log_ratio)


def test_certified_log_delta_at_the_ends_of_float64():
    assert gaussian_log_delta(0.0, 1.0) == -math.inf
    assert gaussian_log_delta(math.inf, 1.0) == 0.0
    # delta below every float: the bound is the most negative float, not -inf (delta > 0)
    assert gaussian_log_delta(1e-300, 1.0) == -np.finfo(float).max
    # subnormal mu: an upper bound still, delta(0) = erf(mu / (2 sqrt 2))
    for mu in (5e-324, 5.88e-309):
        with mp.workdps(400):
            exact = mp.log(mp.erf(mp.mpf(mu) / (2 * mp.sqrt(2))))
        assert gaussian_log_delta(mu, 0.0) >= exact


def test_scipy_erfcx_meets_the_accuracy_the_bound_charges():
    # the one library special function the bound trusts: _ERFCX roundoffs on [0, _CF_FROM)
    from scipy import special
    xs = np.concatenate([np.linspace(0.0, mechanisms._CF_FROM, 1001)[:-1],
                         np.geomspace(1e-300, 0.9, 200)])
    worst = 0.0
    with mp.workdps(40):
        for x in xs:
            value = mp.exp(mp.mpf(x) ** 2) * mp.erfc(mp.mpf(x))
            worst = max(worst, float(abs(mp.mpf(float(special.erfcx(x))) / value - 1)))
    assert worst <= mechanisms._ERFCX * UNIT


@pytest.mark.slow
def test_scipy_erfcx_meets_the_accuracy_the_bound_charges_densely():
    from scipy import special
    xs = np.random.default_rng(0).uniform(0.0, mechanisms._CF_FROM, 50_000)
    with mp.workdps(40):
        worst = max(float(abs(mp.mpf(float(special.erfcx(x)))
                              / (mp.exp(mp.mpf(x) ** 2) * mp.erfc(mp.mpf(x))) - 1)) for x in xs)
    assert worst <= mechanisms._ERFCX * UNIT


# -- the other calibrations -----------------------------------------------------------------------
QUOTIENTS = [(1.0, 3.0), (1.0, 10.0), (0.1, 0.3), (2.0, 0.7), (1e-300, 3e-8), (3.0, 1e-5)]


@pytest.mark.parametrize("sensitivity, epsilon", QUOTIENTS)
def test_laplace_and_gamma_norm_scales_are_rounded_up(sensitivity, epsilon):
    # the privacy loss Delta / b must be at most epsilon: b >= Delta / epsilon exactly
    for scale in (laplace_scale(sensitivity, epsilon), gamma_norm_scale(sensitivity, epsilon),
                  calibration.output_noise_scale("gamma_norm", epsilon, 0.0, sensitivity,
                                                 "paper")):
        assert Fraction(scale) * Fraction(epsilon) >= Fraction(sensitivity)
        # the least such float
        below = math.nextafter(scale, 0.0)
        assert Fraction(below) * Fraction(epsilon) < Fraction(sensitivity)


@pytest.mark.parametrize("epsilon", [1e-6, 0.5, 0.999999999])
@pytest.mark.parametrize("delta", [5e-324, 1e-300, 1e-6, 0.9])
def test_classic_gaussian_holds_where_it_is_valid(epsilon, delta):
    # the source's formula, rounded to nearest: its margin over the exact noise covers that
    sigma = gaussian_sigma_classic(1.0, epsilon, delta)
    assert math.isfinite(sigma)
    assert exact_delta_of_sigma(1.0, sigma, epsilon) <= delta


@pytest.mark.parametrize("sensitivity, steps", [(1.0, 1), (0.01, 50), (2.0 / 3.0, 7), (0.3, 9999),
                                                (1e-5, 2 ** 40)])
@pytest.mark.parametrize("epsilon, delta", [(1.0, 1e-6), (0.05, 1e-300), (1e-3, 1e-15)])
def test_exact_gaussian_sigma_composes_to_a_private_sigma(sensitivity, steps, epsilon, delta):
    sigma_1 = gaussian_sigma_analytic(1.0, epsilon, delta)
    single = calibration.exact_gaussian_sigma(sensitivity, steps, epsilon, delta)
    grid = calibration.exact_gaussian_sigma(sensitivity, np.array([1, steps]), epsilon, delta)
    for sigma in (single, float(grid[1])):
        # T releases compose to mu = sqrt(T) Delta / sigma: at most 1 / sigma_1 exactly
        assert Fraction(sigma) ** 2 >= steps * Fraction(sensitivity) ** 2 * Fraction(sigma_1) ** 2
        with mp.workdps(DIGITS + 400):
            mu = mp.sqrt(steps) * mp.mpf(sensitivity) / mp.mpf(sigma)
        assert exact_delta(mu, epsilon) <= delta
    assert single <= grid[1]
    # the single value is the least float at or above sqrt(T) times Delta sigma_1 rounded up
    scale = mechanisms._product_up(sensitivity, sigma_1)
    assert Fraction(math.nextafter(single, 0.0)) ** 2 < steps * Fraction(scale) ** 2


ZCDP_POINTS = [(1e-6, 1e-300), (1e-6, 1e-6), (1e-3, 1e-100), (1.0, 1e-6), (10.0, 1e-12),
               (0.1, 0.5), (3e-5, 1e-200), (2e-4, 1e-50)]


@pytest.mark.parametrize("epsilon, delta", ZCDP_POINTS)
@pytest.mark.parametrize("sensitivity, steps", [(1.0, 1), (0.1, 200), (3.0, 12345)])
def test_zcdp_inversion_holds_exactly(epsilon, delta, sensitivity, steps):
    # rho = T Delta^2 / (2 sigma^2) must give rho + 2 sqrt(rho ln(1/delta)) <= epsilon exactly
    sigma = calibration.zcdp_inversion_sigma(sensitivity, steps, epsilon, delta)
    with mp.workdps(DIGITS + 20):
        rho = steps * mp.mpf(sensitivity) ** 2 / (2 * mp.mpf(sigma) ** 2)
        certified = rho + 2 * mp.sqrt(rho * mp.log(1 / mp.mpf(delta)))
        assert certified <= epsilon, (epsilon, delta, float(certified / epsilon - 1))
        # and a few ulps above the exact inversion, not more: its roundings are counted
        root = mp.sqrt(mp.log(1 / mp.mpf(delta)) + epsilon) - mp.sqrt(mp.log(1 / mp.mpf(delta)))
        exact = mp.sqrt(2 * steps) * mp.mpf(sensitivity) / (2 * root)
        assert (mp.mpf(sigma) - exact) / exact <= 64 * UNIT


@pytest.mark.parametrize("sensitivity", [0.1, 1.0 / 3.0, 7.0, 2.0 / 3.0, 1e-7])
def test_accountant_noise_is_at_least_the_certified_multiplier(sensitivity):
    # the accountant certifies a multiplier m; the noise is then m times the sensitivity rounded
    # up (to nearest it could be below m Delta)
    from dpsolve.privacy import calibrate
    for accountant in ("pld", "rdp"):
        multiplier = calibrate(1.0, 1e-6, sensitivity=1.0, steps=10, accountant=accountant)
        sigma = calibrate(1.0, 1e-6, sensitivity=sensitivity, steps=10, accountant=accountant)
        assert Fraction(sigma) >= Fraction(multiplier) * Fraction(sensitivity)
        assert Fraction(math.nextafter(sigma, 0.0)) < Fraction(multiplier) * Fraction(sensitivity)


def test_dp_gd_noise_is_the_rounded_up_exact_noise():
    noise = calibration.dpgd_noise(1000, 1.0, 50, 1.0, 1e-6, "pld")
    assert noise == calibration.exact_gaussian_sigma(2.0 / 1000, 50, 1.0, 1e-6)
    with mp.workdps(DIGITS + 400):
        mu = mp.sqrt(50) * mp.mpf(2.0 / 1000) / mp.mpf(noise)
    assert exact_delta(mu, 1.0) <= 1e-6


@pytest.mark.slow
def test_poisson_pld_noise_is_at_least_its_certified_multiplier():
    # the event certified holds the multiplier sigma / sensitivity rounded down
    # (gaussian_event): never more noise read than the sigma returned
    from dpsolve.privacy import PoissonSampling, epsilon_of, gaussian_event
    sensitivity = 1.0 / 3.0
    sigma = calibration.poisson_pld_sigma(1.0, 1e-6, sensitivity=sensitivity, steps=20,
                                          rate=0.1)
    event = gaussian_event(sigma, sensitivity, steps=20, sampling=PoissonSampling(0.1))
    multiplier = event.event.event.noise_multiplier
    assert Fraction(multiplier) * Fraction(sensitivity) <= Fraction(sigma)
    assert Fraction(math.nextafter(multiplier, math.inf)) * Fraction(sensitivity) > Fraction(sigma)
    assert epsilon_of(event, 1e-6, "pld") <= 1.0
