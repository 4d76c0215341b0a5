"""Checks every registered solver must pass (after scikit-learn's ``estimator_checks``).

Each check runs over :func:`dpsolve.solvers.registry`, on the spec's own small example
(``spec.example``, ``spec.example_problem``), so a new solver is checked as soon as it is
registered: reproducibility, secure mode, inputs left untouched, bad inputs refused before any
work, certification of the claim, a cheap privacy audit, and the spec's own consistency.
"""
import copy
import inspect
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

import dpsolve
from dpsolve import Parties, Problem
from dpsolve._secure import GRID
from dpsolve._validation import Boolean, Integer, Options, Real
from dpsolve.privacy import PrivacyWarning
from dpsolve.solvers import Bound, registry

SPECS = registry()
DOCS = Path(__file__).resolve().parents[1] / "docs"


def ids(spec):
    return spec.name


def example_problem(spec, *, n=60, p=3, seed=0, X=None, y=None):
    """A small problem of the first loss the solver takes, with the spec's options."""
    loss = spec.losses[0]
    if X is None:
        X, y = dpsolve.datasets.make_synthetic(n, p, rng=seed)
        if loss == "squared":
            y = np.clip(X @ np.ones(p) / p, -1, 1)
    return Problem(X, y, loss, **spec.example_problem)


