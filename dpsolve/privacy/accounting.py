"""What a solver released, as a ``dp_accounting`` DpEvent, and the epsilon each accountant gives it.

The one place where dpsolve's conventions meet dp_accounting's (docs/conventions.md,
"dp_accounting's conventions"):

* **Events.** A Gaussian release built here (:func:`gaussian_event`) carries the noise multiplier
  ``sigma / Delta``, with Delta the L2 sensitivity under the stated neighbour relation
  (replace-one by default: a sum of per-record vectors of norm <= c has Delta = 2c). That is how
  dp_accounting's RDP accountant reads a ``GaussianDpEvent`` under any relation. Its PLD
  accountant instead reads the multiplier relative to the per-record bound and doubles it under
  ``REPLACE_ONE``; :func:`epsilon_of` rescales for it. Fed to PLD *without* that rescaling (as a
  user composing ``Fit.dp_event`` by hand might), an event gives a larger, still valid, epsilon.
* **Sampling.** One index drawn uniformly per step is the same as a sample of one record drawn
  without replacement (:class:`UniformSampling`); RDP supports that under replace-one, PLD does
  not. Poisson sampling (:class:`PoissonSampling`) is supported by PLD under both relations and by
  RDP under add/remove only.
* **Calibration** (:func:`calibrate`) returns the conservative end of its search, verified.
* **Checking.** Every event is checked (:func:`check_event`) before an accountant reads it: a
  negative, NaN or infinite parameter or count is refused by name, and parameters at the edge
  of floating point are read pessimistically (:func:`epsilon_of`, Notes).

The events, their builders and their check are defined in :mod:`dpsolve.privacy.events` and
importable from here; this module reads them with the accountants and reports what a fit
certifies.
"""
import dataclasses
import functools
import math
import typing
import warnings

import dp_accounting
from dp_accounting import dp_event, pld, rdp
from scipy import optimize

from .._validation import check_choice, check_int, check_real
from . import composition, mechanisms
# the events and their check, public names of this module before they moved to events
from .events import (MAX_EVENT_DEPTH, MAX_RELEASES, ApproxDpEvent,  # noqa: F401
                     BoundedRangeDpEvent, PoissonSampling, PureDpEvent, UniformSampling,
                     check_event, exponential_event, gaussian_event, pure_event)

NEIGHBOURS = "replace_one"
_RELATIONS = {
    "replace_one": dp_accounting.NeighboringRelation.REPLACE_ONE,
    "add_remove": dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
}
ACCOUNTANTS = ("pld", "rdp", "zcdp", "strong", "basic")


class PrivacyWarning(UserWarning):
    """A fit's certified privacy is weaker than it claims, or a setting weakens privacy."""


# -- reading events ------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _Component:
    """``count`` releases of a Gaussian with multiplier m (sigma / Delta), sampled or not; or,
    when ``pure`` is set, of a ``(pure, delta)``-DP mechanism (multiplier inf), which is also
    ``pure``-bounded range when ``bounded_range`` is set."""

    count: int
    multiplier: float
    sampling: object = None     # None, ("poisson", q) or ("uniform", q)
    pure: float = None
    delta: float = 0.0
    bounded_range: bool = False


class _NeedsRdp(ValueError):
    """The event holds a selection (``RepeatAndSelectDpEvent``) that only an RDP analysis
    (Papernot & Steinke 2022) reads."""


#: Gaussian noise multipliers are read within [MIN_MULTIPLIER, MAX_MULTIPLIER], where every
#: accountant's arithmetic stays in floating-point range. Each move is towards less noise, so
#: the epsilon of what is read bounds the real one's: below the range a Gaussian release is read
#: as non-private (its epsilon exceeds 1e15 at every delta < 1 anyway), above it at
#: MAX_MULTIPLIER (an epsilon below 1e-99 either way).
MIN_MULTIPLIER = 1e-8
MAX_MULTIPLIER = 1e100
#: Above this epsilon a pure (or approximate) DP part is composed by adding epsilons only: the
#: PLD and RDP readings need e^epsilon, and compose it to within 1e-6 of the sum anyway.
MAX_PURE_EPSILON = 500.0
#: Beyond this many pure (or approximate) DP releases in one composition, ``"pld"`` bounds them
#: by basic composition and zCDP instead of composing their PLDs, whose work grows with the
#: count (about a second per thousand).
PLD_MAX_PURE_RELEASES = 1000
#: Above this multiplier ``"rdp"`` reads a Gaussian sampled without replacement as the Gaussian
#: alone. dp_accounting's Renyi divergences of the sampled Gaussian fail from a multiplier of
#: about 1.49e8 on (``log1p(-1)``: a math domain error), whatever the sampling rate. Reading the
#: release unsampled bounds it: the sampled release is a mixture, over the same subsets, of the
#: unsampled mechanism run on neighbouring (or equal) subsets, and ``e^{(alpha - 1) D_alpha}``
#: is jointly convex, so sampling never increases a Renyi divergence. At such multipliers the
#: Gaussian's own divergences (``alpha / (2 m^2)``, below 1e-16) are all but 0.
RDP_MAX_SAMPLED_MULTIPLIER = 1e8


