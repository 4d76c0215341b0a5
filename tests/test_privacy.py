"""dpsolve.privacy: published reference values, cross-checks against exact formulas, calibration
round trips, composition rules, the normalisation between accountants."""
import math

import dp_accounting
import pytest
from dp_accounting import pld as dpa_pld
from scipy import stats

from dpsolve import privacy
from dpsolve.privacy import (PoissonSampling, UniformSampling, calibrate, delta_of, epsilon_of,
                             gaussian_event)


# -- published values ----------------------------------------------------------------------------
def test_analytic_gaussian_reference_value():
    """dp_accounting's test value (Balle & Wang 2018): sigma(eps=1, delta=1e-5) = 3.7306."""
    assert privacy.gaussian_sigma_analytic(1.0, 1.0, 1e-5) == pytest.approx(3.7306, abs=1e-4)
    assert privacy.gaussian_sigma_analytic(2.5, 1.0, 1e-5) == pytest.approx(2.5 * 3.7306, abs=3e-4)


@pytest.mark.parametrize("neighbours", ["add_remove", "replace_one"])
def test_pld_reference_value(neighbours):
    """dp_accounting's PLD test: Gaussian sigma = sqrt(3) (sensitivity 1) composed 3 times has
    delta(eps=1) = 0.126936 — the same for either relation once the sensitivity is stated in it."""
    event = gaussian_event(math.sqrt(3.0), 1.0, steps=3)
    assert delta_of(event, 1.0, "pld", neighbours) == pytest.approx(0.126936, abs=1e-6)


@pytest.mark.slow
def test_opacus_reference_values():
    """Opacus's accountant test: sigma 1.5, Poisson rate 0.04, 2,250 steps, delta 1e-5, add/remove:
    RDP 7.329 and PRV/PLD 6.78."""
    event = gaussian_event(1.5, 1.0, steps=2250, sampling=PoissonSampling(0.04))
    assert epsilon_of(event, 1e-5, "rdp", "add_remove") == pytest.approx(7.329, abs=2e-3)
    assert epsilon_of(event, 1e-5, "pld", "add_remove") == pytest.approx(6.78, abs=0.02)


# -- the normalisation ---------------------------------------------------------------------------
@pytest.mark.slow
def test_pld_and_rdp_agree_on_what_an_event_means():
    """docs/privacy.md: fed the same GaussianDpEvent under REPLACE_ONE, dp_accounting's RDP
    and PLD accountants disagree by 2x in sensitivity. dpsolve's epsilon_of normalises: its PLD
    (through dp_accounting) must match the exact Gaussian value and lie below its RDP."""
    event = gaussian_event(4.0, 1.0, steps=1)
    exact = privacy.gaussian_epsilon(1.0 / 4.0, 1e-5)
    raw = dpa_pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE)
    raw.compose(event)
    assert raw.get_epsilon(1e-5) > 1.9 * exact           # the trap, as dp_accounting has it
    poisson = gaussian_event(4.0, 1.0, steps=1, sampling=PoissonSampling(1.0))
    assert epsilon_of(poisson, 1e-5, "pld") == pytest.approx(exact, rel=1e-3)
    # a Poisson rate < 1 goes through dp_accounting's PLD with the rescaled multiplier
    sampled = gaussian_event(4.0, 1.0, steps=1, sampling=PoissonSampling(0.999999))
    pld_eps = epsilon_of(sampled, 1e-5, "pld")
    assert exact * 0.99 < pld_eps <= exact * 1.01


