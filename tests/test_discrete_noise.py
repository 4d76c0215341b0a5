"""Exact integer noise (dpsolve.privacy.discrete; Canonne, Kamath & Steinke 2020) and the class
counts that draw it.

Statistical tests compare draws from a fixed seed with the exact pmf. Each is a test at the
significance level ALPHA = 1e-4, chosen before any draw was made: a chi-square goodness-of-fit
test on bins whose expected count is at least MIN_EXPECTED (the tails pooled into one bin on
each side, so that they are tested too), or an exact (Clopper-Pearson) binomial interval at
confidence 1 - ALPHA. With a fresh seed each would fail falsely with probability at most ALPHA.
None of them can see a sampler whose support is bounded far out in the tails (NumPy's
``geometric`` differs from the exact law by about 1e-16): the adversarial bit sources below do.
"""
import math
from fractions import Fraction

import numpy as np
import pytest

scipy_stats = pytest.importorskip("scipy.stats")

from dpsolve.privacy import counts  # noqa: E402
from dpsolve.privacy.discrete import (BitSource, bernoulli_exp, discrete_gaussian,  # noqa: E402
                                      discrete_laplace)

ALPHA = 1e-4
MIN_EXPECTED = 20


# -- helpers -----------------------------------------------------------------------------------
def chi_square_pvalue(draws, pmf, tail_low, tail_high):
    """The p-value of the chi-square goodness-of-fit test of integer ``draws`` against a
    symmetric ``pmf`` that decreases in ``|z|``, on the bins ``z <= -hi``, each
    ``-hi < z < hi``, ``z >= hi`` (``tail_low(a) = P(Z <= a)``, ``tail_high(a) = P(Z >= a)``
    for ``a >= 1``): ``hi`` is the first point whose own bin would expect fewer than
    MIN_EXPECTED draws, or the one before it if its pooled tail would too."""
    n = len(draws)
    hi = 1
    while n * pmf(hi) >= MIN_EXPECTED:
        hi += 1
    if n * tail_high(hi) < MIN_EXPECTED:
        hi -= 1
    lo = -hi
    assert hi >= 2, "too few draws for the tails to be tested"
    draws = np.asarray(draws, dtype=np.int64)
    observed = [np.sum(draws <= lo)] + [np.sum(draws == z) for z in range(lo + 1, hi)] + [
        np.sum(draws >= hi)]
    expected = [n * tail_low(lo)] + [n * pmf(z) for z in range(lo + 1, hi)] + [
        n * tail_high(hi)]
    assert min(expected) >= MIN_EXPECTED
    assert sum(observed) == n and sum(expected) == pytest.approx(n, rel=1e-12)
    statistic = sum((o - e) ** 2 / e for o, e in zip(observed, expected))
    return scipy_stats.chi2.sf(statistic, len(observed) - 1)


def laplace_law(scale):
    """The exact discrete Laplace pmf and tails, ``q = exp(-1/scale)``: ``P(z) = (1 - q) /
    (1 + q) q^|z|`` and ``P(Z >= a) = q^a / (1 + q)`` for ``a >= 1``."""
    q = math.exp(-1.0 / float(scale))

    def pmf(z):
        return (1 - q) / (1 + q) * q ** abs(z)

    def tail_high(a):
        assert a >= 1
        return q ** a / (1 + q)

    def tail_low(a):
        return tail_high(-a)

    return pmf, tail_low, tail_high


def gaussian_law(sigma_squared):
    """The discrete Gaussian pmf and tails, normalised by a sum over every z whose weight is not
    negligible (beyond 40 sigma it is below 1e-340)."""
    sigma_squared = float(sigma_squared)
    reach = int(40 * math.sqrt(sigma_squared)) + 40
    weights = {z: math.exp(-z * z / (2 * sigma_squared)) for z in range(-reach, reach + 1)}
    total = math.fsum(weights.values())

    def pmf(z):
        return weights.get(z, 0.0) / total

    def tail_high(a):
        return math.fsum(w for z, w in weights.items() if z >= a) / total

    def tail_low(a):
        return tail_high(-a)

    return pmf, tail_low, tail_high


def clopper_pearson(successes, trials):
    return scipy_stats.binomtest(successes, trials).proportion_ci(confidence_level=1 - ALPHA,
                                                                   method="exact")


def untemper(y):
    """The MT19937 state word whose tempered output is ``y`` (the tempering is invertible)."""
    y ^= y >> 18
    y ^= (y << 15) & 0xEFC60000
    x = y
    for _ in range(4):
        x = y ^ ((x << 7) & 0x9D2C5680)
    y = x & 0xFFFFFFFF
    x = y
    for _ in range(2):
        x = y ^ (x >> 11)
    return x & 0xFFFFFFFF


