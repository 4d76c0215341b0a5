"""Every solver's ``Fit.dp_event`` survives dp_accounting's named-tuple round trip
(``DpEvent.from_named_tuple(event.to_named_tuple())``), the form in which DpEvents are passed
around without dp_accounting or serialised, and dpsolve's accountants give the round-tripped
event the same epsilon. dpsolve's own :class:`~dpsolve.privacy.PureDpEvent` must therefore be an
attrs class, as dp_accounting's events are. Events out of range (negative, NaN or infinite
parameters and counts, vanishing or huge noise) are refused by name or read soundly."""
import math
import re
import warnings

import attr
import dp_accounting
from dp_accounting import dp_event as _dp_event
import numpy as np
import pytest

import dpsolve
from dpsolve.privacy import (ApproxDpEvent, PrivacyWarning, PureDpEvent, accounting, delta_of,
                             epsilon_of, pure_event)
from conftest import synthetic_problem


def _problem(loss="logistic", n=40, p=3, reg=0.05, radius=1.0):
    return synthetic_problem(n, p, loss, radius=radius, reg=reg)


def _parties(problem, sizes=(15, 15, 10)):
    return dpsolve.Parties.from_sizes(problem, list(sizes))


def _fits():
    """One tiny fit per solver and event shape (few steps: the events, not the models, matter)."""
    P = _problem()
    smooth = _problem("huber_hinge", radius=None)
    parties = _parties(P)
    return {
        "noisy_sgd": lambda: dpsolve.noisy_sgd(P, 0.5, 1e-5, steps=5, rng=0),   # paper: eps < 1
        "noisy_sgd_rdp": lambda: dpsolve.noisy_sgd(P, 1.0, 1e-5, steps=5, calibration="rdp",
                                                   rng=0),
        "clipped_gd": lambda: dpsolve.clipped_gd(P, 1.0, 1e-5, steps=3, rng=0),
        "minibatch_sgd": lambda: dpsolve.minibatch_sgd(P, 1.0, rng=0),
        "output_perturbation_gamma_norm": lambda: dpsolve.output_perturbation(smooth, 1.0, rng=0),
        "output_perturbation_gaussian": lambda: dpsolve.output_perturbation(smooth, 1.0, 1e-5,
                                                                            rng=0),
        "objective_perturbation": lambda: dpsolve.objective_perturbation(smooth, 1.0, 1e-5,
                                                                         rng=0),
        "multiparty_gd_per_party": lambda: dpsolve.multiparty_gd(P, parties, 1.0, 1e-5,
                                                                 steps=3, rng=0),
        "multiparty_gd_secure_aggregation": lambda: dpsolve.multiparty_gd(
            P, parties, 1.0, 1e-5, noise="secure_aggregation", steps=3, rng=0),
        "aggregated_output_perturbation_gamma_norm": lambda: (
            dpsolve.aggregated_output_perturbation(smooth, _parties(smooth), 1.0, rng=0)),
        "aggregated_output_perturbation_gaussian": lambda: (
            dpsolve.aggregated_output_perturbation(smooth, _parties(smooth), 1.0, 1e-5, rng=0)),
        "aggregated_output_perturbation_laplace_slides": lambda: (
            dpsolve.aggregated_output_perturbation(smooth, _parties(smooth), 1.0,
                                                   noise="laplace_slides", rng=0)),
        "joint_sgd": lambda: dpsolve.joint_sgd(P, parties, 1.0, 1e-5, steps=5, rng=0),
    }


FITS = _fits()


def _fit(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)     # laplace_slides warns by design
        return FITS[name]()


def _round_trip(event):
    return dp_accounting.DpEvent.from_named_tuple(event.to_named_tuple())


def _contains_pure(event):
    if isinstance(event, PureDpEvent):
        return True
    inner = getattr(event, "event", None)
    parts = list(getattr(event, "events", None) or []) + ([inner] if inner is not None else [])
    return any(_contains_pure(e) for e in parts)


