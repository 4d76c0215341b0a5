"""The perturbation solvers' inner solves without BLAS: the fixed-order kernels
(``_kernels/linalg.pyx``: weighted Gram, Cholesky, dot, norm), the certified Newton solves built
on them, and the BLAS calls of whole releases counted by ``blas_guard`` (none)."""
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import sparse

import dpsolve
from dpsolve import _ordered_linalg
from dpsolve._kernels import linalg
from dpsolve._kernels.threads import max_threads, set_num_threads
from dpsolve._row_ops import kernel_rows
from dpsolve.solvers import _inner

EPS = np.finfo(np.float64).eps


def gamma(k):
    """Higham's (2002) gamma_k with u = eps / 2: k u / (1 - k u)."""
    u = EPS / 2
    return k * u / (1 - k * u)


@pytest.fixture
def restore_threads():
    before = max_threads()
    yield
    set_num_threads(before)


def gram(X, w):
    p = X.shape[1]
    out = np.empty((p, p))
    linalg.weighted_gram(kernel_rows(X), w, out)
    return out


def test_gram_is_within_the_rounding_bound_of_the_exact_sum():
    """Each entry is the row-order sum of (w_i x_ij) x_ik: two roundings per term and n - 1
    additions, so it is within gamma_{n+1} sum_i |w_i x_ij x_ik| of the exact sum (Higham 2002,
    (3.4)); the exact sum is math.fsum of exact products (Fractions)."""
    rng = np.random.default_rng(0)
    n, p = 300, 13
    X = rng.standard_normal((n, p)) * rng.uniform(0.1, 10.0, p)
    w = rng.uniform(0.0, 2.0, n)
    w[::7] = 0.0
    G = gram(X, w)
    assert np.array_equal(G, G.T)
    for j in range(p):
        for k in range(j, p):
            terms = [Fraction(w[i]) * Fraction(X[i, j]) * Fraction(X[i, k]) for i in range(n)]
            exact = sum(terms)
            scale = float(sum(abs(t) for t in terms))
            assert abs(Fraction(G[j, k]) - exact) <= gamma(n + 1) * scale, (j, k)


@pytest.mark.parametrize("density", [0.05, 0.5])     # CSR pair loop / packed panels
def test_gram_has_the_same_bits_for_threads_storage_and_float32(restore_threads, density):
    """1 and 2 threads, dense and CSR, float32 and its float64 copy: the same bits (n p^2 is
    above the kernel's one-thread threshold, so two threads do run)."""
    rng = np.random.default_rng(1)
    n, p = 2500, 61
    X = rng.standard_normal((n, p)).astype(np.float32).astype(np.float64)
    X[rng.uniform(size=X.shape) > density] = 0.0
    w = rng.uniform(0.0, 1.0, n)
    w[rng.uniform(size=n) < 0.2] = 0.0
    results = []
    for threads in (1, 2):
        set_num_threads(threads)
        for matrix in (X, X.astype(np.float32), sparse.csr_array(X),
                       sparse.csr_array(X.astype(np.float32))):
            results.append(gram(matrix, w).tobytes())
    assert len(set(results)) == 1
    np.testing.assert_allclose(np.frombuffer(results[0]).reshape(p, p), (X.T * w) @ X,
                               rtol=1e-12, atol=1e-10)


def test_gram_of_rows_in_chunks_adds_the_chunks_in_order():
    rng = np.random.default_rng(2)
    X, y = rng.standard_normal((90, 5)), rng.choice([-1.0, 1.0], 90)
    chunks = dpsolve.chunked.RowChunks.from_arrays([X[:40], X[40:]], [y[:40], y[40:]])
    w = rng.uniform(size=90)
    expected = gram(X[:40], w[:40]) + gram(X[40:], w[40:])
    assert chunks.fixed_order_gram(w).tobytes() == expected.tobytes()


def test_cholesky_solve_residual_within_its_bound():
    """Higham 2002, Thm 10.3 and 10.4: ``L L^T = A + dA`` and ``(A + dA') x = b`` with
    ``|dA| <= gamma_{p+1} |L||L^T|`` and ``|dA'| <= gamma_{3p+1} |L||L^T|``; both checked
    exactly (Fractions)."""
    rng = np.random.default_rng(3)
    p = 40
    M = rng.standard_normal((2 * p, p))
    A = M.T @ M / p + 1e-3 * np.eye(p)
    b = rng.standard_normal(p)
    solved = _ordered_linalg.cholesky_solve(A, b)
    assert solved is not None
    x, L = solved
    assert np.all(np.triu(L, 1) == 0.0)
    absL = np.abs(L)
    LL = absL @ absL.T
    for i in range(p):
        residual = Fraction(b[i]) - sum(Fraction(A[i, k]) * Fraction(x[k]) for k in range(p))
        assert abs(float(residual)) <= gamma(3 * p + 1) * float(LL[i] @ np.abs(x)) * (1 + 1e-9)
        for k in range(i + 1):
            product = sum(Fraction(L[i, m]) * Fraction(L[k, m]) for m in range(k + 1))
            assert abs(float(product - Fraction(A[i, k]))) <= gamma(p + 1) * LL[i, k] * 1.000001


