"""Regenerate docs/peers.md: dpsolve against diffprivlib, excess risk with 95% intervals.

Every dataset is turned into the same problem on both sides: unit rows (each row divided by the
largest row norm, so B = 1), binary labels, logistic loss, ``lambda = 1e-3`` and no intercept
(diffprivlib's ``C = 1 / (n lambda)``, ``data_norm = 1``, ``fit_intercept=False``, labels {0, 1}).
Excess risk is ``F(theta) - F(theta*)`` against dpsolve's certified reference minimiser, so both
libraries are judged on the objective they were asked to minimise.

Methods, at the same epsilon:

* diffprivlib ``LogisticRegression`` (objective perturbation, pure epsilon);
* dpsolve ``objective_perturbation`` (pure epsilon, its default settings);
* dpsolve ``auto`` at pure epsilon and at ``delta = 1e-6`` (``dpsolve.choose_solver``'s choice).

Run it in an environment with diffprivlib (which needs scikit-learn < 1.8)::

    python -m venv peers && . peers/bin/activate
    pip install "scikit-learn==1.7.2" diffprivlib dp_accounting cvxpy matplotlib tqdm
    PYTHONPATH=. python -m benchmarks.peers.utility_page

It writes ``docs/peers.md`` and ``docs/figures/peers_utility.png``.
"""
import math
import pathlib
import warnings

import numpy as np

import dpsolve

try:
    import diffprivlib.models
except ImportError:          # the optional peers extra is not installed
    diffprivlib = None

REG = 1e-3
EPSILONS = (0.1, 0.3, 1.0, 3.0)
SEEDS = range(20)
DELTA = 1e-6
ROOT = pathlib.Path(__file__).resolve().parents[2]


def _unit_rows(X):
    X = np.asarray(X, dtype=float)
    X = X - X.mean(axis=0)
    return X / np.linalg.norm(X, axis=1).max()


def datasets():
    """``{name: (X, y in {-1, +1})}``: scikit-learn's classification datasets, one class
    against the rest for the multiclass ones, and synthetic data at two sizes."""
    from sklearn import datasets as sk
    out = {}
    X, y = sk.load_breast_cancer(return_X_y=True)
    out["breast cancer"] = (_unit_rows(X), np.where(y == 1, 1, -1))
    for name, loader in (("digits (0 vs rest)", sk.load_digits), ("wine (0 vs rest)", sk.load_wine),
                         ("iris (0 vs rest)", sk.load_iris)):
        X, y = loader(return_X_y=True)
        out[name] = (_unit_rows(X), np.where(y == 0, 1, -1))
    for n in (1_000, 10_000):
        X, y = dpsolve.datasets.make_synthetic(n, 20, rng=0)
        out[f"synthetic n = {n:,}, p = 20"] = (X, y)
    return out


