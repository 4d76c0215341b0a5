"""Linear algebra in a fixed order: the weighted Gram matrix, Cholesky and its triangular
solves, dot products and norms, each sum in an order that depends on the data's shape only.

Why. A seeded release of output or objective perturbation is ``theta_hat + noise``, so the bits
of the inner minimiser ``theta_hat`` are released. BLAS and LAPACK (OpenBLAS) choose their
kernels per CPU (Haswell, SkylakeX, Sandybridge, ...), and those kernels add in different
orders: the same NumPy on two machines gave different bits. Every sum here is written out:

* ``weighted_gram``: entry (j, k), j <= k, of ``X^T diag(w) X`` is
  ``sum_i (w_i x_ij) x_ik`` added over the rows i in increasing order, starting from +0; entry
  (k, j) is the same number. Rows with ``w_i = 0`` and a CSR row's missing entries add +-0,
  which leaves such a sum unchanged, so they are skipped: X dense or CSR, float64 or float32
  (each entry converted to double exactly) give the same bits. The threads own whole output
  rows (panels of four), so no sum is split between threads and the result does not depend on
  their number; the rows of X are walked in blocks whose packed copy stays in cache, and every
  partial sum is stored between blocks and reloaded, which does not change it.
* ``cholesky``: ``L_jj = sqrt(a_jj - sum_{k<j} L_jk^2)``, ``L_ij = (a_ij - sum_{k<j} L_ik
  L_jk) / L_jj``, each subtraction in increasing k (a right-looking elimination; blocked by
  panels of columns for cache reuse, which keeps each entry's order).
* ``cholesky_solve``: ``L y = b`` then ``L^T x = y``, each row's sum in a fixed order.
* ``dot``, ``norm``, ``total``: sequential sums.

Where the CPU has AVX (checked at run time; the module is built for baseline SSE2) the Gram's
tile loop packs four coordinates in a register: each lane does the scalar loop's operations
(one IEEE multiply, one IEEE add, never fused: setup.py builds with -ffp-contract=off and the
target is AVX, not FMA), so the bits are the scalar loop's.
"""
from cython.parallel cimport prange
from libc.math cimport fabs, sqrt, INFINITY
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset

from _openmp cimport dps_max_threads
from _rows cimport Rows, is_float32, make_rows
from _vector cimport dot as vector_dot, scaled_norm, squared_norm