def generator_emitting(outputs):
    """A numpy Generator whose MT19937 emits the 32-bit ``outputs`` (at most 624) first, so the
    first 64-bit words it gives ``Generator.integers(0, 2**64, dtype=np.uint64)`` are
    ``outputs[0] << 32 | outputs[1]``, ``outputs[2] << 32 | outputs[3]``, ..."""
    assert len(outputs) <= 624
    bit_generator = np.random.MT19937(0)
    state = bit_generator.state
    key = state["state"]["key"].copy()
    key[:len(outputs)] = [untemper(o) for o in outputs]
    state["state"]["key"], state["state"]["pos"] = key, 0
    bit_generator.state = state
    return np.random.Generator(bit_generator)


class Capped:
    """A bit source that answers with ``answer(m)`` and fails the test after ``cap`` answers,
    so that a sampler that does not stop is a failure, not a hang."""

    def __init__(self, answer, cap=100_000):
        self.answer, self.cap, self.calls = answer, cap, 0

    def randbelow(self, m):
        self.calls += 1
        assert self.calls <= self.cap, f"no result after {self.cap} random integers"
        value = self.answer(m)
        assert 0 <= value < m
        return value


class LongRun(Capped):
    """Answers 0 to the first ``rounds`` calls ``randbelow(2)`` and ``m - 1`` to every other
    call. In the discrete Laplace at scale 1 (epsilon = 1, sensitivity 1) each exp(-1) coin is
    then ``randbelow(2) = 0`` (go on), ``randbelow(3) = 2`` (stop at K = 3, odd: the coin is 1),
    so the geometric loop goes on ``rounds`` times, and the sign, ``randbelow(2) = 1``, is
    negative: the draw is ``-rounds``."""

    def __init__(self, rounds):
        self.zeros = rounds

        def answer(m):
            if m == 2 and self.zeros > 0:
                self.zeros -= 1
                return 0
            return m - 1

        super().__init__(answer)


# -- the uniform integers ------------------------------------------------------------------------
@pytest.mark.parametrize("kind", [np.random.PCG64, np.random.PCG64DXSM, np.random.Philox,
                                  np.random.SFC64, np.random.MT19937])
def test_the_words_are_the_generators_64_bit_words(kind):
    # m = 2**64 accepts every word and returns it: the source's words are the Generator's
    # 64-bit words, whichever way they are read (random_raw, or integers for MT19937)
    source = BitSource(np.random.Generator(kind(7)))
    words = [source.randbelow(2 ** 64) for _ in range(50)]
    expected = np.random.Generator(kind(7)).integers(0, 2 ** 64, size=50, dtype=np.uint64)
    assert words == [int(w) for w in expected]
    if kind is np.random.PCG64:          # the raw stream NEP 19 keeps in every NumPy version
        assert words == [int(w) for w in np.random.PCG64(7).random_raw(50)]


def test_randbelow_rejects_the_words_above_the_last_multiple():
    # m = 3: 2**64 - 1 is the one rejected word (2**64 = 1 mod 3); the next word, 5, gives 2.
    # m = 3 * 2**64: two words per try, x = (hi << 64 | lo); 2**128 - 1 is rejected.
    all_ones = 0xFFFFFFFF
    source = BitSource(generator_emitting([all_ones, all_ones, 0, 5]))
    assert source.randbelow(3) == 2
    source = BitSource(generator_emitting([all_ones] * 4 + [0, 1, 0, 7]))
    assert source.randbelow(3 * 2 ** 64) == (1 << 96 | 7) % (3 * 2 ** 64)
    assert BitSource(generator_emitting([])).randbelow(1) == 0


