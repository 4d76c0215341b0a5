"""Checks of the records and the model shared by the scorers and the grid search: each refuses,
with a TypeError or ValueError naming the argument, what a private step would otherwise refuse
after the budget is charged."""
import numpy as np


def labels(y):
    """``y`` as a 1-D array, or a ValueError naming it."""
    if y is None:
        raise ValueError("y must be given: the records' labels, one per row of X")
    y = np.asarray(y)
    if y.ndim != 1 or len(y) == 0:
        raise ValueError(f"y must be a non-empty 1-D array of labels, got shape {y.shape}")
    return y


def check_rows(X, y):
    """X and y hold the same number of records (a public count: n is not private here)."""
    from sklearn.utils.validation import _num_samples
    try:
        rows = _num_samples(X)
    except TypeError as exc:
        raise TypeError(f"X must be an array-like of records: {exc}") from None
    if rows != len(y):
        raise ValueError(f"X and y must hold the same number of records, got {rows} rows "
                         f"and {len(y)} labels")


def model_rows(estimator, X):
    """The fitted private model and the rows it will read: ``X`` through a pipeline's
    transformers (fitted, so public with the model), checked to be real, finite and of the
    model's number of features.

    A message to the data holder before any charge, as a fit's refusal of a NaN row is: a
    score must not be charged and then fail on rows it could have refused.
    """
    from sklearn.utils.validation import check_is_fitted
    check_is_fitted(estimator)
    final = final_step(estimator)
    if hasattr(estimator, "steps"):
        X = estimator[:-1].transform(X)
    # checked on a converted copy; the model predicts on X as given (feature names kept)
    checked = real_finite_rows(X)
    expected = getattr(final, "n_features_in_", None)
    if expected is not None and checked.shape[1] != expected:
        raise ValueError(f"X has {checked.shape[1]} features, but {type(final).__name__} was "
                         f"fitted with {expected}")
    return final, X


def real_finite_rows(X):
    """``X`` as a checked array (a copy where it must be converted): real numbers, finite, 2-D,
    else a TypeError or ValueError naming X."""
    from sklearn.utils.validation import check_array
    if hasattr(X, "dtype") and np.issubdtype(X.dtype, np.complexfloating):
        raise TypeError("X must hold real numbers, got complex values")
    return check_array(X, accept_sparse="csr", dtype="numeric", ensure_all_finite=True,
                       input_name="X")


def check_real_labels(y):
    """A regressor's labels (an array) are real and finite, or a TypeError/ValueError naming
    y (a NaN label would make every noisy score NaN)."""
    if not (np.issubdtype(y.dtype, np.floating) or np.issubdtype(y.dtype, np.integer)):
        raise TypeError(f"y must hold real numbers, got dtype {y.dtype}")
    if not np.all(np.isfinite(y)):
        raise ValueError("y must be finite")


def kind_of(final):
    """"classifier" or "regressor" (scikit-learn's tags), or None for neither."""
    from sklearn.base import is_classifier, is_regressor
    if is_regressor(final):
        return "regressor"
    if is_classifier(final):
        return "classifier"
    return None


def final_step(model):
    """The private estimator: the model itself, or a pipeline's last step."""
    if hasattr(model, "steps"):
        step = model.steps[-1][1]
        if step is None or isinstance(step, str):
            raise TypeError(f"estimator: the pipeline must end in one of dpsolve's "
                            f"classifiers, got {step!r}")
        return step
    return model
