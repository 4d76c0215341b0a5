"""No leaks through side doors (docs/conventions.md, "What is never released"; secure mode:
docs/secure_noise.md).

Every solver must:
- leave what the caller passed in untouched;
- release nothing un-noised: a Fit's only arrays are theta (and joint_sgd's model, whose parts
  its joint-DP analysis covers), and its settings are public scalars;
- run the number of steps fixed in advance, whatever the data.
"""
import dataclasses
import math

import numpy as np
import pytest

import dpsolve
from dpsolve.solvers import get as registry_get, registry

N, P = 80, 5


def data(seed=0, scale=0.99):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, P))
    X *= scale / np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X[:, 0] + 0.2 * rng.normal(size=N) > 0, 1.0, -1.0)
    return X, y


def run(name, X, y, rng=0, **extra):
    """Each solver at small settings; returns (fit, the Problem, the Parties or None)."""
    ball = dpsolve.Problem(X, y, "logistic", radius=1.0, reg=0.05)
    ridge = dpsolve.Problem(X, y, "logistic", radius=None, reg=0.05)
    parties = dpsolve.Parties.from_sizes(ball, [40, 40])
    calls = {
        "noisy_sgd": lambda: (dpsolve.noisy_sgd(ball, 0.5, 1e-6, steps=200, calibration="rdp",
                                                rng=rng, **extra), ball, None),
        "clipped_gd": lambda: (dpsolve.clipped_gd(ball, 0.5, 1e-6, steps=20, rng=rng, **extra),
                               ball, None),
        "minibatch_sgd": lambda: (dpsolve.minibatch_sgd(ridge, 0.5, rng=rng, **extra), ridge,
                                  None),
        "output_perturbation": lambda: (dpsolve.output_perturbation(ridge, 0.5, 1e-6, rng=rng,
                                                                    **extra), ridge, None),
        "objective_perturbation": lambda: (dpsolve.objective_perturbation(ridge, 0.5, rng=rng,
                                                                          **extra), ridge, None),
        "multiparty_gd": lambda: (dpsolve.multiparty_gd(ball, parties, 0.5, 1e-6, steps=20,
                                                        rng=rng, **extra), ball, parties),
        "aggregated_output_perturbation": lambda: (dpsolve.aggregated_output_perturbation(
            ball, parties, 0.5, 1e-6, rng=rng, **extra), ball, parties),
        "joint_sgd": lambda: (dpsolve.joint_sgd(ball, parties, 0.5, 1e-6, steps=200, rng=rng,
                                                **extra), ball, parties),
    }
    if name in calls:
        return calls[name]()
    # a solver without settings here runs its spec's example (docs/adding_a_solver.md)
    spec = registry_get(name)
    loss = "logistic" if "logistic" in spec.losses else spec.losses[0]
    problem = dpsolve.Problem(X, y, loss, **spec.example_problem)
    split = [] if spec.partition is None else [dpsolve.Parties.from_sizes(problem, [40, 40])]
    return (spec.function(problem, *split, rng=rng, **{**spec.example, **extra}), problem,
            split[0] if split else None)


# every registered solver
SOLVERS = [spec.name for spec in registry()]


@pytest.mark.parametrize("name", [
    # noisy_sgd: about 3 s, an RDP calibration over T = n^2 sampled steps
    pytest.param(name, marks=pytest.mark.slow) if name == "noisy_sgd" else name
    for name in SOLVERS])
def test_inputs_are_not_modified(name):
    X, y = data()
    X0, y0 = X.copy(), y.copy()
    generator = np.random.default_rng(5)
    fit, problem, parties = run(name, X, y, rng=generator)
    assert np.array_equal(X, X0) and np.array_equal(y, y0)
    assert X.flags.writeable and y.flags.writeable            # not even the flags
    assert np.array_equal(problem.X, X0)                      # the Problem's copy too
    if parties is not None:
        assert np.array_equal(np.sort(np.concatenate([p.rows for p in parties])), np.arange(N))
    assert not np.shares_memory(fit.theta, X) and not np.shares_memory(fit.theta, problem.X)