def _in_range(event):
    """``event`` with its Gaussian noise multipliers moved into [MIN_MULTIPLIER,
    MAX_MULTIPLIER] (below: 0, no noise) and noiseless Laplace releases made non-private; the
    result is never more private than ``event``, so its epsilon bounds ``event``'s."""
    if isinstance(event, dp_accounting.GaussianDpEvent):
        m = event.noise_multiplier
        if m < MIN_MULTIPLIER:
            return dp_accounting.GaussianDpEvent(0.0)
        return dp_accounting.GaussianDpEvent(MAX_MULTIPLIER) if m > MAX_MULTIPLIER else event
    if isinstance(event, dp_accounting.LaplaceDpEvent):
        return dp_accounting.NonPrivateDpEvent() if event.noise_multiplier == 0.0 else event
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return dp_accounting.SelfComposedDpEvent(_in_range(event.event), event.count)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return dp_accounting.ComposedDpEvent([_in_range(e) for e in event.events])
    if isinstance(event, dp_accounting.PoissonSampledDpEvent):
        return dp_accounting.PoissonSampledDpEvent(event.sampling_probability,
                                                   _in_range(event.event))
    if isinstance(event, dp_accounting.SampledWithoutReplacementDpEvent):
        return dp_accounting.SampledWithoutReplacementDpEvent(
            event.source_dataset_size, event.sample_size, _in_range(event.event))
    if isinstance(event, dp_event.RepeatAndSelectDpEvent):
        return dp_event.RepeatAndSelectDpEvent(_in_range(event.event), event.mean, event.shape)
    return event


def _components(event, count=1):
    """Flatten an event (checked by :func:`check_event`) into Gaussian and (epsilon, delta)-DP
    components; ValueError for what dpsolve cannot read, :class:`_NeedsRdp` for a selection
    only RDP reads."""
    if isinstance(event, dp_accounting.NoOpDpEvent):
        return []
    if isinstance(event, dp_accounting.LaplaceDpEvent):
        if event.noise_multiplier == 0.0:
            return [_Component(count, 0.0)]         # no noise
        # noise multiplier b / Delta: (1 / multiplier)-DP
        return [_Component(count, math.inf, pure=1.0 / event.noise_multiplier)]
    if isinstance(event, dp_event.RepeatAndSelectDpEvent):
        inner = _components(event.event)
        if (event.shape == 1 and inner and all(c.pure is not None and c.delta == 0.0
                                               for c in inner)):
            # Liu & Talwar 2019, Thm 3.4: random stopping (a geometric number of runs) over an
            # epsilon-DP run, keeping the best, is 3 epsilon-DP
            return [_Component(count, math.inf, pure=3.0 * sum(c.count * c.pure
                                                                for c in inner))]
        raise _NeedsRdp("a RepeatAndSelectDpEvent over this event is read by 'rdp' only "
                        "(Papernot & Steinke 2022)")
    if isinstance(event, dp_accounting.NonPrivateDpEvent):
        return [_Component(count, 0.0)]
    if isinstance(event, dp_accounting.GaussianDpEvent):
        return [_Component(count, event.noise_multiplier)]
    if isinstance(event, PureDpEvent):
        return [_Component(count, math.inf, pure=event.epsilon)]
    if isinstance(event, BoundedRangeDpEvent):
        return [_Component(count, math.inf, pure=event.epsilon, bounded_range=True)]
    if isinstance(event, ApproxDpEvent):
        return [_Component(count, math.inf, pure=event.epsilon, delta=event.delta)]
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return _components(event.event, count * event.count)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return [c for e in event.events for c in _components(e, count)]
    if isinstance(event, (dp_accounting.PoissonSampledDpEvent,
                          dp_accounting.SampledWithoutReplacementDpEvent)):
        if isinstance(event, dp_accounting.PoissonSampledDpEvent):
            sampling = ("poisson", event.sampling_probability)
        else:
            sampling = ("uniform", event.sample_size / event.source_dataset_size)
        inner = _components(event.event, count)
        if (any(c.sampling is not None or c.pure is not None for c in inner)
                or len(inner) != 1):
            raise ValueError("a sampled event must wrap a single Gaussian event")
        return [dataclasses.replace(inner[0], sampling=sampling)]
    raise ValueError(f"dpsolve's accountants cannot read a {type(event).__name__}")


def _pld_event(event, factor):
    """The same event with every Gaussian noise multiplier scaled by ``factor``."""
    if isinstance(event, dp_accounting.GaussianDpEvent):
        return dp_accounting.GaussianDpEvent(event.noise_multiplier * factor)
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return dp_accounting.SelfComposedDpEvent(_pld_event(event.event, factor), event.count)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return dp_accounting.ComposedDpEvent([_pld_event(e, factor) for e in event.events])
    if isinstance(event, dp_accounting.PoissonSampledDpEvent):
        return dp_accounting.PoissonSampledDpEvent(event.sampling_probability,
                                                   _pld_event(event.event, factor))
    return event


#: Below this noise multiplier (as dp_accounting's PLD reads it; for a composition of
#: Gaussians, 1/mu) a Gaussian is not given to dp_accounting's PLD, whose grid would need about
#: 1e5 / m^2 points: a sampled one is read by the closed form without its sampling, one beside
#: pure parts by basic composition. Both bounds lose little at such an epsilon (above 10^3 at
#: any delta).
PLD_MIN_MULTIPLIER = 0.01


def _pld_interval(multiplier):
    """dp_accounting's PLD discretisation for a Gaussian of noise multiplier ``multiplier``: a
    Gaussian's privacy loss spans about 1/m^2, and at most ~1e5 grid points over it bound the
    work. dp_accounting rounds pessimistically at any interval, so epsilon stays a bound."""
    return max(1e-4, 1e-5 / (multiplier * multiplier))


