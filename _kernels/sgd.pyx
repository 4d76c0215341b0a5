"""Per-sample noisy projected SGD (seed 000, Algorithm SGD1), the whole loop in C.

The Python API (``dpsolve.noisy_sgd``) validates, calibrates and explains; this only computes.
"""
from libc.math cimport isfinite, sqrt
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport random_bounded_uint64, random_standard_normal

from _bitgen cimport generator_bitgen
from _loss cimport HUBER_HINGE, loss_derivative
from _vector cimport dot, scale_onto_ball

cdef enum Schedule:
    INV_SQRT = 0    # eta(t) = eta0 / sqrt(t)
    INV = 1         # eta(t) = eta0 / t

SCHEDULES = {"inv_sqrt": INV_SQRT, "inv": INV}


def noisy_sgd_steps(
    const double[:, ::1] X,
    const double[::1] y,
    int loss,
    double h,
    double[::1] theta,
    Py_ssize_t t_start,
    Py_ssize_t t_stop,
    double sigma,
    int schedule,
    double eta0,
    double reg,
    double radius,
    object generator,
    Py_ssize_t[::1] counts=None,
):
    """Run steps t = t_start .. t_stop - 1 (1-based) of SGD1 on theta, in place.

    If ``counts`` (length n) is given, ``counts[i]`` is incremented each time row i is drawn
    (the draws are random, not data-dependent; multi-party accounting uses them).

    Step t: draw i uniformly from [n] with the generator, then
    ``theta <- Proj_radius(theta - eta(t) * (n * (loss'(<theta, x_i>, y_i) x_i + reg * theta) + sigma * xi))``
    with xi ~ N(0, I_p) drawn coordinate by coordinate (no draws when sigma == 0).
    ``radius = inf`` means no projection. ``h`` is the huber_hinge width (ignored by the other
    losses). Returns False if theta became non-finite.
    """
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1]
    if y.shape[0] != n or theta.shape[0] != p:
        raise ValueError("shape mismatch between X, y and theta")
    if n == 0 or p == 0 or t_start < 1:
        raise ValueError("need n >= 1, p >= 1 and t_start >= 1")
    if loss == HUBER_HINGE and not (h > 0.0 and isfinite(h)):
        raise ValueError(f"huber_hinge needs a finite width h > 0, got {h!r}")
    cdef double nf = <double> n
    cdef double nreg = nf * reg
    cdef double* th = &theta[0]
    cdef const double* xi
    cdef double g, eta, v, sq
    cdef Py_ssize_t t, i, j
    cdef bint project = radius < float("inf")
    cdef bitgen_t* rng = generator_bitgen(generator)
    cdef bint count = counts is not None
    cdef Py_ssize_t* cnt = NULL
    if count:
        if counts.shape[0] != n:
            raise ValueError("counts must have length n")
        cnt = &counts[0]

    with generator.bit_generator.lock, nogil:
        for t in range(t_start, t_stop):
            i = <Py_ssize_t> random_bounded_uint64(rng, 0, n - 1, 0, False)
            if count:
                cnt[i] += 1
            xi = &X[i, 0]
            g = nf * loss_derivative(loss, dot(xi, th, p), y[i], h)
            if schedule == INV_SQRT:
                eta = eta0 / sqrt(<double> t)
            else:
                eta = eta0 / <double> t
            sq = 0.0
            if sigma > 0.0:
                for j in range(p):
                    v = th[j] - eta * (g * xi[j] + nreg * th[j] + sigma * random_standard_normal(rng))
                    th[j] = v
                    sq += v * v
            else:
                for j in range(p):
                    v = th[j] - eta * (g * xi[j] + nreg * th[j])
                    th[j] = v
                    sq += v * v
            if project:
                scale_onto_ball(th, sq, radius, p)
    for j in range(p):
        if not isfinite(th[j]):
            return False
    return True
