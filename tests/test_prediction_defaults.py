"""The estimators' prediction-grade defaults: the private base rate (class counts, the label
mean), the centred regulariser it sets, ``reg="auto"`` and ``class_weight``."""
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import dpsolve
from dpsolve.privacy.budget import BudgetAccountant, BudgetExceededError
from dpsolve.privacy.counts import _discrete_laplace, private_class_shares
from dpsolve.tuning import prediction_reg

sklearn = pytest.importorskip("sklearn")
from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: E402
from sklearn.metrics import balanced_accuracy_score, r2_score, roc_auc_score  # noqa: E402

from dpsolve.estimators import (DPLinearRegression,  # noqa: E402
                                DPLogisticRegression)


def imbalanced(n, p, positive, seed):
    """Features in [0, 1], labels from a logistic model whose base rate is ``positive``."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, p))
    w = rng.normal(0.0, 3.0, p)
    z = (X - 0.5) @ w
    # the intercept that gives the base rate, found by bisection on the mean probability
    low, high = -30.0, 30.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if np.mean(1 / (1 + np.exp(-(z + mid)))) < positive else (low, mid)
    y = (rng.random(n) < 1 / (1 + np.exp(-(z + low)))).astype(int)
    return X, y


# -- the discrete Laplace mechanism --------------------------------------------------------------
@pytest.mark.slow
def test_discrete_laplace_has_the_two_sided_geometric_distribution():
    # P(Z = z) = (1 - a)/(1 + a) a^|z|, a = exp(-epsilon): the density whose ratio between
    # z and z + 1 is at most e^epsilon (the count's sensitivity is 1). Each frequency is checked
    # against its exact probability within 5 binomial standard errors.
    epsilon, draws = 0.7, 400_000
    z = _discrete_laplace(epsilon, draws, np.random.default_rng(0))
    assert np.all(z == np.round(z))
    a = math.exp(-epsilon)
    for value in range(-4, 5):
        p = (1 - a) / (1 + a) * a ** abs(value)
        observed = np.mean(z == value)
        assert abs(observed - p) <= 5 * math.sqrt(p * (1 - p) / draws), value


def test_class_counts_change_by_one_between_neighbours_and_the_shares_stay_in_range():
    # the released statistic is the count of positives: replacing one record moves it by at
    # most 1, found by exhaustive replacement of each record of a small dataset
    codes = np.array([0, 1, 1, 0, 0, 1, 0, 0])
    worst = 0
    for i in range(len(codes)):
        for label in (0, 1):
            other = codes.copy()
            other[i] = label
            worst = max(worst, abs(int(np.sum(other == 1)) - int(np.sum(codes == 1))))
    assert worst == 1
    for seed in range(50):
        shares = private_class_shares(codes, 2, 0.05, np.random.default_rng(seed)).shares
        assert 0 < shares[1] < 1 and shares[0] + shares[1] == pytest.approx(1.0)
        assert 0.5 / len(codes) <= shares[1] <= 1 - 0.5 / len(codes)


@pytest.mark.parametrize("noisy, n, epsilon", [
    (158, 426, 0.01), (158, 426, 1.0), (-50, 426, 0.01), (600, 426, 0.1), (3, 10_000, 0.1),
    (5e5, 1000, 1e-3), (158, 426, 1e-6)])
def test_the_base_rate_is_the_posterior_mean_of_the_count(noisy, n, epsilon):
    # the closed form against quadrature of exp(-epsilon |c - noisy|) c over [0, n]
    from scipy import integrate
    from dpsolve.privacy.counts import posterior_mean_count
    peak = min(max(noisy, 0), n)

    def integral(f):
        return integrate.quad(lambda c: f(c) * math.exp(-epsilon * (abs(c - noisy)
                                                                    - abs(peak - noisy))),
                              0, n, points=[peak], limit=500, epsabs=0, epsrel=1e-12)[0]
    expected = integral(lambda c: c) / integral(lambda c: 1.0)
    assert posterior_mean_count(noisy, n, epsilon) == pytest.approx(expected, rel=1e-8)


def test_a_count_drowned_in_noise_gives_a_base_rate_near_one_half():
    codes = np.array([1] * 10 + [0] * 390)
    shares = [private_class_shares(codes, 2, 1e-4, np.random.default_rng(s)).shares[1]
              for s in range(20)]
    assert all(0.4 < share < 0.6 for share in shares)


def test_class_counts_refuse_an_epsilon_too_small_to_draw():
    with pytest.raises(ValueError, match="epsilon"):
        private_class_shares(np.array([0, 1]), 2, 1e-12, np.random.default_rng(0))


def test_the_label_sum_moves_by_at_most_twice_the_label_bound():
    # the regressor's offset releases sum(clip(y, -B_y, B_y)) with Laplace noise for L1
    # sensitivity 2 B_y: the largest change over replace-one pairs of extreme labels
    bound = 3.0
    est = DPLinearRegression(label_bound=bound)
    rng = np.random.default_rng(1)
    worst = 0.0
    for _ in range(2000):
        y = rng.normal(0, 5, 6)
        other = y.copy()
        other[rng.integers(6)] = rng.choice([-1e6, 1e6, rng.normal(0, 5)])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a, b = est._labels(y)[1], est._labels(other)[1]
        # exactly, in rationals: the mechanism's sensitivity is the exact sum's
        worst = max(worst, abs(sum(map(Fraction, a)) - sum(map(Fraction, b))))
    assert worst <= 2 * bound
    assert worst >= 2 * bound * 0.9


# -- the centred regulariser ---------------------------------------------------------------------
def test_a_centre_is_the_offset_of_the_intercept():
    # minimising F(theta) + (lam/2)||theta - c||^2 with c on the intercept is minimising the
    # offset objective: at the released minimiser (epsilon huge) the centred gradient vanishes
    X, y = imbalanced(2000, 4, 0.05, 0)
    problem = dpsolve.Problem(X, y, "logistic", radius=None, reg=1e-2, row_norm=2.0,
                              fit_intercept=True, classes=(0, 1))
    centre = np.zeros(problem.p)
    centre[-1] = math.log(0.05 / 0.95)
    fit = dpsolve.objective_perturbation(problem, 1e8, centre=centre, extra_reg=0.0, rng=0)
    gradient = problem.gradient(fit.theta) - problem.reg * centre
    # the inner solve is certified to its tolerance g: ||grad|| <= sqrt(2 lam g); the output
    # noise at epsilon 1e8 is of order 1e-8 times its sensitivity
    assert np.linalg.norm(gradient) <= 1e-6
    uncentred = dpsolve.objective_perturbation(problem, 1e8, extra_reg=0.0, rng=0)
    # the uncentred fit pushes the imbalance onto the features (all negative here), the centred
    # one does not
    assert np.all(uncentred.theta[:-1] < 0)
    assert np.linalg.norm(fit.theta[:-1]) < np.linalg.norm(uncentred.theta[:-1])


def test_the_event_does_not_depend_on_the_centre_only_on_its_bound():
    # the estimators' centre is released from the data; everything the plan computes (the
    # event, the tolerance, the step count) reads only its public bound
    X, y = imbalanced(500, 3, 0.1, 1)
    problem = dpsolve.Problem(X, y, "logistic", radius=None, reg=1e-2, row_norm=2.0,
                              fit_intercept=True, classes=(0, 1))
    fits = []
    for value in (-3.0, 0.5):
        centre = np.zeros(problem.p)
        centre[-1] = value
        for delta in (None, 1e-6):
            fits.append(dpsolve.objective_perturbation(problem, 1.0, delta, centre=centre,
                                                       centre_bound=4.0, rng=0))
    for a, b in ((fits[0], fits[2]), (fits[1], fits[3])):
        assert a.dp_event == b.dp_event
        assert a.settings == b.settings and a.noise == b.noise
        assert a.settings["centred"]
    with pytest.raises(ValueError, match="centre_bound"):
        dpsolve.objective_perturbation(problem, 1.0, centre=centre, centre_bound=0.1)


@pytest.mark.parametrize("centre, error", [
    (np.zeros(3), ValueError), (np.array([0.0, 0.0, 0.0, np.nan]), ValueError),
    (np.array([0.0, 0.0, 0.0, 1e7]), ValueError), ("x", TypeError)])
def test_a_bad_centre_is_refused(centre, error):
    X, y = imbalanced(100, 3, 0.2, 2)
    problem = dpsolve.Problem(X, y, "logistic", radius=None, reg=1e-2, row_norm=2.0,
                              fit_intercept=True, classes=(0, 1))
    with pytest.raises(error, match="centre"):
        dpsolve.objective_perturbation(problem, 1.0, centre=centre, rng=0)


# -- reg="auto" ----------------------------------------------------------------------------------
@pytest.mark.parametrize("solver", ["objective_perturbation", "output_perturbation",
                                    "clipped_gd"])
@pytest.mark.parametrize("delta", [None, 1e-6])
def test_prediction_reg_is_at_least_one_over_n_and_falls_with_epsilon(solver, delta):
    X, y = imbalanced(3000, 10, 0.1, 3)
    problem = dpsolve.Problem(X, y, "logistic", radius=None, reg=1.0, row_norm=math.sqrt(10),
                              fit_intercept=True, classes=(0, 1))
    values = [prediction_reg(problem, solver, e, delta) for e in (0.1, 0.3, 1.0, 3.0, 10.0)]
    assert all(v >= 1 / problem.n for v in values)
    assert all(a >= b for a, b in zip(values, values[1:]))
    assert values[0] > values[-1] or values[0] == 1 / problem.n


def test_prediction_reg_reads_no_data():
    X, y = imbalanced(3000, 10, 0.1, 3)
    other = dpsolve.Problem(np.zeros_like(X), np.zeros_like(y), "logistic", radius=None,
                            reg=1.0, row_norm=math.sqrt(10), fit_intercept=True,
                            classes=(0, 1))
    problem = dpsolve.Problem(X, y, "logistic", radius=None, reg=1.0, row_norm=math.sqrt(10),
                              fit_intercept=True, classes=(0, 1))
    assert prediction_reg(problem, "objective_perturbation", 1.0) == prediction_reg(
        other, "objective_perturbation", 1.0)


@pytest.mark.slow
def test_auto_reg_leaves_objective_perturbation_its_epsilon_without_extra_reg():
    # the chosen lambda keeps epsilon' > 0, so the estimator runs with Delta = 0
    X, y = imbalanced(6000, 85, 0.06, 4)
    for epsilon in (0.1, 0.5, 1.0, 3.0):
        est = DPLogisticRegression(epsilon, row_norm=math.sqrt(85), classes=[0, 1],
                                   random_state=0).fit(X, y)
        assert est.solver_ == "objective_perturbation"
        assert est.fit_.settings["extra_reg"] == 0.0
        assert est.reg_ >= 1 / 6000


# -- the estimators ------------------------------------------------------------------------------
def test_one_charge_per_fit_with_the_counts_composed_in():
    X, y = imbalanced(800, 3, 0.1, 5)
    budget = BudgetAccountant(epsilon=2.0)
    est = DPLogisticRegression(1.0, row_norm=2.0, classes=[0, 1], accountant=budget,
                               random_state=0).fit(X, y)
    assert len(budget.ledger) == 1
    assert budget.spent()[0] == pytest.approx(1.0)
    assert est.epsilon_ == 1.0 and est.privacy_report_.holds
    assert "PureDpEvent(epsilon=0.1)" in repr(est.dp_event_)


def test_the_budget_refuses_before_the_counts_are_drawn(monkeypatch):
    import dpsolve.estimators.classifiers as module

    def boom(*args, **kwargs):
        raise AssertionError("the counts were drawn")
    monkeypatch.setattr(module, "private_class_shares", boom)
    X, y = imbalanced(800, 3, 0.1, 5)
    budget = BudgetAccountant(epsilon=0.5)
    with pytest.raises(BudgetExceededError):
        DPLogisticRegression(1.0, row_norm=2.0, classes=[0, 1], accountant=budget).fit(X, y)
    assert budget.ledger == ()


def test_class_weights_shift_the_intercept_by_the_log_ratio():
    X, y = imbalanced(1000, 3, 0.1, 6)
    common = dict(row_norm=2.0, classes=[0, 1], random_state=0)
    plain = DPLogisticRegression(**common).fit(X, y)
    weighted = DPLogisticRegression(class_weight={1: 4.0}, **common).fit(X, y)
    balanced = DPLogisticRegression(class_weight="balanced", **common).fit(X, y)
    np.testing.assert_array_equal(weighted.coef_, plain.coef_)
    np.testing.assert_array_equal(balanced.coef_, plain.coef_)
    assert weighted.intercept_[0] - plain.intercept_[0] == pytest.approx(math.log(4.0))
    # balanced: the threshold moves to the private base rate (about 10% here)
    shift = balanced.intercept_[0] - plain.intercept_[0]
    assert math.log(0.7 / 0.3) < shift < math.log(0.98 / 0.02)
    assert np.mean(balanced.predict(X)) > np.mean(plain.predict(X))


@pytest.mark.parametrize("make, match", [
    (lambda: DPLogisticRegression(class_weight="balanced", prior_share=0.0), "balanced"),
    (lambda: DPLogisticRegression(class_weight="balanced", fit_intercept=False), "balanced"),
    (lambda: DPLogisticRegression(prior_share=0.2, solver="clipped_gd", radius=5.0,
                                  solver_options={"steps": 5}), "prior_share"),
    (lambda: DPLogisticRegression(class_weight={2: 1.0}), "class_weight"),
    (lambda: DPLogisticRegression(class_weight={1: -1.0}), "class_weight"),
    (lambda: DPLogisticRegression(epsilon=1e-9), "prior_share"),
    (lambda: DPLogisticRegression(solver_options={"centre": [0.0]}), "centre"),
])
def test_bad_prior_settings_are_refused_before_any_noise(make, match, monkeypatch):
    import dpsolve.estimators.classifiers as module

    def boom(*args, **kwargs):
        raise AssertionError("noise was drawn")
    monkeypatch.setattr(module, "private_class_shares", boom)
    X, y = imbalanced(200, 3, 0.2, 7)
    est = make().set_params(row_norm=2.0, classes=[0, 1])
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)


def test_multinomial_runs_without_the_prior():
    rng = np.random.default_rng(8)
    X = rng.random((600, 3))
    y = rng.integers(0, 3, 600)
    est = DPLogisticRegression(row_norm=2.0, classes=[0, 1, 2], random_state=0).fit(X, y)
    assert est.epsilon_ == 1.0 and "PureDpEvent(epsilon=0.1)" not in repr(est.dp_event_)
    with pytest.raises(ValueError, match="prior_share"):
        DPLogisticRegression(row_norm=2.0, classes=[0, 1, 2], prior_share=0.1).fit(X, y)


def test_the_regressors_offset_is_the_private_label_mean():
    rng = np.random.default_rng(9)
    X = rng.random((4000, 5))
    y = 100.0 + X @ rng.normal(0, 10, 5) + rng.normal(0, 1, 4000)
    est = DPLinearRegression(epsilon=1e6, row_norm=math.sqrt(5), label_bound=200.0,
                             random_state=0).fit(X, y)
    assert est.solver_ == "adassp"
    assert est.epsilon_ == 1e6
    # at epsilon 1e6 the fit is the ridge least squares solution
    reference = LinearRegression().fit(X, y)
    assert r2_score(y, est.predict(X)) == pytest.approx(r2_score(y, reference.predict(X)),
                                                        abs=1e-3)


# -- what a user measures (slow: ten seeds each) -----------------------------------------------------
def _mean_and_error(values):
    values = np.asarray(values)
    return values.mean(), values.std(ddof=1) / math.sqrt(len(values))


@pytest.mark.slow
def test_the_rare_class_is_predicted_and_ranked():
    # 3% positives, 3 features, 10^4 rows: at epsilon 3 the default model's balanced accuracy
    # is within 0.05 of non-private scikit-learn's (three standard errors of the seeds' mean
    # allowed), and its AUC is above 0.5 from epsilon 1
    X, y = imbalanced(13_000, 3, 0.03, 10)
    X_train, y_train, X_test, y_test = X[:10_000], y[:10_000], X[10_000:], y[10_000:]
    reference = LogisticRegression().fit(X_train, y_train)
    target = balanced_accuracy_score(y_test, reference.predict(X_test))
    for epsilon in (1.0, 3.0):
        scores, aucs = [], []
        for seed in range(10):
            est = DPLogisticRegression(epsilon, row_norm=math.sqrt(3), classes=[0, 1],
                                       random_state=seed).fit(X_train, y_train)
            scores.append(balanced_accuracy_score(y_test, est.predict(X_test)))
            aucs.append(roc_auc_score(y_test, est.decision_function(X_test)))
        auc, auc_error = _mean_and_error(aucs)
        assert auc - 3 * auc_error > 0.5
        if epsilon == 3.0:
            score, error = _mean_and_error(scores)
            assert score + 3 * error >= target - 0.05


@pytest.mark.slow
def test_regression_beats_the_constant_predictor():
    # not the data AdaSSP's pure-epsilon ridge factor was chosen on (docs/adassp.md): another
    # seed, dimension, size and noise level
    rng = np.random.default_rng(21)
    n, p = 15_000, 12
    X = rng.random((n, p))
    y = np.clip(300 + (X - 0.5) @ rng.normal(0, 200, p) + rng.normal(0, 120, n), 0, 1200)
    X_train, y_train, X_test, y_test = X[:11_000], y[:11_000], X[11_000:], y[11_000:]
    reference = r2_score(y_test, LinearRegression().fit(X_train, y_train).predict(X_test))
    for epsilon, delta, share in ((1.0, 0.0, 0.0), (3.0, 0.0, 0.5), (3.0, 1e-6, 2 / 3)):
        values = [r2_score(y_test, DPLinearRegression(
            epsilon, delta, row_norm=math.sqrt(p), label_bound=1200.0,
            random_state=seed).fit(X_train, y_train).predict(X_test)) for seed in range(10)]
        value, error = _mean_and_error(values)
        assert value - 3 * error > share * reference, (epsilon, delta, value, reference)


def test_a_label_range_is_the_symmetric_bound_about_its_midpoint():
    # label_bound=(low, high) fits y - (low + high)/2 with the bound (high - low)/2 and adds the
    # midpoint to the intercept: the same bits as doing that by hand
    rng = np.random.default_rng(12)
    X = rng.random((3000, 4))
    y = np.clip(40 + X @ rng.normal(0, 20, 4) + rng.normal(0, 5, 3000), 0, 100)
    ranged = DPLinearRegression(row_norm=2.0, label_bound=(0.0, 100.0), random_state=3).fit(X, y)
    by_hand = DPLinearRegression(row_norm=2.0, label_bound=50.0, random_state=3).fit(X, y - 50.0)
    np.testing.assert_array_equal(ranged.coef_, by_hand.coef_)
    assert ranged.intercept_ == by_hand.intercept_ + 50.0
    assert ranged.label_bound_ == 50.0
    assert ranged.dp_event_ == by_hand.dp_event_


@pytest.mark.parametrize("label_bound", [(1.0, 0.0), (0.0, np.nan), (0.0, 1.0, 2.0), ("a", 1.0),
                                         (False, True)])
def test_a_bad_label_range_is_refused_before_any_noise(label_bound, monkeypatch):
    import dpsolve.estimators.regression as module

    def boom(*args, **kwargs):
        raise AssertionError("noise was drawn")
    monkeypatch.setattr(module, "laplace_noise", boom)
    X = np.random.default_rng(0).random((50, 2))
    with pytest.raises(ValueError, match="label_bound"):
        DPLinearRegression(row_norm=2.0, label_bound=label_bound).fit(X, X[:, 0])


def test_output_perturbation_prediction_reg_on_a_loss_that_is_not_smooth():
    # the hinge has no finite smoothness: the rule's beta E||u||^2 / 2 made lambda inf (the
    # hinge's fit at reg="auto" was refused); its bound is L E||u|| = L p 2L / (n lambda eps),
    # whose minimiser makes the two terms of lambda R0^2 / 2 + L E||u|| equal
    from dpsolve.solvers._prediction import prediction_constants
    X, y = imbalanced(3000, 10, 0.1, 3)
    problem = dpsolve.Problem(X, y, "hinge", radius=None, reg=1.0, row_norm=math.sqrt(10),
                              fit_intercept=True, classes=(0, 1))
    n, p, floor, R0 = prediction_constants(problem)
    L = problem.lipschitz
    values = [prediction_reg(problem, "output_perturbation", e) for e in (0.1, 1.0, 10.0)]
    assert all(math.isfinite(v) and v > floor for v in values)
    for epsilon, lam in zip((0.1, 1.0, 10.0), values):
        assert lam * R0 ** 2 / 2 == pytest.approx(L * p * 2 * L / (n * lam * epsilon),
                                                  rel=1e-12)
