r"""Exact integer noise: the discrete Laplace and the discrete Gaussian (Canonne, Kamath &
Steinke 2020).

A sampler built on floating point cannot be exact. NumPy's ``Generator.geometric`` turns a
53-bit uniform double into an integer, so its support is bounded (at ``p = 1 - exp(-1)`` every
draw lies in [1, 37]): a two-sided geometric made from it gives some neighbour an output that the
dataset itself can never produce, and the release is (epsilon, ~1e-16)-DP, not epsilon-DP. The
samplers here follow Canonne, Kamath & Steinke (2020, "The discrete Gaussian for differential
privacy", NeurIPS), Algorithms 1 to 3, with integer arithmetic only:

- :func:`bernoulli_exp`: a coin that is 1 with probability ``exp(-gamma)``, gamma a non-negative
  rational, from uniform integers alone (Algorithm 1);
- :func:`discrete_laplace`: ``P(Z = z)`` proportional to ``exp(-|z| / scale)`` on all of Z, for a
  positive rational scale ``t / s`` (Algorithm 2);
- :func:`discrete_gaussian`: ``P(Z = z)`` proportional to ``exp(-z^2 / (2 sigma^2))`` on all of
  Z, for a positive rational ``sigma^2``, by rejection from the discrete Laplace (Algorithm 3).

No floating-point number touches a sample. A float parameter is read as the exact dyadic
rational it is (``fractions.Fraction(0.1)`` is ``3602879701896397 / 2**55``), so
``discrete_laplace(Fraction(sensitivity) / Fraction(epsilon))`` has exactly the pmf
``exp(-epsilon |z| / sensitivity)`` normalised, and adding it to an integer query of that
sensitivity is exactly epsilon-DP, given uniform random integers.

**Random integers.** Every random choice is ``source.randbelow(m)``, a uniform integer in
``[0, m)`` for a Python int ``m >= 1`` of any size. :class:`BitSource` provides it from a numpy
Generator; any other object with such a method can be passed as ``rng`` instead (tests inject
sources that drive the samplers to extremes; the standard library's ``secrets`` module is one).
The guarantee is relative to the source: a seeded Generator gives reproducible research runs, and
``secure=True`` draws from a Generator seeded with operating-system entropy
(:mod:`dpsolve._secure`); PCG64 is a statistical, not a cryptographic, generator.

**Termination.** Every loop ends with probability 1, and the number of passes has a geometric
tail: a run of k passes has probability at most ``c^k`` for a ``c < 1`` that does not depend on
the parameters. No single random word can stall a sampler, unlike NumPy's search for a geometric
variable, which never returns at ``p = 1 - exp(-0.5)`` when its uniform is ``1 - 2**-53``. (Some
infinite sequences of words never end a loop, an endless run of rejections for one: every exact
sampler with unbounded support has such sequences, of probability 0.)

**Other libraries.** OpenDP (Rust) implements the same three algorithms of Canonne, Kamath &
Steinke (2020) on arbitrary-precision rationals, with uniform integers by rejection on bytes
from a cryptographically secure generator. Google's differential-privacy library draws its
geometric variables by a binary search whose split probabilities are computed in floating point,
truncated at ``2**63 - 1``, and makes its Gaussian from binomial samples: robust to the
floating-point attacks of Mironov (2012), but not exact in the sense above.
"""
import math
import numbers
from fractions import Fraction

import numpy as np

from .._validation import check_rng

__all__ = ["BitSource", "bernoulli_exp", "discrete_gaussian", "discrete_laplace"]

_WORD_BITS = 64
_WORD = 1 << _WORD_BITS

#: Bit generators whose raw output (``random_raw``) is one full 64-bit word per call, the same
#: word as ``Generator.integers(0, 2**64, dtype=np.uint64)`` draws (checked in the tests).
#: MT19937's raw output is a 32-bit word, so it (and any other bit generator) goes through
#: ``integers``, which combines two.
_RAW_64_BIT = (np.random.PCG64, np.random.PCG64DXSM, np.random.Philox, np.random.SFC64)


