"""The multi-party solvers side by side, with the sources' noise and with tight accounting.

    python docs/scripts/multiparty_comparison.py [--seeds 10]

A synthetic logistic problem (n = 6000, p = 20, rows on the unit sphere, lambda = 1e-3, no
constraint) split among three parties of 1000, 2000 and 3000 rows; (epsilon, delta) = (1, 1e-6)
(pure epsilon = 1 for the gamma-norm and Laplace rows). For each solver and calibration: the
default T, the noise, the epsilon the tightest accountant certifies, the excess risk over the
pooled objective (mean +- standard error over seeds) and the wall time of one fit.
"""
import argparse
import time
import warnings

import numpy as np

import dpsolve
from dpsolve.privacy import PrivacyWarning

CASES = [
    ("multiparty_gd per_party (SGD2)", "paper", dict(noise="per_party", calibration="paper")),
    ("multiparty_gd per_party (SGD2)", "pld", dict(noise="per_party", calibration="pld")),
    ("multiparty_gd secure_aggregation, party weights", "paper",
     dict(noise="secure_aggregation", calibration="paper")),
    ("multiparty_gd secure_aggregation, party weights", "zcdp",
     dict(noise="secure_aggregation", calibration="zcdp")),
    ("multiparty_gd secure_aggregation, party weights", "pld",
     dict(noise="secure_aggregation", calibration="pld")),
    ("multiparty_gd secure_aggregation, pooled", "pld",
     dict(noise="secure_aggregation", weighting="pooled", calibration="pld")),
    ("aggregated_output_perturbation", "gaussian, pld", dict(noise="gaussian")),
    ("aggregated_output_perturbation", "gamma-norm (ε-DP)", dict(noise="gamma_norm")),
    ("aggregated_output_perturbation", "slides' Laplace", dict(noise="laplace_slides")),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    X, y = dpsolve.datasets.make_synthetic(6000, 20, rng=0)
    problem = dpsolve.Problem(X, y, "logistic", radius=None, reg=1e-3)
    parties = dpsolve.Parties.from_sizes(problem, [1000, 2000, 3000])
    reference = dpsolve.reference_minimizer(problem)
    print("| solver | noise | T | noise scale | certified ε | excess risk | time per fit |")
    print("|---|---|---|---|---|---|---|")
    for name, label, options in CASES:
        risks, times = [], []
        for seed in range(args.seeds):
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyWarning)
                if name.startswith("aggregated"):
                    gaussian = options["noise"] == "gaussian"
                    fit = dpsolve.aggregated_output_perturbation(
                        problem, parties, 1.0, 1e-6 if gaussian else None, rng=seed, **options)
                else:
                    fit = dpsolve.multiparty_gd(problem, parties, 1.0, 1e-6, rng=seed, **options)
            times.append(time.perf_counter() - start)
            risks.append(dpsolve.excess_risk(problem, fit.theta, reference))
        risks = np.array(risks)
        scale = ", ".join(f"{k} {v:.3g}" for k, v in fit.noise.items())
        print(f"| {name} | {label} | {fit.steps} | {scale} | {fit.privacy.certified_epsilon:.3f} "
              f"| {risks.mean():.3g} ± {risks.std(ddof=1) / np.sqrt(len(risks)):.1g} "
              f"| {np.median(times):.3g} s |")


if __name__ == "__main__":
    main()
