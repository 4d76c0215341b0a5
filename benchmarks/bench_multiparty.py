"""Speed of the multi-party solvers: time per iteration of SGD2 and of secure-aggregation gradient
perturbation, against the same protocol written in NumPy (each party's ``X_j.T @ loss'(X_j theta)``
plus its noise) in the same run; model aggregation end to end; and joint_sgd's time per step
against its loop written in NumPy.

asv benchmark classes (``time_*``); also runnable directly::

    python -m benchmarks.bench_multiparty
"""
import math
import time

import numpy as np

import dpsolve

STEPS = 200


def _numpy_sgd2(problem, parties, sigma, steps, eta, rng):
    """SGD2 in NumPy: the baseline."""
    streams = rng.spawn(parties.m)
    theta = np.zeros(problem.p)
    radius = dpsolve.bounds.minimizer_norm_bound(problem)
    for _ in range(steps):
        total = np.zeros(problem.p)
        for party, stream in zip(parties, streams):
            z = party.X @ theta
            d = -party.y / (1.0 + np.exp(party.y * z))
            total += party.X.T @ d + sigma * stream.standard_normal(problem.p)
        theta = theta - eta * (total + problem.n * problem.reg * theta)
        norm = np.linalg.norm(theta)
        if norm > radius:
            theta *= radius / norm
    return theta


class MultipartyGD:
    """Logistic, n = 3 x 10^4 rows over three parties (10^4 each), lambda = 1e-3, 200 iterations."""

    params = [10, 50, 200]
    param_names = ["p"]

    def setup(self, p):
        X, y = dpsolve.datasets.make_synthetic(30_000, p, rng=0)
        self.problem = dpsolve.Problem(X, y, "logistic", radius=None, reg=1e-3)
        self.parties = dpsolve.Parties.from_sizes(self.problem, [10_000] * 3)
        self.eta = 1.0 / (self.problem.n * (self.problem.smoothness + self.problem.reg))

    def time_sgd2(self, p):
        dpsolve.multiparty_gd(self.problem, self.parties, sigma=1.0, delta=1e-6, steps=STEPS,
                              step_size=self.eta, rng=0)

    def time_sgd2_numpy(self, p):
        _numpy_sgd2(self.problem, self.parties, 1.0, STEPS, self.eta, np.random.default_rng(0))

    def time_secure_aggregation(self, p):
        dpsolve.multiparty_gd(self.problem, self.parties, sigma=0.01, delta=1e-6, steps=STEPS,
                              noise="secure_aggregation", rng=0)

    def time_model_aggregation(self, p):
        dpsolve.aggregated_output_perturbation(self.problem, self.parties, 1.0, rng=0)


def _numpy_joint_sgd(problem, owners, sigma, steps, eta, rng):
    """joint_sgd's loop in NumPy, one step per iteration (every column personalised)."""
    K = problem.n_classes
    N, p = owners.m, problem.p
    u, x = np.zeros((p, K)), np.zeros((N, p, K))
    u_sum, x_sum = np.zeros((p, K)), np.zeros((N, p, K))
    seq = rng.integers(N, size=steps)
    for t in range(steps):
        j = seq[t]
        owner = owners[j]
        i = rng.integers(owner.n)
        a, label = owner.X[i], int(owner.y[i])
        z = a @ u + a @ x[j]
        e = np.exp(z - z.max())
        d = e / e.sum()
        d[label] -= 1.0
        u_sum += u
        x_sum += x
        g = np.outer(a, d)
        x[j] -= eta * (g + problem.reg * x[j])
        u -= eta * (g + problem.reg * u + sigma * rng.standard_normal((p, K)))
        for block in (u, x[j]):
            norm = np.linalg.norm(block)
            if norm > 20.0:
                block *= 20.0 / norm
    return u_sum / steps, x_sum / steps


class JointSGD:
    """Multinomial (K = 10), p = 65 (digits-sized), 16 owners of 100 rows, every column
    personalised, 20,000 steps."""

    steps = 20_000

    def setup(self):
        rng = np.random.default_rng(0)
        X = dpsolve.datasets.unit_rows(rng.standard_normal((1600, 65)))
        y = np.argmax(X @ rng.standard_normal((65, 10)), axis=1)
        self.problem = dpsolve.Problem(X, y, "multinomial", radius=20.0, reg=1e-3,
                                       n_classes=10)
        self.owners = dpsolve.Parties.from_sizes(self.problem, [100] * 16)

    def time_joint_sgd(self):
        dpsolve.joint_sgd(self.problem, self.owners, sigma=1.0, delta=1e-4, steps=self.steps,
                          step_size=1e-3, rng=0)

    def time_joint_sgd_numpy(self):
        _numpy_joint_sgd(self.problem, self.owners, 1.0, self.steps, 1e-3,
                         np.random.default_rng(0))


def _best(bench, name, *args):
    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        getattr(bench, name)(*args)
        best = min(best, time.perf_counter() - start)
    return best


def main():
    joint = JointSGD()
    joint.setup()
    ours, base = _best(joint, "time_joint_sgd"), _best(joint, "time_joint_sgd_numpy")
    print(f"joint_sgd p=65 K=10  {ours / joint.steps * 1e6:7.2f} us/step  NumPy "
          f"{base / joint.steps * 1e6:7.2f} us/step ({base / ours:.1f}x)")
    bench = MultipartyGD()
    for p in MultipartyGD.params:
        bench.setup(p)
        best = {name: _best(bench, name, p)
                for name in ("time_sgd2", "time_sgd2_numpy", "time_secure_aggregation",
                             "time_model_aggregation")}
        per = {k: v / STEPS * 1e6 for k, v in best.items()}
        print(f"p={p:>3}  SGD2 {per['time_sgd2']:8.1f} us/iteration  NumPy {per['time_sgd2_numpy']:8.1f}"
              f" us ({best['time_sgd2_numpy'] / best['time_sgd2']:.2f}x)  secure aggregation "
              f"{per['time_secure_aggregation']:8.1f} us/iteration  model aggregation "
              f"{best['time_model_aggregation'] * 1e3:7.1f} ms")


if __name__ == "__main__":
    main()
