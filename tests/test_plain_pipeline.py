"""A private transformer in scikit-learn's own ``make_pipeline``: the estimator after it composes
its release (the same model, epsilon and event as ``private_pipeline``'s), in nested pipelines
and column transformers too; a model fitted directly on a transformed table composes nothing;
a refusal of the estimator's parameters or budget comes before the step spends; nothing of the
pipeline is stored on the model."""
import pickle

import dp_accounting
import joblib
import numpy as np
import pytest

pytest.importorskip("sklearn", minversion="1.6")
from sklearn.base import clone  # noqa: E402
from sklearn.compose import make_column_transformer  # noqa: E402
from sklearn.model_selection import cross_validate  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402

from dpsolve import BudgetAccountant  # noqa: E402
from dpsolve.estimators import DPLinearRegression, DPLogisticRegression  # noqa: E402
from dpsolve.preprocessing import (PrivateCategoryEncoder, PrivateRangeScaler,  # noqa: E402
                                   PrivateStandardScaler, PublicRangeScaler, private_pipeline)

OUTER = (-100.0, 100.0)


def _table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * 10.0
    return X, (X[:, 0] + rng.normal(size=n) > 0).astype(int)


def _model(**kwargs):
    return DPLogisticRegression(epsilon=1.0, classes=[0, 1], row_norm=np.sqrt(3),
                                random_state=0, **kwargs)


def _leaves(event):
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return [leaf for inner in event.events for leaf in _leaves(inner)]
    return [event]


def test_make_pipeline_composes_as_private_pipeline_does():
    X, y = _table()
    plain = make_pipeline(PrivateRangeScaler(OUTER, epsilon=0.25, random_state=1),
                          _model()).fit(X, y)
    private = private_pipeline(PrivateRangeScaler(OUTER, epsilon=0.25, random_state=1),
                               _model()).fit(X, y)
    model = plain[-1]
    assert model.epsilon_ == private[-1].epsilon_ == pytest.approx(1.25, rel=1e-12)
    assert model.dp_event_ == private[-1].dp_event_
    assert np.array_equal(model.coef_, private[-1].coef_)
    assert model.privacy_report_.holds
    names = [step.name for step in model.privacy_report_.steps]
    assert names[1:] == ["the pipeline's step 'privaterangescaler'"]
    # the scaler's own event, the very object, is a part of the model's
    assert any(leaf is plain[0].dp_event_.events[0] for leaf in _leaves(model.dp_event_))


def test_nested_pipelines_and_column_transformers_compose_every_private_step():
    X, y = _table()
    columns = make_column_transformer(
        (PrivateRangeScaler(OUTER, epsilon=0.2, random_state=1), [0, 1]),
        (PrivateStandardScaler(OUTER, epsilon=0.1, random_state=2), [2]))
    pipeline = make_pipeline(columns, make_pipeline(PublicRangeScaler((-1, 1)), _model()))
    model = pipeline.fit(X, y)[-1][-1]
    assert model.epsilon_ == pytest.approx(1.3, rel=1e-12)
    steps = {step.name: step.epsilon for step in model.privacy_report_.steps[1:]}
    assert steps == pytest.approx({
        "the outer pipeline's step 'columntransformer''s 'privaterangescaler'": 0.2,
        "the outer pipeline's step 'columntransformer''s 'privatestandardscaler'": 0.1})


def test_a_column_transformer_fitted_in_threads_is_composed_too():
    # the steps run in joblib's worker threads, with no Pipeline on their stack: the early
    # checks are skipped there, the composition (in the estimator's fit) is not
    X, y = _table()
    columns = make_column_transformer(
        (PrivateRangeScaler(OUTER, epsilon=0.2, random_state=1), [0, 1]),
        (PrivateRangeScaler(OUTER, epsilon=0.3, random_state=2), [2]), n_jobs=2)
    with joblib.parallel_backend("threading", n_jobs=2):
        model = make_pipeline(columns, _model()).fit(X, y)[-1]
    assert model.epsilon_ == pytest.approx(1.5, rel=1e-12)


