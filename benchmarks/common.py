"""Shared pieces of the asv suite, after scikit-learn's ``asv_benchmarks/benchmarks/common.py``:
problems built from fixed seeds, the NumPy baselines the kernels are measured against, and a
best-of timer for the ratios that must be measured inside one benchmark (both sides in the same
process, the same minute, on the same machine state).

Run the whole suite with asv (docs/parameters.md, development section), or one file directly
from the repository root, which prints its measurements::

    python -m benchmarks.bench_kernels
"""
import math
import time

import numpy as np

import dpsolve

#: The seeds every accuracy benchmark averages over.
SEEDS = (0, 1, 2, 3, 4)


def synthetic_problem(n, p, loss="logistic", *, radius=1.0, reg=0.0, seed=0):
    """``dpsolve.datasets.make_synthetic(n, p)`` (unit rows, labels from a noisy linear model)."""
    X, y = dpsolve.datasets.make_synthetic(n, p, rng=seed)
    return dpsolve.Problem(X, y, loss, radius=radius, reg=reg)


def best_time(fn, *, repeat=5, min_time=0.02):
    """Best over ``repeat`` rounds of the mean time of one call of ``fn``; each round makes as
    many calls as it takes to last ``min_time`` seconds (timeit's autorange, without timeit)."""
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            break
        number *= 2 if elapsed <= 0 else max(2, math.ceil(min_time / elapsed))
    best = elapsed / number
    for _ in range(repeat - 1):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def noisy_sgd_numpy(X, y, steps, sigma, eta0, radius, rng):
    """SGD1 for the logistic loss, one NumPy-vectorised step per Python iteration: what a user
    would write without dpsolve."""
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


def clipped_gradient_numpy(problem, theta, row_norms, clip):
    """The clipped gradient sum of the logistic loss in NumPy."""
    z = problem.X @ theta
    d = -problem.y / (1.0 + np.exp(problem.y * z))
    scale = np.minimum(1.0, clip / np.maximum(np.abs(d) * row_norms, 1e-300))
    return problem.X.T @ (d * scale)
