r"""
Sparse input: a CSR matrix fitted without densifying it
=======================================================

Text and one-hot features are mostly zeros. :class:`dpsolve.Problem` keeps a ``scipy.sparse``
X as one read-only CSR copy, and the single-machine solvers read each row at its stored entries
only. The privacy noise stays dense (a p-vector per step or per release), so sparsity speeds up
the passes over the data, not the noise. ``noisy_sgd`` (Bassily, Smith & Thakurta 2014),
``clipped_gd`` (DP-GD with per-sample clipping as in Abadi et al. 2016), ``minibatch_sgd``
(Song, Chaudhuri & Sarwate 2013), ``dp_sgd``, ``adassp`` and the two perturbation solvers
(Chaudhuri, Monteleoni & Sarwate 2011) take it; the multi-party solvers refuse it.
"""

# %%
# A bag-of-words-like matrix
# --------------------------
# 10,000 rows, 500 columns, about 10 non-zero counts per row, each row scaled to norm 0.999,
# inside the public bound 1; labels from a sparse linear model. The problem is unconstrained with a ridge
# term (``radius=None``, λ = 10⁻³), which every solver below accepts.
import time

import matplotlib.pyplot as plt
import numpy as np
from scipy import sparse

import dpsolve

rng = np.random.default_rng(0)
n, p = 10_000, 500
rows = np.repeat(np.arange(n), 10)
columns = rng.integers(0, p, size=n * 10)          # a repeated column adds up its counts
counts = rng.poisson(2.0, size=n * 10) + 1.0
X = sparse.csr_array((counts, (rows, columns)), shape=(n, p))
X.sum_duplicates()
norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
X.data *= np.repeat(0.999 / norms, np.diff(X.indptr))     # every row strictly inside the bound 1
w = np.zeros(p)
w[:50] = rng.standard_normal(50) * 3.0
y = np.where(X @ w + 0.1 * rng.standard_normal(n) > 0, 1.0, -1.0)
print(f"X: {type(X).__name__}, {X.nnz} stored entries ({X.nnz / (n * p):.2%} of {n} x {p})")

problem = dpsolve.Problem(X, y, "logistic", radius=None, reg=1e-3)
print("problem.is_sparse:", problem.is_sparse)
reference = dpsolve.reference_minimizer(problem, cache=False)

# %%
# Which solvers take it
# ---------------------
# The solver registry records it (``SolverSpec.sparse``); a solver that does not take sparse X
# refuses it before any work.
from dpsolve import solvers

for spec in solvers.registry():
    print(f"{spec.name:<32} {'takes sparse X' if spec.sparse else 'refuses it'}")

# %%
# Four of them at ε = 1
# ---------------------
# DP-GD and the two perturbation solvers at δ = 10⁻⁶, the one-pass ``minibatch_sgd`` at pure
# ε (δ = 0), whose per-batch noise costs much more at this n. ``noisy_sgd`` and ``dp_sgd`` take
# the same matrix; they are left out here only because their calibration searches take longer
# than this example should.
epsilon, delta = 1.0, 1e-6
fits = {
    "clipped_gd": lambda: dpsolve.clipped_gd(problem, epsilon, delta, rng=0),
    "minibatch_sgd": lambda: dpsolve.minibatch_sgd(problem, epsilon, batch_size=50, rng=0),
    "output_perturbation": lambda: dpsolve.output_perturbation(problem, epsilon, delta, rng=0),
    "objective_perturbation": lambda: dpsolve.objective_perturbation(problem, epsilon, delta,
                                                                     rng=0),
}
risks = {}
print(f"{'solver':<24}{'epsilon':>8}{'delta':>8}{'excess risk':>13}{'time (s)':>10}")
for name, run in fits.items():
    start = time.perf_counter()
    fit = run()
    seconds = time.perf_counter() - start
    risks[name] = dpsolve.excess_risk(problem, fit.theta, reference)
    print(f"{name:<24}{fit.epsilon:8.3g}{fit.delta:8.0e}{risks[name]:13.4f}{seconds:10.2f}")

fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6), width_ratios=[1, 1.3])
left.spy(X[:100], markersize=1, aspect="auto")
left.set_title("X, first 100 rows (stored entries)")
left.set_xlabel("column")
left.set_ylabel("row")
right.barh([f"{name} (δ = 0)" if name == "minibatch_sgd" else name for name in risks],
           list(risks.values()), color="C0")
right.set_xscale("log")
right.set_xlabel("excess risk F(θ) − F(θ*), ε = 1")
right.invert_yaxis()
fig.tight_layout()
plt.show()

# %%
# The multi-party solvers refuse it
# ---------------------------------
# Before any work, with a ``TypeError`` naming the solvers that take sparse input.
try:
    dpsolve.Parties.from_sizes(problem, [n // 2, n // 2])
except TypeError as error:
    print("Parties:", error)

# %%
# Same bits as dense
# ------------------
# The kernels skip the zeros, which add ±0 to every sum, so the gradient solvers give
# bit-identical results on the CSR matrix and on the same rows stored densely (checked here on
# the first 2,000 rows). The rows above were scaled to norm 0.999, inside the bound 1: a row
# that had to be clipped would have its norm summed in another order, dense or sparse, which
# can differ in the last bit.
small = dict(loss="logistic", radius=None, reg=1e-3)
on_sparse = dpsolve.clipped_gd(dpsolve.Problem(X[:2000], y[:2000], **small), 1.0, 1e-6, rng=0)
on_dense = dpsolve.clipped_gd(dpsolve.Problem(X[:2000].toarray(), y[:2000], **small), 1.0, 1e-6,
                              rng=0)
print("clipped_gd, sparse and dense bit-identical:",
      np.array_equal(on_sparse.theta, on_dense.theta))