@pytest.mark.parametrize("name", [
    # noisy_sgd_rdp: about 3 s, an RDP calibration over T = n^2 sampled steps; noisy_sgd's
    # paper calibration certifies its epsilon the same way (half a second)
    pytest.param(name, marks=pytest.mark.slow) if name in ("noisy_sgd_rdp", "noisy_sgd")
    else name
    for name in sorted(FITS)])
def test_every_solver_event_survives_the_named_tuple_round_trip(name):
    fit = _fit(name)
    event = fit.dp_event
    back = _round_trip(event)
    assert back == event and type(back) is type(event)
    assert repr(back) == repr(event)
    accounting._EPSILON_CACHE.clear()       # epsilons below are computed afresh for `back`
    for accountant in ("pld", "basic"):
        try:
            expected = epsilon_of(fit, fit.delta, accountant)
        except ValueError:          # an accountant that does not support this event
            continue
        assert epsilon_of(back, fit.delta, accountant, fit.neighbours) == expected
    assert epsilon_of(back, fit.delta, neighbours=fit.neighbours) == pytest.approx(
        fit.certified_epsilon(), rel=0, abs=0)


@pytest.mark.slow
def test_the_round_trip_is_exercised_on_pure_and_composed_events():
    """The cases above include PureDpEvents alone and inside ComposedDpEvent (objective
    perturbation: pure objective + output release) and SelfComposedDpEvent."""
    shapes = {name: _contains_pure(_fit(name).dp_event) for name in FITS}
    for name in ("minibatch_sgd", "output_perturbation_gamma_norm", "objective_perturbation",
                 "aggregated_output_perturbation_gamma_norm",
                 "aggregated_output_perturbation_laplace_slides"):
        assert shapes[name], name
    assert isinstance(_fit("objective_perturbation").dp_event, dp_accounting.ComposedDpEvent)


def test_pure_event_round_trip_keeps_epsilon():
    event = PureDpEvent(0.75)
    named = event.to_named_tuple()
    assert named.epsilon == 0.75
    assert (named.module_name, named.class_name) == ("dpsolve.privacy.accounting",
                                                     "PureDpEvent")
    assert _round_trip(event) == event
    composed = dp_accounting.ComposedDpEvent([pure_event(0.5, steps=3),
                                              dp_accounting.GaussianDpEvent(2.0)])
    back = _round_trip(composed)
    assert back == composed
    assert epsilon_of(back, 1e-6) == epsilon_of(composed, 1e-6)
    assert epsilon_of(_round_trip(pure_event(0.5, steps=3)), 0.0) == pytest.approx(1.5)


def test_pure_dp_event_is_a_frozen_hashable_attrs_event():
    event = PureDpEvent(0.5)
    assert attr.has(PureDpEvent) and isinstance(event, dp_accounting.DpEvent)
    assert event == PureDpEvent(0.5) and event != PureDpEvent(0.6)
    assert event != dp_accounting.GaussianDpEvent(0.5)
    assert hash(event) == hash(PureDpEvent(0.5))
    assert len({event, PureDpEvent(0.5), PureDpEvent(0.6)}) == 2
    with pytest.raises(attr.exceptions.FrozenInstanceError):
        event.epsilon = 1.0
    assert repr(event) == "PureDpEvent(epsilon=0.5)"
    assert PureDpEvent(1).epsilon == 1.0 and type(PureDpEvent(1).epsilon) is float
    assert PureDpEvent(np.float64(0.5)) == event
    with pytest.raises(ValueError, match="epsilon"):
        PureDpEvent(-1.0)
    with pytest.raises(ValueError, match="epsilon"):
        PureDpEvent(float("nan"))
    with pytest.raises(TypeError, match="epsilon"):
        PureDpEvent("1.0")
    with pytest.raises(TypeError, match="epsilon"):
        PureDpEvent(True)


