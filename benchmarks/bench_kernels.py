"""The kernels, each against its floor measured in the same run.

* ``NoisySGDStep``: one step of SGD1 (index draw, margin, loss derivative, p noise
  values, projection) against NumPy drawing that step's p noise values in bulk
  (``standard_normal((steps, p))``). Target: ratio at most 1 at p = 10, 50, 200.
* ``ClippedGradient``: one clipped full-batch gradient (DP-GD) against NumPy's two
  passes ``X @ theta`` and ``X.T @ v``. Target: at most 1 at n = 10^5, p = 10, 50, 200, both
  cores.
* ``RowProducts``: ``X^T r`` and ``X theta`` by dpsolve's kernels (64 fixed blocks, the same
  bits for any thread count; used by the NumPy solves) against NumPy with BLAS on every core.
  Targets at n = 10^5, p = 50, 200: at most 1 for ``X^T r``, 1.5 for ``X theta`` (memory-bound:
  BLAS is not thread-count independent and about as fast).
* ``Float32Storage``: the memory-bound kernels on X stored as float32 against the same values
  stored as float64 (each entry is converted to double as it is read: the same bits, half the
  bytes). Target: ratio at most 0.6 at n = 10^6, p = 100, both cores.
* ``NoiseSamplers``: the samplers of ``dpsolve.privacy`` and the kernels' ``Stream``.
* ``Projection``: the Euclidean projection onto the ball.

Run directly (``python -m benchmarks.bench_kernels``) to print the ratios.
"""
import math

import numpy as np

import dpsolve
from dpsolve._kernels import gd, minibatch, sgd, vector
from dpsolve.privacy import Stream

from .common import best_time, clipped_gradient_numpy, noisy_sgd_numpy, synthetic_problem


class NoisySGDStep:
    """SGD1 steps, logistic, n = 10^4, sigma = 100, ball radius 1, both cores available."""

    params = [10, 50, 200]
    param_names = ["p"]
    steps = 200_000

    def setup(self, p):
        self.problem = synthetic_problem(10_000, p)
        self.rng = np.random.default_rng(0)

    def _kernel(self):
        P, g = self.problem, np.random.default_rng(0)
        sgd.noisy_sgd_steps(P.X, P.y, P.loss_object.kernel_id, P.loss_object.kernel_param, np.zeros(P.p), 1, self.steps + 1, 100.0,
                            0, 0.01, 0.0, 1.0, Stream.from_generator(g), Stream.from_generator(g))

    def _numpy_noise(self):
        self.rng.standard_normal((self.steps, self.problem.p))

    def time_dpsolve_steps(self, p):
        self._kernel()

    def time_numpy_noise_alone(self, p):
        self._numpy_noise()

    def peakmem_dpsolve_steps(self, p):
        self._kernel()

    def track_ns_per_step(self, p):
        return best_time(self._kernel) / self.steps * 1e9

    track_ns_per_step.unit = "ns"

    def track_step_over_numpy_noise(self, p):
        return best_time(self._kernel) / best_time(self._numpy_noise)

    track_step_over_numpy_noise.unit = "ratio (target <= 1)"

    def track_numpy_loop_over_step(self, p):
        loop_steps = 5_000
        X, y = self.problem.X, self.problem.y
        loop = best_time(lambda: noisy_sgd_numpy(X, y, loop_steps, 100.0, 0.01, 1.0, self.rng),
                         repeat=3) / loop_steps
        return loop / (best_time(self._kernel) / self.steps)

    track_numpy_loop_over_step.unit = "speed-up over a NumPy loop"