class BitSource:
    """Uniform random integers of any size from a numpy Generator, by rejection on whole
    64-bit words.

    ``randbelow(m)`` takes ``k = ceil(log2(m) / 64)`` words, reads them as one integer ``x``
    uniform on ``[0, 2**(64 k))``, and returns ``x mod m`` if ``x`` lies below the largest
    multiple of m that fits (``2**(64 k) - 2**(64 k) mod m``), drawing k new words otherwise: the
    result is exactly uniform, and a try is rejected with probability
    ``(2**(64 k) mod m) / 2**(64 k)``, at most 1/2 (never when m is a power of two, below
    ``m / 2**64`` when m fits in one word). ``randbelow(1)`` is 0 and draws nothing.

    The words are the bit generator's own 64-bit outputs. For PCG64 (``default_rng``), PCG64DXSM,
    Philox and SFC64 they are read with ``bit_generator.random_raw()``, ten times cheaper than a
    call of ``Generator.integers`` (about 0.2 against 1.8 microseconds a word, on the machine of
    docs/privacy.md) and a stream that NEP 19 keeps the same in every NumPy version; other bit
    generators, such as MT19937 whose raw output has 32 bits, go through
    ``Generator.integers(0, 2**64, dtype=np.uint64)``, which returns the same word for the four
    above. So the same seed gives the same draws.

    Parameters
    ----------
    rng : numpy.random.Generator
        The source of the words. It is used, not copied: its stream advances by the words drawn.

    Examples
    --------
    >>> import numpy as np
    >>> source = BitSource(np.random.default_rng(0))
    >>> 0 <= source.randbelow(10**30) < 10**30
    True
    """

    __slots__ = ("_rng", "_word")

    def __init__(self, rng):
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy Generator, got {type(rng).__name__}")
        self._rng = rng
        bit_generator = rng.bit_generator
        if type(bit_generator) in _RAW_64_BIT:
            self._word = bit_generator.random_raw
        else:
            def word(integers=rng.integers, dtype=np.uint64):
                return int(integers(0, _WORD, dtype=dtype))
            self._word = word

    def randbelow(self, m):
        """A uniform random integer in ``[0, m)``.

        Parameters
        ----------
        m : int
            The number of possible values, ``m >= 1`` (a Python or numpy integer, of any size).

        Returns
        -------
        int
            A Python int, exactly uniform on ``range(m)`` given uniform words.
        """
        if type(m) is not int:
            if isinstance(m, (bool, np.bool_)) or not isinstance(m, numbers.Integral):
                raise TypeError(f"m must be an integer, got {type(m).__name__}")
            m = int(m)
        if m <= 1:
            if m == 1:
                return 0
            raise ValueError(f"m must be an integer >= 1, got {m}")
        word = self._word
        if m <= _WORD:
            limit = _WORD - _WORD % m
            while True:
                x = word()
                if x < limit:
                    return x % m
        words = ((m - 1).bit_length() + _WORD_BITS - 1) // _WORD_BITS
        span = 1 << (_WORD_BITS * words)
        limit = span - span % m
        while True:
            x = 0
            for _ in range(words):
                x = (x << _WORD_BITS) | word()
            if x < limit:
                return x % m


def _as_bit_source(rng):
    """``rng`` as an object with ``randbelow(m)``: a bit source is used as it is; None, an int,
    a SeedSequence or a Generator become a :class:`BitSource` (a Generator's stream advances)."""
    if isinstance(rng, BitSource):
        return rng
    if rng is None or isinstance(rng, (numbers.Integral, np.bool_, np.random.SeedSequence,
                                       np.random.Generator)):
        return BitSource(check_rng(rng))
    if callable(getattr(rng, "randbelow", None)):
        return rng
    raise TypeError("rng must be None, an int, a numpy SeedSequence, a numpy Generator or an "
                    f"object with a randbelow(m) method, got {type(rng).__name__}")


