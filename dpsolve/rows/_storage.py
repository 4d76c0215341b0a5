"""How a Problem stores X in memory: a canonical CSR array (the form the kernels read), or a
dense float32/float64 array, read-only, shared with the caller only when no one can write to
it.
"""
import numpy as np
from scipy import sparse


def canonical_csr(X):
    """A CSR array (modified in place) with duplicates summed, sorted indices and intp index
    arrays: the form the kernels read."""
    X.sum_duplicates()
    X.sort_indices()
    X.indices = X.indices.astype(np.intp, copy=False)
    X.indptr = X.indptr.astype(np.intp, copy=False)
    return X


#: The scipy.sparse formats that can hold one entry more than once (duplicates are summed when
#: the matrix is made canonical); their ``has_canonical_format`` tells when none is held.
_FORMATS_WITH_DUPLICATES = ("csr", "csc", "coo", "bsr")


def sparse_canonical_copy(X):
    """A new canonical CSR array holding the values of the scipy.sparse matrix ``X``: duplicate
    entries summed in float64, stored in float32 when ``X`` is float32 and every stored value
    is a float32 number, else in float64. ``X`` itself is not modified.

    Duplicates are summed exactly as they are for the float64 copy ``X.astype(np.float64)``
    (the same conversion, the same order of the terms, in float64), so that the stored values
    equal that copy's: float32 is a storage format only (docs/conventions.md, "float32
    data"). A float32 matrix that can hold no duplicate (canonical, or a format without
    duplicates) is converted without sums, in float32. Integer duplicates are summed in
    float64 too (summed in their own type they could wrap around).

    A sum of float32 numbers is in general not a float32 number; rounding it would make the
    rows differ from the float64 copy's, and a CSR array has one dtype, so then the whole
    matrix is kept in float64 (the float64 copy's sums; twice the bytes of its values). No
    warning says so: whether a sum is a float32 number depends on the data, and the dtype a
    Problem holds X in is never part of a release.
    """
    can_sum = (X.format in _FORMATS_WITH_DUPLICATES
               and not getattr(X, "has_canonical_format", False))
    if X.dtype == np.float32 and not can_sum:
        return canonical_csr(sparse.csr_array(X, dtype=np.float32, copy=True))
    if X.dtype == np.float64:
        return canonical_csr(sparse.csr_array(X, dtype=np.float64, copy=True))
    given = X.dtype
    # the values in float64 first (a copy in the same format, duplicates kept), then the same
    # conversion as for float64 input: the sums are the float64 copy's, bit for bit
    X = canonical_csr(sparse.csr_array(X.astype(np.float64), dtype=np.float64, copy=False))
    if given == np.float32:
        with np.errstate(over="ignore"):       # a sum beyond float32's range: kept float64
            values = X.data.astype(np.float32)
        if np.array_equal(values, X.data):      # exact: every sum is a float32 number
            X.data = values
    return X


def read_only(X):
    """Mark X's buffers read-only (a CSR matrix's three arrays)."""
    for array in ((X.data, X.indices, X.indptr) if sparse.issparse(X) else (X,)):
        array.flags.writeable = False


#: The dtypes a Problem stores X in as given; every other real dtype is converted to float64.
STORED_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def stored_dtype(dtype):
    """float32 and float64 are kept; every other real dtype is stored as float64."""
    return np.dtype(dtype) if np.dtype(dtype) in STORED_DTYPES else np.dtype(np.float64)


def frozen(X):
    """Whether no one can write to X's memory: X and every ndarray in its ``.base`` chain are
    read-only, and a buffer at the end of the chain (an ``mmap`` opened for reading, bytes) is
    read-only too. A read-only view of a writable array is not frozen: its owner can change it
    under a Problem that shares it."""
    a = X
    while isinstance(a, np.ndarray):
        if a.flags.writeable:
            return False
        a = a.base
    if a is None:
        return True
    try:
        with memoryview(a) as buffer:
            return buffer.readonly
    except TypeError:           # not a buffer: we cannot tell, so do not share it
        return False
