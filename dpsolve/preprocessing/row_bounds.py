"""The row bound a preprocessing's output guarantees, combined over scikit-learn's composites
(``ColumnTransformer``, ``Pipeline``, ``FeatureUnion``) from each step's public parameters; and
the steps of such a composite that would learn from the records when fitted."""
import math

from ._tables import check_norm, round_up


def _is_skipped(step):
    return step is None or (isinstance(step, str) and step == "drop")


def _is_passthrough(step):
    return isinstance(step, str) and step == "passthrough"


def _parts(transformer):
    """``[(name, step, weight)]`` of a ``ColumnTransformer`` or ``FeatureUnion`` whose outputs
    are concatenated (its remainder included as ``"remainder"``), or None for another object."""
    if hasattr(transformer, "transformers_"):      # a fitted ColumnTransformer: its fitted parts
        items = [(name, step) for name, step, _ in transformer.transformers_]
    elif hasattr(transformer, "transformers") and hasattr(transformer, "remainder"):
        items = [(name, step) for name, step, _ in transformer.transformers]
        items.append(("remainder", transformer.remainder))
    elif hasattr(transformer, "transformer_list"):
        items = list(transformer.transformer_list)
    else:
        return None
    weights = getattr(transformer, "transformer_weights", None) or {}
    return [(name, step, weights.get(name, 1.0)) for name, step in items]


def output_row_norm(transformer, norm="l2"):
    """The bound on every output row's norm of a preprocessing, from its public parameters.

    A transformer of :mod:`dpsolve.preprocessing` that bounds its output
    (:class:`PublicRangeScaler`, :class:`PublicCategoryEncoder`) reports its bound
    (``row_norm_bound``). Composites combine them: a ``ColumnTransformer`` or a
    ``FeatureUnion`` concatenates its parts' outputs, so its bound is the square root of the sum
    of the parts' squared bounds in l2 and their maximum in l-infinity (each part scaled by its
    ``transformer_weights``); a ``Pipeline``'s bound is its last step's (skipping
    ``"passthrough"`` steps). The result is the ``row_norm`` a private estimator downstream can
    take, so that no bound is read off the data: the public-bound setting of
    Chaudhuri-Monteleoni-Sarwate 2011.

    Parameters
    ----------
    transformer : transformer
        A transformer of :mod:`dpsolve.preprocessing`, or a ``ColumnTransformer``,
        ``Pipeline`` or ``FeatureUnion`` of them. It need not be fitted when its parameters
        give one entry per column.
    norm : {"l2", "linf"}, default="l2"
        The norm bounded: "l2" for the l2 geometry's estimators, "linf" for the l1 geometry's,
        whose ``row_norm`` bounds rows in l-infinity.

    Returns
    -------
    bound : float
        The bound on every output row's norm. Exact (attained by some input) for one transformer
        and in l-infinity; a combined l2 bound is exact up to a rounding upwards by a relative
        1e-14, which keeps it above every row norm computed in floating point.

    Raises
    ------
    ValueError
        If a step reports no bound (named in the message), or a ``ColumnTransformer`` passes
        columns through unchanged (``remainder="passthrough"`` or a ``"passthrough"`` part),
        whose values no public parameter bounds.

    Examples
    --------
    >>> from sklearn.compose import ColumnTransformer
    >>> from dpsolve.preprocessing import (PublicCategoryEncoder, PublicRangeScaler,
    ...                                    output_row_norm)
    >>> preprocess = ColumnTransformer([
    ...     ("amounts", PublicRangeScaler([(0, 1e4), (0, 500), (0, 80)]), ["a", "b", "c"]),
    ...     ("colour", PublicCategoryEncoder([["red", "green", "blue"]]), ["colour"])])
    >>> round(output_row_norm(preprocess), 12)
    2.0
    """
    check_norm(norm)
    return _bound(transformer, norm, type(transformer).__name__)


