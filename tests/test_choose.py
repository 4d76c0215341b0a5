"""dpsolve.choose_solver (docs/choose_solver.md): the smallest bound among the single-machine
solvers, from public constants only."""
import json
import time
import warnings

import numpy as np
import pytest

import dpsolve
from dpsolve import Problem
from dpsolve.solvers import get, plan_fit, registry


def _problem(seed=0, n=1000, p=10, **options):
    X, y = dpsolve.datasets.make_synthetic(n, p, rng=seed)
    return Problem(X, y, "logistic", **options)


class _Sealed:
    """Stands in for X or y: its shape is public, any other use of it raises."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype, self.ndim = shape, dtype, len(shape)

    def __getattr__(self, name):
        raise AssertionError(f"the data were read ({name})")

    def __array__(self, *args, **kwargs):
        raise AssertionError("the data were read (as an array)")

    def __getitem__(self, key):
        raise AssertionError("the data were read (indexed)")

    def __matmul__(self, other):
        raise AssertionError("the data were read (a product)")

    __rmatmul__ = __matmul__


SETTINGS = [(dict(radius=None, reg=1e-3), 0.5, None), (dict(radius=None, reg=1e-3), 0.5, 1e-6),
            (dict(radius=1.0, reg=1e-3), 1.0, 1e-6), (dict(radius=None, reg=1e-2), 3.0, 1e-6)]


@pytest.mark.parametrize("options, epsilon, delta", SETTINGS)
def test_the_choice_never_reads_the_data(options, epsilon, delta):
    """The same choice with X and y sealed (shape public, anything else raises), and on
    another dataset with the same constants."""
    P = _problem(**options)
    choice = dpsolve.choose_solver(P, epsilon, delta)
    sealed = _problem(**options)
    sealed.X, sealed.y = _Sealed(P.X.shape, P.X.dtype), _Sealed(P.y.shape, P.y.dtype)
    assert dpsolve.choose_solver(sealed, epsilon, delta) == choice
    assert dpsolve.choose_solver(_problem(seed=1, **options), epsilon, delta) == choice


@pytest.mark.parametrize("options, epsilon, delta", SETTINGS)
def test_the_chosen_bound_is_the_smallest_comparable_one(options, epsilon, delta):
    P = _problem(**options)
    choice = dpsolve.choose_solver(P, epsilon, delta)
    names = {c.name for c in choice.candidates}
    assert names == {s.name for s in registry()
                     if s.partition is None and P.loss in s.losses}
    comparable = [c for c in choice.candidates if c.comparable]
    assert choice.bound == min(c.bound for c in comparable)
    assert choice.name == min(comparable, key=lambda c: c.bound).name
    for c in choice.candidates:
        assert (c.bound is None) == (c.reason is not None) or not c.comparable
    # each comparable bound is the solver's own bound at a real fit with its defaults
    for c in comparable:
        kw = {} if delta is None else {"delta": delta}
        spec = get(c.name)
        again = spec.bound(P, None, plan_fit(spec, P, None, epsilon, **kw))
        assert again.value == pytest.approx(c.bound, rel=1e-9)


def test_pure_epsilon_admits_only_pure_solvers():
    P = _problem(radius=None, reg=1e-3)
    choice = dpsolve.choose_solver(P, 0.5)
    fit = choice.fit(P, rng=0)
    assert fit.delta == 0.0 and fit.solver == choice.name
    for c in choice.candidates:
        if c.comparable:
            kw = {}
            assert get(c.name).function(P, 0.5, rng=0, **kw).delta == 0.0


def test_choice_fit_runs_the_chosen_solver_at_the_target():
    P = _problem(radius=None, reg=1e-3)
    choice = dpsolve.choose_solver(P, 1.0, 1e-6)
    fit = choice.fit(P, rng=3)
    assert fit.solver == choice.name and (fit.epsilon, fit.delta) == (1.0, 1e-6)
    same = get(choice.name).function(P, 1.0, delta=1e-6, rng=3)
    assert np.array_equal(fit.theta, same.theta)


def test_no_candidate_and_bad_input():
    P = _problem(radius=1.0, reg=0.0)
    with pytest.raises(ValueError, match="no solver has a bound.*output_perturbation"):
        dpsolve.choose_solver(P, 0.5)            # pure epsilon needs reg > 0 here
    with pytest.raises(TypeError, match="Problem"):
        dpsolve.choose_solver(np.zeros((3, 2)), 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        dpsolve.choose_solver(P, 0.0)
    with pytest.raises(ValueError, match="delta"):
        dpsolve.choose_solver(P, 1.0, 1.5)


def test_cli_solver_auto(tmp_path, capsys):
    from dpsolve.cli import main
    X, y = dpsolve.datasets.make_synthetic(500, 5, rng=0)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    assert main(["solve", "--data", str(tmp_path / "d.npz"), "--solver", "auto", "--epsilon", "1",
                 "--delta", "1e-6", "--radius", "none", "--reg", "0.01", "--seed", "0",
                 "--row-norm", "1", "--no-fit-intercept"]) == 0
    report = json.loads(capsys.readouterr().out)
    P = Problem(X, y, radius=None, reg=0.01)
    choice = dpsolve.choose_solver(P, 1.0, 1e-6)
    assert report["solver"] == choice.name
    assert report["chosen_by"]["bound"] == pytest.approx(choice.bound)


# -- bounded work from public constants ---------------------------------------------------------
#: Seconds a choice or a refusal may take. The failures guarded against were hangs (over 10 s:
#: DP-SGD's calibration on PLD grids of millions of points at a small noise multiplier); a
#: choice takes milliseconds to a few tenths of a second (speed is measured in
#: benchmarks/bench_choose.py), the plan of DP-SGD alone up to a second or a few on a loaded
#: machine.
LIMIT = 10.0


def _within_limit(call):
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call()
    finally:
        assert time.perf_counter() - start < LIMIT, "took longer than a choice should"


@pytest.mark.slow
@pytest.mark.parametrize("epsilon, delta", [(100.0, 1e-6), (1000.0, 1e-6), (1.0, 0.4),
                                            (1.0, 1e-30)])
def test_large_epsilon_or_delta_is_chosen_in_bounded_time(epsilon, delta):
    """At n = 1000 DP-SGD samples at q = 0.064 for 79 steps; epsilon = 100 or delta = 0.4 need a
    noise multiplier near 0.2, where its calibration on PLD grids took tens of seconds. The
    choice leaves it out unplanned when it cannot win; planned, it has a bound within the
    limit."""
    from dpsolve.solvers.choose import _candidate
    P = _problem(radius=None, reg=1e-3)
    choice = _within_limit(lambda: dpsolve.choose_solver(P, epsilon, delta))
    dp_sgd = next(c for c in choice.candidates if c.name == "dp_sgd")
    assert (dp_sgd.reason is None and np.isfinite(dp_sgd.bound)
            or dp_sgd.reason.startswith("cannot be chosen"))
    planned = _within_limit(lambda: _candidate(get("dp_sgd"), P, epsilon, delta))
    assert planned.reason is None and np.isfinite(planned.bound)


def test_delta_of_one_half_or_more_is_refused_by_name():
    """(epsilon, delta)-DP with delta >= 1/2 allows publishing the data half the time: refused
    before any plan (delta = 0.9 once took 17 s to calibrate, 1 - 2**-53 raised IndexError)."""
    P = _problem(radius=None, reg=1e-3)
    for delta in (0.5, 0.9, 1 - 2 ** -53):
        with pytest.raises(ValueError, match=r"delta must lie in \(0, 0.5\)"):
            _within_limit(lambda: dpsolve.choose_solver(P, 1.0, delta))


@pytest.mark.parametrize("epsilon", [1e-200, 1e-300, 1e-320])
def test_an_epsilon_too_small_for_every_solver_is_refused_by_name(epsilon):
    """Pure epsilon-DP noise scales as 1/epsilon: each solver refuses an epsilon whose noise is
    beyond float64's range (or fails its arithmetic) with a ValueError naming epsilon, and the
    choice says so (once OverflowError, ZeroDivisionError, or a message naming nothing)."""
    P = _problem(radius=None, reg=1e-3)
    with pytest.raises(ValueError, match="choose_solver: no solver has a bound at epsilon=") as e:
        _within_limit(lambda: dpsolve.choose_solver(P, epsilon))
    assert "output_perturbation: the output noise: epsilon=" in str(e.value)
    assert "objective_perturbation: " in str(e.value) and "epsilon" in str(e.value)


# -- the costly calibration runs only for a solver that can win ----------------------------------
def _every_plan(P, epsilon, delta):
    """The choice as planning every solver exactly makes it: name -> Candidate, and the
    winner's name (the smallest comparable bound, the first in registry order on a tie)."""
    from dpsolve.solvers.choose import _candidate, _other_geometry
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # a solver of another geometry (SolverSpec.constraints) is listed, not planned
        found = {s.name: _candidate(s, P, epsilon, delta) if P.constraint in s.constraints
                 else _other_geometry(s, P) for s in registry()
                 if s.partition is None and P.loss in s.losses}
    usable = [c for c in found.values() if c.comparable]
    return found, min(usable, key=lambda c: c.bound).name


