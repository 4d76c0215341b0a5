"""Private Frank-Wolfe over the l1 ball (Talwar-Thakurta-Zhang 2015), every step in C.

A step scores the 2p vertices ``+-R e_j`` of ``{||theta||_1 <= R}`` by ``<v, grad F(theta)>``,
chooses one by the exponential mechanism (the Gumbel-max trick) and moves towards it. The scores
need ``X^T r`` (``r_i = loss'(z_i; y_i)``), one pass over X's stored entries: the kernel reads X
by columns, through the rows of ``X^T`` (a C-contiguous (p, n) array, or the CSR arrays of
``X^T``, i.e. X in CSC), so that each score is one sum over its column in increasing row order,
computed by one thread: the scores are bit-identical for any thread count, and a sparse column
skips only zero products, so dense and CSR X give the same bits (_rows.pxd). The margins
``z = X theta`` are kept up to date without a product: ``theta`` changes by a scaling and one
coordinate, so ``z <- (1 - mu) z + mu (+-R) X[:, j]``, one column.

The Gumbel variables come from the caller's numpy Generator, drawn in vertex order (``+R e_0``,
``-R e_0``, ``+R e_1``, ...) by numpy's own ``random_gumbel``, so ``rng.gumbel(size=2 p)`` per
step reproduces them in Python. They do not depend on the data: one thread draws a step's while
the others start on its scores.
"""
from cython.parallel cimport parallel, prange, threadid
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport random_gumbel

from _bitgen cimport generator_bitgen
from _loss cimport check_loss_parameter, loss_derivative
from _openmp cimport (dps_max_threads, dps_region, dps_region_begin, dps_region_block,
                     dps_region_end)
from _rows cimport Rows, make_rows, row_axpy, row_dot

# Rows and columns are split into this many blocks whatever the number of threads. Every block
# writes its own entries (a derivative per row, a score per column), each computed by one
# thread in a fixed order, so no result depends on the split.
cdef enum:
    BLOCKS = 64
    # below this many stored entries one thread is faster than waking a second one
    PARALLEL_MIN_WORK = 200000


