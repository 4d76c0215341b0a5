"""dpsolve.private_selection: the repetition counts' distributions, the selection's
bookkeeping, its privacy checked exactly on small discrete mechanisms (Liu & Talwar's 3
epsilon, Papernot & Steinke's Renyi bound through dp_accounting), the noisy accuracy, and the
grid search over estimators in one budget."""
import math
import warnings

import dp_accounting
import numpy as np
import pytest
from dp_accounting import dp_event
from scipy import special, stats

import dpsolve
from dpsolve.datasets import make_synthetic
from dpsolve.privacy import BudgetAccountant, PureDpEvent, epsilon_of
from dpsolve.private_selection import (draw_repetitions, noisy_accuracy, repetition_event,
                                       select)


@pytest.mark.parametrize("method, mean, shape", [
    ("liu_talwar", 5.0, 1.0), ("negative_binomial", 5.0, 0.5),
    ("negative_binomial", 8.0, 0.0), ("negative_binomial", 4.0, 2.5), ("poisson", 3.0, 1.0)])
def test_repetition_counts_have_the_recorded_mean(method, mean, shape):
    event = repetition_event(PureDpEvent(1.0), method, mean, shape)
    assert event.mean == pytest.approx(mean, rel=1e-6)
    rng = np.random.default_rng(0)
    draws = np.array([draw_repetitions(event, rng) for _ in range(40_000)])
    assert draws.min() >= (0 if method == "poisson" else 1)
    # the sample mean within 5 standard errors (a false alarm has probability < 1e-6 by the CLT)
    se = draws.std() / math.sqrt(len(draws))
    assert abs(draws.mean() - event.mean) < 5 * se


def _best_of_k_distribution(p, probabilities_of_k):
    """Exact distribution of the largest of K i.i.d. draws from p (outputs ordered by score),
    K with the given probabilities (index k = k draws); K = 0 gives a separate 'no output'."""
    cdf = np.minimum(np.cumsum(p), 1.0)
    below = np.concatenate(([0.0], cdf[:-1]))
    k = np.arange(len(probabilities_of_k))
    w = np.where(k >= 1, probabilities_of_k, 0.0)
    # P(best = s) = E[F(s)^K - F(s-)^K]
    return (cdf[:, None] ** k - below[:, None] ** k) @ w, probabilities_of_k[0]


def _geometric(gamma, kmax):
    k = np.arange(kmax)
    w = np.where(k >= 1, gamma * (1 - gamma) ** np.maximum(k - 1, 0), 0.0)
    return w


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("gamma", [1.0, 0.5, 0.1, 0.02])
def test_liu_talwar_best_run_is_three_epsilon_dp(eps, gamma):
    # pairs of run distributions over 4 ordered scores with every log-ratio exactly +-eps
    # (the extreme points of eps-DP): q = p e^eps on a set S of mass 1/(1 + e^eps) under p,
    # q = p e^-eps off it. The exact best-of-K log-ratio never exceeds 3 eps (Thm 3.4), and
    # exceeds eps (selection costs more than a run) once K is random
    rng = np.random.default_rng(1)
    w = _geometric(gamma, 4000)
    worst = 0.0
    for _ in range(200):
        inside = rng.permutation(4) < rng.integers(1, 4)
        p = np.empty(4)
        p[inside] = rng.dirichlet(np.ones(inside.sum())) / (1 + math.exp(eps))
        p[~inside] = rng.dirichlet(np.ones((~inside).sum())) * math.exp(eps) / (1 + math.exp(eps))
        q = np.where(inside, p * math.exp(eps), p * math.exp(-eps))
        assert q.sum() == pytest.approx(1.0)
        a, _ = _best_of_k_distribution(p, w)
        b, _ = _best_of_k_distribution(q, w)
        worst = max(worst, float(np.max(np.abs(np.log(a / b)))))
    if gamma < 1.0:
        assert worst > 1.2 * eps
    assert worst <= 3 * eps + 1e-9
    event = repetition_event(PureDpEvent(eps), "liu_talwar", 1 / gamma)
    assert epsilon_of(event, 0.0, "basic") == pytest.approx(3 * eps)