@pytest.mark.parametrize("multiplier,steps", [(1.0, 1), (4.0, 10), (20.0, 1000), (0.7, 3)])
@pytest.mark.parametrize("delta", [1e-5, 1e-10])
def test_accountants_bound_the_exact_gaussian(multiplier, steps, delta):
    """Unsampled Gaussian composition is exactly Gaussian (mu = sqrt(T) / m): pld equals it,
    and every other accountant is a valid (larger) bound."""
    exact = privacy.gaussian_epsilon(math.sqrt(steps) / multiplier, delta)
    event = gaussian_event(multiplier, 1.0, steps=steps)
    assert epsilon_of(event, delta, "pld") == pytest.approx(exact, rel=1e-12)
    for accountant in ("rdp", "zcdp", "strong", "basic"):
        assert epsilon_of(event, delta, accountant) >= exact * (1 - 1e-12), accountant


@pytest.mark.slow
def test_pld_closed_form_matches_dp_accounting_pld():
    """The closed form used for unsampled Gaussians against dp_accounting's discretised PLD."""
    event = gaussian_event(3.0, 1.0, steps=20)
    acc = dpa_pld.PLDAccountant(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    acc.compose(event)
    # dp_accounting's PLD is pessimistic by its discretisation (1e-4 per composition)
    assert epsilon_of(event, 1e-6, "pld", "add_remove") == pytest.approx(acc.get_epsilon(1e-6), abs=5e-3)


def test_exact_gaussian_delta_formula():
    """delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), checked by direct evaluation."""
    for mu, eps in [(1.0, 1.0), (0.3, 0.5), (3.0, 2.0)]:
        direct = stats.norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu)
        assert math.exp(privacy.gaussian_log_delta(mu, eps)) == pytest.approx(direct, rel=1e-12)
    eps = privacy.gaussian_epsilon(0.5, 1e-8)
    assert math.exp(privacy.gaussian_log_delta(0.5, eps)) <= 1e-8        # conservative side
    assert math.exp(privacy.gaussian_log_delta(0.5, eps * (1 - 1e-9))) > 1e-8


def test_sampled_events():
    """Sampling helps (amplification) and rdp handles without-replacement sampling."""
    full = gaussian_event(2.0, 1.0, steps=100)
    sampled = gaussian_event(2.0, 1.0, steps=100, sampling=UniformSampling(1000, 10))
    assert epsilon_of(sampled, 1e-6, "rdp") < epsilon_of(full, 1e-6, "rdp") / 5
    assert epsilon_of(sampled, 1e-6, "basic") < epsilon_of(full, 1e-6, "basic")
    assert epsilon_of(sampled, 1e-6, "zcdp") == epsilon_of(full, 1e-6, "zcdp")   # no amplification
    assert privacy.tightest_accountant(sampled) == "rdp" and privacy.tightest_accountant(full) == "pld"
    assert epsilon_of(sampled, 1e-6) == epsilon_of(sampled, 1e-6, "rdp")


def test_unsupported_combinations_say_what_to_do():
    wor = gaussian_event(2.0, 1.0, steps=10, sampling=UniformSampling(100))
    with pytest.raises(ValueError, match="'pld' does not support sampling without replacement"):
        epsilon_of(wor, 1e-6, "pld")
    poisson = gaussian_event(2.0, 1.0, steps=10, sampling=PoissonSampling(0.1))
    with pytest.raises(ValueError, match="accountant='rdp' does not support"):
        epsilon_of(poisson, 1e-6, "rdp", "replace_one")
    mixed = dp_accounting.ComposedDpEvent([gaussian_event(1.0, 1.0), gaussian_event(2.0, 1.0)])
    with pytest.raises(ValueError, match="'strong' needs every step to be the same"):
        epsilon_of(mixed, 1e-6, "strong")
    with pytest.raises(ValueError, match="cannot read a SingleEpochTreeAggregationDpEvent"):
        epsilon_of(dp_accounting.SingleEpochTreeAggregationDpEvent(1.0, [1]), 1e-6, "zcdp")
    with pytest.raises(ValueError, match="accountant must be one of"):
        epsilon_of(wor, 1e-6, "prv")
    with pytest.raises(TypeError, match="DpEvent or a dpsolve Fit"):
        epsilon_of("event", 1e-6)
    assert epsilon_of(dp_accounting.NonPrivateDpEvent(), 1e-6) == math.inf
    assert epsilon_of(gaussian_event(0.0, 1.0, steps=5), 1e-6, "rdp") == math.inf


