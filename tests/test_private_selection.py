"""dpsolve.private_selection: the repetition counts' distributions, the selection's
bookkeeping, its privacy checked exactly on small discrete mechanisms (Liu & Talwar's 3
epsilon, Papernot & Steinke's Renyi bound through dp_accounting), the noisy accuracy, and the
grid search over estimators in one budget."""
import functools
import math
import warnings

import dp_accounting
import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as _rdp
from scipy import special, stats

import dpsolve
from dpsolve.datasets import make_synthetic
from dpsolve.privacy import BudgetAccountant, PureDpEvent, epsilon_of
from dpsolve.private_selection import (AccuracyScorer, draw_repetitions, repetition_event,
                                       select)
from dpsolve.private_selection import repetitions


@pytest.fixture
def gamma_solved_once(monkeypatch):
    """Each draw_repetitions call solves for the distribution's gamma again (a bisection,
    nearly all the time of a draw): tests drawing thousands of times from one distribution
    solve it once. The draws are the same."""
    solve = repetitions.truncated_negative_binomial_gamma
    monkeypatch.setattr(repetitions, "truncated_negative_binomial_gamma", functools.cache(solve))


@pytest.mark.parametrize("method, mean, shape", [
    ("liu_talwar", 5.0, 1.0), ("negative_binomial", 5.0, 0.5),
    ("negative_binomial", 8.0, 0.0), ("negative_binomial", 4.0, 2.5), ("poisson", 3.0, 1.0)])
def test_repetition_counts_have_the_recorded_mean(method, mean, shape, gamma_solved_once):
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


def _best_of_geometric_k(p, gamma):
    """:func:`_best_of_k_distribution` for K geometric on {1, 2, ...}, ``P(K = k) = gamma
    (1 - gamma)^(k - 1)``, in closed form: ``E[F^K] = gamma F / (1 - (1 - gamma) F)`` (its
    generating function), so no K is left out."""
    cdf = np.minimum(np.cumsum(p), 1.0)
    below = np.concatenate(([0.0], cdf[:-1]))

    def generating(F):
        return gamma * F / (1 - (1 - gamma) * F)
    return generating(cdf) - generating(below)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("gamma", [1.0, 0.5, 0.1, 0.02])
def test_liu_talwar_best_run_is_three_epsilon_dp(eps, gamma):
    # pairs of run distributions over 4 ordered scores with every log-ratio exactly +-eps
    # (the extreme points of eps-DP): q = p e^eps on a set S of mass 1/(1 + e^eps) under p,
    # q = p e^-eps off it. The exact best-of-K log-ratio never exceeds 3 eps (Thm 3.4), and
    # exceeds eps (selection costs more than a run) once K is random
    rng = np.random.default_rng(1)
    worst = 0.0
    for _ in range(200):
        inside = rng.permutation(4) < rng.integers(1, 4)
        p = np.empty(4)
        p[inside] = rng.dirichlet(np.ones(inside.sum())) / (1 + math.exp(eps))
        p[~inside] = rng.dirichlet(np.ones((~inside).sum())) * math.exp(eps) / (1 + math.exp(eps))
        q = np.where(inside, p * math.exp(eps), p * math.exp(-eps))
        assert q.sum() == pytest.approx(1.0)
        a, b = _best_of_geometric_k(p, gamma), _best_of_geometric_k(q, gamma)
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
        gamma = repetitions.truncated_negative_binomial_gamma(shape, event.mean)
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


