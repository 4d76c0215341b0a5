"""Python access to ``_vector.pxd`` (projection onto the L2 ball)."""
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