def test_cholesky_refuses_a_matrix_that_is_not_positive_definite():
    A = np.diag([2.0, 1.0, -1.0, 3.0])
    assert linalg.cholesky(A.copy()) == 3          # the failing pivot's column, plus one
    assert _ordered_linalg.cholesky_solve(A, np.ones(4)) is None
    assert linalg.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]])) == 2
    assert linalg.cholesky(np.array([[np.nan]])) == 1
    assert _ordered_linalg.cholesky_solve(np.eye(3), np.ones(3))[0].tolist() == [1.0] * 3


def test_cholesky_has_the_same_bits_for_any_thread_count(restore_threads):
    rng = np.random.default_rng(4)
    p = 300                                        # above the threshold for a second thread
    M = rng.standard_normal((p + 10, p))
    A = M.T @ M
    out = []
    for threads in (1, 2):
        set_num_threads(threads)
        factor = A.copy()
        assert linalg.cholesky(factor) == 0
        out.append(factor.tobytes())
    assert out[0] == out[1]


def test_dot_and_norm_are_sequential_sums_and_the_norm_survives_overflow():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(37), rng.standard_normal(37)
    s = t = r = 0.0
    for u, v in zip(a, b):
        s += u * v
        t += u * u
        r += u
    assert linalg.dot(a, b) == s
    assert linalg.norm(a) == math.sqrt(t)
    assert linalg.total(a) == r
    assert linalg.norm(np.full(4, 1e300)) == 2e300
    assert linalg.norm(np.array([3e300, -4e300])) == pytest.approx(5e300, rel=4 * EPS)
    assert linalg.norm(np.array([np.inf, 1.0])) == np.inf
    assert math.isnan(linalg.norm(np.array([np.nan, 1.0])))
    assert linalg.norm(np.zeros(0)) == 0.0


def _problem(loss, radius, storage, reg=0.05, n=600, p=8, seed=6):
    X, y = dpsolve.datasets.make_synthetic(n, p, rng=seed)
    X = X / (1.01 * np.linalg.norm(X, axis=1).max())     # no row clipped
    if loss == "squared":
        y = 0.5 * np.asarray(y, dtype=float) + 0.1 * np.random.default_rng(seed).standard_normal(n)
    if storage == "csr":
        X = X.copy()
        X[np.abs(X) < np.quantile(np.abs(X), 0.6)] = 0.0
        X = sparse.csr_array(X)
    elif storage == "float32":
        X = X.astype(np.float32)
    return dpsolve.Problem(X, y, loss, radius=radius, reg=reg)


@pytest.mark.parametrize("storage", ["dense", "csr", "float32"])
@pytest.mark.parametrize("loss, radius", [
    ("logistic", None), ("logistic", 2.0), ("logistic", 0.3), ("huber_hinge", None),
    ("huber_hinge", 0.3), ("squared", 1.0), ("squared", 0.2)])
def test_certified_minimizer_is_within_its_tolerance(loss, radius, storage):
    """F(theta_hat) - F* <= g against the reference's certified F* >= value - gap, theta_hat
    in C, and no fallback (the Newton path certified it)."""
    problem = _problem(loss, radius, storage)
    g = 1e-10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = dpsolve.reference_minimizer(problem, tol=1e-12, cache=False)
    theta = (_inner._newton_ball(problem, g) if radius is not None else
             _inner._newton_perturbed(problem, np.zeros(problem.p), 0.0,
                                      math.sqrt(2 * problem.reg * g)))
    assert theta is not None
    assert problem.objective(theta) - (ref.value - ref.gap) <= g
    if radius is not None:
        assert np.linalg.norm(theta) <= radius


@pytest.mark.parametrize("radius", [None, 0.3])
def test_certified_minimizer_at_small_reg_and_a_near_boundary_ball(radius):
    """lambda = 1e-4 (condition number about 2500) and a ball just inside the unconstrained
    minimiser's norm (the multiplier near 0)."""
    problem = _problem("logistic", None, "dense", reg=1e-4)
    if radius is not None:
        unconstrained = _inner._newton_perturbed(problem, np.zeros(problem.p), 0.0, 1e-9)
        problem = problem.__class__(problem.X, problem.y, "logistic",
                                    radius=0.999 * np.linalg.norm(unconstrained), reg=1e-4)
    ref = dpsolve.reference_minimizer(problem, tol=1e-12, cache=False)
    theta = _inner._certified_minimizer(problem, 1e-10)
    assert problem.objective(theta) - (ref.value - ref.gap) <= 1e-10


