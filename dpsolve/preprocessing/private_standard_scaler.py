"""A standard scaler whose means and standard deviations are released privately: noisy sums of
the columns clipped to public ranges (the Laplace mechanism), then each column centred and
scaled, and clipped to a public number of standard deviations so that the output's row bound is
public."""
import math

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._validation import check_real
from ..privacy.budget import check_accountant
from ..privacy.events import pure_event
from ._release import KeepsColumnNames, SpendsPrivacy
from ._tables import bounded_rows, check_count, n_columns, read_table
from .private_range_scaler import _checked_random_state
from .range_scaler import _checked_ranges


def _moments(column, low, high, n, share, rng):
    """The released mean and standard deviation of one column: its values clipped to
    ``[low, high]`` and centred on the midpoint ``m``, the sums of ``x - m`` (sensitivity
    ``w = high - low``) and of ``(x - m)^2`` (sensitivity ``w^2 / 4``) each with Laplace noise
    at ``share``; the rest is post-processing. Exact sums (``math.fsum``): the same bits on
    every machine."""
    width, middle = high - low, 0.5 * (low + high)
    centred = np.clip(column, low, high) - middle
    top = 0.25 * width * width
    total = math.fsum(centred) + rng.laplace(scale=width / share)
    squares = math.fsum(centred * centred) + rng.laplace(scale=top / share)
    mean = min(max(total / n, -0.5 * width), 0.5 * width)
    second = min(max(squares / n, 0.0), top)
    variance = second - mean * mean
    # a variance of 0 or below (noise) leaves no scale: the public half width instead
    scale = math.sqrt(variance) if variance > 0.0 else 0.5 * width
    return middle + mean, scale


