"""dpsolve.preprocessing: scikit-learn's checks of each public transformer, each row bound
against the largest row norm of random and adversarial tables, the release surface (a fitted
transformer stores nothing derived from the values), the bound of the composites, and a raw
DataFrame through a private pipeline and a private grid search with no bound read off the
data."""
import math
import pickle
import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn", minversion="1.6")
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.pipeline import FeatureUnion, Pipeline, make_pipeline  # noqa: E402
from sklearn.preprocessing import FunctionTransformer, StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from dpsolve.estimators import DPLogisticRegression  # noqa: E402
from dpsolve.preprocessing import (PublicCategoryEncoder, PublicConstantImputer,  # noqa: E402
                                   PublicRangeScaler, output_row_norm)
from dpsolve.privacy import PrivacyWarning  # noqa: E402

#: One instance per transformer and option, with one entry for every column (the checks' tables
#: have from 1 to 20 columns).
TRANSFORMERS = [PublicRangeScaler(ranges=(-3, 3)),
                PublicRangeScaler(ranges=(-3, 3), feature_range=(-1, 1)),
                PublicCategoryEncoder(categories=[0.0, 1.0, 2.0]),
                PublicCategoryEncoder(categories=[0.0, 1.0], unknown="zeros"),
                PublicConstantImputer(fill_value=0.0)]


@parametrize_with_checks(TRANSFORMERS)
def test_sklearn_common_checks(estimator, check):
    check(estimator)


def test_stateless_tags():
    for transformer in TRANSFORMERS:
        assert transformer.__sklearn_tags__().requires_fit is False


# -- the row bounds ---------------------------------------------------------------------------
def _max_norms(Z):
    return np.linalg.norm(Z, axis=1).max(), np.abs(Z).max()


def _adversarial_numbers(rng, n, p):
    """Values far outside the ranges, on their ends, and inside."""
    X = rng.normal(size=(n, p)) * 10.0 ** rng.integers(-3, 300, size=(n, p))
    X[::3] = 1e308
    X[1::3] = -1e308
    X[2::5] = rng.uniform(-1, 1, size=X[2::5].shape)
    return X


@pytest.mark.parametrize("feature_range", [(0, 1), (-1, 1)])
def test_scaler_bound_holds_and_is_attained(feature_range):
    rng = np.random.default_rng(0)
    ranges = [(-1.0, 1.0), (0.0, 1e6), (-1e-3, 2e-3), (5.0, 6.0)]
    scaler = PublicRangeScaler(ranges, feature_range=feature_range)
    Z = scaler.fit_transform(_adversarial_numbers(rng, 300, 4))
    l2, linf = _max_norms(Z)
    # the l2 bound sqrt(4) = 2 and the l-infinity bound 1 are attained by the rows above the
    # ranges (and with (-1, 1), below them)
    assert l2 == scaler.row_norm_bound("l2") == 2.0
    assert linf == scaler.row_norm_bound("linf") == 1.0
    assert Z.min() == feature_range[0] and Z.max() == feature_range[1]


@pytest.mark.parametrize("unknown", ["bucket", "zeros"])
def test_encoder_bound_holds_and_is_attained(unknown):
    rng = np.random.default_rng(1)
    categories = [["a", "b", "c"], [1, 2], ["x"]]
    encoder = PublicCategoryEncoder(categories, unknown=unknown)
    pool = np.array(["a", "b", "c", "d", 1, 2, 3, "1", None, np.nan, "x", "y"], dtype=object)
    X = rng.choice(pool, size=(400, 3))
    X[0] = ["a", 1, "x"]
    Z = encoder.fit_transform(X)
    row_ones = Z.sum(axis=1)
    assert set(np.unique(Z)) <= {0.0, 1.0}
    # one 1 per column with the bucket, at most one without it
    assert (row_ones == 3).all() if unknown == "bucket" else (row_ones <= 3).all()
    assert _max_norms(Z) == (encoder.row_norm_bound("l2"), encoder.row_norm_bound("linf"))
    assert encoder.row_norm_bound("l2") == math.sqrt(3)
    assert Z.shape[1] == 6 + 3 * (unknown == "bucket")


