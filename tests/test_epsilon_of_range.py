"""epsilon_of and delta_of at noise multipliers sigma / Delta far beyond any useful noise (up to
float64's largest): finite, a bound on the truth, and smaller the more noise there is."""
import math

import pytest

from dpsolve.privacy import PoissonSampling, UniformSampling, accounting, delta_of, epsilon_of
from dpsolve.privacy import gaussian_event
from dpsolve.privacy.mechanisms import gaussian_log_delta

HUGE = (1e9, 1e154, 2e154, 1e200, 1.7e308)


@pytest.mark.parametrize("multiplier", HUGE)
@pytest.mark.parametrize("accountant", ["pld", "rdp", "zcdp", "strong", "basic"])
def test_unsampled_gaussian_has_epsilon_near_zero(multiplier, accountant):
    event = gaussian_event(multiplier, 1.0, steps=10)
    # multipliers are read at most MAX_MULTIPLIER (less noise: a bound on the truth)
    read = min(multiplier, accounting.MAX_MULTIPLIER)
    value = epsilon_of(event, 1e-6, accountant)
    assert 0.0 <= value <= 100.0 / read
    if accountant == "pld":
        # exact: delta(0) = erf(mu / (2 sqrt 2)) is far below 1e-6, so epsilon is 0
        assert value == 0.0
        mu = math.sqrt(10.0) / read
        assert delta_of(event, 0.0) == pytest.approx(math.erf(mu / (2.0 * math.sqrt(2.0))),
                                                     rel=1e-9)


@pytest.mark.parametrize("multiplier", HUGE)
def test_poisson_sampled_gaussian_under_pld(multiplier):
    event = gaussian_event(multiplier, 1.0, steps=100, sampling=PoissonSampling(0.01))
    assert epsilon_of(event, 1e-6, "pld", "add_remove") == 0.0


def _wor(multiplier, steps=100):
    return gaussian_event(multiplier, 1.0, steps=steps, sampling=UniformSampling(1000, 10))


# RDP of sampling without replacement read at each order, half a second for the first one run
@pytest.mark.slow
@pytest.mark.parametrize("multiplier", (1.5e8,) + HUGE)
def test_gaussian_sampled_without_replacement_under_rdp(multiplier):
    """dp_accounting's Renyi divergences of a Gaussian sampled without replacement fail beyond
    a multiplier of about 1.49e8 (a math domain error); "rdp" (the tightest accountant for this
    sampling) reads it unsampled there, which bounds it (sampling never increases a Renyi
    divergence), and its epsilon only falls as the noise grows."""
    for delta in (1e-3, 1e-6, 1e-12):
        value = epsilon_of(_wor(multiplier), delta)
        assert math.isfinite(value) and value >= 0.0
        assert value <= epsilon_of(_wor(accounting.RDP_MAX_SAMPLED_MULTIPLIER), delta)
        unsampled = gaussian_event(multiplier, 1.0, steps=100)
        assert value == epsilon_of(unsampled, delta, "rdp")
    assert 0.0 <= delta_of(_wor(multiplier), 0.5, "rdp") <= 1e-6
    with pytest.raises(ValueError, match="add_remove"):
        epsilon_of(_wor(multiplier), 1e-6, "rdp", "add_remove")


def test_sampled_reading_kept_below_the_threshold():
    # below RDP_MAX_SAMPLED_MULTIPLIER the sampling is read as dp_accounting reads it, which is
    # tighter there than the unsampled Gaussian
    sampled = epsilon_of(_wor(3.0), 1e-6, "rdp")
    unsampled = epsilon_of(gaussian_event(3.0, 1.0, steps=100), 1e-6, "rdp")
    assert 0.0 < sampled < unsampled


def test_exact_delta_is_stable_for_tiny_mu():
    # the PLD closed form at mu = 1 / multiplier: log-space, no overflow, delta(0) ~ mu / 2.5
    for multiplier in HUGE:
        log_delta = gaussian_log_delta(1.0 / multiplier, 0.0)
        assert log_delta == pytest.approx(math.log(math.erf(0.5 / multiplier / math.sqrt(2.0))),
                                          rel=1e-12)