class ClippedGradient:
    """One clipped gradient sum, logistic, n = 10^5, clip 0.5."""

    params = [10, 50, 200]
    param_names = ["p"]

    def setup(self, p):
        self.problem = synthetic_problem(100_000, p)
        self.theta = np.random.default_rng(1).normal(size=p) / math.sqrt(p)
        self.norms = np.linalg.norm(self.problem.X, axis=1)
        self.out, self.scratch = np.empty(p), np.empty((64, p))
        self.v = np.random.default_rng(2).normal(size=100_000)

    def _kernel(self):
        P = self.problem
        gd.clipped_gradient_sum(P.X, P.y, P.loss_object.kernel_id, P.loss_object.kernel_param, self.theta, self.norms, 0.5, self.out,
                                self.scratch)

    def _two_passes(self):
        z = self.problem.X @ self.theta
        self.problem.X.T @ (self.v * z)

    def time_dpsolve(self, p):
        self._kernel()

    def time_numpy_two_passes(self, p):
        self._two_passes()

    def time_numpy_clipped_gradient(self, p):
        clipped_gradient_numpy(self.problem, self.theta, self.norms, 0.5)

    def peakmem_dpsolve(self, p):
        self._kernel()

    def track_dpsolve_over_numpy_two_passes(self, p):
        return best_time(self._kernel) / best_time(self._two_passes)

    track_dpsolve_over_numpy_two_passes.unit = "ratio (target <= 1)"


class RowProducts:
    """``X^T r`` and ``X theta``, n = 10^5 (docs/performance.md, "Same bits for any thread
    count")."""

    params = [["X^T r", "X theta"], [50, 200]]
    param_names = ["product", "p"]

    def setup(self, product, p):
        if not hasattr(gd, "row_margins"):
            raise NotImplementedError("this commit's gd has no row_margins")   # asv: skip
        rng = np.random.default_rng(3)
        X = rng.standard_normal((100_000, p))
        if product == "X^T r":
            r, out, scratch = rng.standard_normal(100_000), np.empty(p), np.empty((64, p))
            self._kernel = lambda: gd.weighted_row_sum(X, r, out, scratch)
            self._numpy = lambda: X.T @ r
        else:
            theta, out = rng.standard_normal(p), np.empty(100_000)
            self._kernel = lambda: gd.row_margins(X, theta, out)
            self._numpy = lambda: X @ theta

    def time_dpsolve(self, product, p):
        self._kernel()

    def time_numpy(self, product, p):
        self._numpy()

    def track_dpsolve_over_numpy(self, product, p):
        return best_time(self._kernel) / best_time(self._numpy)

    track_dpsolve_over_numpy.unit = "ratio (target <= 1 for X^T r, <= 1.5 for X theta)"


class Float32Storage:
    """The kernels bound by memory bandwidth on X (n = 10^6, p = 100) stored as float32 or as
    float64 (the same values): logistic clipped gradient sum (clip 0.5), ``X theta``,
    ``X^T r`` and one mini-batch SGD pass (batches of 1000)."""

    params = [["clipped gradient", "X theta", "X^T r", "minibatch pass"],
              ["float32", "float64"]]
    param_names = ["kernel", "dtype"]
    n, p = 1_000_000, 100
    timeout = 300

    def setup(self, kernel, dtype):
        try:
            gd.row_margins(np.ones((1, 1), dtype=np.float32), np.ones(1), np.empty(1))
        except ValueError:
            raise NotImplementedError("this commit's kernels take float64 X only")   # asv: skip
        n, p = self.n, self.p
        rng = np.random.default_rng(4)
        X32 = rng.standard_normal((n, p), dtype=np.float32) / np.float32(math.sqrt(p))
        self.X = {"float32": X32, "float64": X32.astype(np.float64)}
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        theta = rng.normal(size=p)
        norms = np.linalg.norm(self.X["float64"], axis=1)
        r = rng.standard_normal(n)
        order = rng.permutation(n).astype(np.intp)
        out_p, out_n, scratch = np.empty(p), np.empty(n), np.empty((64, p))
        calls = {
            "clipped gradient": lambda X: gd.clipped_gradient_sum(X, y, 0, 0.0, theta, norms,
                                                                  0.5, out_p, scratch),
            "X theta": lambda X: gd.row_margins(X, theta, out_n),
            "X^T r": lambda X: gd.weighted_row_sum(X, r, out_p, scratch),
            "minibatch pass": lambda X: minibatch.minibatch_sgd_pass(
                X, y, 0, 0.0, np.zeros(p), order, 1000, 0.0, 0, 0.1, 0.0, 1.0,
                np.random.default_rng(5)),
        }
        self._call = calls[kernel]

    def time_kernel(self, kernel, dtype):
        self._call(self.X[dtype])

    def track_time_over_float64(self, kernel, dtype):
        if dtype == "float64":
            return 1.0
        return (best_time(lambda: self._call(self.X[dtype]))
                / best_time(lambda: self._call(self.X["float64"])))

    track_time_over_float64.unit = "ratio (target <= 0.6 for float32)"


