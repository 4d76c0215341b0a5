"""Regenerate docs/practitioners.md and docs/figures/practitioners_auc_vs_epsilon.svg: held-out
AUC, balanced accuracy and log-loss (binary tasks) and R^2 (regression) of dpsolve's estimators,
diffprivlib's and non-private scikit-learn's, each at its defaults, with 95% intervals over seeds.

The datasets, the methods and the metrics are in ``benchmarks/peers/bench_practitioners.py``
(whose docstring says what public information every method gets); this script runs them over
``SEEDS`` seeds (each a new 75/25 split and new noise) and epsilon in {0.1, 0.3, 1, 3}, on two
processes, and writes the page; on the real datasets' raw tables it also runs the module's
raw-table pipelines (public-range transformers, private ranges, diffprivlib's pipeline) on the
same splits, seeds and epsilons, for the page's section "From the raw tables".

diffprivlib 0.6.6 does not import with scikit-learn >= 1.8, so run it in an environment of its
own, with dpsolve installed into it from a copy of the work tree (an in-place build would
overwrite the compiled kernels of the repository's own environment). From the repository root::

    python3 -m venv /tmp/peers-venv
    mkdir -p /tmp/dps-copy
    tar --exclude=.git --exclude='*.so' --exclude=./build --exclude='*.egg-info' -cf - . \\
        | tar -xf - -C /tmp/dps-copy
    /tmp/peers-venv/bin/pip install "/tmp/dps-copy[practitioners]"
    /tmp/peers-venv/bin/python docs/scripts/practitioners_page.py            # about 3 minutes
    /tmp/peers-venv/bin/python docs/scripts/practitioners_page.py --quick    # 3 seeds, printed

(repeat the copy and the install to measure a changed dpsolve). The ``practitioners`` extra is
diffprivlib, scikit-learn < 1.8 and statsmodels (two of the datasets ship in its wheel).
``--quick`` prints the page instead of writing it; ``--json FILE`` also saves every run's
scores; ``--from-json FILE`` writes the page from such a file without measuring.
"""
import argparse
import datetime
import importlib.util
import json
import math
import multiprocessing
import os
import pathlib
import platform
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "practitioners.md"
FIGURE = ROOT / "docs" / "figures" / "practitioners_auc_vs_epsilon.svg"
EPSILONS = (0.1, 0.3, 1.0, 3.0)
SEEDS = 20
QUICK_SEEDS = 3
JOBS = 2
#: Binary datasets on the figure (those present).
FIGURE_DATASETS = ("breast cancer", "digits (0 vs rest)", "affairs (statsmodels fair)",
                   "vote (statsmodels anes96)", "synthetic 1% positives, p = 50",
                   "synthetic 10% positives, p = 200")
NEAR = 0.05


