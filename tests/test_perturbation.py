"""Output perturbation (seed 002) and objective perturbation (AMP): exact noise, limits, trends,
privacy, inputs."""
import math

import numpy as np
import pytest
from scipy import optimize

import dpsolve
from dpsolve import bounds
from dpsolve._perturbation import objective_perturbation_constants
from dpsolve.privacy import gamma_norm_noise, gaussian_noise, gaussian_sigma_analytic


def _problem(n=2000, p=5, loss="logistic", seed=0, reg=1e-2, radius=None, **kw):
    X, y = dpsolve.datasets.make_synthetic(n, p, rng=seed)
    if loss == "squared":
        y = np.clip(X @ np.ones(p) / p, -1, 1)
    return dpsolve.Problem(X, y, loss, reg=reg, radius=radius, **kw)


def _gamma_tail(scale, p):
    """||b|| ~ Gamma(p, scale) stays below this except with probability < 1e-12."""
    return scale * (p + 12 * math.sqrt(p) + 40)


# -- output perturbation -----------------------------------------------------------------------
@pytest.mark.parametrize("loss, radius", [("logistic", None), ("hinge", 1.0), ("squared", 1.0)])
def test_output_is_certified_minimiser_plus_the_drawn_noise(loss, radius):
    problem = _problem(500, 4, loss, radius=radius)
    g = 1e-10
    fit = dpsolve.output_perturbation(problem, 0.5, tolerance=g, project=False, rng=3)
    delta2 = 2 * problem.lipschitz / (problem.n * problem.reg) + 2 * math.sqrt(2 * g / problem.reg)
    assert fit.settings["sensitivity"] == pytest.approx(delta2, rel=1e-15)
    assert fit.noise == {"gamma_norm": delta2 / 0.5}
    b = gamma_norm_noise(delta2 / 0.5, 4, rng=3)
    theta_hat = fit.theta - b
    # theta_hat is g-optimal: within sqrt(2 g / lambda) of the exact minimiser
    ref = dpsolve.reference_minimizer(problem, tol=1e-11)
    assert np.linalg.norm(theta_hat - ref.theta) <= math.sqrt(2 * g / problem.reg) + \
        math.sqrt(2 * ref.gap / problem.reg) + 1e-12


def test_output_sensitivity_holds_on_neighbours():
    """Replace one record: the certified minimisers move by at most 2L/(n lambda) + 2 sqrt(2g/lambda)."""
    X, y = dpsolve.datasets.make_synthetic(300, 3, rng=1)
    g, lam = 1e-10, 0.05
    base = dpsolve.Problem(X, y, "hinge", reg=lam, radius=None)
    theta = dpsolve.reference_minimizer(base, tol=g, cache=False).theta
    rng = np.random.default_rng(2)
    for _ in range(5):
        X2, y2 = X.copy(), y.copy()
        i = rng.integers(300)
        X2[i] = -X[i]
        y2[i] = -y[i] if rng.random() < 0.5 else y[i]
        other = dpsolve.reference_minimizer(dpsolve.Problem(X2, y2, "hinge", reg=lam, radius=None),
                                            tol=g, cache=False).theta
        assert np.linalg.norm(theta - other) <= 2 / (300 * lam) + 2 * math.sqrt(2 * g / lam)


def test_output_noise_free_limit_and_gaussian_calibrations():
    problem = _problem(1000, 5)
    ref = dpsolve.reference_minimizer(problem)
    fit = dpsolve.output_perturbation(problem, 1e9, rng=0)
    scale = fit.noise["gamma_norm"]
    assert np.linalg.norm(fit.theta - ref.theta) <= (2 * math.sqrt(2 * 1e-10 / 0.01)
                                                     + _gamma_tail(scale, 5))
    gauss = dpsolve.output_perturbation(problem, 0.5, 1e-6, rng=0)
    sens = gauss.settings["sensitivity"]
    assert gauss.sigma == pytest.approx(gaussian_sigma_analytic(sens, 0.5, 1e-6), rel=2e-3)
    assert gauss.privacy.holds and gauss.privacy.certified_by == "pld"
    paper = dpsolve.output_perturbation(problem, 0.5, 1e-6, calibration="paper", rng=0)
    assert paper.sigma == sens * math.sqrt(2 * math.log(1.25 / 1e-6)) / 0.5
    assert paper.privacy.certified_epsilon < 0.5
    # same Generator stream: the Gaussian noise is rng.standard_normal(p) scaled; removing it
    # leaves the same minimiser up to the rounding of the addition and the subtraction
    np.testing.assert_allclose(gauss.theta - gaussian_noise(gauss.sigma, 5, rng=0),
                               paper.theta - gaussian_noise(paper.sigma, 5, rng=0),
                               rtol=0, atol=8 * np.finfo(float).eps * 10)