# -- calibration ---------------------------------------------------------------------------------
CASES = [
    (dict(steps=1), ("pld", "rdp", "zcdp", "strong", "basic")),
    (dict(steps=200), ("pld", "rdp", "zcdp", "strong", "basic")),
    # slow (about 5 s): RDP of 2,000 sampled steps, searched; noisy_sgd's calibration tests
    # cover sampling without replacement in the fast tier
    pytest.param(dict(steps=2000, sampling=UniformSampling(500, 1)),
                 ("rdp", "zcdp", "strong", "basic"), marks=pytest.mark.slow),
    (dict(steps=300, sampling=PoissonSampling(0.05)), ("pld",)),
]


#: calibrate's sigma over the least the accountant certifies: the search's rtol (1e-3), times one
#: step of the grid of multipliers it rounds up onto (ten significant bits: at most 2^-9).
CALIBRATION_SLACK = (1.0 + 1e-3) * (1.0 + 2.0 ** -9)


@pytest.mark.parametrize("kwargs,accountants", CASES)
@pytest.mark.parametrize("epsilon,delta", [(0.5, 1e-6),
                                           pytest.param(3.0, 1e-9, marks=pytest.mark.slow)])
def test_calibration_round_trip(kwargs, accountants, epsilon, delta):
    """epsilon_of(calibrate(eps)) <= eps, and less noise by the search's and the grid's slack
    would not do."""
    for accountant in accountants:
        sigma = calibrate(epsilon, delta, sensitivity=2.0, accountant=accountant, **kwargs)
        certified = epsilon_of(gaussian_event(sigma, 2.0, **kwargs), delta, accountant)
        assert certified <= epsilon, accountant
        less = epsilon_of(gaussian_event(sigma / (CALIBRATION_SLACK * (1.0 + 1e-4)), 2.0,
                                         **kwargs), delta, accountant)
        assert less > epsilon, accountant


def test_calibration_matches_closed_forms():
    # pld without sampling is the analytic Gaussian with mu_total = sqrt(T) Delta / sigma
    sigma = calibrate(1.0, 1e-5, sensitivity=1.0, steps=16, accountant="pld")
    exact = 4 * privacy.gaussian_sigma_analytic(1.0, 1.0, 1e-5)
    assert exact / (1.0 + 1e-3) <= sigma <= exact * CALIBRATION_SLACK
    # zcdp: rho = (sqrt(L + eps) - sqrt(L))^2 with L = ln(1/delta), rho = T Delta^2 / (2 sigma^2)
    L = math.log(1e6)
    rho = (math.sqrt(L + 0.7) - math.sqrt(L)) ** 2
    sigma = calibrate(0.7, 1e-6, sensitivity=3.0, steps=50, accountant="zcdp")
    exact = math.sqrt(50 * 9.0 / (2 * rho))
    assert exact / (1.0 + 1e-3) <= sigma <= exact * CALIBRATION_SLACK


def test_calibration_orders_accountants():
    """Tighter accountants need less noise: pld <= rdp <= zcdp, and strong <= basic."""
    s = {a: calibrate(1.0, 1e-6, sensitivity=1.0, steps=500, accountant=a)
         for a in ("pld", "rdp", "zcdp", "strong", "basic")}
    assert s["pld"] <= s["rdp"] <= s["zcdp"] and s["strong"] <= s["basic"]