def _core():
    """benchmarks/peers/bench_practitioners.py, imported by its path (the repository root is not
    put on sys.path: the installed dpsolve must be the one measured)."""
    path = ROOT / "benchmarks" / "peers" / "bench_practitioners.py"
    spec = importlib.util.spec_from_file_location("bench_practitioners", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


core = _core()
_DATASETS = None


def _work(task):
    """Every method at every epsilon on one (dataset, seed): a list of rows."""
    from threadpoolctl import threadpool_limits
    index, seed = task
    dataset = _DATASETS[index]
    data = core.split(dataset, seed)
    rows = []
    with threadpool_limits(1):
        for method in core.METHODS:
            for epsilon in (math.inf,) if method == "scikit-learn" else EPSILONS:
                row = core.run(method, dataset, epsilon, seed, data=data)
                rows.append({"dataset": dataset.name, "kind": dataset.kind, "method": method,
                             "epsilon": epsilon, "seed": seed, **row})
        if dataset.columns is not None:
            frame = core.raw_frame(dataset)
            for method in core.RAW_METHODS:
                for epsilon in EPSILONS:
                    row = core.run_raw(method, dataset, epsilon, seed, frame=frame)
                    rows.append({"dataset": dataset.name, "kind": dataset.kind,
                                 "method": method, "epsilon": epsilon, "seed": seed, **row})
    return rows


def measure(seeds, jobs=JOBS):
    global _DATASETS
    _DATASETS = core.all_datasets()
    tasks = [(i, s) for i in range(len(_DATASETS)) for s in range(seeds)]
    rows = []
    start = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        for done, out in enumerate(pool.imap_unordered(_work, tasks), 1):
            rows += out
            if done % 10 == 0 or done == len(tasks):
                print(f"{done}/{len(tasks)} (dataset, seed) done, "
                      f"{time.perf_counter() - start:.0f} s", flush=True)
    return rows, _DATASETS, time.perf_counter() - start


# -- statistics --------------------------------------------------------------------------------
def _t(k):
    from scipy.stats import t
    return float(t.ppf(0.975, k - 1))


def interval(values):
    """Mean and the 95% Student-t interval over seeds (1.96 would understate it at 10 seeds)."""
    values = np.asarray(values, dtype=float)
    mean = float(values.mean())
    if len(values) < 2:
        return mean, mean, mean
    half = _t(len(values)) * float(values.std(ddof=1)) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def _values(rows, dataset, method, epsilon, key):
    got = sorted((r["seed"], r[key]) for r in rows if r["dataset"] == dataset
                 and r["method"] == method and r["epsilon"] == epsilon)
    return np.array([v for _, v in got])


def _sklearn(rows, dataset, key):
    return _values(rows, dataset, "scikit-learn", math.inf, key)


def paired(rows, dataset, epsilon, key, higher=True):
    """dpsolve minus diffprivlib, seed by seed (same split): ``better``/``worse`` for dpsolve when
    the 95% interval of the mean difference excludes 0, else ``tie``."""
    diff = (_values(rows, dataset, "dpsolve", epsilon, key)
            - _values(rows, dataset, "diffprivlib", epsilon, key))
    if not higher:
        diff = -diff
    _, lo, hi = interval(diff)
    return "better" if lo > 0 else "worse" if hi < 0 else "tie"


# -- the raw tables' section -------------------------------------------------------------------
HAND = "dpsolve"
PUBLIC, PRIVATE, DPL_PIPELINE = core.RAW_METHODS


def _compare(rows, dataset, epsilon, key, first, second):
    """``first`` minus ``second`` seed by seed: the mean, its 95% interval and the word."""
    diff = (_values(rows, dataset, first, epsilon, key)
            - _values(rows, dataset, second, epsilon, key))
    mean, lo, hi = interval(diff)
    return mean, lo, hi, "better" if lo > 0 else "worse" if hi < 0 else "tie"


def _raw_table(rows, raw, key):
    lines = ["| dataset | ε | hand-mapped | public-range transformers | private ranges | "
             "private − public [95%] | diffprivlib pipeline | diffprivlib, hand-mapped |",
             "|---|---|---|---|---|---|---|---|"]
    for d in raw:
        for e in EPSILONS:
            mean, lo, hi, _ = _compare(rows, d.name, e, key, PRIVATE, PUBLIC)
            cells = [_fmt(_values(rows, d.name, m, e, key))
                     for m in (HAND, PUBLIC, PRIVATE)]
            cells.append(f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}]" if abs(mean) < 1000
                         else _num(mean))
            cells += [_fmt(_values(rows, d.name, m, e, key)) for m in (DPL_PIPELINE, "diffprivlib")]
            lines.append(f"| {d.name} | {e:g} | " + " | ".join(cells) + " |")
    return lines


def raw_summary(rows, raw):
    """The section's headline numbers."""
    out = {"largest": 0.0, "fits": 0}
    for d in raw:
        if d.categories:
            continue
        for e in EPSILONS:
            for k, _, _ in METRICS[d.kind]:
                gap = np.abs(_values(rows, d.name, PUBLIC, e, k)
                             - _values(rows, d.name, HAND, e, k))
                out["largest"] = max(out["largest"], float(gap.max()))
            out["fits"] += len(gap)
    for kind, key in (("binary", "auc"), ("regression", "r2")):
        names = [d.name for d in raw if d.kind == kind]
        for label, (a, b) in {"loss": (PRIVATE, PUBLIC), "public_dpl": (PUBLIC, DPL_PIPELINE),
                              "private_dpl": (PRIVATE, DPL_PIPELINE)}.items():
            words = [_compare(rows, n, e, key, a, b)[3] for n in names for e in EPSILONS]
            out[f"{key}_{label}"] = "{} better, {} not distinguishable, {} worse".format(
                words.count("better"), words.count("tie"), words.count("worse"))
        out[f"{key}_cells"] = len(names) * len(EPSILONS)
        out[f"{key}_by_eps"] = ", ".join(
            f"{np.mean([_compare(rows, n, e, key, PRIVATE, PUBLIC)[0] for n in names]):+.3f} "
            f"at ε = {e:g}" for e in EPSILONS)
        out[f"{key}_range"] = [_compare(rows, n, e, key, PRIVATE, PUBLIC)[0]
                               for n in names for e in EPSILONS]
        top = {n: _compare(rows, n, EPSILONS[-1], key, PRIVATE, PUBLIC)[0] for n in names}
        out[f"{key}_worst"] = min(top, key=top.get), min(top.values())
        out[f"{key}_best"] = max(top, key=top.get), max(top.values())
        for label, method in (("public", PUBLIC), ("private", PRIVATE)):
            above = [_values(rows, n, method, e, key) > _values(rows, n, DPL_PIPELINE, e, key)
                     for n in names for e in EPSILONS]
            out[f"{key}_{label}_above"] = (int(np.sum([a.sum() for a in above])),
                                           int(np.sum([a.size for a in above])))
    return out


