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


cdef enum Draw:
    NORMAL, UNIFORM, INDEX, RAW


cdef void fill(uint64_t* s, int what, uint64_t bound, void* out, Py_ssize_t m) noexcept nogil:
    """m draws of one kind into out (8 bytes each), in order."""
    cdef Py_ssize_t j
    cdef double* real = <double*> out
    cdef uint64_t* word = <uint64_t*> out
    for j in range(m):
        if what == NORMAL:
            real[j] = stream_normal(s)
        elif what == UNIFORM:
            real[j] = stream_uniform(s)
        elif what == INDEX:
            word[j] = stream_index(s, bound)    # < n < 2^63: the same bits as an int64
        else:
            word[j] = stream_next(s)


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
        if not isinstance(generator, np.random.Generator):
            raise TypeError(f"generator must be a numpy.random.Generator, "
                            f"got {type(generator).__name__}")
        return cls(generator.integers(0, 2 ** 64, size=3, dtype=np.uint64))

    def standard_normal(self, size=None):
        """Standard normals: one float, or an array of ``size`` in draw order."""
        if size is None:
            return float(self.standard_normal(1)[0])
        return self._draw(NORMAL, size, np.float64, 0)

    def random(self, size=None):
        """Uniforms on [0, 1) with 53 random bits: one float, or an array of ``size``."""
        if size is None:
            return float(self.random(1)[0])
        return self._draw(UNIFORM, size, np.float64, 0)

    def integers(self, n, size=None):
        """Uniform on {0, .., n - 1}: one int, or an int64 array of ``size``."""
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) \
                or not 1 <= n <= 2 ** 63 - 1:
            raise ValueError(f"n must be an integer in [1, 2**63 - 1], got {n!r}")
        if size is None:
            return int(self.integers(n, 1)[0])
        return self._draw(INDEX, size, np.int64, n)

    def raw(self, size):
        """``size`` raw 64-bit outputs (for testing the generator itself)."""
        return self._draw(RAW, size, np.uint64, 0)

    def _draw(self, int what, size, dtype, uint64_t bound):
        if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)) \
                or size < 0:
            raise ValueError(f"size must be a non-negative integer, got {size!r}")
        cdef Py_ssize_t m = size
        out = np.empty(m, dtype=dtype)
        if m == 0:
            return out
        # every output type is 8 bytes: one byte view of the array serves all four
        cdef unsigned char[::1] buffer = out.view(np.uint8)
        cdef uint64_t[::1] s = self.state
        with self.lock, nogil:
            fill(&s[0], what, bound, &buffer[0], m)
        return out

    def copy(self):
        """An independent Stream in the same state."""
        return _from_state(self.state)

    def __reduce__(self):
        return (_from_state, (self.state.copy(),))


def _from_state(state):
    cdef Stream s = Stream.__new__(Stream)
    s.state = np.array(state, dtype=np.uint64)       # a copy
    s.lock = threading.Lock()
    return s


def tables():
    """The ziggurat tables (R, W, K, F) as Python values, for tests and reference code."""
    return (ZIG_R, [ZIG_W[k] for k in range(256)], [int(ZIG_K[k]) for k in range(256)],
            [ZIG_F[k] for k in range(257)])
