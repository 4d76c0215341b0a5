"""The main job: `dpsolve demo` end to end, and the datasets it uses."""
import subprocess
import sys
from pathlib import Path

import numpy as np

from dpsolve import datasets
from dpsolve.cli import main


def test_demo_runs_end_to_end(tmp_path, capsys):
    out = tmp_path / "demo.png"
    assert main(["demo", "--seeds", "2", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000
    for name in ("synthetic", "breast cancer"):
        for loss in ("logistic", "hinge", "squared"):
            assert sum(1 for line in text.splitlines() if line.startswith(name) and f" {loss} " in line) == 7
    assert "nan" not in text.lower()


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