def raw_section(rows, datasets, seeds):
    raw = [d for d in datasets if d.columns is not None]
    if not raw:
        return []
    h = raw_summary(rows, raw)
    share = core.SCALER_SHARE
    lo_auc, hi_auc = min(h["auc_range"]), max(h["auc_range"])
    lines = [
        "## From the raw tables",
        "",
        f"The {len(raw)} real datasets again, now fitted from their raw tables (a DataFrame of "
        "each dataset's columns in their own units) by a pipeline instead of the hand mapping "
        "above, in the same run, on the same splits and seeds, at the same total ε. The "
        "variants:",
        "",
        "- **hand-mapped**: dpsolve's column above (the features mapped to [0, 1] by hand).",
        "- **public-range transformers**: `private_pipeline(ColumnTransformer(...), "
        "DPLogisticRegression(epsilon=ε, classes=[0, 1]))` (or `DPLinearRegression(epsilon=ε, "
        "label_bound=1)`), the `ColumnTransformer` a `PublicRangeScaler(ranges, "
        "feature_range=(0, 1))` on the same documented ranges for the numeric columns (onto "
        "[0, 1], as the hand mapping; both range scalers' default is [−1, 1], which measures "
        "better: [Choosing the defaults](preprocessing.md#choosing-the-defaults)) and, for the affairs data, a `PublicCategoryEncoder` "
        "on the codebook's six occupation codes for `occupation` and `occupation_husb` (which "
        "are codes of a list, not a scale; the hand mapping scales them). The row bound is the "
        "pipeline's (`output_row_norm`): nothing is given to the estimator but ε and the labels.",
        f"- **private ranges**: the same with `PrivateRangeScaler` in place of "
        f"`PublicRangeScaler`, given only a coarse outer range per column: [0, the power of ten "
        f"at or above the documented maximum] for a non-negative column (0–100 for the digits' "
        f"pixels, documented 0–16; 0–10 for the diabetes data's sex, coded 1–2), the symmetric "
        f"power of ten for the one column that can be negative (the vote data's log "
        f"population: −10 to 10). An order of magnitude is public where the units are: it "
        f"says what scale a quantity is measured on, not where these records lie. The scaler "
        f"releases each column's 0.05 and 0.95 quantiles inside it at {share:g} ε in total "
        f"(ε · {share:g} / (2p) per quantile), the model gets {1 - share:g} ε; "
        "`PrivatePipeline` composes the two, and each fit checks that the model's `epsilon_` "
        "is ε.",
        f"- **diffprivlib pipeline**: diffprivlib's own preprocessing and model at the same "
        f"total: each column clipped to its documented range (all of them scaled: diffprivlib "
        f"has no category encoder), "
        f"`diffprivlib.models.StandardScaler(epsilon={share:g} ε, bounds=(low, high))` (it "
        "splits its ε over the means and variances of the p columns), then "
        f"`LogisticRegression(epsilon={1 - share:g} ε, data_norm=...)` (or "
        f"`LinearRegression(epsilon={1 - share:g} ε, bounds_X=..., bounds_y=(-1, 1))`) with "
        "the bound the scaled columns obey: the documented ranges put through the released "
        "means and scales, a post-processing of the scaler's release "
        "(`DiffprivlibPipeline` in `benchmarks/peers/bench_practitioners.py`).",
        "- **diffprivlib, hand-mapped**: diffprivlib's column above.",
        "",
        f"What it shows ({seeds} seeds, mean [95% interval]; 'private − public' is paired by "
        "seed):",
        "",
        f"- The public-range transformers give the hand-mapped results where they map "
        f"the same features (every dataset but the affairs data): over {h['fits']} (dataset, ε, "
        f"seed) fits, the largest difference in any score is {h['largest']:.1e} (the "
        "rounding of the mapping's arithmetic). On the affairs data the "
        "one-hot occupations change the features; compare the two columns there.",
        f"- **What the private ranges cost** (private ranges minus public-range transformers, "
        f"AUC): {h['auc_by_eps']} on average over the {sum(d.kind == 'binary' for d in raw)} binary datasets; per "
        f"(dataset, ε) cell from {lo_auc:+.3f} to {hi_auc:+.3f}, and {h['auc_loss']} of "
        f"{h['auc_cells']} cells by the paired interval. R² (regression): {h['r2_by_eps']} "
        f"on average ({h['r2_loss']} of {h['r2_cells']} cells). At ε = {EPSILONS[-1]:g} the "
        f"AUC lost is largest on the {h['auc_worst'][0]} data ({h['auc_worst'][1]:+.3f}) and "
        f"smallest on the {h['auc_best'][0]} data ({h['auc_best'][1]:+.3f}). Each quantile "
        f"gets ε · {share:g} / (2p): the tables with many columns for their rows (digits, "
        "p = 64; breast cancer, p = 30) pay most, affairs (p = 8 over 4,774 training rows) "
        "and vote (p = 9) least, as the "
        "[preprocessing page](preprocessing.md#what-it-costs-measured) explains.",
        f"- Against diffprivlib's pipeline at equal total ε, AUC: public-range transformers "
        f"{h['auc_public_dpl']}; private ranges {h['auc_private_dpl']} (of {h['auc_cells']} "
        f"cells). R²: public-range transformers {h['r2_public_dpl']}; private ranges "
        f"{h['r2_private_dpl']} (of {h['r2_cells']}); diffprivlib's R² varies so much from "
        f"seed to seed that its intervals are wide, but seed by seed the public-range "
        f"transformers' R² is above its pipeline's on {h['r2_public_above'][0]} of "
        f"{h['r2_public_above'][1]} fits, the private ranges' on {h['r2_private_above'][0]} "
        f"of {h['r2_private_above'][1]}.",
        "",
        "Test AUC:",
        "",
        *_raw_table(rows, [d for d in raw if d.kind == "binary"], "auc"),
        "",
        "Test R²:",
        "",
        *_raw_table(rows, [d for d in raw if d.kind == "regression"], "r2"),
        "",
    ]
    return lines


