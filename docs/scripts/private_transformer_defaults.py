"""The section "Choosing the defaults" of docs/preprocessing.md: PrivateStandardScaler's ``clip``
and PrivateCategoryEncoder's ``min_frequency`` measured on real raw tables at equal total
epsilon, against PrivateRangeScaler at its defaults and the public transformers.

    PYTHONPATH=. python docs/scripts/private_transformer_defaults.py [--seeds 50] [--quick]

statsmodels ships three of the tables (``pip install statsmodels``) and the ISLP package's wheel
the Wage table (``pip install --no-deps ISLP``: only its CSV file is read); a table whose package
is missing is left out. The defaults compared against are read off the transformers'
signatures; the private scalers' and the encoder's defaults are also run at other shares of
epsilon (``SHARES``).

The tables and their split/seed protocol are the practitioner page's raw tables
(``benchmarks/peers/bench_practitioners.py``, imported through ``practitioners_page.py``): seed
s draws the 75/25 split (stratified for binary labels) and every release's noise; the model is
``DPLogisticRegression(epsilon, classes=[0, 1])`` or ``DPLinearRegression(epsilon,
label_bound=1)`` at its defaults behind ``private_pipeline``, which takes the row bound from
the preprocessing and composes the private step's cost into the model's total (each fit checks
that the total is epsilon).

* The scalers, on every real table with numeric columns (statsmodels' three when installed):
  ``PublicRangeScaler`` on the documented ranges (the fit at the whole epsilon; the upper
  reference), ``PrivateRangeScaler`` at its defaults inside the page's coarse outer ranges, and
  ``PrivateStandardScaler`` with the same outer ranges as its clipping ranges at each ``clip``
  of ``CLIPS``; a private scaler spends ``SHARE`` of epsilon, the fit the rest. The affairs
  data's two occupation codes go through ``PublicCategoryEncoder`` in every variant. The range
  scalers map onto [0, 1] (``feature_range=(0, 1)``, given: the page's mapping and the
  scalers' default when these tables were measured; ``feature_range_default.py`` measures
  (-1, 1), their default now).
* The encoders, on the tables with categorical columns: the affairs data (statsmodels' ``fair``:
  two columns of six occupation codes) and ISLR's ``Wage`` data (from the ``ISLP`` package's
  wheel, when installed: seven columns, the census region's nine codebook divisions of which
  the table holds one), the numeric columns through ``PublicRangeScaler``:
  ``PublicCategoryEncoder`` on every candidate (no cost; the fit at the whole epsilon) against
  ``PrivateCategoryEncoder`` at each ``min_frequency`` of ``MIN_FREQUENCIES`` (``SHARE`` of
  epsilon, the fit the rest).

Scores: test AUC (binary) or R^2 (regression), mean over seeds; comparisons are paired by seed,
with the 95% Student-t interval of the mean difference ("better"/"worse" when it excludes 0).
``--quick`` runs 2 seeds at epsilon = 1 on two tables, for a look.
"""
import argparse
import datetime
import importlib.util
import inspect
import os
import pathlib
import platform
import time

import numpy as np

from dpsolve.preprocessing import PrivateCategoryEncoder, PrivateStandardScaler

HERE = pathlib.Path(__file__).resolve().parent


def _page():
    """practitioners_page.py (the page's datasets and statistics), imported by its path."""
    spec = importlib.util.spec_from_file_location("practitioners_page",
                                                  HERE / "practitioners_page.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


page = _page()
core = page.core

EPSILONS = (0.3, 1.0, 3.0)
SEEDS = 50
#: The private step's share of the total epsilon, as on the practitioner page, and the shares
#: also tried at each transformer's default.
SHARE = core.SCALER_SHARE
SHARES = (0.05, 0.1, 0.2, 0.3)
CLIPS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)
MIN_FREQUENCIES = (0, 0.005, 0.01, 0.02, 0.05)

def _default(transformer, parameter):
    """The transformer's default of ``parameter`` (the one measured against)."""
    return inspect.signature(transformer).parameters[parameter].default


