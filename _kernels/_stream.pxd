# The kernels' own random stream: SFC64 (Chris Doty-Humphrey's Small Fast Chaotic generator, the
# algorithm of numpy.random.SFC64) with a 256-layer ziggurat for normals, inlined into the loops.
# numpy's Generator reaches its bit generator through a function pointer and its ziggurat through
# a call per value; inlining both makes a normal draw about three times cheaper, which is most of
# a noisy SGD step. The state is four uint64 words (a, b, c, counter) that the caller owns.
# Shipped as dpsolve/_kernels/_stream.pxd with ziggurat_tables.h beside it: a module that cimports
# this needs that folder on its C include path (dpsolve._kernels.get_include()). Cimport only from
# libc here, never a sibling .pxd (the build finds siblings by their top-level names, which an
# installed copy cannot).
from libc.math cimport exp, log1p
from libc.stdint cimport int64_t, uint64_t

cdef extern from *:
    """
    #define DPS_TWO32 UINT64_C(0x100000000)
    #define DPS_LOW32 UINT64_C(0xFFFFFFFF)
    #define DPS_LOW52 UINT64_C(0xFFFFFFFFFFFFF)
    """
    const uint64_t DPS_TWO32, DPS_LOW32, DPS_LOW52

cdef extern from "ziggurat_tables.h":
    const double ZIG_R
    const double ZIG_W[256]
    const uint64_t ZIG_K[256]
    const double ZIG_F[257]


cdef inline uint64_t stream_next(uint64_t* s) noexcept nogil:
    """Next 64 random bits: one SFC64 step."""
    cdef uint64_t out = s[0] + s[1] + s[3]
    s[3] += 1
    s[0] = s[1] ^ (s[1] >> 11)
    s[1] = s[2] + (s[2] << 3)
    s[2] = ((s[2] << 24) | (s[2] >> 40)) + out
    return out


cdef inline double stream_uniform(uint64_t* s) noexcept nogil:
    """Uniform on [0, 1) with 53 random bits."""
    return <double> (stream_next(s) >> 11) * (1.0 / 9007199254740992.0)


cdef inline uint64_t stream_index(uint64_t* s, uint64_t n) noexcept nogil:
    """Uniform on {0, .., n - 1}, n >= 1, exactly (no modulo bias).

    n <= 2^32: Lemire's multiply-shift on the top 32 bits of one draw, rejecting the
    (2^32 mod n) low products that would bias it. Larger n: masked rejection sampling.
    """
    cdef uint64_t m, threshold, mask
    if n <= DPS_TWO32:
        m = (stream_next(s) >> 32) * n
        if (m & DPS_LOW32) < n:
            threshold = (DPS_TWO32 - n) % n
            while (m & DPS_LOW32) < threshold:
                m = (stream_next(s) >> 32) * n
        return m >> 32
    mask = n - 1
    mask |= mask >> 1
    mask |= mask >> 2
    mask |= mask >> 4
    mask |= mask >> 8
    mask |= mask >> 16
    mask |= mask >> 32
    m = stream_next(s) & mask
    while m >= n:
        m = stream_next(s) & mask
    return m


cdef inline double stream_normal(uint64_t* s) noexcept nogil:
    """A standard normal by the ziggurat (tables and derivation: make_ziggurat_tables.py).

    One 64-bit draw gives the layer (8 bits), the sign (1 bit) and a 52-bit magnitude m; about
    99% of draws fall inside the layer's inner rectangle and return at once.
    """
    cdef uint64_t r, m
    cdef int64_t sign, signed_m
    cdef int k
    cdef double x, xx, yy
    while True:
        r = stream_next(s)
        k = <int> (r & 0xFF)
        sign = -<int64_t> ((r >> 8) & 1)        # 0 or -1 (all bits set)
        m = (r >> 9) & DPS_LOW52
        # +-m without a branch (the sign is a coin flip no predictor can learn), converted from a
        # signed integer, which x86 does in one instruction
        signed_m = (<int64_t> m ^ sign) - sign
        x = <double> signed_m * ZIG_W[k]
        if m < ZIG_K[k]:
            return x
        if k == 0:
            # the tail |x| > r (Marsaglia 1964); 1 - U avoids log(0)
            while True:
                xx = -log1p(-stream_uniform(s)) / ZIG_R
                yy = -log1p(-stream_uniform(s))
                if yy + yy > xx * xx:
                    return -(ZIG_R + xx) if sign else ZIG_R + xx
        if ZIG_F[k] + stream_uniform(s) * (ZIG_F[k + 1] - ZIG_F[k]) < exp(-0.5 * x * x):
            return x
