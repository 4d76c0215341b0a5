"""``dpsolve demo``: private SGD (seed 000, SGD1) against exact minimisers and Theorem 2.

For each dataset and loss: the certified reference minimiser theta*, then ``noisy_sgd`` with the
paper calibration at a few epsilons over several seeds; a table of excess risk (mean form,
mean +- std over seeds) next to Theorem 2's bound and the BST14 lower bound, and a PNG plot.
"""
import concurrent.futures
import math
import os
import sys
import time

import numpy as np

from . import bounds
from .datasets import load_breast_cancer, make_synthetic
from ._noisy_sgd import noisy_sgd
from .problem import Problem
from .reference import excess_risk, reference_minimizer

EPSILONS = (0.1, 0.3, 0.9)
CALIBRATIONS = ("paper", "rdp")
LOSSES = ("logistic", "hinge", "squared")


def _datasets(seed):
    sets = [("synthetic (n=1000, p=10)",) + make_synthetic(1000, 10, rng=seed)]
    try:
        sets.append(("breast cancer (n=569, p=30)",) + load_breast_cancer())
    except ImportError:
        print("scikit-learn is not installed: skipping the breast-cancer data "
              '(pip install "dpsolve[datasets]")', file=sys.stderr)
    return sets


def run_demo(*, seeds=5, seed=0, out="dpsolve-demo.png", radius=1.0, stream=sys.stdout):
    """Run the demo and return its rows (one dict per dataset, loss and epsilon)."""
    rows = []
    datasets = _datasets(seed)
    cells = len(datasets) * len(LOSSES)
    start = time.perf_counter()
    header = (f"{'dataset':<28} {'loss':<9} {'eps':>4} {'calib':<6} {'sigma':>9} {'eps_rdp':>8} "
              f"{'excess risk':>20} {'Thm 2 bound':>11} {'lower bd':>9}")
    print("noisy_sgd (seed 000, SGD1, T = n^2 steps) on the mean-form objective, ball radius "
          f"{radius:g}; excess risk = F(theta) - F(theta*), mean +- std over {seeds} seeds",
          file=stream)
    print(header + "\n" + "-" * len(header), file=stream)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for d, (name, X, y) in enumerate(datasets):
            n = X.shape[0]
            delta = 0.1 / n ** 3   # the paper calibration needs delta < 1/n^3
            for k, loss in enumerate(LOSSES):
                cell = d * len(LOSSES) + k + 1
                print(f"[{cell}/{cells}] {name}, {loss}: solving for theta* ...",
                      file=sys.stderr, flush=True)
                problem = Problem(X, y, loss, radius=radius)
                reference = reference_minimizer(problem)
                settings = [(eps, c) for eps in EPSILONS for c in CALIBRATIONS] + [(math.inf, "none")]
                for e, (eps, calibration) in enumerate(settings):
                    rngs = [np.random.SeedSequence([seed, d, k, e, r]) for r in range(seeds)]
                    row = _row(pool, problem, reference, eps, delta, calibration, rngs)
                    row.update(dataset=name, loss=loss)
                    rows.append(row)
                    dash = f"{'-':>11} {'-':>9}"
                    bounds_text = (f"{row['bound']:>11.3g} {row['lower']:>9.3g}"
                                   if math.isfinite(eps) else dash)
                    print(f"{name:<28} {loss:<9} {eps:>4g} {calibration:<6} {row['sigma']:>9.3g} "
                          f"{row['certified_epsilon']:>8.3f} "
                          f"{row['mean']:>9.3g} +- {row['std']:<8.2g} {bounds_text}",
                          file=stream, flush=True)
    print(f"\ncalib: paper = noise (3) of seed 000; rdp = the least noise the RDP accountant "
          f"certifies for the same (eps, delta); eps = inf: the same SGD without noise. eps_rdp: "
          f"the epsilon the RDP accountant certifies for the noise used. Theorem 2 (case 1, mean "
          f"form, O-constant 1) and the BST14 lower bound are rates, not exact values. theta* "
          f"certified to within "
          f"{max(r['reference_gap'] for r in rows):.1e}. "
          f"Total time {time.perf_counter() - start:.1f} s.", file=stream)
    if out:
        plot_demo(rows, out)
        print(f"plot written to {out}", file=stream)
    return rows


def _row(pool, problem, reference, eps, delta, calibration, rngs):
    """Excess risk of noisy_sgd over the given seeds; eps = inf runs it without noise."""
    if math.isfinite(eps):
        run = lambda g: noisy_sgd(problem, eps, delta, calibration=calibration, rng=g)  # noqa: E731
    else:
        run = lambda g: noisy_sgd(problem, sigma=0.0, delta=delta, rng=g)  # noqa: E731
    fits = list(pool.map(run, rngs))    # the kernels release the GIL: seeds run in parallel
    risks = np.array([excess_risk(problem, f.theta, reference) for f in fits])
    row = dict(epsilon=eps, delta=delta, calibration=calibration, sigma=fits[0].sigma,
               certified_epsilon=fits[0].certified_epsilon(), mean=float(risks.mean()),
               std=float(risks.std(ddof=1)) if len(rngs) > 1 else 0.0,
               reference_gap=reference.gap)
    if math.isfinite(eps):
        row.update(bound=bounds.sgd1_lipschitz_bound(problem, eps, delta),
                   lower=bounds.lower_bound_lipschitz(problem, eps))
    return row


def plot_demo(rows, path):
    """Excess risk against epsilon (log-log), one panel per dataset, bounds dashed, the noise-free
    run as a horizontal line."""
    from matplotlib.figure import Figure

    names = list(dict.fromkeys(r["dataset"] for r in rows))
    fig = Figure(figsize=(5.5 * len(names), 5.5), layout="constrained")
    axes = fig.subplots(1, len(names), squeeze=False)[0]
    colours = dict(zip(LOSSES, ("tab:blue", "tab:orange", "tab:green")))
    for ax, name in zip(axes, names):
        for loss in LOSSES:
            sel = [r for r in rows if r["dataset"] == name and r["loss"] == loss]
            private = [r for r in sel if r["calibration"] == "paper"]
            if not private:
                continue
            eps = [r["epsilon"] for r in private]
            for calibration, face in (("paper", colours[loss]), ("rdp", "white")):
                cal = [r for r in sel if r["calibration"] == calibration]
                ax.errorbar(eps, [r["mean"] for r in cal], yerr=[r["std"] for r in cal],
                            marker="o", mfc=face, capsize=3, color=colours[loss],
                            label=f"{loss}: noisy_sgd, {calibration} noise")
            ax.plot(eps, [r["bound"] for r in private], "--", color=colours[loss],
                    label=f"{loss}: Theorem 2 bound")
            ax.plot(eps, [r["lower"] for r in private], ":", color=colours[loss],
                    label=f"{loss}: lower bound")
            for r in sel:
                if not math.isfinite(r["epsilon"]) and r["mean"] > 0:
                    ax.axhline(r["mean"], color=colours[loss], lw=0.8, ls="-.",
                               label=f"{loss}: same SGD without noise")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("privacy budget epsilon (delta = 0.1 / n^3)")
        ax.set_ylabel("excess risk F(theta) - F(theta*) (mean form)")
        ax.set_title(name)
        ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=3, fontsize=8)
    fig.suptitle("dpsolve demo: SGD1 (seed 000) with paper noise (3) and RDP-calibrated noise; "
                 "logistic and hinge share their bounds (same L)", fontsize=10)
    fig.savefig(path, dpi=120)
