"""Mini-batch epsilon-DP SGD (Song, Chaudhuri & Sarwate 2013; docs/minibatch_sgd.md): exact
replay, noise-free limit, trends, privacy, inputs."""
import math

import numpy as np
import pytest

import dpsolve
from dpsolve._kernels import losses
from dpsolve.privacy import PureDpEvent


def _problem(n=1000, p=5, loss="logistic", seed=0, reg=1e-3, **kw):
    X, y = dpsolve.datasets.make_synthetic(n, p, rng=seed)
    kw.setdefault("radius", None)
    return dpsolve.Problem(X, y, loss, reg=reg, **kw)


def _replay(problem, batch_size, scale, schedule, eta0, seed):
    """Song, Chaudhuri & Sarwate 2013's update (1) in Python floats, drawing from the
    Generator in the kernel's order: the permutation, then per batch the gamma-norm radius and
    its direction."""
    rng = np.random.default_rng(seed)
    X, y, n, p = problem.X, problem.y, problem.n, problem.p
    order = rng.permutation(n)
    lam = problem.reg
    radius = min(1 / lam, problem.radius or math.inf)
    w = np.zeros(p)
    for t, start in enumerate(range(0, n, batch_size), start=1):
        rows = order[start:start + batch_size]
        g = np.zeros(p)
        for i in rows:
            z = 0.0
            for j in range(p):
                z += X[i, j] * w[j]
            d = losses.loss_derivatives(problem.loss_object.kernel_id, np.array([z]), y[i:i + 1], problem.loss_object.kernel_param)[0]
            if d != 0.0:
                g = g + d * X[i]
        if scale > 0:
            r = scale * rng.standard_gamma(p)
            u = rng.standard_normal(p)
            sq = 0.0
            for v in u:
                sq += v * v
            g = g + (r / math.sqrt(sq)) * u
        eta = {"inv_sqrt": eta0 / math.sqrt(t), "constant": eta0, "inv": (1 / lam) / t}[schedule]
        w = w - eta * (lam * w + g / len(rows))
        sq = 0.0
        for v in w:
            sq += v * v
        if sq > radius * radius:
            w = w * (radius / math.sqrt(sq))
    return w


@pytest.mark.parametrize("schedule", ["inv_sqrt", "constant", "inv"])
@pytest.mark.parametrize("loss, batch_size", [("logistic", 7), ("hinge", 1), ("logistic", 300),
                                              ("huber_hinge", 4)])
def test_matches_python_replay_bitwise(schedule, loss, batch_size):
    problem = _problem(300, 4, loss, radius=0.8 if loss == "hinge" else None)
    fit = dpsolve.minibatch_sgd(problem, 2.0, batch_size=batch_size, schedule=schedule,
                                step_size=0.5, rng=3)
    expected = _replay(problem, batch_size, 2 * 1.0 / 2.0, schedule, 0.5, 3)
    assert np.array_equal(fit.theta, expected)
    assert fit.steps == math.ceil(300 / batch_size)


def test_noise_free_limit():
    """noise_scale = 0 is plain mini-batch SGD; a huge epsilon differs from it by at most
    sum_t eta_t ||Z_t|| / |B_t| (every step map is non-expansive for eta_t <= 2 / beta), and
    ||Z_t|| ~ Gamma(p, s) stays below s (p + 12 sqrt(p) + 40) except with probability < 1e-12."""
    problem = _problem(500, 5)
    free = dpsolve.minibatch_sgd(problem, noise_scale=0.0, batch_size=10, rng=1)
    assert np.array_equal(free.theta, _replay(problem, 10, 0.0, "inv_sqrt", 1.0, 1))
    assert free.epsilon == math.inf and free.privacy.certified_epsilon == math.inf
    fit = dpsolve.minibatch_sgd(problem, 1e9, batch_size=10, rng=1)
    scale, p = 2.0 / 1e9, 5
    tol = sum(1 / math.sqrt(t) / 10 for t in range(1, 51)) * scale * (p + 12 * math.sqrt(p) + 40)
    assert 0 < np.linalg.norm(fit.theta - free.theta) <= tol


def _mean_objective(problem, seeds=20, **kw):
    values = [problem.objective(dpsolve.minibatch_sgd(problem, rng=s, **kw).theta)
              for s in range(seeds)]
    return np.mean(values), np.std(values, ddof=1) / math.sqrt(seeds)


def test_excess_risk_falls_with_epsilon():
    problem = _problem(2000, 5)
    low, se_low = _mean_objective(problem, epsilon=0.2)
    high, se_high = _mean_objective(problem, epsilon=5.0)
    assert low - high > 3 * math.hypot(se_low, se_high)