def _sampled_pld(event, components, neighbours):
    """dp_accounting's PLD accountant with ``event`` (sampled Gaussians) composed, or None where
    a multiplier is below PLD_MIN_MULTIPLIER (the caller then drops the sampling, which never
    lowers a privacy loss)."""
    factor = 2.0 if neighbours == "replace_one" else 1.0
    smallest = factor * min(c.multiplier for c in components)
    if smallest < PLD_MIN_MULTIPLIER:
        return None
    acc = pld.PLDAccountant(neighboring_relation=_RELATIONS[neighbours],
                            value_discretization_interval=_pld_interval(smallest))
    acc.compose(_pld_event(event, factor))
    return acc


def _mu(gaussians):
    """mu of the one Gaussian that unsampled Gaussian components compose to,
    ``sqrt(sum count / m^2)`` (multipliers in range: :func:`_in_range`)."""
    return math.sqrt(sum(c.count / (c.multiplier * c.multiplier) for c in gaussians))


def _unsupported(accountant, why):
    raise ValueError(f"accountant={accountant!r} {why}; choose another accountant "
                     f"(one of {list(ACCOUNTANTS)})")


def _amplification_rate(sampling, neighbours):
    """Rate q of privacy amplification by subsampling (Balle, Barthe & Gaboardi 2018): a sample
    of rate q turns (eps, delta) into (ln(1 + q (e^eps - 1)), q delta). Proven for sampling
    without replacement under replace-one and for Poisson sampling under add/remove; other pairs
    get no amplification (q = 1)."""
    if sampling is None:
        return 1.0
    kind, q = sampling
    return q if (kind == "uniform") == (neighbours == "replace_one") else 1.0


def _per_step_epsilon(component, step_delta, neighbours):
    """Epsilon of one step of ``component`` at per-step delta ``step_delta`` (analytic Gaussian,
    amplified by sampling where that is proven)."""
    q = _amplification_rate(component.sampling, neighbours)
    base_delta = step_delta / q
    if base_delta >= 1.0:
        return 0.0
    eps = mechanisms.gaussian_epsilon(1.0 / component.multiplier, base_delta)
    return math.log1p(q * math.expm1(eps))


_EPSILON_CACHE = {}


def _epsilon(event, delta, accountant, neighbours):
    """Cached by the event's repr: attrs reprs are complete (floats exactly), and some events
    (ComposedDpEvent holds a list) are not hashable. ``event`` has passed :func:`check_event`."""
    key = (repr(event), delta, accountant, neighbours)
    if key not in _EPSILON_CACHE:
        if len(_EPSILON_CACHE) >= 4096:
            _EPSILON_CACHE.clear()
        _EPSILON_CACHE[key] = _compute_epsilon(_in_range(event), delta, accountant, neighbours)
    return _EPSILON_CACHE[key]


def _compute_epsilon(event, delta, accountant, neighbours):
    try:
        components = _components(event)
    except _NeedsRdp:
        if accountant != "rdp":
            _unsupported(accountant, "cannot read a RepeatAndSelectDpEvent unless it repeats a "
                                     "pure-DP run a geometric number of times; 'rdp' does")
        return float(_rdp_accountant(event, neighbours).get_epsilon(delta))
    if not components:
        return 0.0
    if any(c.multiplier == 0.0 for c in components):
        return math.inf
    if any(c.pure is not None for c in components):
        return _epsilon_with_pure(event, components, delta, accountant, neighbours)
    if delta == 0.0:
        return math.inf     # a Gaussian is never (epsilon, 0)-DP
    relation = _RELATIONS[neighbours]
    if accountant == "pld":
        if any(c.sampling is not None and c.sampling[0] == "uniform" for c in components):
            _unsupported("pld", "does not support sampling without replacement "
                                "(dp_accounting's PLD has no such event); 'rdp' does")
        acc = None
        if any(c.sampling is not None for c in components):
            acc = _sampled_pld(event, components, neighbours)
        if acc is None:
            # A composition of Gaussians is exactly Gaussian: mu^2 = sum count / m^2.
            return mechanisms.gaussian_epsilon(_mu(components), delta)
        return float(acc.get_epsilon(delta))
    if accountant == "rdp":
        acc = rdp.RdpAccountant(neighboring_relation=relation)
        if not acc.supports(event):
            _unsupported("rdp", f"does not support this event under {neighbours} neighbours "
                                "(Poisson sampling needs add_remove, sampling without "
                                "replacement needs replace_one)")
        acc.compose(_rdp_event(event))
        return float(acc.get_epsilon(delta))
    if accountant == "zcdp":
        # Subsampling never increases a Renyi divergence (quasi-convexity): ignoring it is valid.
        return composition.zcdp_to_dp(_mu(components) ** 2 / 2.0, delta)
    steps = sum(c.count for c in components)
    if accountant == "basic":
        return sum(c.count * _per_step_epsilon(c, delta / steps, neighbours) for c in components)
    # strong: KOV needs identical steps; any split of delta gives a valid bound, take the best
    first = dataclasses.replace(components[0], count=1)
    if any(dataclasses.replace(c, count=1) != first for c in components):
        _unsupported("strong", "needs every step to be the same mechanism")
    best = math.inf
    for fraction in (0.999, 0.99, 0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1,
                     0.05, 0.02, 0.01, 1e-3, 1e-4):
        slack = fraction * delta
        step_delta = -math.expm1((math.log1p(-delta) - math.log1p(-slack)) / steps)
        eps0 = _per_step_epsilon(first, step_delta, neighbours)
        best = min(best, composition.strong_composition(eps0, step_delta, steps, slack)[0])
    return best