def _raw_table(rng, n, pandas):
    """A raw table: two numeric columns (one with NaNs, some values far outside the ranges) and a
    categorical one (with None and categories that are not listed)."""
    amount = rng.lognormal(6.0, 2.0, size=n)
    amount[rng.random(n) < 0.2] = np.nan
    age = rng.integers(-5, 130, size=n).astype(float)
    colour = rng.choice(np.array(["red", "green", "blue", "teal", None], dtype=object), size=n)
    return pandas.DataFrame({"amount": amount, "age": age, "colour": colour})


def _preprocess(weights=None):
    numbers = make_pipeline(PublicConstantImputer([100.0, 40.0]),
                            PublicRangeScaler([(0.0, 1e4), (18.0, 90.0)]))
    return ColumnTransformer([("numbers", numbers, ["amount", "age"]),
                              ("colour", PublicCategoryEncoder([["red", "green", "blue"]]),
                               ["colour"])], transformer_weights=weights)


@pytest.mark.parametrize("weights", [None, {"numbers": 0.5, "colour": 3.0}])
def test_column_transformer_bound_holds(weights):
    pandas = pytest.importorskip("pandas")
    preprocess = _preprocess(weights)
    Z = preprocess.fit_transform(_raw_table(np.random.default_rng(2), 500, pandas))
    l2, linf = _max_norms(Z)
    w_numbers, w_colour = (1.0, 1.0) if weights is None else (0.5, 3.0)
    exact = math.sqrt(2 * w_numbers ** 2 + w_colour ** 2)
    assert l2 <= output_row_norm(preprocess) <= exact * (1 + 2e-14)
    assert linf <= output_row_norm(preprocess, "linf") == max(w_numbers, w_colour)
    # attained: a row at the top of both ranges with a listed colour
    top = pandas.DataFrame({"amount": [1e9], "age": [200.0], "colour": ["red"]})
    assert np.linalg.norm(preprocess.transform(top)) <= output_row_norm(preprocess)
    assert np.linalg.norm(preprocess.transform(top)) == pytest.approx(exact, rel=1e-15)


def test_feature_union_and_pipeline_bounds():
    union = FeatureUnion([("a", PublicRangeScaler((0, 1))), ("b", "drop"),
                          ("c", PublicCategoryEncoder([0.0, 1.0]))])
    union.fit(np.zeros((2, 3)))
    assert output_row_norm(union) == pytest.approx(math.sqrt(6), rel=2e-14)
    assert output_row_norm(union) >= math.sqrt(6)
    assert output_row_norm(union, "linf") == 1.0
    piped = Pipeline([("f", FunctionTransformer()), ("s", PublicRangeScaler([(0, 1)] * 3)),
                      ("p", "passthrough")])
    assert output_row_norm(piped) == math.sqrt(3)


def test_a_step_without_a_bound_is_named():
    with pytest.raises(ValueError, match=r"'standardscaler' \(StandardScaler\) reports no"):
        output_row_norm(make_pipeline(PublicRangeScaler((0, 1)), StandardScaler()))
    with pytest.raises(ValueError, match=r"'imputer'.* \(PublicConstantImputer\) reports no"):
        output_row_norm(ColumnTransformer([("imputer", PublicConstantImputer(0.0), [0])]))
    with pytest.raises(ValueError, match="remainder.*passes columns through"):
        output_row_norm(ColumnTransformer([("s", PublicRangeScaler([(0, 1)]), [0])],
                                          remainder="passthrough"))
    fitted = ColumnTransformer([("s", PublicRangeScaler((0, 1)), [0, 1])]).fit(np.zeros((2, 3)))
    assert output_row_norm(fitted) >= math.sqrt(2)     # the fitted parts know their columns
    with pytest.raises(ValueError, match="fit it first"):
        output_row_norm(PublicRangeScaler((0, 1)))


