"""Missing cells filled by public constants, one per column: nothing learned from the data
(scikit-learn's ``SimpleImputer`` with a mean, median or most frequent value reads it off the
data; its constant strategy is the same idea, this one taking one constant per column)."""
import numbers

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from ._tables import check_count, input_names, missing_mask, n_columns, read_table


def _checked_fill_values(fill_value):
    """``fill_value`` as a list of per-column constants and the number of columns it gives
    (None for one constant for every column); a ValueError or TypeError naming it."""
    per_column = hasattr(fill_value, "__len__") and not isinstance(fill_value, (str, bytes))
    values = list(fill_value) if per_column else [fill_value]
    if not values:
        raise ValueError("fill_value must give at least one constant, got an empty list")
    for j, value in enumerate(values):
        where = f"fill_value[{j}]" if per_column else "fill_value"
        if isinstance(value, (bool, np.bool_)) or not isinstance(
                value, (numbers.Real, str)):
            raise TypeError(f"{where} must be a number or a string, got {value!r}")
        if isinstance(value, numbers.Real) and not np.isfinite(value):
            raise ValueError(f"{where} must be a finite number (the constant that replaces a "
                             f"missing cell), got {value!r}")
    return values, (len(values) if per_column else None)


def _all_real(X):
    """Whether every cell of the object array ``X`` is a real number (not a bool, not a
    string): decided once per type of cell, not once per cell."""
    return all(issubclass(t, numbers.Real) and not issubclass(t, (bool, np.bool_))
               for t in set(map(type, X.ravel())))


class PublicConstantImputer(TransformerMixin, BaseEstimator):
    """Replace each missing cell (None, NaN, pandas' NA) by a public constant for its column;
    nothing is learned from the data.

    The constants are public inputs, chosen without the data (a column's neutral value, its
    range's midpoint, a category such as ``"missing"``), so the transformer releases nothing
    and costs no privacy budget. It bounds no row by itself: follow it with
    :class:`PublicRangeScaler` (numeric columns) or :class:`PublicCategoryEncoder` (categorical
    ones), whose parameters state the bound a private estimator downstream takes as its
    ``row_norm`` (the public-bound setting of Chaudhuri-Monteleoni-Sarwate 2011).

    Parameters
    ----------
    fill_value : number, str, or sequence of them
        One finite number or string per column, in the columns' order; a single constant
        applies to every column.

    Attributes
    ----------
    n_features_in_ : int
        The number of columns seen by ``fit`` (the table's schema, not its values).
    feature_names_in_ : ndarray of shape (n_features,)
        The columns' names, when ``fit`` was given a DataFrame with string column names.

    See Also
    --------
    dpsolve.preprocessing.PublicRangeScaler : Numeric columns mapped from public ranges.
    dpsolve.preprocessing.PublicCategoryEncoder : One-hot columns from public category lists.

    Notes
    -----
    The output is float64 when the table is numeric and every constant is a number, else an
    object array. ``fit`` only checks the table and records its schema (scikit-learn's
    ``requires_fit`` tag is False). Two fits on different tables with the same columns leave
    identical transformers.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsolve.preprocessing import PublicConstantImputer
    >>> PublicConstantImputer(fill_value=[0.0, 40.0]).fit_transform(
    ...     np.array([[1.0, np.nan], [np.nan, 30.0]]))
    array([[ 1., 40.],
           [ 0., 30.]])
    """

    def __init__(self, fill_value):
        self.fill_value = fill_value

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        return tags

    def fit(self, X, y=None):
        """Check ``X`` against the constants and record its columns' count and names.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The table. Only its shape and column names are read.
        y : None
            Ignored.

        Returns
        -------
        self : PublicConstantImputer
            The checked transformer.
        """
        _, given = _checked_fill_values(self.fill_value)
        X = read_table(self, X, reset=True, numeric=False)
        check_count(self, "fill_value", given, X)
        return self

    def transform(self, X):
        """Fill each column's missing cells with its constant.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The table.

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_features)
            The table without missing cells: float64 if every cell is then a number, else
            object.
        """
        values, given = _checked_fill_values(self.fill_value)
        X = read_table(self, X, reset=False, numeric=False)
        check_count(self, "fill_value", given, X)
        values = values if given is not None else values * X.shape[1]
        for j, value in enumerate(values):
            column = X[:, j]
            column[missing_mask(column)] = value
        # numbers stay numbers; a string ("1.5" included) keeps the table an object array
        return X.astype(np.float64) if _all_real(X) else X

    def get_feature_names_out(self, input_features=None):
        """The output columns' names: the input columns' names.

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
        _, given = _checked_fill_values(self.fill_value)
        count = n_columns(self, given, "fill_value", input_features)
        return np.asarray(input_names(self, input_features, count), dtype=object)
