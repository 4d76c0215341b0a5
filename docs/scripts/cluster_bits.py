"""Whether each solver gives the same bits on a Dask cluster as in the local pool at a size where
BLAS would split its sums by its thread count (docs/cluster.md, "Same bits"):

    python docs/scripts/cluster_bits.py

One run per solver at n = 10⁵, p = 50, on the local pool (one process) and on a two-worker
LocalCluster, each with its own theta* cache; prints each solver's theta hash on both and the
optimum theta* value.
"""
import json
import os
import tempfile
from pathlib import Path

from dpsolve import experiments
from dpsolve.experiments.cluster import connect

SWEEP = {"name": "bits", "seed": 3, "replicates": 1,
         "data": {"source": "synthetic", "n": 100_000, "p": 50},
         "problem": {"loss": "logistic", "radius": "none", "reg": 1e-3},
         "solver": [{"name": "output_perturbation", "epsilon": 1.0},
                    {"name": "objective_perturbation", "epsilon": 1.0},
                    {"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6, "steps": 20}]}


def results(path):
    out = {}
    for row in experiments.ResultStore(path).rows():
        spec = json.loads(row["spec"]) if isinstance(row["spec"], str) else row["spec"]
        result = json.loads(row["result"]) if isinstance(row["result"], str) else row["result"]
        out[spec["solver"]["name"]] = (result["theta_sha256"][:12], result["optimum"])
    return out


def main():
    with tempfile.TemporaryDirectory() as tmp:
        local, remote = Path(tmp) / "local.db", Path(tmp) / "remote.db"
        # each side solves its own theta* (a shared cache would hand the cluster the local one)
        os.environ["DPSOLVE_CACHE"] = str(Path(tmp) / "local-cache")
        experiments.run_sweep(SWEEP, local, jobs=1, progress=False)
        os.environ["DPSOLVE_CACHE"] = str(Path(tmp) / "cluster-cache")   # the workers' env
        client, cluster = connect("local:2")
        try:
            experiments.run_sweep(SWEEP, remote, client=client, progress=False)
        finally:
            client.close()
            cluster.close()
        a, b = results(local), results(remote)
    print("| solver | theta hash, local pool | on the cluster | same bits | optimum (both) |")
    print("|---|---|---|---|---|")
    for name in a:
        print(f"| {name} | {a[name][0]} | {b[name][0]} | {'yes' if a[name] == b[name] else 'no'} "
              f"| {a[name][1]!r} / {b[name][1]!r} |")


if __name__ == "__main__":
    main()
