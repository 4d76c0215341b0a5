"""dpsolve's DpEvents: how a release is described, and the check every event passes before
an accountant reads it (conventions in :mod:`dpsolve.privacy.accounting`, which re-exports each
name here).

* **Sampling**: :class:`PoissonSampling` (each record joins each step independently) and
  :class:`UniformSampling` (a fixed-size subset, without replacement).
* **Events dp_accounting has no class for**: :class:`PureDpEvent` (epsilon-DP and nothing
  finer, such as the gamma-norm mechanism), :class:`ApproxDpEvent` ((epsilon, delta)-DP and
  nothing finer, such as Gaussian objective perturbation) and :class:`BoundedRangeDpEvent`
  (epsilon-bounded range, such as the exponential mechanism).
* **Builders**: :func:`pure_event`, :func:`exponential_event` and :func:`gaussian_event`, the Gaussian's noise multiplier
  ``sigma / Delta`` rounded down (the accountants never read more noise than was added).
* **The check**: :func:`check_event`, every field in range, the nesting and the count of
  releases bounded (``MAX_EVENT_DEPTH``, ``MAX_RELEASES``).
"""
import dataclasses

import attr
import dp_accounting
from dp_accounting import dp_event

from .._validation import check_int, check_real
from . import mechanisms

__all__ = ["PoissonSampling", "UniformSampling", "PureDpEvent", "ApproxDpEvent",
           "BoundedRangeDpEvent", "exponential_event", "pure_event",
           "gaussian_event", "check_event", "MAX_EVENT_DEPTH", "MAX_RELEASES"]


@dataclasses.dataclass(frozen=True)
class PoissonSampling:
    """Each record joins each step's sample independently with probability ``rate``.

    dp_accounting's PLD accountant supports it under both neighbour relations, its RDP
    accountant under add/remove only.

    Attributes
    ----------
    rate : float
        The sampling probability q, in (0, 1]; ``rate = 1`` means every record every step.
    """

    rate: float

    def __post_init__(self):
        check_real(self.rate, "rate", low=0.0, high=1.0, high_inclusive=True)


@dataclasses.dataclass(frozen=True)
class UniformSampling:
    """Each step uses a uniformly random subset of ``sample_size`` of the ``dataset_size``
    records. For ``sample_size = 1`` this is one index drawn uniformly with replacement
    (SGD1 of the multi-party SGD notes, Huang et al. 2023's NSGD).

    Attributes
    ----------
    dataset_size : int
        Number of records n to sample from, ``>= 1``.
    sample_size : int, default 1
        Records per step, in [1, ``dataset_size``]; the rate is ``sample_size / dataset_size``.
    """

    dataset_size: int
    sample_size: int = 1

    def __post_init__(self):
        check_int(self.dataset_size, "dataset_size", low=1)
        check_int(self.sample_size, "sample_size", low=1)
        if self.sample_size > self.dataset_size:
            raise ValueError(f"sample_size must be <= dataset_size={self.dataset_size}, "
                             f"got {self.sample_size}")


def _check_epsilon(value):
    return check_real(value, "epsilon", low=0.0, low_inclusive=True)


@attr.s(frozen=True, slots=True)
class PureDpEvent(dp_accounting.DpEvent):
    """A release that is ``epsilon``-DP (delta = 0) and described by nothing finer.

    The gamma-norm (l2-Laplace) mechanism is one: dp_accounting 0.6 has no event for it, and
    its ``LaplaceDpEvent`` (per-coordinate Laplace) would claim a privacy loss distribution that
    has not been shown for the p-dimensional mechanism. dpsolve's accountants read this event as
    the worst case for epsilon-DP, randomized response with parameter epsilon (Kairouz, Oh &
    Viswanath 2015), which every epsilon-DP mechanism is dominated by; dp_accounting's own
    accountants do not read it (compose it by adding epsilons).

    Like dp_accounting's own events it is a frozen attrs class (equality, hashing and repr by
    ``epsilon``, stored as a float), so ``to_named_tuple`` keeps ``epsilon`` and
    ``dp_accounting.DpEvent.from_named_tuple`` rebuilds it (it imports this module by name).
    """

    # dp_accounting serialises an event by its class's module (to_named_tuple), and
    # from_named_tuple imports it by that name: the public home, where 0.2 defined it
    __module__ = "dpsolve.privacy.accounting"

    epsilon = attr.ib(type=float, converter=_check_epsilon)


