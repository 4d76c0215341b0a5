"""Per-sample noisy projected SGD (Algorithm SGD1, after Bassily-Smith-Thakurta 2014), the whole
loop in C.

The Python API (``dpsolve.noisy_sgd``) validates, calibrates and explains; this only computes.

Two random streams (``dpsolve._kernels.stream.Stream``) feed the loop: one draws the sample
indices, the other the noise. The noise does not depend on theta, so with two threads available
a second core draws it a block ahead (double buffering, one barrier per block) while the first
runs the steps; with one thread the steps draw it inline. Both give the same values in the same
order, so the result is bit-identical for any number of threads.
"""
from cython.parallel cimport parallel, threadid
from libc.math cimport isfinite
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free, malloc

from _loss cimport check_loss_parameter, loss_derivative
from _openmp cimport (dps_barrier, dps_load_double, dps_load_int, dps_max_threads,
                     dps_num_threads, dps_store_double, dps_store_int, dps_wtime)
from _rows cimport Rows, make_rows, row_borrows, row_clear, row_dense
from _schedule cimport INV, INV_SQRT, step_size
from _stream cimport stream_index, stream_normal
from _vector cimport descend, dot, scale_onto_ball

# SGD1's two schedules (Bassily-Smith-Thakurta 2014's Lipschitz and strongly convex step sizes).
SCHEDULES = {"inv_sqrt": INV_SQRT, "inv": INV}

# Noise values per block when drawn ahead on a second core: two blocks (256 KiB) stay in L2,
# and one barrier per block costs about 1% of the block's steps.
cdef enum:
    BLOCK_VALUES = 16384


cdef struct Loop:
    Rows rows
    double* row               # CSR or float32: p zeros that a sampled row is put into as doubles
    const double* y
    Py_ssize_t n, p
    int loss, schedule
    double h, sigma, eta0, nreg, radius
    bint project
    double* theta
    Py_ssize_t* counts        # NULL, or per-row draw counts to increment
    uint64_t* index_state     # the index stream's 4 words
    uint64_t* noise_state     # the noise stream's 4 words


cdef void run_steps(const Loop* a, Py_ssize_t t_start, Py_ssize_t t_stop,
                    const double* noise) noexcept nogil:
    """Steps t_start .. t_stop - 1. The noise is read from ``noise`` (sigma * xi, p values per
    step) when given, else drawn inline from the noise stream (none when sigma == 0)."""
    # Everything the loop touches is copied into locals: the stream words in particular, which
    # the other thread's words share a cache line with (and no store to theta can alias them).
    cdef Py_ssize_t n = a.n, p = a.p, t, i, j
    cdef const Rows* rows = &a.rows
    cdef const double* y = a.y
    cdef double* th = a.theta
    cdef Py_ssize_t* counts = a.counts
    cdef int loss = a.loss, schedule = a.schedule
    cdef bint project = a.project
    cdef double h = a.h, sigma = a.sigma, eta0 = a.eta0, nreg = a.nreg, radius = a.radius
    cdef double nf = <double> n
    cdef uint64_t index_state[4]
    cdef uint64_t noise_state[4]
    cdef const double* xi
    cdef double g, eta, sq
    for j in range(4):
        index_state[j] = a.index_state[j]
        if noise == NULL:           # else the other thread owns the noise stream
            noise_state[j] = a.noise_state[j]
    for t in range(t_start, t_stop):
        i = <Py_ssize_t> stream_index(index_state, <uint64_t> n)
        if counts != NULL:
            counts[i] += 1
        # a CSR row is scattered into p zeros, a float32 row converted to doubles: the step
        # costs O(p) anyway (the noise is dense), and the dense loops below then run
        # unchanged, bit-identical to dense float64 X
        xi = row_dense(rows, i, a.row)
        g = nf * loss_derivative(loss, dot(xi, th, p), y[i], h)
        eta = step_size(schedule, eta0, <double> t)
        # three copies of the step, so that the noise's source is chosen once per step and not
        # per coordinate
        sq = 0.0
        if noise != NULL:
            for j in range(p):
                sq = descend(&th[j], eta, g * xi[j] + nreg * th[j] + noise[j], sq)
            noise += p
        elif sigma > 0.0:
            for j in range(p):
                sq = descend(&th[j], eta,
                             g * xi[j] + nreg * th[j] + sigma * stream_normal(noise_state), sq)
        else:
            for j in range(p):
                sq = descend(&th[j], eta, g * xi[j] + nreg * th[j], sq)
        if project:
            scale_onto_ball(th, sq, radius, p)
        row_clear(rows, i, a.row)
    for j in range(4):
        a.index_state[j] = index_state[j]
        if noise == NULL:
            a.noise_state[j] = noise_state[j]


