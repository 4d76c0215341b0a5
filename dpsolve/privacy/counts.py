r"""Private class counts: the base rate the estimators centre their intercept on.

The count of each class is released with the discrete Laplace (two-sided geometric) mechanism
(Ghosh, Roughgarden & Sundararajan 2009): ``c_k + Z_k`` with ``P(Z = z)`` proportional to
``exp(-epsilon |z| / s)``, s the count vector's L1 sensitivity under replace-one neighbours (n
public): replacing one record moves it from one class to another, so one count changes by at
most 1 for two classes (the other is ``n - c``: only the positives are released, ``s = 1``) and
two counts by 1 each for K > 2 classes (``s = 2``). The noise is drawn exactly, with integer
arithmetic on uniform random integers (:mod:`dpsolve.privacy.discrete`, Canonne, Kamath &
Steinke 2020), at the scale ``Fraction(s) / Fraction(epsilon)``, which equals ``s / epsilon``
exactly: its support is all of Z and its pmf the one above, and the noisy count is an integer,
so there is no floating-point side channel either (Mironov 2012): the release is exactly
epsilon-DP. (A sampler built on floating point, such as NumPy's ``geometric``, has a bounded
support, and some neighbour then releases a value the dataset never can.)

The shares are post-processing of the noisy integer counts. For two classes, the posterior mean
of the count of positives under a uniform prior given the noisy count
(:func:`posterior_mean_count`: about the noisy count when the noise is small against n, pulled to
n/2 when it is not), clipped to ``[1/2, n - 1/2]`` and divided by n; for K > 2, each noisy count
clipped to ``[1/2, n - 1/2]``, then normalised.
Every share is in (0, 1) and its log-odds finite.
"""
import dataclasses
import math
from fractions import Fraction

import dp_accounting
import numpy as np

from .._validation import check_real
from .accounting import pure_event
from .discrete import BitSource, _discrete_laplace as _exact_discrete_laplace

__all__ = ["ClassShares", "posterior_mean_count", "private_class_shares"]


#: The smallest epsilon the counts take. Not the sampler's limit: the exact sampler has none (its
#: expected number of passes is bounded whatever epsilon; its integers grow like log2(1/epsilon)
#: bits, and it draws even at epsilon = 2**-1074). The limit is the post-processing's:
#: :func:`posterior_mean_count` works in floating point with terms of size 1/epsilon, and its
#: error, of the order of 1e-16/epsilon records (against the closed form at 80 digits: at most
#: 1.3e-7 records for epsilon >= 1e-9, 2e-4 at 1e-12), swamps the result further down (at 1e-20
#: it returns 0 or n instead of about n/2). A count at such an epsilon is all noise anyway.
MIN_EPSILON = 1e-9


@dataclasses.dataclass(frozen=True)
class ClassShares:
    """Private shares of the classes in the data.

    Attributes
    ----------
    shares : tuple of float
        One share per class (in the problem's class order), each in (0, 1), summing to 1.
    epsilon : float
        What the release cost (pure epsilon-DP, replace-one neighbours).
    dp_event : dp_accounting.DpEvent
        Its event, to compose with the fit that uses it.
    """

    shares: tuple
    epsilon: float
    dp_event: dp_accounting.DpEvent


def private_class_shares(codes, n_classes, epsilon, rng):
    """The shares of the classes ``0..n_classes-1`` among ``codes``, epsilon-DP (module
    docstring).

    Parameters
    ----------
    codes : array of int
        Each record's class index, in ``range(n_classes)``.
    n_classes : int
        K >= 2 (public).
    epsilon : float
        At least ``MIN_EPSILON`` (1e-9).
    rng : numpy Generator
        The noise's source.

    Returns
    -------
    ClassShares
    """
    epsilon = check_real(epsilon, "epsilon", low=MIN_EPSILON, low_inclusive=True)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    codes = np.asarray(codes)
    n = codes.shape[0]
    counts = np.bincount(codes, minlength=n_classes)
    if n_classes == 2:
        noise = _discrete_laplace(epsilon, 1, rng)
        # The noisy count c + Z is the release, an integer; all that follows is post-processing.
        # The posterior mean depends on it only through its value clipped to [0, n], so clip in
        # integers first: no float rounds or overflows a noisy count however large Z is.
        noisy = float(min(max(int(counts[1]) + int(noise[0]), 0), n))
        positive = min(max(posterior_mean_count(noisy, n, epsilon), 0.5), n - 0.5) / n
        shares = (1.0 - positive, positive)
    else:
        noise = _discrete_laplace(epsilon, n_classes, rng, sensitivity=2)
        noisy = np.array([min(max(int(c) + int(z), 0), n) for c, z in zip(counts, noise)],
                         dtype=np.float64)
        clipped = np.clip(noisy, 0.5, n - 0.5)
        shares = tuple(float(v) for v in clipped / clipped.sum())
    return ClassShares(shares=tuple(float(v) for v in shares), epsilon=epsilon,
                       dp_event=pure_event(epsilon))


def posterior_mean_count(noisy, n, epsilon):
    """The mean of a count c in [0, n] given its release ``noisy = c + Z`` (Z with density
    proportional to ``exp(-epsilon |z|)``), under a uniform prior on c (continuous).

    With little noise it is ``noisy`` clipped to [0, n]; with noise of the order of n it tends
    to ``n / 2``, so a count drowned in noise does not put an extreme log-odds on the intercept.
    The posterior is ``exp(-|c - noisy| / s)`` on [0, n] (s = 1/epsilon); with m the point of
    [0, n] nearest ``noisy``, both pieces are integrated in closed form relative to their
    common maximum at m (no overflow).
    """
    s = 1.0 / epsilon
    m = min(max(float(noisy), 0.0), float(n))
    if s <= 1e-12 * max(n, 1):
        return m
    left, right = -math.expm1(-m / s), -math.expm1(-(n - m) / s)
    mass = s * (left + right)
    # the two first moments, arranged so that nothing of size s cancels but rounding errors of
    # about 1e-16 s (hence MIN_EPSILON)
    moment = s * (m - s * left) + s * ((m - n) + (n + s) * right)
    return min(max(moment / mass, 0.0), float(n))


def _discrete_laplace(epsilon, size, rng, sensitivity=1):
    """``size`` independent exact draws with ``P(z)`` proportional to
    ``exp(-epsilon |z| / sensitivity)`` (:func:`dpsolve.privacy.discrete.discrete_laplace`, at the
    scale ``Fraction(sensitivity) / Fraction(epsilon)``: the float epsilon read exactly, never
    divided in floating point), from uniform integers drawn from the Generator ``rng``.

    Returns the exact draws in an int64 array, or in an array of Python ints (dtype object) if
    one does not fit in int64 (possible only at an epsilon below about 1e-18, which
    :func:`private_class_shares` never takes): never rounded to a float."""
    scale = Fraction(sensitivity) / Fraction(epsilon)
    source = BitSource(rng)
    draws = [_exact_discrete_laplace(source, scale.denominator, scale.numerator)
             for _ in range(size)]
    fits = all(-2 ** 63 <= z < 2 ** 63 for z in draws)
    return np.array(draws, dtype=np.int64 if fits else object)
