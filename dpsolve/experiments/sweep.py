"""A sweep: solvers, data and problems over a grid, expanded into runs with stable ids and seeds.

A sweep is a TOML file (or the same structure as a dict)::

    name = "sgd1-epsilon"      # required
    seed = 0                   # root seed of every run (default 0)
    replicates = 5             # runs per grid cell, differing only in the solver's randomness

    [data]                     # list values are grid axes, scalars are fixed
    source = "synthetic"       # synthetic | separable | zipf | symmetric | sphere | breast_cancer
                               # | digits | file | chunks
    n = [500, 1000, 2000]
    p = 10
                               # several datasets: [[data]] tables, each with its own grid

    [problem]                  # dpsolve.Problem's options
    loss = ["logistic", "hinge"]
    radius = 1.0
                               # the public label set, when labels are not -1/+1 or 0/1:
                               # classes = [5, 7] (a list of labels, not an axis; a list of
                               # such lists is an axis), or n_classes = 10 for multinomial
                               # fit_intercept = true, intercept_scale = 1.0: an intercept
                               # constraint = "l1": the l1 ball of radius R (rows bounded in
                               # l-inf by row_norm); "l2" (the default) otherwise

    [[solver]]                 # one table per solver
    name = "noisy_sgd"
    epsilon = [0.1, 0.3, 1.0]
    delta = 1e-9
    calibration = ["paper", "rdp"]   # any other key is passed to the solver

    [[solver]]                 # a solver on problems of its own: its [solver.problem] table
    name = "clipped_gd"        # replaces these keys of [problem] for its runs (another
    epsilon = 1.0              # geometry, radius or row bound on the same data)
    delta = 1e-6
    [solver.problem]
    constraint = "l2"
    row_norm = 7.1

    [[solver]]                 # multi-party solvers: the rows split into equal consecutive blocks
    name = "multiparty_gd"
    parties = 4                # joint_sgd: owners = 4
    epsilon = 1.0
    delta = 1e-6

Optional top-level ``title``, ``description`` and ``discussion`` (strings) describe the sweep for
its report page, and an optional ``[rate]`` table names the theorem's rate its page checks the
measured slopes against (:mod:`dpsolve.experiments.rate`); they are not part of the runs, so
editing them does not invalidate results.

Validation, in two passes, both before any run (and before the results database is opened):
:func:`load_sweep` checks every setting of every grid cell that can be checked without the data,
through the library's own checks (the data sizes as the data generators check them, each
problem's settings through :class:`dpsolve.Problem`'s constructor, each solver's options through
its declared parameter constraints, ``epsilon > 0``); :func:`dpsolve.experiments.check_runs`
(called by :func:`~dpsolve.experiments.run_sweep`) then loads each dataset once, builds each
problem and runs each solver's checks and plan, from public constants, as its fit would before
reading the data. Either raises :class:`SweepError` naming the key.

Every run is a plain dict ``{"sweep", "replicate", "data", "problem", "solver"}`` of scalars. Its
id is a hash of its canonical JSON; its seed is the root SeedSequence spawned along that hash, so
any single run can be replayed exactly from its spec. The data of a run depend only on the data
spec and the root seed (every solver and replicate sees the same rows). :attr:`Sweep.listing`
lists the runs once with these keys (:class:`Run`), for the whole pass of
:func:`~dpsolve.experiments.run_sweep`.
"""
import dataclasses
import functools
import hashlib
import inspect
import itertools
import json
import math
import numbers
import warnings
from pathlib import Path

import numpy as np

from .._validation import Integer, Real, check_parameters, check_real, open_input_file
from . import sphere
from ._datafiles import CHUNK_FORM, check_data_file, chunk_files
from .rate import check_rate

TEXT_KEYS = ("title", "description", "discussion")     # for the report page, not the runs
TOP_KEYS = {"name", "seed", "replicates", "data", "problem", "solver", "rate", *TEXT_KEYS}
DATA_KEYS = {
    "synthetic": {"source", "n", "p", "noise"},
    "separable": {"source", "n", "p", "margin"},
    "zipf": {"source", "n", "p", "words", "exponent", "support", "signal", "values"},
    "symmetric": {"source", "n", "p", "density"},
    "sphere": sphere.SPHERE_KEYS,
    "breast_cancer": {"source"},
    "digits": {"source"},
    "file": {"source", "path", "labels"},
    "chunks": {"source", "rows", "labels"},
}
#: The keys of a chunks source that name files: a list of names (one value, not an axis) or a
#: glob pattern, expanded when the sweep is loaded.
CHUNK_KEYS = ("rows", "labels")
PROBLEM_KEYS = {"loss", "radius", "reg", "row_norm", "label_bound", "huber_width", "clip_rows",
                "classes", "n_classes", "fit_intercept", "intercept_scale", "constraint"}
