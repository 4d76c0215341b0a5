"""How many OpenMP threads the parallel kernels (``gd``, ``sgd``) use.

Its own module, built with OpenMP like those kernels: the thread count is state of the OpenMP
runtime that all of them share, not of any one kernel.
"""
from _openmp cimport dps_max_threads, dps_set_num_threads


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