def _mean_excess(solver, problem, seeds=20, **kw):
    ref = dpsolve.reference_minimizer(problem)
    risks = [dpsolve.excess_risk(problem, solver(problem, rng=s, **kw).theta, ref)
             for s in range(seeds)]
    return np.mean(risks), np.std(risks, ddof=1) / math.sqrt(seeds)


@pytest.mark.parametrize("solver", [dpsolve.output_perturbation, dpsolve.objective_perturbation])
def test_excess_risk_falls_with_epsilon_and_n_and_stays_below_the_bound(solver):
    bound = {dpsolve.output_perturbation: bounds.output_perturbation_bound,
             dpsolve.objective_perturbation: bounds.objective_perturbation_bound}[solver]
    problem = _problem(1000, 5, reg=1e-3)
    (lo_eps, se1), (hi_eps, se2) = (_mean_excess(solver, problem, epsilon=e) for e in (0.2, 2.0))
    assert lo_eps - hi_eps > 3 * math.hypot(se1, se2)
    assert lo_eps - 3 * se1 <= bound(problem, 0.2)
    small, large = _problem(300, 5, seed=4, reg=1e-3), _problem(5000, 5, seed=4, reg=1e-3)
    (m_small, s_small), (m_large, s_large) = (_mean_excess(solver, q, epsilon=0.5)
                                              for q in (small, large))
    assert m_small - m_large > 3 * math.hypot(s_small, s_large)
    assert m_large - 3 * s_large <= bound(large, 0.5)


# -- objective perturbation ----------------------------------------------------------------------
def test_objective_constants_closed_form():
    problem = _problem(1000, 5, reg=1e-2)          # c = 1/4, B = 1
    eps_prime, extra = objective_perturbation_constants(problem, 1.0)
    assert extra == 0.0
    assert eps_prime == pytest.approx(1.0 - math.log(1 + 2 * 0.25 / 10 + (0.25 / 10) ** 2))
    small = _problem(100, 5, reg=1e-3)              # 2c/(n lambda) = 5: epsilon' < 0
    eps_prime, extra = objective_perturbation_constants(small, 1.0)
    assert eps_prime == 0.5
    assert extra == pytest.approx(0.25 / (100 * math.expm1(0.25)) - 1e-3)
    huber = _problem(1000, 5, "huber_hinge", reg=1e-2, huber_width=0.1)   # c = 1/(2h) = 5
    assert objective_perturbation_constants(huber, 1.0) == (
        pytest.approx(1.0 - math.log(1 + 2 * 5 / 10 + (5 / 10) ** 2)), 0.0)
    sharp = _problem(1000, 5, "huber_hinge", reg=1e-2, huber_width=0.02)  # c = 25
    eps_prime, extra = objective_perturbation_constants(sharp, 1.0)
    assert eps_prime == 0.5 and extra == pytest.approx(25 / (1000 * math.expm1(0.25)) - 1e-2)


@pytest.mark.parametrize("loss", ["logistic", "huber_hinge"])
def test_objective_inner_solution_is_certified(loss):
    """Replay the draws: b first (objective), then b_2 (output); what is left is the inner
    solution, whose perturbed gradient must be below sqrt(2 mu g)."""
    problem = _problem(800, 4, loss, reg=1e-2)
    fit = dpsolve.objective_perturbation(problem, 1.0, rng=5)
    rng = np.random.default_rng(5)
    b = gamma_norm_noise(fit.noise["objective_gamma_norm"], 4, rng=rng)
    b2 = gamma_norm_noise(fit.noise["gamma_norm"], 4, rng=rng)
    theta_hat = fit.theta - b2
    mu = problem.reg + fit.settings["extra_reg"]
    grad = problem.gradient(theta_hat) + b / problem.n + fit.settings["extra_reg"] * theta_hat
    assert np.linalg.norm(grad) <= math.sqrt(2 * mu * fit.settings["tolerance"])
    # an independent solver finds nothing better than g below it
    def perturbed(t):
        return problem.objective(t) + b @ t / problem.n

    res = optimize.minimize(perturbed, np.zeros(4), method="BFGS", options={"gtol": 1e-10},
                            jac=lambda t: problem.gradient(t) + b / problem.n)
    assert perturbed(theta_hat) <= perturbed(res.x) + fit.settings["tolerance"]
    assert fit.settings["output_sensitivity"] == 2 * math.sqrt(2 * 1e-12 / mu)