cdef extern from *:
    """
    /* Tile of the Gram matrix: g[jj][kk] += a[r][jj] * b[r][kk] for r = 0 .. m - 1 in order,
       jj < 4, kk < 8; a is a packed panel (m rows of 4), b one of m rows of 8, g has row
       stride ldg. The accumulators are loaded once and stored once: the sums are those of the
       scalar loop, term after term. */
    static void dps_gram_tile_scalar(const double* a, const double* b, Py_ssize_t m,
                                     double* g, Py_ssize_t ldg)
    {
        double acc[4][8];
        Py_ssize_t r;
        int jj, kk;
        for (jj = 0; jj < 4; jj++)
            for (kk = 0; kk < 8; kk++)
                acc[jj][kk] = g[jj * ldg + kk];
        for (r = 0; r < m; r++) {
            const double* ar = a + 4 * r;
            const double* br = b + 8 * r;
            for (jj = 0; jj < 4; jj++) {
                double s = ar[jj];
                for (kk = 0; kk < 8; kk++)
                    acc[jj][kk] = acc[jj][kk] + s * br[kk];
            }
        }
        for (jj = 0; jj < 4; jj++)
            for (kk = 0; kk < 8; kk++)
                g[jj * ldg + kk] = acc[jj][kk];
    }

    /* The panel update's loop, written once and compiled for two targets below. */
    #define DPS_PANEL_UPDATE_BODY                                  \
        Py_ssize_t jj, k;                                          \
        for (jj = 0; jj < nb; jj++) {                              \
            const double s = l[jj];                                \
            const double* q = panel + jj * ldp;                    \
            for (k = 0; k < len; k++)                              \
                row[k] = row[k] - s * q[k];                        \
        }

    #if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    #include <immintrin.h>
    #define DPS_LINALG_AVX 1
    __attribute__((target("avx")))
    static void dps_gram_tile_avx(const double* a, const double* b, Py_ssize_t m,
                                  double* g, Py_ssize_t ldg)
    {
        __m256d c00 = _mm256_loadu_pd(g), c01 = _mm256_loadu_pd(g + 4);
        __m256d c10 = _mm256_loadu_pd(g + ldg), c11 = _mm256_loadu_pd(g + ldg + 4);
        __m256d c20 = _mm256_loadu_pd(g + 2 * ldg), c21 = _mm256_loadu_pd(g + 2 * ldg + 4);
        __m256d c30 = _mm256_loadu_pd(g + 3 * ldg), c31 = _mm256_loadu_pd(g + 3 * ldg + 4);
        Py_ssize_t r;
        for (r = 0; r < m; r++) {
            __m256d b0 = _mm256_loadu_pd(b + 8 * r), b1 = _mm256_loadu_pd(b + 8 * r + 4);
            __m256d s;
            s = _mm256_broadcast_sd(a + 4 * r);
            c00 = _mm256_add_pd(c00, _mm256_mul_pd(s, b0));
            c01 = _mm256_add_pd(c01, _mm256_mul_pd(s, b1));
            s = _mm256_broadcast_sd(a + 4 * r + 1);
            c10 = _mm256_add_pd(c10, _mm256_mul_pd(s, b0));
            c11 = _mm256_add_pd(c11, _mm256_mul_pd(s, b1));
            s = _mm256_broadcast_sd(a + 4 * r + 2);
            c20 = _mm256_add_pd(c20, _mm256_mul_pd(s, b0));
            c21 = _mm256_add_pd(c21, _mm256_mul_pd(s, b1));
            s = _mm256_broadcast_sd(a + 4 * r + 3);
            c30 = _mm256_add_pd(c30, _mm256_mul_pd(s, b0));
            c31 = _mm256_add_pd(c31, _mm256_mul_pd(s, b1));
        }
        _mm256_storeu_pd(g, c00); _mm256_storeu_pd(g + 4, c01);
        _mm256_storeu_pd(g + ldg, c10); _mm256_storeu_pd(g + ldg + 4, c11);
        _mm256_storeu_pd(g + 2 * ldg, c20); _mm256_storeu_pd(g + 2 * ldg + 4, c21);
        _mm256_storeu_pd(g + 3 * ldg, c30); _mm256_storeu_pd(g + 3 * ldg + 4, c31);
    }

    /* row[k] = row[k] - l[jj] * panel[jj * ldp + k] for jj = 0 .. nb - 1 in order, k < len:
       each entry's subtractions in increasing jj; the k are independent (vectorised by the
       compiler, lane by lane the scalar operations). */
    __attribute__((target("avx")))
    static void dps_panel_update_avx(double* row, const double* l, const double* panel,
                                     Py_ssize_t nb, Py_ssize_t len, Py_ssize_t ldp)
    {
        DPS_PANEL_UPDATE_BODY
    }
    #endif

    static void dps_panel_update_plain(double* row, const double* l, const double* panel,
                                       Py_ssize_t nb, Py_ssize_t len, Py_ssize_t ldp)
    {
        DPS_PANEL_UPDATE_BODY
    }

    static int dps_linalg_avx(void)
    {
    #ifdef DPS_LINALG_AVX
        return __builtin_cpu_supports("avx");
    #else
        return 0;
    #endif
    }

    static void dps_gram_tile(const double* a, const double* b, Py_ssize_t m, double* g,
                              Py_ssize_t ldg, int avx)
    {
    #ifdef DPS_LINALG_AVX
        if (avx) {
            dps_gram_tile_avx(a, b, m, g, ldg);
            return;
        }
    #endif
        (void) avx;
        dps_gram_tile_scalar(a, b, m, g, ldg);
    }

    static void dps_panel_update(double* row, const double* l, const double* panel,
                                 Py_ssize_t nb, Py_ssize_t len, Py_ssize_t ldp, int avx)
    {
    #ifdef DPS_LINALG_AVX
        if (avx) {
            dps_panel_update_avx(row, l, panel, nb, len, ldp);
            return;
        }
    #endif
        (void) avx;
        dps_panel_update_plain(row, l, panel, nb, len, ldp);
    }
    """
    int linalg_avx "dps_linalg_avx"() noexcept nogil
    void gram_tile "dps_gram_tile"(const double* a, const double* b, Py_ssize_t m, double* g,
                                   Py_ssize_t ldg, int avx) noexcept nogil
    void panel_update "dps_panel_update"(double* row, const double* l, const double* panel,
                                         Py_ssize_t nb, Py_ssize_t len, Py_ssize_t ldp,
                                         int avx) noexcept nogil


