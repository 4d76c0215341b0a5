"""Vectorised access to the per-sample losses of ``_loss.pxd`` (used by Problem and the tests)."""
import numpy as np

from _loss cimport HINGE, LOGISTIC, SQUARED, loss_derivative, loss_second_derivative, loss_value

LOSS_KINDS = {"logistic": LOGISTIC, "hinge": HINGE, "squared": SQUARED}


def _check(const double[::1] z, const double[::1] y):
    if z.shape[0] != y.shape[0]:
        raise ValueError(f"z and y differ in length ({z.shape[0]} != {y.shape[0]})")


def loss_values(int kind, const double[::1] z, const double[::1] y):
    """loss(z_i, y_i) for every i."""
    _check(z, y)
    out = np.empty(z.shape[0])
    cdef double[::1] o = out
    cdef Py_ssize_t i
    with nogil:
        for i in range(z.shape[0]):
            o[i] = loss_value(kind, z[i], y[i])
    return out


def loss_derivatives(int kind, const double[::1] z, const double[::1] y):
    """d loss / dz at (z_i, y_i) for every i."""
    _check(z, y)
    out = np.empty(z.shape[0])
    cdef double[::1] o = out
    cdef Py_ssize_t i
    with nogil:
        for i in range(z.shape[0]):
            o[i] = loss_derivative(kind, z[i], y[i])
    return out


def loss_second_derivatives(int kind, const double[::1] z, const double[::1] y):
    """d^2 loss / dz^2 at (z_i, y_i) for every i."""
    _check(z, y)
    out = np.empty(z.shape[0])
    cdef double[::1] o = out
    cdef Py_ssize_t i
    with nogil:
        for i in range(z.shape[0]):
            o[i] = loss_second_derivative(kind, z[i], y[i])
    return out
