"""The command line's handling of bad input and of the files it is given: `--classes -1,1`,
`report` never touching the database it reads, sweeps refused before any run, the bound on
`--n-classes`, and the installed script end to end (the refused inputs themselves are cases of
docs/bad_input.md, "The command line")."""
import contextlib
import io
import json
import os
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
    assert report["classes"] == [-1, 0, 1] and np.array(report["theta"]).shape == (3, 3)


# -- report reads, and never writes ---------------------------------------------------------------
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
                           str(2 ** 16), "--epsilon", "1", "--delta", "1e-5")
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
