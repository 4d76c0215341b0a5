"""A scaler whose per-column ranges are private quantiles of the columns, the user giving only
a coarse public outer range per column: it spends a declared epsilon, releases the ranges and
then maps each column onto [-1, 1] (or [0, 1]) as :class:`PublicRangeScaler` does."""
import numbers

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._validation import check_real
from ..privacy.budget import check_accountant
from ..privacy.events import pure_event
from ..privacy.quantile import _release
from ._release import KeepsColumnNames, SpendsPrivacy
from ._tables import bounded_rows, check_count, n_columns, read_table
from .range_scaler import _checked_feature_range, _checked_ranges, scale_columns


def _checked_quantiles(quantiles):
    """``quantiles`` as two floats ``0 <= q_low < q_high <= 1``, or an error naming it."""
    if isinstance(quantiles, (str, bytes)) or not hasattr(quantiles, "__len__") or len(
            quantiles) != 2:
        raise ValueError(f"quantiles must be a pair (q_low, q_high) with 0 <= q_low < q_high "
                         f"<= 1, got {quantiles!r}")
    low, high = (check_real(q, "quantiles", low=0.0, high=1.0, low_inclusive=True,
                            high_inclusive=True) for q in quantiles)
    if not low < high:
        raise ValueError(f"quantiles must have q_low < q_high, got {quantiles!r}")
    return low, high


def _checked_random_state(random_state):
    """``random_state`` (None, an int >= 0 or a numpy Generator), or an error naming it."""
    if random_state is None or isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state,
                                                                     (bool, np.bool_)):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative int, got {random_state}")
        return int(random_state)
    raise TypeError(f"random_state must be None, an int or a numpy Generator, got "
                    f"{type(random_state).__name__}")


def _released_range(first, second, low, high):
    """The column's range from its two released quantiles (post-processing): in increasing
    order, and the public outer range when the two coincide (a range needs low < high)."""
    a, b = min(first, second), max(first, second)
    return (a, b) if a < b else (low, high)


