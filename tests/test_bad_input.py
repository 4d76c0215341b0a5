"""The bad-input catalogue (docs/bad_input.md), walked case by case.

Every case must raise the stated exception before any work starts, with a message that names the
parameter (the regular expression below). ``test_catalogue_matches_the_docs`` keeps the docs table
and this list the same.
"""
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse

import dpsolve

N, P = 60, 4
_rng = np.random.default_rng(0)
X = _rng.normal(size=(N, P))
X /= np.linalg.norm(X, axis=1, keepdims=True) * 1.01
Y = np.where(X[:, 0] > 0, 1.0, -1.0)


def problem(loss="logistic", **settings):
    settings = {"radius": 1.0, "reg": 0.05, **settings}
    return dpsolve.Problem(X, Y if loss != "squared" else 0.5 * Y, loss, **settings)


def parties(prob):
    return dpsolve.Parties.from_sizes(prob, [30, 30])


def with_parties(solver, *args, **kwargs):
    """``solver(problem, parties, ...)`` with parties built on that very problem."""
    prob = problem()
    return solver(prob, parties(prob), *args, **kwargs)


# Each solver called with the privacy arguments under test, everything else valid and small.
SOLVERS = {
    "noisy_sgd": lambda e=0.5, d=1e-6, **k: dpsolve.noisy_sgd(
        problem(), e, d, **{"steps": 20, **k}),
    "clipped_gd": lambda e=0.5, d=1e-6, **k: dpsolve.clipped_gd(
        problem(), e, d, **{"steps": 3, **k}),
    "minibatch_sgd": lambda e=0.5, **k: dpsolve.minibatch_sgd(problem(), e, **k),
    "output_perturbation": lambda e=0.5, d=1e-6, **k: dpsolve.output_perturbation(
        problem(), e, d, **k),
    "objective_perturbation": lambda e=0.5, d=None, **k: dpsolve.objective_perturbation(
        problem(radius=None), e, d, **k),
    "multiparty_gd": lambda e=0.5, d=1e-6, **k: with_parties(
        dpsolve.multiparty_gd, e, d, **{"steps": 3, **k}),
    "aggregated_output_perturbation": lambda e=0.5, d=1e-6, **k: with_parties(
        dpsolve.aggregated_output_perturbation, e, d, **k),
    "joint_sgd": lambda e=0.5, d=1e-6, **k: with_parties(
        dpsolve.joint_sgd, e, d, **{"steps": 20, **k}),
    "dp_sgd": lambda e=0.5, d=1e-6, **k: dpsolve.dp_sgd(problem(), e, d, **{"steps": 3, **k}),
}
GAUSSIAN = ("noisy_sgd", "clipped_gd", "output_perturbation", "multiparty_gd",
            "aggregated_output_perturbation", "joint_sgd", "dp_sgd")


def case(id, call, error, match):
    return pytest.param(call, error, match, id=id)


CATALOGUE = []
# -- privacy parameters ------------------------------------------------------------------------
for name, solve in SOLVERS.items():
    for label, value, error in (("0", 0.0, ValueError), ("negative", -1.0, ValueError),
                                ("nan", math.nan, ValueError), ("inf", math.inf, ValueError),
                                ("bool", True, TypeError), ("string", "1", TypeError)):
        CATALOGUE.append(case(f"epsilon-{label}-{name}", lambda s=solve, v=value: s(e=v), error,
                              "epsilon"))
for name in GAUSSIAN:
    solve = SOLVERS[name]
    for label, value in (("negative", -1e-6), ("1", 1.0), ("nan", math.nan),
                         ("0-gaussian", 0.0)):
        CATALOGUE.append(case(f"delta-{label}-{name}", lambda s=solve, v=value: s(d=v),
                              ValueError, "delta"))
