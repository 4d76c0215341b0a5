"""The certified reference minimiser on wide sparse X (p much larger than the rows' non-zeros,
often larger than n): Newton-CG on SciPy's sparse products over the l2 ball, the certificate's
rounding allowance counted in a CSR row's stored entries, and the l1 ball's active-set Newton
on a support whose columns are dependent (docs/reference_minimizer.md, "Wide sparse X")."""
import numpy as np
import pytest
from scipy import sparse

import dpsolve
from dpsolve import Problem, reference_minimizer
from dpsolve.reference import certificate
from dpsolve.reference import _l1, _newton

TOL = 1e-9


def _zipf(n, p, words, seed=0):
    return dpsolve.datasets.make_sparse_zipf(n=n, p=p, words=words, support=5, signal=2.0,
                                             rng=seed)


def _wide(n, p, words, seed=0, **options):
    X, y = _zipf(n, p, words, seed)
    options = {"radius": 10.0, "row_norm": float(np.sqrt(words)), **options}
    return X, y, Problem(X, y, "logistic", **options)


def test_a_wide_csr_problem_is_certified_by_newton_cg():
    """p = 10⁵ columns, n = 1,000 rows of at most 40 words: the ball binds (the rows are
    separable), and Newton's method alone certifies theta* to 1e-9, in a quarter of a second
    (before: a minute, through a Newton solve at mu = 0 that diverges on separable rows, and
    then a gap of 2.6e-9, most of it the dense rounding allowance ``gamma_p``)."""
    _, _, problem = _wide(1000, 100_000, 40)
    solution = reference_minimizer(problem, cache=False, method="newton")
    assert solution.solver == "NEWTON" and solution.status == "optimal"
    assert solution.gap <= TOL
    assert solution.gap == certificate(problem, solution.theta)
    assert np.linalg.norm(solution.theta) == pytest.approx(problem.radius, rel=1e-9)


@pytest.mark.parametrize("radius", [10.0, 1e4], ids=["ball-binds", "ball-inactive"])
def test_wide_csr_agrees_with_dense_and_cvxpy(radius):
    """The same small wide problem (n = 60, p = 600 > 512: Newton-CG on both) held as CSR
    (SciPy's products) and dense (dpsolve's ordered products), and solved by the cone program
    on CSR: each certified to 1e-9, so every value lies within its gap above F(theta*), and
    the values within the larger gap of each other."""
    X, y, sparse_problem = _wide(60, 600, 20, seed=3, radius=radius, reg=1e-3)
    dense_problem = Problem(X.toarray(), y, "logistic", radius=radius, row_norm=np.sqrt(20),
                            reg=1e-3)
    own = reference_minimizer(sparse_problem, cache=False, method="newton")
    dense = reference_minimizer(dense_problem, cache=False, method="newton")
    cone = reference_minimizer(sparse_problem, cache=False, method="cvxpy")
    for solution in (own, dense, cone):
        assert solution.gap <= TOL
    assert abs(own.value - dense.value) <= max(own.gap, dense.gap)
    assert abs(own.value - cone.value) <= max(own.gap, cone.gap)
    # lambda = 1e-3: F is strongly convex, so the points themselves are close
    distance = np.sqrt(2 * own.gap / 1e-3) + np.sqrt(2 * cone.gap / 1e-3)
    assert np.linalg.norm(own.theta - cone.theta) <= distance
    # each storage's certificate accepts the other's point
    assert certificate(dense_problem, own.theta) <= TOL
    assert certificate(sparse_problem, dense.theta) <= TOL