class PrivateStandardScaler(SpendsPrivacy, KeepsColumnNames, TransformerMixin,
                            BaseEstimator):
    """Centre and scale each numeric column by a mean and a standard deviation released
    privately (the Laplace mechanism on sums of the values clipped to public ranges), and clip
    the result to ``[-clip, clip]``.

    ``fit`` clips each of the ``p`` columns to its public range ``[low_j, high_j]`` (width
    ``w_j``, midpoint ``m_j``) and releases the two sums ``sum_i (x_ij - m_j)`` and
    ``sum_i (x_ij - m_j)^2`` with Laplace noise of scale ``w_j / e`` and ``(w_j^2 / 4) / e``,
    ``e = epsilon / (2 p)``: their sensitivities under replace-one neighbours (n public) are
    ``w_j`` and ``w_j^2 / 4``, so each release is ``e``-DP (Dwork-McSherry-Nissim-Smith 2006)
    and the 2 p compose, by basic composition (exact for pure DP), to ``epsilon``-DP; the
    event is the ``ComposedDpEvent`` of the 2 p ``PureDpEvent(e)``. The mean is the first sum
    over n, the variance the second over n less the squared mean (each clipped to what the
    clipped values allow; a variance at or below 0 gives the scale ``w_j / 2``): a
    post-processing. ``transform`` maps ``x -> clip((clip(x, low_j, high_j) - mean_j) /
    scale_j, -clip, clip)``, so every output row's norm is at most ``clip sqrt(p)`` whatever
    the table (:meth:`row_norm_bound`, public), and a private estimator downstream composes the
    scaler's event with its own (in a scikit-learn ``Pipeline``, or
    :func:`dpsolve.preprocessing.private_pipeline`).

    Parameters
    ----------
    ranges : (low, high) pair, or sequence of (low, high) pairs
        A public range per column, chosen without the data; values outside it are clipped
        onto it before the sums. The noise grows with its width. A single pair applies to every
        column.
    epsilon : float
        The privacy budget the fit spends, ``> 0``.
    clip : float, default=0.5
        The output is clipped to ``[-clip, clip]`` (standard deviations), ``> 0``. The row
        bound ``clip sqrt(p)``, which the estimator's noise grows with, is the cost; the values
        clipped are the loss. A standard normal column clipped at ``c`` fills on average a
        share ``E|clip(Z, c)| / c`` of its bound: 0.80 at ``c = 0.5``, 0.63 at 1, 0.27 at 3.
        Measured on seven real tables at epsilon in {0.3, 1, 3} (docs/preprocessing.md,
        "Choosing the defaults"), no other clip from 0.25 to 4 beat 0.5 on most of the 21
        (table, epsilon) cells; 3, the former default, lost to it on 16.
    random_state : None, int or numpy Generator, default=None
        The noise's source: an int gives the same release for the same table, None fresh
        entropy at each fit (never stored).
    accountant : BudgetAccountant or ParallelGroup, optional
        A budget charged once with the fit's event, after every public check has passed and
        before a value of the table is read (refused: nothing is read or released).

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        The released means: with ``scale_``, the only state derived from the values.
    scale_ : ndarray of shape (n_features,)
        The released standard deviations, each ``> 0``.
    epsilon_ : float
        What the fit spent: ``epsilon``.
    dp_event_ : dp_accounting.ComposedDpEvent
        The fit's event: 2 p ``PureDpEvent(epsilon / (2 p))``, column by column, the sum then
        the sum of squares.
    n_features_in_ : int
        The number of columns seen by ``fit`` (the table's schema).
    feature_names_in_ : ndarray of shape (n_features,)
        The columns' names, when ``fit`` was given a DataFrame with string column names.

    See Also
    --------
    dpsolve.preprocessing.PrivateRangeScaler : Ranges from private quantiles instead.
    dpsolve.preprocessing.PublicRangeScaler : Public ranges, at no cost.

    Notes
    -----
    Dwork, McSherry, Nissim and Smith, "Calibrating noise to sensitivity in private data
    analysis", TCC 2006 (the Laplace mechanism). The noise is drawn in floating point, like the
    rest of dpsolve's research mode: it is not hardened against floating-point side channels
    (docs/secure_noise.md). Missing values are refused: fill them first with
    :class:`PublicConstantImputer`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsolve.preprocessing import PrivateStandardScaler
    >>> X = np.random.default_rng(0).normal(40, 5, size=(5000, 1))
    >>> scaler = PrivateStandardScaler([(0, 100)], epsilon=1.0, random_state=0).fit(X)
    >>> bool(abs(scaler.mean_[0] - 40) < 1 and abs(scaler.scale_[0] - 5) < 1)
    True
    >>> scaler.row_norm_bound("l2")
    0.5
    """

    #: Fitted privately: a pipeline composes its cost into the estimator's downstream.
    def __init__(self, ranges, epsilon, *, clip=0.5, random_state=None, accountant=None):
        self.ranges = ranges
        self.epsilon = epsilon
        self.clip = clip
        self.random_state = random_state
        self.accountant = accountant

    def _check_public(self):
        """Every parameter, before the table is read."""
        low, high, given = _checked_ranges(self.ranges)
        epsilon = check_real(self.epsilon, "epsilon", low=0.0)
        check_real(self.clip, "clip", low=0.0)
        random_state = _checked_random_state(self.random_state)
        check_accountant(self.accountant)
        return low, high, given, epsilon, random_state

    def fit(self, X, y=None):
        """Release each column's mean and standard deviation (``epsilon``-DP, charged once to
        ``accountant``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The numeric table, with finite values (missing cells refused).
        y : None
            Ignored.

        Returns
        -------
        self : PrivateStandardScaler
            The fitted transformer: ``mean_``, ``scale_``, ``epsilon_``, ``dp_event_``.
        """
        low, high, given, epsilon, random_state = self._check_public()
        X = read_table(self, X, reset=True, numeric=True)
        check_count(self, "ranges", given, X)
        n, p = X.shape
        low, high = np.broadcast_to(low, (p,)), np.broadcast_to(high, (p,))
        share = epsilon / (2 * p)
        widest = float(np.max(high - low))
        # public: n, the ranges and epsilon; the sums and the noise's scale must stay finite
        if not math.isfinite(n * widest * widest) or not math.isfinite(widest * widest / share):
            raise ValueError(f"ranges: a width of {widest:g} over {n} records at epsilon "
                             f"{epsilon:g} overflows float64 in the sums of squares or their "
                             "noise; give narrower ranges")
        events = [pure_event(share) for _ in range(2 * p)]
        event = self._charged(events)
        rng = np.random.default_rng(random_state)
        moments = [_moments(X[:, j], float(low[j]), float(high[j]), n, share, rng)
                   for j in range(p)]
        self.mean_ = np.array([m for m, _ in moments])
        self.scale_ = np.array([s for _, s in moments])
        self.epsilon_ = epsilon
        self.dp_event_ = event
        return self

    def transform(self, X):
        """Centre, scale and clip each column by the released moments.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The numeric table, with finite values.

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_features)
            The standardised table, every value inside ``[-clip, clip]``.
        """
        check_is_fitted(self, "mean_")
        low, high, _ = _checked_ranges(self.ranges)
        clip = check_real(self.clip, "clip", low=0.0)
        X = read_table(self, X, reset=False, numeric=True)
        np.clip(X, low, high, out=X)
        X -= self.mean_
        with np.errstate(over="ignore"):       # a tiny released scale: clipped below
            X /= self.scale_
        return np.clip(X, -clip, clip, out=X)

    def row_norm_bound(self, norm="l2"):
        """The largest norm an output row can have, from the parameters alone (public: every
        output value lies in ``[-clip, clip]``, whatever the release).

        Parameters
        ----------
        norm : {"l2", "linf"}, default="l2"
            The norm bounded: "l2" for the l2 geometry's estimators, "linf" for the l1
            geometry's, whose ``row_norm`` bounds rows in l-infinity.

        Returns
        -------
        bound : float
            ``clip sqrt(p)`` in l2 and ``clip`` in l-infinity, for ``p`` columns.
        """
        clip = check_real(self.clip, "clip", low=0.0)
        *_, given = _checked_ranges(self.ranges)
        return bounded_rows(n_columns(self, given, "ranges"), norm, clip)