def test_a_private_category_encoder_and_a_regressor_compose():
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.choice(["a", "b", "c"], size=300).astype(object),
                         rng.uniform(0, 50, size=300)])
    y = rng.normal(size=300)
    columns = make_column_transformer(
        (PrivateCategoryEncoder([["a", "b", "c", "d"]], epsilon=0.2, random_state=0), [0]),
        (PrivateRangeScaler((0, 100), epsilon=0.1, random_state=0), [1]))
    regressor = DPLinearRegression(epsilon=1.0, row_norm=np.sqrt(2), label_bound=3.0,
                                   random_state=0)
    model = make_pipeline(columns, regressor).fit(X, y)[-1]
    assert model.epsilon_ == pytest.approx(1.3, rel=1e-12)
    assert model.privacy_report_.holds


def test_a_model_fitted_directly_composes_nothing():
    # its guarantee is about the table it is given, whatever made that table
    X, y = _table()
    scaler = PrivateRangeScaler(OUTER, epsilon=0.25, random_state=1)
    model = _model().fit(scaler.fit_transform(X), y)
    assert model.epsilon_ == pytest.approx(1.0, rel=1e-12)
    assert [step.name for step in model.privacy_report_.steps] == [
        "objective_perturbation and the class counts"]


def test_cross_validation_fits_compose():
    X, y = _table()
    pipeline = make_pipeline(PrivateRangeScaler(OUTER, epsilon=0.25, random_state=1), _model())
    result = cross_validate(pipeline, X, y, cv=2, return_estimator=True)
    assert [p[-1].epsilon_ for p in result["estimator"]] == pytest.approx([1.25, 1.25])


def test_the_estimators_refusal_comes_before_the_step_spends():
    X, y = _table()
    budget = BudgetAccountant(3.0)
    scaler = PrivateRangeScaler(OUTER, epsilon=0.25, accountant=budget)
    with pytest.raises(ValueError, match="solver must be 'auto' or one of"):
        make_pipeline(scaler, _model(solver="nope", accountant=budget)).fit(X, y)
    with pytest.raises(ValueError, match="epsilon"):
        make_pipeline(scaler, _model(accountant=budget).set_params(epsilon=-1.0)).fit(X, y)
    assert budget.ledger == () and budget.spent()[0] == 0.0


def test_a_step_outside_the_models_budget_is_refused_before_it_spends():
    X, y = _table()
    budget = BudgetAccountant(3.0)
    for accountant in (None, BudgetAccountant(3.0)):
        scaler = PrivateRangeScaler(OUTER, epsilon=0.25, accountant=accountant)
        with pytest.raises(ValueError, match="accountant must be the estimator's budget"):
            make_pipeline(scaler, _model(accountant=budget)).fit(X, y)
        assert not hasattr(scaler, "dp_event_")
        assert accountant is None or accountant.spent()[0] == 0.0
    assert budget.spent()[0] == 0.0
    scaler = PrivateRangeScaler(OUTER, epsilon=0.25, accountant=budget)
    model = make_pipeline(scaler, _model(accountant=budget)).fit(X, y)[-1]
    assert budget.spent()[0] == pytest.approx(model.epsilon_, rel=1e-12)
    assert model.epsilon_ == pytest.approx(1.25, rel=1e-12)


def test_the_model_stores_nothing_of_the_pipeline():
    X, y = _table()
    scaler = PrivateRangeScaler(OUTER, epsilon=0.25, random_state=1)
    in_pipeline = make_pipeline(scaler, _model()).fit(X, y)[-1]
    direct = clone(_model()).fit(scaler.transform(X), y)
    assert set(vars(in_pipeline)) == set(vars(direct))
    # nor anything that refers to the scaler object: the model's pickle names no such class
    assert b"PrivateRangeScaler" not in pickle.dumps(in_pipeline)
    assert b"PrivateRangeScaler" in pickle.dumps(make_pipeline(scaler, in_pipeline))


