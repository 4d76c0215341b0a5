# Rows of a dense (C-contiguous) or CSR matrix X, read inside nogil loops.
# A dense row is read in full; a CSR row only at its stored entries, in increasing column order
# (Problem keeps X canonical: sorted indices, no duplicates). The sequential loops below are
# _vector.dot's and the kernels' accumulations: skipping a zero entry skips adding x_ij * t_j =
# +-0, which leaves every sum unchanged, so a CSR matrix gives bit-identical results to the
# same matrix stored densely.
# X's entries may be stored as float64 or float32. float32 is a storage format only: each entry is
# converted to double (exactly) as it is read, before any arithmetic, so every result on a float32
# X is bit-identical to the same call on its float64 copy, for half the bytes read.
# Shipped as dpsolve/_kernels/_rows.pxd: cimport only from libc here, never a sibling .pxd.


# The two storage types of X's entries; each loop below is written once for both.
ctypedef fused xvalue:
    float
    double


cdef extern from *:
    """
    /* out[j] = (((out[j] + d0 x0[j]) + d1 x1[j]) + d2 x2[j]) + d3 x3[j] for four float32 rows,
       each x converted to double exactly, one IEEE multiply and one IEEE add per term (as the
       scalar loop, never fused). Different j are independent sums, so packing j keeps every
       coordinate's order: the bits are the scalar loop's. Where the CPU has AVX (checked at run
       time: the module is built for baseline SSE2), four j share a register and one instruction
       converts four floats, which halves the instructions per entry of the compiler's SSE2 loop;
       these loops are compute bound for float32 rows, which read half the bytes. The target is
       AVX, not FMA, so the compiler cannot fuse a multiply and an add (nor may it here:
       setup.py builds with -ffp-contract=off). While adding, prefetches the nahead rows
       ahead[r] (the caller's next rows), one cache line of each per sixteen entries. */
    #if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    #include <immintrin.h>
    #define DPS_AVX_DISPATCH 1
    __attribute__((target("avx")))
    static void dps_axpy4_float_avx(const float* x0, const float* x1, const float* x2,
                                    const float* x3, double d0, double d1, double d2,
                                    double d3, double* out, Py_ssize_t p,
                                    const float* const* ahead, int nahead)
    {
        Py_ssize_t j = 0;
        int r;
        __m256d a0 = _mm256_set1_pd(d0), a1 = _mm256_set1_pd(d1);
        __m256d a2 = _mm256_set1_pd(d2), a3 = _mm256_set1_pd(d3);
        for (; j + 4 <= p; j += 4) {
            __m256d o;
            if ((j & 15) == 0)
                for (r = 0; r < nahead; r++)
                    __builtin_prefetch(ahead[r] + j);
            o = _mm256_loadu_pd(out + j);
            o = _mm256_add_pd(o, _mm256_mul_pd(a0, _mm256_cvtps_pd(_mm_loadu_ps(x0 + j))));
            o = _mm256_add_pd(o, _mm256_mul_pd(a1, _mm256_cvtps_pd(_mm_loadu_ps(x1 + j))));
            o = _mm256_add_pd(o, _mm256_mul_pd(a2, _mm256_cvtps_pd(_mm_loadu_ps(x2 + j))));
            o = _mm256_add_pd(o, _mm256_mul_pd(a3, _mm256_cvtps_pd(_mm_loadu_ps(x3 + j))));
            _mm256_storeu_pd(out + j, o);
        }
        for (; j < p; j++) {
            double o = out[j];
            o = o + d0 * (double) x0[j];
            o = o + d1 * (double) x1[j];
            o = o + d2 * (double) x2[j];
            o = o + d3 * (double) x3[j];
            out[j] = o;
        }
    }
    #endif

    static void dps_axpy4_float(const float* x0, const float* x1, const float* x2,
                                const float* x3, double d0, double d1, double d2, double d3,
                                double* out, Py_ssize_t p, const float* const* ahead,
                                int nahead)
    {
        Py_ssize_t j;
    #ifdef DPS_AVX_DISPATCH
        if (__builtin_cpu_supports("avx")) {
            dps_axpy4_float_avx(x0, x1, x2, x3, d0, d1, d2, d3, out, p, ahead, nahead);
            return;
        }
    #endif
        (void) ahead; (void) nahead;
        for (j = 0; j < p; j++) {
            double o = out[j];
            o = o + d0 * (double) x0[j];
            o = o + d1 * (double) x1[j];
            o = o + d2 * (double) x2[j];
            o = o + d3 * (double) x3[j];
            out[j] = o;
        }
    }

    /* add_rows' loop for dense float32 rows: out += d[k - c0] x_i for k = live[0], live[1], ...
       four rows at a time (dps_axpy4_float), i = k or at[k], prefetching the rows k in [n0, n1)
       a row per row added; returns the number of live rows done (a multiple of four). Kept out
       of line, so that the float64 loop it sits beside compiles as it did without it. */
    #if defined(__GNUC__) || defined(__clang__)
    __attribute__((noinline))
    #endif
    static Py_ssize_t dps_add_float_rows(const float* X, Py_ssize_t p, const Py_ssize_t* at,
                                         const Py_ssize_t* live, Py_ssize_t m, Py_ssize_t c0,
                                         const double* d, double* out, Py_ssize_t n0,
                                         Py_ssize_t n1)
    {
        Py_ssize_t q = 0, r[4];
        const float* ahead[4];
        int i, nahead;
        for (; q + 4 <= m; q += 4) {
            for (i = 0; i < 4; i++)
                r[i] = at == NULL ? live[q + i] : at[live[q + i]];
            for (nahead = 0; nahead < 4 && n0 < n1; nahead++, n0++)
                ahead[nahead] = X + (at == NULL ? n0 : at[n0]) * p;
            dps_axpy4_float(X + r[0] * p, X + r[1] * p, X + r[2] * p, X + r[3] * p,
                            d[live[q] - c0], d[live[q + 1] - c0], d[live[q + 2] - c0],
                            d[live[q + 3] - c0], out, p, ahead, nahead);
        }
        return q;
    }

    /* out[r] = sum_j (double) x[r][j] * t[j] for the sixteen float32 rows x[r], each sum over
       j in increasing order, with AVX: four rows per register (lanes are rows), every lane
       doing the scalar loop's operations (exact conversion, one IEEE multiply, one IEEE add),
       so the bits are the scalar loop's. A row's sum is a chain of dependent additions: with
       sixteen rows (four chains of four lanes) their latency stays hidden and the loop is
       bound by the conversions and the transposes instead (about 15% faster than the SSE2
       eight-row loop in gd.pyx on rows in cache). If ``next`` is not NULL, prefetches its
       sixteen rows one cache line ahead. Call only if dps_has_avx(). */
    #ifdef DPS_AVX_DISPATCH
    __attribute__((target("avx")))
    static inline void dps_columns8(const float* const* x, Py_ssize_t j, __m256* c)
    {
        /* c[k] = (x[0][j+k] .. x[3][j+k] | x[4][j+k] .. x[7][j+k]): a 4 x 4 transpose in each
           128-bit half */
        __m256 a0 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(x[0] + j)),
                                         _mm_loadu_ps(x[4] + j), 1);
        __m256 a1 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(x[1] + j)),
                                         _mm_loadu_ps(x[5] + j), 1);
        __m256 a2 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(x[2] + j)),
                                         _mm_loadu_ps(x[6] + j), 1);
        __m256 a3 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(x[3] + j)),
                                         _mm_loadu_ps(x[7] + j), 1);
        __m256 u0 = _mm256_unpacklo_ps(a0, a1);     /* x0j x1j x0j+1 x1j+1 | rows 4, 5 */
        __m256 u1 = _mm256_unpackhi_ps(a0, a1);     /* x0j+2 x1j+2 x0j+3 x1j+3 | rows 4, 5 */
        __m256 u2 = _mm256_unpacklo_ps(a2, a3);
        __m256 u3 = _mm256_unpackhi_ps(a2, a3);
        c[0] = _mm256_shuffle_ps(u0, u2, 0x44);
        c[1] = _mm256_shuffle_ps(u0, u2, 0xEE);
        c[2] = _mm256_shuffle_ps(u1, u3, 0x44);
        c[3] = _mm256_shuffle_ps(u1, u3, 0xEE);
    }

    __attribute__((target("avx")))
    static void dps_margins16_float(const float* const* x, const float* const* next,
                                    Py_ssize_t p, const double* t, double* out)
    {
        Py_ssize_t j = 0;
        int r, k;
        double s[16];
        __m256d acc[4];                             /* rows 0-3, 4-7, 8-11, 12-15 */
        for (k = 0; k < 4; k++)
            acc[k] = _mm256_setzero_pd();
        for (; j + 4 <= p; j += 4) {
            __m256 a[4], b[4];
            if (next != NULL && (j & 15) == 0)
                for (r = 0; r < 16; r++)
                    __builtin_prefetch(next[r] + j);
            dps_columns8(x, j, a);
            dps_columns8(x + 8, j, b);
            for (k = 0; k < 4; k++) {
                __m256d tk = _mm256_set1_pd(t[j + k]);
                acc[0] = _mm256_add_pd(acc[0], _mm256_mul_pd(
                    _mm256_cvtps_pd(_mm256_castps256_ps128(a[k])), tk));
                acc[1] = _mm256_add_pd(acc[1], _mm256_mul_pd(
                    _mm256_cvtps_pd(_mm256_extractf128_ps(a[k], 1)), tk));
                acc[2] = _mm256_add_pd(acc[2], _mm256_mul_pd(
                    _mm256_cvtps_pd(_mm256_castps256_ps128(b[k])), tk));
                acc[3] = _mm256_add_pd(acc[3], _mm256_mul_pd(
                    _mm256_cvtps_pd(_mm256_extractf128_ps(b[k], 1)), tk));
            }
        }
        for (k = 0; k < 4; k++)
            _mm256_storeu_pd(s + 4 * k, acc[k]);
        for (; j < p; j++) {
            double tj = t[j];
            for (r = 0; r < 16; r++)
                s[r] += (double) x[r][j] * tj;
        }
        for (r = 0; r < 16; r++)
            out[r] = s[r];
    }
    #else
    static void dps_margins16_float(const float* const* x, const float* const* next,
                                    Py_ssize_t p, const double* t, double* out)
    {
        (void) x; (void) next; (void) p; (void) t; (void) out;   /* never called */
    }
    #endif

    static inline int dps_has_avx(void)
    {
    #ifdef DPS_AVX_DISPATCH
        return __builtin_cpu_supports("avx");
    #else
        return 0;
    #endif
    }

    /* dense_dots_at for float32 rows sixteen at a time with AVX (dps_margins16_float, the same
       bits): returns 0 at once without AVX, else the first k not done. Prefetches the next
       sixteen rows while summing these (rows in any order are more than the hardware
       prefetcher follows). Out of line, as dps_add_float_rows. */
    #if defined(__GNUC__) || defined(__clang__)
    __attribute__((noinline))
    #endif
    static Py_ssize_t dps_float_dots_at(const float* X, Py_ssize_t p, const Py_ssize_t* at,
                                        Py_ssize_t m, const double* t, double* out)
    {
        Py_ssize_t k = 0;
        const float* rows[32];
        int r, ahead;
        if (!dps_has_avx())
            return 0;
        for (; k + 16 <= m; k += 16) {
            ahead = p >= 32 && k + 32 <= m;
            for (r = 0; r < (ahead ? 32 : 16); r++)
                rows[r] = X + at[k + r] * p;
            dps_margins16_float(rows, ahead ? rows + 16 : NULL, p, t, out + k);
        }
        return k;
    }
    #if defined(__GNUC__) || defined(__clang__)
    #define dps_prefetch_rows(address) __builtin_prefetch(address)
    #else
    #define dps_prefetch_rows(address) ((void)(address))
    #endif
    """
    bint has_avx "dps_has_avx"() noexcept nogil
    void prefetch_rows "dps_prefetch_rows"(const void* address) noexcept nogil
    Py_ssize_t float_dots_at "dps_float_dots_at"(const float* X, Py_ssize_t p,
                                                 const Py_ssize_t* at, Py_ssize_t m,
                                                 const double* t, double* out) noexcept nogil
    Py_ssize_t add_float_rows "dps_add_float_rows"(const float* X, Py_ssize_t p,
                                                   const Py_ssize_t* at, const Py_ssize_t* live,
                                                   Py_ssize_t m, Py_ssize_t c0, const double* d,
                                                   double* out, Py_ssize_t n0,
                                                   Py_ssize_t n1) noexcept nogil
    void margins16_float "dps_margins16_float"(const float* const* x, const float* const* next,
                                               Py_ssize_t p, const double* t,
                                               double* out) noexcept nogil