def _renyi(a, b, alpha):
    return float(special.logsumexp(alpha * np.log(a) + (1 - alpha) * np.log(b)) / (alpha - 1))


@pytest.mark.parametrize("shape", [0.5, 1.0, math.inf])
def test_papernot_steinke_renyi_bound_holds_exactly(shape):
    # one run: binary randomized response at eps (dominates every eps-DP run); K truncated
    # negative binomial or Poisson, mean 6; the exact Renyi divergences of the best-of-K
    # distributions are below dp_accounting's bound for the event dpsolve builds
    eps, mean = 1.0, 6.0
    event = repetition_event(PureDpEvent(eps), "negative_binomial" if shape < math.inf
                             else "poisson", mean, shape)
    from dpsolve.privacy.accounting import _rdp_accountant
    acc = _rdp_accountant(event, "replace_one")
    orders, bound = np.asarray(acc._orders), np.asarray(acc._rdp)
    p = np.array([1.0, math.exp(eps)]) / (1 + math.exp(eps))
    q = p[::-1]
    kmax = 400
    k = np.arange(kmax)
    if shape == math.inf:
        w = stats.poisson.pmf(k, event.mean)
    else:
        from dp_accounting.rdp import rdp_privacy_accountant as r
        gamma = r._gamma_truncated_negative_binomial(shape, event.mean)
        if shape == 1.0:
            w = np.where(k >= 1, gamma * (1 - gamma) ** np.maximum(k - 1, 0), 0.0)
        else:
            w = np.where(k >= 1, stats.nbinom.pmf(k, shape, gamma), 0.0)
            w /= w.sum()
    a, none_a = _best_of_k_distribution(p, w)
    b, none_b = _best_of_k_distribution(q, w)
    a, b = np.append(a, none_a), np.append(b, none_b)
    keep = (a > 0) & (b > 0)
    for alpha, r_bound in zip(orders, bound):
        if 1.5 <= alpha <= 64:
            assert _renyi(a[keep], b[keep], alpha) <= r_bound + 1e-9, alpha


def test_select_releases_the_best_of_the_runs_it_drew():
    calls = []

    def run(candidate, rng):
        calls.append(candidate)
        return -abs(candidate - 3.2), f"model {candidate}"
    result = select(run, [0, 1, 2, 3, 4, 5], PureDpEvent(0.5), mean=10, rng=7)
    best = max(calls, key=lambda c: -abs(c - 3.2))
    assert result.candidate == best and result.output == f"model {best}"
    # replaying the public randomness gives K and the candidates drawn
    rng = np.random.default_rng(7)
    k = draw_repetitions(result.dp_event, rng)
    assert len(calls) == k
    assert result.epsilon == pytest.approx(1.5) and result.accountant == "basic"


def test_select_refuses_before_running():
    def run(candidate, rng):
        raise AssertionError("ran")
    budget = BudgetAccountant(1.0)
    with pytest.raises(dpsolve.privacy.BudgetExceededError, match="private selection"):
        select(run, [1, 2], PureDpEvent(0.5), rng=0, accountant=budget)
    with pytest.raises(ValueError, match="pass delta > 0"):
        select(run, [1, 2], dp_accounting.GaussianDpEvent(3.0), rng=0)
    with pytest.raises(ValueError, match="at least one candidate"):
        select(run, [], PureDpEvent(0.5))
    with pytest.raises(ValueError, match="mean"):
        select(run, [1], PureDpEvent(0.5), mean=0.5)


def test_gaussian_runs_are_accounted_by_rdp():
    event = repetition_event(dp_accounting.GaussianDpEvent(5.0), "negative_binomial", 10, 0.5)
    assert dpsolve.privacy.tightest_accountant(event) == "rdp"
    eps = epsilon_of(event, 1e-6)
    one = epsilon_of(dp_accounting.GaussianDpEvent(5.0), 1e-6, "rdp")
    assert one < eps < 10 * one
    with pytest.raises(ValueError, match="RepeatAndSelectDpEvent"):
        epsilon_of(event, 1e-6, "pld")


class _Constant:
    def __init__(self, labels):
        self.labels = labels

    def predict(self, X):
        return self.labels