CATALOGUE += [
    case("delta-with-pure-minibatch_sgd", lambda: dpsolve.minibatch_sgd(problem(), 1.0,
                                                                         delta=1e-6),
         TypeError, "delta"),
    case("delta-with-gamma-norm-output_perturbation", lambda: SOLVERS["output_perturbation"](
        noise="gamma_norm"), ValueError, "delta"),
    case("delta-with-gamma-norm-objective_perturbation",
         lambda: SOLVERS["objective_perturbation"](d=1e-6, noise="gamma_norm",
                                                   objective_noise="gamma_norm"), ValueError,
         "delta"),
    case("gaussian-objective-without-delta-objective_perturbation",
         lambda: SOLVERS["objective_perturbation"](d=None, objective_noise="gaussian"),
         TypeError, "delta"),
    case("unknown-objective-noise-objective_perturbation",
         lambda: SOLVERS["objective_perturbation"](objective_noise="laplace"), ValueError,
         "objective_noise"),
    case("gaussian-without-delta-output_perturbation",
         lambda: SOLVERS["output_perturbation"](d=None, noise="gaussian"), TypeError, "delta"),
    case("classic-gaussian-epsilon-2-output_perturbation",
         lambda: SOLVERS["output_perturbation"](e=2.0, calibration="paper"), ValueError,
         "epsilon"),
    case("classic-gaussian-epsilon-2-clipped_gd",
         lambda: SOLVERS["clipped_gd"](e=2.0, calibration="paper"), ValueError, "epsilon"),
    case("paper-epsilon-2-noisy_sgd", lambda: SOLVERS["noisy_sgd"](e=2.0), ValueError,
         "epsilon"),
    case("calibration-unknown-clipped_gd", lambda: SOLVERS["clipped_gd"](calibration="exact"),
         ValueError, "calibration"),
]
# -- solver settings ---------------------------------------------------------------------------
for label, value, error in (("0", 0.0, ValueError), ("negative", -1.0, ValueError),
                            ("nan", math.nan, ValueError), ("inf", math.inf, ValueError),
                            ("bool", True, TypeError)):
    CATALOGUE += [
        case(f"clip_norm-{label}", lambda v=value: SOLVERS["clipped_gd"](clip_norm=v), error,
             "clip_norm"),
        case(f"step_size-{label}-clipped_gd", lambda v=value: SOLVERS["clipped_gd"](step_size=v),
             error, "step_size"),
        case(f"step_size-{label}-minibatch_sgd",
             lambda v=value: SOLVERS["minibatch_sgd"](step_size=v), error, "step_size"),
        case(f"tolerance-{label}-output_perturbation",
             lambda v=value: SOLVERS["output_perturbation"](tolerance=v), error, "tolerance"),
    ]
    if label != "0":                     # sigma = 0 is allowed: explicitly non-private
        CATALOGUE.append(case(f"sigma-{label}-clipped_gd", lambda v=value: dpsolve.clipped_gd(
            problem(), delta=1e-6, sigma=v, steps=3), error, "sigma"))
for label, value, error in (("0", 0, ValueError), ("negative", -1, ValueError),
                            ("float", 2.5, TypeError), ("nan", math.nan, TypeError),
                            ("bool", True, TypeError), ("string", "3", TypeError)):
    CATALOGUE += [
        case(f"steps-{label}-clipped_gd", lambda v=value: SOLVERS["clipped_gd"](steps=v), error,
             "steps"),
        case(f"steps-{label}-noisy_sgd", lambda v=value: SOLVERS["noisy_sgd"](steps=v), error,
             "steps"),
        case(f"batch_size-{label}", lambda v=value: SOLVERS["minibatch_sgd"](batch_size=v), error,
             "batch_size"),
    ]