def _zcdp_rho(pure, mu):
    """rho of a composition of pure components and a Gaussian of ``mu``: epsilon-DP implies
    (epsilon^2 / 2)-zCDP (Bun & Steinke 2016, Prop. 1.4), epsilon-bounded range
    (epsilon^2 / 8)-zCDP (Cesar & Rogers 2021), a Gaussian is (mu^2 / 2)-zCDP."""
    return (sum(c.count * c.pure * c.pure / (8.0 if c.bounded_range else 2.0) for c in pure)
            + mu * mu / 2.0)


def _epsilon_with_pure(event, components, delta, accountant, neighbours):
    """Epsilon of a composition that includes (epsilon_i, delta_i)-DP components (pure when
    delta_i = 0) and unsampled Gaussians. Where some are bounded range, ``"pld"`` and
    ``"rdp"`` (which read them as pure DP) also take zCDP's reading, at ``epsilon^2 / 8``."""
    value = _epsilon_as_pure(event, components, delta, accountant, neighbours)
    if (accountant in ("pld", "rdp") and delta > 0.0
            and any(c.bounded_range for c in components)
            and all(c.delta == 0.0 for c in components if c.pure is not None)
            and not any(c.sampling is not None for c in components)):
        value = min(value, composition.zcdp_to_dp(
            _zcdp_rho([c for c in components if c.pure is not None],
                      _mu([c for c in components if c.pure is None])), delta))
    return value


def _epsilon_as_pure(event, components, delta, accountant, neighbours):
    """:func:`_epsilon_with_pure`, reading bounded-range components as pure DP (and at
    ``epsilon^2 / 8`` for ``"zcdp"``)."""
    pure = [c for c in components if c.pure is not None]
    gaussians = [c for c in components if c.pure is None]
    pure_sum = sum(c.count * c.pure for c in pure)
    pure_delta = sum(c.count * c.delta for c in pure)
    if delta < pure_delta or (delta == pure_delta and gaussians):
        return math.inf     # the approximate-DP components alone spend more than delta
    if not gaussians and (delta == 0.0 or accountant == "basic"):
        return pure_sum                     # basic composition: (sum eps_i, sum delta_i)
    if any(c.sampling is not None for c in gaussians):
        _unsupported(accountant, "cannot compose a pure-DP release with sampled Gaussians")
    mu = _mu(gaussians)
    basic = pure_sum + (mechanisms.gaussian_epsilon(mu, delta - pure_delta) if gaussians
                        else 0.0)
    if accountant == "basic":
        return basic
    if accountant == "zcdp":
        if pure_delta > 0.0:
            _unsupported("zcdp", "cannot read an ApproxDpEvent (approximate DP has no zCDP "
                                 "bound)")
        return composition.zcdp_to_dp(_zcdp_rho(pure, mu), delta)
    if accountant == "rdp" and pure_delta > 0.0:
        _unsupported("rdp", "cannot read an ApproxDpEvent (approximate DP has no Renyi-DP "
                            "bound)")
    if accountant not in ("rdp", "pld"):
        _unsupported(accountant, "cannot read a PureDpEvent or an ApproxDpEvent")
    if max(c.pure for c in pure) > MAX_PURE_EPSILON:
        return basic
    if accountant == "rdp":
        return min(float(_rdp_accountant(event, neighbours).get_epsilon(delta)), basic)
    if sum(c.count for c in pure) > PLD_MAX_PURE_RELEASES or mu * PLD_MIN_MULTIPLIER > 1.0:
        if pure_delta > 0.0:
            return basic
        return min(composition.zcdp_to_dp(_zcdp_rho(pure, mu), delta), basic)
    return min(float(_dominating_pld(pure, gaussians).get_epsilon_for_delta(delta)), basic)


def _rdp_event(event, unsample=True):
    """The event as dp_accounting's RDP accountant reads it: a :class:`PureDpEvent` becomes
    binary randomized response at its epsilon (which dominates every epsilon-DP mechanism;
    Kairouz, Oh & Viswanath 2015); an :class:`ApproxDpEvent` with delta > 0 has no RDP bound.
    A pure part above MAX_PURE_EPSILON (a Laplace release too) becomes non-private, which its
    Renyi divergences (computed through e^epsilon) are all but. A Gaussian sampled without
    replacement with a multiplier above RDP_MAX_SAMPLED_MULTIPLIER is read without its
    sampling (``unsample=False``: kept, to ask dp_accounting whether it supports the event)."""
    if isinstance(event, BoundedRangeDpEvent):
        return _rdp_event(PureDpEvent(event.epsilon), unsample)
    if isinstance(event, PureDpEvent):
        if event.epsilon > MAX_PURE_EPSILON:
            return dp_accounting.NonPrivateDpEvent()
        return dp_event.RandomizedResponseDpEvent(
            noise_parameter=2.0 / (1.0 + math.exp(event.epsilon)), num_buckets=2)
    if isinstance(event, ApproxDpEvent):
        if event.delta > 0.0:
            _unsupported("rdp", "cannot read an ApproxDpEvent with delta > 0 (approximate DP "
                                "has no Renyi-DP bound)")
        return _rdp_event(PureDpEvent(event.epsilon), unsample)
    if isinstance(event, dp_accounting.LaplaceDpEvent):
        if 1.0 / event.noise_multiplier > MAX_PURE_EPSILON:
            return dp_accounting.NonPrivateDpEvent()
        return event
    if (unsample and isinstance(event, dp_accounting.SampledWithoutReplacementDpEvent)
            and isinstance(event.event, dp_accounting.GaussianDpEvent)
            and event.event.noise_multiplier > RDP_MAX_SAMPLED_MULTIPLIER):
        return event.event
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return dp_accounting.SelfComposedDpEvent(_rdp_event(event.event, unsample),
                                                 event.count)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return dp_accounting.ComposedDpEvent([_rdp_event(e, unsample) for e in event.events])
    if isinstance(event, dp_event.RepeatAndSelectDpEvent):
        return dp_event.RepeatAndSelectDpEvent(_rdp_event(event.event, unsample), event.mean,
                                                    event.shape)
    return event