def _arrays(value, path="fit"):
    """Every ndarray reachable from a Fit's fields, with where it was found."""
    if isinstance(value, np.ndarray):
        yield path, value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from _arrays(getattr(value, field.name), f"{path}.{field.name}")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _arrays(item, f"{path}[{key!r}]")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _arrays(item, f"{path}[{i}]")


@pytest.mark.parametrize("name", SOLVERS)
def test_a_fit_releases_theta_and_nothing_else_that_is_an_array(name):
    fit, _, _ = run(name, *data())
    found = [path for path, _ in _arrays(fit)]
    released = ["fit.theta"]
    if name == "joint_sgd":        # the joint-DP model: shared part, each owner's personal part
        released += ["fit.model.shared", "fit.model.personal", "fit.model.personal_columns"]
    assert found == released, found
    scalar = (bool, int, float, str, type(None))
    for key, value in {**fit.settings, **fit.noise}.items():
        items = value if isinstance(value, (list, tuple)) else [value]
        assert all(isinstance(item, scalar) for item in items), (key, value)
        assert "iteration" not in key and "gap" not in key


@pytest.mark.parametrize("name", ["output_perturbation", "objective_perturbation"])
def test_perturbation_fits_hold_no_unnoised_minimiser(name):
    """The un-noised minimiser theta_hat must appear nowhere in the fit, not even rounded."""
    X, y = data()
    fit, problem, _ = run(name, X, y)
    theta_hat = dpsolve.reference_minimizer(problem, cache=False).theta
    for path, array in _arrays(fit):
        if array.shape == theta_hat.shape:
            assert np.linalg.norm(array - theta_hat) > 1e-6, path
    for value in list(fit.settings.values()) + list(fit.noise.values()):
        if isinstance(value, float):
            assert not np.any(np.isclose(value, theta_hat, rtol=0, atol=1e-12))


@pytest.mark.parametrize("name", ["noisy_sgd", "clipped_gd", "minibatch_sgd", "multiparty_gd",
                                  "joint_sgd", "dp_sgd"])
def test_iterative_solvers_run_the_same_steps_on_any_data(name, monkeypatch):
    """Two datasets as different as possible: rows of norm 1e-6 (the gradients all but vanish,
    as if converged at once) and unit rows. Same seed, same public settings: the same number
    of steps and the same index and noise draws. The seeded Generator must end in the same
    state; noisy_sgd only seeds its two Streams from it, so there the Streams' final states are
    compared (each step advances them)."""
    import types

    import dpsolve.solvers.noisy_sgd as sgd_module
    real_stream, streams = sgd_module.Stream, []

    def recording(generator):
        streams.append(real_stream.from_generator(generator))
        return streams[-1]

    monkeypatch.setattr(sgd_module, "Stream", types.SimpleNamespace(from_generator=recording))
    ends = []
    for scale in (1e-6, 0.99):
        streams.clear()
        generator = np.random.default_rng(3)
        fit, _, _ = run(name, *data(seed=1, scale=scale), rng=generator)
        ends.append((fit.steps, generator.bit_generator.state["state"]["state"],
                     [s.state.tolist() for s in streams]))
    assert ends[0] == ends[1]
    if name == "noisy_sgd":
        fresh = real_stream.from_generator(np.random.default_rng(3))
        assert ends[0][2][0] != fresh.state.tolist()       # the index stream did advance


# -- secure=True ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SOLVERS)
def test_secure_fits_are_on_the_grid_unseeded_and_untimed(name):
    from dpsolve._secure import GRID
    X, y = data()
    first, problem, _ = run(name, X, y, rng=None, secure=True)
    second, _, _ = run(name, X, y, rng=None, secure=True)
    for fit in (first, second):
        units = fit.theta / GRID
        assert np.array_equal(units, np.round(units)) and np.any(units != 0)
        if problem.radius is not None:                       # projected releases stay in C
            assert np.linalg.norm(fit.theta) <= problem.radius
        assert np.isnan(fit.wall_time) and fit.settings["secure"] is True
        if fit.model is not None:
            assert np.array_equal(fit.model.shared, fit.theta)
            assert np.array_equal(fit.model.personal / GRID, np.round(fit.model.personal / GRID))
    assert not np.array_equal(first.theta, second.theta)       # fresh entropy each time
    reproducible, _, _ = run(name, X, y, rng=0)
    assert "secure" not in reproducible.settings and np.isfinite(reproducible.wall_time)


