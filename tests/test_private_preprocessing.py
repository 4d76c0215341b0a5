"""dpsolve.preprocessing's private transformers: scikit-learn's checks of PrivateRangeScaler
(seeded), its release surface (neighbouring tables built to stress it leave the same metadata;
the fitted state is only the release), its quantiles against the mechanism's rank guarantee,
the budget charged once, and the cost composed into a pipeline's model, checked against
dp_accounting."""
import math
import pickle
import warnings

import dp_accounting
import numpy as np
import pytest

pytest.importorskip("sklearn", minversion="1.6")
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from dpsolve import BudgetAccountant  # noqa: E402
from dpsolve.estimators import DPLogisticRegression  # noqa: E402
from dpsolve.preprocessing import (PrivatePipeline, PrivateRangeScaler,  # noqa: E402
                                   PrivateStandardScaler, PublicCategoryEncoder, PublicConstantImputer,
                                   private_pipeline)
from dpsolve.privacy import PrivacyWarning  # noqa: E402
from dpsolve.privacy.budget import BudgetExceededError  # noqa: E402
from dpsolve.privacy.accounting import epsilon_of  # noqa: E402
from dpsolve.privacy.events import PureDpEvent  # noqa: E402

#: Seeded (a private fit is random: scikit-learn's checks compare two fits); one outer range
#: for every column (the checks' tables have from 1 to 20 columns).
TRANSFORMERS = [PrivateRangeScaler((-10, 10), epsilon=1.0, feature_range=(-1, 1),
                                   random_state=0),
                PrivateStandardScaler((-10, 10), epsilon=1.0, random_state=0)]

#: The fitted state: the public parameters, the schema, and the release.
PUBLIC = {"outer_ranges", "epsilon", "quantiles", "feature_range", "random_state", "accountant",
          "n_features_in_"}
RELEASE = {"ranges_", "epsilon_", "dp_event_"}


@parametrize_with_checks(TRANSFORMERS)
def test_sklearn_common_checks(estimator, check):
    check(estimator)


def _stress_pair(rng, n=300, p=3, low=-5.0, high=5.0):
    """Two tables differing in one record, moved to the outer range's top corner."""
    table = rng.uniform(-1.0, 1.0, size=(n, p))
    other = table.copy()
    other[0] = high
    return table, other


@pytest.mark.parametrize("seed", [None, 7])
def test_neighbouring_tables_leave_the_same_metadata_and_only_the_release(seed):
    rng = np.random.default_rng(1)
    outer = [(-5.0, 5.0)] * 3
    for table, other in [_stress_pair(rng), _stress_pair(rng)[::-1]]:
        fitted = [PrivateRangeScaler(outer, epsilon=0.5, random_state=seed).fit(t)
                  for t in (table, other)]
        for scaler in fitted:
            assert set(vars(scaler)) == PUBLIC | RELEASE
            assert scaler.random_state == seed          # no seed the user did not give
            assert set(vars(pickle.loads(pickle.dumps(scaler)))) == PUBLIC | RELEASE
        a, b = fitted
        assert a.ranges_.shape == b.ranges_.shape == (3, 2)
        assert a.ranges_.dtype == b.ranges_.dtype == np.float64
        assert a.dp_event_ == b.dp_event_ and a.epsilon_ == b.epsilon_ == 0.5
        assert a.transform(table).shape == b.transform(other).shape


def test_the_event_states_the_split():
    scaler = PrivateRangeScaler([(0, 1)] * 4, epsilon=2.0, random_state=0).fit(
        np.random.default_rng(0).uniform(size=(50, 4)))
    assert scaler.dp_event_ == dp_accounting.ComposedDpEvent(
        [PureDpEvent(2.0 / 8)] * 8)


def test_the_released_ends_are_within_the_mechanisms_rank_guarantee():
    """At epsilon e per quantile the exponential mechanism lands more than t ranks from the
    q n-th value with probability at most (n + 3) exp(-e t / 2): at e = 100, t = 2 and
    n = 1000 that is below 1e-40, so the ends lie between the values of ranks q n -+ 2."""
    rng = np.random.default_rng(2)
    n = 1000
    table = rng.normal(size=(n, 1))
    scaler = PrivateRangeScaler([(-10, 10)], epsilon=200.0, quantiles=(0.1, 0.9),
                                random_state=3).fit(table)
    values = np.sort(table[:, 0])
    for end, q in zip(scaler.ranges_[0], (0.1, 0.9)):
        k = int(q * n)
        assert values[k - 3] <= end <= values[k + 2]


