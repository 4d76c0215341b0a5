# Per-sample losses of a linear model, as functions of the margin z = <theta, x> and label y.
# Inline so every kernel that cimports them compiles them into its own loop (no call, no vtable).
# Formulas and constants: docs/conventions.md, "Losses and their constants".
# h is the width of huber_hinge (> 0: callers check it with check_loss_parameter before their
# nogil loops); the other losses ignore it.
# The multinomial (softmax) loss is not a function of one margin: it has functions of its own
# (end of this file) on the K logits z = theta^T x, and no LossKind.
# Shipped as dpsolve/_kernels/_loss.pxd: cimport only from libc here, never a sibling .pxd
# (the build finds siblings by their top-level names, which an installed copy cannot).
from libc.math cimport exp, fabs, isfinite, log1p, sqrt

cdef enum LossKind:
    LOGISTIC = 0
    HINGE = 1
    SQUARED = 2
    HUBER_HINGE = 3


cdef inline int check_loss_parameter(int kind, double h) except -1:
    """Raises ValueError unless h is a usable width for the loss (any h for all but huber_hinge)."""
    # huber_hinge divides by h: a zero or non-finite width would give inf/NaN silently
    if kind == HUBER_HINGE and not (h > 0.0 and isfinite(h)):
        raise ValueError(f"huber_hinge needs a finite width h > 0, got {h!r}")
    return 0


cdef inline double loss_value(int kind, double z, double y, double h) noexcept nogil:
    cdef double m
    if kind == LOGISTIC:
        # log(1 + exp(-m)), m = y z, without overflow for either sign of m
        m = y * z
        if m > 0.0:
            return log1p(exp(-m))
        return -m + log1p(exp(m))
    elif kind == HINGE:
        m = 1.0 - y * z
        return m if m > 0.0 else 0.0
    elif kind == HUBER_HINGE:
        # u = 1 - y z: 0 for u < -h, (u + h)^2 / (4h) for |u| <= h, u for u > h (CMS 2011)
        m = 1.0 - y * z
        if m > h:
            return m
        if m < -h:
            return 0.0
        m = m + h
        return m * m / (4.0 * h)
    else:
        m = z - y
        return 0.5 * m * m


cdef inline double logistic_derivative_at(double y, double m, double e) noexcept nogil:
    """The logistic loss' for label y at margin m = y z, given e = exp(-|m|) (kernels that
    compute the exps of many rows first call this after)."""
    return (-y * (e if m > 0.0 else 1.0)) / (1.0 + e)


cdef inline double loss_derivative(int kind, double z, double y, double h) noexcept nogil:
    """d loss / dz; for hinge the subgradient -y 1[yz < 1]."""
    cdef double m, e
    if kind == LOGISTIC:
        # -y sigmoid(-m) = -y e / (1 + e) with e = exp(-m) for m > 0, and -y / (1 + exp(m))
        # otherwise: both with e = exp(-|m|), the numerator chosen without a branch (the sign of
        # m is a coin flip on real data, and a mispredicted branch costs more than the select).
        # The same operations on the same values as the two branches, so the same bits.
        m = y * z
        return logistic_derivative_at(y, m, exp(-fabs(m)))
    elif kind == HINGE:
        return -y if y * z < 1.0 else 0.0
    elif kind == HUBER_HINGE:
        # -y clip((u + h) / (2h), 0, 1), u = 1 - y z: bounded by 1 in absolute value
        m = 1.0 - y * z
        if m > h:
            return -y
        if m < -h:
            return 0.0
        return -y * ((m + h) / (2.0 * h))
    else:
        return z - y


cdef inline double loss_second_derivative(int kind, double z, double y, double h) noexcept nogil:
    """d^2 loss / dz^2 (0 for hinge away from its kink, where it is undefined; for huber_hinge
    1/(2h) on the closed middle piece |1 - yz| <= h, where it jumps at the two joins)."""
    cdef double e, m
    if kind == LOGISTIC:
        # sigmoid(m) sigmoid(-m), symmetric in m
        e = exp(-(y * z if y * z > 0.0 else -y * z))
        return e / ((1.0 + e) * (1.0 + e))
    elif kind == HINGE:
        return 0.0
    elif kind == HUBER_HINGE:
        m = 1.0 - y * z
        return 1.0 / (2.0 * h) if -h <= m <= h else 0.0
    else:
        return 1.0


# -- multinomial (softmax) loss, K classes: z = theta^T x in R^K, label y in [0, K) ---------------
# Callers check 0 <= y < K and K >= 1; these functions only compute.

cdef inline double multinomial_value(const double* z, Py_ssize_t K, Py_ssize_t y) noexcept nogil:
    """-log softmax(z)_y = log sum_k exp(z_k) - z_y (docs/conventions.md).

    Shifted by the largest logit m (at its first index a), so no exp overflows:
    log(1 + s) + (m - z_y) with s = sum_{k != a} exp(z_k - m) <= K - 1. log1p keeps the relative
    accuracy when the loss is tiny (y = a, s << 1); for K = 2 this is the logistic formula.
    """
    cdef Py_ssize_t k, a = 0
    cdef double m = z[0], s = 0.0
    for k in range(1, K):
        if z[k] > m:
            m = z[k]
            a = k
    for k in range(K):
        if k != a:
            s += exp(z[k] - m)
    return log1p(s) + (m - z[y])


cdef inline double multinomial_derivative(const double* z, Py_ssize_t K, Py_ssize_t y,
                                          double* out) noexcept nogil:
    """Writes d loss / dz = softmax(z) - e_y into out[0..K) and returns its Euclidean norm.

    The norm is below sqrt(2): ||p - e_y||^2 = (1 - p_y)^2 + sum_{k != y} p_k^2 <= 2 (1 - p_y)^2.
    The y-th entry is computed as -(sum_{k != y} e_k) / S, not p_y - 1, which would lose all
    relative accuracy when p_y is close to 1 (a well-classified record).
    """
    cdef Py_ssize_t k
    cdef double m = z[0], total = 0.0, others = 0.0, e, sq = 0.0
    for k in range(1, K):
        if z[k] > m:
            m = z[k]
    for k in range(K):
        e = exp(z[k] - m)
        out[k] = e
        total += e
        if k != y:
            others += e
    for k in range(K):
        if k == y:
            out[k] = -others / total
        else:
            out[k] = out[k] / total
        sq += out[k] * out[k]
    return sqrt(sq)
