"""One pass of mini-batch SGD with gamma-norm noise (Song-Chaudhuri-Sarwate 2013).

The Python API (``dpsolve.minibatch_sgd``) validates, calibrates and explains; this only computes.
"""
from libc.math cimport isfinite
from libc.stdlib cimport free, malloc
from numpy.random cimport bitgen_t

from _bitgen cimport generator_bitgen
from _loss cimport check_loss_parameter, loss_derivative
from _noise cimport add_gamma_norm
from _rows cimport Rows, add_rows, make_rows, row_dots_at
from _schedule cimport CONSTANT, INV, INV_SQRT, step_size
from _vector cimport descend, scale_onto_ball

SCHEDULES = {"inv_sqrt": INV_SQRT, "constant": CONSTANT, "inv": INV}

cdef enum:
    # a batch's margins are computed this many rows at a time, before their derivatives
    CHUNK = 128


def minibatch_sgd_pass(
    object X,
    const double[::1] y,
    int loss,
    double h,
    double[::1] theta,
    const Py_ssize_t[::1] order,
    Py_ssize_t batch_size,
    double scale,
    int schedule,
    double eta0,
    double reg,
    double radius,
    object generator,
):
    """One pass over the rows in ``order``, in batches of ``batch_size`` (the last may be
    smaller), updating theta in place. Step t, batch B_t of m rows:

    ``g = sum_{i in B_t} loss'(<theta, x_i>, y_i) x_i`` (rows in order), then ``g += z`` with
    density proportional to exp(-||z|| / scale) (no draw when scale == 0), then
    ``theta <- Proj_radius(theta - eta(t) * (reg * theta + g / m))``.
    ``h`` is the huber_hinge width (ignored by the other losses). ``X`` is a C-contiguous (n, p)
    float64 or float32 array or ``dpsolve._row_ops.kernel_rows`` of a CSR matrix (data float64
    or float32; a batch then costs its stored entries plus O(p) for the noise and the step).
    float32 entries are converted to double before any arithmetic: the result equals that on
    the float64 copy of X, bit for bit. Returns False if theta became non-finite.
    """
    cdef Rows R = make_rows(X)
    cdef Py_ssize_t n = R.n, p = R.p
    if y.shape[0] != n or theta.shape[0] != p or order.shape[0] != n:
        raise ValueError("shape mismatch between X, y, theta and order")
    if n == 0 or p == 0 or batch_size < 1:
        raise ValueError("need n >= 1, p >= 1 and batch_size >= 1")
    check_loss_parameter(loss, h)
    if schedule not in SCHEDULES.values():
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule}")
    cdef Py_ssize_t k
    for k in range(n):
        if order[k] < 0 or order[k] >= n:
            raise ValueError("order must hold row indices in [0, n)")
    cdef double* g = <double*> malloc((2 * p + CHUNK) * sizeof(double))
    cdef Py_ssize_t* live = <Py_ssize_t*> malloc(CHUNK * sizeof(Py_ssize_t))
    if g == NULL or live == NULL:
        free(g)
        free(live)
        raise MemoryError()
    cdef double* direction = g + p
    cdef double* z = g + 2 * p
    cdef double* th = &theta[0]
    cdef double eta, sq, m
    cdef Py_ssize_t t, start, stop, j, c0, c1
    cdef bitgen_t* rng = generator_bitgen(generator)
    try:
        with generator.bit_generator.lock, nogil:
            t = 0
            start = 0
            while start < n:
                t += 1
                stop = start + batch_size if start + batch_size < n else n
                m = <double> (stop - start)
                for j in range(p):
                    g[j] = 0.0
                # theta is fixed within the batch: the margins of a chunk of rows first
                # (independent sums, overlapped), then their derivatives, then the rows'
                # terms in order
                c0 = start
                while c0 < stop:
                    c1 = c0 + CHUNK if c0 + CHUNK < stop else stop
                    row_dots_at(&R, &order[c0], c1 - c0, th, z)
                    for k in range(c0, c1):
                        z[k - c0] = loss_derivative(loss, z[k - c0], y[order[k]], h)
                    add_rows(&R, &order[0], c0, c1, z, live, g, c1,
                             c1 + CHUNK if c1 + CHUNK < n else n)
                    c0 = c1
                if scale > 0.0:
                    add_gamma_norm(rng, g, p, scale, direction)
                eta = step_size(schedule, eta0, <double> t)
                sq = 0.0
                for j in range(p):
                    sq = descend(&th[j], eta, reg * th[j] + g[j] / m, sq)
                scale_onto_ball(th, sq, radius, p)
                start = stop
    finally:
        free(g)
        free(live)
    for j in range(p):
        if not isfinite(th[j]):
            return False
    return True
