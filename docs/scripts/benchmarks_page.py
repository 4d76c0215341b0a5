"""Write ``docs/benchmarks.md``: the asv suite's headline ratios, and how to get the rest.

The ratios are those of ``benchmarks/``: each kernel against its NumPy floor and θ* against plain
cvxpy, both sides measured in the same process. They come from the newest asv run stored in
``results_dir`` of ``asv.conf.json`` (``.asv/results``) when there is one, and are otherwise
measured now by the suite's own benchmark classes, as ``python -m benchmarks.bench_kernels`` and
``python -m benchmarks.bench_reference`` do. The comparisons with Opacus and diffprivlib are
quoted from the pages where they were measured, with their date; they are not re-run here (the
peers are optional and diffprivlib needs a virtual environment of its own).

Run from the repository root::

    python docs/scripts/benchmarks_page.py                  # stored asv results, else measure
    python docs/scripts/benchmarks_page.py --measure        # measure now (about 2 min + cvxpy)
    python docs/scripts/benchmarks_page.py --measure --losses squared hinge

Plain cvxpy takes about 6 s (squared) to 4 min (multinomial) per loss on two cores.
"""
import argparse
import datetime
import itertools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "benchmarks.md"

#: (asv benchmark, what it measures, target, {params: the same quantity as a page states it,
#: measured on a quiet machine}): the headline ratios, one row per parameter.
KERNELS = [
    ("bench_kernels.NoisySGDStep.track_step_over_numpy_noise",
     "SGD1 step (`noisy_sgd`) / NumPy drawing that step's noise alone", "≤ 1",
     {("10",): "0.52, 0.61", ("50",): "0.39, 0.45", ("200",): "0.33, 0.46"}),
    ("bench_kernels.NoisySGDStep.track_numpy_loop_over_step",
     "the same SGD1 loop in NumPy / dpsolve's step", "speed-up",
     {("10",): "269×", ("50",): "77×", ("200",): "14×"}),
    ("bench_kernels.ClippedGradient.track_dpsolve_over_numpy_two_passes",
     "clipped gradient (`clipped_gd`) / NumPy's `X @ θ` and `X.T @ v`", "≤ 1",
     {("10",): "0.94, 1.10, 1.02", ("50",): "0.68, 0.78, 0.82", ("200",): "0.84, 0.84, 0.84"}),
    ("bench_kernels.RowProducts.track_dpsolve_over_numpy",
     "fixed-order kernel / NumPy with BLAS on every core", "≤ 1 (`X^T r`), ≤ 1.5 (`X θ`)",
     {("X^T r", "50"): "0.9 ms / 2.7 ms", ("X^T r", "200"): "4.8 ms / 9.6 ms",
      ("X theta", "50"): "2.1 ms / 1.9 ms", ("X theta", "200"): "8.5 ms / 7.2 ms"}),
    ("bench_kernels.Float32Storage.track_time_over_float64",
     "the kernel on float32 X / on the same values in float64 (n = 10⁶, p = 100)", "≤ 0.6",
     {("clipped gradient", "float32"): "0.71", ("X theta", "float32"): "0.43",
      ("X^T r", "float32"): "0.58", ("minibatch pass", "float32"): "0.67"}),
]
REFERENCE = [
    ("bench_reference.ReferenceMinimizer.track_speedup_over_plain_cvxpy",
     "plain cvxpy's time / `reference_minimizer`'s", "≥ 20",
     {("logistic",): "616×", ("hinge",): "55×", ("squared",): "55×", ("huber_hinge",): "336×",
      ("multinomial",): "311×"}),
    ("bench_reference.ReferenceMinimizer.track_certified_gap",
     "`reference_minimizer`'s certified gap", "≤ 10⁻⁹",
     {("logistic",): "3.3e-12", ("hinge",): "5.3e-12", ("squared",): "4.9e-12",
      ("huber_hinge",): "5.3e-12", ("multinomial",): "2.6e-11"}),
    ("bench_reference.ReferenceMinimizer.track_plain_cvxpy_certified_gap",
     "plain cvxpy's answer, certified by dpsolve", "—",
     {("logistic",): "1.9e-11", ("hinge",): "7.1e-12", ("squared",): "6.1e-09",
      ("huber_hinge",): "1.8e-11", ("multinomial",): "3.2e-11"}),
]

#: Quoted, not measured here: the peers' numbers as the pages that measured them state them.
QUOTED = """\
## Against Opacus and diffprivlib

Quoted from [performance](performance.md#peers), where the commands, versions and settings are;
measured on the same two-core machine (first stated 2026-11-23 for Opacus, 2026-11-25 for
diffprivlib). Not re-run by this page's script.

| comparison | result |
|---|---|
| Opacus 1.6.0 DP-SGD, logistic, n = 10⁴, p = 50, batch 1: samples per second, dpsolve / Opacus | 4,601× (a second run: 4,164×) |
| the same at batch 1024 | 155× (a second run: 126×) |
| diffprivlib 0.6.6 `LogisticRegression` against dpsolve's `objective_perturbation`, n = 10⁴, p = 20: excess risk, dpsolve / diffprivlib, 40 seeds | 0.17× at ε = 0.1, 0.94× at ε = 0.5, 1.00× at ε = 1 |

Utility against both on real datasets, at equal guarantees: [peers](peers.md) and
[for practitioners](practitioners.md). The reference minimiser's full table (every loss, with
cached θ* and logistic at n = 10⁶) is in [the reference minimiser](reference_minimizer.md#measured):
55–616× faster than plain cvxpy, as measured there on 2026-11-25.
"""