def test_objective_privacy_report_and_noise_free_limit():
    problem = _problem(2000, 5)
    fit = dpsolve.objective_perturbation(problem, 1.0, 1e-6, rng=0)
    assert fit.settings["epsilon_objective"] == pytest.approx(0.9)
    assert fit.privacy.holds and fit.privacy.certified_epsilon <= 1.0
    eps_prime = fit.settings["epsilon_prime"]
    assert fit.noise["objective_gamma_norm"] == 2 * 1.0 / eps_prime
    pure = dpsolve.objective_perturbation(problem, 1.0, rng=0)
    assert (pure.epsilon, pure.delta, pure.privacy.certified_epsilon) == (1.0, 0.0, 1.0)
    ref = dpsolve.reference_minimizer(problem)
    huge = dpsolve.objective_perturbation(problem, 1e9, rng=0)
    v = _gamma_tail(huge.noise["objective_gamma_norm"], 5) / problem.n
    r = math.sqrt(2 * 1e-12 / problem.reg)
    assert np.linalg.norm(huge.theta - ref.theta) <= (v / problem.reg + r
                                                      + _gamma_tail(huge.noise["gamma_norm"], 5)
                                                      + math.sqrt(2 * ref.gap / problem.reg))


# -- bad inputs ----------------------------------------------------------------------------------
@pytest.mark.parametrize("solver", [dpsolve.output_perturbation, dpsolve.objective_perturbation])
@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(epsilon=1.0, delta=0.0, noise="gaussian"), "delta"),
    (dict(epsilon=1.0, delta=1.0), "delta"),
    (dict(epsilon=1.0, delta=1e-6, noise="gamma_norm"), "gamma_norm"),
    (dict(epsilon=1.0, tolerance=0.0), "tolerance"),
    (dict(epsilon=1.0, noise="laplace"), "noise"),
    (dict(epsilon=12.0, delta=1e-6, calibration="paper"), "epsilon < 1"),
])
def test_bad_inputs(solver, kwargs, match):
    with pytest.raises(ValueError, match=match):
        solver(_problem(100), **kwargs)


def test_requirements():
    X, y = dpsolve.datasets.make_synthetic(100, 3, rng=0)
    for solver in (dpsolve.output_perturbation, dpsolve.objective_perturbation):
        with pytest.raises(ValueError, match="reg > 0"):
            solver(dpsolve.Problem(X, y, radius=1.0), 1.0)
    with pytest.raises(ValueError, match="twice-differentiable"):
        dpsolve.objective_perturbation(dpsolve.Problem(X, y, "hinge", reg=0.1, radius=None), 1.0)
    with pytest.raises(ValueError, match="twice-differentiable"):
        dpsolve.objective_perturbation(
            dpsolve.Problem(X, np.zeros(100), "squared", reg=0.1, radius=1.0), 1.0)
    with pytest.raises(ValueError, match="radius=None"):
        dpsolve.objective_perturbation(dpsolve.Problem(X, y, reg=0.1, radius=1.0), 1.0)
    with pytest.raises(ValueError, match="output_fraction"):
        dpsolve.objective_perturbation(dpsolve.Problem(X, y, reg=0.1, radius=None), 1.0,
                                       output_fraction=1.0)
    with pytest.raises(TypeError, match="delta"):
        dpsolve.output_perturbation(dpsolve.Problem(X, y, reg=0.1, radius=None), 1.0,
                                    noise="gaussian")
    with pytest.raises(ValueError, match="epsilon < 1"):
        dpsolve.output_perturbation(dpsolve.Problem(X, y, reg=0.1, radius=None), 1.5, 1e-3,
                                    calibration="paper")
    # objective perturbation's output share is 0.15 < 1: the classic Gaussian applies
    fit = dpsolve.objective_perturbation(dpsolve.Problem(X, y, reg=0.1, radius=None), 1.5, 1e-3,
                                         calibration="paper", rng=0)
    assert fit.privacy.holds and fit.settings["epsilon_output"] == pytest.approx(0.15)