def test_noisy_accuracy_is_the_count_plus_laplace():
    y = np.array([0, 1, 1, 0, 1] * 200)
    pred = y.copy()
    pred[:250] = 1 - pred[:250]
    rng = np.random.default_rng(0)
    draws = np.array([noisy_accuracy(_Constant(pred), np.zeros((len(y), 1)), y, 0.5, rng=rng)
                      for _ in range(4000)])
    # (750 + Laplace(2)) / 1000: mean 0.75, sd 2 sqrt(2) / 1000; 5 standard errors
    assert abs(draws.mean() - 0.75) < 5 * 2 * math.sqrt(2) / 1000 / math.sqrt(len(draws))
    assert stats.kstest(draws * 1000 - 750, stats.laplace(scale=2.0).cdf).pvalue > 1e-4


def test_grid_search_in_one_budget():
    pytest.importorskip("sklearn", minversion="1.6")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer

    from dpsolve.estimators import DPLogisticRegression
    from dpsolve.private_selection import PrivateGridSearch
    X, y = make_synthetic(3000, 5, rng=0)
    budget = BudgetAccountant(5.0)
    model = make_pipeline(Normalizer(), DPLogisticRegression(epsilon=0.5, row_norm=1.0,
                                                             classes=[-1, 1]))
    search = PrivateGridSearch(model, {"dplogisticregression__reg": [1e-3, 1e-2, 1e-1]},
                               score_epsilon=0.1, accountant=budget, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpsolve.PrivacyWarning)
        search.fit(X, y)
    assert search.epsilon_ == pytest.approx(3 * 0.6)
    assert budget.spent()[0] == pytest.approx(1.8)
    assert search.best_params_["dplogisticregression__reg"] in (1e-3, 1e-2, 1e-1)
    assert search.best_estimator_.predict(X).shape == (3000,)
    again = PrivateGridSearch(model, {"dplogisticregression__reg": [1e-3, 1e-2, 1e-1]},
                              score_epsilon=0.1, random_state=0).fit(X, y)
    assert again.best_score_ == search.best_score_
    assert isinstance(search.dp_event_, dp_event.RepeatAndSelectDpEvent)
    # the estimator's own budget is the one charged, once
    own = BudgetAccountant(5.0)
    PrivateGridSearch(make_pipeline(Normalizer(), DPLogisticRegression(
        epsilon=0.5, row_norm=1.0, classes=[-1, 1], accountant=own)),
        {"dplogisticregression__reg": [1e-3, 1e-2]}, random_state=1).fit(X, y)
    assert len(own.ledger) == 1 and own.spent()[0] == pytest.approx(1.8)
    with pytest.raises(ValueError, match="different budgets"):
        PrivateGridSearch(make_pipeline(Normalizer(), DPLogisticRegression(
            accountant=own)), {"dplogisticregression__reg": [1e-3]},
            accountant=budget).fit(X, y)


