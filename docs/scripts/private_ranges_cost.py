"""The private-ranges section of docs/preprocessing.md: what PrivateRangeScaler and
PrivateStandardScaler cost against PublicRangeScaler at equal total epsilon, on scikit-learn's
breast-cancer data in its raw units.

    PYTHONPATH=. python docs/scripts/private_ranges_cost.py [--seeds 20]

Public: each column mapped from its documented range (``breast_cancer_ranges()``), the fit
at the whole epsilon. Private: each column's range released as its (0.05, 0.95) private
quantiles inside a coarse outer range, [0, the power of ten above the documented maximum],
at a share of epsilon, the fit at the rest. Private moments: PrivateStandardScaler with the
same coarse outer ranges as its clipping ranges, at its default clip and the same share. All
through ``private_pipeline`` with ``DPLogisticRegression`` at its defaults. Each seed draws a new stratified 75/25 split and new
noise; the table gives the mean test AUC and a 95% interval for the mean difference (private
minus public, paired by seed: 1.96 standard errors), for each private variant. The range
scalers map onto [0, 1] (``feature_range=(0, 1)``, given: their default when the table was
measured; it is (-1, 1) now).
"""
import argparse
import math

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

from dpsolve.datasets import breast_cancer_ranges
from dpsolve.estimators import DPLogisticRegression
from dpsolve.preprocessing import (PrivateRangeScaler, PrivateStandardScaler, PublicRangeScaler,
                                   private_pipeline)

EPSILONS = (1.0, 3.0, 10.0)
SHARES = (0.1, 0.3)


def _auc(preprocess, epsilon, seed, split):
    X_train, X_test, y_train, y_test = split
    model = private_pipeline(preprocess, DPLogisticRegression(
        epsilon=epsilon, classes=[0, 1], random_state=seed))
    model.fit(X_train, y_train)
    return roc_auc_score(y_test, model.predict_proba(X_test)[:, 1]), model[-1].epsilon_


def main(seeds):
    data = load_breast_cancer()
    low, high = breast_cancer_ranges()
    documented = list(zip(low, high))
    outer = [(0.0, 10.0 ** math.ceil(math.log10(h))) for h in high]
    print(f"{'epsilon':>7} {'share':>5} {'public AUC':>10} {'ranges AUC':>10} "
          f"{'difference [95% interval]':>28} {'moments AUC':>11} {'difference [95% interval]':>28}")
    for epsilon in EPSILONS:
        for share in SHARES:
            public, private, moments = [], [], []
            for seed in range(seeds):
                split = train_test_split(data.data, data.target, test_size=0.25,
                                         stratify=data.target, random_state=seed)
                auc, total = _auc(PublicRangeScaler(documented, feature_range=(0, 1)), epsilon,
                                  seed, split)
                public.append(auc)
                scaler = PrivateRangeScaler(outer, epsilon=share * epsilon, feature_range=(0, 1),
                                            random_state=seed)
                auc, total_private = _auc(scaler, (1 - share) * epsilon, seed, split)
                assert math.isclose(total, total_private, rel_tol=1e-9)
                private.append(auc)
                scaler = PrivateStandardScaler(outer, epsilon=share * epsilon, random_state=seed)
                moments.append(_auc(scaler, (1 - share) * epsilon, seed, split)[0])
            cells = []
            for variant in (private, moments):
                diff = np.array(variant) - np.array(public)
                half = 1.96 * diff.std(ddof=1) / math.sqrt(seeds)
                cells.append(f"{np.mean(variant):10.3f} {diff.mean():+12.3f} "
                             f"[{diff.mean() - half:+.3f}, {diff.mean() + half:+.3f}]")
            print(f"{epsilon:7g} {share:5g} {np.mean(public):10.3f} " + " ".join(cells))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    main(parser.parse_args().seeds)
