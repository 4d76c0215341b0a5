"""A pipeline whose private estimator takes its row bound from the public preprocessing before
it, so that the user need not work it out."""
from sklearn.base import clone
from sklearn.pipeline import make_pipeline

from .row_bounds import output_row_norm


def private_pipeline(preprocess, estimator):
    """``make_pipeline(preprocess, estimator)`` with the estimator's ``row_norm`` taken from
    the preprocessing's public parameters when not given.

    The bound is :func:`output_row_norm` of ``preprocess``, in the norm the estimator's
    geometry reads ``row_norm`` in: l2, or l-infinity for ``constraint="l1"`` (as in
    Talwar-Thakurta-Zhang 2015's Frank-Wolfe over the l1 ball). No bound is then read off the
    data, and the fit's privacy holds with the public-bound setting of
    Chaudhuri-Monteleoni-Sarwate 2011.

    Parameters
    ----------
    preprocess : transformer
        A transformer of :mod:`dpsolve.preprocessing`, or a ``ColumnTransformer``,
        ``Pipeline`` or ``FeatureUnion`` of them, whose output bound :func:`output_row_norm`
        states.
    estimator : DPLogisticRegression, DPLinearSVC or DPLinearRegression
        The private estimator; left unchanged (a clone is set) when its ``row_norm`` is given.

    Returns
    -------
    pipeline : sklearn.pipeline.Pipeline
        The preprocessing followed by the estimator (a clone of it, with ``row_norm`` set).

    Raises
    ------
    ValueError
        If ``preprocess`` reports no bound (see :func:`output_row_norm`).
    TypeError
        If ``estimator`` has no ``row_norm`` parameter.

    Examples
    --------
    >>> from dpsolve.estimators import DPLogisticRegression
    >>> from dpsolve.preprocessing import PublicRangeScaler, private_pipeline
    >>> model = private_pipeline(PublicRangeScaler([(0, 10), (0, 5), (1, 2), (0, 1)]),
    ...                          DPLogisticRegression(epsilon=1.0, classes=[0, 1]))
    >>> model[-1].row_norm
    2.0
    """
    params = estimator.get_params(deep=False) if hasattr(estimator, "get_params") else {}
    if "row_norm" not in params:
        raise TypeError(f"estimator must be one of dpsolve's estimators (with a row_norm "
                        f"parameter), got {type(estimator).__name__}")
    estimator = clone(estimator)
    if params["row_norm"] is None:
        norm = "linf" if params.get("constraint") == "l1" else "l2"
        estimator.set_params(row_norm=output_row_norm(preprocess, norm))
    return make_pipeline(preprocess, estimator)
