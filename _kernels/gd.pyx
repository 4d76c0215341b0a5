"""Full-batch clipped gradient of a linear model (seed 004's DP-GD), on both cores.

For a linear model the per-sample gradient is loss'(z_i) x_i, so its norm is |loss'(z_i)| ||x_i||
and clipping costs one multiply per row, not per-sample gradient storage.
"""
from cython.parallel cimport prange
from libc.math cimport isfinite

from _loss cimport HUBER_HINGE, loss_derivative
from _vector cimport dot

# Rows are split into this many blocks whatever the number of threads; block sums are added in
# block order, so the result is bit-identical for any thread count.
cdef enum:
    BLOCKS = 64


def clipped_gradient_sum(
    const double[:, ::1] X,
    const double[::1] y,
    int loss,
    double h,
    const double[::1] theta,
    const double[::1] row_norms,
    double clip,
    double[::1] out,
    double[:, ::1] scratch,
):
    """out = sum_i CLIP_clip(loss'(<theta, x_i>, y_i) x_i); returns the number of clipped rows.

    ``scratch`` is a (64, p) work array. ``clip = inf`` means no clipping. ``h`` is the
    huber_hinge width (ignored by the other losses).
    """
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1]
    if y.shape[0] != n or theta.shape[0] != p or row_norms.shape[0] != n or out.shape[0] != p:
        raise ValueError("shape mismatch between X, y, theta, row_norms and out")
    if scratch.shape[0] != BLOCKS or scratch.shape[1] != p:
        raise ValueError(f"scratch must have shape ({BLOCKS}, {p})")
    if loss == HUBER_HINGE and not (h > 0.0 and isfinite(h)):
        raise ValueError(f"huber_hinge needs a finite width h > 0, got {h!r}")
    cdef Py_ssize_t b, i, j, start, stop
    cdef double d, g
    cdef Py_ssize_t clipped = 0
    with nogil:
        for b in prange(BLOCKS, schedule="static"):
            start = b * n // BLOCKS
            stop = (b + 1) * n // BLOCKS
            for j in range(p):
                scratch[b, j] = 0.0
            for i in range(start, stop):
                d = loss_derivative(loss, dot(&X[i, 0], &theta[0], p), y[i], h)
                g = (d if d >= 0.0 else -d) * row_norms[i]
                if g > clip:
                    d = d * (clip / g)
                    clipped += 1
                if d != 0.0:
                    for j in range(p):
                        scratch[b, j] += d * X[i, j]
        for j in range(p):
            out[j] = 0.0
        for b in range(BLOCKS):
            for j in range(p):
                out[j] += scratch[b, j]
    return clipped
