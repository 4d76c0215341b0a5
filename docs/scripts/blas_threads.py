"""The table of docs/performance.md, "Same bits for any thread count": dpsolve's NumPy solves
(θ* and an inner solve) with dpsolve's threads at 2 and at 1, BLAS at its default (every core),
and the θ hash of each, which must agree.

    python docs/scripts/blas_threads.py

Best of three solves each, θ* without the cache.
"""
import hashlib
import time

import numpy as np

import dpsolve
from dpsolve._kernels.threads import max_threads, set_num_threads
from dpsolve.reference import reference_minimizer


def problems():
    X, y = dpsolve.datasets.make_synthetic(1_000_000, 100, rng=0)
    yield "logistic, n = 10⁶, p = 100, unit ball", dpsolve.Problem(X, y, radius=1.0)
    del X, y
    X, y = dpsolve.datasets.make_synthetic(100_000, 200, rng=0)
    yield "logistic, n = 10⁵, p = 200, λ = 10⁻³", dpsolve.Problem(X, y, radius=None, reg=1e-3)
    X, y = dpsolve.datasets.make_synthetic(100_000, 50, rng=0)
    yield ("huber_hinge, n = 10⁵, p = 50, λ = 10⁻³",
           dpsolve.Problem(X, y, "huber_hinge", radius=None, reg=1e-3))
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50_000, 20))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    yield ("multinomial, n = 5·10⁴, p = 20, K = 5, λ = 10⁻³",
           dpsolve.Problem(X, rng.integers(0, 5, 50_000), "multinomial", n_classes=5,
                           radius=None, reg=1e-3))
    X, y = dpsolve.datasets.make_synthetic(20_000, 1000, rng=0)
    yield ("logistic, n = 2·10⁴, p = 1000 (Newton-CG), λ = 10⁻³",
           dpsolve.Problem(X, y, radius=None, reg=1e-3))


def best(fn, repeat=3):
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def digest(theta):
    return hashlib.sha256(np.ascontiguousarray(theta).tobytes()).hexdigest()[:12]


def main():
    before = max_threads()
    print("| problem | solve | 2 threads (s) | 1 thread (s) | θ hash (both) |")
    print("|---|---|---|---|---|")
    try:
        for name, problem in problems():
            solves = [("θ*", lambda: reference_minimizer(problem, cache=False).theta)]
            if problem.reg > 0 and problem.loss == "logistic" and problem.p <= 200:
                solves.append(("objective_perturbation",
                               lambda: dpsolve.objective_perturbation(problem, 1.0, rng=0).theta))
            for label, solve in solves:
                row = []
                for threads in (2, 1):
                    set_num_threads(threads)
                    row.append(best(solve))
                (t2, a), (t1, b) = row
                same = digest(a) if digest(a) == digest(b) else f"{digest(a)} ≠ {digest(b)}"
                print(f"| {name} | {label} | {t2:.2f} | {t1:.2f} | {same} |", flush=True)
    finally:
        set_num_threads(before)


if __name__ == "__main__":
    main()