def test_the_output_stays_in_the_feature_range_and_the_bound_is_public():
    rng = np.random.default_rng(4)
    scaler = PrivateRangeScaler((-1, 1), epsilon=1.0, feature_range=(-1, 1),
                                random_state=0).fit(rng.uniform(-1, 1, size=(100, 5)))
    out = scaler.transform(rng.normal(scale=100.0, size=(200, 5)))
    assert out.min() >= -1.0 and out.max() <= 1.0
    assert np.max(np.linalg.norm(out, axis=1)) <= scaler.row_norm_bound() == math.sqrt(5)
    assert PrivateRangeScaler([(0, 1)] * 5, epsilon=1.0).row_norm_bound("linf") == 1.0


def test_coinciding_quantiles_fall_back_to_the_outer_range():
    # every value above the outer range: both ends are released at its top (clipping)
    scaler = PrivateRangeScaler([(0, 1)], epsilon=100.0, random_state=0).fit(
        np.full((200, 1), 5.0))
    assert scaler.ranges_.tolist() == [[0.0, 1.0]]


def test_the_budget_is_charged_once_before_the_table_is_read():
    table = np.random.default_rng(5).uniform(size=(40, 2))
    budget = BudgetAccountant(1.0)
    scaler = PrivateRangeScaler([(0, 1)] * 2, epsilon=0.4, accountant=budget, random_state=0)
    scaler.fit(table)
    assert budget.spent()[0] == pytest.approx(0.4)
    small = BudgetAccountant(0.3)
    refused = PrivateRangeScaler([(0, 1)] * 2, epsilon=0.4, accountant=small)
    with pytest.raises(BudgetExceededError):
        refused.fit(table)
    assert small.spent()[0] == 0.0 and not hasattr(refused, "ranges_")


def _raw_table(rng, n, pandas):
    return pandas.DataFrame({
        "amount": np.where(rng.random(n) < 0.1, np.nan, rng.lognormal(6.0, 1.0, n)),
        "age": rng.integers(18, 90, n).astype(float),
        "colour": rng.choice(["red", "green", "blue", None], n)})


def _private_preprocess(epsilon, accountant=None):
    numbers = make_pipeline(PublicConstantImputer([0.0, 40.0]),
                            PrivateRangeScaler([(0.0, 1e5), (0.0, 150.0)], epsilon=epsilon,
                                               random_state=0, accountant=accountant))
    return ColumnTransformer([("numbers", numbers, ["amount", "age"]),
                              ("colour", PublicCategoryEncoder([["red", "green", "blue"]]),
                               ["colour"])])