# -- the page ----------------------------------------------------------------------------------
def _num(x):
    """Three decimals, or three significant digits for the huge (diffprivlib's R² can be
    -10⁹)."""
    return f"{x:.3f}" if abs(x) < 1000 else f"{x:.3g}"


def _fmt(values):
    mean, lo, hi = interval(values)
    return f"{_num(mean)} [{_num(lo)}, {_num(hi)}]"


METRICS = {"binary": (("auc", "AUC", True), ("balanced_accuracy", "balanced accuracy", True),
                      ("log_loss", "log-loss", False)),
           "regression": (("r2", "R²", True),)}


def headline(rows, datasets):
    binary = [d.name for d in datasets if d.kind == "binary"]
    regression = [d.name for d in datasets if d.kind == "regression"]
    cells = [(d, e) for d in binary for e in EPSILONS]
    out = {"binary": len(binary), "regression": len(regression), "cells": len(cells),
           "rcells": len(regression) * len(EPSILONS)}
    for key, _, higher in METRICS["binary"] + METRICS["regression"]:
        names = binary if key != "r2" else regression
        mine = [(d, e) for d in names for e in EPSILONS]
        sign = 1 if higher else -1
        out[f"{key}_geq"] = sum(
            sign * (_values(rows, d, "dpsolve", e, key).mean()
                    - _values(rows, d, "diffprivlib", e, key).mean()) >= 0 for d, e in mine)
        words = [paired(rows, d, e, key, higher) for d, e in mine]
        for word in ("better", "tie", "worse"):
            out[f"{key}_{word}"] = words.count(word)
    for method in ("dpsolve", "diffprivlib"):
        for key in ("balanced_accuracy", "auc"):
            out[f"{method}_{key}_near"] = sum(
                _sklearn(rows, d, key).mean() - _values(rows, d, method, 3.0, key).mean() <= NEAR
                for d in binary)
        out[f"{method}_r2_near"] = sum(
            _sklearn(rows, d, "r2").mean() - _values(rows, d, method, 3.0, "r2").mean() <= NEAR
            for d in regression)
        out["sklearn_chance"] = sum(_sklearn(rows, d, "balanced_accuracy").mean() <= 0.55
                                    for d in binary)
        out[f"{method}_chance"] = sum(
            _values(rows, d, method, 1.0, "balanced_accuracy").mean() < 0.55 for d in binary)
    return out


