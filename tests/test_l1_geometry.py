"""The l1 geometry of a Problem (``constraint="l1"``): rows checked and clipped in l-inf, the
constants in the (l1, l-inf) pair of norms, the exact projection onto the l1 ball, the solvers'
declaration of the constraints they take, choose_solver's filter and the sweeps' key."""
import dataclasses
import warnings

import numpy as np
import pytest
from scipy import sparse

import dpsolve
from dpsolve import Problem
from dpsolve._projection import _l1_norm, project_l1_ball
from dpsolve.chunked import RowChunks
from dpsolve.experiments import SweepError, load_sweep
from dpsolve.solvers import registry
from dpsolve.solvers._lifecycle import Bound


def _data(n=40, p=12, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, p)), np.where(rng.random(n) < 0.5, -1.0, 1.0)


def test_l2_is_the_default_and_unchanged():
    X, y = _data()
    X /= 10.0                        # inside the default l2 bound: nothing clipped
    P, Q = Problem(X, y, clip_rows=False), Problem(X, y, constraint="l2", clip_rows=False)
    assert P.constraint == Q.constraint == "l2" and "constraint" not in P.describe()
    assert np.array_equal(P.X, Q.X) and P.describe() == Q.describe() and repr(P) == repr(Q)


def test_rows_are_checked_and_clipped_in_linf():
    X, y = _data()
    X[0] = 0.5                       # l2 norm sqrt(12)/2 > 1, l-inf 0.5: inside, untouched
    X[1] = 0.0
    X[1, 3] = -4.0                   # l-inf 4: scaled onto the bound
    with pytest.warns(UserWarning, match=r"rows had l-inf norm above row_norm=1"):
        P = Problem(X, y, constraint="l1", row_norm=1.0)
    assert np.array_equal(P.X[0], X[0]) and P.X[1, 3] == -1.0
    assert np.max(np.abs(P.X)) <= 1.0
    # a clipped row keeps its direction: scaled by B / ||x||_inf
    k = 5
    assert np.allclose(P.X[k], X[k] / np.max(np.abs(X[k])), rtol=1e-15, atol=0)
    # CSR and float32 give the same rows (clipped in l-inf from the stored entries)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        S = Problem(sparse.csr_matrix(X), y, constraint="l1")
        F = Problem(X.astype(np.float32), y, constraint="l1")
    assert np.array_equal(S.X.toarray(), P.X)
    assert np.max(np.abs(F.X)) <= 1.0 and F.X.dtype == np.float32
    with pytest.raises(ValueError, match=r"rows of X have l-inf norm above row_norm=1"):
        Problem(X, y, constraint="l1", clip_rows=False)
    Problem(np.full((3, 50), 0.9), [1, -1, 1], constraint="l1", clip_rows=False)   # l2 >> 1


def test_chunked_rows_clip_in_linf_as_in_memory():
    X, y = _data(n=30)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        whole = Problem(X, y, constraint="l1")
        chunks = Problem(RowChunks.from_arrays([X[:10], X[10:]], [y[:10], y[10:]]),
                         None, constraint="l1")
    messages = [str(w.message) for w in caught if "clipped" in str(w.message)]
    assert len(messages) == 2 and messages[0] == messages[1]
    theta = np.linspace(-1.0, 1.0, X.shape[1]) / X.shape[1]
    assert np.array_equal(chunks.margins(theta), whole.margins(theta))
    assert chunks.describe() == whole.describe()


def test_refusals_name_the_parameters():
    X, y = _data()
    with pytest.raises(ValueError, match=r"constraint='l1' needs a radius.*radius=None"):
        Problem(X, y, constraint="l1", radius=None, reg=1.0)
    with pytest.raises(ValueError, match=r"constraint"):
        Problem(X, y, constraint="linf")
    with pytest.raises(ValueError, match=r"constraint='l1'.*multinomial"):
        Problem(X, np.arange(40) % 3, "multinomial", n_classes=3, constraint="l1")