def test_approx_dp_event_composes_and_round_trips():
    """An (epsilon, delta)-DP release (Gaussian objective perturbation's objective part):
    basic composition is exact at the delta it spends, less delta is infinite, zCDP cannot read
    it, and dpsolve's PLD composes it as Kairouz-Oh-Viswanath's worst case."""
    event = dpsolve.privacy.ApproxDpEvent(0.9, 1e-6)
    assert epsilon_of(event, 1e-6) == pytest.approx(0.9, abs=1e-9)
    assert epsilon_of(event, 5e-7) == float("inf")
    with pytest.raises(ValueError, match="zcdp"):
        epsilon_of(event, 1e-5, "zcdp")
    both = dp_accounting.ComposedDpEvent([event, pure_event(0.1)])
    assert epsilon_of(both, 1e-6, "basic") == pytest.approx(1.0)
    assert epsilon_of(both, 1e-6, "pld") <= 1.0 + 1e-9
    # with a Gaussian beside it, basic gives the Gaussian what delta is left
    mixed = dp_accounting.ComposedDpEvent([event, accounting.gaussian_event(50.0, 1.0)])
    rest = dpsolve.privacy.gaussian_epsilon(1.0 / 50.0, 1e-6)
    assert epsilon_of(mixed, 2e-6, "basic") == pytest.approx(0.9 + rest)
    assert epsilon_of(mixed, 2e-6, "pld") <= 0.9 + rest + 1e-9
    back = dp_accounting.DpEvent.from_named_tuple(event.to_named_tuple())
    assert back == event and hash(back) == hash(event)
    with pytest.raises(ValueError, match="delta"):
        dpsolve.privacy.ApproxDpEvent(1.0, 1.5)


def test_delta_of_a_pure_release_is_randomized_response():
    """delta_of composes pure-DP releases (it used to drop them: delta 0 at every epsilon).
    For one epsilon_0-DP release the worst case is randomized response, whose delta at
    epsilon is ``(e^{epsilon_0} - e^epsilon) / (1 + e^{epsilon_0})``; dp_accounting's PLD
    discretises it pessimistically (an upper bound within its 1e-4 grid)."""
    e0, e = 0.5, 0.1
    exact = (math.exp(e0) - math.exp(e)) / (1.0 + math.exp(e0))
    got = dpsolve.privacy.delta_of(pure_event(e0), e)
    assert exact <= got <= exact * (1 + 1e-3)
    assert dpsolve.privacy.delta_of(pure_event(e0), e0) <= 1e-4
    with pytest.raises(ValueError, match="rdp"):
        dpsolve.privacy.delta_of(pure_event(e0), e, "rdp")


def test_laplace_event_is_read_as_pure():
    assert epsilon_of(dp_accounting.LaplaceDpEvent(2.0), 0.0) == pytest.approx(0.5)


def test_pure_event_under_rdp_is_randomized_response():
    # the RDP accountant reads a PureDpEvent as binary randomized response at its epsilon,
    # whose Renyi divergence has a closed form
    from dpsolve.privacy.accounting import _rdp_accountant
    eps = 0.7
    acc = _rdp_accountant(PureDpEvent(eps), "replace_one")
    p = math.exp(eps) / (1 + math.exp(eps))
    for alpha, value in zip(acc._orders, acc._rdp):
        if 1.5 <= alpha <= 100:
            exact = math.log(p ** alpha * (1 - p) ** (1 - alpha)
                             + (1 - p) ** alpha * p ** (1 - alpha)) / (alpha - 1)
            assert value == pytest.approx(exact, rel=1e-9)
    assert epsilon_of(PureDpEvent(eps), 1e-6, "rdp") <= eps
    with pytest.raises(ValueError, match="ApproxDpEvent"):
        epsilon_of(ApproxDpEvent(eps, 1e-6), 1e-5, "rdp")


def test_repeat_and_select_delta_by_rdp_only():
    from dp_accounting import dp_event
    event = dp_event.RepeatAndSelectDpEvent(dp_accounting.GaussianDpEvent(4.0), 5.0, 0.5)
    eps = epsilon_of(event, 1e-6, "rdp")
    assert delta_of(event, eps, "rdp") == pytest.approx(1e-6, rel=1e-3)
    with pytest.raises(ValueError, match="'rdp' does"):
        delta_of(event, eps, "pld")


