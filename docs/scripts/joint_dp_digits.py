"""Huang et al. 2023's Table 1 in shape, on a convex model: joint DP against full DP and per-silo.

    python docs/scripts/joint_dp_digits.py [--runs 5] [--out docs/figures/joint_dp_digits]

scikit-learn's digits (1,797 images, 10 classes; :func:`dpsolve.datasets.load_digits`), split 80/20
into training and test records, then among N in {4, 16, 64} owners non-IID (each owner holds 8 of
the 10 classes; training and test records dealt alike, :func:`dpsolve.datasets.owner_classes`).
Multinomial logistic model on the 65 features (64 pixels and an intercept), ball radius 20 for the
shared and each personalised block, lambda = 1e-3, every column personalised, T = 20 n steps
for every DP fit (20 epochs; the step size is joint_sgd's default). For each run (a new split and
new noise) and epsilon in {1, 2, 5, 10}, delta = 1/n (n training records):

* per-silo: each owner's own minimiser on its own rows (no noise, no collaboration);
* without DP: one shared model, the pooled minimiser;
* full DP: one shared model by noisy SGD (no personalised block), record-level accounting;
* joint DP: :func:`dpsolve.joint_sgd`, owner-level accounting (what dpsolve certifies);
* and both DP methods with the paper's own noise formula (``calibration="paper"``), whose
  record-level reading for joint DP is not sound (docs/joint_dp.md, "Privacy").

Prints the test accuracy (mean +- standard deviation over runs) as a Markdown table and writes a
figure (PNG and SVG).
"""
import argparse
import warnings

import numpy as np

import dpsolve
from dpsolve import joint
from dpsolve.privacy import PrivacyWarning
from dpsolve.solvers.joint_sgd import collaboration_full_dp

OWNERS = (4, 16, 64)
EPSILONS = (1.0, 2.0, 5.0, 10.0)
RADIUS, REG = 20.0, 1e-3
EPOCHS = 20             # T = 20 n steps for every DP fit: the same public compute budget
METHODS = ("joint DP (certified)", "full DP (certified)", "joint DP (paper's noise)",
           "full DP (paper's noise)")


