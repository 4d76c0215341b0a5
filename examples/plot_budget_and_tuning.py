r"""
One budget for cross-validation and private tuning
==================================================

Every private release spends privacy: each cross-validation fit, each held-out score and the
choice of hyperparameters. A :class:`dpsolve.BudgetAccountant` composes all of them into one
ledger and refuses, before it runs, any release that would take the total past the budget.
Hyperparameters are tuned with :class:`~dpsolve.private_selection.PrivateGridSearch`, the
random-stopping selection of Liu & Talwar (2019): the best of a random, geometrically
distributed number of runs, each an ε-DP fit and score, is :math:`3\varepsilon`-DP whatever the
number of candidates. Pure ε composes by addition, so the ledger below adds up exactly.
"""

# %%
# The data and the model
# ----------------------
# The features are mapped to [-1, 1] by their documented ranges, a public transformation that
# reads no record; ``row_norm=4`` clips the few longer rows. The budget is passed to the
# estimator, so everything it fits or scores is charged.
import textwrap
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import KFold, cross_val_score, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

import dpsolve
from dpsolve.estimators import DPLogisticRegression
from dpsolve.private_selection import AccuracyScorer, PrivateGridSearch
from dpsolve.privacy import BudgetExceededError

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
low, high = dpsolve.datasets.breast_cancer_ranges()
centre, half_width = (low + high) / 2, (high - low) / 2


def to_unit_box(Z):
    """Map each feature to [-1, 1] by its documented range (public constants only)."""
    return (Z - centre) / half_width


# Clipping the longer rows is intended here; its warning would repeat for every fit.
warnings.filterwarnings("ignore", message=".*were clipped to it")

budget = dpsolve.BudgetAccountant(epsilon=10.0)
model = make_pipeline(FunctionTransformer(to_unit_box), DPLogisticRegression(
    epsilon=1.0, reg=0.1, row_norm=4.0, classes=[0, 1], solver_options={"extra_reg": "cms"},
    accountant=budget, random_state=0))

# %%
# Cross-validate privately
# ------------------------
# Five fits at ε = 1 and five noisy accuracies at ε = 0.1 (Laplace noise on the count of
# correct predictions). The folds come from :class:`~sklearn.model_selection.KFold`, which does
# not look at the labels; ``cv=5`` would stratify by them.
scores = cross_val_score(model, X_train, y_train, cv=KFold(5, shuffle=True, random_state=0),
                         scoring=AccuracyScorer(0.1, accountant=budget, random_state=0))
print("noisy cross-validated accuracy:", scores.round(3))

# %%
# Tune privately
# --------------
# Six candidates; the search is charged once, :math:`3 \times (1 + 0.1) = 3.3`, before any fit.
search = PrivateGridSearch(model, {"dplogisticregression__reg": [0.01, 0.1, 1.0],
                                   "dplogisticregression__intercept_scale": [1.0, 4.0]},
                           score_epsilon=0.1, random_state=0).fit(X_train, y_train)
print("chosen:", search.best_params_, "at epsilon", round(search.epsilon_, 3))
print("test accuracy of the released model:",
      round(search.best_estimator_.score(X_test, y_test), 3))

# %%
# The ledger, and a release it refuses
# ------------------------------------
# After 8.8 of 10, one more fit at ε = 1 is admitted and the next is refused: nothing is
# charged and the fit does not run.
model.fit(X_train, y_train)
try:
    model.fit(X_train, y_train)
except BudgetExceededError as error:
    print(textwrap.fill(f"refused: {error}", 95))
print(budget.report())

spent = np.cumsum([charge.epsilon for charge in budget.ledger])
labels = [charge.labels[0] for charge in budget.ledger]
colours = {"objective_perturbation": "C0", "noisy accuracy": "C1", "private selection": "C2"}
fig, ax = plt.subplots(figsize=(6.5, 3.8))
ax.bar(range(1, len(spent) + 1), spent, color=[colours.get(label, "C3") for label in labels])
ax.axhline(budget.epsilon, color="k", ls="--", label="budget ε = 10")
for label, colour in colours.items():
    ax.bar([0], [0], color=colour, label=label)
ax.set_xlabel("release")
ax.set_ylabel("ε spent so far")
ax.set_xlim(0.3, len(spent) + 0.7)
ax.legend(loc="upper left", fontsize=8)
fig.tight_layout()
plt.show()
