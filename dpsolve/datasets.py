"""Small datasets for demos and tests: generated, or shipped with scikit-learn (never downloaded).

Every transform here is applied record by record (no statistic of the whole dataset is used), so it
does not weaken a privacy guarantee stated for the transformed rows.
"""
import math

import numpy as np
from scipy import sparse

# sums in a fixed order, never BLAS's: the same data on every machine
from ._ordered_linalg import fixed_order_norm, matvec
from ._validation import check_choice, check_int, check_real, check_rng


def unit_rows(X):
    """Scale every row to unit L2 norm (rows of zeros stay zero); a per-record transform.

    Parameters
    ----------
    X : array_like, shape (n, p)
        The rows; not modified.

    Returns
    -------
    ndarray of float64, shape (n, p)
        A copy with every nonzero row divided by its L2 norm.
    """
    X = np.array(X, dtype=np.float64, copy=True)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    np.divide(X, norms, out=X, where=norms > 0)
    return X


def make_synthetic(n=1000, p=10, *, task="classification", noise=0.1, rng=None):
    """Rows uniform on the unit sphere in R^p, labels from a random linear model.

    ``task="classification"``: ``y = sign(<w, x> + noise * N(0,1))`` with ``||w|| = 1``, labels in
    {-1, +1}. ``task="regression"``: ``y = clip(<w, x> + noise * N(0,1), -1, 1)`` so ``|y| <= 1``.

    Parameters
    ----------
    n : int, default 1000
        Number of records, ``>= 1``.
    p : int, default 10
        Number of features, ``>= 1``.
    task : {"classification", "regression"}, default "classification"
        Labels in {-1, +1}, or real targets in [-1, 1].
    noise : float, default 0.1
        Standard deviation of the Gaussian noise added to ``<w, x>`` before the labels are
        taken.
    rng : None, int, SeedSequence or Generator
        Source of randomness (``numpy.random.default_rng(rng)``; a Generator advances).

    Returns
    -------
    X : ndarray, shape (n, p)
        Rows of unit norm.
    y : ndarray, shape (n,)
        Labels (float64).
    """
    n = check_int(n, "n", low=1)
    p = check_int(p, "p", low=1)
    task = check_choice(task, "task", ("classification", "regression"))
    noise = check_real(noise, "noise", low=0.0, low_inclusive=True)
    rng = check_rng(rng)
    X = unit_rows(rng.standard_normal((n, p)))
    w = rng.standard_normal(p)
    w /= fixed_order_norm(w)
    score = matvec(X, w) + noise * rng.standard_normal(n)
    if task == "classification":
        return X, np.where(score >= 0.0, 1.0, -1.0)
    return X, np.clip(score, -1.0, 1.0)


