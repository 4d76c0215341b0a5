# Rows of a dense (C-contiguous) or CSR matrix X, read inside nogil loops.
# A dense row is read in full; a CSR row only at its stored entries, in increasing column order
# (Problem keeps X canonical: sorted indices, no duplicates). The sequential loops below are
# _vector.dot's and the kernels' accumulations: skipping a zero entry skips adding x_ij * t_j =
# +-0, which leaves every sum unchanged, so a CSR matrix gives bit-identical results to the
# same matrix stored densely.
# Shipped as dpsolve/_kernels/_rows.pxd: cimport only from libc here, never a sibling .pxd.


cdef struct Rows:
    const double* X                 # dense rows, or NULL for CSR
    const Py_ssize_t* indptr        # CSR: row i's entries are [indptr[i], indptr[i + 1])
    const Py_ssize_t* indices
    const double* data
    Py_ssize_t n, p


cdef inline Rows make_rows(object X) except *:
    """Rows of a C-contiguous float64 array, or of the tuple ``(indptr, indices, data, n, p)``
    that ``dpsolve._row_ops.kernel_rows`` makes of a CSR matrix (indptr and indices intp). The
    pointers borrow X's buffers: X must outlive the Rows."""
    cdef Rows R
    cdef const double[:, ::1] dense
    cdef const Py_ssize_t[::1] indptr
    cdef const Py_ssize_t[::1] indices
    cdef const double[::1] data
    if isinstance(X, tuple):
        indptr, indices, data = X[0], X[1], X[2]
        R.n, R.p = X[3], X[4]
        if indptr.shape[0] != R.n + 1 or indices.shape[0] != data.shape[0]:
            raise ValueError("inconsistent CSR arrays")
        if indptr[0] != 0 or indptr[R.n] != data.shape[0]:
            raise ValueError("inconsistent CSR arrays")
        R.X = NULL
        R.indptr = &indptr[0]
        R.indices = &indices[0] if indices.shape[0] > 0 else NULL
        R.data = &data[0] if data.shape[0] > 0 else NULL
    else:
        dense = X
        R.n, R.p = dense.shape[0], dense.shape[1]
        R.X = &dense[0, 0] if R.n > 0 and R.p > 0 else NULL
        R.indptr = R.indices = NULL
        R.data = NULL
    return R


cdef inline double row_dot(const Rows* R, Py_ssize_t i, const double* t) noexcept nogil:
    """<x_i, t>, summed in increasing column order."""
    cdef double s = 0.0
    cdef Py_ssize_t j, k, p = R.p
    cdef const double* x
    if R.X != NULL:
        x = R.X + i * p
        for j in range(p):
            s += x[j] * t[j]
    else:
        for k in range(R.indptr[i], R.indptr[i + 1]):
            s += R.data[k] * t[R.indices[k]]
    return s


cdef inline void row_axpy(const Rows* R, Py_ssize_t i, double a, double* out) noexcept nogil:
    """out += a * x_i (only x_i's stored entries for CSR)."""
    cdef Py_ssize_t j, k, p = R.p
    cdef const double* x
    if R.X != NULL:
        x = R.X + i * p
        for j in range(p):
            out[j] += a * x[j]
    else:
        for k in range(R.indptr[i], R.indptr[i + 1]):
            out[R.indices[k]] += a * R.data[k]


cdef inline const double* row_dense(const Rows* R, Py_ssize_t i, double* buffer) noexcept nogil:
    """Row i as p contiguous values: a pointer into X (dense), or ``buffer`` (p values, all
    zero on entry) with row i's entries scattered into it; undo with :func:`row_clear`."""
    cdef Py_ssize_t k
    if R.X != NULL:
        return R.X + i * R.p
    for k in range(R.indptr[i], R.indptr[i + 1]):
        buffer[R.indices[k]] = R.data[k]
    return buffer


cdef inline void row_clear(const Rows* R, Py_ssize_t i, double* buffer) noexcept nogil:
    """Zero what :func:`row_dense` scattered into ``buffer`` (O(nnz of the row))."""
    cdef Py_ssize_t k
    if R.X != NULL:
        return
    for k in range(R.indptr[i], R.indptr[i + 1]):
        buffer[R.indices[k]] = 0.0
