"""A one-hot encoder from public category lists: each categorical column becomes one column
per listed category, and a value outside the list (or missing) goes to a declared bucket. It
learns nothing from the data."""

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from ._tables import (bounded_rows, category_codes, check_count, input_names, is_missing,
                      n_columns, read_table)

#: What an unknown (or missing) value becomes: a column of its own per input column, or
#: zeros in all of the column's outputs.
UNKNOWN = ("bucket", "zeros")


def _is_list(value):
    return (hasattr(value, "__len__") and hasattr(value, "__iter__")
            and not isinstance(value, (str, bytes)))


def _checked_categories(categories, name="categories"):
    """``categories`` as a list of per-column lists and the number of columns they give (None
    for one list given for every column); a ValueError or TypeError naming the parameter,
    ``name``."""
    if not _is_list(categories):
        raise TypeError(f"{name} must be a list of categories, or a list of such lists (one "
                        f"per column), got {type(categories).__name__}")
    lists = list(categories)
    per_column = bool(lists) and all(_is_list(c) for c in lists)
    lists = [list(c) for c in lists] if per_column else [lists]
    for j, values in enumerate(lists):
        where = f"{name}[{j}]" if per_column else name
        if not values:
            raise ValueError(f"{where} is empty: give at least one category")
        for value in values:
            if _is_list(value) or is_missing(value):
                raise ValueError(f"{where} must hold categories (strings or numbers, not lists, "
                                 f"None or NaN: missing values go to the unknown bucket), got "
                                 f"{value!r}")
            try:
                hash(value)
            except TypeError:
                raise TypeError(f"{where} must hold hashable categories, got {value!r}") from None
        if len(set(values)) != len(values):
            raise ValueError(f"{where} lists a category twice: {values!r}")
    return lists, (len(lists) if per_column else None)


def _checked_unknown(unknown):
    if not isinstance(unknown, str) or unknown not in UNKNOWN:
        raise ValueError(f"unknown must be one of {list(UNKNOWN)}, got {unknown!r}")
    return unknown


def indicator_names(names, lists, bucket):
    """The one-hot columns' names: ``<column>_<category>`` for each of a column's ``lists``,
    then ``<column>_<unknown>`` if ``bucket``."""
    out = []
    for name, values in zip(names, lists):
        out += [f"{name}_{value}" for value in values] + ([f"{name}_<unknown>"] if bucket
                                                           else [])
    return np.asarray(out, dtype=object)


def one_hot(X, lists, bucket):
    """The indicators of the object table ``X`` on the per-column category ``lists`` (one per
    column, possibly empty): one column per category, then the unknown bucket's (a value not
    listed, or missing) if ``bucket``."""
    blocks = []
    for j, values in enumerate(lists):
        index = {value: k for k, value in enumerate(values)}
        # the unknown bucket's position k; with "zeros" an extra column dropped below
        where = category_codes(X[:, j], index, len(values))
        block = np.zeros((X.shape[0], len(values) + 1))
        block[np.arange(X.shape[0]), where] = 1.0
        blocks.append(block if bucket else block[:, :-1])
    return np.hstack(blocks) if blocks else np.zeros((X.shape[0], 0))