def _rdp_accountant(event, neighbours):
    """dp_accounting's RDP accountant with ``event`` composed (pure-DP parts as randomized
    response, which dp_accounting reads under replace-one only)."""
    acc = rdp.RdpAccountant(neighboring_relation=_RELATIONS[neighbours])
    if not acc.supports(_rdp_event(event, unsample=False)):
        _unsupported("rdp", f"does not support this event under {neighbours} neighbours")
    acc.compose(_rdp_event(event))
    return acc


def _rdp_delta(acc, epsilon):
    """``acc.get_delta(epsilon)``. dp_accounting's conversion fails (``log1p(-1)``) where a
    Renyi divergence is positive but below about 1e-16; composing one more Gaussian, of
    multiplier 1e7, lifts every divergence above that and can only raise delta."""
    try:
        return float(acc.get_delta(epsilon))
    except ValueError:
        acc.compose(dp_accounting.GaussianDpEvent(1e7))
        return float(acc.get_delta(epsilon))


def _dominating_pld(pure, gaussians):
    """A PLD that dominates the composition: each (epsilon, delta)-DP component as Kairouz, Oh &
    Viswanath's worst case (which dominates every such mechanism), the Gaussians composed
    exactly into one (mu at most 1 / PLD_MIN_MULTIPLIER). dp_accounting discretises
    pessimistically (an upper bound), here on one grid coarse enough for the Gaussian."""
    from dp_accounting.pld import common, privacy_loss_distribution as pldlib
    mu = _mu(gaussians)
    interval = _pld_interval(1.0 / mu) if gaussians else 1e-4
    total = None
    for c in pure:
        one = pldlib.from_privacy_parameters(
            common.DifferentialPrivacyParameters(c.pure, c.delta),
            value_discretization_interval=interval)
        one = one.self_compose(c.count) if c.count > 1 else one
        total = one if total is None else total.compose(one)
    if gaussians:
        total = total.compose(pldlib.from_gaussian_mechanism(
            1.0 / mu, sensitivity=1.0, value_discretization_interval=interval))
    return total


def _basic_delta(pure, gaussians, epsilon):
    """A delta at ``epsilon`` for pure components and unsampled Gaussians without their PLD:
    the smaller of basic composition's ``(sum eps_i + eps_G, sum delta_i + delta_G(eps_G))``
    and, for pure components, zCDP's ``exp(-(epsilon - rho)^2 / (4 rho))`` (Bun & Steinke
    2016, Prop. 1.3, solved for delta)."""
    pure_sum = sum(c.count * c.pure for c in pure)
    pure_delta = sum(c.count * c.delta for c in pure)
    mu = _mu(gaussians)
    delta = 1.0
    if epsilon >= pure_sum:
        delta = pure_delta + (math.exp(mechanisms.gaussian_log_delta(mu, epsilon - pure_sum))
                              if gaussians else 0.0)
    rho = _zcdp_rho(pure, mu)
    if pure_delta == 0.0 and 0.0 < rho < epsilon:
        delta = min(delta, math.exp(-(epsilon - rho) ** 2 / (4.0 * rho)))
    return min(delta, 1.0)


def _event_of(event_or_fit, neighbours):
    event = getattr(event_or_fit, "dp_event", event_or_fit)
    if neighbours is None:
        neighbours = getattr(event_or_fit, "neighbours", NEIGHBOURS)
    if not isinstance(event, dp_accounting.DpEvent):
        raise TypeError("expected a dp_accounting DpEvent or a dpsolve Fit, got "
                        f"{type(event_or_fit).__name__}")
    check_event(event)
    return event, check_choice(neighbours, "neighbours", tuple(_RELATIONS))


def tightest_accountant(event_or_fit, neighbours=None):
    """``"pld"`` where it supports the event, else ``"rdp"`` (pure-DP releases: ``"pld"``).

    dp_accounting's PLD has no event for sampling without replacement, so an event with
    :class:`UniformSampling` goes to RDP.

    Parameters
    ----------
    event_or_fit : dp_accounting.DpEvent or Fit
        The release (a Fit's ``dp_event``), built with dpsolve's convention.
    neighbours : {"replace_one", "add_remove"} or None
        None: the Fit's relation, or replace-one for an event.

    Returns
    -------
    str
        ``"pld"`` or ``"rdp"``.
    """
    event, neighbours = _event_of(event_or_fit, neighbours)
    try:
        components = _components(event)
    except _NeedsRdp:
        return "rdp"
    if any(c.sampling is not None and c.sampling[0] == "uniform" for c in components):
        return "rdp"
    return "pld"