# -- events with parameters out of range --------------------------------------------------------

BAD_EVENTS = [
    (dp_accounting.LaplaceDpEvent(-1.0), "LaplaceDpEvent.noise_multiplier"),
    (dp_accounting.LaplaceDpEvent(math.nan), "LaplaceDpEvent.noise_multiplier"),
    (dp_accounting.GaussianDpEvent(-1.0), "GaussianDpEvent.noise_multiplier"),
    (dp_accounting.GaussianDpEvent(math.nan), "GaussianDpEvent.noise_multiplier"),
    (dp_accounting.GaussianDpEvent(math.inf), "GaussianDpEvent.noise_multiplier"),
    (dp_accounting.SelfComposedDpEvent(PureDpEvent(0.1), -3), "SelfComposedDpEvent.count"),
    (dp_accounting.SelfComposedDpEvent(PureDpEvent(0.1), 0), "SelfComposedDpEvent.count"),
    (dp_accounting.ComposedDpEvent([PureDpEvent(0.1), dp_accounting.LaplaceDpEvent(-1.0)]),
     "LaplaceDpEvent.noise_multiplier"),
    # after a selection only RDP reads: the walk that flattens events stops there
    (dp_accounting.ComposedDpEvent([
        _dp_event.RepeatAndSelectDpEvent(dp_accounting.GaussianDpEvent(2.0), 2.0, 1.0),
        dp_accounting.GaussianDpEvent(-1.0)]), "GaussianDpEvent.noise_multiplier"),
    (dp_accounting.PoissonSampledDpEvent(-0.5, dp_accounting.GaussianDpEvent(1.0)),
     "PoissonSampledDpEvent.sampling_probability"),
    (dp_accounting.PoissonSampledDpEvent(math.nan, dp_accounting.GaussianDpEvent(1.0)),
     "PoissonSampledDpEvent.sampling_probability"),
    (dp_accounting.PoissonSampledDpEvent(0.5, dp_accounting.GaussianDpEvent(-1.0)),
     "GaussianDpEvent.noise_multiplier"),
    (dp_accounting.SampledWithoutReplacementDpEvent(10, -2, dp_accounting.GaussianDpEvent(1.0)),
     "SampledWithoutReplacementDpEvent.sample_size"),
    (_dp_event.RepeatAndSelectDpEvent(PureDpEvent(0.1), math.nan, 1.0),
     "RepeatAndSelectDpEvent.mean"),
    (_dp_event.RepeatAndSelectDpEvent(PureDpEvent(0.1), 2.0, -1.0),
     "RepeatAndSelectDpEvent.shape"),
    (_dp_event.RepeatAndSelectDpEvent(dp_accounting.LaplaceDpEvent(-2.0), 2.0, 1.0),
     "LaplaceDpEvent.noise_multiplier"),
]


@pytest.mark.parametrize("event, field", BAD_EVENTS, ids=[f for _, f in BAD_EVENTS])
def test_every_reader_refuses_an_event_out_of_range(event, field):
    """A negative, NaN or infinite parameter or count, anywhere in the event, is refused by
    name by every accountant, by delta_of, by tightest_accountant and by the budget, which
    charges nothing (a negative epsilon used to credit the budget, a NaN to cost nothing)."""
    match = re.escape(field)
    for accountant in accounting.ACCOUNTANTS:
        with pytest.raises(ValueError, match=match):
            epsilon_of(event, 1e-6, accountant)
        with pytest.raises(ValueError, match=match):
            epsilon_of(event, 0.0, accountant)
    for accountant in ("pld", "rdp"):
        with pytest.raises(ValueError, match=match):
            delta_of(event, 1.0, accountant)
    with pytest.raises(ValueError, match=match):
        accounting.tightest_accountant(event)
    for budget in (dpsolve.BudgetAccountant(1.0), dpsolve.BudgetAccountant(1.0, 1e-6)):
        with pytest.raises(ValueError, match=match):
            budget.check(event, neighbours="replace_one")
        with pytest.raises(ValueError, match=match):
            budget.spend(event, neighbours="replace_one")
        with budget.parallel() as group:
            with pytest.raises(ValueError, match=match):
                group.spend(event, neighbours="replace_one")
        assert budget.ledger == () and budget.spent() == (0.0, 0.0)


