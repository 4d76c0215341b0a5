"""The cores a process may use, shared by the local pool (:mod:`.runner`) and the Dask workers
(:mod:`.cluster`). Imports nothing of dpsolve's own."""
import os


def usable_cores():
    """The cores this process may run on: its CPU affinity where the OS reports one (what a
    batch system's allocation, a container's cpuset or ``taskset`` sets), else the machine's
    count. A SLURM job of 8 CPUs on a 64-core node is 8, not 64."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1