SAMPLERS = {
    "gaussian_noise": lambda p, rows, rng: dpsolve.privacy.gaussian_noise(1.0, p, size=rows,
                                                                          rng=rng),
    "laplace_noise": lambda p, rows, rng: dpsolve.privacy.laplace_noise(1.0, p, size=rows,
                                                                        rng=rng),
    "gamma_norm_noise": lambda p, rows, rng: dpsolve.privacy.gamma_norm_noise(1.0, p, size=rows,
                                                                              rng=rng),
    "Stream.standard_normal": lambda p, rows, stream: stream.standard_normal(rows * p),
    "numpy standard_normal": lambda p, rows, rng: rng.standard_normal((rows, p)),
}


class NoiseSamplers:
    """10^4 draws of dimension p."""

    params = [list(SAMPLERS), [10, 200]]
    param_names = ["sampler", "p"]
    rows = 10_000

    def setup(self, sampler, p):
        g = np.random.default_rng(0)
        self.source = Stream.from_generator(g) if sampler.startswith("Stream") else g

    def time_draw(self, sampler, p):
        SAMPLERS[sampler](p, self.rows, self.source)

    def peakmem_draw(self, sampler, p):
        SAMPLERS[sampler](p, self.rows, self.source)


class Projection:
    """Projection of a vector of norm 2 onto the unit ball."""

    params = [10, 1000]
    param_names = ["p"]

    def setup(self, p):
        self.theta = np.full(p, 2.0 / math.sqrt(p))

    def time_project_l2_ball(self, p):
        vector.project_l2_ball(self.theta, 1.0)


def main():
    # imported here, not at the top: asv imports this module against older commits' builds too,
    # which have no threads module
    from dpsolve._kernels.threads import max_threads

    print(f"{'p':>4} {'dpsolve ns/step':>16} {'step / numpy noise':>19} {'numpy loop / step':>18}")
    for p in NoisySGDStep.params:
        b = NoisySGDStep()
        b.setup(p)
        print(f"{p:>4} {b.track_ns_per_step(p):>16.0f} {b.track_step_over_numpy_noise(p):>19.2f} "
              f"{b.track_numpy_loop_over_step(p):>17.0f}x")
    print(f"\n{'p':>4} {'clipped gradient / numpy two passes':>36}  (n = 10^5, "
          f"{max_threads()} threads)")
    for p in ClippedGradient.params:
        b = ClippedGradient()
        b.setup(p)
        print(f"{p:>4} {b.track_dpsolve_over_numpy_two_passes(p):>36.2f}")
    print(f"\n{'product':>8} {'p':>4} {'kernel / numpy':>15}  (n = 10^5, {max_threads()} "
          "threads)")
    for product in RowProducts.params[0]:
        for p in RowProducts.params[1]:
            b = RowProducts()
            b.setup(product, p)
            print(f"{product:>8} {p:>4} {b.track_dpsolve_over_numpy(product, p):>15.2f}")
    print(f"\n{'kernel':>16} {'float32 / float64':>18}  (n = 10^6, p = 100, {max_threads()} "
          "threads)")
    for kernel in Float32Storage.params[0]:
        b = Float32Storage()
        b.setup(kernel, "float32")
        print(f"{kernel:>16} {b.track_time_over_float64(kernel, 'float32'):>18.2f}")


if __name__ == "__main__":
    main()