@pytest.mark.parametrize("m", [3, 10, 2 ** 64 + 13, 10 ** 40])
def test_randbelow_is_uniform(m):
    source = BitSource(np.random.default_rng(11))
    draws = 20_000
    bins = min(m, 10)
    observed = np.bincount([source.randbelow(m) * bins // m for _ in range(draws)],
                           minlength=bins)
    # each of the ``bins`` parts of range(m) holds floor or ceil of m / bins values
    sizes = [((k + 1) * m + bins - 1) // bins - (k * m + bins - 1) // bins for k in range(bins)]
    assert sum(sizes) == m
    expected = np.array([draws * Fraction(size, m) for size in sizes], dtype=np.float64)
    statistic = float(np.sum((observed - expected) ** 2 / expected))
    assert scipy_stats.chi2.sf(statistic, bins - 1) > ALPHA


# -- Bernoulli(exp(-gamma)) ----------------------------------------------------------------------
@pytest.mark.parametrize("gamma", [Fraction(1, 3), 0.1, 1, Fraction(5, 2), 6])
def test_bernoulli_exp_has_probability_exp_minus_gamma(gamma):
    source = BitSource(np.random.default_rng(3))
    trials = 20_000
    successes = sum(bernoulli_exp(gamma, rng=source) for _ in range(trials))
    low, high = clopper_pearson(successes, trials)
    assert low <= math.exp(-float(gamma)) <= high


def test_bernoulli_exp_of_zero_is_certain_and_draws_nothing():
    def refuse(m):
        raise AssertionError("drew a random integer for a certain outcome")
    assert bernoulli_exp(0, rng=Capped(refuse)) is True


# -- the discrete Laplace ------------------------------------------------------------------------
@pytest.mark.parametrize("scale", [
    1,                                   # epsilon = 1, sensitivity 1 (s = t = 1)
    2,                                   # epsilon = 0.5
    pytest.param(Fraction(7, 3), marks=pytest.mark.slow),  # s = 3: Y = floor(X / s) is exercised
    # epsilon = 0.1, sensitivity 2: t and s near 2**55 (this one and the one above: slow tier)
    pytest.param(Fraction(2) / Fraction(0.1), marks=pytest.mark.slow),
])
def test_discrete_laplace_has_the_exact_pmf_tails_included(scale):
    source = BitSource(np.random.default_rng(2020))
    draws = [discrete_laplace(scale, rng=source) for _ in range(30_000)]
    assert all(type(z) is int for z in draws)
    assert chi_square_pvalue(draws, *laplace_law(scale)) > ALPHA


def test_the_class_counts_noise_has_the_exact_pmf_at_sensitivity_two():
    # K > 2 classes: scale 2 / epsilon, from the float epsilon read exactly
    draws = counts._discrete_laplace(0.8, 30_000, np.random.default_rng(5), sensitivity=2)
    assert draws.dtype == np.int64
    assert chi_square_pvalue(draws.tolist(), *laplace_law(Fraction(2) / Fraction(0.8))) > ALPHA


def test_no_float_rounds_a_large_draw():
    # at scale 1e30 a float sampler's draws are multiples of 2**47 (53 bits of precision); the
    # exact draws are odd half the time
    source = BitSource(np.random.default_rng(8))
    draws = [discrete_laplace(10 ** 30, rng=source) for _ in range(2000)]
    odd = sum(z % 2 for z in draws)
    low, high = clopper_pearson(odd, len(draws))
    assert low <= 0.5 <= high
    assert max(abs(z) for z in draws) > 10 ** 30
    # the class counts' helper keeps such draws as Python ints
    huge = counts._discrete_laplace(1e-25, 50, np.random.default_rng(8))
    assert huge.dtype == object and any(int(z) % 2 for z in huge)


def test_a_bit_source_drives_the_draw_beyond_any_bounded_support():
    # at epsilon = 1 numpy's geometric never exceeds 37, so its two-sided draws never exceed 36:
    # the exact sampler reaches every integer
    for rounds in (1, 37, 5000):
        assert discrete_laplace(1, rng=LongRun(rounds)) == -rounds
    assert discrete_laplace(Fraction(1) / Fraction(1.0), rng=LongRun(5000)) == -5000


def test_the_class_counts_reach_beyond_numpys_support():
    # Through a real Generator: MT19937 made to emit the words that keep the geometric loop of
    # the exact sampler going 150 times (each exp(-1) coin: an even word, then a word = 1 mod 3;
    # then an odd word ends the loop and an odd word makes the sign negative). Whatever its bits,
    # the float sampler this replaced (NumPy's geometric) gives |z| <= 36 at epsilon = 1, and
    # shares in [0.464, 0.536] for 500 positives among 1000.
    rounds = 150
    outputs = [0, 0, 0, 1] * rounds + [0, 1, 0, 1]
    assert counts._discrete_laplace(1.0, 1, generator_emitting(outputs)).tolist() == [-rounds]
    codes = np.array([1] * 500 + [0] * 500)
    shares = counts.private_class_shares(codes, 2, 1.0, generator_emitting(outputs)).shares
    assert shares[1] < 0.45                 # 0.35 here


def test_epsilon_one_half_ends_on_the_bits_that_stall_numpy():
    # NumPy's geometric at p = 1 - exp(-0.5) never returns when its uniform double is
    # 1 - 2**-53, i.e. when MT19937 emits 0xFFFFFFFF twice: here every word is all ones
    stall = generator_emitting([0xFFFFFFFF] * 624)
    assert counts._discrete_laplace(0.5, 1, stall).tolist() == [-1]
    codes = np.array([1] * 10 + [0] * 10)
    shares = counts.private_class_shares(codes, 2, 0.5, generator_emitting([0xFFFFFFFF] * 624))
    assert 0 < shares.shares[1] < 1
    # a source that always gives its largest answer (the analogue of the largest uniform)
    source = Capped(lambda m: m - 1, cap=100)
    assert discrete_laplace(2, rng=source) == -1


def test_the_same_seed_gives_the_same_draws():
    def run(rng):
        return ([discrete_laplace(Fraction(1) / Fraction(0.3), rng=rng) for _ in range(5)]
                + [discrete_gaussian(Fraction(9, 2), rng=rng) for _ in range(5)]
                + [bernoulli_exp(Fraction(1, 2), rng=rng) for _ in range(5)])
    assert run(np.random.default_rng(42)) == run(np.random.default_rng(42))
    assert run(BitSource(np.random.default_rng(42))) == run(np.random.default_rng(42))
    assert run(np.random.default_rng(42)) != run(np.random.default_rng(43))
    assert discrete_laplace(3, rng=9) == discrete_laplace(3, rng=np.random.default_rng(9))
    first = counts.private_class_shares(np.array([0, 1, 1] * 30), 2, 1.0,
                                        np.random.default_rng(4))
    assert first == counts.private_class_shares(np.array([0, 1, 1] * 30), 2, 1.0,
                                                np.random.default_rng(4))
    # the draws themselves, pinned: a change in how the samplers use their words changes every
    # seeded release that draws from them (and the changelog must record it)
    generator = np.random.default_rng(2020)
    assert [discrete_laplace(Fraction(1) / Fraction(0.1), rng=generator)
            for _ in range(12)] == PINNED_LAPLACE
    generator = np.random.default_rng(2020)
    assert [discrete_gaussian(4, rng=generator) for _ in range(12)] == PINNED_GAUSSIAN


#: default_rng(2020): twelve draws at epsilon = 0.1 (scale 1 / Fraction(0.1)), and at sigma^2 = 4
PINNED_LAPLACE = [7, 5, -19, -20, 11, 13, 24, -9, -1, -31, -6, 0]
PINNED_GAUSSIAN = [-1, -3, 3, 1, 2, 2, -1, 1, -2, 0, 0, -3]


# -- the discrete Gaussian -----------------------------------------------------------------------
@pytest.mark.parametrize("sigma_squared", [pytest.param(Fraction(1, 3), marks=pytest.mark.slow), 4,
                                           pytest.param(50.5, marks=pytest.mark.slow)])
def test_discrete_gaussian_has_the_exact_pmf_tails_included(sigma_squared):
    source = BitSource(np.random.default_rng(1729))
    draws = [discrete_gaussian(sigma_squared, rng=source) for _ in range(20_000)]
    assert all(type(z) is int for z in draws)
    assert chi_square_pvalue(draws, *gaussian_law(sigma_squared)) > ALPHA


# -- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize("call, error, match", [
    (lambda: discrete_laplace(0), ValueError, "scale must lie in"),
    (lambda: discrete_laplace(-1.5), ValueError, "scale must lie in"),
    (lambda: discrete_laplace(math.nan), ValueError, "scale must be finite"),
    (lambda: discrete_laplace(math.inf), ValueError, "scale must be finite"),
    (lambda: discrete_laplace("1"), TypeError, "scale must be a rational"),
    (lambda: discrete_laplace(True), TypeError, "scale must be a rational"),
    (lambda: discrete_laplace(None), TypeError, "scale must be a rational"),
    (lambda: discrete_gaussian(0), ValueError, "sigma_squared must lie in"),
    (lambda: discrete_gaussian(1j), TypeError, "sigma_squared must be a rational"),
    (lambda: bernoulli_exp(Fraction(-1, 2)), ValueError, "gamma must lie in"),
    (lambda: discrete_laplace(1, rng="seed"), TypeError, "rng must be"),
    (lambda: discrete_laplace(1, rng=-1), ValueError, "rng"),
    (lambda: BitSource(np.random.PCG64(0)), TypeError, "rng must be a numpy Generator"),
    (lambda: BitSource(np.random.default_rng(0)).randbelow(0), ValueError, "m must be"),
    (lambda: BitSource(np.random.default_rng(0)).randbelow(2.0), TypeError, "m must be"),
])
def test_bad_input_is_refused_with_a_named_error(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_numpy_scalars_are_read_exactly():
    # np.float32(0.1) is 13421773 / 2**27, not 0.1: the same draws as that Fraction
    for value, exact in [(np.float32(0.1), Fraction(13421773, 2 ** 27)), (np.int64(3), 3),
                         (np.float64(0.25), Fraction(1, 4))]:
        assert (discrete_laplace(value, rng=np.random.default_rng(6))
                == discrete_laplace(exact, rng=np.random.default_rng(6)))
