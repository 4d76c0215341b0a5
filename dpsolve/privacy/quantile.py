"""Private quantiles, for choosing norm bounds without looking at the data: Smith (2011)'s
exponential-mechanism quantile over a public interval.

A solver's row bound B (and a regression's label bound) must be public. Choosing it from the
data (the largest row norm, say) leaks, and guessing it blind either clips most rows or wastes
noise. :func:`private_quantile` spends a small epsilon on a quantile of the norms instead; its
DpEvent composes with the fit's (docs/privacy.md, "Private norm bounds").
"""
import dataclasses

import dp_accounting
import numpy as np

from .._validation import check_real, check_real_array, check_rng
from .accounting import pure_event
from .budget import check_accountant


@dataclasses.dataclass(frozen=True)
class PrivateEstimate:
    """A released private statistic.

    Attributes
    ----------
    value : float
        The estimate.
    epsilon : float
        What releasing it cost (pure epsilon-DP under replace-one neighbours).
    dp_event : dp_accounting.DpEvent
        Its event, to compose with the fits that use it.
    """

    value: float
    epsilon: float
    dp_event: dp_accounting.DpEvent


def private_quantile(values, quantile, epsilon, *, upper, lower=0.0, rng=None,
                     accountant=None):
    r"""The ``quantile`` of ``values`` by Smith (2011)'s exponential mechanism, epsilon-DP.

    The values are clipped to the public interval ``[lower, upper]`` and sorted,
    ``lower = v_(0) <= v_(1) <= ... <= v_(n) <= v_(n+1) = upper``. The output has the density,
    on ``[lower, upper]``,

    .. math::

        p(x) \propto \exp\left(-\frac{\epsilon}{2} \left| \#\{i : v_i < x\} - q n \right|\right),

    so the interval ``(v_(k), v_(k+1))`` is drawn with weight
    ``(v_(k+1) - v_(k)) exp(-epsilon |k - q n| / 2)`` (by the Gumbel-max trick on log weights)
    and the output is uniform in it. Replacing one record moves every count
    ``#{i : v_i < x}`` by at most 1, so the density and its normaliser each change by at most
    ``e^{epsilon/2}``: epsilon-DP under replace-one neighbours (n is public). Never outside
    ``[lower, upper]``; empty intervals (ties) have weight 0.

    Parameters
    ----------
    values : array_like of float
        One value per record (1-D, finite), e.g. row norms. Not modified.
    quantile : float
        q in [0, 1].
    epsilon : float
        ``> 0``.
    upper : float
        Public upper end of the interval, ``> lower``; chosen without looking at the data.
    lower : float, default 0.0
        Public lower end.
    rng : None, int, SeedSequence or Generator
        Source of the randomness (a Gumbel draw per interval, then a uniform).
    accountant : BudgetAccountant, optional
        A budget (:class:`dpsolve.BudgetAccountant`) charged with the release before the values
        are read (refused with a ValueError if it cannot afford it).

    Returns
    -------
    PrivateEstimate
        The value, epsilon and a :class:`~dpsolve.privacy.PureDpEvent`.

    Notes
    -----
    Smith, "Privacy-preserving statistical estimation with optimal convergence rates", STOC
    2011. The sampler works in floating point, like the rest of dpsolve's research mode: it is
    not hardened against floating-point side channels (docs/secure_noise.md).
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    check_accountant(accountant)
    quantile = check_real(quantile, "quantile", low=0.0, high=1.0, low_inclusive=True,
                          high_inclusive=True)
    lower = check_real(lower, "lower")
    upper = check_real(upper, "upper", low=lower)
    array = check_real_array(values, "values", 1)
    if array.size == 0:
        raise ValueError("values must be non-empty")
    rng = check_rng(rng)
    event = pure_event(epsilon)
    if accountant is not None:
        accountant.spend(event, label="private_quantile")
    n = array.size
    edges = np.concatenate(([lower], np.sort(np.clip(array, lower, upper)), [upper]))
    lengths = np.diff(edges)
    with np.errstate(divide="ignore"):
        log_weights = np.log(lengths) - 0.5 * epsilon * np.abs(np.arange(n + 1) - quantile * n)
    k = int(np.argmax(log_weights + rng.gumbel(size=n + 1)))
    value = float(edges[k] + rng.random() * lengths[k])
    return PrivateEstimate(value=min(max(value, lower), upper), epsilon=epsilon,
                           dp_event=event)


def estimate_row_norm(X, epsilon, *, upper, quantile=0.95, rng=None,
                        accountant=None):
    """A private row bound for a Problem's ``row_norm``: the ``quantile`` of the rows' L2
    norms by :func:`private_quantile` on ``[0, upper]``.

    Rows above the bound are then clipped by the Problem (docs/conventions.md); at
    ``quantile=0.95`` about 5% are. Its ``dp_event`` composes with the fit's: the total is the
    fit's epsilon plus this one (basic composition, exact for pure DP).

    Parameters
    ----------
    X : array_like or scipy.sparse matrix, shape (n, p)
        The rows. Not modified.
    epsilon : float
        ``> 0``.
    upper : float
        Public upper end, ``> 0``: a bound no norm is believed to exceed by much, chosen
        without the data (for standardised features, ``sqrt(p)`` times a few).
    quantile : float, default 0.95
        In [0, 1].
    rng : None, int, SeedSequence or Generator
        Source of the randomness (:func:`private_quantile`).
    accountant : BudgetAccountant, optional
        A budget charged with the release (:func:`private_quantile`).

    Returns
    -------
    PrivateEstimate
        The bound, its epsilon and its DpEvent.
    """
    from scipy import sparse

    from .._rows import row_norms
    if sparse.issparse(X):
        X = sparse.csr_array(X, dtype=float)          # a copy: the caller's X is untouched
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        if not np.all(np.isfinite(X.data)):
            raise ValueError("X must be finite")
    else:
        X = check_real_array(X, "X", 2)
    return private_quantile(row_norms(X), quantile, epsilon, upper=upper, rng=rng,
                            accountant=accountant)


def estimate_label_bound(y, epsilon, *, upper, quantile=0.95, rng=None,
                           accountant=None):
    """A private bound on ``|y|`` for regression (the squared loss's label bound): the
    ``quantile`` of ``|y_i|`` by :func:`private_quantile` on ``[0, upper]``.

    Parameters
    ----------
    y : array_like, shape (n,)
        The labels. Not modified.
    epsilon : float
        ``> 0``.
    upper : float
        Public upper end, ``> 0``.
    quantile : float, default 0.95
        In [0, 1].
    rng : None, int, SeedSequence or Generator
        Source of the randomness (:func:`private_quantile`).
    accountant : BudgetAccountant, optional
        A budget charged with the release (:func:`private_quantile`).

    Returns
    -------
    PrivateEstimate
        The bound, its epsilon and its DpEvent.
    """
    y = check_real_array(y, "y", 1)
    return private_quantile(np.abs(y), quantile, epsilon, upper=upper, rng=rng,
                            accountant=accountant)

