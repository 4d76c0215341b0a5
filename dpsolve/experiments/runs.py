"""Executing one run of a sweep: data, problem, certified theta*, the fit, its excess risk and the
bounds that apply. A pure function of the run spec and the root seed."""
import hashlib
import inspect
import math
import os
import time
import warnings

import numpy as np

from .. import bounds, datasets
from ..chunked import RowChunks
from ..parties import Parties
from ..privacy import PrivacyWarning
from ..problem import Problem
from ..reference import excess_risk, reference_minimizer
from ..solvers import get as solver_spec
from ..solvers import plan_fit, run_plan
from . import sphere
from ._datafiles import DATA_SUFFIXES, LABEL_SUFFIXES, check_data_file, load_file
from .sweep import (SweepError, _grid, _shown, canonical, data_seed, refuse, run_seed,
                    shared_reference)


def load_data(data, root, names=("data.path", "data.labels"), target=None):
    """``(X, y)`` for a run's data spec (``names``: how a file source's keys are named in
    messages); for a ``chunks`` source, ``(RowChunks, None)``: the ``.npy`` files memory-mapped
    here, one chunk per pair. ``target``: the run's ``(epsilon, delta)``, which the sphere
    source's hard instance depends on (not its seed)."""
    source = data["source"]
    rng = data_seed({"data": data}, root)
    # the generators' own checks refuse a float, a bool or a value out of range
    if source == "synthetic":
        return datasets.make_synthetic(data["n"], data["p"], noise=data.get("noise", 0.1),
                                       rng=rng)
    if source == "separable":
        return datasets.make_separable(data["n"], data["p"], margin=data.get("margin", 0.001),
                                       rng=rng)
    if source == "zipf":
        options = {k: v for k, v in data.items() if k not in ("source", "n", "p")}
        return datasets.make_sparse_zipf(data["n"], data["p"], rng=rng, **options)
    if source == "symmetric":
        return datasets.make_symmetric_labels(data["n"], data["p"],
                                              density=data.get("density", 0.02), rng=rng)
    if sphere.is_sphere(data):
        return sphere.load(data, rng, target)
    if source == "breast_cancer":
        return datasets.load_breast_cancer()
    if source == "digits":
        return datasets.load_digits()
    if source == "chunks":
        # memory-mapped in this process (a cluster's worker reads the files itself): X is
        # never sent anywhere; the chunks carry their labels, so y is None
        return RowChunks.from_npy(data["rows"], data["labels"]), None
    return load_file(data["path"], data.get("labels"), names=names)


def check_class_memory(n, p, k, name="n_classes"):
    """Refuse a multinomial problem whose arrays cannot fit in this machine's memory.

    Parameters
    ----------
    n, p : int
        Rows and columns of the data.
    k : int
        The number of classes K.
    name : str
        How K is named in the message (``"--n-classes"`` on the command line).

    Raises
    ------
    ValueError
        If ``8 K (n + p)`` bytes, one (p, K) model and one (n, K) array of softmax values (the
        least a multinomial fit holds at once), exceed the machine's physical memory.
    """
    need = 8 * k * (n + p)
    total = physical_memory()
    if total is not None and need > total:
        raise ValueError(f"{name} = {k}: a multinomial fit on n = {n} rows of p = {p} columns "
                         f"holds a (p, K) model and an (n, K) array of softmax values, "
                         f"8 K (n + p) bytes = {need / 2 ** 30:.3g} GiB, more than this machine's "
                         f"{total / 2 ** 30:.3g} GiB of memory")


def physical_memory():
    """The machine's physical memory in bytes, or None where the OS does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def build_problem(spec, root, data=None):
    """The run's Problem: its data (``data``, the ``(X, y)`` already loaded, or
    :func:`load_data`) with the problem's options."""
    target = sphere.target(spec)
    X, y = load_data(spec["data"], root, target=target) if data is None else data
    options = dict(spec["problem"])
    if sphere.is_sphere(spec["data"]):          # the source's public row and label bounds
        options.update(sphere.problem_options(spec["data"], target))
    if options.get("radius") == "none":
        options["radius"] = None
    if options.get("loss") == "multinomial":
        named = "n_classes" if options.get("n_classes") is not None else "classes"
        k = options.get("n_classes") or len(options.get("classes") or ())
        check_class_memory(X.shape[0], X.shape[1] + bool(options.get("fit_intercept")), k,
                           named)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)     # row clipping: counted, not stored
        return Problem(X, y, **options)


