"""A one-hot encoder that drops rare categories privately: each public candidate category's count
is released with exact discrete Laplace noise, the candidates whose noisy count clears a public
threshold are kept, and the rest go to the unknown bucket."""
import numbers
from fractions import Fraction

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._validation import check_real
from ..privacy.budget import check_accountant
from ..privacy.discrete import BitSource, discrete_laplace
from ..privacy.events import pure_event
from ._release import SpendsPrivacy
from ._tables import bounded_rows, category_codes, check_count, input_names, n_columns, read_table
from .category_encoder import _checked_categories, _checked_unknown, indicator_names, one_hot
from .private_range_scaler import _checked_random_state

#: The l1 sensitivity of one column's candidate counts under replace-one neighbours: the
#: replaced record leaves one count (its old category's) and joins another (its new one's).
COUNT_SENSITIVITY = 2


def _checked_min_frequency(min_frequency):
    """``min_frequency`` as ``(value, is_share)``: an int >= 0 is a count, a real in (0, 1) a
    share of the table's rows; a TypeError or ValueError naming it otherwise."""
    if isinstance(min_frequency, (bool, np.bool_)) or not isinstance(min_frequency,
                                                                     numbers.Real):
        raise TypeError(f"min_frequency must be an int >= 0 (a count) or a real in (0, 1) (a "
                        f"share of the rows), got {type(min_frequency).__name__}")
    if isinstance(min_frequency, numbers.Integral):
        if min_frequency < 0:
            raise ValueError(f"min_frequency must be an int >= 0 (a count) or a real in (0, 1) "
                             f"(a share of the rows), got {min_frequency}")
        return int(min_frequency), False
    return check_real(min_frequency, "min_frequency", low=0.0, high=1.0), True


def _candidate_counts(column, candidates):
    """How many cells of ``column`` hold each candidate (a missing cell holds none)."""
    index = {value: k for k, value in enumerate(candidates)}
    codes = category_codes(column, index, len(candidates))
    return [int(count) for count in np.bincount(codes, minlength=len(candidates) + 1)[:-1]]


def _noisy_counts(counts, scale, bits):
    """``counts`` each with an exact discrete Laplace draw of ``scale`` (a Fraction) added."""
    return [count + discrete_laplace(scale, rng=bits) for count in counts]