@pytest.fixture
def pld_calls(monkeypatch):
    """Counts DP-SGD's PLD calibrations (dpsolve.privacy.calibration.poisson_pld_sigma, which
    its plan calls; a wrapper, so its cache does not hide a call)."""
    from dpsolve.privacy import calibration
    calls = []
    original = calibration.poisson_pld_sigma

    def counted(*args, **kwargs):
        calls.append((args, kwargs))
        return original(*args, **kwargs)

    monkeypatch.setattr(calibration, "poisson_pld_sigma", counted)
    return calls


@pytest.mark.parametrize("options, epsilon, delta", [
    (dict(radius=None, reg=1e-3), 1.0, 1e-6),
    pytest.param(dict(radius=None, reg=1e-3, n=7000, p=20), 1.0, 1e-6, marks=pytest.mark.slow),
    (dict(radius=1.0, reg=1e-3), 1.0, 1e-6),
    pytest.param(dict(radius=None, reg=1e-2), 3.0, 1e-6, marks=pytest.mark.slow),
    # epsilon = 100 and delta = 0.4: seconds of PLD calibration, as in the bounded-time test
    pytest.param(dict(radius=None, reg=1e-3), 100.0, 1e-6, marks=pytest.mark.slow),
    pytest.param(dict(radius=None, reg=1e-3), 1.0, 0.4, marks=pytest.mark.slow)])