DEFAULT_CLIP = _default(PrivateStandardScaler, "clip")
DEFAULT_MIN_FREQUENCY = _default(PrivateCategoryEncoder, "min_frequency")
PUBLIC_RANGES, PUBLIC_CATEGORIES = "public ranges", "public categories"
PUBLIC_OUTER = "public outer ranges"
#: Each variant's (transformer, its parameter, its share of epsilon), by name.
SPECS = {PUBLIC_RANGES: ("public ranges", None, 0.0),
         PUBLIC_OUTER: ("public outer ranges", None, 0.0),
         PUBLIC_CATEGORIES: ("public categories", None, 0.0)}


def _named(kind, value, share, name):
    SPECS[name] = (kind, value, share)
    return name


def _at(share):
    return "" if share == SHARE else f" at {share:g} ε"


def ranges(share=SHARE):
    return _named("ranges", None, share, "private ranges" + _at(share))


def standard(clip, share=SHARE):
    return _named("standard", clip, share, f"standard, clip {clip:g}" + _at(share))


def frequent(min_frequency, share=SHARE):
    return _named("frequent", min_frequency, share,
                  f"min_frequency {min_frequency:g}" + _at(share))


# -- the tables --------------------------------------------------------------------------------
#: ISLR's Wage data: the codebook's category lists (R's factor levels), among them the nine
#: census divisions of ``region`` although the table holds only the Middle Atlantic's workers.
WAGE_CATEGORIES = {
    "maritl": ["1. Never Married", "2. Married", "3. Widowed", "4. Divorced", "5. Separated"],
    "race": ["1. White", "2. Black", "3. Asian", "4. Other"],
    "education": ["1. < HS Grad", "2. HS Grad", "3. Some College", "4. College Grad",
                  "5. Advanced Degree"],
    "region": ["1. New England", "2. Middle Atlantic", "3. East North Central",
               "4. West North Central", "5. South Atlantic", "6. East South Central",
               "7. West South Central", "8. Mountain", "9. Pacific"],
    "jobclass": ["1. Industrial", "2. Information"],
    "health": ["1. <=Good", "2. >=Very Good"],
    "health_ins": ["1. Yes", "2. No"]}
#: Domain ranges: the survey years (a decade), a working age, a yearly wage in $1000s.
WAGE_RANGES = {"year": (2000.0, 2010.0), "age": (18.0, 100.0)}
WAGE_Y = (0.0, 400.0)


def wage():
    """ISLR's Wage data (3,000 × 9) from the ISLP package's wheel and its raw table, or None."""
    try:
        from importlib.resources import files

        import pandas as pd
        frame = pd.read_csv(files("ISLP").joinpath("data", "Wage.csv"))
    except ImportError:
        return None
    columns = list(WAGE_RANGES) + list(WAGE_CATEGORIES)
    frame = frame[columns + ["wage"]]
    low = np.array([WAGE_RANGES.get(c, (np.nan, np.nan))[0] for c in columns])
    high = np.array([WAGE_RANGES.get(c, (np.nan, np.nan))[1] for c in columns])
    dataset = core.Dataset(
        "wages (ISLR Wage)", "regression", frame[columns].to_numpy(object),
        frame["wage"].to_numpy(float), low, high,
        "ISLR's `Wage` (James, Witten, Hastie and Tibshirani 2013; 3,000 × 9); y = yearly "
        "wage ($1000s)", "year 2000–2010, age 18–100, y in [0, 400]; categories from the "
        "codebook", y_range=WAGE_Y, columns=tuple(columns), categories=WAGE_CATEGORIES)
    return dataset, frame[columns]


def scaler_tables():
    """The practitioner page's real tables (those with raw tables), with their frames."""
    return [(d, core.raw_frame(d)) for d in core.all_datasets() if d.columns is not None]


def encoder_tables():
    """The tables with categorical columns: the affairs data and Wage, those installed."""
    out = [(d, core.raw_frame(d)) for d in core.all_datasets()
           if d.columns is not None and d.categories]
    extra = wage()
    return out + ([extra] if extra is not None else [])


# -- the variants ------------------------------------------------------------------------------
def _outer(dataset):
    return [core.outer_range(dataset.low[j], dataset.high[j])
            for j in core.numeric_columns(dataset)]


def _documented(dataset):
    return [(dataset.low[j], dataset.high[j]) for j in core.numeric_columns(dataset)]


