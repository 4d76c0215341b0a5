"""The numbers of docs/sparse.md, "Sparse models": held-out AUC, balanced accuracy, log-loss and
the number of non-zero coefficients of dpsolve's DPLogisticRegression on the l1 ball
(``constraint="l1"``) against its l2 default, diffprivlib's LogisticRegression and non-private
scikit-learn, on the practitioner page's high-dimensional datasets (its binary datasets with
p >= ``MIN_P``) and on sparse Zipf data (CSR), with 95% intervals over seeds.

diffprivlib 0.6.6 does not import with scikit-learn >= 1.8, so this runs, like
docs/scripts/practitioners_page.py, in an environment of its own, with dpsolve installed into it
from a copy of the work tree (an in-place build would overwrite the compiled kernels of the
repository's own environment). From the repository root::

    python3 -m venv /tmp/peers-venv
    mkdir -p /tmp/dps-copy
    tar --exclude=.git --exclude='*.so' --exclude=./build --exclude='*.egg-info' -cf - . \\
        | tar -xf - -C /tmp/dps-copy
    /tmp/peers-venv/bin/pip install "/tmp/dps-copy[practitioners]"
    /tmp/peers-venv/bin/python docs/scripts/sparse_models.py           # the Markdown, ~5 min
    /tmp/peers-venv/bin/python docs/scripts/sparse_models.py --quick   # 3 seeds, ~1 min

(repeat the copy and the install to measure a changed dpsolve). The ``practitioners`` extra is
diffprivlib, scikit-learn < 1.8 and statsmodels. Without diffprivlib the script still runs and
says that it left diffprivlib out. ``--json FILE`` also saves every run's scores;
``--from-json FILE`` prints the Markdown from such a file without measuring.

Besides the tables it prints dpsolve's two models against diffprivlib cell by cell (paired over
the seeds, which share their splits) and the private models whose AUC is below the constant
predictor's 0.5; those cells are measured again on ``RECHECK_SEEDS`` new seeds, because the
seeds of a table are shared by its epsilons. The constant predictor (the training share of
positives) is a row of the tables: the log-loss a model must beat to have learnt anything.

Every method gets the same public information, as on the practitioner page
(``benchmarks/peers/bench_practitioners.py``): features mapped to [0, 1] by public ranges, so
that a row has l2 norm at most sqrt(p) (the l2 default's ``row_norm``, diffprivlib's
``data_norm``) and l-inf norm at most 1 (the l1 model's ``row_norm``); the Zipf rows are in
[0, 1] already, with at most ``words`` non-zeros, so l2 norm at most sqrt(words). diffprivlib's
logistic regression takes no other bound (no feature or label ranges). Its ``fit`` refuses a
sparse matrix (its norm clipping takes NumPy arrays only), so it is given the Zipf rows as the
dense array. The l1 model's radius is a public choice, the same on every dataset (``RADIUS``).
Each seed draws a 75/25 split (stratified) and the noise.
"""
import argparse
import importlib.util
import json
import math
import multiprocessing
import pathlib
import platform
import time
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
EPSILONS = (0.3, 1.0, 3.0)
SEEDS = 20
QUICK_SEEDS = 3
#: Fresh seeds for each cell found below the constant predictor (see ``recheck``).
RECHECK_SEEDS = 100
JOBS = 2
RADIUS = 10.0
#: The practitioner page's binary datasets with at least this many features are measured here.
MIN_P = 64
ZIPF = {"n": 10_000, "p": 1_000, "words": 200, "support": 5, "signal": 2.0}
#: (key, the tables' title, the comparisons' word, higher is better)
METRICS = (("auc", "Held-out AUC", "AUC", True),
           ("balanced_accuracy", "Balanced accuracy", "balanced accuracy", True),
           ("log_loss", "Log-loss", "log-loss", False))


