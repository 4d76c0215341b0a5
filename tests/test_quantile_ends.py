"""The private quantile with values tied at the ends of its interval (dpsolve.privacy.quantile).

Clipping to ``[lower, upper]`` piles every value beyond an end onto it. The mechanism's output
space has the two ends as point masses of weight ``w = (upper - lower) / (n + 1)``, scored by
how far each is from being a q-quantile of the clipped values (ties counted):
``u(x) = -max(#{v < x} - q n, q n - #{v <= x}, 0)``. Here: the estimate with every value at or
beyond an end is that end at large epsilon; at other tie patterns it lands on a best-scoring
candidate; the score has sensitivity 1 and the density ratio is at most e^epsilon between
replace-one neighbours, by brute force over small datasets; the sampler follows the density.
"""
import itertools
import math

import numpy as np
import pytest
from scipy import sparse, stats

from dpsolve.privacy import estimate_row_norm, private_quantile
from dpsolve.privacy import quantile as quantile_module


def _log_weights(*args):
    """The module's candidates and their log weights (looked up at call time)."""
    return quantile_module._log_weights(*args)


# -- ties at the ends ---------------------------------------------------------------------------
def test_rows_all_beyond_upper_give_upper_at_large_epsilon():
    """Every row norm 3 and upper = 2: the clipped norms are all 2, their 0.95-quantile is 2.
    Without the point mass at upper the estimate was uniform on [0, 2), below every norm."""
    rng = np.random.default_rng(0)
    X = np.zeros((2000, 10))
    X[np.arange(2000), rng.integers(0, 10, 2000)] = 3.0
    values = [estimate_row_norm(X, 1e6, upper=2.0, rng=s).value for s in range(8)]
    assert values == [2.0] * 8
    # at a modest epsilon too: upper with probability >= 1 - (n + 1) exp(-eps q n / 2)
    assert estimate_row_norm(X, 0.05, upper=2.0, rng=1).value == 2.0


@pytest.mark.parametrize("quantile", [0.5, 0.95, 1.0])
def test_values_at_or_above_upper_give_upper(quantile):
    values = np.array([2.0, 5.0, 2.0, 1e9, 2.5])
    for seed in range(5):
        out = private_quantile(values, quantile, 1e6, upper=2.0, lower=-1.0, rng=seed)
        assert out.value == 2.0


@pytest.mark.parametrize("quantile", [0.0, 0.05, 0.5])
def test_values_at_or_below_lower_give_lower(quantile):
    values = np.array([-3.0, 1.0, 1.0, -1e9, 0.5])
    for seed in range(5):
        out = private_quantile(values, quantile, 1e6, upper=4.0, lower=1.0, rng=seed)
        assert out.value == 1.0


def test_a_tie_at_upper_short_of_the_quantile_leaves_the_estimate_inside():
    """5 of 100 values beyond upper, q = 0.9: the quantile lies among the others (rank 90 of
    the 95 below upper), not at upper."""
    values = np.concatenate([np.linspace(0.01, 0.9, 95), np.full(5, 7.0)])
    out = private_quantile(values, 0.9, 1e6, upper=1.0, rng=0)
    assert values[89] <= out.value <= values[90]


# -- at other tie patterns: a best-scoring candidate at large epsilon ---------------------------
GRID = np.array([-0.5, 0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.5])      # beyond both ends of [0, 1]


def _candidate_scores(values, quantile, lower=0.0, upper=1.0):
    """Independently of the module: the score of every candidate of positive base measure,
    the gaps between the sorted clipped values and the two ends."""
    v = np.sort(np.clip(values, lower, upper))
    n = v.size
    qn = quantile * n
    edges = np.concatenate(([lower], v, [upper]))
    gaps = [(edges[k], edges[k + 1], -abs(k - qn)) for k in range(n + 1)
            if edges[k + 1] > edges[k]]
    a, b = int(np.sum(v <= lower)), int(np.sum(v >= upper))
    return gaps, -max(qn - a, 0.0), -max(n - b - qn, 0.0)


def _score_of(x, values, quantile, lower=0.0, upper=1.0):
    """u(x) of the docstring, ties counted."""
    v = np.clip(values, lower, upper)
    qn = quantile * v.size
    return -max(np.sum(v < x) - qn, qn - np.sum(v <= x), 0.0)


