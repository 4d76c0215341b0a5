"""The kernels' random stream: SFC64 bits, exact integers, ziggurat normals (_kernels/_stream.pxd).

The bits are checked against numpy's own SFC64, the ziggurat and the integer draws against
step-by-step Python references on those bits (bit for bit, slow paths included), the tables
against their defining equations, and the normals' distribution statistically. Every band is a
5-sigma (or level-1e-6) band of the statistic under the null, so a correct sampler fails with
probability below about 1e-6 per check.
"""
import math
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import special, stats

from dpsolve._kernels import stream as stream_module
from dpsolve.privacy import Stream

R, W, K, F = stream_module.tables()
TWO52 = 2.0 ** 52


def numpy_sfc64(stream):
    """numpy's SFC64 in the same state as ``stream``."""
    bits = np.random.SFC64()
    bits.state = {"bit_generator": "SFC64", "state": {"state": stream.state.copy()},
                  "has_uint32": 0, "uinteger": 0}
    return bits


def reference_normal(raw):
    """The ziggurat of _stream.pxd in Python floats (same IEEE doubles, same libm)."""
    def uniform():
        return (int(next(raw)) >> 11) * 2.0 ** -53
    while True:
        r = int(next(raw))
        k, negative, m = r & 0xFF, (r >> 8) & 1, (r >> 9) & ((1 << 52) - 1)
        x = float(m) * W[k]
        if negative:
            x = -x
        if m < K[k]:
            return x, "fast"
        if k == 0:
            while True:
                xx = -math.log1p(-uniform()) / R
                yy = -math.log1p(-uniform())
                if yy + yy > xx * xx:
                    return (-(R + xx) if negative else R + xx), "tail"
        if F[k] + uniform() * (F[k + 1] - F[k]) < math.exp(-0.5 * x * x):
            return x, "wedge"


def reference_index(raw, n):
    if n <= 1 << 32:
        m = (int(next(raw)) >> 32) * n
        if m & 0xFFFFFFFF < n:
            threshold = ((1 << 32) - n) % n
            while m & 0xFFFFFFFF < threshold:
                m = (int(next(raw)) >> 32) * n
        return m >> 32
    mask = (1 << (n - 1).bit_length()) - 1
    m = int(next(raw)) & mask
    while m >= n:
        m = int(next(raw)) & mask
    return m


def raw_bits(stream, count):
    return iter(numpy_sfc64(stream).random_raw(count))


# -- the bits -------------------------------------------------------------------------------------
def test_bits_are_numpy_sfc64():
    s = Stream.from_generator(np.random.default_rng(0))
    expected = numpy_sfc64(s).random_raw(10_000)
    assert np.array_equal(s.raw(10_000), expected)


def test_seeding_follows_sfc64_and_advances_the_generator_by_three_words():
    g, h = np.random.default_rng(1), np.random.default_rng(1)
    s = Stream.from_generator(g)
    words = h.integers(0, 2 ** 64, size=3, dtype=np.uint64)
    assert g.random() == h.random()
    bits = np.random.SFC64()
    bits.state = {"bit_generator": "SFC64", "state": {"state": np.append(words, np.uint64(1))},
                  "has_uint32": 0, "uinteger": 0}
    bits.random_raw(12)                     # SFC64's seeding discards 12 outputs
    assert np.array_equal(s.state, bits.state["state"]["state"])
    assert np.array_equal(Stream(words).state, s.state)


def test_same_seed_same_draws_and_copies_and_pickles_are_independent():
    a, b = (Stream.from_generator(np.random.default_rng(2)) for _ in range(2))
    assert np.array_equal(a.standard_normal(1000), b.standard_normal(1000))
    c = a.copy()
    d = pickle.loads(pickle.dumps(a))
    first = a.standard_normal(10)
    assert np.array_equal(c.standard_normal(10), first)
    assert np.array_equal(d.standard_normal(10), first)
    assert not np.array_equal(a.standard_normal(10), first)


@pytest.mark.parametrize("call,match", [
    (lambda: Stream(np.arange(2, dtype=np.uint64)), "three uint64 words"),
    (lambda: Stream([1, 2, 3]), "three uint64 words"),
    (lambda: Stream.from_generator(np.random.default_rng(0)).standard_normal(-1), "size"),
    (lambda: Stream.from_generator(np.random.default_rng(0)).random(2.5), "size"),
    (lambda: Stream.from_generator(np.random.default_rng(0)).integers(0), "n must be"),
    (lambda: Stream.from_generator(np.random.default_rng(0)).integers(True), "n must be"),
    (lambda: Stream.from_generator(np.random.default_rng(0)).raw(-3), "size"),
    (lambda: Stream.from_generator(np.random.default_rng(0)).integers(2 ** 63), "n must be"),
])
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_seeding_needs_a_generator():
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        Stream.from_generator(0)


