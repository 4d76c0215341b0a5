"""What the public transformers share: reading a table (a NumPy array or a pandas DataFrame)
with its columns' names, missing cells, per-column parameters and the output's names.

Nothing here reads a value to decide a setting: the number of columns and their names are the
table's public schema."""
import itertools
import math
import numbers

import numpy as np

try:
    from sklearn.utils.validation import (_check_feature_names_in, check_array,
                                          validate_data)
except ImportError as exc:          # pragma: no cover - the extra is not installed
    raise ImportError("dpsolve.preprocessing needs scikit-learn >= 1.6: pip install "
                      "'dpsolve[estimators]'") from exc

#: The norms a transformer's row bound is given in: the l2 geometry's and, for the l1
#: geometry's estimators (whose ``row_norm`` bounds rows in l-infinity), the max norm.
NORMS = ("l2", "linf")


def check_norm(norm):
    """``norm`` if it is one of :data:`NORMS`, else a ValueError naming it."""
    if not isinstance(norm, str) or norm not in NORMS:
        raise ValueError(f"norm must be one of {list(NORMS)} ('linf' for the l1 geometry's "
                         f"estimators, whose row_norm bounds rows in l-infinity), got {norm!r}")
    return norm


def is_missing(value):
    """Whether one cell is missing: None, a float NaN, pandas' NA or NaT."""
    if value is None:
        return True
    if isinstance(value, (float, np.floating)):
        return value != value
    return type(value).__name__ in ("NAType", "NaTType")


#: :func:`is_missing` over an object array, element by element.
missing_cells = np.frompyfunc(is_missing, 1, 1)

#: Cell types that are never missing and compare equal to themselves.
_PLAIN = (str, bytes, int, np.integer, np.bool_)


def missing_mask(column):
    """:func:`is_missing` of every cell of the 1-d object array ``column``, as a bool array.

    Decided by the set of the cells' types: where they are plain (numbers, strings, None),
    None is found by NumPy's comparison with None and NaN by ``x != x``, in NumPy's loops
    rather than by one Python call per cell; any other type (pandas' NA among them) takes
    :func:`is_missing` cell by cell. The same answer either way (``tests/test_preprocessing.py``)."""
    kinds = set(map(type, column))
    floats = any(issubclass(t, (float, np.floating)) for t in kinds)
    if not all(t is type(None) or issubclass(t, (float, np.floating) + _PLAIN) for t in kinds):
        return missing_cells(column).astype(bool)
    mask = np.equal(column, None)
    if floats:
        mask |= np.not_equal(column, column)
    return mask


def category_codes(column, index, default):
    """``index[v]`` for each cell ``v`` of the 1-d object array ``column``; ``default`` for a
    missing cell (:func:`missing_mask`) or a value not in the dict ``index``. As
    ``index.get(v, default)`` cell by cell, in ``map``'s loop, with the missing cells looked up
    as None (never a category)."""
    cells = np.where(missing_mask(column), None, column)
    return np.fromiter(map(index.get, cells, itertools.repeat(default)), dtype=np.intp,
                       count=len(column))


def read_table(estimator, X, *, reset, numeric):
    """``X`` as a 2-d array (float64 if ``numeric``, else object), checked by scikit-learn's
    ``validate_data``: with ``reset`` (in ``fit``) the columns' count and names are recorded as
    ``n_features_in_`` and ``feature_names_in_``, otherwise checked against them when fitted.
    A numeric table is refused if a cell is not finite; an object one may hold missing cells."""
    dtypes = getattr(X, "dtypes", None)
    dtypes = [getattr(X, "dtype", None)] if dtypes is None else list(dtypes)
    if any(getattr(d, "kind", None) == "c" for d in dtypes):
        raise ValueError("Complex data not supported: X must hold real numbers or categories")
    if reset or hasattr(estimator, "n_features_in_"):
        def check(X, **options):
            return validate_data(estimator, X, reset=reset, **options)
    else:       # transformed unfitted (requires_fit is False): no schema to check against
        check = check_array
    if numeric:
        # scikit-learn's finiteness check sums the table first: finite values near float64's
        # limits overflow that sum, and the RuntimeWarning would say so about the data
        with np.errstate(over="ignore", invalid="ignore"):
            return check(X, dtype=np.float64, copy=True)
    return check(X, dtype=object, ensure_all_finite=False, copy=True)


def check_count(estimator, parameter, given, X):
    """Refuse a table whose number of columns differs from the ``given`` number of per-column
    entries of ``parameter`` (None: one entry for every column)."""
    if given is not None and X.shape[1] != given:
        raise ValueError(f"X has {X.shape[1]} columns, but {type(estimator).__name__}'s "
                         f"{parameter} gives {given} (one for each column)")


class WidthUnknown(ValueError):
    """A per-column parameter given once for every column, asked for before the fit has
    counted the columns."""


def n_columns(estimator, given, parameter, input_features=None):
    """The number of input columns: ``given`` by the per-column parameter, else the fitted
    ``n_features_in_``, else the number of ``input_features`` (names asked for before the
    fit); a :class:`WidthUnknown` naming ``parameter`` if none is known."""
    if given is not None:
        return given
    if hasattr(estimator, "n_features_in_"):
        return estimator.n_features_in_
    if input_features is not None:
        return len(input_features)
    raise WidthUnknown(f"{type(estimator).__name__}'s {parameter} gives one entry for every "
                       "column, so the number of columns is known only once fitted "
                     "(n_features_in_): fit it first, or give one entry per column")


def bounded_rows(count, norm, entry=1.0):
    """The bound on the norm of rows of ``count`` columns, each entry at most ``entry`` in
    absolute value (or, for one-hot blocks, ``count`` blocks of at most one 1):
    ``entry sqrt(count)`` in l2, ``entry`` in l-infinity. ``norm`` is checked."""
    check_norm(norm)
    return entry * math.sqrt(count) if norm == "l2" else entry


def input_names(estimator, input_features, count):
    """The input columns' names: ``input_features``, the fitted ``feature_names_in_``, or
    ``x0``, ``x1``, ... for ``count`` columns."""
    if hasattr(estimator, "n_features_in_"):
        return list(_check_feature_names_in(estimator, input_features))
    if input_features is not None:
        names = list(np.asarray(input_features, dtype=object))
        if len(names) != count:
            raise ValueError(f"input_features should have length equal to the number of "
                             f"columns ({count}), got {len(names)}")
        return names
    return [f"x{j}" for j in range(count)]


def real_number(value, parameter):
    """``value`` as a finite float, or a TypeError/ValueError naming ``parameter``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{parameter} must hold real numbers, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{parameter} must hold finite numbers, got {value!r}")
    return value


def round_up(bound):
    """``bound`` raised by a relative 1e-14 (tens of ulps): a bound combined from others
    (squares summed, a square root taken) then stays above every row norm computed in floating
    point, whose own roundings are a few ulps."""
    return math.nextafter(bound * (1.0 + 1e-14), math.inf)