def _rational(value, name, *, positive):
    """``value`` (an int, a Fraction or a finite float) as the Fraction it equals exactly."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a rational number (an int, a Fraction or a float), "
                        f"got {type(value).__name__}")
    if isinstance(value, numbers.Integral):
        value = Fraction(int(value))
    elif isinstance(value, numbers.Rational):
        value = Fraction(value.numerator, value.denominator)
    elif isinstance(value, numbers.Real) and hasattr(value, "as_integer_ratio"):
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value}")
        value = Fraction(*value.as_integer_ratio())     # exact: a float is a dyadic rational
    else:
        raise TypeError(f"{name} must be a rational number (an int, a Fraction or a float), "
                        f"got {type(value).__name__}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must lie in {'(0' if positive else '[0'}, inf), got {value}")
    return value


# -- the algorithms, on integers ---------------------------------------------------------------
def _bernoulli(source, n, d):
    """True with probability ``n / d`` (``0 <= n``, ``1 <= d``): ``randbelow(d) < n``, with no
    word drawn when the answer is certain."""
    if n <= 0:
        return False
    if n >= d:
        return True
    return source.randbelow(d) < n


def _bernoulli_exp_unit(source, n, d):
    """True with probability ``exp(-n / d)`` for ``0 <= n <= d`` (Algorithm 1 of Canonne,
    Kamath & Steinke 2020). K is the first k with ``A_k = 0``, where ``A_k`` ~
    Bernoulli(gamma / k): ``P(K > k) = gamma^k / k!``, so ``P(K odd) = sum_j (-gamma)^j / j! =
    exp(-gamma)``. At most e passes are expected."""
    k = 1
    while _bernoulli(source, n, d * k):
        k += 1
    return k % 2 == 1


def _bernoulli_exp(source, n, d):
    """True with probability ``exp(-n / d)`` for any ``n >= 0``: ``exp(-gamma)`` is
    ``exp(-1)^floor(gamma) * exp(-(gamma - floor(gamma)))``, one coin per factor, stopping at the
    first 0 (Canonne, Kamath & Steinke 2020, Algorithm 1, gamma > 1). Each ``exp(-1)`` coin is
    0 with probability ``1 - 1/e``, so about 1.6 coins are expected however large gamma is."""
    whole, rest = divmod(n, d)
    for _ in range(whole):
        if not _bernoulli_exp_unit(source, 1, 1):
            return False
    return _bernoulli_exp_unit(source, rest, d)


def _discrete_laplace(source, s, t):
    """``P(Z = z)`` proportional to ``exp(-|z| s / t)`` (positive integers s, t; Canonne, Kamath
    & Steinke 2020, Algorithm 2).

    ``X = U + t V``, with U uniform on ``[0, t)`` kept with probability ``exp(-U / t)`` and V
    counting ``exp(-1)`` coins until the first 0, has ``P(X = x)`` proportional to
    ``exp(-x / t)`` on all of N; ``Y = floor(X / s)`` is then geometric with ratio
    ``exp(-s / t)``, and a fair sign, with the draw (negative, 0) rejected so that 0 is not
    counted twice, makes Z. A pass is kept with probability at least ``(1 - 1/e) / 2``."""
    while True:
        u = source.randbelow(t)
        if not _bernoulli_exp_unit(source, u, t):
            continue
        v = 0
        while _bernoulli_exp_unit(source, 1, 1):
            v += 1
        y = (u + t * v) // s
        negative = source.randbelow(2) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def _discrete_gaussian(source, a, b):
    """``P(Z = z)`` proportional to ``exp(-z^2 / (2 sigma^2))`` with ``sigma^2 = a / b`` (positive
    integers; Canonne, Kamath & Steinke 2020, Algorithm 3).

    Y from the discrete Laplace of scale ``t = floor(sigma) + 1`` is kept with probability
    ``exp(-(|Y| - sigma^2 / t)^2 / (2 sigma^2))``; in integers, that exponent is
    ``(|Y| b t - a)^2 / (2 a b t^2)``."""
    t = math.isqrt(a // b) + 1          # floor(sqrt(a / b)) = floor(sqrt(floor(a / b)))
    denominator = 2 * a * b * t * t
    while True:
        y = _discrete_laplace(source, 1, t)
        numerator = (abs(y) * b * t - a) ** 2
        common = math.gcd(numerator, denominator)
        if _bernoulli_exp(source, numerator // common, denominator // common):
            return y


# -- the public samplers -----------------------------------------------------------------------
def bernoulli_exp(gamma, *, rng=None):
    """A coin that is True with probability exactly ``exp(-gamma)``.

    Canonne, Kamath & Steinke (2020), Algorithm 1: for gamma in [0, 1], K is the first k for
    which a Bernoulli(gamma / k) coin is 0, and the result is whether K is odd; a larger gamma is
    split into ``floor(gamma)`` coins of ``exp(-1)`` and one of ``exp(-(gamma - floor(gamma)))``.
    Every coin is a comparison of uniform integers (``randbelow(d k) < n`` for ``gamma = n / d``):
    no floating-point number is involved.

    Parameters
    ----------
    gamma : int, fractions.Fraction or float
        ``gamma >= 0``, read exactly (a float as the dyadic rational it is).
    rng : None, int, SeedSequence, Generator or bit source, optional
        The random integers: a numpy Generator (its stream advances) or a seed for one, wrapped
        in a :class:`BitSource`; or any object with a ``randbelow(m)`` method.

    Returns
    -------
    bool
        True with probability ``exp(-gamma)``.
    """
    gamma = _rational(gamma, "gamma", positive=False)
    return _bernoulli_exp(_as_bit_source(rng), gamma.numerator, gamma.denominator)


def discrete_laplace(scale, *, rng=None):
    """An exact draw of the discrete Laplace (two-sided geometric) distribution.

    ``P(Z = z) = (1 - q) / (1 + q) * q^|z|`` for every integer z, with ``q = exp(-1 / scale)``
    (Canonne, Kamath & Steinke 2020, Algorithm 2). Added to an integer query of L1 sensitivity
    Delta, it is epsilon-DP with ``scale = Delta / epsilon`` (Ghosh, Roughgarden & Sundararajan
    2009): the pmfs at z and z + Delta differ by at most a factor ``exp(epsilon)``.

    The support is all of Z and the pmf is exact: the sample is made from uniform integers with
    integer arithmetic, and the result is a Python int of any size (with ``scale = 1e30`` the
    draws are integers near 1e30, odd as often as even). The expected work is a few passes
    whatever the scale; the integers involved have about ``log2`` of the scale's numerator and
    denominator bits.

    Parameters
    ----------
    scale : int, fractions.Fraction or float
        ``scale > 0``, read exactly (a float as the dyadic rational it is): for epsilon-DP at
        sensitivity Delta, pass ``Fraction(Delta) / Fraction(epsilon)``, not the rounded float
        ``Delta / epsilon``.
    rng : None, int, SeedSequence, Generator or bit source, optional
        The random integers: a numpy Generator (its stream advances) or a seed for one, wrapped
        in a :class:`BitSource`; or any object with a ``randbelow(m)`` method.

    Returns
    -------
    int
        The draw.

    Examples
    --------
    >>> from fractions import Fraction
    >>> z = discrete_laplace(Fraction(1) / Fraction(0.5), rng=0)   # epsilon = 0.5, Delta = 1
    >>> isinstance(z, int)
    True
    """
    scale = _rational(scale, "scale", positive=True)
    # scale = t / s, and the pmf is proportional to exp(-|z| s / t)
    return _discrete_laplace(_as_bit_source(rng), scale.denominator, scale.numerator)


def discrete_gaussian(sigma_squared, *, rng=None):
    """An exact draw of the discrete Gaussian distribution.

    ``P(Z = z) = exp(-z^2 / (2 sigma^2)) / sum_{y in Z} exp(-y^2 / (2 sigma^2))`` for every
    integer z, by rejection from the discrete Laplace (Canonne, Kamath & Steinke 2020,
    Algorithm 3). A pass is kept with probability above 0.44 at every sigma (computed from the
    two pmfs: 0.54 at sigma = 1, 0.76 as sigma grows), so at most 2.3 passes are expected. Its
    variance is below sigma^2. Added to an integer query of sensitivity Delta, or coordinate by
    coordinate to an integer vector of L2 sensitivity Delta, it is ``Delta^2 / (2 sigma^2)``-zCDP
    (Canonne, Kamath & Steinke 2020).

    The support is all of Z and the pmf is exact: integer arithmetic on uniform integers only.

    Parameters
    ----------
    sigma_squared : int, fractions.Fraction or float
        ``sigma^2 > 0``, read exactly (a float as the dyadic rational it is).
    rng : None, int, SeedSequence, Generator or bit source, optional
        The random integers: a numpy Generator (its stream advances) or a seed for one, wrapped
        in a :class:`BitSource`; or any object with a ``randbelow(m)`` method.

    Returns
    -------
    int
        The draw.
    """
    sigma_squared = _rational(sigma_squared, "sigma_squared", positive=True)
    return _discrete_gaussian(_as_bit_source(rng), sigma_squared.numerator,
                              sigma_squared.denominator)
