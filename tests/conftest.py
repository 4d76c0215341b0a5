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


def synthetic_problem(n=200, p=5, loss="logistic", *, seed=0, **options):
    """The test suite's standard problem: ``dpsolve.datasets.make_synthetic(n, p, rng=seed)``
    (unit rows, -1/+1 labels from a noisy linear model); for ``"squared"`` the targets
    ``clip(mean of the features, -1, 1)``, for ``"multinomial"`` three classes from three random
    directions. ``options`` go to :class:`dpsolve.Problem` (its defaults otherwise)."""
    import numpy as np

    import dpsolve

    X, y = dpsolve.datasets.make_synthetic(n, p, rng=seed)
    if loss == "squared":
        y = np.clip(X @ np.ones(p) / p, -1, 1)
    if loss == "multinomial":
        y = np.argmax(X @ np.random.default_rng(seed).standard_normal((p, 3)), axis=1)
        options.setdefault("n_classes", 3)
    return dpsolve.Problem(X, y, loss, **options)


@pytest.fixture
def make_problem():
    """:func:`synthetic_problem`, as a fixture (a factory: call it with the sizes and options)."""
    return synthetic_problem
