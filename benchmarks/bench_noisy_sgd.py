"""Speed of SGD1 (seed 000): dpsolve's kernel against a pure-NumPy loop and NumPy's noise alone.

asv benchmark classes (``time_*`` methods); also runnable directly, printing the per-step times and
ratios measured in one process::

    python benchmarks/bench_noisy_sgd.py
"""
import math
import time

import numpy as np

import dpsolve


def make_problem(n, p, seed=0):
    X, y = dpsolve.datasets.make_synthetic(n, p, rng=seed)
    return dpsolve.Problem(X, y, "logistic", radius=1.0)


def noisy_sgd_numpy(X, y, steps, sigma, eta0, radius, rng):
    """SGD1 for the logistic loss, one NumPy-vectorised step per Python iteration."""
    n, p = X.shape
    theta = np.zeros(p)
    for t in range(1, steps + 1):
        i = rng.integers(n)
        x, yi = X[i], y[i]
        d = -yi / (1.0 + math.exp(yi * (x @ theta)))
        theta -= (eta0 / math.sqrt(t)) * (n * d * x + sigma * rng.standard_normal(p))
        norm = math.sqrt(theta @ theta)
        if norm > radius:
            theta *= radius / norm
    return theta


class NoisySGDStep:
    """Time per SGD1 step at n = 10^4 (logistic), against NumPy."""

    params = [10, 50, 200]
    param_names = ["p"]
    steps = 100_000
    numpy_steps = 5_000

    def setup(self, p):
        self.problem = make_problem(10_000, p)
        self.sigma = 100.0

    def time_dpsolve(self, p):
        dpsolve.noisy_sgd(self.problem, sigma=self.sigma, delta=1e-6, steps=self.steps, rng=0)

    def time_numpy_loop(self, p):
        noisy_sgd_numpy(self.problem.X, self.problem.y, self.numpy_steps, self.sigma, 0.01, 1.0,
                        np.random.default_rng(0))

    def time_numpy_noise_only(self, p):
        rng = np.random.default_rng(0)
        for _ in range(self.numpy_steps):
            rng.standard_normal(p)


def _per_step(fn, steps, repeat=5):
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best / steps


def main():
    print(f"{'p':>4} {'dpsolve/step':>13} {'numpy loop/step':>16} {'numpy noise/step':>17} "
          f"{'bulk noise/step':>16} {'loop/dpsolve':>13} {'dpsolve/noise':>14}")
    for p in NoisySGDStep.params:
        b = NoisySGDStep()
        b.setup(p)
        ours = _per_step(lambda: b.time_dpsolve(p), b.steps)
        loop = _per_step(lambda: b.time_numpy_loop(p), b.numpy_steps, repeat=3)
        noise = _per_step(lambda: b.time_numpy_noise_only(p), b.numpy_steps)
        rng = np.random.default_rng(0)
        bulk = _per_step(lambda: rng.standard_normal((b.steps, p)), b.steps)
        print(f"{p:>4} {ours * 1e9:>10.0f} ns {loop * 1e9:>13.0f} ns {noise * 1e9:>14.0f} ns "
              f"{bulk * 1e9:>13.0f} ns {loop / ours:>12.1f}x {ours / bulk:>13.2f}x")


if __name__ == "__main__":
    main()