def _summary_table(rows, datasets, kind, key):
    eps = " | ".join(f"ε = {e:g}" for e in EPSILONS)
    lines = [f"| dataset | {eps} | non-private |",
             "|---|" + "---|" * (len(EPSILONS) + 1)]
    for d in datasets:
        if d.kind != kind:
            continue
        cells = []
        for e in EPSILONS:
            a = _values(rows, d.name, "dpsolve", e, key).mean()
            b = _values(rows, d.name, "diffprivlib", e, key).mean()
            cells.append(f"{_num(a)} / {_num(b)}")
        lines.append(f"| {d.name} | " + " | ".join(cells)
                     + f" | {_num(_sklearn(rows, d.name, key).mean())} |")
    return lines


def _dataset_table(rows, d):
    metrics = METRICS[d.kind]
    lines = ["| ε | method | " + " | ".join(label for _, label, _ in metrics) + " |",
             "|---|---|" + "---|" * len(metrics)]
    for e in EPSILONS:
        for method in ("dpsolve", "diffprivlib"):
            lines.append(f"| {e:g} | {method} | " + " | ".join(
                _fmt(_values(rows, d.name, method, e, key)) for key, _, _ in metrics) + " |")
    lines.append("| ∞ | scikit-learn | " + " | ".join(
        _fmt(_sklearn(rows, d.name, key)) for key, _, _ in metrics) + " |")
    return lines


def _times_table(rows, datasets):
    lines = ["| dataset | n, p | dpsolve | diffprivlib | scikit-learn |", "|---|---|---|---|---|"]
    for d in datasets:
        cells = []
        for method in core.METHODS:
            seconds = [r["seconds"] for r in rows if r["dataset"] == d.name
                       and r["method"] == method]
            cells.append(f"{1e3 * np.median(seconds):.1f}")
        lines.append(f"| {d.name} | {d.n:,}, {d.p} | " + " | ".join(cells) + " |")
    return lines


def _versions():
    import diffprivlib
    import sklearn

    import dpsolve
    return (f"dpsolve {dpsolve.__version__}, diffprivlib {diffprivlib.__version__}, "
            f"scikit-learn {sklearn.__version__}, NumPy {np.__version__}, "
            f"Python {platform.python_version()}")


