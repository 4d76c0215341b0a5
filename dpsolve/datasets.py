"""Small datasets for demos and tests: generated, or shipped with scikit-learn (never downloaded).

Every transform here is applied record by record (no statistic of the whole dataset is used), so it
does not weaken a privacy guarantee stated for the transformed rows.
"""
import numpy as np

from ._validation import check_choice, check_int, check_rng


def unit_rows(X):
    """Scale every row to unit L2 norm (rows of zeros stay zero); a per-record transform."""
    X = np.array(X, dtype=np.float64, copy=True)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    np.divide(X, norms, out=X, where=norms > 0)
    return X


def make_synthetic(n=1000, p=10, *, task="classification", noise=0.1, rng=None):
    """Rows uniform on the unit sphere in R^p, labels from a random linear model.

    ``task="classification"``: ``y = sign(<w, x> + noise * N(0,1))`` with ``||w|| = 1``, labels in
    {-1, +1}. ``task="regression"``: ``y = clip(<w, x> + noise * N(0,1), -1, 1)`` so ``|y| <= 1``.
    """
    n = check_int(n, "n", low=1)
    p = check_int(p, "p", low=1)
    task = check_choice(task, "task", ("classification", "regression"))
    rng = check_rng(rng)
    X = unit_rows(rng.standard_normal((n, p)))
    w = rng.standard_normal(p)
    w /= np.linalg.norm(w)
    score = X @ w + noise * rng.standard_normal(n)
    if task == "classification":
        return X, np.where(score >= 0.0, 1.0, -1.0)
    return X, np.clip(score, -1.0, 1.0)


def load_breast_cancer():
    """scikit-learn's Wisconsin breast-cancer data (569 x 30), ``log1p`` of each feature (all are
    non-negative) and rows scaled to unit norm; labels 0 (malignant) / 1 (benign).

    Needs scikit-learn (``pip install "dpsolve[datasets]"``); raises ImportError otherwise.
    """
    from sklearn.datasets import load_breast_cancer as _load

    data = _load()
    return unit_rows(np.log1p(data.data)), data.target.astype(np.float64)
