import sys
from pathlib import Path

import pytest

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