def _constant(labels):
    """A fitted classifier predicting ``labels`` whatever the rows."""
    from sklearn.base import BaseEstimator, ClassifierMixin

    class Constant(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            return self

        def predict(self, X):
            return self.labels_

    model = Constant()
    model.labels_ = labels
    return model


@pytest.mark.slow
def test_noisy_accuracy_is_the_count_plus_laplace():
    y = np.array([0, 1, 1, 0, 1] * 200)
    pred = y.copy()
    pred[:250] = 1 - pred[:250]
    rng = np.random.default_rng(0)
    draws = np.array([AccuracyScorer(0.5).score(_constant(pred), np.zeros((len(y), 1)), y, rng=rng)
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
def test_truncated_negative_binomial_draws_in_bounded_work(shape, gamma_solved_once):
    # rejection of K = 0 needed 1 / (1 - gamma^shape) tries (about 1e7 at shape 1e-8); the
    # inversion draws in K steps. Its draws must still have the recorded mean (5 standard
    # errors: a false alarm has probability < 1e-6)
    event = repetition_event(PureDpEvent(1.0), "negative_binomial", 4.0, shape)
    rng = np.random.default_rng(3)
    draws = np.array([draw_repetitions(event, rng) for _ in range(20_000)])
    assert draws.min() >= 1
    se = draws.std() / math.sqrt(len(draws))
    assert abs(draws.mean() - event.mean) < 5 * se


def test_the_pmf_is_the_negative_binomial_conditioned_on_k_at_least_1():
    # an independent oracle: scipy's negative binomial (successes gamma, eta of them) given
    # K >= 1, and its logarithmic distribution at eta = 0; the pmf sums to 1 with the mean
    k = np.arange(0, 4000)
    for shape, gamma in ((0.5, 0.3), (2.5, 0.05), (1e-4, 0.2), (1.0, 0.4), (0.0, 0.1)):
        pmf = repetitions.truncated_negative_binomial_pmf(k, shape, gamma)
        if shape == 0.0:
            oracle = np.where(k >= 1, stats.logser.pmf(np.maximum(k, 1), 1 - gamma), 0.0)
        else:
            oracle = np.where(k >= 1, stats.nbinom.pmf(k, shape, gamma), 0.0)
            oracle /= 1.0 - stats.nbinom.pmf(0, shape, gamma)
        # computed by logarithms: the relative rounding grows with |log P| (up to about 570
        # here, so a few 1e-13); below 1e-250 both underflow towards subnormals
        assert np.allclose(pmf, oracle, rtol=1e-9, atol=1e-250)
        assert pmf.sum() == pytest.approx(1.0, rel=1e-12)
        assert np.sum(k * pmf) == pytest.approx(
            repetitions.truncated_negative_binomial_mean(gamma, shape), rel=1e-10)


@pytest.mark.parametrize("shape, mean", [
    (1e-4, 6.0), *(pytest.param(shape, mean, marks=pytest.mark.slow)
                   for shape, mean in ((0.5, 4.0), (2.5, 3.0), (0.0, 8.0), (1.0, 5.0)))])
def test_the_drawn_repetitions_follow_the_pmf(shape, mean, gamma_solved_once):
    # two exact finite-sample tests, each at alpha / 2 (a correct sampler fails with
    # probability at most alpha = 1e-6 per case; no large-sample approximation):
    # - the distribution function: sup_k |F_n(k) - F(k)| <= sqrt(ln(2 / a) / (2 n)) with
    #   probability at least 1 - a (Dvoretzky-Kiefer-Wolfowitz with Massart 1990's constant);
    # - cell by cell: the count of draws equal to k is Binomial(n, P(K = k)), and the count
    #   beyond the last cell too; each two-sided exact p-value against a / cells (Bonferroni).
    # Drawn with gamma 5% off, the first rejects every inversion case here (measured)
    event = repetition_event(PureDpEvent(1.0), "negative_binomial", mean, shape)
    gamma = repetitions.truncated_negative_binomial_gamma(shape, event.mean)
    rng = np.random.default_rng(12)
    n, alpha = 100_000, 1e-6
    draws = np.sort([draw_repetitions(event, rng) for _ in range(n)])
    cells = 30
    k = np.arange(1, max(cells, draws[-1]) + 1)
    pmf = repetitions.truncated_negative_binomial_pmf(k, shape, gamma)
    empirical = np.searchsorted(draws, k, side="right") / n
    band = math.sqrt(math.log(2.0 / (alpha / 2.0)) / (2.0 * n))
    assert np.max(np.abs(empirical - np.cumsum(pmf))) <= band
    observed = np.append(np.bincount(draws, minlength=cells + 1)[1:cells + 1],
                         np.count_nonzero(draws > cells))
    p = np.append(pmf[:cells], max(1.0 - pmf[:cells].sum(), 0.0))
    below = stats.binom.cdf(observed, n, p)
    above = stats.binom.sf(observed - 1, n, p)
    p_values = np.minimum(1.0, 2.0 * np.minimum(below, above))
    assert p_values.min() > alpha / 2.0 / len(p_values), (observed, n * p)


def test_gamma_is_the_one_the_accountant_bounds():
    # the Renyi accountant maps a RepeatAndSelectDpEvent's mean to gamma by its own inversion;
    # K must be drawn at that gamma, bit for bit, or the bound is of another distribution. The
    # event's recorded mean is inverted again (as draw_repetitions does)
    rng = np.random.default_rng(13)
    means = np.concatenate([[1.0 + 1e-9, 1.001, 1.3, 2.0, 5.0, 37.3, 1e3, 1e6],
                            np.exp(rng.uniform(0.0, math.log(1e6), 16))])
    for shape in (0.0, 1e-8, 1e-4, 0.01, 0.3, 0.5, 1.0, 2.5, 10.0):
        for mean in means:
            event = repetition_event(PureDpEvent(1.0), "negative_binomial", float(mean), shape)
            ours = repetitions.truncated_negative_binomial_gamma(shape, event.mean)
            assert ours == _rdp._gamma_truncated_negative_binomial(shape, event.mean)
            assert repetitions.truncated_negative_binomial_mean(ours, shape) >= event.mean


def test_mismatched_records_are_refused_before_the_budget_is_charged():
    pytest.importorskip("sklearn", minversion="1.6")
    from dpsolve.estimators import DPLogisticRegression
    from dpsolve.private_selection import PrivateGridSearch
    X, y = make_synthetic(200, 3, rng=1)
    budget = BudgetAccountant(10.0)
    model = DPLogisticRegression(row_norm=1.0, classes=[-1, 1], random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="X and y"):
        AccuracyScorer(1.0).score(model, X, y[:1], accountant=budget)
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


@pytest.mark.slow
def test_private_selection_is_reachable_from_the_package():
    """``import dpsolve`` alone makes ``dpsolve.private_selection`` available, as
    docs/parameters.md names it (a fresh interpreter, so no other test's import of the module
    can hide a missing export), without importing scikit-learn, which stays optional: with
    scikit-learn made unimportable, the selection and the scorers import, and the grid search (a
    scikit-learn estimator) names the extra it needs."""
    import os
    import subprocess
    import sys
    code = ("import sys; import dpsolve; "
            "assert callable(dpsolve.private_selection.select); "
            "assert 'private_selection' in dpsolve.__all__; "
            "assert sys.modules.get('sklearn') is None, 'import dpsolve imported scikit-learn'; ")
    found = code + "assert isinstance(dpsolve.private_selection.PrivateGridSearch, type)"
    blocked = ("import sys; sys.modules['sklearn'] = None; " + code
               + "assert dpsolve.private_selection.AccuracyScorer(0.1).epsilon == 0.1\n"
               "try:\n    dpsolve.private_selection.PrivateGridSearch\n"
               "except ImportError as e:\n    assert 'dpsolve[estimators]' in str(e), e\n"
               "else:\n    raise AssertionError('no ImportError')")
    # run where the dpsolve under test lives (test_audit.py's reachability test says why)
    here = os.path.dirname(os.path.dirname(os.path.abspath(dpsolve.__file__)))
    for source in (found, blocked):
        done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                              cwd=here)
        assert done.returncode == 0, done.stderr


# -- private scorers, regressor searches and refit ---------------------------------------------
def _sklearn():
    return pytest.importorskip("sklearn", minversion="1.6")


def _stub_classifier(n_classes=2):
    """A fitted classifier whose log-probabilities are read off the row: column k of x is
    class k's logit (any value, so the stress can make a prediction as confident as it likes)."""
    _sklearn()
    from scipy.special import log_softmax
    from sklearn.base import BaseEstimator, ClassifierMixin

    class Stub(ClassifierMixin, BaseEstimator):
        def __init__(self, classes=None):
            self.classes = classes

        def fit(self, X, y):
            return self

        def predict_log_proba(self, X):
            return log_softmax(np.asarray(X)[:, :len(self.classes_)], axis=1)

        def predict_proba(self, X):
            return np.exp(self.predict_log_proba(X))

        def predict(self, X):
            return self.classes_[np.argmax(np.asarray(X)[:, :len(self.classes_)], axis=1)]

    stub = Stub(classes=list(range(n_classes)))
    stub.classes_ = np.arange(n_classes)
    return stub


def _stub_regressor(label_bound):
    """A fitted regressor predicting the row's first entry (any value: predictions far beyond
    the bound are clipped by the scorers)."""
    _sklearn()
    from sklearn.base import BaseEstimator, RegressorMixin

    class Stub(RegressorMixin, BaseEstimator):
        def __init__(self, label_bound=None):
            self.label_bound = label_bound

        def fit(self, X, y):
            return self

        def predict(self, X):
            return np.asarray(X, dtype=float)[:, 0]

    stub = Stub(label_bound=label_bound)
    stub.fitted_ = True
    return stub


def _max_change(scorer, model, pairs):
    """max over the replace-one pairs of the L1 change of the scorer's exact statistic."""
    worst = 0.0
    for (X, y), (X2, y2) in pairs:
        a = np.atleast_1d(np.asarray(scorer.statistic(model, X, y), dtype=float))
        b = np.atleast_1d(np.asarray(scorer.statistic(model, X2, y2), dtype=float))
        worst = max(worst, float(np.sum(np.abs(a - b))))
    return worst


def _replace_one(X, y, draw_row, draw_label, rng, count):
    """``count`` neighbours of (X, y): one record, at a random index, replaced by a drawn one."""
    out = []
    for _ in range(count):
        i = int(rng.integers(len(y)))
        X2, y2 = X.copy(), y.copy()
        X2[i], y2[i] = draw_row(), draw_label()
        out.append(((X, y), (X2, y2)))
    return out


def test_accuracy_and_balanced_accuracy_sensitivities_are_tight():
    from dpsolve.private_selection import AccuracyScorer, BalancedAccuracyScorer
    rng = np.random.default_rng(0)
    for n_classes in (2, 3):
        model = _stub_classifier(n_classes)
        n = 40
        pairs = []
        for _ in range(30):
            # few records, some classes absent or alone: every cell can be empty or single
            X = rng.normal(scale=5.0, size=(n, n_classes))
            y = rng.integers(n_classes, size=n)
            y[: int(rng.integers(n))] = 0                 # a class often dominant
            pairs += _replace_one(X, y, lambda: rng.normal(scale=5.0, size=n_classes),
                                  lambda: int(rng.integers(n_classes)), rng, 40)
        accuracy = AccuracyScorer(1.0)
        balanced = BalancedAccuracyScorer(1.0, classes=list(range(n_classes)))
        assert _max_change(accuracy, model, pairs) == accuracy.sensitivity(model, n) == 1.0
        # a record leaves one (class, correct?) cell for another: L1 2, reached
        assert _max_change(balanced, model, pairs) == balanced.sensitivity(model, n) == 2.0


@pytest.mark.parametrize("clip", [0.5, math.log(100.0), 20.0])
def test_log_loss_sensitivity_is_clip_over_n_and_tight(clip):
    from dpsolve.private_selection import LogLossScorer
    rng = np.random.default_rng(1)
    model = _stub_classifier(3)
    scorer = LogLossScorer(1.0, clip=clip)
    n = 25
    pairs = []
    for scale in (0.1, 3.0, 60.0):                       # hedged to absurdly confident
        X = rng.normal(scale=scale, size=(n, 3))
        y = rng.integers(3, size=n)
        pairs += _replace_one(X, y, lambda: rng.normal(scale=scale, size=3),
                              lambda: int(rng.integers(3)), rng, 400)
    # the stress: a record predicted right with certainty (loss 0) against one predicted wrong
    # with certainty (loss capped at clip)
    X = np.tile([100.0, 0.0, 0.0], (n, 1))
    y = np.zeros(n, dtype=int)
    X2, y2 = X.copy(), y.copy()
    y2[4] = 2
    pairs.append(((X, y), (X2, y2)))
    worst = _max_change(scorer, model, pairs)
    assert worst <= scorer.sensitivity(model, n) + 1e-12
    assert worst >= 0.999 * clip / n


@pytest.mark.slow
@pytest.mark.parametrize("bound", [0.5, 1.0, 3.0])
def test_squared_error_sensitivities_are_tight(bound):
    from dpsolve.private_selection import MeanSquaredErrorScorer, R2Scorer
    rng = np.random.default_rng(2)
    model = _stub_regressor(bound)
    mse, r2 = MeanSquaredErrorScorer(1.0), R2Scorer(1.0)
    n = 30
    pairs = []
    for spread in (0.3 * bound, bound, 100.0 * bound):   # labels and predictions past B
        X = rng.normal(scale=spread, size=(n, 1))
        y = rng.normal(scale=spread, size=n)
        pairs += _replace_one(X, y, lambda: rng.normal(scale=spread, size=1),
                              lambda: float(rng.normal(scale=spread)), rng, 400)
        # the extreme points: labels and predictions at +-B (or beyond)
        X = rng.choice([-bound, bound], size=(n, 1)) * rng.choice([1.0, 50.0])
        y = rng.choice([-bound, bound], size=n)
        pairs += _replace_one(X, y, lambda: rng.choice([-10 * bound, bound], size=1),
                              lambda: float(rng.choice([-bound, 10 * bound])), rng, 400)
    # the stress: every other record at -B predicted -B; the changed one from (-B, -B) to
    # (label B, prediction -B): SSE moves by 4B^2, SST by 4B^2 (n-1)/n
    X = np.full((n, 1), -bound)
    y = np.full(n, -bound)
    X2, y2 = X.copy(), y.copy()
    y2[0] = 5 * bound
    pairs.append(((X, y), (X2, y2)))
    assert mse.sensitivity(model, n) == pytest.approx(4 * bound ** 2 / n)
    assert r2.sensitivity(model, n) == pytest.approx(8 * bound ** 2)
    worst_mse, worst_r2 = _max_change(mse, model, pairs), _max_change(r2, model, pairs)
    assert worst_mse <= mse.sensitivity(model, n) * (1 + 1e-12)
    assert worst_mse >= 0.999 * mse.sensitivity(model, n)
    assert worst_r2 <= r2.sensitivity(model, n) * (1 + 1e-12)
    assert worst_r2 >= (1 - 1 / n) * r2.sensitivity(model, n) * 0.999


@pytest.mark.slow
def test_scores_are_the_statistic_plus_laplace_at_the_sensitivity():
    from dpsolve.private_selection import make_private_scorer
    rng = np.random.default_rng(3)
    model = _stub_regressor(1.0)
    X, y = rng.uniform(-1, 1, size=(200, 1)), rng.uniform(-1, 1, size=200)
    scorer = make_private_scorer("neg_mean_squared_error", 0.5)
    exact = -float(scorer.statistic(model, X, y))
    draws = np.array([scorer.score(model, X, y, rng=rng) for _ in range(3000)])
    scale = 4.0 / 200 / 0.5
    assert stats.kstest(-(draws - exact) / scale, stats.laplace().cdf).pvalue > 1e-4
    # balanced accuracy: each recall from the noisy cells, clipped to [0, 1]
    clf = _stub_classifier(2)
    Xc = rng.normal(size=(400, 2))
    yc = (rng.random(400) < 0.1).astype(int)
    score = make_private_scorer("balanced_accuracy", 1e6, classes=[0, 1]).score(
        clf, Xc, yc, rng=rng)
    from sklearn.metrics import balanced_accuracy_score
    assert score == pytest.approx(balanced_accuracy_score(yc, clf.predict(Xc)), abs=1e-4)
    r2 = make_private_scorer("r2", 1e7, label_bound=1.0).score(model, X, y, rng=rng)
    from sklearn.metrics import r2_score
    assert r2 == pytest.approx(r2_score(y, X[:, 0]), abs=1e-3)


def test_balanced_accuracy_does_not_reward_the_majority_class():
    _sklearn()
    from dpsolve.private_selection import AccuracyScorer, BalancedAccuracyScorer
    rng = np.random.default_rng(4)
    X = np.column_stack([np.ones(2000), np.zeros(2000)])    # always predicts class 0
    y = (rng.random(2000) < 0.05).astype(int)
    model = _stub_classifier(2)
    assert AccuracyScorer(50.0, random_state=0)(model, X, y) == pytest.approx(0.95, abs=0.02)
    assert BalancedAccuracyScorer(50.0, classes=[0, 1], random_state=0)(
        model, X, y) == pytest.approx(0.5, abs=0.02)


def test_a_scorer_that_does_not_fit_the_estimator_is_refused_before_any_work():
    _sklearn()
    from dpsolve.estimators import DPLinearRegression, DPLinearSVC, DPLogisticRegression
    from dpsolve.private_selection import AccuracyScorer, PrivateGridSearch, R2Scorer
    X, y = make_synthetic(300, 3, rng=3)
    budget = BudgetAccountant(10.0)
    cases = [
        (DPLinearRegression(row_norm=1.0, label_bound=1.0), "accuracy",
         r"scoring='accuracy' scores classifiers.*DPLinearRegression is a regressor.*"
         r"'neg_mean_squared_error', 'r2'"),
        (DPLogisticRegression(row_norm=1.0, classes=[-1, 1]), "r2",
         r"scoring='r2' scores regressors.*'accuracy', 'balanced_accuracy', 'neg_log_loss'"),
        (DPLinearSVC(row_norm=1.0, classes=[-1, 1]), "neg_log_loss",
         r"neg_log_loss.*DPLinearSVC has no predict_proba"),
    ]
    for estimator, scoring, match in cases:
        with pytest.raises(ValueError, match=match):
            PrivateGridSearch(estimator, {"reg": [0.1]}, scoring=scoring,
                              accountant=budget).fit(X, y)
    assert budget.ledger == ()
    # standalone: refused before the budget is charged, too
    fitted = DPLinearRegression(row_norm=1.0, label_bound=1.0, random_state=0).fit(X, 0.5 * y)
    with pytest.raises(ValueError, match="scores classifiers"):
        AccuracyScorer(0.1, accountant=budget)(fitted, X, 0.5 * y)
    classifier = DPLogisticRegression(row_norm=1.0, classes=[-1, 1], random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="scores regressors"):
        R2Scorer(0.1, accountant=budget)(classifier, X, y)
    assert budget.ledger == ()


def test_regressor_search_scores_privately_in_one_budget():
    _sklearn()
    from dpsolve.estimators import DPLinearRegression
    from dpsolve.private_selection import MeanSquaredErrorScorer, PrivateGridSearch, R2Scorer
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(2000, 3)) / math.sqrt(3)
    y = np.clip(X @ np.array([0.6, -0.4, 0.3]) + 0.05 * rng.normal(size=2000), -1, 1)
    for scoring, kind in ((None, MeanSquaredErrorScorer), ("r2", R2Scorer)):
        budget = BudgetAccountant(5.0)
        search = PrivateGridSearch(
            DPLinearRegression(epsilon=0.5, row_norm=1.0, label_bound=1.0),
            {"reg": [1e-3, 1e-2, 1e-1]}, score_epsilon=0.1, scoring=scoring,
            accountant=budget, random_state=0).fit(X, y)
        assert isinstance(search.scorer_, kind)
        assert search.epsilon_ == pytest.approx(3 * 0.6)
        assert budget.spent()[0] == pytest.approx(1.8) and len(budget.ledger) == 1
        assert search.best_params_["reg"] in (1e-3, 1e-2, 1e-1)
        assert search.best_estimator_.predict(X).shape == (2000,)
        assert search.best_estimator_.get_params()["label_bound"] == 1.0


def test_refit_fits_the_winner_on_all_records_and_composes_its_cost():
    _sklearn()
    from dp_accounting import ComposedDpEvent

    from dpsolve.estimators import DPLogisticRegression
    from dpsolve.private_selection import PrivateGridSearch
    X, y = make_synthetic(1500, 4, rng=6)
    budget = BudgetAccountant(5.0)
    estimator = DPLogisticRegression(epsilon=0.5, row_norm=1.0, classes=[-1, 1], reg=0.01,
                                     accountant=budget)
    search = PrivateGridSearch(estimator, {"reg": [0.01, 0.1]}, score_epsilon=0.1,
                               scoring="balanced_accuracy", refit=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpsolve.PrivacyWarning)
        search.fit(X, y)
    # Liu-Talwar's 3 (0.5 + 0.1) and the refit's 0.5, charged once
    assert search.epsilon_ == pytest.approx(3 * 0.6 + 0.5)
    assert len(budget.ledger) == 1 and budget.spent()[0] == pytest.approx(2.3)
    assert budget.ledger[0].labels == ("private selection and refit",)
    assert isinstance(search.dp_event_, ComposedDpEvent)
    assert isinstance(search.dp_event_.events[0], dp_event.RepeatAndSelectDpEvent)
    best = search.best_estimator_
    assert best.epsilon_ == search.epsilon_ and best.dp_event_ == search.dp_event_
    assert best.privacy_report_.holds and "refit" in best.privacy_report_.method
    assert search.selection_.output is None              # the run's model is not returned
    expected = clone_params = estimator.get_params()
    expected = {**clone_params, **search.best_params_}
    assert repr(best.get_params()) == repr(expected)
    assert best.get_params()["accountant"] is budget
    # the refit saw all n records: refitting the clone on them with the same setting gives a
    # model of the same kind; and a search without refit costs what it did before
    without = PrivateGridSearch(estimator.set_params(accountant=None), {"reg": [0.01, 0.1]},
                                score_epsilon=0.1, random_state=0).fit(X, y)
    assert without.epsilon_ == pytest.approx(1.8)
    again = PrivateGridSearch(estimator, {"reg": [0.01, 0.1]}, score_epsilon=0.1,
                              scoring="balanced_accuracy", refit=True, random_state=0).fit(X, y)
    assert np.array_equal(again.best_estimator_.coef_, best.coef_)


def test_refit_the_budget_cannot_pay_is_refused_before_any_fit(monkeypatch):
    _sklearn()
    from dpsolve.estimators import DPLogisticRegression
    from dpsolve.private_selection import PrivateGridSearch
    X, y = make_synthetic(400, 3, rng=7)
    # enough for the selection (1.8), not for selection and refit (2.3)
    budget = BudgetAccountant(2.0)
    fits = []
    original = DPLogisticRegression.fit

    def counting(self, *args, **kwargs):
        fits.append(1)
        return original(self, *args, **kwargs)
    monkeypatch.setattr(DPLogisticRegression, "fit", counting)
    with pytest.raises(dpsolve.privacy.BudgetExceededError, match="selection and refit"):
        PrivateGridSearch(DPLogisticRegression(epsilon=0.5, row_norm=1.0, classes=[-1, 1]),
                          {"reg": [0.01, 0.1]}, score_epsilon=0.1, refit=True,
                          accountant=budget).fit(X, y)
    assert fits == [] and budget.ledger == ()
    # without refit it is admitted
    PrivateGridSearch(DPLogisticRegression(epsilon=0.5, row_norm=1.0, classes=[-1, 1]),
                      {"reg": [0.01, 0.1]}, score_epsilon=0.1, accountant=budget).fit(X, y)
    assert budget.spent()[0] == pytest.approx(1.8)


def test_scorers_in_cross_validation_are_charged_per_fold():
    _sklearn()
    from sklearn.model_selection import KFold, cross_val_score

    from dpsolve.estimators import DPLogisticRegression
    from dpsolve.private_selection import BalancedAccuracyScorer, LogLossScorer
    X, y = make_synthetic(600, 3, rng=8)
    budget = BudgetAccountant(10.0)
    model = DPLogisticRegression(epsilon=1.0, row_norm=1.0, classes=[-1, 1], random_state=0)
    for scorer in (BalancedAccuracyScorer(0.2, accountant=budget),
                   LogLossScorer(0.2, accountant=budget)):
        scores = cross_val_score(model, X, y, cv=KFold(3, shuffle=True, random_state=0),
                                 scoring=scorer)
        assert scores.shape == (3,) and np.all(np.isfinite(scores))
    labels = [charge.labels[0] for charge in budget.ledger]
    assert labels.count("noisy balanced_accuracy") == 3
    assert labels.count("noisy neg_log_loss") == 3
    # a scorer with random_state None keeps no generator
    assert BalancedAccuracyScorer(0.2)._stream is None


def test_scorer_bad_input_names_the_parameter():
    _sklearn()
    from dpsolve.estimators import DPLogisticRegression
    from dpsolve.private_selection import (BalancedAccuracyScorer, LogLossScorer,
                                           PrivateGridSearch, R2Scorer, make_private_scorer)
    X, y = make_synthetic(200, 3, rng=9)
    estimator = DPLogisticRegression(row_norm=1.0, classes=[-1, 1])
    with pytest.raises(ValueError, match="scoring must be one of"):
        PrivateGridSearch(estimator, {"reg": [0.1]}, scoring="f1").fit(X, y)
    with pytest.raises(ValueError, match="scoring must be one of"):
        make_private_scorer("roc_auc", 0.1)
    for clip in (0.0, -1.0, math.nan):
        with pytest.raises(ValueError, match="clip"):
            LogLossScorer(0.1, clip=clip)
    with pytest.raises(ValueError, match="floor"):
        BalancedAccuracyScorer(0.1, floor=0.0)
    with pytest.raises(ValueError, match="label_bound"):
        R2Scorer(0.1, label_bound=-1.0)
    with pytest.raises(TypeError, match="refit"):
        PrivateGridSearch(estimator, {"reg": [0.1]}, refit="yes").fit(X, y)
    with pytest.raises(ValueError, match="score_epsilon"):
        PrivateGridSearch(estimator, {"reg": [0.1]}, scoring=LogLossScorer(0.2)).fit(X, y)
    with pytest.raises(ValueError, match="random_state"):
        PrivateGridSearch(estimator, {"reg": [0.1]},
                          scoring=LogLossScorer(0.1, random_state=0)).fit(X, y)
    # a scorer built at score_epsilon, with its options, is used as given
    search = PrivateGridSearch(estimator, {"reg": [0.1]},
                               scoring=LogLossScorer(0.1, clip=2.0), random_state=0).fit(X, y)
    assert search.scorer_.clip == 2.0


def test_the_deprecated_factories_and_noisy_accuracy_warn_and_compute_the_same():
    _sklearn()
    import dpsolve.private_selection as selection
    from dpsolve.estimators import DPLinearRegression, DPLogisticRegression
    X, y = make_synthetic(300, 3, rng=10)
    labels = np.clip(X @ np.array([0.5, -0.3, 0.2]), -1.0, 1.0)
    classifier = DPLogisticRegression(row_norm=1.0, classes=[-1, 1], random_state=0).fit(X, y)
    regressor = DPLinearRegression(row_norm=1.0, label_bound=1.0, random_state=0).fit(X, labels)
    cases = [("accuracy_scorer", selection.AccuracyScorer, {}, classifier, y),
             ("balanced_accuracy_scorer", selection.BalancedAccuracyScorer, {"floor": 3.0},
              classifier, y),
             ("log_loss_scorer", selection.LogLossScorer, {"clip": 2.0}, classifier, y),
             ("mean_squared_error_scorer", selection.MeanSquaredErrorScorer,
              {"label_bound": 2.0}, regressor, labels),
             ("r2_scorer", selection.R2Scorer, {"floor": 1.0}, regressor, labels)]
    for old, cls, options, model, target in cases:
        with pytest.warns(DeprecationWarning, match=rf"{old} is deprecated; use "
                                                    rf"dpsolve\.private_selection\.{cls.__name__}"):
            scorer = getattr(selection, old)(0.3, random_state=4, **options)
        assert type(scorer) is cls and repr(scorer) == repr(cls(0.3, random_state=4, **options))
        assert scorer(model, X, target) == cls(0.3, random_state=4, **options)(model, X, target)
    with pytest.warns(DeprecationWarning, match=r"noisy_accuracy is deprecated.*AccuracyScorer"):
        noisy = selection.noisy_accuracy(classifier, X, y, 0.3, rng=5)
    assert noisy == selection.AccuracyScorer(0.3).score(classifier, X, y, rng=5)


def test_scorings_are_the_shipped_scorers_names():
    from dpsolve.private_selection import SCORERS, SCORINGS, PrivateScorer, make_private_scorer
    names = [scorer.name for scorer in SCORERS]
    assert len(set(names)) == len(names)
    assert sorted(name for kind in SCORINGS.values() for name in kind) == sorted(names)
    for kind, kind_names in SCORINGS.items():
        for name in kind_names:
            scorer = make_private_scorer(name, 0.5)
            assert isinstance(scorer, PrivateScorer) and (scorer.name, scorer.kind) == (name, kind)


def test_the_search_follows_scikit_learns_estimator_conventions():
    _sklearn()
    from sklearn.base import BaseEstimator, clone

    from dpsolve.estimators import DPLogisticRegression
    from dpsolve.private_selection import PrivateGridSearch
    X, y = make_synthetic(600, 3, rng=2)
    budget = BudgetAccountant(10.0)
    search = PrivateGridSearch(DPLogisticRegression(epsilon=0.5, row_norm=1.0, classes=[-1, 1]),
                               {"reg": [1e-3, 1e-2]}, score_epsilon=0.1, accountant=budget,
                               random_state=0)
    assert isinstance(search, BaseEstimator)
    params = search.get_params()
    assert params["score_epsilon"] == 0.1 and params["estimator__epsilon"] == 0.5
    assert params["accountant"] is budget and params["param_grid"] == {"reg": [1e-3, 1e-2]}
    copy = clone(search)
    assert copy.get_params(deep=False).keys() == search.get_params(deep=False).keys()
    assert copy.estimator is not search.estimator and copy.accountant is budget   # one budget
    assert copy.set_params(estimator__reg=0.5, refit=True) is copy
    assert copy.estimator.reg == 0.5 and copy.refit and search.estimator.reg == "auto"
    text = repr(search)          # scikit-learn's: the parameters set away from their defaults
    assert text.startswith("PrivateGridSearch(") and "random_state=0" in text
    assert "param_grid={'reg': [0.001, 0.01]}" in text and "score_epsilon" not in text
    # the clone releases what the original does, and each fit is one charge of the same event
    a = search.fit(X, y)
    b = clone(search).fit(X, y)
    assert np.array_equal(a.best_estimator_.coef_, b.best_estimator_.coef_)
    assert a.best_score_ == b.best_score_ and repr(a.dp_event_) == repr(b.dp_event_)
    assert len(budget.ledger) == 2
    assert budget.spent()[0] == pytest.approx(2 * 3 * 0.6)


def test_the_guides_worked_example_is_a_complete_scorer(tmp_path, monkeypatch):
    """docs/adding_a_scorer.md's class and its sensitivity test run as written; the scorer is
    then used as the page says: standalone, charged per call, and in a search, charged once,
    with the checks it does not write (a classifier refused, bad labels before the charge)."""
    _sklearn()
    import importlib.util
    import re
    import sys
    from pathlib import Path

    from dpsolve.estimators import DPLinearRegression, DPLogisticRegression
    from dpsolve.private_selection import PrivateGridSearch
    page = Path(__file__).resolve().parents[1] / "docs" / "adding_a_scorer.md"
    module_code, test_code = re.findall(r"```python\n(.*?)```", page.read_text("utf-8"), re.S)
    modules = {}
    for name, code in (("mean_absolute_error", module_code),
                       ("test_mean_absolute_error", test_code)):
        path = tmp_path / f"{name}.py"
        path.write_text(code)
        spec = importlib.util.spec_from_file_location(name, path)
        modules[name] = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, name, modules[name])
        spec.loader.exec_module(modules[name])
    modules["test_mean_absolute_error"].test_sensitivity_against_a_numerical_maximisation()
    Scorer = modules["mean_absolute_error"].MeanAbsoluteErrorScorer
    assert repr(Scorer(0.1, label_bound=2.0)) == \
        "MeanAbsoluteErrorScorer(epsilon=0.1, label_bound=2.0)"
    rng = np.random.default_rng(14)
    X = rng.uniform(-1, 1, size=(400, 3)) / math.sqrt(3)
    y = np.clip(X @ np.array([0.6, -0.4, 0.3]) + 0.05 * rng.normal(size=400), -1, 1)
    budget = BudgetAccountant(1e4)
    regressor = DPLinearRegression(epsilon=0.5, row_norm=1.0, label_bound=1.0)
    search = PrivateGridSearch(regressor, {"reg": [1e-3, 1e-1]}, score_epsilon=0.1,
                               scoring=Scorer(0.1, label_bound=1.0), accountant=budget,
                               random_state=0).fit(X, y)
    assert len(budget.ledger) == 1 and search.epsilon_ == pytest.approx(3 * 0.6)
    assert budget.spent()[0] == pytest.approx(1.8)
    fitted = search.best_estimator_
    exact = -np.mean(np.abs(np.clip(fitted.predict(X), -1, 1) - y))
    scorer = Scorer(1e3, label_bound=1.0, accountant=budget, random_state=0)
    assert scorer(fitted, X, y) == pytest.approx(exact, abs=1e-4)     # noise 2/(n 1e3)
    assert len(budget.ledger) == 2 and budget.ledger[1].labels == (
        "noisy neg_mean_absolute_error",)
    classifier = DPLogisticRegression(row_norm=1.0, classes=[-1, 1], random_state=0)
    with pytest.raises(ValueError, match="scores regressors"):
        scorer(classifier.fit(X, np.sign(y + 0.01)), X, y)
    with pytest.raises(ValueError, match="finite"):
        scorer(fitted, X, np.where(np.arange(400) == 3, np.nan, y))
    assert len(budget.ledger) == 2