def _prepare(spec, problem):
    """What a run's fit is called with: ``(solver spec, parties, options, chosen)``; ``chosen``
    is ``auto``'s choice (else None)."""
    options = dict(spec["solver"])
    name = options.pop("name")
    chosen = None
    if name == "auto":          # from public constants only: free, and part of the run's record
        from ..solvers.choose import choose_solver
        # on a population source, by the bounds on the population risk it is measured by
        risk = "population" if sphere.is_sphere(spec["data"]) else "empirical"
        chosen = choose_solver(problem, options["epsilon"], options.get("delta"), risk).name
        name = chosen
    solver = solver_spec(name)
    parties = None
    if solver.partition is not None:
        parties = equal_parties(problem, options.pop(solver.partition), solver.partition)
    if solver.hooks.sweep_options is not None:
        options = dict(solver.hooks.sweep_options(options))
    return solver, parties, options, chosen


def _plan(solver, problem, parties, options, rng):
    """The run's plan (never its run), through everything its fit checks before it reads the
    data: the options against the solver function's signature (a TypeError for one it does
    not take, as calling it gives), then :func:`dpsolve.solvers.plan_fit`, which the fit runs
    too."""
    arguments = dict(inspect.signature(solver.function).bind(
        problem, *([parties] if parties is not None else []), rng=rng, **options).arguments)
    arguments.pop("problem")
    if solver.partition is not None:
        arguments.pop(solver.partition)
    return plan_fit(solver, problem, parties, **arguments)


def solve_reference(spec, root):
    """The certified theta* of the run's problem (:func:`dpsolve.reference_minimizer`, from
    its disk cache when it is there, else solved and cached); only the run's data and problem
    settings are read."""
    return reference_minimizer(build_problem(spec, root))


def _tables(sweep, part):
    """``{canonical(cell): "data[1]"}``: which table of the sweep each grid cell comes from,
    named as :func:`~dpsolve.experiments.load_sweep` names it (``data`` when there is one data
    table, ``solver[i]`` always)."""
    # a solver's own problem table is not among its runs' options
    tables = [{k: v for k, v in table.items() if k != "problem"} for table in sweep.spec[part]]
    return {canonical(cell): part if part == "data" and len(tables) == 1 else f"{part}[{i}]"
            for i, table in enumerate(tables) for cell in _grid(table)}


def _context(data, problem=None):
    """The runs an error concerns: their data and problem settings."""
    def shown(value, files):
        if files and isinstance(value, list) and len(value) > 4:  # a chunks source's files
            return (f"[{_shown(value[0])}, {_shown(value[1])}, ..., {_shown(value[-1])}] "
                    f"({len(value)} files)")
        return _shown(value)

    def settings(cell, files=False):
        return ", ".join(f"{k}={shown(v, files)}" for k, v in cell.items())
    text = f" (the runs on data {settings(data, files=True)}"
    return text + ("" if problem is None else f" with problem {settings(problem)}") + ")"