REGENERATE = """\
## Regenerate this page, and the full history

```bash
pip install ".[bench]"                          # asv
python docs/scripts/benchmarks_page.py          # newest stored asv run, else measures now
python docs/scripts/benchmarks_page.py --measure --losses squared hinge   # a quicker measurement
```

The page reads the newest run that asv stored in `results_dir` of `asv.conf.json`
(`.asv/results`) holding one of these benchmarks. A run against the installed dpsolve
(`--python=same`) is stored only with the commit it measured; runs of past commits build each
one into asv's own virtualenv. To record runs and browse every benchmark over the commits:

```bash
asv machine --yes                               # once: describe this machine
asv run --python=same --quick --set-commit-hash=$(git rev-parse HEAD)   # the suite, stored
asv run main~10..main                           # ten commits, each built and measured
asv publish                                     # the HTML report of every stored run, in .asv/html
asv preview                                     # serves it on localhost
```

Every other speed measurement, with the command that produced it: [performance](performance.md).
"""


def _asv_results_dir():
    config = json.loads((ROOT / "asv.conf.json").read_text())
    return ROOT / config.get("results_dir", "results")


def newest_asv_run(results_dir):
    """The newest asv run under ``results_dir`` that holds a headline benchmark, as ``(values,
    about)``, or None.

    ``values`` maps each benchmark to ``{params: value}`` (the parameter values as asv stores
    them, without their quotes: ``"10"``, ``"X^T r"``); ``about`` describes the run."""
    headline = {key for key, *_ in KERNELS + REFERENCE}
    runs = [json.loads(f.read_text()) for f in results_dir.glob("*/*.json")
            if f.name not in ("machine.json", "benchmarks.json")]
    runs = [r for r in runs if headline & set(r["results"])]
    if not runs:
        return None

    def started(run):           # when the run was made (asv's "date" is the commit's)
        i = run["result_columns"].index("started_at")
        return max((row[i] for row in run["results"].values() if len(row) > i and row[i]),
                   default=run["date"])

    run = max(runs, key=started)
    column = {name: i for i, name in enumerate(run["result_columns"])}
    values = {}
    for name, row in run["results"].items():
        result = row[column["result"]]
        if result is None:
            continue                # failed or skipped
        params = row[column["params"]] if len(row) > column["params"] else []
        results = result if isinstance(result, list) else [result]
        values[name] = {tuple(p.strip("'\"") for p in combo): value
                        for combo, value in zip(itertools.product(*params), results)}
    machine = run["params"]
    date = datetime.datetime.fromtimestamp(started(run) / 1000, datetime.timezone.utc)
    where = (results_dir.relative_to(ROOT) if results_dir.is_relative_to(ROOT)
             else results_dir)
    described = [machine.get("cpu"), machine.get("num_cpu") and f"{machine['num_cpu']} CPUs",
                 f"Python {run['python']}" if run.get("python") else None]
    about = (f"from the asv run of commit `{run['commit_hash'][:8]}` made on {date:%Y-%m-%d} "
             f"(machine `{machine.get('machine', '?')}`"
             f"{': ' + ', '.join(filter(None, described)) if any(described) else ''}), read from "
             f"`{where}`")
    return values, about


def _track(cls, method, params):
    """Call one asv ``track_*`` method the way asv does: ``setup``, then the method."""
    bench = cls()
    bench.setup(*params)
    return getattr(bench, method)(*params)


def measure(losses, repeat):
    """Measure the headline ratios now, with the suite's classes; ``{benchmark: {params:
    value}}``. Each kernel ratio is the median of ``repeat`` measurements (each already a
    best of five per side): a burst of load on a shared machine skews one of them, not the
    median."""
    sys.path.insert(0, str(ROOT))
    from benchmarks import bench_kernels, bench_reference

    values = {}
    for key, *_ in KERNELS:
        _, cls_name, method = key.split(".")
        cls = getattr(bench_kernels, cls_name)
        grid = cls.params if isinstance(cls.params[0], list) else [cls.params]
        values[key] = {}
        for combo in itertools.product(*grid):
            runs = [_track(cls, method, combo) for _ in range(repeat)]
            values[key][tuple(map(str, combo))] = statistics.median(runs)
            print(key, combo, " ".join(f"{r:.3g}" for r in runs), flush=True)
    if losses:
        cwd = os.getcwd()
        os.chdir(tempfile.mkdtemp())        # setup_cache caches θ* in a relative folder
        try:
            # the suite's setup_cache, on the chosen losses only (plain cvxpy is slow)
            bench_reference.LOSSES = tuple(losses)
            cache = bench_reference.ReferenceMinimizer().setup_cache()
        finally:
            os.chdir(cwd)
        for key, *_ in REFERENCE:
            method = key.split(".")[-1]
            values[key] = {(loss,): getattr(bench_reference.ReferenceMinimizer(), method)(
                cache, loss) for loss in losses}
    return values


