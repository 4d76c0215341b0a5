"""Sweeps on rows held in chunk files (``source = "chunks"``): the files listed (a glob pattern
sorted by name) and checked from their ``.npy`` headers before any run, each refusal naming its
key; a run on one chunk gives the records of the same run on the rows in one file, on several
chunks the bits of the same chunks built by hand, on float32 files the bits of the same values
in float64; and ``dpsolve run`` on a chunks sweep."""
import concurrent.futures
import contextlib
import hashlib
import io
import warnings

import numpy as np
import pytest

import dpsolve
from dpsolve import Problem, experiments
from dpsolve.chunked import RowChunks
from dpsolve.cli import main
from dpsolve.datasets import make_synthetic
from dpsolve.experiments import SweepError, load_sweep
from dpsolve.experiments import runs as runs_module
from dpsolve.experiments import sweep as sweep_module
from dpsolve.reference import excess_risk

ROWS = (11, 23, 16)
N, P = sum(ROWS), 3
PROBLEM = {"loss": ["logistic", "squared"], "radius": 1.0, "reg": 0.05}
SOLVERS = [{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-4},
           {"name": "output_perturbation", "epsilon": 1.0}]


def _data():
    X, y = make_synthetic(N, P, rng=0)
    # every norm below row_norm = 1: no row is clipped (clipping rounds into the stored dtype)
    return X / (1.01 * np.linalg.norm(X, axis=1).max()), y


def _split(a):
    bounds = np.cumsum((0,) + ROWS)
    return [a[s:e] for s, e in zip(bounds[:-1], bounds[1:])]


def _write_chunks(folder, X, y, prefix="x", dtype=np.float64):
    """One x_c.npy and y_c.npy per chunk of ROWS; returns the two lists of paths."""
    xs, ys = [], []
    for c, (Xc, yc) in enumerate(zip(_split(X), _split(y))):
        xs.append(folder / f"{prefix}_{c}.npy")
        ys.append(folder / f"y_{c}.npy")
        np.save(xs[-1], Xc.astype(dtype))
        np.save(ys[-1], yc)
    return [str(p) for p in xs], [str(p) for p in ys]


def _sweep(data, problem=PROBLEM, solvers=SOLVERS):
    return {"name": "chunks", "seed": 4, "replicates": 2, "data": data, "problem": problem,
            "solver": solvers}


@pytest.fixture
def files(tmp_path):
    X, y = _data()
    rows, labels = _write_chunks(tmp_path, X, y)
    return tmp_path, X, y, rows, labels


@pytest.fixture
def pinned_seed(monkeypatch):
    """The runs' solver seed from their spec without its data: two sweeps on the same rows held
    differently (one file, chunk files) then draw the same noise."""
    def seed(spec, root):
        return sweep_module.run_seed({**spec, "data": None}, root)
    monkeypatch.setattr(runs_module, "run_seed", seed)


def _records(spec, db):
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        experiments.run_sweep(spec, db, executor=pool, progress=False)
    with experiments.ResultStore(db, read_only=True) as store:
        rows = store.rows()
    out = {}
    for row in rows:
        result = dict(row["result"])
        result.pop("wall_time")
        spec = row["spec"]
        out[(spec["replicate"], sweep_module.canonical(spec["problem"]),
             sweep_module.canonical(spec["solver"]))] = result
    return out


# -- the files: listed, sorted, recorded in each run ------------------------------------------
def test_a_glob_pattern_is_expanded_and_sorted_by_name(files, monkeypatch):
    folder, _, _, rows, labels = files
    monkeypatch.chdir(folder)
    runs = load_sweep(_sweep({"source": "chunks", "rows": "x_*.npy",
                              "labels": "y_*.npy"})).runs()
    assert len(runs) == 2 * 2 * 2                     # losses x solvers x replicates
    for run in runs:                                  # one list of files, not an axis
        assert run["data"] == {"source": "chunks", "rows": ["x_0.npy", "x_1.npy", "x_2.npy"],
                               "labels": ["y_0.npy", "y_1.npy", "y_2.npy"]}
    # sorted by name, not numerically: x_10 before x_2
    for c in (2, 10):
        np.save(folder / f"c_{c}.npy", np.full((c, P), 0.1))
        np.save(folder / f"d_{c}.npy", np.ones(c))
    run = load_sweep(_sweep({"source": "chunks", "rows": "c_*.npy",
                             "labels": "d_*.npy"})).runs()[0]
    assert run["data"]["rows"] == ["c_10.npy", "c_2.npy"]
    assert run["data"]["labels"] == ["d_10.npy", "d_2.npy"]
    assert runs_module.build_problem(run, 4).X.chunk_rows == (10, 2)


