r"""
Auditing a solver's privacy, and catching a broken one
======================================================

A solver with a wrong noise constant still returns a plausible model; its output distributions
give it away. :func:`dpsolve.audit.audit` runs a mechanism many times on two neighbouring
datasets, chooses a threshold test on half the runs and evaluates it on the other half, and
turns the test's true- and false-positive rates (with Clopper–Pearson bounds) into lower bounds
that hold with 95% confidence: :math:`\varepsilon \ge \ln(\mathrm{TPR} - \delta) -
\ln(\mathrm{FPR})`, and for Gaussian DP (Dong, Roth & Su 2022) :math:`\mu \ge
\Phi^{-1}(\mathrm{TPR}) - \Phi^{-1}(\mathrm{FPR})`. A lower bound above the claim refutes the
claim; one below it proves nothing, it only finds no contradiction. Here the audit leaves the
honest mechanisms alone and catches the same mechanisms with half their noise.
"""

# %%
# The Laplace mechanism
# ---------------------
# A count with sensitivity 1, released with Laplace noise of scale 1/ε for ε = 1, on the
# neighbouring inputs 0 and 1; 200,000 draws on each, vectorised (``batch=``). The broken
# version draws half the noise and keeps the claim.
import matplotlib.pyplot as plt
import numpy as np

import dpsolve
from dpsolve.audit import audit, canary_neighbours, gdp_mu
from dpsolve.privacy import laplace_noise, laplace_scale

scale = laplace_scale(1.0, 1.0)
results = {}
for label, factor in (("honest", 1.0), ("half noise", 0.5)):
    def laplace(value, rng, size, factor=factor):
        return value + laplace_noise(factor * scale, 1, size=size, rng=rng)

    results["Laplace", label] = audit(laplace, np.zeros(1), np.ones(1), runs=200_000,
                                      batch=100_000, claim=(1.0, 0.0), rng=1)
    print(f"Laplace, {label}:", results["Laplace", label])

# %%
# DP-GD, end to end
# -----------------
# A solver is audited through a canary: :func:`~dpsolve.audit.canary_neighbours` adds a
# coordinate that no record uses and a record along it whose label flips between the two
# datasets, so ``theta[p]`` carries the canary's whole influence. ``clipped_gd`` runs 50 steps
# at the claim (2, 10⁻⁵), 1,500 times on each dataset. At δ = 10⁻⁵ so few runs cannot reach the
# claimed ε; the claim is checked through μ, which :func:`~dpsolve.audit.gdp_mu` reads off the
# fit's composition of Gaussian releases. The broken run gets half the calibrated σ.
rng = np.random.default_rng(7)
X = rng.normal(size=(100, 10))
X /= np.linalg.norm(X, axis=1, keepdims=True)
y = np.where(X[:, 0] + 0.3 * rng.normal(size=100) > 0, 1.0, -1.0)
D, D_prime, canary = canary_neighbours(dpsolve.Problem(X, y, "hinge", radius=10.0))

honest = dpsolve.clipped_gd(D, 2.0, 1e-5, steps=50, clip_norm=0.5, output="last", rng=0)
step = honest.settings["step_size"]
for label, sigma in (("honest", honest.sigma), ("half noise", honest.sigma / 2)):
    def solver(problem, rng, sigma=sigma):
        return dpsolve.clipped_gd(problem, delta=1e-5, sigma=sigma, steps=50, clip_norm=0.5,
                                  step_size=step, output="last", rng=rng).theta

    results["DP-GD", label] = audit(solver, D, D_prime, runs=1500, statistic=canary,
                                    claim=honest, rng=1)
    print(f"DP-GD, {label}:", results["DP-GD", label])
print(f"claimed mu of DP-GD: {gdp_mu(honest):.3f}")

# %%
# The verdicts
# ------------
# Laplace is judged on ε (its claim is pure ε-DP), DP-GD on μ. A bar above its claim is a
# mechanism caught.
fig, axes = plt.subplots(1, 2, figsize=(8, 3.6))
for ax, (name, what, claimed) in zip(axes, (("Laplace", "epsilon", 1.0),
                                            ("DP-GD", "mu", gdp_mu(honest)))):
    values = [getattr(results[name, label], what) for label in ("honest", "half noise")]
    caught = [v > claimed for v in values]
    ax.bar(["honest", "half noise"], values, color=["C3" if c else "C2" for c in caught])
    ax.axhline(claimed, color="k", ls="--", label=f"claimed {'ε' if what == 'epsilon' else 'μ'}")
    ax.set_ylabel(f"95% lower bound on {'ε' if what == 'epsilon' else 'μ'}")
    ax.set_title(name)
    ax.legend(fontsize=8)
    for label, value, c in zip(("honest", "half noise"), values, caught):
        print(f"{name}, {label}: lower bound {value:.3f} against the claimed {claimed:.3f}: "
              f"{'caught' if c else 'not contradicted'}")
fig.tight_layout()
plt.show()
