"""Accuracy and privacy at fixed settings, so that a regression in what a solver delivers shows
on the asv graphs just like one in speed.

One cell per solver (and per case of Theorem 2 of the multi-party SGD notes), a synthetic
logistic problem with n = 2000, p = 10, unit rows, five seeds; each cell is run through
``dpsolve.experiments.execute`` (the same code as the sweeps), against the certified reference
minimiser. Tracked:

* ``ExcessRisk``: mean excess risk F(theta) - F(theta*) (mean form) over the seeds, and the
  epsilon the tight accountant certifies for the noise used;
* ``RatioToBound``: that mean over the bound of the theorem that applies;
* ``NoiseRatio``: the noise the source's own calibration uses over the tight calibration's, at
  the same (epsilon, delta).

All cells are computed once, in the mixin's ``setup_cache``. Run directly
(``python -m benchmarks.bench_accuracy``) to print the table.
"""
import math

from dpsolve.experiments import execute, load_sweep, summarize

from .common import SEEDS

DATA = {"source": "synthetic", "n": 2000, "p": 10}
BALL = {"loss": "logistic", "radius": 1.0}
RIDGE = {"loss": "logistic", "radius": 1.0, "reg": 0.1}
FREE_RIDGE = {"loss": "logistic", "radius": "none", "reg": 0.1}   # objective perturbation: no C

# cell -> (problem, solver settings, the tight calibration the paper's noise is compared with)
CELLS = {
    "noisy_sgd (Theorem 2, Lipschitz)": (
        BALL, {"name": "noisy_sgd", "epsilon": 0.9, "delta": 1e-12, "calibration": "rdp"}, "rdp"),
    "noisy_sgd (Theorem 2, strongly convex)": (
        RIDGE, {"name": "noisy_sgd", "epsilon": 0.9, "delta": 1e-12, "calibration": "rdp",
                "step_size": "strongly_convex"}, "rdp"),
    "clipped_gd": (BALL, {"name": "clipped_gd", "epsilon": 0.5, "delta": 1e-6}, "pld"),
    "minibatch_sgd": (RIDGE, {"name": "minibatch_sgd", "epsilon": 1.0, "batch_size": 10,
                              "schedule": "inv"}, None),
    # epsilon < 1: the classic Gaussian mechanism (the sources' calibration) needs it
    "output_perturbation": (RIDGE, {"name": "output_perturbation", "epsilon": 0.9,
                                    "delta": 1e-6}, "pld"),
    "objective_perturbation": (FREE_RIDGE, {"name": "objective_perturbation", "epsilon": 0.9,
                                       "delta": 1e-6}, "pld"),
    "multiparty_gd (Theorem 4)": (
        {**BALL, "reg": 0.05}, {"name": "multiparty_gd", "parties": 4, "epsilon": 1.0,
                                "delta": 1e-6, "steps": 100}, "pld"),
    "aggregated_output_perturbation": (RIDGE, {"name": "aggregated_output_perturbation",
                                               "parties": 4, "epsilon": 0.9, "delta": 1e-6},
                                       "pld"),
    "joint_sgd (Theorem 3.1)": (
        BALL, {"name": "joint_sgd", "owners": 4, "epsilon": 1.0, "delta": 1e-6,
               "calibration": "paper"}, "pld"),
}


def _run(problem, solver, replicates):
    """Summary of the cell and its first run's result."""
    sweep = load_sweep({"name": "bench-accuracy", "seed": 0, "replicates": replicates,
                        "data": DATA, "problem": problem, "solver": [solver]})
    rows = [{"cell_id": "cell", "spec": spec, "result": execute(spec, sweep.seed)}
            for spec in sweep.runs()]
    return summarize(rows)[0], rows[0]["result"]


def measure():
    """cell -> excess risk, bound, ratio, certified epsilon, paper/tight noise ratio."""
    out = {}
    for cell, (problem, solver, tight) in CELLS.items():
        summary, first = _run(problem, solver, len(SEEDS))
        ratio = math.nan
        if tight is not None:
            # sigma depends on the settings, not the seed: one run of the other calibration
            sigmas = {first["calibration"]: first["sigma"]}
            for calibration in {"paper", tight} - set(sigmas):
                sigmas[calibration] = _run(problem, {**solver, "calibration": calibration},
                                           1)[1]["sigma"]
            ratio = sigmas["paper"] / sigmas[tight]
        out[cell] = {"excess_risk": summary["excess_risk"], "bound": summary["bound"],
                     "ratio_to_bound": summary["ratio_to_bound"],
                     "certified_epsilon": summary["certified_epsilon"],
                     "paper_over_tight": ratio}
    return out


class AccuracyMixin:
    """The cells, computed once for every class below."""

    timeout = 1800

    def setup_cache(self):
        return measure()


class ExcessRisk(AccuracyMixin):
    params = list(CELLS)
    param_names = ["cell"]

    def track_mean_excess_risk(self, results, cell):
        return results[cell]["excess_risk"]

    track_mean_excess_risk.unit = "F(theta) - F(theta*), mean of 5 seeds"

    def track_certified_epsilon(self, results, cell):
        return results[cell]["certified_epsilon"]

    track_certified_epsilon.unit = "epsilon at the cell's delta (tight accountant)"


class RatioToBound(AccuracyMixin):
    params = [c for c in CELLS if c != "aggregated_output_perturbation"]   # no bound for it
    param_names = ["cell"]

    def track_ratio_to_bound(self, results, cell):
        return results[cell]["ratio_to_bound"]

    track_ratio_to_bound.unit = "mean excess risk / bound"


class NoiseRatio(AccuracyMixin):
    params = [c for c, (_, _, tight) in CELLS.items() if tight is not None]
    param_names = ["cell"]

    def track_paper_over_tight_noise(self, results, cell):
        return results[cell]["paper_over_tight"]

    track_paper_over_tight_noise.unit = "sigma (source's calibration) / sigma (tight)"


def main():
    results = measure()
    print("| cell | excess risk | bound | risk / bound | certified ε | σ paper / σ tight |")
    print("|---|---|---|---|---|---|")
    for cell, r in results.items():
        bound = "—" if r["bound"] is None else f"{r['bound']:.3g}"
        ratio = "—" if r["ratio_to_bound"] is None else f"{r['ratio_to_bound']:.3g}"
        print(f"| {cell} | {r['excess_risk']:.3g} | {bound} | {ratio} | "
              f"{r['certified_epsilon']:.3g} | {r['paper_over_tight']:.3g} |")


if __name__ == "__main__":
    main()
