"""Every solver's ``Fit.dp_event`` survives dp_accounting's named-tuple round trip
(``DpEvent.from_named_tuple(event.to_named_tuple())``), the form in which DpEvents are passed
around without dp_accounting or serialised, and dpsolve's accountants give the round-tripped
event the same epsilon. dpsolve's own :class:`~dpsolve.privacy.PureDpEvent` must therefore be an
attrs class, as dp_accounting's events are."""
import math
import warnings

import attr
import dp_accounting
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
    # noisy_sgd_rdp: about 3 s, an RDP calibration over T = n^2 sampled steps
    pytest.param(name, marks=pytest.mark.slow) if name == "noisy_sgd_rdp" else name
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