cdef struct Rows:
    const double* X                 # dense float64 rows, else NULL
    const float* X32                # dense float32 rows, else NULL
    const Py_ssize_t* indptr        # CSR: row i's entries are [indptr[i], indptr[i + 1])
    const Py_ssize_t* indices
    const double* data              # CSR float64 values, else NULL
    const float* data32             # CSR float32 values, else NULL
    Py_ssize_t n, p
    bint dense                      # dense rows (X or X32), else CSR
    bint single                     # entries stored as float32 (X32 or data32)


cdef inline bint is_float32(object a):
    """Whether the array ``a`` holds float32 values (anything else goes to the float64 path,
    which keeps its error for other dtypes)."""
    dtype = getattr(a, "dtype", None)
    return dtype is not None and getattr(dtype, "char", None) == "f"


cdef inline Rows make_rows(object X) except *:
    """Rows of a C-contiguous float64 or float32 array, or of the tuple
    ``(indptr, indices, data, n, p)`` that ``dpsolve._row_ops.kernel_rows`` makes of a CSR matrix
    (indptr and indices intp, data float64 or float32). The pointers borrow X's buffers: X must
    outlive the Rows."""
    cdef Rows R
    cdef const double[:, ::1] dense
    cdef const float[:, ::1] dense32
    cdef const Py_ssize_t[::1] indptr
    cdef const Py_ssize_t[::1] indices
    cdef const double[::1] data
    cdef const float[::1] data32
    cdef Py_ssize_t nnz
    R.X = NULL
    R.X32 = NULL
    R.indptr = R.indices = NULL
    R.data = NULL
    R.data32 = NULL
    if isinstance(X, tuple):
        indptr, indices = X[0], X[1]
        R.n, R.p = X[3], X[4]
        R.dense = False
        R.single = is_float32(X[2])
        if R.single:
            data32 = X[2]
            nnz = data32.shape[0]
        else:
            data = X[2]
            nnz = data.shape[0]
        if indptr.shape[0] != R.n + 1 or indices.shape[0] != nnz:
            raise ValueError("inconsistent CSR arrays")
        if indptr[0] != 0 or indptr[R.n] != nnz:
            raise ValueError("inconsistent CSR arrays")
        R.indptr = &indptr[0]
        R.indices = &indices[0] if nnz > 0 else NULL
        if nnz > 0:
            if R.single:
                R.data32 = &data32[0]
            else:
                R.data = &data[0]
    else:
        R.dense = True
        R.single = is_float32(X)
        if R.single:
            dense32 = X
            R.n, R.p = dense32.shape[0], dense32.shape[1]
            R.X32 = &dense32[0, 0] if R.n > 0 and R.p > 0 else NULL
        else:
            dense = X
            R.n, R.p = dense.shape[0], dense.shape[1]
            R.X = &dense[0, 0] if R.n > 0 and R.p > 0 else NULL
    return R


