"""Experiment sweeps: the parallel runner against the same runs one after the other, and the
measured excess risk against each theorem's bound on small fixed problems.

asv benchmark classes: ``time_*`` (the runner; both in the same run, so their ratio is the
speed-up of two worker processes) and ``track_*`` (excess risk / bound: a change in a solver's
accuracy shows up as a jump). Also runnable directly::

    python benchmarks/bench_experiments.py
"""
import os
import shutil
import tempfile
import time

import numpy as np

from dpsolve.experiments import execute, load_sweep, run_sweep, summarize

# SGD1 (a serial kernel) and SGD2 on four parties (an OpenMP kernel: workers that each took
# every core slowed each other down, up to 142 s for a run that takes 0.6 s alone, before they
# shared the cores). Eight runs of one to three seconds, each with its own noise calibration.
RUNNER = {
    "name": "bench-runner", "seed": 0, "replicates": 1,
    "data": {"source": "synthetic", "n": 4000, "p": 10},
    "problem": {"loss": "logistic", "radius": 1.0, "reg": 0.05},
    "solver": [{"name": "noisy_sgd", "epsilon": [0.3, 0.5, 0.7, 0.9], "delta": 1e-12,
                "calibration": "rdp"},
               {"name": "multiparty_gd", "parties": 4, "epsilon": [0.5, 1.0], "delta": 1e-6,
                "steps": 3000, "calibration": ["paper", "pld"]}],
}


# One cell per theorem, n = 2000, p = 10, five replicates: excess risk / bound.
DATA = {"source": "synthetic", "n": 2000, "p": 10}
BALL = {"loss": "logistic", "radius": 1.0}
CELLS = {
    "clipped_gd (DP-GD bound)": (BALL, {"name": "clipped_gd", "epsilon": 0.5, "delta": 1e-6}),
    "noisy_sgd rdp (Theorem 2, Lipschitz)": (
        BALL, {"name": "noisy_sgd", "epsilon": 0.9, "delta": 1e-12, "calibration": "rdp"}),
    "noisy_sgd rdp (Theorem 2, strongly convex)": (
        {**BALL, "reg": 0.1}, {"name": "noisy_sgd", "epsilon": 0.9, "delta": 1e-12,
                               "calibration": "rdp", "step_size": "strongly_convex"}),
    "multiparty_gd pld (Theorem 4)": (
        {**BALL, "reg": 0.05}, {"name": "multiparty_gd", "parties": 4, "epsilon": 1.0,
                                "delta": 1e-6, "steps": 100}),
    "joint_sgd paper (Theorem 3.1)": (
        BALL, {"name": "joint_sgd", "owners": 4, "epsilon": 1.0, "delta": 1e-6,
               "calibration": "paper"}),
}


class SweepRunner:
    """The 8 runs of a small SGD1/SGD2 sweep through ``run_sweep`` with two workers, and
    executed one after the other in this process."""

    timeout = 600

    def setup(self):
        self.sweep = load_sweep(RUNNER)
        self.runs = self.sweep.runs()
        self.tmp = tempfile.mkdtemp()
        for spec in self.runs[:1]:              # theta* cached, kernels loaded
            execute(spec, self.sweep.seed)

    def teardown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def time_run_sweep_two_workers(self):
        db = os.path.join(self.tmp, f"{time.perf_counter_ns()}.db")
        run_sweep(self.sweep, db, jobs=2, progress=False)

    def time_execute_one_after_another(self):
        for spec in self.runs:
            execute(spec, self.sweep.seed)


class ExcessRiskAgainstBounds:
    """Mean excess risk over five runs divided by the theorem's bound, one cell per theorem."""

    params = list(CELLS)
    param_names = ["solver (bound)"]
    timeout = 900

    def setup_cache(self):
        ratios = {}
        for name, (problem, solver) in CELLS.items():
            sweep = load_sweep({"name": "bench-bounds", "seed": 0, "replicates": 5,
                                "data": DATA, "problem": problem, "solver": [solver]})
            rows = [{"cell_id": "cell", "spec": spec, "result": execute(spec, sweep.seed)}
                    for spec in sweep.runs()]
            ratios[name] = summarize(rows)[0]["ratio_to_bound"]
        return ratios

    def track_ratio_to_bound(self, ratios, name):
        return ratios[name]

    track_ratio_to_bound.unit = "excess risk / bound"


def main():
    bench = SweepRunner()
    bench.setup()
    times = {}
    for method in ("time_run_sweep_two_workers", "time_execute_one_after_another"):
        start = time.perf_counter()
        getattr(bench, method)()
        times[method] = time.perf_counter() - start
    bench.teardown()
    print(f"8 SGD1/SGD2 runs: run_sweep with 2 workers {times['time_run_sweep_two_workers']:.2f} s, "
          f"one after another {times['time_execute_one_after_another']:.2f} s "
          f"({times['time_execute_one_after_another'] / times['time_run_sweep_two_workers']:.2f}x)")
    ratios = ExcessRiskAgainstBounds().setup_cache()
    for name, ratio in ratios.items():
        print(f"{name:<45} excess risk / bound {ratio:.4g}")
    assert all(np.isfinite(list(ratios.values())))


if __name__ == "__main__":
    main()
