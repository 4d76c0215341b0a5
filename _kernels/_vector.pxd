# Small dense vector operations on raw pointers, for use inside nogil loops.
# Plain sequential loops: the summation order is fixed, so results are reproducible
# bit for bit (setup.py also turns off FMA contraction).
# Shipped as dpsolve/_kernels/_vector.pxd: cimport only from libc here, never a sibling .pxd
# (the build finds siblings by their top-level names, which an installed copy cannot).
from libc.math cimport fabs, sqrt, INFINITY


cdef inline double dot(const double* a, const double* b, Py_ssize_t p) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t j
    for j in range(p):
        s += a[j] * b[j]
    return s


cdef inline double squared_norm(const double* a, Py_ssize_t p) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t j
    for j in range(p):
        s += a[j] * a[j]
    return s


cdef inline double scaled_norm(const double* a, Py_ssize_t p) noexcept nogil:
    """||a|| as m sqrt(sum (a_j / m)^2), m = max |a_j|: for vectors whose plain sum of squares
    overflows (entries beyond about 1e154). inf if an entry is infinite."""
    cdef double m = 0.0, s = 0.0, t
    cdef Py_ssize_t j
    for j in range(p):
        t = fabs(a[j])
        if t > m:
            m = t
    if m == 0.0 or m == INFINITY:
        return m
    for j in range(p):
        t = a[j] / m
        s += t * t
    return m * sqrt(s)


cdef inline void scale_onto_ball(double* a, double sqnorm, double radius, Py_ssize_t p) noexcept nogil:
    """Given sqnorm = ||a||^2, scale a onto the ball of the given radius if it lies outside.

    An overflowed sqnorm (inf) is not taken for an infinite norm: the norm is then recomputed
    with scaling (scaled_norm), or an iterate of entries near 1e200 would be scaled to 0. Finite
    sqnorm keeps the plain formula, and its bits."""
    cdef double c, norm
    cdef Py_ssize_t j
    if sqnorm == INFINITY:
        norm = scaled_norm(a, p)
        if not norm > radius:
            return
        c = radius / norm
    elif sqnorm > radius * radius:
        c = radius / sqrt(sqnorm)
    else:
        return
    for j in range(p):
        a[j] *= c


# -- one projected gradient step: theta <- Proj_radius(theta - eta * direction) ------------------
# The kernels' directions are gradient + regulariser (+ noise), but each kernel adds the three in
# its own order (sgd: (g + reg) + noise, joint: (g + noise) + reg, minibatch: reg + g / m), and
# floating-point addition is not associative: a shared vector-level formula would change their
# results. So the caller computes each coordinate's direction in its own order, and the step is
# shared one coordinate at a time; the compiler inlines it into the caller's fused loop:
#
#     sq = 0.0
#     for j in range(p):
#         sq = descend(&theta[j], eta, <direction j>, sq)
#     scale_onto_ball(theta, sq, radius, p)

cdef inline double descend(double* v, double eta, double direction, double sqnorm) noexcept nogil:
    """*v <- *v - eta * direction; returns sqnorm + (*v)^2, the running squared norm of the
    updated vector that scale_onto_ball takes. The direction is evaluated before the store, so it
    may read *v."""
    cdef double w = v[0] - eta * direction
    v[0] = w
    return sqnorm + w * w
