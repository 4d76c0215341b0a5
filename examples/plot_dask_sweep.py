r"""
A sweep on a local Dask cluster
===============================

A sweep runs solvers over a grid of settings and stores every run in an SQLite database as it
finishes, so an interrupted sweep resumes where it stopped. Its runs are independent, so
:func:`dpsolve.experiments.run_sweep` can hand them to a Dask cluster (``client=``): one
reference solve per distinct problem first, then the runs, each given its problem's θ*; the
results come back to this process, which commits them. Here a tiny sweep of DP-GD (the DP-GD
lecture notes' algorithm, clipping as in Abadi et al. 2016) runs on a two-worker
:class:`distributed.LocalCluster`, and the report compares its excess risk with the bound of
:func:`dpsolve.bounds.clipped_gd_bound`. Any run can be replayed from its spec: the same seed
gives the same bits on a cluster as on a laptop.
"""

# %%
# The sweep
# ---------
# The same structure as a TOML sweep file (``dpsolve run sweep.toml``): list values are grid
# axes. 3 sizes × 2 ε × 4 replicates = 24 runs.
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
from distributed import Client, LocalCluster

from dpsolve.experiments import load_sweep, report_text, run_sweep, summarize

sweep = load_sweep({
    "name": "dpgd-tiny",
    "seed": 0,
    "replicates": 4,
    "data": {"source": "synthetic", "n": [500, 1000, 2000], "p": 10},
    "problem": {"loss": "logistic", "radius": 1.0},
    "solver": [{"name": "clipped_gd", "epsilon": [0.5, 2.0], "delta": 1e-6}],
})
print(len(sweep.runs()), "runs")

# %%
# Run it on two workers
# ---------------------
# Two workers of one thread each. Here they run inside this process (``processes=False``),
# which starts in a fraction of a second and needs no ``if __name__ == "__main__":`` guard; on
# a real cluster (``processes=True``, or ``dask-jobqueue`` on SLURM) only the client changes.
# The cluster and its client are closed when the block ends.
folder = tempfile.TemporaryDirectory()
database = Path(folder.name) / "results.db"
with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                  dashboard_address=None) as cluster, Client(cluster) as client:
    counts = run_sweep(sweep, database, client=client, progress=False)
print(counts)

# %%
# Run again and nothing is recomputed: every run is already in the database.
print(run_sweep(sweep, database, progress=False))

# %%
# The report
# ----------
# Per grid cell: the mean excess risk with its 95% interval, the bound and their ratio; then
# the fitted log-log slope against n next to the bound's.
cells = summarize(database)
print(report_text(database, cells=cells,
                  columns=["data.n", "solver.epsilon", "runs", "excess_risk", "ci_half_width",
                           "bound", "ratio_to_bound"]))

fig, ax = plt.subplots(figsize=(6, 4))
for k, epsilon in enumerate(sorted({c["solver.epsilon"] for c in cells})):
    rows = sorted((c for c in cells if c["solver.epsilon"] == epsilon), key=lambda c: c["data.n"])
    n = [c["data.n"] for c in rows]
    ax.errorbar(n, [c["excess_risk"] for c in rows], yerr=[c["ci_half_width"] for c in rows],
                fmt="o-", color=f"C{k}", capsize=3, label=f"measured, ε = {epsilon:g}")
    ax.plot(n, [c["bound"] for c in rows], "--", color=f"C{k}", label=f"bound, ε = {epsilon:g}")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xticks(n, [str(size) for size in n])
ax.minorticks_off()
ax.set_xlabel("n")
ax.set_ylabel("excess risk")
ax.set_title("clipped_gd on a 2-worker LocalCluster (4 runs per cell)")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
folder.cleanup()
