"""Full-batch clipped gradient of a linear model (DP-GD with per-sample clipping), on both cores.

For a linear model the per-sample gradient is loss'(z_i) x_i, so its norm is |loss'(z_i)| ||x_i||
and clipping costs one multiply per row, not per-sample gradient storage. The same holds for the
multinomial loss: the gradient x_i (softmax(z_i) - e_{y_i})^T has Frobenius norm
||softmax(z_i) - e_{y_i}|| ||x_i||, so clipping is again one scale per row.

X may hold float64 or float32 values (dense or CSR). A float32 entry is converted to double as it
is read, before any arithmetic: the results are bit-identical to those on ``X.astype(float64)``,
for half the bytes read. The float64 loops are bound by memory bandwidth; on float32 rows the
conversions make them compute bound, hence the vector helpers (in _rows.pxd and below).
"""
from cython.parallel cimport prange
from libc.math cimport exp, fabs
from libc.stdlib cimport free, malloc

from _loss cimport (LOGISTIC, check_loss_parameter, logistic_derivative_at, loss_derivative,
                   multinomial_derivative)
from _openmp cimport (dps_max_threads, dps_region, dps_region_begin, dps_region_block,
                     dps_region_end)
from _rows cimport (Rows, add_rows, has_avx, make_rows, margins16_float, row_axpy, row_dot,
                   row_dots_at, xvalue)

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

    #if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
    #include <emmintrin.h>
    #define DPS_SSE2 1
    #endif

    /* out[r] = sum_j (double) x[r][j] * t[j] for the eight float32 rows x[r], each sum over j in
       increasing order (the loop for CPUs without AVX, and for the last rows of a chunk that
       dps_margins16_float leaves). With SSE2 two rows share a register (lane 0 and lane 1):
       every lane does the scalar loop's operations (exact conversion to double, one IEEE
       multiply, one IEEE add), so the bits are those of the scalar loop, but four conversions
       take one instruction each and the multiplies and adds two rows at a time. If ``next``
       is not NULL, prefetches its eight rows one cache line ahead, as the double loop does. */
    static void dps_margins8_float(const float* const* x, const float* const* next,
                                   Py_ssize_t p, const double* t, double* out)
    {
        Py_ssize_t j = 0;
        int r;
        double s[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    #ifdef DPS_SSE2
        __m128d acc[4];
        for (r = 0; r < 4; r++)
            acc[r] = _mm_setzero_pd();
        for (; j + 4 <= p; j += 4) {
            __m128d t0, t1, t2, t3;
            if (next != NULL && (j & 15) == 0)
                for (r = 0; r < 8; r++)
                    dps_prefetch(next[r] + j);
            t0 = _mm_set1_pd(t[j]);
            t1 = _mm_set1_pd(t[j + 1]);
            t2 = _mm_set1_pd(t[j + 2]);
            t3 = _mm_set1_pd(t[j + 3]);
            for (r = 0; r < 4; r++) {
                __m128 a = _mm_loadu_ps(x[2 * r] + j);
                __m128 b = _mm_loadu_ps(x[2 * r + 1] + j);
                __m128 lo = _mm_unpacklo_ps(a, b);     /* a_j b_j a_j+1 b_j+1 */
                __m128 hi = _mm_unpackhi_ps(a, b);     /* a_j+2 b_j+2 a_j+3 b_j+3 */
                __m128d v = acc[r];
                v = _mm_add_pd(v, _mm_mul_pd(_mm_cvtps_pd(lo), t0));
                v = _mm_add_pd(v, _mm_mul_pd(_mm_cvtps_pd(_mm_movehl_ps(lo, lo)), t1));
                v = _mm_add_pd(v, _mm_mul_pd(_mm_cvtps_pd(hi), t2));
                v = _mm_add_pd(v, _mm_mul_pd(_mm_cvtps_pd(_mm_movehl_ps(hi, hi)), t3));
                acc[r] = v;
            }
        }
        for (r = 0; r < 4; r++) {
            _mm_storel_pd(&s[2 * r], acc[r]);
            _mm_storeh_pd(&s[2 * r + 1], acc[r]);
        }
    #endif
        for (; j < p; j++) {
            double tj = t[j];
            for (r = 0; r < 8; r++)
                s[r] += (double) x[r][j] * tj;
        }
        for (r = 0; r < 8; r++)
            out[r] = s[r];
    }
    """
    void prefetch "dps_prefetch"(const void* address) nogil
    void margins8_float "dps_margins8_float"(const float* const* x, const float* const* next,
                                             Py_ssize_t p, const double* t, double* out) nogil


# Rows are split into this many blocks whatever the number of threads; block sums are added in
# block order, so the result is bit-identical for any thread count. Each thread takes a fixed run
# of consecutive blocks (schedule="static"): handing blocks out one at a time as threads come free
# made two threads slower than one on an idle machine (neighbouring blocks' scratch rows share
# cache lines). The guard of _openmp.pxd runs the regions on one thread while waiting for the
# second costs more than it gains (docs/performance.md, "A busy machine").
cdef enum:
    BLOCKS = 64
    # rows whose margins are computed before their derivatives (one chunk per block in flight)
    CHUNK = 128
    # below this many entries (n p) one thread is faster than waking a second one: the OpenMP
    # threads sleep while they wait (dpsolve/_kernels/__init__.py), and a wake-up costs tens of
    # microseconds (measured: docs/performance.md, "A busy machine")
    PARALLEL_MIN_WORK = 400000


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
    object rows=None,
):
    """out = sum_i CLIP_clip(loss'(<theta, x_i>, y_i) x_i); returns the number of clipped rows.

    ``X`` is a C-contiguous (n, p) float64 or float32 array or ``dpsolve._row_ops.kernel_rows``
    of a CSR matrix (data float64 or float32; a row then costs its stored entries, not p).
    float32 entries are converted to double before any arithmetic: the result equals that on
    the float64 copy of X, bit for bit. ``scratch`` is a (64, p) work array. ``clip = inf``
    means no clipping. ``h`` is the huber_hinge width (ignored by the other losses).

    ``rows``, if given, is a C-contiguous intp array of m row indices in [0, n) (repeats and
    any order allowed): the sum then runs over the rows ``i = rows[k]``, k = 0 .. m - 1, with
    ``y[i]`` and ``row_norms[i]`` (both still of length n), bit-identical to the call on
    ``X[rows]``, ``y[rows]`` and ``row_norms[rows]`` without copying the rows.
    """
    cdef Rows R = make_rows(X)
    cdef Py_ssize_t n = R.n, p = R.p
    if y.shape[0] != n or theta.shape[0] != p or row_norms.shape[0] != n or out.shape[0] != p:
        raise ValueError("shape mismatch between X, y, theta, row_norms and out")
    if scratch.shape[0] != BLOCKS or scratch.shape[1] != p:
        raise ValueError(f"scratch must have shape ({BLOCKS}, {p})")
    check_loss_parameter(loss, h)
    cdef const Py_ssize_t[::1] index
    cdef const Py_ssize_t* at = NULL        # rows[k], or NULL for k itself
    cdef Py_ssize_t m = n
    if rows is not None:
        index = checked_rows(rows, n)
        m = index.shape[0]
        if m == 0:
            out[:] = 0.0
            return 0
        at = &index[0]
    cdef Py_ssize_t b, i, j, k, start, stop, c0, c1
    cdef double d, g
    cdef Py_ssize_t clipped = 0
    cdef dps_region region
    cdef int threads = dps_region_begin(
        &region, 1 if m * p < PARALLEL_MIN_WORK else dps_max_threads())
    cdef double* work = <double*> malloc(3 * BLOCKS * CHUNK * sizeof(double))
    cdef Py_ssize_t* live = <Py_ssize_t*> malloc(BLOCKS * CHUNK * sizeof(Py_ssize_t))
    if work == NULL or live == NULL:
        free(work)
        free(live)
        raise MemoryError()
    cdef double* dz
    cdef double* ez
    cdef double* gathered
    cdef const double* yc
    try:
        with nogil:
            for b in prange(BLOCKS, schedule="static", num_threads=threads):
                start = b * m // BLOCKS
                stop = (b + 1) * m // BLOCKS
                dz = work + 3 * b * CHUNK
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
                    if at == NULL:
                        margins(&R, c0, c1, &theta[0], dz)
                        yc = &y[c0]
                    else:
                        row_dots_at(&R, at + c0, c1 - c0, &theta[0], dz)
                        gathered = ez + CHUNK
                        for k in range(c0, c1):
                            gathered[k - c0] = y[at[k]]
                        yc = gathered
                    if loss == LOGISTIC:
                        logistic_derivatives(dz, yc, c1 - c0, ez)
                    else:
                        for k in range(c0, c1):
                            dz[k - c0] = loss_derivative(loss, dz[k - c0], yc[k - c0], h)
                    for k in range(c0, c1):
                        i = k if at == NULL else at[k]
                        d = dz[k - c0]
                        g = (d if d >= 0.0 else -d) * row_norms[i]
                        if g > clip:
                            d = d * (clip / g)
                            clipped += 1
                        dz[k - c0] = d
                    add_rows(&R, at, c0, c1, dz, live + b * CHUNK, &scratch[b, 0], c1,
                             c1 + CHUNK if c1 + CHUNK < stop else stop)
                    c0 = c1
                dps_region_block(&region)
            dps_region_end(&region, BLOCKS)
            for j in range(p):
                out[j] = 0.0
            for b in range(BLOCKS):
                for j in range(p):
                    out[j] += scratch[b, j]
    finally:
        free(work)
        free(live)
    return clipped


cdef const Py_ssize_t[::1] checked_rows(object rows, Py_ssize_t n):
    """``rows`` as a memoryview, after checking it holds intp row indices in [0, n)."""
    cdef const Py_ssize_t[::1] index
    cdef Py_ssize_t k
    try:
        index = rows
    except (TypeError, ValueError) as error:
        raise ValueError("rows must be a C-contiguous 1-D intp array of row indices in "
                         f"[0, {n}), got {type(rows).__name__} "
                         f"{getattr(rows, 'dtype', '')}") from error
    for k in range(index.shape[0]):
        if index[k] < 0 or index[k] >= n:
            raise ValueError(f"rows must hold row indices in [0, {n}), got {index[k]} at "
                             f"position {k}")
    return index


def row_margins(object X, const double[::1] theta, double[::1] out):
    """out[i] = <x_i, theta> for every row, each summed over j in order (a CSR row over its
    stored entries, in column order: the same bits as the row stored densely), the rows in the
    64 blocks of :func:`clipped_gradient_sum` on OpenMP threads: bit-identical for any thread
    count. ``X`` as there: float64 or float32 (converted to double entry by entry), dense or
    CSR."""
    cdef Rows R = make_rows(X)
    cdef Py_ssize_t n = R.n, p = R.p
    if theta.shape[0] != p or out.shape[0] != n:
        raise ValueError("shape mismatch between X, theta and out")
    if n == 0:
        return
    cdef Py_ssize_t b, start
    cdef dps_region region
    cdef int threads = dps_region_begin(
        &region, 1 if n * p < PARALLEL_MIN_WORK else dps_max_threads())
    with nogil:
        for b in prange(BLOCKS, schedule="static", num_threads=threads):
            start = b * n // BLOCKS
            margins(&R, start, (b + 1) * n // BLOCKS, &theta[0], &out[start])
            dps_region_block(&region)
        dps_region_end(&region, BLOCKS)


def weighted_row_sum(object X, const double[::1] r, double[::1] out, double[:, ::1] scratch):
    """out = sum_i r_i x_i (``X^T r``) in the 64 row blocks of :func:`clipped_gradient_sum`,
    the blocks' sums added in block order: bit-identical for any thread count. Rows with
    ``r_i = 0`` are skipped. ``scratch`` is a (64, p) work array. ``X`` as in
    :func:`clipped_gradient_sum`: float64 or float32 (converted to double entry by entry),
    dense or CSR."""
    cdef Rows R = make_rows(X)
    cdef Py_ssize_t n = R.n, p = R.p
    if r.shape[0] != n or out.shape[0] != p:
        raise ValueError("shape mismatch between X, r and out")
    if scratch.shape[0] != BLOCKS or scratch.shape[1] != p:
        raise ValueError(f"scratch must have shape ({BLOCKS}, {p})")
    cdef Py_ssize_t b, i, j
    cdef dps_region region
    cdef int threads = dps_region_begin(
        &region, 1 if n * p < PARALLEL_MIN_WORK else dps_max_threads())
    with nogil:
        for b in prange(BLOCKS, schedule="static", num_threads=threads):
            for j in range(p):
                scratch[b, j] = 0.0
            for i in range(b * n // BLOCKS, (b + 1) * n // BLOCKS):
                if r[i] != 0.0:
                    row_axpy(&R, i, r[i], &scratch[b, 0])
            dps_region_block(&region)
        dps_region_end(&region, BLOCKS)
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
    dense rows eight (float32 with AVX: sixteen) at a time (:func:`dense_margins`,
    :func:`float_margins`). Consecutive rows keep loops of their own rather than going through
    ``row_dots_at`` on their indices: that way ``row_margins`` measured 12-15 % slower at
    n = 10^6, p = 100 (the prefetch stops at every stretch of indices)."""
    cdef Py_ssize_t i = c0
    if R.dense:
        if R.single:
            i = float_margins(R.X32, R.p, c0, c1, t, out)
        else:
            i = dense_margins(R.X, R.p, c0, c1, t, out)
    while i < c1:
        out[i - c0] = row_dot(R, i, t)
        i += 1


cdef Py_ssize_t dense_margins(const double* X, Py_ssize_t p, Py_ssize_t c0, Py_ssize_t c1,
                              const double* t, double* out) noexcept nogil:
    """out[i - c0] = <x_i, t> for the dense float64 rows c0, c0 + 1, ... eight at a time, so that
    eight independent sums are in flight (one sum alone waits on each addition's latency); each
    sum over j in order, as row_dot. Returns the first row not done (fewer than eight remain)."""
    cdef Py_ssize_t i = c0, j, k
    cdef const double* x
    cdef double s0, s1, s2, s3, s4, s5, s6, s7, tj
    # short rows: eight of them are one contiguous stretch, which the hardware prefetches
    cdef bint prefetching = p >= 32
    while i + 8 <= c1:
        x = X + i * p
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
            s0 += <double> x[j] * tj
            s1 += <double> x[p + j] * tj
            s2 += <double> x[2 * p + j] * tj
            s3 += <double> x[3 * p + j] * tj
            s4 += <double> x[4 * p + j] * tj
            s5 += <double> x[5 * p + j] * tj
            s6 += <double> x[6 * p + j] * tj
            s7 += <double> x[7 * p + j] * tj
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
    return i


cdef Py_ssize_t float_margins(const float* X, Py_ssize_t p, Py_ssize_t c0, Py_ssize_t c1,
                              const double* t, double* out) noexcept nogil:
    """:func:`dense_margins` for float32 rows (:c:func:`dps_margins16_float` with AVX, else
    :c:func:`dps_margins8_float`: the same bits as the scalar loop on the rows converted to
    double)."""
    cdef Py_ssize_t i = c0, r
    cdef const float* rows[32]
    cdef bint prefetching = p >= 32
    cdef bint ahead
    if has_avx():
        while i + 16 <= c1:
            ahead = prefetching and i + 32 <= c1
            for r in range(32 if ahead else 16):
                rows[r] = X + (i + r) * p
            margins16_float(rows, rows + 16 if ahead else NULL, p, t, out + (i - c0))
            i += 16
    while i + 8 <= c1:
        for r in range(16 if prefetching and i + 16 <= c1 else 8):
            rows[r] = X + (i + r) * p
        margins8_float(rows, rows + 8 if prefetching and i + 16 <= c1 else NULL, p, t,
                       out + (i - c0))
        i += 8
    return i


# -- the multinomial loss's row operations, once per storage type ------------------------------

cdef inline void dense_logits(const xvalue* x, Py_ssize_t p, const double* theta, Py_ssize_t K,
                              double* z) noexcept nogil:
    """z_k += <x, theta[:, k]> for a dense row, each summed over j in order. Up to three
    classes per pass over the row, their sums held in registers: through z (which the compiler
    must assume theta may alias) each addition would wait on a store and a reload. The same
    additions in the same order, so the same bits."""
    cdef Py_ssize_t j, k = 0
    cdef double xij, z0, z1, z2
    cdef const double* th
    while k + 3 <= K:
        z0 = z[k]
        z1 = z[k + 1]
        z2 = z[k + 2]
        th = theta + k
        for j in range(p):
            xij = <double> x[j]
            z0 = z0 + xij * th[j * K]
            z1 = z1 + xij * th[j * K + 1]
            z2 = z2 + xij * th[j * K + 2]
        z[k] = z0
        z[k + 1] = z1
        z[k + 2] = z2
        k += 3
    if k + 2 == K:
        z0 = z[k]
        z1 = z[k + 1]
        th = theta + k
        for j in range(p):
            xij = <double> x[j]
            z0 = z0 + xij * th[j * K]
            z1 = z1 + xij * th[j * K + 1]
        z[k] = z0
        z[k + 1] = z1
    elif k + 1 == K:
        z0 = z[k]
        th = theta + k
        for j in range(p):
            z0 = z0 + <double> x[j] * th[j * K]
        z[k] = z0


cdef inline void csr_logits(const xvalue* data, const Py_ssize_t* indices, Py_ssize_t e0,
                            Py_ssize_t e1, const double* theta, Py_ssize_t K,
                            double* z) noexcept nogil:
    cdef Py_ssize_t e, j, k
    cdef double xij
    for e in range(e0, e1):
        j = indices[e]
        xij = <double> data[e]
        for k in range(K):
            z[k] += xij * theta[j * K + k]


cdef inline void dense_outer(const xvalue* x, Py_ssize_t p, const double* d, Py_ssize_t K,
                             double* acc) noexcept nogil:
    """acc[j, k] += d_k x_j for a dense row (acc is p x K, C order). Each entry of acc gets one
    term per row, so the order of the entries is free: up to three classes per pass, their d_k
    in registers (through d, which the compiler must assume acc may alias, each would be
    reloaded after every store)."""
    cdef Py_ssize_t j, k = 0
    cdef double xij, d0, d1, d2
    cdef double* a
    while k + 3 <= K:
        d0 = d[k]
        d1 = d[k + 1]
        d2 = d[k + 2]
        a = acc + k
        for j in range(p):
            xij = <double> x[j]
            a[j * K] += d0 * xij
            a[j * K + 1] += d1 * xij
            a[j * K + 2] += d2 * xij
        k += 3
    if k + 2 == K:
        d0 = d[k]
        d1 = d[k + 1]
        a = acc + k
        for j in range(p):
            xij = <double> x[j]
            a[j * K] += d0 * xij
            a[j * K + 1] += d1 * xij
    elif k + 1 == K:
        d0 = d[k]
        a = acc + k
        for j in range(p):
            a[j * K] += d0 * <double> x[j]


cdef inline void csr_outer(const xvalue* data, const Py_ssize_t* indices, Py_ssize_t e0,
                           Py_ssize_t e1, const double* d, Py_ssize_t K,
                           double* acc) noexcept nogil:
    cdef Py_ssize_t e, j, k
    cdef double xij
    for e in range(e0, e1):
        j = indices[e]
        xij = <double> data[e]
        for k in range(K):
            acc[j * K + k] += d[k] * xij


cdef void row_logits(const Rows* R, Py_ssize_t i, const double* theta, Py_ssize_t K,
                     double* z) noexcept nogil:
    """z_k = <x_i, theta[:, k]>, each summed over j in order, as _vector.dot does."""
    cdef Py_ssize_t k, p = R.p
    for k in range(K):
        z[k] = 0.0
    if R.dense:
        if R.single:
            dense_logits(R.X32 + i * p, p, theta, K, z)
        else:
            dense_logits(R.X + i * p, p, theta, K, z)
    elif R.single:
        csr_logits(R.data32, R.indices, R.indptr[i], R.indptr[i + 1], theta, K, z)
    else:
        csr_logits(R.data, R.indices, R.indptr[i], R.indptr[i + 1], theta, K, z)


cdef void row_outer(const Rows* R, Py_ssize_t i, const double* d, Py_ssize_t K,
                    double* acc) noexcept nogil:
    """acc += x_i d^T (only x_i's stored entries for CSR)."""
    cdef Py_ssize_t p = R.p
    if R.dense:
        if R.single:
            dense_outer(R.X32 + i * p, p, d, K, acc)
        else:
            dense_outer(R.X + i * p, p, d, K, acc)
    elif R.single:
        csr_outer(R.data32, R.indices, R.indptr[i], R.indptr[i + 1], d, K, acc)
    else:
        csr_outer(R.data, R.indices, R.indptr[i], R.indptr[i + 1], d, K, acc)


def clipped_gradient_sum_multinomial(
    object X,
    const Py_ssize_t[::1] y,
    const double[:, ::1] theta,
    const double[::1] row_norms,
    double clip,
    double[:, ::1] out,
    double[:, ::1] scratch,
    double[:, ::1] work,
    object rows=None,
):
    """out = sum_i CLIP_clip(x_i (softmax(theta^T x_i) - e_{y_i})^T) for the multinomial loss;
    returns the number of clipped rows.

    ``theta`` and ``out`` have shape (p, K), ``y`` holds labels in [0, K) (intp), ``scratch`` is
    a (64, p K) work array for the block sums and ``work`` a (64, 2K) one for each block's
    logits and loss derivative. ``clip = inf`` means no clipping. Same 64 fixed blocks as
    :func:`clipped_gradient_sum`, so the result is bit-identical for any thread count. ``X`` and
    ``rows`` as there: float64 or float32 (converted to double entry by entry), dense or CSR,
    and the sum over the rows ``rows[k]`` if given (only their labels are checked).
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
    cdef const Py_ssize_t[::1] index
    cdef const Py_ssize_t* at = NULL        # rows[k], or NULL for k itself
    cdef Py_ssize_t m = n
    cdef Py_ssize_t i, k
    if rows is not None:
        index = checked_rows(rows, n)
        m = index.shape[0]
        if m > 0:
            at = &index[0]
    for k in range(m):
        i = k if at == NULL else at[k]
        if y[i] < 0 or y[i] >= K:
            raise ValueError(f"labels must lie in [0, {K}), got {y[i]} at index {i}")
    cdef Py_ssize_t b, j, start, stop
    cdef double g, scale
    cdef double* z
    cdef double* d
    cdef double* acc
    cdef Py_ssize_t clipped = 0
    cdef dps_region region
    cdef int threads = dps_region_begin(
        &region, 1 if m * p * K < PARALLEL_MIN_WORK else dps_max_threads())
    with nogil:
        for b in prange(BLOCKS, schedule="static", num_threads=threads):
            start = b * m // BLOCKS
            stop = (b + 1) * m // BLOCKS
            z = &work[b, 0]
            d = z + K
            acc = &scratch[b, 0]
            for j in range(p * K):
                acc[j] = 0.0
            for k in range(start, stop):
                i = k if at == NULL else at[k]
                row_logits(&R, i, &theta[0, 0], K, z)
                g = multinomial_derivative(z, K, y[i], d) * row_norms[i]
                if g > clip:
                    scale = clip / g
                    for j in range(K):
                        d[j] = d[j] * scale
                    clipped += 1
                row_outer(&R, i, d, K, acc)
            dps_region_block(&region)
        dps_region_end(&region, BLOCKS)
        for j in range(p):
            for k in range(K):
                out[j, k] = 0.0
        for b in range(BLOCKS):
            for j in range(p):
                for k in range(K):
                    out[j, k] += scratch[b, j * K + k]
    return clipped