class PrivateRangeScaler(SpendsPrivacy, KeepsColumnNames, TransformerMixin,
                         BaseEstimator):
    """Map each numeric column onto [-1, 1] or [0, 1] from a range released privately: two
    quantiles of the column by Smith (2011)'s exponential mechanism, inside a coarse public
    outer range; values outside the released range are clipped.

    ``fit`` releases, for each of the ``p`` columns, its ``q_low`` and ``q_high`` quantiles by
    :func:`dpsolve.privacy.private_quantile` on the column's public outer range
    ``[low_j, high_j]``, each at ``epsilon / (2 p)``; the two (sorted, the outer range instead
    when they coincide) are the column's range. The fit is ``epsilon``-DP under replace-one
    neighbours (n public): the 2 p releases compose adaptively, by basic composition, which is
    exact for pure DP; its event is the ``ComposedDpEvent`` of the 2 p ``PureDpEvent(epsilon /
    (2 p))``. ``transform`` is then :class:`PublicRangeScaler`'s with the released ranges, a
    post-processing of the release: every output value lies in ``feature_range`` whatever the
    table, so the output rows' bound (:meth:`row_norm_bound`) is public, as for the public
    scaler (the public-bound setting of Chaudhuri-Monteleoni-Sarwate 2011), and a private
    estimator downstream composes the scaler's event with its own fit's
    (in a scikit-learn ``Pipeline``, or
    :func:`dpsolve.preprocessing.private_pipeline`).

    Parameters
    ----------
    outer_ranges : (low, high) pair, or sequence of (low, high) pairs
        A coarse public range per column, chosen without the data (a unit's physical limits):
        each released end lies in it, and the values outside it are clipped onto it before the
        quantiles are taken. A single pair applies to every column.
    epsilon : float
        The privacy budget the fit spends, ``> 0``.
    quantiles : (float, float), default=(0.05, 0.95)
        ``(q_low, q_high)`` with ``0 <= q_low < q_high <= 1``: the quantiles that become each
        column's ends (about a fraction ``q_low`` of the values is clipped at the bottom,
        ``1 - q_high`` at the top). An end is accurate when its distance in ranks from the
        table's end, ``q_low n`` (``(1 - q_high) n``), times ``epsilon / (4 p)`` well exceeds
        the log of the outer range's width over the column's spread: the gap between the
        column's last value and the outer range's end otherwise outweighs the quantile (at
        n = 2000, p = 1, epsilon = 1 and an outer range five times the column's spread, 0.99
        often releases the outer end where 0.95 does not).
    feature_range : {(-1, 1), (0, 1)}, default=(-1, 1)
        The interval each column is mapped onto, as for :class:`PublicRangeScaler` (the same
        row bound either way; (-1, 1) measured better at equal epsilon, docs/preprocessing.md,
        "Choosing the defaults"). It was (0, 1) before.
    random_state : None, int or numpy Generator, default=None
        The noise's source: an int gives the same release for the same table, None fresh
        entropy at each fit (never stored).
    accountant : BudgetAccountant or ParallelGroup, optional
        A budget charged once with the fit's event, after every public check has passed and
        before a value of the table is read (refused: nothing is read or released).

    Attributes
    ----------
    ranges_ : ndarray of shape (n_features, 2)
        The released ranges, one ``(low, high)`` row per column: the only state derived from
        the values.
    epsilon_ : float
        What the fit spent: ``epsilon``.
    dp_event_ : dp_accounting.ComposedDpEvent
        The fit's event: 2 p ``PureDpEvent(epsilon / (2 p))``, column by column, low then high.
    n_features_in_ : int
        The number of columns seen by ``fit`` (the table's schema).
    feature_names_in_ : ndarray of shape (n_features,)
        The columns' names, when ``fit`` was given a DataFrame with string column names.

    See Also
    --------
    dpsolve.preprocessing.PublicRangeScaler : The same map from public ranges, at no cost.
    dpsolve.privacy.private_quantile : The mechanism of each end.

    Notes
    -----
    Smith, "Privacy-preserving statistical estimation with optimal convergence rates", STOC
    2011, for each quantile; McSherry and Talwar (2007) for the exponential mechanism. Missing
    values are refused, as by the public scaler: fill them first with
    :class:`PublicConstantImputer`. The fitted transformer stores only the released ranges,
    its event and its public parameters: a pickle of it holds nothing else from the table.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsolve.preprocessing import PrivateRangeScaler
    >>> X = np.random.default_rng(0).uniform(20, 60, size=(2000, 1))
    >>> scaler = PrivateRangeScaler([(0, 200)], epsilon=1.0, random_state=0).fit(X)
    >>> scaler.epsilon_, scaler.ranges_.shape
    (1.0, (1, 2))
    >>> bool(20 < scaler.ranges_[0, 0] < 24 and 56 < scaler.ranges_[0, 1] < 60)
    True
    """

    #: Fitted privately: a pipeline composes its cost into the estimator's downstream.
    def __init__(self, outer_ranges, epsilon, *, quantiles=(0.05, 0.95), feature_range=(-1, 1),
                 random_state=None, accountant=None):
        self.outer_ranges = outer_ranges
        self.epsilon = epsilon
        self.quantiles = quantiles
        self.feature_range = feature_range
        self.random_state = random_state
        self.accountant = accountant

    def _check_public(self):
        """Every parameter, before the table is read: the outer ranges (low, high, count),
        epsilon, the quantiles, the feature range, random_state and the budget."""
        low, high, given = _checked_ranges(self.outer_ranges, "outer_ranges")
        epsilon = check_real(self.epsilon, "epsilon", low=0.0)
        quantiles = _checked_quantiles(self.quantiles)
        _checked_feature_range(self.feature_range)
        random_state = _checked_random_state(self.random_state)
        check_accountant(self.accountant)
        return low, high, given, epsilon, quantiles, random_state

    def fit(self, X, y=None):
        """Release each column's range (``epsilon``-DP, charged once to ``accountant``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The numeric table, with finite values (missing cells refused).
        y : None
            Ignored.

        Returns
        -------
        self : PrivateRangeScaler
            The fitted transformer: ``ranges_``, ``epsilon_``, ``dp_event_``.
        """
        low, high, given, epsilon, quantiles, random_state = self._check_public()
        # the schema and the finiteness check (a message to the data holder, as the
        # estimators' refusal of a NaN row) come before the charge, as in private_quantile
        X = read_table(self, X, reset=True, numeric=True)
        check_count(self, "outer_ranges", given, X)
        p = X.shape[1]
        low, high = np.broadcast_to(low, (p,)), np.broadcast_to(high, (p,))
        share = epsilon / (2 * p)
        events = [pure_event(share) for _ in range(2 * p)]
        event = self._charged(events)
        rng = np.random.default_rng(random_state)
        ranges = np.empty((p, 2))
        for j in range(p):
            column = np.ascontiguousarray(X[:, j])
            ends = [_release(column, q, share, float(high[j]), float(low[j]), rng,
                             events[2 * j + k]).value for k, q in enumerate(quantiles)]
            ranges[j] = _released_range(*ends, float(low[j]), float(high[j]))
        self.ranges_ = ranges
        self.epsilon_ = epsilon
        self.dp_event_ = event
        return self

    def transform(self, X):
        """Map each column from its released range onto ``feature_range``, clipping.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The numeric table, with finite values.

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_features)
            The scaled table, every value inside ``feature_range``.
        """
        check_is_fitted(self, "ranges_")
        feature_range = _checked_feature_range(self.feature_range)
        X = read_table(self, X, reset=False, numeric=True)
        return scale_columns(X, self.ranges_[:, 0], self.ranges_[:, 1], feature_range)

    def row_norm_bound(self, norm="l2"):
        """The largest norm an output row can have, from the parameters alone (public: every
        output value lies in ``feature_range``, whatever the released ranges).

        Parameters
        ----------
        norm : {"l2", "linf"}, default="l2"
            The norm bounded: "l2" for the l2 geometry's estimators, "linf" for the l1
            geometry's, whose ``row_norm`` bounds rows in l-infinity.

        Returns
        -------
        bound : float
            ``sqrt(p)`` in l2 and 1 in l-infinity, for ``p`` columns.
        """
        *_, given = _checked_ranges(self.outer_ranges, "outer_ranges")
        return bounded_rows(n_columns(self, given, "outer_ranges"), norm)