def test_gap_bound_is_an_upper_bound_away_from_the_minimiser():
    """At points far from the minimiser the certificate bounds the true gap (and is not
    met)."""
    problem = _problem("logistic", 0.3, "dense")
    ref = dpsolve.reference_minimizer(problem, tol=1e-12, cache=False)
    model = _inner._Smooth(problem)
    rng = np.random.default_rng(7)
    for _ in range(20):
        theta = _inner._inside(rng.standard_normal(problem.p) * 0.1, problem.radius)
        v, error = model.gradient(theta)
        bound = _inner._gap_bound(model, theta, v, error, problem.radius)
        assert problem.objective(theta) - ref.value <= bound + ref.gap


@pytest.mark.parametrize("solver", ["output", "objective"])
def test_releases_have_the_same_bits_for_dense_csr_and_float32(solver):
    """Without BLAS every sum of the inner solve has the same order for X dense, CSR or
    float32 (the kernels skip a CSR row's missing entries, which add +-0): the same release."""
    X, y = dpsolve.datasets.make_synthetic(500, 6, rng=8)
    X[np.abs(X) < 0.2] = 0.0
    # rows inside the unit ball (no clipping, whose factors would differ) and float32 values
    X = (X / (1.5 * np.linalg.norm(X, axis=1).max())).astype(np.float32).astype(np.float64)
    radius = 0.5 if solver == "output" else None
    bits = set()
    for matrix in (X, sparse.csr_array(X), X.astype(np.float32)):
        problem = dpsolve.Problem(matrix, y, "logistic", radius=radius, reg=0.05)
        if solver == "output":
            fit = dpsolve.output_perturbation(problem, 1.0, 1e-6, rng=9)
        else:
            fit = dpsolve.objective_perturbation(problem, 1.0, rng=9)
        bits.add(fit.theta.tobytes())
    assert len(bits) == 1


_GUARDED = r'''
import json, warnings
import numpy as np
from scipy import sparse
import dpsolve
warnings.simplefilter("ignore")
X, y = dpsolve.datasets.make_synthetic(300, 5, rng=3)
Xs = X.copy()
Xs[np.abs(Xs) < 0.3] = 0.0
storages = {"dense": X, "csr": sparse.csr_array(Xs), "float32": X.astype(np.float32)}
cases = []
for loss in LOSSES:
    labels = 0.5 * np.asarray(y, dtype=float) if loss == "squared" else y
    for kind in STORAGES:
        for radius in (None, 1.0, 0.1):
            if loss == "squared" and radius is None:
                continue
            for secure in (False, True):
                problem = dpsolve.Problem(storages[kind], labels, loss, radius=radius, reg=0.1)
                rng = None if secure else 7
                cases.append((f"output {loss} {kind} {radius} {secure}",
                              lambda P=problem, s=secure, r=rng: dpsolve.output_perturbation(
                                  P, 1.0, 1e-6, rng=r, secure=s)))
                if radius is None:
                    cases.append((f"objective {loss} {kind} {secure}",
                                  lambda P=problem, s=secure, r=rng:
                                  dpsolve.objective_perturbation(P, 1.0, rng=r, secure=s)))
                if kind == "dense":
                    parties = dpsolve.Parties.from_sizes(problem, [150, 150])
                    cases.append((f"aggregated {loss} {radius} {secure}",
                                  lambda P=problem, m=parties, s=secure, r=rng:
                                  dpsolve.aggregated_output_perturbation(P, m, 1.0, 1e-6, rng=r,
                                                                         secure=s)))
out = {}
for name, release in cases:
    if "objective" in name and ("squared" in name):
        continue
    release()                  # imports and caches warmed: count the second call only
    reset()
    release()
    out[name] = counts()
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def guard(tmp_path_factory):
    import blas_guard
    try:
        library, _, _ = blas_guard.build(tmp_path_factory.mktemp("blas_guard"))
    except (OSError, FileNotFoundError) as error:       # no gcc or nm: the guard cannot exist
        pytest.skip(f"blas_guard needs gcc and nm: {error}")
    return blas_guard, library


@pytest.mark.slow
def test_releases_call_no_blas(guard):
    """Output, objective and aggregated output perturbation, every smooth binary loss, X dense,
    CSR and float32, with and without a ball, research mode and secure: no call into BLAS or
    LAPACK (objective perturbation: its losses, logistic and huber_hinge)."""
    blas_guard, library = guard
    code = (_GUARDED.replace("LOSSES", repr(("logistic", "squared", "huber_hinge")))
            .replace("STORAGES", repr(("dense", "csr", "float32"))))
    counts = blas_guard.run_guarded(library, code)
    assert len(counts) == 76
    assert {name: calls for name, calls in counts.items() if calls} == {}
