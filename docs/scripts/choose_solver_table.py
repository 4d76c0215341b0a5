"""``dpsolve.choose_solver``'s choice against the measured risks of every candidate.

    python docs/scripts/choose_solver_table.py [--seeds 10]

Logistic ``make_synthetic(2000, 10)``, lambda = 1e-3, without a constraint and on the unit
ball, at the (epsilon, delta) of docs/choose_solver.md: the chosen solver with its bound, and
the mean excess risk of each candidate with a comparable bound (the best marked with a tick).
Prints the table of docs/choose_solver.md.
"""
import argparse
import warnings

import numpy as np

import dpsolve
from dpsolve.solvers import get


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    X, y = dpsolve.datasets.make_synthetic(2000, 10, rng=0)
    settings = [(None, 0.1, None), (None, 1.0, None), (None, 0.1, 1e-6), (None, 1.0, 1e-6),
                (None, 3.0, 1e-6), (1.0, 0.1, None), (1.0, 1.0, None), (1.0, 0.1, 1e-6),
                (1.0, 1.0, 1e-6), (1.0, 3.0, 1e-6)]
    print("| problem | ε, δ | chosen (its bound) | measured risks |")
    print("|---|---|---|---|")
    for radius, epsilon, delta in settings:
        problem = dpsolve.Problem(X, y, "logistic", radius=radius, reg=1e-3)
        reference = dpsolve.reference_minimizer(problem)
        choice = dpsolve.choose_solver(problem, epsilon, delta)
        risks = {}
        for candidate in choice.candidates:
            if candidate.bound is None or not candidate.comparable:
                continue
            function = get(candidate.name).function
            options = {} if delta is None else {"delta": delta}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                values = [problem.objective(function(problem, epsilon, rng=seed,
                                                     **options).theta) - reference.value
                          for seed in range(args.seeds)]
            risks[candidate.name] = float(np.mean(values))
        best = min(risks, key=risks.get)
        measured = ", ".join(f"{name} {value:.3g}{' ✓' if name == best else ''}"
                             for name, value in risks.items())
        where = "no constraint" if radius is None else f"ball R = {radius:g}"
        mark = " ✓" if choice.name == best else ""
        print(f"| {where} | {epsilon:g}, {'—' if delta is None else f'{delta:g}'} "
              f"| **{choice.name}** ({choice.bound:.3g}){mark} | {measured} |")


if __name__ == "__main__":
    main()