CATALOGUE += [
    case("sigma-without-delta-clipped_gd",
         lambda: dpsolve.clipped_gd(problem(), sigma=1.0, steps=3), TypeError, "delta"),
    case("sigma-and-epsilon-clipped_gd",
         lambda: dpsolve.clipped_gd(problem(), 0.5, 1e-6, sigma=1.0, steps=3), ValueError,
         "sigma"),
    case("batch_size-above-n", lambda: SOLVERS["minibatch_sgd"](batch_size=N + 1), ValueError,
         "batch_size"),
    case("output-unknown-clipped_gd", lambda: SOLVERS["clipped_gd"](output="best"), ValueError,
         "output"),
    case("problem-not-a-Problem", lambda: dpsolve.clipped_gd(X, 0.5, 1e-6), TypeError,
         "problem"),
    case("minibatch_sgd-without-reg", lambda: dpsolve.minibatch_sgd(problem(reg=0.0), 0.5),
         ValueError, "reg"),
    case("output_perturbation-without-reg",
         lambda: dpsolve.output_perturbation(problem(reg=0.0), 0.5, 1e-6), ValueError, "reg"),
    case("objective_perturbation-with-radius",
         lambda: dpsolve.objective_perturbation(problem(), 0.5), ValueError, "radius"),
    case("objective_perturbation-hinge",
         lambda: dpsolve.objective_perturbation(problem("hinge", radius=None), 0.5),
         ValueError, "loss"),
]
# -- the problem: parameters -------------------------------------------------------------------
for label, value, error in (("negative", -1.0, ValueError), ("nan", math.nan, ValueError),
                            ("inf", math.inf, ValueError), ("bool", True, TypeError),
                            ("string", "1", TypeError)):
    CATALOGUE += [
        case(f"reg-{label}", lambda v=value: problem(reg=v), error, "reg"),
        case(f"radius-{label}", lambda v=value: problem(radius=v), error, "radius"),
        case(f"row_norm-{label}", lambda v=value: problem(row_norm=v), error, "row_norm"),
        case(f"label_bound-{label}", lambda v=value: problem("squared", label_bound=v), error,
             "label_bound"),
        case(f"huber_width-{label}", lambda v=value: problem("huber_hinge", huber_width=v), error,
             "huber_width"),
    ]
CATALOGUE += [
    case("radius-0", lambda: problem(radius=0.0), ValueError, "radius"),
    case("radius-None-and-reg-0", lambda: problem(radius=None, reg=0.0), ValueError, "reg"),
    case("loss-unknown", lambda: problem("hinge2"), ValueError, "loss"),
    case("clip_rows-not-bool", lambda: problem(clip_rows="no"), TypeError, "clip_rows"),
    case("fit_intercept-not-bool", lambda: problem(fit_intercept="yes"), TypeError,
         "fit_intercept"),
    case("fit_intercept-int", lambda: problem(fit_intercept=1), TypeError, "fit_intercept"),
    case("intercept_scale-overflow",
         lambda: problem(fit_intercept=True, intercept_scale=1e200), ValueError,
         "intercept_scale"),
]
for label, value, error in (("0", 0.0, ValueError), ("negative", -1.0, ValueError),
                            ("nan", math.nan, ValueError), ("inf", math.inf, ValueError),
                            ("bool", True, TypeError), ("string", "1", TypeError)):
    CATALOGUE.append(case(f"intercept_scale-{label}",
                          lambda v=value: problem(fit_intercept=True, intercept_scale=v), error,
                          "intercept_scale"))


# -- the problem: data -------------------------------------------------------------------------
def _with(array, index, value):
    out = np.array(array, dtype=float)
    out[index] = value
    return out


