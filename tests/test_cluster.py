"""Sweeps on a Dask cluster (docs/cluster.md): a two-worker LocalCluster gives the same results
as the local pool, bit for bit; the reference solves are tasks of their own; failures are
reported by run id with the other runs kept; the CLI's --scheduler. Every test that needs
dask.distributed (the dask extra's) is in the slow tier."""
import json
import os

import pytest

from dpsolve import experiments
from dpsolve.cli import main
from dpsolve.experiments import cluster as dask_sweeps

SWEEP = {
    "name": "tiny", "seed": 3, "replicates": 2,
    "data": {"source": "synthetic", "n": [100, 200], "p": 4},
    "problem": {"loss": "logistic", "radius": 1.0, "reg": 0.05},
    "solver": [{"name": "clipped_gd", "epsilon": [0.5, 2.0], "delta": 1e-6},
               {"name": "output_perturbation", "epsilon": 1.0},
               {"name": "multiparty_gd", "parties": 2, "epsilon": 1.0, "delta": 1e-6},
               {"name": "joint_sgd", "owners": 2, "epsilon": 1.0, "delta": 1e-6}],
}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    # the slow tier's: the fast tier runs without dask.distributed (the test extra has no dask)
    distributed = pytest.importorskip("distributed")
    # the workers get their own theta* cache, never the user's ~/.cache (the workers' processes
    # take the environment as it is when the cluster starts)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DPSOLVE_CACHE", str(tmp_path_factory.mktemp("workers-cache")))
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


def _results(path):
    rows = experiments.ResultStore(path).rows()
    out = {}
    for row in rows:
        result = json.loads(row["result"]) if isinstance(row["result"], str) else row["result"]
        result.pop("wall_time")
        out[row["run_id"]] = result
    return out


@pytest.mark.slow
def test_cluster_sweep_matches_the_local_pool_bit_for_bit(client, tmp_path):
    local, remote = tmp_path / "local.db", tmp_path / "remote.db"
    experiments.run_sweep(SWEEP, local, jobs=1, progress=False)
    counts = experiments.run_sweep(SWEEP, remote, client=client, progress=False)
    assert counts == {"total": 20, "skipped": 0, "ran": 20}
    a, b = _results(local), _results(remote)
    assert a == b                                  # theta's bytes, risks, bounds: all equal
    again = experiments.run_sweep(SWEEP, remote, client=client, progress=False)
    assert again == {"total": 20, "skipped": 20, "ran": 0}


@pytest.mark.slow
def test_numpy_solves_on_the_cluster_match_the_local_pool_bit_for_bit(client, wide, tmp_path):
    # n = 2·10⁴, p = 50 (the size at which `wide` found this BLAS's sums to differ between one
    # thread and two, or skipped): BLAS would split its sums by its thread count, which is 1 on
    # a Dask worker and every core in the local pool; theta* (Newton) and the inner solves of
    # output and objective perturbation are NumPy
    sweep = {"name": "wide", "seed": 5, "replicates": 1,
             "data": {"source": "synthetic", "n": 20_000, "p": 50},
             "problem": {"loss": "logistic", "radius": "none", "reg": 1e-2},
             "solver": [{"name": "output_perturbation", "epsilon": 1.0},
                        {"name": "objective_perturbation", "epsilon": 1.0}]}
    local, remote = tmp_path / "local.db", tmp_path / "remote.db"
    experiments.run_sweep(sweep, local, jobs=1, progress=False)
    experiments.run_sweep(sweep, remote, client=client, progress=False)
    assert _results(local) == _results(remote)


def _threads_in_a_task():
    from dpsolve._kernels.threads import max_threads
    dask_sweeps._use_share()
    return max_threads()