def test_a_list_of_files_keeps_its_order(files):
    _, _, _, rows, labels = files
    run = load_sweep(_sweep({"source": "chunks", "rows": rows[::-1],
                             "labels": labels[::-1]})).runs()[0]
    assert run["data"]["rows"] == rows[::-1] and run["data"]["labels"] == labels[::-1]
    problem = runs_module.build_problem(run, 4)
    assert problem.is_chunked and problem.X.chunk_rows == ROWS[::-1]


# -- the bits ---------------------------------------------------------------------------------
def test_one_chunk_gives_the_records_of_the_rows_in_one_file(tmp_path, pinned_seed):
    X, y = _data()
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "y.npy", y)
    x_file, y_file = str(tmp_path / "x.npy"), str(tmp_path / "y.npy")
    in_file = _records(_sweep({"source": "file", "path": x_file, "labels": y_file}),
                       tmp_path / "file.db")
    in_chunks = _records(_sweep({"source": "chunks", "rows": [x_file], "labels": [y_file]}),
                         tmp_path / "chunks.db")
    assert len(in_file) == 8 and in_chunks == in_file


def test_several_chunks_give_the_bits_of_the_same_chunks_built_by_hand(files):
    _, X, y, rows, labels = files
    sweep = load_sweep(_sweep({"source": "chunks", "rows": rows, "labels": labels},
                              solvers=SOLVERS[:1]))
    for run in sweep.runs():
        result = experiments.execute(run, sweep.seed)
        chunks = RowChunks.from_arrays(_split(X), _split(y))
        problem = Problem(chunks, None, **run["problem"])
        fit = dpsolve.clipped_gd(problem, 1.0, 1e-4,
                                 rng=sweep_module.run_seed(run, sweep.seed))
        assert result["theta_sha256"] == hashlib.sha256(fit.theta.tobytes()).hexdigest()
        reference = dpsolve.reference_minimizer(problem)
        assert result["excess_risk"] == float(excess_risk(problem, fit.theta, reference))
        assert result["objective"] == float(problem.objective(fit.theta))
        assert (result["n"], result["p"]) == (N, P)


def test_float32_chunk_files_are_kept_float32(tmp_path, pinned_seed):
    X, y = _data()
    narrow = _write_chunks(tmp_path, X, y, prefix="x32", dtype=np.float32)
    # the same values held in float64
    wide = _write_chunks(tmp_path, X.astype(np.float32).astype(np.float64), y, prefix="x64")
    run = load_sweep(_sweep({"source": "chunks", "rows": narrow[0],
                             "labels": narrow[1]})).runs()[0]
    assert runs_module.build_problem(run, 4).X.dtype == np.float32
    records = [_records(_sweep({"source": "chunks", "rows": rows, "labels": labels}),
                        tmp_path / f"{name}.db")
               for name, (rows, labels) in (("narrow", narrow), ("wide", wide))]
    assert len(records[0]) == 8 and records[0] == records[1]


# -- refusals, before any run -----------------------------------------------------------------
def _refusal(folder, rows, labels, **extra):
    return _sweep({"source": "chunks", "rows": rows, "labels": labels, **extra})


def _bad_files(folder):
    """Files that each break one rule, by name."""
    np.save(folder / "wide.npy", np.zeros((ROWS[1], P + 1)))        # the second chunk's rows
    np.save(folder / "narrow32.npy", np.zeros((ROWS[1], P), dtype=np.float32))
    np.save(folder / "flat.npy", np.zeros(11))
    np.save(folder / "table.npy", np.zeros((11, 2)))
    np.save(folder / "none.npy", np.zeros((0, P)))
    np.save(folder / "y0.npy", np.zeros(0))
    np.save(folder / "short.npy", np.zeros(10))
    np.save(folder / "objects.npy", np.array([1, "a"], dtype=object), allow_pickle=True)
    (folder / "x.csv").write_text("1,2,3\n")
    (folder / "folder.npy").mkdir()