def epsilon_of(event_or_fit, delta, accountant=None, neighbours=None):
    """Epsilon at ``delta`` of a DpEvent (or a Fit's ``dp_event``) under one accountant.

    Parameters
    ----------
    event_or_fit : dp_accounting.DpEvent or Fit
        Built with dpsolve's convention (:func:`gaussian_event`): Gaussian multipliers are
        ``sigma / Delta`` under ``neighbours``.
    delta : float
        In [0, 1). At ``delta = 0`` only pure-DP releases (:class:`PureDpEvent`) have a finite
        epsilon, the sum of theirs (basic composition, exact at delta = 0).
    accountant : {"pld", "rdp", "zcdp", "strong", "basic"} or None
        ``"pld"``: privacy loss distributions (exact closed form for unsampled Gaussian
        compositions, dp_accounting's PLD with Poisson sampling); ``"rdp"``: dp_accounting's
        Renyi accountant; ``"zcdp"``: rho's added, converted with Bun-Steinke's rule (sampling
        ignored); ``"strong"``: KOV's strong composition of the per-step analytic Gaussian
        epsilon, amplified by sampling; ``"basic"``: the sum of per-step epsilons at
        ``delta / steps``. None: the tightest that supports the event (pld, else rdp).
    neighbours : {"replace_one", "add_remove"} or None
        None: the Fit's relation, or replace-one for an event.

    Returns
    -------
    float
        ``inf`` for a non-private event (a noise multiplier of 0, or below
        ``MIN_MULTIPLIER``).

    Raises
    ------
    ValueError
        For an event out of range (:func:`check_event`: the message names the event and the
        field) or one the accountant does not read.

    Notes
    -----
    Where dp_accounting's arithmetic would overflow or its work grow without bound, the event
    is read more pessimistically, never less: Gaussian multipliers are moved into
    [``MIN_MULTIPLIER``, ``MAX_MULTIPLIER``] towards less noise (below: no noise); pure parts
    above ``MAX_PURE_EPSILON``, and beyond ``PLD_MAX_PURE_RELEASES`` releases under ``"pld"``,
    are composed by basic composition (and zCDP), as are Gaussians with multipliers below
    ``PLD_MIN_MULTIPLIER`` beside pure parts; sampled Gaussians below it lose their sampling
    under ``"pld"`` (docs/privacy.md, "A budget across releases").
    """
    event, neighbours = _event_of(event_or_fit, neighbours)
    delta = check_real(delta, "delta", low=0.0, high=1.0, low_inclusive=True)
    if accountant is None:
        accountant = tightest_accountant(event, neighbours)
    accountant = check_choice(accountant, "accountant", ACCOUNTANTS)
    return _epsilon(event, delta, accountant, neighbours)


def delta_of(event_or_fit, epsilon, accountant="pld", neighbours=None):
    """Delta at ``epsilon`` of a DpEvent (or a Fit) under ``"pld"`` or ``"rdp"``.

    For unsampled Gaussian compositions ``"pld"`` is exact and in closed form
    (:func:`~dpsolve.privacy.gaussian_log_delta` at ``mu = sqrt(sum count / m^2)``); otherwise
    dp_accounting's accountant computes it (PLD with the multipliers rescaled as in
    :func:`epsilon_of`). :class:`PureDpEvent` and :class:`ApproxDpEvent` components (``"pld"``
    only, beside unsampled Gaussians) enter as Kairouz, Oh & Viswanath's worst case for their
    (epsilon, delta).

    Parameters
    ----------
    event_or_fit : dp_accounting.DpEvent or Fit
        Built with dpsolve's convention (:func:`gaussian_event`): Gaussian multipliers are
        ``sigma / Delta`` under ``neighbours``.
    epsilon : float
        ``>= 0``.
    accountant : {"pld", "rdp"}, default "pld"
        ``"pld"`` does not support sampling without replacement; ``"rdp"`` supports Poisson
        sampling only under add/remove and sampling without replacement only under replace-one
        (ValueError otherwise).
    neighbours : {"replace_one", "add_remove"} or None
        None: the Fit's relation, or replace-one for an event.

    Returns
    -------
    float
        Delta in [0, 1]; 1 for a non-private event.

    Raises
    ------
    ValueError
        As :func:`epsilon_of`.
    """
    event, neighbours = _event_of(event_or_fit, neighbours)
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_inclusive=True)
    accountant = check_choice(accountant, "accountant", ("pld", "rdp"))
    event = _in_range(event)
    try:
        components = _components(event)
    except _NeedsRdp:
        if accountant != "rdp":
            _unsupported("pld", "cannot read this RepeatAndSelectDpEvent; 'rdp' does")
        return _rdp_delta(_rdp_accountant(event, neighbours), epsilon)
    if any(c.multiplier == 0.0 for c in components):
        return 1.0
    if any(c.pure is not None for c in components):
        pure = [c for c in components if c.pure is not None]
        gaussians = [c for c in components if c.pure is None]
        if accountant != "pld" or any(c.sampling is not None for c in gaussians):
            _unsupported(accountant, "cannot give delta for a PureDpEvent or an ApproxDpEvent "
                                     "(only unsampled Gaussians beside them, under 'pld')")
        if (max(c.pure for c in pure) > MAX_PURE_EPSILON
                or sum(c.count for c in pure) > PLD_MAX_PURE_RELEASES
                or _mu(gaussians) * PLD_MIN_MULTIPLIER > 1.0):
            return _basic_delta(pure, gaussians, epsilon)
        return min(float(_dominating_pld(pure, gaussians).get_delta_for_epsilon(epsilon)), 1.0)
    if accountant == "pld":
        if any(c.sampling is not None and c.sampling[0] == "uniform" for c in components):
            _unsupported("pld", "does not support sampling without replacement")
        acc = None
        if any(c.sampling is not None for c in components):
            acc = _sampled_pld(event, components, neighbours)
        if acc is None:
            return math.exp(mechanisms.gaussian_log_delta(_mu(components), epsilon))
        return float(acc.get_delta(epsilon))
    acc = rdp.RdpAccountant(neighboring_relation=_RELATIONS[neighbours])
    if not acc.supports(event):
        _unsupported("rdp", f"does not support this event under {neighbours} neighbours")
    acc.compose(_rdp_event(event))
    return _rdp_delta(acc, epsilon)


