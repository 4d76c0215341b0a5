"""The scikit-learn estimators and private selection (docs/user_guide.md), on a synthetic
binary problem (n = 10⁴ or 10⁵, p = 20, unit rows).

* ``EstimatorOverhead``: ``DPLogisticRegression.fit`` against the solver it runs
  (``objective_perturbation`` on a Problem built from the same arrays): what the validating
  layer costs (input checks, the label coding, `choose_solver`). Target: ratio at most 1.3. And against scikit-learn's non-private
  ``LogisticRegression`` at the same regularisation, for scale.
* ``EstimatorAccuracy``: the private model's held-out accuracy over scikit-learn's, at ε = 1
  (target: at least 0.98 at n = 10⁵).
* ``Selection``: ``PrivateGridSearch`` over four settings (E[K] = 4 runs) against one fit: the
  price of private tuning in time. Target: about E[K] + 1 (the runs, and each setting's plan).

Run directly (``python -m benchmarks.bench_estimators``) to print the measurements.
"""
import warnings

import numpy as np

import dpsolve
from dpsolve.datasets import make_synthetic

from .common import best_time

P, REG = 20, 1e-3


def _data(n, seed=0):
    X, y = make_synthetic(n, P, rng=seed)
    return X, y


def _estimator(**changes):
    from dpsolve.estimators import DPLogisticRegression
    options = dict(epsilon=1.0, reg=REG, row_norm=1.0, classes=[-1, 1], fit_intercept=False,
                   random_state=0)
    options.update(changes)
    return DPLogisticRegression(**options)


class EstimatorOverhead:
    """The estimator's fit against the bare solver, and against scikit-learn's fit."""

    params = [10_000, 100_000]
    param_names = ["n"]
    timeout = 600

    def setup(self, n):
        self.X, self.y = _data(n)

    def _estimator_fit(self):
        _estimator().fit(self.X, self.y)

    def _solver_fit(self):
        problem = dpsolve.Problem(self.X, self.y, radius=None, reg=REG)
        dpsolve.objective_perturbation(problem, 1.0, rng=0)

    def _sklearn_fit(self):
        from sklearn.linear_model import LogisticRegression
        LogisticRegression(C=1.0 / (REG * len(self.y)), fit_intercept=False).fit(self.X, self.y)

    def time_estimator_fit(self, n):
        self._estimator_fit()

    def time_solver(self, n):
        self._solver_fit()

    def track_estimator_over_solver(self, n):
        return best_time(self._estimator_fit, repeat=3) / best_time(self._solver_fit, repeat=3)

    track_estimator_over_solver.unit = "ratio (target <= 1.3)"

    def track_estimator_over_sklearn(self, n):
        return best_time(self._estimator_fit, repeat=3) / best_time(self._sklearn_fit, repeat=3)

    track_estimator_over_sklearn.unit = "ratio (non-private scikit-learn = 1)"


class EstimatorAccuracy:
    """Held-out accuracy of the private model over scikit-learn's (mean over 5 seeds)."""

    params = [10_000, 100_000]
    param_names = ["n"]
    timeout = 600

    def setup(self, n):
        self.X, self.y = _data(n)
        self.X_test, self.y_test = _data(10_000, seed=1)

    def track_accuracy_over_sklearn(self, n):
        from sklearn.linear_model import LogisticRegression
        ref = LogisticRegression(C=1.0 / (REG * n), fit_intercept=False).fit(self.X, self.y)
        private = np.mean([_estimator(random_state=s).fit(self.X, self.y)
                           .score(self.X_test, self.y_test) for s in range(5)])
        return private / ref.score(self.X_test, self.y_test)

    track_accuracy_over_sklearn.unit = "ratio (target >= 0.98 at n = 1e5)"


class Selection:
    """PrivateGridSearch over four regularisations against a single fit."""

    timeout = 600

    def setup(self):
        self.X, self.y = _data(10_000)

    def _search(self):
        from dpsolve.private_selection import PrivateGridSearch
        PrivateGridSearch(_estimator(), {"reg": [1e-4, 1e-3, 1e-2, 1e-1]}, score_epsilon=0.1,
                          random_state=0).fit(self.X, self.y)

    def _one_fit(self):
        _estimator().fit(self.X, self.y)

    def time_search(self):
        self._search()

    def track_search_over_one_fit(self):
        return best_time(self._search, repeat=3) / best_time(self._one_fit, repeat=3)

    track_search_over_one_fit.unit = "ratio (E[K] = 4 runs)"


def main():
    warnings.simplefilter("ignore")
    for n in EstimatorOverhead.params:
        bench = EstimatorOverhead()
        bench.setup(n)
        accuracy = EstimatorAccuracy()
        accuracy.setup(n)
        print(f"n = {n}: estimator / solver {bench.track_estimator_over_solver(n):.2f}, "
              f"estimator / scikit-learn {bench.track_estimator_over_sklearn(n):.2f}, "
              f"accuracy / scikit-learn {accuracy.track_accuracy_over_sklearn(n):.4f}")
    selection = Selection()
    selection.setup()
    print(f"search / one fit {selection.track_search_over_one_fit():.2f}")


if __name__ == "__main__":
    main()
