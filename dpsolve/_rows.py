"""The rows of X, dense or sparse: what the solvers and kernels need of them.

A :class:`~dpsolve.Problem` holds X either as a C-contiguous float64 array or as a canonical
``scipy.sparse.csr_array`` (sorted indices, no duplicates, intp index arrays). The kernels take
either (``_kernels/_rows.pxd``); a CSR row costs its stored entries, and the results are
bit-identical to those of the same matrix stored densely.
"""
import numpy as np
from scipy import sparse


def kernel_rows(X):
    """X as the kernels take it: the array itself, or ``(indptr, indices, data, n, p)`` of a
    CSR matrix (index arrays of dtype intp)."""
    if not sparse.issparse(X):
        return X
    return (np.asarray(X.indptr, dtype=np.intp), np.asarray(X.indices, dtype=np.intp),
            X.data, X.shape[0], X.shape[1])


def row_norms(X):
    """``||x_i||_2`` of every row, without a temporary of X's size.

    Dense: ``np.linalg.norm`` by blocks of rows (the same values as on all of X at once). CSR:
    from the stored entries, summed in column order (one n-vector and one nnz-vector; the last
    bit may differ from the dense value, which sums pairwise).
    """
    if sparse.issparse(X):
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        return np.sqrt(np.bincount(rows, weights=X.data * X.data, minlength=X.shape[0]))
    out = np.empty(X.shape[0])
    for start in range(0, X.shape[0], 4096):
        out[start:start + 4096] = np.linalg.norm(X[start:start + 4096], axis=1)
    return out


def scale_rows(X, factors):
    """Multiply row i of X by ``factors[i]``, in place (dense or CSR; a factor of 1 leaves its
    row's bits unchanged)."""
    if sparse.issparse(X):
        X.data *= np.repeat(factors, np.diff(X.indptr))
    else:
        X *= factors[:, None]


def weighted_gram(X, w):
    """``X^T diag(w) X`` as a dense (p, p) array (dense or CSR X)."""
    if sparse.issparse(X):
        return (X.T @ X.multiply(w[:, None]).tocsr()).toarray()
    return (X.T * w) @ X


def sparse_solvers():
    """The registered solvers that take a sparse X (``SolverSpec.sparse``)."""
    from .solvers import registry
    return tuple(spec.name for spec in registry() if spec.sparse)


def refuse_sparse(problem, what):
    """Raise a TypeError naming ``what`` if ``problem.X`` is sparse, with the solvers that
    take it."""
    if sparse.issparse(problem.X):
        raise TypeError(
            f"{what} does not take a sparse X; the solvers that do are "
            f"{', '.join(sparse_solvers())} (or pass X.toarray() if it fits in memory)")
