"""Sweeps on a Dask cluster (``dask.distributed``; docs/cluster.md).

The driver keeps the SQLite store and hands out tasks: one reference solve (theta*) per distinct
problem, then every run, each given the theta* of its problem as an argument (Dask schedules a
run after the solve it depends on, and moves the small theta* to the run's worker), so no worker
waits for another's disk cache. Results are committed on the driver as runs finish, as in the
local pool; a run is a pure function of its spec and the root seed, so a cluster gives the same
bits as a laptop.
"""
import collections
import hashlib
import os

from ..chunked import require_distributed
from ._cores import usable_cores
from .runs import execute, solve_reference
from .sweep import Run


def connect(scheduler):
    """A Dask client for ``scheduler``: ``"local:N"`` starts a ``LocalCluster`` of N worker
    processes with one task slot each; anything else is a scheduler's address
    (``"tcp://host:8786"``).

    Parameters
    ----------
    scheduler : str

    Returns
    -------
    (distributed.Client, distributed.LocalCluster or None)
        The client, and the cluster it started (to close after the client), if any.
    """
    distributed = require_distributed("A sweep on a Dask cluster")
    if not isinstance(scheduler, str) or not scheduler:
        raise ValueError(f"scheduler must be 'local:N' or a scheduler address, got "
                         f"{scheduler!r}")
    if scheduler.startswith("local:"):
        try:
            workers = int(scheduler[len("local:"):])
        except ValueError:
            workers = 0
        if workers < 1:
            raise ValueError(f"scheduler 'local:N' needs N >= 1 worker processes, got "
                             f"{scheduler!r}")
        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                           processes=True)
        return distributed.Client(cluster), cluster
    return distributed.Client(scheduler), None


def _remember_share(share, dask_worker=None):
    """Store the worker's thread share on it (run by ``client.run`` in the worker process)."""
    dask_worker.dpsolve_threads = int(share)
    return int(share)


def _cpu_set():
    """The CPUs this worker process may run on (its affinity; every CPU where the OS does not
    say), as a sorted tuple."""
    if hasattr(os, "sched_getaffinity"):
        return tuple(sorted(os.sched_getaffinity(0)))
    return tuple(range(usable_cores()))


def _use_share():
    """Set this task's thread count (OpenMP's is per calling thread, and a task runs in one of
    the worker's threads) to the worker's share; a worker that joined after
    :func:`share_cores` takes its cores over its task slots."""
    import distributed
    from .._kernels.threads import set_num_threads
    try:
        worker = distributed.get_worker()
    except ValueError:              # not on a worker: the caller's own setting stands
        return None
    share = getattr(worker, "dpsolve_threads", None)
    if share is None:
        share = max(1, usable_cores() // max(1, worker.state.nthreads))
    set_num_threads(share)
    return share


def share_cores(client):
    """Give each worker its share of its machine's cores: the machine's cores over the task
    slots of all the workers on it (workers that each used every core would slow each other
    down many times over; Dask itself starts workers with ``OMP_NUM_THREADS=1``). Each task
    then sets its own thread count from its worker's share.

    Parameters
    ----------
    client : distributed.Client

    Returns
    -------
    dict
        ``{worker address: threads}``.
    """
    workers = client.scheduler_info(n_workers=-1)["workers"]
    cpus = client.run(_cpu_set)
    # workers on one host that may run on the same CPUs (one batch job's, one machine's)
    # divide them; workers of separate allocations on that host do not compete
    slots = collections.Counter()
    for address, info in workers.items():
        slots[info["host"], cpus.get(address)] += info["nthreads"]
    shares = {}
    for address, info in workers.items():
        cores = len(cpus[address]) if cpus.get(address) else 1
        share = max(1, cores // max(1, slots[info["host"], cpus.get(address)]))
        shares[address] = client.run(_remember_share, share, workers=[address])[address]
    return shares


def run_task(spec, root, reference=None):
    """:func:`~dpsolve.experiments.execute` on a worker, at the worker's thread share.

    Parameters
    ----------
    spec : dict
    root : int
    reference : ReferenceSolution, optional

    Returns
    -------
    dict
        The run's result.
    """
    _use_share()
    return execute(spec, root, reference)


def reference_task(spec, root):
    """The certified theta* of ``spec``'s problem (a task of its own; cached on the worker as
    a side effect).

    Parameters
    ----------
    spec : dict
        A run of the sweep; only its data and problem are read.
    root : int
        The sweep's root seed.

    Returns
    -------
    ReferenceSolution
    """
    _use_share()
    return solve_reference(spec, root)


def _key(prefix, text):
    return f"dpsolve-{prefix}-{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def run_on_client(client, sweep, pending, store, counts, bar=None):
    """Run ``pending`` on ``client``: the reference solves first, then the runs, each retried
    once; rows committed as runs finish. Failures are collected and raised together at the end
    (a RuntimeError naming each run), after every other run is committed.

    Parameters
    ----------
    client : distributed.Client
    sweep : Sweep
        The sweep (its root seed).
    pending : list of Run or dict
        The runs to do (:attr:`Sweep.listing`, or their specs, :meth:`Sweep.runs`, not yet in
        the store).
    store : ResultStore
        Where each finished run is committed, on this machine.
    counts : dict
        ``{"total", "skipped", "ran"}``; ``"ran"`` is incremented per committed run.
    bar : tqdm.tqdm, optional
        Advanced per finished or failed run.

    Returns
    -------
    dict
        ``counts``.
    """
    distributed = require_distributed("A sweep on a Dask cluster")
    share_cores(client)
    pending = [run if isinstance(run, Run) else Run.of(run) for run in pending]
    references = {}
    for run in pending:
        # None: measured by its spec, against its own reference
        if run.reference is not None and run.reference not in references:
            references[run.reference] = client.submit(
                reference_task, run.spec, sweep.seed,
                key=_key("reference", f"{sweep.seed}:{run.reference}"), retries=1, priority=10)
    futures = {}
    for run in pending:
        futures[client.submit(run_task, run.spec, sweep.seed, references.get(run.reference),
                              key=_key("run", f"{sweep.seed}:{run.id}"), retries=1)] = run
    failures = []
    for future in distributed.as_completed(futures):
        run = futures.pop(future)
        if future.status == "error":
            exc = future.exception()
            failures.append(f"run {run.id} ({run.text}): {type(exc).__name__}: {exc}")
        else:
            store.add(run, future.result())
            counts["ran"] += 1
        future.release()
        if bar is not None:
            bar.update(1)
    if failures:
        raise RuntimeError(f"{len(failures)} run(s) failed after a retry; the "
                           f"{counts['ran']} finished runs are kept:\n  " +
                           "\n  ".join(failures))
    return counts


def dashboard_message(client):
    """Where the cluster's dashboard is, for the progress output.

    Parameters
    ----------
    client : distributed.Client

    Returns
    -------
    str
    """
    link = getattr(client, "dashboard_link", None)
    return f"Dask dashboard: {link}" if link else "Dask: no dashboard"


__all__ = ["connect", "dashboard_message", "reference_task", "run_on_client", "run_task",
           "share_cores"]