def _check_event_delta(value):
    return check_real(value, "delta", low=0.0, high=1.0, low_inclusive=True)


@attr.s(frozen=True, slots=True)
class ApproxDpEvent(dp_accounting.DpEvent):
    """A release that is ``(epsilon, delta)``-DP and described by nothing finer.

    Gaussian objective perturbation is one: its privacy loss is only bounded (through the tail
    of a random variable that depends on the output), not shown to be a Gaussian mechanism's. dpsolve's accountants read it as the worst case for
    ``(epsilon, delta)``-DP, the mechanism of Kairouz, Oh & Viswanath 2015 (randomized response
    with an extra outcome of probability delta that reveals the input), which dominates every
    ``(epsilon, delta)``-DP mechanism. dp_accounting's own accountants do not read it. A frozen
    attrs class like :class:`PureDpEvent`.
    """

    # dp_accounting serialises an event by its class's module (to_named_tuple), and
    # from_named_tuple imports it by that name: the public home, where 0.2 defined it
    __module__ = "dpsolve.privacy.accounting"

    epsilon = attr.ib(type=float, converter=_check_epsilon)
    delta = attr.ib(type=float, converter=_check_event_delta)


@attr.s(frozen=True, slots=True)
class BoundedRangeDpEvent(dp_accounting.DpEvent):
    """A release that is ``epsilon``-bounded range (Durfee & Rogers 2019): for neighbours x, x'
    and any two outcomes a, b, ``ln(P[M(x)=a]/P[M(x')=a]) - ln(P[M(x)=b]/P[M(x')=b]) <=
    epsilon``.

    The exponential mechanism with weights ``exp(epsilon u / (2 Delta))``, Delta the
    sensitivity of the utility u, is one: the log-ratio at an outcome is
    ``epsilon (u(x, a) - u(x', a)) / (2 Delta)`` plus a constant, so two outcomes' differ by at
    most epsilon. An epsilon-bounded-range mechanism is epsilon-DP and
    ``(epsilon^2 / 8)``-zCDP (Cesar & Rogers 2021), a quarter of the
    ``epsilon^2 / 2`` that pure DP alone gives (Bun & Steinke 2016). dpsolve's accountants read
    it as epsilon-DP and, where they compose through zCDP, at ``epsilon^2 / 8``; dp_accounting's
    own accountants do not read it. A frozen attrs class like :class:`PureDpEvent`.
    """

    # dp_accounting serialises an event by its class's module (to_named_tuple)
    __module__ = "dpsolve.privacy.accounting"

    epsilon = attr.ib(type=float, converter=_check_epsilon)


def exponential_event(epsilon, *, steps=1):
    """DpEvent of ``steps`` adaptively composed exponential mechanisms, each ``epsilon``-DP
    (:class:`BoundedRangeDpEvent`).

    Parameters
    ----------
    epsilon : float
        Epsilon of each selection, ``>= 0``: weights ``exp(epsilon u / (2 Delta))``.
    steps : int, default 1
        Number of selections, ``>= 1``.

    Returns
    -------
    dp_accounting.DpEvent
        ``BoundedRangeDpEvent(epsilon)``, wrapped in a ``SelfComposedDpEvent`` when
        ``steps > 1``.
    """
    check_int(steps, "steps", low=1)
    event = BoundedRangeDpEvent(float(epsilon))
    return event if steps == 1 else dp_accounting.SelfComposedDpEvent(event, steps)


