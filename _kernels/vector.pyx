"""Python access to ``_vector.pxd``'s projection onto the L2 ball, for the Python layer: the
kernels' own sums (the same bits as the kernels, on every machine)."""
import numpy as np

from _vector cimport scale_onto_ball, squared_norm


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

