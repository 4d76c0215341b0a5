"""``dpsolve solve --data raw.csv --schema schema.toml``, tried as a user types it: a raw table
(amounts in their units, categories as strings, missing cells) mapped by the preprocessing its
public schema defines, the row bound and the label set taken from the schema, nothing read off
the data; the schema read and checked (dpsolve.preprocessing.schema.Schema)."""
import contextlib
import io
import json
import math

import numpy as np
import pytest

from dpsolve.cli import main

pytest.importorskip("sklearn")
pd = pytest.importorskip("pandas")
from dpsolve.estimators import DPLinearRegression, DPLogisticRegression  # noqa: E402
from dpsolve.preprocessing import private_pipeline  # noqa: E402
from dpsolve.preprocessing.schema import Schema  # noqa: E402

SCHEMA = """[label]
column = "churned"
classes = [0, 1]

[columns.income]
range = [0, 250000]
missing = 40000

[columns.age]
range = [18, 100]

[columns.plan]
categories = ["basic", "plus", "premium"]
"""


def _main(*argv):
    """``(status, stdout, stderr)`` of ``main(argv)`` in-process; SystemExit is a status."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main([str(a) for a in argv])
        except SystemExit as exc:
            status = exc.code
    return status, out.getvalue(), err.getvalue()


def _table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    table = pd.DataFrame({
        "income": rng.lognormal(10.5, 0.6, n),
        "age": rng.integers(18, 80, n).astype(float),
        "plan": rng.choice(np.array(["basic", "plus", "premium", "legacy", None], dtype=object),
                           n),
    })
    table.loc[rng.random(n) < 0.1, "income"] = np.nan
    table["churned"] = (rng.random(n) < 1 / (1 + np.exp(3 - table["age"] / 15))).astype(int)
    return table


@pytest.fixture
def files(tmp_path):
    data, schema = tmp_path / "raw.csv", tmp_path / "schema.toml"
    _table().to_csv(data, index=False)
    schema.write_text(SCHEMA)
    return data, schema


def test_raw_table_fits_with_only_epsilon_and_the_schema(files):
    data, schema = files
    status, out, err = _main("solve", "--data", data, "--schema", schema, "--epsilon", 1,
                             "--seed", 3)
    assert status == 0, err
    assert "warning" not in err                       # no bound read off the data
    report = json.loads(out)
    assert report["privacy"]["holds"] and report["privacy"]["epsilon"] == 1.0
    assert report["privacy"]["read_off_the_data"] == []
    # the ledger: one release, the fit (with the class counts its intercept is centred on) at
    # the whole epsilon; the schema's transformers read nothing off the table, spend nothing
    counts = " and the class counts" if report["model"]["prior_share_"] > 0 else ""
    assert report["privacy"]["ledger"] == [{
        "name": report["solver"] + counts, "epsilon": 1.0, "delta": 0.0,
        "dp_event": report["privacy"]["dp_event"]}]
    # two scaled columns and one one-hot group: sqrt(1 + 1 + 1)
    assert report["model"]["row_norm_"] == pytest.approx(math.sqrt(3.0), rel=1e-13)
    assert report["schema"]["features"] == [
        "income__income", "age__age", "plan__plan_basic", "plan__plan_plus",
        "plan__plan_premium", "plan__plan_<unknown>"]
    # the same model as the library's pipeline with the same seed, bit for bit
    table = pd.read_csv(data)
    model = private_pipeline(Schema.from_toml(schema).preprocess(),
                             DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=3))
    model.fit(table[["income", "age", "plan"]], table["churned"].to_numpy())
    assert np.array_equal(np.asarray(report["coef"]), model[-1].coef_.reshape(-1))


def test_neighbouring_tables_leave_everything_but_the_release(files, tmp_path):
    data, schema = files
    table = pd.read_csv(data)
    table.loc[0, ["income", "age", "plan", "churned"]] = [1e9, 17.0, "unheard-of", 1]
    other = tmp_path / "neighbour.csv"
    table.to_csv(other, index=False)
    first = json.loads(_main("solve", "--data", data, "--schema", schema, "--epsilon", 1,
                             "--seed", 3)[1])
    second = json.loads(_main("solve", "--data", other, "--schema", schema, "--epsilon", 1,
                              "--seed", 3)[1])
    for released in ("theta", "coef", "intercept"):
        first.pop(released), second.pop(released)
    assert first == second


def test_regression_takes_the_label_range_from_the_schema(tmp_path):
    table = _table()
    table["spend"] = np.clip(table["age"] / 20.0, 0.0, 6.0)
    table = table.drop(columns="churned")
    data, schema = tmp_path / "raw.csv", tmp_path / "schema.toml"
    table.to_csv(data, index=False)
    schema.write_text(SCHEMA.replace('column = "churned"\nclasses = [0, 1]',
                                     'column = "spend"\nrange = [0.0, 6.0]'))
    status, out, err = _main("solve", "--data", data, "--schema", schema, "--loss", "squared",
                             "--epsilon", 1, "--seed", 1)
    assert status == 0, err
    report = json.loads(out)
    assert report["privacy"]["holds"] and report["solver"] == "adassp"
    model = private_pipeline(Schema.from_toml(schema).preprocess(),
                             DPLinearRegression(epsilon=1.0, label_bound=(0.0, 6.0),
                                                random_state=1))
    model.fit(table[["income", "age", "plan"]], table["spend"].to_numpy())
    assert np.array_equal(np.asarray(report["coef"]), model[-1].coef_.reshape(-1))


@pytest.mark.parametrize("extra, schema_text, message", [
    (["--classes", "0,1"], SCHEMA, "--classes cannot be combined with --schema"),
    (["--row-norm", "2"], SCHEMA, "--row-norm cannot be combined with --schema"),
    ([], SCHEMA.replace("[columns.age]\nrange = [18, 100]\n", ""),
     "column 'age' of the table is not described"),
    ([], SCHEMA.replace("range = [18, 100]", "range = [100, 18]"),
     r"\[columns.age\].range: must be \[low, high\]"),
    ([], SCHEMA.replace('column = "churned"', 'column = "left"'),
     "the label column 'left' is not in the table"),
    ([], SCHEMA + "[columns.extra]\nrange = [0, 1]\n",
     r"\[columns.extra\] names a column the table does not have"),
    ([], SCHEMA.replace("missing = 40000", "missing = \"none\""),
     r"\[columns.income\].missing: a numeric column's missing value must be a number"),
    ([], SCHEMA.replace("categories = [", "unknown = \"drop\"\ncategories = ["),
     r"\[columns.plan\].unknown: must be \"bucket\" or \"zeros\", got 'drop'"),
    (["--loss", "squared"], SCHEMA, "needs the label's range"),
    ([], SCHEMA + "[model]\n", r"unknown table \[model\]"),
    ([], "not = toml = at all", "not a TOML file"),
])
def test_bad_schemas_are_refused_naming_what(files, extra, schema_text, message):
    data, schema = files
    schema.write_text(schema_text)
    status, out, err = _main("solve", "--data", data, "--schema", schema, "--epsilon", 1, *extra)
    assert status == 2 and out == ""
    assert pytest.importorskip("re").search(message, err), err