@pytest.mark.parametrize("name", ["output_perturbation", "objective_perturbation",
                                  "aggregated_output_perturbation"])
def test_secure_perturbation_runs_the_same_inner_steps_on_any_data(name, monkeypatch, gradient_evaluations):
    """secure=True: the inner solve is the fixed-iteration solver, so rows of norm 1e-6 (the
    minimiser is all but 0, a certificate is reached at once) and unit rows take the same number
    of gradient evaluations, the K in the settings."""
    calls = gradient_evaluations

    seen = []
    for scale in (1e-6, 0.99):
        calls.clear()
        fit, _, _ = run(name, *data(seed=1, scale=scale), rng=None, secure=True)
        seen.append((len(calls), sum(calls), dict(fit.settings)))
    assert seen[0] == seen[1]
    assert seen[0][1] == N * seen[0][2]["inner_steps"]


def test_clipped_gd_checks_the_released_average_not_the_last_iterate(monkeypatch):
    """Step eta = 2^1020 with lambda = 2^-1020 (eta lambda = 1 exactly): every iterate is
    -eta (g/n + sigma xi), finite, but their sum overflows. The old check read the last iterate
    and released an infinite average; the check is on the released theta now (and the last
    iterate, when that is what is released, passes). Problem now refuses such a lambda
    (docs/bad_input.md, "Numerical range"); the range is widened here to reach the check."""
    monkeypatch.setattr(dpsolve.problem, "CONSTANT_RANGE", (0.0, math.inf))
    X, y = data()
    step = 2.0 ** 1020
    problem = dpsolve.Problem(X, y, "logistic", radius=None, reg=1.0 / step)
    kwargs = dict(delta=1e-5, sigma=1.0, steps=400, step_size=step, project=False, rng=0)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no overflow warning mid-run either
        last = dpsolve.clipped_gd(problem, output="last", **kwargs)
        assert np.all(np.isfinite(last.theta))
        with pytest.raises(FloatingPointError, match="non-finite"):
            dpsolve.clipped_gd(problem, output="average", **kwargs)


def test_noisy_sgd_runs_every_step_before_checking_the_release(monkeypatch):
    """An iterate turning non-finite no longer stops the run early (a stopping time read off an
    iterate): every chunk of steps runs, then the released theta is checked."""
    import types

    import dpsolve.solvers.noisy_sgd as sgd_module
    real = sgd_module._sgd
    chunks = []

    def steps(X, y, kind, h, theta, *args):
        chunks.append(args[0])
        real.noisy_sgd_steps(X, y, kind, h, theta, *args)
        theta[0] = np.nan                   # as if the iterate had overflowed
        return False

    monkeypatch.setattr(sgd_module, "_CHUNK", 50)
    monkeypatch.setattr(sgd_module, "_sgd", types.SimpleNamespace(
        noisy_sgd_steps=steps, SCHEDULES=real.SCHEDULES))
    with pytest.raises(FloatingPointError, match="non-finite"):
        run("noisy_sgd", *data())           # 200 steps
    assert chunks == [1, 51, 101, 151]


def test_minibatch_sgd_checks_the_released_theta(monkeypatch):
    """The check reads the released theta itself, not a flag computed elsewhere: a kernel that
    reports success but leaves a non-finite theta is caught."""
    import types

    import dpsolve.solvers.minibatch_sgd as module
    real = module._minibatch

    def one_pass(X, y, kind, h, theta, *args):
        real.minibatch_sgd_pass(X, y, kind, h, theta, *args)
        theta[0] = np.inf
        return True

    monkeypatch.setattr(module, "_minibatch", types.SimpleNamespace(
        minibatch_sgd_pass=one_pass, SCHEDULES=real.SCHEDULES))
    with pytest.raises(FloatingPointError, match="non-finite"):
        run("minibatch_sgd", *data())