def test_calibrate_rejects_bad_input():
    with pytest.raises(ValueError, match="epsilon must lie in"):
        calibrate(0.0, 1e-6, sensitivity=1.0)
    with pytest.raises(ValueError, match="delta must lie in"):
        calibrate(1.0, 0.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="sensitivity must lie in"):
        calibrate(1.0, 1e-6, sensitivity=-1.0)
    with pytest.raises(ValueError, match="steps must be an integer >= 1"):
        calibrate(1.0, 1e-6, sensitivity=1.0, steps=0)
    with pytest.raises(TypeError, match="sampling must be"):
        calibrate(1.0, 1e-6, sensitivity=1.0, sampling=0.1)
    with pytest.raises(ValueError, match="sample_size must be <= dataset_size"):
        UniformSampling(10, 11)
    with pytest.raises(ValueError, match="rate must lie in"):
        PoissonSampling(0.0)


# -- single mechanisms and composition rules ----------------------------------------------------
def test_classic_gaussian():
    assert privacy.gaussian_sigma_classic(2.0, 0.5, 1e-5) == pytest.approx(
        2.0 * math.sqrt(2 * math.log(1.25e5)) / 0.5)
    with pytest.raises(ValueError, match="needs epsilon < 1"):
        privacy.gaussian_sigma_classic(1.0, 1.0, 1e-5)
    # the classic mechanism is valid, hence never below the exact (analytic) noise
    for eps in (0.1, 0.5, 0.9):
        assert privacy.gaussian_sigma_classic(1.0, eps, 1e-6) >= privacy.gaussian_sigma_analytic(1.0, eps, 1e-6)


def test_laplace_and_gamma_norm_scales():
    assert privacy.laplace_scale(3.0, 0.5) == 6.0
    assert privacy.gamma_norm_scale(2.0, 1.0) == 2.0        # Song et al. 2013: exp(-(alpha/2)||z||)
    with pytest.raises(ValueError, match="epsilon must lie in"):
        privacy.laplace_scale(1.0, 0.0)


def test_composition_rules():
    assert privacy.basic_composition(0.1, 1e-6, 10) == pytest.approx((1.0, 1e-5))
    eps, delta = privacy.strong_composition(0.1, 1e-6, 100, 1e-5)
    third = 100 * 0.1 * math.tanh(0.05) + 0.1 * math.sqrt(200 * math.log(1e5))
    assert eps == pytest.approx(third) and delta == pytest.approx(1 - (1 - 1e-6) ** 100 * (1 - 1e-5))
    assert privacy.strong_composition(2.0, 0.0, 3, 1e-5)[0] == 6.0          # k eps is the min
    # the multi-party SGD notes' Lemma 1 is valid but looser than KOV (tanh(eps/2) <= eps)
    lemma = privacy.simplified_strong_composition(0.1, 1e-6, 100, 1e-5)
    assert lemma[0] >= eps and lemma[1] == delta
    with pytest.raises(ValueError, match="stated for epsilon < 1"):
        privacy.simplified_strong_composition(1.0, 0.0, 10, 1e-5)
    drv = privacy.drv_composition(0.1, 1e-6, 100, 1e-5)
    assert drv[0] == pytest.approx(0.1 * math.sqrt(200 * math.log(1e5)) + 10 * math.expm1(0.1))
    assert privacy.gaussian_zcdp(2.0, 1.0) == 0.125
    assert privacy.zcdp_to_dp(0.125, 1e-6) == pytest.approx(0.125 + 2 * math.sqrt(0.125 * math.log(1e6)))



def test_old_name_of_simplified_strong_composition_is_a_deprecated_alias():
    """The old name still works, warns with the new one, and returns the same value."""
    assert "seed000_lemma1_composition" not in privacy.__all__
    expected = privacy.simplified_strong_composition(0.1, 1e-6, 100, 1e-5)
    with pytest.warns(DeprecationWarning, match="simplified_strong_composition"):
        assert privacy.seed000_lemma1_composition(0.1, 1e-6, 100, 1e-5) == expected