@functools.lru_cache(maxsize=256)
def _calibrate(epsilon, delta, steps, sampling, accountant, neighbours, rtol):
    """Noise multiplier m = sigma / Delta: the safe end of a search, rounded up onto the public
    grid of multipliers (:func:`~dpsolve.privacy.mechanisms.multiplier_onto_grid`) and
    verified there."""
    def excess_at(m):
        eps = _epsilon(gaussian_event(m, 1.0, steps=steps, sampling=sampling),
                       delta, accountant, neighbours)
        return math.log(max(eps, 1e-300)) - math.log(epsilon)   # eps can be exactly 0

    def excess(log_m):
        return excess_at(math.exp(log_m))

    # Starting guess: the exact multiplier for unsampled Gaussian composition; a sample of rate q
    # behaves like a Gaussian with mu ~ q sqrt(steps) / m when q is small.
    mu_star = 1.0 / mechanisms.gaussian_sigma_analytic(1.0, epsilon, delta)
    q = 1.0
    if isinstance(sampling, PoissonSampling):
        q = sampling.rate
    elif isinstance(sampling, UniformSampling):
        q = sampling.sample_size / sampling.dataset_size
    log_guess = math.log(max(q, 1.0 / math.sqrt(steps)) * math.sqrt(steps) / mu_star)
    lo = hi = log_guess
    while excess(hi) > 0.0:
        lo, hi = hi, hi + 0.5
    if lo == hi:
        lo = hi - 0.5
        while excess(lo) <= 0.0:
            lo, hi = lo - 0.5, lo
    log_m = optimize.brentq(excess, lo, hi, xtol=rtol / 4.0)
    # keep the private side: step up until the accountant certifies the target
    log_m += rtol / 4.0
    while excess(log_m) > 0.0:
        log_m += rtol / 4.0
    # the same multiplier on every machine: the grid point at or above it, certified itself
    m, up = mechanisms.multiplier_onto_grid(math.exp(log_m)), 0
    while excess_at(m) > 0.0:
        up += 1
        m = mechanisms.multiplier_onto_grid(math.exp(log_m), steps_up=up)
    return m


