"""Dask (docs/cluster.md, docs/multiparty.md "Parties on workers"), on a two-worker
LocalCluster started in ``setup``:

* ``RemoteParties``: SGD2 (``multiparty_gd``, ``noise="per_party"``, 50 iterations) with two
  parties on the workers against the same parties in this process, n = 10⁵, p = 20. Tracked:
  the ratio (the network round trip per iteration over the in-process iteration).
* ``ClusterSweep``: a sweep of 12 runs of about 0.3 s on the cluster (already started) against
  the local pool with one process (started by the sweep: about a second), warm theta* cache.
  Tracked: the ratio; on this two-core machine the kernels already use both cores, so about 1
  (docs/cluster.md).
* ``RowsOnWorkers``: n = 10⁷, p = 100 float32 rows (4 GB) in ten ``.npy`` chunk files, held by
  a two-worker LocalCluster (each worker memory-maps its chunks) against the same chunk files in
  this process: one ``clipped_gd`` step and θ*. Tracked: the ratios, and the workers' peak
  resident memory (docs/cluster.md, "Rows on the workers").

Run directly (``python -m benchmarks.bench_cluster``) to print the measurements.
"""
import os
import resource
import tempfile
from pathlib import Path

import numpy as np

import dpsolve
from dpsolve import experiments

from .common import best_time

SWEEP = {"name": "bench", "seed": 1, "replicates": 12,
         "data": {"source": "synthetic", "n": 20_000, "p": 20},
         "problem": {"loss": "logistic", "radius": 1.0, "reg": 1e-3},
         "solver": [{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6, "steps": 1500}]}


def _cluster():
    import distributed
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    return cluster, distributed.Client(cluster)


class RemoteParties:
    """SGD2 with its parties on two workers, against in process."""

    timeout = 300

    def setup(self):
        self.cluster, self.client = _cluster()
        X, y = dpsolve.datasets.make_synthetic(100_000, 20, rng=0)
        self.problem = dpsolve.Problem(X, y, radius=1.0, reg=1e-3)
        self.parties = dpsolve.Parties.from_sizes(self.problem, [50_000, 50_000])
        self.remote = self.parties.on(self.client)

    def teardown(self):
        self.client.close()
        self.cluster.close()

    def _here(self):
        dpsolve.multiparty_gd(self.problem, self.parties, 1.0, 1e-6, steps=50, rng=0)

    def _there(self):
        dpsolve.multiparty_gd(self.problem, self.remote, 1.0, 1e-6, steps=50, rng=0)

    def time_on_workers(self):
        self._there()

    def time_in_process(self):
        self._here()

    def track_on_workers_over_in_process(self):
        return best_time(self._there, repeat=3) / best_time(self._here, repeat=3)

    track_on_workers_over_in_process.unit = "ratio (round trips: about 3 ms per iteration)"


class ClusterSweep:
    """A small sweep on the two-worker cluster against the local pool (one process)."""

    timeout = 300
    number, repeat, warmup_time = 1, 1, 0.0

    def setup(self):
        self.cluster, self.client = _cluster()
        experiments.execute(experiments.load_sweep(SWEEP).runs()[0], 1)     # warm theta*
        self.tmp = tempfile.TemporaryDirectory()
        self.count = 0

    def teardown(self):
        self.client.close()
        self.cluster.close()
        self.tmp.cleanup()

    def _db(self):
        self.count += 1
        return Path(self.tmp.name) / f"{self.count}.db"

    def _cluster_sweep(self):
        experiments.run_sweep(SWEEP, self._db(), client=self.client, progress=False)

    def _pool_sweep(self):
        experiments.run_sweep(SWEEP, self._db(), jobs=1, progress=False)

    def time_cluster_sweep(self):
        self._cluster_sweep()

    def track_cluster_over_pool(self):
        return (best_time(self._cluster_sweep, repeat=1, min_time=0.0)
                / best_time(self._pool_sweep, repeat=1, min_time=0.0))

    track_cluster_over_pool.unit = "ratio"


