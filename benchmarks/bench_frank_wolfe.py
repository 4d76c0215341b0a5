"""Private Frank-Wolfe over the l1 ball (docs/frank_wolfe.md) on a sparse problem: CSR X with
n = p = 10⁴ at 1% density (10⁶ stored entries, rows in the l-inf unit ball), logistic loss,
``constraint="l1"``, R = 5, epsilon = 1, delta = 1e-6, the default T.

* ``FrankWolfeSpeed``: one fit against a baseline in the same run, T SciPy products ``X.T @ r``
  (the one pass over X a step needs, and nothing else). Target: ratio at most 1.5.
* ``FrankWolfeAccuracy``: the excess risk ``F(theta) - F*`` reached (mean over five seeds), and
  its ratio to :func:`dpsolve.solvers.frank_wolfe.frank_wolfe_bound` (below 1: the bound holds
  in expectation). F* is certified from below (:func:`certified_minimum`).

Run directly (``python -m benchmarks.bench_frank_wolfe``) to print the measurements.
"""

import numpy as np
from scipy import sparse

import dpsolve
from dpsolve.solvers.frank_wolfe import frank_wolfe_bound

from .common import SEEDS, best_time

N, P, DENSITY, RADIUS = 10_000, 10_000, 0.01, 5.0
EPSILON, DELTA = 1.0, 1e-6


def make_problem():
    """CSR rows with entries uniform in [-1, 1] (seed 0), labels from a 5-sparse linear model
    with noise."""
    rng = np.random.default_rng(0)
    X = sparse.random(N, P, density=DENSITY, format="csr", random_state=rng,
                      data_rvs=lambda k: rng.uniform(-1.0, 1.0, k))
    w = np.zeros(P)
    w[:5] = (3.0, -2.0, 2.0, -1.0, 1.0)
    y = np.where(X @ w + 0.3 * rng.standard_normal(N) > 0.0, 1.0, -1.0)
    return dpsolve.Problem(X, y, "logistic", constraint="l1", radius=RADIUS)


def certified_minimum(problem):
    """A value at most ``min_C F``: the certified reference minimiser over the l1 ball, its
    value minus its duality gap."""
    reference = dpsolve.reference_minimizer(problem)
    return reference.value - reference.gap


class FrankWolfeSpeed:
    """A fit against T SciPy products ``X.T @ r``."""

    timeout = 600

    def setup(self):
        self.problem = make_problem()
        self.steps = dpsolve.frank_wolfe(self.problem, EPSILON, DELTA, rng=0).steps
        self.r = np.random.default_rng(2).standard_normal(N)

    def _fit(self):
        dpsolve.frank_wolfe(self.problem, EPSILON, DELTA, rng=0)

    def _baseline(self):
        X = self.problem.X
        for _ in range(self.steps):
            X.T @ self.r

    def time_frank_wolfe(self):
        self._fit()

    def time_scipy_products(self):
        self._baseline()

    def track_fit_over_scipy(self):
        return best_time(self._fit, repeat=3) / best_time(self._baseline, repeat=3)

    track_fit_over_scipy.unit = "ratio (target <= 1.5)"


class FrankWolfeAccuracy:
    """The excess risk reached and its ratio to the bound."""

    timeout = 900
    number, repeat, warmup_time = 1, 1, 0.0

    def setup_cache(self):
        problem = make_problem()
        lower = certified_minimum(problem)
        fits = [dpsolve.frank_wolfe(problem, EPSILON, DELTA, rng=seed) for seed in SEEDS]
        excess = float(np.mean([problem.objective(f.theta) - lower for f in fits]))
        bound = float(frank_wolfe_bound(problem, EPSILON, DELTA, steps=fits[0].steps))
        return {"excess": excess, "bound": bound}

    def track_excess_risk(self, cache):
        return cache["excess"]

    track_excess_risk.unit = "F(theta) - F*"

    def track_excess_over_bound(self, cache):
        return cache["excess"] / cache["bound"]

    track_excess_over_bound.unit = "ratio (target < 1)"


def main():
    speed = FrankWolfeSpeed()
    speed.setup()
    X = speed.problem.X
    print(f"X: {N} x {P}, {X.nnz} stored entries; T = {speed.steps}")
    fit, baseline = best_time(speed._fit, repeat=3), best_time(speed._baseline, repeat=3)
    print(f"frank_wolfe fit {fit * 1e3:.0f} ms, {speed.steps} scipy X.T @ r "
          f"{baseline * 1e3:.0f} ms: ratio {fit / baseline:.2f}")
    cache = FrankWolfeAccuracy().setup_cache()
    print(f"excess risk {cache['excess']:.4g}, bound {cache['bound']:.4g}: ratio "
          f"{cache['excess'] / cache['bound']:.3f}")


if __name__ == "__main__":
    main()