def test_a_refused_negative_release_leaves_nothing_to_spend_twice():
    budget = dpsolve.BudgetAccountant(1.0)
    for credit in (dp_accounting.LaplaceDpEvent(-1.0),
                   dp_accounting.SelfComposedDpEvent(PureDpEvent(0.5), -3)):
        with pytest.raises(ValueError):
            budget.spend(credit, neighbours="replace_one")
    with pytest.raises(dpsolve.privacy.BudgetExceededError):
        budget.spend(PureDpEvent(1.5), neighbours="replace_one")
    assert budget.spent() == (0.0, 0.0)


def test_check_event_limits_nesting_and_releases():
    deep = PureDpEvent(0.1)
    for _ in range(accounting.MAX_EVENT_DEPTH + 1):
        deep = dp_accounting.ComposedDpEvent([deep])
    with pytest.raises(ValueError, match="deeper"):
        accounting.check_event(deep)
    many = dp_accounting.SelfComposedDpEvent(
        dp_accounting.SelfComposedDpEvent(PureDpEvent(0.1), 2 ** 30), 2 ** 30)
    with pytest.raises(ValueError, match="releases"):
        epsilon_of(many, 0.0)
    with pytest.raises(TypeError, match="SelfComposedDpEvent.count"):
        accounting.check_event(dp_accounting.SelfComposedDpEvent(PureDpEvent(0.1), 2.0))
    with pytest.raises(TypeError, match="DpEvent"):
        accounting.check_event(dp_accounting.ComposedDpEvent([0.5]))
    with pytest.raises(ValueError, match="cannot read a ZCDpEvent"):
        accounting.check_event(_dp_event.ZCDpEvent(0.1, 0.0))
    accounting.check_event(dp_accounting.SelfComposedDpEvent(PureDpEvent(0.1), 2 ** 53))


@pytest.mark.parametrize("event", [
    dp_accounting.LaplaceDpEvent(0.0), dp_accounting.GaussianDpEvent(0.0),
    dp_accounting.GaussianDpEvent(1e-300), dp_accounting.GaussianDpEvent(1e-200),
    dp_accounting.GaussianDpEvent(1e-160), dp_accounting.LaplaceDpEvent(1e-320),
    dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(1e-300), 3),
    _dp_event.RepeatAndSelectDpEvent(dp_accounting.GaussianDpEvent(1e-300), 2.0, 0.5),
    _dp_event.RepeatAndSelectDpEvent(dp_accounting.LaplaceDpEvent(0.0), 2.0, 0.5),
], ids=repr)
def test_a_release_with_no_noise_to_speak_of_costs_infinity(event):
    """No (or a vanishing) noise multiplier: epsilon inf under every accountant that reads the
    event, delta 1, and the budget refuses it as over budget (these used to raise
    ZeroDivisionError, OverflowError or a root finder's RuntimeError)."""
    for delta in (0.0, 1e-6):
        for accountant in accounting.ACCOUNTANTS:
            try:
                eps = epsilon_of(event, delta, accountant)
            except ValueError as exc:           # an accountant that does not read the event
                assert "choose another accountant" in str(exc)
                continue
            assert eps == math.inf or eps > 1e15, (delta, accountant, eps)
    for accountant in ("pld", "rdp"):
        try:
            assert delta_of(event, 10.0, accountant) == 1.0
        except ValueError as exc:
            assert "choose another accountant" in str(exc)
    budget = dpsolve.BudgetAccountant(1.0, 1e-6)
    with pytest.raises(dpsolve.privacy.BudgetExceededError, match="epsilon=inf|epsilon=1e"):
        budget.spend(event, neighbours="replace_one")
    pure_budget = dpsolve.BudgetAccountant(1.0)       # refuses it, over budget or unread
    with pytest.raises(ValueError, match="epsilon=inf|epsilon=1e|cannot compose"):
        pure_budget.spend(event, neighbours="replace_one")
    assert budget.ledger == () and pure_budget.ledger == ()


