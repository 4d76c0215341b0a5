"""Noise samplers: exact agreement with NumPy's draws, distribution tests, bad input.

Distribution tests use fixed seeds; each threshold is a bound that a correct sampler exceeds with
probability below ALPHA (DKW for Kolmogorov-Smirnov distances, Chebyshev/CLT-free bounds for
moments), and each is shown to reject a slightly wrong distribution so none of them is vacuous.
"""
import math

import numpy as np
import pytest
from scipy import stats

from dpsolve.privacy import gamma_norm_noise, gaussian_noise, laplace_noise

ALPHA = 1e-6
DRAWS = 200_000


def dkw(m, alpha=ALPHA):
    """Dvoretzky-Kiefer-Wolfowitz (Massart): P(sup |F_m - F| > t) <= 2 exp(-2 m t^2)."""
    return math.sqrt(math.log(2.0 / alpha) / (2.0 * m))


def ks_distance(sample, cdf):
    return stats.kstest(sample, cdf).statistic


def sequential_norm(g):
    sq = 0.0
    for v in g:
        sq += v * v
    return math.sqrt(sq)


# --- bit-for-bit agreement with NumPy's Generator ------------------------------------------------

def test_gaussian_equals_numpy():
    ours, ref = np.random.default_rng(7), np.random.default_rng(7)
    np.testing.assert_array_equal(gaussian_noise(2.5, 13, size=4, rng=ours),
                                  2.5 * ref.standard_normal((4, 13)))
    assert ours.random() == ref.random()  # the caller's stream advanced by the same draws


def test_laplace_equals_numpy():
    ours, ref = np.random.default_rng(7), np.random.default_rng(7)
    np.testing.assert_array_equal(laplace_noise(0.3, 13, size=4, rng=ours),
                                  ref.laplace(0.0, 0.3, (4, 13)))
    assert ours.random() == ref.random()


@pytest.mark.parametrize("dim", [1, 5, 64])
def test_gamma_norm_equals_documented_numpy_recipe(dim):
    ours, ref = np.random.default_rng(7), np.random.default_rng(7)
    got = gamma_norm_noise(1.7, dim, size=3, rng=ours)
    for row in got:
        r = 1.7 * ref.standard_gamma(dim)
        g = ref.standard_normal(dim)
        np.testing.assert_array_equal(row, (r / sequential_norm(g)) * g)
    assert ours.random() == ref.random()


@pytest.mark.parametrize("sampler", [gaussian_noise, laplace_noise, gamma_norm_noise])
def test_seeded_reproducible_and_seeds_differ(sampler):
    a = sampler(1.0, 8, size=5, rng=3)
    np.testing.assert_array_equal(a, sampler(1.0, 8, size=5, rng=3))
    assert not np.array_equal(a, sampler(1.0, 8, size=5, rng=4))
    assert sampler(1.0, 8, rng=3).shape == (8,)
    assert sampler(1.0, 8, size=0, rng=3).shape == (0, 8)


@pytest.mark.parametrize("sampler", [gaussian_noise, laplace_noise, gamma_norm_noise])
def test_zero_scale_gives_zero(sampler):
    np.testing.assert_array_equal(sampler(0.0, 6, size=2, rng=0), np.zeros((2, 6)))


