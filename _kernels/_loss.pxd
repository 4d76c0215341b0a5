# Per-sample losses of a linear model, as functions of the margin z = <theta, x> and label y.
# Inline so every kernel that cimports them compiles them into its own loop (no call, no vtable).
# Formulas and constants: shared/REFERENCE.md section 2.
from libc.math cimport exp, log1p

cdef enum LossKind:
    LOGISTIC = 0
    HINGE = 1
    SQUARED = 2


cdef inline double loss_value(int kind, double z, double y) noexcept nogil:
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
    else:
        m = z - y
        return 0.5 * m * m


cdef inline double loss_derivative(int kind, double z, double y) noexcept nogil:
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
    else:
        return z - y


cdef inline double loss_second_derivative(int kind, double z, double y) noexcept nogil:
    """d^2 loss / dz^2 (0 for hinge away from its kink, where it is undefined)."""
    cdef double e
    if kind == LOGISTIC:
        # sigmoid(m) sigmoid(-m), symmetric in m
        e = exp(-(y * z if y * z > 0.0 else -y * z))
        return e / ((1.0 + e) * (1.0 + e))
    elif kind == HINGE:
        return 0.0
    else:
        return 1.0
