"""Objective perturbation's default settings against dpsolve 0.2's, measured.

    python docs/scripts/objective_perturbation_defaults.py [--seeds 20]

Logistic ``make_synthetic(1000, 10)``, lambda = 1e-3, no constraint, epsilon in {0.1, 0.5, 1, 3}:
the mean excess risk (+- standard error over seeds) of dpsolve 0.2's settings
(``output_fraction=0.1, extra_reg="cms", tolerance=1e-12``), of the defaults at pure epsilon
(with the split f, Delta and g they choose), and of the defaults at delta = 1e-6 (with the
objective noise they choose). Prints the table of docs/perturbation.md.
"""
import argparse
import math
import warnings

import numpy as np

import dpsolve


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    X, y = dpsolve.datasets.make_synthetic(1000, 10, rng=0)
    problem = dpsolve.Problem(X, y, "logistic", radius=None, reg=1e-3)
    reference = dpsolve.reference_minimizer(problem)

    def risk(fit):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = [problem.objective(fit(seed).theta) - reference.value
                      for seed in range(args.seeds)]
        return np.mean(values), np.std(values, ddof=1) / math.sqrt(len(values))

    print("| ε | dpsolve 0.2 (CMS rule, f = 0.1) | defaults | f, Δ, g chosen "
          "| defaults at δ = 10⁻⁶ |")
    print("|---|---|---|---|---|")
    for epsilon in (0.1, 0.5, 1.0, 3.0):
        old = risk(lambda seed: dpsolve.objective_perturbation(
            problem, epsilon, output_fraction=0.1, extra_reg="cms", tolerance=1e-12, rng=seed))
        new = risk(lambda seed: dpsolve.objective_perturbation(problem, epsilon, rng=seed))
        approx = risk(lambda seed: dpsolve.objective_perturbation(problem, epsilon, 1e-6,
                                                                  rng=seed))
        chosen = dpsolve.objective_perturbation(problem, epsilon, rng=0).settings
        kind = dpsolve.objective_perturbation(problem, epsilon, 1e-6,
                                              rng=0).settings["objective_noise"]
        print(f"| {epsilon:g} | {old[0]:.3g} ± {old[1]:.2g} | {new[0]:.3g} ± {new[1]:.2g} "
              f"| {chosen['output_fraction']:.2g}, {chosen['extra_reg']:.2g}, "
              f"{chosen['tolerance']:.2g} | {approx[0]:.3g} ± {approx[1]:.2g} ({kind}) |")


if __name__ == "__main__":
    main()