cdef void derivatives(const double* z, const double* y, int loss, double h, double bound,
                      double* r, Py_ssize_t n, int threads, dps_region* region) noexcept nogil:
    """r_i = loss'(clip(z_i, -bound, bound); y_i) for every row, in blocks of rows. The exact
    margin lies in [-R B, R B] (Hoelder); the updated z_i can drift out by rounding, and the
    clip keeps every |r_i| within the loss's Lipschitz bound on that interval, which the
    scores' sensitivity assumes (the squared loss's derivative grows with the margin)."""
    cdef Py_ssize_t b, i
    cdef double zi
    cdef int used = dps_region_begin(region, threads)
    for b in prange(BLOCKS, schedule="static", num_threads=used):
        for i in range(b * n // BLOCKS, (b + 1) * n // BLOCKS):
            zi = z[i]
            if zi > bound:
                zi = bound
            elif zi < -bound:
                zi = -bound
            r[i] = loss_derivative(loss, zi, y[i], h)
        dps_region_block(region)
    dps_region_end(region, BLOCKS)


cdef void gradient_and_gumbels(const Rows* C, const double* r, const double* theta, double reg,
                               double n, double* grad, bitgen_t* rng, double* gumbel,
                               int threads, dps_region* region) noexcept nogil:
    """grad_j = (sum_i x_ij r_i) / n + reg theta_j, each column's sum in increasing row order,
    the columns in blocks handed out as threads come free; meanwhile thread 0 first draws the
    step's 2p Gumbel variables (they do not depend on the data), in order, into ``gumbel``."""
    cdef Py_ssize_t b, j, k, p = C.n
    cdef int used = dps_region_begin(region, threads)
    with parallel(num_threads=used):
        if threadid() == 0:
            for k in range(2 * p):
                gumbel[k] = random_gumbel(rng, 0.0, 1.0)
        for b in prange(BLOCKS, schedule="dynamic"):
            for j in range(b * p // BLOCKS, (b + 1) * p // BLOCKS):
                grad[j] = row_dot(C, j, r) / n + reg * theta[j]
            dps_region_block(region)
    dps_region_end(region, BLOCKS)


cdef Py_ssize_t choose_vertex(const double* grad, const double* gumbel, Py_ssize_t p,
                              double weight) noexcept nogil:
    """The exponential mechanism over the 2p vertices by the Gumbel-max trick: the vertex
    ``k = 2 j + s`` (s = 0: ``+R e_j``, s = 1: ``-R e_j``) maximising ``u_k + G_k``, with the
    utility ``u = -weight <v, grad> / R`` (``weight = R epsilon_0 / (2 Delta)``, so
    ``u_{2j} = -(weight grad_j)`` and ``u_{2j+1} = weight grad_j``) and ``G_k = gumbel[k]``,
    standard Gumbel. Ties go to the first k."""
    cdef Py_ssize_t j, best = 0
    cdef double u, value, top = -1.0 / 0.0
    for j in range(p):
        u = weight * grad[j]
        value = -u + gumbel[2 * j]
        if value > top:
            top = value
            best = 2 * j
        value = u + gumbel[2 * j + 1]
        if value > top:
            top = value
            best = 2 * j + 1
    return best


def private_frank_wolfe(object columns, const double[::1] y, int loss, double h, double radius,
                        double margin_bound, double reg, double weight, Py_ssize_t steps,
                        double[::1] theta, double[::1] z, double[::1] r, double[::1] grad,
                        double[::1] gumbel, Py_ssize_t[::1] chosen, object generator):
    """T = ``steps`` steps of private Frank-Wolfe from ``theta = 0``, in place.

    Step t (``mu_t = 2 / (t + 2)``): ``r = loss'(z; y)``, ``grad = X^T r / n + reg theta``, the
    vertex ``v = s R e_j`` chosen by :func:`choose_vertex`, then ``theta <- (1 - mu) theta``,
    ``theta_j <- theta_j + mu s R`` and ``z <- (1 - mu) z + (mu s R) X[:, j]``.

    Parameters: ``margin_bound`` is ``R B`` (B the rows' l-inf bound), where the margins are
    clipped before the derivatives; ``columns`` is ``X^T`` as the kernels take rows (a
    C-contiguous (p, n) float64 or float32 array, or ``(indptr, indices, data, p, n)`` of X in
    CSC); ``theta`` (p) and ``z`` (n) must hold zeros; ``r`` (n), ``grad`` (p) and ``gumbel``
    (2p) are scratch; ``chosen`` (steps) receives the chosen vertex of each step (``2 j + s``);
    ``generator`` a numpy Generator, whose lock is held for the whole run.
    """
    check_loss_parameter(loss, h)
    cdef Rows C = make_rows(columns)
    cdef Py_ssize_t p = C.n, n = C.p
    if y.shape[0] != n or z.shape[0] != n or r.shape[0] != n:
        raise ValueError("y, z and r must have one entry per row of X")
    if theta.shape[0] != p or grad.shape[0] != p or gumbel.shape[0] != 2 * p:
        raise ValueError("theta and grad must have one entry per column of X, gumbel two")
    if chosen.shape[0] != steps:
        raise ValueError("chosen must have one entry per step")
    if n == 0 or p == 0:
        raise ValueError("X must have at least one row and one column")
    cdef bitgen_t* rng = generator_bitgen(generator)
    cdef Py_ssize_t t, i, j, k, nnz = n * p if C.dense else C.indptr[p]
    cdef double mu, keep, step
    cdef dps_region region
    cdef int threads = 1 if nnz < PARALLEL_MIN_WORK else dps_max_threads()
    with generator.bit_generator.lock, nogil:
        for t in range(steps):
            derivatives(&z[0], &y[0], loss, h, margin_bound, &r[0], n, threads, &region)
            gradient_and_gumbels(&C, &r[0], &theta[0], reg, <double> n, &grad[0], rng,
                                 &gumbel[0], threads, &region)
            k = choose_vertex(&grad[0], &gumbel[0], p, weight)
            chosen[t] = k
            j = k // 2
            mu = 2.0 / (<double> t + 2.0)
            keep = 1.0 - mu
            step = mu * radius if k % 2 == 0 else -(mu * radius)
            for i in range(p):
                theta[i] = keep * theta[i]
            theta[j] = theta[j] + step
            for i in range(n):
                z[i] = keep * z[i]
            row_axpy(&C, j, step, &z[0])