def check_runs(sweep, specs=None):
    """Check every run of a sweep as its fit would, before any run: raise on the first that
    would fail before its computation starts.

    Each distinct dataset is loaded once (generated, or read from its file) and each distinct
    problem built on it, as the runs do (:func:`build_problem`); then each distinct solver
    setting goes through its solver's checks and its ``plan`` (defaults and noise calibration
    from public constants), exactly as :func:`dpsolve.solvers.run_solver` does before it
    reads the data. Nothing is fitted, no reference minimiser is solved, nothing is stored.

    Parameters
    ----------
    sweep : Sweep
        From :func:`~dpsolve.experiments.load_sweep` (which has checked every setting that
        needs no data).
    specs : list of dict, optional
        The runs to check (default: all of ``sweep.runs()``); replicates of a cell are checked
        once.

    Raises
    ------
    SweepError
        Naming the table and key (``data.path``, ``problem.classes``, ``solver[0].delta``, ...),
        with the data and problem settings of the runs concerned. A message about the data
        (a label outside ``classes``, a cell of a CSV file that is not a number) may quote the
        data; it is for the data holder who runs the sweep and is never stored.

    Notes
    -----
    The cost is one data load per dataset and one plan per cell, the same as each run's own
    preparation: a noise calibration by an accountant (``calibration = "rdp"``/``"pld"``) is
    the largest part, up to about a second.
    """
    specs = sweep.runs() if specs is None else specs
    cells = {}
    for spec in specs:
        cells.setdefault(canonical(spec["data"]), {}).setdefault(
            canonical(spec["problem"]), {}).setdefault(canonical(spec["solver"]), spec)
    data_where, solver_where = _tables(sweep, "data"), _tables(sweep, "solver")
    for data_key, problems in cells.items():
        first = next(iter(next(iter(problems.values())).values()))
        data, where = first["data"], data_where.get(data_key, "data")
        try:        # (the hard instance at the first run's target: its plans need only n, p)
            loaded = load_data(data, sweep.seed, names=(f"{where}.path", f"{where}.labels"),
                               target=sphere.target(first))
        except ImportError as exc:
            raise SweepError(f"{where}.source = {_shown(data['source'])}: {exc}") from None
        except MemoryError:
            raise SweepError(f"{where}: the data do not fit in memory"
                             f"{_context(data)}") from None
        except (TypeError, ValueError) as exc:
            raise refuse(where, data, exc) from None
        for solvers in problems.values():
            first = next(iter(solvers.values()))
            context = _context(data)
            try:
                problem = build_problem(first, sweep.seed, data=loaded)
            except (TypeError, ValueError) as exc:
                raise SweepError(str(refuse("problem", first["problem"], exc)) + context) \
                    from None
            context = _context(data, first["problem"])
            for solver_key, spec in solvers.items():
                try:
                    solver, parties, options, _ = _prepare(spec, problem)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")     # the run reports its certification
                        _plan(solver, problem, parties, options, run_seed(spec, sweep.seed))
                except (TypeError, ValueError, ArithmeticError) as exc:
                    error = refuse(solver_where.get(solver_key, "solver"), spec["solver"], exc)
                    raise SweepError(str(error) + context) from None
            del problem
        del loaded


def equal_parties(problem, m, name="parties"):
    """The rows split into ``m`` consecutive blocks whose sizes differ by at most one (``name``:
    the sweep key, ``parties`` or ``owners``, in the message)."""
    if m > problem.n:
        raise ValueError(f"{name} must be at most n = {problem.n} (at least one row each), "
                         f"got {m}")
    base, extra = divmod(problem.n, m)
    return Parties.from_sizes(problem, [base + (j < extra) for j in range(m)])


