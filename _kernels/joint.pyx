"""Joint-DP noisy SGD (Huang et al. 2023, Algorithm 1), the whole loop in C.

Owners j hold rows; the model has shared parameters U (p x K) over every column and personalised
parameters X_j (k x K) over the personalised columns ``cols``: the K logits of row a of owner j
are ``U^T a + X_j^T a[cols]`` (K = 1 for the binary losses, whose single logit is the margin).
The Python API (``dpsolve.joint_sgd``) validates, calibrates, draws the owner schedule and
explains; this only computes.
"""
from libc.math cimport isfinite
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport random_standard_normal

from _bitgen cimport generator_bitgen
from _loss cimport check_loss_parameter, loss_derivative, multinomial_derivative
from _vector cimport descend, scale_onto_ball


def joint_sgd_steps(
    const double[:, ::1] A,
    const double[::1] y,
    int loss,           # a LossKind for K = 1; negative for multinomial (K > 1)
    double h,
    Py_ssize_t K,
    const Py_ssize_t[::1] cols,
    double[::1] U,
    double[:, ::1] Xp,
    const Py_ssize_t[::1] owners,
    const Py_ssize_t[::1] records,
    double sigma,
    double eta,
    double reg,
    double radius_u,
    double radius_x,
    object generator,
    double[::1] U_sum,
    double[:, ::1] X_sum,
    Py_ssize_t[::1] last,
    Py_ssize_t t_offset,
    double[::1] z,
    double[::1] d,
):
    """Run ``len(owners)`` steps, in place. Step s (global time ``t = t_offset + s``):

    ``j = owners[s]``, row ``r = records[s]``; ``d = dloss/dlogits`` at ``(U, X_j)``; then
    ``U <- Pi_{radius_u}(U - eta ((a d^T + sigma xi) + reg U))`` with ``xi ~ N(0, I_{pK})``
    drawn row-major (``a d^T + sigma xi`` is owner j's message), and ``X_j <- Pi_{radius_x}(X_j - eta (a[cols] d^T + reg X_j))`` (no noise).
    ``U_sum`` accumulates U before every step; ``X_sum[j]`` accumulates X_j lazily, with
    ``last[j]`` the time from which the current X_j has held (the caller adds the remainder at
    the end). Returns False if a parameter became non-finite.
    """
    cdef Py_ssize_t n = A.shape[0], p = A.shape[1], k = cols.shape[0], N = Xp.shape[0]
    cdef Py_ssize_t steps = owners.shape[0]
    if y.shape[0] != n or U.shape[0] != p * K or U_sum.shape[0] != p * K:
        raise ValueError("shape mismatch between A, y, U and U_sum")
    if Xp.shape[1] != k * K or X_sum.shape[0] != N or X_sum.shape[1] != k * K:
        raise ValueError("shape mismatch between cols, Xp and X_sum")
    if records.shape[0] != steps or last.shape[0] != N or z.shape[0] != K or d.shape[0] != K:
        raise ValueError("shape mismatch between owners, records, last, z and d")
    if K < 1 or (loss < 0) != (K > 1):
        raise ValueError("pass loss < 0 with K > 1 classes for multinomial, or a binary loss "
                         "kind with K = 1")
    check_loss_parameter(loss, h)
    cdef Py_ssize_t s, t, j, r, q, c, col
    cdef double a, g, sq, scale
    cdef double* u = &U[0]
    cdef double* x
    cdef bitgen_t* rng = generator_bitgen(generator)
    cdef Py_ssize_t pK = p * K, kK = k * K
    for s in range(steps):
        if not (0 <= owners[s] < N and 0 <= records[s] < n):
            raise ValueError("owners and records must index Xp's rows and A's rows")

    with generator.bit_generator.lock, nogil:
        for s in range(steps):
            t = t_offset + s
            j = owners[s]
            r = records[s]
            x = &Xp[j, 0]
            # logits at the current (U, X_j)
            for c in range(K):
                z[c] = 0.0
            for q in range(p):
                a = A[r, q]
                for c in range(K):
                    z[c] += a * u[q * K + c]
            for q in range(k):
                a = A[r, cols[q]]
                for c in range(K):
                    z[c] += a * x[q * K + c]
            if K == 1:
                d[0] = loss_derivative(loss, z[0], y[r], h)
            else:
                multinomial_derivative(&z[0], K, <Py_ssize_t> y[r], &d[0])
            # iterate averages: U every step, X_j lazily
            for q in range(pK):
                U_sum[q] += u[q]
            scale = <double> (t + 1 - last[j])
            for q in range(kK):
                X_sum[j, q] += scale * x[q]
            last[j] = t + 1
            # personalised block: no noise
            sq = 0.0
            for q in range(k):
                a = A[r, cols[q]]
                for c in range(K):
                    sq = descend(&x[q * K + c], eta, a * d[c] + reg * x[q * K + c], sq)
            scale_onto_ball(x, sq, radius_x, kK)
            # shared block: Gaussian noise
            sq = 0.0
            for q in range(p):
                a = A[r, q]
                for c in range(K):
                    col = q * K + c
                    g = a * d[c]            # owner j's message: gradient plus its noise
                    if sigma > 0.0:
                        g += sigma * random_standard_normal(rng)
                    sq = descend(&u[col], eta, g + reg * u[col], sq)
            scale_onto_ball(u, sq, radius_u, pK)
    for q in range(pK):
        if not isfinite(u[q]):
            return False
    for j in range(N):
        for q in range(kK):
            if not isfinite(Xp[j, q]):
                return False
    return True