# -- the loops, once per storage type: every entry is converted to double before use -----------

cdef inline double dense_dot(const xvalue* x, const double* t, Py_ssize_t p) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t j
    for j in range(p):
        s += <double> x[j] * t[j]
    return s


cdef inline double csr_dot(const xvalue* data, const Py_ssize_t* indices, Py_ssize_t k0,
                           Py_ssize_t k1, const double* t) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t k
    for k in range(k0, k1):
        s += <double> data[k] * t[indices[k]]
    return s


cdef inline void dense_axpy(const xvalue* x, double a, double* out, Py_ssize_t p) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(p):
        out[j] += a * <double> x[j]


cdef inline void csr_axpy(const xvalue* data, const Py_ssize_t* indices, Py_ssize_t k0,
                          Py_ssize_t k1, double a, double* out) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(k0, k1):
        out[indices[k]] += a * <double> data[k]


cdef inline void dense_convert(const xvalue* x, double* out, Py_ssize_t p) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(p):
        out[j] = <double> x[j]


cdef inline void csr_scatter(const xvalue* data, const Py_ssize_t* indices, Py_ssize_t k0,
                             Py_ssize_t k1, double* out) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(k0, k1):
        out[indices[k]] = <double> data[k]


cdef inline Py_ssize_t dense_dots_at(const xvalue* X, Py_ssize_t p, const Py_ssize_t* at,
                                     Py_ssize_t m, const double* t, double* out) noexcept nogil:
    """out[k] = <x_{at[k]}, t> for the rows at[0], at[1], ... eight at a time (eight independent
    sums in flight, each over j in order: dense_dot's bits), prefetching the next eight rows a
    cache line ahead (rows in any order are more than the hardware prefetcher follows; short
    rows are not worth it). Returns the first k not done."""
    cdef Py_ssize_t k = 0, j
    cdef bint prefetching = p >= 32
    cdef const xvalue* x0
    cdef const xvalue* x1
    cdef const xvalue* x2
    cdef const xvalue* x3
    cdef const xvalue* x4
    cdef const xvalue* x5
    cdef const xvalue* x6
    cdef const xvalue* x7
    cdef double s0, s1, s2, s3, s4, s5, s6, s7, tj
    while k + 8 <= m:
        x0 = X + at[k] * p
        x1 = X + at[k + 1] * p
        x2 = X + at[k + 2] * p
        x3 = X + at[k + 3] * p
        x4 = X + at[k + 4] * p
        x5 = X + at[k + 5] * p
        x6 = X + at[k + 6] * p
        x7 = X + at[k + 7] * p
        s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
        for j in range(p):
            if (j & 7) == 0 and prefetching and k + 16 <= m:
                prefetch_rows(X + at[k + 8] * p + j)
                prefetch_rows(X + at[k + 9] * p + j)
                prefetch_rows(X + at[k + 10] * p + j)
                prefetch_rows(X + at[k + 11] * p + j)
                prefetch_rows(X + at[k + 12] * p + j)
                prefetch_rows(X + at[k + 13] * p + j)
                prefetch_rows(X + at[k + 14] * p + j)
                prefetch_rows(X + at[k + 15] * p + j)
            tj = t[j]
            s0 += <double> x0[j] * tj
            s1 += <double> x1[j] * tj
            s2 += <double> x2[j] * tj
            s3 += <double> x3[j] * tj
            s4 += <double> x4[j] * tj
            s5 += <double> x5[j] * tj
            s6 += <double> x6[j] * tj
            s7 += <double> x7[j] * tj
        out[k] = s0
        out[k + 1] = s1
        out[k + 2] = s2
        out[k + 3] = s3
        out[k + 4] = s4
        out[k + 5] = s5
        out[k + 6] = s6
        out[k + 7] = s7
        k += 8
    return k


