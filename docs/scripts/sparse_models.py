"""The numbers of docs/sparse.md, "Sparse models": held-out AUC, balanced accuracy, log-loss and
the number of non-zero coefficients of dpsolve's DPLogisticRegression on the l1 ball
(``constraint="l1"``) against its l2 default, diffprivlib's LogisticRegression (when it imports)
and non-private scikit-learn, on the practitioner page's high-dimensional datasets and on sparse
Zipf data (CSR), with 95% intervals over seeds.

    python docs/scripts/sparse_models.py            # prints the Markdown tables
    python docs/scripts/sparse_models.py --quick    # 2 seeds

Every method gets the same public information, as on the practitioner page
(``benchmarks/peers/bench_practitioners.py``): features mapped to [0, 1] by public ranges, so
that a row has l2 norm at most sqrt(p) (the l2 default's ``row_norm``, diffprivlib's
``data_norm``) and l-inf norm at most 1 (the l1 model's ``row_norm``); the Zipf rows are in
[0, 1] already, with at most ``words`` non-zeros, so l2 norm at most sqrt(words). The l1 model's
radius is a public choice, the same on every dataset (``RADIUS``). Each seed draws a 75/25
split (stratified) and the noise.
"""
import argparse
import importlib.util
import math
import pathlib
import time
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
EPSILONS = (0.3, 1.0, 3.0)
SEEDS = 5
RADIUS = 10.0
#: The practitioner page's datasets with the most features.
HIGH_DIMENSIONAL = ("digits (0 vs rest)", "synthetic 10% positives, p = 200",
                    "synthetic 3% positives, p = 200")
ZIPF = {"n": 10_000, "p": 1_000, "words": 200, "support": 5, "signal": 2.0}


def _core():
    """benchmarks/peers/bench_practitioners.py, imported by its path."""
    path = ROOT / "benchmarks" / "peers" / "bench_practitioners.py"
    spec = importlib.util.spec_from_file_location("bench_practitioners", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


core = _core()
METHODS = ("dpsolve l2 (default)", "dpsolve l1", "diffprivlib", "scikit-learn")


def datasets():
    """``(name, X, y, l2 row bound, description)`` of each dataset, features in [0, 1]."""
    from dpsolve.datasets import make_sparse_zipf
    out = []
    for d in core.all_datasets(statsmodels=False):
        if d.name in HIGH_DIMENSIONAL:
            out.append((d.name, d.features(), d.labels(), math.sqrt(d.p), d.source))
    options = {k: v for k, v in ZIPF.items() if k not in ("n", "p")}
    X, y = make_sparse_zipf(ZIPF["n"], ZIPF["p"], rng=0, **options)
    call = ", ".join(f"{k}={v}" for k, v in options.items())
    out.append((f"Zipf bag of words, p = {ZIPF['p']:,} (CSR)", X, (y > 0).astype(int),
                math.sqrt(ZIPF["words"]),
                f"`make_sparse_zipf({ZIPF['n']}, {ZIPF['p']}, {call}, rng=0)`"))
    return out


def model(method, epsilon, l2_bound, seed):
    """The method's estimator, given only the public bounds."""
    from dpsolve.estimators import DPLogisticRegression
    if method == "dpsolve l2 (default)":
        return DPLogisticRegression(epsilon=epsilon, row_norm=l2_bound, classes=[0, 1],
                                    random_state=seed)
    if method == "dpsolve l1":
        return DPLogisticRegression(epsilon=epsilon, constraint="l1", radius=RADIUS,
                                    row_norm=1.0, classes=[0, 1], random_state=seed)
    if method == "diffprivlib":
        return core.diffprivlib.models.LogisticRegression(epsilon=epsilon, data_norm=l2_bound,
                                                          random_state=seed)
    from sklearn.linear_model import LogisticRegression
    return LogisticRegression()


def measure(seeds):
    """One row per (dataset, method, epsilon, seed): the held-out scores, n_nonzero, time."""
    from sklearn.model_selection import train_test_split
    methods = [m for m in METHODS if m != "diffprivlib" or core.diffprivlib is not None]
    rows, described = [], []
    for name, X, y, bound, source in datasets():
        described.append((name, X.shape, source))
        for seed in range(seeds):
            Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=seed,
                                                  stratify=y)
            for method in methods:
                for epsilon in (math.inf,) if method == "scikit-learn" else EPSILONS:
                    est = model(method, epsilon, bound, seed)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        start = time.perf_counter()
                        est.fit(Xtr, ytr)
                        seconds = time.perf_counter() - start
                        row = core.scores("binary", est, Xte, yte)
                    row.update(dataset=name, method=method, epsilon=epsilon, seed=seed,
                               seconds=seconds, nonzero=int(np.count_nonzero(est.coef_)))
                    rows.append(row)
    return rows, described, methods


def interval(values):
    """Mean and the half-width of its 95% Student-t interval."""
    from scipy.stats import t
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return float(values.mean()), math.nan
    half = t.ppf(0.975, values.size - 1) * values.std(ddof=1) / math.sqrt(values.size)
    return float(values.mean()), float(half)


def table(rows, described, methods, key, digits=3):
    """One Markdown table of ``key``: a row per dataset and method, a column per epsilon."""
    head = ["dataset", "method"] + [f"ε = {e:g}" for e in EPSILONS] + ["non-private"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, _, _ in described:
        for method in methods:
            cells = []
            for epsilon in EPSILONS + (math.inf,):
                got = [r[key] for r in rows if r["dataset"] == name and r["method"] == method
                       and r["epsilon"] == epsilon]
                if not got:
                    cells.append("")
                    continue
                mean, half = interval(got)
                cells.append(f"{mean:.{digits}g}" + ("" if math.isnan(half)
                                                     else f" ± {half:.1g}"))
            lines.append("| " + " | ".join([name, method] + cells) + " |")
    return lines


def report(rows, described, methods, seeds, seconds):
    lines = [f"Measured by `python docs/scripts/sparse_models.py` ({seeds} seeds, "
             f"{seconds:.0f} s); mean ± 95% interval over the seeds.", ""]
    for name, shape, source in described:
        lines.append(f"* {name}: {source}; {shape[0]:,} × {shape[1]:,}.")
    for key, title in (("auc", "Held-out AUC"), ("balanced_accuracy", "Balanced accuracy"),
                       ("log_loss", "Log-loss"), ("nonzero", "Non-zero coefficients")):
        lines += ["", f"**{title}**", ""] + table(rows, described, methods, key,
                                                   digits=5 if key == "nonzero" else 3)
    if "diffprivlib" not in methods:
        lines += ["", "diffprivlib did not import here (0.6.6 does not with scikit-learn ≥ "
                  "1.8), so it is left out; the practitioner page runs it in an environment "
                  "of its own."]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 seeds")
    args = parser.parse_args(argv)
    seeds = 2 if args.quick else SEEDS
    start = time.perf_counter()
    rows, described, methods = measure(seeds)
    print(report(rows, described, methods, seeds, time.perf_counter() - start))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