#: The data sources' numeric keys: the checks of dpsolve.datasets.make_synthetic,
#: make_separable and make_sparse_zipf (and ``noise >= 0``: the standard deviation of the
#: labels' noise, or for a sphere source the half-width of its targets' uniform noise), with
#: the accepted range in words for a value of the wrong type.
DATA_CHECKS = {
    "n": (Integer(1), "an integer >= 1"),
    "p": (Integer(1), "an integer >= 1"),
    "noise": (Real(0.0, low_inclusive=True), "a real number >= 0"),
    "margin": (Real(0.0, 1.0, low_inclusive=True), "a real number in [0, 1)"),
    "words": (Integer(1), "an integer >= 1"),
    "support": (Integer(0), "an integer >= 0"),
    "exponent": (Real(0.0), "a real number > 0"),
    "signal": (Real(0.0, low_inclusive=True), "a real number >= 0"),
    "density": (Real(0.0, 1.0, high_inclusive=True), "a real number in (0, 1]"),
}
#: Solver arguments a sweep does not take: the seed comes from the run's spec, the partition
#: from ``parties``/``owners``, and a run is a replayable research run (no ``secure`` noise,
#: no budget).
SOLVER_EXCLUDED = {"problem", "rng", "sigma", "parties", "owners", "record_transcript",
                   "transcript_limit", "secure", "accountant"}
#: The most classes a multinomial problem may have (``n_classes``, the length of ``classes``;
#: ``dpsolve solve --n-classes``). A multinomial fit holds a (p, K) model and an (n, K) array
#: of softmax values, 8 K (n + p) bytes each: at K = 2**16 that is 512 KiB for every record and
#: every feature, so that 2,000 of them already need a GiB per array. A larger K fits no
#: dataset of useful size; below it, what fits is checked against the machine's memory once
#: n and p are known (:func:`dpsolve.experiments.runs.check_class_memory`).
MAX_CLASSES = 2 ** 16
#: The most runs a sweep may have (its grid cells times ``replicates``; ``dpsolve demo
#: --seeds``). Every run's spec is listed and hashed before the first run starts, about 0.2 KB
#: and 80 microseconds each: a million runs take 0.2 GB and over a minute before any work, and
#: ``replicates = 1000000000`` had the sweep filling the memory for hours before it could fail.
MAX_RUNS = 10 ** 6


class SweepError(ValueError):
    """A sweep file or dict that cannot be run; the message names the offending key."""


def _solvers():
    """The registered solvers' specs by name (:func:`dpsolve.solvers.registry`)."""
    from ..solvers import registry
    return {spec.name: spec for spec in registry()}


def canonical(obj):
    """Canonical JSON of a run spec (sorted keys, no spaces; inf as a string)."""
    def fix(v):
        if isinstance(v, float) and not math.isfinite(v):
            return repr(v)
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        return v
    return json.dumps(fix(obj), sort_keys=True, separators=(",", ":"))


def run_id(spec):
    """Stable id of a run: the first 16 hex digits of the SHA-256 of its canonical JSON.

    Parameters
    ----------
    spec : dict
        A run spec (:meth:`Sweep.runs`), or any JSON-serialisable dict.

    Returns
    -------
    str
        16 lowercase hex digits.
    """
    return _digest(canonical(spec))