# -- the release surface ----------------------------------------------------------------------
def _fitted_pair(make, table, other):
    return make().fit(table), make().fit(other)


def test_fitted_transformers_store_nothing_from_the_values():
    """Two tables with the same columns and nothing else in common (values, missing cells,
    unknown categories, row counts) leave identical transformers, attribute for attribute and
    byte for byte."""
    pandas = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    one, two = _raw_table(rng, 50, pandas), _raw_table(rng, 7, pandas)
    two.loc[:, "colour"] = "teal"
    two.loc[:, "amount"] = np.nan
    makers = [lambda: PublicRangeScaler([(0.0, 1e4), (18.0, 90.0)]),
              lambda: PublicConstantImputer([0.0, 40.0, "none"]),
              lambda: PublicCategoryEncoder([["red", "blue"]]), _preprocess]
    columns = [["amount", "age"], None, ["colour"], None]
    for make, cols in zip(makers, columns):
        a, b = (t if cols is None else t[cols] for t in (one, two))
        if cols == ["amount", "age"]:
            a, b = a.fillna(1.0), b.fillna(-1e300)
        fitted_a, fitted_b = _fitted_pair(make, a, b)
        assert pickle.dumps(fitted_a) == pickle.dumps(fitted_b), type(fitted_a).__name__


