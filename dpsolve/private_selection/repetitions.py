r"""The number of runs K of a private selection: its distributions, the DpEvent of the best of K
runs, and the draw of K (public randomness, independent of the data).

Papernot & Steinke 2022 (Definition 1) call K truncated negative binomial with shape
``eta >= 0`` and parameter ``gamma`` in (0, 1] when, for ``k >= 1``,

.. math::

    P(K = k) = \frac{\gamma^\eta}{1 - \gamma^\eta} \binom{k + \eta - 1}{k} (1 - \gamma)^k

(for ``eta > 0``; ``eta = 1`` is the geometric distribution) and
``P(K = k) = (1 - gamma)^k / (k ln(1/gamma))`` for ``eta = 0`` (the logarithmic distribution).
Its mean is ``eta (1 - gamma) / (gamma (1 - gamma^eta))`` (``(1 - gamma) / (gamma ln(1/gamma))``
at ``eta = 0``). A selection is given by its mean; :func:`truncated_negative_binomial_gamma`
finds the gamma, by the inversion dp_accounting's Renyi accountant applies to the event's mean,
so that K is drawn from the distribution whose privacy the accountant bounds.
"""
import math

import numpy as np
from dp_accounting import dp_event
from scipy.special import gammaln

from .._validation import check_choice, check_real

METHODS = ("liu_talwar", "negative_binomial", "poisson")
#: Largest E[K]: the selection runs K private fits, K about the mean; its privacy does not grow
#: with the mean, so a huge one would be admitted by the budget and then never end.
MAX_MEAN = 1e6
#: Relative width at which the bisection for gamma stops (the accountant's).
GAMMA_TOLERANCE = 1e-9


def _log_ratio(x):
    """``ln(x) / (x - 1)``: near x = 1 (within 0.1) by its series ``sum_k (1 - x)^(k-1) / k``,
    whose first 99 terms leave an error below 1e-100, summed exactly by ``math.fsum``."""
    if abs(x - 1.0) > 0.1:
        return math.log(x) / (x - 1.0)
    return math.fsum((1.0 - x) ** (k - 1) / k for k in range(1, 100))


def _expm1_ratio(x):
    """``(e^x - 1) / x``: near 0 (within 0.1) by its series ``sum_k x^(k-1) / k!`` (99 terms,
    an error below 1e-100), summed exactly by ``math.fsum``."""
    if abs(x) > 0.1:
        return math.expm1(x) / x
    terms, term = [], 1.0
    for k in range(1, 100):
        term /= k
        terms.append(term)
        term *= x
    return math.fsum(terms)


def truncated_negative_binomial_mean(gamma, shape):
    """E[K] of the truncated negative binomial with parameter ``gamma`` and ``shape``.

    ``eta (1 - gamma) / (gamma (1 - gamma^eta))``, written as ``1 / (gamma A B)`` with
    ``A = (gamma^eta - 1) / (eta ln gamma)`` and ``B = ln(gamma) / (gamma - 1)``, each exact to
    a few units in the last place wherever eta ln(gamma) is small or gamma near 1; the same
    evaluation as the Renyi accountant's, bit for bit (tests/test_private_selection.py).

    Parameters
    ----------
    gamma : float
        In (0, 1].
    shape : float
        eta >= 0.

    Returns
    -------
    float
        ``1 / gamma`` at eta = 1; ``(1 - gamma) / (gamma ln(1/gamma))`` at eta = 0 (the limit).
    """
    if shape == 1.0:
        return 1.0 / gamma
    if shape == 0.0:
        return 1.0 / (gamma * _log_ratio(gamma))
    return 1.0 / (gamma * _expm1_ratio(shape * math.log(gamma)) * _log_ratio(gamma))


def truncated_negative_binomial_gamma(shape, mean):
    """The parameter gamma of the truncated negative binomial with ``shape`` and E[K] = ``mean``.

    Bisection on (0, min(1, 2 (eta + 1) / mean)] (the mean is at most ``2 (eta + 1) / gamma``,
    so the root lies there) until the interval's relative width is at most
    :data:`GAMMA_TOLERANCE`; the interval's lower end is returned, whose mean is at least
    ``mean`` (the mean falls as gamma grows). It is the inversion the Renyi accountant applies
    to a ``RepeatAndSelectDpEvent``'s mean, so the draws follow the distribution it accounts.

    Parameters
    ----------
    shape : float
        eta >= 0.
    mean : float
        E[K] >= 1.

    Returns
    -------
    float
        gamma in (0, 1]; ``1 / mean`` for the geometric distribution (eta = 1).
    """
    if shape == 1.0:
        return 1.0 / mean
    low, high = 0.0, min(1.0, 2.0 * (shape + 1.0) / mean)
    while high > low * (1.0 + GAMMA_TOLERANCE):
        middle = (low + high) / 2.0
        if truncated_negative_binomial_mean(middle, shape) < mean:
            high = middle
        else:
            low = middle
    return low