def _digest(text):
    """The first 16 hex digits of the SHA-256 of a canonical JSON text."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cell_id(spec):
    """Id of the run's grid cell: its spec without the replicate.

    Parameters
    ----------
    spec : dict
        A run spec (:meth:`Sweep.runs`).

    Returns
    -------
    str
        :func:`run_id` of the spec without its ``"replicate"`` key: the same for every
        replicate of a cell.
    """
    return run_id({k: v for k, v in spec.items() if k != "replicate"})


def _seed(root, obj):
    digest = hashlib.sha256(canonical(obj).encode()).digest()
    words = [int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4)]
    return np.random.SeedSequence(root, spawn_key=tuple(words))


def run_seed(spec, root):
    """The solver's SeedSequence: the root seed spawned along the run's hash.

    Parameters
    ----------
    spec : dict
        A run spec (:meth:`Sweep.runs`).
    root : int
        The sweep's root seed (``Sweep.seed``).

    Returns
    -------
    numpy.random.SeedSequence
        ``SeedSequence(root, spawn_key=...)`` with the spawn key the first 16 bytes of the
        SHA-256 of the spec's canonical JSON, as four 32-bit words.
    """
    return _seed(root, spec)


def data_seed(spec, root):
    """The data's SeedSequence: depends on the data spec only."""
    return _seed(root, {"data": spec["data"]})


def shared_reference(name, known=None):
    """Whether the runs of the solver called ``name`` (or ``"auto"``, which chooses among the
    single-objective solvers) are measured against their problem's reference minimiser,
    :func:`dpsolve.reference_minimizer`, which a sweep solves once per problem; else the
    solver's spec measures them (:attr:`~dpsolve.solvers.Hooks.measure`).

    Parameters
    ----------
    name : str
        A registered solver's name, or ``"auto"``.
    known : dict, optional
        The registered solvers' specs by name (default: read from the registry).

    Returns
    -------
    bool
    """
    if name == "auto":
        return True
    if known is None:
        from ..solvers import get
        return get(name).hooks.measure is None
    return known[name].hooks.measure is None


@dataclasses.dataclass(frozen=True)
class Run:
    """One run of a sweep with the keys that checking, running and storing it need, each
    computed once, when the sweep's runs are listed (:attr:`Sweep.listing`).

    Attributes
    ----------
    spec : dict
        The run spec (:meth:`Sweep.runs`).
    id : str
        Its :func:`run_id`.
    cell : str
        Its :func:`cell_id`.
    text : str
        Its :func:`canonical` JSON, as the results database stores it.
    reference : str or None
        The key of the problem whose theta* (:func:`dpsolve.reference_minimizer`) the run is
        measured against, shared by every run on that problem: the canonical JSON of the run's
        data and problem settings; None for a run its solver's spec measures
        (:func:`shared_reference`).
    """

    spec: dict
    id: str
    cell: str
    text: str
    reference: object = None

    @classmethod
    def of(cls, spec, known=None, *, reference=True):
        """The run ``spec`` with its keys (``reference=False``: without its problem's key, as
        the store, which does not need it, builds it)."""
        text = canonical(spec)
        key = None
        if reference and shared_reference(spec["solver"]["name"], known):
            key = canonical({"data": spec["data"], "problem": spec["problem"],
                             **sphere.instance_key(spec)})
        return cls(spec=spec, id=_digest(text), cell=cell_id(spec), text=text, reference=key)


@dataclasses.dataclass(frozen=True)
class Sweep:
    """A validated sweep. ``runs()`` expands it; ``spec`` is the normalised dict.

    Build it with :func:`load_sweep`, which validates the file or dict.

    Attributes
    ----------
    name : str
        The sweep's name (every run's ``"sweep"``).
    seed : int
        The root seed of every run, ``>= 0``.
    replicates : int
        Runs per grid cell, ``>= 1``, differing only in the solver's randomness.
    spec : dict
        The normalised sweep: ``name``, ``seed``, ``replicates``, ``data`` (a list of tables),
        ``problem`` and ``solver`` (a list of tables).
    text : dict, optional
        The optional ``title``, ``description`` and ``discussion`` strings for the report page
        (not part of the runs).
    rate : dict or None, optional
        The theorem's rate the report page checks the slopes against, from the optional
        ``[rate]`` table (:func:`dpsolve.experiments.rate.check_rate`; not part of the runs).
    """

    name: str
    seed: int
    replicates: int
    spec: dict
    text: dict = dataclasses.field(default_factory=dict)
    rate: dict = None

    def runs(self):
        """Every run spec, in a fixed order (grid order, then replicate)."""
        out = []
        data_grid = [d for table in self.spec["data"] for d in _grid(table)]
        for solver in self.spec["solver"]:
            solver = dict(solver)
            problem_grid = _grid(solver_problem(self.spec["problem"], solver.pop("problem", None)))
            for data, problem, options in itertools.product(data_grid, problem_grid,
                                                            _grid(solver)):
                for r in range(self.replicates):
                    out.append({"sweep": self.name, "replicate": r, "data": data,
                                "problem": problem, "solver": options})
        return out

    @functools.cached_property
    def listing(self):
        """Every run as a :class:`Run`, in the order of :meth:`runs`: listed and keyed once,
        when first read, for the whole pass of :func:`~dpsolve.experiments.run_sweep`."""
        known = _solvers()
        return tuple(Run.of(spec, known) for spec in self.runs())