def _core():
    """benchmarks/peers/bench_practitioners.py, imported by its path (the repository root is not
    put on sys.path: the installed dpsolve must be the one measured)."""
    path = ROOT / "benchmarks" / "peers" / "bench_practitioners.py"
    spec = importlib.util.spec_from_file_location("bench_practitioners", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


core = _core()
CONSTANT = "constant (training base rate)"
METHODS = ("dpsolve l2 (default)", "dpsolve l1", "diffprivlib", "scikit-learn", CONSTANT)
NON_PRIVATE = ("scikit-learn", CONSTANT)
_DATASETS = None


def datasets():
    """``(name, X, y, l2 row bound, description)`` of each dataset, features in [0, 1]."""
    from dpsolve.datasets import make_sparse_zipf
    out = []
    for d in core.all_datasets(statsmodels=False):
        if d.kind == "binary" and d.p >= MIN_P:
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


def _dense(X):
    """X as a NumPy array (diffprivlib's ``fit`` refuses scipy.sparse input)."""
    return X.toarray() if hasattr(X, "toarray") else X


class BaseRate:
    """The constant predictor: every row gets the training share of positives (a reference, not
    private): AUC 0.5, balanced accuracy 0.5, and the log-loss a model must beat to have
    learnt anything."""

    def fit(self, X, y):
        self.rate_ = float(np.mean(y))
        self.coef_ = np.zeros((1, X.shape[1]))
        return self

    def predict_proba(self, X):
        return np.tile([1.0 - self.rate_, self.rate_], (X.shape[0], 1))


def _work(task):
    """``methods`` at ``epsilons`` (the non-private ones at infinity) on one (dataset, seed): a
    list of rows."""
    from sklearn.model_selection import train_test_split
    from threadpoolctl import threadpool_limits
    index, seed, methods, epsilons = task
    name, X, y, bound, _ = _DATASETS[index]
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=seed, stratify=y)
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in methods:
            train, test = ((_dense(Xtr), _dense(Xte)) if method == "diffprivlib"
                           else (Xtr, Xte))
            for epsilon in (math.inf,) if method in NON_PRIVATE else epsilons:
                est = BaseRate() if method == CONSTANT else model(method, epsilon, bound, seed)
                start = time.perf_counter()
                est.fit(train, ytr)
                seconds = time.perf_counter() - start
                row = core.scores("binary", est, test, yte)
                row.update(dataset=name, method=method, epsilon=epsilon, seed=seed,
                           seconds=seconds, nonzero=int(np.count_nonzero(est.coef_)))
                rows.append(row)
    return rows


def _methods():
    return [m for m in METHODS if m != "diffprivlib" or core.diffprivlib is not None]


def measure(seeds, jobs=JOBS):
    """One row per (dataset, method, epsilon, seed), on ``jobs`` processes, one thread each."""
    global _DATASETS
    _DATASETS = datasets()
    tasks = [(i, s, _methods(), EPSILONS) for i in range(len(_DATASETS)) for s in range(seeds)]
    described = [(name, X.shape, source) for name, X, _, _, source in _DATASETS]
    return _run(tasks, jobs), described


def _run(tasks, jobs=JOBS):
    rows = []
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        for out in pool.imap_unordered(_work, tasks):
            rows += out
    return rows


def below_chance(rows, described):
    """``(dataset, method, epsilon)`` of the private models whose AUC is below 0.5 (the constant
    predictor's), its 95% interval below."""
    return [(name, method, epsilon) for name, _, _ in described for method in _methods()
            if method not in NON_PRIVATE for epsilon in EPSILONS
            if _differs(_values(rows, name, method, epsilon, "auc") - 0.5) < 0]


def recheck(cells, described, seeds, fresh):
    """The rows of the cells of :func:`below_chance` measured again on ``fresh`` new seeds
    (splits and noise): the seeds of a table are shared by its
    epsilons (``random_state=seed`` draws the same noise direction at every epsilon, scaled),
    so its cells are not independent evidence."""
    index = {name: i for i, (name, _, _) in enumerate(described)}
    return _run([(index[name], s, [method], (epsilon,))
                 for name, method, epsilon in cells for s in range(seeds, seeds + fresh)])


