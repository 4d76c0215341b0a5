"""The estimators' l1 geometry: ``constraint="l1"`` with ``radius``, ``row_norm`` an l-inf bound,
the number of non-zero coefficients reported (``n_nonzero_``)."""
import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn", minversion="1.6")

from dpsolve.datasets import make_sparse_zipf  # noqa: E402
from dpsolve.estimators import (DPLinearRegression, DPLinearSVC,  # noqa: E402
                                DPLogisticRegression)
from dpsolve.privacy import PrivacyWarning  # noqa: E402


@pytest.fixture(scope="module")
def zipf():
    return make_sparse_zipf(600, 200, words=20, rng=0)


@pytest.mark.parametrize("estimator", [DPLogisticRegression, DPLinearSVC, DPLinearRegression])
def test_l1_without_radius_is_refused_before_the_data(estimator):
    with pytest.raises(ValueError, match="radius must be a number > 0 with constraint='l1'"):
        estimator(constraint="l1", row_norm=1.0).fit(np.full((3, 2), np.nan), [0, 1, 0])


def test_constraint_must_be_l1_or_l2(zipf):
    X, y = zipf
    with pytest.raises(ValueError, match="constraint"):
        DPLogisticRegression(constraint="linf", radius=1.0).fit(X, y)


def test_n_nonzero_counts_the_released_coefficients(zipf):
    X, y = zipf
    model = DPLogisticRegression(row_norm=np.sqrt(20), classes=[-1, 1], random_state=0)
    model.fit(X, y)
    assert model.n_nonzero_ == np.count_nonzero(model.coef_)


def test_row_norm_read_off_the_data_is_the_largest_entry_under_l1():
    X = np.array([[3.0, 4.0], [0.5, -2.0]])
    model = DPLogisticRegression(constraint="l1", radius=1.0, classes=[0, 1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert model._row_norm(X) == 4.0            # l-inf, not the l2 norm 5
    assert any(issubclass(w.category, PrivacyWarning) and "l-inf" in str(w.message)
               for w in caught)


# -- fits on the l1 ball ------------------------------------------------------------------------
def _l1_solvers():
    from dpsolve.solvers import registry
    return [spec.name for spec in registry() if "l1" in spec.constraints]


def test_l1_fit_is_a_sparse_model_in_the_ball(zipf):
    X, y = zipf
    model = DPLogisticRegression(constraint="l1", radius=4.0, row_norm=1.0, classes=[-1, 1],
                                 random_state=0).fit(X, y)
    assert model.solver_ in _l1_solvers()
    # theta = (coef, intercept / s) lies in the l1 ball (rounding of the convex combinations)
    size = np.sum(np.abs(model.coef_)) + abs(model.intercept_[0]) / model.intercept_scale
    assert size <= 4.0 * (1.0 + 1e-12)
    assert model.n_nonzero_ == np.count_nonzero(model.coef_)
    # each Frank-Wolfe step moves towards one vertex: at most one new non-zero per step
    assert 0 < model.n_nonzero_ <= model.fit_.steps < X.shape[1]
    assert model.dp_event_ == model.planned_event(X, y)
    assert model.row_norm_ == 1.0 and model.epsilon_ == 1.0


def test_l1_fit_is_reproducible_and_charged(zipf):
    from dpsolve.privacy import BudgetAccountant
    X, y = zipf
    budget = BudgetAccountant(epsilon=2.0)
    args = dict(constraint="l1", radius=4.0, row_norm=1.0, classes=[-1, 1], random_state=3)
    first = DPLogisticRegression(accountant=budget, **args).fit(X, y)
    second = DPLogisticRegression(**args).fit(X, y)
    assert np.array_equal(first.coef_, second.coef_)
    assert budget.spent()[0] == pytest.approx(1.0)


def test_l1_logistic_regression_is_binary():
    X = np.eye(3).repeat(2, axis=0)
    model = DPLogisticRegression(constraint="l1", radius=1.0, row_norm=1.0, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="with constraint='l1' is binary"):
        model.fit(X, [0, 0, 1, 1, 2, 2])
    assert not model.__sklearn_tags__().classifier_tags.multi_class
    assert DPLogisticRegression().__sklearn_tags__().classifier_tags.multi_class
