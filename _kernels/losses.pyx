"""Vectorised access to the per-sample losses of ``_loss.pxd`` (used by Problem and the tests).

Every evaluator of the margin losses takes the huber_hinge width ``h`` explicitly (no default, so
that a caller cannot silently get some width); the other losses ignore it. The multinomial loss,
a function of K logits per record, has evaluators of its own (``multinomial_values``,
``multinomial_derivatives``).
"""
import numpy as np

from _loss cimport (HINGE, HUBER_HINGE, LOGISTIC, SQUARED, check_loss_parameter,
                    loss_derivative, loss_second_derivative, loss_value,
                    multinomial_derivative, multinomial_value)

# Built from _loss.pxd's LossKind, so the names and the integers the kernels branch on cannot
# drift apart.
LOSS_KINDS = {"logistic": LOGISTIC, "hinge": HINGE, "squared": SQUARED,
              "huber_hinge": HUBER_HINGE}


cdef object _evaluate(int order, int kind, const double[::1] z, const double[::1] y, double h):
    """The loss (order 0) or its first or second derivative in z at every (z_i, y_i)."""
    if z.shape[0] != y.shape[0]:
        raise ValueError(f"z and y differ in length ({z.shape[0]} != {y.shape[0]})")
    check_loss_parameter(kind, h)
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


cdef _check_logits(const double[:, ::1] Z, const Py_ssize_t[::1] labels):
    """Shapes and label range, checked here so that the nogil loops index only valid memory."""
    if Z.shape[0] != labels.shape[0]:
        raise ValueError(f"Z and labels differ in length ({Z.shape[0]} != {labels.shape[0]})")
    if Z.shape[1] < 1:
        raise ValueError("Z needs at least one column (one logit per class)")
    cdef Py_ssize_t i, K = Z.shape[1]
    for i in range(labels.shape[0]):
        if labels[i] < 0 or labels[i] >= K:
            raise ValueError(f"labels must lie in [0, {K}), got {labels[i]} at index {i}")


def multinomial_values(const double[:, ::1] Z, const Py_ssize_t[::1] labels):
    """``-log softmax(Z[i])[labels[i]]`` for every row i of the (n, K) logits ``Z``.

    ``labels`` is an intp array with entries in ``[0, K)``.
    """
    _check_logits(Z, labels)
    out = np.empty(Z.shape[0])
    cdef double[::1] o = out
    cdef Py_ssize_t i, K = Z.shape[1]
    with nogil:
        for i in range(Z.shape[0]):
            o[i] = multinomial_value(&Z[i, 0], K, labels[i])
    return out


def multinomial_derivatives(const double[:, ::1] Z, const Py_ssize_t[::1] labels,
                            double[::1] norms=None):
    """``softmax(Z[i]) - e_{labels[i]}`` for every row i: an (n, K) array, the derivative of
    the multinomial loss in the logits. With ``norms`` (float64, length n), the Euclidean norm
    of each row of the result (as the kernel returns it, at most sqrt(2)) is written there."""
    _check_logits(Z, labels)
    cdef Py_ssize_t i, n = Z.shape[0], K = Z.shape[1]
    cdef bint keep = norms is not None
    if keep and norms.shape[0] != n:
        raise ValueError(f"norms must have length {n}, got {norms.shape[0]}")
    out = np.empty((n, K))
    cdef double[:, ::1] o = out
    cdef double r
    with nogil:
        for i in range(n):
            r = multinomial_derivative(&Z[i, 0], K, labels[i], &o[i, 0])
            if keep:
                norms[i] = r
    return out
