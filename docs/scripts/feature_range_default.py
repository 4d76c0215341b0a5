"""The section "Choosing the defaults" of docs/preprocessing.md: the range scalers'
``feature_range``, (0, 1) against (-1, 1), measured on real raw tables at equal total epsilon.

    PYTHONPATH=. python docs/scripts/feature_range_default.py [--seeds 50] [--quick]

The tables, their documented public ranges and coarse outer ranges, the split/seed protocol and
the model are those of ``private_transformer_defaults.py`` (imported by its path; statsmodels
ships three of the tables): the practitioner page's seven real raw tables, seed s drawing the
75/25 split (stratified for binary labels) and every release's noise, ``DPLogisticRegression(
epsilon, classes=[0, 1])`` or ``DPLinearRegression(epsilon, label_bound=1)`` at its defaults
behind ``private_pipeline``, which takes the row bound from the preprocessing (``sqrt(p)`` for
either feature range: only the geometry moves, not the noise) and checks that the total is
epsilon. The affairs data's occupation codes go through ``PublicCategoryEncoder`` in every
variant. The variants:

* ``PublicRangeScaler`` on the documented ranges with each ``feature_range`` (the fit at the
  whole epsilon);
* ``PrivateRangeScaler`` at its other defaults on the coarse outer ranges with each
  ``feature_range``, spending ``SHARE`` of epsilon, the fit the rest;
* ``PrivateStandardScaler`` at its defaults on the outer ranges (its output centred whatever
  ``feature_range``), at the same share, tallied against the public ranges at each range.

Scores: test AUC, balanced accuracy and log-loss (binary), R^2 (regression); each (table,
epsilon, metric) cell compares two variants paired by seed, with the 95% Student-t interval of
the mean difference: "better" when it excludes 0 on the side that favours the first (higher
AUC, balanced accuracy, R^2; lower log-loss), "worse" when it excludes 0 on the other.

The rule, fixed before the measurement: (-1, 1) becomes a scaler's default if it is better than
(0, 1) on more than half of all the (table, epsilon, metric) cells and worse on at most a tenth
of them; otherwise (0, 1) stays. ``--quick`` runs 2 seeds at epsilon = 1 on two tables, for a
look.
"""
import argparse
import datetime
import importlib.util
import os
import pathlib
import platform
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def _defaults():
    """private_transformer_defaults.py (the tables and their ranges), imported by its path."""
    spec = importlib.util.spec_from_file_location("private_transformer_defaults",
                                                  HERE / "private_transformer_defaults.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


defaults = _defaults()
core, page = defaults.core, defaults.page

EPSILONS = (0.3, 1.0, 3.0)
SEEDS = 50
FEATURE_RANGES = ((0, 1), (-1, 1))
#: Each metric and whether a higher value is better.
METRICS = {"binary": (("auc", "AUC", True), ("balanced_accuracy", "balanced accuracy", True),
                      ("log_loss", "log-loss", False)),
           "regression": (("r2", "R²", True),)}


PUBLIC = {(0, 1): "public ranges, (0, 1)", (-1, 1): "public ranges, (−1, 1)"}
PRIVATE = {(0, 1): "private ranges, (0, 1)", (-1, 1): "private ranges, (−1, 1)"}
STANDARD = defaults.standard(defaults.DEFAULT_CLIP)
VARIANTS = (*PUBLIC.values(), *PRIVATE.values(), STANDARD)
#: The comparisons (first minus second) the rule is applied to, then the one tallied besides.
RULED = ((PUBLIC[-1, 1], PUBLIC[0, 1]), (PRIVATE[-1, 1], PRIVATE[0, 1]))
TALLIED = ((STANDARD, PUBLIC[0, 1]), (STANDARD, PUBLIC[-1, 1]))


def variant(name, dataset, epsilon, seed):
    """``(preprocess, the fit's epsilon)`` of the variant ``name`` at total ``epsilon``."""
    from dpsolve.preprocessing import PrivateRangeScaler, PublicRangeScaler
    if name == STANDARD:
        return defaults.variant(name, dataset, epsilon, seed)
    feature_range = next(f for f in FEATURE_RANGES if name in (PUBLIC[f], PRIVATE[f]))
    if name == PUBLIC[feature_range]:
        scaler = PublicRangeScaler(defaults._documented(dataset), feature_range=feature_range)
        return core.raw_columns(dataset, scaler), epsilon
    share = defaults.SHARE
    scaler = PrivateRangeScaler(defaults._outer(dataset), epsilon=share * epsilon,
                                feature_range=feature_range, random_state=seed)
    return core.raw_columns(dataset, scaler), (1.0 - share) * epsilon


def measure(tables, epsilons, seeds, variants=VARIANTS):
    """Every variant at every total epsilon on every (table, seed): a list of score rows."""
    from threadpoolctl import threadpool_limits

    from dpsolve.preprocessing import private_pipeline
    rows = []
    with threadpool_limits(1):
        for dataset, frame in tables:
            for seed in range(seeds):
                for epsilon in epsilons:
                    for name in variants:
                        preprocess, rest = variant(name, dataset, epsilon, seed)
                        model = private_pipeline(preprocess,
                                                 core.raw_estimator(dataset, rest, seed))
                        out = core.fit_raw(model, dataset, seed, frame, epsilon)
                        rows.append({"dataset": dataset.name, "kind": dataset.kind,
                                     "variant": name, "epsilon": epsilon, "seed": seed, **out})
    return rows


def _scores(rows, dataset, variant, epsilon, key):
    got = sorted((r["seed"], r[key]) for r in rows if r["dataset"] == dataset
                 and r["variant"] == variant and r["epsilon"] == epsilon)
    return np.array([v for _, v in got])


def cells(rows, first, second):
    """Every (dataset, epsilon, metric) cell: the two means and ``first`` minus ``second``
    paired by seed, with its interval and the word for ``first``."""
    seen = list(dict.fromkeys((r["dataset"], r["kind"], r["epsilon"]) for r in rows))
    out = []
    for dataset, kind, epsilon in sorted(seen, key=lambda c: (c[1] != "binary", seen.index(c))):
        for key, label, higher in METRICS[kind]:
            one, two = (_scores(rows, dataset, v, epsilon, key) for v in (first, second))
            mean, lo, hi = page.interval(one - two)
            up, down = (lo > 0, hi < 0) if higher else (hi < 0, lo > 0)
            out.append({"dataset": dataset, "epsilon": epsilon, "metric": label,
                        "first": one.mean(), "second": two.mean(), "mean": mean, "lo": lo,
                        "hi": hi, "word": "better" if up else "worse" if down else "tie"})
    return out


def verdict(measured):
    """The rule: (-1, 1) wins if better on more than half the cells and worse on at most a
    tenth of them."""
    words = [c["word"] for c in measured]
    better, worse = words.count("better"), words.count("worse")
    return better > len(words) / 2 and worse <= len(words) / 10, better, worse


def _tally(measured, first, second):
    lines = []
    for label in dict.fromkeys(c["metric"] for c in measured):
        words = [c["word"] for c in measured if c["metric"] == label]
        lines.append(f"| {first} | {second} | {label} | {len(words)} | "
                     f"{words.count('better')} | {words.count('tie')} | "
                     f"{words.count('worse')} |")
    words = [c["word"] for c in measured]
    return lines + [(f"| {first} | {second} | all | {len(words)} | {words.count('better')} | "
                     f"{words.count('tie')} | {words.count('worse')} |")]


def _word(word):
    return "not distinguishable" if word == "tie" else word


def _means(rows, first, second):
    lines = ["| dataset | ε | metric | (0, 1) | (−1, 1) | (−1, 1) − (0, 1) [95%] | (−1, 1) is |",
             "|---|---|---|---|---|---|---|"]
    for c in cells(rows, first, second):
        lines.append(f"| {c['dataset']} | {c['epsilon']:g} | {c['metric']} | "
                     f"{c['second']:.3f} | {c['first']:.3f} | {c['mean']:+.3f} "
                     f"[{c['lo']:+.3f}, {c['hi']:+.3f}] | {_word(c['word'])} |")
    return lines


def report(rows, seeds, seconds):
    """The measured tables, the tallies and the rule's verdicts, as Markdown."""
    lines = [(f"Measured {datetime.date.today().isoformat()} on {os.cpu_count()} cores "
              f"({platform.machine()}, Python {platform.python_version()}, NumPy "
              f"{np.__version__}), {seeds} seeds, one process, {seconds / 60:.1f} minutes."), ""]
    private = f"`PrivateRangeScaler` on the outer ranges at {defaults.SHARE:g} of ε"
    for pair, what in zip(RULED, ("`PublicRangeScaler` on the documented ranges", private)):
        lines += [f"{what}, mean test score:", "", *_means(rows, *pair), ""]
    lines += ["Paired by seed, over the (dataset, ε, metric) cells:", "",
              "| variant | against | metric | cells | better | not distinguishable | worse |",
              "|---|---|---|---|---|---|---|"]
    for pair in RULED + TALLIED:
        lines += _tally(cells(rows, *pair), *pair)
    lines.append("")
    for pair in RULED:
        measured = cells(rows, *pair)
        wins, better, worse = verdict(measured)
        lines.append(f"Rule (more than half better, at most a tenth worse), {pair[0]} against "
                     f"{pair[1]}: {'wins' if wins else 'does not win'} ({better} better, "
                     f"{worse} worse of {len(measured)}).")
    return "\n".join(lines + [""])


def main(seeds, epsilons, tables):
    start = time.perf_counter()
    rows = measure(tables, epsilons, seeds)
    print(report(rows, seeds, time.perf_counter() - start))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=SEEDS)
    parser.add_argument("--quick", action="store_true",
                        help="2 seeds at epsilon = 1 on two tables")
    args = parser.parse_args()
    if args.quick:
        main(2, (1.0,), defaults.scaler_tables()[:2])
    else:
        main(args.seeds, EPSILONS, defaults.scaler_tables())
