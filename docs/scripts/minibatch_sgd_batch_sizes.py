"""Reproduce the synthetic experiment of Song, Chaudhuri & Sarwate 2013 (Fig. 1, left).

    python docs/scripts/minibatch_sgd_batch_sizes.py [--runs 20]
        [--out docs/figures/minibatch_sgd_batch_sizes]

n = 10,000 points uniform on the unit sphere in R^5, linearly separable with margin 0.001;
logistic regression with lambda = 1e-4; epsilon = 1; batch sizes {1, 2, 5, 10, 20, 50}; one
pass; eta_t = 1/sqrt(t); projection onto the ball of radius 1/lambda. For each batch size, the
objective of private and non-private SGD over 20 random permutations (fresh noise for the private
runs): mean and one standard deviation, as in the paper. Writes a table (markdown, stdout) and
the figure as PNG and SVG; the exact optimum F(theta*) (certified) is drawn for reference.
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import dpsolve  # noqa: E402

BATCH_SIZES = (1, 2, 5, 10, 20, 50)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--out", default="docs/figures/minibatch_sgd_batch_sizes")
    args = parser.parse_args()
    X, y = dpsolve.datasets.make_separable(10_000, 5, margin=0.001, rng=2013)
    problem = dpsolve.Problem(X, y, "logistic", radius=None, reg=1e-4)
    reference = dpsolve.reference_minimizer(problem)
    optimum = problem.objective(reference.theta)
    seeds = np.random.SeedSequence(1).spawn(args.runs)
    rows = []
    print(f"F(theta*) = {optimum:.5f} (certified gap {reference.gap:.1e}); {args.runs} runs\n")
    print("| b | private: mean ± std | non-private: mean ± std |")
    print("|---|---|---|")
    for b in BATCH_SIZES:
        private = [problem.objective(dpsolve.minibatch_sgd(problem, 1.0, batch_size=b,
                                                           rng=s).theta) for s in seeds]
        # same permutations (the order is the Generator's first draw), no noise
        plain = [problem.objective(dpsolve.minibatch_sgd(problem, noise_scale=0.0, batch_size=b,
                                                         rng=s).theta) for s in seeds]
        rows.append((b, np.mean(private), np.std(private), np.mean(plain), np.std(plain)))
        print(f"| {b} | {rows[-1][1]:.4f} ± {rows[-1][2]:.4f} | "
              f"{rows[-1][3]:.4f} ± {rows[-1][4]:.4f} |")
    rows = np.array(rows)
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    ax.errorbar(rows[:, 0], rows[:, 1], yerr=rows[:, 2], marker="o", capsize=3,
                label="private (ε = 1)")
    ax.errorbar(rows[:, 0], rows[:, 3], yerr=rows[:, 4], marker="s", capsize=3,
                label="non-private")
    ax.axhline(optimum, color="grey", linestyle=":", label="F(θ*)")
    ax.set_xscale("log")
    ax.set_xticks(BATCH_SIZES, [str(b) for b in BATCH_SIZES])
    ax.set_xlabel("batch size b")
    ax.set_ylabel("objective F(w) after one pass")
    ax.set_title("Song–Chaudhuri–Sarwate 2013: n = 10⁴ on S⁴, λ = 1e-4, η_t = 1/√t", fontsize=10)
    ax.legend()
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(f"{args.out}.{ext}", dpi=150)
    print(f"\nwrote {args.out}.png and .svg")


if __name__ == "__main__":
    main()