def test_strong_accountant_is_kov_of_the_per_step_gaussian():
    """For k identical unsampled Gaussians, the strong accountant is at most KOV applied to the
    analytic per-step epsilon at any particular delta split (it minimises over splits)."""
    k, m, delta = 50, 10.0, 1e-6
    slack = 0.5 * delta
    step_delta = 1 - ((1 - delta) / (1 - slack)) ** (1 / k)
    eps0 = privacy.gaussian_epsilon(1 / m, step_delta)
    kov = privacy.strong_composition(eps0, step_delta, k, slack)[0]
    assert epsilon_of(gaussian_event(m, 1.0, steps=k), delta, "strong") <= kov * (1 + 1e-9)


# -- pure-DP releases (gamma-norm noise) ----------------------------------------------------------
def test_pure_event_accounting():
    from dpsolve.privacy import pure_event
    import dp_accounting
    event = pure_event(0.5, steps=3)
    assert epsilon_of(event, 0.0) == 1.5                 # basic composition, exact at delta = 0
    assert epsilon_of(event, 0.0, "zcdp") == 1.5
    # KOV: k-fold eps-DP at delta' has eps ~ k eps tanh(eps/2) + eps sqrt(2k ln(1/delta')) for
    # large k; for k = 3 the PLD of randomized response stays just below k eps
    assert 1.4 < epsilon_of(event, 1e-6, "pld") <= 1.5
    assert epsilon_of(pure_event(0.1, steps=400), 1e-6, "pld") < 0.6 * 40
    mixed = dp_accounting.ComposedDpEvent([pure_event(0.5), gaussian_event(2.0, 1.0)])
    gauss = epsilon_of(gaussian_event(2.0, 1.0), 1e-6)
    tight, basic = epsilon_of(mixed, 1e-6, "pld"), epsilon_of(mixed, 1e-6, "basic")
    assert basic == pytest.approx(0.5 + gauss, rel=1e-12)
    assert max(0.5, gauss) < tight <= basic
    assert epsilon_of(mixed, 0.0) == math.inf           # a Gaussian is never pure DP
    # RDP reads the pure part as randomized response (the worst epsilon-DP mechanism)
    assert max(0.5, gauss) < epsilon_of(mixed, 1e-6, "rdp") <= basic
    report = privacy.certify(pure_event(0.5), 0.5, 0.0, "paper")
    assert report.holds and report.certified_by == "basic" and report.certified_epsilon == 0.5


@pytest.mark.parametrize("epsilon, delta", [(1e-30, 1e-20), (1e-20, 1e-18), (1e-10, 1e-17),
                                            (1e-6, 1e-30), (0.5, 1e-12), (2.0, 1e-6)])
def test_analytic_gaussian_sigma_holds_where_delta_cancels(epsilon, delta):
    # with mu and epsilon / mu both tiny the two terms of delta(epsilon) agree to rounding;
    # their float difference read as delta = 0 certified any sigma. The exact delta, at 60
    # digits, of the sigma returned must meet the target (to the log-space comparison's ulps)
    mpmath = pytest.importorskip("mpmath")
    from dpsolve.privacy.mechanisms import gaussian_sigma_analytic
    mpmath.mp.dps = 60
    mu = 1 / mpmath.mpf(gaussian_sigma_analytic(1.0, epsilon, delta))
    eps = mpmath.mpf(epsilon)
    exact = (mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu))
    assert exact <= delta * (1 + 1e-12)


def test_gaussian_inversions_end_where_delta_is_flat():
    # a fixed step of 1e-14 towards the conservative side never ended here
    import time

    from scipy import optimize

    from dpsolve.privacy.mechanisms import (gaussian_epsilon, gaussian_log_delta,
                                            gaussian_sigma_analytic)
    start = time.perf_counter()
    assert gaussian_sigma_analytic(1.0, 1e-300, 1e-300) > 0
    mu0 = optimize.brentq(lambda m: gaussian_log_delta(m, 0.0) - math.log(1e-6), 1e-9, 1.0)
    eps = gaussian_epsilon(mu0 * 1.000001, 1e-6)
    assert gaussian_log_delta(mu0 * 1.000001, eps) <= math.log(1e-6)
    assert time.perf_counter() - start < 10.0