def test_the_csr_rounding_allowance_counts_stored_entries():
    """On CSR the margin's rounding is bounded with gamma_{k+1}, k a row's stored entries,
    instead of gamma_{p+1}: the exact margins (rational arithmetic) lie within the bound, and
    at p = 10⁵ the certificate of the same point is smaller on CSR than on the dense copy by
    about the dense allowance ``2 gamma_p |loss'| ||x|| ||theta||`` (1e-9 here, the default
    tol: what kept theta* of the wide problems above it)."""
    from fractions import Fraction

    from dpsolve.reference._certificate import _row_bounds
    rng = np.random.default_rng(0)
    n, p, k = 40, 100_000, 30
    columns = rng.choice(p, size=(n, k))
    X = sparse.csr_array((rng.uniform(0.1, 1.0, n * k), (np.repeat(np.arange(n), k),
                                                          columns.ravel())), shape=(n, p))
    X.sum_duplicates()
    theta = np.zeros(p)
    theta[columns.ravel()] = rng.standard_normal(n * k)
    theta *= 10.0 / np.linalg.norm(theta)
    _, z_err = _row_bounds(X, theta)
    z = X @ theta
    for i in range(n):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        exact = sum(Fraction(v) * Fraction(theta[j])
                    for v, j in zip(X.data[lo:hi], X.indices[lo:hi]))
        assert abs(Fraction(z[i]) - exact) <= Fraction(z_err[i])
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    options = {"radius": 10.0, "row_norm": float(np.sqrt(k))}
    on_csr = certificate(Problem(X, y, "logistic", **options), theta)
    on_dense = certificate(Problem(X.toarray(), y, "logistic", **options), theta)
    assert on_dense - on_csr >= 1e-10


def test_kkt_step_on_a_support_with_dependent_columns():
    """Two words always together: X_S has two equal columns, H = X_S^T D X_S / n is singular,
    and the old exact solve gave no direction (so FISTA alone crawled to the tolerance). The
    least-norm solution is an exact Newton step: it solves the KKT system."""
    rng = np.random.default_rng(2)
    A = rng.standard_normal((50, 4))
    A = np.column_stack([A, A[:, 0]])             # column 4 = column 0
    H = A.T @ A / 50
    g = A.T @ rng.standard_normal(50) / 50        # in the range of H, as a gradient is
    s = np.array([1.0, -1.0, 1.0, 1.0, 1.0])
    for active in (False, True):
        d, nu = _l1._kkt_step(H, g, s, 0.0, active)
        assert d is not None and np.all(np.isfinite(d))
        np.testing.assert_allclose(H @ d + nu * s, -g, atol=1e-12)
        if active:
            assert abs(s @ d) <= 1e-12
        assert g @ d < 0.0                        # a descent direction


def test_l1_ball_with_duplicated_words_is_polished_by_newton(monkeypatch):
    """Every word of a Zipf design duplicated (each column twice): the support's Hessian is
    singular from the first polish. The certificate is reached after the first FISTA round,
    which only Newton's polish can do (FISTA's 200 steps alone leave a gap above 1e-6)."""
    X, y = _zipf(400, 300, 30, seed=1)
    X = sparse.csr_array(sparse.hstack([X, X]).tocsr())
    problem = Problem(X, y, "logistic", constraint="l1", radius=10.0, row_norm=1.0)
    rounds = []
    polish = _l1.newton_polish

    def counted(data, theta, max_iter=50):
        rounds.append(1)
        return polish(data, theta, max_iter)

    monkeypatch.setattr(_l1, "newton_polish", counted)
    solution = reference_minimizer(problem, cache=False, method="newton")
    assert solution.gap <= TOL
    assert len(rounds) == 1


def test_secular_gap_bounds_the_projected_point():
    """The stopping rule of the secular iteration: its bound is at least F(projected theta(mu))
    - F(theta*) on a small wide problem, for multipliers around the optimal one."""
    X, y, problem = _wide(80, 700, 20, seed=5)
    reference = reference_minimizer(problem, cache=False)
    rows = _newton._products(problem)
    for mu in (0.5, 1.0, 2.0):
        mu *= _mu_star(problem, reference.theta)
        theta, _ = _newton._minimise_with_multiplier(problem, reference.theta, mu, 1e-13, rows)
        norm = float(np.linalg.norm(theta))
        bound = _newton._secular_gap(problem, mu, norm, abs(norm - problem.radius))
        projected = _newton.project(problem, theta)
        assert problem.objective(projected) - (reference.value - reference.gap) <= (
            bound + 1e-12)


def _mu_star(problem, theta):
    """The ball's multiplier at theta*: ``grad F = -mu theta``."""
    g = problem.gradient(theta)
    return -float(g @ theta) / float(theta @ theta)