def run(spec, problem, *, secure=False, rng=0, **changes):
    """The spec's example on ``problem`` (split into ``spec.parts`` equal parties if needed)."""
    options = {**spec.example, **changes}
    args = [problem]
    if spec.partition is not None:
        base, extra = divmod(problem.n, spec.parts)
        args.append(Parties.from_sizes(problem, [base + (j < extra) for j in range(spec.parts)]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)      # delta >= 1/n on tiny examples
        return spec.function(*args, secure=secure, rng=None if secure else rng, **options)


def released(fit):
    parts = [fit.theta]
    if fit.model is not None:
        parts.append(fit.model.personal)
    return parts


# -- the spec itself ---------------------------------------------------------------------------
def test_registry_holds_every_public_solver():
    names = [spec.name for spec in SPECS]
    assert len(set(names)) == len(names)
    for spec in SPECS:
        assert getattr(dpsolve, spec.name) is spec.function
        assert spec.function.__name__ == spec.name
        assert dpsolve.solvers.get(spec.name) is spec
    with pytest.raises(ValueError, match="unknown solver 'adam'"):
        dpsolve.solvers.get("adam")


@pytest.mark.parametrize("spec", SPECS, ids=ids)
def test_spec_is_complete_and_documented(spec):
    assert spec.works and all(isinstance(w, str) and w for w in spec.works)
    assert set(spec.losses) <= set(dpsolve.problem.LOSSES) and spec.losses
    assert spec.guarantee in ("dp", "joint_dp")
    assert (DOCS / spec.page).is_file()
    signature = inspect.signature(spec.function).parameters
    for name in spec.parameters:
        assert name in signature, f"{spec.name}: declared parameter {name} not in signature"
    assert "secure" in signature and "rng" in signature
    if spec.partition is not None:
        assert list(signature)[1] == spec.partition
    # the repeated parameter docs come from the one template
    assert "{{" not in spec.function.__doc__
    assert "operating system's entropy" in spec.function.__doc__


# -- reproducibility ---------------------------------------------------------------------------
@pytest.mark.parametrize("spec", SPECS, ids=ids)
def test_same_seed_same_bits_other_seed_other_bits(spec):
    P = example_problem(spec)
    a, b, c = run(spec, P, rng=5), run(spec, P, rng=5), run(spec, P, rng=6)
    for x, y in zip(released(a), released(b)):
        assert np.array_equal(x, y)
    assert any(not np.array_equal(x, z) for x, z in zip(released(a), released(c)))
    assert a.solver == spec.name and a.source == spec.source
    assert not a.theta.flags.writeable


# -- secure mode -------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", SPECS, ids=ids)
def test_secure_mode_rounds_to_the_grid_and_releases_no_timing(spec):
    P = example_problem(spec)
    with pytest.raises(ValueError, match="rng must be None when secure=True"):
        spec.function(P, *([None] if spec.partition else []), secure=True, rng=0,
                      **spec.example)
    fit = run(spec, P, secure=True)
    for values in released(fit):
        assert np.array_equal(np.trunc(values / GRID) * GRID, values)
    assert math.isnan(fit.wall_time) and fit.settings["secure"] is True


# -- inputs untouched --------------------------------------------------------------------------
@pytest.mark.parametrize("spec", SPECS, ids=ids)
def test_inputs_are_not_modified(spec):
    X, y = dpsolve.datasets.make_synthetic(60, 3, rng=1)
    if spec.losses[0] == "squared":
        y = np.clip(X[:, 0], -1, 1)
    X0, y0 = X.copy(), y.copy()
    P = example_problem(spec, X=X, y=y)
    PX, Py = P.X.copy(), P.y.copy()
    options = copy.deepcopy(dict(spec.example))
    run(spec, P)
    assert np.array_equal(X, X0) and np.array_equal(y, y0)
    assert np.array_equal(P.X, PX) and np.array_equal(P.y, Py)
    assert options == dict(spec.example)


# -- bad inputs, refused before any work -------------------------------------------------------
def _bad_values(constraint):
    """Values each declared constraint must refuse, with the exception type."""
    if isinstance(constraint, Options):
        return [("not-an-option", ValueError), (3, ValueError)]
    if isinstance(constraint, Integer):
        return [(1.5, TypeError), (True, TypeError)] + (
            [(constraint.low - 1, ValueError)] if constraint.low is not None else [])
    if isinstance(constraint, Real):
        return [("x", TypeError), (math.nan, ValueError)]
    if isinstance(constraint, Boolean):
        return [("yes", TypeError)]
    return []


CASES = [(spec, name, value, error) for spec in SPECS
         for name, constraint in spec.parameters.items()
         for value, error in _bad_values(constraint)]


@pytest.mark.parametrize("spec,name,value,error", CASES,
                         ids=[f"{s.name}-{n}-{v!r}" for s, n, v, _ in CASES])
def test_declared_parameters_refuse_bad_values_naming_them(spec, name, value, error,
                                                           gradient_evaluations):
    P = example_problem(spec)
    with pytest.raises(error, match=name):
        run(spec, P, **{name: value})
    assert gradient_evaluations == []            # refused before any gradient was computed


@pytest.mark.parametrize("spec", SPECS, ids=ids)
def test_refuses_a_problem_it_cannot_solve_before_any_work(spec, gradient_evaluations):
    with pytest.raises(TypeError, match="problem must be a dpsolve.Problem"):
        spec.function(np.zeros((3, 2)), *([None] if spec.partition else []), **spec.example)
    other = [loss for loss in dpsolve.problem.LOSSES if loss not in spec.losses]
    for loss in other:
        X, y = dpsolve.datasets.make_synthetic(30, 3, rng=0)
        options = {"classes": (-1, 1)} if loss == "multinomial" else {}
        if loss == "squared":
            y = np.clip(X[:, 0], -1, 1)
        P = Problem(X, y, loss, **{**spec.example_problem, **options})
        with pytest.raises(ValueError, match=spec.name):
            run(spec, P)
    assert gradient_evaluations == []
    if spec.partition is not None:
        P = example_problem(spec)
        with pytest.raises(TypeError, match=spec.partition):
            spec.function(P, [0, 1], **spec.example)


# -- certification and the bound ---------------------------------------------------------------
@pytest.mark.parametrize("spec", SPECS, ids=ids)
def test_the_claim_is_certified_and_the_bound_applies(spec):
    P = example_problem(spec, n=400)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        args = [P]
        if spec.partition is not None:
            args.append(Parties.from_sizes(P, [P.n // spec.parts] * spec.parts))
        fit = spec.function(*args, rng=0, **spec.example)
    assert fit.privacy.certified_epsilon <= fit.epsilon * (1 + 1e-9)
    assert fit.epsilon == spec.example["epsilon"]
    if spec.bound is not None:
        bound = spec.bound(P, args[1] if len(args) > 1 else None, fit, dict(spec.example))
        assert bound is None or (isinstance(bound, Bound) and bound.value > 0
                                 and bound.name)


# -- a cheap audit -----------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("spec", [s for s in SPECS if s.guarantee == "dp"
                                  and set(s.losses) & {"logistic", "hinge", "huber_hinge"}],
                         ids=ids)
def test_a_canary_audit_does_not_refute_the_claim(spec):
    """200 runs on each of two worst-case neighbours (a canary record whose label flips,
    dpsolve.audit.canary_neighbours); the 95% lower bound on epsilon must not exceed the claim
    (Clopper-Pearson: it does so with probability at most 5% for a correct solver)."""
    loss = next(l for l in spec.losses if l in ("logistic", "hinge", "huber_hinge"))
    X, y = dpsolve.datasets.make_synthetic(40, 3, rng=0)
    base = Problem(X, y, loss, **spec.example_problem)
    D, D2, _ = dpsolve.audit.canary_neighbours(base)

    def mechanism(problem, rng):
        return run(spec, problem, rng=rng).theta.reshape(-1)

    result = dpsolve.audit.audit(mechanism, D, D2, runs=200, claim=run(spec, D), rng=1)
    assert result.epsilon <= result.claimed_epsilon
