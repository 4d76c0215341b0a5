"""Private quantiles (Smith 2011) for norm bounds: the exact density against the privacy claim,
the sampler against the density, accuracy from the mechanism's tail, bad input."""
import math

import numpy as np
import pytest
from scipy import sparse, stats

import dpsolve
from dpsolve.privacy import estimate_label_bound, estimate_row_norm, private_quantile


def _density(values, quantile, epsilon, lower, upper, points, factor=0.5):
    """The mechanism's density at ``points``: ``exp(-factor epsilon |#{v < x} - q n|)``,
    normalised over [lower, upper] (``factor=0.5`` is Smith's; 1.0 spends twice)."""
    v = np.sort(np.clip(values, lower, upper))
    n = v.size
    edges = np.concatenate(([lower], v, [upper]))
    weights = np.exp(-factor * epsilon * np.abs(np.arange(n + 1) - quantile * n))
    mass = np.sum(np.diff(edges) * weights)
    counts = np.searchsorted(v, points, side="left")         # #{v_i < x}
    return weights[counts] / mass


def _max_log_ratio(D, D2, quantile, epsilon, factor=0.5):
    """The largest |log p_D(x) - log p_D'(x)| over [0, 1]: both densities are constant between
    the union of their breakpoints, so the midpoints of that union are every case."""
    cuts = np.unique(np.concatenate(([0.0, 1.0], D, D2)))
    mids = 0.5 * (cuts[:-1] + cuts[1:])
    mids = mids[cuts[1:] > cuts[:-1]]
    a = _density(D, quantile, epsilon, 0.0, 1.0, mids, factor)
    b = _density(D2, quantile, epsilon, 0.0, 1.0, mids, factor)
    return float(np.max(np.abs(np.log(a) - np.log(b))))


def _neighbours(rng, n=9):
    """Replace-one pairs built to move the counts most: the smallest record to the top, the
    largest to the bottom, a middle one across the quantile, and random ones."""
    base = np.sort(rng.uniform(0.0, 1.0, n))
    out = []
    for i, new in ((0, 0.999), (n - 1, 0.001), (n // 2, 0.999), (n // 2, 0.0)):
        other = base.copy()
        other[i] = new
        out.append((base, other))
    for _ in range(20):
        other = base.copy()
        other[rng.integers(n)] = rng.uniform()
        out.append((base, other))
    return out


@pytest.mark.parametrize("quantile", [0.0, 0.5, 0.95, 1.0])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0])
def test_density_ratio_is_at_most_e_epsilon(quantile, epsilon):
    """Exact: the largest log density ratio between neighbours is at most epsilon (up to
    rounding of a few operations). So that the check can fail: a mechanism that spends twice
    (``exp(-epsilon |.|)``) exceeds epsilon on the same pairs at the median (at the extreme
    quantiles the numerator and the normaliser move together, and it happens not to)."""
    rng = np.random.default_rng(0)
    pairs = _neighbours(rng)
    worst = max(_max_log_ratio(D, D2, quantile, epsilon) for D, D2 in pairs)
    assert worst <= epsilon * (1 + 1e-12) + 1e-12
    doubled = max(_max_log_ratio(D, D2, 0.5, epsilon, factor=1.0) for D, D2 in pairs)
    assert doubled > epsilon


@pytest.mark.slow
def test_sampler_follows_the_density():
    """20,000 draws on 9 values: the counts per interval against the density's masses, by a
    chi-square test at level 1e-6 (a fixed seed: it passes or fails the same way each run)."""
    values = np.array([0.05, 0.1, 0.2, 0.3, 0.45, 0.5, 0.7, 0.8, 0.95])
    epsilon, quantile = 1.0, 0.5
    rng = np.random.default_rng(1)
    draws = np.array([private_quantile(values, quantile, epsilon, upper=1.0, rng=rng).value
                      for _ in range(20_000)])
    edges = np.concatenate(([0.0], values, [1.0]))
    observed = np.histogram(draws, bins=edges)[0]
    weights = np.exp(-0.5 * epsilon * np.abs(np.arange(10) - quantile * 9)) * np.diff(edges)
    # the two ends are point masses of weight 1 / (n + 1), scored like the outer gaps here (no
    # value sits at an end: -q n and -(1 - q) n, both -4.5); np.histogram counts 0.0 in the
    # first bin and 1.0 in the last
    ends = np.exp(-0.5 * epsilon * 4.5) / 10
    weights[0] += ends
    weights[-1] += ends
    expected = weights / weights.sum() * draws.size
    assert stats.chisquare(observed, expected).pvalue > 1e-6
    # uniform within an interval: the positions inside the most likely one
    k = int(np.argmax(weights))
    inside = (draws[(draws > edges[k]) & (draws < edges[k + 1])] - edges[k]) / np.diff(edges)[k]
    assert stats.kstest(inside, "uniform").pvalue > 1e-6


def test_accuracy_from_the_mechanism_tail():
    """Equally spaced values (every interval the same length): the rank of the output is off by
    more than t with probability at most ``2 e^{-epsilon (t + 1)/2} e^{epsilon/4} /
    (1 - e^{-epsilon/2})`` (8e-9 at epsilon = 1, t = 40), so 200 draws stay within 40 ranks."""
    n = 10_000
    values = np.linspace(0.0, 1.0, n + 2)[1:-1]
    rng = np.random.default_rng(2)
    for _ in range(200):
        out = private_quantile(values, 0.95, 1.0, upper=1.0, rng=rng)
        rank = np.searchsorted(values, out.value)
        assert abs(rank - 0.95 * n) <= 40
        assert out.epsilon == 1.0 and dpsolve.privacy.epsilon_of(out.dp_event, 0.0) == 1.0