CATALOGUE += [
    case("X-nan", lambda: dpsolve.Problem(_with(X, (0, 0), math.nan), Y), ValueError, "X"),
    case("X-inf", lambda: dpsolve.Problem(_with(X, (0, 0), math.inf), Y), ValueError, "X"),
    case("X-1-dimensional", lambda: dpsolve.Problem(X[:, 0], Y), ValueError, "X"),
    case("X-3-dimensional", lambda: dpsolve.Problem(X[None], Y), ValueError, "X"),
    case("X-no-rows", lambda: dpsolve.Problem(X[:0], Y[:0]), ValueError, "X"),
    case("X-no-columns", lambda: dpsolve.Problem(X[:, :0], Y), ValueError, "X"),
    case("X-strings", lambda: dpsolve.Problem(X.astype(str), Y), TypeError, "X"),
    case("X-objects", lambda: dpsolve.Problem(X.astype(object), Y), TypeError, "X"),
    case("X-complex", lambda: dpsolve.Problem(X.astype(complex), Y), TypeError, "X"),
    case("X-bool", lambda: dpsolve.Problem(X > 0, Y), TypeError, "X"),
    case("X-sparse-nan", lambda: dpsolve.Problem(
        scipy.sparse.csr_matrix(_with(X, (0, 0), math.nan)), Y), ValueError, "X"),
    case("X-sparse-complex", lambda: dpsolve.Problem(scipy.sparse.csr_matrix(X.astype(complex)),
                                                     Y), TypeError, "X"),
    case("X-sparse-for-parties", lambda: dpsolve.Parties.from_sizes(
        dpsolve.Problem(scipy.sparse.csr_matrix(X), Y), [N // 2, N - N // 2]), TypeError,
         "sparse X"),
    case("X-row-above-row_norm-clip_rows-False",
         lambda: dpsolve.Problem(2 * X, Y, clip_rows=False), ValueError, "row_norm"),
    case("y-nan", lambda: dpsolve.Problem(X, _with(Y, 0, math.nan)), ValueError, "y"),
    case("y-inf-squared", lambda: dpsolve.Problem(X, _with(0.5 * Y, 0, math.inf), "squared"),
         ValueError, "y"),
    case("y-2-dimensional", lambda: dpsolve.Problem(X, Y[:, None]), ValueError, "y"),
    case("y-wrong-length", lambda: dpsolve.Problem(X, Y[:-1]), ValueError, "y"),
    case("y-labels-not-a-default-coding", lambda: dpsolve.Problem(X, np.where(Y > 0, 7, 5)),
         ValueError, "classes"),
    case("y-labels-mix-codings", lambda: dpsolve.Problem(X, _with(Y, 0, 0.0)), ValueError,
         "classes"),
    case("y-three-classes-binary-loss", lambda: dpsolve.Problem(X, np.arange(N) % 3),
         ValueError, "classes"),
    case("y-label-outside-classes", lambda: dpsolve.Problem(X, _with(Y, 0, 3.0),
                                                             classes=(-1, 1)),
         ValueError, "classes"),
    case("y-label-outside-classes-multinomial",
         lambda: dpsolve.Problem(X, np.arange(N) % 3, "multinomial", n_classes=2),
         ValueError, "classes"),
    case("y-above-label_bound-squared", lambda: dpsolve.Problem(X, 2 * Y, "squared"),
         ValueError, "label_bound"),
    case("classes-missing-multinomial", lambda: dpsolve.Problem(X, np.zeros(N), "multinomial"),
         ValueError, "classes"),
    case("classes-one-label-binary", lambda: dpsolve.Problem(X, Y, classes=(1,)), ValueError,
         "classes"),
    case("classes-three-labels-binary", lambda: dpsolve.Problem(X, Y, classes=(-1, 0, 1)),
         ValueError, "classes"),
    case("classes-one-label-multinomial",
         lambda: dpsolve.Problem(X, np.zeros(N), "multinomial", classes=(0,)), ValueError,
         "classes"),
    case("classes-repeated", lambda: dpsolve.Problem(X, Y, classes=(1, 1.0)), ValueError,
         "classes"),
    case("classes-nan", lambda: dpsolve.Problem(X, Y, classes=(-1, math.nan)), ValueError,
         "classes"),
    case("classes-scalar", lambda: dpsolve.Problem(X, Y, classes=2), TypeError, "classes"),
    case("classes-string", lambda: dpsolve.Problem(X, Y, classes="ab"), TypeError, "classes"),
    case("classes-squared", lambda: dpsolve.Problem(X, 0.5 * Y, "squared", classes=(-1, 1)),
         ValueError, "classes"),
    case("classes-and-n_classes", lambda: dpsolve.Problem(X, np.zeros(N), "multinomial",
                                                         classes=(0, 1), n_classes=2),
         ValueError, "classes"),
    case("n_classes-1", lambda: dpsolve.Problem(X, np.zeros(N), "multinomial", n_classes=1),
         ValueError, "n_classes"),
    case("n_classes-float", lambda: dpsolve.Problem(X, np.zeros(N), "multinomial",
                                                   n_classes=2.0), TypeError, "n_classes"),
    case("n_classes-binary-loss", lambda: dpsolve.Problem(X, Y, n_classes=2), ValueError,
         "n_classes"),
]
# -- randomness --------------------------------------------------------------------------------
for label, value, error in (("negative", -1, ValueError), ("float", 1.5, TypeError),
                            ("string", "a", TypeError), ("bool", True, TypeError),
                            ("RandomState", np.random.RandomState(0), TypeError)):
    CATALOGUE.append(case(f"rng-{label}", lambda v=value: SOLVERS["clipped_gd"](rng=v), error,
                          "rng"))
for name, solve in SOLVERS.items():
    CATALOGUE.append(case(f"secure-with-seed-{name}", lambda s=solve: s(secure=True, rng=0),
                          ValueError, "rng"))
CATALOGUE += [
    case("secure-not-bool", lambda: SOLVERS["clipped_gd"](secure="yes"), TypeError, "secure"),
    case("secure-with-transcript-multiparty_gd",
         lambda: SOLVERS["multiparty_gd"](secure=True, record_transcript=True), ValueError,
         "record_transcript"),
]
CATALOGUE += [
    case("secure-hinge-output_perturbation",
         lambda: dpsolve.output_perturbation(problem("hinge"), 0.5, 1e-6, secure=True),
         ValueError, "loss"),
    case("secure-hinge-aggregated_output_perturbation",
         lambda: (lambda p: dpsolve.aggregated_output_perturbation(
             p, parties(p), 0.5, 1e-6, secure=True))(problem("hinge")), ValueError, "loss"),
]
for name in ("output_perturbation", "objective_perturbation", "aggregated_output_perturbation"):
    CATALOGUE.append(case(f"secure-tolerance-below-floor-{name}",
                          lambda s=SOLVERS[name]: s(secure=True, tolerance=1e-30),
                          ValueError, "tolerance"))
# -- partitions --------------------------------------------------------------------------------
CATALOGUE += [
    case("parties-sizes-do-not-add-up", lambda: dpsolve.Parties.from_sizes(problem(), [30, 20]),
         ValueError, "sizes"),
    case("parties-overlap", lambda: dpsolve.Parties(problem(), [np.arange(35),
                                                                 np.arange(30, N)]),
         ValueError, "overlap"),
    case("parties-miss-rows", lambda: dpsolve.Parties(problem(), [np.arange(20),
                                                                   np.arange(30, N)]),
         ValueError, "no party"),
    case("parties-empty-party", lambda: dpsolve.Parties(problem(), [np.arange(N), np.arange(0)]),
         ValueError, "no rows"),
    case("parties-index-out-of-range", lambda: dpsolve.Parties(problem(), [np.arange(30),
                                                                            np.arange(30, 61)]),
         ValueError, "indices"),
    case("parties-float-indices", lambda: dpsolve.Parties(problem(), [np.arange(30) * 1.0,
                                                                       np.arange(30, N)]),
         TypeError, "indices"),
    case("parties-one-party", lambda: dpsolve.Parties(problem(), [np.arange(N)]), ValueError,
         "parties"),
    case("parties-of-another-problem",
         lambda: dpsolve.multiparty_gd(problem(reg=0.01), parties(problem()), 0.5, 1e-6,
                                       steps=3),
         ValueError, "parties"),
]

# -- budgets, estimators and selections -----------------------------------------------------
CATALOGUE += [
    case("budget-epsilon-0", lambda: dpsolve.BudgetAccountant(0.0), ValueError, "epsilon"),
    case("budget-delta-1", lambda: dpsolve.BudgetAccountant(1.0, delta=1.0), ValueError, "delta"),
    case("budget-accountant-zcdp", lambda: dpsolve.BudgetAccountant(1.0, accountant="zcdp"), ValueError, "accountant"),
    case("budget-neighbours-unknown", lambda: dpsolve.BudgetAccountant(1.0, neighbours="swap"), ValueError, "neighbours"),
]
for name, solve in SOLVERS.items():
    # joint_sgd takes no budget (joint DP does not compose with DP): its TypeError names it too
    CATALOGUE.append(case(f"accountant-not-a-budget-{name}",
                          lambda s=solve: s(accountant="budget"), TypeError, "accountant"))


def _estimator_fit(**params):
    from dpsolve.estimators import DPLogisticRegression
    options = {"row_norm": 1.0, "classes": [-1, 1], **params}
    return DPLogisticRegression(**options).fit(X, Y)


def _select(**changes):
    from dpsolve.private_selection import select
    arguments = {"run": lambda c, rng: (0.0, c), "candidates": [1, 2],
                 "run_event": dpsolve.privacy.PureDpEvent(0.1), **changes}
    return select(arguments.pop("run"), arguments.pop("candidates"), arguments.pop("run_event"),
                  **arguments)


def _search(**changes):
    from dpsolve.estimators import DPLogisticRegression
    from dpsolve.private_selection import PrivateGridSearch
    return PrivateGridSearch(DPLogisticRegression(row_norm=1.0, classes=[-1, 1]),
                             {"reg": [0.1]}, **changes).fit(X, Y)


CATALOGUE += [
    case("estimator-epsilon-0", lambda: _estimator_fit(epsilon=0.0), ValueError, "epsilon"),
    case("estimator-delta-1", lambda: _estimator_fit(delta=1.0), ValueError, "delta"),
    case("estimator-solver-unknown", lambda: _estimator_fit(solver="newton"), ValueError,
         "solver"),
    case("estimator-solver-for-another-loss",
         lambda: _estimator_fit(classes=[0, 1, 2], solver="objective_perturbation"),
         ValueError, "solver"),
    case("estimator-solver-options-epsilon",
         lambda: _estimator_fit(solver_options={"epsilon": 2.0}), ValueError, "solver_options"),
    case("estimator-classes-one", lambda: _estimator_fit(classes=[1]), ValueError, "classes"),
    case("estimator-accountant-not-a-budget", lambda: _estimator_fit(accountant="budget"),
         TypeError, "accountant"),
    case("estimator-secure-with-seed", lambda: _estimator_fit(secure=True, random_state=0),
         ValueError, "random_state"),
    case("select-no-candidates", lambda: _select(candidates=[]), ValueError, "candidates"),
    case("select-mean-below-1", lambda: _select(mean=0.5), ValueError, "mean"),
    case("select-method-unknown", lambda: _select(method="exponential"), ValueError, "method"),
    case("select-shape-negative", lambda: _select(method="negative_binomial", shape=-1.0),
         ValueError, "shape"),
    case("select-run-event-not-an-event", lambda: _select(run_event=0.1), TypeError,
         "run_event"),
    case("select-not-private-at-delta-0",
         lambda: _select(run_event=dpsolve.privacy.gaussian_event(1.0, 1.0)), ValueError,
         "delta"),
    case("search-validation-fraction-1", lambda: _search(validation_fraction=1.0), ValueError,
         "validation_fraction"),
    case("search-score-epsilon-0", lambda: _search(score_epsilon=0.0), ValueError,
         "score_epsilon"),
    case("quantile-accountant-not-a-budget",
         lambda: dpsolve.privacy.private_quantile(np.ones(3), 0.5, 0.1, upper=2.0,
                                                  accountant="budget"), TypeError, "accountant"),
]


@pytest.mark.parametrize("call,error,match", CATALOGUE)
def test_bad_input_is_rejected_with_a_named_error(call, error, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # e.g. the delta >= 1/n warning on the way
        with pytest.raises(error, match=match):
            call()


def test_every_registered_solver_is_in_the_catalogue():
    from dpsolve.solvers import registry
    assert set(SOLVERS) == {spec.name for spec in registry()}


def test_catalogue_matches_the_docs():
    ids = {c.id for c in CATALOGUE}
    assert len(ids) == len(CATALOGUE), "duplicate case ids"
    text = (Path(__file__).resolve().parents[1] / "docs" / "bad_input.md").read_text()
    documented = set(re.findall(r"^\| `([^`]+)` \|", text, flags=re.M))
    assert documented == ids


@pytest.mark.parametrize("name", [
    # noisy_sgd: about 3 s, an RDP calibration over T = n^2 sampled steps
    pytest.param(name, marks=pytest.mark.slow) if name == "noisy_sgd" else name
    for name in GAUSSIAN])
def test_delta_at_least_one_over_n_warns(name):
    # (noisy_sgd's default paper formula needs delta < 1/n^3 and refuses such a delta outright)
    extra = {"calibration": "rdp"} if name == "noisy_sgd" else {}
    with pytest.warns(dpsolve.PrivacyWarning, match="1/n"):
        SOLVERS[name](d=0.02, **extra)             # 1/n = 0.0167
