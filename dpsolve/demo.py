"""``dpsolve demo``: a small built-in sweep of the noisy SGD of Bassily-Smith-Thakurta 2014
against exact minimisers, its excess-risk bound and the matching lower bound.

Synthetic data (n = 1000, p = 10) and, when scikit-learn is installed, its breast-cancer data;
logistic, hinge and squared loss on the unit ball; ``noisy_sgd`` at epsilon 0.1, 0.3 and 0.9 with
the paper's noise (3) and with the least noise the RDP accountant certifies for the same claim.
It runs through :mod:`dpsolve.experiments` like any sweep: a results database, per-cell 95%
intervals, the slope along epsilon next to the bound's, and a figure.
"""
import importlib.util
import os
import sys
import tempfile
import time

from .experiments import load_sweep, plot_axis, report_text, run_sweep, summarize

EPSILONS = [0.1, 0.3, 0.9]
DELTA = 1e-10       # the paper's noise (3) needs delta < 1/n^3 for both datasets
COLUMNS = ["data.source", "problem.loss", "solver.epsilon", "solver.calibration", "excess_risk",
           "ci_half_width", "bound", "lower_bound", "sigma", "certified_epsilon"]


def demo_sweep(replicates=5, seed=0):
    """The demo's sweep (a :class:`dpsolve.experiments.Sweep`); the breast-cancer data only
    when scikit-learn is installed."""
    data = [{"source": "synthetic", "n": 1000, "p": 10}]
    if importlib.util.find_spec("sklearn") is not None:
        data.append({"source": "breast_cancer"})
    return load_sweep({
        "name": "demo", "seed": seed, "replicates": replicates,
        "title": "dpsolve demo: Bassily-Smith-Thakurta 2014 noisy SGD against its bound",
        "data": data,
        "problem": {"loss": ["logistic", "hinge", "squared"], "radius": 1.0},
        "solver": [{"name": "noisy_sgd", "epsilon": EPSILONS, "delta": DELTA,
                    "calibration": ["paper", "rdp"]}],
    })


def run_demo(*, seeds=5, seed=0, out="dpsolve-demo.png", db=None, jobs=None, progress=True,
             stream=None):
    """Run the demo sweep, print its report and write its figure.

    Parameters
    ----------
    seeds : int, default 5
        Replicates per setting.
    seed : int, default 0
        The sweep's root seed.
    out : str, default "dpsolve-demo.png"
        The figure of excess risk against epsilon ('' for none; the format from the suffix).
    db : str, optional
        Keep the results database here (default: a temporary one).
    jobs : int, optional
        Worker processes (default: every core).
    progress : bool, default True
        A progress bar on stderr, drawn only when stderr is a terminal.
    stream : file, optional
        Where the report goes; default ``sys.stdout`` as it is when called (not when this
        module was imported: a redirected or captured stdout is followed).

    Returns
    -------
    list of dict
        The summary cells (:func:`dpsolve.experiments.summarize`).
    """
    stream = sys.stdout if stream is None else stream
    sweep = demo_sweep(seeds, seed)
    if importlib.util.find_spec("sklearn") is None:
        print("scikit-learn is not installed: skipping the breast-cancer data "
              '(pip install "dpsolve[datasets]")', file=sys.stderr)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        path = db or os.path.join(tmp, "demo.db")
        run_sweep(sweep, path, jobs=jobs, progress=progress)
        cells = summarize(path)
        text = report_text(path, cells, columns=COLUMNS)
    print("noisy_sgd (Bassily-Smith-Thakurta 2014, T = n^2 steps) on the mean-form objective "
          f"over the unit ball, delta = {DELTA:g}; excess risk F(theta) - F(theta*), mean over "
          f"{seeds} runs "
          "with its 95% interval (ci_half_width)\n", file=stream)
    print(text, file=stream)
    print("\ncalibration: paper = the noise of Bassily-Smith-Thakurta 2014 as the multi-party "
          "SGD notes state it; rdp = the least noise the RDP "
          "accountant certifies for the same (epsilon, delta). certified_epsilon: what the RDP "
          "accountant certifies for the noise used. bound: Bassily-Smith-Thakurta 2014's upper "
          "bound for Lipschitz losses (mean form, O-constant 1); "
          "lower_bound: Bassily-Smith-Thakurta 2014's lower bound (constant 1). Both are "
          "rates, not exact values. "
          f"theta* certified to within {max(c['reference_gap'] for c in cells):.1e}. "
          f"Total time {time.perf_counter() - start:.1f} s.", file=stream)
    if db:
        print(f"results kept in {db} (dpsolve report {db})", file=stream)
    if out:
        plot_axis(cells, "solver.epsilon", [out], title=sweep.text["title"])
        print(f"figure written to {out}", file=stream)
    return cells