def write_page(rows, datasets, seeds, seconds, versions):
    h = headline(rows, datasets)
    eps_list = ", ".join(f"{e:g}" for e in EPSILONS)
    lines = [
        "# For practitioners: AUC, balanced accuracy, log-loss and R² at the defaults",
        "",
        f"What a data scientist measures on held-out data — AUC, balanced accuracy and log-loss "
        f"for binary tasks, R² for regression — for three methods each at its defaults, with "
        f"nothing tuned: dpsolve's `DPLogisticRegression` / `DPLinearRegression`, diffprivlib's "
        f"`LogisticRegression` / `LinearRegression`, and non-private scikit-learn "
        f"(`LogisticRegression()` / `LinearRegression()`), at ε ∈ {{{eps_list}}} (pure ε), on "
        f"{h['binary']} binary and {h['regression']} regression datasets, {seeds} seeds each "
        f"(a new 75/25 split and new noise per seed). Headline: dpsolve's mean AUC is at least "
        f"diffprivlib's at **{h['auc_geq']} of {h['cells']}** (dataset, ε) cells (paired "
        f"95% interval of the difference: {h['auc_better']} better, {h['auc_tie']} not "
        f"distinguishable, {h['auc_worse']} worse); its balanced accuracy at least "
        f"diffprivlib's at {h['balanced_accuracy_geq']} of {h['cells']} "
        f"({h['balanced_accuracy_better']} / {h['balanced_accuracy_tie']} / "
        f"{h['balanced_accuracy_worse']}) and its log-loss at most diffprivlib's at "
        f"{h['log_loss_geq']} of {h['cells']} ({h['log_loss_better']} / {h['log_loss_tie']} / "
        f"{h['log_loss_worse']}); its R² at least diffprivlib's at {h['r2_geq']} of "
        f"{h['rcells']} regression cells ({h['r2_better']} / {h['r2_tie']} / {h['r2_worse']}). "
        f"At ε = 3, balanced accuracy within {NEAR} of non-private scikit-learn's: dpsolve on "
        f"{h['dpsolve_balanced_accuracy_near']} of {h['binary']} binary datasets, diffprivlib "
        f"on {h['diffprivlib_balanced_accuracy_near']}; AUC within {NEAR}: dpsolve "
        f"{h['dpsolve_auc_near']}, diffprivlib {h['diffprivlib_auc_near']}; R² within {NEAR}: "
        f"dpsolve {h['dpsolve_r2_near']} of {h['regression']}, diffprivlib "
        f"{h['diffprivlib_r2_near']} (on the {h['sklearn_chance']} binary datasets where "
        f"scikit-learn's own balanced accuracy is 0.55 or less, the rare-positive ones, "
        f"\"within {NEAR}\" says little: AUC is the measure there). At ε = 1 a balanced "
        f"accuracy below 0.55 (about chance: "
        f"every row given the majority class, or a coin) on {h['dpsolve_chance']} binary "
        f"datasets for dpsolve and {h['diffprivlib_chance']} for diffprivlib.",
        "",
        f"Generated by `docs/scripts/practitioners_page.py` ({versions}; {seconds / 60:.1f} "
        f"minutes on {JOBS} processes, {datetime.date.today().isoformat()}). diffprivlib 0.6.6 "
        "does not import with scikit-learn ≥ 1.8, so the page is made in an environment of its "
        "own, with dpsolve installed from a copy of the work tree (an in-place build would "
        "overwrite the repository environment's compiled kernels). From the repository root:",
        "",
        "```bash",
        "python3 -m venv /tmp/peers-venv",
        "mkdir -p /tmp/dps-copy",
        "tar --exclude=.git --exclude='*.so' --exclude=./build --exclude='*.egg-info' -cf - . \\",
        "    | tar -xf - -C /tmp/dps-copy",
        '/tmp/peers-venv/bin/pip install "/tmp/dps-copy[practitioners]"',
        "/tmp/peers-venv/bin/python docs/scripts/practitioners_page.py           # this page",
        "/tmp/peers-venv/bin/python docs/scripts/practitioners_page.py --quick"
        "   # 3 seeds, printed",
        "```",
        "",
        "The real datasets are also fitted from their raw tables, by `dpsolve.preprocessing`'s "
        "pipelines (public ranges, or private ranges inside coarse outer ones) and by "
        "diffprivlib's own pipeline, at the same total ε: [From the raw "
        "tables](#from-the-raw-tables), from the same run.",
        "",
        "## What every method is given",
        "",
        "The same public information, and otherwise each library's defaults (ε aside):",
        "",
        "- **Features** mapped to [0, 1] by a public range per feature (values outside it "
        "clipped); the ranges are listed per dataset below. So every row has norm at most "
        "B = √p: `row_norm=B` for dpsolve, `data_norm=B` for diffprivlib's logistic "
        "regression, `bounds_X=(0, 1)` per feature for its linear regression. scikit-learn "
        "fits the same mapped features.",
        "- **Binary labels** 0/1; `classes=[0, 1]` for dpsolve (its label set is public; "
        "diffprivlib takes none).",
        "- **Regression labels** mapped from a public range to [-1, 1]: `label_bound=1` for "
        "dpsolve, `bounds_y=(-1, 1)` for diffprivlib. R² is the same on either scale.",
        "- **Splits**: seed s draws a 75/25 train/test split (`train_test_split(..., "
        "random_state=s)`, stratified for binary labels) and the noise (`random_state=s`).",
        "",
        "Intervals are 95% Student-t intervals of the mean over the seeds (mean ± t₀.₉₇₅,ₖ₋₁ · "
        "s/√k, k seeds): they describe the spread over splits and noise of this dataset, not over "
        "datasets; the splits overlap, so they are somewhat narrower than fresh data would "
        "give. \"Better\" and \"worse\" compare dpsolve with diffprivlib seed by seed (the same "
        "split): the 95% t interval of the mean paired difference excludes 0. Log-loss uses "
        "probabilities clipped to [10⁻¹⁵, 1 − 10⁻¹⁵]; balanced accuracy thresholds the "
        "predicted probability at 0.5 (each library's `predict`).",
        "",
        "## AUC at a glance",
        "",
        "Mean test AUC, dpsolve / diffprivlib, and non-private scikit-learn:",
        "",
        *_summary_table(rows, datasets, "binary", "auc"),
        "",
        "Mean balanced accuracy, dpsolve / diffprivlib:",
        "",
        *_summary_table(rows, datasets, "binary", "balanced_accuracy"),
        "",
        "Mean test R², dpsolve / diffprivlib:",
        "",
        *_summary_table(rows, datasets, "regression", "r2"),
        "",
        f"![Test AUC against ε for dpsolve, diffprivlib and scikit-learn]"
        f"(figures/{FIGURE.name})",
        "",
        "## Per dataset",
        "",
        f"Mean [95% interval] over {seeds} seeds.",
        "",
    ]
    for d in datasets:
        lines += [f"### {d.name}", "", f"{d.source}; n = {d.n:,}, p = {d.p}. Public ranges: "
                  f"{d.ranges}.", "", *_dataset_table(rows, d), ""]
    lines += raw_section(rows, datasets, seeds)
    lines += ["## Fit times", "",
              "Median wall time of one `fit` in milliseconds (over seeds and ε; one thread "
              f"each, {JOBS} fits at a time on {os.cpu_count()} cores):", "",
              *_times_table(rows, datasets), ""]
    return "\n".join(lines)