def _grid(table):
    """All combinations of a table's list values (scalars fixed), as dicts."""
    keys = sorted(table)
    axes = [table[k] if isinstance(table[k], list) else [table[k]] for k in keys]
    return [dict(zip(keys, values)) for values in itertools.product(*axes)]


def solver_problem(problem, override):
    """The ``[problem]`` table of one solver's runs: the sweep's, with the keys of the solver's
    own ``problem`` table (``override``, None for none) replacing it.

    Parameters
    ----------
    problem : dict
        The sweep's ``[problem]`` table.
    override : dict or None
        A ``[[solver]]`` table's ``problem`` table.

    Returns
    -------
    dict
    """
    return {**problem, **(override or {})}


def _scalar_ok(value):
    return isinstance(value, (str, bool, numbers.Real)) and not (
        isinstance(value, float) and math.isnan(value))


def _shown(value):
    """A setting as the sweep file spells it (``true``, ``"many"``, ``30.5``)."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _leading_name(message):
    """The parameter a library message starts with (``"n must be ..."`` -> ``"n"``)."""
    word = message.split(" ", 1)[0].split("=", 1)[0]
    return word if word.replace("_", "").isalnum() else None


def refuse(where, cell, exc):
    """A SweepError for ``exc`` raised by a library check on one grid cell ``cell`` of the
    table at ``where``: ``where.key = value: message`` when the message starts with one of the
    cell's keys (the library's messages name their parameter first), else ``where: message``.

    Parameters
    ----------
    where : str
        The table (``"data"``, ``"data[1]"``, ``"problem"``, ``"solver[0]"``).
    cell : dict
        The grid cell's settings.
    exc : Exception
        What the check raised.

    Returns
    -------
    SweepError
    """
    message = str(exc)
    key = _leading_name(message)
    if key is not None and key in cell:
        return SweepError(f"{where}.{key} = {_shown(cell[key])}: {message}")
    return SweepError(f"{where}: {message}")


def _check_values(table, where):
    for key, value in table.items():
        values = value if isinstance(value, list) else [value]
        if isinstance(value, list) and not value:
            raise SweepError(f"{where}.{key}: an empty list gives no runs")
        for v in values:
            if not _scalar_ok(v):
                raise SweepError(f"{where}.{key}: values must be numbers, strings or booleans, "
                                 f"got {v!r}")


def load_sweep(source):
    """Validate a sweep and return it, ready to expand into runs.

    Parameters
    ----------
    source : str, Path or dict
        A path to a TOML file (see this module's docstring for the format), TOML text, or the
        same structure as a dict.

    Returns
    -------
    Sweep

    Raises
    ------
    SweepError
        Before any run, with a message naming the offending key (``solver[0].clip``,
        ``data[1].n``, ...): an unknown key, a missing required one, a value of the wrong
        type, an empty list, two tables that repeat a setting, or more than :data:`MAX_RUNS`
        runs. A sweep file that is missing, not a regular file (a named pipe is refused
        before it is opened, which would block), or not UTF-8 text is refused naming the file.
    """
    raw = _read_sweep(source)
    unknown = set(raw) - TOP_KEYS
    if unknown:
        raise SweepError(f"unknown key {sorted(unknown)[0]!r} at the top of the sweep; "
                         f"accepted: {sorted(TOP_KEYS)}")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise SweepError("name: the sweep needs a non-empty name (a string)")
    seed = raw.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise SweepError(f"seed: must be a non-negative integer, got {seed!r}")
    replicates = raw.get("replicates", 5)
    if isinstance(replicates, bool) or not isinstance(replicates, int) or replicates < 1:
        raise SweepError(f"replicates: must be a positive integer, got {replicates!r}")
    _check_run_count(raw, replicates)

    text = {}
    for key in TEXT_KEYS:
        if key in raw:
            if not isinstance(raw[key], str):
                raise SweepError(f"{key}: must be a string, got {raw[key]!r}")
            text[key] = raw[key]

    tables = raw.get("data")
    if isinstance(tables, dict):
        tables = [tables]
    if not isinstance(tables, list) or not tables:
        raise SweepError("data.source: the sweep needs a [data] table (or [[data]] tables) "
                         f"with a source (one of {sorted(DATA_KEYS)})")
    data = [_check_data(table, "data" if len(tables) == 1 else f"data[{i}]")
            for i, table in enumerate(tables)]
    problem = _check_problem_table(raw)

    solvers = raw.get("solver")
    if isinstance(solvers, dict):
        solvers = [solvers]
    if not isinstance(solvers, list) or not solvers:
        raise SweepError("solver: the sweep needs at least one [[solver]] table")
    known = _solvers()
    checked = [_check_solver_table(table, f"solver[{i}]", known, problem)
               for i, table in enumerate(solvers)]
    _refuse_overlaps(("data", data), ("solver", checked))
    _check_chunked_runs(data, problem, checked, known)
    sphere.check_runs([("data" if len(data) == 1 else f"data[{i}]", table)
                       for i, table in enumerate(data) if sphere.is_sphere(table)],
                      [(f"solver[{i}].problem" if "problem" in table else "problem", cell)
                       for i, table in enumerate(checked)
                       for cell in _grid(solver_problem(problem, table.get("problem")))],
                      checked, known, SweepError)
    rate = None if "rate" not in raw else check_rate(
        raw["rate"], {table["name"] for table in checked}, SweepError)
    spec = {"name": name, "seed": seed, "replicates": replicates, "data": data,
            "problem": problem, "solver": checked}
    return Sweep(name=name, seed=seed, replicates=replicates, spec=spec, text=text, rate=rate)


def _read_sweep(source):
    """The sweep's raw tables: ``source`` itself (a dict), or the TOML it is or names."""
    if isinstance(source, dict):
        return source
    try:
        import tomllib
    except ImportError:             # Python 3.10
        import tomli as tomllib
    text = source
    if isinstance(source, Path) or (isinstance(source, str) and "\n" not in source
                                    and source.endswith(".toml")):
        text = _read_sweep_file(source)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SweepError(f"the sweep is not valid TOML: {exc}") from exc


def _read_sweep_file(path):
    """The text of the sweep file at ``path``: a regular file (:func:`open_input_file`) of
    UTF-8 text, which is what TOML is (the locale's encoding does not matter)."""
    what = f"cannot read the sweep file {path}"
    with open_input_file(path, what, SweepError) as fh:
        try:
            data = fh.read()
        except OSError as exc:
            raise SweepError(f"{what}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SweepError(f"{what}: it is not UTF-8 text (byte 0x{data[exc.start]:02x} at line "
                         f"{line}, column {column}); a sweep file is TOML, which must be "
                         "UTF-8: save it as UTF-8") from None


def _grid_size(table, axes=None):
    """The number of cells of a table's grid (:func:`_grid`), without listing them; a table
    that is not a dict counts as one (it is refused later). ``axes``: for each key whose value
    is an axis of other values than its list entries, that axis' length."""
    if not isinstance(table, dict):
        return 1
    size = 1
    for key, value in table.items():
        if axes is not None and key in axes:
            size *= axes[key]
        elif isinstance(value, list):
            size *= max(len(value), 1)
    return size


def _check_run_count(raw, replicates):
    """Refuse a sweep of more than :data:`MAX_RUNS` runs, counted from the tables before any
    grid cell is listed or checked."""
    def as_list(value):
        return value if isinstance(value, list) else [value]

    data = 0
    for table in as_list(raw.get("data")):
        # a chunks source's file lists are one value each, not axes
        chunks = isinstance(table, dict) and table.get("source") == "chunks"
        data += _grid_size(table, dict.fromkeys(CHUNK_KEYS, 1) if chunks else None)
    problem = raw.get("problem")
    classes = problem.get("classes") if isinstance(problem, dict) else None
    # classes: a list of labels is one value, a list of such lists an axis
    sets = len(classes) if isinstance(classes, list) and classes and all(
        isinstance(v, list) for v in classes) else 1
    base = problem if isinstance(problem, dict) else {}

    def solver_cells(table):
        # a solver's own problem table replaces keys of [problem]: its grid is the merged one
        override = table.get("problem") if isinstance(table, dict) else None
        merged = solver_problem(base, override if isinstance(override, dict) else None)
        return _grid_size(table) * _grid_size(merged, {"classes": sets})

    cells = data * sum(solver_cells(table) for table in as_list(raw.get("solver")))
    if cells * replicates > MAX_RUNS:
        raise SweepError(f"the sweep has {cells} grid cells x {replicates} replicates = "
                         f"{cells * replicates} runs, more than the {MAX_RUNS} a sweep may have "
                         "(dpsolve.experiments.sweep.MAX_RUNS: every run is listed and hashed "
                         "before the first starts); split it into several sweeps")


def _check_problem_table(raw, where="problem", base=None):
    """The ``[problem]`` table (``raw["problem"]``, named ``where`` in messages), validated;
    returns a copy (``classes`` as an axis). ``base``: the sweep's checked ``[problem]`` table
    when ``raw`` is a solver's, whose problem table replaces keys of it (each cell is checked
    merged with it)."""
    if not isinstance(raw.get("problem", {}), dict):
        raise SweepError(f"{where}: must be a table")
    problem = dict(raw.get("problem") or {})
    extra = set(problem) - PROBLEM_KEYS
    if extra:
        raise SweepError(f"{where}.{sorted(extra)[0]}: not an option of dpsolve.Problem; "
                         f"accepted: {sorted(PROBLEM_KEYS)}")
    if "radius" in problem and problem["radius"] == "none":
        problem["radius"] = "none"      # TOML has no null: "none" means no constraint
    if "classes" in problem:
        problem["classes"] = _check_classes(problem["classes"])
    _check_values({k: v for k, v in problem.items() if k != "classes"}, where)
    for cell in _grid(solver_problem(base or {}, problem)):
        _check_problem_cell(cell, where)
    return problem


def _check_solver_table(table, where, known, problem=None):
    """One ``[[solver]]`` table, validated against its solver's signature (``known``: name ->
    spec), its own ``problem`` table merged into the sweep's ``problem`` (checked); returns a
    copy."""
    if not isinstance(table, dict) or "name" not in table:
        raise SweepError(f"{where}.name: every [[solver]] table needs a name")
    if isinstance(table["name"], list) or (table["name"] not in known
                                           and table["name"] != "auto"):
        raise SweepError(f"{where}.name: must be 'auto' or one of {sorted(known)}, got "
                         f"{table['name']!r}")
    if "epsilon" not in table:
        raise SweepError(f"{where}.epsilon: every solver run needs epsilon")
    if table["name"] == "auto":
        # choose_solver at each run's problem and target: only the target is an option
        for key in table:
            if key not in ("name", "epsilon", "delta", "problem"):
                raise SweepError(f"{where}.{key}: not an option of auto (the solver chosen "
                                 "from public constants runs at its defaults); accepted: "
                                 "['delta', 'epsilon', 'problem']")
        spec = None
    else:
        spec = known[table["name"]]
        allowed = set(inspect.signature(spec.function).parameters) - SOLVER_EXCLUDED
        allowed.add("problem")          # the solver's own problem table (checked below)
        split = spec.partition
        if split is not None:
            allowed.add(split)
            if split not in table:
                raise SweepError(f"{where}.{split}: {table['name']} needs the number of "
                                 f"{split} (an integer >= 2)")
            for m in table[split] if isinstance(table[split], list) else [table[split]]:
                if isinstance(m, bool) or not isinstance(m, int) or m < 2:
                    raise SweepError(f"{where}.{split}: must be an integer >= 2, got {m!r}")
        for key in table:
            if key != "name" and key not in allowed:
                raise SweepError(f"{where}.{key}: not an option of {table['name']}; "
                                 f"accepted: {sorted(allowed)}")
    table = dict(table)
    if "problem" in table:
        table["problem"] = _check_problem_table(table, f"{where}.problem", problem)
    _check_values({k: v for k, v in table.items() if k != "problem"}, where)
    for cell in _grid({k: v for k, v in table.items() if k != "problem"}):
        _check_solver_cell(cell, where, spec)
    return table


def _refuse_overlaps(*parts):
    """SweepError when two tables of one part (``(name, tables)``) expand to a same cell."""
    for part, tables in parts:
        seen = {}
        for i, table in enumerate(tables):
            for cell in _grid(table):
                j = seen.setdefault(canonical(cell), i)
                if j != i:
                    raise SweepError(f"{part}[{i}]: repeats a setting of {part}[{j}] "
                                     f"({canonical(cell)}); remove the overlap")


def _check_classes(value):
    """``[problem] classes``: one label set (a list of labels) or an axis of them (a list of
    lists); returned as an axis, so each run's spec holds one label set."""
    sets = value if isinstance(value, list) and value and all(
        isinstance(v, list) for v in value) else [value]
    for labels in sets:
        if not isinstance(labels, list) or len(labels) < 2 or not all(
                _scalar_ok(v) and not isinstance(v, bool) for v in labels):
            raise SweepError(f"problem.classes: must be a list of at least two labels (numbers "
                             f"or strings), or a list of such lists, got {value!r}")
    return sets


def _check_data(table, where):
    """One [data] table, validated; returns a copy."""
    if not isinstance(table, dict) or "source" not in table:
        raise SweepError(f"{where}.source: every data table needs a source "
                         f"(one of {sorted(DATA_KEYS)})")
    data = dict(table)
    if isinstance(data["source"], list) or data["source"] not in DATA_KEYS:
        raise SweepError(f"{where}.source: must be one of {sorted(DATA_KEYS)}, got "
                         f"{data['source']!r}")
    extra = set(data) - DATA_KEYS[data["source"]]
    if extra:
        raise SweepError(f"{where}.{sorted(extra)[0]}: not a key of source "
                         f"{data['source']!r}; accepted: {sorted(DATA_KEYS[data['source']])}")
    if data["source"] in ("synthetic", "separable", "zipf", "symmetric", "sphere"):
        for key in ("n", "p"):
            if key not in data:
                raise SweepError(f"{where}.{key}: source {data['source']!r} needs {key}")
    if data["source"] == "file" and "path" not in data:
        raise SweepError(f"{where}.path: source 'file' needs path (a .npy, .npz or .csv file)")
    if data["source"] == "chunks":
        return _check_chunks(data, where)
    _check_values(data, where)
    for cell in _grid(data):
        _check_data_cell(cell, where)
    return data


def _check_chunks(data, where):
    """A chunks source: its files listed (a pattern expanded, sorted by name) and checked from
    their ``.npy`` headers; returns a copy whose ``rows`` and ``labels`` are axes of one value,
    the list of files, so that every run's spec names its files."""
    names = (f"{where}.rows", f"{where}.labels")
    for key, name in zip(CHUNK_KEYS, names):
        if key not in data:
            raise SweepError(f"{name}: source 'chunks' needs {key}, {CHUNK_FORM}")
    try:
        rows, labels = chunk_files(data["rows"], data["labels"], names=names)
    except (TypeError, ValueError) as exc:
        raise SweepError(str(exc)) from None
    return {**data, "rows": [rows], "labels": [labels]}


def _check_chunked_runs(data, problem, solvers, known):
    """Rows in chunks (a ``chunks`` data table) are taken by the solvers registered with
    ``chunked=True`` only, and measured against :func:`dpsolve.reference_minimizer`, which
    solves the smooth losses only on chunks: both refused here, before the data are read."""
    tables = [i for i, table in enumerate(data) if table["source"] == "chunks"]
    if not tables:
        return
    source = "data" if len(data) == 1 else f"data[{tables[0]}]"
    takers = [name for name, spec in known.items() if spec.chunked]
    for i, table in enumerate(solvers):
        # "auto": choose_solver passes over the solvers that refuse chunks (check_runs plans it)
        if table["name"] != "auto" and not known[table["name"]].chunked:
            raise SweepError(
                f"solver[{i}].name = {_shown(table['name'])}: does not take X in chunks of rows "
                f"({source}.source = \"chunks\"); the solvers that do are {', '.join(takers)}")
    from ..losses import make_loss
    cells = [cell for table in solvers
             for cell in _grid(solver_problem(problem, table.get("problem")))]
    for loss in dict.fromkeys(cell.get("loss", "logistic") for cell in cells):
        # smoothness depends on the loss's name only (the class count is a placeholder)
        if not make_loss(loss, n_classes=2 if loss == "multinomial" else None).smooth:
            raise SweepError(
                f"problem.loss = {_shown(loss)}: not with {source}.source = \"chunks\": each run "
                f"is measured against reference_minimizer's theta*, which does not take "
                f"loss={loss!r} with X in chunks of rows (its active-set polish needs X in "
                "memory); the smooth losses (logistic, squared, huber_hinge, multinomial) run "
                "on chunks, or give the rows in one file (source \"file\")")


def _check_data_cell(cell, where):
    """One data setting, without reading or generating the data."""
    for key, (check, accepted) in DATA_CHECKS.items():
        if key in cell:
            try:
                check(cell[key], key)
            except TypeError as exc:
                raise SweepError(f"{where}.{key} = {_shown(cell[key])}: {exc}; accepted: "
                                 f"{accepted}") from None
            except ValueError as exc:
                raise refuse(where, cell, exc) from None
    if cell["source"] == "zipf":
        from ..datasets import check_zipf_settings
        try:        # the settings together (support <= p), as the generator checks them
            check_zipf_settings(**{k: v for k, v in cell.items() if k != "source"})
        except (TypeError, ValueError) as exc:
            raise refuse(where, cell, exc) from None
    if cell["source"] == "symmetric":
        from ..datasets import check_symmetric_settings
        try:        # n even
            check_symmetric_settings(**{k: v for k, v in cell.items() if k != "source"})
        except (TypeError, ValueError) as exc:
            raise refuse(where, cell, exc) from None
    if sphere.is_sphere(cell):
        sphere.check_cell(cell, where, SweepError)
    if cell["source"] in ("breast_cancer", "digits"):
        import importlib.util
        if importlib.util.find_spec("sklearn") is None:
            raise SweepError(f"{where}.source = {_shown(cell['source'])}: needs scikit-learn "
                             '(pip install "dpsolve[datasets]")')
    if cell["source"] == "file":
        try:
            check_data_file(cell["path"], cell.get("labels"),
                            names=(f"{where}.path", f"{where}.labels"))
        except (TypeError, ValueError) as exc:
            raise SweepError(str(exc)) from None


def _placeholder_label(options):
    """A label that is valid for the cell's loss and label set (the Problem's settings are
    checked on one placeholder row)."""
    classes = options.get("classes")
    if isinstance(classes, list) and classes:
        return classes[0]
    return {"multinomial": 0, "squared": 0.0}.get(options.get("loss", "logistic"), 1.0)


def _check_problem_cell(cell, where="problem"):
    """One problem setting through dpsolve.Problem's own checks, on one placeholder row of zeros
    (the checks of the settings come before any look at the rows); ``where`` names the table in
    messages."""
    from ..problem import Problem

    options = dict(cell)
    radius = options.get("radius")
    if isinstance(radius, str):
        if radius != "none":
            raise SweepError(f"{where}.radius = {_shown(radius)}: radius must be a number > 0, "
                             'or "none" for no constraint (then reg > 0)')
        options["radius"] = None
    k = options.get("n_classes")
    if isinstance(k, int) and not isinstance(k, bool) and k > MAX_CLASSES:
        raise SweepError(f"{where}.n_classes = {k}: n_classes must be an integer in "
                         f"[2, {MAX_CLASSES}] (dpsolve.experiments.sweep.MAX_CLASSES)")
    if isinstance(options.get("classes"), list) and len(options["classes"]) > MAX_CLASSES:
        raise SweepError(f"{where}.classes: at most {MAX_CLASSES} classes, got "
                         f"{len(options['classes'])}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Problem(np.zeros((1, 1)), [_placeholder_label(options)], **options)
    except (TypeError, ValueError) as exc:
        raise refuse(where, cell, exc) from None


def _check_solver_cell(cell, where, spec):
    """One solver setting: epsilon (every solver refuses epsilon <= 0) and the options through
    the solver's declared constraints; the checks that need n, p and the problem are
    :func:`dpsolve.experiments.check_runs`'."""
    try:
        check_real(cell["epsilon"], "epsilon", low=0.0)
        if spec is not None:
            options = {k: v for k, v in cell.items() if k in spec.parameters}
            if spec.hooks.sweep_options is not None:      # as the run will pass them
                options = spec.hooks.sweep_options(options)
            check_parameters(spec.parameters, options)
    except (TypeError, ValueError) as exc:
        raise refuse(where, cell, exc) from None