def _bound(transformer, norm, name):
    """The bound of ``transformer`` (called ``name`` in messages)."""
    if hasattr(transformer, "steps"):
        steps = [(n, s) for n, s in transformer.steps if not (
            _is_passthrough(s) or s is None)]
        if not steps:
            raise ValueError(f"{name}: a pipeline of passthrough steps bounds no row")
        last_name, last = steps[-1]
        return _bound(last, norm, f"{name}'s step {last_name!r}")
    parts = _parts(transformer)
    if parts is not None:
        bounds = []
        for part_name, step, weight in parts:
            if _is_skipped(step):
                continue
            if _is_passthrough(step):
                raise ValueError(
                    f"{name}'s {part_name!r} passes columns through unchanged, and no public "
                    "parameter bounds their values: drop them (remainder='drop') or map them "
                    "with PublicRangeScaler or PublicCategoryEncoder")
            bounds.append(abs(weight) * _bound(step, norm, f"{name}'s {part_name!r}"))
        if norm == "linf":
            return max(bounds, default=0.0)
        return round_up(math.sqrt(math.fsum(b * b for b in bounds)))
    if not hasattr(transformer, "row_norm_bound"):
        raise ValueError(
            f"{name} ({type(transformer).__name__}) reports no row-norm bound: end the "
            "preprocessing of every column with PublicRangeScaler or PublicCategoryEncoder "
            "(dpsolve.preprocessing), whose parameters bound their output")
    return float(transformer.row_norm_bound(norm))


def leaf_steps(transformer, name):
    """Every step of ``transformer`` that is no composite, each as ``(where, step)``, looked
    for inside a ``Pipeline``, ``ColumnTransformer`` or ``FeatureUnion`` (a fitted
    ``ColumnTransformer``'s fitted parts); ``"drop"``, None and ``"passthrough"`` are none.
    ``where`` names the step from ``name``, how the messages call ``transformer``."""
    if _is_skipped(transformer) or _is_passthrough(transformer):
        return []
    if hasattr(transformer, "steps"):
        return [found for step_name, step in transformer.steps
                for found in leaf_steps(step, f"{name}'s step {step_name!r}")]
    parts = _parts(transformer)
    if parts is not None:
        return [found for part_name, step, _ in parts
                for found in leaf_steps(step, f"{name}'s {part_name!r}")]
    return [(name, transformer)]


def learned_steps(transformer, name="estimator"):
    """The steps of ``transformer`` that learn from the records when fitted, each as
    ``(where, type name)``: those whose scikit-learn ``requires_fit`` tag is True, or that have
    no tags, looked for inside a ``Pipeline``, ``ColumnTransformer`` or ``FeatureUnion``.

    Parameters
    ----------
    transformer : transformer
        A transformer, or a composite of them.
    name : str, default="estimator"
        How the messages call ``transformer``.

    Returns
    -------
    found : list of tuple
        ``(where, type name)`` of each learning step, empty if none learns.
    """
    return [(where, type(step).__name__) for where, step in leaf_steps(transformer, name)
            if not hasattr(step, "__sklearn_tags__") or step.__sklearn_tags__().requires_fit]


def private_steps(transformer, name="preprocess"):
    """The steps of ``transformer`` fitted privately (a transformer of
    :mod:`dpsolve.preprocessing` that spends epsilon, such as :class:`PrivateRangeScaler`),
    each as ``(where, step)``, looked for inside a ``Pipeline``, ``ColumnTransformer`` or
    ``FeatureUnion`` (a fitted ``ColumnTransformer``'s fitted parts).

    Parameters
    ----------
    transformer : transformer
        A transformer, or a composite of them.
    name : str, default="preprocess"
        How the messages call ``transformer``.

    Returns
    -------
    found : list of tuple
        ``(where, step)`` of each private step, empty if none spends epsilon.
    """
    return [(where, step) for where, step in leaf_steps(transformer, name)
            if getattr(step, "spends_privacy", False)]