@pytest.mark.parametrize("seed", range(40))
def test_large_epsilon_lands_on_a_best_scoring_candidate(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 12))
    values = rng.choice(GRID, size=n, p=rng.dirichlet(np.ones(GRID.size)))
    quantile = int(rng.integers(0, 21)) / 20
    gaps, at_lower, at_upper = _candidate_scores(values, quantile)
    best = max([s for _, _, s in gaps] + [at_lower, at_upper])
    out = private_quantile(values, quantile, 1e6, upper=1.0, rng=seed).value
    assert 0.0 <= out <= 1.0
    if out in (0.0, 1.0):
        score = at_lower if out == 0.0 else at_upper
    else:
        score = _score_of(out, values, quantile)
    assert score == pytest.approx(best, abs=1e-9), (values, quantile, out)


# -- privacy: the score's sensitivity and the density ratio, by brute force ---------------------
def _log_density(log_weights, values, quantile, epsilon, points):
    """From the module's candidates: the log density against the base measure mu at
    ``points`` (floats strictly inside (0, 1), or the ends 0.0 and 1.0 themselves, the point
    masses), and the score u = (log weight - log mass) / (epsilon / 2) there."""
    edges, lengths, gaps, ends = log_weights(values, quantile, epsilon, 1.0, 0.0)
    n = values.size
    log_w = math.log(1.0 / (n + 1))
    everything = np.concatenate([gaps, ends])
    top = np.max(everything)
    log_norm = top + math.log(np.sum(np.exp(everything - top)))
    out, scores = [], []
    for x in points:
        if x == 0.0 or x == 1.0:
            log_weight, log_mass = ends[0 if x == 0.0 else 1], log_w
        else:
            k = int(np.searchsorted(edges, x, side="left")) - 1   # edges[k] < x <= edges[k+1]
            assert edges[k] < x < edges[k + 1]                     # x is no breakpoint
            log_weight, log_mass = gaps[k], math.log(lengths[k])
        out.append(log_weight - log_mass - log_norm)
        scores.append((log_weight - log_mass) / (0.5 * epsilon))
    return np.array(out), np.array(scores)


def _doubled_upper_ties(values, quantile, epsilon, upper, lower):
    """A broken mechanism, to show the brute force can fail: the values at upper counted twice
    in the score of the end upper (sensitivity 2 there)."""
    edges, lengths, gaps, ends = _log_weights(values, quantile, epsilon, upper, lower)
    n = values.size
    b = int(np.sum(np.clip(values, lower, upper) >= upper))
    log_w = math.log(upper / (n + 1) - lower / (n + 1))
    ends = ends.copy()
    ends[1] = log_w - 0.5 * epsilon * max(n - 2 * b - quantile * n, 0.0)
    return edges, lengths, gaps, ends


def _worst_over_neighbours(log_weights, n, quantile, epsilon):
    """Over every dataset of n values from GRID (ties at both ends and inside, values beyond
    both ends) and every replace-one neighbour: the largest score difference and the largest
    log density ratio, at the ends and at every midpoint of the union of both breakpoints."""
    worst_score = worst_ratio = 0.0
    inner = np.unique(np.clip(GRID, 0.0, 1.0))
    points = np.concatenate([[0.0, 1.0], 0.5 * (inner[:-1] + inner[1:])])
    for D in itertools.combinations_with_replacement(GRID, n):
        D = np.array(D)
        base = _log_density(log_weights, D, quantile, epsilon, points)
        for i, new in itertools.product(range(n), GRID):
            if new == D[i]:
                continue
            D2 = D.copy()
            D2[i] = new
            other = _log_density(log_weights, D2, quantile, epsilon, points)
            worst_ratio = max(worst_ratio, float(np.max(np.abs(base[0] - other[0]))))
            worst_score = max(worst_score, float(np.max(np.abs(base[1] - other[1]))))
    return worst_score, worst_ratio


# n = 3 and 4: brute force over every neighbour at every point, up to a second each: slow tier
@pytest.mark.parametrize("n", [1, 2, pytest.param(3, marks=pytest.mark.slow),
                               pytest.param(4, marks=pytest.mark.slow)])
@pytest.mark.parametrize("quantile", [0.0, 0.3, 0.5, 0.95, 1.0])
def test_score_sensitivity_is_one_and_the_density_ratio_at_most_e_epsilon(n, quantile):
    """The breakpoints of every density here are GRID's points clipped to [0, 1], so the
    midpoints between them and the two ends are every case."""
    epsilon = 1.0
    worst_score, worst_ratio = _worst_over_neighbours(_log_weights, n, quantile, epsilon)
    assert worst_score <= 1.0 + 1e-9
    if n >= 2:          # attained (with one value, |k - q n| moves by |1 - 2 q n| at most)
        assert worst_score >= 1.0 - 1e-9
    assert worst_ratio <= epsilon * (1.0 + 1e-9)