def variant(name, dataset, epsilon, seed):
    """``(preprocess, the fit's epsilon)`` of the variant ``name`` at total ``epsilon``: its
    private step spends its share of ``epsilon``, the fit the rest."""
    from dpsolve.preprocessing import PublicRangeScaler
    kind, value, share = SPECS[name]
    spent, rest = share * epsilon, (1.0 - share) * epsilon
    if kind == "ranges":        # the practitioner page's private-ranges variant
        return core.raw_preprocess(dataset, spent, seed), rest
    scaler, encoder = PublicRangeScaler(_documented(dataset), feature_range=(0, 1)), None
    if kind == "public outer ranges":
        scaler = PublicRangeScaler(_outer(dataset), feature_range=(0, 1))
    elif kind == "standard":
        scaler = PrivateStandardScaler(_outer(dataset), epsilon=spent, clip=value,
                                       random_state=seed)
    elif kind == "frequent":
        encoder = PrivateCategoryEncoder(list(dataset.categories.values()), epsilon=spent,
                                         min_frequency=value, random_state=seed)
    return core.raw_columns(dataset, scaler, encoder), rest


SCALER_VARIANTS = (PUBLIC_RANGES, PUBLIC_OUTER, ranges()) + tuple(standard(c) for c in CLIPS)
ENCODER_VARIANTS = (PUBLIC_CATEGORIES,) + tuple(frequent(m) for m in MIN_FREQUENCIES)
#: (variant, its share-0.2 reference): each private transformer at its default, by share.
SCALER_SHARES = tuple((ranges(s), ranges()) for s in SHARES if s != SHARE) + tuple(
    (standard(DEFAULT_CLIP, s), standard(DEFAULT_CLIP)) for s in SHARES if s != SHARE)
ENCODER_SHARES = tuple((frequent(DEFAULT_MIN_FREQUENCY, s), frequent(DEFAULT_MIN_FREQUENCY))
                       for s in SHARES if s != SHARE)


def measure(tables, variants, epsilons, seeds):
    """Every variant at every total epsilon on every (table, seed): a list of score rows."""
    from threadpoolctl import threadpool_limits

    from dpsolve.preprocessing import private_pipeline
    rows = []
    with threadpool_limits(1):
        for dataset, frame in tables:
            key = "auc" if dataset.kind == "binary" else "r2"
            for seed in range(seeds):
                for epsilon in epsilons:
                    for name in variants:
                        preprocess, rest = variant(name, dataset, epsilon, seed)
                        model = private_pipeline(preprocess,
                                                 core.raw_estimator(dataset, rest, seed))
                        out = core.fit_raw(model, dataset, seed, frame, epsilon)
                        rows.append({"dataset": dataset.name, "kind": dataset.kind,
                                     "variant": name, "epsilon": epsilon, "seed": seed,
                                     "score": out[key]})
    return rows


# -- the tables of results ---------------------------------------------------------------------
def _scores(rows, dataset, variant, epsilon):
    got = sorted((r["seed"], r["score"]) for r in rows if r["dataset"] == dataset
                 and r["variant"] == variant and r["epsilon"] == epsilon)
    return np.array([v for _, v in got])


def compare(rows, dataset, epsilon, first, second):
    """``first`` minus ``second`` paired by seed: mean, 95% interval and the word."""
    mean, lo, hi = page.interval(_scores(rows, dataset, first, epsilon)
                                 - _scores(rows, dataset, second, epsilon))
    return mean, lo, hi, "better" if lo > 0 else "worse" if hi < 0 else "tie"


def _cells(rows):
    """The (dataset, kind, epsilon) cells measured, in order."""
    seen = []
    for r in rows:
        cell = (r["dataset"], r["kind"], r["epsilon"])
        if cell not in seen:
            seen.append(cell)
    return sorted(seen, key=lambda c: (c[1] != "binary", seen.index(c)))


def _measured(rows, variants):
    """The ``variants`` that ``rows`` holds, in their order."""
    return [v for v in variants if any(r["variant"] == v for r in rows)]


def _num(x):
    return f"{x:.3f}" if abs(x) < 1000 else f"{x:.3g}"