@pytest.mark.parametrize("multiplier", [pytest.param(1e50, marks=pytest.mark.slow),
                                        pytest.param(1e150, marks=pytest.mark.slow), 1e300])
def test_a_huge_noise_multiplier_costs_next_to_nothing(multiplier):
    """A Gaussian with multiplier m has mu = 1/m: epsilon at delta = 1e-6 is below
    mu (2 ln(1/delta))^(1/2) + mu^2 / 2 < 1e-49 here, and delta at epsilon = 0.1 is below
    delta(0) = erf(mu / 2^(3/2)) < 1e-50 (RDP's conversion, with the Gaussian dpsolve adds where
    dp_accounting's fails, bounds it by 1e-40); these used to raise OverflowError."""
    event = dp_accounting.GaussianDpEvent(multiplier)
    for accountant in accounting.ACCOUNTANTS:
        assert 0.0 <= epsilon_of(event, 1e-6, accountant) < 1e-49
    assert epsilon_of(event, 0.0) == math.inf          # a Gaussian is never pure DP
    for accountant in ("pld", "rdp"):
        assert 0.0 <= delta_of(event, 0.1, accountant) < 1e-40
    sampled = dp_accounting.PoissonSampledDpEvent(0.5, event)
    assert 0.0 <= epsilon_of(sampled, 1e-6, "pld", "add_remove") < 1e-49
    assert 0.0 <= epsilon_of(sampled, 1e-6, "rdp", "add_remove") < 1e-49
    budget = dpsolve.BudgetAccountant(1.0, 1e-6)
    budget.spend(event, neighbours="replace_one")
    assert budget.spent()[0] < 1e-49


def test_a_huge_pure_epsilon_is_composed_by_adding():
    """Above MAX_PURE_EPSILON the PLD and RDP readings (through e^epsilon) are skipped for
    basic composition, a valid bound: e^800 used to overflow."""
    for event in (PureDpEvent(800.0), dp_accounting.LaplaceDpEvent(1.0 / 800.0)):
        for accountant in ("pld", "rdp", "basic", None):
            assert epsilon_of(event, 1e-6, accountant) == pytest.approx(800.0)
        assert delta_of(event, 1.0) == 1.0
    mixed = dp_accounting.ComposedDpEvent([PureDpEvent(800.0), dp_accounting.GaussianDpEvent(2.0)])
    assert epsilon_of(mixed, 1e-6) == pytest.approx(
        800.0 + dpsolve.privacy.gaussian_epsilon(0.5, 1e-6))
    # basic composition's delta at 800 + eps_G is the Gaussian's delta there
    assert delta_of(mixed, 801.0) == pytest.approx(
        math.exp(dpsolve.privacy.gaussian_log_delta(0.5, 1.0)))
    selection = _dp_event.RepeatAndSelectDpEvent(
        dp_accounting.ComposedDpEvent([PureDpEvent(800.0), dp_accounting.GaussianDpEvent(2.0)]),
        2.0, 0.5)
    assert epsilon_of(selection, 1e-6, "rdp") == math.inf   # read as non-private: a bound