def test_constants_in_the_l1_geometry():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        P = Problem(X, 0.5 * y, "squared", constraint="l1", radius=2.0, row_norm=0.5,
                    reg=0.1)
        I = Problem(0.1 * X, y, constraint="l1", fit_intercept=True, intercept_scale=3.0)
    assert P.diameter == 4.0 and P.describe()["constraint"] == "l1"
    assert P.lipschitz == 0.5 * (2.0 * 0.5 + 1.0) and P.gradient_bound == P.lipschitz + 0.2
    assert I.row_norm == 3.0 and np.max(np.abs(I.X)) <= I.row_norm   # max(B, s) in l-inf
    # the gradient's l-inf norm within L at the worst points of the ball: the vertices +-R e_j
    # against rows of entries +-B (the margin R B, Hoelder's bound, is attained)
    Xw = np.tile([0.5, -0.5, 0.5], (2, 1))
    W = Problem(Xw, [1.0, -1.0], "squared", constraint="l1", radius=2.0, row_norm=0.5)
    worst = max(np.max(np.abs(W.loss_derivatives(v)[i] * Xw[i]))
                for v in (2.0 * np.eye(3)[j] * s for j in range(3) for s in (1, -1))
                for i in range(2))
    assert worst == pytest.approx(W.lipschitz, rel=1e-15)


def _kkt_projection(v, w, radius):
    """The optimality of w = P(v) onto the l1 ball: v - w = tau g, g in the subdifferential
    of ||.||_1 at w, tau >= 0, tau (||w||_1 - R) = 0."""
    r = v - w
    support = w != 0
    tau = np.max(np.abs(r)) if w.size else 0.0
    assert np.all(np.abs(r[~support]) <= tau + 1e-12)
    assert np.allclose(r[support], tau * np.sign(w[support]), atol=1e-12)
    assert tau < 1e-12 or abs(np.sum(np.abs(w)) - radius) < 1e-12 * radius * w.size


@pytest.mark.parametrize("seed", range(4))
def test_projection_onto_the_l1_ball_is_exact(seed):
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(seed)
    v = rng.normal(size=9) * [0.1, 1, 10, 1, 1, 0.01, 3, 1, 1]
    v[rng.integers(9)] = v[0]                               # ties in the magnitudes
    for radius in (0.05, 1.0, 7.0, 1e3):
        before = v.copy()
        w = project_l1_ball(v, radius)
        assert np.array_equal(v, before) and _l1_norm(w) <= radius
        _kkt_projection(v, w, radius)
        x = cp.Variable(v.size)
        cp.Problem(cp.Minimize(cp.sum_squares(x - v)), [cp.norm1(x) <= radius]).solve()
        assert np.max(np.abs(w - x.value)) < 1e-6 * max(1.0, np.max(np.abs(v)))
    assert np.array_equal(project_l1_ball(v, 1e3), v)          # inside: a copy
    # brute force on a grid of tau: the l1 norm of the soft threshold at the returned tau is R
    w = project_l1_ball(v, 1.0)
    tau = np.max(np.abs(v) - np.abs(w))
    assert np.sum(np.maximum(np.abs(v) - tau, 0.0)) == pytest.approx(1.0, abs=1e-13)


def test_projection_refuses_bad_input():
    with pytest.raises(ValueError, match="radius"):
        project_l1_ball(np.ones(3), 0.0)
    with pytest.raises(ValueError, match="NaN"):
        project_l1_ball(np.array([1.0, np.nan]), 1.0)


def test_solvers_declare_their_constraints_and_the_lifecycle_refuses_others():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        P = Problem(X, y, constraint="l1")
    for spec in registry():
        assert spec.constraints and set(spec.constraints) <= {"l2", "l1"}
    l2_only = next(s for s in registry() if s.constraints == ("l2",) and s.partition is None)
    # refused before the target is even checked (epsilon=-1 would be refused next)
    with pytest.raises(ValueError, match=rf"{l2_only.name} does not take constraint='l1'.*"
                                         r"the solvers that do are"):
        l2_only.function(P, -1.0, delta=1e-6)
    with pytest.raises(ValueError, match="constraints"):
        dataclasses.replace(l2_only, constraints=("l3",))