# -- the ziggurat ---------------------------------------------------------------------------------
def test_tables_satisfy_their_equations():
    """Marsaglia-Tsang: every layer has area v, layer k >= 1 is [0, x_k] x [f(x_k), f(x_{k+1})],
    the base is a rectangle of width v / f(r), and K is the inner-rectangle threshold.

    The tables hold correctly rounded doubles, so each check allows the rounding of the table
    entries and of its own double arithmetic (u = 2^-53, a few u per operation)."""
    u = 2.0 ** -53
    f = lambda x: math.exp(-0.5 * x * x)   # noqa: E731
    v = R * f(R) + math.sqrt(math.pi / 2) * special.erfc(R / math.sqrt(2))
    x = [None] + [W[k] * TWO52 for k in range(1, 256)] + [0.0]      # x_1 .. x_256
    assert abs(x[1] - R) <= 2 * u * R
    # f(r) amplifies a relative error e in r into r^2 e
    assert abs(W[0] * TWO52 * f(R) - v) <= (R * R + 8) * u * v
    for k in range(1, 256):
        # exp(-x^2/2) at a rounded x: relative error up to (x^2 + 2) u, and F[k]'s own rounding
        assert abs(F[k] - f(x[k])) <= (x[k] ** 2 + 3) * u * F[k]
        # the difference F[k+1] - F[k] carries the entries' rounding, relative to its size
        dF = F[k + 1] - F[k]
        assert abs(x[k] * dF - v) <= (4 * u * F[k + 1] / dF + 4 * u) * v
    assert F[256] == 1.0 and K[255] == 0
    for k in range(255):
        # K = floor(2^52 x_{k+1} / w_k) ~ 4e15, where doubles are spaced 0.5 or 1 apart
        assert abs(K[k] - x[k + 1] / W[k]) <= 2
        assert (K[k] - 1) * W[k] < x[k + 1]


@pytest.mark.slow
def test_tables_header_is_what_the_generator_writes():
    script = Path(__file__).resolve().parents[1] / "_kernels" / "make_ziggurat_tables.py"
    if not script.exists():                 # an installed copy without the sources
        pytest.skip("needs the source tree's _kernels/")
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_normals_equal_the_step_by_step_reference():
    """200,000 draws bit for bit, with the slow paths exercised (about 1% wedge, 50 tail)."""
    s = Stream.from_generator(np.random.default_rng(3))
    raw = raw_bits(s, 260_000)
    got = s.standard_normal(200_000)
    paths = {"fast": 0, "wedge": 0, "tail": 0}
    expected = np.empty(200_000)
    for j in range(200_000):
        expected[j], path = reference_normal(raw)
        paths[path] += 1
    assert np.array_equal(got, expected)
    assert paths["wedge"] > 1000 and paths["tail"] > 10


@pytest.mark.parametrize("n", [1, 2, 7, 1000, 2 ** 31 + 11, 2 ** 32, 2 ** 32 + 1, 3 * 2 ** 40 + 5])
def test_integers_equal_the_reference(n):
    s = Stream.from_generator(np.random.default_rng(4))
    raw = raw_bits(s, 4000)
    got = s.integers(n, 1000)
    assert got.tolist() == [reference_index(raw, n) for _ in range(1000)]
    assert 0 <= got.min() and got.max() < n


def test_integers_are_uniform():
    s = Stream.from_generator(np.random.default_rng(5))
    draws = s.integers(10, 1_000_000)
    assert stats.chisquare(np.bincount(draws, minlength=10)).pvalue > 1e-6
    assert isinstance(s.integers(10), int) and isinstance(s.standard_normal(), float)


@pytest.mark.slow
def test_uniforms():
    u = Stream.from_generator(np.random.default_rng(6)).random(1_000_000)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert stats.kstest(u, "uniform").statistic < math.sqrt(math.log(2 / 1e-6) / 2e6)


@pytest.mark.slow
def test_normal_moments_and_ks():
    N = 2_000_000
    z = Stream.from_generator(np.random.default_rng(7)).standard_normal(N)
    assert abs(z.mean()) < 5 / math.sqrt(N)
    assert abs(z.var() - 1.0) < 5 * math.sqrt(2.0 / N)
    assert abs(stats.skew(z)) < 5 * math.sqrt(6.0 / N)
    assert abs(stats.kurtosis(z)) < 5 * math.sqrt(24.0 / N)
    # Kolmogorov-Smirnov at level 1e-6 (DKW bound)
    assert stats.kstest(z, "norm").statistic < math.sqrt(math.log(2 / 1e-6) / (2 * N))
    # consecutive draws uncorrelated
    assert abs(np.corrcoef(z[:-1], z[1:])[0, 1]) < 5 / math.sqrt(N)


# the bounds below hold at any N (5 standard deviations; the KS bound at level 1e-6); the fast
# tier draws 2·10⁶ (about 1 draw beyond 5), the slow tier 2·10⁷ for the power far out
@pytest.mark.parametrize("N", [2_000_000, pytest.param(20_000_000, marks=pytest.mark.slow)])
def test_normal_tails(N):
    """Tail frequencies against 2 Phi(-a), including beyond r (the tail algorithm) and far out,
    and the shape of the tail beyond r against the truncated normal."""
    z = Stream.from_generator(np.random.default_rng(8)).standard_normal(N)
    az = np.abs(z)
    for a in (1.0, 2.0, 3.0, 3.5, R, 4.0, 4.5, 5.0):
        p = 2 * stats.norm.sf(a)
        count = int(np.count_nonzero(az > a))
        assert abs(count - N * p) < 5 * math.sqrt(N * p * (1 - p)) + 1, (a, count, N * p)
    beyond = az[az > R]
    cdf = lambda t: 1 - stats.norm.sf(t) / stats.norm.sf(R)   # noqa: E731
    assert stats.kstest(beyond, cdf).statistic < math.sqrt(math.log(2 / 1e-6) / (2 * beyond.size))
    assert abs(np.count_nonzero(z > 0) - N / 2) < 5 * math.sqrt(N / 4)