def pure_event(epsilon, *, steps=1):
    """DpEvent of ``steps`` adaptively composed ``epsilon``-DP releases (:class:`PureDpEvent`).

    Parameters
    ----------
    epsilon : float
        Epsilon of each release, ``>= 0`` (delta = 0).
    steps : int, default 1
        Number of releases, ``>= 1``.

    Returns
    -------
    dp_accounting.DpEvent
        ``PureDpEvent(epsilon)``, wrapped in a ``SelfComposedDpEvent`` when ``steps > 1``.
    """
    check_int(steps, "steps", low=1)
    event = PureDpEvent(float(epsilon))
    return event if steps == 1 else dp_accounting.SelfComposedDpEvent(event, steps)


def gaussian_event(sigma, sensitivity, *, steps=1, sampling=None):
    """DpEvent of ``steps`` Gaussian releases with noise ``sigma`` and L2 ``sensitivity``.

    Parameters
    ----------
    sigma : float
        Noise standard deviation per coordinate (0: no noise, a ``NonPrivateDpEvent``).
    sensitivity : float
        L2 sensitivity of each un-noised release under the neighbour relation the event will be
        accounted under (replace-one unless said otherwise).
    steps : int
        Number of releases (adaptively composed).
    sampling : None, PoissonSampling or UniformSampling
        How each release's records are chosen; None: every release uses every record.

    Returns
    -------
    dp_accounting.DpEvent
        ``GaussianDpEvent`` with noise multiplier ``sigma / sensitivity`` (rounded down: the
        accountants never read more noise than was added), wrapped in a
        ``PoissonSampledDpEvent`` (rate < 1) or ``SampledWithoutReplacementDpEvent`` (sample
        smaller than the dataset), then in a ``SelfComposedDpEvent`` when ``steps > 1``; a
        ``NonPrivateDpEvent`` when ``sigma = 0``.
    """
    check_real(sigma, "sigma", low=0.0, low_inclusive=True)
    check_real(sensitivity, "sensitivity", low=0.0)
    check_int(steps, "steps", low=1)
    if sigma == 0.0:
        return dp_accounting.NonPrivateDpEvent()
    # rounded down: the accountant reads at most the noise that was added
    event = dp_accounting.GaussianDpEvent(
        noise_multiplier=mechanisms._quotient_down(sigma, sensitivity))
    if isinstance(sampling, PoissonSampling):
        if sampling.rate < 1.0:
            event = dp_accounting.PoissonSampledDpEvent(sampling.rate, event)
    elif isinstance(sampling, UniformSampling):
        if sampling.sample_size < sampling.dataset_size:
            event = dp_accounting.SampledWithoutReplacementDpEvent(
                sampling.dataset_size, sampling.sample_size, event)
    elif sampling is not None:
        raise TypeError("sampling must be None, PoissonSampling or UniformSampling, got "
                        f"{type(sampling).__name__}")
    return event if steps == 1 else dp_accounting.SelfComposedDpEvent(event, steps)


# -- checking events ----------------------------------------------------------------------------
#: Deepest nesting of events read: deeper ones are refused, not left to overflow the stack.
MAX_EVENT_DEPTH = 100
#: Most releases one event may describe (``SelfComposedDpEvent`` counts multiplied): the
#: accountants hold counts in floats, exact up to 2**53.
MAX_RELEASES = 2 ** 53


