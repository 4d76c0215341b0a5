"""The certified reference minimiser over the l1 ball (``constraint="l1"``): the certificate
(the Fenchel duality gap with the l1 ball's conjugate, the Frank-Wolfe gap when lambda = 0),
the solve (FISTA with the exact projection, then active-set Newton) on dense and CSR X, and
an independent cross-check with cvxpy."""
import warnings

import numpy as np
import pytest
from scipy import sparse

import dpsolve
from dpsolve import Problem, excess_risk, reference_minimizer
from dpsolve.reference import certificate
from dpsolve._projection import project_l1_ball
from dpsolve.reference._certificate import _l1_regulariser_conjugate

TOL = 1e-9


def _problem(loss="logistic", n=80, p=40, radius=1.5, reg=0.0, storage="dense", seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, p)) * (rng.random((n, p)) < 0.3)
    theta0 = np.zeros(p)
    theta0[:4] = [2.0, -1.5, 1.0, 0.5]
    z = X @ theta0
    y = (np.clip(z + 0.3 * rng.standard_normal(n), -1.0, 1.0) if loss == "squared"
         else np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-z)), 1.0, -1.0))
    X = sparse.csr_matrix(X) if storage == "csr" else X
    return Problem(X, y, loss, constraint="l1", radius=radius, reg=reg)


def _frank_wolfe_gap(problem, theta):
    g = problem.gradient(theta)
    return float(g @ theta) + problem.radius * float(np.max(np.abs(g)))


def test_the_l1_conjugate_of_the_regulariser():
    # h*(v) = max_{||t||_1 <= R} <v, t> - (lam/2)||t||^2: attained at t* = S_tau(v) / lam
    rng = np.random.default_rng(1)
    for lam, R in ((0.5, 1.0), (2.0, 0.3), (0.01, 5.0)):
        v = rng.normal(size=7)
        hstar, lipschitz = _l1_regulariser_conjugate(v, lam, R)
        t = project_l1_ball(v / lam, R)          # the maximiser: the prox of the indicator
        assert hstar == pytest.approx(float(v @ t) - 0.5 * lam * float(t @ t), rel=1e-13)
        assert lipschitz == R
        for _ in range(200):                     # no point of the ball does better
            u = project_l1_ball(rng.normal(size=7) * 3.0, R)
            assert float(v @ u) - 0.5 * lam * float(u @ u) <= hstar + 1e-13
    assert _l1_regulariser_conjugate(np.array([0.5, -2.0]), 0.0, 3.0)[0] == 6.0   # R ||v||_inf


def test_the_certificate_is_the_frank_wolfe_gap_when_lambda_is_0():
    problem = _problem()
    rng = np.random.default_rng(2)
    for _ in range(5):
        theta = project_l1_ball(rng.normal(size=problem.p), problem.radius)
        fw = _frank_wolfe_gap(problem, theta)
        gap = certificate(problem, theta)
        # the same number, plus the allowance for rounding (tiny against it)
        assert fw <= gap <= fw + 1e-10
    with pytest.raises(ValueError, match=r"\|\|theta\|\|_1 = .* > radius"):
        certificate(problem, np.full(problem.p, 1.0))


@pytest.mark.parametrize("loss", ["logistic", "squared", "huber_hinge"])
@pytest.mark.parametrize("storage", ["dense", "csr"])
def test_certified_below_tol_and_against_cvxpy(loss, storage):
    cp = pytest.importorskip("cvxpy")
    problem = _problem(loss, storage=storage, reg=0.01 if loss == "squared" else 0.0)
    solution = reference_minimizer(problem, tol=TOL, cache=False)
    assert solution.gap <= TOL and "gap_above_tol" not in solution.status
    assert np.sum(np.abs(solution.theta)) <= problem.radius
    assert solution.value == problem.objective(solution.theta)
    # the minimiser is sparse and on the sphere of the ball (the constraint binds here)
    assert np.count_nonzero(solution.theta) < problem.p
    assert np.sum(np.abs(solution.theta)) >= problem.radius * (1.0 - 1e-9)
    # cvxpy's point, made feasible, cannot beat F(theta*) >= value - gap; and our
    # certificate at it bounds its own suboptimality
    other, _, status, _ = dpsolve.reference._cone.cone_solve(problem, TOL)
    assert other is not None, status
    other = project_l1_ball(other, problem.radius)
    F_other = problem.objective(other)
    assert F_other >= solution.value - solution.gap
    assert F_other - solution.value <= certificate(problem, other)
    assert F_other - solution.value < 1e-5                  # cvxpy's own tolerance
    assert excess_risk(problem, other, solution) >= -solution.gap
    del cp


def test_hinge_and_chunks_are_refused():
    problem = _problem("hinge")
    with pytest.raises(ValueError, match=r"loss='hinge' with constraint='l1'.*huber_hinge"):
        reference_minimizer(problem, cache=False)
    X, y = _problem().X, _problem().y
    chunks = dpsolve.chunked.RowChunks.from_arrays([X[:40], X[40:]], [y[:40], y[40:]])
    chunked = Problem(chunks, None, constraint="l1", radius=1.5)
    with pytest.raises(ValueError, match=r"constraint='l1' needs X in memory"):
        reference_minimizer(chunked, cache=False)


def test_the_cache_keys_the_constraint(tmp_path):
    problem = _problem(n=50, p=20)
    X, y = problem.X, problem.y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        l2 = Problem(X, y, radius=problem.radius)
    first = reference_minimizer(problem, cache=tmp_path)
    again = reference_minimizer(problem, cache=tmp_path)
    assert again.cached and np.array_equal(again.theta, first.theta)
    other = reference_minimizer(l2, cache=tmp_path)
    assert not other.cached and len(list(tmp_path.glob("reference-*.npz"))) == 2
    assert np.linalg.norm(other.theta) <= problem.radius * (1 + 1e-12)


def test_excess_risk_over_the_l1_ball_is_never_below_minus_the_gap():
    problem = _problem(reg=0.05)
    solution = reference_minimizer(problem, cache=False)
    rng = np.random.default_rng(3)
    for scale in (0.0, 0.1, 1.0, 10.0):
        theta = project_l1_ball(scale * rng.normal(size=problem.p), problem.radius)
        assert excess_risk(problem, theta, solution) >= -solution.gap
    assert excess_risk(problem, solution.theta, solution) == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("loss", ["logistic", "squared", "huber_hinge"])
def test_a_sparse_high_dimensional_problem(loss):
    # n = 2000 rows of a Zipf-like design with p = 20000 columns, about 30 entries a row
    rng = np.random.default_rng(5)
    n, p, per_row = 2000, 20000, 30
    ranks = np.arange(1, p + 1) ** -1.1
    cols = rng.choice(p, size=(n, per_row), p=ranks / ranks.sum())
    X = sparse.csr_matrix((np.ones(n * per_row), (np.repeat(np.arange(n), per_row),
                                                  cols.ravel())), shape=(n, p))
    X.data[:] = 1.0
    z = X[:, :10] @ rng.normal(size=10)
    y = (np.clip(0.3 * z, -1, 1) if loss == "squared"
         else np.where(rng.random(n) < 1 / (1 + np.exp(-z)), 1.0, -1.0))
    problem = Problem(X, y, loss, constraint="l1", radius=10.0)
    solution = reference_minimizer(problem, tol=TOL, cache=False)
    assert solution.gap <= TOL
    assert solution.gap >= certificate(problem, solution.theta) - 1e-15