# --- distributions ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_gaussian_ks_and_moments():
    sigma = 1.9
    z = gaussian_noise(sigma, 10, size=DRAWS // 10, rng=11).ravel()
    assert ks_distance(z, stats.norm(scale=sigma).cdf) < dkw(z.size)
    assert ks_distance(z, stats.norm(scale=1.05 * sigma).cdf) > dkw(z.size)  # power: 5% off fails
    # Chebyshev at ALPHA: |mean| <= sd/sqrt(m alpha) is too loose to be useful, so use the
    # Gaussian tail for the mean (exact: the mean of Gaussians is Gaussian) ...
    z_alpha = stats.norm.isf(ALPHA / 2)
    assert abs(z.mean()) < z_alpha * sigma / math.sqrt(z.size)
    # ... and the chi-square quantiles for the sum of squares.
    ss = np.sum(z * z) / sigma**2
    assert stats.chi2(z.size).ppf(ALPHA / 2) < ss < stats.chi2(z.size).isf(ALPHA / 2)


def test_gaussian_tails():
    sigma = 1.0
    z = gaussian_noise(sigma, 100, size=20_000, rng=12).ravel()  # 2e6 draws
    for k in (3.0, 4.0):
        q = 2 * stats.norm.sf(k)
        count = int(np.sum(np.abs(z) > k * sigma))
        lo, hi = stats.binom(z.size, q).ppf([ALPHA / 2, 1 - ALPHA / 2])
        assert lo <= count <= hi, (k, count, lo, hi)


@pytest.mark.slow
def test_laplace_ks_and_tails():
    b = 0.7
    z = laplace_noise(b, 10, size=DRAWS // 10, rng=13).ravel()
    assert ks_distance(z, stats.laplace(scale=b).cdf) < dkw(z.size)
    assert ks_distance(z, stats.laplace(scale=1.05 * b).cdf) > dkw(z.size)
    assert ks_distance(z, stats.norm(scale=b * math.sqrt(2)).cdf) > dkw(z.size)  # same variance
    # |Lap(b)| is Exp(b): tail counts are binomial.
    for k in (5.0, 8.0):
        q = math.exp(-k)
        count = int(np.sum(np.abs(z) > k * b))
        lo, hi = stats.binom(z.size, q).ppf([ALPHA / 2, 1 - ALPHA / 2])
        assert lo <= count <= hi, (k, count, lo, hi)


@pytest.mark.parametrize("dim", [2, 5, pytest.param(50, marks=pytest.mark.slow)])
def test_gamma_norm_radius_is_gamma(dim):
    scale = 0.4
    z = gamma_norm_noise(scale, dim, size=DRAWS // 4, rng=14 + dim)
    r = np.linalg.norm(z, axis=1)
    assert ks_distance(r, stats.gamma(dim, scale=scale).cdf) < dkw(r.size)
    # power: a Gamma(dim + 1) radius (the common off-by-one) and a 2% scale error are both rejected
    assert ks_distance(r, stats.gamma(dim + 1, scale=scale).cdf) > dkw(r.size)
    assert ks_distance(r, stats.gamma(dim, scale=1.02 * scale).cdf) > dkw(r.size)


@pytest.mark.parametrize("dim", [2, 3, 10])
def test_gamma_norm_direction_is_uniform_and_independent_of_radius(dim):
    m = DRAWS // 4
    z = gamma_norm_noise(1.0, dim, size=m, rng=20 + dim)
    r = np.linalg.norm(z, axis=1)
    rng = np.random.default_rng(0)
    for _ in range(3):
        u = rng.standard_normal(dim)
        u /= np.linalg.norm(u)
        t = z @ u / r
        # for u fixed, (1 + <u, Z/|Z|>) / 2 ~ Beta((p-1)/2, (p-1)/2) when Z/|Z| is uniform
        a = (dim - 1) / 2
        assert ks_distance((1 + t) / 2, stats.beta(a, a).cdf) < dkw(m)
    # independence: split by the median radius; both halves must have the same direction law
    small = r < np.median(r)
    t2_small, t2_large = (t[small] ** 2), (t[~small] ** 2)
    d = stats.ks_2samp(t2_small, t2_large).statistic
    # two-sample DKW: sup|F1 - F2| <= t1 + t2 with probability >= 1 - 2 * alpha/2
    assert d < dkw(t2_small.size, ALPHA / 2) + dkw(t2_large.size, ALPHA / 2)


def test_gamma_norm_in_one_dimension_is_laplace():
    z = gamma_norm_noise(0.5, 1, size=DRAWS, rng=30).ravel()
    assert ks_distance(z, stats.laplace(scale=0.5).cdf) < dkw(z.size)


def test_gamma_norm_second_moment():
    dim, scale = 10, 0.3
    z = gamma_norm_noise(scale, dim, size=DRAWS, rng=31)
    sq = np.sum(z * z, axis=1) / scale**2  # = G^2 with G ~ Gamma(dim): E = dim (dim + 1)
    mean, var = dim * (dim + 1), dim * (dim + 1) * (dim + 2) * (dim + 3) - (dim * (dim + 1)) ** 2
    # the mean of m i.i.d. terms; the terms are light-tailed, and at m = 2e5 their standardised
    # mean is normal to far better than the 5.3-sigma band used here (Berry-Esseen)
    band = stats.norm.isf(ALPHA / 2) * math.sqrt(var / z.shape[0])
    assert abs(sq.mean() - mean) < band


# --- bad input -------------------------------------------------------------------------------------

@pytest.mark.parametrize("sampler,name", [(gaussian_noise, "sigma"), (laplace_noise, "scale"),
                                          (gamma_norm_noise, "scale")])
@pytest.mark.parametrize("bad,exc", [(-1.0, ValueError), (float("nan"), ValueError),
                                     (float("inf"), ValueError), (True, TypeError),
                                     ("1", TypeError)])
def test_bad_scale(sampler, name, bad, exc):
    with pytest.raises(exc, match=name):
        sampler(bad, 3, rng=0)


@pytest.mark.parametrize("sampler", [gaussian_noise, laplace_noise, gamma_norm_noise])
def test_bad_shape_and_rng(sampler):
    with pytest.raises(ValueError, match="dim"):
        sampler(1.0, 0, rng=0)
    with pytest.raises(TypeError, match="dim"):
        sampler(1.0, 2.0, rng=0)
    with pytest.raises(ValueError, match="size"):
        sampler(1.0, 3, size=-1, rng=0)
    with pytest.raises(TypeError, match="rng"):
        sampler(1.0, 3, rng="seed")
