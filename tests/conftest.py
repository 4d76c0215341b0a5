import os
import sys
from pathlib import Path

import pytest

# `python -m pytest` puts the repository root on sys.path, where dpsolve/ has no compiled kernels
# after a regular (non-editable) `pip install .`. Test the installed package in that case.
ROOT = Path(__file__).resolve().parents[1]
if not any((ROOT / "dpsolve" / "_kernels").glob("*.so")) and not any(
        (ROOT / "dpsolve" / "_kernels").glob("*.pyd")):
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT]


# The fast tier needs the test extra only; the slow tier also needs the docs, dask and bench
# extras (Sphinx and numpydoc, dask.distributed, asv and build), and its tests skip without them.
# CI installs every extra: there (CI set, as CI runs .ci/run) a test skipped for a package that
# does not import fails instead, so a missing install cannot pass as a green run.
REQUIRE_EVERY_PACKAGE = bool(os.environ.get("CI"))


def _missing_package_fails(report):
    message = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
    if REQUIRE_EVERY_PACKAGE and report.skipped and message.startswith("Skipped: could not import"):
        report.outcome = "failed"
        report.longrepr = f"{message} (CI installs every extra: .ci/run)"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _missing_package_fails(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _missing_package_fails(outcome.get_result())


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory):
    """Reference minimisers are cached in a per-session temporary folder, never in ~/.cache.
    Set once for the session (a per-test monkeypatch cost half a millisecond a test); a test
    that sets DPSOLVE_CACHE itself does so with its own monkeypatch, undone after it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DPSOLVE_CACHE", str(tmp_path_factory.getbasetemp() / "dpsolve-cache"))
        yield


# The functions through which every solver reads its data, by module: the compiled kernels
# that differentiate the loss (Problem.gradient and the fixed-iteration solvers call the
# loss-derivative kernels; noisy_sgd, clipped_gd, dp_sgd, minibatch_sgd, joint_sgd and the
# parties call the step and clipped-sum kernels, never a Python gradient), and the sufficient
# statistics X^T W X of adassp and Newton's method, which compute no gradient. A name missing
# here fails the fixture loudly rather than leaving a solver unwatched.
DATA_WORK = {
    "dpsolve._kernels.losses": ("loss_derivatives", "multinomial_derivatives"),
    "dpsolve._kernels.gd": ("clipped_gradient_sum", "clipped_gradient_sum_multinomial"),
    "dpsolve._kernels.sgd": ("noisy_sgd_steps",),
    "dpsolve._kernels.minibatch": ("minibatch_sgd_pass",),
    "dpsolve._kernels.joint": ("joint_sgd_steps",),
    "dpsolve._ordered_linalg": ("weighted_gram",),
}


@pytest.fixture
def gradient_evaluations(monkeypatch):
    """The row counts of every pass a solver makes over its data while the test runs: one
    entry per call of a :data:`DATA_WORK` function, the number of rows handed to it (for the
    loss-derivative kernels the rows differentiated, so ``sum`` is the number of record
    gradients of Problem.gradient and the fixed-iteration solvers). Each function is replaced
    wherever a dpsolve module holds it, under any name, so a solver that imported it by name is
    watched too. Empty: the solver did no work on the data."""
    import importlib
    import sys

    import dpsolve  # noqa: F401  (every solver module is imported with the package)

    calls = []

    def counting(real):
        def wrapper(*args, **kwargs):
            calls.append(next(a.shape[0] for a in args if hasattr(a, "shape")))
            return real(*args, **kwargs)
        return wrapper

    watched = {}
    for module, names in DATA_WORK.items():
        for name in names:
            real = getattr(importlib.import_module(module), name)
            watched[id(real)] = counting(real)
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] != "dpsolve" or module is None:
            continue
        for attribute, value in list(vars(module).items()):
            if id(value) in watched:
                monkeypatch.setattr(module, attribute, watched[id(value)])
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


def fit_with(function, *args, change, **kwargs):
    """``function(*args, **kwargs)``, a public solver, with its plan changed by
    ``change(plan) -> Plan`` between :func:`dpsolve.solvers.plan_fit` and
    :func:`dpsolve.solvers.run_plan` (as the lifecycle runs them): a test's mutant or
    instrumented inner solver travels in the plan, not in a module attribute."""
    import inspect

    import dpsolve

    spec = dpsolve.solvers.get(function.__name__)
    arguments = inspect.signature(function).bind(*args, **kwargs)
    arguments.apply_defaults()
    options = dict(arguments.arguments)
    problem = options.pop("problem")
    partition = options.pop(spec.partition) if spec.partition is not None else None
    epsilon, delta = options.pop("epsilon", None), options.pop("delta", None)
    secure, rng, accountant = options.pop("secure"), options.pop("rng"), options.pop("accountant")
    plan = dpsolve.solvers.plan_fit(spec, problem, partition, epsilon, delta, secure=secure,
                                    rng=rng, accountant=accountant, **options)
    return dpsolve.solvers.run_plan(spec, problem, partition, change(plan), rng, accountant)


def inner_solver(**parts):
    """A plan change (for :func:`fit_with`) that runs the plan with its
    :class:`~dpsolve.solvers._inner.InnerSolver` given these ``parts`` (``newton``,
    ``reference``, ``draw``, ...)."""
    import dataclasses

    def change(plan):
        solver = dataclasses.replace(plan.run_inputs["inner_solver"], **parts)
        return dataclasses.replace(plan, run_inputs={**plan.run_inputs, "inner_solver": solver})
    return change


@pytest.fixture
def make_problem():
    """:func:`synthetic_problem`, as a fixture (a factory: call it with the sizes and options)."""
    return synthetic_problem


# -- rows on Dask workers (test_chunked.py, test_chunked_problem.py) ------------------------
@pytest.fixture(scope="module")
def client():
    """A Dask cluster of two single-thread workers in this process, for the tests of rows in
    chunks (test_cluster.py has its own, of worker processes)."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=":0")
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


@pytest.fixture
def watched(client, monkeypatch):
    """The values the driver gathers while the test runs (every result of ``client.gather``)."""
    received = []
    real = client.gather

    def gather(futures, *args, **kwargs):
        result = real(futures, *args, **kwargs)
        received.append(result)
        return result

    monkeypatch.setattr(client, "gather", gather)
    return received
