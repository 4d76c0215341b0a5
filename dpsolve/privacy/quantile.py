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

from .._validation import check_real, check_rng
from .accounting import pure_event
from .budget import SharedByCopies, check_accountant


@dataclasses.dataclass(frozen=True)
class PrivateEstimate(SharedByCopies):
    """A released private statistic. One release is one object (copies and clones are itself):
    that is how a budget tells it already paid for it (:func:`~dpsolve.privacy.budget.spend_once`).

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
    accountant : BudgetAccountant or ParallelGroup, optional
        A budget (:class:`dpsolve.BudgetAccountant`, or a group of one's
        :meth:`~dpsolve.BudgetAccountant.parallel` block) charged with the release before the
        values are read (refused with a ValueError if it cannot afford it).

    Returns
    -------
    PrivateEstimate
        The value, epsilon and a :class:`~dpsolve.privacy.PureDpEvent`.

    Raises
    ------
    ValueError, TypeError
        For bad arguments: the public ones (``quantile``, ``epsilon``, ``upper``, ``lower``,
        ``rng``, ``accountant``, and the shape and dtype of ``values``) before the charge;
        non-finite ``values`` after it, since that reads the data (the release stays charged,
        as a fit that fails does).

    Notes
    -----
    Smith, "Privacy-preserving statistical estimation with optimal convergence rates", STOC
    2011. The sampler works in floating point, like the rest of dpsolve's research mode: it is
    not hardened against floating-point side channels (docs/secure_noise.md).
    """
    quantile, epsilon, upper, lower, rng = _public_arguments(quantile, epsilon, upper, lower,
                                                             rng, accountant)
    array = _real_array(values, "values", 1)
    event = _charge(epsilon, accountant)
    # the values are read only now, after the charge: a failure from here on stays charged
    if not np.all(np.isfinite(array)):
        raise ValueError("values must be finite")
    return _release(array, quantile, epsilon, upper, lower, rng, event)


def _public_arguments(quantile, epsilon, upper, lower, rng, accountant):
    """The arguments that do not depend on the data, checked before the charge."""
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    check_accountant(accountant)
    quantile = check_real(quantile, "quantile", low=0.0, high=1.0, low_inclusive=True,
                          high_inclusive=True)
    lower = check_real(lower, "lower")
    upper = check_real(upper, "upper", low=lower)
    return quantile, epsilon, upper, lower, check_rng(rng)


def _real_array(values, name, ndim, keep=()):
    """``values`` as a float64 array (or in its own dtype if it is one of ``keep``), its shape
    and dtype checked (public: n is public) and its entries not read; never modified."""
    array = np.asarray(values)
    if array.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {array.shape}")
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise TypeError(f"{name} must hold real numbers, got dtype {array.dtype}")
    if array.shape[0] == 0:
        raise ValueError(f"{name} must be non-empty (at least one record)")
    if array.dtype in keep:
        return array
    return array.astype(np.float64, copy=False)


def _all_finite(stored):
    """Whether every entry of ``stored`` (1-D, or 2-D read by blocks of rows: no boolean
    temporary of its size) is finite."""
    if stored.ndim == 1:
        return bool(np.all(np.isfinite(stored)))
    return all(np.all(np.isfinite(stored[start:start + 4096]))
               for start in range(0, stored.shape[0], 4096))


def _charge(epsilon, accountant):
    """The release's event, charged to ``accountant`` (from public arguments only)."""
    event = pure_event(epsilon)
    if accountant is not None:
        accountant.spend(event, label="private_quantile")
    return event


def _release(values, quantile, epsilon, upper, lower, rng, event):
    """Smith's mechanism on ``values`` (1-D, no NaN; infinities are clipped like the rest)."""
    n = values.size
    edges = np.concatenate(([lower], np.sort(np.clip(values, lower, upper)), [upper]))
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
    accountant : BudgetAccountant or ParallelGroup, optional
        A budget charged with the release after the public arguments are checked and before
        the data are read (:func:`private_quantile`).

    Returns
    -------
    PrivateEstimate
        The bound, its epsilon and its DpEvent.
    """
    from scipy import sparse

    from .._row_ops import row_norms
    quantile, epsilon, upper, lower, rng = _public_arguments(quantile, epsilon, upper, 0.0,
                                                             rng, accountant)
    if sparse.issparse(X):
        if not (np.issubdtype(X.dtype, np.floating) or np.issubdtype(X.dtype, np.integer)):
            raise TypeError(f"X must hold real numbers, got dtype {X.dtype}")
        X = sparse.csr_array(X, dtype=float)          # a copy: the caller's X is untouched
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        if X.shape[0] == 0:
            raise ValueError("X must be non-empty (at least one record)")
        stored = X.data
    else:
        # float32 kept: the row norms are computed in float64 on its exact values
        X = stored = _real_array(X, "X", 2, keep=(np.dtype(np.float32), np.dtype(np.float64)))
    event = _charge(epsilon, accountant)
    # X is read only now, after the charge: a failure from here on stays charged
    if not _all_finite(stored):
        raise ValueError("X must be finite")
    # a norm may overflow to inf for finite rows: it is clipped to upper like any other, with
    # no warning (a warning here would be a signal from the data beyond the release)
    with np.errstate(over="ignore"):
        norms = row_norms(X)
    return _release(norms, quantile, epsilon, upper, lower, rng, event)


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
    accountant : BudgetAccountant or ParallelGroup, optional
        A budget charged with the release after the public arguments are checked and before
        the data are read (:func:`private_quantile`).

    Returns
    -------
    PrivateEstimate
        The bound, its epsilon and its DpEvent.
    """
    quantile, epsilon, upper, lower, rng = _public_arguments(quantile, epsilon, upper, 0.0,
                                                             rng, accountant)
    y = _real_array(y, "y", 1)
    event = _charge(epsilon, accountant)
    # y is read only now, after the charge: a failure from here on stays charged
    if not np.all(np.isfinite(y)):
        raise ValueError("y must be finite")
    return _release(np.abs(y), quantile, epsilon, upper, lower, rng, event)

