"""DP-GD with clipping (the DP gradient descent lecture notes, after Abadi et al. 2016;
docs/clipped_gd.md): exact reference, noise-free limit, utility trends, privacy."""
import math

import numpy as np
import pytest

import dpsolve
from dpsolve import bounds
from dpsolve.privacy.calibration import dpgd_paper_sigma
from dpsolve.privacy import gaussian_epsilon, gaussian_sigma_analytic
from test_kernels import WIDTH, _clipped_sum_reference
from test_multinomial import _clipped_multinomial_reference


def _problem(n=2000, p=5, loss="logistic", seed=0, **kw):
    X, y = dpsolve.datasets.make_synthetic(n, p, rng=seed)
    if loss == "squared":
        y = np.clip(X @ np.ones(p) / p, -1, 1)
    if loss == "multinomial":       # three classes from three random directions
        y = np.argmax(X @ np.random.default_rng(seed).standard_normal((p, 3)), axis=1)
        kw["n_classes"] = 3
    kw.setdefault("radius", 1.0)
    return dpsolve.Problem(X, y, loss, **kw)


@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared", "huber_hinge", "multinomial"])
def test_matches_python_reference_bitwise(loss):
    """The solver is the lecture's recursion: replay it in Python floats with the same noise
    (for multinomial on (p, K) parameters, the noise drawn as rng.standard_normal((p, K)))."""
    problem = _problem(200, 3, loss, huber_width=WIDTH)
    steps, clip, eta, sigma = 4, 0.3, 5.0, 0.05
    fit = dpsolve.clipped_gd(problem, sigma=sigma, delta=1e-5, steps=steps, clip_norm=clip,
                             step_size=eta, output="last", rng=7)
    assert fit.theta.shape == problem.theta_shape
    rng = np.random.default_rng(7)
    w, total = np.zeros(problem.theta_shape), np.zeros(problem.theta_shape)
    n = problem.n
    for _ in range(steps):
        if loss == "multinomial":
            g, _ = _clipped_multinomial_reference(problem.X, problem.y, w, clip)
        else:
            g, _ = _clipped_sum_reference(problem.X, problem.y, loss, w, clip)
        w = w - eta * (g / n + 0.0 * w + sigma * rng.standard_normal(problem.theta_shape))
        norm = math.sqrt(float(w.reshape(-1) @ w.reshape(-1)))
        if norm > 1.0:
            w = w * (1.0 / norm)
        total += w
    assert np.array_equal(fit.theta, w)
    avg = dpsolve.clipped_gd(problem, sigma=sigma, delta=1e-5, steps=steps, clip_norm=clip,
                             step_size=eta, rng=7)
    assert np.array_equal(avg.theta, total / steps)


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_noise_free_limit_is_gradient_descent(loss):
    """sigma = 0, C = L: plain projected GD, whose averaged iterate is within beta R^2 / (2T)
    of the optimum (the deterministic rate), plus the reference's certified gap."""
    problem = _problem(1000, 4, loss)
    ref = dpsolve.reference_minimizer(problem)
    steps = 400
    fit = dpsolve.clipped_gd(problem, sigma=0.0, delta=1e-5, steps=steps, rng=0)
    excess = dpsolve.excess_risk(problem, fit.theta, ref)
    rate = float(bounds.dpgd_optimisation_error(problem, problem.lipschitz, steps, 0.0))
    assert -ref.gap <= excess <= rate + ref.gap
    assert fit.privacy.certified_epsilon == math.inf
    with pytest.warns(dpsolve.PrivacyWarning):   # delta >= 1/n
        dpsolve.clipped_gd(problem, sigma=0.0, delta=0.01, steps=2, rng=0)


def _mean_excess(problem, reference, seeds=20, **kw):
    risks = [dpsolve.excess_risk(problem, dpsolve.clipped_gd(problem, rng=s, **kw).theta, reference)
             for s in range(seeds)]
    return np.mean(risks), np.std(risks, ddof=1) / math.sqrt(seeds)


def test_excess_risk_falls_with_epsilon_and_stays_below_the_bound():
    problem = _problem()
    ref = dpsolve.reference_minimizer(problem)
    means = {}
    for eps in (0.1, 1.0):
        mean, se = _mean_excess(problem, ref, epsilon=eps, delta=1e-6)
        means[eps] = (mean, se)
        fit = dpsolve.clipped_gd(problem, eps, 1e-6, rng=0)
        bound = bounds.clipped_gd_bound(problem, eps, 1e-6, steps=fit.steps)
        # the bound is on the expectation: the mean must not exceed it by 3 standard errors
        assert mean - 3 * se <= bound
    (hi, se_hi), (lo, se_lo) = means[0.1], means[1.0]
    assert hi - lo > 3 * math.hypot(se_hi, se_lo)