def _peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class RowsOnWorkers:
    """A clipped_gd step and θ* on 10⁷ x 100 float32 rows held by two workers, against the same
    chunk files memory-mapped in this process (the same sums in the same order: the same bits)."""

    n, p, n_chunks = 10_000_000, 100, 10
    steps = 5
    timeout = 3600
    number, repeat, warmup_time = 1, 1, 0.0
    PARAMS = dict(loss="logistic", radius=5.0, reg=1e-4, row_norm=1.0, clip_rows=False)

    def setup_cache(self):
        # asv runs setup_cache in a temporary working directory, removed after the class
        folder = os.path.abspath("dpsolve-rows")
        os.makedirs(folder, exist_ok=True)
        rng = np.random.default_rng(0)
        theta = rng.standard_normal(self.p)
        rows = self.n // self.n_chunks
        for c in range(self.n_chunks):
            X = rng.standard_normal((rows, self.p), dtype=np.float32)
            X /= np.linalg.norm(X.astype(np.float64), axis=1).astype(np.float32)[:, None] * 1.01
            z = X.astype(np.float64) @ theta
            y = np.where(rng.random(rows) < 1.0 / (1.0 + np.exp(-z)), 1.0, -1.0)
            np.save(os.path.join(folder, f"x_{c:03d}.npy"), X)
            np.save(os.path.join(folder, f"y_{c:03d}.npy"), y)
        return folder

    setup_cache.timeout = 1800

    def setup(self, folder):
        from dpsolve.chunked import RowChunks
        xs = sorted(str(f) for f in Path(folder).glob("x_*.npy"))
        ys = sorted(str(f) for f in Path(folder).glob("y_*.npy"))
        self.cluster, self.client = _cluster()
        self.here = dpsolve.Problem(RowChunks.from_npy(xs, ys), None, **self.PARAMS)
        self.there = dpsolve.Problem(RowChunks.from_npy(xs, ys, client=self.client), None,
                                     **self.PARAMS)

    def teardown(self, folder):
        self.client.close()
        self.cluster.close()

    def _steps(self, problem):
        dpsolve.clipped_gd(problem, epsilon=1.0, delta=1e-8, steps=self.steps, rng=0)

    def time_step_on_workers(self, folder):
        self._steps(self.there)

    def time_step_in_process(self, folder):
        self._steps(self.here)

    def track_step_on_workers_over_in_process(self, folder):
        return (best_time(lambda: self._steps(self.there), repeat=2, min_time=0.0)
                / best_time(lambda: self._steps(self.here), repeat=2, min_time=0.0))

    track_step_on_workers_over_in_process.unit = "ratio"

    def track_theta_star_on_workers_over_in_process(self, folder):
        from dpsolve.reference import reference_minimizer
        there = best_time(lambda: reference_minimizer(self.there, cache=False), repeat=1,
                          min_time=0.0)
        here = best_time(lambda: reference_minimizer(self.here, cache=False), repeat=1,
                         min_time=0.0)
        return there / here

    track_theta_star_on_workers_over_in_process.unit = "ratio"

    def track_worker_peak_memory_over_chunks(self, folder):
        self._steps(self.there)
        chunk_bytes = self.n * self.p * 4 / len(self.client.scheduler_info()["workers"])
        return max(self.client.run(_peak_rss).values()) / chunk_bytes

    track_worker_peak_memory_over_chunks.unit = "ratio (peak RSS over a worker's share of X)"


def main():
    bench = RemoteParties()
    bench.setup()
    try:
        print(f"SGD2 on workers / in process: {bench.track_on_workers_over_in_process():.2f}")
    finally:
        bench.teardown()
    sweep = ClusterSweep()
    sweep.setup()
    try:
        print(f"sweep on the cluster / local pool: {sweep.track_cluster_over_pool():.2f}")
    finally:
        sweep.teardown()


if __name__ == "__main__":
    main()
