r"""
Measured excess risk against a theorem's bound
==============================================

DP-GD with per-sample clipping (the DP-GD lecture notes' algorithm; clipping as in Abadi et al.
2016) on logistic regression over the unit ball. With noise from the exact (PLD) accountant,
:func:`dpsolve.bounds.clipped_gd_bound` bounds its excess risk with explicit constants; at the
default step count, which minimises that bound, it is about :math:`2RC\sqrt{p}\,\sigma_1/n`
(:math:`\sigma_1` the Gaussian noise for (ε, δ) at sensitivity 1), the rate
:math:`O(RL\sqrt{p\ln(1/\delta)}/(\varepsilon n))`. Bassily, Smith & Thakurta (2014) show that
no (ε, δ)-DP algorithm does better than :math:`\Omega(G\,\mathrm{diam}(C)\min(1,
\sqrt{p}/(\varepsilon n)))` on every dataset. The measured excess risk
:math:`F(\theta) - F(\theta^*)`, against a certified minimiser θ*, stays within a small factor
of the upper bound and falls like :math:`1/n`, as both bounds do.
"""

# %%
# Runs over n
# -----------
# Five noise draws at each n; θ* comes from :func:`dpsolve.reference_minimizer`, whose
# certified gap (far below the risks measured here) bounds how far it is from the true minimum.
import matplotlib.pyplot as plt
import numpy as np

import dpsolve

epsilon, delta = 1.0, 1e-6
sizes = [250, 500, 1000, 2000, 4000, 8000]
measured, upper, lower, steps, gaps = [], [], [], [], []
for n in sizes:
    X, y = dpsolve.datasets.make_synthetic(n=n, p=10, rng=n)
    problem = dpsolve.Problem(X, y, "logistic", radius=1.0)
    reference = dpsolve.reference_minimizer(problem, cache=False)
    risks = []
    for seed in range(5):
        fit = dpsolve.clipped_gd(problem, epsilon, delta, rng=seed)
        risks.append(dpsolve.excess_risk(problem, fit.theta, reference))
    measured.append(risks)
    upper.append(dpsolve.bounds.clipped_gd_bound(problem, epsilon, delta, steps=fit.steps))
    lower.append(dpsolve.bounds.lower_bound_lipschitz(problem, epsilon))
    steps.append(fit.steps)
    gaps.append(reference.gap)
measured = np.array(measured)
mean = measured.mean(axis=1)

print(f"{'n':>6}  {'T':>5}  {'mean excess risk':>16}  {'bound':>8}  {'ratio':>5}  {'gap of θ*':>9}")
for n, t, m, u, g in zip(sizes, steps, mean, upper, gaps):
    print(f"{n:6d}  {t:5d}  {m:16.2e}  {u:8.2e}  {m / u:5.2f}  {g:9.1e}")
slope = np.polyfit(np.log(sizes), np.log(mean), 1)[0]
bound_slope = np.polyfit(np.log(sizes), np.log(upper), 1)[0]
print(f"log-log slope against n: measured {slope:.2f}, bound {bound_slope:.2f}")

# %%
# The figure
# ----------
# Each dot is one run; the line joins the means.
fig, ax = plt.subplots(figsize=(6, 4))
for k, n in enumerate(sizes):
    ax.plot([n] * measured.shape[1], measured[k], ".", color="C0", alpha=0.5)
ax.plot(sizes, mean, "o-", color="C0", label="clipped_gd, measured (mean of 5)")
ax.plot(sizes, upper, "--", color="C3", label="upper bound (clipped_gd_bound)")
ax.plot(sizes, lower, ":", color="k", label="lower bound, Bassily–Smith–Thakurta 2014 (constant 1)")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xticks(sizes, [str(n) for n in sizes])
ax.minorticks_off()
ax.set_xlabel("n")
ax.set_ylabel("excess risk  F(θ) − F(θ*)")
ax.set_title(f"Logistic loss, p = 10, ‖θ‖ ≤ 1, ε = {epsilon:g}, δ = {delta:g}")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
