"""dpsolve.estimators: scikit-learn's common checks (with the failures privacy makes
inevitable declared), pipelines and sparse input, the privacy plumbing (budget, warnings when a
bound is read off the data), reproducibility, and accuracy against scikit-learn's non-private
models where n is large enough for the noise to be small."""
import math
import pickle
import warnings

import dp_accounting
import numpy as np
import pytest
from scipy import sparse

pytest.importorskip("sklearn", minversion="1.6")
from sklearn.model_selection import cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import Normalizer  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import dpsolve  # noqa: E402
from dpsolve.datasets import make_synthetic  # noqa: E402
from dpsolve.estimators import (DPLinearRegression, DPLinearSVC,  # noqa: E402
                                DPLogisticRegression, expected_failed_checks)
from dpsolve.privacy import BudgetExceededError, PrivacyWarning, estimate_row_norm  # noqa: E402

ESTIMATORS = [DPLogisticRegression(), DPLinearSVC(), DPLinearRegression(),
              DPLogisticRegression(constraint="l1", radius=5.0)]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks,
                         xfail_strict=True)
def test_sklearn_common_checks(estimator, check):
    # the checks fit without public bounds: the PrivacyWarnings are the point elsewhere
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        check(estimator)


def test_expected_failures_have_reasons():
    for est in ESTIMATORS:
        for name, reason in expected_failed_checks(est).items():
            assert name.startswith("check_") and len(reason) > 40


@pytest.fixture(scope="module")
def binary():
    X, y = make_synthetic(4000, 5, rng=0)
    return X, y


def test_public_bounds_fit_without_privacy_warnings(binary):
    X, y = binary
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        est = DPLogisticRegression(row_norm=1.0, classes=[-1, 1], random_state=0).fit(X, y)
    assert est.coef_.shape == (1, 5) and est.intercept_.shape == (1,)
    assert est.epsilon_ == 1.0 and est.delta_ == 0.0 and est.privacy_report_.holds
    assert est.solver_ == dpsolve.choose_solver(
        dpsolve.Problem(X, y, radius=None, reg=1e-3, fit_intercept=True), 1.0).name
    assert est.dp_event_ == est.fit_.dp_event


@pytest.mark.parametrize("missing, match", [("row_norm", "row_norm was not given"),
                                            ("classes", "classes was not given")])
def test_guessed_bounds_warn_and_void_the_guarantee(binary, missing, match):
    # a bound read off the data is covered by no guarantee: the report must not claim one
    X, y = binary
    params = {"row_norm": 1.0, "classes": [-1, 1], missing: None}
    with pytest.warns(PrivacyWarning, match=match):
        est = DPLogisticRegression(random_state=0, **params).fit(X, y)
    assert est.epsilon_ == math.inf and not est.privacy_report_.holds
    assert isinstance(est.dp_event_, dp_accounting.NonPrivateDpEvent)
    assert est.fit_.dp_event is est.dp_event_ and est.fit_.certified_epsilon() == math.inf
    assert est.privacy_report_.epsilon == 1.0           # the noise is still calibrated to 1


def test_private_estimate_is_composed_into_the_release(binary):
    X, y = binary
    bound = estimate_row_norm(X, 0.3, upper=10.0, rng=0)
    est = DPLogisticRegression(epsilon=1.0, row_norm=bound, classes=[-1, 1],
                               random_state=0).fit(X, y)
    assert est.epsilon_ == pytest.approx(1.3) and est.privacy_report_.holds
    assert dpsolve.privacy.epsilon_of(est.dp_event_, 0.0, "basic") == pytest.approx(1.3)
    # a budget not charged for the estimate is charged now, once over repeated fits
    budget = dpsolve.BudgetAccountant(epsilon=5.0)
    est.set_params(accountant=budget)
    est.fit(X, y)
    est.fit(X, y)
    assert budget.spent()[0] == pytest.approx(0.3 + 2 * 1.0)
    labels = [c.labels[0] for c in budget.ledger]
    assert labels.count("private bound estimate") == 1


