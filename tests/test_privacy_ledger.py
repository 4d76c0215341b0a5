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


def _search(X, y, bound, **options):
    from dpsolve.private_selection import PrivateGridSearch
    return PrivateGridSearch(
        DPLogisticRegression(epsilon=0.5, row_norm=bound, classes=[-1, 1], prior_share=0),
        {"reg": [0.01, 0.1]}, score_epsilon=0.1, random_state=0, **options).fit(X, y)


def test_a_pure_search_lists_its_bound_selection_and_refit_whose_epsilons_add_up():
    from dpsolve.datasets import make_synthetic
    X, y = make_synthetic(600, 3, rng=2)
    bound = estimate_row_norm(X, 0.2, upper=4.0, rng=0)
    search = _search(X, y, bound, refit=True)
    report = search.best_estimator_.privacy_report_
    assert [step.name for step in report.steps] == [
        "row_norm",
        ("private selection (liu_talwar: E[K] = 2 runs over 2 settings, each a fit and a "
         "private accuracy score at epsilon 0.1)"),
        "refit of the selected setting on all the records"]
    # pure DP: the bound's 0.2, Liu-Talwar's 3 (0.5 + 0.1) and the refit's 0.5, at delta 0,
    # composed exactly by addition (nothing below the claim line but the steps)
    assert [s.epsilon for s in report.steps] == pytest.approx([0.2, 1.8, 0.5], rel=1e-12)
    assert [s.delta for s in report.steps] == [0.0, 0.0, 0.0]
    composed = dp_accounting.ComposedDpEvent([step.dp_event for step in report.steps])
    assert composed == search.dp_event_ == search.best_estimator_.dp_event_
    assert report.steps[0].dp_event is bound.dp_event
    assert math.fsum(s.epsilon for s in report.steps) == pytest.approx(search.epsilon_,
                                                                      rel=1e-12)
    assert report.certified_by == "basic" and len(report.summary().splitlines()) == 4


def test_a_search_at_delta_lists_parts_each_at_delta_and_prints_the_composed_total():
    from dp_accounting import rdp
    from dp_accounting.dp_event import RepeatAndSelectDpEvent

    from dpsolve.datasets import make_synthetic
    from dpsolve.privacy.accounting import _rdp_event
    X, y = make_synthetic(600, 3, rng=2)
    bound = estimate_row_norm(X, 0.2, upper=4.0, rng=0)
    search = _search(X, y, bound, refit=True, delta=1e-5, method="negative_binomial",
                     shape=0.5)
    report = search.best_estimator_.privacy_report_
    row, selection, refit = report.steps
    assert selection.name.startswith("private selection (negative_binomial, shape 0.5: E[K] "
                                     "= 2 runs over 2 settings")
    assert (row.epsilon, row.delta) == (0.2, 0.0)
    assert selection.delta == refit.delta == 1e-5
    assert isinstance(selection.dp_event, RepeatAndSelectDpEvent)
    assert selection.dp_event == search.selection_.dp_event
    # the refit is the setting's own fit on all the records (both settings plan the same)
    planned = DPLogisticRegression(epsilon=0.5, row_norm=bound, classes=[-1, 1], reg=0.01,
                                   prior_share=0).planned_event(X, y)
    assert refit.dp_event == planned

    def rdp_epsilon(*events):              # dp_accounting's Renyi accountant, read directly
        accountant = rdp.RdpAccountant(
            neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
        for event in events:
            accountant.compose(_rdp_event(event))
        return accountant.get_epsilon(1e-5)
    assert selection.epsilon == pytest.approx(rdp_epsilon(selection.dp_event), rel=1e-12)
    assert refit.epsilon == pytest.approx(epsilon_of(planned, 1e-5, "pld"), rel=1e-12)
    assert refit.epsilon <= 0.5
    # the total composes the selection and the refit at delta once: below the parts' sum
    total = rdp_epsilon(selection.dp_event, refit.dp_event) + 0.2
    assert search.epsilon_ == report.epsilon == pytest.approx(total, rel=1e-12)
    assert search.epsilon_ < math.fsum(s.epsilon for s in report.steps)
    lines = report.summary().splitlines()
    assert len(lines) == 5 and lines[-1].endswith("total (composed, not the steps' sum)")
    assert lines[-1].split()[2] == f"{search.epsilon_:.4g}"


@pytest.mark.filterwarnings("ignore:1 of 480 rows had norm above:UserWarning")
def test_a_search_ledger_is_the_same_on_neighbouring_datasets():
    # the ledger is release surface: its names, epsilons and events are public choices
    from dpsolve.datasets import make_synthetic
    X, y = make_synthetic(600, 3, rng=2)
    X2, y2 = X.copy(), y.copy()
    X2[3], y2[3] = 40.0, -y[3]                     # clipped to the bound, label flipped
    bound = estimate_row_norm(X, 0.2, upper=4.0, rng=0)      # one release, given to both
    ledgers = [[(s.name, s.epsilon, s.delta, repr(s.dp_event))
                for s in _search(*data, bound, delta=1e-6).best_estimator_.privacy_report_.steps]
               for data in ((X, y), (X2, y2))]
    assert ledgers[0] == ledgers[1] and len(ledgers[0]) == 2


def test_the_pages_search_ledger_prints_what_the_page_shows():
    # docs/preprocessing.md's search at delta > 0, run as written (under a second)
    import contextlib
    import io
    import pathlib
    import re
    page = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "preprocessing.md").read_text(
        encoding="utf-8")
    code, printed = re.search(r"At δ = 0 \(pure DP.*?```python\n(.*?)```\n\nprints\n\n"
                              r"```text\n(.*?)```", page, re.S).groups()
    buffer = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(buffer):
        warnings.simplefilter("error")                 # every bound is public
        exec(compile(code, "docs/preprocessing.md", "exec"), {})
    assert buffer.getvalue() == printed
    assert printed.splitlines()[-1].endswith("total (composed, not the steps' sum)")


def test_a_regressions_ledger_names_the_labels_mean_it_releases():
    from dpsolve.estimators import DPLinearRegression
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(300, 2)) / math.sqrt(2)
    y = np.clip(X @ [0.5, -0.3] + 0.1 * rng.normal(size=300), -1, 1)
    model = DPLinearRegression(epsilon=1.0, row_norm=1.0, label_bound=1.0,
                               random_state=0).fit(X, y)
    assert model.privacy_report_.steps[0].name == f"{model.solver_} and the labels' mean"