@pytest.mark.parametrize("radius", [None, 1.0])
def test_last_iterate_bound_holds(radius):
    """Under strong convexity (smooth loss, reg > 0) the last iterate has a bound of its own
    (linear convergence of the distance to theta*, the noise divided by lambda): at the default
    T for the last iterate the mean excess risk of 20 runs stays below it (3 standard errors).
    Without strong convexity there is none."""
    problem = _problem(n=2000, radius=radius, reg=0.05)
    ref = dpsolve.reference_minimizer(problem)
    mean, se = _mean_excess(problem, ref, epsilon=1.0, delta=1e-6, output="last")
    fit = dpsolve.clipped_gd(problem, 1.0, 1e-6, output="last", rng=0)
    assert fit.settings["output"] == "last"
    assert fit.steps == dpsolve.solvers.clipped_gd.default_steps(
        problem, problem.lipschitz, 1.0, 1e-6, "pld", "last")
    bound = bounds.clipped_gd_bound(problem, 1.0, 1e-6, steps=fit.steps, output="last")
    assert mean - 3 * se <= bound
    with pytest.raises(ValueError, match="strong convexity"):
        bounds.clipped_gd_bound(_problem(loss="hinge", reg=0.05), 1.0, 1e-6, steps=10,
                                output="last")
    with pytest.raises(ValueError, match="strong convexity"):
        bounds.clipped_gd_bound(_problem(), 1.0, 1e-6, steps=10, output="last")


def test_excess_risk_falls_with_n():
    small, large = _problem(n=300, seed=1), _problem(n=5000, seed=1)
    m_small, se_small = _mean_excess(small, dpsolve.reference_minimizer(small), epsilon=0.5,
                                     delta=1e-6)
    m_large, se_large = _mean_excess(large, dpsolve.reference_minimizer(large), epsilon=0.5,
                                     delta=1e-6)
    assert m_small - m_large > 3 * math.hypot(se_small, se_large)


def test_privacy_report_pld_is_exact():
    problem = _problem(1000)
    fit = dpsolve.clipped_gd(problem, 0.7, 1e-6, steps=25, clip_norm=0.5, rng=0)
    sens = 2 * 0.5 / 1000
    # T Gaussians with multiplier s / Delta compose to one with mu = sqrt(T) Delta / s
    mu = math.sqrt(25) * sens / fit.sigma
    assert gaussian_epsilon(mu, 1e-6) <= 0.7
    # the least such noise is sqrt(T) Delta sigma_1; calibrate's search returns within 1e-3
    assert fit.sigma == pytest.approx(math.sqrt(25) * sens * gaussian_sigma_analytic(1, 0.7, 1e-6),
                                      rel=2e-3)
    assert fit.dp_event.count == 25
    assert fit.dp_event.event.noise_multiplier == pytest.approx(fit.sigma / sens, rel=1e-15)
    assert fit.privacy.holds and fit.privacy.certified_by == "pld"
    assert fit.settings["clip_norm"] == 0.5 and fit.noise == {"gaussian": fit.sigma}


def test_privacy_report_paper():
    problem = _problem(1000)
    fit = dpsolve.clipped_gd(problem, 0.5, 1e-6, steps=10, calibration="paper", rng=0)
    assert fit.sigma == 4 * 1.0 * 10 * math.sqrt(math.log(2 * 10 / 1e-6)) / (0.5 * 1000)
    assert fit.sigma == float(dpgd_paper_sigma(1000, 1.0, 10, 0.5, 1e-6))
    # basic composition is far from tight: the exact Gaussian composition certifies much less
    mu = math.sqrt(10) * (2 / 1000) / fit.sigma
    assert fit.privacy.certified_epsilon == pytest.approx(gaussian_epsilon(mu, 1e-6), rel=1e-12)
    assert fit.privacy.certified_epsilon < 0.5 / 4
    with pytest.raises(ValueError, match="epsilon"):
        dpsolve.clipped_gd(problem, 1.5, 1e-6, steps=10, calibration="paper")


def test_explicit_sigma_claims_the_certified_epsilon():
    problem = _problem(1000)
    fit = dpsolve.clipped_gd(problem, sigma=0.01, delta=1e-6, steps=9, rng=0)
    mu = 3 * (2 / 1000) / 0.01
    assert fit.epsilon == fit.privacy.certified_epsilon == pytest.approx(
        gaussian_epsilon(mu, 1e-6), rel=1e-12)
    assert fit.calibration == "explicit"