def test_huge_rows_get_probabilities_not_nan():
    X, y = make_synthetic(300, 3, rng=2)
    y3 = np.arange(300) % 3
    for est, labels in ((DPLogisticRegression(row_norm=1.0, classes=[-1, 1], random_state=0),
                         y),
                        (DPLogisticRegression(row_norm=1.0, classes=[0, 1, 2], reg=0.1,
                                              random_state=0), y3)):
        est.fit(X, labels)
        huge = np.vstack([X[:2] * 1e300, -X[:2] * 1e305, X[:2]])
        proba, log_proba = est.predict_proba(huge), est.predict_log_proba(huge)
        assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
        assert not np.any(np.isnan(log_proba))
        assert np.all(np.isfinite(log_proba[-2:]))
        np.testing.assert_allclose(np.exp(log_proba), proba, atol=1e-12)


def test_label_bound_guessed_warns_and_given_clips():
    X, y = make_synthetic(500, 3, task="regression", rng=1)
    with pytest.warns(PrivacyWarning, match="label_bound was not given"):
        DPLinearRegression(row_norm=1.0, random_state=0).fit(X, y)
    with pytest.warns(UserWarning, match="labels had"):
        est = DPLinearRegression(row_norm=1.0, label_bound=0.1, random_state=0).fit(X, y)
    assert est.label_bound_ == 0.1


def test_same_seed_bit_identical_and_input_untouched(binary):
    X, y = binary
    X0, y0 = X.copy(), y.copy()
    with pytest.warns(UserWarning, match="clipped"):      # every row: B = 0.5 on unit rows
        a = DPLogisticRegression(row_norm=0.5, classes=[-1, 1], random_state=3).fit(X, y)
        b = DPLogisticRegression(row_norm=0.5, classes=[-1, 1], random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)


def test_excess_risk_within_the_solvers_bound():
    # the estimator's fit is the solver's: its excess risk on the estimator's own objective
    # obeys the theorem's bound, a bound on the mean, so by Markov's inequality a draw exceeds
    # 20 times it with probability at most 1/20 (measured at seed 0: 1.9e-5 against 4.7e-4)
    X, y = make_synthetic(20000, 5, rng=2)
    est = DPLogisticRegression(row_norm=1.0, classes=[-1, 1], reg=1e-3, random_state=0)
    fit = est.fit(X, y).fit_
    problem = dpsolve.Problem(X, y, radius=None, reg=1e-3, row_norm=1.0, fit_intercept=True)
    spec = dpsolve.solvers.get(est.solver_)
    bound = spec.bound(problem, None, dpsolve.solvers.plan_fit(spec, problem, None, 1.0))
    risk = dpsolve.excess_risk(problem, fit.theta, dpsolve.reference_minimizer(problem))
    assert risk <= 20 * bound.value


def test_string_labels_and_multinomial():
    X, y = make_synthetic(3000, 4, rng=4)
    labels = np.where(y > 0, "spam", "ham")
    est = DPLogisticRegression(row_norm=1.0, classes=["ham", "spam"], random_state=0)
    assert set(est.fit(X, labels).predict(X)) <= {"ham", "spam"}
    rng = np.random.default_rng(0)
    y3 = rng.integers(0, 3, size=len(y))
    est = DPLogisticRegression(row_norm=1.0, classes=[0, 1, 2], reg=0.1, random_state=0)
    est.fit(X, y3)
    assert est.coef_.shape == (3, 4) and est.intercept_.shape == (3,)
    np.testing.assert_allclose(est.predict_proba(X).sum(axis=1), 1.0)


def test_binary_svc_refuses_three_classes():
    X, y = make_synthetic(100, 3, rng=0)
    with pytest.raises(ValueError, match="exactly 2 labels"):
        DPLinearSVC(classes=[0, 1, 2]).fit(X, y)


def test_bad_solver_refused_before_fit(binary):
    X, y = binary
    with pytest.raises(ValueError, match="solver must be 'auto' or one of"):
        DPLogisticRegression(solver="multiparty_gd", row_norm=1.0).fit(X, y)
    with pytest.raises(ValueError, match="solver_options must not set 'delta'"):
        DPLogisticRegression(solver="clipped_gd", row_norm=1.0, classes=[-1, 1],
                             solver_options={"delta": 1e-5}).fit(X, y)


def test_solver_options_pass_through(binary):
    X, y = binary
    est = DPLogisticRegression(1.0, 1e-6, solver="clipped_gd", row_norm=1.0, radius=5.0,
                               classes=[-1, 1], solver_options={"steps": 7}, random_state=0)
    assert est.fit(X, y).fit_.steps == 7 and est.solver_ == "clipped_gd"