def truncated_negative_binomial_pmf(k, shape, gamma):
    """``P(K = k)`` of the truncated negative binomial (module docstring), by logarithms.

    Parameters
    ----------
    k : int or array of int
        Counts (``P = 0`` below 1).
    shape : float
        eta >= 0.
    gamma : float
        In (0, 1).

    Returns
    -------
    numpy.ndarray of float
    """
    k = np.asarray(k, dtype=float)
    log_gamma = math.log(gamma)
    counts = np.maximum(k, 1.0)
    if shape == 0.0:
        log_p = counts * math.log1p(-gamma) - np.log(counts) - math.log(-log_gamma)
    else:
        log_p = (gammaln(counts + shape) - gammaln(shape) - gammaln(counts + 1.0)
                 + counts * math.log1p(-gamma) + shape * log_gamma
                 - math.log(-math.expm1(shape * log_gamma)))
    return np.where(k >= 1.0, np.exp(log_p), 0.0)


def repetition_event(run_event, method, mean, shape=1.0):
    """The DpEvent of releasing the best of K runs of ``run_event``, K drawn by ``method``.

    Parameters
    ----------
    run_event : dp_accounting.DpEvent
        One run's event (it must hold for every candidate).
    method : {"liu_talwar", "negative_binomial", "poisson"}
        ``"liu_talwar"``: K geometric; ``"negative_binomial"``: K truncated negative binomial
        with ``shape``; ``"poisson"``: K Poisson (possibly 0).
    mean : float
        E[K], in [1, ``MAX_MEAN``] (1e6).
    shape : float, default 1.0
        eta >= 0 of the truncated negative binomial (``"negative_binomial"`` only).

    Returns
    -------
    dp_accounting.RepeatAndSelectDpEvent
        With the exact mean of the distribution the sampler uses (the truncated negative
        binomial's parameter gamma is found by bisection; the mean recorded is that of the gamma
        sampled with).
    """
    method = check_choice(method, "method", METHODS)
    mean = check_real(mean, "mean", low=1.0, high=MAX_MEAN, low_inclusive=True,
                      high_inclusive=True)
    if method == "liu_talwar":
        return dp_event.RepeatAndSelectDpEvent(run_event, mean, 1.0)
    if method == "poisson":
        return dp_event.RepeatAndSelectDpEvent(run_event, mean, math.inf)
    shape = check_real(shape, "shape", low=0.0, low_inclusive=True)
    if mean == 1.0:
        return dp_event.RepeatAndSelectDpEvent(run_event, 1.0, shape)
    gamma = truncated_negative_binomial_gamma(shape, mean)
    return dp_event.RepeatAndSelectDpEvent(
        run_event, float(truncated_negative_binomial_mean(gamma, shape)), shape)


def draw_repetitions(event, rng):
    """Draw K for a :func:`repetition_event` (public randomness, independent of the data).

    Parameters
    ----------
    event : dp_accounting.RepeatAndSelectDpEvent
    rng : numpy.random.Generator

    Returns
    -------
    int
        K >= 1, or >= 0 for Poisson.
    """
    mean, shape = event.mean, event.shape
    if shape == math.inf:
        return int(rng.poisson(mean))
    if mean == 1.0:
        return 1
    gamma = truncated_negative_binomial_gamma(shape, mean)
    if shape == 1.0:
        return int(rng.geometric(gamma))
    if shape == 0.0:
        return int(rng.logseries(1.0 - gamma))
    return _truncated_negative_binomial(shape, gamma, rng)


def _truncated_negative_binomial(shape, gamma, rng):
    """K >= 1 with ``P(K = k)`` proportional to ``binom(k + shape - 1, k) (1 - gamma)^k`` by
    inversion of its distribution function (one uniform).

    Rejecting the draws of numpy's negative binomial that are 0 needs ``1 / P(K >= 1) =
    1 / (1 - gamma^shape)`` tries on average, which grows without bound as ``shape -> 0``
    (1e-8: hours). Here the work is the drawn K itself, plus at most the steps until the
    probabilities underflow, whatever the shape."""
    log_gamma = math.log(gamma)
    # P(K = 1): shape gamma^shape (1 - gamma) / (1 - gamma^shape), the last factor by expm1
    p = math.exp(math.log(shape) + shape * log_gamma + math.log1p(-gamma)
                 - math.log(-math.expm1(shape * log_gamma)))
    u = rng.random()
    k, cdf = 1, p
    while cdf < u and p > 0.0:
        p *= (1.0 - gamma) * (k + shape) / (k + 1)
        k += 1
        cdf += p
    return k