# -- one row of R: the storage is chosen once per row ------------------------------------------

cdef inline double row_dot(const Rows* R, Py_ssize_t i, const double* t) noexcept nogil:
    """<x_i, t>, summed in increasing column order."""
    cdef Py_ssize_t p = R.p
    if R.dense:
        if R.single:
            return dense_dot(R.X32 + i * p, t, p)
        return dense_dot(R.X + i * p, t, p)
    if R.single:
        return csr_dot(R.data32, R.indices, R.indptr[i], R.indptr[i + 1], t)
    return csr_dot(R.data, R.indices, R.indptr[i], R.indptr[i + 1], t)


cdef inline void row_axpy(const Rows* R, Py_ssize_t i, double a, double* out) noexcept nogil:
    """out += a * x_i (only x_i's stored entries for CSR)."""
    cdef Py_ssize_t p = R.p
    if R.dense:
        if R.single:
            dense_axpy(R.X32 + i * p, a, out, p)
        else:
            dense_axpy(R.X + i * p, a, out, p)
    elif R.single:
        csr_axpy(R.data32, R.indices, R.indptr[i], R.indptr[i + 1], a, out)
    else:
        csr_axpy(R.data, R.indices, R.indptr[i], R.indptr[i + 1], a, out)


cdef inline bint row_borrows(const Rows* R) noexcept nogil:
    """Whether :func:`row_dense` returns pointers into X (dense float64) rather than ``buffer``:
    if not, the caller must pass a buffer of p zeros."""
    return R.dense and not R.single