class PrivateCategoryEncoder(SpendsPrivacy, TransformerMixin, BaseEstimator):
    """One-hot encode categorical columns on the public candidate categories whose private
    frequency clears a public threshold; the others, and any value not a candidate, go to the
    unknown bucket.

    ``fit`` counts, in each of the ``q`` columns, the cells holding each of the column's public
    candidates, and adds to each count an exact draw of the discrete Laplace distribution of
    scale ``2 q / epsilon`` (``P(Z = z)`` proportional to ``exp(-|z| epsilon / (2 q))``;
    Canonne-Kamath-Steinke 2020's sampler, Ghosh-Roughgarden-Sundararajan 2009's geometric
    mechanism). Under replace-one neighbours one replaced record lowers one count of its column
    and raises another (or only one, when a value is not a candidate), so a column's counts have
    l1 sensitivity 2 and their noisy release is ``epsilon / q``-DP; the ``q`` columns compose,
    by basic composition (exact for pure DP), to ``epsilon``-DP, and the event is the
    ``ComposedDpEvent`` of the ``q`` ``PureDpEvent(epsilon / q)``. A candidate is kept when its
    noisy count is at least the threshold, ``min_frequency`` (a count), or ``min_frequency * n``
    (a share; the number of rows n is public under replace-one neighbours): a post-processing.
    ``transform`` one-hot encodes each column on its kept candidates, as
    :class:`PublicCategoryEncoder` does on its lists, so that every output row's norm is at most
    ``sqrt(q)`` whatever was kept (:meth:`row_norm_bound`, public), and a private estimator
    downstream composes the encoder's event with its own
    (in a scikit-learn ``Pipeline``, or
    :func:`dpsolve.preprocessing.private_pipeline`).

    Parameters
    ----------
    candidates : list of categories, or list of such lists
        The public candidate categories of each column (strings or numbers), chosen without the
        data (a codebook, a schema); a single list (of categories, not lists) applies to every
        column. A category not listed is never learned: it goes to the unknown bucket.
    epsilon : float
        The privacy budget the fit spends, ``> 0``.
    min_frequency : int or float, default=0.01
        The threshold: a candidate is kept when its noisy count is at least ``min_frequency``
        (an int ``>= 0``), or at least ``min_frequency`` times the number of rows (a real in
        ``(0, 1)``), as scikit-learn's ``OneHotEncoder`` reads its own. A count near the noise's
        scale ``2 q / epsilon`` keeps candidates by chance.
    unknown : {"bucket", "zeros"}, default="bucket"
        Where a value outside the column's kept candidates, or a missing one, goes: its own
        indicator column per input column ("bucket"), or nowhere ("zeros").
    random_state : None, int or numpy Generator, default=None
        The noise's source: an int gives the same release for the same table, None fresh
        entropy at each fit (never stored).
    accountant : BudgetAccountant or ParallelGroup, optional
        A budget charged once with the fit's event, after every public check has passed and
        before a value of the table is read (refused: nothing is read or released).

    Attributes
    ----------
    categories_ : list of lists
        The kept candidates of each column, in the candidates' order (possibly none): the
        release, and the only state derived from the values. The noisy counts are not kept.
    epsilon_ : float
        What the fit spent: ``epsilon``.
    dp_event_ : dp_accounting.ComposedDpEvent
        The fit's event: ``q`` ``PureDpEvent(epsilon / q)``, one per column.
    n_features_in_ : int
        The number of columns seen by ``fit`` (the table's schema).
    feature_names_in_ : ndarray of shape (n_features,)
        The columns' names, when ``fit`` was given a DataFrame with string column names.

    See Also
    --------
    dpsolve.preprocessing.PublicCategoryEncoder : Public category lists, at no cost.

    Notes
    -----
    Ghosh, Roughgarden and Sundararajan, "Universally utility-maximizing privacy mechanisms",
    STOC 2009 (the geometric mechanism); Canonne, Kamath and Steinke, "The discrete Gaussian for
    differential privacy", NeurIPS 2020 (the exact sampler, integer arithmetic only, so the
    release has no floating-point side channel in the noise). Only the candidates are
    counted: releasing which categories occur in the data at all, as scikit-learn's
    ``OneHotEncoder`` does, has no finite epsilon.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsolve.preprocessing import PrivateCategoryEncoder
    >>> X = np.array([["red"]] * 600 + [["green"]] * 390 + [["blue"]] * 10, dtype=object)
    >>> encoder = PrivateCategoryEncoder([["red", "green", "blue"]], epsilon=1.0,
    ...                                  min_frequency=0.05, random_state=0).fit(X)
    >>> encoder.categories_
    [['red', 'green']]
    >>> encoder.transform(np.array([["blue"], ["red"]], dtype=object))
    array([[0., 0., 1.],
           [1., 0., 0.]])
    """

    #: Fitted privately: a pipeline composes its cost into the estimator's downstream.
    def __init__(self, candidates, epsilon, *, min_frequency=0.01, unknown="bucket",
                 random_state=None, accountant=None):
        self.candidates = candidates
        self.epsilon = epsilon
        self.min_frequency = min_frequency
        self.unknown = unknown
        self.random_state = random_state
        self.accountant = accountant

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        return tags

    def _check_public(self):
        """Every parameter, before the table is read."""
        lists, given = _checked_categories(self.candidates, "candidates")
        epsilon = check_real(self.epsilon, "epsilon", low=0.0)
        threshold = _checked_min_frequency(self.min_frequency)
        _checked_unknown(self.unknown)
        random_state = _checked_random_state(self.random_state)
        check_accountant(self.accountant)
        return lists, given, epsilon, threshold, random_state

    def fit(self, X, y=None):
        """Release each candidate's noisy count and keep those above the threshold
        (``epsilon``-DP, charged once to ``accountant``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The categorical table; missing cells (None, NaN) hold no candidate.
        y : None
            Ignored.

        Returns
        -------
        self : PrivateCategoryEncoder
            The fitted transformer: ``categories_``, ``epsilon_``, ``dp_event_``.
        """
        lists, given, epsilon, (value, share), random_state = self._check_public()
        X = read_table(self, X, reset=True, numeric=False)
        check_count(self, "candidates", given, X)
        n, q = X.shape
        lists = lists if given is not None else lists * q
        threshold = value * n if share else value
        event = self._charged(pure_event(epsilon / q) for _ in range(q))
        # exact: the scale 2 q / epsilon as the rational it is, not a rounded float
        scale = Fraction(COUNT_SENSITIVITY * q) / Fraction(epsilon)
        bits = BitSource(np.random.default_rng(random_state))
        kept = []
        for j, candidates in enumerate(lists):
            noisy = _noisy_counts(_candidate_counts(X[:, j], candidates), scale, bits)
            kept.append([c for c, count in zip(candidates, noisy) if count >= threshold])
        self.categories_ = kept
        self.epsilon_ = epsilon
        self.dp_event_ = event
        return self

    def transform(self, X):
        """One-hot encode each column on its kept candidates.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The categorical table; missing cells (None, NaN) are unknown values.

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_outputs)
            The indicators, column by column: one per kept candidate, then the unknown
            bucket's with ``unknown="bucket"``.
        """
        check_is_fitted(self, "categories_")
        bucket = _checked_unknown(self.unknown) == "bucket"
        X = read_table(self, X, reset=False, numeric=False)
        return one_hot(X, self.categories_, bucket)

    def row_norm_bound(self, norm="l2"):
        """The largest norm an output row can have, from the parameters alone (public: each
        input column contributes at most one 1, whatever was kept).

        Parameters
        ----------
        norm : {"l2", "linf"}, default="l2"
            The norm bounded: "l2" for the l2 geometry's estimators, "linf" for the l1
            geometry's, whose ``row_norm`` bounds rows in l-infinity.

        Returns
        -------
        bound : float
            ``sqrt(q)`` in l2 and 1 in l-infinity, for ``q`` input columns.
        """
        _, given = _checked_categories(self.candidates, "candidates")
        return bounded_rows(n_columns(self, given, "candidates"), norm)

    def get_feature_names_out(self, input_features=None):
        """The output columns' names: ``<column>_<category>`` for each kept candidate, and
        ``<column>_<unknown>`` for the bucket.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            The input columns' names; by default the fitted ``feature_names_in_``.

        Returns
        -------
        feature_names_out : ndarray of str
            One name per output column.
        """
        check_is_fitted(self, "categories_")
        bucket = _checked_unknown(self.unknown) == "bucket"
        return indicator_names(input_names(self, input_features, self.n_features_in_),
                               self.categories_, bucket)
