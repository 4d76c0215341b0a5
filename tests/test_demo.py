"""The main job: `dpsolve demo` end to end, and the datasets it uses."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpsolve import datasets, experiments
from dpsolve.cli import main


@pytest.mark.slow
def test_demo_runs_end_to_end(tmp_path, capsys):
    out, db = tmp_path / "demo.png", tmp_path / "demo.db"
    assert main(["demo", "--seeds", "2", "--out", str(out), "--db", str(db), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| ")]
    for source in ("synthetic", "breast_cancer"):
        for loss in ("logistic", "hinge", "squared"):
            mine = [r for r in rows if r[0] == f"| {source}" and r[1] == loss]
            assert sorted((r[2], r[3]) for r in mine) == sorted(
                (e, c) for e in ("0.1", "0.3", "0.9") for c in ("paper", "rdp"))
    assert "nan" not in text.lower()
    # the demo is a sweep like any other: its database holds every run, and reports again
    assert main(["report", str(db)]) == 0
    assert "log-log slope of excess risk along solver.epsilon" in capsys.readouterr().out
    with experiments.ResultStore(db) as store:
        assert len(store.rows()) == 2 * 3 * 3 * 2 * 2


@pytest.mark.slow
def test_cli_help_and_entry_point(tmp_path):
    # the console script pip installs next to the interpreter, run outside the source tree
    scripts = Path(sys.executable).parent
    script = next(p for p in (scripts / "dpsolve", scripts / "dpsolve.exe") if p.exists())
    result = subprocess.run([str(script), "demo", "--help"], capture_output=True, text=True,
                            check=True, cwd=tmp_path)
    assert "--seeds" in result.stdout
    assert main([]) == 2


def test_synthetic_data():
    X, y = datasets.make_synthetic(300, 7, rng=0)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, rtol=1e-15)
    assert set(np.unique(y)) == {-1.0, 1.0}
    X2, y2 = datasets.make_synthetic(300, 7, rng=0)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    _, t = datasets.make_synthetic(300, 7, task="regression", rng=1)
    assert np.all(np.abs(t) <= 1.0) and len(np.unique(t)) > 100


def test_breast_cancer_is_record_local():
    X, y = datasets.load_breast_cancer()
    assert X.shape == (569, 30) and set(np.unique(y)) == {0.0, 1.0}
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, rtol=1e-15)
