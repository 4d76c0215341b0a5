"""Intercepts: ``Problem(..., fit_intercept=True, intercept_scale=s)`` (docs/intercepts.md).

The Problem appends a public constant feature s to every row after clipping the features to B,
and bounds the augmented rows by sqrt(B^2 + s^2). Everything downstream sees an ordinary problem
with one more column, which the tests check from both sides: the augmentation itself, and every
registered solver giving bit for bit the fit of the same problem built by hand on the augmented
rows.
"""
import json
import math
import warnings

import numpy as np
import pytest
import scipy.sparse

import dpsolve
from dpsolve import Parties, Problem
from dpsolve.privacy import PrivacyWarning
from dpsolve.problem import _append_intercept_column
from dpsolve.solvers import registry

SPECS = registry()
UNIT = np.finfo(float).eps / 2


def labels_for(loss, X, seed=0):
    """Labels of each loss's kind for rows X (as tests/conftest.py's synthetic_problem)."""
    rng = np.random.default_rng(seed)
    if loss == "squared":
        return np.clip(X @ np.ones(X.shape[1]) / X.shape[1], -1, 1)
    if loss == "multinomial":
        return np.argmax(X @ rng.standard_normal((X.shape[1], 3)), axis=1)
    return np.where(X @ rng.standard_normal(X.shape[1]) + 0.3 > 0, 1.0, -1.0)


def build(X, y, loss, **options):
    if loss == "multinomial":
        options.setdefault("n_classes", 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)      # clipping count
        return Problem(X, y, loss, **options)


