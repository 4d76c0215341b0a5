"""Experiment sweeps: the parallel runner against the same runs one after the other (both in the
same run, so their ratio is the speed-up of two worker processes); the population measure of a
run on a ``sphere`` source against one pass of the empirical objective over its sample. The
measured excess risk against each theorem's bound is tracked in ``bench_accuracy.py``. Also
runnable directly::

    python -m benchmarks.bench_experiments
"""
import os
import shutil
import tempfile
import time

import numpy as np

from dpsolve.experiments import execute, load_sweep, run_sweep
from dpsolve.population import SphereSource, excess_population_risk

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


class PopulationMeasure:
    """What a run on a ``sphere`` source adds: its excess population risk by quadrature
    (:func:`dpsolve.excess_population_risk`, the minimum over the ball included), against the
    empirical objective of the same theta on the run's sample of n = 2000 records."""

    params = [10, 300]
    param_names = ["p"]

    def setup(self, p):
        theta0 = np.zeros(p)
        theta0[0] = 1.0
        self.source = SphereSource(p, theta0, "logistic")
        self.problem = self.source.problem(2000, rng=0, radius=1.0)
        self.theta = np.random.default_rng(1).standard_normal(p) / (2 * np.sqrt(p))

    def time_excess_population_risk(self, p):
        excess_population_risk(self.theta, self.source, 1.0)

    def time_empirical_objective(self, p):
        self.problem.objective(self.theta)


def main():
    for p in PopulationMeasure.params:
        measure = PopulationMeasure()
        measure.setup(p)
        times = {}
        for method in ("time_excess_population_risk", "time_empirical_objective"):
            start = time.perf_counter()
            for _ in range(20):
                getattr(measure, method)(p)
            times[method] = (time.perf_counter() - start) / 20
        print(f"p = {p}: excess population risk {1e3 * times['time_excess_population_risk']:.2f} "
              f"ms, empirical objective on n = 2000 {1e3 * times['time_empirical_objective']:.3f} "
              "ms")
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


if __name__ == "__main__":
    main()