@pytest.mark.slow
def test_each_task_runs_at_its_workers_share_of_the_cores(client):
    shares = dask_sweeps.share_cores(client)
    expected = max(1, experiments.runner.usable_cores() // 2)
    assert len(shares) == 2 and set(shares.values()) == {expected}
    # OpenMP's thread count is per calling thread: it is the task's thread that must have it
    seen = client.gather([client.submit(_threads_in_a_task, pure=False, workers=[w])
                          for w in shares])
    assert seen == [expected, expected]


AFFINITY = """
import os, sys
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})    # one CPU, as a batch job of 1 CPU
import distributed
from dpsolve.experiments import cluster, runner
with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                              dashboard_address=None) as lc, distributed.Client(lc) as client:
    print(runner.usable_cores(), list(cluster.share_cores(client).values()))
"""


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs CPU affinity and two CPUs to restrict a process to one")
def test_shares_count_the_cpus_a_process_may_use_not_the_machines(tmp_path):
    # a worker in an allocation of one CPU on a bigger machine gets one thread, not the
    # machine's count (which would oversubscribe the allocation)
    import subprocess
    import sys

    import dpsolve
    # the dpsolve this test imports (installed, or the built tree), run outside the repository
    # root, whose dpsolve/ may be unbuilt
    here = os.path.dirname(os.path.dirname(os.path.abspath(dpsolve.__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([here] + [p for p in sys.path if p])}
    done = subprocess.run([sys.executable, "-c", AFFINITY], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "[1]"]


@pytest.mark.slow
def test_reference_task_is_what_a_run_would_solve():
    spec = experiments.load_sweep(SWEEP).runs()[0]
    reference = dask_sweeps.reference_task(spec, 3)
    with_it = experiments.execute(spec, 3, reference)
    without = experiments.execute(spec, 3)
    with_it.pop("wall_time"), without.pop("wall_time")
    assert with_it == without


@pytest.mark.slow
def test_failures_are_named_after_the_others_are_kept(client, tmp_path):
    # settings refused from public constants are refused before any run (tests/test_cli.py);
    # a step that overflows the parameters fails only when it runs
    sweep = {**SWEEP, "name": "failing", "replicates": 1,
             "problem": {"loss": "logistic", "radius": 1.0, "reg": 0.05},
             "solver": [{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6},
                        {"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6, "steps": 10,
                         "step_size": 1e308, "project": False}]}
    db = tmp_path / "f.db"
    with pytest.raises(RuntimeError, match=r"2 run\(s\) failed after a retry; the 2 finished "
                                           r"runs are kept:\n  run [0-9a-f]+ .*non-finite"):
        experiments.run_sweep(sweep, db, client=client, progress=False)
    assert len(experiments.ResultStore(db).rows()) == 2


class _Untouchable:
    """A stand-in client that fails any use of it."""

    def __getattr__(self, name):
        raise AssertionError(f"the client was used ({name}) before the arguments were checked")


def test_executor_and_client_are_refused_before_the_client_is_used(tmp_path):
    # the fast tier's (no dask.distributed needed): the refusal comes before any work
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        with pytest.raises(ValueError, match="executor or client"):
            experiments.run_sweep(SWEEP, tmp_path / "x.db", executor=pool, client=_Untouchable())
    assert not (tmp_path / "x.db").exists()


@pytest.mark.slow
def test_executor_and_client_are_exclusive(client, tmp_path):
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        with pytest.raises(ValueError, match="executor or client"):
            experiments.run_sweep(SWEEP, tmp_path / "x.db", executor=pool, client=client)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:Port .* is already in use")
def test_cli_scheduler_local(tmp_path, capsys):
    path = tmp_path / "sweep.toml"
    path.write_text('name = "cli"\nseed = 1\nreplicates = 1\n'
                    '[data]\nsource = "synthetic"\nn = 100\np = 3\n'
                    '[problem]\nloss = "logistic"\nradius = 1.0\nreg = 0.05\n'
                    '[[solver]]\nname = "output_perturbation"\nepsilon = [0.5, 1.0]\n')
    db = tmp_path / "cli.db"
    assert main(["run", str(path), "--out", str(db), "--scheduler", "local:2", "--quiet"]) == 0
    assert "2 runs done" in capsys.readouterr().out
    assert main(["run", str(path), "--out", str(db), "--scheduler", "local:0"]) == 2
    assert "needs N >= 1" in capsys.readouterr().err


# -- parties on workers ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def split():
    import dpsolve
    X, y = dpsolve.datasets.make_synthetic(3000, 6, rng=1)
    problem = dpsolve.Problem(X, y, radius=1.0, reg=0.01)
    return problem, dpsolve.Parties.from_sizes(problem, [1000, 1200, 800])


@pytest.fixture(scope="module")
def wide():
    import numpy as np
    from threadpoolctl import threadpool_limits

    import dpsolve
    X, y = dpsolve.datasets.make_synthetic(20_000, 50, rng=1)
    r = np.linspace(-1.0, 1.0, 20_000)
    with threadpool_limits(1, "blas"):
        one = X.T @ r
    with threadpool_limits(2, "blas"):
        two = X.T @ r
    if np.array_equal(one, two):
        pytest.skip("this BLAS sums X^T r the same way with 1 and 2 threads: nothing to check")
    problem = dpsolve.Problem(X, y, radius=None, reg=1e-2)
    return problem, dpsolve.Parties.from_sizes(problem, [12_000, 8_000])


@pytest.mark.slow
@pytest.mark.parametrize("sigma, options", [(None, {}), (None, {"output": "last"}),
                                            (0.5, {})])
def test_sgd2_on_workers_is_bit_identical_and_records_what_crossed(client, split, sigma,
                                                                   options):
    import numpy as np

    import dpsolve
    problem, parties = split
    remote = parties.on(client)
    assert remote.problem is problem and remote.sizes == parties.sizes
    assert len(set(remote.workers)) == 2           # three parties over two workers
    privacy = ({"sigma": sigma, "delta": 1e-6} if sigma is not None
               else {"epsilon": 1.0, "delta": 1e-6})
    here = dpsolve.multiparty_gd(problem, parties, steps=40, rng=7, record_transcript=True,
                                 **privacy, **options)
    there = dpsolve.multiparty_gd(problem, remote, steps=40, rng=7, record_transcript=True,
                                  **privacy, **options)
    np.testing.assert_array_equal(here.theta, there.theta)
    # the transcript is the parties' messages, which are all that came back over the network
    np.testing.assert_array_equal(here.transcript.messages, there.transcript.messages)
    assert there.transcript.messages.shape == (40, 3, 6)
    assert here.privacy == there.privacy


@pytest.mark.slow
def test_the_transport_on_workers_gives_what_it_gives_in_process(client, split):
    """``map``, ``call`` and ``map(gather=False)`` + ``reduce`` on workers return what the
    in-process parties return, bit for bit, with the per-party state and the travelling noise
    streams of the protocols' own steps."""
    import numpy as np

    from dpsolve._multiparty import _sgd1_step
    from dpsolve.solvers.multiparty_gd import _secure_sum, _sgd2_message, _sgd2_start, _share
    problem, parties = split
    remote = parties.on(client)
    theta = np.linspace(-0.3, 0.3, problem.p)
    for where in (parties, remote):
        where.map(_sgd2_start, each=[np.random.default_rng(j) for j in range(3)])
    for _ in range(2):                      # the streams stay with the parties and advance
        np.testing.assert_array_equal(np.stack(parties.map(_sgd2_message, theta, 0.5)),
                                      np.stack(remote.map(_sgd2_message, theta, 0.5)))
    weights = [0.1, 0.2, 0.3]
    here, rng_here = parties.reduce(_secure_sum, parties.map(_share, theta, each=weights,
                                                             gather=False),
                                    0.5, np.random.default_rng(3))
    there, rng_there = remote.reduce(_secure_sum, remote.map(_share, theta, each=weights,
                                                             gather=False),
                                     0.5, np.random.default_rng(3))
    np.testing.assert_array_equal(here, there)
    assert rng_here.bit_generator.state == rng_there.bit_generator.state
    a, _ = parties.call(2, _sgd1_step, theta, 5, 3000.0, 0.01, 0.0, None)
    b, _ = remote.call(2, _sgd1_step, theta, 5, 3000.0, 0.01, 0.0, None)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="one item per party"):
        remote.map(_sgd2_start, each=[None])


@pytest.mark.parametrize("record", [True, False])
# without amplification the coordinator and the parties get more than the outsider's 0.5
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:against (coordinator|parties):dpsolve.privacy.PrivacyWarning")
def test_sgd1_on_workers_is_bit_identical_to_the_kernel(client, split, record):
    # each step's message is computed by its row's owner on its worker, the noise stream
    # travelling with it; the C kernel (no parties) draws the same numbers in one process
    import numpy as np

    import dpsolve
    problem, parties = split
    # an explicit sigma (what the RDP calibration gives epsilon = 0.5 here, rounded): the
    # calibration, not what is checked, took most of the test's time
    kernel = dpsolve.noisy_sgd(problem, delta=1e-10, sigma=9000.0, steps=300, rng=11)
    there = dpsolve.noisy_sgd(problem, delta=1e-10, sigma=9000.0, steps=300, rng=11,
                              parties=parties.on(client), record_transcript=record)
    np.testing.assert_array_equal(kernel.theta, there.theta)
    here = dpsolve.noisy_sgd(problem, delta=1e-10, sigma=9000.0, steps=300, rng=11,
                             parties=parties, record_transcript=True)
    assert there.observers == here.observers
    with pytest.raises(ValueError, match="steps must be given"):    # not T = n^2 round trips
        dpsolve.noisy_sgd(problem, 0.5, 1e-10, calibration="rdp", parties=parties.on(client))
    if record:      # the broadcasts, exactly the owners' messages
        np.testing.assert_array_equal(here.transcript.messages, there.transcript.messages)
        np.testing.assert_array_equal(here.transcript.sender, there.transcript.sender)
    else:
        assert there.transcript is None


@pytest.mark.slow
@pytest.mark.parametrize("weighting", ["party", "pooled"])
def test_secure_aggregation_on_workers_is_bit_identical(client, split, weighting):
    import numpy as np

    import dpsolve
    problem, parties = split
    remote = parties.on(client)
    runs = [dpsolve.multiparty_gd(problem, p, 1.0, 1e-6, noise="secure_aggregation",
                                  weighting=weighting, steps=25, rng=3, record_transcript=True)
            for p in (parties, remote)]
    np.testing.assert_array_equal(runs[0].theta, runs[1].theta)
    # B saw the noisy aggregates only, the same ones
    np.testing.assert_array_equal(runs[0].transcript.messages, runs[1].transcript.messages)
    assert runs[1].transcript.messages.shape == (25, 6)


@pytest.mark.parametrize("options", [{"delta": 1e-6}, {}, {"noise": "laplace_slides"}],
                         ids=["gaussian", "gamma_norm", "laplace_slides"])
# the slides' Laplace calibration certifies less than it claims (docs/source_mistakes.md)
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::dpsolve.privacy.PrivacyWarning")
def test_model_aggregation_on_workers_is_bit_identical(client, wide, options):
    # the local minimisers are NumPy solves, at a size where BLAS's own sums differ between
    # this process's BLAS threads and a worker's one: dpsolve holds BLAS at one thread
    import numpy as np

    import dpsolve
    problem, parties = wide
    remote = parties.on(client, aggregator=parties.on(client).workers[1])
    here = dpsolve.aggregated_output_perturbation(problem, parties, 1.0, rng=5, **options)
    generator = np.random.default_rng(5)
    there = dpsolve.aggregated_output_perturbation(problem, remote, 1.0, rng=generator,
                                                   **options)
    np.testing.assert_array_equal(here.theta, there.theta)
    # the caller's Generator advanced as in one process
    again = np.random.default_rng(5)
    dpsolve.aggregated_output_perturbation(problem, parties, 1.0, rng=again, **options)
    assert generator.bit_generator.state == again.bit_generator.state


@pytest.mark.slow
def test_secure_runs_refuse_parties_on_workers_before_any_work(client, split):
    # the noise streams are seeded in the coordinator's process and travel to the workers, and
    # the messages cross the network un-rounded: not what secure=True promises
    import dpsolve
    problem, parties = split
    remote = parties.on(client)
    budget = dpsolve.BudgetAccountant(10.0, 1e-5)
    for run in (lambda: dpsolve.noisy_sgd(problem, 0.5, 1e-10, steps=5, parties=remote,
                                          secure=True, accountant=budget),
                lambda: dpsolve.multiparty_gd(problem, remote, 1.0, 1e-6, steps=5, secure=True,
                                              accountant=budget),
                lambda: dpsolve.aggregated_output_perturbation(problem, remote, 1.0, secure=True,
                                                               accountant=budget),
                lambda: dpsolve.joint_sgd(problem, remote, 1.0, 1e-6, steps=5, secure=True)):
        with pytest.raises(ValueError, match="not available with secure=True"):
            run()
    assert budget.spent() == (0.0, 0.0)             # refused before anything was charged


@pytest.mark.slow
def test_parties_on_unknown_workers_are_refused(client, split):
    _, parties = split
    with pytest.raises(ValueError, match="not the client's"):
        parties.on(client, workers=["tcp://10.255.255.1:1"])
    with pytest.raises(TypeError, match="already on workers"):
        parties.on(client).on(client)
    with pytest.raises(ValueError, match="aggregator"):
        parties.on(client, aggregator="tcp://10.255.255.1:1")


@pytest.mark.slow
@pytest.mark.parametrize("loss, options", [
    ("logistic", {}), ("logistic", {"personal_columns": [0, 2]}),
    ("multinomial", {"personal_columns": [1]})], ids=["all", "columns", "multinomial"])
def test_joint_sgd_on_workers_is_bit_identical(client, loss, options):
    import numpy as np

    import dpsolve
    X, y = dpsolve.datasets.make_synthetic(600, 4, rng=2)
    if loss == "multinomial":
        y = (np.arange(600) % 3)
        problem = dpsolve.Problem(X, y, loss, radius=2.0, reg=0.01, n_classes=3)
    else:
        problem = dpsolve.Problem(X, y, loss, radius=2.0, reg=0.01)
    owners = dpsolve.Parties.from_sizes(problem, [200, 250, 150])
    remote = owners.on(client)
    # in process: the C kernel, and the Python protocol with its transcript
    kernel = dpsolve.joint_sgd(problem, owners, 1.0, 1e-6, steps=60, rng=4, **options)
    here = dpsolve.joint_sgd(problem, owners, 1.0, 1e-6, steps=60, rng=4,
                             record_transcript=True, **options)
    there = dpsolve.joint_sgd(problem, remote, 1.0, 1e-6, steps=60, rng=4,
                              record_transcript=True, **options)
    quiet = dpsolve.joint_sgd(problem, remote, 1.0, 1e-6, steps=60, rng=4, **options)
    for fit in (here, there, quiet):
        np.testing.assert_array_equal(fit.theta, kernel.theta)
        np.testing.assert_array_equal(fit.model.personal, kernel.model.personal)
    np.testing.assert_array_equal(here.transcript.messages, there.transcript.messages)
    assert quiet.transcript is None