def check_event(event):
    """Raise unless dpsolve's accountants read ``event``, with every parameter and count in range.

    :func:`epsilon_of`, :func:`delta_of`, :func:`tightest_accountant` and
    :class:`~dpsolve.BudgetAccountant` call it before they read an event: a negative noise
    multiplier or count would otherwise read as a credit (a negative epsilon), and a NaN as a
    release that costs nothing. The events read, and their fields' ranges:

    * ``GaussianDpEvent``, ``LaplaceDpEvent``: ``noise_multiplier`` finite, ``>= 0`` (0 is a
      release without noise: epsilon = inf);
    * :class:`PureDpEvent`, :class:`BoundedRangeDpEvent`, :class:`ApproxDpEvent`: ``epsilon``
      finite, ``>= 0``; ``delta`` in [0, 1];
    * ``SelfComposedDpEvent``: ``count`` an integer ``>= 1``;
    * ``ComposedDpEvent``: ``events`` a list (or tuple) of events, possibly empty;
    * ``PoissonSampledDpEvent``: ``sampling_probability`` in (0, 1];
    * ``SampledWithoutReplacementDpEvent``: integers ``1 <= sample_size <=
      source_dataset_size``;
    * ``RepeatAndSelectDpEvent``: ``mean`` finite, ``>= 1``; ``shape >= 0``, inf allowed
      (Poisson repetitions);
    * ``NoOpDpEvent``, ``NonPrivateDpEvent``.

    Parameters
    ----------
    event : dp_accounting.DpEvent

    Raises
    ------
    TypeError
        If ``event`` or an event inside it is not a DpEvent, or a field is not a number of the
        right kind (the message names the event and the field).
    ValueError
        For an event dpsolve's accountants do not read, a field out of range (the message names
        the event and the field), nesting deeper than ``MAX_EVENT_DEPTH`` (100), or more than
        ``MAX_RELEASES`` (2**53) releases in all.
    """
    _check_event(event, 1, 0)


def _check_event(event, releases, depth):
    if not isinstance(event, dp_accounting.DpEvent):
        raise TypeError(f"expected a dp_accounting DpEvent, got {type(event).__name__}")
    name = type(event).__name__
    if depth > MAX_EVENT_DEPTH:
        raise ValueError(f"the event nests deeper than {MAX_EVENT_DEPTH} levels (at a {name})")

    def real(field, **bounds):
        return check_real(getattr(event, field), f"{name}.{field}", **bounds)

    def integer(field, low):
        return check_int(getattr(event, field), f"{name}.{field}", low=low)

    if isinstance(event, (dp_accounting.NoOpDpEvent, dp_accounting.NonPrivateDpEvent)):
        return
    if isinstance(event, (dp_accounting.GaussianDpEvent, dp_accounting.LaplaceDpEvent)):
        real("noise_multiplier", low=0.0, low_inclusive=True)
    elif isinstance(event, (PureDpEvent, BoundedRangeDpEvent)):
        real("epsilon", low=0.0, low_inclusive=True)
    elif isinstance(event, ApproxDpEvent):
        real("epsilon", low=0.0, low_inclusive=True)
        real("delta", low=0.0, high=1.0, low_inclusive=True, high_inclusive=True)
    elif isinstance(event, dp_accounting.SelfComposedDpEvent):
        releases *= integer("count", 1)
        if releases > MAX_RELEASES:
            raise ValueError(f"{name}.count={event.count} makes more than {MAX_RELEASES} "
                             "releases in all")
        _check_event(event.event, releases, depth + 1)
    elif isinstance(event, dp_accounting.ComposedDpEvent):
        if not isinstance(event.events, (list, tuple)):
            raise TypeError(f"{name}.events must be a list of DpEvents, got "
                            f"{type(event.events).__name__}")
        for inner in event.events:
            _check_event(inner, releases, depth + 1)
    elif isinstance(event, dp_accounting.PoissonSampledDpEvent):
        real("sampling_probability", low=0.0, high=1.0, high_inclusive=True)
        _check_event(event.event, releases, depth + 1)
    elif isinstance(event, dp_accounting.SampledWithoutReplacementDpEvent):
        size = integer("source_dataset_size", 1)
        if integer("sample_size", 1) > size:
            raise ValueError(f"{name}.sample_size must be <= source_dataset_size={size}, got "
                             f"{event.sample_size}")
        _check_event(event.event, releases, depth + 1)
    elif isinstance(event, dp_event.RepeatAndSelectDpEvent):
        real("mean", low=1.0, low_inclusive=True)
        real("shape", low=0.0, low_inclusive=True, allow_inf=True)
        _check_event(event.event, releases, depth + 1)
    else:
        raise ValueError(f"dpsolve's accountants cannot read a {name}")
