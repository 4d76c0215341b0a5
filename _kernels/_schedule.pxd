# Step-size schedules eta(t) of the SGD kernels (t = 1, 2, ..., the 1-based step number). One
# enum for every kernel, so that an integer means the same schedule wherever it is passed; each
# kernel's SCHEDULES dict names the ones it supports, and Python code looks the integers up there.
# Shipped as dpsolve/_kernels/_schedule.pxd: cimport only from libc here, never a sibling .pxd
# (the build finds siblings by their top-level names, which an installed copy cannot).
from libc.math cimport sqrt

cdef enum Schedule:
    INV_SQRT = 0    # eta(t) = eta0 / sqrt(t)
    CONSTANT = 1    # eta(t) = eta0
    INV = 2         # eta(t) = eta0 / t


cdef inline double step_size(int schedule, double eta0, double t) noexcept nogil:
    """eta(t) of the schedule; a value not in Schedule is taken as CONSTANT (callers check)."""
    # eta0 / sqrt(t), not eta0 * (1 / sqrt(t)): the kernels' results are fixed bit for bit
    if schedule == INV_SQRT:
        return eta0 / sqrt(t)
    if schedule == INV:
        return eta0 / t
    return eta0