cdef inline const double* row_dense(const Rows* R, Py_ssize_t i, double* buffer) noexcept nogil:
    """Row i as p contiguous doubles: a pointer into X (dense float64), or ``buffer`` (p values,
    all zero on entry) holding the row converted (dense float32: all p written) or its entries
    scattered (CSR); undo with :func:`row_clear`."""
    cdef Py_ssize_t p = R.p
    if R.dense:
        if not R.single:
            return R.X + i * p
        dense_convert(R.X32 + i * p, buffer, p)
    elif R.single:
        csr_scatter(R.data32, R.indices, R.indptr[i], R.indptr[i + 1], buffer)
    else:
        csr_scatter(R.data, R.indices, R.indptr[i], R.indptr[i + 1], buffer)
    return buffer


cdef inline void row_clear(const Rows* R, Py_ssize_t i, double* buffer) noexcept nogil:
    """Zero what :func:`row_dense` scattered into ``buffer`` (O(nnz of the row)); nothing for
    dense rows (a converted float32 row is overwritten in full by the next one)."""
    cdef Py_ssize_t k
    if R.dense:
        return
    for k in range(R.indptr[i], R.indptr[i + 1]):
        buffer[R.indices[k]] = 0.0


cdef inline void row_dots_at(const Rows* R, const Py_ssize_t* at, Py_ssize_t m, const double* t,
                             double* out) noexcept nogil:
    """out[k] = <x_{at[k]}, t> for k < m, each exactly as :func:`row_dot`; dense rows eight (or,
    float32 with AVX, sixteen) at a time, which keeps that many sums in flight instead of
    waiting on one."""
    cdef Py_ssize_t k = 0
    if R.dense:
        if R.single:
            k = float_dots_at(R.X32, R.p, at, m, t, out)
            k += dense_dots_at(R.X32, R.p, at + k, m - k, t, out + k)
        else:
            k = dense_dots_at(R.X, R.p, at, m, t, out)
    while k < m:
        out[k] = row_dot(R, at[k], t)
        k += 1