def test_a_search_after_a_private_step_composes_it_once():
    from dpsolve.private_selection import PrivateGridSearch
    X, y = _table(600)
    budget = BudgetAccountant(5.0)
    search = PrivateGridSearch(
        DPLogisticRegression(row_norm=np.sqrt(3), classes=[0, 1], accountant=budget),
        {"epsilon": [0.5, 1.0]}, score_epsilon=0.1, random_state=0)
    pipeline = make_pipeline(
        PrivateRangeScaler(OUTER, epsilon=0.3, random_state=0, accountant=budget), search)
    best = pipeline.fit(X, y)[-1].best_estimator_
    # pure: the step's 0.3 and Liu-Talwar's 3 (1 + 0.1) add up, charged once each
    assert pipeline[-1].epsilon_ == best.epsilon_ == pytest.approx(3.6, rel=1e-12)
    assert budget.spent()[0] == pytest.approx(3.6, rel=1e-12)
    assert best.privacy_report_.steps[0].name == "the pipeline's step 'privaterangescaler'"
    with pytest.raises(ValueError, match="accountant must be the estimator's budget"):
        make_pipeline(PrivateRangeScaler(OUTER, epsilon=0.3), clone(search)).fit(X, y)
    assert budget.spent()[0] == pytest.approx(3.6, rel=1e-12)


def test_a_search_takes_one_release_once_however_many_estimates_carry_it():
    from dpsolve.private_selection import PrivateGridSearch
    X, y = _table(600)
    scaler = PrivateRangeScaler(OUTER, epsilon=0.3, random_state=0).fit(X)
    first, second = scaler.row_norm_estimate(), scaler.row_norm_estimate()
    search = PrivateGridSearch(DPLogisticRegression(epsilon=0.5, classes=[0, 1], row_norm=first),
                               {"row_norm": [first, second]}, score_epsilon=0.1,
                               random_state=0).fit(scaler.transform(X), y)
    assert search.epsilon_ == pytest.approx(0.3 + 3 * 0.6, rel=1e-12)


def _raw_table(n=400, seed=0):
    import pandas as pd
    rng = np.random.default_rng(seed)
    table = pd.DataFrame({"income": rng.lognormal(10.5, 0.6, n),
                          "age": rng.integers(18, 80, n).astype(float),
                          "plan": rng.choice(["basic", "plus", "legacy", None], n)})
    table.loc[rng.random(n) < 0.1, "income"] = np.nan
    return table, (rng.random(n) < table["age"].to_numpy() / 100).astype(int)


def _public_preprocess(ranges=((0.0, 1e6), (0.0, 150.0))):
    from sklearn.compose import ColumnTransformer
    from dpsolve.preprocessing import PublicCategoryEncoder, PublicConstantImputer
    numbers = make_pipeline(PublicConstantImputer(fill_value=[40_000.0, 45.0]),
                            PublicRangeScaler(list(ranges)))
    return ColumnTransformer([("numbers", numbers, ["income", "age"]),
                              ("plan", PublicCategoryEncoder([["basic", "plus"]]), ["plan"])])


@pytest.mark.parametrize("constraint, norm, bound", [("l2", "l2", np.sqrt(3)),
                                                     ("l1", "linf", 1.0)])
def test_the_estimator_takes_the_row_bound_its_pipeline_states(constraint, norm, bound):
    import warnings
    from dpsolve.preprocessing import output_row_norm
    from dpsolve.privacy import PrivacyWarning
    table, y = _raw_table()
    budget = BudgetAccountant(2.0)
    options = {"radius": 5.0} if constraint == "l1" else {}
    model = DPLogisticRegression(epsilon=1.0, classes=[0, 1], constraint=constraint,
                                 accountant=budget, random_state=0, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)     # nothing read off the data
        pipeline = make_pipeline(_public_preprocess(), model).fit(table, y)
    fitted = pipeline[-1]
    assert fitted.row_norm is None
    assert fitted.row_norm_ == output_row_norm(_public_preprocess(), norm) == pytest.approx(
        bound, rel=1e-13)
    assert fitted.privacy_report_.holds and fitted.epsilon_ == pytest.approx(1.0, rel=1e-12)
    given = make_pipeline(_public_preprocess(), clone(model).set_params(
        row_norm=fitted.row_norm_, accountant=None)).fit(table, y)
    assert np.array_equal(given[-1].coef_, fitted.coef_)


