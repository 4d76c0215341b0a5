"""phased_erm (Feldman-Koren-Talwar 2020, phased ERM / localisation): its noise-free limit
against a plain NumPy implementation of the same phases, reproducibility, its refusals, the
population bound on a hand-computed case, and its measured excess population risk on a
SphereSource against that bound. The phase sensitivity: tests/test_sensitivity.py; the
neighbours' metadata: tests/test_neighbour_metadata.py."""
import math

import numpy as np
import pytest
from scipy import sparse, special

import dpsolve
from dpsolve.population import SphereSource, excess_population_risk
from dpsolve.privacy.samplers import gaussian_noise
from dpsolve.solvers import get, plan_fit
from dpsolve.solvers.phased_erm import phase_sizes, phased_erm_population_bound

SEED = 20240611


def _problem(n=64, p=3, loss="logistic", seed=0, **kwargs):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    X *= (rng.uniform(0.2, 1.0, n) / np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X @ np.arange(1.0, p + 1) + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    if loss == "squared":
        y = np.clip(X @ np.ones(p) + 0.1 * rng.standard_normal(n), -1.0, 1.0)
    return dpsolve.Problem(X, y, loss, radius=kwargs.pop("radius", 1.0), **kwargs)


def _gradient(loss, X, y, w):
    z = X @ w
    d = -y * special.expit(-y * z) if loss == "logistic" else z - y
    return X.T @ d / len(y)


def _numpy_phases(problem, settings, rng=None, iterations=300):
    """The phases of phased_erm in plain NumPy: projected gradient descent with step
    1/(beta + lambda_i) on each phase objective from its centre, then (with ``rng``) the phase's
    noise drawn as the solver draws it (``gaussian_noise`` from the fit's generator) and the
    projection. Returns the last point and a bound on its distance to the exact phases with the
    same noise: each solve is within ``q_i^T 2R`` of its minimiser (``q_i = beta / (beta +
    lambda_i)``, the contraction of a projected gradient step on a lambda_i-strongly convex,
    (beta + lambda_i)-smooth function), the minimiser is a non-expansive function of the centre
    (a proximal map), and so are adding the same noise and projecting: the errors add up."""
    X, y, R = np.asarray(problem.X), np.asarray(problem.y), problem.radius
    beta, w, start, error = problem.smoothness, np.zeros(problem.p), 0, 0.0
    for size, lam, sigma in zip(settings["phase_sizes"], settings["phase_regs"],
                                settings["sigmas"]):
        Xi, yi, centre = X[start:start + size], y[start:start + size], w.copy()
        for _ in range(iterations):
            w = w - (_gradient(problem.loss, Xi, yi, w) + lam * (w - centre)) / (beta + lam)
            w *= R / max(np.linalg.norm(w), R)
        if rng is not None:
            w = w + gaussian_noise(sigma, problem.p, rng=rng)
            w *= R / max(np.linalg.norm(w), R)
        error += (beta / (beta + lam)) ** iterations * 2.0 * R
        start += size
    return w, error


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_noise_free_limit_is_the_numpy_phases(loss):
    """At epsilon = 1e8 the noise multiplier is 7e-5 (the analytic Gaussian mechanism's
    sigma falls like 1/sqrt(epsilon)); the fit must agree with the noise-free NumPy phases
    within the inner solves' certified distances, the NumPy solves' own error, and six standard
    deviations of each phase's noise norm (``sigma_i (sqrt(p) + 6)``), added over the phases."""
    problem = _problem(loss=loss)
    fit = dpsolve.phased_erm(problem, 1e8, 1e-6, inner_tolerance=1e-8, rng=SEED)
    expected, numpy_error = _numpy_phases(problem, fit.settings)
    allowance = numpy_error + sum(fit.settings["inner_distances"]) + sum(
        s * (math.sqrt(problem.p) + 6.0) for s in fit.settings["sigmas"])
    assert np.linalg.norm(fit.theta - expected) <= allowance + 1e-12
    # and the comparison is not vacuous: the answer is far from 0 at this scale
    assert np.linalg.norm(expected) > 1e2 * allowance


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_same_noise_gives_the_numpy_phases(loss):
    """At epsilon = 1, with the noise drawn from a generator seeded as the fit's: the fit must
    agree with the NumPy phases within the inner solves' certified distances and the NumPy
    solves' error (1e-12 more for rounding): the phases, their slices, their regularisers and
    the noise's place are those of the algorithm, not just close to them."""
    problem = _problem(loss=loss)
    fit = dpsolve.phased_erm(problem, 1.0, 1e-6, inner_tolerance=1e-8, rng=SEED)
    expected, numpy_error = _numpy_phases(problem, fit.settings, np.random.default_rng(SEED))
    allowance = numpy_error + sum(fit.settings["inner_distances"]) + 1e-12
    assert np.linalg.norm(fit.theta - expected) <= allowance
    assert allowance < 1e-6 * sum(fit.settings["sigmas"])


def test_reproducible_and_seed_dependent():
    problem = _problem()
    a = dpsolve.phased_erm(problem, 1.0, 1e-6, rng=5)
    b = dpsolve.phased_erm(problem, 1.0, 1e-6, rng=5)
    c = dpsolve.phased_erm(problem, 1.0, 1e-6, rng=6)
    assert np.array_equal(a.theta, b.theta)
    assert not np.array_equal(a.theta, c.theta)
    assert np.linalg.norm(a.theta) <= problem.radius * (1 + 1e-15)


def test_csr_rows_give_the_dense_result():
    """The phases read CSR slices through the same gradient kernel: the same fit up to the
    kernels' summation order (1e-12 relative, far below any noise)."""
    problem = _problem(n=40)
    csr = dpsolve.Problem(sparse.csr_matrix(np.asarray(problem.X)), np.asarray(problem.y),
                          "logistic", radius=1.0)
    a = dpsolve.phased_erm(problem, 1.0, 1e-6, rng=3)
    b = dpsolve.phased_erm(csr, 1.0, 1e-6, rng=3)
    assert np.allclose(a.theta, b.theta, rtol=0, atol=1e-12)


def test_phases_and_step_size_from_public_constants():
    """k = floor(log2 n) disjoint slices of n / 2^i rows; the default eta
    ``(2R / L) min(4 / sqrt(n), epsilon / sqrt(p log(1/delta)))`` (attributed to
    Feldman-Koren-Talwar 2020, docs/phased_erm.md); lambda_i = 2 / (eta_i n_i)."""
    assert phase_sizes(100) == [50, 25, 12, 6, 3, 1]
    assert phase_sizes(2) == [1]
    problem = _problem(n=100, p=3)
    fit = dpsolve.phased_erm(problem, 0.5, 1e-5, rng=0)
    s = fit.settings
    eta = 2.0 / 1.0 * min(4.0 / 10.0, 0.5 / math.sqrt(3 * math.log(1e5)))
    assert s["step_size"] == pytest.approx(eta, rel=1e-15)
    assert s["phase_sizes"] == (50, 25, 12, 6, 3, 1) and fit.steps == 6
    for i, (lam, size) in enumerate(zip(s["phase_regs"], s["phase_sizes"]), start=1):
        assert lam == pytest.approx(2.0 / (eta * 4.0 ** -i * size), rel=1e-15)


def test_refusals_before_any_work():
    with pytest.raises(ValueError, match="phases must lie in"):
        dpsolve.phased_erm(_problem(n=64), 1.0, 1e-6, phases=7, rng=0)
    with pytest.raises(ValueError, match="radius"):
        dpsolve.phased_erm(_problem(radius=None, reg=0.1), 1.0, 1e-6, rng=0)
    with pytest.raises(ValueError, match="hinge"):
        dpsolve.phased_erm(_problem(loss="hinge"), 1.0, 1e-6, rng=0)


def test_population_bound_on_a_hand_computed_case():
    """Two phases (n_1 = 2, n_2 = 1), L = 1, R = 1, p = 2, lambda = (1, 8), sigma = (0.5, 0.1),
    r = (0.01, 0.001):
    lambda_1 R^2 / 2 = 0.5; lambda_2 p sigma_1^2 / 2 = 2; 2 L^2 / (lambda_i n_i) = 1 and 0.25;
    L r_i = 0.011 in all; L sqrt(p) sigma_2 = 0.1 sqrt(2). Total 3.761 + 0.1 sqrt(2)."""
    problem = _problem(n=4, p=2)
    assert problem.lipschitz == 1.0
    settings = {"phase_regs": (1.0, 8.0), "sigmas": (0.5, 0.1), "phase_sizes": (2, 1),
                "inner_distances": (0.01, 0.001)}
    assert phased_erm_population_bound(problem, settings) == pytest.approx(
        3.761 + 0.1 * math.sqrt(2.0), rel=1e-14)
    spec = get("phased_erm")
    plan = plan_fit(spec, problem, None, 1.0, 1e-6)
    assert spec.hooks.population_bound(problem, None, plan) == phased_erm_population_bound(
        problem, plan.settings)
    assert spec.bound(problem, None, plan) is None
    ridge = _problem(n=4, p=2, reg=0.1)
    assert spec.hooks.population_bound(ridge, None, plan_fit(spec, ridge, None, 1.0, 1e-6)) \
        is None


def test_measured_excess_population_risk_is_below_the_bound():
    """On a SphereSource (logistic link, p = 5, n = 2000, epsilon = 1), the mean excess
    population risk of 4 fits on 4 independent samples (quadrature, certified to ~1e-9) must be
    below the bound on its expectation. The bound is not tuned to pass: its value is read off
    the plan, and the measured mean is about 3% of it (the bound is for the worst distribution)."""
    source = SphereSource(5, 2.0 * np.eye(5)[0], "logistic")
    spec = get("phased_erm")
    risks, bounds = [], []
    for seed in range(4):
        problem = source.problem(2000, seed, radius=1.0)
        fit = dpsolve.phased_erm(problem, 1.0, 1e-6, rng=100 + seed)
        estimate = excess_population_risk(fit.theta, source, 1.0)
        risks.append(estimate.value + estimate.error)
        bounds.append(spec.hooks.population_bound(problem, None,
                                                  plan_fit(spec, problem, None, 1.0, 1e-6)))
    assert len(set(bounds)) == 1                     # public constants only
    assert np.mean(risks) <= bounds[0]


def _chunked(problem, rows):
    from dpsolve.chunked import RowChunks
    X, y = np.asarray(problem.X), np.asarray(problem.y)
    bounds = np.cumsum((0,) + tuple(rows))
    chunks = RowChunks.from_arrays([X[a:b] for a, b in zip(bounds, bounds[1:])],
                                   [y[a:b] for a, b in zip(bounds, bounds[1:])])
    return dpsolve.Problem(chunks, None, problem.loss, radius=problem.radius)


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_rows_in_chunks(loss):
    """One chunk gives the bits of the rows in memory (each phase's gradient is the same
    kernel on the same rows). Chunks cutting the phases' slices differ only in the order of the
    sums; both fits are then within the inner solves' certified distances (which cover float64,
    :func:`dpsolve._fixed_iteration.float_floor`) of the same exact phases with the same
    noise, so within twice their sum of each other."""
    problem = _problem(n=200, loss=loss)
    whole = dpsolve.phased_erm(problem, 1.0, 1e-6, rng=4)
    one = dpsolve.phased_erm(_chunked(problem, (200,)), 1.0, 1e-6, rng=4)
    assert one.theta.tobytes() == whole.theta.tobytes()
    cut = dpsolve.phased_erm(_chunked(problem, (37, 100, 63)), 1.0, 1e-6, rng=4)
    assert cut.settings == whole.settings
    assert np.linalg.norm(cut.theta - whole.theta) <= 2.0 * sum(
        whole.settings["inner_distances"])


@pytest.mark.slow
def test_rows_on_dask_give_the_local_chunks_bits():
    distributed = pytest.importorskip("distributed")
    da = pytest.importorskip("dask.array")
    problem = _problem(n=200)
    X, y = np.asarray(problem.X), np.asarray(problem.y)
    with distributed.Client(processes=False, dashboard_address=":0"):
        remote = dpsolve.Problem(da.from_array(X, chunks=((37, 100, 63), (3,))),
                                 da.from_array(y, chunks=((37, 100, 63),)), "logistic",
                                 radius=1.0)
        a = dpsolve.phased_erm(remote, 1.0, 1e-6, rng=4)
    b = dpsolve.phased_erm(_chunked(problem, (37, 100, 63)), 1.0, 1e-6, rng=4)
    assert a.theta.tobytes() == b.theta.tobytes()
