"""The audits of docs/auditing.md: each mechanism and DP-GD, honest and broken.

    python docs/scripts/audit_examples.py

Prints a markdown table: the claim, and the lower bounds on epsilon (at the claim's delta) and on
the Gaussian-DP mu that the audit certifies with 95% confidence. Broken versions keep the honest
claim while they run with: half the calibrated noise (the mechanisms; DP-GD through ``sigma=``;
output perturbation by patching its sampler), clipping switched off (DP-GD, ``clip_norm=1e9``),
or a fraction of the noise (noisy SGD through ``sigma=``, mini-batch SGD through
``noise_scale=``).
"""
import time
from unittest import mock

import numpy as np

import dpsolve
from dpsolve.audit import audit, canary_neighbours, gdp_mu
from dpsolve.privacy import (gamma_norm_noise, gamma_norm_scale, gaussian_noise,
                             gaussian_sigma_analytic, laplace_noise, laplace_scale)

EPSILON, DELTA = 1.0, 1e-5


def mechanism_rows(draws=500_000):
    def shifted(sampler, scale, dim):
        return lambda q, rng, size: q + sampler(scale, dim, size=size, rng=rng)

    v3 = np.eye(3)[0]
    llr3 = lambda out: np.linalg.norm(out - v3, axis=1) - np.linalg.norm(out, axis=1)  # noqa
    sigma = gaussian_sigma_analytic(1.0, EPSILON, DELTA)
    cases = [("Gaussian (analytic sigma)", gaussian_noise, sigma, 1, DELTA, None, 1 / sigma),
             ("Laplace", laplace_noise, laplace_scale(1.0, EPSILON), 1, 0.0, None, None),
             ("gamma-norm, p = 3", gamma_norm_noise, gamma_norm_scale(1.0, EPSILON), 3, 0.0,
              llr3, None)]
    for name, sampler, scale, dim, delta, statistic, mu in cases:
        for label, factor in (("honest", 1.0), ("half noise", 0.5)):
            start = time.perf_counter()
            result = audit(shifted(sampler, factor * scale, dim), np.zeros(dim),
                           np.eye(dim)[0], runs=draws, batch=100_000, statistic=statistic,
                           delta=delta, rng=1)
            yield (f"{name}, {label}", f"({EPSILON:g}, {delta:g})",
                   "" if mu is None else f"{mu:.3f}", result, time.perf_counter() - start)


def tiny_canaries(loss="hinge", **settings):
    """n = 100 unit rows, p = 10, and the canary neighbours built on them (tests/test_audit.py
    uses the same problem)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(100, 10))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=100) > 0, 1.0, -1.0)
    return canary_neighbours(dpsolve.Problem(X, y, loss, **settings))


def _row(name, claim, mu, run, D, D2, statistic, runs, delta):
    start = time.perf_counter()
    result = audit(run, D, D2, runs=runs, statistic=statistic, delta=delta, rng=1)
    return name, claim, mu, result, time.perf_counter() - start


def clipped_gd_rows(runs=1500, epsilon=2.0, steps=50, clip_norm=0.5):
    D, D2, statistic = tiny_canaries(radius=10.0)
    honest = dpsolve.clipped_gd(D, epsilon, DELTA, steps=steps, clip_norm=clip_norm,
                                output="last", rng=0)
    mu = f"{gdp_mu(honest):.3f}"
    step = honest.settings["step_size"]
    variants = {
        "honest": dict(sigma=honest.sigma, clip_norm=clip_norm),
        "half sigma": dict(sigma=honest.sigma / 2, clip_norm=clip_norm),
        "no clipping": dict(sigma=honest.sigma, clip_norm=1e9),
    }
    for label, kwargs in variants.items():
        def run(problem, rng, kwargs=kwargs):
            return dpsolve.clipped_gd(problem, delta=DELTA, steps=steps, step_size=step,
                                      output="last", rng=rng, **kwargs).theta
        yield _row(f"DP-GD, hinge canary, T = {steps}, C = {clip_norm}: {label}",
                   f"({epsilon:g}, {DELTA:g})", mu, run, D, D2, statistic, runs, DELTA)


def output_perturbation_rows(runs=1500, epsilon=2.0):
    import dpsolve.solvers._inner as module
    D, D2, statistic = tiny_canaries("huber_hinge", radius=None, reg=0.05)
    mu = f"{gdp_mu(dpsolve.output_perturbation(D, epsilon, DELTA, rng=0)):.3f}"

    def run(problem, rng):
        return dpsolve.output_perturbation(problem, epsilon, DELTA, rng=rng).theta

    name = "output perturbation (Gaussian), huber_hinge canary, λ = 0.05"
    yield _row(f"{name}: honest", f"({epsilon:g}, {DELTA:g})", mu, run, D, D2, statistic, runs,
               DELTA)
    real = module.gaussian_noise
    with mock.patch.object(module, "gaussian_noise", lambda s, d, **k: 0.5 * real(s, d, **k)):
        yield _row(f"{name}: half noise", f"({epsilon:g}, {DELTA:g})", mu, run, D, D2, statistic,
                   runs, DELTA)


def sgd_rows(runs=2000):
    D, D2, statistic = tiny_canaries(radius=100.0)
    sigma = dpsolve.noisy_sgd(D, 2.0, DELTA, steps=100, calibration="rdp", rng=0).sigma
    for factor in (1.0, 0.25, 0.1, 0.0):
        def run(problem, rng, factor=factor):
            return dpsolve.noisy_sgd(problem, delta=DELTA, sigma=factor * sigma, steps=100,
                                     rng=rng).theta
        yield _row(f"noisy SGD (SGD1), T = 100, last iterate: noise × {factor:g}",
                   f"(2, {DELTA:g}) rdp", "", run, D, D2, statistic, runs, DELTA)
    D, D2, statistic = tiny_canaries(radius=None, reg=0.05)
    scale = dpsolve.minibatch_sgd(D, 1.0, rng=0).noise["gamma_norm"]
    for factor in (1.0, 0.5, 0.1, 0.0):
        def run(problem, rng, factor=factor):
            return dpsolve.minibatch_sgd(problem, noise_scale=factor * scale, rng=rng).theta
        yield _row(f"mini-batch SGD (Song–Chaudhuri–Sarwate 2013), b = 10: noise × {factor:g}",
                   "(1, 0)", "", run, D, D2, statistic, runs, 0.0)


def main():
    print("| mechanism | claim (ε, δ) | claimed μ | runs per dataset | ε lower bound | "
          "μ lower bound | time |")
    print("|---|---|---|---|---|---|---|")
    for rows in (mechanism_rows(), clipped_gd_rows(), output_perturbation_rows(), sgd_rows()):
        for name, claim, mu, result, seconds in rows:
            print(f"| {name} | {claim} | {mu} | {result.runs:,} | {result.epsilon:.3f} | "
                  f"{result.mu:.3f} | {seconds:.1f} s |")


if __name__ == "__main__":
    main()
