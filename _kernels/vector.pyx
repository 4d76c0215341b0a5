"""Python access to ``_vector.pxd``: the projection onto the L2 ball and the sequential sums
behind it, for the Python layer (the same bits as the kernels, on every machine)."""
import numpy as np

from _vector cimport dot, scale_onto_ball, squared_norm


def project_l2_ball(const double[::1] theta, double radius):
    """Euclidean projection of theta onto {||v|| <= radius}; returns a new array."""
    out = np.array(theta, dtype=np.float64, copy=True)
    cdef double[::1] o = out
    cdef Py_ssize_t p = o.shape[0]
    with nogil:
        scale_onto_ball(&o[0], squared_norm(&o[0], p), radius, p)
    return out


def project_onto_ball_in_place(double[::1] theta, double radius):
    """Scale theta onto {||v|| <= radius} in place, if it lies outside; its squared norm summed
    in index order (never BLAS, whose order depends on the CPU)."""
    cdef Py_ssize_t p = theta.shape[0]
    if p == 0:
        return
    with nogil:
        scale_onto_ball(&theta[0], squared_norm(&theta[0], p), radius, p)


def sequential_dot(const double[::1] a, const double[::1] b):
    """sum_j a_j b_j, added in index order."""
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"a and b differ in length: {a.shape[0]} and {b.shape[0]}")
    if a.shape[0] == 0:
        return 0.0
    cdef double s
    with nogil:
        s = dot(&a[0], &b[0], a.shape[0])
    return s
