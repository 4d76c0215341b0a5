"""A table's public schema, read from a small TOML file: each column's public range or category
list (and the constant a missing cell takes), and the label's classes or range; and the
preprocessing of :mod:`dpsolve.preprocessing` it defines.

The schema is written without looking at the table (from the columns' documentation, a
codebook, physical limits), so the preprocessing it builds learns nothing from the data and
states the row bound a private estimator needs::

    [label]
    column = "churned"
    classes = [0, 1]               # classification; or, for regression,
    # range = [0.0, 6.0]           # the label's public range

    [columns.income]
    range = [0, 250000]            # mapped onto [-1, 1], clipped outside
    missing = 40000                # optional: the value a missing cell takes

    [columns.plan]
    categories = ["basic", "plus", "premium"]
    unknown = "bucket"             # optional: "bucket" (default) or "zeros"

Every column of the table must be the label or in ``[columns]``: a column the schema does not
describe is refused, not dropped silently.
"""
import math
import numbers

from .category_encoder import PublicCategoryEncoder
from .imputer import PublicConstantImputer
from .range_scaler import PublicRangeScaler

#: The keys of a ``[columns.<name>]`` table and of the ``[label]`` table.
COLUMN_KEYS = ("range", "categories", "missing", "unknown")
LABEL_KEYS = ("column", "classes", "range")


class Schema:
    """A table's public schema (see the module docstring).

    Parameters
    ----------
    columns : dict
        ``{name: {"range": [low, high]} or {"categories": [...]}}``, each optionally with
        ``"missing"`` (the constant a missing cell takes) and, for categories, ``"unknown"``
        (``"bucket"`` or ``"zeros"``, as :class:`PublicCategoryEncoder` takes it).
    label : dict
        ``{"column": name, "classes": [...]}`` or ``{"column": name, "range": [low, high]}``.
    where : str, default "schema"
        How the schema is named in messages (its file's path).

    Attributes
    ----------
    columns : dict
        As given, checked.
    label_column : str
        The label's column.
    classes : list or None
        The public label set (classification).
    label_range : tuple of float or None
        The label's public range (regression).
    """

    def __init__(self, columns, label, where="schema"):
        self.where = where
        self.columns = _checked_columns(columns, where)
        self.label_column, self.classes, self.label_range = _checked_label(label, where)
        if self.label_column in self.columns:
            raise ValueError(f"{where}: column {self.label_column!r} is the label "
                             "([label].column) and cannot also be in [columns]")

    @classmethod
    def from_toml(cls, path):
        """The schema in the TOML file at ``path`` (see the module docstring).

        Parameters
        ----------
        path : str or Path

        Returns
        -------
        Schema

        Raises
        ------
        ValueError
            A file that is not TOML, or a table or key that is not as described, naming it.
        """
        try:
            import tomllib
        except ModuleNotFoundError:                     # Python < 3.11
            import tomli as tomllib
        with open(path, "rb") as fh:
            try:
                text = tomllib.load(fh)
            except tomllib.TOMLDecodeError as exc:
                raise ValueError(f"{path}: not a TOML file: {exc}") from None
        unknown = sorted(set(text) - {"columns", "label"})
        if unknown:
            raise ValueError(f"{path}: unknown table [{unknown[0]}]; a schema has [label] and "
                             "[columns.<name>] tables")
        if "label" not in text:
            raise ValueError(f"{path}: needs a [label] table (column = ..., and classes = "
                             "[...] or range = [low, high])")
        return cls(text.get("columns", {}), text["label"], where=str(path))

    def check_table(self, names):
        """Refuse a table whose columns are not the schema's: every column must be the
        label or described, and every described column present.

        Parameters
        ----------
        names : sequence of str
            The table's column names (its header: public schema, not values).
        """
        names = [str(name) for name in names]
        if self.label_column not in names:
            raise ValueError(f"{self.where}: the label column {self.label_column!r} is not in "
                             f"the table (its columns: {', '.join(names)})")
        undescribed = [n for n in names if n != self.label_column and n not in self.columns]
        if undescribed:
            raise ValueError(f"{self.where}: column {undescribed[0]!r} of the table is not "
                             f"described: add a [columns.{undescribed[0]}] table with its "
                             "public range or categories, or drop the column")
        missing = [n for n in self.columns if n not in names]
        if missing:
            raise ValueError(f"{self.where}: [columns.{missing[0]}] names a column the table "
                             "does not have")

    def preprocess(self):
        """The preprocessing the schema defines: a ``ColumnTransformer`` with, for each
        column in the schema's order, :class:`PublicRangeScaler` or
        :class:`PublicCategoryEncoder`, after :class:`PublicConstantImputer` when a missing
        value is given; the other columns (the label) dropped.

        Returns
        -------
        sklearn.compose.ColumnTransformer
        """
        from sklearn.compose import ColumnTransformer
        from sklearn.pipeline import make_pipeline

        parts = []
        for name, spec in self.columns.items():
            if "range" in spec:
                step = PublicRangeScaler([tuple(spec["range"])])
            else:
                step = PublicCategoryEncoder([list(spec["categories"])],
                                             unknown=spec.get("unknown", "bucket"))
            if "missing" in spec:
                step = make_pipeline(PublicConstantImputer(spec["missing"]), step)
            parts.append((name, step, [name]))
        return ColumnTransformer(parts, remainder="drop")


