"""The rows of a Problem held in this process: a dense array or a canonical CSR array.

Every reduction is one call of a dpsolve kernel or ordered product on all of X
(:mod:`dpsolve._ordered_linalg`), whose sums have an order fixed by X's shape alone; the same
kernels run on each chunk of a :class:`dpsolve.rows.RowChunks`.
"""
import math

import numpy as np

from .. import _ordered_linalg
from .._kernels import gd as _gd
from .._row_ops import kernel_rows, row_norms
from ._interface import Rows

#: The fixed blocks of the clipped-gradient kernels' sums: rows of their scratch array
#: (``_kernels/gd.pyx``).
BLOCKS = 64

#: Uniforms drawn per call when sampling the batch: ``rng.random(n)`` in pieces gives the same
#: numbers (each double takes one 64-bit word of the bit generator, whatever the piece sizes),
#: so a step's temporaries are O(_SAMPLE_BLOCK + batch), not O(n).
_SAMPLE_BLOCK = 2 ** 16


def clipped_sum(X, y, theta, loss, norms, clip, out, scratch, rows=None):
    """The clipped gradient sum kernel of ``loss`` on the rows ``X`` (as :func:`kernel_rows`
    gives them), into ``out``; returns the clipped count. ``scratch`` holds the kernel's work
    arrays for theta's size (:func:`kernel_scratch`). One function for both kernels, called as
    every release before called them (``rows`` passed only when given)."""
    if loss.is_multinomial:
        kernel, args = _gd.clipped_gradient_sum_multinomial, (
            X, np.ascontiguousarray(y, dtype=np.intp), theta, norms, clip, out) + scratch
    else:
        kernel, args = _gd.clipped_gradient_sum, (
            X, np.ascontiguousarray(y, dtype=np.float64), loss.kernel_id, loss.kernel_param,
            theta, norms, clip, out) + scratch
    if rows is None:
        return kernel(*args)
    return kernel(*args, rows=rows)


def kernel_scratch(theta):
    """The clipped gradient kernels' work arrays for a parameter of theta's shape: the (64,
    size) block sums, and for the multinomial loss (theta (p, K)) each block's logits and
    derivative."""
    if theta.ndim == 2:
        return (np.empty((BLOCKS, theta.size)), np.empty((BLOCKS, 2 * theta.shape[1])))
    return (np.empty((BLOCKS, theta.size)),)


def poisson_sample(rng, n, q):
    """The indices i with ``u_i < q``, u = ``rng.random(n)`` drawn in pieces (ascending, intp)."""
    if n <= _SAMPLE_BLOCK:
        rows = np.flatnonzero(rng.random(n) < q)
    else:
        rows = np.concatenate([start + np.flatnonzero(
            rng.random(min(_SAMPLE_BLOCK, n - start)) < q) for start in range(0, n, _SAMPLE_BLOCK)])
    return np.ascontiguousarray(rows, dtype=np.intp)


class MemoryRows(Rows):
    """X (a C-contiguous float32/float64 array or a canonical CSR array) and its coded labels
    y, in this process: every reduction is one kernel call on all the rows.

    Parameters
    ----------
    X : ndarray or scipy.sparse.csr_array, shape (n, p)
        A Problem's validated X.
    y : ndarray, shape (n,)
        Its coded labels.

    Notes
    -----
    The row norms the clipped sums read are computed once per MemoryRows, on first use: take
    ``problem.rows`` once per run, not at every step.
    """

    random_access = True

    def __init__(self, X, y):
        self.X, self.y = X, y
        self.shape, self.dtype = X.shape, X.dtype
        self.part_rows = (X.shape[0],)
        self._kernel_X = kernel_rows(X)
        self._norms = None
        self._unread = None             # the norms' stand-in for the plain sum
        self._scratch = {}

    def __repr__(self):
        return f"MemoryRows(shape={self.shape}, dtype={self.dtype})"

    def _norms_for(self, clip):
        # the kernels read a row's norm only to clip it: none needed for the plain sum
        if not math.isfinite(clip):
            if self._unread is None:            # once: the inner solves sum at every step
                self._unread = np.zeros(self.shape[0])
                self._unread.setflags(write=False)
            return self._unread
        if self._norms is None:
            self._norms = row_norms(self.X)
        return self._norms

    def clipped_gradient_sum(self, theta, loss, clip, rows=None):
        """The clipped gradient kernel on all the rows, or on ``rows`` read in place
        (:meth:`Rows.clipped_gradient_sum`)."""
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        key = theta.shape
        if key not in self._scratch:
            self._scratch[key] = kernel_scratch(theta)
        out = np.empty(theta.shape)
        clipped = clipped_sum(self._kernel_X, self.y, theta, loss, self._norms_for(clip),
                              clip, out, self._scratch[key], rows)
        return out, int(clipped)

    def poisson_sampler(self, rng, rate):
        """A sampler drawing, at each call, ``rng.random(n) < rate`` (in pieces of
        ``2**16``) for its sample, then summing the sampled rows' clipped gradients in place
        (the kernel's ``rows=``). Nothing is drawn before the first call.

        Parameters
        ----------
        rng : numpy.random.Generator
            The fit's generator.
        rate : float
            q in (0, 1].

        Returns
        -------
        callable
            ``sampler(theta, loss, clip)`` -> ndarray of theta's shape.
        """
        n = self.shape[0]

        def sampler(theta, loss, clip):
            return self.clipped_gradient_sum(theta, loss, clip,
                                             rows=poisson_sample(rng, n, rate))[0]
        return sampler

    def matvec(self, v):
        """``X @ v``: :func:`dpsolve._ordered_linalg.matvec`."""
        return _ordered_linalg.matvec(self.X, v)

    def rmatvec(self, r):
        """``X.T @ r``: :func:`dpsolve._ordered_linalg.rmatvec`."""
        return _ordered_linalg.rmatvec(self.X, r)

    def weighted_gram(self, w):
        """``X^T diag(w) X``: :func:`dpsolve._ordered_linalg.weighted_gram`."""
        return _ordered_linalg.weighted_gram(self.X, w)

    def fixed_order_gram(self, w):
        """``X^T diag(w) X`` in row order: :func:`dpsolve._ordered_linalg.fixed_order_gram`."""
        return _ordered_linalg.fixed_order_gram(self.X, w)

    def row_norms(self):
        """``||x_i||``: :func:`dpsolve._row_ops.row_norms`."""
        return row_norms(self.X)

    def labels(self):
        """y itself."""
        return self.y

    def map_parts(self, fn, *per_row, **kwargs):
        """One part: ``[fn(X, y, *per_row, **kwargs)]``."""
        return [fn(self.X, self.y, *per_row, **kwargs)]

    def sum_parts(self, fn, *per_row, shape):
        """``fn(X, y, *per_row)`` itself: one part, nothing to add."""
        return fn(self.X, self.y, *per_row)
