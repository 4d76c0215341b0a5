# Per-sample losses of a linear model, as functions of the margin z = <theta, x> and label y.
# Inline so every kernel that cimports them compiles them into its own loop (no call, no vtable).
# Formulas and constants: shared/REFERENCE.md section 2.
# h is the width of huber_hinge (> 0, checked by the callers); the other losses ignore it.
from libc.math cimport exp, log1p

cdef enum LossKind:
    LOGISTIC = 0
    HINGE = 1
    SQUARED = 2
    HUBER_HINGE = 3


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


cdef inline double loss_derivative(int kind, double z, double y, double h) noexcept nogil:
    """d loss / dz; for hinge the subgradient -y 1[yz < 1]."""
    cdef double m, e
    if kind == LOGISTIC:
        # -y sigmoid(-m)
        m = y * z
        if m > 0.0:
            e = exp(-m)
            return -y * e / (1.0 + e)
        return -y / (1.0 + exp(m))
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
