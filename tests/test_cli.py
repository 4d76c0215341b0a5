"""The command line's handling of bad input and of the files it is given: `--classes -1,1`,
`report` never touching the database it reads, sweeps refused before any run, the bound on
`--n-classes`, each number's range named by its option, sweep files that are not UTF-8, named
pipes refused before they are opened (in a subprocess with a timeout: a regression would block),
write errors after the work, a reader of stdout that goes away, and the installed script end to
end (the refused inputs themselves are cases of docs/bad_input.md, "The command line")."""
import contextlib
import errno
import io
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from dpsolve import experiments
from dpsolve.cli import main
from dpsolve.datasets import make_synthetic

SWEEP = ('name = "cli"\nreplicates = 1\n[data]\nsource = "synthetic"\nn = {n}\np = 3\n'
         '[problem]\nloss = "logistic"\nradius = 1.0\n'
         '[[solver]]\nname = "clipped_gd"\nepsilon = 1.0\ndelta = 1e-5\nsteps = 3\n')


def _main(*argv):
    """``(status, stdout, stderr)`` of ``main(argv)`` in-process; SystemExit is a status."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main([str(a) for a in argv])
        except SystemExit as exc:
            status = exc.code
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def csv(tmp_path):
    X, y = make_synthetic(60, 3, rng=0)
    path = tmp_path / "d.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",")
    return path


def _snapshot(path):
    return path.read_bytes(), path.stat().st_mtime_ns


# -- --classes with negative labels ---------------------------------------------------------------
@pytest.mark.parametrize("spelling", [["--classes", "-1,1"], ["--classes=-1,1"],
                                      ["--cla", "-1,1"]], ids=["space", "equals", "prefix"])
def test_classes_with_a_negative_first_label(csv, tmp_path, spelling):
    out = tmp_path / "fit.json"
    status, _, err = _main("solve", "--data", csv, "--epsilon", "1", "--delta", "1e-5",
                           "--seed", "3", *spelling, "--out", out)
    assert status == 0, err
    report = json.loads(out.read_text())
    assert report["classes"] == [-1, 1]
    reference = tmp_path / "reference.json"
    assert _main("solve", "--data", csv, "--epsilon", "1", "--delta", "1e-5", "--seed", "3",
                 "--out", reference)[0] == 0                  # the default label set: -1, +1
    assert json.loads(reference.read_text())["theta"] == report["theta"]


def test_classes_value_does_not_swallow_the_next_option(csv, tmp_path):
    # a value that starts with "--" is an option, not labels: argparse's error, status 2
    status, _, err = _main("solve", "--data", csv, "--epsilon", "1", "--classes", "--delta",
                           "1e-5")
    assert status == 2 and "--classes: expected one argument" in err


def test_multinomial_classes_with_negative_labels(tmp_path):
    X, _ = make_synthetic(90, 3, rng=1)
    labels = np.repeat([-1.0, 0.0, 1.0], 30)
    np.savetxt(tmp_path / "k.csv", np.column_stack([X, labels]), delimiter=",")
    out = tmp_path / "k.json"
    status, _, err = _main("solve", "--data", tmp_path / "k.csv", "--loss", "multinomial",
                           "--classes", "-1,0,1", "--epsilon", "1", "--delta", "1e-5", "--seed",
                           "0", "--out", out)
    assert status == 0, err
    report = json.loads(out.read_text())
    # p = 3 features and the intercept's row (on by default), K = 3 columns
    assert report["classes"] == [-1, 0, 1] and np.array(report["theta"]).shape == (4, 3)


# -- report reads, and never writes ---------------------------------------------------------------
@pytest.mark.slow
def test_report_leaves_every_file_as_it_was(tmp_path):
    empty, text = tmp_path / "empty.db", tmp_path / "notes.db"
    empty.write_bytes(b"")
    text.write_text("not a database\n")
    for path in (empty, text):
        before = _snapshot(path)
        status, _, err = _main("report", path)
        assert status == 2 and err.strip().splitlines()[-1].startswith("dpsolve: error: ")
        assert _snapshot(path) == before
    missing = tmp_path / "mistyped.db"
    assert _main("report", missing)[0] == 2
    assert not missing.exists()
    # a real results database: read, unchanged, and no -wal/-shm files left beside it
    db = tmp_path / "r.db"
    sweep = tmp_path / "s.toml"
    sweep.write_text(SWEEP.format(n="[40, 80]"))
    assert _main("run", sweep, "--out", db, "--jobs", "1", "--quiet")[0] == 0
    listing, before = sorted(os.listdir(tmp_path)), _snapshot(db)
    status, out, _ = _main("report", db)
    assert status == 0 and "| data.n |" in out
    assert _snapshot(db) == before and sorted(os.listdir(tmp_path)) == listing
    # the library's summaries read the same way
    assert len(experiments.summarize(db)) == 2 and _snapshot(db) == before
    with pytest.raises(experiments.StoreError, match="no results database"):
        experiments.summarize(missing)
    assert not missing.exists()


def test_report_reads_a_database_while_a_sweep_writes_it(tmp_path):
    db = tmp_path / "r.db"
    sweep = experiments.load_sweep(SWEEP.format(n=40))
    spec = sweep.runs()[0]
    with experiments.ResultStore(db) as writer:       # the runner's connection, still open
        writer.register(sweep)
        writer.add(spec, experiments.execute(spec, sweep.seed))
        assert Path(f"{db}-wal").exists()
        status, out, err = _main("report", db)
        assert status == 0, err
        assert out.startswith("| runs | excess_risk |")
        assert experiments.summarize(db)[0]["runs"] == 1


# -- run: the whole sweep before any run ----------------------------------------------------------
@pytest.mark.parametrize("n,key", [("[40, -5]", r"data\.n = -5"),
                                   ("[40, 30.5]", r"data\.n = 30\.5"),
                                   ("[40, true]", r"data\.n = true")])
def test_a_bad_value_anywhere_in_a_grid_stops_the_sweep(tmp_path, n, key):
    import re
    sweep, db = tmp_path / "s.toml", tmp_path / "r.db"
    sweep.write_text(SWEEP.format(n=n))
    status, _, err = _main("run", sweep, "--out", db, "--jobs", "1", "--quiet")
    assert status == 2 and re.search(key, err) and "Traceback" not in err
    assert not db.exists()


@pytest.mark.slow
def test_a_resumed_sweep_checks_only_the_runs_it_has_not_done(tmp_path, monkeypatch):
    from dpsolve.experiments import runner
    sweep, db = tmp_path / "s.toml", tmp_path / "r.db"
    sweep.write_text(SWEEP.format(n="[40, 80]"))
    assert _main("run", sweep, "--out", db, "--jobs", "1", "--quiet")[0] == 0
    checked = []
    real = runner.check_runs
    monkeypatch.setattr(runner, "check_runs",
                        lambda s, specs=None: checked.append(len(specs)) or real(s, specs))
    status, out, _ = _main("run", sweep, "--out", db, "--jobs", "1", "--quiet")
    assert status == 0 and "0 runs done, 2 already" in out and checked == [0]


# -- the number of classes ------------------------------------------------------------------------
def test_n_classes_is_checked_against_the_memory_once_n_and_p_are_known(csv, monkeypatch):
    from dpsolve.experiments import runs
    # K = 2**16 on 60 rows of 3 features: 8 K (n + p) = 33 MB; a machine of 16 MB refuses it
    monkeypatch.setattr(runs, "physical_memory", lambda: 2 ** 24)
    status, _, err = _main("solve", "--data", csv, "--loss", "multinomial", "--n-classes",
                           str(2 ** 16), "--epsilon", "1", "--delta", "1e-5",
                           "--no-fit-intercept")
    assert status == 2
    assert "--n-classes = 65536: a multinomial fit on n = 60 rows of p = 3 columns" in err
    assert "0.0308 GiB, more than this machine's 0.0156 GiB" in err
    with pytest.raises(ValueError, match="n_classes = 65536"):
        runs.check_class_memory(60, 3, 2 ** 16)
    runs.check_class_memory(60, 3, 2 ** 14)             # 8.3 MB: fits


# -- an empty CSV file: an error naming the argument, and no warning ------------------------------
def test_empty_csv_gives_no_warning(tmp_path):
    (tmp_path / "e.csv").write_text("")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status, _, err = _main("solve", "--data", tmp_path / "e.csv", "--epsilon", "1")
    assert status == 2 and not caught
    assert err.strip() == f"dpsolve: error: --data {tmp_path / 'e.csv'}: the file holds no rows"


# -- the installed script, outside the source tree ------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("case", ["run", "report"])
def test_the_console_script_prints_one_line_and_no_traceback(tmp_path, case):
    scripts = Path(sys.executable).parent
    script = next(p for p in (scripts / "dpsolve", scripts / "dpsolve.exe") if p.exists())
    if case == "run":
        (tmp_path / "s.toml").write_text(SWEEP.format(n=-5))
        argv, untouched = ["run", "s.toml", "--out", "r.db", "--quiet"], None
        expected = "dpsolve: error: s.toml: data.n = -5: n must be an integer >= 1, got -5"
    else:
        (tmp_path / "r.db").write_bytes(b"")
        argv, untouched = ["report", "r.db"], tmp_path / "r.db"
        expected = "dpsolve: error: r.db is empty, not a results database"
    before = None if untouched is None else _snapshot(untouched)
    done = subprocess.run([str(script), *argv], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == expected
    if untouched is None:
        assert not (tmp_path / "r.db").exists()
    else:
        assert _snapshot(untouched) == before


# -- numbers: each option's accepted range, named by argparse before any work --------------------
_FIT = ["solve", "--data", "d.csv", "--epsilon", "1"]


@pytest.mark.parametrize("argv,expected", [
    (["demo", "--seed", "-1"], "argument --seed: seeds are integers >= 0, got '-1'"),
    (["demo", "--seeds", "1"], "argument --seeds: must be an integer >= 2"),
    (_FIT + ["--seed", "-1"], "argument --seed: seeds are integers >= 0, got '-1'"),
    (["solve", "--data", "d.csv", "--epsilon", "nan"],
     "argument --epsilon: epsilon must be a number in (0, inf), got 'nan'"),
    (["solve", "--data", "d.csv", "--epsilon", "-1"],
     "argument --epsilon: epsilon must be a number in (0, inf), got '-1'"),
    (_FIT + ["--delta", "1"], "argument --delta: delta must be a number in (0, 1), got '1'"),
    (_FIT + ["--reg", "-1"],
     "argument --reg: reg must be a number in [0, inf) or 'auto', got '-1'"),
    (_FIT + ["--row-norm", "inf"],
     "argument --row-norm: row_norm must be a number in (0, inf), got 'inf'"),
    (_FIT + ["--radius", "nan"],
     "argument --radius: radius must be a number in (0, inf) or 'none'"),
    (_FIT + ["--fit-intercept", "--intercept-scale", "0"],
     "argument --intercept-scale: intercept_scale must be a number in (0, inf), got '0'"),
    (["run", "s.toml", "--out", "r.db", "--jobs", "0"],
     "argument --jobs: must be an integer in [1, "),
    (["run", "s.toml", "--out", "r.db", "--jobs", "100000"],
     "argument --jobs: must be an integer in [1, "),
    (["run", "s.toml", "--out", "r.db", "--scheduler", "local:100000"],
     "--scheduler local:100000: N must be at most "),
], ids=["demo-seed", "demo-seeds", "solve-seed", "epsilon-nan", "epsilon-negative", "delta-1",
        "reg-negative", "row-norm-inf", "radius-nan", "intercept-scale-0", "jobs-0", "jobs-huge",
        "local-huge"])
def test_a_number_out_of_range_is_refused_naming_the_option(tmp_path, monkeypatch, argv,
                                                            expected):
    monkeypatch.chdir(tmp_path)
    status, out, err = _main(*argv)
    assert status == 2, err
    assert err.strip().splitlines()[-1].startswith(f"dpsolve: error: {expected}")
    assert not out and not (tmp_path / "r.db").exists()


def test_a_huge_number_of_runs_is_refused_before_they_are_listed(monkeypatch, tmp_path):
    # replicates = 10**9 had the runner listing 10**9 runs, filling the memory for hours
    text = SWEEP.format(n=40).replace("replicates = 1", "replicates = 1000000000")
    with pytest.raises(experiments.SweepError, match=r"1 grid cells x 1000000000 replicates = "
                                                     r"1000000000 runs, more than the 1000000"):
        experiments.load_sweep(text)
    experiments.load_sweep(text.replace("1000000000", "1000000"))         # at the limit
    # dpsolve demo --seeds: the same count, before any work and naming the option
    from dpsolve import demo
    from dpsolve.experiments import sweep
    monkeypatch.setattr(sweep, "MAX_RUNS", 10)
    monkeypatch.setattr(demo, "run_demo", lambda **kw: pytest.fail("the demo ran"))
    status, _, err = _main("demo", "--seeds", "2", "--out", "", "--db", tmp_path / "d.db")
    assert status == 2
    assert re.match(r"dpsolve: error: --seeds 2: the sweep has \d+ grid cells x 2 replicates",
                    err.strip().splitlines()[-1])


# -- files read: UTF-8 sweeps, regular files only -------------------------------------------------
def test_a_sweep_file_that_is_not_utf8_is_refused_naming_the_file(tmp_path):
    sweep, db = tmp_path / "s.toml", tmp_path / "r.db"
    sweep.write_bytes(SWEEP.format(n=40).replace('"cli"', '"d\xe9mo"').encode("latin-1"))
    status, _, err = _main("run", sweep, "--out", db, "--quiet")
    assert status == 2
    assert err.strip().splitlines()[-1] == (
        f"dpsolve: error: {sweep}: cannot read the sweep file {sweep}: it is not UTF-8 text "
        "(byte 0xe9 at line 1, column 10); a sweep file is TOML, which must be UTF-8: save it "
        "as UTF-8")
    assert not db.exists()


def _script(*argv, cwd, timeout=30, **kwargs):
    """The installed ``dpsolve`` script run on ``argv`` in ``cwd`` (a subprocess: a command
    that blocks is stopped by ``timeout`` instead of hanging the suite)."""
    scripts = Path(sys.executable).parent
    script = next(p for p in (scripts / "dpsolve", scripts / "dpsolve.exe") if p.exists())
    kwargs.setdefault("stdout", subprocess.PIPE)
    return subprocess.run([str(script), *map(str, argv)], stderr=subprocess.PIPE, text=True,
                          cwd=cwd, timeout=timeout, env=dict(os.environ, OMP_NUM_THREADS="1"),
                          **kwargs)


@pytest.fixture
def results_db(tmp_path):
    """A results database of one run (written in-process, as the runner writes it)."""
    db = tmp_path / "r.db"
    sweep = experiments.load_sweep(SWEEP.format(n=40))
    spec = sweep.runs()[0]
    with experiments.ResultStore(db) as store:
        store.register(sweep)
        store.add(spec, experiments.execute(spec, sweep.seed))
    return db


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize("case", ["report", "run-sweep", "run-out", "demo-db", "solve-data",
                                  "solve-labels", "report-csv", "solve-out"])
def test_a_named_pipe_is_refused_before_it_is_opened(tmp_path, results_db, case):
    # opening a FIFO that no other process opens blocks: for reading, until a writer comes;
    # for writing, until a reader comes. Each is refused from its status, before the open.
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "s.toml").write_text(SWEEP.format(n=40))
    X, y = make_synthetic(30, 3, rng=0)
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, y]), delimiter=",")
    argv, option = {
        "report": (["report", fifo], ""),
        "run-sweep": (["run", fifo, "--out", "new.db", "--quiet"], f"{fifo}: cannot read the "
                                                                   f"sweep file {fifo}: "),
        "run-out": (["run", "s.toml", "--out", fifo, "--quiet"], "--out: "),
        "demo-db": (["demo", "--db", fifo, "--out", "", "--seeds", "2", "--quiet"], "--db: "),
        "solve-data": (["solve", "--data", fifo, "--epsilon", "1"], f"--data {fifo}: "),
        "solve-labels": (["solve", "--data", "d.csv", "--labels", fifo, "--epsilon", "1"],
                         f"--labels {fifo}: "),
        "report-csv": (["report", results_db, "--csv", fifo], f"--csv {fifo}: "),
        "solve-out": (["solve", "--data", "d.csv", "--epsilon", "1", "--delta", "1e-5", "--out",
                       fifo], f"--out {fifo}: "),
    }[case]
    done = _script(*argv, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"dpsolve: error: {option}"), last
    assert last.endswith("is a named pipe (FIFO), not a regular file"), last
    assert not (tmp_path / "new.db").exists()


# -- files written: an error after the work is one line naming the option -------------------------
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_a_full_device_is_reported_naming_the_option(results_db, tmp_path):
    status, out, err = _main("report", results_db, "--csv", "/dev/full")
    assert status == 2 and out.startswith("| runs |")          # the report, then the error
    assert err.strip().splitlines()[-1] == ("dpsolve: error: --csv /dev/full: cannot write: "
                                            "No space left on device")
    X, y = make_synthetic(30, 3, rng=0)
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, y]), delimiter=",")
    status, _, err = _main("solve", "--data", tmp_path / "d.csv", "--epsilon", "1", "--delta",
                           "1e-5", "--out", "/dev/full")
    assert status == 2
    assert err.strip().splitlines()[-1] == ("dpsolve: error: --out /dev/full: cannot write: "
                                            "No space left on device")


@pytest.fixture
def swept_db(tmp_path):
    """A results database of a sweep along n (two cells: a figure against n)."""
    db, sweep = tmp_path / "swept.db", tmp_path / "s.toml"
    sweep.write_text(SWEEP.format(n="[40, 80]"))
    assert _main("run", sweep, "--out", db, "--jobs", "1", "--quiet")[0] == 0
    return db


@pytest.mark.slow
def test_a_figure_that_cannot_be_written_is_reported_naming_the_option(swept_db, tmp_path,
                                                                       monkeypatch):
    from matplotlib.figure import Figure
    savefig = Figure.savefig

    def full(self, fname, *args, **kwargs):
        if isinstance(fname, io.BytesIO):       # the demo's check of the format, in memory
            return savefig(self, fname, *args, **kwargs)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))     # at the write: no file named

    figs = tmp_path / "figs"
    if os.path.isdir("/proc"):          # a folder that exists, in which nothing can be created
        status, _, err = _main("report", swept_db, "--plots", "/proc/dpsolve-plots")
        assert status == 2 and err.strip().splitlines()[-1].startswith(
            "dpsolve: error: --plots /proc/dpsolve-plots: cannot write: ")
    monkeypatch.setattr(Figure, "savefig", full)
    status, _, err = _main("report", swept_db, "--plots", figs)
    assert status == 2
    assert err.strip().splitlines()[-1] == (
        f"dpsolve: error: --plots {figs}: cannot write {figs / 'excess_risk_vs_n.png'}: "
        "No space left on device")
    # the demo's figure, drawn after every run: its write error names --out
    from dpsolve import demo
    out = tmp_path / "demo.png"

    def demo_with_a_full_disk(**options):
        demo.plot_axis(experiments.summarize(swept_db), "data.n", [options["out"]])

    monkeypatch.setattr(demo, "run_demo", demo_with_a_full_disk)
    status, _, err = _main("demo", "--seeds", "2", "--out", out, "--quiet")
    assert status == 2
    assert err.strip().splitlines()[-1] == (f"dpsolve: error: --out {out}: cannot write: "
                                            "No space left on device")


@pytest.mark.parametrize("out", ["fig.xyz", "fig"])
def test_a_figure_format_is_checked_before_the_demo_runs(tmp_path, monkeypatch, out):
    from dpsolve import demo
    monkeypatch.setattr(demo, "run_demo", lambda **kw: pytest.fail("the demo ran"))
    status, _, err = _main("demo", "--seeds", "2", "--out", tmp_path / out, "--quiet")
    assert status == 2
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"dpsolve: error: --out {tmp_path / out}: ")
    assert ("Format 'xyz' is not supported" if out.endswith(".xyz") else "needs a suffix") in last


@pytest.mark.slow
def test_run_reports_a_database_write_error(tmp_path, monkeypatch):
    import sqlite3

    from dpsolve.experiments import store

    def full(self, spec, result):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(store.ResultStore, "add", full)
    sweep, db = tmp_path / "s.toml", tmp_path / "r.db"
    sweep.write_text(SWEEP.format(n=40))
    status, _, err = _main("run", sweep, "--out", db, "--jobs", "1", "--quiet")
    assert status == 2
    assert err.strip().splitlines()[-1] == (f"dpsolve: error: --out {db}: cannot write: "
                                            "database or disk is full; the runs committed "
                                            "before are kept")


@pytest.mark.slow
def test_a_reader_that_stops_reading_gets_no_traceback(results_db, tmp_path):
    # `dpsolve report DB | head -1`: the pipe's reader is gone before the report is written
    read, write = os.pipe()
    os.close(read)
    try:
        done = _script("report", results_db, cwd=tmp_path, stdout=write, timeout=120)
    finally:
        os.close(write)
    assert done.returncode == 1 and done.stderr == ""