def _checked_columns(columns, where):
    if not isinstance(columns, dict) or not columns:
        raise ValueError(f"{where}: needs at least one [columns.<name>] table")
    for name, spec in columns.items():
        at = f"{where}: [columns.{name}]"
        _check_table(spec, COLUMN_KEYS, at, "range = [low, high] or categories = [...]")
        if ("range" in spec) == ("categories" in spec):
            raise ValueError(f"{at}: give exactly one of range = [low, high] (a numeric column) "
                             "and categories = [...] (a categorical one)")
        if "range" in spec:
            _check_range(spec["range"], f"{at}.range")
            if "unknown" in spec:
                raise ValueError(f"{at}.unknown: only a categorical column has one")
            if "missing" in spec and not _is_real(spec["missing"]):
                raise ValueError(f"{at}.missing: a numeric column's missing value must be a "
                                 f"number, got {spec['missing']!r}")
        else:
            categories = spec["categories"]
            if not isinstance(categories, list) or not categories:
                raise ValueError(f"{at}.categories: must be a non-empty list, got "
                                 f"{categories!r}")
            if spec.get("unknown", "bucket") not in ("bucket", "zeros"):
                raise ValueError(f"{at}.unknown: must be \"bucket\" or \"zeros\", got "
                                 f"{spec['unknown']!r}")
            if "missing" in spec and not (isinstance(spec["missing"], str)
                                          or _is_real(spec["missing"])):
                raise ValueError(f"{at}.missing: a categorical column's missing value must be "
                                 f"a string or a number, got {spec['missing']!r}")
    return dict(columns)


def _checked_label(label, where):
    at = f"{where}: [label]"
    _check_table(label, LABEL_KEYS, at, "column = ..., classes or range")
    column = label.get("column")
    if not isinstance(column, str) or not column:
        raise ValueError(f"{at}.column: the label's column name (a string), got {column!r}")
    if ("classes" in label) == ("range" in label):
        raise ValueError(f"{at}: give exactly one of classes = [...] (classification) and "
                         "range = [low, high] (regression)")
    if "classes" in label:
        classes = label["classes"]
        if not isinstance(classes, list) or len(classes) < 2:
            raise ValueError(f"{at}.classes: at least two labels, got {classes!r}")
        return column, list(classes), None
    _check_range(label["range"], f"{at}.range")
    return column, None, tuple(float(v) for v in label["range"])


def _check_table(table, keys, at, form):
    """Refuse a schema entry that is not a TOML table, or has a key not among ``keys``."""
    if not isinstance(table, dict):
        raise ValueError(f"{at}: must be a table ({form})")
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise ValueError(f"{at}.{unknown[0]}: unknown key; accepted: {', '.join(keys)}")


def _is_real(value):
    return (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and math.isfinite(value))


def _check_range(value, at):
    if not (isinstance(value, list) and len(value) == 2 and all(map(_is_real, value))
            and value[0] < value[1]):
        raise ValueError(f"{at}: must be [low, high], two finite numbers with low < high, "
                         f"got {value!r}")