def test_row_norm_and_label_bound():
    X, y = dpsolve.datasets.make_synthetic(5000, 10, rng=0)
    X = X * np.random.default_rng(1).uniform(0.5, 3.0, size=(5000, 1))
    copy = X.copy()
    norms = np.linalg.norm(X, axis=1)
    a = estimate_row_norm(X, 1.0, upper=100.0, rng=3)
    assert np.array_equal(X, copy)
    # within 50 ranks of 4750: the rank error's tail is e^{-epsilon t / 2} (1.4e-11 at t = 50)
    # times the ratio of the gaps between neighbouring norms, which is modest for norms spread
    # smoothly like these (fixed seed: the same outcome every run)
    lo, hi = np.quantile(norms, [0.94, 0.96])
    assert lo <= a.value <= hi
    b = estimate_row_norm(sparse.csr_matrix(X), 1.0, upper=100.0, rng=3)
    assert b.value == pytest.approx(a.value, rel=1e-12)
    assert estimate_row_norm(X, 1.0, upper=100.0, rng=3) == a          # same seed, same bits
    z = np.linspace(-3.0, 3.0, 5001)
    c = estimate_label_bound(z, 1.0, upper=10.0, quantile=0.5, rng=4)
    assert 1.45 <= c.value <= 1.55             # the median of |z| is 1.5


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(epsilon=0.0), ValueError, "epsilon"),
    (dict(quantile=1.5), ValueError, "quantile"),
    (dict(upper=-1.0), ValueError, "upper"),
    (dict(values=np.zeros((2, 2))), ValueError, "1-D"),
    (dict(values=np.array([]), ), ValueError, "non-empty"),
    (dict(values=np.array([1.0, np.nan])), ValueError, "finite"),
    (dict(values=np.array(["a", "b"])), TypeError, "real"),
    (dict(epsilon="1"), TypeError, "epsilon"),
])
def test_bad_input(kwargs, error, match):
    args = dict(values=np.array([0.1, 0.2]), quantile=0.5, epsilon=1.0, upper=1.0)
    args.update(kwargs)
    with pytest.raises(error, match=match):
        private_quantile(args.pop("values"), args.pop("quantile"), args.pop("epsilon"), **args)


def test_bad_matrices():
    with pytest.raises(ValueError, match="2-D"):
        estimate_row_norm(np.ones(3), 1.0, upper=1.0)
    with pytest.raises(ValueError, match="finite"):
        estimate_row_norm(np.array([[1.0, math.inf]]), 1.0, upper=1.0)
    with pytest.raises(ValueError, match="1-D"):
        estimate_label_bound(np.ones((2, 2)), 1.0, upper=1.0)


@pytest.mark.parametrize("kwargs", [
    dict(epsilon=0.0), dict(quantile=-0.1), dict(upper=-1.0), dict(lower=math.nan),
    dict(rng=-1), dict(values=np.zeros((2, 2))), dict(values=np.array([])),
    dict(values=np.array(["a", "b"]))])
def test_public_arguments_are_checked_before_the_charge(kwargs):
    budget = dpsolve.BudgetAccountant(1.0)
    args = dict(values=np.array([0.1, 0.2]), quantile=0.5, epsilon=0.25, upper=1.0,
                accountant=budget)
    args.update(kwargs)
    with pytest.raises((ValueError, TypeError)):
        private_quantile(args.pop("values"), args.pop("quantile"), args.pop("epsilon"), **args)
    assert budget.ledger == ()


def test_non_finite_data_is_refused_before_the_charge():
    """As the docstring says: every check, the data's finiteness included (a message to the data
    holder, as a fit's refusal of a NaN row), comes before the charge: a refusal charges
    nothing."""
    budget = dpsolve.BudgetAccountant(1.0)
    with pytest.raises(ValueError, match="values must be finite"):
        private_quantile(np.array([0.1, np.nan]), 0.5, 0.25, upper=1.0, accountant=budget)
    with pytest.raises(ValueError, match="X must be finite"):
        estimate_row_norm(np.array([[1.0, math.inf]]), 0.25, upper=1.0, accountant=budget)
    with pytest.raises(ValueError, match="X must be finite"):
        estimate_row_norm(sparse.csr_matrix(np.array([[1.0, math.nan]])), 0.25, upper=1.0,
                          accountant=budget)
    with pytest.raises(ValueError, match="y must be finite"):
        estimate_label_bound(np.array([1.0, math.inf]), 0.25, upper=1.0, accountant=budget)
    assert budget.ledger == ()
    private_quantile(np.array([0.1, 0.2]), 0.5, 0.25, upper=1.0, accountant=budget)
    assert [charge.labels for charge in budget.ledger] == [("private_quantile",)]


def test_a_row_norm_that_overflows_is_clipped_like_any_other():
    """Finite rows whose norm overflows to inf are clipped to ``upper`` by the mechanism, not
    refused and not warned about (either would be a signal from the data)."""
    import warnings
    X = np.array([[1.7e308, 1.7e308], [0.5, 0.0], [0.25, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for rows in (X, sparse.csr_matrix(X)):
            out = estimate_row_norm(rows, 1.0, upper=2.0, quantile=1.0, rng=0)
            assert 0.0 <= out.value <= 2.0