def test_many_pure_releases_are_bounded_without_their_pld():
    """Beyond PLD_MAX_PURE_RELEASES, "pld" takes the smaller of basic composition and zCDP
    (each epsilon-DP step is epsilon^2/2-zCDP; Bun & Steinke 2016) instead of a PLD whose work
    grows with the count (a billion releases used to exhaust memory)."""
    from dpsolve.privacy import composition
    steps = accounting.PLD_MAX_PURE_RELEASES + 1
    event = pure_event(0.01, steps=steps)
    rho = steps * 0.01 ** 2 / 2.0
    expected = min(composition.zcdp_to_dp(rho, 1e-6), steps * 0.01)
    assert epsilon_of(event, 1e-6, "pld") == pytest.approx(expected, rel=1e-12)
    # delta from zCDP: exp(-(epsilon - rho)^2 / (4 rho)) for epsilon > rho
    assert delta_of(event, 1.0) == pytest.approx(math.exp(-(1.0 - rho) ** 2 / (4.0 * rho)))
    huge = pure_event(0.01, steps=10 ** 9)
    assert epsilon_of(huge, 1e-6, "pld") == pytest.approx(
        composition.zcdp_to_dp(10 ** 9 * 0.01 ** 2 / 2.0, 1e-6))


@pytest.mark.slow
def test_sampled_gaussians_with_tiny_multipliers_are_read_within_bounded_work():
    """Under "pld" a Poisson-sampled Gaussian's grid needs about 1e5 / m^2 points (38 GiB at
    m = 1e-3): below PLD_MIN_MULTIPLIER the sampling is dropped (which never lowers a
    privacy loss), above it the grid is coarsened (dp_accounting rounds pessimistically)."""
    tiny = dp_accounting.PoissonSampledDpEvent(0.5, dp_accounting.GaussianDpEvent(1e-3))
    closed = dpsolve.privacy.gaussian_epsilon(1e3, 1e-6)
    assert epsilon_of(tiny, 1e-6, "pld", "add_remove") == closed
    assert delta_of(tiny, closed, "pld", "add_remove") == pytest.approx(1e-6, rel=1e-6)
    small = dp_accounting.PoissonSampledDpEvent(0.5, dp_accounting.GaussianDpEvent(0.02))
    eps = epsilon_of(small, 1e-6, "pld", "add_remove")
    assert eps <= dpsolve.privacy.gaussian_epsilon(50.0, 1e-6)     # sampling never hurts


def test_rdp_delta_survives_a_vanishing_renyi_divergence():
    """dp_accounting's RDP-to-delta conversion takes log1p(-exp(-r)), which fails for a
    divergence r below about 1e-16 (Poisson rate 1e-9); dpsolve adds a Gaussian of multiplier
    1e7 then, which can only raise delta."""
    def sampled(q):
        return dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(1.0))
    tiny = delta_of(sampled(1e-9), 1.0, "rdp", "add_remove")
    assert 0.0 <= tiny <= delta_of(sampled(1e-6), 1.0, "rdp", "add_remove") < 1e-13


def test_gaussian_objective_noise_at_a_fixed_extra_reg_skips_splits_without_room():
    """Gaussian objective perturbation with a fixed extra_reg: at epsilon = 0.1 the Jacobian
    term (ln(1 + cB^2/(n mu)) = 0.08 here) leaves no room for the objective's share at the
    larger output shares the search tries; those are skipped (gaussian_objective_sigma is inf
    there; it used to divide by zero) and a smaller share is used."""
    from dpsolve import approximate_minima
    P = _problem(n=60, p=4, reg=0.05, radius=None)
    jacobian = approximate_minima.objective_jacobian_term(0.25, 60, 0.05)
    assert 0.05 < jacobian < 0.1
    assert approximate_minima.gaussian_objective_sigma(0.25, 1.0, 60, 0.05, jacobian,
                                                       1e-6) == math.inf
    fit = dpsolve.objective_perturbation(P, 0.1, 1e-6, objective_noise="gaussian",
                                         extra_reg=0.0, rng=0)
    assert fit.privacy.holds
    with pytest.raises(ValueError, match="epsilon=0.0"):
        dpsolve.objective_perturbation(P, 0.05, 1e-6, objective_noise="gaussian",
                                       extra_reg=0.0, rng=0)
