"""Vectorised access to the per-sample losses of ``_loss.pxd`` (used by Problem and the tests)."""
import numpy as np

from _loss cimport HINGE, LOGISTIC, SQUARED, loss_derivative, loss_second_derivative, loss_value

LOSS_KINDS = {"logistic": LOGISTIC, "hinge": HINGE, "squared": SQUARED}


cdef object _evaluate(int order, int kind, const double[::1] z, const double[::1] y):
    """The loss (order 0) or its first or second derivative in z at every (z_i, y_i)."""
    if z.shape[0] != y.shape[0]:
        raise ValueError(f"z and y differ in length ({z.shape[0]} != {y.shape[0]})")
    out = np.empty(z.shape[0])
    cdef double[::1] o = out
    cdef Py_ssize_t i
    with nogil:
        for i in range(z.shape[0]):
            if order == 0:
                o[i] = loss_value(kind, z[i], y[i])
            elif order == 1:
                o[i] = loss_derivative(kind, z[i], y[i])
            else:
                o[i] = loss_second_derivative(kind, z[i], y[i])
    return out


def loss_values(int kind, const double[::1] z, const double[::1] y):
    """loss(z_i, y_i) for every i."""
    return _evaluate(0, kind, z, y)


def loss_derivatives(int kind, const double[::1] z, const double[::1] y):
    """d loss / dz at (z_i, y_i) for every i (hinge: the subgradient -y 1[yz < 1])."""
    return _evaluate(1, kind, z, y)


def loss_second_derivatives(int kind, const double[::1] z, const double[::1] y):
    """d^2 loss / dz^2 at (z_i, y_i) for every i (0 for hinge)."""
    return _evaluate(2, kind, z, y)
