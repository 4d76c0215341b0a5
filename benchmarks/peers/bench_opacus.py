"""DP-SGD on logistic regression with Opacus (PyTorch, CPU) against dpsolve: samples per second,
and the excess risk each reaches at the same (epsilon, delta).

The same task on both sides: logistic loss, n = 10^4 unit rows, p = 50, per-sample clipping or
bounded per-sample gradients, Gaussian noise. Opacus runs ``make_private`` on a bias-free
``torch.nn.Linear`` with SGD, fixed batches (``poisson_sampling=False``), both cores
(``torch.set_num_threads(2)``).

* batch 1: against ``dpsolve.noisy_sgd``'s kernel (SGD1: one sample, p noise values
  and a projection per step);
* batch 1024: DP-SGD from dpsolve's clipped-gradient kernel (the one ``clipped_gd`` runs on both
  cores): per batch of 1024 shuffled rows, the sum of per-sample gradients clipped to 1, plus
  N(0, sigma^2 I), one step, in a Python loop over batches, as Opacus does it.

Utility (``OpacusUtility``, and :func:`opacus_theta` for docs/peers.md): Opacus's
``make_private_with_epsilon`` at the target (epsilon, delta) with its defaults (Poisson sampling,
its default accountant) and fixed settings chosen before any data was seen, never tuned: SGD
with learning rate 1 (the logistic loss of unit rows is 1/4-smooth, so any step below 8 is
stable), expected batch ``min(256, max(n // 10, 16))``, 15 epochs, ``max_grad_norm = 1`` (the
per-sample gradient bound of unit rows: no clipping bias), weight decay lambda (the
regulariser), float64, from theta = 0. Its guarantee is under add/remove neighbours; dpsolve's
under replace-one, which is stricter (a replace-one change is an add and a remove), so the
comparison favours Opacus. ``neighbours="replace_one"`` runs the same DP-SGD with the noise
that gives dpsolve's guarantee, for a comparison at the same promise.

Run directly (``python -m benchmarks.peers.bench_opacus``) to print the tables.
"""
import math
import warnings

import numpy as np

import dpsolve
from dpsolve._kernels import gd, sgd
from dpsolve.privacy import Stream

from ..common import best_time, synthetic_problem

try:
    import torch
    from opacus import PrivacyEngine
except ImportError:          # the optional peers extra is not installed
    torch = None

N, P = 10_000, 50
EPOCHS, LEARNING_RATE = 15, 1.0


def _torch_on_both_cores():
    """asv's setup: skip without the peers extra, else both cores for PyTorch."""
    if torch is None:
        raise NotImplementedError("needs the peers extra: pip install '.[peers]'")
    torch.set_num_threads(2)


