"""Time per SGD1 step against p: dpsolve (one and two threads), NumPy, and NumPy's noise alone.

    python docs/scripts/sgd_step_speed.py [--steps 1000000] [--out docs/figures]

Logistic loss, n = 10^4 unit rows, ball radius 1, sigma = 100, one call of the kernel per
measurement (best of five). The floor is what NumPy's ``Generator.standard_normal`` needs to draw
one step's p values when it draws many steps at once (``standard_normal((steps, p))``): the
performance target is that the whole dpsolve step costs no more than that. "NumPy loop" is SGD1
written with one vectorised NumPy step per Python iteration (``benchmarks/common.py``). Prints a
table and writes ``sgd_step_speed.png`` and ``.svg``.
"""
import argparse
import os
import sys

import numpy as np

import dpsolve
from dpsolve._kernels import sgd
from dpsolve._kernels import threads as thread_control
from dpsolve.privacy import Stream

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from benchmarks.common import best_time, noisy_sgd_numpy  # noqa: E402

P_VALUES = [2, 5, 10, 20, 50, 100, 200, 500, 1000]


def kernel_step(problem, steps, threads):
    before = thread_control.max_threads()
    thread_control.set_num_threads(threads)
    try:
        def run():
            g = np.random.default_rng(0)
            sgd.noisy_sgd_steps(problem.X, problem.y, problem.loss_object.kernel_id, problem.loss_object.kernel_param,
                                np.zeros(problem.p), 1, steps + 1, 100.0, 0, 0.01, 0.0, 1.0,
                                Stream.from_generator(g), Stream.from_generator(g))
        return best_time(run, repeat=5, min_time=0.0) / steps
    finally:
        thread_control.set_num_threads(before)


def measure(p, steps):
    X, y = dpsolve.datasets.make_synthetic(10_000, p, rng=0)
    problem = dpsolve.Problem(X, y, "logistic", radius=1.0)
    rng = np.random.default_rng(0)
    bulk_steps = max(1, min(steps, 20_000_000 // p))     # at most 160 MB of noise at once
    loop_steps = 20_000
    return {
        "p": p,
        "dpsolve, 2 threads": kernel_step(problem, steps, 2),
        "dpsolve, 1 thread": kernel_step(problem, steps, 1),
        "NumPy loop": best_time(lambda: noisy_sgd_numpy(X, y, loop_steps, 100.0, 0.01, 1.0, rng),
                                repeat=3, min_time=0.0) / loop_steps,
        "floor: NumPy's noise alone, in bulk": best_time(
            lambda: rng.standard_normal((bulk_steps, p)), repeat=5, min_time=0.0) / bulk_steps,
    }


def plot(rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    styles = {"dpsolve, 2 threads": "o-", "dpsolve, 1 thread": "s--", "NumPy loop": "^-",
              "floor: NumPy's noise alone, in bulk": "k:"}
    ps = [r["p"] for r in rows]
    for name, style in styles.items():
        ax.plot(ps, [r[name] * 1e9 for r in rows], style, label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("p (features)")
    ax.set_ylabel("time per SGD1 step (ns)")
    ax.set_title("noisy_sgd (SGD1), logistic, n = 10⁴")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths = [os.path.join(out, f"sgd_step_speed.{ext}") for ext in ("png", "svg")]
    with matplotlib.rc_context({"svg.hashsalt": "dpsolve"}):
        for path in paths:
            fig.savefig(path, dpi=120, metadata={"Date": None} if path.endswith(".svg") else {})
    return paths


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "figures"))
    args = parser.parse_args()
    rows = [measure(p, args.steps) for p in P_VALUES]
    names = list(rows[0])[1:]
    print("| p | " + " | ".join(f"{n} (ns)" for n in names) + " | 2 threads / floor |")
    print("|---" * (len(names) + 2) + "|")
    for r in rows:
        cells = " | ".join(f"{r[n] * 1e9:,.0f}" for n in names)
        ratio = r["dpsolve, 2 threads"] / r["floor: NumPy's noise alone, in bulk"]
        print(f"| {r['p']} | {cells} | {ratio:.2f} |")
    for path in plot(rows, args.out):
        print("wrote", os.path.relpath(path))


if __name__ == "__main__":
    main()