def _load():
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def _about_this_machine(load_start, load_end):
    commit = subprocess.run(["git", "rev-parse", "--short=8", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip() or "?"
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "dpsolve", "_kernels",
                            "benchmarks"], cwd=ROOT, capture_output=True, text=True).stdout
    import numpy
    cpu = platform.processor() or platform.machine()
    if Path("/proc/cpuinfo").is_file():
        names = [line.split(":", 1)[1].strip() for line in
                 Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")]
        cpu = names[0] if names else cpu
    return (f"measured by this page's script on {datetime.date.today():%Y-%m-%d} at commit "
            f"`{commit}`{' with local changes' if dirty else ''} ({cpu}, "
            f"{os.cpu_count()} CPUs, one-minute load average {load_start:.1f} at the start and "
            f"{load_end:.1f} at the end; Python "
            f"{platform.python_version()}, numpy {numpy.__version__})")


def _number(value):
    if value is None or value != value:
        return "failed"
    if value >= 10:
        return f"{value:,.0f}"
    if value < 0.01:
        return f"{value:.1e}"
    return f"{value:.2f}"


def _table(rows, values, setting, documented):
    lines = [f"| measures | {setting} | result | {documented} | target |", "|---|---|---|---|---|"]
    for key, what, target, stated in rows:
        for params, value in values.get(key, {}).items():
            shown = ", ".join(f"p = {p}" if p.isdigit() else f"`{p}`" for p in params)
            suffix = "×" if "speed-up" in target or "≥" in target else ""
            lines.append(f"| {what} | {shown} | {_number(value)}{suffix} | "
                         f"{stated.get(params, '—')} | {target} |")
    return "\n".join(lines)


def page(values, about):
    """The page's Markdown."""
    parts = [
        "# Benchmarks",
        "",
        "The headline ratios of dpsolve's asv suite (`benchmarks/`). Each is a ratio of two",
        "timings taken in the same process within seconds of each other, so that the machine's",
        "speed cancels; load from other processes does not. The *result* column is",
        f"{about}. The column beside it is the same quantity as the page linked in its header",
        "states it, measured on a two-core AMD EPYC virtual machine with nothing else running. The",
        "kernels' ratios grow when other processes hold the cores: SGD1 draws its noise ahead on",
        "the second core, and OpenMP's threads spin while they wait for each other",
        "([a busy machine](performance.md#a-busy-machine)).",
        "",
        "## Kernels against NumPy",
        "",
        "Logistic loss; SGD1 at n = 10⁴, σ = 100 (2·10⁵ steps against `standard_normal((2·10⁵,",
        "p))`); the clipped gradient and the row products at n = 10⁵; best of five each",
        "(`python -m benchmarks.bench_kernels` prints the same).",
        "",
        _table(KERNELS, values, "setting",
               "quiet machine, [performance](performance.md) (separate runs)"),
        "",
    ]
    if any(key in values for key, *_ in REFERENCE):
        parts += [
            "## θ* against cvxpy",
            "",
            "`reference_minimizer` (certified by a duality gap) against plain cvxpy",
            "(`Problem.solve()` with its defaults, on the textbook formulation), n = 5·10⁴,",
            "p = 50, unit ball; dpsolve best of three, cvxpy once",
            "(`python -m benchmarks.bench_reference` prints every loss).",
            "",
            _table(REFERENCE, values, "loss",
                   "quiet machine, [reference minimiser](reference_minimizer.md#measured)"),
            "",
        ]
    return "\n".join(parts) + "\n" + QUOTED + "\n" + REGENERATE


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure", action="store_true",
                        help="measure now even if asv results are stored")
    parser.add_argument("--losses", nargs="*",
                        default=["logistic", "hinge", "squared", "huber_hinge", "multinomial"],
                        help="losses for θ* against plain cvxpy when measuring (none: skip)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="measurements per kernel ratio when measuring (the median is shown)")
    parser.add_argument("--out", default=str(PAGE))
    args = parser.parse_args(argv)
    stored = None if args.measure else newest_asv_run(_asv_results_dir())
    if stored is not None:
        values, about = stored
    else:
        load_start = _load()
        values = measure(args.losses, args.repeat)
        about = (f"{_about_this_machine(load_start, _load())}; each kernel ratio is the median "
                 f"of {args.repeat} measurements")
    Path(args.out).write_text(page(values, about), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
