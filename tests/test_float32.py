"""float32 X is a storage format only: every result on it equals, bit for bit, the result on the
same values held in float64 (``X32.astype(np.float64)``).

Every registered solver, every loss it takes, dense and (where it takes one) CSR X; the
reference minimiser and its certificate; the estimators; the Problem's own arithmetic.
"""
import warnings

import numpy as np
import pytest
from scipy import sparse

from dpsolve import Parties, Problem
from dpsolve._row_ops import row_norms, weighted_gram
from dpsolve.estimators import DPLinearRegression, DPLinearSVC, DPLogisticRegression
from dpsolve.privacy import PrivacyWarning
from dpsolve.reference import certificate, reference_minimizer
from dpsolve.solvers import registry

SPECS = registry()


def _data(loss, n=60, p=4, seed=0, density=None):
    """float32 rows of norm below 1 (no clipping: clipped rows round differently in float32),
    labels for ``loss``."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    if density is not None:
        X *= rng.random((n, p)) < density
    X /= 1.5 * np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-3)
    X32 = X.astype(np.float32)
    z = X32.astype(np.float64) @ np.linspace(1.0, -1.0, p)
    if loss == "squared":
        y = np.clip(z, -1.0, 1.0)
    elif loss == "multinomial":
        y = np.arange(n) % 3
    else:
        y = np.where(z > 0, 1.0, -1.0)
    return X32, y


def _problems(spec, loss, X32, y, **extra):
    options = {**spec.example_problem, **extra}
    if loss == "multinomial":
        options["n_classes"] = 3
    P32 = Problem(X32, y, loss, **options)
    X64 = X32.astype(np.float64)
    P64 = Problem(X64, y, loss, **options)
    return P32, P64


def _fit(spec, problem, **changes):
    args = [problem]
    if spec.partition is not None:
        n, m = problem.n, spec.parts
        args.append(Parties.from_sizes(problem, [n // m + (j < n % m) for j in range(m)]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        return spec.function(*args, rng=7, **{**spec.example, **changes})


def _released(fit):
    parts = [np.asarray(fit.theta)]
    if fit.model is not None and hasattr(fit.model, "personal"):
        parts.append(np.asarray(fit.model.personal))
    return parts


def _assert_same_bits(a, b):
    for u, v in zip(a, b, strict=True):
        assert u.dtype == v.dtype and u.shape == v.shape
        assert u.tobytes() == v.tobytes()


CASES = [(spec, loss, layout) for spec in SPECS for loss in spec.losses
         for layout in (("dense", "csr") if spec.sparse else ("dense",))]


@pytest.mark.parametrize("spec, loss, layout", CASES,
                         ids=[f"{s.name}-{loss}-{layout}" for s, loss, layout in CASES])
def test_fit_on_float32_equals_fit_on_its_float64_copy(spec, loss, layout):
    X32, y = _data(loss, density=0.5 if layout == "csr" else None)
    extra = {}
    if spec.name == "minibatch_sgd" and loss == "squared":
        X32, extra = X32 * np.float32(0.5), {"row_norm": 0.5}    # its gradients need norm <= 1
    if layout == "csr":
        X32 = sparse.csr_array(X32)
    P32, P64 = _problems(spec, loss, X32, y, **extra)
    assert P32.X.dtype == np.float32 and P64.X.dtype == np.float64
    _assert_same_bits(_released(_fit(spec, P32)), _released(_fit(spec, P64)))


# noisy_sgd: a second of RDP calibration over n^2 sampled steps, in the slow tier
@pytest.mark.parametrize("spec", [
    pytest.param(s, marks=pytest.mark.slow) if s.name == "noisy_sgd" else s
    for s in SPECS if s.name in ("clipped_gd", "dp_sgd", "noisy_sgd", "adassp")],
    ids=lambda s: s.name)
def test_fit_with_an_intercept_on_float32_equals_its_float64_copy(spec):
    loss = spec.losses[0]
    X32, y = _data(loss, n=80)
    P32, P64 = _problems(spec, loss, X32, y, fit_intercept=True, intercept_scale=0.5)
    assert P32.X.dtype == np.float32        # 0.5 is a float32 number: the column is exact
    np.testing.assert_array_equal(P32.X.astype(np.float64), P64.X)
    _assert_same_bits(_released(_fit(spec, P32)), _released(_fit(spec, P64)))


def test_an_intercept_scale_that_is_not_a_float32_gives_float64_rows():
    X32, y = _data("logistic")
    P = Problem(X32, y, fit_intercept=True, intercept_scale=0.1)
    assert P.X.dtype == np.float64 and P.X[0, -1] == 0.1
    S = Problem(sparse.csr_array(X32), y, fit_intercept=True, intercept_scale=0.1)
    assert S.X.dtype == np.float64


@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared", "huber_hinge", "multinomial"])
@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_reference_minimiser_and_certificate_on_float32(loss, layout):
    X32, y = _data(loss, n=120, density=0.6 if layout == "csr" else None)
    if layout == "csr":
        X32 = sparse.csr_array(X32)
    options = {"radius": 1.0, "reg": 0.05} | ({"n_classes": 3} if loss == "multinomial" else {})
    P32 = Problem(X32, y, loss, **options)
    P64 = Problem(X32.astype(np.float64), y, loss, **options)
    r32 = reference_minimizer(P32, cache=False)
    r64 = reference_minimizer(P64, cache=False)
    assert r32.theta.tobytes() == r64.theta.tobytes()
    assert (r32.value, r32.gap, r32.solver) == (r64.value, r64.gap, r64.solver)
    theta = np.full(P32.theta_shape, 0.1)
    assert certificate(P32, theta) == certificate(P64, theta)
    assert certificate(P32, r32.theta) == certificate(P64, r64.theta)


def test_problem_arithmetic_on_float32_is_float64():
    X32, y = _data("logistic", n=5000, p=7)
    P32, P64 = _problems(SPECS[0], "logistic", X32, y)
    theta = np.linspace(-0.3, 0.4, 7)
    for name in ("margins", "objective", "gradient", "loss_derivatives"):
        a, b = getattr(P32, name)(theta), getattr(P64, name)(theta)
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes(), name
    assert row_norms(P32.X).tobytes() == row_norms(P64.X).tobytes()
    w = np.linspace(0.1, 1.0, P32.n)
    assert weighted_gram(P32.X, w).tobytes() == weighted_gram(P64.X, w).tobytes()
    # float32's own norm would be summed in single precision
    S32, S64 = sparse.csr_array(X32), sparse.csr_array(P64.X)
    assert row_norms(S32).tobytes() == row_norms(S64).tobytes()


def test_problem_keeps_float32_and_converts_other_dtypes():
    X32, y = _data("logistic")
    assert Problem(X32, y).X.dtype == np.float32
    assert Problem(X32.astype(np.float64), y).X.dtype == np.float64
    assert Problem(X32.astype(np.float16), y).X.dtype == np.float64
    assert Problem((X32 * 0).astype(np.int32), y).X.dtype == np.float64
    assert Problem(sparse.csr_array(X32), y).X.dtype == np.float32
    assert Problem(sparse.coo_array(X32), y).X.dtype == np.float32
    assert Problem(sparse.csr_array((X32 * 4).astype(np.int16)), y).X.dtype == np.float64
    with pytest.raises(ValueError, match="NaN or infinite"):
        bad = X32.copy()
        bad[3, 1] = np.inf
        Problem(bad, y)


@pytest.mark.parametrize("estimator, loss", [
    (DPLogisticRegression(1.0, row_norm=1.0, random_state=1), "logistic"),
    (DPLogisticRegression(1.0, row_norm=1.0, classes=[0, 1, 2], random_state=1),
     "multinomial"),
    (DPLinearSVC(1.0, row_norm=1.0, random_state=1), "hinge"),
    (DPLinearRegression(1.0, row_norm=1.0, label_bound=1.0, random_state=1), "squared"),
], ids=["logistic", "multinomial", "svc", "linear"])
def test_estimators_on_float32(estimator, loss):
    from sklearn.base import clone
    X32, y = _data(loss, n=200)
    if loss == "hinge":
        y = (y > 0).astype(int)
    m32 = clone(estimator).fit(X32, y)
    m64 = clone(estimator).fit(X32.astype(np.float64), y)
    assert m32.coef_.tobytes() == m64.coef_.tobytes()
    assert np.asarray(m32.intercept_).tobytes() == np.asarray(m64.intercept_).tobytes()
    out = m32.predict(X32)
    assert out.tobytes() == m64.predict(X32.astype(np.float64)).tobytes()
    if hasattr(m32, "decision_function"):
        assert m32.decision_function(X32).dtype == np.float64


@pytest.mark.parametrize("loss", ["logistic", "hinge", "multinomial"])
def test_reference_minimiser_on_float32_over_several_blocks_of_rows(loss):
    """n above two blocks of 4096 rows and p = 12: the blocked float64 conversions give the
    float64 problem's bits where BLAS sums (margins, Gram matrices, certificates)."""
    X32, y = _data(loss, n=9000, p=12, seed=3)
    options = {"radius": 1.0, "reg": 0.01} | ({"n_classes": 3} if loss == "multinomial" else {})
    r32 = reference_minimizer(Problem(X32, y, loss, **options), cache=False)
    r64 = reference_minimizer(Problem(X32.astype(np.float64), y, loss, **options), cache=False)
    assert r32.theta.tobytes() == r64.theta.tobytes()
    assert (r32.value, r32.gap) == (r64.value, r64.gap)


def test_joint_reference_minimiser_on_float32():
    from dpsolve import joint
    X32, y = _data("logistic", n=120, p=4)
    P32, P64 = (Problem(X, y, "logistic", radius=1.0, reg=0.1)
                for X in (X32, X32.astype(np.float64)))
    refs = [joint.joint_reference_minimizer(P, Parties.from_sizes(P, [60, 60]), tol=1e-9)
            for P in (P32, P64)]
    assert refs[0].model.shared.tobytes() == refs[1].model.shared.tobytes()
    assert refs[0].model.personal.tobytes() == refs[1].model.personal.tobytes()


def test_private_row_norm_estimate_on_float32():
    from dpsolve.privacy import estimate_row_norm
    X32, _ = _data("logistic", n=300, p=5)
    estimates = [estimate_row_norm(X, 1.0, upper=4.0, rng=3).value
                 for X in (X32, X32.astype(np.float64), sparse.csr_array(X32))]
    assert estimates[0] == estimates[1]
    assert isinstance(estimates[2], float)