def _diffprivlib(problem, epsilon, seed):
    model = diffprivlib.models.LogisticRegression(
        epsilon=epsilon, data_norm=1.0, C=1.0 / (REG * problem.n), fit_intercept=False,
        random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(problem.X, (problem.y > 0).astype(int))
    return model.coef_.ravel()


METHODS = {
    "diffprivlib (ε)": _diffprivlib,
    "dpsolve objective_perturbation (ε)":
        lambda P, e, s: dpsolve.objective_perturbation(P, e, rng=s).theta,
    "dpsolve auto (ε)": lambda P, e, s: dpsolve.choose_solver(P, e).fit(P, rng=s).theta,
    "dpsolve auto (ε, 1e-6)": lambda P, e, s: dpsolve.choose_solver(P, e, DELTA).fit(
        P, rng=s).theta,
}


def measure():
    """``rows``: (dataset, n, p, epsilon, method, mean, half-width of the 95% interval,
    chosen solver)."""
    rows = []
    for name, (X, y) in datasets().items():
        problem = dpsolve.Problem(X, y, "logistic", radius=None, reg=REG)
        reference = dpsolve.reference_minimizer(problem)
        for epsilon in EPSILONS:
            for method, fit in METHODS.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    risks = [problem.objective(fit(problem, epsilon, seed)) - reference.value
                             for seed in SEEDS]
                chosen = ""
                if method.startswith("dpsolve auto"):
                    chosen = dpsolve.choose_solver(
                        problem, epsilon, DELTA if "1e-6" in method else None).name
                half = 1.96 * np.std(risks, ddof=1) / math.sqrt(len(risks))
                rows.append((name, problem.n, problem.p, epsilon, method,
                             float(np.mean(risks)), float(half), chosen))
                print(rows[-1], flush=True)
    return rows


def _figure(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(dict.fromkeys(r[0] for r in rows))
    fig, axes = plt.subplots(2, 3, figsize=(12, 7), sharex=True)
    for ax, name in zip(axes.ravel(), names):
        for method in METHODS:
            pts = [(r[3], r[5], r[6]) for r in rows if r[0] == name and r[4] == method]
            eps, mean, half = (np.array(v) for v in zip(*pts))
            ax.errorbar(eps, mean, yerr=half, label=method, marker="o", capsize=3)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("ε")
        ax.set_ylabel("excess risk")
    axes.ravel()[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def write_page(rows):
    lines = [
        "# dpsolve against its peers: utility",
        "",
        "Generated by `benchmarks/peers/utility_page.py` (its docstring says how to run it: "
        "diffprivlib 0.6.6 needs scikit-learn < 1.8, so in an environment of its own). Logistic "
        "loss, λ = 10⁻³, no intercept, unit rows (B = 1), binary labels (one class against the "
        "rest for the multiclass datasets). Excess risk `F(θ) − F(θ*)` against dpsolve's "
        f"certified θ*, mean over {len(SEEDS)} seeds ± the half-width of a 95% interval "
        "(1.96 standard errors). `auto` is `dpsolve.choose_solver`'s choice, from public "
        "constants only (named in the last column).",
        "",
        "| dataset | n, p | ε | method | excess risk | ± 95% | chosen |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, n, p, eps, method, mean, half, chosen in rows:
        lines.append(f"| {name} | {n}, {p} | {eps:g} | {method} | {mean:.3g} | {half:.2g} | "
                     f"{chosen} |")
    lines += ["", "![Excess risk against ε](figures/peers_utility.png)", ""]
    verdicts = []
    for name in dict.fromkeys(r[0] for r in rows):
        for eps in EPSILONS:
            get = {r[4]: r for r in rows if r[0] == name and r[3] == eps}
            dpl, ours = get["diffprivlib (ε)"], get["dpsolve objective_perturbation (ε)"]
            diff = ours[5] - dpl[5]
            half = math.hypot(ours[6], dpl[6])
            word = ("lower" if diff < -half else "higher" if diff > half
                    else "not distinguishable")
            verdicts.append(f"| {name} | {eps:g} | {ours[5] / dpl[5]:.2f} | {word} |")
    lines += ["**dpsolve's objective perturbation against diffprivlib** (both pure ε): the ratio "
              "of mean excess risks, and whether the 95% interval of the difference excludes 0.",
              "", "| dataset | ε | dpsolve / diffprivlib | dpsolve's risk is |", "|---|---|---|---|",
              *verdicts, ""]
    return "\n".join(lines)


def main():
    if diffprivlib is None:
        raise SystemExit("needs diffprivlib (see this module's docstring)")
    rows = measure()
    (ROOT / "docs" / "figures").mkdir(exist_ok=True)
    _figure(rows, ROOT / "docs" / "figures" / "peers_utility.png")
    page = write_page(rows)
    (ROOT / "docs" / "peers.md").write_text(HEADER + page + FOOTER)


HEADER = ""
FOOTER = """
## What this page does not cover yet

- **Opacus.** DP-SGD with Opacus's documented defaults at the same (ε, δ) is not in the table
  (the speed comparison is in [performance](performance.md#peers)).
- **Multiclass.** The multiclass datasets are compared one class against the rest;
  diffprivlib's multiclass `LogisticRegression` against dpsolve's multinomial solvers is not.
- **Test accuracy** is not reported: the comparison is on the objective both were asked to
  minimise.
- One λ (10⁻³) and no intercept, so that both libraries solve exactly the same problem.
"""


if __name__ == "__main__":
    main()
