"""The sparse Zipf design (dpsolve.datasets.make_sparse_zipf), its sweep source ``zipf``, and a
solver's own problem table in a sweep (``[solver.problem]``)."""
import math

import numpy as np
import pytest
from scipy import sparse

from dpsolve.datasets import make_sparse_zipf, zipf_weights
from dpsolve.experiments import SweepError, check_runs, load_sweep
from dpsolve.experiments.runs import load_data
from dpsolve.experiments.sweep import data_seed


@pytest.fixture(scope="module")
def zipf():
    return make_sparse_zipf(2000, 300, words=20, support=5, signal=2.0, rng=1, return_coef=True)


def test_rows_are_canonical_csr_bounded_in_linf(zipf):
    X, y, theta, _ = zipf
    assert sparse.isspmatrix_csr(X) and X.has_canonical_format and X.shape == (2000, 300)
    assert np.all(X.data == 1.0)                        # binary: every stored entry is 1
    assert np.diff(X.indptr).max() <= 20                # at most `words` words per document
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert np.count_nonzero(theta) == 5 and set(np.abs(theta[theta != 0])) == {2.0}
    assert np.all(np.flatnonzero(theta) < 50)           # among the 10 * support most frequent


def test_term_frequencies_sum_to_one_per_row():
    X, _ = make_sparse_zipf(50, 40, words=7, values="tf", rng=2)
    assert np.all((X.data > 0) & (X.data <= 1))
    np.testing.assert_allclose(np.asarray(X.sum(axis=1)).ravel(), 1.0, rtol=0, atol=1e-15)
    assert set(np.round(X.data * 7, 12)) <= {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0}


def test_document_frequency_follows_zipf(zipf):
    # the rank-0 word is in a document with probability 1 - (1 - q)^words, q its Zipf share
    X, _, _, _ = zipf
    weights = zipf_weights(300)
    for rank in (0, 9, 99):
        q = weights[rank] / math.fsum(weights)
        expected = 1.0 - (1.0 - q) ** 20
        count = X[:, rank].count_nonzero()
        sd = math.sqrt(2000 * expected * (1.0 - expected))
        assert abs(count - 2000 * expected) <= 4.5 * sd, (rank, count, 2000 * expected)


def test_labels_follow_the_logistic_link(zipf):
    # E[y | x] = tanh((<theta_0, x> + b_0) / 2); the mean residual is within 4.5 standard
    # deviations; b_0 centres the margins: their mean is within 4.5 standard errors of 0
    X, y, theta, offset = zipf
    margins = X @ theta + offset
    mean = np.tanh(margins / 2.0)
    sd = math.sqrt(float(np.sum(1.0 - mean ** 2))) / y.size
    assert abs(float(np.mean(y - mean))) <= 4.5 * sd
    assert abs(float(np.mean(margins))) <= 4.5 * float(np.std(margins)) / math.sqrt(y.size)
    assert float(np.mean(y * np.sign(margins))) > 0.2      # the rows carry the labels


def test_same_seed_same_bits_and_weights_exact():
    a, b = make_sparse_zipf(30, 50, rng=5), make_sparse_zipf(30, 50, rng=5)
    assert (a[0] != b[0]).nnz == 0 and np.array_equal(a[1], b[1])
    assert (a[0] != make_sparse_zipf(30, 50, rng=6)[0]).nnz > 0
    assert np.array_equal(zipf_weights(4), [1.0, 0.5, 1.0 / 3.0, 0.25])
    assert zipf_weights(3, 2.0)[2] == 1.0 / 9.0


@pytest.mark.parametrize("kwargs, match", [
    ({"support": 51}, r"support must be an integer in \[0, p\] = \[0, 50\]"),
    ({"words": 0}, "words must be an integer >= 1"),
    ({"exponent": 0.0}, "exponent must lie in"),
    ({"signal": -1.0}, "signal must lie in"),
    ({"values": "counts"}, "values must be one of"),
])
def test_bad_settings_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_sparse_zipf(10, 50, **kwargs)