def test_sparse_input_matches_dense(binary):
    X, y = binary
    dense = DPLogisticRegression(row_norm=1.0, classes=[-1, 1], random_state=5).fit(X, y)
    csr = DPLogisticRegression(row_norm=1.0, classes=[-1, 1], random_state=5)
    csr.fit(sparse.csr_matrix(X), y)
    np.testing.assert_allclose(csr.coef_, dense.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(csr.predict(sparse.csr_matrix(X)), dense.predict(X))


def test_pipeline_cross_validation_charges_one_budget(binary):
    X, y = binary
    budget = dpsolve.BudgetAccountant(epsilon=3.0)
    model = make_pipeline(Normalizer(), DPLogisticRegression(
        epsilon=0.5, row_norm=1.0, classes=[-1, 1], accountant=budget, random_state=0))
    scores = cross_val_score(model, X, y, cv=5)
    assert scores.shape == (5,)
    assert len(budget.ledger) == 5
    assert budget.spent()[0] == pytest.approx(2.5)
    model.fit(X, y)                    # the sixth fit spends what was left
    assert budget.spent()[0] == pytest.approx(3.0)
    with pytest.raises(BudgetExceededError, match="needs epsilon=0.5"):
        model.fit(X, y)
    assert len(budget.ledger) == 6


def test_budget_refuses_before_the_solver_runs(binary, monkeypatch):
    import dataclasses

    import dpsolve.solvers.objective_perturbation as module

    def boom(*args, **kwargs):
        raise AssertionError("the solver ran")
    monkeypatch.setattr(module, "SPEC", dataclasses.replace(module.SPEC, run=boom))
    X, y = binary
    budget = dpsolve.BudgetAccountant(epsilon=0.5)
    est = DPLogisticRegression(epsilon=1.0, row_norm=1.0, classes=[-1, 1], accountant=budget)
    with pytest.raises(BudgetExceededError, match="objective_perturbation"):
        est.fit(X, y)
    assert budget.ledger == () and not hasattr(est, "coef_")


def test_private_row_norm_estimate(binary):
    X, y = binary
    budget = dpsolve.BudgetAccountant(epsilon=1.2)
    bound = estimate_row_norm(X, 0.1, upper=10.0, rng=0, accountant=budget)
    est = DPLogisticRegression(row_norm=bound, classes=[-1, 1], random_state=0,
                               accountant=budget).fit(X, y)
    assert est.row_norm_ == bound.value
    assert budget.spent()[0] == pytest.approx(1.1)


def test_pickle_round_trip(binary):
    X, y = binary
    est = DPLogisticRegression(row_norm=1.0, classes=[-1, 1], random_state=0).fit(X, y)
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    assert back.fit_.settings == est.fit_.settings


@pytest.mark.slow
def test_user_guide_example_runs_and_prints_what_the_page_says():
    # the page's example is run as written; its printed budget report is on the page
    import contextlib
    import io
    import re
    from pathlib import Path
    page = (Path(__file__).resolve().parents[1] / "docs" / "user_guide.md").read_text()
    examples = re.findall(r"```python\n(.*?)```\n\nprints\n\n```text\n(.*?)```", page, re.S)
    assert len(examples) >= 2          # the defaults first, then one budget
    for code, printed in examples:
        buffer = io.StringIO()
        with warnings.catch_warnings(), contextlib.redirect_stdout(buffer):
            warnings.simplefilter("ignore")
            exec(compile(code, "user_guide.md", "exec"), {})
        assert buffer.getvalue() == printed


@pytest.mark.parametrize("make", [
    lambda: DPLogisticRegression(row_norm=1.0, classes=[-1, 1], random_state=0),
    lambda: DPLogisticRegression(0.5, 1e-6, solver="clipped_gd", radius=3.0, row_norm=1.0,
                                 classes=[-1, 1], random_state=0),
    lambda: DPLogisticRegression(row_norm=1.0, classes=[-1, 0, 1], reg=0.1, random_state=0),
    lambda: DPLinearSVC(row_norm=1.0, classes=[-1, 1], random_state=0),
    lambda: DPLinearRegression(row_norm=1.0, label_bound=1.0, random_state=0)],
    ids=["logistic", "clipped_gd", "multinomial", "svc", "regression"])
def test_metadata_is_the_same_on_neighbouring_datasets(make):
    # with public bounds, everything but the noisy coefficients is a function of public
    # constants: replacing one record by an extreme one (a long row clipped to the bound, the
    # other label, a label at the bound) changes none of it
    X, y = make_synthetic(600, 4, rng=3)
    regression = isinstance(make(), DPLinearRegression)
    if regression:
        y = np.clip(X @ np.ones(4) / 4, -1, 1)
    X2, y2 = X.copy(), y.copy()
    X2[0] = 50.0 * np.ones(4)
    y2[0] = 1.0 if regression else -y[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)     # the clipped row's count
        a, b = make().fit(X, y), make().fit(X2, y2)
    for name in ("solver_", "row_norm_", "epsilon_", "delta_", "n_features_in_"):
        assert getattr(a, name) == getattr(b, name), name
    assert repr(a.dp_event_) == repr(b.dp_event_)
    assert a.privacy_report_ == b.privacy_report_
    assert dict(a.fit_.settings).keys() == dict(b.fit_.settings).keys()
    for key, value in a.fit_.settings.items():
        if not isinstance(value, np.ndarray):
            assert value == b.fit_.settings[key], key
    assert a.coef_.shape == b.coef_.shape and np.shape(a.intercept_) == np.shape(b.intercept_)
    if hasattr(a, "classes_"):
        np.testing.assert_array_equal(a.classes_, b.classes_)


def test_a_parallel_group_is_an_estimators_budget(binary):
    # two fits on disjoint halves, charged to one group: the group costs one fit
    X, y = binary
    budget = dpsolve.BudgetAccountant(epsilon=1.5)
    with budget.parallel() as group:
        for rows in (slice(0, 2000), slice(2000, 4000)):
            DPLogisticRegression(row_norm=1.0, classes=[-1, 1], accountant=group).fit(
                X[rows], y[rows])
    assert budget.spent()[0] == pytest.approx(1.0)


@pytest.mark.parametrize("make", [
    lambda: DPLogisticRegression(0.5, classes=[-1, 1], random_state=0),
    lambda: DPLinearSVC(0.5, row_norm=1.0, random_state=0),
    lambda: DPLinearRegression(0.5, 1e-6, row_norm=1.0, random_state=0)])
def test_planned_event_is_not_private_where_a_bound_is_read_off_the_data(make):
    # the plan would depend on the data's row norm, labels or label range: no guarantee, as
    # the fit's dp_event_ says
    X, y = make_synthetic(200, 3, rng=12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        planned = make().planned_event(X, y)
        fitted = make().fit(X, y).dp_event_
    assert planned == fitted == dp_accounting.NonPrivateDpEvent()


@pytest.mark.parametrize("make", [
    lambda budget: DPLogisticRegression(0.5, row_norm=1.0, classes=[-1, 1], accountant=budget,
                                        random_state=0),
    lambda budget: DPLogisticRegression(0.5, row_norm=1.0, classes=[-1, 1], prior_share=0.2,
                                        accountant=budget, random_state=0),
    lambda budget: DPLinearSVC(0.5, row_norm=1.0, classes=[-1, 1], accountant=budget,
                               random_state=0),
    lambda budget: DPLinearRegression(0.5, 1e-6, row_norm=1.0, label_bound=1.0,
                                      accountant=budget, random_state=0)])
def test_planned_event_is_what_the_fit_releases_without_running_it(make):
    from dpsolve.privacy import BudgetAccountant
    X, y = make_synthetic(400, 3, rng=11)
    if isinstance(make(None), DPLinearRegression):
        y = np.clip(X @ np.array([0.4, -0.2, 0.3]), -1.0, 1.0)
    budget = BudgetAccountant(5.0, 1e-5)
    model = make(budget)
    planned = model.planned_event(X, y)
    assert budget.ledger == () and not hasattr(model, "coef_")     # nothing charged or fitted
    assert model.fit(X, y).dp_event_ == planned
    assert len(budget.ledger) == 1 and repr(budget.ledger[0].events[0]) == repr(planned)
    with pytest.raises(ValueError, match="epsilon"):               # as fit refuses it
        make(None).set_params(epsilon=-1.0).planned_event(X, y)