# -- the augmentation ----------------------------------------------------------------------------
@pytest.mark.parametrize("B, s", [(1.0, 1.0), (1.0, 0.1), (0.7, 0.7), (2.0, 0.5), (0.6, 0.8)])
def test_augmented_rows_are_the_clipped_rows_and_the_constant(B, s):
    """X becomes [X_clipped, s]: the last column is exactly s, the features are the rows the
    Problem without intercept holds (up to the ulp trimmed off a row whose augmented norm
    rounds above the bound), and every computed row norm is within the public bound
    row_norm = hypot(B, s), a function of B and s alone."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((400, 6))
    X[:200] *= (B / np.linalg.norm(X[:200], axis=1))[:, None]      # on the bound
    X[200:300] *= 3 * B                                               # above it: clipped
    X[300:] *= (rng.uniform(0.1, 0.9, 100) * B / np.linalg.norm(X[300:], axis=1))[:, None]
    X0 = X.copy()
    y = labels_for("logistic", X)
    P = build(X, y, "logistic", row_norm=B, fit_intercept=True, intercept_scale=s)
    plain = build(X, y, "logistic", row_norm=B)
    assert np.array_equal(X, X0)                                      # the user's X untouched
    assert P.X.shape == (400, 7) and P.p == 7 and P.n_features == 6
    assert P.X.flags.c_contiguous and P.X.dtype == np.float64 and not P.X.flags.writeable
    assert np.all(P.X[:, -1] == s)
    assert P.row_norm == math.hypot(B, s) and P.feature_row_norm == B
    assert np.max(np.linalg.norm(P.X, axis=1)) <= P.row_norm
    assert np.max(np.abs(P.X[:, :-1] - plain.X)) <= 8 * UNIT * B
    # rows well inside the bound are not touched at all
    inside = np.linalg.norm(plain.X, axis=1) < 0.99 * B
    assert inside.sum() == 100 and np.array_equal(P.X[inside, :-1], plain.X[inside])


def test_the_row_bound_does_not_depend_on_the_data():
    """row_norm is public metadata (it sets L, every sensitivity and the noise): the same for
    any data, including data whose rows round above hypot(B, s) once augmented."""
    bounds = set()
    for seed in range(5):
        X = np.random.default_rng(seed).standard_normal((300, 4))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        P = build(X, labels_for("logistic", X), "logistic", fit_intercept=True,
                  intercept_scale=0.1)
        bounds.add(P.row_norm)
        assert np.max(np.linalg.norm(P.X, axis=1)) <= P.row_norm
    assert bounds == {math.hypot(1.0, 0.1)}


def test_append_intercept_column_dense_and_sparse():
    """The helper returns a new matrix; a scipy.sparse input stays sparse (CSR, never
    densified) with the same values as the dense result."""
    X = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 0.0], [0.0, 3.0, 0.0]])
    X0 = X.copy()
    dense = _append_intercept_column(X, 0.5)
    assert np.array_equal(dense, np.column_stack([X, np.full(3, 0.5)]))
    assert np.array_equal(X, X0) and not np.shares_memory(dense, X)
    S = scipy.sparse.csr_matrix(X)
    S0 = S.copy()
    augmented = _append_intercept_column(S, 0.5)
    assert scipy.sparse.issparse(augmented) and augmented.format == "csr"
    assert augmented.shape == (3, 4) and augmented.nnz == S.nnz + 3
    assert np.array_equal(augmented.toarray(), dense)
    assert (S != S0).nnz == 0
    assert _append_intercept_column(scipy.sparse.csc_matrix(X), 0.5).format == "csr"


def test_problem_takes_sparse_X_with_an_intercept():
    """(More in tests/test_sparse.py.)"""
    P = Problem(scipy.sparse.csr_matrix(np.eye(3)), [1, -1, 1], fit_intercept=True)
    assert P.is_sparse and P.X.shape == (3, 4)
    np.testing.assert_array_equal(P.X.toarray()[:, 3], [1.0, 1.0, 1.0])


def test_describe_is_unchanged_without_intercept():
    """Descriptions (and the reference cache keys and run ids made from them) of problems
    without intercept do not change; intercept_scale without fit_intercept is ignored."""
    X, y = dpsolve.datasets.make_synthetic(50, 3, rng=0)
    keys = {"loss", "n", "p", "radius", "reg", "row_norm", "label_bound"}
    base = Problem(X, y)
    assert set(base.describe()) == keys
    for options in ({"fit_intercept": False}, {"fit_intercept": False, "intercept_scale": 3.0}):
        other = Problem(X, y, **options)
        assert other.describe() == base.describe() and repr(other) == repr(base)
        assert np.array_equal(other.X, base.X) and other.theta_shape == (3,)
    P = Problem(X, y, fit_intercept=True, intercept_scale=2.0)
    d = P.describe()
    assert set(d) == keys | {"fit_intercept", "intercept_scale", "feature_row_norm"}
    assert (d["fit_intercept"], d["intercept_scale"], d["feature_row_norm"]) == (True, 2.0, 1.0)
    assert d["p"] == 4 and d["row_norm"] == math.hypot(1.0, 2.0)
    assert "fit_intercept=True" in repr(P)


# -- the helpers ----------------------------------------------------------------------------------
@pytest.mark.parametrize("loss", ["logistic", "squared", "multinomial"])
def test_split_theta_round_trips(loss):
    """coef and the effective intercept s theta[-1] reproduce the margins on the user's
    features, and give theta back."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 4)) / 3
    s = 0.25
    P = build(X, labels_for(loss, X), loss, fit_intercept=True, intercept_scale=s)
    theta = rng.standard_normal(P.theta_shape)
    coef, intercept = P.split_theta(theta)
    if loss == "multinomial":
        assert coef.shape == (4, 3) and isinstance(intercept, np.ndarray)
        assert intercept.shape == (3,)
    else:
        assert coef.shape == (4,) and isinstance(intercept, float)
    assert np.allclose(X @ coef + intercept, P.margins(theta), rtol=1e-13, atol=1e-14)
    rebuilt = np.concatenate([coef, np.reshape(np.asarray(intercept) / s, (1,) + coef.shape[1:])])
    assert np.allclose(rebuilt, theta, rtol=1e-15, atol=0)
    coef[...] = 0.0                            # a new array: theta is not a view of it
    assert np.any(theta != 0.0)
    with pytest.raises(ValueError, match="shape"):
        P.split_theta(np.zeros(4))
    # without an intercept: all of theta, offset 0
    Q = build(X, labels_for(loss, X), loss)
    theta = rng.standard_normal(Q.theta_shape)
    coef, intercept = Q.split_theta(theta)
    assert np.array_equal(coef, theta) and np.all(np.asarray(intercept) == 0.0)


