"""Fit a float32 X kept on disk (np.memmap): clipped_gd and a certified θ*, with the memory used.

Writes an n x p float32 file of rows of norm at most 1 (and the -1/+1 labels of a planted
logistic model) once, then runs each job in a fresh interpreter that opens the file read-only
(``np.memmap(mode="r")``), builds a ``Problem(..., clip_rows=False)`` (no copy of X), and reports:

- the wall time of the job (the Problem's one pass over X for the row norms included);
- the peak of what Python and NumPy allocated (``tracemalloc``), i.e. memory beyond X;
- the peak resident set (``ru_maxrss``), which counts the pages of the file the job touched.

Run as ``python docs/scripts/beyond_memory.py --n 10000000 --p 100 --path /tmp/x.f32.npy`` (the
file takes 4 n p bytes of disk; docs/performance.md quotes the figures of n = 10^7, p = 100).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

JOBS = ("clipped_gd", "reference")


def write_data(path, n, p, seed=0):
    """The rows (float32, norms <= 1) at ``path`` and the labels at ``path + ".y.npy"``."""
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal(p)
    theta *= 3.0 / np.linalg.norm(theta)
    X = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, p))
    y = np.empty(n)
    for start in range(0, n, 1 << 16):
        block = rng.standard_normal((min(1 << 16, n - start), p))
        block /= np.linalg.norm(block, axis=1)[:, None]
        block *= rng.random(block.shape[0])[:, None]
        rows = block.astype(np.float32)
        # a row rounded to float32 may lie an ulp outside the unit ball: pull it back inside
        norms = np.linalg.norm(rows.astype(np.float64), axis=1)
        rows[norms > 1.0] *= np.float32(1.0 - 2.0 ** -20)
        X[start:start + rows.shape[0]] = rows
        z = rows.astype(np.float64) @ theta
        y[start:start + rows.shape[0]] = np.where(rng.random(rows.shape[0])
                                                  < 1.0 / (1.0 + np.exp(-z)), 1.0, -1.0)
    X.flush()
    del X
    np.save(path + ".y.npy", y)


def run_job(job, path, steps=None):
    """Run one job on the memory-mapped file (``steps``: clipped_gd's, None for its default);
    returns its measurements (a dict)."""
    import resource
    import tracemalloc

    import dpsolve
    from dpsolve.reference import reference_minimizer

    X = np.load(path, mmap_mode="r")
    y = np.load(path + ".y.npy")
    tracemalloc.start()
    start = time.perf_counter()
    problem = dpsolve.Problem(X, y, "logistic", radius=5.0, reg=1e-4, row_norm=1.0,
                              clip_rows=False)
    built = time.perf_counter() - start
    result = {"job": job, "n": problem.n, "p": problem.p, "dtype": str(problem.X.dtype),
              "X_copied": not np.shares_memory(problem.X, X), "problem_seconds": built}
    if job == "clipped_gd":
        fit = dpsolve.clipped_gd(problem, epsilon=1.0, delta=1.0 / problem.n ** 1.1,
                                 steps=steps, rng=0)
        result["steps"] = fit.steps
    else:
        solution = reference_minimizer(problem, cache=False)
        result["gap"] = solution.gap
        result["method"] = solution.solver
    result["seconds"] = time.perf_counter() - start
    result["tracemalloc_peak_bytes"] = tracemalloc.get_traced_memory()[1]
    result["max_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    result["X_bytes"] = X.nbytes
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--p", type=int, default=100)
    parser.add_argument("--path", default="/tmp/dpsolve_beyond_memory.f32.npy")
    parser.add_argument("--steps", type=int, default=100,
                        help="clipped_gd's steps (its default, at n = 10^7, is thousands)")
    parser.add_argument("--job", choices=JOBS, help="run one job here (used by the driver)")
    args = parser.parse_args(argv)
    if args.job:
        print(json.dumps(run_job(args.job, args.path, args.steps)))
        return
    if not os.path.exists(args.path):
        write_data(args.path, args.n, args.p)
    for job in JOBS:
        out = subprocess.run([sys.executable, __file__, "--job", job, "--path", args.path,
                              "--steps", str(args.steps)],
                             check=True, capture_output=True, text=True).stdout
        result = json.loads(out.strip().splitlines()[-1])
        gb = 1e9
        print(f"{job}: {result['seconds']:.1f} s (Problem {result['problem_seconds']:.1f} s), "
              f"X {result['X_bytes'] / gb:.2f} GB {result['dtype']} copied={result['X_copied']}, "
              f"allocated beyond X {result['tracemalloc_peak_bytes'] / gb:.3f} GB, "
              f"peak RSS {result['max_rss_bytes'] / gb:.2f} GB"
              + (f", gap {result['gap']:.2e} ({result['method']})" if "gap" in result else "")
              + (f", {result['steps']} steps" if "steps" in result else ""))
        if "steps" in result:
            print(f"  {(result['seconds'] - result['problem_seconds']) / result['steps']:.3f} s "
                  "a step")


if __name__ == "__main__":
    main()