def _split(X, y, n_owners, seed):
    """Training problem, owners, and each owner's test rows, for one run."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(y.size)
    cut = int(0.8 * y.size)
    train, test = order[:cut], order[cut:]
    classes = dpsolve.datasets.owner_classes(np.arange(10), n_owners, rng=rng)
    train_parts = dpsolve.datasets.deal_records(y[train], classes, rng=rng)
    test_parts = dpsolve.datasets.deal_records(y[test], classes, rng=rng)
    rows = np.concatenate([train[part] for part in train_parts])
    problem = dpsolve.Problem(X[rows], y[rows], "multinomial", radius=RADIUS, reg=REG,
                              n_classes=10)
    owners = dpsolve.Parties.from_sizes(problem, [part.size for part in train_parts])
    tests = [(X[test[part]], y[test[part]]) for part in test_parts]
    return problem, owners, tests


def _accuracy(predict, tests):
    correct = total = 0
    for j, (X_j, y_j) in enumerate(tests):
        if y_j.size:
            correct += int(np.sum(predict(X_j, j) == y_j))
            total += y_j.size
    return correct / total


def _shared_predictor(theta):
    return lambda X_j, j: np.argmax(X_j @ theta, axis=1)


def run(runs):
    X, y = dpsolve.datasets.load_digits()
    results = {}        # (N, method, eps) -> list of accuracies; eps None for the baselines
    for n_owners in OWNERS:
        for r in range(runs):
            problem, owners, tests = _split(X, y, n_owners, [2026, n_owners, r])
            delta = 1.0 / problem.n
            steps = EPOCHS * problem.n
            silo = joint.per_silo(problem, owners)
            results.setdefault((n_owners, "per-silo", None), []).append(
                _accuracy(lambda X_j, j: np.argmax(X_j @ silo[j], axis=1), tests))
            pooled = joint.collaboration_without_dp(problem)
            results.setdefault((n_owners, "without DP", None), []).append(
                _accuracy(_shared_predictor(pooled), tests))
            for eps in EPSILONS:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", PrivacyWarning)
                    fits = {
                        METHODS[0]: dpsolve.joint_sgd(problem, owners, eps, delta, steps=steps,
                                                      rng=r),
                        METHODS[1]: collaboration_full_dp(problem, owners, eps, delta,
                                                          steps=steps, rng=r),
                        METHODS[2]: dpsolve.joint_sgd(problem, owners, eps, delta, steps=steps,
                                                      calibration="paper", rng=r),
                        METHODS[3]: collaboration_full_dp(problem, owners, eps, delta,
                                                          steps=steps, calibration="paper",
                                                          rng=r),
                    }
                for method, fit in fits.items():
                    if fit.model.personal_columns.size:
                        accuracy = _accuracy(lambda X_j, j, m=fit.model: np.argmax(
                            m.logits(X_j, j), axis=1), tests)
                    else:
                        accuracy = _accuracy(_shared_predictor(fit.theta), tests)
                    results.setdefault((n_owners, method, eps), []).append(accuracy)
                    results.setdefault((n_owners, method + " ε", eps), []).append(
                        fit.privacy.certified_epsilon)
    return results


def _cell(values):
    return f"{np.mean(values):.3f} ± {np.std(values):.3f}"


def table(results):
    lines = ["| N | ε | per-silo | without DP | " + " | ".join(METHODS) + " |",
             "|---" * (4 + len(METHODS)) + "|"]
    for n_owners in OWNERS:
        for eps in EPSILONS:
            cells = [_cell(results[(n_owners, "per-silo", None)]),
                     _cell(results[(n_owners, "without DP", None)])]
            cells += [_cell(results[(n_owners, m, eps)]) for m in METHODS]
            lines.append(f"| {n_owners} | {eps:g} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Certified ε of the paper's noise (owner level for joint DP, record level for "
                 "full DP), mean over runs:")
    lines.append("")
    lines.append("| N | ε claimed | " + " | ".join(METHODS[2:]) + " |")
    lines.append("|---|---|---|---|")
    for n_owners in OWNERS:
        for eps in EPSILONS:
            lines.append(f"| {n_owners} | {eps:g} | "
                         f"{np.mean(results[(n_owners, METHODS[2] + ' ε', eps)]):.3g} | "
                         f"{np.mean(results[(n_owners, METHODS[3] + ' ε', eps)]):.3g} |")
    return "\n".join(lines)


def figure(results, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(OWNERS), figsize=(13, 4.6), sharey=True)
    styles = {METHODS[0]: ("C0", "-", "o"), METHODS[1]: ("C3", "-", "s"),
              METHODS[2]: ("C0", ":", "o"), METHODS[3]: ("C3", ":", "s")}
    for ax, n_owners in zip(axes, OWNERS):
        for method, (color, line, marker) in styles.items():
            means = [np.mean(results[(n_owners, method, e)]) for e in EPSILONS]
            sds = [np.std(results[(n_owners, method, e)]) for e in EPSILONS]
            ax.errorbar(EPSILONS, means, yerr=sds, color=color, linestyle=line, marker=marker,
                        capsize=3, label=method)
        for name, color in (("per-silo", "k"), ("without DP", "0.5")):
            ax.axhline(np.mean(results[(n_owners, name, None)]), color=color, linestyle="--",
                       label=f"{name} (ε = ∞)")
        ax.set_xscale("log")
        ax.set_xticks(EPSILONS)
        ax.set_xticklabels([f"{e:g}" for e in EPSILONS])
        ax.set_xlabel("ε (δ = 1/n)")
        ax.set_title(f"N = {n_owners} owners")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("test accuracy")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=6, fontsize=8, frameon=False)
    fig.suptitle("Digits, multinomial logistic model: joint DP vs full DP vs per-silo "
                 "(mean ± sd over runs)")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    for ext in ("png", "svg"):
        fig.savefig(f"{out}.{ext}", dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", default="docs/figures/joint_dp_digits")
    args = parser.parse_args()
    results = run(args.runs)
    print(table(results))
    figure(results, args.out)


if __name__ == "__main__":
    main()