def test_no_pld_calibration_for_a_solver_not_chosen(pld_calls, options, epsilon, delta):
    """DP-SGD's PLD calibration (0.1 s to over a second) is not run when DP-SGD is not chosen:
    its bound with no noise at all is already above the best of the others. The choice is the
    one planning every solver exactly gives."""
    P = _problem(**options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        choice = dpsolve.choose_solver(P, epsilon, delta)
    assert choice.name != "dp_sgd"
    assert pld_calls == [], "choose_solver calibrated DP-SGD, which it did not choose"
    dp_sgd = next(c for c in choice.candidates if c.name == "dp_sgd")
    assert dp_sgd.bound is None and dp_sgd.reason.startswith("cannot be chosen")
    exact, winner = _every_plan(P, epsilon, delta)
    assert choice.name == winner and choice.bound == exact[winner].bound
    assert exact["dp_sgd"].bound > choice.bound
    for c in choice.candidates:
        if c.name != "dp_sgd" and not (c.reason or "").startswith("cannot be chosen"):
            assert c == exact[c.name]
        else:       # left out by its floor (any solver with Hooks.bound_floor): rightly
            assert exact[c.name].bound is None or exact[c.name].bound > choice.bound


@pytest.mark.parametrize("loss, options", [("logistic", dict(radius=1.0, reg=0.0)),
                                           ("hinge", dict(radius=None, reg=1e-3))])
def test_a_solver_that_can_win_is_planned_exactly(pld_calls, loss, options):
    """Where DP-SGD's floor is below the others' best it is calibrated (once) and compared at
    its exact bound; here it wins (n = 300, p = 40, epsilon = 0.1), and its fit plans the same
    noise again from the cache."""
    X, y = dpsolve.datasets.make_synthetic(300, 40, rng=0)
    P = Problem(X, y, loss, fit_intercept=True, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        choice = dpsolve.choose_solver(P, 0.1, 1e-6)
    # DP-SGD's calibration (its default rate 64/n) once; sco_sgd, whose floor also leaves it
    # a chance here, calibrates its own Poisson sampling (another rate)
    dp_sgd_calls = [call for call in pld_calls if call[1]["rate"] == 64 / 300]
    assert choice.name == "dp_sgd" and len(dp_sgd_calls) == 1
    exact, winner = _every_plan(P, 0.1, 1e-6)
    assert winner == "dp_sgd"
    assert choice.candidates == tuple(exact.values())
    plan = plan_fit(get("dp_sgd"), P, None, 0.1, 1e-6)
    assert get("dp_sgd").bound(P, None, plan).value == pytest.approx(choice.bound, rel=1e-12)
