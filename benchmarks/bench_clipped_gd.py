"""Speed of DP-GD (seed 004): one clipped full-batch gradient against NumPy's two passes.

The clipped gradient of a linear model needs the margins ``X @ theta`` and one weighted sum
``X.T @ v``; NumPy (multi-threaded BLAS where available) doing just those two products is the
floor the kernel is measured against, in the same process. asv benchmark classes (``time_*``);
also runnable directly, printing times and the ratio::

    python benchmarks/bench_clipped_gd.py
"""
import math
import time

import numpy as np

import dpsolve
from dpsolve._kernels import gd


class ClippedGradient:
    """One clipped gradient at n = 10^5 (logistic), against NumPy's ``X @ theta`` and ``X.T @ v``."""

    params = [10, 50, 200]
    param_names = ["p"]

    def setup(self, p):
        X, y = dpsolve.datasets.make_synthetic(100_000, p, rng=0)
        self.problem = dpsolve.Problem(X, y, "logistic", radius=1.0)
        self.theta = np.random.default_rng(1).normal(size=p) / math.sqrt(p)
        self.norms = np.linalg.norm(self.problem.X, axis=1)
        self.out, self.scratch = np.empty(p), np.empty((64, p))
        self.v = np.random.default_rng(2).normal(size=100_000)

    def time_dpsolve_kernel(self, p):
        P = self.problem
        gd.clipped_gradient_sum(P.X, P.y, P._kind, P._h, self.theta, self.norms, 0.5, self.out,
                                self.scratch)

    def time_numpy_two_passes(self, p):
        z = self.problem.X @ self.theta
        self.problem.X.T @ (self.v * z)

    def time_numpy_clipped_gradient(self, p):
        """The whole clipped gradient in NumPy, for comparison with a user's own code."""
        P = self.problem
        z = P.X @ self.theta
        d = -P.y / (1.0 + np.exp(P.y * z))
        scale = np.minimum(1.0, 0.5 / np.maximum(np.abs(d) * self.norms, 1e-300))
        P.X.T @ (d * scale)


class ClippedGD:
    """End to end: clipped_gd with its defaults (logistic, n = 10^4, p = 50)."""

    def setup(self):
        X, y = dpsolve.datasets.make_synthetic(10_000, 50, rng=0)
        self.problem = dpsolve.Problem(X, y, "logistic", radius=1.0)

    def time_clipped_gd_default(self):
        dpsolve.clipped_gd(self.problem, 1.0, 1e-6, rng=0)

    def time_clipped_gd_100_steps(self):
        dpsolve.clipped_gd(self.problem, 1.0, 1e-6, steps=100, rng=0)


def _best(fn, repeat=30):
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    print(f"{'p':>4} {'dpsolve kernel':>15} {'numpy 2 passes':>15} {'numpy clipped':>14} "
          f"{'kernel/2 passes':>16}")
    for p in ClippedGradient.params:
        b = ClippedGradient()
        b.setup(p)
        ours = _best(lambda: b.time_dpsolve_kernel(p))
        floor = _best(lambda: b.time_numpy_two_passes(p))
        full = _best(lambda: b.time_numpy_clipped_gradient(p))
        print(f"{p:>4} {ours * 1e3:>12.2f} ms {floor * 1e3:>12.2f} ms {full * 1e3:>11.2f} ms "
              f"{ours / floor:>15.2f}x")


if __name__ == "__main__":
    main()