def means_table(rows, variants, reference, default):
    """Mean score of each variant per (dataset, epsilon), then ``default`` minus ``reference``
    paired by seed."""
    variants = _measured(rows, variants)
    head = " | ".join(variants)
    lines = [f"| dataset | score | ε | {head} | {default} − {reference} [95%] |",
             "|---|---|---|" + "---|" * (len(variants) + 1)]
    for dataset, kind, epsilon in _cells(rows):
        cells = [_num(_scores(rows, dataset, v, epsilon).mean()) for v in variants]
        mean, lo, hi, _ = compare(rows, dataset, epsilon, default, reference)
        gap = (f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}]" if abs(mean) < 1000 else _num(mean))
        score = "AUC" if kind == "binary" else "R²"
        lines.append(f"| {dataset} | {score} | {epsilon:g} | " + " | ".join(cells)
                     + f" | {gap} |")
    return lines


def tally_table(rows, pairs):
    """For each ``(variant, reference)`` pair, over the (dataset, epsilon) cells: how often the
    variant is better, not distinguishable or worse by the paired interval, and the mean
    difference."""
    cells = _cells(rows)
    lines = ["| variant | against | better | not distinguishable | worse | mean difference |",
             "|---|---|---|---|---|---|"]
    for v, reference in pairs:
        got = [compare(rows, d, e, v, reference) for d, _, e in cells]
        words = [g[3] for g in got]
        lines.append(f"| {v} | {reference} | {words.count('better')} | {words.count('tie')} | "
                     f"{words.count('worse')} | {np.mean([g[0] for g in got]):+.3f} |")
    return lines


def _against(variants, reference):
    return [(v, reference) for v in variants if v != reference]


def report(scalers, encoders, seeds, seconds):
    """The measured tables, as Markdown."""
    lines = [(f"Measured {datetime.date.today().isoformat()} on {os.cpu_count()} cores "
             f"({platform.machine()}, Python {platform.python_version()}, NumPy "
             f"{np.__version__}), {seeds} seeds, one process, {seconds / 60:.1f} minutes."), ""]
    if scalers:
        cells = len(_cells(scalers))
        clip = standard(DEFAULT_CLIP)
        lines += ["Scalers, mean test score:", "",
                  *means_table(scalers, SCALER_VARIANTS, PUBLIC_RANGES, clip), "",
                  (f"Each variant against `PrivateStandardScaler(clip={DEFAULT_CLIP:g})`, "
                  "against `PrivateRangeScaler`'s defaults and against `PublicRangeScaler` on "
                  f"the coarse outer ranges, paired by seed, over the {cells} (dataset, ε) "
                  "cells:"), "",
                  *tally_table(scalers, _against(SCALER_VARIANTS, clip)
                               + _against(SCALER_VARIANTS[3:], ranges())
                               + _against(SCALER_VARIANTS[2:], PUBLIC_OUTER)), "",
                  f"The private scalers at other shares of ε, against the share {SHARE:g}:", "",
                  *tally_table(scalers, SCALER_SHARES), ""]
    if encoders:
        cells = len(_cells(encoders))
        default = frequent(DEFAULT_MIN_FREQUENCY)
        lines += ["Encoders, mean test score:", "",
                  *means_table(encoders, ENCODER_VARIANTS, PUBLIC_CATEGORIES, default), "",
                  (f"Each variant against `PrivateCategoryEncoder(min_frequency="
                  f"{DEFAULT_MIN_FREQUENCY:g})`, paired by seed, over the {cells} (dataset, ε) "
                  f"cells, and the default at other shares of ε against the share {SHARE:g}:"),
                  "", *tally_table(encoders, _against(ENCODER_VARIANTS, default)
                                   + list(ENCODER_SHARES)), ""]
    return "\n".join(lines)


def _all(variants, pairs):
    return list(dict.fromkeys(list(variants) + [v for pair in pairs for v in pair]))


def main(seeds, epsilons, scaler_data, encoder_data):
    start = time.perf_counter()
    scalers = measure(scaler_data, _all(SCALER_VARIANTS, SCALER_SHARES), epsilons, seeds)
    print(f"scalers measured, {time.perf_counter() - start:.0f} s", flush=True)
    encoders = measure(encoder_data, _all(ENCODER_VARIANTS, ENCODER_SHARES), epsilons, seeds)
    print(report(scalers, encoders, seeds, time.perf_counter() - start))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=SEEDS)
    parser.add_argument("--quick", action="store_true",
                        help="2 seeds at epsilon = 1 on two tables")
    args = parser.parse_args()
    if args.quick:
        main(2, (1.0,), scaler_tables()[:1], encoder_tables()[-1:])
    else:
        main(args.seeds, EPSILONS, scaler_tables(), encoder_tables())
