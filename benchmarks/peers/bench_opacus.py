"""DP-SGD on logistic regression with Opacus (PyTorch, CPU) against dpsolve, samples per second.

The same task on both sides: logistic loss, n = 10^4 unit rows, p = 50, per-sample clipping or
bounded per-sample gradients, Gaussian noise. Opacus runs ``make_private`` on a bias-free
``torch.nn.Linear`` with SGD, fixed batches (``poisson_sampling=False``), both cores
(``torch.set_num_threads(2)``).

* batch 1: against ``dpsolve.noisy_sgd``'s kernel (SGD1: one sample, p noise values
  and a projection per step);
* batch 1024: DP-SGD from dpsolve's clipped-gradient kernel (the one ``clipped_gd`` runs on both
  cores): per batch of 1024 shuffled rows, the sum of per-sample gradients clipped to 1, plus
  N(0, sigma^2 I), one step, in a Python loop over batches, as Opacus does it.

Run directly (``python -m benchmarks.peers.bench_opacus``) to print the table.
"""
import numpy as np

from dpsolve._kernels import gd, sgd
from dpsolve.privacy import Stream

from ..common import best_time, synthetic_problem

try:
    import torch
    from opacus import PrivacyEngine
except ImportError:          # the optional peers extra is not installed
    torch = None

N, P = 10_000, 50


class OpacusDPSGD:
    params = [1, 1024]
    param_names = ["batch_size"]
    timeout = 600

    def setup(self, batch_size):
        if torch is None:
            raise NotImplementedError("needs the peers extra: pip install '.[peers]'")
        torch.set_num_threads(2)
        torch.manual_seed(0)
        self.problem = synthetic_problem(N, P)
        order = np.random.default_rng(1).permutation(N)
        self.shuffled = (np.ascontiguousarray(self.problem.X[order]), self.problem.y[order])
        self.norms = np.linalg.norm(self.shuffled[0], axis=1)
        X = torch.tensor(self.problem.X, dtype=torch.float32)
        y = torch.tensor((self.problem.y + 1) / 2, dtype=torch.float32)
        model = torch.nn.Linear(P, 1, bias=False)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y),
                                             batch_size=batch_size, shuffle=True)
        engine = PrivacyEngine(accountant="rdp")
        self.model, self.optimizer, self.loader = engine.make_private(
            module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=1.0,
            max_grad_norm=1.0, poisson_sampling=False)
        self.loss = torch.nn.BCEWithLogitsLoss()
        self.batches = 300 if batch_size == 1 else 10
        self.batch_size = batch_size
        self.samples = 100_000 if batch_size == 1 else (N // batch_size) * batch_size

    def _opacus(self):
        done = 0
        while done < self.batches:
            for xb, yb in self.loader:
                self.optimizer.zero_grad()
                self.loss(self.model(xb).squeeze(1), yb).backward()
                self.optimizer.step()
                done += 1
                if done == self.batches:
                    return

    def _dpsolve(self):
        """10^5 SGD1 steps at batch 1, one epoch of 1024-row batches else (``self.samples``)."""
        pr = self.problem
        g = np.random.default_rng(0)
        if self.batch_size == 1:
            sgd.noisy_sgd_steps(pr.X, pr.y, pr.loss_function.kernel_id, pr.loss_function.kernel_param, np.zeros(P), 1, self.samples + 1,
                                1.0, 0, 0.01, 0.0, 1.0, Stream.from_generator(g),
                                Stream.from_generator(g))
            return
        X, y = self.shuffled
        b = self.batch_size
        theta, total, scratch = np.zeros(P), np.empty(P), np.empty((64, P))
        for start in range(0, self.samples, b):
            rows = slice(start, start + b)
            gd.clipped_gradient_sum(X[rows], y[rows], pr.loss_function.kernel_id, pr.loss_function.kernel_param, theta, self.norms[rows],
                                    1.0, total, scratch)
            theta -= (0.05 / b) * (total + g.standard_normal(P))

    def time_opacus(self, batch_size):
        self._opacus()

    def track_opacus_samples_per_second(self, batch_size):
        return self.batches * self.batch_size / best_time(self._opacus, repeat=3, min_time=0.0)

    track_opacus_samples_per_second.unit = "samples/s"

    def track_dpsolve_samples_per_second(self, batch_size):
        return self.samples / best_time(self._dpsolve, repeat=3, min_time=0.0)

    track_dpsolve_samples_per_second.unit = "samples/s"

    def track_dpsolve_over_opacus(self, batch_size):
        return (self.track_dpsolve_samples_per_second(batch_size)
                / self.track_opacus_samples_per_second(batch_size))

    track_dpsolve_over_opacus.unit = "speed-up per sample (expect >= 100)"


def main():
    print("| batch | Opacus samples/s | dpsolve samples/s | dpsolve / Opacus |")
    print("|---|---|---|---|")
    for b in OpacusDPSGD.params:
        bench = OpacusDPSGD()
        bench.setup(b)
        theirs = bench.track_opacus_samples_per_second(b)
        ours = bench.track_dpsolve_samples_per_second(b)
        print(f"| {b} | {theirs:,.0f} | {ours:,.0f} | {ours / theirs:,.0f} |")


if __name__ == "__main__":
    main()