def calibrate(epsilon, delta, *, sensitivity, steps=1, sampling=None, accountant="rdp",
              neighbours="replace_one", rtol=1e-3):
    """Smallest Gaussian sigma for which ``steps`` releases are (epsilon, delta)-DP.

    The search runs over the noise multiplier ``m = sigma / sensitivity`` and returns the
    upper (private) end of its final bracket, rounded up onto a public grid of multipliers (ten
    significant bits: :func:`~dpsolve.privacy.mechanisms.multiplier_onto_grid`), so that the
    result does not depend on the accountant's floating-point noise, which differs between CPUs.
    ``epsilon_of(gaussian_event(sigma, ...)) <= epsilon`` always holds, and sigma exceeds the
    exact minimum by at most a factor of about ``(1 + rtol)(1 + 2^-9)``.

    Parameters
    ----------
    epsilon, delta : float
        Target; ``epsilon > 0``, ``0 < delta < 1``.
    sensitivity : float
        L2 sensitivity of each release under ``neighbours``.
    steps : int, default 1
        Number of releases, ``>= 1``.
    sampling : None, PoissonSampling or UniformSampling
        How each release's records are chosen (:func:`gaussian_event`); None: all of them.
    accountant : {"pld", "rdp", "zcdp", "strong", "basic"}, default "rdp"
        The accountant that must certify the result (see :func:`epsilon_of`).
    neighbours : {"replace_one", "add_remove"}, default "replace_one"
        The neighbour relation ``sensitivity`` is stated for.
    rtol : float, default 1e-3
        In (0, 0.1]: relative precision of the search; sigma is at most about ``1 + rtol``
        times the least noise the accountant certifies.

    Returns
    -------
    float
        The noise standard deviation sigma per coordinate and release: the certified noise
        multiplier (a grid point) times ``sensitivity``, rounded up (never below the noise
        certified).
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    delta = check_real(delta, "delta", low=0.0, high=1.0)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0)
    steps = check_int(steps, "steps", low=1)
    accountant = check_choice(accountant, "accountant", ACCOUNTANTS)
    neighbours = check_choice(neighbours, "neighbours", tuple(_RELATIONS))
    rtol = check_real(rtol, "rtol", low=0.0, high=0.1, high_inclusive=True)
    if sampling is not None and not isinstance(sampling, (PoissonSampling, UniformSampling)):
        raise TypeError("sampling must be None, PoissonSampling or UniformSampling")
    # rounded up: at least the certified multiplier times the sensitivity
    return mechanisms._product_up(sensitivity, _calibrate(epsilon, delta, steps, sampling,
                                                          accountant, neighbours, rtol))


# -- what a fit reports --------------------------------------------------------------------------
class PrivacyStep(typing.NamedTuple):
    """One release composed into a model's privacy: a line of its :class:`PrivacyReport`'s
    ledger.

    Attributes
    ----------
    name : str
        What was released: the fit (its solver), a bound's private estimate (the parameter it
        is), or a preprocessing step (its place in the pipeline).
    epsilon : float
        The epsilon it was released at (inf for a bound read off the data, which no guarantee
        covers).
    delta : float
        Its delta (0 for the pure-DP releases).
    dp_event : dp_accounting.DpEvent
        Its event; the steps' events composed (``ComposedDpEvent``) are the model's.
    """

    name: str
    epsilon: float
    delta: float
    dp_event: dp_accounting.DpEvent


@dataclasses.dataclass(frozen=True)
class PrivacyReport:
    """The privacy a fit claims and what a tight accountant certifies for the noise it used.

    Attributes
    ----------
    epsilon : float
        The claimed epsilon: (epsilon, delta)-DP under ``neighbours`` for everything the solver
        released.
    delta : float
        The claimed delta.
    method : str
        How the noise was chosen: ``"paper"`` (the source's own formula), an accountant name
        (calibrated by it), or ``"explicit"`` (noise given by the user; epsilon is then the
        certified value).
    certified_epsilon : float
        Epsilon at ``delta`` that ``certified_by`` certifies for the noise actually used.
    certified_by : str
        The tightest accountant that supports the release (``"pld"`` or ``"rdp"``), or
        ``"basic"`` for a pure-DP claim (``delta = 0``), where basic composition is exact.
    neighbours : str, default "replace_one"
        The neighbour relation of the claim: ``"replace_one"`` or ``"add_remove"``.
    steps : tuple of PrivacyStep, default ()
        The ledger: each release the claim composes, as ``(name, epsilon, delta, dp_event)``.
        The estimators list their fit (the solver's release, with the class counts when the
        intercept is centred on them), then each bound's
        :class:`~dpsolve.privacy.PrivateEstimate` and each private preprocessing step of a
        :class:`~dpsolve.preprocessing.PrivatePipeline`; their events composed are the
        model's ``dp_event_`` and their epsilons add up to the claimed epsilon (basic
        composition). A :class:`~dpsolve.private_selection.PrivateGridSearch`'s model lists
        the search's parts in the order spent (the private bounds, the selection, the refit),
        each at the search's delta: their events composed are its ``dp_event_``, but at
        delta > 0 their epsilons need not add up to the claim, which composes them at delta
        once. Empty where a solver reports its release alone: the claim is then the ledger's
        only line. :meth:`summary` prints it.
    """

    epsilon: float
    delta: float
    method: str
    certified_epsilon: float
    certified_by: str
    neighbours: str = NEIGHBOURS
    # the events hold lists (unhashable): the ledger is compared, not hashed
    steps: tuple = dataclasses.field(default=(), hash=False)

    @property
    def holds(self):
        """Whether the certified epsilon is within the claim (up to 1e-9 relative)."""
        return self.certified_epsilon <= self.epsilon * (1.0 + 1e-9)

    def __str__(self):
        return (f"({self.epsilon:.4g}, {self.delta:.3g})-DP claimed ({self.method}); "
                f"{self.certified_by} certifies epsilon = {self.certified_epsilon:.4g} "
                f"({self.neighbours} neighbours)")

    def summary(self):
        """The claim, then the ledger: one line per step with its epsilon and delta.

        Returns
        -------
        str
            The report's :func:`str` and, below it, each of ``steps``: its epsilon, delta
            and name (the claim alone, as ``"total"``, when ``steps`` is empty). When the
            steps' epsilons, all finite, do not add up to the claim (parts at delta > 0
            composed by a tight accountant), a last line gives the claim as
            ``"total (composed, not the steps' sum)"``.
        """
        steps = self.steps or (PrivacyStep("total", self.epsilon, self.delta, None),)
        parts = math.fsum(step.epsilon for step in steps)
        if math.isfinite(parts) and not math.isclose(parts, self.epsilon, rel_tol=1e-9):
            steps += (PrivacyStep("total (composed, not the steps' sum)", self.epsilon,
                                  self.delta, None),)
        lines = [str(self)] + [f"  epsilon = {step.epsilon:<8.4g} delta = {step.delta:<8.3g} "
                               f"{step.name}" for step in steps]
        return "\n".join(lines)


def certify(event, epsilon, delta, method, neighbours=NEIGHBOURS, *, stacklevel=3, steps=()):
    """Build a fit's PrivacyReport; warn (PrivacyWarning) if the claim is not certified.

    ``epsilon=None`` (explicit noise) claims what the accountant certifies. A pure-DP claim
    (``delta = 0``) is certified by basic composition, which is exact there.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        What the fit released (dpsolve's convention, :func:`gaussian_event`).
    epsilon : float or None
        The claimed epsilon; None when the noise was given explicitly.
    delta : float
        The claimed delta, in [0, 1).
    method : str
        How the noise was chosen (``PrivacyReport.method``): ``"paper"``, an accountant's name,
        or ``"explicit"``.
    neighbours : {"replace_one", "add_remove"}, default "replace_one"
        The neighbour relation of the claim.
    stacklevel : int, default 3
        Passed to :func:`warnings.warn`, so that the PrivacyWarning points at the user's call.
    steps : tuple of PrivacyStep, default ()
        The releases ``event`` composes (``PrivacyReport.steps``).

    Returns
    -------
    PrivacyReport
        The claim and the epsilon the accountant certifies for ``event`` at ``delta``.

    Warns
    -----
    PrivacyWarning
        If the certified epsilon exceeds the claimed one (by more than 1e-9 relative).
    """
    accountant = "basic" if delta == 0.0 else tightest_accountant(event, neighbours)
    certified = epsilon_of(event, delta, accountant, neighbours)
    report = PrivacyReport(epsilon=certified if epsilon is None else epsilon, delta=delta,
                           method=method, certified_epsilon=certified, certified_by=accountant,
                           neighbours=neighbours, steps=tuple(steps))
    if not report.holds:
        warnings.warn(f"the {accountant} accountant certifies epsilon={certified:.4g} for this "
                      f"noise at delta={delta:.3g}, above the claimed {epsilon:.4g} ({method})",
                      PrivacyWarning, stacklevel=stacklevel)
    return report
