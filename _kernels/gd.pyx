"""Full-batch clipped gradient of a linear model (DP-GD with per-sample clipping), on both cores.

For a linear model the per-sample gradient is loss'(z_i) x_i, so its norm is |loss'(z_i)| ||x_i||
and clipping costs one multiply per row, not per-sample gradient storage. The same holds for the
multinomial loss: the gradient x_i (softmax(z_i) - e_{y_i})^T has Frobenius norm
||softmax(z_i) - e_{y_i}|| ||x_i||, so clipping is again one scale per row.
"""
from cython.parallel cimport prange
from libc.math cimport exp, fabs
from libc.stdlib cimport free, malloc

from _loss cimport (LOGISTIC, check_loss_parameter, logistic_derivative_at, loss_derivative,
                   multinomial_derivative)
from _openmp cimport dps_max_threads
from _rows cimport Rows, make_rows, row_axpy, row_dot

# Thread control lives in dpsolve._kernels.threads; these names stay for callers outside the
# package (docs/scripts/sgd_step_speed.py) written against gd.
from dpsolve._kernels.threads import max_threads, set_num_threads


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define dps_prefetch(address) __builtin_prefetch(address)
    #else
    #define dps_prefetch(address) ((void)(address))
    #endif
    """
    void prefetch "dps_prefetch"(const void* address) nogil


# Rows are split into this many blocks whatever the number of threads; block sums are added in
# block order, so the result is bit-identical for any thread count.
cdef enum:
    BLOCKS = 64
    # rows whose margins are computed before their derivatives (one chunk per block in flight)
    CHUNK = 128
    # below this many entries (n p) one thread is faster than forking a second one
    PARALLEL_MIN_WORK = 20000


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

    ``X`` is a C-contiguous (n, p) float64 array or ``dpsolve._row_ops.kernel_rows`` of a CSR
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
    cdef Py_ssize_t b, i, j, start, stop, c0, c1
    cdef double d, g
    cdef Py_ssize_t clipped = 0
    cdef int threads = 1 if n * p < PARALLEL_MIN_WORK else dps_max_threads()
    cdef double* work = <double*> malloc(2 * BLOCKS * CHUNK * sizeof(double))
    if work == NULL:
        raise MemoryError()
    cdef double* dz
    cdef double* ez
    try:
        with nogil:
            for b in prange(BLOCKS, schedule="static", num_threads=threads):
                start = b * n // BLOCKS
                stop = (b + 1) * n // BLOCKS
                dz = work + 2 * b * CHUNK
                ez = dz + CHUNK
                for j in range(p):
                    scratch[b, j] = 0.0
                # Rows in chunks: first every margin (independent dot products, which the
                # core overlaps), then every derivative (independent exp calls), then the sums
                # in row order. Each dot and each coordinate's sum keeps its order, so the
                # result is bit-identical to one row at a time.
                c0 = start
                while c0 < stop:
                    c1 = c0 + CHUNK if c0 + CHUNK < stop else stop
                    margins(&R, c0, c1, &theta[0], dz)
                    if loss == LOGISTIC:
                        logistic_derivatives(dz, &y[c0], c1 - c0, ez)
                    else:
                        for i in range(c0, c1):
                            dz[i - c0] = loss_derivative(loss, dz[i - c0], y[i], h)
                    for i in range(c0, c1):
                        d = dz[i - c0]
                        g = (d if d >= 0.0 else -d) * row_norms[i]
                        if g > clip:
                            d = d * (clip / g)
                            clipped += 1
                        dz[i - c0] = d
                    for i in range(c0, c1):
                        if dz[i - c0] != 0.0:
                            row_axpy(&R, i, dz[i - c0], &scratch[b, 0])
                    c0 = c1
            for j in range(p):
                out[j] = 0.0
            for b in range(BLOCKS):
                for j in range(p):
                    out[j] += scratch[b, j]
    finally:
        free(work)
    return clipped


def row_margins(object X, const double[::1] theta, double[::1] out):
    """out[i] = <x_i, theta> for every row, each summed over j in order (a CSR row over its
    stored entries, in column order: the same bits as the row stored densely), the rows in the
    64 blocks of :func:`clipped_gradient_sum` on OpenMP threads: bit-identical for any thread
    count."""
    cdef Rows R = make_rows(X)
    cdef Py_ssize_t n = R.n, p = R.p
    if theta.shape[0] != p or out.shape[0] != n:
        raise ValueError("shape mismatch between X, theta and out")
    if n == 0:
        return
    cdef Py_ssize_t b, start
    cdef int threads = 1 if n * p < PARALLEL_MIN_WORK else dps_max_threads()
    with nogil:
        for b in prange(BLOCKS, schedule="static", num_threads=threads):
            start = b * n // BLOCKS
            margins(&R, start, (b + 1) * n // BLOCKS, &theta[0], &out[start])


def weighted_row_sum(object X, const double[::1] r, double[::1] out, double[:, ::1] scratch):
    """out = sum_i r_i x_i (``X^T r``) in the 64 row blocks of :func:`clipped_gradient_sum`,
    the blocks' sums added in block order: bit-identical for any thread count. Rows with
    ``r_i = 0`` are skipped. ``scratch`` is a (64, p) work array."""
    cdef Rows R = make_rows(X)
    cdef Py_ssize_t n = R.n, p = R.p
    if r.shape[0] != n or out.shape[0] != p:
        raise ValueError("shape mismatch between X, r and out")
    if scratch.shape[0] != BLOCKS or scratch.shape[1] != p:
        raise ValueError(f"scratch must have shape ({BLOCKS}, {p})")
    cdef Py_ssize_t b, i, j
    cdef int threads = 1 if n * p < PARALLEL_MIN_WORK else dps_max_threads()
    with nogil:
        for b in prange(BLOCKS, schedule="static", num_threads=threads):
            for j in range(p):
                scratch[b, j] = 0.0
            for i in range(b * n // BLOCKS, (b + 1) * n // BLOCKS):
                if r[i] != 0.0:
                    row_axpy(&R, i, r[i], &scratch[b, 0])
        for j in range(p):
            out[j] = 0.0
        for b in range(BLOCKS):
            for j in range(p):
                out[j] += scratch[b, j]


cdef void logistic_derivatives(double* z, const double* y, Py_ssize_t m,
                               double* e) noexcept nogil:
    """z[i] <- the logistic loss'(z[i]; y[i]) for i < m, as _loss.loss_derivative computes it
    (the same operations, so the same bits), in two passes: the independent exp calls back to
    back, where the core overlaps them, then the arithmetic."""
    cdef Py_ssize_t i
    cdef double u
    for i in range(m):
        u = y[i] * z[i]
        z[i] = u
        e[i] = exp(-fabs(u))
    for i in range(m):
        z[i] = logistic_derivative_at(y[i], z[i], e[i])


cdef void margins(const Rows* R, Py_ssize_t c0, Py_ssize_t c1, const double* t,
                  double* out) noexcept nogil:
    """out[i - c0] = <x_i, t> for rows c0 .. c1 - 1, each summed over j in order (as row_dot);
    dense rows eight at a time, so that eight independent sums are in flight (one sum alone
    waits on each addition's latency)."""
    cdef Py_ssize_t i = c0, j, k, p = R.p
    cdef const double* x
    cdef double s0, s1, s2, s3, s4, s5, s6, s7, tj
    # short rows: eight of them are one contiguous stretch, which the hardware prefetches
    cdef bint prefetching = p >= 32
    if R.X != NULL:
        while i + 8 <= c1:
            x = R.X + i * p
            s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
            for j in range(p):
                if (j & 7) == 0 and prefetching and i + 16 <= c1:
                    # the next eight rows, one cache line of each ahead (eight strided streams
                    # are more than the hardware prefetcher follows)
                    prefetch(x + 8 * p + j)
                    prefetch(x + 9 * p + j)
                    prefetch(x + 10 * p + j)
                    prefetch(x + 11 * p + j)
                    prefetch(x + 12 * p + j)
                    prefetch(x + 13 * p + j)
                    prefetch(x + 14 * p + j)
                    prefetch(x + 15 * p + j)
                tj = t[j]
                s0 += x[j] * tj
                s1 += x[p + j] * tj
                s2 += x[2 * p + j] * tj
                s3 += x[3 * p + j] * tj
                s4 += x[4 * p + j] * tj
                s5 += x[5 * p + j] * tj
                s6 += x[6 * p + j] * tj
                s7 += x[7 * p + j] * tj
            k = i - c0
            out[k] = s0
            out[k + 1] = s1
            out[k + 2] = s2
            out[k + 3] = s3
            out[k + 4] = s4
            out[k + 5] = s5
            out[k + 6] = s6
            out[k + 7] = s7
            i += 8
    while i < c1:
        out[i - c0] = row_dot(R, i, t)
        i += 1


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
    cdef int threads = 1 if n * p * K < PARALLEL_MIN_WORK else dps_max_threads()
    with nogil:
        for b in prange(BLOCKS, schedule="static", num_threads=threads):
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
