"""NumPy's linear algebra with sums whose order does not depend on any thread count.

OpenBLAS splits a product's sums among its threads: ``X.T @ r`` at n = 2·10⁴, p = 50 already
differs in the last bits between one BLAS thread and two. A Dask worker starts with one BLAS
thread and the local process with one per core, so a NumPy solve would not give a cluster the
local bits. dpsolve therefore runs its NumPy solves (θ*'s Newton steps and certificate, the
perturbation solvers' inner solves, every solver's fit) with BLAS held at one thread
(:class:`one_blas_thread`, through threadpoolctl, as scikit-learn holds BLAS around its own
OpenMP loops), and gets the cores back where the work is: ``X^T r`` is a kernel
(``gd.weighted_row_sum``, 64 fixed blocks of rows added in block order; :func:`rmatvec`), so is
``X theta`` (``gd.row_margins``, each row summed in column order: the same bits for X dense or
CSR; :func:`matvec`), and the Hessian's ``X^T diag(w) X`` runs by fixed blocks of rows on
dpsolve's threads (:func:`blocked_sum`). The order of every sum then depends on the shapes only
(docs/performance.md, "Same bits for any thread count").

X may hold float32 values (a storage format only): the kernels read them into float64, and the
NumPy paths here convert a block of rows (or, where BLAS sums over all rows, all of X) to
float64 before the product, so every result equals the one on ``X.astype(np.float64)``.
"""
import contextlib
import importlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy import sparse

_lock = threading.Lock()
_controller = None
_depth = 0              # nested or concurrent holders of the one-thread limit
_limiter = None
_pools = {}             # (pid, threads) -> executor; a forked child makes its own


class one_blas_thread(contextlib.ContextDecorator):
    """Context manager (or, called, decorator): BLAS (NumPy's and SciPy's OpenBLAS, or MKL)
    runs one thread inside.

    Re-entrant and safe across threads: the limit is set by the first holder and the original
    thread counts restored when the last one leaves, so a fit running in another thread keeps
    its one thread until it is done. OpenMP (dpsolve's kernels) is not affected.
    """

    def __enter__(self):
        global _controller, _depth, _limiter
        with _lock:
            if _depth == 0:
                if _controller is None:
                    from threadpoolctl import ThreadpoolController
                    importlib.import_module("scipy.linalg")     # its BLAS, limited too
                    _controller = ThreadpoolController()
                _limiter = _controller.limit(limits=1, user_api="blas")
            _depth += 1
        return self

    def __exit__(self, *exc):
        global _depth, _limiter
        with _lock:
            _depth -= 1
            if _depth == 0:
                _limiter.restore_original_limits()
                _limiter = None
        return False


#: Rows per block of :func:`row_blocks` by default (and terms per block of the reference
#: certificate's two-level sums, ``reference/_certificate.py``).
BLOCK_ROWS = 4096


def row_blocks(n, rows=BLOCK_ROWS):
    """Slices of at most ``rows`` consecutive rows covering ``range(n)``, in order: the fixed
    blocks of rows whose results :func:`blocked_sum` adds in block order (the layout depends on
    ``n`` and ``rows`` only, never on a thread count)."""
    return [slice(a, min(a + rows, n)) for a in range(0, n, rows)]


def _pool(threads):
    key = (os.getpid(), threads)
    with _lock:
        pool = _pools.get(key)
        if pool is None:
            pool = _pools[key] = ThreadPoolExecutor(threads, thread_name_prefix="dpsolve-blas")
        return pool


def _in_order(block_result, blocks):
    """``block_result(b)`` for every block of ``blocks``, yielded in block order, computed on up
    to as many threads as dpsolve's kernels use in this thread
    (``dpsolve._kernels.threads.max_threads``), at most two blocks ahead per thread, with BLAS
    at one thread."""
    from ._kernels.threads import max_threads
    threads = min(max_threads(), len(blocks))
    with one_blas_thread():
        if threads <= 1:
            for b in blocks:
                yield block_result(b)
            return
        pool = _pool(threads)
        window = 2 * threads
        pending = [pool.submit(block_result, b) for b in blocks[:window]]
        for i in range(len(blocks)):
            result = pending[i].result()
            if i + window < len(blocks):
                pending.append(pool.submit(block_result, blocks[i + window]))
            pending[i] = None
            yield result


def blocked_sum(block_result, blocks, out):
    """``out += block_result(b)`` for every block ``b`` of ``blocks``, in that order, the
    blocks computed on dpsolve's threads (:func:`_in_order`): the same bits for any thread
    count."""
    for result in _in_order(block_result, blocks):
        out += result
    return out


def weighted_gram(X, w):
    """``X^T diag(w) X`` (dense or CSR X) by blocks of rows (:func:`blocked_sum`): the same bits
    for any thread count, on every thread dpsolve's kernels may use."""
    from ._row_ops import weighted_gram as block_gram
    p = X.shape[1]
    return blocked_sum(lambda s: block_gram(X[s], w[s]), row_blocks(X.shape[0]),
                       np.zeros((p, p)))


