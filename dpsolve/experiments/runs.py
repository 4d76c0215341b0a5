"""Executing one run of a sweep: data, problem, certified theta*, the fit, its excess risk and the
bounds that apply. A pure function of the run spec and the root seed."""
import hashlib
import math
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import sparse

from .. import bounds, datasets, joint
from ..parties import Parties
from ..privacy import PrivacyWarning
from ..problem import Problem
from ..reference import excess_risk, reference_minimizer
from ..solvers import get as solver_spec
from .sweep import data_seed, run_seed


def load_data(data, root):
    """``(X, y)`` for a run's data spec."""
    source = data["source"]
    rng = data_seed({"data": data}, root)
    if source == "synthetic":
        return datasets.make_synthetic(int(data["n"]), int(data["p"]),
                                       noise=float(data.get("noise", 0.1)), rng=rng)
    if source == "separable":
        return datasets.make_separable(int(data["n"]), int(data["p"]),
                                       margin=float(data.get("margin", 0.001)), rng=rng)
    if source == "breast_cancer":
        return datasets.load_breast_cancer()
    if source == "digits":
        return datasets.load_digits()
    return load_file(data["path"], data.get("labels"))


def load_file(path, labels=None):
    """Rows from a ``.npy`` (with ``labels`` a second ``.npy``), ``.npz`` or ``.csv`` file (the
    last column is the label, unless ``labels`` names a file).

    An ``.npz`` file holds arrays ``X`` and ``y``, or a sparse matrix as
    ``scipy.sparse.save_npz`` writes it (arrays ``format``, ``shape``, ``data``, ``indices``,
    ``indptr``) with the labels as an array ``y`` beside them or in ``labels`` (an ``.npy``
    file). A sparse X is returned sparse (docs/sparse.md)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".npz":
        with np.load(path) as f:
            if "format" in f and "X" not in f:
                X = sparse.load_npz(path)
                if "y" in f:
                    return X, f["y"]
                if labels is None:
                    raise ValueError(f"{path}: a sparse .npz file needs its labels as an array "
                                     "y in the file or in a labels .npy file")
                return X, np.load(labels)
            if "X" not in f or "y" not in f:
                raise ValueError(f"{path}: an .npz file needs arrays named X and y (or a "
                                 "scipy.sparse matrix saved by save_npz, and y)")
            return f["X"], f["y"]
    if suffix == ".npy":
        if labels is None:
            raise ValueError(f"{path}: an .npy file of rows needs labels (a second .npy file)")
        return np.load(path), np.load(labels)
    if suffix == ".csv":
        table = np.loadtxt(path, delimiter=",", ndmin=2)
        if labels is not None:
            return table, np.loadtxt(labels, delimiter=",")
        return table[:, :-1], table[:, -1]
    raise ValueError(f"{path}: data files must be .npy, .npz or .csv")


def build_problem(spec, root):
    X, y = load_data(spec["data"], root)
    options = dict(spec["problem"])
    if options.get("radius") == "none":
        options["radius"] = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)     # row clipping: counted, not stored
        return Problem(X, y, **options)


def equal_parties(problem, m):
    """The rows split into ``m`` consecutive blocks whose sizes differ by at most one."""
    if m > problem.n:
        raise ValueError(f"cannot split n={problem.n} rows among {m} parties")
    base, extra = divmod(problem.n, m)
    return Parties.from_sizes(problem, [base + (j < extra) for j in range(m)])


def _joint_options(options):
    """joint_sgd's block layout from a run's solver options (``personal_columns = "none"``:
    no personalised block, the full-DP baseline)."""
    columns = options.get("personal_columns", "all")
    return {"personal_columns": [] if columns == "none" else columns,
            "shared_radius": options.get("shared_radius"),
            "personal_radius": options.get("personal_radius")}


def _bounds(problem, solver, options, fit, parties=None):
    """The theorem's bound for this fit (its solver's ``bound``, mean form) and the minimax lower
    bound that applies (Bassily-Smith-Thakurta 2014, for DP solvers on a bounded C); None where
    none applies."""
    bound = None if solver.bound is None else solver.bound(problem, parties, fit, options)
    upper, upper_name = (None, None) if bound is None else (bound.value, bound.name)
    lower = None
    # joint DP is weaker than DP: no DP lower bound applies to it
    if solver.guarantee == "dp" and math.isfinite(problem.diameter):
        epsilon = options["epsilon"]
        lower = (bounds.lower_bound_strongly_convex(problem, epsilon) if problem.reg > 0.0
                 else bounds.lower_bound_lipschitz(problem, epsilon))
    return upper, upper_name, lower


def execute(spec, root, reference=None):
    """Run one spec: a pure function of the spec and the root seed, so any run replays exactly.

    Parameters
    ----------
    spec : dict
        A run from :meth:`Sweep.runs`.
    root : int
        The sweep's root seed.
    reference : ReferenceSolution, optional
        theta* of the run's problem, solved elsewhere (a cluster's reference task); default:
        :func:`dpsolve.reference_minimizer` here (from the disk cache when it is there). Not
        used by ``joint_sgd``, measured against its joint minimiser.

    Returns
    -------
    dict
        JSON-serialisable: ``excess_risk`` and ``reference_gap`` (the true excess risk lies in
        ``[excess_risk, excess_risk + reference_gap]``), ``objective``, ``optimum``, ``bound``,
        ``bound_name``, ``lower_bound``, the claim (``epsilon``, ``delta``) and
        ``certified_epsilon``, ``calibration``, ``sigma``, ``steps``, ``n``, ``p``,
        ``wall_time`` and ``theta_sha256`` (the released parameters' bytes); for
        ``name = "auto"`` also ``chosen_solver`` (:func:`dpsolve.choose_solver`'s choice).

    Notes
    -----
    Multi-party solvers get the rows split into equal consecutive blocks
    (:func:`equal_parties`); ``joint_sgd``'s excess risk is on the joint objective, against
    :func:`dpsolve.joint.joint_reference_minimizer`. PrivacyWarnings (a ``"paper"``
    calibration certifying less than it claims) are silenced: the certified epsilon is stored.
    """
    problem = build_problem(spec, root)
    options = dict(spec["solver"])
    name = options.pop("name")
    chosen = None
    if name == "auto":          # from public constants only: free, and part of the run's record
        from ..solvers.choose import choose_solver
        chosen = choose_solver(problem, options["epsilon"], options.get("delta")).name
        name = chosen
    solver = solver_spec(name)
    parties = None
    if solver.partition is not None:
        parties = equal_parties(problem, options.pop(solver.partition))
    if name == "joint_sgd":
        layout = _joint_options(options)
        options.update(layout)
        reference = joint.joint_reference_minimizer(problem, parties, **layout)
    elif reference is None:
        reference = reference_minimizer(problem)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        fit = solver.function(problem, *([parties] if parties else []),
                              rng=run_seed(spec, root), **options)
    wall = time.perf_counter() - start
    if name == "joint_sgd":
        risk = joint.joint_excess_risk(problem, parties, fit.model, reference)
        objective = joint.joint_objective(problem, parties, fit.model)
        released = fit.theta.tobytes() + fit.model.personal.tobytes()
    else:
        risk = excess_risk(problem, fit.theta, reference)
        objective = problem.objective(fit.theta)
        released = np.ascontiguousarray(fit.theta).tobytes()
    upper, upper_name, lower = _bounds(problem, solver, {**spec["solver"]}, fit, parties)
    return {
        "excess_risk": float(risk), "reference_gap": float(reference.gap),
        "objective": float(objective), "optimum": float(reference.value),
        "bound": upper, "bound_name": upper_name, "lower_bound": lower,
        "epsilon": float(fit.epsilon), "delta": float(fit.delta),
        "certified_epsilon": float(fit.privacy.certified_epsilon),
        "certified_by": fit.privacy.certified_by, "calibration": fit.calibration,
        "sigma": None if fit.sigma is None else float(fit.sigma), "steps": int(fit.steps),
        "n": problem.n, "p": problem.p, "wall_time": wall,
        "theta_sha256": hashlib.sha256(released).hexdigest(),
        **({} if chosen is None else {"chosen_solver": chosen}),
    }
