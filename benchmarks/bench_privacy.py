"""What trust costs: the exact integer noise, the certified Gaussian calibration and the one
charging path of a budget, each as a ratio against a baseline measured in the same run.

* ``ExactIntegerNoise``: one discrete Laplace draw by Canonne, Kamath & Steinke (2020)'s exact
  sampler (integer arithmetic on 64-bit words) against the two NumPy ``geometric`` draws of the
  float sampler it replaced (bounded support: not epsilon-DP). A fit draws one or K such
  numbers, so microseconds either way.
* ``GaussianCalibration``: the analytic Gaussian's sigma (Balle & Wang 2018), certified to err on
  the private side, against dp_accounting's ``get_sigma_gaussian`` (the same equation solved in
  plain floating point, not certified).
* ``BudgetCharge``: ``DPLogisticRegression.fit`` charged to a budget (the solver's plan made
  once more from public constants, the charge, the check that the fit released the planned
  event) against the same fit without one. Target: ratio at most 1.1 at n = 10⁴.

Run directly (``python -m benchmarks.bench_privacy``) to print the measurements.
"""
import warnings

import numpy as np

import dpsolve
from dpsolve.datasets import make_synthetic

from .common import best_time

DRAWS = 1000


class ExactIntegerNoise:
    """The exact discrete Laplace against NumPy's float two-sided geometric, per draw."""

    params = [1.0, 0.01]
    param_names = ["epsilon"]

    def setup(self, epsilon):
        self.epsilon = epsilon

    def _exact(self):
        from dpsolve.privacy import discrete_laplace
        rng = np.random.default_rng(0)
        for _ in range(DRAWS):
            discrete_laplace(1.0 / self.epsilon, rng=rng)

    def _float(self):
        rng = np.random.default_rng(0)
        success = -np.expm1(-self.epsilon)
        for _ in range(DRAWS):
            rng.geometric(success) - rng.geometric(success)

    def time_exact_draws(self, epsilon):
        self._exact()

    def time_float_draws(self, epsilon):
        self._float()

    def track_exact_over_float(self, epsilon):
        return best_time(self._exact, repeat=3) / best_time(self._float, repeat=3)

    track_exact_over_float.unit = "ratio (NumPy's float geometric pair = 1)"


class GaussianCalibration:
    """The certified analytic Gaussian sigma against dp_accounting's uncertified root."""

    params = [1e-5, 1e-12]
    param_names = ["delta"]

    def setup(self, delta):
        self.delta = delta

    def _certified(self):
        from dpsolve.privacy import gaussian_sigma_analytic
        for epsilon in (0.1, 1.0, 10.0):
            gaussian_sigma_analytic(1.0, epsilon, self.delta)

    def _dp_accounting(self):
        from dp_accounting.gaussian_mechanism import get_sigma_gaussian
        for epsilon in (0.1, 1.0, 10.0):
            get_sigma_gaussian(epsilon, self.delta)

    def time_certified(self, delta):
        self._certified()

    def track_certified_over_dp_accounting(self, delta):
        return best_time(self._certified, repeat=3) / best_time(self._dp_accounting, repeat=3)

    track_certified_over_dp_accounting.unit = "ratio (dp_accounting's get_sigma_gaussian = 1)"


class BudgetCharge:
    """An estimator's fit charged to a budget, against the same fit without one."""

    params = [10_000]
    param_names = ["n"]
    timeout = 600

    def setup(self, n):
        self.X, self.y = make_synthetic(n, 20, rng=0)

    def _fit(self, budget):
        from dpsolve.estimators import DPLogisticRegression
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            DPLogisticRegression(1.0, row_norm=1.0, classes=[-1, 1], accountant=budget,
                                 random_state=0).fit(self.X, self.y)

    def _charged(self):
        self._fit(dpsolve.BudgetAccountant(1e9))

    def _uncharged(self):
        self._fit(None)

    def time_charged_fit(self, n):
        self._charged()

    def track_charged_over_uncharged(self, n):
        return best_time(self._charged, repeat=3) / best_time(self._uncharged, repeat=3)

    track_charged_over_uncharged.unit = "ratio (target <= 1.1)"


if __name__ == "__main__":
    for epsilon in ExactIntegerNoise.params:
        bench = ExactIntegerNoise()
        bench.setup(epsilon)
        print(f"discrete Laplace, epsilon={epsilon:g}: exact / float = "
              f"{bench.track_exact_over_float(epsilon):.2f}")
    for delta in GaussianCalibration.params:
        bench = GaussianCalibration()
        bench.setup(delta)
        print(f"analytic Gaussian sigma, delta={delta:g}: certified / dp_accounting = "
              f"{bench.track_certified_over_dp_accounting(delta):.2f}")
    bench = BudgetCharge()
    bench.setup(10_000)
    print(f"DPLogisticRegression.fit at n=10^4: with a budget / without = "
          f"{bench.track_charged_over_uncharged(10_000):.2f}")
