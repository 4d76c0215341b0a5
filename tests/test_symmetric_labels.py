"""The label-symmetric design (dpsolve.datasets.make_symmetric_labels), whose minimiser is 0 on
every ball centred at 0, and its sweep source ``symmetric``."""
import math

import numpy as np
import pytest
from scipy import sparse

import dpsolve
from dpsolve.datasets import check_symmetric_settings, make_symmetric_labels
from dpsolve.experiments import SweepError, check_runs, load_sweep
from dpsolve.experiments.runs import load_data
from dpsolve.experiments.sweep import data_seed


@pytest.fixture(scope="module")
def data():
    return make_symmetric_labels(400, 60, density=0.1, rng=3)


def test_rows_are_signed_pairs_with_both_labels(data):
    X, y = data
    assert sparse.isspmatrix_csr(X) and X.has_canonical_format and X.shape == (400, 60)
    assert np.all(np.diff(X.indptr) == 6)               # round(0.1 * 60) non-zeros a row
    assert set(np.unique(X.data)) == {-1.0, 1.0}
    assert np.array_equal(y, np.tile([1.0, -1.0], 200))
    assert (X[0::2] != X[1::2]).nnz == 0                # row 2i + 1 repeats row 2i


def test_gradient_at_zero_is_exactly_zero(data):
    X, y = data
    # logistic loss'(0; y) = -y / 2: each pair cancels exactly
    assert np.all(X.T @ (-y / 2.0) == 0.0)


@pytest.mark.parametrize("options", [
    {"loss": "logistic", "radius": 5.0, "row_norm": math.sqrt(6)},
    {"loss": "logistic", "radius": 5.0, "row_norm": math.sqrt(6), "reg": 0.1},
    {"loss": "huber_hinge", "radius": 5.0, "row_norm": math.sqrt(6)},
    {"loss": "logistic", "constraint": "l1", "radius": 5.0, "row_norm": 1.0},
])
def test_reference_minimiser_is_zero(data, options):
    X, y = data
    problem = dpsolve.Problem(X, y, **options)
    solution = dpsolve.reference_minimizer(problem, cache=False)
    assert solution.gap <= 1e-9
    # theta* = 0: no point does better than F(0) by more than the certified gap
    at_zero = problem.objective(np.zeros(60))
    assert at_zero - solution.gap <= solution.value <= at_zero + 1e-15
    if options["loss"] == "logistic" and "reg" not in options:
        assert at_zero == pytest.approx(math.log(2.0), rel=1e-15)


def test_objective_is_even_in_theta(data):
    X, y = data
    problem = dpsolve.Problem(X, y, loss="logistic", radius=5.0, row_norm=math.sqrt(6))
    theta = np.random.default_rng(0).normal(size=60) * 0.3
    assert problem.objective(theta) == pytest.approx(problem.objective(-theta), rel=1e-13)
    assert problem.objective(theta) > problem.objective(np.zeros(60))


def test_same_seed_same_bits():
    a, ya = make_symmetric_labels(50, 30, density=0.2, rng=7)
    b, yb = make_symmetric_labels(50, 30, density=0.2, rng=np.random.default_rng(7))
    assert np.array_equal(a.indices, b.indices) and np.array_equal(a.data, b.data)
    assert np.array_equal(ya, yb)


def test_at_least_one_non_zero_a_row():
    X, _ = make_symmetric_labels(10, 20, density=0.01, rng=0)
    assert np.all(np.diff(X.indptr) == 1)
    assert check_symmetric_settings(10, 20, density=0.01) == (10, 20, 0.01, 1)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"n": 7, "p": 5}, ValueError, "n must be an even integer >= 2"),
    ({"n": 0, "p": 5}, ValueError, "n must be an integer >= 2"),
    ({"n": 4, "p": 0}, ValueError, "p must be an integer >= 1"),
    ({"n": 4, "p": 5, "density": 0.0}, ValueError, r"density must lie in \(0, 1\]"),
    ({"n": 4, "p": 5, "density": 1.5}, ValueError, r"density must lie in \(0, 1\]"),
    ({"n": 4.0, "p": 5}, TypeError, "n must be an integer"),
])
def test_bad_settings_refused_naming_them(kwargs, error, message):
    with pytest.raises(error, match=message):
        make_symmetric_labels(**kwargs)


# -- the sweep source ---------------------------------------------------------------------------
SWEEP = {"name": "s", "replicates": 1,
         "data": {"source": "symmetric", "n": 60, "p": 40, "density": 0.1},
         "problem": {"loss": "logistic", "constraint": "l1", "radius": 2.0, "row_norm": 1.0},
         "solver": [{"name": "frank_wolfe", "epsilon": 1.0, "delta": 1e-6}]}


def test_symmetric_source_loads_the_generator_data():
    sweep = load_sweep(SWEEP)
    data = sweep.runs()[0]["data"]
    X, y = load_data(data, sweep.seed)
    X2, y2 = make_symmetric_labels(60, 40, density=0.1, rng=data_seed({"data": data}, 0))
    assert (X != X2).nnz == 0 and np.array_equal(y, y2)
    check_runs(sweep)


@pytest.mark.parametrize("change, message", [
    ({"n": 61}, "data.n = 61: n must be an even integer"),
    ({"density": 0.0}, "data.density = 0.0"),
    ({"words": 5}, "data.words: not a key of source 'symmetric'"),
])
def test_symmetric_settings_refused_naming_the_key(change, message):
    with pytest.raises(SweepError, match=message):
        load_sweep({**SWEEP, "data": {**SWEEP["data"], **change}})


def test_newton_cg_returns_zero_when_the_gradient_at_zero_vanishes():
    # p above the explicit-Hessian limit: Newton-CG with the ball's multiplier, which must
    # return 0 itself (it divided by ||theta(mu)|| = 0 and left the solve to the cone solver)
    from dpsolve.reference._newton import EXPLICIT_MAX_DIM
    X, y = make_symmetric_labels(200, EXPLICIT_MAX_DIM + 88, density=0.02, rng=0)
    problem = dpsolve.Problem(X, y, loss="logistic", radius=3.0, row_norm=math.sqrt(12))
    solution = dpsolve.reference_minimizer(problem, cache=False, method="newton")
    assert solution.solver == "NEWTON" and solution.gap <= 1e-9
    assert solution.value == problem.objective(np.zeros(X.shape[1]))