def recheck_lines(again, cells):
    """One line per rechecked cell: its AUC on the new seeds."""
    lines = []
    for name, method, epsilon in cells:
        auc = _values(again, name, method, epsilon, "auc")
        lines.append(f"  * {method} on {name} at ε = {epsilon:g}, {auc.size} new seeds: AUC "
                     f"{_fmt(auc)}")
    return lines


def interval(values):
    """Mean and the half-width of its 95% Student-t interval."""
    from scipy.stats import t
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return float(values.mean()), math.nan
    half = t.ppf(0.975, values.size - 1) * values.std(ddof=1) / math.sqrt(values.size)
    return float(values.mean()), float(half)


def _values(rows, name, method, epsilon, key):
    """``key`` of the runs of (dataset, method, epsilon), in seed order."""
    got = sorted((r["seed"], r[key]) for r in rows if r["dataset"] == name
                 and r["method"] == method and r["epsilon"] == epsilon)
    return np.array([v for _, v in got], dtype=float)


def table(rows, described, methods, key, digits=3):
    """One Markdown table of ``key``: a row per dataset and method, a column per epsilon."""
    head = ["dataset", "method"] + [f"ε = {e:g}" for e in EPSILONS] + ["non-private"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, _, _ in described:
        for method in methods:
            cells = []
            for epsilon in EPSILONS + (math.inf,):
                got = _values(rows, name, method, epsilon, key)
                if not got.size:
                    cells.append("")
                    continue
                mean, half = interval(got)
                # a constant's spread is rounding (1e-17): shown as 0
                half = 0.0 if half < 1e-12 * max(1.0, abs(mean)) else half
                cells.append(f"{mean:.{digits}g}" + ("" if math.isnan(half)
                                                     else f" ± {half:.1g}"))
            lines.append("| " + " | ".join([name, method] + cells) + " |")
    return lines


def _differs(diff):
    """+1 / -1 when the 95% interval of the mean of ``diff`` is above / below 0, else 0."""
    mean, half = interval(diff)
    return 0 if math.isnan(half) or abs(mean) <= half else int(math.copysign(1, mean))


def _paired(rows, name, mine, epsilon, key, higher):
    """``mine`` minus diffprivlib, seed by seed (the same split), signed so that > 0 is better
    for ``mine``."""
    diff = (_values(rows, name, mine, epsilon, key)
            - _values(rows, name, "diffprivlib", epsilon, key))
    return diff if higher else -diff


def comparisons(rows, described):
    """dpsolve's models against diffprivlib, cell by cell: better / not distinguishable / worse
    (the 95% interval of the mean paired difference excludes 0), the worse cells, and the cells
    where diffprivlib's mean is the better one without being distinguishable."""
    lines = []
    for mine in ("dpsolve l2 (default)", "dpsolve l1"):
        count, worse, ahead = {1: 0, 0: 0, -1: 0}, [], []
        for key, _, word, higher in METRICS:
            where = {}
            for name, _, _ in described:
                for epsilon in EPSILONS:
                    diff = _paired(rows, name, mine, epsilon, key, higher)
                    side = _differs(diff)
                    count[side] += 1
                    if side < 0:
                        worse.append(
                            f"{name}, ε = {epsilon:g}, {word} "
                            f"{_fmt(_values(rows, name, 'diffprivlib', epsilon, key))} against "
                            f"{_fmt(_values(rows, name, mine, epsilon, key))}")
                    elif diff.mean() < 0:
                        where.setdefault(name, []).append(f"{epsilon:g}")
            if where:
                ahead.append(f"{word} on " + ", ".join(
                    f"{name} (ε = {', '.join(eps)})" for name, eps in where.items()))
        lines.append(f"* **{mine} against diffprivlib**, over {sum(count.values())} (dataset, "
                     f"ε, metric) cells: better at {count[1]}, not distinguishable at "
                     f"{count[0]}, worse at {count[-1]}"
                     + (": " + "; ".join(worse) if worse else "") + ". "
                     + ("diffprivlib's mean is the better one, not distinguishably, for "
                        + "; ".join(ahead) + "." if ahead else ""))
    return lines


def chance_lines(rows, cells, again):
    """The cells whose AUC is below the constant predictor's, and their recheck."""
    if not cells:
        return ["* **AUC below 0.5** (the constant predictor's; 95% interval below): nowhere."]
    listed = "; ".join(f"{method} on {name} at ε = {epsilon:g} "
                       f"({_fmt(_values(rows, name, method, epsilon, 'auc'))})"
                       for name, method, epsilon in cells)
    return [(f"* **AUC below 0.5** (the constant predictor's; 95% interval below): {listed}. "
             f"Measured again on new seeds:"), *again]


def _fmt(values):
    mean, half = interval(values)
    return f"{mean:.3g} ± {half:.1g}"


def versions():
    import scipy
    import sklearn

    import dpsolve
    out = f"dpsolve {dpsolve.__version__}"
    if core.diffprivlib is not None:
        out += f", diffprivlib {core.diffprivlib.__version__}"
    return (out + f", scikit-learn {sklearn.__version__}, NumPy {np.__version__}, SciPy "
            f"{scipy.__version__}, Python {platform.python_version()}")


def report(saved, described):
    """The Markdown of the page's section from a run (``saved``: rows, seeds, seconds, versions,
    the cells below chance and their recheck)."""
    rows = saved["rows"]
    methods = [m for m in METHODS if any(r["method"] == m for r in rows)]
    where = (", in the environment its docstring gives" if "diffprivlib" in methods else "")
    lines = [(f"Measured by `python docs/scripts/sparse_models.py`{where} ({saved['versions']}; "
              f"{saved['seeds']} seeds, {saved['seconds']:.0f} s on {JOBS} processes); mean ± "
              f"95% interval over the seeds."), ""]
    for name, shape, source in described:
        lines.append(f"* {name}: {source}; {shape[0]:,} × {shape[1]:,}.")
    lines.append("")
    if "diffprivlib" in methods:
        lines += comparisons(rows, described)
    cells = [tuple(c) for c in saved["cells"]]
    lines += chance_lines(rows, cells, recheck_lines(saved["again"], cells))
    for key, title in [(k, t) for k, t, _, _ in METRICS] + [("nonzero", "Non-zero coefficients")]:
        # the constant predictor's AUC and balanced accuracy are 0.5, its coefficients 0
        shown = [m for m in methods if m != CONSTANT or key == "log_loss"]
        lines += ["", f"**{title}**", ""] + table(rows, described, shown, key,
                                                   digits=5 if key == "nonzero" else 3)
    if "diffprivlib" not in methods:
        lines += ["", ("diffprivlib did not import here (0.6.6 does not with scikit-learn ≥ "
                       "1.8), so it is left out; see this script's docstring for its "
                       "environment.")]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_SEEDS} seeds, {QUICK_SEEDS * 5} for a recheck")
    parser.add_argument("--json", metavar="FILE", help="also save every run's scores")
    parser.add_argument("--from-json", metavar="FILE",
                        help="print the Markdown from saved scores, without measuring")
    args = parser.parse_args(argv)
    if args.from_json:
        saved = json.loads(pathlib.Path(args.from_json).read_text())
        for r in saved["rows"] + saved["again"]:
            r["epsilon"] = float(r["epsilon"])
        described = [(name, X.shape, source) for name, X, _, _, source in datasets()]
    else:
        seeds = QUICK_SEEDS if args.quick else SEEDS
        start = time.perf_counter()
        rows, described = measure(seeds)
        cells = below_chance(rows, described)
        again = recheck(cells, described, seeds,
                        QUICK_SEEDS * 5 if args.quick else RECHECK_SEEDS)
        saved = {"rows": rows, "again": again, "cells": cells, "seeds": seeds,
                 "seconds": time.perf_counter() - start, "versions": versions()}
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(saved))
    print(report(saved, described))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