cdef enum:
    # output rows per tile (a panel of the weighted rows) and columns per tile
    TILE_J = 4
    TILE_K = 8
    # about this many bytes of packed rows per block: the block's panels stay in L2
    BLOCK_BYTES = 1 << 18
    # columns per panel of the blocked Cholesky
    CHOL_PANEL = 16
    # below this many terms (n p^2) one thread is faster than starting a second
    PARALLEL_MIN_WORK = 1 << 23


# -- the weighted Gram matrix -------------------------------------------------------------------

cdef inline double entry(const Rows* R, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    """x_ij of a dense row as a double, 0 past the last column (the panels' padding)."""
    if j >= R.p:
        return 0.0
    if R.single:
        return <double> R.X32[i * R.p + j]
    return R.X[i * R.p + j]


cdef void pack_row(const Rows* R, Py_ssize_t i, double w, Py_ssize_t r, Py_ssize_t mb,
                   Py_ssize_t j0, Py_ssize_t pp, int t, int T, double* A,
                   double* B) noexcept nogil:
    """Row i of X as row r of one thread's panels of a block: ``B[q][r][kk] = x_i[j0 + 8q +
    kk]`` for the columns from j0 on, and ``A[s'][r][jj] = w x_i[4 s + jj]`` for the thread's
    panels of output rows ``s = t + s' T``. Dense rows write every entry (0 in the padding);
    CSR rows their stored entries only, into panels zeroed by the caller."""
    cdef Py_ssize_t j, e, c, s, k
    cdef double x
    cdef double* b
    if R.dense:
        c = 0
        while c < pp - j0:
            b = B + c * mb + r * TILE_K
            for k in range(TILE_K):
                b[k] = entry(R, i, j0 + c + k)
            c += TILE_K
        s = t
        while s * TILE_J < pp:
            b = A + (s // T) * mb * TILE_J + r * TILE_J
            for k in range(TILE_J):
                b[k] = w * entry(R, i, s * TILE_J + k)
            s += T
    else:
        for e in range(R.indptr[i], R.indptr[i + 1]):
            j = R.indices[e]
            if j < j0:
                continue
            x = <double> R.data32[e] if R.single else R.data[e]
            c = j - j0
            B[(c // TILE_K) * mb * TILE_K + r * TILE_K + c % TILE_K] = x
            if (j // TILE_J) % T == t:
                A[(j // TILE_J) // T * mb * TILE_J + r * TILE_J + j % TILE_J] = w * x


cdef int thread_gram(const Rows* R, const double* w, double* G, Py_ssize_t pp, int t,
                     int T) noexcept nogil:
    """Thread t of T: the upper tiles of its panels of four output rows (those s with
    ``s % T == t``) of ``X^T diag(w) X``, added into G (pp x pp, pp a multiple of 8), by
    packed blocks of the rows with ``w_i != 0``, in row order. Returns -1 if out of memory."""
    cdef Py_ssize_t n = R.n, mb, m, i = 0, s, q, ns = pp // TILE_J, owned
    # the thread's first output row is 4t: it needs the columns from the tile holding it
    cdef Py_ssize_t j0 = (t * TILE_J) // TILE_K * TILE_K, width = pp - j0
    cdef int avx = linalg_avx()
    if t >= ns:
        return 0
    owned = (ns - t + T - 1) // T
    mb = BLOCK_BYTES // (8 * (width + owned * TILE_J))
    if mb < 16:
        mb = 16
    if mb > 2048:
        mb = 2048
    cdef double* B = <double*> malloc(mb * (width + owned * TILE_J) * sizeof(double))
    if B == NULL:
        return -1
    cdef double* A = B + mb * width
    while i < n:
        if not R.dense:
            memset(B, 0, mb * (width + owned * TILE_J) * sizeof(double))
        m = 0
        while m < mb and i < n:
            if w[i] != 0.0:
                pack_row(R, i, w[i], m, mb, j0, pp, t, T, A, B)
                m += 1
            i += 1
        if m == 0:
            break
        s = t
        while s < ns:
            for q in range((s * TILE_J - j0) // TILE_K, width // TILE_K):
                gram_tile(A + (s // T) * mb * TILE_J, B + q * mb * TILE_K, m,
                          G + s * TILE_J * pp + j0 + q * TILE_K, pp, avx)
            s += T
    free(B)
    return 0


cdef int dense_gram(const Rows* R, const double* w, double* G, Py_ssize_t pp,
                    int threads) noexcept nogil:
    """G (pp x pp, zeroed) += the upper tiles of ``X^T diag(w) X`` on ``threads`` threads in one
    parallel region (no barrier: on a busy machine a barrier per block of rows waits for a
    descheduled thread at every block), each owning whole panels of output rows and packing its
    own copy of each block. Returns -1 if out of memory, else 0."""
    cdef int t, failed = 0
    for t in prange(threads, schedule="static", chunksize=1, num_threads=threads):
        failed += thread_gram(R, w, G, pp, t, threads) != 0
    return -1 if failed else 0


cdef void sparse_gram(const Rows* R, const double* w, double* G, Py_ssize_t ld,
                      int threads) noexcept nogil:
    """G (p x p with row stride ld, zeroed) += the upper triangle of ``X^T diag(w) X`` for CSR
    rows, pair by pair of stored entries, the rows in order; output row j belongs to thread
    ``j % threads``."""
    cdef Py_ssize_t n = R.n, i, e, f, j, t
    cdef double a
    for t in prange(threads, schedule="static", chunksize=1, num_threads=threads):
        for i in range(n):
            if w[i] == 0.0:
                continue
            for e in range(R.indptr[i], R.indptr[i + 1]):
                j = R.indices[e]
                if j % threads != t:
                    continue
                a = w[i] * (<double> R.data32[e] if R.single else R.data[e])
                for f in range(e, R.indptr[i + 1]):
                    G[j * ld + R.indices[f]] = G[j * ld + R.indices[f]] + a * (
                        <double> R.data32[f] if R.single else R.data[f])


def weighted_gram(object X, const double[::1] w, double[:, ::1] out):
    """out = ``X^T diag(w) X``, every entry summed over the rows in order (module docstring):
    the same bits for any thread count, block size or CPU, and for X dense or CSR, float64 or
    float32.

    ``X`` is a C-contiguous (n, p) float64 or float32 array or ``dpsolve._row_ops.kernel_rows``
    of a CSR matrix; ``w`` has n finite entries; ``out`` is (p, p), overwritten.
    """
    cdef Rows R = make_rows(X)
    cdef Py_ssize_t n = R.n, p = R.p, pp, j, k, nnz
    if w.shape[0] != n or out.shape[0] != p or out.shape[1] != p:
        raise ValueError("shape mismatch between X, w and out")
    out[:, :] = 0.0
    if n == 0 or p == 0:
        return
    cdef int threads = dps_max_threads() if n * p * p >= PARALLEL_MIN_WORK else 1
    cdef double* G
    cdef int status = 0
    cdef bint sparse_rows = False
    if not R.dense:
        nnz = R.indptr[n]
        # a pair loop costs about (nnz/n)^2 scattered updates a row, the packed tiles about
        # p^2 / 16 cycles a row: the sparser path when rows hold fewer than p/5 entries
        sparse_rows = 5 * nnz < n * p
    if sparse_rows:
        with nogil:
            sparse_gram(&R, &w[0], &out[0, 0], p, threads)
    else:
        pp = (p + TILE_K - 1) // TILE_K * TILE_K
        G = <double*> calloc(pp * pp, sizeof(double))
        if G == NULL:
            raise MemoryError()
        try:
            with nogil:
                status = dense_gram(&R, &w[0], G, pp, threads)
            if status != 0:
                raise MemoryError()
            with nogil:
                for j in range(p):
                    for k in range(j, p):
                        out[j, k] = G[j * pp + k]
        finally:
            free(G)
    for j in range(p):
        for k in range(j):
            out[j, k] = out[k, j]


# -- Cholesky -----------------------------------------------------------------------------------

def cholesky(double[:, ::1] a):
    """Factor the symmetric (p, p) matrix ``a`` as ``L L^T`` in place: its lower triangle
    becomes L (read from ``a``'s lower triangle; the strict upper triangle is set to 0).
    Returns 0, or ``j + 1`` if the pivot of column j was not a finite positive number (``a``
    is then partly overwritten).

    Every entry's subtractions run in increasing column order, whatever the panel width, the
    thread count or the CPU (module docstring)."""
    cdef Py_ssize_t p = a.shape[0], j0, j1, j, i, k, nb
    if a.shape[1] != p:
        raise ValueError("a must be square")
    if p == 0:
        return 0
    cdef double* A = &a[0, 0]
    cdef double d, ljj
    cdef int avx = linalg_avx()
    cdef int info = 0
    cdef int threads = dps_max_threads() if p >= 256 else 1
    cdef double* panel = <double*> malloc(CHOL_PANEL * p * sizeof(double))
    if panel == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(p):
                for k in range(i + 1, p):
                    A[i * p + k] = 0.0
            j0 = 0
            while j0 < p and info == 0:
                j1 = j0 + CHOL_PANEL if j0 + CHOL_PANEL < p else p
                nb = j1 - j0
                # the panel's columns, one after the other
                for j in range(j0, j1):
                    d = A[j * p + j]
                    if not (d > 0.0 and d < INFINITY):
                        info = <int> (j + 1)
                        break
                    ljj = sqrt(d)
                    A[j * p + j] = ljj
                    for i in range(j + 1, p):
                        A[i * p + j] = A[i * p + j] / ljj
                    # the rest of the panel: a[i, k] -= L_ij L_kj for j < k < j1, k <= i
                    for i in range(j + 1, p):
                        for k in range(j + 1, (i + 1) if i + 1 < j1 else j1):
                            A[i * p + k] = A[i * p + k] - A[i * p + j] * A[k * p + j]
                if info != 0:
                    break
                if j1 < p:
                    # the trailing matrix, all nb columns at once: panel[jj][k - j1] = L_{k, j0+jj}
                    for j in range(nb):
                        for k in range(j1, p):
                            panel[j * (p - j1) + k - j1] = A[k * p + j0 + j]
                    for i in prange(j1, p, schedule="dynamic", chunksize=8,
                                    num_threads=threads):
                        panel_update(A + i * p + j1, A + i * p + j0, panel, nb, i - j1 + 1,
                                     p - j1, avx)
                j0 = j1
    finally:
        free(panel)
    return info


def cholesky_solve(const double[:, ::1] l, const double[::1] b, double[::1] out):
    """out = ``(L L^T)^{-1} b`` for the factor L of :func:`cholesky` (its lower triangle):
    ``L y = b`` by rows, each ``b_i - sum_{k<i} L_ik y_k`` in increasing k, then ``L^T x = y``,
    each ``y_i - sum_{k>i} L_ki x_k`` in increasing k. ``out`` may not alias ``b``."""
    cdef Py_ssize_t p = l.shape[0], i, k
    if l.shape[1] != p or b.shape[0] != p or out.shape[0] != p:
        raise ValueError("shape mismatch between l, b and out")
    cdef double s
    with nogil:
        for i in range(p):
            s = b[i]
            for k in range(i):
                s = s - l[i, k] * out[k]
            out[i] = s / l[i, i]
        for i in range(p - 1, -1, -1):
            s = out[i]
            for k in range(i + 1, p):
                s = s - l[k, i] * out[k]
            out[i] = s / l[i, i]


# -- vectors ------------------------------------------------------------------------------------

def dot(const double[::1] a, const double[::1] b):
    """``sum_j a_j b_j``, added in increasing j from +0 (``_vector.pxd``'s, as in the kernels)."""
    cdef Py_ssize_t p = a.shape[0]
    if b.shape[0] != p:
        raise ValueError("a and b must have the same length")
    if p == 0:
        return 0.0
    cdef double s
    with nogil:
        s = vector_dot(&a[0], &b[0], p)
    return s


def total(const double[::1] a):
    """``sum_j a_j``, added in increasing j from +0."""
    cdef Py_ssize_t j
    cdef double s = 0.0
    with nogil:
        for j in range(a.shape[0]):
            s = s + a[j]
    return s


def norm(const double[::1] a):
    """``||a||_2``: ``sqrt(sum_j a_j^2)`` added in increasing j; only if that sum overflows,
    ``m sqrt(sum_j (a_j / m)^2)`` with m the largest ``|a_j|`` (``_vector.pxd``'s
    ``scaled_norm``, which the projections use too), so that a finite norm is never reported
    as inf, and every other case keeps the plain sum's bits."""
    cdef Py_ssize_t p = a.shape[0]
    if p == 0:
        return 0.0
    cdef double s
    with nogil:
        s = squared_norm(&a[0], p)
        s = scaled_norm(&a[0], p) if s == INFINITY else sqrt(s)
    return s
