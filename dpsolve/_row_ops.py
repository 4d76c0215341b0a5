"""The rows of X, dense or sparse: what the solvers and kernels need of them.

A :class:`~dpsolve.Problem` holds X either as a C-contiguous float64 or float32 array or as a
canonical ``scipy.sparse.csr_array`` (sorted indices, no duplicates, intp index arrays, float64
or float32 data). The kernels take either (``_kernels/_rows.pxd``); a CSR row costs its stored
entries, and the results are bit-identical to those of the same matrix stored densely.

float32 is a storage format only: every operation on X's entries here runs in float64 on the
exact values (a float32 converts to float64 exactly), one block of rows at a time, so each
result is bit-identical to the same call on ``X.astype(np.float64)``.
"""
import numpy as np
from scipy import sparse


def as_float64(X):
    """``X`` (dense or CSR) with its values in float64: ``X`` itself when they already are,
    else a float64 copy (exact). Used on blocks of rows, never on all of a large X."""
    if X.dtype == np.float64:
        return X
    return X.astype(np.float64) if sparse.issparse(X) else np.asarray(X, dtype=np.float64)


def kernel_rows(X):
    """X as the kernels take it: the array itself, or ``(indptr, indices, data, n, p)`` of a
    CSR matrix (index arrays of dtype intp); float32 values are passed as they are (the
    kernels read them into float64)."""
    if not sparse.issparse(X):
        return X
    return (np.asarray(X.indptr, dtype=np.intp), np.asarray(X.indices, dtype=np.intp),
            X.data, X.shape[0], X.shape[1])


#: Below this a row's plain norm may have lost precision to underflow (its squares are
#: subnormal), and an infinite one may be an overflow of the squares alone: such rows are
#: recomputed after scaling (2**-480: the sum of squares is then above 2**-960, where the
#: subnormal terms add a relative error below p 2**-62).
_PLAIN_NORM_FLOOR = 2.0 ** -480


def _row_max_abs(X, rows):
    """The largest ``|x_ij|`` of each row flagged in ``rows`` (0 elsewhere and for rows
    without a nonzero entry), dense or CSR."""
    # |x| and max are exact: float32 entries give the float64 copy's values
    out = np.zeros(X.shape[0])
    if sparse.issparse(X):
        owner = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        keep = rows[owner]
        np.maximum.at(out, owner[keep], np.abs(X.data[keep]))
    else:
        index = np.flatnonzero(rows)
        for start in range(0, index.size, 4096):
            block = index[start:start + 4096]
            out[block] = np.max(np.abs(X[block]), axis=1)
    return out


def _scaled_norms(X, rows):
    """``||x_i||`` of the rows flagged in ``rows`` as ``m ||x_i / m||`` with m the row's
    largest ``|entry|`` (as LAPACK's dnrm2 scales), so that neither the squares' overflow nor
    their underflow decides the result; inf only where the norm itself exceeds the float64
    range. Entries of the other rows are 0."""
    m = _row_max_abs(X, rows)
    safe = np.where(m > 0.0, m, 1.0)
    out = np.zeros(X.shape[0])
    # entries far below the largest underflow harmlessly; m sqrt(s) overflows only when the
    # norm itself is beyond float64
    with np.errstate(over="ignore", under="ignore"):
        if sparse.issparse(X):
            owner = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
            keep = rows[owner]
            scaled = as_float64(X.data[keep]) / safe[owner[keep]]
            sums = np.bincount(owner[keep], weights=scaled * scaled, minlength=X.shape[0])
            out[rows] = m[rows] * np.sqrt(sums[rows])
        else:
            index = np.flatnonzero(rows)
            for start in range(0, index.size, 4096):
                block = index[start:start + 4096]
                out[block] = m[block] * np.linalg.norm(as_float64(X[block]) / safe[block, None],
                                                       axis=1)
    return out


def row_norms(X):
    """``||x_i||_2`` of every row, without a temporary of X's size.

    Dense: ``np.linalg.norm`` by blocks of rows (the same values as on all of X at once; a
    float32 block is converted to float64 first, as ``np.linalg.norm`` would sum float32 in
    single precision). CSR:
    from the stored entries, summed in column order (one n-vector and one nnz-vector; the last
    bit may differ from the dense value, which sums pairwise). A row whose plain norm is not
    finite or below ``2**-480`` (its squares overflowed or underflowed) is recomputed as
    ``m ||x_i / m||``, m its largest ``|entry|``: a row of 1e200s has norm ``1e200 sqrt(p)``,
    not inf. The result is inf only where the norm itself exceeds the float64 range.
    """
    # the squares may overflow or underflow: those rows are recomputed below
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        if sparse.issparse(X):
            rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
            data = as_float64(X.data)
            out = np.sqrt(np.bincount(rows, weights=data * data, minlength=X.shape[0]))
        else:
            out = np.empty(X.shape[0])
            for start in range(0, X.shape[0], 4096):
                out[start:start + 4096] = np.linalg.norm(as_float64(X[start:start + 4096]),
                                                         axis=1)
        redo = ~(out >= _PLAIN_NORM_FLOOR) | np.isinf(out)
    if sparse.issparse(X):
        redo &= np.diff(X.indptr) > 0           # a row without entries has norm 0
    if np.any(redo):
        out[redo] = _scaled_norms(X, redo)[redo]
    return out