# -- the intercept is learned ---------------------------------------------------------------------
def test_the_intercept_is_learned():
    """Labels that depend on an offset (most records positive): the certified minimiser with an
    intercept reaches a clearly lower objective than without, and puts a positive offset."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((400, 3))
    X /= 2 * np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ np.array([2.0, -1.0, 0.5]) + 0.8 + 0.3 * rng.standard_normal(400) > 0,
                 1.0, -1.0)
    options = dict(radius=5.0, reg=1e-3)
    with_b = Problem(X, y, fit_intercept=True, **options)
    without = Problem(X, y, **options)
    ref_b = dpsolve.reference_minimizer(with_b, cache=False)
    ref = dpsolve.reference_minimizer(without, cache=False)
    assert ref_b.gap <= 1e-9 and ref.gap <= 1e-9
    assert ref_b.value < ref.value - 0.05
    coef, intercept = with_b.split_theta(ref_b.theta)
    assert intercept > 0.5


# -- the sensitivity claim ------------------------------------------------------------------------
@pytest.mark.parametrize("loss", ["logistic", "hinge", "huber_hinge", "squared", "multinomial"])
def test_per_sample_gradients_are_bounded_with_the_augmented_row_bound(loss):
    """On rows of feature norm exactly B with the constant s, per-sample gradients
    ``loss'(z) x_aug`` (``x_aug d^T`` for multinomial) over theta in the ball stay within
    ``problem.lipschitz``, computed from sqrt(B^2 + s^2); and they exceed what the same loss
    would allow for rows of norm B, so the augmented bound is needed."""
    B, s, R = 1.0, 0.75, 3.0
    rng = np.random.default_rng(11)
    X = rng.standard_normal((200, 5))
    X *= (B / np.linalg.norm(X, axis=1))[:, None]
    y = labels_for(loss, X)
    options = dict(radius=R, row_norm=B, fit_intercept=True, intercept_scale=s)
    if loss == "squared":
        y = rng.uniform(-1, 1, 200)
        y[:100] = np.where(y[:100] > 0, 1.0, -1.0)
    P = build(X, y, loss, **options)
    plain_L = build(X, y, loss, radius=R, row_norm=B).lipschitz
    row_norms = np.linalg.norm(P.X, axis=1)
    largest = 0.0
    thetas = [np.zeros(P.theta_shape)] + [rng.standard_normal(P.theta_shape) for _ in range(20)]
    # aligned with (or against) the rows: the margins reach +-R sqrt(B^2 + s^2)
    for i in range(5):
        x = P.X[i] / row_norms[i]
        if loss == "multinomial":
            thetas.append(R * np.outer(x, np.eye(3)[(P.y[i] + 1) % 3]))
        else:
            thetas += [R * x, -R * x]
    for theta in thetas:
        norm = np.linalg.norm(theta)
        if norm > R:
            theta = theta * (R / norm)
        d = P.loss_derivatives(theta)
        d_norm = np.linalg.norm(d, axis=1) if d.ndim == 2 else np.abs(d)
        largest = max(largest, float(np.max(d_norm * row_norms)))
    assert largest <= P.lipschitz * (1 + 1e-12)
    assert largest > plain_L
    assert P.lipschitz > plain_L


# -- every solver ---------------------------------------------------------------------------------
CASES = [(spec, loss) for spec in SPECS
         for loss in dict.fromkeys([spec.losses[0]] + (["multinomial"] if "multinomial" in
                                                       spec.losses else []))]


def _run(spec, problem, rng=3):
    args = [problem]
    if spec.partition is not None:
        base, extra = divmod(problem.n, spec.parts)
        args.append(Parties.from_sizes(problem, [base + (j < extra) for j in range(spec.parts)]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        return spec.function(*args, rng=rng, **spec.example)


def _metadata(fit):
    return {"epsilon": fit.epsilon, "delta": fit.delta, "calibration": fit.calibration,
            "neighbours": fit.neighbours, "solver": fit.solver, "source": fit.source,
            "steps": fit.steps}


@pytest.mark.parametrize("spec, loss", CASES, ids=[f"{s.name}-{l}" for s, l in CASES])
def test_every_solver_fits_an_intercept(spec, loss):
    """Each registered solver on a Problem with an intercept returns theta of the augmented
    shape, bit for bit the fit of the same problem built without fit_intercept on the augmented
    rows with row_norm = sqrt(B^2 + s^2) (nothing else sees the difference); and its privacy
    metadata equal those of the fit without intercept, except what scales with the row bound
    (sigma, noise scales, step sizes, clipping norms)."""
    X, _ = dpsolve.datasets.make_synthetic(60, 3, rng=0)
    y = labels_for(loss, X)
    B, s = 0.6, 0.8                  # sqrt(B^2 + s^2) = 1: minibatch_sgd needs L <= 1
    options = dict(spec.example_problem, row_norm=B)
    P = build(X, y, loss, fit_intercept=True, intercept_scale=s, **options)
    # in l-inf (constraint "l1") the augmented rows' bound is max(B, s)
    assert P.row_norm == (max(B, s) if P.constraint == "l1" else 1.0)
    fit = _run(spec, P)
    shape = (4, 3) if loss == "multinomial" else (4,)
    assert fit.theta.shape == P.theta_shape == shape
    if fit.model is not None:        # joint_sgd: the shared block has the intercept too
        assert fit.model.shared.shape == shape
    # the same problem, augmented by hand
    hand = build(P.X, y, loss, **{**options, "row_norm": P.row_norm})
    assert np.array_equal(hand.X, P.X) and hand.lipschitz == P.lipschitz
    same = _run(spec, hand)
    assert np.array_equal(fit.theta, same.theta)
    assert repr(fit.dp_event) == repr(same.dp_event) and dict(fit.noise) == dict(same.noise)
    assert dict(fit.settings) == dict(same.settings) and fit.sigma == same.sigma
    # against the fit without intercept (rows of norm <= B = 0.6)
    plain = _run(spec, build(X, y, loss, **options))
    ours, theirs = _metadata(fit), _metadata(plain)
    if "steps" not in spec.example:      # a default T from the bound scales with the rows' too
        del ours["steps"], theirs["steps"]
    assert ours == theirs
    if spec.name != "objective_perturbation":
        assert fit.privacy.certified_epsilon == pytest.approx(plain.privacy.certified_epsilon,
                                                              rel=1e-6)
    # (objective perturbation's split and extra regulariser are chosen from public constants,
    # p among them: its certified epsilon moves with p within the same claim)
    assert fit.privacy.certified_epsilon <= fit.epsilon * (1 + 1e-9)


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.name)
def test_secure_mode_fits_an_intercept(spec):
    """secure=True (OS entropy, the fixed-iteration inner solvers, theta on the grid) on a
    Problem with an intercept: the augmented shape, and values on the release grid."""
    from dpsolve._secure import GRID
    X, _ = dpsolve.datasets.make_synthetic(60, 3, rng=0)
    loss = "logistic" if "logistic" in spec.losses else spec.losses[0]
    P = build(X, labels_for(loss, X), loss, fit_intercept=True, intercept_scale=0.8,
              **{**spec.example_problem, "row_norm": 0.6})
    args = [P]
    if spec.partition is not None:
        args.append(Parties.from_sizes(P, [30, 30]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        fit = spec.function(*args, secure=True, **spec.example)
    assert fit.theta.shape == (4,)
    assert np.array_equal(np.trunc(fit.theta / GRID) * GRID, fit.theta)


@pytest.mark.slow
def test_sgd1_protocol_with_parties_matches_the_hand_augmented_problem():
    """noisy_sgd across parties, as its protocol (each party computes its own rows' messages):
    the same transcript and theta as on the problem augmented by hand."""
    X, y = dpsolve.datasets.make_synthetic(40, 3, rng=6)
    P = Problem(X, y, reg=0.1, fit_intercept=True, intercept_scale=0.5)
    hand = Problem(P.X, y, reg=0.1, row_norm=P.row_norm)
    fits = [dpsolve.noisy_sgd(Q, 0.9, 1e-6, steps=60, parties=Parties.from_sizes(Q, [15, 25]),
                              record_transcript=True, rng=1) for Q in (P, hand)]
    assert fits[0].theta.shape == (4,) and fits[0].transcript.messages.shape == (60, 4)
    assert np.array_equal(fits[0].theta, fits[1].theta)
    assert np.array_equal(fits[0].transcript.messages, fits[1].transcript.messages)


# -- multi-party: parties, joint_sgd --------------------------------------------------------------
def test_parties_hold_augmented_rows():
    """Each party's rows and local problem carry the intercept column (Problem._with_data keeps
    the augmented X and the public constants)."""
    X, y = dpsolve.datasets.make_synthetic(40, 3, rng=2)
    P = Problem(X, y, reg=0.1, fit_intercept=True, intercept_scale=0.5)
    parties = Parties.from_sizes(P, [15, 25])
    for party in parties:
        assert np.array_equal(party.X, P.X[party.rows])
        local = party.local_problem()
        assert local.fit_intercept and local.theta_shape == (4,)
        assert local.row_norm == P.row_norm and np.all(local.X[:, -1] == 0.5)
    from_data = Parties.from_data([(X[:15], y[:15]), (X[15:], y[15:])], reg=0.1,
                                  fit_intercept=True, intercept_scale=0.5)
    assert np.array_equal(from_data.problem.X, P.X)


def test_joint_sgd_shares_the_intercept_and_personalises_it_when_listed():
    """The intercept column (index n_features) is always in the shared block; "all" also
    personalises it (an offset per owner), an explicit list may leave it out. The model predicts
    from the user's features as from the augmented rows."""
    X, y = dpsolve.datasets.make_synthetic(80, 3, rng=5)
    P = Problem(X, y, radius=1.0, reg=0.1, fit_intercept=True)
    owners = Parties.from_sizes(P, [40, 40])
    fit = dpsolve.joint_sgd(P, owners, 1.0, 1e-5, steps=100, rng=0)
    assert fit.settings["personal_columns"] == [0, 1, 2, 3]
    assert fit.model.shared.shape == (4,) and fit.model.personal.shape == (2, 4)
    features_only = dpsolve.joint_sgd(P, owners, 1.0, 1e-5, personal_columns=[0, 1, 2],
                                      steps=100, rng=0)
    assert features_only.model.personal.shape == (2, 3)
    rows = owners[1].rows
    assert np.array_equal(fit.model.predict(X[rows], 1, P), fit.model.predict(P.X[rows], 1, P))
    with pytest.raises(ValueError, match="personal_columns"):
        dpsolve.joint_sgd(P, owners, 1.0, 1e-5, personal_columns=[4], steps=10, rng=0)


