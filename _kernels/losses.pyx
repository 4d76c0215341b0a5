"""Vectorised access to the per-sample losses of ``_loss.pxd`` (used by Problem and the tests).

Every evaluator takes the huber_hinge width ``h`` explicitly (no default, so that a caller
cannot silently get some width); the other losses ignore it.
"""
import numpy as np
from libc.math cimport isfinite

from _loss cimport (HINGE, HUBER_HINGE, LOGISTIC, SQUARED, loss_derivative,
                    loss_second_derivative, loss_value)

LOSS_KINDS = {"logistic": LOGISTIC, "hinge": HINGE, "squared": SQUARED,
              "huber_hinge": HUBER_HINGE}


cdef object _evaluate(int order, int kind, const double[::1] z, const double[::1] y, double h):
    """The loss (order 0) or its first or second derivative in z at every (z_i, y_i)."""
    if z.shape[0] != y.shape[0]:
        raise ValueError(f"z and y differ in length ({z.shape[0]} != {y.shape[0]})")
    # huber_hinge divides by h: a zero or non-finite width would give inf/NaN silently
    if kind == HUBER_HINGE and not (h > 0.0 and isfinite(h)):
        raise ValueError(f"huber_hinge needs a finite width h > 0, got {h!r}")
    out = np.empty(z.shape[0])
    cdef double[::1] o = out
    cdef Py_ssize_t i
    with nogil:
        for i in range(z.shape[0]):
            if order == 0:
                o[i] = loss_value(kind, z[i], y[i], h)
            elif order == 1:
                o[i] = loss_derivative(kind, z[i], y[i], h)
            else:
                o[i] = loss_second_derivative(kind, z[i], y[i], h)
    return out


def loss_values(int kind, const double[::1] z, const double[::1] y, double h):
    """loss(z_i, y_i) for every i; ``h`` is the huber_hinge width (ignored by other losses)."""
    return _evaluate(0, kind, z, y, h)


def loss_derivatives(int kind, const double[::1] z, const double[::1] y, double h):
    """d loss / dz at (z_i, y_i) for every i (hinge: the subgradient -y 1[yz < 1]);
    ``h`` is the huber_hinge width (ignored by other losses)."""
    return _evaluate(1, kind, z, y, h)


def loss_second_derivatives(int kind, const double[::1] z, const double[::1] y, double h):
    """d^2 loss / dz^2 at (z_i, y_i) for every i (0 for hinge; 1/(2h) or 0 for huber_hinge);
    ``h`` is the huber_hinge width (ignored by other losses)."""
    return _evaluate(2, kind, z, y, h)
