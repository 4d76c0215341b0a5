# Noise added in place to a vector, drawn from a numpy bit generator (the caller holds its lock).
# Draw order matches NumPy's Generator methods, so a Python reference reproduces them exactly.
from libc.math cimport sqrt
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport (random_laplace, random_standard_gamma,
                                           random_standard_normal)


cdef inline void add_gaussian(bitgen_t* rng, double* v, Py_ssize_t p, double sigma) noexcept nogil:
    """v += sigma * N(0, I_p), as ``v + sigma * rng.standard_normal(p)``."""
    cdef Py_ssize_t j
    for j in range(p):
        v[j] += sigma * random_standard_normal(rng)


cdef inline void add_laplace(bitgen_t* rng, double* v, Py_ssize_t p, double scale) noexcept nogil:
    """v += Lap(scale)^p, as ``v + rng.laplace(0.0, scale, p)``."""
    cdef Py_ssize_t j
    for j in range(p):
        v[j] += random_laplace(rng, 0.0, scale)


cdef inline void add_gamma_norm(bitgen_t* rng, double* v, Py_ssize_t p, double scale,
                                double* direction) noexcept nogil:
    """v += z with density proportional to exp(-||z|| / scale) on R^p.

    ||z|| ~ Gamma(p, scale) and z / ||z|| is uniform on the sphere, independently; drawn as
    ``r = scale * rng.standard_gamma(p)`` then ``u = g / ||g||`` with ``g = rng.standard_normal(p)``
    (redrawn in the probability-zero event g == 0). ``direction`` is caller-owned scratch of length p.
    """
    cdef Py_ssize_t j
    cdef double r = scale * random_standard_gamma(rng, <double> p)
    cdef double sq = 0.0
    while sq == 0.0:
        for j in range(p):
            direction[j] = random_standard_normal(rng)
            sq += direction[j] * direction[j]
    r /= sqrt(sq)
    for j in range(p):
        v[j] += r * direction[j]
