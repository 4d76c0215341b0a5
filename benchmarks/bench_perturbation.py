"""Speed of output and objective perturbation against the non-private certified solve.

asv benchmark classes (``time_*``); also runnable directly::

    python benchmarks/bench_perturbation.py
"""
import math
import time

import dpsolve


class Perturbation:
    """n = 10^4, p = 50, logistic, lambda = 1e-3, no constraint."""

    def setup(self):
        X, y = dpsolve.datasets.make_synthetic(10_000, 50, rng=0)
        self.problem = dpsolve.Problem(X, y, "logistic", radius=None, reg=1e-3)

    def time_reference_uncached(self):
        dpsolve.reference_minimizer(self.problem, tol=1e-10, cache=False)

    def time_output_perturbation(self):
        dpsolve.output_perturbation(self.problem, 1.0, rng=0)

    def time_objective_perturbation(self):
        dpsolve.objective_perturbation(self.problem, 1.0, rng=0)


def main():
    bench = Perturbation()
    bench.setup()
    for name in ("time_reference_uncached", "time_output_perturbation",
                 "time_objective_perturbation"):
        best = math.inf
        for _ in range(3):
            start = time.perf_counter()
            getattr(bench, name)()
            best = min(best, time.perf_counter() - start)
        print(f"{name[5:]:<28} {best:8.3f} s")


if __name__ == "__main__":
    main()