def _bounds(problem, solver, plan, parties=None):
    """The theorem's bound at the run's plan (its solver's ``bound``, mean form: the fit's
    actual settings and noise) and the minimax lower bound that applies
    (Bassily-Smith-Thakurta 2014, for DP solvers on a bounded C; over the l1 ball without a
    ridge, Talwar-Thakurta-Zhang 2015's); None where none applies."""
    bound = None if solver.bound is None else solver.bound(problem, parties, plan)
    upper, upper_name = (None, None) if bound is None else (bound.value, bound.name)
    lower = None
    # joint DP is weaker than DP: no DP lower bound applies to it
    if solver.guarantee == "dp" and math.isfinite(problem.diameter):
        epsilon = plan.target.epsilon
        if problem.constraint == "l1":
            # the l2 ball's rates are not the l1 ball's (rows bounded in l-inf)
            lower = bounds.l1_erm_lower_bound(problem, epsilon) if problem.reg == 0.0 else None
        else:
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
        used by a solver whose spec measures its fits (``joint_sgd``, against its joint
        minimiser: :attr:`~dpsolve.solvers.Hooks.measure`).

    Returns
    -------
    dict
        JSON-serialisable: ``excess_risk`` and ``reference_gap`` (the true excess risk lies in
        ``[excess_risk, excess_risk + reference_gap]``), ``objective``, ``optimum``, ``bound``,
        ``bound_name``, ``lower_bound``, the claim (``epsilon``, ``delta``) and
        ``certified_epsilon``, ``calibration``, ``sigma``, ``steps``, ``n``, ``p``,
        ``wall_time`` and ``theta_sha256`` (the released parameters' bytes); for
        ``name = "auto"`` also ``chosen_solver`` (:func:`dpsolve.choose_solver`'s choice).
        On a ``sphere`` source (:mod:`dpsolve.experiments.sphere`) the measure is the
        population's: ``measure = "population"``, ``excess_risk`` is the excess population
        risk ``L(theta) - min_{||theta|| <= R} L`` with ``excess_risk_error`` (the half-width
        of its quadrature interval, :func:`dpsolve.excess_population_risk`), ``bound`` the
        solver's population bound (:attr:`~dpsolve.solvers.Hooks.population_bound`; None
        where it states none) and ``lower_bound`` the DP-SCO lower bound
        (:func:`dpsolve.bounds.dp_sco_lower_bound`); the excess empirical risk against the
        sample's theta* and the solver's empirical bound are kept as
        ``empirical_excess_risk``, ``empirical_bound`` and ``empirical_bound_name``.

    Notes
    -----
    Multi-party solvers get the rows split into equal consecutive blocks
    (:func:`equal_parties`); a solver whose spec measures its fits
    (:attr:`~dpsolve.solvers.Hooks.measure`) has its own excess risk: ``joint_sgd``'s is
    on the joint objective, against :func:`dpsolve.joint.joint_reference_minimizer`.
    PrivacyWarnings (a ``"paper"`` calibration certifying less than it claims) are silenced:
    the certified epsilon is stored. The bound is evaluated at the run's plan: the fit's own
    settings and noise.
    """
    problem = build_problem(spec, root)
    solver, parties, options, chosen = _prepare(spec, problem)
    rng = run_seed(spec, root)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        # the plan is kept: the bound is the one at this fit's settings and noise
        plan = _plan(solver, problem, parties, options, rng)
        fit = run_plan(solver, problem, parties, plan, rng)
    wall = time.perf_counter() - start
    if solver.hooks.measure is not None:
        measured = solver.hooks.measure(problem, parties, plan, fit)
        reference, risk, objective = measured.reference, measured.excess_risk, measured.objective
        released = measured.released
    else:
        reference = reference_minimizer(problem) if reference is None else reference
        risk = excess_risk(problem, fit.theta, reference)
        objective = problem.objective(fit.theta)
        released = (fit.theta,)
    released = b"".join(np.ascontiguousarray(array).tobytes() for array in released)
    upper, upper_name, lower = _bounds(problem, solver, plan, parties)
    measured = {"excess_risk": float(risk), "bound": upper, "bound_name": upper_name,
                "lower_bound": lower}
    if sphere.is_sphere(spec["data"]):
        # the population risk is what is measured; the empirical one stays beside it
        measured = {"empirical_excess_risk": float(risk), "empirical_bound": upper,
                    "empirical_bound_name": upper_name,
                    **sphere.measure(spec["data"], problem, solver, parties, plan, fit.theta,
                                     sphere.target(spec))}
    return {
        **measured, "reference_gap": float(reference.gap),
        "objective": float(objective), "optimum": float(reference.value),
        "epsilon": float(fit.epsilon), "delta": float(fit.delta),
        "certified_epsilon": float(fit.privacy.certified_epsilon),
        "certified_by": fit.privacy.certified_by, "calibration": fit.calibration,
        "sigma": None if fit.sigma is None else float(fit.sigma), "steps": int(fit.steps),
        "n": problem.n, "p": problem.p, "wall_time": wall,
        "theta_sha256": hashlib.sha256(released).hexdigest(),
        **({} if chosen is None else {"chosen_solver": chosen}),
    }


# the data file names and readers live in _datafiles (below sweep, whose validation checks the
# names), and shared_reference in sweep (which keys each run by it when it lists the runs);
# they stay importable from here
__all__ = ["DATA_SUFFIXES", "LABEL_SUFFIXES", "build_problem", "check_class_memory",
           "check_data_file", "check_runs", "equal_parties", "execute", "load_data",
           "load_file", "physical_memory", "shared_reference", "solve_reference"]
