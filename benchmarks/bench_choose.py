"""Time of :func:`dpsolve.choose_solver` (docs/choose_solver.md): a choice reads public constants
only, so its time should not grow with n; the target is at most 0.2 s a call.

Logistic problems with an intercept, no constraint and lambda = 1e-3 (random unit rows: the
choice reads only the shape), at epsilon = 1, pure and with delta = 1e-6. ``time_choose``
is a call with the calibration caches as earlier calls left them (a sweep, or a choice followed
by its fit); ``time_choose_cold`` clears them first, as the first call in a process finds them.
n = 10^6 with p = 85 is skipped (a 680 MB X whose construction, not the choice, would dominate
the run).

Run directly (``python -m benchmarks.bench_choose``) to print the times.
"""
import itertools
import warnings

import numpy as np

import dpsolve
from dpsolve import approximate_minima, objective_privacy
from dpsolve.privacy import accounting, calibration

from .common import best_time

#: dpsolve's caches of calibrations and settings searches, cleared by ``time_choose_cold``.
CACHES = ((calibration, "poisson_pld_sigma"), (objective_privacy, "_objective_s"),
          (objective_privacy, "_tail_crossing"), (objective_privacy, "_delta_constants"),
          (accounting, "_calibrate"),
          (approximate_minima, "_objective_perturbation_search"))


def clear_caches():
    """Empty the caches of :data:`CACHES` (those that are caches)."""
    for module, name in CACHES:
        clear = getattr(getattr(module, name, None), "cache_clear", None)
        if clear is not None:
            clear()


def choice_problem(n, p, seed=0):
    """A logistic Problem with an intercept, radius None, lambda = 1e-3, random unit rows."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return dpsolve.Problem(X, y, "logistic", radius=None, reg=1e-3, fit_intercept=True)


class ChooseSolver:
    """One :func:`dpsolve.choose_solver` call."""

    params = ([1_000, 7_000, 100_000, 1_000_000], [20, 85], ["none", "1e-6"])
    param_names = ["n", "p", "delta"]
    timeout = 300

    def setup(self, n, p, delta):
        if n >= 1_000_000 and p > 20:
            raise NotImplementedError("X of 680 MB: its construction would dominate")
        self.problem = choice_problem(n, p)
        self.delta = None if delta == "none" else float(delta)
        self._choose()

    def _choose(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dpsolve.PrivacyWarning)
            return dpsolve.choose_solver(self.problem, 1.0, self.delta)

    def time_choose(self, n, p, delta):
        self._choose()

    def time_choose_cold(self, n, p, delta):
        clear_caches()
        self._choose()


def main():
    names = ChooseSolver.param_names
    for values in itertools.product(*ChooseSolver.params):
        bench = ChooseSolver()
        try:
            bench.setup(*values)
        except NotImplementedError:
            continue
        warm = best_time(bench._choose, repeat=3, min_time=0.0)
        cold = best_time(lambda: (clear_caches(), bench._choose()), repeat=3, min_time=0.0)
        label = " ".join(f"{k}={v}" for k, v in zip(names, values))
        print(f"{label:<32} warm {warm * 1e3:8.1f} ms   cold {cold * 1e3:8.1f} ms   "
              f"{bench._choose().name}")


if __name__ == "__main__":
    main()
