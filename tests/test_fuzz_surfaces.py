"""Property-based fuzzing of the practitioner's surfaces: the estimators, ``PrivateGridSearch``,
``select``, the budget and its events, and ``choose_solver``. Each search runs at its full count
in the slow tier, and its first few examples run in the fast tier (``test_*_few``).

Each example either returns a result that keeps its promises (finite coefficients and a
guarantee that is not a credit; a budget whose spending never goes down nor above it) or raises
a ``ValueError``/``TypeError`` (a ``BudgetExceededError`` is one) naming a parameter, within a
bounded time. Any other exception, a NaN, a hang or a budget credited is a failure: the classes
of bugs a fuzzing round found in these surfaces (docs/bad_input.md).
"""
import math
import sys
import time
import warnings

import dp_accounting
import numpy as np
import pytest

pytest.importorskip("sklearn", minversion="1.6")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import dpsolve  # noqa: E402
from dpsolve.estimators import (DPLinearRegression, DPLinearSVC,  # noqa: E402
                                DPLogisticRegression)
from dpsolve.private_selection import select  # noqa: E402

#: Seconds an example may take: generous against a loaded machine; the hangs the review found
#: never ended.
LIMIT = 60.0
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
#: The fast tier's twins: the same derandomised search, cut to its first few examples.
FEW = settings(SETTINGS, max_examples=5)


def fuzzed(**strategies):
    """``@given(**strategies)`` at SETTINGS' count, marked slow; its twin at FEW's count, in the
    fast tier, is added to the test's module as ``<name>_few``."""
    def tiers(body):
        twin = FEW(given(**strategies)(body))
        setattr(sys.modules[body.__module__], f"{body.__name__}_few", twin)
        return pytest.mark.slow(SETTINGS(given(**strategies)(body)))
    return tiers

# numbers at and beyond the edges: zero, signs, subnormals, overflow, non-finite, bools, text
EDGES = st.sampled_from([0.0, -1.0, 1e-320, 1e-300, 1e-30, 1e-6, 0.5, 1.0, 2.0, 100.0, 1e150,
                         1e300, math.inf, -math.inf, math.nan, True, "1", None, 1 - 2 ** -53])
REALS = st.one_of(EDGES, st.floats(allow_nan=True, allow_infinity=True))

_rng = np.random.default_rng(0)
X = _rng.normal(size=(60, 3))
X /= np.linalg.norm(X, axis=1, keepdims=True)
Y = np.where(X[:, 0] > 0, 1, 0)


def _named(exc):
    """A refusal must be a ValueError or TypeError with a message (naming what is wrong)."""
    assert isinstance(exc, (ValueError, TypeError)), f"{type(exc).__name__}: {exc}"
    assert str(exc).strip(), f"an empty {type(exc).__name__}"


def _run(call):
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = call()
    except Exception as exc:                 # checked: only named refusals are allowed
        _named(exc)
        result = None
    assert time.perf_counter() - start < LIMIT, "took longer than a refusal or a fit should"
    return result


@fuzzed(cls=st.sampled_from([DPLogisticRegression, DPLinearSVC, DPLinearRegression]),
        name=st.sampled_from(["epsilon", "delta", "reg", "radius", "row_norm", "huber_width",
                              "label_bound", "intercept_scale"]),
        value=REALS)
def test_estimator_parameters(cls, name, value):
    params = {"row_norm": 1.0}
    if cls is DPLinearRegression:
        params["label_bound"] = 1.0
    else:
        params["classes"] = [0, 1]
    if name in cls().get_params():
        params[name] = value
    y = Y if cls is not DPLinearRegression else 0.5 * X[:, 0]
    model = _run(lambda: cls(**params).fit(X, y))
    if model is not None:
        assert np.all(np.isfinite(model.coef_)) and np.all(np.isfinite(model.intercept_))
        assert model.epsilon_ > 0.0
        assert np.all(np.isfinite(model.predict(X)))


@fuzzed(epsilon=REALS, delta=REALS)
def test_choose_solver(epsilon, delta):
    problem = dpsolve.Problem(X, np.where(Y > 0, 1, -1), "logistic", radius=None, reg=0.1)
    _run(lambda: dpsolve.choose_solver(problem, epsilon, delta))


def _self_composed(multiplier, count):
    return dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(multiplier), count)


# (constructor, arguments): built inside the check, since a constructor may refuse them too
EVENTS = st.one_of(
    st.tuples(st.just(dp_accounting.LaplaceDpEvent), st.tuples(REALS)),
    st.tuples(st.just(dp_accounting.GaussianDpEvent), st.tuples(REALS)),
    st.tuples(st.just(dpsolve.privacy.PureDpEvent), st.tuples(REALS)),
    st.tuples(st.just(_self_composed), st.tuples(REALS, st.one_of(st.integers(-5, 5), EDGES))),
)


@fuzzed(events=st.lists(EVENTS, min_size=1, max_size=4))
def test_budget_is_never_credited(events):
    budget = dpsolve.BudgetAccountant(1.0, delta=1e-6)
    spent = 0.0
    for make, arguments in events:
        _run(lambda: budget.spend(make(*arguments), neighbours="replace_one"))
        now = budget.spent()[0]
        assert now >= spent - 1e-12 and now <= 1.0 * (1 + 1e-9)
        spent = now


@fuzzed(method=st.sampled_from(["liu_talwar", "negative_binomial", "poisson", "other"]),
        mean=REALS, shape=REALS, delta=REALS,
        scores=st.lists(st.one_of(REALS.filter(lambda v: isinstance(v, float))), min_size=1,
                        max_size=5))
def test_select(method, mean, shape, delta, scores):
    values = iter(scores * 200)
    selection = _run(lambda: select(lambda c, rng: (next(values), c), [0, 1],
                                    dpsolve.privacy.PureDpEvent(0.1), method=method,
                                    mean=mean, shape=shape, delta=delta, rng=0))
    if selection is not None:
        assert not math.isnan(selection.score)
        assert selection.epsilon >= 0.0


@fuzzed(name=st.sampled_from(["score_epsilon", "validation_fraction", "random_state",
                              "delta", "mean", "shape"]),
        value=REALS, cut=st.sampled_from([0, 0, 1]))
def test_private_grid_search(name, value, cut):
    from dpsolve.private_selection import PrivateGridSearch
    estimator = DPLogisticRegression(row_norm=1.0, classes=[0, 1])
    search = _run(lambda: PrivateGridSearch(estimator, {"reg": [0.1, 1.0]},
                                            **{name: value}).fit(X, Y[:len(Y) - cut]))
    if search is not None:
        assert search.best_estimator_ is None or np.all(np.isfinite(
            search.best_estimator_.coef_))
        assert search.best_estimator_.get_params()["random_state"] is None