cdef inline void dense_axpy4(const xvalue* x0, const xvalue* x1, const xvalue* x2,
                             const xvalue* x3, double d0, double d1, double d2, double d3,
                             double* out, Py_ssize_t p) noexcept nogil:
    """out += d0 x0, then d1 x1, d2 x2, d3 x3: each coordinate's additions in that order."""
    cdef Py_ssize_t j
    cdef double o
    for j in range(p):
        o = out[j]
        o = o + d0 * <double> x0[j]
        o = o + d1 * <double> x1[j]
        o = o + d2 * <double> x2[j]
        o = o + d3 * <double> x3[j]
        out[j] = o


cdef inline void add_rows(const Rows* R, const Py_ssize_t* at, Py_ssize_t c0, Py_ssize_t c1,
                          const double* d, Py_ssize_t* live, double* out, Py_ssize_t n0,
                          Py_ssize_t n1) noexcept nogil:
    """out += d[k - c0] x_i for k in [c0, c1) with d[k - c0] != 0, i = k (or at[k]), in order
    of k: each coordinate's sum adds the rows in order, as row_axpy one row at a time does, but
    dense rows four at a time (one load and store of out per four rows: for rows just read,
    still in cache; four rows streamed from memory at once were slower than one at a time).
    ``live`` holds c1 - c0 indices. Rows with d = 0 are skipped, as there (adding +0 would turn
    a -0 into +0).

    The rows k in [n0, n1) (the caller's next chunk; n0 = n1 for none) are prefetched while
    dense float32 rows are added, a row per row added: their sums are compute bound, so the
    next chunk's reads from memory overlap them instead of following them."""
    cdef Py_ssize_t k, i, m = 0, q = 0, p = R.p
    cdef Py_ssize_t r[4]
    for k in range(c0, c1):
        if d[k - c0] != 0.0:
            live[m] = k
            m += 1
    if R.dense and R.single:
        q = add_float_rows(R.X32, p, at, live, m, c0, d, out, n0, n1)
    elif R.dense:
        while q + 4 <= m:
            for i in range(4):
                r[i] = live[q + i] if at == NULL else at[live[q + i]]
            dense_axpy4(R.X + r[0] * p, R.X + r[1] * p, R.X + r[2] * p, R.X + r[3] * p,
                        d[live[q] - c0], d[live[q + 1] - c0], d[live[q + 2] - c0],
                        d[live[q + 3] - c0], out, p)
            q += 4
    while q < m:
        k = live[q]
        row_axpy(R, k if at == NULL else at[k], d[k - c0], out)
        q += 1