def test_the_brute_force_catches_a_score_of_sensitivity_two():
    worst_score, worst_ratio = _worst_over_neighbours(_doubled_upper_ties, 3, 0.3, 1.0)
    assert worst_score >= 2.0 - 1e-9
    assert worst_ratio > 1.0


def test_the_modules_weights_are_the_docstrings():
    values = np.array([-1.0, 0.2, 0.2, 0.7, 1.0, 3.0])
    q, eps, n = 0.6, 2.0, 6
    edges, lengths, gaps, ends = _log_weights(values, q, eps, 1.0, 0.0)
    np.testing.assert_array_equal(edges, [0.0, 0.0, 0.2, 0.2, 0.7, 1.0, 1.0, 1.0])
    with np.errstate(divide="ignore"):
        want = np.log(lengths) - 0.5 * eps * np.abs(np.arange(n + 1) - q * n)
    np.testing.assert_allclose(gaps, want, rtol=1e-15)
    w = 1.0 / (n + 1)
    # a = 1 value at or below lower, b = 2 at or above upper
    np.testing.assert_allclose(ends, [math.log(w) - 0.5 * eps * max(q * n - 1, 0.0),
                                      math.log(w) - 0.5 * eps * max(n - 2 - q * n, 0.0)],
                               rtol=1e-15)


# -- the sampler follows the density, point masses included -------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("values, quantile", [
    (np.array([0.05, 0.1, 0.2, 0.3, 0.45, 0.5, 0.7, 0.8, 0.95]), 0.5),
    (np.array([-0.2, 0.1, 0.3, 0.3, 0.6, 1.0, 1.4, 2.0]), 0.8),
], ids=["spread", "ties at both ends"])
def test_sampler_follows_the_density_with_the_ends(values, quantile):
    """20,000 draws: the counts at each end and in each gap of positive length against the
    candidates' masses (chi-square, level 1e-6, fixed seed)."""
    epsilon = 1.0
    gaps, at_lower, at_upper = _candidate_scores(values, quantile)
    n = values.size
    w = 1.0 / (n + 1)
    masses = np.array([w * math.exp(0.5 * epsilon * at_lower)]
                      + [(b - a) * math.exp(0.5 * epsilon * s) for a, b, s in gaps]
                      + [w * math.exp(0.5 * epsilon * at_upper)])
    rng = np.random.default_rng(5)
    draws = np.array([private_quantile(values, quantile, epsilon, upper=1.0, rng=rng).value
                      for _ in range(20_000)])
    observed = [np.sum(draws == 0.0)]
    observed += [np.sum((draws > a) & (draws < b)) for a, b, _ in gaps]
    observed += [np.sum(draws == 1.0)]
    assert sum(observed) == draws.size            # nothing on an inner breakpoint
    expected = masses / masses.sum() * draws.size
    assert stats.chisquare(observed, expected).pvalue > 1e-6


# -- sparse rows with duplicate entries ---------------------------------------------------------
def test_row_norms_of_a_sparse_x_with_duplicate_entries_are_those_of_the_sums():
    """A CSR row holding one entry as two halves has the norm of their sum, as dense: the
    duplicates' squares were added instead (norm a / sqrt 2 for a)."""
    n = 400
    a = np.linspace(1.0, 3.0, n)
    X = sparse.csr_matrix((np.repeat(a / 2, 2), np.zeros(2 * n, int),
                           np.arange(0, 2 * n + 1, 2)), shape=(n, 2))
    before = X.data.copy()
    got = estimate_row_norm(X, 1e3, upper=10.0, quantile=0.5, rng=0).value
    dense = estimate_row_norm(X.toarray(), 1e3, upper=10.0, quantile=0.5, rng=0).value
    assert got == dense
    assert 1.95 <= got <= 2.05
    assert np.array_equal(X.data, before) and X.nnz == 2 * n       # the caller's X untouched
    coo32 = sparse.coo_array(X).astype(np.float32)
    assert (estimate_row_norm(coo32, 1e3, upper=10.0, quantile=0.5, rng=0).value
            == estimate_row_norm(coo32.astype(np.float64), 1e3, upper=10.0, quantile=0.5,
                                 rng=0).value)