def test_no_support_gives_labels_without_signal():
    X, y, theta, offset = make_sparse_zipf(20, 10, support=0, rng=0, return_coef=True)
    assert not np.any(theta) and offset == 0.0 and X.shape == (20, 10)


# -- the sweep source ---------------------------------------------------------------------------
SWEEP = {"name": "z", "replicates": 1,
         "data": {"source": "zipf", "n": 60, "p": 40, "words": 5, "support": 3},
         "problem": {"loss": "logistic", "radius": 2.0, "row_norm": 1.0},
         "solver": [{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6}]}


def test_zipf_source_loads_the_generator_data():
    sweep = load_sweep(SWEEP)
    data = sweep.runs()[0]["data"]
    X, y = load_data(data, sweep.seed)
    X2, y2 = make_sparse_zipf(60, 40, words=5, support=3, rng=data_seed({"data": data}, 0))
    assert (X != X2).nnz == 0 and np.array_equal(y, y2)
    check_runs(sweep)


@pytest.mark.parametrize("change, message", [
    ({"support": 41}, r"data.support = 41: support must be an integer in \[0, p\]"),
    ({"words": 2.5}, "data.words = 2.5: words must be an integer"),
    ({"values": "counts"}, 'data.values = "counts"'),
    ({"margin": 0.1}, "data.margin: not a key of source 'zipf'"),
])
def test_zipf_settings_refused_naming_the_key(change, message):
    with pytest.raises(SweepError, match=message):
        load_sweep({**SWEEP, "data": {**SWEEP["data"], **change}})


def test_zipf_needs_n_and_p():
    data = {k: v for k, v in SWEEP["data"].items() if k != "p"}
    with pytest.raises(SweepError, match="data.p: source 'zipf' needs p"):
        load_sweep({**SWEEP, "data": data})


# -- a solver's own problem table ---------------------------------------------------------------
def test_solver_problem_replaces_keys_for_its_runs_only():
    solvers = [{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6,
                "problem": {"row_norm": [3.0, 4.0]}},
               {"name": "dp_sgd", "epsilon": 1.0, "delta": 1e-6}]
    sweep = load_sweep({**SWEEP, "solver": solvers})
    runs = sweep.runs()
    assert [(r["solver"]["name"], r["problem"]["row_norm"]) for r in runs] == [
        ("clipped_gd", 3.0), ("clipped_gd", 4.0), ("dp_sgd", 1.0)]
    assert all("problem" not in r["solver"] and r["problem"]["radius"] == 2.0 for r in runs)
    # each problem keys its own theta*
    assert len({run.reference for run in sweep.listing}) == 3
    check_runs(sweep)


def test_solver_problem_from_toml():
    text = """name = "z"
replicates = 1
[data]
source = "zipf"
n = 60
p = 40
[problem]
radius = 2.0
row_norm = 1.0
[[solver]]
name = "clipped_gd"
epsilon = 1.0
delta = 1e-6
[solver.problem]
row_norm = 2.5
"""
    assert load_sweep(text).runs()[0]["problem"] == {"radius": 2.0, "row_norm": 2.5}


@pytest.mark.parametrize("problem, message", [
    ({"clip": 1}, "solver\\[0\\].problem.clip: not an option of dpsolve.Problem"),
    ({"radius": -1.0}, "solver\\[0\\].problem.radius = -1.0: radius must"),
    (3, "solver\\[0\\].problem: must be a table"),
])
def test_bad_solver_problem_refused_naming_it(problem, message):
    solvers = [{"name": "clipped_gd", "epsilon": 1.0, "problem": problem}]
    with pytest.raises(SweepError, match=message):
        load_sweep({**SWEEP, "solver": solvers})


def test_solver_problem_axes_count_towards_the_run_limit():
    solvers = [{"name": "clipped_gd", "epsilon": 1.0,
                "problem": {"row_norm": [1.0 + i for i in range(1001)]}}]
    with pytest.raises(SweepError, match="more than the 1000000"):
        load_sweep({**SWEEP, "replicates": 1000, "solver": solvers})
