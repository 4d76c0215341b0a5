r"""
From a raw CSV table to a private model
=======================================

A table as it arrives: amounts in dollars, ages in years, a plan as strings, and missing cells.
A private model needs a bound on its rows that it does not read off the records (the
public-bound setting of Chaudhuri, Monteleoni & Sarwate 2011), and scikit-learn's scalers and
encoders read minima, means and categories off them. The transformers of
:mod:`dpsolve.preprocessing` map each column by public choices only, state the row bound their
output obeys, and :func:`~dpsolve.preprocessing.private_pipeline` gives it to the estimator.
Where only an order of magnitude is public, a private scaler releases the ranges at a share of
ε, and the model in scikit-learn's own pipeline composes that share into its own.
One :class:`dpsolve.BudgetAccountant` is charged by the fit and by a private grid search
(:class:`~dpsolve.private_selection.PrivateGridSearch`, the random-stopping selection of
Liu & Talwar 2019), and its ledger lists every release and its cost.
"""

# %%
# A raw table, read with pandas
# -----------------------------
# The CSV text is written here to an in-memory buffer; a file name works the same. An empty
# cell is a missing value, ``"legacy"`` is a plan that the public list below does not name.
import io

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

import dpsolve
from dpsolve.estimators import DPLogisticRegression
from dpsolve.preprocessing import (PrivateRangeScaler, PublicCategoryEncoder,
                                   PublicConstantImputer, PublicRangeScaler, output_row_norm,
                                   private_pipeline)
from dpsolve.private_selection import PrivateGridSearch

rng = np.random.default_rng(0)
n = 4000
age = rng.integers(18, 90, n)
income = np.round(rng.lognormal(10.6, 0.5, n), 2)
balance = np.round(rng.gamma(2.0, 1500.0, n), 2)
plan = rng.choice(["basic", "plus", "premium", "legacy"], n, p=[0.5, 0.25, 0.2, 0.05])
risk = -1.0 + 0.04 * (age - 50) - 0.3 * (plan == "premium") + balance / 6000
churned = (rng.random(n) < 1 / (1 + np.exp(-risk))).astype(int)
rows = ["customer,income,age,balance,plan,churned"]
for k in range(n):
    cells = [f"C{k:05d}", f"{income[k]:.2f}", str(age[k]), f"{balance[k]:.2f}", plan[k],
             str(churned[k])]
    for j in (1, 2, 3, 4):                            # about 5% of these cells are missing
        if rng.random() < 0.05:
            cells[j] = ""
    rows.append(",".join(cells))
csv = io.StringIO("\n".join(rows) + "\n")

table = pd.read_csv(csv)
print(table.head(6).to_string())
print("missing cells per column:", table.isna().sum().to_dict())
features, label = table.drop(columns=["customer", "churned"]), table["churned"]
X_train, X_test, y_train, y_test = train_test_split(features, label, test_size=0.25,
                                                    random_state=0)

# %%
# Public choices, written down without looking at the table
# ----------------------------------------------------------
# Each number below comes from what is known about the columns, not from the records: an
# income up to $250,000 a year, an age between 18 and 100, a balance up to $20,000, the plans
# the product sells. A missing amount or age takes a fixed value; a missing or unlisted plan
# goes to the unknown bucket. A value outside its range is clipped to the range's end: a range
# chosen too narrow costs accuracy, never privacy.
numbers = make_pipeline(
    PublicConstantImputer(fill_value=[40_000.0, 45.0, 0.0]),
    PublicRangeScaler(ranges=[(0.0, 250_000.0), (18.0, 100.0), (0.0, 20_000.0)]))
preprocess = ColumnTransformer([
    ("numbers", numbers, ["income", "age", "balance"]),
    ("plan", PublicCategoryEncoder(categories=[["basic", "plus", "premium"]]), ["plan"])])
print("row bound from the public parameters:", round(output_row_norm(preprocess), 6),
      "= sqrt(3 + 1)")

# %%
# One budget, one private fit
# ---------------------------
# ``private_pipeline`` sets the estimator's ``row_norm`` to the preprocessing's bound; the
# classes are public too, so nothing is read off the data and no ``PrivacyWarning`` is raised.
# The fit at ε = 1 is charged to the budget before it reads a record.
budget = dpsolve.BudgetAccountant(epsilon=6.0)
model = private_pipeline(preprocess, DPLogisticRegression(
    epsilon=1.0, classes=[0, 1], accountant=budget, random_state=0))