def opacus_theta(problem, epsilon, delta, seed, neighbours="add_remove"):
    """Opacus DP-SGD on ``problem`` (logistic or multinomial, no intercept) at
    ``(epsilon, delta)`` with the settings of this module's docstring: dpsolve's theta (shape
    (p,) or (p, K)).

    ``neighbours="add_remove"``: Opacus's own ``make_private_with_epsilon`` (its guarantee).
    ``"replace_one"``: the same run with the noise multiplier for dpsolve's guarantee, from
    dpsolve's PLD accountant (``dpsolve.privacy.calibrate``) for Opacus's T Poisson-sampled
    steps at its rate ``q = 1 / len(loader)`` and sensitivity 2C (a replacement moves one
    clipped gradient by up to 2C), handed to Opacus's ``make_private``."""
    n, p = problem.n, problem.p
    torch.manual_seed(seed)
    X = torch.tensor(np.asarray(problem.X), dtype=torch.float64)
    if problem.loss == "multinomial":
        classes = problem.theta_shape[1]
        y = torch.tensor(np.asarray(problem.y), dtype=torch.int64)
        loss = torch.nn.CrossEntropyLoss()
    else:
        classes = 1
        y = torch.tensor((np.asarray(problem.y) + 1) / 2, dtype=torch.float64)
        bce = torch.nn.BCEWithLogitsLoss()

        def loss(logits, labels):
            return bce(logits.squeeze(1), labels)
    model = torch.nn.Linear(p, classes, bias=False).double()
    torch.nn.init.zeros_(model.weight)
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE, weight_decay=problem.reg)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y),
                                         batch_size=int(min(256, max(n // 10, 16))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # Opacus's notes on secure RNG and the accountant
        if neighbours == "add_remove":
            model, optimizer, loader = PrivacyEngine().make_private_with_epsilon(
                module=model, optimizer=optimizer, data_loader=loader, target_epsilon=epsilon,
                target_delta=delta, epochs=EPOCHS, max_grad_norm=1.0)
        else:
            steps_per_epoch = len(loader)
            sigma = dpsolve.privacy.calibrate(
                epsilon, delta, sensitivity=2.0, steps=EPOCHS * steps_per_epoch,
                sampling=dpsolve.privacy.PoissonSampling(1.0 / steps_per_epoch),
                accountant="pld", neighbours="replace_one")
            model, optimizer, loader = PrivacyEngine().make_private(
                module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=sigma,
                max_grad_norm=1.0)
        for _ in range(EPOCHS):
            for xb, yb in loader:
                if len(xb) == 0:            # Poisson sampling can draw an empty batch
                    continue
                optimizer.zero_grad()
                loss(model(xb), yb).backward()
                optimizer.step()
    weight = model._module.weight.detach().numpy().astype(float)
    return weight.ravel() if classes == 1 else np.ascontiguousarray(weight.T)


class OpacusDPSGD:
    params = [1, 1024]
    param_names = ["batch_size"]
    timeout = 600

    def setup(self, batch_size):
        _torch_on_both_cores()
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
            sgd.noisy_sgd_steps(pr.X, pr.y, pr.loss_object.kernel_id, pr.loss_object.kernel_param, np.zeros(P), 1, self.samples + 1,
                                1.0, 0, 0.01, 0.0, 1.0, Stream.from_generator(g),
                                Stream.from_generator(g))
            return
        X, y = self.shuffled
        b = self.batch_size
        theta, total, scratch = np.zeros(P), np.empty(P), np.empty((64, P))
        for start in range(0, self.samples, b):
            rows = slice(start, start + b)
            gd.clipped_gradient_sum(X[rows], y[rows], pr.loss_object.kernel_id, pr.loss_object.kernel_param, theta, self.norms[rows],
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


class OpacusUtility:
    """Excess risk at the same (epsilon, delta = 1e-6): dpsolve's ``choose_solver`` choice
    against Opacus DP-SGD (:func:`opacus_theta`), logistic, ``make_synthetic(10^4, 20)``,
    lambda = 1e-3, no constraint, 10 seeds each."""

    params = [0.3, 1.0, 3.0]
    param_names = ["epsilon"]
    timeout = 900

    def setup(self, epsilon):
        _torch_on_both_cores()
        problem = synthetic_problem(10_000, 20, radius=None, reg=1e-3)
        reference = dpsolve.reference_minimizer(problem)
        choice = dpsolve.choose_solver(problem, epsilon, 1e-6)
        self.risks = {}
        for name, fit in (("opacus", lambda s: opacus_theta(problem, epsilon, 1e-6, s)),
                          ("opacus_replace_one", lambda s: opacus_theta(
                              problem, epsilon, 1e-6, s, neighbours="replace_one")),
                          ("dpsolve", lambda s: choice.fit(problem, rng=s).theta)):
            values = [problem.objective(fit(seed)) - reference.value for seed in range(10)]
            self.risks[name] = (float(np.mean(values)),
                                float(np.std(values, ddof=1) / math.sqrt(len(values))))

    def track_opacus_excess_risk(self, epsilon):
        return self.risks["opacus"][0]

    track_opacus_excess_risk.unit = "F(theta) - F(theta*), mean of 10 seeds"

    def track_dpsolve_auto_excess_risk(self, epsilon):
        return self.risks["dpsolve"][0]

    track_dpsolve_auto_excess_risk.unit = "F(theta) - F(theta*), mean of 10 seeds"

    def track_dpsolve_over_opacus_excess_risk(self, epsilon):
        return self.risks["dpsolve"][0] / self.risks["opacus"][0]

    track_dpsolve_over_opacus_excess_risk.unit = "ratio (Opacus under add/remove)"

    def track_dpsolve_over_opacus_replace_one_excess_risk(self, epsilon):
        return self.risks["dpsolve"][0] / self.risks["opacus_replace_one"][0]

    track_dpsolve_over_opacus_replace_one_excess_risk.unit = "ratio (same guarantee; goal <= 1)"


def main():
    print("| ε | Opacus (add/remove) | Opacus (replace-one) | dpsolve auto "
          "| (excess risk, mean ± s.e., 10 seeds) |")
    print("|---|---|---|---|---|")
    for epsilon in OpacusUtility.params:
        bench = OpacusUtility()
        bench.setup(epsilon)
        cells = [f"{m:.3g} ± {se:.2g}" for m, se in (bench.risks["opacus"],
                                                      bench.risks["opacus_replace_one"],
                                                      bench.risks["dpsolve"])]
        print(f"| {epsilon:g} | " + " | ".join(cells) + " | |")
    print()
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
