"""The accuracy table of docs/user_guide.md: dpsolve's DPLogisticRegression (at a fixed reg, and
tuned privately by PrivateGridSearch within the same total epsilon) against scikit-learn's
non-private LogisticRegression and diffprivlib's LogisticRegression at the same epsilon, on
scikit-learn's breast-cancer data.

Needs diffprivlib, which does not import with scikit-learn >= 1.8 (pyproject's ``peers`` extra):

    PYTHONPATH=. /path/to/peers-venv/bin/python docs/scripts/user_guide_comparison.py [--seeds 50]

Each seed draws a new 75/25 train/test split and new noise; the table gives the mean test
accuracy and a 95% interval for the mean (1.96 standard errors over seeds).
"""
import argparse
import math
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from dpsolve.datasets import breast_cancer_ranges
from dpsolve.estimators import DPLogisticRegression
from dpsolve.private_selection import PrivateGridSearch

EPSILONS = (1.0, 3.0, 10.0)
REG = 0.1
#: Candidates for the private search: the regularisation, and objective perturbation's extra
#: regularisation Delta as its utility bound chooses it (the default) or by CMS 2011's rule.
GRID = {"dplogisticregression__reg": [1e-2, 1e-1, 1.0],
        "dplogisticregression__intercept_scale": [1.0, 4.0],
        "dplogisticregression__solver_options": [None, {"extra_reg": "cms"}]}
#: Objective perturbation with CMS 2011's rule for Delta (0 whenever that leaves epsilon' > 0),
#: the rule diffprivlib follows, in place of the Delta that minimises the excess-risk bound.
CMS_RULE = {"reg": REG, "solver_options": {"extra_reg": "cms"}}
#: A public row bound: the median row norm of the scaled data is about 3.5, the largest 4.7
#: (at most sqrt(30) = 5.5 by construction); rows above it are clipped.
ROW_NORM = 4.0
#: The search spends 3 (epsilon_fit + epsilon_score) (Liu & Talwar 2019): the score gets a
#: tenth of a run's share.
SCORE_SHARE = 0.1


def preprocess():
    """A stateless step (fitting it reads nothing private): each feature mapped from its public
    range to [-1, 1], so rows have norm at most sqrt(30)."""
    low, high = breast_cancer_ranges()
    return [FunctionTransformer(lambda X: (X - (low + high) / 2) / ((high - low) / 2))]


def _clip_and_append_one(X):
    """Rows clipped to ROW_NORM, then a constant feature 1 (as dpsolve's intercept)."""
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    X = X * np.minimum(1.0, ROW_NORM / np.maximum(norms, 1e-300))
    return np.hstack([X, np.ones((X.shape[0], 1))])


def run(epsilon, seed, X, y):
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=seed)
    n = len(y_tr)
    steps = preprocess()
    out = {}
    ref = make_pipeline(*steps, LogisticRegression(C=1.0 / (n * REG), max_iter=10_000))
    out["scikit-learn (not private)"] = ref.fit(X_tr, y_tr).score(X_te, y_te)
    dp = make_pipeline(*steps, DPLogisticRegression(epsilon=epsilon, row_norm=ROW_NORM,
                                                    classes=[0, 1], random_state=seed))
    out["dpsolve, defaults (reg = 'auto', private base rate)"] = dp.fit(X_tr, y_tr).score(
        X_te, y_te)
    dp = make_pipeline(*steps, DPLogisticRegression(epsilon=epsilon, reg=REG, row_norm=ROW_NORM,
                                                    classes=[0, 1], random_state=seed))
    out["dpsolve, reg = 0.1"] = dp.fit(X_tr, y_tr).score(X_te, y_te)
    dp = make_pipeline(*steps, DPLogisticRegression(epsilon=epsilon, row_norm=ROW_NORM,
                                                    classes=[0, 1], random_state=seed,
                                                    **CMS_RULE))
    out["dpsolve, reg = 0.1, extra_reg = 'cms'"] = dp.fit(X_tr, y_tr).score(X_te, y_te)
    run_epsilon = epsilon / 3.0
    search = PrivateGridSearch(
        make_pipeline(*steps, DPLogisticRegression(epsilon=(1 - SCORE_SHARE) * run_epsilon,
                                                   row_norm=ROW_NORM, classes=[0, 1])),
        GRID, score_epsilon=SCORE_SHARE * run_epsilon, random_state=seed).fit(X_tr, y_tr)
    assert abs(search.epsilon_ - epsilon) < 1e-9
    out["dpsolve, reg tuned privately (total epsilon)"] = search.best_estimator_.score(X_te,
                                                                                      y_te)
    from diffprivlib.models import LogisticRegression as DiffprivlibLR
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make_pipeline(*steps, DiffprivlibLR(epsilon=epsilon, data_norm=ROW_NORM,
                                                    random_state=seed))
        out["diffprivlib, defaults (C = 1)"] = model.fit(X_tr, y_tr).score(X_te, y_te)
        model = make_pipeline(*steps, DiffprivlibLR(epsilon=epsilon, data_norm=ROW_NORM,
                                                    C=1.0 / (n * REG), random_state=seed))
        out["diffprivlib, C = 1/(n reg)"] = model.fit(X_tr, y_tr).score(X_te, y_te)
        # its default intercept is not regularised, which its objective-perturbation proof
        # needs: the same model with the intercept as a regularised constant feature
        model = make_pipeline(*steps, FunctionTransformer(_clip_and_append_one),
                              DiffprivlibLR(epsilon=epsilon, data_norm=math.hypot(ROW_NORM, 1.0),
                                            C=1.0 / (n * REG), fit_intercept=False,
                                            random_state=seed))
        out["diffprivlib, regularised intercept"] = model.fit(X_tr, y_tr).score(X_te, y_te)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    args = parser.parse_args()
    X, y = load_breast_cancer(return_X_y=True)
    rows = {}
    for epsilon in EPSILONS:
        results = [run(epsilon, seed, X, y) for seed in range(args.seeds)]
        for name in results[0]:
            values = np.array([r[name] for r in results])
            half = 1.96 * values.std(ddof=1) / math.sqrt(len(values))
            rows.setdefault(name, {})[epsilon] = f"{values.mean():.3f} ± {half:.3f}"
    print("| model | " + " | ".join(f"ε = {e:g}" for e in EPSILONS) + " |")
    print("|---|" + "---|" * len(EPSILONS))
    for name, cells in rows.items():
        print(f"| {name} | " + " | ".join(cells[e] for e in EPSILONS) + " |")


if __name__ == "__main__":
    main()
