"""The privacy report's ledger: every release composed into a model's privacy, with its cost,
whose composition is the report's total."""
import math
import warnings

import dp_accounting
import numpy as np
import pytest

pytest.importorskip("sklearn")

from dpsolve import BudgetAccountant  # noqa: E402
from dpsolve.estimators import DPLogisticRegression  # noqa: E402
from dpsolve.preprocessing import PrivateRangeScaler, private_pipeline  # noqa: E402
from dpsolve.privacy import (PrivacyReport, PrivacyStep, PrivacyWarning,  # noqa: E402
                             estimate_row_norm)
from dpsolve.privacy.accounting import epsilon_of  # noqa: E402


def _table(seed=0, n=300, p=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-4.0, 4.0, size=(n, p))
    return X, (X[:, 0] > 0).astype(int)


def test_a_plain_fit_lists_one_step_its_whole_release():
    X, y = _table()
    model = DPLogisticRegression(epsilon=1.0, row_norm=7.0, classes=[0, 1], prior_share=0,
                                 random_state=0).fit(X, y)
    (step,) = model.privacy_report_.steps
    assert isinstance(step, PrivacyStep) and step.name == model.solver_
    assert step.dp_event == model.dp_event_
    assert (step.epsilon, step.delta) == (model.epsilon_, model.delta_)


def test_a_pipeline_with_a_private_scaler_and_a_private_row_bound_lists_three_steps():
    X, y = _table(1)
    budget = BudgetAccountant(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        bound = estimate_row_norm(X, epsilon=0.2, upper=100.0, rng=0, accountant=budget)
        model = private_pipeline(
            PrivateRangeScaler([(-10.0, 10.0)] * 3, epsilon=0.3, random_state=0,
                               accountant=budget),
            DPLogisticRegression(epsilon=1.0, classes=[0, 1], row_norm=bound, random_state=0,
                                 accountant=budget))
        model.fit(X, y)
    report = model[-1].privacy_report_
    names = [step.name for step in report.steps]
    assert len(report.steps) == 3 and names[1] == "row_norm"
    assert names[2] == model.privacy_steps_[0][0]
    assert [s.epsilon for s in report.steps[1:]] == pytest.approx([0.2, 0.3], rel=1e-12)
    # the steps composed are the model's event, and their epsilons its total
    composed = dp_accounting.ComposedDpEvent([step.dp_event for step in report.steps])
    assert composed == model[-1].dp_event_
    assert math.fsum(s.epsilon for s in report.steps) == pytest.approx(report.epsilon,
                                                                      rel=1e-12)
    assert epsilon_of(composed, 0.0, "basic") == pytest.approx(model[-1].epsilon_, rel=1e-12)
    assert report.holds and budget.spent()[0] == pytest.approx(1.5, rel=1e-12)
    summary = report.summary().splitlines()
    assert summary[0] == str(report) and len(summary) == 4
    assert all(name in line for name, line in zip(names, summary[1:]))


def test_a_report_without_a_ledger_is_valid_and_prints_its_total():
    report = PrivacyReport(1.0, 0.0, "paper", 1.0, "basic")
    assert report.steps == () and report.holds
    assert report.summary().splitlines()[1].split() == ["epsilon", "=", "1", "delta", "=",
                                                        "0", "total"]