def test_choose_solver_considers_only_solvers_taking_the_constraint(monkeypatch):
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        P = Problem(X, y, constraint="l1", reg=0.1)
    base = next(s for s in registry() if s.name == "output_perturbation")
    # a stand-in over the l1 ball with a bound of its own (output perturbation's is an l2
    # bound, which refuses an l1 problem)
    stand_in = dataclasses.replace(base, name="l1_stand_in", constraints=("l1",),
                                   bound=lambda problem, partition, plan: Bound(1e3, "stand-in"))
    import dpsolve.solvers as solvers
    monkeypatch.setattr(solvers, "registry", lambda: (*registry(), stand_in))
    choice = dpsolve.choose_solver(P, 1.0, 1e-6)
    takers = {s.name for s in solvers.registry() if "l1" in s.constraints}
    assert "l1_stand_in" in takers and choice.name in takers
    assert all(c.bound is not None for c in choice.candidates if c.name in takers)
    others = [c for c in choice.candidates if c.name not in takers]
    assert others and all("does not take constraint='l1'" in c.reason for c in others)


def test_sweeps_pass_the_constraint_through():
    spec = {"name": "l1", "data": {"source": "synthetic", "n": 50, "p": 4},
            "problem": {"loss": "logistic", "radius": 1.0, "constraint": "l1"},
            "solver": [{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6}]}
    sweep = load_sweep(spec)
    assert {r["problem"]["constraint"] for r in sweep.runs()} == {"l1"}
    for bad, key in (({"constraint": "l3"}, "problem.constraint"),
                     ({"constraint": "l1", "radius": "none", "reg": 1.0}, "radius")):
        with pytest.raises(SweepError, match=key):
            load_sweep({**spec, "problem": {"loss": "logistic", "radius": 1.0, **bad}})


def test_the_l2_bounds_refuse_an_l1_problem_and_the_l1_bounds_an_l2_one():
    """A bound proved over one ball says nothing over the other: each refuses the other
    geometry by name instead of returning a number."""
    from dpsolve import bounds
    from dpsolve.solvers.frank_wolfe import frank_wolfe_bound
    X, y = dpsolve.datasets.make_synthetic(50, 4, rng=0)
    l1 = dpsolve.Problem(X, y, constraint="l1", radius=2.0)
    l2 = dpsolve.Problem(X, y, radius=2.0)
    for bound in (bounds.lower_bound_lipschitz, bounds.dp_sco_lower_bound):
        with pytest.raises(ValueError, match="constraint='l2'"):
            bound(l1, 1.0)
        assert bound(l2, 1.0) > 0
    with pytest.raises(ValueError, match="constraint='l1'"):
        bounds.l1_erm_lower_bound(l2, 1.0)
    with pytest.raises(ValueError, match="constraint='l1'"):
        frank_wolfe_bound(l2, 1.0, 1e-6, steps=10)
    assert bounds.l1_erm_lower_bound(l1, 1.0) > 0


@pytest.mark.parametrize("function, args", [
    ("objective_perturbation.approximate_minima.objective_perturbation_settings", (1.0,)),
    ("objective_perturbation.approximate_minima.auto_tolerance", (1.0,)),
    ("objective_perturbation.approximate_minima.plan_settings", (1.0,)),
    ("objective_perturbation.privacy_constants.objective_perturbation_constants", (1.0,)),
    ("objective_perturbation.prediction_reg", (1.0,)),
    ("output_perturbation.prediction_reg", (1.0,)),
    ("adassp.prediction_reg", (1.0, 1e-6)),
])
def test_l2_privacy_constants_refuse_an_l1_problem(function, args):
    """The public helpers that derive noise, tolerances or a ridge from row_norm read it as an
    l2 bound: over the l1 ball it bounds rows in l-infinity, so they refuse by name."""
    import importlib
    module, name = function.rsplit(".", 1)
    helper = getattr(importlib.import_module(f"dpsolve.solvers.{module}"), name)
    X, y = dpsolve.datasets.make_synthetic(50, 4, rng=0)
    if module == "adassp":
        y = np.clip(X.sum(axis=1) / 4.0, -1.0, 1.0)
    loss = "squared" if module == "adassp" else "logistic"
    l1 = dpsolve.Problem(X, y, loss, constraint="l1", radius=2.0)
    with pytest.raises(ValueError, match="is for constraint='l2' problems, got a Problem with "
                                         "constraint='l1'"):
        helper(l1, *args)
    helper(dpsolve.Problem(X, y, loss, radius=None, reg=0.1), *args)    # the l2 geometry runs