def test_excess_risk_falls_with_n():
    small, large = _problem(300, 5, seed=2), _problem(5000, 5, seed=2)
    risks = []
    for problem in (small, large):
        ref = dpsolve.reference_minimizer(problem)
        values = [dpsolve.excess_risk(problem, dpsolve.minibatch_sgd(
            problem, 1.0, batch_size=10, rng=s).theta, ref) for s in range(20)]
        risks.append((np.mean(values), np.std(values, ddof=1) / math.sqrt(20)))
    (m_small, se_small), (m_large, se_large) = risks
    assert m_small - m_large > 3 * math.hypot(se_small, se_large)


def test_privacy_report():
    X, y = dpsolve.datasets.make_synthetic(200, 3, rng=0)
    problem = dpsolve.Problem(X / 2, y, reg=1e-3, radius=None, row_norm=0.5)   # L = 0.5: scale
    # 2L / epsilon = 1 / epsilon
    fit = dpsolve.minibatch_sgd(problem, 0.8, rng=0)
    assert fit.noise == {"gamma_norm": 1 / 0.8} and fit.sigma is None
    assert fit.dp_event == PureDpEvent(0.8)
    assert (fit.epsilon, fit.delta) == (0.8, 0.0)
    assert fit.privacy.certified_epsilon == 0.8 and fit.privacy.holds
    assert dpsolve.privacy.epsilon_of(fit, 1e-6) <= 0.8
    explicit = dpsolve.minibatch_sgd(problem, noise_scale=4.0, rng=0)
    assert explicit.epsilon == 0.25 and explicit.calibration == "explicit"


def test_projection_radius_and_reproducibility():
    problem = _problem(300, 3, reg=0.5, radius=1.5)
    fit = dpsolve.minibatch_sgd(problem, 0.1, batch_size=3, rng=np.random.SeedSequence(9))
    again = dpsolve.minibatch_sgd(problem, 0.1, batch_size=3, rng=np.random.SeedSequence(9))
    assert np.array_equal(fit.theta, again.theta)
    assert fit.settings["radius"] == 1.5 and np.linalg.norm(fit.theta) <= 1.5 * (1 + 1e-12)
    assert dpsolve.minibatch_sgd(_problem(300, 3, reg=2.0), 1.0).settings["radius"] == 0.5


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(epsilon=1.0, batch_size=0), "batch_size"),
    (dict(epsilon=1.0, batch_size=101), "batch_size"),
    (dict(epsilon=1.0, schedule="adagrad"), "schedule"),
    (dict(epsilon=1.0, step_size=0.0), "step_size"),
    (dict(epsilon=1.0, noise_scale=1.0), "either epsilon"),
    (dict(noise_scale=-1.0), "noise_scale"),
])
def test_bad_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        dpsolve.minibatch_sgd(_problem(100), **kwargs)


def test_requirements_of_the_seed():
    X, y = dpsolve.datasets.make_synthetic(100, 3, rng=0)
    with pytest.raises(ValueError, match="reg > 0"):
        dpsolve.minibatch_sgd(dpsolve.Problem(X, y, radius=1.0), 1.0)
    with pytest.raises(ValueError, match="norm <= 1"):
        dpsolve.minibatch_sgd(dpsolve.Problem(2 * X, y, reg=0.1, radius=None, row_norm=2.0), 1.0)
    with pytest.raises(TypeError, match="epsilon"):
        dpsolve.minibatch_sgd(_problem(100))
    with pytest.raises(TypeError, match="batch_size"):
        dpsolve.minibatch_sgd(_problem(100), 1.0, batch_size=2.5)


def test_bound_for_the_inv_schedule():
    problem = _problem(3000, 5, reg=0.1)
    ref = dpsolve.reference_minimizer(problem)
    for b in (1, 10):
        risks = [dpsolve.excess_risk(problem, dpsolve.minibatch_sgd(
            problem, 1.0, batch_size=b, schedule="inv", rng=s).theta, ref) for s in range(20)]
        bound = dpsolve.bounds.minibatch_sgd_bound(problem, 1.0, batch_size=b)
        # a bound on the expectation: the mean may not exceed it by 3 standard errors
        assert np.mean(risks) - 3 * np.std(risks, ddof=1) / math.sqrt(20) <= bound
    # closed form at b = n: one step, M^2 = (L + lambda r)^2 + p (p+1) s^2 / n^2
    n = problem.n
    M2 = (1 + 0.1 * 10) ** 2 + 5 * 6 * 4 / n ** 2
    assert dpsolve.bounds.minibatch_sgd_bound(problem, 1.0, batch_size=n) == pytest.approx(
        2 * (0.25 + 0.1) * M2 / 0.01)
    with pytest.raises(ValueError, match="smooth"):
        dpsolve.bounds.minibatch_sgd_bound(_problem(100, loss="hinge"), 1.0, batch_size=5)
