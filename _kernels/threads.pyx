"""How many OpenMP threads the parallel kernels (``gd``, ``sgd``) use, and how they wait.

Its own module, built with OpenMP like those kernels: the thread count is state of the OpenMP
runtime that all of them share, not of any one kernel. ``dpsolve._kernels`` loads it first,
with passive waiting (:func:`wait_policy`).
"""
from _openmp cimport dps_has_openmp, dps_max_threads, dps_set_num_threads


def set_num_threads(int n):
    """Threads the parallel kernels use when called from this thread (``omp_set_num_threads``).

    Several processes that each run OpenMP on every core slow each other down by orders of
    magnitude (threads spin waiting for descheduled siblings), so each of a sweep's worker
    processes takes its share of the cores. Results do not depend on the thread count.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    dps_set_num_threads(n)


def max_threads():
    """Threads the next parallel kernel call from this thread will use (1 without OpenMP)."""
    return dps_max_threads()


def has_openmp():
    """Whether the kernels were compiled with OpenMP (Apple's clang has none: one thread)."""
    return bool(dps_has_openmp())


def wait_policy():
    """How the kernels' OpenMP threads wait for each other, fixed when the runtime was loaded.

    Returns
    -------
    str
        ``"passive"``: they sleep at once (``OMP_WAIT_POLICY=PASSIVE``, which dpsolve gave the
        runtime as it loaded it, then removed from the process environment again).
        ``"environment"``: the environment set ``OMP_WAIT_POLICY``, ``GOMP_SPINCOUNT`` or
        ``KMP_BLOCKTIME``; dpsolve left it alone.
        ``"preloaded"``: another package had loaded the same runtime before dpsolve was
        imported, so it kept the settings it read then (GCC's default: spin 300,000 rounds,
        which on a busy machine can make two threads many times slower than one; import
        dpsolve first, or set ``OMP_WAIT_POLICY=PASSIVE`` before starting Python).
        ``"serial"``: built without OpenMP, so the kernels run one thread.

    Notes
    -----
    Only Linux says which runtimes a process has loaded; elsewhere a runtime loaded before
    dpsolve is reported as ``"passive"``. See docs/performance.md, "A busy machine".
    """
    from dpsolve._kernels import _wait_policy
    return _wait_policy
