"""Dask (docs/cluster.md, docs/multiparty.md "Parties on workers"), on a two-worker
LocalCluster started in ``setup``:

* ``RemoteParties``: SGD2 (``multiparty_gd``, ``noise="per_party"``, 50 iterations) with two
  parties on the workers against the same parties in this process, n = 10⁵, p = 20. Tracked:
  the ratio (the network round trip per iteration over the in-process iteration).
* ``ClusterSweep``: a sweep of 12 runs of about 0.3 s on the cluster (already started) against
  the local pool with one process (started by the sweep: about a second), warm theta* cache.
  Tracked: the ratio; on this two-core machine the kernels already use both cores, so about 1
  (docs/cluster.md).

Run directly (``python -m benchmarks.bench_cluster``) to print the measurements.
"""
import tempfile
from pathlib import Path

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