# -- auditing -------------------------------------------------------------------------------------
def test_canary_neighbours_keep_the_intercept():
    """The canary datasets of a problem with an intercept carry the constant on every record,
    the canary included; the canary's coordinate comes before the intercept's and no other
    record uses it; the canary row has the largest norm, sqrt(B^2 + s^2)."""
    X, y = dpsolve.datasets.make_synthetic(30, 3, rng=0)
    P = build(X, y, "logistic", row_norm=0.8, fit_intercept=True, intercept_scale=0.6)
    D, D2, statistic = dpsolve.audit.canary_neighbours(P)
    for Q in (D, D2):
        assert Q.fit_intercept and Q.intercept_scale == 0.6 and Q.row_norm == P.row_norm
        assert Q.X.shape == (31, 5) and np.all(Q.X[:, -1] == 0.6)
        assert np.all(Q.X[:30, 3] == 0.0) and np.array_equal(Q.X[:30, :3], P.X[:, :3])
    assert D.X[30, 3] == 0.8
    assert np.linalg.norm(D.X[30]) == pytest.approx(P.row_norm, rel=1e-15)
    assert D.y[30] == 1.0 and D2.y[30] == -1.0 and np.array_equal(D.X, D2.X)
    outputs = np.arange(10.0).reshape(2, 5)
    assert np.array_equal(statistic(outputs), [3.0, 8.0])


