"""Time clipped_gd at one problem size, for docs/performance.md, "A busy machine".

Usage: ``python docs/scripts/busy_machine.py n p steps``; prints the best and the median of five
runs in seconds. Run it with and without ``OMP_WAIT_POLICY=PASSIVE`` in the environment, on an
idle machine and with both cores busy (``yes > /dev/null &`` twice).
"""
import sys
import time
import warnings

import numpy as np

import dpsolve


def main(n, p, steps):
    """Best and median wall time of five seeded ``clipped_gd`` fits on synthetic data."""
    X, y = dpsolve.datasets.make_synthetic(n, p, rng=0)
    problem = dpsolve.Problem(X, y, "logistic", radius=1.0, reg=0.01)
    times = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(5):
            start = time.perf_counter()
            dpsolve.clipped_gd(problem, 1.0, 1e-6, steps=steps, rng=0)
            times.append(time.perf_counter() - start)
    return min(times), float(np.median(times))


if __name__ == "__main__":
    best, median = main(*map(int, sys.argv[1:4]))
    print(f"{best:.3f} {median:.3f}")
