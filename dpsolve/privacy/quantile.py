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
from .budget import ESTIMATE_NEIGHBOURS, SharedByCopies, charge, check_accountant


@dataclasses.dataclass(frozen=True)
class PrivateEstimate(SharedByCopies):
    """A released private statistic. One release is one object (copies and clones are itself):
    that is how a budget tells it already paid for it (:func:`~dpsolve.privacy.budget.charge`).

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
    r"""The ``quantile`` of ``values`` by Smith (2011)'s exponential mechanism, epsilon-DP,
    with the two ends of the interval as possible outputs.

    The values are clipped to the public interval ``[lower, upper]`` and sorted,
    ``lower = v_(0) <= v_(1) <= ... <= v_(n) <= v_(n+1) = upper``. The score of an output x
    is its distance, in ranks, from being a q-quantile of the clipped values:

    .. math::

        u(x) = -\max\left(\#\{i : v_i < x\} - q n,\; q n - \#\{i : v_i \le x\},\; 0\right),

    which is 0 exactly when x is a q-quantile, and ``-|#{i : v_i < x} - q n|`` at every x
    that no value equals. The output is drawn with probability proportional to
    ``exp(epsilon u(x) / 2)`` against the base measure ``mu = Lebesgue on [lower, upper] +
    w (point mass at lower) + w (point mass at upper)``, with ``w = (upper - lower) / (n + 1)``
    (the length of each gap if the n values were evenly spread). So the gap
    ``(v_(k), v_(k+1))`` is drawn with weight ``(v_(k+1) - v_(k)) exp(-epsilon |k - q n| / 2)``
    and the output is uniform in it (Smith's mechanism), and the end ``upper`` itself with
    weight ``w exp(-epsilon max(n - b - q n, 0) / 2)``, b the number of values at or above
    ``upper``; ``lower`` with ``w exp(-epsilon max(q n - a, 0) / 2)``, a the number at or below
    ``lower`` (one Gumbel-max draw over the n + 3 candidates). Gaps of length 0 (ties) have
    weight 0.

    The ends are needed because clipping piles values onto them: when every value is at or
    above ``upper`` the q-quantile of the clipped values is ``upper``, but without the point
    mass the only gap of positive length is ``[lower, upper)``, where every x scores
    ``-q n``, and the estimate would be uniform on it, below every value, whatever epsilon.
    With it the estimate is ``upper`` with probability at least
    ``1 - (n + 1) exp(-epsilon q n / 2)``.

    Privacy: replacing one record (n is public) changes each of the counts
    ``#{i : v_i < x}`` and ``#{i : v_i <= x}`` by at most 1, so u has sensitivity 1 at every
    x; the base measure mu depends only on the public ``lower``, ``upper`` and n. By McSherry
    and Talwar (2007) the output's density against mu changes by at most ``e^{epsilon/2}`` in
    the numerator and in the normaliser: epsilon-DP under replace-one neighbours. Never
    outside ``[lower, upper]``.

    Ties inside the interval remain the weak point, as in Smith's mechanism: no point mass
    can sit at a value that many records share (the base measure would then depend on the
    data), so the output lands somewhere in one of the gaps beside the tie.

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
        :meth:`~dpsolve.BudgetAccountant.parallel` block) charged with the release after
        every check has passed and before the quantile is computed (refused with a ValueError
        if it cannot afford it: nothing is charged).

    Returns
    -------
    PrivateEstimate
        The value, epsilon and a :class:`~dpsolve.privacy.PureDpEvent`.

    Raises
    ------
    ValueError, TypeError
        For bad arguments, all before the budget is charged: the public ones (``quantile``,
        ``epsilon``, ``upper``, ``lower``, ``rng``, ``accountant``, and the shape and dtype of
        ``values``), then non-finite ``values`` (a message to the data holder, as a fit's
        refusal of a NaN row is).

    Notes
    -----
    Smith, "Privacy-preserving statistical estimation with optimal convergence rates", STOC
    2011. McSherry and Talwar, "Mechanism design via differential privacy", FOCS 2007 (the
    exponential mechanism over any base measure that does not depend on the data). The
    sampler works in floating point, like the rest of dpsolve's research mode: it is not
    hardened against floating-point side channels (docs/secure_noise.md).
    """
    quantile, epsilon, upper, lower, rng = _public_arguments(quantile, epsilon, upper, lower,
                                                             rng, accountant)
    array = _real_array(values, "values", 1)
    # validation, a message to the data holder: refused before the charge, as a fit's rows are
    if not np.all(np.isfinite(array)):
        raise ValueError("values must be finite")
    event = _charge(epsilon, accountant)
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
    charge(accountant, event, neighbours=ESTIMATE_NEIGHBOURS, label="private_quantile")
    return event


def _log_weights(values, quantile, epsilon, upper, lower):
    """The mechanism's candidates (:func:`private_quantile`): the sorted clipped values with
    the ends, ``edges`` (n + 2), and the log weights of the n + 1 gaps between them and of the
    two ends, ``lower`` then ``upper``: ``log(mass under mu) + epsilon u / 2``."""
    n = values.size
    clipped = np.sort(np.clip(values, lower, upper))
    edges = np.concatenate(([lower], clipped, [upper]))
    lengths = np.diff(edges)
    qn = quantile * n
    # the score u(x) of the docstring: -|k - q n| inside the gap above k values, where no
    # value sits; at the ends the ties count, a = #{v_i <= lower}, b = #{v_i >= upper}
    at_lower = int(np.searchsorted(clipped, lower, side="right"))
    at_upper = n - int(np.searchsorted(clipped, upper, side="left"))
    score_lower = -max(qn - at_lower, 0.0)
    score_upper = -max(n - at_upper - qn, 0.0)
    # w = (upper - lower) / (n + 1), written so that it cannot overflow for finite ends
    with np.errstate(divide="ignore"):
        log_w = np.log(upper / (n + 1) - lower / (n + 1))
        gaps = np.log(lengths) - 0.5 * epsilon * np.abs(np.arange(n + 1) - qn)
    ends = np.array([log_w + 0.5 * epsilon * score_lower, log_w + 0.5 * epsilon * score_upper])
    return edges, lengths, gaps, ends


def _release(values, quantile, epsilon, upper, lower, rng, event):
    """The mechanism of :func:`private_quantile` on ``values`` (1-D, no NaN; infinities are
    clipped like the rest)."""
    n = values.size
    edges, lengths, gaps, ends = _log_weights(values, quantile, epsilon, upper, lower)
    # Gumbel-max over the n + 3 candidates. The draws for the gaps and the uniform inside one
    # come first, the ends' two Gumbels last (independent draws in any order): when a gap
    # wins, a seed gives the bits it gave before the ends were candidates.
    gap_noise = gaps + rng.gumbel(size=n + 1)
    inside = rng.random()
    end_noise = ends + rng.gumbel(size=2)
    k = int(np.argmax(gap_noise))
    best = int(np.argmax(end_noise))
    if end_noise[best] > gap_noise[k]:
        value = lower if best == 0 else upper
    else:
        value = float(edges[k] + inside * lengths[k])
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
        A budget charged with the release after every check has passed (the public
        arguments, then the finiteness of the data) and before the estimate is computed
        (:func:`private_quantile`).

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
        # a copy in float64 first (the caller's X is untouched), then duplicate entries summed
        # in float64: a row's norm is that of the sum of its duplicates (converting to CSR
        # alone keeps a CSR's duplicates, and would sum a COO's in X's own dtype)
        X = sparse.csr_array(X.astype(np.float64), copy=False)
        X.sum_duplicates()
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        if X.shape[0] == 0:
            raise ValueError("X must be non-empty (at least one record)")
        stored = X.data
    else:
        # float32 kept: the row norms are computed in float64 on its exact values
        X = stored = _real_array(X, "X", 2, keep=(np.dtype(np.float32), np.dtype(np.float64)))
    if not _all_finite(stored):
        raise ValueError("X must be finite")
    event = _charge(epsilon, accountant)
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
        A budget charged with the release after every check has passed (the public
        arguments, then the finiteness of the data) and before the estimate is computed
        (:func:`private_quantile`).

    Returns
    -------
    PrivateEstimate
        The bound, its epsilon and its DpEvent.
    """
    quantile, epsilon, upper, lower, rng = _public_arguments(quantile, epsilon, upper, 0.0,
                                                             rng, accountant)
    y = _real_array(y, "y", 1)
    if not np.all(np.isfinite(y)):
        raise ValueError("y must be finite")
    event = _charge(epsilon, accountant)
    return _release(np.abs(y), quantile, epsilon, upper, lower, rng, event)