def make_separable(n=10_000, p=5, *, margin=0.001, rng=None):
    """Rows uniform on the unit sphere in R^p, linearly separable with the given margin.

    A unit vector w is drawn uniformly; points are drawn uniformly on the sphere, those with
    ``|<w, x>| < margin`` are rejected, and ``y = sign(<w, x>)``. This is the synthetic data of
    Song, Chaudhuri & Sarwate (2013): n = 10,000, p = 5, margin 0.001.

    Parameters
    ----------
    n : int, default 10000
        Number of records, ``>= 1``.
    p : int, default 5
        Number of features, ``>= 1``.
    margin : float, default 0.001
        In [0, 1): points with ``|<w, x>| < margin`` are rejected (ValueError if the margin
        rejects almost every point).
    rng : None, int, SeedSequence or Generator
        Source of randomness (``numpy.random.default_rng(rng)``; a Generator advances).

    Returns
    -------
    X : ndarray, shape (n, p)
        Rows of unit norm.
    y : ndarray, shape (n,)
        Labels ``sign(<w, x>)`` in {-1, +1} (float64).
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
        X = X[np.abs(matvec(X, w)) >= margin][: n - kept]
        rows.append(X)
        kept += X.shape[0]
    X = np.concatenate(rows)
    return X, np.where(matvec(X, w) > 0.0, 1.0, -1.0)



def zipf_weights(p, exponent=1.0):
    """The unnormalised Zipf weights ``(j + 1) ** -exponent`` of the ranks ``j = 0..p-1``, each
    computed by the C library's ``pow`` one at a time (``1 / (j + 1)`` exactly rounded for
    ``exponent = 1``): no vectorised power, whose bits can depend on the machine's SIMD.

    Parameters
    ----------
    p : int
        Number of ranks, ``>= 1``.
    exponent : float, default 1.0
        The law's exponent, ``> 0``.

    Returns
    -------
    ndarray of float64, shape (p,)
    """
    if exponent == 1.0:
        return 1.0 / np.arange(1, p + 1, dtype=np.float64)     # IEEE division: exact rounding
    return np.array([math.pow(j + 1, -exponent) for j in range(p)])


def check_zipf_settings(n, p, *, words=50, exponent=1.0, support=10, signal=1.0,
                        values="binary"):
    """:func:`make_sparse_zipf`'s settings checked and returned in order, without drawing
    anything (the sweeps check a ``zipf`` source's cells with it before any run).

    Parameters
    ----------
    n, p : int
        Rows and features, each ``>= 1``.
    words : int, default 50
        Word draws per row, ``>= 1``.
    exponent : float, default 1.0
        The Zipf exponent, ``>= 0``.
    support : int, default 10
        Non-zero coefficients of the label model, in ``[0, p]``.
    signal : float, default 1.0
        Magnitude of the label model's non-zero coefficients, ``>= 0``.
    values : {"binary", "tf"}, default "binary"
        How a row's entries are read from its word counts.

    Returns
    -------
    tuple
        ``(n, p, words, exponent, support, signal, values)``, checked.

    Raises
    ------
    TypeError
        If a setting has the wrong type.
    ValueError
        If a setting is out of its range (the message names it and the range).
    """
    n = check_int(n, "n", low=1)
    p = check_int(p, "p", low=1)
    words = check_int(words, "words", low=1)
    exponent = check_real(exponent, "exponent", low=0.0)
    support = check_int(support, "support", low=0)
    if support > p:
        raise ValueError(f"support must be an integer in [0, p] = [0, {p}], got {support}")
    signal = check_real(signal, "signal", low=0.0, low_inclusive=True)
    values = check_choice(values, "values", ("binary", "tf"))
    return n, p, words, exponent, support, signal, values


def make_sparse_zipf(n=1000, p=1000, *, words=50, exponent=1.0, support=10, signal=1.0,
                     values="binary", rng=None, return_coef=False):
    """A bag-of-words design: CSR rows of word occurrences with Zipf-distributed word
    frequencies, labels from a sparse logistic model.

    Each of the n documents draws ``words`` tokens independently from a vocabulary of p words
    whose rank-j word has probability proportional to ``(j + 1) ** -exponent`` (Zipf's law);
    row i holds, for each word present, 1 (``values="binary"``) or its count divided by
    ``words`` (``values="tf"``, term frequency). Every entry lies in [0, 1], so every row has
    l-inf norm at most 1 (exactly 1 for ``"binary"``), at most ``words`` non-zeros and l2 norm
    at most ``sqrt(words)`` (``"binary"``) or 1 (``"tf"``): public bounds for the l1 and the l2
    geometries. The coefficients ``theta_0`` have ``support`` non-zeros of magnitude ``signal``
    and random signs, on words drawn uniformly among the ``min(p, 10 support)`` most frequent;
    the labels follow the logistic link, ``P(y_i = 1) = 1 / (1 + exp(-<theta_0, x_i> - b_0))``,
    drawn as the sign of ``<theta_0, x_i> + b_0`` plus a standard logistic variable, where the
    offset ``b_0 = -E<theta_0, x>`` (from the word law: ``E x_j`` is ``1 - (1 - q_j)^words``
    for binary rows, ``q_j`` for term frequencies, ``q_j`` word j's probability) centres the
    margins, so that the classes are about balanced whichever words carry the signal.

    The same ``rng`` gives the same bits on every machine: the word law's weights are computed
    one at a time (:func:`zipf_weights`), its cumulative sum and the margins in a fixed order,
    the tokens by inverse transform of NumPy's uniform draws; no BLAS call and no vectorised
    transcendental function.

    Parameters
    ----------
    n : int, default 1000
        Number of documents (rows), ``>= 1``.
    p : int, default 1000
        Vocabulary size (columns), ``>= 1``.
    words : int, default 50
        Tokens drawn per document, ``>= 1``: a public bound on a row's non-zeros.
    exponent : float, default 1.0
        Exponent of Zipf's law, ``> 0`` (1 is the classic law of word frequencies).
    support : int, default 10
        Non-zeros of ``theta_0``, in ``[0, p]`` (0: labels independent of the rows).
    signal : float, default 1.0
        Magnitude of each non-zero of ``theta_0``, ``>= 0``.
    values : {"binary", "tf"}, default "binary"
        Occurrence (1) or term frequency (count / ``words``).
    rng : None, int, SeedSequence or Generator
        Source of randomness (``numpy.random.default_rng(rng)``; a Generator advances).
    return_coef : bool, default False
        Also return ``theta_0`` and ``b_0``.

    Returns
    -------
    X : scipy.sparse.csr_matrix of float64, shape (n, p)
        Canonical CSR (sorted indices, no duplicates, no stored zeros).
    y : ndarray, shape (n,)
        Labels in {-1, +1} (float64).
    theta_0 : ndarray, shape (p,)
        Only with ``return_coef``.
    b_0 : float
        Only with ``return_coef``: the offset of the margins.
    """
    n, p, words, exponent, support, signal, values = check_zipf_settings(
        n, p, words=words, exponent=exponent, support=support, signal=signal, values=values)
    rng = check_rng(rng)
    weights = zipf_weights(p, exponent)
    cumulative = np.cumsum(weights)                       # sequential: a fixed order
    tokens = np.searchsorted(cumulative, rng.random(n * words) * cumulative[-1], side="right")
    np.minimum(tokens, p - 1, out=tokens)                 # a draw rounding onto the total
    keys, counts = np.unique(np.repeat(np.arange(n, dtype=np.int64), words) * p + tokens,
                             return_counts=True)
    entries = (np.ones(keys.size) if values == "binary"
               else counts.astype(np.float64) / words)
    X = sparse.csr_matrix((entries, (keys // p, keys % p)), shape=(n, p))
    X.sort_indices()
    theta = np.zeros(p)
    chosen = rng.choice(min(p, 10 * support), size=support, replace=False)
    theta[chosen] = signal * rng.choice([-1.0, 1.0], size=support)
    offset = -_expected_margin(theta, weights, cumulative[-1], words, values)
    noise = rng.logistic(size=n)
    y = np.where(matvec(X, theta) + offset + noise > 0.0, 1.0, -1.0)
    return (X, y, theta, offset) if return_coef else (X, y)


def _expected_margin(theta, weights, total, words, values):
    """``E <theta, x>`` for a row of ``words`` tokens drawn with probabilities
    ``weights / total``: ``sum_j theta_j E x_j``, summed in index order, one term at a time
    (``math.pow``, no vectorised power)."""
    margin = 0.0
    for j in np.flatnonzero(theta).tolist():
        q = float(weights[j]) / float(total)
        present = q if values == "tf" else 1.0 - math.pow(1.0 - q, words)
        margin += float(theta[j]) * present
    return margin


def check_symmetric_settings(n, p, *, density=0.02):
    """:func:`make_symmetric_labels`'s settings checked and returned in order, without drawing
    anything (the sweeps check a ``symmetric`` source's cells with it before any run).

    Parameters
    ----------
    n : int
        Rows, even and ``>= 2`` (each drawn row is held twice).
    p : int
        Features, ``>= 1``.
    density : float, default 0.02
        Share of a row's entries that are non-zero, in ``(0, 1]``.

    Returns
    -------
    tuple
        ``(n, p, density, nonzeros)``, checked; ``nonzeros = max(1, round(density p))``, each
        row's number of non-zeros.

    Raises
    ------
    TypeError
        If a setting has the wrong type.
    ValueError
        If a setting is out of its range (the message names it and the range).
    """
    n = check_int(n, "n", low=2)
    if n % 2:
        raise ValueError(f"n must be an even integer >= 2 (every row is held with both labels), "
                         f"got {n}")
    p = check_int(p, "p", low=1)
    density = check_real(density, "density", low=0.0, high=1.0, high_inclusive=True)
    return n, p, density, max(1, int(round(density * p)))


def make_symmetric_labels(n=1000, p=1000, *, density=0.02, rng=None):
    r"""Sparse rows of random signs, each held twice, once with label +1 and once with -1: the
    data whose minimiser is known exactly, ``theta* = 0``, and at which every linear score ties.

    ``n / 2`` rows are drawn; each has ``k = max(1, round(density p))`` non-zeros, at distinct
    columns chosen uniformly, each ``+1`` or ``-1`` with probability 1/2. Row ``2i`` is the i-th
    draw with ``y = +1`` and row ``2i + 1`` the same draw with ``y = -1``. Every row has
    l-infinity norm 1 and l2 norm ``sqrt(k)``: public bounds for both geometries.

    For a margin loss with ``loss(m; -1) = loss(-m; +1)`` (logistic, hinge, Huber hinge, and
    squared with labels +-1) the objective is, pair by pair, an even convex function of each
    margin ``m = <theta, x>``,

    .. math:: F(\theta) = \frac{1}{n} \sum_{\text{pairs}}
              \big(\mathrm{loss}(m; +1) + \mathrm{loss}(-m; +1)\big)
              + \frac{\lambda}{2} \|\theta\|_2^2 \ \ge\ F(0),

    so ``theta* = 0`` on every ball centred at 0 (either geometry, any radius and ridge) and
    ``F* = loss(0; +1)`` (``ln 2`` for the logistic loss). The gradient at 0 is exactly 0 in
    floating point (each pair's terms cancel: entries +-1, derivatives of equal size), so every
    vertex ``+-R e_j`` of the l1 ball has the same score there. Near ``theta*`` the
    exponential mechanism of private Frank-Wolfe (Talwar-Thakurta-Zhang 2015) chooses a vertex
    on noise, and what is left after its T steps is the optimisation error of steps the noise
    chooses, which falls like 1/T: with the T its bound chooses, like ``(n epsilon)^{-2/3}``,
    the rate of its analysis. The data hold no signal to learn, so an algorithm that returns 0
    has no excess risk: this is the case where an algorithm's own error shows, not a lower
    bound for every algorithm.

    The same ``rng`` gives the same bits on every machine: integer draws only.

    Parameters
    ----------
    n : int, default 1000
        Rows, even and ``>= 2``.
    p : int, default 1000
        Features, ``>= 1``.
    density : float, default 0.02
        Share of each row's entries that are non-zero, in ``(0, 1]``.
    rng : None, int, SeedSequence or Generator
        Source of randomness (``numpy.random.default_rng(rng)``; a Generator advances).

    Returns
    -------
    X : scipy.sparse.csr_matrix of float64, shape (n, p)
        Canonical CSR (sorted indices), k non-zeros of +-1 in every row.
    y : ndarray, shape (n,)
        Labels ``+1, -1, +1, -1, ...`` (float64).
    """
    n, p, density, k = check_symmetric_settings(n, p, density=density)
    rng = check_rng(rng)
    pairs = n // 2
    columns = np.empty((pairs, k), dtype=np.int64)
    for i in range(pairs):
        columns[i] = np.sort(rng.choice(p, size=k, replace=False, shuffle=False))
    signs = 2.0 * rng.integers(0, 2, size=(pairs, k)).astype(np.float64) - 1.0
    # rows 2i and 2i + 1 are the same draw
    indices = np.repeat(columns, 2, axis=0).ravel()
    data = np.repeat(signs, 2, axis=0).ravel()
    X = sparse.csr_matrix((data, indices, np.arange(0, n * k + 1, k, dtype=np.int64)),
                          shape=(n, p))
    y = np.tile(np.array([1.0, -1.0]), pairs)
    return X, y


def load_breast_cancer():
    """scikit-learn's Wisconsin breast-cancer data (569 x 30), ``log1p`` of each feature (all are
    non-negative) and rows scaled to unit norm; labels 0 (malignant) / 1 (benign).

    Needs scikit-learn (``pip install "dpsolve[datasets]"``); raises ImportError otherwise.

    Returns
    -------
    X : ndarray, shape (569, 30)
        Rows of unit norm.
    y : ndarray, shape (569,)
        Labels 0 or 1 (float64).
    """
    from sklearn.datasets import load_breast_cancer as _load

    data = _load()
    return unit_rows(np.log1p(data.data)), data.target.astype(np.float64)


def breast_cancer_ranges():
    """Each feature's documented range in scikit-learn's breast-cancer data: the minimum and
    maximum that the dataset's description (``DESCR``, "Summary Statistics") lists.

    A private model needs feature scales chosen without reading the records; a deployment takes
    them from domain knowledge (a measurement's physical range). The documentation plays that
    part in dpsolve's examples. Those numbers were computed from these very records, so an
    example that uses them claims privacy for its fits given the ranges, not for the ranges.

    Returns
    -------
    low, high : ndarray, shape (30,)
        The documented minimum and maximum of each feature, in the columns' order.
    """
    import re

    from sklearn.datasets import load_breast_cancer as _load

    rows = re.findall(r"^([a-z][a-z ()]+?):\s+([0-9.]+)\s+([0-9.]+)\s*$", _load().DESCR,
                      re.M)
    if len(rows) != 30:
        raise RuntimeError(f"expected the 30 documented feature ranges, found {len(rows)}")
    return (np.array([float(r[1]) for r in rows]), np.array([float(r[2]) for r in rows]))


def load_digits():
    """scikit-learn's handwritten digits (1,797 images of 8 x 8 pixels, 10 classes; shipped with
    scikit-learn, never downloaded): each image scaled to unit norm and a constant feature
    appended, both times 1/sqrt(2), so rows have norm 1 and a linear model has an intercept.
    Returns ``(X, y)`` with X of shape (1797, 65) and labels 0..9 (a multinomial Problem on them
    takes ``n_classes=10``: the label set is public, never read off the data).

    Needs scikit-learn (``pip install "dpsolve[datasets]"``); raises ImportError otherwise.

    Returns
    -------
    X : ndarray, shape (1797, 65)
        Rows of unit norm, the last column the constant ``1/sqrt(2)``.
    y : ndarray of intp, shape (1797,)
        The digits 0..9.
    """
    from sklearn.datasets import load_digits as _load

    data = _load()
    X = np.hstack([unit_rows(data.data), np.ones((data.data.shape[0], 1))]) / np.sqrt(2.0)
    return X, data.target.astype(np.intp)


def owner_classes(labels, n_owners, *, max_classes=8, rng=None):
    """For each of ``n_owners`` owners, a random subset of ``max_classes`` of ``labels`` (all of
    them if there are fewer), redrawn until every label has an owner: the non-IID split of Huang et
    al. 2023's experiments (each owner holds at most 8 of the 10 classes). Deal training and test
    records with the same subsets (:func:`deal_records`) to split both alike.

    Parameters
    ----------
    labels : array_like
        The distinct class labels.
    n_owners : int
        Number of owners, ``>= 1``.
    max_classes : int, default 8
        Classes per owner, ``>= 1``.
    rng : None, int, SeedSequence or Generator
        Source of randomness (``numpy.random.default_rng(rng)``; a Generator advances).

    Returns
    -------
    list of ndarray
        One array of ``min(max_classes, len(labels))`` distinct labels per owner; together they
        cover every label (ValueError if 1000 draws never do).
    """
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
    ``classes[j]`` contain it. Returns one sorted index array per owner.

    Parameters
    ----------
    y : array_like, shape (n,)
        The records' labels.
    classes : sequence of array_like
        ``classes[j]``: the labels owner j holds (e.g. from :func:`owner_classes`); every label
        of ``y`` must have an owner (ValueError otherwise).
    rng : None, int, SeedSequence or Generator
        Source of randomness (``numpy.random.default_rng(rng)``; a Generator advances).

    Returns
    -------
    list of ndarray of int
        For each owner, the sorted indices into ``y`` of its records (possibly empty). The
        records of a class are split into parts whose sizes differ by at most one.
    """
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