def test_a_step_that_states_no_bound_leaves_row_norm_read_off_the_data():
    from sklearn.preprocessing import FunctionTransformer
    from dpsolve.privacy import PrivacyWarning
    X, y = _table()
    with pytest.warns(PrivacyWarning, match="row_norm was not given"):
        model = make_pipeline(PublicRangeScaler(OUTER), FunctionTransformer(np.exp),
                              DPLogisticRegression(epsilon=1.0, classes=[0, 1])).fit(X, y)[-1]
    assert not model.privacy_report_.holds
    with pytest.raises(ValueError, match="row_norm not given"):
        make_pipeline(PublicRangeScaler(OUTER), FunctionTransformer(np.exp),
                      DPLogisticRegression(epsilon=1.0, classes=[0, 1],
                                           accountant=BudgetAccountant(2.0))).fit(X, y)


def test_a_range_for_every_column_states_its_bound_once_fitted():
    # PrivateRangeScaler's one outer range for every column: its width is known once fitted,
    # so the step's early checks cannot refuse the bound the fit will find
    X, y = _table()
    budget = BudgetAccountant(2.0)
    model = make_pipeline(PrivateRangeScaler(OUTER, epsilon=0.25, accountant=budget),
                          DPLogisticRegression(epsilon=1.0, classes=[0, 1],
                                               accountant=budget)).fit(X, y)[-1]
    assert model.row_norm_ == pytest.approx(np.sqrt(3), rel=1e-13)
    assert model.epsilon_ == pytest.approx(1.25, rel=1e-12) and model.privacy_report_.holds


def test_a_search_of_a_plain_pipeline_takes_the_stated_bound():
    from dpsolve.private_selection import PrivateGridSearch
    table, y = _raw_table(600)
    search = PrivateGridSearch(
        make_pipeline(_public_preprocess(), DPLogisticRegression(classes=[0, 1])),
        {"dplogisticregression__epsilon": [0.5, 1.0]}, score_epsilon=0.1,
        random_state=0).fit(table, y)
    best = search.best_estimator_[-1]
    assert best.row_norm == pytest.approx(np.sqrt(3), rel=1e-13)
    assert best.privacy_report_.holds and search.epsilon_ == pytest.approx(3.3, rel=1e-12)


def test_a_pipeline_subclass_with_its_own_fit_is_seen_too():
    # as imbalanced-learn's Pipeline: its own fit, fitting the steps in place
    from sklearn.pipeline import Pipeline

    class OwnFit(Pipeline):
        def fit(self, X, y=None, **params):
            for _, step in self.steps[:-1]:
                X = step.fit_transform(X, y)
            self.steps[-1][1].fit(X, y)
            return self

    X, y = _table()
    budget = BudgetAccountant(3.0)
    scaler = PrivateRangeScaler(OUTER, epsilon=0.25, random_state=1, accountant=budget)
    with pytest.raises(ValueError, match="solver must be"):     # refused before the charge
        OwnFit([("scale", scaler), ("model", _model(solver="nope", accountant=budget))]).fit(X, y)
    assert budget.spent()[0] == 0.0
    model = OwnFit([("scale", scaler), ("model", DPLogisticRegression(
        epsilon=1.0, classes=[0, 1], accountant=budget, random_state=0))]).fit(X, y)[-1]
    assert model.epsilon_ == pytest.approx(1.25, rel=1e-12)
    assert model.row_norm_ == pytest.approx(np.sqrt(3), rel=1e-13)
    assert budget.spent()[0] == pytest.approx(1.25, rel=1e-12)


def test_a_search_refuses_its_grid_before_the_step_before_it_spends():
    from dpsolve.private_selection import PrivateGridSearch
    X, y = _table()
    budget = BudgetAccountant(5.0)
    search = PrivateGridSearch(
        DPLogisticRegression(row_norm=np.sqrt(3), classes=[0, 1], accountant=budget), [],
        score_epsilon=0.1, random_state=0)
    scaler = PrivateRangeScaler(OUTER, epsilon=0.3, accountant=budget)
    with pytest.raises(ValueError, match="param_grid is empty"):
        make_pipeline(scaler, search).fit(X, y)
    assert budget.spent()[0] == 0.0 and not hasattr(scaler, "dp_event_")