@pytest.mark.parametrize("case,message", [
    ("no-rows", r"data\.rows: source 'chunks' needs rows, a list of \.npy file names, or one "
                r"glob pattern"),
    ("no-labels", r"data\.labels: source 'chunks' needs labels"),
    ("a-number", r"data\.rows must be a list of \.npy file names, or one glob pattern \(a "
                 r"string such as \"data/x_\*\.npy\", whose matches are sorted by name\), got 3"),
    ("an-empty-list", r"data\.rows must be a list of \.npy file names.*got \[\]"),
    ("a-list-of-lists", r"data\.labels must be a list of \.npy file names.*got \[\["),
    ("no-match", r"data\.rows = '.*nothing_\*\.npy': no file matches the pattern; accepted: "
                 r"a list of \.npy file names"),
    ("fewer-labels", r"data\.rows and data\.labels must name as many files \(one pair per "
                     r"chunk\), got 3 and 2"),
    ("not-npy", r"data\.rows .*x\.csv: must be a \.npy file"),
    ("missing", r"data\.labels .*gone\.npy: no such file"),
    ("a-directory", r"data\.rows .*folder\.npy: is a directory"),
    ("objects", r"data\.labels .*objects\.npy: cannot be memory-mapped as an \.npy array"),
    ("rows-1-d", r"data\.rows .*flat\.npy: must hold a 2-D \(rows by columns\) array, got "
                 r"shape \(11,\)"),
    ("labels-2-d", r"data\.labels .*table\.npy: must hold a 1-D \(one label per row\) array"),
    ("no-rows-in-a-chunk", r"data\.rows .*none\.npy: holds no rows"),
    ("row-count", r"data\.labels .*short\.npy: holds 10 labels, but its rows file data\.rows "
                  r".*x_0\.npy holds 11 rows"),
    ("columns", r"data\.rows .*wide\.npy: 4 columns of float64, but .*x_0\.npy has 3 columns "
                r"of float64: every chunk needs the same columns and dtype"),
    ("dtype", r"data\.rows .*narrow32\.npy: 3 columns of float32, but .*x_0\.npy has 3 "
              r"columns of float64"),
    ("a-file-key", r"data\.path: not a key of source 'chunks'; accepted: \['labels', 'rows', "
                   r"'source'\]"),
    ("solver", r"solver\[2\]\.name = \"noisy_sgd\": does not take X in chunks of rows "
               r"\(data\.source = \"chunks\"\); the solvers that do are clipped_gd, "
               r"output_perturbation, dp_sgd"),
    ("hinge", r"problem\.loss = \"hinge\": not with data\.source = \"chunks\": each run is "
              r"measured against reference_minimizer's theta\*, which does not take "
              r"loss='hinge' with X in chunks of rows"),
])
def test_refusals_name_the_key_and_the_accepted_form(files, case, message):
    folder, _, _, rows, labels = files
    _bad_files(folder)
    f = {name: str(folder / name) for name in
         ("wide.npy", "narrow32.npy", "flat.npy", "table.npy", "none.npy", "y0.npy",
          "short.npy", "objects.npy", "x.csv", "folder.npy", "gone.npy")}
    sweeps = {
        "no-rows": _sweep({"source": "chunks", "labels": labels}),
        "no-labels": _sweep({"source": "chunks", "rows": rows}),
        "a-number": _refusal(folder, 3, labels),
        "an-empty-list": _refusal(folder, [], labels),
        "a-list-of-lists": _refusal(folder, rows, [labels]),
        "no-match": _refusal(folder, str(folder / "nothing_*.npy"), labels),
        "fewer-labels": _refusal(folder, rows, labels[:2]),
        "not-npy": _refusal(folder, [f["x.csv"]], labels[:1]),
        "missing": _refusal(folder, rows, labels[:2] + [f["gone.npy"]]),
        "a-directory": _refusal(folder, [f["folder.npy"]], labels[:1]),
        "objects": _refusal(folder, rows[:1], [f["objects.npy"]]),
        "rows-1-d": _refusal(folder, [f["flat.npy"]], labels[:1]),
        "labels-2-d": _refusal(folder, rows[:1], [f["table.npy"]]),
        "no-rows-in-a-chunk": _refusal(folder, [f["none.npy"]], [f["y0.npy"]]),
        "row-count": _refusal(folder, rows[:1], [f["short.npy"]]),
        "columns": _refusal(folder, rows[:1] + [f["wide.npy"]], labels[:2]),
        "dtype": _refusal(folder, rows[:1] + [f["narrow32.npy"]], labels[:2]),
        "a-file-key": _refusal(folder, rows, labels, path=rows[0]),
        "solver": _sweep({"source": "chunks", "rows": rows, "labels": labels},
                         solvers=SOLVERS + [{"name": "noisy_sgd", "epsilon": 1.0}]),
        "hinge": _sweep({"source": "chunks", "rows": rows, "labels": labels},
                        problem={**PROBLEM, "loss": ["logistic", "hinge"]}),
    }
    with pytest.raises(SweepError, match=message):
        load_sweep(sweeps[case])