# -- the command line and sweeps ------------------------------------------------------------------
def test_cli_solve_fits_an_intercept(tmp_path, capsys):
    from dpsolve.cli import main
    X, y = dpsolve.datasets.make_synthetic(200, 3, rng=1)
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, y]), delimiter=",")
    out = tmp_path / "fit.json"
    assert main(["solve", "--data", str(tmp_path / "d.csv"), "--epsilon", "1", "--delta",
                 "1e-5", "--seed", "4", "--fit-intercept", "--intercept-scale", "0.5",
                 "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert len(report["theta"]) == 4 and len(report["coef"]) == 3
    assert report["coef"] == report["theta"][:3]
    assert report["intercept"] == pytest.approx(0.5 * report["theta"][3], rel=1e-15)
    assert report["problem"]["fit_intercept"] is True
    assert report["problem"]["intercept_scale"] == 0.5
    plain = tmp_path / "plain.json"
    assert main(["solve", "--data", str(tmp_path / "d.csv"), "--epsilon", "1", "--delta",
                 "1e-5", "--seed", "4", "--no-fit-intercept", "--out", str(plain)]) == 0
    assert "coef" not in json.loads(plain.read_text())
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["solve", "--data", str(tmp_path / "d.csv"), "--epsilon", "1", "--delta", "1e-5",
              "--no-fit-intercept", "--intercept-scale", "2"])
    assert "--fit-intercept" in capsys.readouterr().err
    assert main(["solve", "--data", str(tmp_path / "d.csv"), "--epsilon", "1", "--delta",
                 "1e-5", "--fit-intercept", "--intercept-scale", "-1"]) == 2
    assert "intercept_scale" in capsys.readouterr().err


def test_sweeps_pass_the_intercept_options_to_the_problem():
    from dpsolve.experiments import SweepError, load_sweep
    from dpsolve.experiments.runs import build_problem
    raw = {"name": "intercept", "replicates": 1,
           "data": {"source": "synthetic", "n": 50, "p": 3},
           "problem": {"loss": "logistic", "fit_intercept": [False, True],
                       "intercept_scale": 0.5},
           "solver": [{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-5}]}
    runs = load_sweep(raw).runs()
    assert len(runs) == 2
    problems = {run["problem"]["fit_intercept"]: build_problem(run, 0) for run in runs}
    assert problems[True].fit_intercept and problems[True].intercept_scale == 0.5
    assert problems[True].p == 4 and problems[False].p == 3
    assert np.array_equal(problems[True].X[:, :3], problems[False].X)
    bad = {**raw, "problem": {"fit_intercept": True, "intercept": 1.0}}
    with pytest.raises(SweepError, match="problem.intercept"):
        load_sweep(bad)