print("estimator's row_norm:", round(model[-1].row_norm, 6))
model.fit(X_train, y_train)
print("epsilon:", model[-1].epsilon_, "holds:", model[-1].privacy_report_.holds)
print("columns out:", list(model[0].get_feature_names_out()))
print("test AUC:", round(roc_auc_score(y_test, model.decision_function(X_test)), 3))

# %%
# A private grid search on the same budget
# ----------------------------------------
# Three ridge strengths. Each run fits at ε = 1 on part of the training rows and scores the
# rest at ε = 0.1; the best of a random number of runs is :math:`3 \times (1 + 0.1) = 3.3`-DP,
# whatever the number of candidates, and the search charges the estimator's budget once,
# before any fit. The released model's privacy report lists the parts the search's ε
# composes: here the selection alone (E[K] = 3 runs, each a fit and a private score); a
# private row bound would come first, and ``refit=True`` would add the refit.
search = PrivateGridSearch(model, {"dplogisticregression__reg": [1e-3, 1e-2, 1e-1]},
                           score_epsilon=0.1, random_state=0).fit(X_train, y_train)
best = search.best_estimator_
print("chosen:", search.best_params_)
print("search epsilon:", round(search.epsilon_, 4), "holds:", best[-1].privacy_report_.holds)
print(best[-1].privacy_report_.summary())
print("test AUC of the released model:",
      round(roc_auc_score(y_test, best.decision_function(X_test)), 3))

# %%
# When a range is not known: a private scaler in scikit-learn's pipeline
# -----------------------------------------------------------------------
# Suppose only an order of magnitude is public for the amounts: an income and a balance under
# $1 million, an age under 150. :class:`~dpsolve.preprocessing.PrivateRangeScaler` releases
# each column's 0.05 and 0.95 quantiles inside those outer ranges, at ε = 0.3 for the three
# columns (0.05 per quantile), and maps them as the public scaler does. A quantile released at
# so small an ε inside a range a hundred times wider than the bulk of the column can land far
# above it, as the balance's upper end may below: that is the price of knowing only an order
# of magnitude, paid in accuracy, never in privacy. Its output's row bound is public all the
# same (√3 for the three columns, whatever the table), so ``output_row_norm`` still gives the
# estimator its ``row_norm``. In scikit-learn's own ``make_pipeline`` the model composes the
# scaler's release into its own: its ``epsilon_`` is 0.3 + 1 = 1.3, and its privacy report
# lists both. The scaler charges the same budget, before it reads a record; a scaler on
# another budget, or an estimator with a bad parameter, is refused before anything is spent.
private_numbers = make_pipeline(
    PublicConstantImputer(fill_value=[40_000.0, 45.0, 0.0]),
    PrivateRangeScaler(outer_ranges=[(0.0, 1e6), (0.0, 150.0), (0.0, 1e6)], epsilon=0.3,
                       random_state=0, accountant=budget))
private_preprocess = ColumnTransformer([
    ("numbers", private_numbers, ["income", "age", "balance"]),
    ("plan", PublicCategoryEncoder(categories=[["basic", "plus", "premium"]]), ["plan"])])
private_ranges = make_pipeline(private_preprocess, DPLogisticRegression(
    epsilon=1.0, classes=[0, 1], row_norm=output_row_norm(private_preprocess),
    accountant=budget, random_state=0)).fit(X_train, y_train)
released = private_ranges[0].named_transformers_["numbers"][-1].ranges_
print("released ranges:", np.round(released, -2).tolist())
print("epsilon:", round(private_ranges[-1].epsilon_, 12),
      "holds:", private_ranges[-1].privacy_report_.holds)
print(private_ranges[-1].privacy_report_.summary())
print("test AUC:",
      round(roc_auc_score(y_test, private_ranges.decision_function(X_test)), 3))

# %%
# The ledger
# ----------
# Every release charged to the budget, with its cost, and what remains. Pure ε composes by
# addition: 1 + 3.3 + 0.3 + 1 = 5.6 of 6.
print(budget.report())

spent = np.cumsum([charge.epsilon for charge in budget.ledger])
fig, ax = plt.subplots(figsize=(5.5, 3.2))
ax.bar(range(1, len(spent) + 1), spent, color="C0")
ax.axhline(budget.epsilon, color="k", ls="--", label=f"budget ε = {budget.epsilon:g}")
ax.set_xticks(range(1, len(spent) + 1),
              [charge.labels[0] for charge in budget.ledger], fontsize=8)
ax.set_ylabel("ε spent so far")
ax.legend(loc="upper left", fontsize=8)
fig.tight_layout()
plt.show()