class PublicCategoryEncoder(TransformerMixin, BaseEstimator):
    """One-hot encode categorical columns from public category lists; a value not listed (or
    missing) goes to a declared bucket and is never learned.

    Column ``j`` with categories ``c_1, ..., c_k`` becomes ``k`` indicator columns, followed by
    an "unknown" indicator with ``unknown="bucket"``; with ``unknown="zeros"``, a value not
    listed leaves all ``k`` columns at 0. The lists are public inputs (a schema, a codebook),
    chosen without the data, so the transformer releases nothing and costs no privacy budget,
    and its output rows obey a bound stated by its parameters alone (:meth:`row_norm_bound`),
    which a private estimator downstream can take as its ``row_norm`` (the public-bound setting
    of Chaudhuri-Monteleoni-Sarwate 2011). Unlike scikit-learn's ``OneHotEncoder``, which reads
    the categories off the data and releases which ones occur, nothing here depends on the
    values: a category present in one table and absent from its neighbour changes no column.

    Parameters
    ----------
    categories : list of categories, or list of such lists
        One list of distinct categories (strings or numbers) per column, in the columns' order;
        a single list (of categories, not lists) applies to every column. A value matches a
        category when it compares and hashes equal (``"1"`` does not match ``1``).
    unknown : {"bucket", "zeros"}, default="bucket"
        Where a value outside the column's list, or a missing one (None, NaN), goes: its own
        indicator column per input column ("bucket"), or nowhere, the column's indicators all
        0 ("zeros").

    Attributes
    ----------
    n_features_in_ : int
        The number of columns seen by ``fit`` (the table's schema, not its values).
    feature_names_in_ : ndarray of shape (n_features,)
        The columns' names, when ``fit`` was given a DataFrame with string column names.

    See Also
    --------
    dpsolve.preprocessing.PublicRangeScaler : Numeric columns mapped from public ranges.
    dpsolve.preprocessing.PublicConstantImputer : Missing cells filled by public constants.

    Notes
    -----
    ``fit`` only checks the table and records its schema (scikit-learn's ``requires_fit`` tag
    is False: ``transform`` works unfitted). Two fits on different tables with the same columns
    leave identical transformers.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsolve.preprocessing import PublicCategoryEncoder
    >>> encoder = PublicCategoryEncoder(categories=[["red", "green"]])
    >>> encoder.fit_transform(np.array([["green"], ["blue"], [None]], dtype=object))
    array([[0., 1., 0.],
           [0., 0., 1.],
           [0., 0., 1.]])
    >>> encoder.get_feature_names_out(["colour"]).tolist()
    ['colour_red', 'colour_green', 'colour_<unknown>']
    """

    def __init__(self, categories, *, unknown="bucket"):
        self.categories = categories
        self.unknown = unknown

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        return tags

    def fit(self, X, y=None):
        """Check ``X`` against the category lists and record its columns' count and names.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The categorical table. Only its shape and column names are read.
        y : None
            Ignored.

        Returns
        -------
        self : PublicCategoryEncoder
            The checked transformer.
        """
        _checked_unknown(self.unknown)
        _, given = _checked_categories(self.categories)
        X = read_table(self, X, reset=True, numeric=False)
        check_count(self, "categories", given, X)
        return self

    def transform(self, X):
        """One-hot encode each column on its public category list.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The categorical table; missing cells (None, NaN) are unknown values.

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_outputs)
            The indicators, column by column: one per listed category, then the unknown
            bucket's with ``unknown="bucket"``.
        """
        bucket = _checked_unknown(self.unknown) == "bucket"
        lists, given = _checked_categories(self.categories)
        X = read_table(self, X, reset=False, numeric=False)
        check_count(self, "categories", given, X)
        return one_hot(X, lists if given is not None else lists * X.shape[1], bucket)

    def row_norm_bound(self, norm="l2"):
        """The largest norm an output row can have, from the parameters alone.

        Each input column contributes exactly one 1 (with ``unknown="bucket"``), or at most one
        (``"zeros"``): ``sqrt(p)`` in l2 and 1 in l-infinity for ``p`` input columns. Exact:
        attained by a row with a listed (or, with the bucket, any) value in every column.

        Parameters
        ----------
        norm : {"l2", "linf"}, default="l2"
            The norm bounded: "l2" for the l2 geometry's estimators, "linf" for the l1
            geometry's, whose ``row_norm`` bounds rows in l-infinity.

        Returns
        -------
        bound : float
            The bound on every output row's norm.
        """
        _, given = _checked_categories(self.categories)
        return bounded_rows(n_columns(self, given, "categories"), norm)

    def get_feature_names_out(self, input_features=None):
        """The output columns' names: ``<column>_<category>``, and ``<column>_<unknown>`` for
        the bucket.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            The input columns' names; by default the fitted ``feature_names_in_``, else
            ``x0``, ``x1``, ...

        Returns
        -------
        feature_names_out : ndarray of str
            One name per output column.
        """
        bucket = _checked_unknown(self.unknown) == "bucket"
        lists, given = _checked_categories(self.categories)
        count = n_columns(self, given, "categories", input_features)
        return indicator_names(input_names(self, input_features, count),
                               lists if given is not None else lists * count, bucket)
