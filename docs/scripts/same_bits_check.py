"""Hashes of the seeded releases the same-bits promise covers (docs/conventions.md, "Same bits on
every machine"): every solver, loss and storage of X it names, research mode and secure=False.

Run it under other code paths and compare, e.g.::

    python docs/scripts/same_bits_check.py > a.json
    OPENBLAS_CORETYPE=Sandybridge python docs/scripts/same_bits_check.py > b.json
    python docs/scripts/same_bits_check.py --compare a.json b.json

(OPENBLAS_CORETYPE only by hand: on some machines it is set for a reason.)
"""
import hashlib
import json
import sys
import warnings

import numpy as np
from scipy import sparse

import dpsolve
from dpsolve import Problem
from dpsolve.parties import Parties
from dpsolve.solvers import registry

PARTIES = ("multiparty_gd", "joint_sgd", "aggregated_output_perturbation")
CASES = [(solver, loss, storage)
         for solver in ("noisy_sgd", "clipped_gd", "minibatch_sgd", "dp_sgd", "multiparty_gd",
                        "joint_sgd", "output_perturbation", "objective_perturbation",
                        "aggregated_output_perturbation")
         for loss in ("logistic", "hinge", "squared", "huber_hinge")
         for storage in ("dense", "csr", "float32")
         if not (solver == "minibatch_sgd" and loss == "squared")
         and not (solver in PARTIES and storage == "csr")
         and not (solver.endswith("perturbation") and loss == "hinge")
         and not (solver == "objective_perturbation" and loss == "squared")]


def hashes():
    specs = {s.name: s for s in registry()}
    X0, y0 = dpsolve.datasets.make_synthetic(300, 6, rng=3)
    out = {}
    for solver, loss, storage in CASES:
        spec = specs[solver]
        X = {"dense": X0, "csr": sparse.csr_matrix(X0), "float32": X0.astype(np.float32)}[storage]
        y = np.clip(X0[:, 0] + 0.5 * X0[:, 1], -1, 1) if loss == "squared" else y0
        problem = Problem(X, y, loss, **spec.example_problem)
        args = [problem] + ([Parties.from_sizes(problem, [150, 150])]
                            if spec.partition is not None else [])
        fit = spec.function(*args, rng=7, **spec.example)
        h = hashlib.sha256(np.ascontiguousarray(fit.theta, dtype=np.float64).tobytes())
        if fit.model is not None:
            h.update(np.ascontiguousarray(fit.model.personal, dtype=np.float64).tobytes())
        out[f"{solver} {loss} {storage}"] = h.hexdigest()
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["--compare"]:
        a, b = (json.load(open(path)) for path in sys.argv[2:4])
        changed = [k for k in a if a[k] != b[k]]
        print(f"{len(a)} releases, {len(changed)} changed: {changed}")
    else:
        warnings.simplefilter("ignore")
        json.dump(hashes(), sys.stdout)