def test_search_metadata_is_the_same_on_neighbouring_datasets():
    pytest.importorskip("sklearn", minversion="1.6")
    from dpsolve.estimators import DPLogisticRegression
    from dpsolve.private_selection import PrivateGridSearch
    X, y = make_synthetic(800, 4, rng=5)
    X2, y2 = X.copy(), y.copy()
    X2[3], y2[3] = 40.0, -y[3]                     # clipped to the bound, label flipped
    searches = []
    for data in ((X, y), (X2, y2)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            searches.append(PrivateGridSearch(
                DPLogisticRegression(epsilon=0.5, row_norm=1.0, classes=[-1, 1]),
                {"reg": [1e-3, 1e-2, 1e-1]}, random_state=0).fit(*data))
    a, b = searches
    assert repr(a.dp_event_) == repr(b.dp_event_)
    assert (a.epsilon_, a.delta_) == (b.epsilon_, b.delta_)
    assert a.selection_.expected_runs == b.selection_.expected_runs
    assert not hasattr(a.selection_, "runs")       # K itself is never released


def test_a_nan_score_never_wins():
    # every comparison with NaN is False: a NaN that came first would have won and been released
    scores = iter([math.nan, 0.2, math.nan, 0.1] * 50)
    selection = select(lambda c, rng: (next(scores), c), ["a", "b"], PureDpEvent(0.1),
                       mean=30.0, rng=4)
    assert selection.score == 0.2
    only_nan = select(lambda c, rng: (math.nan, c), ["a"], PureDpEvent(0.1), rng=0)
    assert only_nan.score == -math.inf


@pytest.mark.parametrize("shape", [1e-8, 1e-4, 0.3])
def test_truncated_negative_binomial_draws_in_bounded_work(shape):
    # rejection of K = 0 needed 1 / (1 - gamma^shape) tries (about 1e7 at shape 1e-8); the
    # inversion draws in K steps. Its draws must still have the recorded mean (5 standard
    # errors: a false alarm has probability < 1e-6)
    event = repetition_event(PureDpEvent(1.0), "negative_binomial", 4.0, shape)
    rng = np.random.default_rng(3)
    draws = np.array([draw_repetitions(event, rng) for _ in range(20_000)])
    assert draws.min() >= 1
    se = draws.std() / math.sqrt(len(draws))
    assert abs(draws.mean() - event.mean) < 5 * se


def test_truncated_negative_binomial_matches_its_distribution():
    # chi-square against the exact probabilities (a false alarm has probability 1e-4)
    from dpsolve.private_selection import _truncated_negative_binomial
    shape, gamma = 0.5, 0.3
    rng = np.random.default_rng(11)
    draws = np.array([_truncated_negative_binomial(shape, gamma, rng) for _ in range(30_000)])
    k = np.arange(1, 12)
    pmf = stats.nbinom.pmf(k, shape, gamma) / (1 - stats.nbinom.pmf(0, shape, gamma))
    observed = np.array([np.sum(draws == v) for v in k] + [np.sum(draws > k[-1])])
    expected = len(draws) * np.append(pmf, 1 - pmf.sum())
    statistic = float(np.sum((observed - expected) ** 2 / expected))
    assert statistic < stats.chi2.ppf(1 - 1e-4, len(observed) - 1)


def test_mismatched_records_are_refused_before_the_budget_is_charged():
    pytest.importorskip("sklearn", minversion="1.6")
    from dpsolve.estimators import DPLogisticRegression
    from dpsolve.private_selection import PrivateGridSearch
    X, y = make_synthetic(200, 3, rng=1)
    budget = BudgetAccountant(10.0)
    model = DPLogisticRegression(row_norm=1.0, classes=[-1, 1], random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="X and y"):
        noisy_accuracy(model, X, y[:1], 1.0, accountant=budget)
    with pytest.raises(ValueError, match="X and y"):
        PrivateGridSearch(DPLogisticRegression(row_norm=1.0, classes=[-1, 1]),
                          {"reg": [0.1]}, accountant=budget).fit(X, y[:-1])
    assert budget.ledger == ()


def test_the_selected_model_reports_the_searchs_privacy():
    # the model is released by the selection, not by one fit: its own epsilon_ is the search's
    pytest.importorskip("sklearn", minversion="1.6")
    from dpsolve.estimators import DPLogisticRegression
    from dpsolve.private_selection import PrivateGridSearch
    from dpsolve.privacy import estimate_row_norm
    X, y = make_synthetic(600, 3, rng=2)
    budget = BudgetAccountant(10.0)
    bound = estimate_row_norm(X, 0.2, upper=4.0, rng=0)
    search = PrivateGridSearch(
        DPLogisticRegression(epsilon=0.5, row_norm=bound, classes=[-1, 1]),
        {"reg": [0.01, 0.1]}, score_epsilon=0.1, accountant=budget, random_state=0).fit(X, y)
    # Liu-Talwar's 3 (0.5 + 0.1), plus the estimate once
    assert search.epsilon_ == pytest.approx(3 * 0.6 + 0.2)
    assert budget.spent()[0] == pytest.approx(3 * 0.6 + 0.2)
    best = search.best_estimator_
    assert best.epsilon_ == search.epsilon_ and best.dp_event_ == search.dp_event_
    assert best.privacy_report_.holds and best.fit_.dp_event == search.dp_event_
    assert epsilon_of(search.dp_event_, 0.0, "basic") == pytest.approx(search.epsilon_)
