import os
import sys
from pathlib import Path

import pytest

# The kernels' OpenMP threads spin at barriers by default. On a machine with more runnable
# processes than cores (a shared CI runner, another job) a spinning thread waits for a
# descheduled sibling, and the suite runs several times slower (test_neighbour_metadata.py took
# 33 s instead of 14 s at load 3 on two cores). Waiting passively changes no result. Set before
# dpsolve, hence libgomp, is imported; a value already in the environment wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# `python -m pytest` puts the repository root on sys.path, where dpsolve/ has no compiled kernels
# after a regular (non-editable) `pip install .`. Test the installed package in that case.
ROOT = Path(__file__).resolve().parents[1]
if not any((ROOT / "dpsolve" / "_kernels").glob("*.so")) and not any(
        (ROOT / "dpsolve" / "_kernels").glob("*.pyd")):
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Reference minimisers are cached in a per-session temporary folder, never in ~/.cache."""
    monkeypatch.setenv("DPSOLVE_CACHE", str(tmp_path_factory.getbasetemp() / "dpsolve-cache"))


@pytest.fixture
def gradient_evaluations(monkeypatch):
    """The list of row counts of every ``Problem._loss_derivatives`` call made while the test
    runs: how many gradient evaluations (and on how many rows) a solver made."""
    import dpsolve

    calls = []
    real = dpsolve.Problem._loss_derivatives

    def counting(self, z):
        calls.append(z.shape[0])
        return real(self, z)

    monkeypatch.setattr(dpsolve.Problem, "_loss_derivatives", counting)
    return calls