# -- the estimators downstream ----------------------------------------------------------------
def test_raw_dataframe_through_a_private_pipeline():
    pandas = pytest.importorskip("pandas")
    rng = np.random.default_rng(4)
    X = _raw_table(rng, 400, pandas)
    y = np.where(X["age"].to_numpy() > 50, 1, 0)
    preprocess = _preprocess()
    model = make_pipeline(preprocess, DPLogisticRegression(
        epsilon=1.0, row_norm=output_row_norm(preprocess), classes=[0, 1], random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        model.fit(X, y)
    final = model[-1]
    assert final.privacy_report_.holds and final.epsilon_ == 1.0
    assert list(model.feature_names_in_) == ["amount", "age", "colour"]
    assert model.predict(X).shape == (400,)
    model.set_output(transform="pandas").fit(X, y)
    assert list(model[-1].feature_names_in_) == [
        "numbers__amount", "numbers__age", "colour__colour_red", "colour__colour_green",
        "colour__colour_blue", "colour__colour_<unknown>"]


def test_private_grid_search_takes_the_pipeline():
    pandas = pytest.importorskip("pandas")
    from dpsolve.private_selection import PrivateGridSearch
    rng = np.random.default_rng(5)
    X = _raw_table(rng, 400, pandas)
    y = np.where(X["age"].to_numpy() > 50, 1, 0)
    preprocess = _preprocess()
    model = make_pipeline(preprocess, DPLogisticRegression(
        row_norm=output_row_norm(preprocess), classes=[0, 1]))
    search = PrivateGridSearch(model, {"dplogisticregression__epsilon": [0.5, 1.0]},
                               score_epsilon=0.1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        search.fit(X, y)
    best = search.best_estimator_
    # the released model carries the whole search's privacy: the selection's, composed
    assert best[-1].privacy_report_.holds and best[-1].epsilon_ == search.epsilon_
    assert math.isfinite(search.epsilon_) and search.epsilon_ > 1.0
    assert best.predict(X).shape == (400,)


def test_private_grid_search_refuses_a_learning_step_nested_in_a_column_transformer():
    from dpsolve.private_selection import PrivateGridSearch
    nested = ColumnTransformer([("ok", PublicRangeScaler((0, 1)), [0]),
                                ("learns", make_pipeline(StandardScaler()), [1])])
    model = make_pipeline(nested, DPLogisticRegression(row_norm=1.0, classes=[-1, 1]))
    with pytest.raises(ValueError, match=r"'learns'.*'standardscaler' \(StandardScaler\)"):
        PrivateGridSearch(model, {"dplogisticregression__epsilon": [1.0]}).fit(
            np.zeros((20, 2)), np.ones(20))


# about 2 s (a private grid search of three settings): the slow tier's
@pytest.mark.slow
def test_the_page_example_prints_what_the_page_shows():
    import contextlib
    import io
    import pathlib
    import re
    pytest.importorskip("pandas")
    page = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "preprocessing.md").read_text(
        encoding="utf-8")
    code, printed = re.search(r"## A worked example\n.*?```python\n(.*?)```\n\nprints\n\n"
                              r"```text\n(.*?)```", page, re.S).groups()
    buffer = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(buffer):
        warnings.simplefilter("error", PrivacyWarning)     # no bound is read off the data
        exec(compile(code, "docs/preprocessing.md", "exec"), {})
    assert buffer.getvalue() == printed


def test_private_pipeline_sets_the_row_bound_in_the_estimators_norm():
    from dpsolve.preprocessing import private_pipeline
    preprocess = ColumnTransformer([("s", PublicRangeScaler([(0, 1)] * 4), [0, 1, 2, 3]),
                                    ("c", PublicCategoryEncoder([["a", "b"]]), [4])])
    l2 = private_pipeline(preprocess, DPLogisticRegression(classes=[0, 1]))
    assert l2[-1].row_norm == output_row_norm(preprocess) >= math.sqrt(5)
    l1 = private_pipeline(preprocess, DPLogisticRegression(constraint="l1", radius=2.0))
    assert l1[-1].row_norm == 1.0                   # the l1 geometry's row_norm is l-infinity
    given = DPLogisticRegression(row_norm=7.0)
    assert private_pipeline(preprocess, given)[-1].row_norm == 7.0
    X = np.array([[0.5, 2.0, -1.0, 0.0, "a"], [1.0, 0.0, 0.3, 0.9, None]] * 10, dtype=object)
    y = np.array([0, 1] * 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        l2.set_params(dplogisticregression__random_state=0).fit(X, y)
    assert l2[-1].privacy_report_.holds


def test_unfitted_transform_of_a_dataframe_warns_nothing():
    pandas = pytest.importorskip("pandas")
    table = pandas.DataFrame({"a": [0.5, 2.0], "c": ["x", None]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaled = PublicRangeScaler([(0, 1)]).transform(table[["a"]])
        encoded = PublicCategoryEncoder([["x"]]).transform(table[["c"]])
        filled = PublicConstantImputer(["m"]).transform(table[["c"]])
    assert scaled.tolist() == [[0.0], [1.0]] and encoded.tolist() == [[1, 0], [0, 1]]
    assert filled.tolist() == [["x"], ["m"]]


def _cells():
    from hypothesis import strategies as st
    import pandas as pd
    return st.lists(st.one_of(
        st.floats(allow_nan=True, allow_infinity=False), st.none(), st.integers(-3, 3),
        st.sampled_from(["a", "b", "", "nan", "1.5"]), st.booleans(),
        st.sampled_from([np.float32("nan"), np.float64(2.0), np.int64(1), np.bool_(True),
                         pd.NA, pd.NaT, b"a"])), max_size=30)


@pytest.mark.slow
def test_the_vectorised_cell_checks_agree_with_the_cell_by_cell_ones():
    # missing_mask, category_codes and the imputer's all-real test decide by the cells'
    # types; each must give what is_missing, dict.get and isinstance give cell by cell
    import numbers
    from hypothesis import given, settings
    from dpsolve.preprocessing._tables import (category_codes, is_missing, missing_cells,
                                               missing_mask)
    from dpsolve.preprocessing.imputer import _all_real

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(_cells())
    def check(cells):
        column = np.empty(len(cells), dtype=object)
        column[:] = cells
        assert missing_mask(column).tolist() == missing_cells(column).astype(bool).tolist()
        index = {"a": 0, 1: 1, 2.0: 2, b"a": 3}
        expected = [4 if is_missing(v) else index.get(v, 4) for v in cells]
        assert category_codes(column, index, 4).tolist() == expected
        assert _all_real(column.reshape(-1, 1)) == all(
            isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in cells)

    check()