def figure(rows, datasets, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    matplotlib.rcParams["svg.hashsalt"] = "practitioners"
    names = [n for n in FIGURE_DATASETS if any(d.name == n for d in datasets)]
    cols = 3
    nrows = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(11, 3.2 * nrows), squeeze=False)
    colours = {"dpsolve": "tab:blue", "diffprivlib": "tab:orange", "scikit-learn": "tab:gray"}
    for ax, name in zip(axes.flat, names):
        for method in ("dpsolve", "diffprivlib"):
            stats = [interval(_values(rows, name, method, e, "auc")) for e in EPSILONS]
            means = [s[0] for s in stats]
            err = [[s[0] - s[1] for s in stats], [s[2] - s[0] for s in stats]]
            ax.errorbar(EPSILONS, means, yerr=err, marker="o", capsize=3, label=method,
                        color=colours[method])
        mean, lo, hi = interval(_sklearn(rows, name, "auc"))
        ax.axhline(mean, color=colours["scikit-learn"], linestyle="--",
                   label="scikit-learn (non-private)")
        ax.axhspan(lo, hi, color=colours["scikit-learn"], alpha=0.15)
        ax.axhline(0.5, color="black", linewidth=0.5, linestyle=":")
        ax.set_xscale("log")
        ax.set_xticks(EPSILONS, [f"{e:g}" for e in EPSILONS])
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("ε")
        ax.set_ylabel("test AUC")
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(exist_ok=True)
    fig.savefig(path, format="svg", metadata={"Date": None})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_SEEDS} seeds; print the page, write nothing")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--jobs", type=int, default=JOBS)
    parser.add_argument("--json", metavar="FILE", help="also save every run's scores")
    parser.add_argument("--from-json", metavar="FILE",
                        help="write the page from saved scores, without measuring")
    args = parser.parse_args()
    if args.from_json:
        saved = json.loads(pathlib.Path(args.from_json).read_text())
        rows, seeds, seconds, versions = (saved["rows"], saved["seeds"], saved["seconds"],
                                          saved["versions"])
        for r in rows:
            r["epsilon"] = float(r["epsilon"])
        datasets = core.all_datasets()
    else:
        if core.diffprivlib is None:
            raise SystemExit("needs diffprivlib (see this script's docstring)")
        seeds = args.seeds or (QUICK_SEEDS if args.quick else SEEDS)
        rows, datasets, seconds = measure(seeds, args.jobs)
        versions = _versions()
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(
                {"rows": rows, "seeds": seeds, "seconds": seconds, "versions": versions}))
    page = write_page(rows, datasets, seeds, seconds, versions)
    if args.quick:
        print(page)
        return
    PAGE.write_text(page)
    figure(rows, datasets, FIGURE)
    print(f"wrote {PAGE} and {FIGURE} ({seconds:.0f} s of measuring)")


if __name__ == "__main__":
    main()
