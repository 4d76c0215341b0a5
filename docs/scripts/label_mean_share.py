"""DPLinearRegression's default share of epsilon for the labels' private mean, measured on the
practitioner page's regression tables against the former fixed 10% and two constant predictors.

    python docs/scripts/label_mean_share.py [--seeds 20] [--shares 0.1,0.5,0.95]

The datasets, the public ranges, the 75/25 split of each seed and the estimator's arguments are
``benchmarks/peers/bench_practitioners.py``'s (star98 needs statsmodels: run it in the page's
environment, docs/scripts/practitioners_page.py). For each table and epsilon in {0.1, 0.3, 1, 3}
it prints the mean test R^2 (with its Student-t 95% interval over the seeds) of the default
(``prior_share="auto"``, :func:`dpsolve.estimators.regression.label_mean_share`), of the former
``prior_share=0.1``, and the paired differences of the default against the former, against the
training labels' mean (a constant no private method can release exactly) and against a private
constant: the labels' mean with Laplace noise at the whole epsilon (sum sensitivity 2 for labels
in [-1, 1]), from a generator of its own. ``--shares`` also prints the default at each fixed
share. Prints the table of docs/adassp.md, "The labels' mean".
"""
import argparse
import importlib.util
import math
import pathlib
import warnings

import numpy as np
from scipy import stats
from sklearn.metrics import r2_score

from dpsolve.estimators import DPLinearRegression
from dpsolve.estimators.regression import label_mean_share

ROOT = pathlib.Path(__file__).resolve().parents[2]
EPSILONS = (0.1, 0.3, 1.0, 3.0)


def _core():
    path = ROOT / "benchmarks" / "peers" / "bench_practitioners.py"
    spec = importlib.util.spec_from_file_location("bench_practitioners", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def interval(values):
    """The mean and the half-width of its Student-t 95% interval."""
    v = np.asarray(values, dtype=float)
    k = len(v)
    return v.mean(), stats.t.ppf(0.975, k - 1) * v.std(ddof=1) / math.sqrt(k)


def fmt(values):
    mean, half = interval(values)
    return f"{mean:+.3f} ± {half:.3f}"


def private_mean(ytr, epsilon, seed):
    noise = np.random.default_rng([seed, 1]).laplace(0.0, 2.0 / epsilon)
    return min(max((ytr.sum() + noise) / len(ytr), -1.0), 1.0)


def r2(dataset, epsilon, seed, data, share):
    Xtr, Xte, ytr, yte = data
    model = DPLinearRegression(epsilon=epsilon, row_norm=math.sqrt(dataset.p), label_bound=1.0,
                               prior_share=share, random_state=seed)
    return r2_score(yte, model.fit(Xtr, ytr).predict(Xte))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--shares", default="")
    args = parser.parse_args()
    core = _core()
    tables = [core.diabetes()]
    try:
        tables.append(core.star98())
    except ImportError:
        print("star98: statsmodels not installed")
    shares = [float(s) for s in args.shares.split(",") if s]
    print("| data | ε | share | R², default | R², former (10%) | default − former "
          "| default − training mean | default − private constant |"
          + "".join(f" share {s:g} |" for s in shares))
    print("|---|---|---|---|---|---|---|---|" + "---|" * len(shares))
    warnings.simplefilter("ignore")
    for dataset in tables:
        splits = [core.split(dataset, seed) for seed in range(args.seeds)]
        for epsilon in EPSILONS:
            new = [r2(dataset, epsilon, s, d, "auto") for s, d in enumerate(splits)]
            old = [r2(dataset, epsilon, s, d, 0.1) for s, d in enumerate(splits)]
            mean = [r2_score(d[3], np.full(len(d[3]), d[2].mean())) for d in splits]
            const = [r2_score(d[3], np.full(len(d[3]), private_mean(d[2], epsilon, s)))
                     for s, d in enumerate(splits)]
            extra = "".join(
                f" {fmt([r2(dataset, epsilon, s, d, x) for s, d in enumerate(splits)])} |"
                for x in shares)
            share = label_mean_share(epsilon, len(splits[0][2]))
            print(f"| {dataset.name} | {epsilon:g} | {share:.3f} | {fmt(new)} | {fmt(old)} "
                  f"| {fmt(np.subtract(new, old))} | {fmt(np.subtract(new, mean))} "
                  f"| {fmt(np.subtract(new, const))} |{extra}")


if __name__ == "__main__":
    main()
