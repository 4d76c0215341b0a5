"""Private stochastic convex optimisation: what the DP-SCO solvers deliver on a distribution
whose population risk is known, so that a regression in accuracy shows on the asv graphs like
one in speed.

One cell per solver, on :class:`dpsolve.population.SphereSource` (logistic link, p = 10,
``theta0 = 2 e_1``, rows uniform on the unit sphere), n = 4000 fresh rows per seed, radius 1,
epsilon = 1, delta = 1e-6, five seeds. Tracked:

* ``PopulationRisk``: the mean excess population risk ``L(theta) - min_C L`` over the seeds
  (quadrature, :func:`dpsolve.excess_population_risk`);
* ``RatioToPopulationBound``: that mean over the solver's population bound
  (``Hooks.population_bound``, read off each fit's plan).

The speed of each solver is tracked by ``bench_solvers.Solvers``. Run directly
(``python -m benchmarks.bench_sco``) to print the table.
"""
import numpy as np

import dpsolve
from dpsolve.population import SphereSource
from dpsolve.solvers import get, plan_fit

from .common import SEEDS

N, P, RADIUS, EPSILON, DELTA = 4000, 10, 1.0, 1.0, 1e-6

#: cell -> (solver name, options)
CELLS = {
    "phased_erm": ("phased_erm", {}),
    "sco_sgd": ("sco_sgd", {}),
}


def _source():
    return SphereSource(P, 2.0 * np.eye(P)[0], "logistic")


def measure():
    """cell -> mean excess population risk, population bound, ratio."""
    source, out = _source(), {}
    for cell, (name, options) in CELLS.items():
        spec = get(name)
        risks, bounds = [], []
        for seed in SEEDS:
            problem = source.problem(N, seed, radius=RADIUS)
            fit = spec.function(problem, EPSILON, DELTA, rng=1000 + seed, **options)
            risks.append(dpsolve.excess_population_risk(fit.theta, source, RADIUS).value)
            plan = plan_fit(spec, problem, None, EPSILON, DELTA, **options)
            bounds.append(spec.hooks.population_bound(problem, None, plan))
        risk, bound = float(np.mean(risks)), float(np.mean(bounds))
        out[cell] = {"excess_population_risk": risk, "population_bound": bound,
                     "ratio": risk / bound}
    return out


class SCOMixin:
    """The cells, computed once for every class below."""

    timeout = 900

    def setup_cache(self):
        return measure()


class PopulationRisk(SCOMixin):
    params = list(CELLS)
    param_names = ["cell"]

    def track_mean_excess_population_risk(self, results, cell):
        return results[cell]["excess_population_risk"]

    track_mean_excess_population_risk.unit = "L(theta) - min_C L, mean of 5 seeds"


class RatioToPopulationBound(SCOMixin):
    params = list(CELLS)
    param_names = ["cell"]

    def track_ratio_to_population_bound(self, results, cell):
        return results[cell]["ratio"]

    track_ratio_to_population_bound.unit = "mean excess population risk / population bound"


def main():
    results = measure()
    print("| cell | excess population risk | population bound | risk / bound |")
    print("|---|---|---|---|")
    for cell, r in results.items():
        print(f"| {cell} | {r['excess_population_risk']:.3g} | {r['population_bound']:.3g} | "
              f"{r['ratio']:.3g} |")


if __name__ == "__main__":
    main()
