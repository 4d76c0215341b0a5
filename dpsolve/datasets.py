"""Small datasets for demos and tests: generated, or shipped with scikit-learn (never downloaded).

Every transform here is applied record by record (no statistic of the whole dataset is used), so it
does not weaken a privacy guarantee stated for the transformed rows.
"""
import numpy as np

from ._validation import check_choice, check_int, check_real, check_rng


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


def make_separable(n=10_000, p=5, *, margin=0.001, rng=None):
    """Rows uniform on the unit sphere in R^p, linearly separable with the given margin.

    A unit vector w is drawn uniformly; points are drawn uniformly on the sphere, those with
    ``|<w, x>| < margin`` are rejected, and ``y = sign(<w, x>)``. This is the synthetic data of
    Song, Chaudhuri & Sarwate (2013): n = 10,000, p = 5, margin 0.001.
    """
    n = check_int(n, "n", low=1)
    p = check_int(p, "p", low=1)
    margin = check_real(margin, "margin", low=0.0, high=1.0, low_inclusive=True)
    rng = check_rng(rng)
    w = unit_rows(rng.standard_normal((1, p)))[0]
    rows = []
    kept = 0
    for rounds in range(10_001):
        if kept == n:
            break
        if rounds == 10_000:
            raise ValueError(f"margin={margin:g} rejects almost every point in p={p} "
                             "dimensions; choose a smaller margin")
        X = unit_rows(rng.standard_normal((2 * (n - kept) + 16, p)))
        X = X[np.abs(X @ w) >= margin][: n - kept]
        rows.append(X)
        kept += X.shape[0]
    X = np.concatenate(rows)
    return X, np.where(X @ w > 0.0, 1.0, -1.0)


def load_breast_cancer():
    """scikit-learn's Wisconsin breast-cancer data (569 x 30), ``log1p`` of each feature (all are
    non-negative) and rows scaled to unit norm; labels 0 (malignant) / 1 (benign).

    Needs scikit-learn (``pip install "dpsolve[datasets]"``); raises ImportError otherwise.
    """
    from sklearn.datasets import load_breast_cancer as _load

    data = _load()
    return unit_rows(np.log1p(data.data)), data.target.astype(np.float64)


def load_digits():
    """scikit-learn's handwritten digits (1,797 images of 8 x 8 pixels, 10 classes; shipped with
    scikit-learn, never downloaded): each image scaled to unit norm and a constant feature
    appended, both times 1/sqrt(2), so rows have norm 1 and a linear model has an intercept.
    Returns ``(X, y)`` with X of shape (1797, 65) and labels 0..9 (a multinomial Problem on them
    takes ``n_classes=10``: the label set is public, never read off the data).

    Needs scikit-learn (``pip install "dpsolve[datasets]"``); raises ImportError otherwise.
    """
    from sklearn.datasets import load_digits as _load

    data = _load()
    X = np.hstack([unit_rows(data.data), np.ones((data.data.shape[0], 1))]) / np.sqrt(2.0)
    return X, data.target.astype(np.intp)


def owner_classes(labels, n_owners, *, max_classes=8, rng=None):
    """For each of ``n_owners`` owners, a random subset of ``max_classes`` of ``labels`` (all of
    them if there are fewer), redrawn until every label has an owner: the non-IID split of Huang et
    al. 2023's experiments (each owner holds at most 8 of the 10 classes). Deal training and test
    records with the same subsets (:func:`deal_records`) to split both alike."""
    n_owners = check_int(n_owners, "n_owners", low=1)
    max_classes = check_int(max_classes, "max_classes", low=1)
    rng = check_rng(rng)
    labels = np.asarray(labels)
    size = min(max_classes, labels.size)
    for _ in range(1000):
        subsets = [rng.choice(labels, size=size, replace=False) for _ in range(n_owners)]
        if np.unique(np.concatenate(subsets)).size == labels.size:
            return subsets
    raise ValueError(f"{n_owners} owners with {max_classes} classes each cannot cover "
                     f"{labels.size} classes")


def deal_records(y, classes, *, rng=None):
    """Deal the records of each class evenly, in random order, among the owners whose
    ``classes[j]`` contain it. Returns one sorted index array per owner."""
    rng = check_rng(rng)
    y = np.asarray(y)
    owned = [[] for _ in classes]
    for label in np.unique(y):
        holders = [j for j, c in enumerate(classes) if label in c]
        if not holders:
            raise ValueError(f"class {label!r} has no owner")
        rows = rng.permutation(np.flatnonzero(y == label))
        offset = int(rng.integers(len(holders)))    # who gets the larger parts
        for position, part in enumerate(np.array_split(rows, len(holders))):
            owned[holders[(position + offset) % len(holders)]].append(part)
    return [np.sort(np.concatenate(parts)) if parts else np.empty(0, dtype=np.intp)
            for parts in owned]
