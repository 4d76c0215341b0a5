"""Rows on a Dask cluster against the same rows in one process: DP-GD steps and θ*.

Splits an n x p float32 ``.npy`` file (as docs/scripts/beyond_memory.py writes it) into
row-chunk files ``x_000.npy, ...`` with their labels ``y_000.npy, ...`` (once), then times, on
the same data:

- in one process: ``Problem`` on the whole file memory-mapped (no copy), ``clipped_gd`` with a
  fixed number of steps, and ``reference_minimizer`` (θ*);
- in one process, the same chunks (``RowChunks.from_npy`` without a client): the reference for
  bit-identity;
- on a ``LocalCluster`` of worker processes (one thread each), each worker memory-mapping its
  chunk files: the same calls, checked bit for bit against the local chunks, and each worker's
  peak resident memory.

Run as ``python docs/scripts/cluster_rows.py --path /tmp/x.f32.npy --chunks 10``
(docs/cluster.md quotes the figures of n = 10^7, p = 100, two workers).
"""
import argparse
import glob
import hashlib
import os
import time

import numpy as np

STEPS = 20


def split(path, n_chunks):
    """Row-chunk files beside ``path`` (``<path>.chunks/x_###.npy`` and ``y_###.npy``)."""
    folder = path + ".chunks"
    xs = sorted(glob.glob(os.path.join(folder, "x_*.npy")))
    if len(xs) == n_chunks:
        return xs, sorted(glob.glob(os.path.join(folder, "y_*.npy")))
    os.makedirs(folder, exist_ok=True)
    X = np.load(path, mmap_mode="r")
    y = np.load(path + ".y.npy")
    bounds = np.linspace(0, X.shape[0], n_chunks + 1).astype(int)
    for c, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        np.save(os.path.join(folder, f"x_{c:03d}.npy"), X[a:b])
        np.save(os.path.join(folder, f"y_{c:03d}.npy"), y[a:b])
    return split(path, n_chunks)


def _peak_rss():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _memory():
    """This process's memory: resident (file pages of its memory-mapped chunks included),
    unique (its own pages: neither file pages nor shared ones) and proportional (shared pages
    divided among the processes mapping them)."""
    import psutil
    info = psutil.Process().memory_full_info()
    return {"rss": info.rss, "uss": info.uss, "pss": info.pss}


def jobs(make_problem, keep=None):
    """Time clipped_gd (STEPS steps) and θ* on the Problem ``make_problem()`` builds (put in
    ``keep["problem"]`` if given)."""
    import dpsolve
    out = {}
    start = time.perf_counter()
    problem = make_problem()
    if keep is not None:
        keep["problem"] = problem
    out["problem_s"] = time.perf_counter() - start
    start = time.perf_counter()
    fit = dpsolve.clipped_gd(problem, epsilon=1.0, delta=1e-8, steps=STEPS, rng=0)
    out["step_s"] = (time.perf_counter() - start) / STEPS
    out["clipped_gd"] = hashlib.sha256(fit.theta.tobytes()).hexdigest()[:16]
    start = time.perf_counter()
    solution = dpsolve.reference_minimizer(problem, cache=False)
    out["theta_star_s"] = time.perf_counter() - start
    out["theta_star"] = hashlib.sha256(solution.theta.tobytes()).hexdigest()[:16]
    out["gap"] = solution.gap
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", default="/tmp/dpsolve_beyond_memory.f32.npy")
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    from dask.distributed import Client, LocalCluster

    import dpsolve
    from dpsolve.chunked import RowChunks

    xs, ys = split(args.path, args.chunks)
    params = dict(loss="logistic", radius=5.0, reg=1e-4, row_norm=1.0, clip_rows=False)
    whole = jobs(lambda: dpsolve.Problem(np.load(args.path, mmap_mode="r"),
                                         np.load(args.path + ".y.npy"), **params))
    print("one process, one array:", whole, f"peak RSS {_peak_rss() / 1e9:.2f} GB")
    local = jobs(lambda: dpsolve.Problem(RowChunks.from_npy(xs, ys), None, **params))
    print("one process, the chunks:", local)
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      memory_limit=0) as cluster, Client(cluster) as client:
        kept = {}
        remote = jobs(lambda: dpsolve.Problem(RowChunks.from_npy(xs, ys, client=client), None,
                                              **params), kept)
        memory = client.run(_memory)
        homes = kept["problem"].X._backend.homes()
    print(f"cluster of {args.workers} workers:", remote)
    for worker, m in memory.items():
        held = sum(os.path.getsize(x) for x, home in zip(xs, homes) if worker in home)
        print(f"worker {worker}: chunks {held / 1e9:.2f} GB, resident {m['rss'] / 1e9:.2f} GB, "
              f"own {m['uss'] / 1e9:.2f} GB, proportional {m['pss'] / 1e9:.2f} GB")
    same = all(local[k] == remote[k] for k in ("clipped_gd", "theta_star"))
    print("cluster bit-identical to the same chunks in one process:", same)


if __name__ == "__main__":
    main()
