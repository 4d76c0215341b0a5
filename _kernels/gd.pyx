"""Full-batch clipped gradient of a linear model (DP-GD with per-sample clipping), on both cores.

For a linear model the per-sample gradient is loss'(z_i) x_i, so its norm is |loss'(z_i)| ||x_i||
and clipping costs one multiply per row, not per-sample gradient storage. The same holds for the
multinomial loss: the gradient x_i (softmax(z_i) - e_{y_i})^T has Frobenius norm
||softmax(z_i) - e_{y_i}|| ||x_i||, so clipping is again one scale per row.
"""
from cython.parallel cimport prange

from _loss cimport check_loss_parameter, loss_derivative, multinomial_derivative
from _rows cimport Rows, make_rows, row_axpy, row_dot

# Thread control lives in dpsolve._kernels.threads; these names stay for callers outside the
# package (docs/scripts/sgd_step_speed.py) written against gd.
from dpsolve._kernels.threads import max_threads, set_num_threads


# Rows are split into this many blocks whatever the number of threads; block sums are added in
# block order, so the result is bit-identical for any thread count.
cdef enum:
    BLOCKS = 64


def clipped_gradient_sum(
    object X,
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

    ``X`` is a C-contiguous (n, p) float64 array or ``dpsolve._rows.kernel_rows`` of a CSR
    matrix (then a row costs its stored entries, not p). ``scratch`` is a (64, p) work array.
    ``clip = inf`` means no clipping. ``h`` is the huber_hinge width (ignored by the other
    losses).
    """
    cdef Rows R = make_rows(X)
    cdef Py_ssize_t n = R.n, p = R.p
    if y.shape[0] != n or theta.shape[0] != p or row_norms.shape[0] != n or out.shape[0] != p:
        raise ValueError("shape mismatch between X, y, theta, row_norms and out")
    if scratch.shape[0] != BLOCKS or scratch.shape[1] != p:
        raise ValueError(f"scratch must have shape ({BLOCKS}, {p})")
    check_loss_parameter(loss, h)
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
                d = loss_derivative(loss, row_dot(&R, i, &theta[0]), y[i], h)
                g = (d if d >= 0.0 else -d) * row_norms[i]
                if g > clip:
                    d = d * (clip / g)
                    clipped += 1
                if d != 0.0:
                    row_axpy(&R, i, d, &scratch[b, 0])
        for j in range(p):
            out[j] = 0.0
        for b in range(BLOCKS):
            for j in range(p):
                out[j] += scratch[b, j]
    return clipped


def clipped_gradient_sum_multinomial(
    object X,
    const Py_ssize_t[::1] y,
    const double[:, ::1] theta,
    const double[::1] row_norms,
    double clip,
    double[:, ::1] out,
    double[:, ::1] scratch,
    double[:, ::1] work,
):
    """out = sum_i CLIP_clip(x_i (softmax(theta^T x_i) - e_{y_i})^T) for the multinomial loss;
    returns the number of clipped rows.

    ``theta`` and ``out`` have shape (p, K), ``y`` holds labels in [0, K) (intp), ``scratch`` is
    a (64, p K) work array for the block sums and ``work`` a (64, 2K) one for each block's
    logits and loss derivative. ``clip = inf`` means no clipping. Same 64 fixed blocks as
    :func:`clipped_gradient_sum`, so the result is bit-identical for any thread count. ``X`` as
    there: dense or CSR.
    """
    cdef Rows R = make_rows(X)
    cdef Py_ssize_t n = R.n, p = R.p, K = theta.shape[1]
    if (y.shape[0] != n or theta.shape[0] != p or row_norms.shape[0] != n
            or out.shape[0] != p or out.shape[1] != K):
        raise ValueError("shape mismatch between X, y, theta, row_norms and out")
    if scratch.shape[0] != BLOCKS or scratch.shape[1] != p * K:
        raise ValueError(f"scratch must have shape ({BLOCKS}, {p * K})")
    if work.shape[0] != BLOCKS or work.shape[1] != 2 * K:
        raise ValueError(f"work must have shape ({BLOCKS}, {2 * K})")
    if K < 1:
        raise ValueError("theta needs at least one column (one per class)")
    cdef Py_ssize_t i
    for i in range(n):
        if y[i] < 0 or y[i] >= K:
            raise ValueError(f"labels must lie in [0, {K}), got {y[i]} at index {i}")
    cdef Py_ssize_t b, j, k, e, start, stop
    cdef double g, scale, xij
    cdef double* z
    cdef double* d
    cdef double* acc
    cdef Py_ssize_t clipped = 0
    with nogil:
        for b in prange(BLOCKS, schedule="static"):
            start = b * n // BLOCKS
            stop = (b + 1) * n // BLOCKS
            z = &work[b, 0]
            d = z + K
            acc = &scratch[b, 0]
            for j in range(p * K):
                acc[j] = 0.0
            for i in range(start, stop):
                # z_k = <x_i, theta[:, k]>, each summed over j in order, as _vector.dot does
                for k in range(K):
                    z[k] = 0.0
                if R.X != NULL:
                    for j in range(p):
                        xij = R.X[i * p + j]
                        for k in range(K):
                            z[k] += xij * theta[j, k]
                else:
                    for e in range(R.indptr[i], R.indptr[i + 1]):
                        j = R.indices[e]
                        xij = R.data[e]
                        for k in range(K):
                            z[k] += xij * theta[j, k]
                g = multinomial_derivative(z, K, y[i], d) * row_norms[i]
                if g > clip:
                    scale = clip / g
                    for k in range(K):
                        d[k] = d[k] * scale
                    clipped += 1
                if R.X != NULL:
                    for j in range(p):
                        xij = R.X[i * p + j]
                        for k in range(K):
                            acc[j * K + k] += d[k] * xij
                else:
                    for e in range(R.indptr[i], R.indptr[i + 1]):
                        j = R.indices[e]
                        xij = R.data[e]
                        for k in range(K):
                            acc[j * K + k] += d[k] * xij
        for j in range(p):
            for k in range(K):
                out[j, k] = 0.0
        for b in range(BLOCKS):
            for j in range(p):
                for k in range(K):
                    out[j, k] += scratch[b, j * K + k]
    return clipped
