"""The speed-up table of docs/cluster.md: sweeps of runs that take about a second each, on a
Dask LocalCluster of 1, 2 and 4 worker processes, against the local process pool: one of
clipped_gd (its kernel already runs on every core a worker has) and one of noisy_sgd (a
sequential kernel).

    python docs/scripts/cluster_speedup.py [--runs 24]

Each configuration starts from an empty results database and a warm theta* cache (solved once
before timing), so the times are the runs' and the scheduling's. The cluster's start-up is timed
apart.
"""
import argparse
import tempfile
import time
from pathlib import Path

from dpsolve import experiments
from dpsolve.experiments.cluster import connect


SOLVERS = {
    "clipped_gd (n = 20,000, p = 20, 3,000 steps; parallel kernel)":
        {"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6, "steps": 3000},
    "noisy_sgd (n = 20,000, p = 20, 1.4e7 steps; sequential kernel)":
        {"name": "noisy_sgd", "epsilon": 1.0, "delta": 1e-6, "steps": 14_000_000,
         "calibration": "rdp"},
}


def sweep(runs, solver):
    return {"name": "speed", "seed": 1, "replicates": runs,
            "data": {"source": "synthetic", "n": 20_000, "p": 20},
            "problem": {"loss": "logistic", "radius": 1.0, "reg": 1e-3},
            "solver": [solver]}


def measure(spec):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for jobs in (1, 2):
            start = time.perf_counter()
            experiments.run_sweep(spec, Path(tmp) / f"pool{jobs}.db", jobs=jobs, progress=False)
            rows.append((f"local pool, {jobs} process(es)", time.perf_counter() - start, None))
        for workers in (1, 2, 4):
            start = time.perf_counter()
            client, cluster = connect(f"local:{workers}")
            startup = time.perf_counter() - start
            try:
                start = time.perf_counter()
                experiments.run_sweep(spec, Path(tmp) / f"dask{workers}.db", client=client,
                                      progress=False)
                rows.append((f"LocalCluster, {workers} worker(s)",
                             time.perf_counter() - start, startup))
            finally:
                client.close()
                cluster.close()
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=24)
    args = parser.parse_args()
    print("| sweep | configuration | sweep time (s) | speed-up over one local process | "
          "cluster start-up (s) |")
    print("|---|---|---|---|---|")
    for label, solver in SOLVERS.items():
        spec = sweep(args.runs, solver)
        experiments.execute(experiments.load_sweep(spec).runs()[0], 1)   # warm theta*
        rows = measure(spec)
        base = rows[0][1]
        for name, seconds, startup in rows:
            print(f"| {args.runs} runs of {label} | {name} | {seconds:.1f} | "
                  f"{base / seconds:.2f} | {'' if startup is None else f'{startup:.1f}'} |")


if __name__ == "__main__":
    main()
