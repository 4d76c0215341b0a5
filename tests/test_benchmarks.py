"""The asv suite is well formed: ``asv check`` imports every benchmark module and checks every
benchmark's signature and parameters, so a benchmark broken by a change fails here, not in a
later ``asv run``."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def test_asv_check_passes():
    done = subprocess.run([sys.executable, "-m", "asv", "check", "--python=same"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No problems found" in done.stdout, done.stdout + done.stderr
