"""Every registered solver (:func:`dpsolve.solvers.registry`) end to end (validation,
calibration, the loop, the privacy report), at fixed settings on the same synthetic logistic
problem (n = 10^4, p = 50, unit rows): time and peak memory. A solver without settings here runs
its spec's example on that problem. The NumPy comparisons of the multi-party solvers and of mini-batch SGD are in
``bench_multiparty.py`` and ``bench_minibatch_sgd.py``.

Run directly (``python -m benchmarks.bench_solvers``) to print the times.
"""
import warnings

import numpy as np

import dpsolve
from dpsolve.solvers import registry

from .common import best_time, synthetic_problem

N, P = 10_000, 50


def _fits():
    """name -> (problem settings, call(problem, parties)), for every registered solver."""
    ball = dict(radius=1.0, reg=0.0)
    ridge = dict(radius=None, reg=1e-3)
    fits = {
        # paper calibration: the RDP calibration's search (about 2 s) is not the solver's speed
        "noisy_sgd": (ball, lambda P, parties: dpsolve.noisy_sgd(
            P, 0.5, 1e-13, steps=1_000_000, rng=0)),
        "clipped_gd": (ball, lambda P, parties: dpsolve.clipped_gd(P, 1.0, 1e-6, rng=0)),
        "minibatch_sgd": (ridge, lambda P, parties: dpsolve.minibatch_sgd(
            P, 1.0, batch_size=10, rng=0)),
        "output_perturbation": (ridge, lambda P, parties: dpsolve.output_perturbation(
            P, 1.0, 1e-6, rng=0)),
        "objective_perturbation": (ridge, lambda P, parties: dpsolve.objective_perturbation(
            P, 1.0, 1e-6, rng=0)),
        "multiparty_gd": (ridge, lambda P, parties: dpsolve.multiparty_gd(
            P, parties, 1.0, 1e-6, steps=200, rng=0)),
        "aggregated_output_perturbation": (ridge, lambda P, parties:
                                           dpsolve.aggregated_output_perturbation(
                                               P, parties, 1.0, 1e-6, rng=0)),
        "joint_sgd": (ball, lambda P, parties: dpsolve.joint_sgd(
            P, parties, 1.0, 1e-6, steps=100_000, rng=0)),
        "dp_sgd": (ball, lambda P, parties: dpsolve.dp_sgd(P, 1.0, 1e-6, rng=0)),
        "adassp": (dict(ridge, loss="squared"), lambda P, parties: dpsolve.adassp(
            P, 1.0, 1e-6, rng=0)),
        # the paper's schedule at n = 10^4, p = 50: T = 1250 steps of batches of 142
        "sco_sgd": (ball, lambda P, parties: dpsolve.sco_sgd(P, 1.0, 1e-6, rng=0)),
    }
    for spec in registry():
        fits.setdefault(spec.name, (dict(spec.example_problem), lambda P, parties, spec=spec:
                                    spec.function(P, *([parties] if spec.partition else []),
                                                  rng=0, **spec.example)))
    return {spec.name: fits[spec.name] for spec in registry()}


FITS = _fits()


class Solvers:
    """One fit; the calibration caches are warmed in setup (a sweep pays them once)."""

    params = list(FITS)
    param_names = ["solver"]
    timeout = 300

    def setup(self, solver):
        settings, self.call = FITS[solver]
        self.problem = synthetic_problem(N, P, **settings)
        self.parties = dpsolve.Parties.from_sizes(self.problem, [N // 4] * 4)
        self._fit()

    def _fit(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dpsolve.PrivacyWarning)
            return self.call(self.problem, self.parties)

    def time_fit(self, solver):
        self._fit()

    def peakmem_fit(self, solver):
        self._fit()


class AdaSSPAgainstLstsq:
    """AdaSSP (squared loss, n = 10^4, p = 50) against NumPy's least squares on the same rows,
    in the same run: the private fit is one pass for X^T X and X^T y plus a p x p
    eigendecomposition, the baseline one SVD-based solve of the n x p system."""

    def setup(self):
        self.problem = synthetic_problem(N, P, "squared", radius=None, reg=1e-3)
        self.X, self.y = np.asarray(self.problem.X), np.asarray(self.problem.y)

    def time_adassp(self):
        dpsolve.adassp(self.problem, 1.0, 1e-6, rng=0)

    def time_numpy_lstsq(self):
        np.linalg.lstsq(self.X, self.y, rcond=None)


def main():
    bench = AdaSSPAgainstLstsq()
    bench.setup()
    print(f"{'adassp':<32} {best_time(bench.time_adassp, repeat=3) * 1e3:9.1f} ms"
          f"   (numpy lstsq {best_time(bench.time_numpy_lstsq, repeat=3) * 1e3:.1f} ms)")
    for name in FITS:
        bench = Solvers()
        bench.setup(name)
        print(f"{name:<32} {best_time(bench._fit, repeat=3, min_time=0.0) * 1e3:9.1f} ms")


if __name__ == "__main__":
    main()
