"""PrivateCategoryEncoder: public candidates, their counts released with exact discrete Laplace
noise (l1 sensitivity 2 per column under replace-one neighbours), the frequent ones kept; only
the kept lists, the event and epsilon stored; composed into a private pipeline."""
import itertools
import math
import pickle
import warnings

import dp_accounting
import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from dpsolve import BudgetAccountant  # noqa: E402
from dpsolve.estimators import DPLogisticRegression  # noqa: E402
from dpsolve.preprocessing import (PrivateCategoryEncoder, PrivatePipeline,  # noqa: E402
                                   PublicRangeScaler, private_pipeline)
from dpsolve.preprocessing.private_category_encoder import (  # noqa: E402
    COUNT_SENSITIVITY, _candidate_counts)
from dpsolve.privacy import PrivacyWarning  # noqa: E402
from dpsolve.privacy.budget import BudgetExceededError  # noqa: E402
from dpsolve.privacy.events import PureDpEvent  # noqa: E402

#: Seeded (scikit-learn's checks compare two fits); one candidate list for every column.
@parametrize_with_checks([PrivateCategoryEncoder([0, 1, 2], epsilon=1.0, min_frequency=0,
                                                 random_state=0)])
def test_sklearn_common_checks(estimator, check):
    check(estimator)


PUBLIC = {"candidates", "epsilon", "min_frequency", "unknown", "random_state", "accountant",
          "n_features_in_"}
RELEASE = {"categories_", "epsilon_", "dp_event_"}


def _column(counts):
    """An object column holding each value its count of times."""
    return np.array([[v] for v, c in counts.items() for _ in range(c)], dtype=object)


@pytest.mark.parametrize("seed", [None, 7])
def test_neighbouring_tables_leave_the_same_metadata_and_only_the_release(seed):
    # "b" sits at the threshold (20 of n = 100): one record moved off it, to "a" or to a
    # value that is no candidate, or onto it from a missing cell
    table = _column({"a": 40, "b": 20, "c": 5, "z": 30, None: 5})
    moved = [("b", "a"), ("b", "z"), (None, "b")]
    for old, new in moved:
        other = table.copy()
        other[next(i for i, v in enumerate(table[:, 0]) if v == old), 0] = new
        fitted = [PrivateCategoryEncoder([["a", "b", "c"]], epsilon=0.5, min_frequency=0.2,
                                         random_state=seed).fit(t) for t in (table, other)]
        for encoder in fitted:
            assert set(vars(encoder)) == PUBLIC | RELEASE
            assert encoder.random_state == seed          # no seed the user did not give
            assert set(vars(pickle.loads(pickle.dumps(encoder)))) == PUBLIC | RELEASE
            (kept,) = encoder.categories_
            assert isinstance(kept, list) and set(kept) <= {"a", "b", "c"}
            assert encoder.transform(table).shape == (100, len(kept) + 1)
        a, b = fitted
        assert a.dp_event_ == b.dp_event_ and a.epsilon_ == b.epsilon_ == 0.5


def test_the_event_states_the_split():
    table = np.array([["a", "x", "p", "u"]] * 10, dtype=object)
    encoder = PrivateCategoryEncoder(["a", "x"], epsilon=2.0, random_state=0).fit(table)
    assert encoder.dp_event_ == dp_accounting.ComposedDpEvent([PureDpEvent(0.5)] * 4)


def test_the_count_sensitivity_is_two_by_exhaustive_search():
    """Every table of 3 records over {a, b, a non-candidate, missing}, every record replaced by
    every value: the candidates' counts move by at most 2 in l1, and by 2 when a candidate is
    replaced by another."""
    values = ["a", "b", "z", None]
    largest = 0
    for rows in itertools.product(values, repeat=3):
        counts = _candidate_counts(rows, ["a", "b"])
        for i, new in itertools.product(range(3), values):
            other = _candidate_counts(rows[:i] + (new,) + rows[i + 1:], ["a", "b"])
            largest = max(largest, sum(abs(u - v) for u, v in zip(counts, other)))
    assert largest == COUNT_SENSITIVITY == 2


