"""Noise samplers (Gaussian, Laplace, gamma-norm) drawing from the caller's numpy Generator.

The Python API (``dpsolve.privacy.samplers``) validates; these fill rows of ``out`` in place, one
lock acquisition per call. Solvers cimport the inline versions from ``_noise.pxd``.
"""
from libc.stdlib cimport free, malloc
from numpy.random cimport bitgen_t

from _bitgen cimport generator_bitgen
from _noise cimport add_gamma_norm, add_gaussian, add_laplace


def add_gaussian_noise(double[:, ::1] out, double sigma, object generator):
    """out[i] += sigma * N(0, I_p) for every row i, rows in order."""
    cdef Py_ssize_t m = out.shape[0], p = out.shape[1], i
    cdef bitgen_t* rng = generator_bitgen(generator)
    if m == 0 or p == 0:
        return
    with generator.bit_generator.lock, nogil:
        for i in range(m):
            add_gaussian(rng, &out[i, 0], p, sigma)


def add_laplace_noise(double[:, ::1] out, double scale, object generator):
    """out[i] += Lap(scale)^p (independent coordinates) for every row i."""
    cdef Py_ssize_t m = out.shape[0], p = out.shape[1], i
    cdef bitgen_t* rng = generator_bitgen(generator)
    if m == 0 or p == 0:
        return
    with generator.bit_generator.lock, nogil:
        for i in range(m):
            add_laplace(rng, &out[i, 0], p, scale)


def add_gamma_norm_noise(double[:, ::1] out, double scale, object generator):
    """out[i] += z_i, density proportional to exp(-||z|| / scale), for every row i."""
    cdef Py_ssize_t m = out.shape[0], p = out.shape[1], i
    cdef bitgen_t* rng = generator_bitgen(generator)
    if m == 0 or p == 0:
        return
    cdef double* direction = <double*> malloc(p * sizeof(double))
    if direction == NULL:
        raise MemoryError()
    try:
        with generator.bit_generator.lock, nogil:
            for i in range(m):
                add_gamma_norm(rng, &out[i, 0], p, scale, direction)
    finally:
        free(direction)
