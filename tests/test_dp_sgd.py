"""dp_sgd (Abadi et al. 2016): what is specific to it. The common checks (reproducibility,
secure mode, bad inputs, certification, audit) run over the registry in test_common_checks.py."""
import math

import numpy as np
import pytest

import dpsolve
from dpsolve.solvers import dp_sgd as module
from conftest import synthetic_problem


def _problem(n=300, p=4, loss="logistic", seed=0, **kw):
    kw.setdefault("radius", 1.0)
    return synthetic_problem(n, p, loss, seed=seed, **kw)


def _clip(v, C):
    norm = np.linalg.norm(v)
    return v if norm <= C else v * (C / norm)


@pytest.mark.parametrize("loss", ["logistic", "hinge", "huber_hinge"])
def test_noise_free_full_batch_is_clipped_projected_gradient_descent(loss):
    """q = 1 and sigma = 0: every step uses every row, so the run is full-batch clipped GD;
    compared with a plain NumPy loop. The kernel sums in 64 fixed blocks, NumPy row by row: the
    sums agree to n * eps relative, hence the tolerance."""
    P = _problem(loss=loss, reg=0.05)
    C, eta, T = 0.5, 0.3, 40
    fit = dpsolve.dp_sgd(P, None, 1e-6, sigma=0.0, sampling_rate=1.0, steps=T, clip_norm=C,
                         step_size=eta, rng=0)
    w, total = np.zeros(P.p), np.zeros(P.p)
    for _ in range(T):
        d = P.loss_derivatives(w)
        g = sum(_clip(d[i] * P.X[i], C) for i in range(P.n))
        w = w - eta * (g / P.n + P.reg * w)
        w = _clip(w, P.radius)
        total += w
    np.testing.assert_allclose(fit.theta, total / T, rtol=1e-10, atol=1e-13)


def test_samples_have_the_poisson_size(monkeypatch):
    """Over T steps the sample sizes are T independent Binomial(n, q): their total lies within
    5 standard deviations of T q n (a chance below 1e-6 otherwise)."""
    sizes = []
    real = module._gd.clipped_gradient_sum

    def spy(X, *args):
        sizes.append(X.shape[0])
        return real(X, *args)

    monkeypatch.setattr(module._gd, "clipped_gradient_sum", spy)
    P = _problem(n=500)
    q, T = 0.1, 200
    dpsolve.dp_sgd(P, 1.0, 1e-6, sampling_rate=q, steps=T, rng=1)
    assert len(sizes) == T
    mean, sd = T * q * P.n, math.sqrt(T * P.n * q * (1 - q))
    assert abs(sum(sizes) - mean) <= 5 * sd


def test_sensitivity_of_the_clipped_sum_is_two_clip_norms():
    """Replace one record, maximise the change of the clipped sum over many parameters and
    replacement records: it never exceeds 2C, and a label flip at theta = 0 attains it."""
    P = _problem(n=50, loss="hinge")
    C = 0.7
    rng = np.random.default_rng(2)
    largest = 0.0
    for _ in range(200):
        theta = rng.standard_normal(P.p) * rng.uniform(0, 2)
        x = rng.standard_normal(P.p)
        x /= np.linalg.norm(x)
        y = rng.choice([-1.0, 1.0])
        for other_x, other_y in ((x, -y), (-x, y), (rng.standard_normal(P.p) / 3, y)):
            g1 = _clip(P.loss_function.derivatives(np.array([x @ theta]), np.array([y]))[0] * x, C)
            g2 = _clip(P.loss_function.derivatives(np.array([other_x @ theta]),
                                                   np.array([other_y]))[0] * other_x, C)
            largest = max(largest, np.linalg.norm(g1 - g2))
    assert largest <= 2 * C * (1 + 1e-12)
    assert largest >= 2 * C * (1 - 1e-12)
    fit = dpsolve.dp_sgd(P, 1.0, 1e-6, clip_norm=C, steps=10, rng=0)
    assert fit.dp_event.event.noise_multiplier == pytest.approx(fit.sigma / (2 * C))


def test_mean_excess_risk_is_within_the_bound():
    """The bound is on the expected excess risk; the mean over 6 seeds is below it here with a
    wide margin (about half), so a wrong constant in the step size or the bound shows."""
    P = _problem(n=2000, p=5, reg=1e-3)
    ref = dpsolve.reference_minimizer(P)
    fits = [dpsolve.dp_sgd(P, 1.0, 1e-6, rng=s) for s in range(6)]
    risks = [dpsolve.excess_risk(P, f.theta, ref) for f in fits]
    bound = dpsolve.solvers.get("dp_sgd").bound(P, None, fits[0], {})
    assert np.mean(risks) <= bound.value
    assert bound.value == module.dp_sgd_bound(P, clip_norm=1.0,
                                              sampling_rate=fits[0].settings["sampling_rate"],
                                              sigma=fits[0].sigma, steps=fits[0].steps)


def test_defaults_come_from_public_constants():
    P = _problem(n=640)
    fit = dpsolve.dp_sgd(P, 1.0, 1e-6, rng=0)
    assert fit.settings["sampling_rate"] == 0.1 and fit.steps == 50
    assert fit.settings["clip_norm"] == P.lipschitz
    with pytest.raises(TypeError, match="needs steps"):
        dpsolve.dp_sgd(P, None, 1e-6, sigma=1.0)