def matvec(X, v):
    """``X @ v`` (dense or CSR X). For v of shape (p,): dpsolve's kernel (``gd.row_margins``),
    each row summed over its columns in order, on its threads: the same bits for any thread
    count, and for X dense or CSR. For v of shape (p, K): by blocks of rows on dpsolve's
    threads, one single-threaded BLAS product per block (each row's value is one block's, so
    the bits do not depend on the thread count); CSR: SciPy's product (sequential; float32 CSR
    by blocks of rows converted to float64, each row's sum as on the float64 matrix)."""
    if v.ndim == 1:
        from ._kernels import gd
        from ._row_ops import kernel_rows
        out = np.empty(X.shape[0])
        gd.row_margins(kernel_rows(X), np.ascontiguousarray(v, dtype=np.float64), out)
        return out
    from ._row_ops import as_float64
    if sparse.issparse(X):
        if X.dtype == np.float64:
            return X @ v
        out = np.empty((X.shape[0],) + v.shape[1:])
        for s in row_blocks(X.shape[0]):
            out[s] = as_float64(X[s]) @ v
        return out
    out = np.empty((X.shape[0],) + v.shape[1:])
    blocks = row_blocks(X.shape[0])
    # the generator first, so that it runs to its end (and leaves the BLAS limit) in the loop
    for value, s in zip(_in_order(lambda s: as_float64(X[s]) @ v, blocks), blocks):
        out[s] = value
    return out


def rmatvec(X, r):
    """``X.T @ r`` (dense or CSR X). For r of shape (n,): dpsolve's kernel, 64 fixed blocks of
    rows on its threads added in block order (faster than BLAS on two threads; measured in
    docs/performance.md). For r of shape (n, K): BLAS (at one thread inside dpsolve's solves)
    over all rows at once; float32 X is first converted to a float64 copy (of X's size: BLAS's
    order of the sum over the rows cannot be reproduced block by block)."""
    if r.ndim == 1:
        from ._kernels import gd
        from ._row_ops import kernel_rows
        p = X.shape[1]
        out = np.empty(p)
        gd.weighted_row_sum(kernel_rows(X), np.ascontiguousarray(r, dtype=np.float64), out,
                            np.empty((64, p)))
        return out
    from ._row_ops import as_float64
    with one_blas_thread():
        return as_float64(X).T @ r


# -- sums in one fixed order on every machine (no BLAS) ----------------------------------------
# OpenBLAS picks its kernels per CPU (Haswell, SkylakeX, Sandybridge, ...), and they add in
# different orders: a result computed with BLAS may differ in its last bits between two
# machines with the same NumPy. The functions below are dpsolve's kernels
# (``_kernels/linalg.pyx``), whose every sum has an order fixed by the data's shape alone: the
# same bits on every x86-64 machine, for any thread count. The perturbation solvers' inner
# solves, whose result is released plus noise, use only these.

def fixed_order_gram(X, w):
    """``X^T diag(w) X`` (dense or CSR X, float64 or float32) with every entry summed over the
    rows in row order (``linalg.weighted_gram``): the same bits on every machine and for any
    thread count, and for X dense, CSR or float32 (as on its float64 copy). Rows in chunks:
    :meth:`dpsolve.rows.RowChunks.fixed_order_gram`, this on each chunk."""
    from ._kernels import linalg
    from ._row_ops import kernel_rows
    p = X.shape[1]
    out = np.empty((p, p))
    linalg.weighted_gram(kernel_rows(X), np.ascontiguousarray(w, dtype=np.float64), out)
    return out


def cholesky_solve(H, b):
    """``H^{-1} b`` for a symmetric positive definite H by Cholesky (``linalg.cholesky`` and
    ``linalg.cholesky_solve``, every sum in a fixed order), or None if a pivot was not a
    positive finite number (H not numerically positive definite). H is not modified.

    Returns
    -------
    (x, factor) or None
        ``factor`` is the Cholesky factor, for more solves with :func:`factor_solve`.
    """
    from ._kernels import linalg
    factor = np.array(H, dtype=np.float64, order="C", copy=True)
    if linalg.cholesky(factor) != 0:
        return None
    return factor_solve(factor, b), factor


def factor_solve(factor, b):
    """``(L L^T)^{-1} b`` for the factor L returned by :func:`cholesky_solve`."""
    from ._kernels import linalg
    out = np.empty(factor.shape[0])
    linalg.cholesky_solve(factor, np.ascontiguousarray(b, dtype=np.float64), out)
    return out


def fixed_order_dot(a, b):
    """``<a, b>`` (any shapes of the same size, flattened), added in index order."""
    from ._kernels import linalg
    return linalg.dot(np.ascontiguousarray(a, dtype=np.float64).reshape(-1),
                      np.ascontiguousarray(b, dtype=np.float64).reshape(-1))


def fixed_order_norm(a):
    """``||a||_2`` (Frobenius for a matrix): the square root of the squares added in index
    order; rescaled by the largest ``|a_j|`` only when that sum overflows."""
    from ._kernels import linalg
    return linalg.norm(np.ascontiguousarray(a, dtype=np.float64).reshape(-1))


def fixed_order_sum(a):
    """``sum_j a_j`` added in index order."""
    from ._kernels import linalg
    return linalg.total(np.ascontiguousarray(a, dtype=np.float64).reshape(-1))
