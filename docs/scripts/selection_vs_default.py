"""When private selection beats the estimator's defaults at equal total epsilon.

    PYTHONPATH=. python docs/scripts/selection_vs_default.py [--seeds 10] [--epsilons 1 4 16] [--jobs 2]

For each total epsilon E and each seed, on a fresh draw of the data:

* **default**: the estimator at its default parameters (whatever ``dpsolve.estimators`` sets
  them to when the script runs), fitted once on all n training rows at epsilon E;
* **search**: ``PrivateGridSearch`` over ``reg`` (the grid below, plus the estimator's default
  ``reg`` if it is not in it) with each private scorer, at a total of E with ``score_epsilon``
  included: without refit each run gets E/3 (Liu & Talwar's factor 3), nine tenths for the fit
  and a tenth for the score; with ``refit=True`` the total is 3 (e_fit + e_score) + e_fit
  with e_score = e_fit / 9, so e_fit = 3E/13.

Classification: ``make_classification`` (n = 5000 training and 5000 test rows, 20 features,
``weights=[0.95]``: 5% positives), each feature mapped from the public range [-4, 4] to [0, 1]
(clipped), ``row_norm = sqrt(20)``, ``classes=[0, 1]``; test AUC and balanced accuracy.
Regression: ``make_regression`` (5000 + 5000 rows, 10 features, 5 informative, noise 10), each
feature mapped from [-4, 4] to [-1, 1], ``row_norm = sqrt(10)``, labels divided by the public
scale 600 and clipped to ``label_bound = 1``; test R^2. Each cell is the mean over seeds and its
standard error. Prints the markdown tables of docs/user_guide.md ("When selection helps").
"""
import argparse
import math
import multiprocessing
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import make_classification, make_regression
from sklearn.metrics import balanced_accuracy_score, r2_score, roc_auc_score

from dpsolve.estimators import DPLinearRegression, DPLogisticRegression
from dpsolve.private_selection import PrivateGridSearch

N, N_TEST = 5000, 5000
P_CLASSIFICATION, P_REGRESSION = 20, 10
REGS = [1e-4, 1e-3, 1e-2, 1e-1, 1.0]
SCORE_SHARE = 0.1                    # of a run's epsilon, for the score
CLASSIFICATION_SCORINGS = ("accuracy", "balanced_accuracy", "neg_log_loss")
REGRESSION_SCORINGS = ("neg_mean_squared_error", "r2")
LABEL_SCALE = 600.0                  # public: labels / 600 lie mostly in [-1, 1]


def classification_data(seed):
    X, y = make_classification(N + N_TEST, P_CLASSIFICATION, weights=[0.95],
                               random_state=seed)
    X = np.clip((X + 4.0) / 8.0, 0.0, 1.0)        # public range [-4, 4] -> [0, 1]
    return X[:N], y[:N], X[N:], y[N:]


def regression_data(seed):
    X, y = make_regression(N + N_TEST, P_REGRESSION, n_informative=5, noise=10.0,
                           random_state=seed)
    X = np.clip(X / 4.0, -1.0, 1.0)               # public range [-4, 4] -> [-1, 1]
    y = np.clip(y / LABEL_SCALE, -1.0, 1.0)
    return X[:N], y[:N], X[N:], y[N:]


def grid(estimator):
    default = estimator.get_params()["reg"]
    regs = list(REGS) if any(default == r for r in REGS) else list(REGS) + [default]
    return {"reg": regs}


def epsilons(total, refit):
    """(e_fit, e_score) for a search whose total is ``total``."""
    if refit:
        fit = total / (3.0 * (1.0 + SCORE_SHARE / (1 - SCORE_SHARE)) + 1.0)
        return fit, fit * SCORE_SHARE / (1 - SCORE_SHARE)
    run = total / 3.0
    return (1 - SCORE_SHARE) * run, SCORE_SHARE * run


def classification_scores(model, X, y):
    return {"AUC": roc_auc_score(y, model.decision_function(X)),
            "balanced accuracy": balanced_accuracy_score(y, model.predict(X))}


