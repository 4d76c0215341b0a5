"""SGD1 at the same (epsilon, delta): the paper noise (3) against tight calibrations.

    python docs/scripts/sgd1_calibrations.py [--seeds 20]

SGD1 and its noise (3) are those of the multi-party SGD notes built on Bassily-Smith-Thakurta
2014 (docs/noisy_sgd.md). Prints sigma, the epsilon the RDP accountant certifies, and the excess
risk (mean +- standard error over seeds) for each calibration, on a synthetic logistic problem
(n = 1000, p = 10, ball radius 1), epsilon = 0.5, delta = 1e-10.
"""
import argparse
import concurrent.futures
import os

import numpy as np

import dpsolve


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    X, y = dpsolve.datasets.make_synthetic(1000, 10, rng=0)
    problem = dpsolve.Problem(X, y, "logistic", radius=1.0)
    reference = dpsolve.reference_minimizer(problem)
    eps, delta = 0.5, 1e-10
    print(f"{problem}, epsilon={eps}, delta={delta:g}, T = n^2, {args.seeds} seeds; "
          f"theta* gap {reference.gap:.1e}")
    print(f"{'calibration':<12} {'sigma':>10} {'certified eps (rdp)':>20} {'excess risk':>22}")
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        for calibration in ("paper", "strong", "rdp"):
            fits = list(pool.map(
                lambda s: dpsolve.noisy_sgd(problem, eps, delta, calibration=calibration, rng=s),
                range(args.seeds)))
            risks = np.array([dpsolve.excess_risk(problem, f.theta, reference) for f in fits])
            se = risks.std(ddof=1) / np.sqrt(len(risks))
            print(f"{calibration:<12} {fits[0].sigma:>10.4g} "
                  f"{fits[0].privacy.certified_epsilon:>20.4f} {risks.mean():>12.4g} +- {se:.2g}")
    free = [dpsolve.noisy_sgd(problem, sigma=0.0, delta=delta, rng=s) for s in range(args.seeds)]
    risks = np.array([dpsolve.excess_risk(problem, f.theta, reference) for f in free])
    print(f"{'no noise':<12} {0.0:>10.4g} {'inf':>20} {risks.mean():>12.4g} +- "
          f"{risks.std(ddof=1) / np.sqrt(len(risks)):.2g}")


if __name__ == "__main__":
    main()