def test_auto_chooses_among_the_solvers_that_take_chunks(files):
    """``auto`` is planned with the data (check_runs): choose_solver passes over the solvers
    that refuse chunks, and a target none of the others meets is refused there."""
    _, _, _, rows, labels = files
    data = {"source": "chunks", "rows": rows, "labels": labels}
    sweep = load_sweep(_sweep(data, solvers=[{"name": "auto", "epsilon": 1.0, "delta": 1e-4},
                                             {"name": "auto", "epsilon": 1.0}]))
    experiments.check_runs(sweep)
    chosen = {experiments.execute(run, sweep.seed)["chosen_solver"]
              for run in sweep.runs() if run["replicate"] == 0}
    assert chosen == {"clipped_gd", "output_perturbation"}
    # pure epsilon without reg: output_perturbation needs reg > 0, the others delta
    none = load_sweep(_sweep(data, problem={"loss": "logistic", "radius": 1.0},
                             solvers=[{"name": "auto", "epsilon": 1.0}]))
    with pytest.raises(SweepError, match=r"solver\[0\]: choose_solver: no solver has a bound "
                                         r"at epsilon=1, delta=None"):
        experiments.check_runs(none)


def test_a_label_outside_the_classes_is_found_by_check_runs(files):
    _, _, _, rows, labels = files
    sweep = load_sweep(_sweep({"source": "chunks", "rows": rows, "labels": labels},
                              problem={"loss": "logistic", "radius": 1.0,
                                       "classes": [5, 7]}))
    # found when each chunk is validated; the message's context names the files
    with pytest.raises(SweepError, match=r"^problem: y holds labels outside classes=\(5, 7\).*"
                                         r"rows=\[\".*x_0\.npy\", \".*x_1\.npy\", "
                                         r"\".*x_2\.npy\"\]"):
        experiments.check_runs(sweep)


@pytest.mark.slow
def test_on_a_cluster_each_run_reads_the_chunk_files_on_its_worker(files, tmp_path_factory):
    """On a Dask cluster each run and each reference solve maps the files on its worker; the
    records are those of the same runs in this process."""
    distributed = pytest.importorskip("distributed")
    _, _, _, rows, labels = files
    spec = _sweep({"source": "chunks", "rows": rows, "labels": labels})
    folder = tmp_path_factory.mktemp("cluster")
    local = _records(spec, folder / "local.db")
    with pytest.MonkeyPatch.context() as patch:
        # the worker's own theta* cache, never the user's
        patch.setenv("DPSOLVE_CACHE", str(folder / "workers-cache"))
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
    try:
        with distributed.Client(cluster) as client:
            experiments.run_sweep(spec, folder / "remote.db", client=client, progress=False)
    finally:
        cluster.close()
    with experiments.ResultStore(folder / "remote.db", read_only=True) as store:
        remote = {(r["spec"]["replicate"], sweep_module.canonical(r["spec"]["problem"]),
                   sweep_module.canonical(r["spec"]["solver"])):
                  {k: v for k, v in r["result"].items() if k != "wall_time"}
                  for r in store.rows()}
    assert len(local) == 8 and remote == local


# -- the command line -------------------------------------------------------------------------
TOML = ('name = "cli-chunks"\nreplicates = 1\n[data]\nsource = "chunks"\nrows = "{rows}"\n'
        'labels = "y_*.npy"\n[problem]\nloss = "logistic"\nradius = 1.0\n'
        '[[solver]]\nname = "clipped_gd"\nepsilon = 1.0\ndelta = 1e-4\nsteps = 3\n')


def _main(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main([str(a) for a in argv])
        except SystemExit as exc:
            status = exc.code
    return status, out.getvalue(), err.getvalue()


@pytest.mark.slow
def test_dpsolve_run_on_chunk_files(files, monkeypatch):
    folder, _, _, _, _ = files
    monkeypatch.chdir(folder)                 # relative patterns, in the run's worker too
    (folder / "s.toml").write_text(TOML.format(rows="x_*.npy"))
    status, _, err = _main("run", "s.toml", "--out", "r.db", "--jobs", "1", "--quiet")
    assert status == 0, err
    with experiments.ResultStore(folder / "r.db", read_only=True) as store:
        [row] = store.rows()
    assert row["spec"]["data"]["rows"] == ["x_0.npy", "x_1.npy", "x_2.npy"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert row["result"] == {**experiments.execute(row["spec"], 0),
                                 "wall_time": row["result"]["wall_time"]}
    # refused before any run, naming the key; no database written
    (folder / "bad.toml").write_text(TOML.format(rows="w_*.npy"))
    status, _, err = _main("run", "bad.toml", "--out", "bad.db", "--quiet")
    assert status == 2
    assert "data.rows = 'w_*.npy': no file matches the pattern" in err.strip().splitlines()[-1]
    assert not (folder / "bad.db").exists()
