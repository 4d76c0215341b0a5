"""The per-chunk functions of :class:`dpsolve.rows.RowChunks`, run where each chunk lives.

Module level, so that they are pickled to Dask's workers. A chunk is the tuple
``(X_c, y_c, norms_c)``, ``norms_c`` None until the chunk is validated. Each reduction is the
call :class:`dpsolve.rows.MemoryRows` makes on all the rows, made on the chunk's rows: the
same kernels, called the same way.
"""
import numpy as np
from scipy import sparse

from .. import _ordered_linalg
from .._row_ops import kernel_rows, row_norms
from ._memory import clipped_sum, kernel_scratch


def norms_of(chunk):
    """The chunk's row norms: kept beside it once validated, else computed."""
    X, _, norms = chunk
    return row_norms(X) if norms is None else norms


def _dense_ready(X):
    """X as the kernels take it: CSR as it is, a dense chunk C-contiguous in float32 or
    float64 (a copy only when it is not already; a validated chunk never needs one)."""
    if sparse.issparse(X):
        return X
    if X.dtype not in (np.float32, np.float64):
        return np.ascontiguousarray(X, dtype=np.float64)
    return np.ascontiguousarray(X)


def _clipped_sum(chunk, theta, loss, clip, rows=None):
    """The clipped gradient sum of one chunk (:func:`dpsolve.rows._memory.clipped_sum`, the
    loss's kernel) and its clipped count."""
    X, y, _ = chunk
    out = np.empty(theta.shape)
    clipped = clipped_sum(kernel_rows(_dense_ready(X)), y, theta, loss, norms_of(chunk),
                          float(clip), out, kernel_scratch(theta), rows)
    return out, int(clipped)


def _poisson_rows(seed, n, rate):
    """The rows of a chunk of n rows that Poisson sampling at ``rate`` keeps, from ``seed``."""
    return np.flatnonzero(np.random.default_rng(seed).random(n) < rate).astype(np.intp)


def clipped_sum_task(chunk, theta, loss, clip):
    """One chunk's clipped gradient sum and clipped count."""
    return _clipped_sum(chunk, theta, loss, clip)


def sampled_sum_task(chunk, seed, theta, loss, clip, rate):
    """One chunk's clipped gradient sum over its own Poisson sample, drawn from ``seed``."""
    # only the sum leaves the worker: not the seed, the sampled rows or their count
    rows = _poisson_rows(seed, chunk[0].shape[0], rate)
    return _clipped_sum(chunk, theta, loss, clip, rows)[0]


def matvec_task(chunk, v):
    """One chunk's ``X_c @ v``."""
    return _ordered_linalg.matvec(_dense_ready(chunk[0]), v)


def rmatvec_task(chunk, r):
    """One chunk's ``X_c.T @ r_c``."""
    return _ordered_linalg.rmatvec(_dense_ready(chunk[0]), r)


def weighted_gram_task(chunk, w):
    """One chunk's ``X_c^T diag(w_c) X_c`` by blocks of rows."""
    return _ordered_linalg.weighted_gram(_dense_ready(chunk[0]), w)


def fixed_order_gram_task(chunk, w):
    """One chunk's ``X_c^T diag(w_c) X_c`` summed in row order."""
    return _ordered_linalg.fixed_order_gram(_dense_ready(chunk[0]), w)


def row_norms_task(chunk):
    """One chunk's row norms."""
    return norms_of(chunk)


def labels_task(chunk):
    """One chunk's labels."""
    return np.asarray(chunk[1])


def derive_task(chunk, fn, shared):
    """``fn(X_c, y_c, *shared)`` -> ``((X, y), info)``: the new chunk ``(X, y, its row
    norms)``, kept where it is, and for the driver ``info`` with the new chunk's layout."""
    X, y, _ = chunk
    (X, y), info = fn(X, y, *shared)
    return (X, y, row_norms(X)), (info, (tuple(X.shape), np.dtype(X.dtype), tuple(np.shape(y))))


class MapCall:
    """``fn(X_c, y_c, *args_c, **kwargs)`` as a picklable callable taking the chunk first."""

    def __init__(self, fn, kwargs):
        self.fn, self.kwargs = fn, dict(kwargs)

    def __call__(self, chunk, *args):
        X, y, _ = chunk
        return self.fn(X, y, *args, **self.kwargs)