cdef void draw_noise(uint64_t* state, double sigma, double* out, Py_ssize_t m) noexcept nogil:
    """out[:m] = sigma * (m standard normals); the state is updated once, at the end."""
    cdef uint64_t s[4]
    cdef Py_ssize_t j
    for j in range(4):
        s[j] = state[j]
    for j in range(m):
        out[j] = sigma * stream_normal(s)
    for j in range(4):
        state[j] = s[j]


# Tests set this (through _go_alone_after) to make thread 0 go on alone after barrier b, as a
# busy machine would; 0: only when waiting costs more than it saves.
cdef int forced_alone = 0


def _go_alone_after(int b):
    """For tests: with two threads, the noise-ahead loop continues on one thread after its
    barrier ``b`` (b >= 1; 0 restores the timing rule)."""
    global forced_alone
    forced_alone = b


cdef enum:
    # the words the two threads share in run_steps_noise_ahead
    DRAWN = 0       # seconds thread 1 spent drawing blocks 1, 2, ...: what thread 0 saved
    WAITED = 1      # seconds thread 0 spent waiting at barriers 1, 2, ... (at barrier 0 it has
                    # had nothing of its own to do)


cdef void run_steps_noise_ahead(const Loop* a, Py_ssize_t t_start, Py_ssize_t t_stop,
                                Py_ssize_t block, double* buffer) noexcept nogil:
    """Block b's noise is drawn (thread 1) while block b - 1's steps run (thread 0); ``buffer``
    holds two blocks of ``block`` steps. If the runtime grants one thread, it does both in turn.

    On a busy machine thread 1 can be descheduled for a time slice at a time, and thread 0
    waits at the barrier. Once thread 0 has waited longer in all than thread 1 has drawn for it,
    thread 0 goes on alone: it decides after one barrier, both threads read the decision after
    the next one (so they agree), then thread 0 runs the block drawn last and draws the rest
    inline, from the state the noise stream was left in: the same values in the same order."""
    cdef Py_ssize_t blocks = (t_stop - t_start + block - 1) // block
    cdef Py_ssize_t b = 0, t0 = 0, t1 = 0, tid = 0, threads = 0   # firstprivate: initialised
    cdef double clock = 0.0
    cdef double shared[2]
    cdef int alone_after = 0        # 1 + the barrier after which both leave the loop (0: none)
    cdef int* alone = &alone_after
    shared[DRAWN] = 0.0
    shared[WAITED] = 0.0
    with parallel(num_threads=2):
        tid = threadid()
        threads = dps_num_threads()
        for b in range(blocks + 1):
            if b < blocks and (tid == 1 or threads == 1):
                t0 = t_start + b * block
                t1 = min(t_stop, t0 + block)
                clock = dps_wtime()
                draw_noise(a.noise_state, a.sigma, buffer + (b % 2) * block * a.p,
                           (t1 - t0) * a.p)
                if b > 0 and tid == 1:
                    dps_store_double(&shared[DRAWN],
                                     dps_load_double(&shared[DRAWN]) + dps_wtime() - clock)
            if b > 0 and tid == 0:
                t0 = t_start + (b - 1) * block
                t1 = min(t_stop, t0 + block)
                run_steps(a, t0, t1, buffer + ((b - 1) % 2) * block * a.p)
            clock = dps_wtime()
            dps_barrier()
            if threads > 1:
                if dps_load_int(alone) == b + 1:
                    break
                if tid == 0 and b > 0 and b < blocks:
                    shared[WAITED] += dps_wtime() - clock
                    if shared[WAITED] > dps_load_double(&shared[DRAWN]) or b == forced_alone:
                        dps_store_int(alone, <int> b + 2)
        if threads > 1 and tid == 0 and b < blocks:
            # after barrier b: blocks up to b drawn, up to b - 1 run
            t0 = t_start + b * block
            t1 = min(t_stop, t0 + block)
            run_steps(a, t0, t1, buffer + (b % 2) * block * a.p)
            if t1 < t_stop:
                run_steps(a, t1, t_stop, NULL)