def row_max_norms(X):
    """``||x_i||_inf`` (the largest ``|x_ij|``) of every row, as float64, without a temporary
    of X's size: dense by blocks of rows, CSR from the stored entries (a row without entries
    has norm 0). ``abs`` and ``max`` are exact, so float32 X gives its float64 copy's values
    and the result never overflows; a NaN entry makes its row's norm NaN."""
    out = np.zeros(X.shape[0])
    if sparse.issparse(X):
        counts = np.diff(X.indptr)
        full = counts > 0
        if np.any(full):
            # reduceat at the starts of the rows with entries (each segment is one row)
            out[full] = np.maximum.reduceat(np.abs(X.data), X.indptr[:-1][full])
        return out
    for start in range(0, X.shape[0], 4096):
        out[start:start + 4096] = np.max(np.abs(X[start:start + 4096]), axis=1)
    return out


def dual_row_norms(X, constraint):
    """The rows' norms in the dual norm of ``constraint``'s: ``||x_i||_2``
    (:func:`row_norms`) for ``"l2"``, ``||x_i||_inf`` (:func:`row_max_norms`) for ``"l1"``
    (docs/conventions.md, "The l1 geometry")."""
    return row_max_norms(X) if constraint == "l1" else row_norms(X)


def scale_rows(X, factors):
    """Multiply row i of X by ``factors[i]``, in place (dense or CSR; a factor of 1 leaves its
    row's bits unchanged). Float32 X: each product is taken in float64 and rounded once to
    float32."""
    if sparse.issparse(X):
        X.data *= np.repeat(factors, np.diff(X.indptr))
    else:
        X *= factors[:, None]


def scale_rows_onto(X, rows, bound, norms, constraint="l2"):
    """Scale each row flagged in ``rows`` onto the sphere of radius ``bound``, in place (dense
    or CSR), keeping its direction.

    Parameters
    ----------
    X : ndarray or scipy.sparse.csr_array
        Modified in place.
    rows : ndarray of bool
        The rows to scale; each must have a norm above 0.
    bound : float
        The target norm, ``> 0``.
    norms : ndarray
        :func:`dual_row_norms` of X for ``constraint``.
    constraint : {"l2", "l1"}, default "l2"
        The sphere is the one of the dual norm of the constraint's: l2 for ``"l2"``, l-inf
        for ``"l1"``.

    Notes
    -----
    Where ``bound / norm`` is a normal number the row is multiplied by it, once (the bits of
    every earlier release). Otherwise (a norm beyond the float64 range, or so far above the
    bound that the factor underflows) the row is first divided by its largest ``|entry|``, then
    scaled onto the bound: multiplying by ``bound / inf = 0`` would turn it into the zero
    vector, not a vector of norm ``bound``.
    """
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        factors = np.where(rows, bound / np.where(rows, norms, 1.0), 1.0)
    direct = rows & (factors >= np.finfo(np.float64).tiny)
    scale_rows(X, np.where(direct, factors, 1.0))
    rescue = rows & ~direct
    if np.any(rescue):
        m = _row_max_abs(X, rescue)
        divisor = np.where(rescue, m, 1.0)
        with np.errstate(under="ignore"):    # entries far below the largest may vanish
            if sparse.issparse(X):
                X.data /= np.repeat(divisor, np.diff(X.indptr))
            else:
                X /= divisor[:, None]
            # now every such row has entries in [-1, 1] and norm in [1, sqrt(p)]
            scaled = dual_row_norms(X, constraint)
            scale_rows(X, np.where(rescue, bound / np.where(rescue, scaled, 1.0), 1.0))


def weighted_gram(X, w):
    """``X^T diag(w) X`` as a dense (p, p) array (dense or CSR X; float32 X converted to
    float64 first, as a product of two float32 operands would be taken in single precision).
    Called on blocks of rows (:func:`dpsolve._ordered_linalg.weighted_gram`)."""
    X = as_float64(X)
    if sparse.issparse(X):
        return (X.T @ X.multiply(w[:, None]).tocsr()).toarray()
    return (X.T * w) @ X


def refuse_sparse(problem, what, takers):
    """Raise a TypeError naming ``what`` if ``problem.X`` is sparse, with the solvers that
    take it.

    Parameters
    ----------
    problem : Problem
        The problem to check.
    what : str
        The caller, named in the message.
    takers : sequence of str
        The solvers that take a sparse X (``SolverSpec.sparse`` in the registry), named in the
        message; the caller supplies them, as this module sits below the registry.

    Notes
    -----
    X in chunks of rows (a :class:`dpsolve.chunked.RowChunks`) is refused too: these callers
    (the multi-party protocols, the audit's neighbours) index rows at random.
    """
    if getattr(type(problem.X), "_row_chunks", False) is True:
        raise TypeError(f"{what} does not take X in chunks of rows (a Dask array or a "
                        "RowChunks): it needs random access to the rows; pass X in memory")
    if sparse.issparse(problem.X):
        raise TypeError(
            f"{what} does not take a sparse X; the solvers that do are "
            f"{', '.join(takers)} (or pass X.toarray() if it fits in memory)")
