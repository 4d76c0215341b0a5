"""Sparse X (docs/sparse.md): a 2·10⁵ × 2·10⁴ CSR matrix at 0.1% density (4·10⁶ stored
entries: 66 MB with intp indices; 32 GB if it were dense).

* ``SparseClippedGradient``: one clipped full-batch gradient on the CSR rows against scipy's two
  passes ``X @ theta`` and ``X.T @ v`` on the same matrix. Target: ratio at most 1.5.
* ``SparseSolvers``: ``clipped_gd`` (20 steps) and ``noisy_sgd`` (10⁵ steps) end to end; peak
  memory within a few times the matrix itself (``track_peak_over_matrix``).

Run directly (``python -m benchmarks.bench_sparse``) to print the measurements.
"""
import tracemalloc

import numpy as np
from scipy import sparse

import dpsolve
from dpsolve._kernels import gd
from dpsolve._row_ops import kernel_rows, row_norms

from .common import best_time

N, P, DENSITY = 200_000, 20_000, 1e-3


def make_problem():
    """Random CSR rows (seed 0) scaled to norm at most 1, labels from a noisy linear model."""
    rng = np.random.default_rng(0)
    X = sparse.random(N, P, density=DENSITY, format="csr", random_state=rng, dtype=np.float64)
    X.data = rng.standard_normal(X.nnz)
    norms = np.sqrt(np.bincount(np.repeat(np.arange(N), np.diff(X.indptr)),
                                weights=X.data ** 2, minlength=N))
    X.data /= np.repeat(np.maximum(norms, 1.0), np.diff(X.indptr))
    y = np.where(X @ rng.standard_normal(P) + 0.1 * rng.standard_normal(N) > 0, 1, -1)
    return dpsolve.Problem(X, y, "logistic", radius=1.0)


def traced_peak(fn):
    """Peak bytes allocated while ``fn`` runs, beyond what was allocated before (tracemalloc,
    which sees numpy's arrays)."""
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def matrix_bytes(X):
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes


class SparseClippedGradient:
    """One clipped gradient against scipy's ``X @ theta`` plus ``X.T @ v``."""

    timeout = 600

    def setup(self):
        self.problem = make_problem()
        X = self.problem.X
        self.rows = kernel_rows(X)
        self.norms = row_norms(X)
        self.theta = np.random.default_rng(1).standard_normal(P) / np.sqrt(P)
        self.v = np.random.default_rng(2).standard_normal(N)
        self.out = np.empty(P)
        self.scratch = np.empty((64, P))
        self.kind = self.problem.loss_object.kernel_id

    def _kernel(self):
        gd.clipped_gradient_sum(self.rows, self.problem.y, self.kind, 0.0, self.theta,
                                self.norms, 1.0, self.out, self.scratch)

    def _scipy(self):
        X = self.problem.X
        X @ self.theta
        X.T @ self.v

    def time_dpsolve_clipped_gradient(self):
        self._kernel()

    def time_scipy_two_passes(self):
        self._scipy()

    def track_clipped_gradient_over_scipy(self):
        return best_time(self._kernel) / best_time(self._scipy)

    track_clipped_gradient_over_scipy.unit = "ratio (target <= 1.5)"


class SparseSolvers:
    """clipped_gd and noisy_sgd end to end on the CSR problem."""

    params = ["clipped_gd", "noisy_sgd"]
    param_names = ["solver"]
    timeout = 900
    number, repeat, warmup_time = 1, 1, 0.0

    def setup(self, solver):
        self.problem = make_problem()

    def _run(self, solver):
        if solver == "clipped_gd":
            return dpsolve.clipped_gd(self.problem, 1.0, 1e-6, steps=20, rng=0)
        return dpsolve.noisy_sgd(self.problem, 0.9, 1e-17, steps=100_000, rng=0)

    def time_solver(self, solver):
        self._run(solver)

    def peakmem_solver(self, solver):
        self._run(solver)

    def track_peak_over_matrix(self, solver):
        """Peak of the memory allocated during the run (numpy arrays included, as tracemalloc
        sees them), in units of the CSR matrix's size."""
        return traced_peak(lambda: self._run(solver)) / matrix_bytes(self.problem.X)

    track_peak_over_matrix.unit = "matrices (target: a few)"


def main():
    clipped = SparseClippedGradient()
    clipped.setup()
    X = clipped.problem.X
    print(f"X: {N} x {P}, {X.nnz} stored entries, {matrix_bytes(X) / 1e6:.0f} MB")
    kernel, scipy_two = best_time(clipped._kernel), best_time(clipped._scipy)
    print(f"clipped gradient {kernel * 1e3:.1f} ms, scipy X @ theta + X.T @ v "
          f"{scipy_two * 1e3:.1f} ms: ratio {kernel / scipy_two:.2f}")
    for solver in SparseSolvers.params:
        bench = SparseSolvers()
        bench.problem = clipped.problem
        print(f"{solver}: peak allocation during the run "
              f"{bench.track_peak_over_matrix(solver):.2f} matrices")


if __name__ == "__main__":
    main()