def test_the_kept_candidates_are_within_the_noises_tail():
    """Discrete Laplace noise of scale s = 2 q / epsilon (here 2) reaches t in absolute value
    with probability below 2 exp(-t / s): at t = 60 below 2e-13. So a candidate 61 or more
    above the threshold is kept, and one 61 or more below it dropped, at every seed."""
    table = _column({"a": 300, "b": 39, "c": 0, "d": 161, "z": 500, None: 0})
    n = len(table)
    for seed in range(20):
        encoder = PrivateCategoryEncoder([["a", "b", "c", "d"]], epsilon=1.0,
                                         min_frequency=100 / n, random_state=seed).fit(table)
        assert encoder.categories_ == [["a", "d"]]
    out = encoder.transform(np.array([["z"], ["b"], [None], ["d"]], dtype=object))
    assert out.tolist() == [[0, 0, 1], [0, 0, 1], [0, 0, 1], [0, 1, 0]]
    assert encoder.get_feature_names_out(["colour"]).tolist() == [
        "colour_a", "colour_d", "colour_<unknown>"]


def test_a_candidate_short_of_the_threshold_is_kept_at_the_noises_rate():
    """A count d below the threshold is kept when the noise is at least d: with probability
    r^d / (1 + r), r = exp(-epsilon / 2) for one column, 0.229 at epsilon = 1 and d = 2 (0.099
    if the noise ignored that a replaced record moves two counts). Over 1200 independent
    counts the rate lies within 4.5 standard errors of 0.229."""
    table = _column({"a": 5, "b": 5, "c": 5})
    rng = np.random.default_rng(11)
    encoder = PrivateCategoryEncoder([["a", "b", "c"]], epsilon=1.0, min_frequency=7,
                                     random_state=rng)
    kept = sum(len(encoder.fit(table).categories_[0]) for _ in range(400))
    r = math.exp(-0.5)
    p = r ** 2 / (1 + r)
    assert abs(kept / 1200 - p) <= 4.5 * math.sqrt(p * (1 - p) / 1200)


def test_the_budget_is_charged_once_before_the_table_is_read():
    table = _column({"a": 30, "b": 10})
    budget = BudgetAccountant(1.0)
    PrivateCategoryEncoder(["a", "b"], epsilon=0.4, accountant=budget, random_state=0).fit(table)
    assert budget.spent()[0] == pytest.approx(0.4)
    small = BudgetAccountant(0.3)
    refused = PrivateCategoryEncoder(["a", "b"], epsilon=0.4, accountant=small)
    with pytest.raises(BudgetExceededError):
        refused.fit(table)
    assert small.spent()[0] == 0.0 and not hasattr(refused, "categories_")


def test_composed_in_a_private_pipeline_with_its_step_in_the_ledger():
    rng = np.random.default_rng(12)
    n = 400
    X = np.empty((n, 2), dtype=object)
    X[:, 0] = rng.uniform(0.0, 10.0, n)
    X[:, 1] = rng.choice(["red", "green", "blue", "mauve", None], n, p=[.5, .3, .1, .05, .05])
    y = (X[:, 0].astype(float) > 5).astype(int)
    budget = BudgetAccountant(2.0)
    preprocess = ColumnTransformer([
        ("number", PublicRangeScaler([(0.0, 10.0)]), [0]),
        ("colour", PrivateCategoryEncoder([["red", "green", "blue", "mauve"]], epsilon=0.3,
                                          min_frequency=0.08, random_state=0,
                                          accountant=budget), [1])])
    model = private_pipeline(preprocess, DPLogisticRegression(
        epsilon=1.0, classes=[0, 1], random_state=0, accountant=budget))
    assert isinstance(model, PrivatePipeline) and model[-1].row_norm == pytest.approx(
        math.sqrt(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        model.fit(X, y)
    report = model[-1].privacy_report_
    assert report.holds and model[-1].epsilon_ == pytest.approx(1.3, rel=1e-12)
    assert budget.spent()[0] == pytest.approx(1.3, rel=1e-12)        # charged once each
    assert [s.epsilon for s in report.steps][1:] == [0.3]
    assert report.steps[1].dp_event == dp_accounting.ComposedDpEvent([PureDpEvent(0.3)])
    assert dp_accounting.ComposedDpEvent([s.dp_event for s in report.steps]) == (
        model[-1].dp_event_)


def test_the_page_example_prints_what_the_page_shows():
    import contextlib
    import io
    import pathlib
    import re
    page = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "preprocessing.md").read_text(
        encoding="utf-8")
    code, printed = re.search(r"## Private category frequencies: `PrivateCategoryEncoder`\n.*?"
                              r"```python\n(.*?)```\n\nprints\n\n```text\n(.*?)```", page,
                              re.S).groups()
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(code, "docs/preprocessing.md", "exec"), {})
    assert buffer.getvalue() == printed
