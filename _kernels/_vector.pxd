# Small dense vector operations on raw pointers, for use inside nogil loops.
# Plain sequential loops: the summation order is fixed, so results are reproducible
# bit for bit (setup.py also turns off FMA contraction).
from libc.math cimport sqrt


cdef inline double dot(const double* a, const double* b, Py_ssize_t p) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t j
    for j in range(p):
        s += a[j] * b[j]
    return s


cdef inline double squared_norm(const double* a, Py_ssize_t p) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t j
    for j in range(p):
        s += a[j] * a[j]
    return s


cdef inline void scale_onto_ball(double* a, double sqnorm, double radius, Py_ssize_t p) noexcept nogil:
    """Given sqnorm = ||a||^2, scale a onto the ball of the given radius if it lies outside."""
    cdef double c
    cdef Py_ssize_t j
    if sqnorm > radius * radius:
        c = radius / sqrt(sqnorm)
        for j in range(p):
            a[j] *= c
