"""Running a sweep in one pass: load (the sweep, its runs listed and keyed once, and what the
store holds) -> check and plan every run not yet done -> run -> store, each finished run
committed at once."""
import concurrent.futures
import multiprocessing
import sys

from ._cores import usable_cores
from .runs import check_runs, execute, solve_reference
from .store import ResultStore, stored_runs
from .sweep import Sweep, load_sweep


def _share_cores(threads):
    """Worker initialiser: the OpenMP kernels use this process's share of the cores."""
    from .._kernels.threads import set_num_threads
    set_num_threads(threads)


def run_sweep(sweep, path, *, jobs=None, executor=None, client=None, progress=True):
    """Run every run of ``sweep`` (a Sweep, a TOML path or a dict) that ``path`` does not hold yet.

    Parameters
    ----------
    sweep : Sweep, str, Path or dict
    path : str or Path
        The SQLite results database (created if needed). Each finished run is committed at once,
        so a sweep that is interrupted and started again skips what is done and loses nothing.
    jobs : int, optional
        Worker processes (default: every core this process may run on, :func:`usable_cores`).
        Ignored when ``executor`` is given.
    executor : concurrent.futures.Executor, optional
        Any executor; its workers must be able to import dpsolve. The caller keeps ownership of
        it. Several workers on one machine should each limit the OpenMP kernels to their share
        of the cores (``dpsolve._kernels.threads.set_num_threads``), as the default workers do:
        processes that each use every core slow each other down many times over. The setting
        is per calling thread, so it must be made in the thread that runs the tasks (a process
        pool's initializer is; for Dask pass ``client`` instead, which does it per task).
    client : distributed.Client, optional
        Run on a Dask cluster (docs/cluster.md): one reference solve per distinct problem, then
        the runs, each given its problem's theta*; each worker's kernels limited to its share
        of its machine's cores; a failed task retried once, then reported with its run id
        after every other run is committed. The store stays on this machine. Not together with
        ``executor``.
    progress : bool
        Show a tqdm progress bar with an ETA on stderr (and, with ``client``, the dashboard's
        address). The bar is drawn only when stderr is a terminal: redirected to a file or a
        pipe (a log, CI), it writes nothing, instead of one carriage-return frame per update.

    Returns
    -------
    dict
        ``{"total", "skipped", "ran"}`` run counts.

    Raises
    ------
    SweepError
        Before any run and before the database is created or written, for a setting that a
        run would refuse (:func:`~dpsolve.experiments.load_sweep`, then
        :func:`~dpsolve.experiments.check_runs` on the runs not yet done).
    StoreError
        Before any run, if ``path`` is a directory, its folder does not exist, it is a file
        that is not a results database, or it holds a different sweep of the same name.
    """
    if executor is not None and client is not None:
        raise ValueError("pass executor or client, not both")
    # load: the runs listed and keyed once; what the store holds, read only
    if not isinstance(sweep, Sweep):
        sweep = load_sweep(sweep)
    listing = sweep.listing
    held = stored_runs(path, sweep)
    # check and plan every pending run, before the database is created or any run starts
    check_runs(sweep, [run.spec for run in listing if run.id not in held])
    with ResultStore(path) as store:
        store.register(sweep)
        done = store.done(sweep.name)       # with the runs another process committed since
        pending = [run for run in listing if run.id not in done]
        counts = {"total": len(listing), "skipped": len(listing) - len(pending), "ran": 0}
        if not pending:
            return counts
        # run, each finished run stored at once
        bar = _progress_bar(sweep, counts, client) if progress else None
        try:
            if client is not None:
                from .cluster import run_on_client
                return run_on_client(client, sweep, pending, store, counts, bar)
            _run_local(executor, jobs, sweep, pending, store, counts, bar)
        finally:
            if bar is not None:
                bar.close()
    return counts


def _progress_bar(sweep, counts, client):
    """A tqdm progress bar with an ETA on stderr, started at the runs already done (with
    ``client``, the dashboard's address printed first)."""
    if client is not None:
        from .cluster import dashboard_message
        print(dashboard_message(client), file=sys.stderr)
    from tqdm import tqdm
    # disable=None: tqdm turns itself off when stderr is not a terminal, where its
    # carriage-return frames would pile up in a log file
    return tqdm(total=counts["total"], initial=counts["skipped"], unit="run",
                desc=sweep.name, file=sys.stderr, disable=None)


def _process_pool(jobs):
    """A pool of ``jobs`` worker processes (default: one per usable core), each limiting the
    OpenMP kernels to its share of the cores."""
    # not fork: a child forked after the parent ran an OpenMP kernel hangs in libgomp
    method = ("forkserver" if "forkserver" in multiprocessing.get_all_start_methods()
              else "spawn")
    cores = usable_cores()
    workers = jobs or cores
    return concurrent.futures.ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context(method),
        initializer=_share_cores,
        initargs=(max(1, cores // workers),))


def _references(pending):
    """``{problem key: spec}``: one run (the first) on each problem whose theta* the
    ``pending`` runs share (:attr:`~dpsolve.experiments.sweep.Run.reference`)."""
    references = {}
    for run in pending:
        if run.reference is not None:
            references.setdefault(run.reference, run.spec)
    return references


def _run_local(executor, jobs, sweep, pending, store, counts, bar):
    """Solve (and cache) each problem's theta* once, here, before the workers need it; then the
    ``pending`` runs on ``executor`` (default: a pool of ``jobs`` processes, shut down after),
    each committed to ``store`` as it finishes (:func:`_run_pending`)."""
    own = executor is None
    if own:
        executor = _process_pool(jobs)
    try:
        for spec in _references(pending).values():
            solve_reference(spec, sweep.seed)
        _run_pending(executor, sweep, pending, store, counts, bar)
    finally:
        if own:
            executor.shutdown(wait=True, cancel_futures=True)


def _run_pending(executor, sweep, pending, store, counts, bar):
    """Run the ``pending`` runs on ``executor``, committing each to ``store`` as it finishes.

    Parameters
    ----------
    executor : concurrent.futures.Executor
    sweep : Sweep
    pending : list of Run
        The runs (:attr:`Sweep.listing`).
    store : ResultStore
        Open for writing.
    counts : dict
        ``counts["ran"]`` is incremented for each run committed.
    bar : tqdm or None
        Advanced for each run committed.

    Raises
    ------
    RuntimeError
        For the first run that fails, with its id (the runs committed before are kept).
    """
    futures = {executor.submit(execute, run.spec, sweep.seed): run for run in pending}
    for future in concurrent.futures.as_completed(futures):
        run = futures[future]
        try:
            result = future.result()
        except Exception as exc:
            raise RuntimeError(f"run {run.id} failed ({run.text}): "
                               f"{type(exc).__name__}: {exc}; the finished runs are "
                               "kept") from exc
        store.add(run, result)
        counts["ran"] += 1
        if bar is not None:
            bar.update(1)