def test_raw_dataframe_through_a_private_pipeline_composes_every_cost():
    pandas = pytest.importorskip("pandas")
    rng = np.random.default_rng(6)
    X = _raw_table(rng, 400, pandas)
    y = np.where(X["age"].to_numpy() > 50, 1, 0)
    budget = BudgetAccountant(2.0)
    model = private_pipeline(_private_preprocess(0.25, budget), DPLogisticRegression(
        epsilon=1.0, classes=[0, 1], random_state=0, accountant=budget))
    assert isinstance(model, PrivatePipeline) and model[-1].row_norm == pytest.approx(math.sqrt(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        model.fit(X, y)
    final = model[-1]
    assert final.privacy_report_.holds
    assert final.epsilon_ == pytest.approx(1.25, rel=1e-12)
    # the model's event is made of pure-DP parts, the scaler's 2 x 2 and the fit's; their
    # epsilons add up to epsilon_ (basic composition, exact for pure DP), and dp_accounting's
    # PLD accountant (each part read as randomized response) certifies no more
    leaves = []
    stack = [final.dp_event_]
    while stack:
        event = stack.pop()
        if isinstance(event, dp_accounting.ComposedDpEvent):
            stack.extend(event.events)
        else:
            leaves.append(event)
    assert all(isinstance(e, PureDpEvent) for e in leaves)
    assert math.fsum(e.epsilon for e in leaves) == pytest.approx(1.25, rel=1e-12)
    assert sum(e == PureDpEvent(0.0625) for e in leaves) == 4
    assert epsilon_of(final.dp_event_, 0.0, "basic") == pytest.approx(1.25, rel=1e-12)
    assert epsilon_of(final.dp_event_, 1e-9, "pld") <= 1.25 * (1 + 1e-6)
    assert budget.spent()[0] == pytest.approx(1.25, rel=1e-12)      # charged once
    assert [e for _, e in model.privacy_steps_] == pytest.approx([0.25, 1.0])
    assert model.predict(X).shape == (400,)


def test_a_private_step_needs_the_estimators_budget():
    budget = BudgetAccountant(2.0)
    model = private_pipeline(PrivateRangeScaler([(0, 1)] * 2, epsilon=0.1),
                             DPLogisticRegression(epsilon=1.0, classes=[0, 1],
                                                  accountant=budget))
    with pytest.raises(ValueError, match="accountant must be the estimator's budget"):
        model.fit(np.zeros((10, 2)), np.arange(10) % 2)
    assert budget.spent()[0] == 0.0


def test_private_grid_search_composes_the_scalers_release_once():
    from dpsolve.private_selection import PrivateGridSearch
    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    scaler = PrivateRangeScaler([(-10, 10)] * 3, epsilon=0.3, random_state=0).fit(X)
    search = PrivateGridSearch(
        DPLogisticRegression(row_norm=scaler.row_norm_estimate(), classes=[0, 1]),
        {"epsilon": [0.5, 1.0]}, score_epsilon=0.1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        search.fit(scaler.transform(X), y)
    without = PrivateGridSearch(DPLogisticRegression(row_norm=math.sqrt(3), classes=[0, 1]),
                                {"epsilon": [0.5, 1.0]}, score_epsilon=0.1,
                                random_state=0).fit(scaler.transform(X), y)
    assert search.epsilon_ == pytest.approx(without.epsilon_ + 0.3, rel=1e-9)
    inside = private_pipeline(PrivateRangeScaler([(-10, 10)] * 3, epsilon=0.3),
                              DPLogisticRegression(classes=[0, 1]))
    with pytest.raises(ValueError, match="fitted privately.*put it before the search"):
        PrivateGridSearch(inside, {"dplogisticregression__epsilon": [1.0]}).fit(X, y)


def test_the_page_example_prints_what_the_page_shows():
    import contextlib
    import io
    import pathlib
    import re
    pytest.importorskip("pandas")
    page = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "preprocessing.md").read_text(
        encoding="utf-8")
    code, printed = re.search(r"## Private ranges: `PrivateRangeScaler`\n.*?```python\n(.*?)```"
                              r"\n\nprints\n\n```text\n(.*?)```", page, re.S).groups()
    buffer = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(buffer):
        warnings.simplefilter("error", PrivacyWarning)     # no bound is read off the data
        exec(compile(code, "docs/preprocessing.md", "exec"), {})
    assert buffer.getvalue() == printed


def test_a_composed_release_is_paid_only_when_all_its_parts_were_charged():
    from dpsolve.privacy import PrivateEstimate
    from dpsolve.privacy.budget import charge
    first, second = PureDpEvent(0.1), PureDpEvent(0.2)
    budget = BudgetAccountant(5.0)
    budget.spend(first, neighbours="replace_one")
    release = PrivateEstimate(1.0, 0.3, dp_accounting.ComposedDpEvent([first, second]))
    charge(budget, PureDpEvent(0.5), neighbours="replace_one", label="fit",
           estimates=[release])
    assert budget.spent()[0] == pytest.approx(0.1 + 0.3 + 0.5)    # second unpaid: all of it
    charge(budget, PureDpEvent(0.5), neighbours="replace_one", label="fit",
           estimates=[release])
    assert budget.spent()[0] == pytest.approx(1.4)                 # now paid: the fit alone


# -- the private standard scaler ----------------------------------------------------------------
STANDARD_PUBLIC = {"ranges", "epsilon", "clip", "random_state", "accountant", "n_features_in_"}
STANDARD_RELEASE = {"mean_", "scale_", "epsilon_", "dp_event_"}


@pytest.mark.parametrize("seed", [None, 7])
def test_standard_scaler_neighbours_leave_the_same_metadata_and_only_the_release(seed):
    rng = np.random.default_rng(8)
    for table, other in [_stress_pair(rng), _stress_pair(rng)[::-1]]:
        fitted = [PrivateStandardScaler([(-5.0, 5.0)] * 3, epsilon=0.5,
                                        random_state=seed).fit(t) for t in (table, other)]
        for scaler in fitted:
            assert set(vars(scaler)) == STANDARD_PUBLIC | STANDARD_RELEASE
            assert scaler.random_state == seed
            assert set(vars(pickle.loads(pickle.dumps(scaler)))) == (
                STANDARD_PUBLIC | STANDARD_RELEASE)
            assert np.all(scaler.scale_ > 0)
        a, b = fitted
        for name in ("mean_", "scale_"):
            assert getattr(a, name).shape == getattr(b, name).shape == (3,)
            assert getattr(a, name).dtype == getattr(b, name).dtype == np.float64
        assert a.dp_event_ == b.dp_event_ and a.epsilon_ == b.epsilon_ == 0.5


def test_standard_scaler_moments_within_the_laplace_tail():
    """Each sum's Laplace noise exceeds t times its scale with probability exp(-t): at t = 30
    (below 1e-13) the noisy mean is off by at most 30 w / (e n) and the noisy second moment by
    30 (w^2 / 4) / (e n), e = epsilon / (2 p); the variance by the second's error plus the
    mean's times (2 |mean| + its error)."""
    rng = np.random.default_rng(9)
    n, low, high, epsilon = 4000, -10.0, 30.0, 2.0
    table = rng.normal(5.0, 3.0, size=(n, 1))
    scaler = PrivateStandardScaler([(low, high)], epsilon=epsilon, random_state=1).fit(table)
    e, w = epsilon / 2, high - low
    clipped = np.clip(table[:, 0], low, high)
    mean_error = 30 * w / (e * n)
    assert abs(scaler.mean_[0] - clipped.mean()) <= mean_error
    centred = clipped - 0.5 * (low + high)
    var_error = 30 * (w * w / 4) / (e * n) + mean_error * (2 * abs(centred.mean()) + mean_error)
    assert abs(scaler.scale_[0] ** 2 - clipped.var()) <= var_error


def test_standard_scaler_output_is_clipped_and_composed_in_a_pipeline():
    rng = np.random.default_rng(10)
    X = rng.normal(size=(500, 4))
    y = (X[:, 0] > 0).astype(int)
    budget = BudgetAccountant(2.0)
    model = private_pipeline(
        PrivateStandardScaler([(-4, 4)] * 4, epsilon=0.4, clip=2.0, random_state=0,
                              accountant=budget),
        DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0, accountant=budget))
    assert model[-1].row_norm == 4.0                            # clip sqrt(p)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        model.fit(X, y)
    out = model[0].transform(rng.normal(scale=50.0, size=(100, 4)))
    assert out.min() >= -2.0 and out.max() <= 2.0
    assert model[-1].privacy_report_.holds and model[-1].epsilon_ == pytest.approx(1.4)
    assert budget.spent()[0] == pytest.approx(1.4)
    assert model[0].dp_event_ == dp_accounting.ComposedDpEvent([PureDpEvent(0.05)] * 8)


def test_a_pipeline_refuses_the_estimators_bad_parameters_before_a_step_spends():
    """The estimator's checks of its parameters alone run before the private step is fitted:
    a refusal there leaves the budget uncharged and the scaler unfitted."""
    pd = pytest.importorskip("pandas")
    from dpsolve import BudgetAccountant
    from dpsolve.estimators import DPLogisticRegression
    from dpsolve.preprocessing import PrivateRangeScaler, private_pipeline
    budget = BudgetAccountant(10.0)
    table = pd.DataFrame({"a": np.linspace(0.0, 9.0, 40)})
    model = private_pipeline(
        PrivateRangeScaler([(0.0, 100.0)], 0.5, accountant=budget),
        DPLogisticRegression(epsilon=1.0, classes=[0, 1], solver="no_such_solver",
                             accountant=budget))
    with pytest.raises(ValueError, match="solver must be 'auto' or one of"):
        model.fit(table, np.arange(40) % 2)
    assert budget.ledger == () and not hasattr(model[0], "ranges_")


def test_standard_scaler_default_clip_is_the_measured_one():
    """clip=0.5 (docs/preprocessing.md, "Choosing the defaults"): the row bound 0.5 sqrt(p)."""
    scaler = PrivateStandardScaler([(-4, 4)] * 4, epsilon=0.4)
    assert scaler.clip == 0.5
    assert scaler.row_norm_bound("l2") == 1.0 and scaler.row_norm_bound("linf") == 0.5