def noisy_sgd_steps(
    object X,
    const double[::1] y,
    int loss,
    double h,
    double[::1] theta,
    Py_ssize_t t_start,
    Py_ssize_t t_stop,
    double sigma,
    int schedule,
    double eta0,
    double reg,
    double radius,
    object index_stream,
    object noise_stream,
    Py_ssize_t[::1] counts=None,
):
    """Run steps t = t_start .. t_stop - 1 (1-based) of SGD1 on theta, in place.

    Step t: ``i = index_stream.integers(n)``, then
    ``theta <- Proj_radius(theta - eta(t) * (n * (loss'(<theta, x_i>, y_i) x_i + reg * theta) + sigma * xi))``
    with ``xi = noise_stream.standard_normal(p)`` (no draws when sigma == 0). ``radius = inf``
    means no projection. ``h`` is the huber_hinge width (ignored by the other losses).

    If ``counts`` (length n) is given, ``counts[i]`` is incremented each time row i is drawn
    (the draws are random, not data-dependent; multi-party accounting uses them).
    ``X`` is a C-contiguous (n, p) float64 or float32 array or ``dpsolve._row_ops.kernel_rows``
    of a CSR matrix (data float64 or float32). float32 entries are converted to double before
    any arithmetic: the result equals that on the float64 copy of X, bit for bit. Returns False
    if theta became non-finite (checked once, after the last step).
    """
    cdef Rows rows = make_rows(X)
    cdef Py_ssize_t n = rows.n, p = rows.p, j
    if y.shape[0] != n or theta.shape[0] != p:
        raise ValueError("shape mismatch between X, y and theta")
    if n == 0 or p == 0 or t_start < 1:
        raise ValueError("need n >= 1, p >= 1 and t_start >= 1")
    check_loss_parameter(loss, h)
    if schedule not in SCHEDULES.values():
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule}")
    if index_stream is noise_stream:
        raise ValueError("the index and noise streams must be two different Streams")
    cdef uint64_t[::1] index_state = index_stream.state
    cdef uint64_t[::1] noise_state = noise_stream.state
    if index_state.shape[0] != 4 or noise_state.shape[0] != 4:
        raise ValueError("a Stream's state holds 4 uint64 words")
    cdef Loop a
    a.rows, a.row, a.y, a.n, a.p = rows, NULL, &y[0], n, p
    a.loss, a.schedule, a.h, a.sigma, a.eta0 = loss, schedule, h, sigma, eta0
    a.nreg = <double> n * reg
    a.radius, a.project = radius, radius < float("inf")
    a.theta = &theta[0]
    a.counts = NULL
    if counts is not None:
        if counts.shape[0] != n:
            raise ValueError("counts must have length n")
        a.counts = &counts[0]
    cdef uint64_t index_words[4]
    cdef uint64_t noise_words[4]
    a.index_state, a.noise_state = index_words, noise_words

    cdef Py_ssize_t steps = t_stop - t_start if t_stop > t_start else 0
    cdef Py_ssize_t block = max(1, BLOCK_VALUES // p)
    cdef double* buffer = NULL
    if sigma > 0.0 and dps_max_threads() > 1 and steps > block:
        buffer = <double*> malloc(2 * block * p * sizeof(double))
        if buffer == NULL:
            raise MemoryError()
    if not row_borrows(&rows):
        a.row = <double*> calloc(p, sizeof(double))
        if a.row == NULL:
            free(buffer)
            raise MemoryError()
    try:
        with index_stream.lock, noise_stream.lock, nogil:
            for j in range(4):
                index_words[j] = index_state[j]
                noise_words[j] = noise_state[j]
            if buffer != NULL:
                run_steps_noise_ahead(&a, t_start, t_stop, block, buffer)
            else:
                run_steps(&a, t_start, t_stop, NULL)
            for j in range(4):
                index_state[j] = index_words[j]
                noise_state[j] = noise_words[j]
    finally:
        free(buffer)
        free(a.row)
    for j in range(p):
        if not isfinite(theta[j]):
            return False
    return True
