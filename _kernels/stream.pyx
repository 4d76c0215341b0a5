"""The kernels' random stream (``_stream.pxd``) as a Python object.

Solvers whose loops draw their own noise (noisy SGD) take a :class:`Stream` seeded from the
user's numpy Generator; Python code that must replay a kernel's draws exactly (the multi-party
protocol, the tests) draws from the same object.
"""
import threading

import numpy as np
from libc.stdint cimport uint64_t

from _stream cimport (ZIG_F, ZIG_K, ZIG_R, ZIG_W, stream_index, stream_next, stream_normal,
                      stream_uniform)


cdef class Stream:
    """SFC64 bits with ziggurat normals, seeded by three 64-bit words.

    The state is the uint64 array ``state`` = (a, b, c, counter), which kernels update in place
    while holding ``lock``. Seeding follows SFC64's reference: a, b, c from the seed, counter 1,
    then 12 discarded outputs.
    """
    cdef readonly object state
    cdef readonly object lock

    def __init__(self, words):
        words = np.asarray(words)
        if words.shape != (3,) or words.dtype != np.uint64:
            raise ValueError("a Stream is seeded by three uint64 words")
        self.state = np.empty(4, dtype=np.uint64)
        self.state[:3] = words
        self.state[3] = 1
        self.lock = threading.Lock()
        cdef uint64_t[::1] s = self.state
        for _ in range(12):
            stream_next(&s[0])

    @classmethod
    def from_generator(cls, generator):
        """A Stream seeded by three words drawn from a numpy Generator (which advances)."""
        return cls(generator.integers(0, 2 ** 64, size=3, dtype=np.uint64))

    def standard_normal(self, size=None):
        """Standard normals: one float, or an array of ``size`` in draw order."""
        if size is None:
            return float(self.standard_normal(1)[0])
        size = _check_size(size)
        out = np.empty(size)
        cdef double[::1] o = out
        cdef uint64_t[::1] s = self.state
        cdef Py_ssize_t j, m = o.shape[0]
        with self.lock, nogil:
            for j in range(m):
                o[j] = stream_normal(&s[0])
        return out

    def random(self, size=None):
        """Uniforms on [0, 1) with 53 random bits: one float, or an array of ``size``."""
        if size is None:
            return float(self.random(1)[0])
        size = _check_size(size)
        out = np.empty(size)
        cdef double[::1] o = out
        cdef uint64_t[::1] s = self.state
        cdef Py_ssize_t j, m = o.shape[0]
        with self.lock, nogil:
            for j in range(m):
                o[j] = stream_uniform(&s[0])
        return out

    def integers(self, n, size=None):
        """Uniform on {0, .., n - 1}: one int, or an intp array of ``size``."""
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be an integer >= 1, got {n!r}")
        if size is None:
            return int(self.integers(n, 1)[0])
        size = _check_size(size)
        cdef uint64_t bound = n
        out = np.empty(size, dtype=np.intp)
        cdef Py_ssize_t[::1] o = out
        cdef uint64_t[::1] s = self.state
        cdef Py_ssize_t j, m = o.shape[0]
        with self.lock, nogil:
            for j in range(m):
                o[j] = <Py_ssize_t> stream_index(&s[0], bound)
        return out

    def raw(self, size):
        """``size`` raw 64-bit outputs (for testing the generator itself)."""
        size = _check_size(size)
        out = np.empty(size, dtype=np.uint64)
        cdef uint64_t[::1] o = out
        cdef uint64_t[::1] s = self.state
        cdef Py_ssize_t j, m = o.shape[0]
        with self.lock, nogil:
            for j in range(m):
                o[j] = stream_next(&s[0])
        return out

    def copy(self):
        """An independent Stream in the same state."""
        cdef Stream other = Stream.__new__(Stream)
        other.state = self.state.copy()
        other.lock = threading.Lock()
        return other

    def __reduce__(self):
        return (_from_state, (self.state.copy(),))


def _check_size(size):
    if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)) or size < 0:
        raise ValueError(f"size must be a non-negative integer, got {size!r}")
    return int(size)


def _from_state(state):
    cdef Stream s = Stream.__new__(Stream)
    s.state = np.array(state, dtype=np.uint64)
    s.lock = threading.Lock()
    return s


def tables():
    """The ziggurat tables (R, W, K, F) as Python values, for tests and reference code."""
    return (ZIG_R, [ZIG_W[k] for k in range(256)], [int(ZIG_K[k]) for k in range(256)],
            [ZIG_F[k] for k in range(257)])