def test_defaults_depend_only_on_public_constants():
    a, b = _problem(seed=3), _problem(seed=4)
    fa = dpsolve.clipped_gd(a, 0.5, 1e-6, rng=0)
    fb = dpsolve.clipped_gd(b, 0.5, 1e-6, rng=0)
    assert fa.steps == fb.steps and fa.settings == fb.settings and fa.sigma == fb.sigma
    # smooth loss with pld: the bound's minimiser T* = beta R n / (2 C sqrt(p) sigma_1), within
    # the 10% slack the default allows
    beta, n, p = 0.25, a.n, a.p
    t_star = beta * n / (2 * math.sqrt(p) * gaussian_sigma_analytic(1, 0.5, 1e-6))
    assert 0.3 * t_star <= fa.steps <= t_star + 1
    assert fa.settings["step_size"] == 1 / beta


def test_same_seed_same_bits_and_inputs_untouched():
    problem = _problem()
    X0 = problem.X.copy()
    f1 = dpsolve.clipped_gd(problem, 0.5, 1e-6, rng=np.random.SeedSequence(5))
    f2 = dpsolve.clipped_gd(problem, 0.5, 1e-6, rng=np.random.SeedSequence(5))
    assert np.array_equal(f1.theta, f2.theta)
    assert np.array_equal(problem.X, X0)


def test_unconstrained_problem_projects_onto_the_minimiser_ball():
    problem = _problem(1000, radius=None, reg=0.1)
    R = bounds.minimizer_norm_bound(problem)
    assert R == pytest.approx(math.sqrt(2 * math.log(2) / 0.1))
    ref = dpsolve.reference_minimizer(problem)
    assert np.linalg.norm(ref.theta) <= R
    fit = dpsolve.clipped_gd(problem, 1.0, 1e-6, rng=0)
    assert np.linalg.norm(fit.theta) <= R * (1 + 1e-12)


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=0.0, delta=1e-6), "epsilon"),
    (dict(epsilon=-1.0, delta=1e-6), "epsilon"),
    (dict(epsilon=0.5, delta=0.0), "delta"),
    (dict(epsilon=0.5, delta=1.0), "delta"),
    (dict(epsilon=0.5, delta=1e-6, clip_norm=0.0), "clip_norm"),
    (dict(epsilon=0.5, delta=1e-6, clip_norm=-1.0), "clip_norm"),
    (dict(epsilon=0.5, delta=1e-6, steps=0), "steps"),
    (dict(epsilon=0.5, delta=1e-6, step_size=0.0), "step_size"),
    (dict(epsilon=0.5, delta=1e-6, output="best"), "output"),
    (dict(epsilon=0.5, delta=1e-6, calibration="exact"), "calibration"),
    (dict(epsilon=0.5, delta=1e-6, sigma=1.0, steps=3), "either epsilon"),
])
def test_bad_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        dpsolve.clipped_gd(_problem(100), **kwargs)


def test_bad_input_types():
    problem = _problem(100)
    with pytest.raises(TypeError, match="problem"):
        dpsolve.clipped_gd(problem.X, 0.5, 1e-6)
    with pytest.raises(TypeError, match="steps"):
        dpsolve.clipped_gd(problem, sigma=1.0, delta=1e-6)
    with pytest.raises(TypeError, match="project"):
        dpsolve.clipped_gd(problem, 0.5, 1e-6, project="yes")
    with pytest.raises(TypeError, match="epsilon and delta"):
        dpsolve.clipped_gd(problem, 0.5)
    squared = dpsolve.Problem(problem.X, np.zeros(100), "squared", radius=None, reg=1.0)
    with pytest.raises(ValueError, match="clip_norm"):
        dpsolve.clipped_gd(squared, 0.5, 1e-6)


def test_no_bound_for_a_step_size_or_projection_the_analysis_did_not_use():
    """The bounds assume the default step size and the projection: a fit with a step size of
    its own or ``project=False`` gets none (it used to get the default's)."""
    spec = dpsolve.solvers.get("clipped_gd")
    problem = _problem()
    plan = dpsolve.solvers.plan_fit(spec, problem, None, 1.0, 1e-6)
    assert spec.bound(problem, None, plan) is not None
    for options in ({"step_size": 0.5}, {"project": False}):
        plan = dpsolve.solvers.plan_fit(spec, problem, None, 1.0, 1e-6, **options)
        assert spec.bound(problem, None, plan) is None
