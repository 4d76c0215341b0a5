"""Speed of Song-Chaudhuri-Sarwate 2013's mini-batch SGD: one pass in dpsolve's kernel against a
NumPy loop.

asv benchmark classes (``time_*``); also runnable directly, printing the times and the ratio::

    python -m benchmarks.bench_minibatch_sgd
"""
import math
import time

import numpy as np

import dpsolve


def minibatch_numpy(X, y, batch_size, scale, reg, rng):
    """One pass of update (1), logistic loss, one NumPy-vectorised batch per Python iteration."""
    n, p = X.shape
    order = rng.permutation(n)
    w = np.zeros(p)
    radius = 1.0 / reg
    for t, start in enumerate(range(0, n, batch_size), start=1):
        rows = order[start:start + batch_size]
        Xb, yb = X[rows], y[rows]
        g = Xb.T @ (-yb / (1.0 + np.exp(yb * (Xb @ w))))
        u = rng.standard_normal(p)
        g += scale * rng.standard_gamma(p) / np.linalg.norm(u) * u
        w -= (1.0 / math.sqrt(t)) * (reg * w + g / len(rows))
        norm = np.linalg.norm(w)
        if norm > radius:
            w *= radius / norm
    return w


class MinibatchPass:
    """One pass over n = 10^5 rows (p = 20, logistic, epsilon = 1)."""

    params = [1, 10, 100]
    param_names = ["batch_size"]

    def setup(self, batch_size):
        X, y = dpsolve.datasets.make_synthetic(100_000, 20, rng=0)
        self.problem = dpsolve.Problem(X, y, "logistic", radius=None, reg=1e-4)

    def time_dpsolve(self, batch_size):
        dpsolve.minibatch_sgd(self.problem, 1.0, batch_size=batch_size, rng=0)

    def time_numpy_loop(self, batch_size):
        minibatch_numpy(self.problem.X, self.problem.y, batch_size, 2.0, 1e-4,
                        np.random.default_rng(0))


def _best(fn, repeat=5):
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    print(f"{'b':>4} {'dpsolve':>10} {'numpy loop':>11} {'numpy/dpsolve':>14}")
    for b in MinibatchPass.params:
        bench = MinibatchPass()
        bench.setup(b)
        ours = _best(lambda: bench.time_dpsolve(b))
        loop = _best(lambda: bench.time_numpy_loop(b), repeat=2)
        print(f"{b:>4} {ours * 1e3:>7.1f} ms {loop * 1e3:>8.1f} ms {loop / ours:>13.1f}x")


if __name__ == "__main__":
    main()