def run_classification(total, seed):
    X, y, X_test, y_test = classification_data(seed)
    make = lambda e: DPLogisticRegression(e, row_norm=math.sqrt(P_CLASSIFICATION),  # noqa: E731
                                          classes=[0, 1])
    rng = np.random.default_rng([seed, int(total * 1000)])
    out = {"default": classification_scores(make(total).fit(X, y, rng=rng), X_test, y_test)}
    for refit in (False, True):
        e_fit, e_score = epsilons(total, refit)
        for scoring in CLASSIFICATION_SCORINGS:
            search = PrivateGridSearch(make(e_fit), grid(make(e_fit)), score_epsilon=e_score,
                                       scoring=scoring, refit=refit,
                                       random_state=int(rng.integers(2**31))).fit(X, y)
            assert abs(search.epsilon_ - total) < 1e-9, (search.epsilon_, total)
            out[f"search, {scoring}" + (", refit" if refit else "")] = classification_scores(
                search.best_estimator_, X_test, y_test)
    return out


def run_regression(total, seed):
    X, y, X_test, y_test = regression_data(seed)
    make = lambda e: DPLinearRegression(e, row_norm=math.sqrt(P_REGRESSION),  # noqa: E731
                                        label_bound=1.0)
    rng = np.random.default_rng([seed, int(total * 1000), 1])
    score = lambda m: {"R^2": r2_score(y_test, m.predict(X_test))}  # noqa: E731
    out = {"default": score(make(total).fit(X, y, rng=rng))}
    for refit in (False, True):
        e_fit, e_score = epsilons(total, refit)
        for scoring in REGRESSION_SCORINGS:
            search = PrivateGridSearch(make(e_fit), grid(make(e_fit)), score_epsilon=e_score,
                                       scoring=scoring, refit=refit,
                                       random_state=int(rng.integers(2**31))).fit(X, y)
            assert abs(search.epsilon_ - total) < 1e-9, (search.epsilon_, total)
            out[f"search, {scoring}" + (", refit" if refit else "")] = score(
                search.best_estimator_)
    return out


def table(title, results, metrics, totals):
    rows = list(results[totals[0]][0])
    print(f"\n{title}\n")
    header = " | ".join(f"{m}, ε = {t:g}" for t in totals for m in metrics)
    print(f"| model | {header} |")
    print("|---" * (1 + len(totals) * len(metrics)) + "|")
    for row in rows:
        cells = []
        for t in totals:
            for m in metrics:
                values = np.array([r[row][m] for r in results[t]])
                se = values.std(ddof=1) / math.sqrt(len(values))
                cells.append(f"{values.mean():.3f} ± {se:.3f}")
        print(f"| {row} | " + " | ".join(cells) + " |")


def _task(task):
    kind, total, seed = task
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (run_classification if kind == "classification" else run_regression)(total,
                                                                                     seed)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 4.0, 16.0])
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    args = parser.parse_args()
    start = time.perf_counter()
    default = DPLogisticRegression().get_params()["reg"], DPLinearRegression().get_params()[
        "reg"]
    print(f"defaults: DPLogisticRegression reg={default[0]!r}, DPLinearRegression "
          f"reg={default[1]!r}; grid reg={REGS} (+ the default); {args.seeds} seeds")
    tasks = [(kind, t, s) for kind in ("classification", "regression")
             for t in args.epsilons for s in range(args.seeds)]
    done = []
    with multiprocessing.Pool(args.jobs) as pool:
        for k, result in enumerate(pool.imap(_task, tasks), 1):
            done.append(result)
            print(f"  {k}/{len(tasks)} done ({time.perf_counter() - start:.0f} s)",
                  file=sys.stderr, flush=True)
    results = dict(zip(tasks, done))
    classification = {t: [results["classification", t, s] for s in range(args.seeds)]
                      for t in args.epsilons}
    regression = {t: [results["regression", t, s] for s in range(args.seeds)]
                  for t in args.epsilons}
    table("Imbalanced classification (5% positives), test metrics", classification,
          ("AUC", "balanced accuracy"), args.epsilons)
    table("Regression, test R^2", regression, ("R^2",), args.epsilons)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
