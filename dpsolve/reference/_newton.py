"""Second-order minimisers of the smooth objectives, and the hinge loss by smoothing.

Three methods, all ending in the certificate of :mod:`._certificate`:

* :func:`newton_ball` — projected Newton with the exact Hessian, for small ``d = p K``
  (d <= :data:`EXPLICIT_MAX_DIM`). Each step minimises the quadratic model exactly over the ball
  (a trust-region subproblem solved in the Hessian's eigenbasis, Moré–Sorensen), so with the
  ball active this is Newton's method on the KKT system ``grad F + mu theta = 0``,
  ``||theta|| = R``. The Hessian ``(1/n) X^T diag(loss'') X + lambda I`` is accumulated over
  blocks of rows (a BLAS-3 product per block, no copy of X); squared loss converges in one step.
* :func:`newton_cg_ball` — for large d (or sparse X): Newton-CG (Hessian-vector products, two
  passes over X each; as LIBLINEAR's TRON) on ``F + (mu/2)||theta||^2`` without constraint, and
  the multiplier ``mu >= 0`` of the ball found by a safeguarded Newton iteration on the secular
  equation ``log ||theta(mu)|| = log R`` in ``log mu`` (with ``d theta / d mu`` from one more
  CG solve), each ``theta(mu)`` solved only as accurately as the distance to the root needs,
  and stopped once the gap it implies is below the tolerance. On X in memory as CSR the
  products are SciPy's, with ``X^T`` copied once per solve (:class:`_CsrProducts`): on wide
  bag-of-words rows (n = 10^4, p = 10^5) a solve takes a few hundred products, seconds.
* :func:`hinge_by_smoothing` — the hinge loss is not differentiable; it is the limit of the
  huber_hinge loss of width w (``0 <= huber_w - hinge <= w/4``). Minimise huber_hinge for
  ``w = 0.5, 0.05, ...`` (each warm-started from the last) and certify the result as a *hinge*
  solution with the huber dual point ``b_i = clip((1 + w - y_i z_i) / (2w), 0, 1)``; the gap of
  that pair is at most ``(w/n) sum_i b_i (1 - b_i)``, which only the records on the quadratic
  piece contribute to, so it falls fast with w.

huber_hinge itself is only once differentiable: its ``loss''`` (``1/(2h)`` on the quadratic
piece, 0 elsewhere) is a generalised Hessian, with which Newton's method on a piecewise-quadratic
objective still converges fast once the pieces are settled.
"""
import math

import numpy as np
from scipy import optimize, sparse

from .._ordered_linalg import blocked_sum, one_blas_thread, row_blocks
from .._row_ops import as_float64
from ._certificate import default_gap, duality_gap, feasible_alpha

_EPS = np.finfo(np.float64).eps
#: Largest parameter dimension ``p K`` for which the Hessian is formed (O(n d^2) per step).
EXPLICIT_MAX_DIM = 512


def project(problem, theta):
    """Euclidean projection onto C, nudged so that the computed norm is at most R."""
    theta = np.array(theta, dtype=np.float64, copy=True)
    R = problem.radius
    if R is None:
        return theta
    norm = np.linalg.norm(theta)
    if norm > R:
        theta *= R / norm
        while np.linalg.norm(theta) > R:
            theta *= np.nextafter(1.0, 0.0)
    return theta


def center(problem, theta):
    """The parameter without the directions the loss is flat along (the loss's ``center``).

    Multinomial: every row of theta minus its mean over the K classes. Adding the same vector
    to every column shifts all K logits of a record equally, which leaves the loss unchanged;
    centring removes that component, so the norm (and the regulariser) can only fall and the
    point stays in C. The minimiser over C can be taken centred (it is, when ``lambda > 0``),
    and Newton's method then runs in the subspace where the Hessian is not singular along that
    direction. Other losses: theta unchanged.
    """
    return problem.loss_object.center(theta)


class _Model:
    """``F`` (plus ``(mu/2)||theta||^2``), its gradient and Hessian at one point, from one pass
    over X for the margins and one for the gradient (by blocks of rows on dpsolve's threads,
    the same bits for any thread count: :mod:`dpsolve._ordered_linalg`; or, passed as
    ``rows``, :class:`_CsrProducts`)."""

    def __init__(self, problem, theta, mu=0.0, rows=None):
        self.problem, self.theta, self.mu = problem, theta, mu
        self.rows, n = (problem.rows if rows is None else rows), problem.n
        self.z = self.rows.matvec(theta)
        self.multinomial = problem.loss_object.is_multinomial
        lam = problem.reg + mu
        flat = theta.reshape(-1)
        self.value = (float(np.mean(problem._loss_values(self.z)))
                      + 0.5 * lam * float(flat @ flat))
        d1 = problem._loss_derivatives(self.z)
        self.grad = self.rows.rmatvec(d1) / n + lam * theta
        # loss'' per record; for multinomial the softmax rows
        self.curv = problem.loss_object.logit_curvature(self.z, problem.y, d1)

    def hess_vec(self, v):
        """``H v`` (v of theta's shape)."""
        problem = self.problem
        n = problem.n
        zv = self.rows.matvec(v)
        r = problem.loss_object.logit_hessian_times(self.curv, zv)
        return self.rows.rmatvec(r) / n + (problem.reg + self.mu) * v

    def hessian(self):
        """The Hessian on the flattened (C-order) parameter, accumulated over blocks of rows
        (the blocks on dpsolve's threads, added in order:
        :func:`dpsolve._ordered_linalg.blocked_sum`).

        Multinomial: ``(1/n) sum_i (diag(s_i) - s_i s_i^T) kron x_i x_i^T + lambda I`` (entry
        ``(j K + k, j' K + k')`` is ``(1/n) sum_i x_ij x_ij' (s_ik [k = k'] - s_ik s_ik')``),
        plus ``omega (I_p kron 1 1^T / K)``: the loss is flat along the directions that add one
        vector to every column, and this term (``omega = B^2/2 + lambda``, the scale of the rest)
        makes the Hessian invertible there without changing it on centred parameters.
        """
        problem = self.problem
        n, p = problem.n, problem.p
        if not self.multinomial:
            H = self.rows.weighted_gram(self.curv) / n
        else:
            K = problem.n_classes
            # the blocks of each part of the rows (each chunk's on its worker), added in order
            H = problem.rows.sum_parts(_multinomial_hessian_sum, self.curv,
                                       shape=(p * K, p * K))
            H4 = H.reshape(p, K, p, K)
            H /= n
            omega = problem.smoothness + problem.reg
            for j in range(p):
                H4[j, :, j, :] += omega / K
        H.flat[:: H.shape[0] + 1] += problem.reg + self.mu
        return 0.5 * (H + H.T)


def _multinomial_block(Xb, Sb):
    """One block's ``sum_i (diag(s_i) - s_i s_i^T) kron x_i x_i^T`` (Sb: its softmax rows)."""
    p, K = Xb.shape[1], Sb.shape[1]
    Xb = as_float64(Xb)
    Xb = Xb.toarray() if sparse.issparse(Xb) else Xb
    M = (Xb[:, :, None] * Sb[:, None, :]).reshape(Xb.shape[0], p * K)
    Hb = -(M.T @ M)
    Hb4 = Hb.reshape(p, K, p, K)             # a view: writes go into Hb
    for k in range(K):
        Hb4[:, k, :, k] += Xb.T @ (Xb * Sb[:, k:k + 1])
    return Hb


def _multinomial_hessian_sum(X, y, S):
    """The multinomial Hessian's sum over the rows X (S: their softmax rows; y unused) by
    blocks of rows added in order; module level, to run where a chunk of rows lives."""
    p, K = X.shape[1], S.shape[1]
    return blocked_sum(lambda s: _multinomial_block(X[s], S[s]), row_blocks(X.shape[0]),
                       np.zeros((p * K, p * K)))


def ball_qp(H, c, R):
    """Minimise ``d^T H d / 2 - c^T d`` over ``||d|| <= R`` (``H`` symmetric PSD).

    The minimiser is ``(H + mu I)^{-1} c`` with ``mu >= 0`` and ``mu (||d|| - R) = 0``. The
    equation ``1/R - 1/||d(mu)|| = 0`` is solved in the eigenbasis of ``H`` (Moré–Sorensen).
    """
    w, Q = np.linalg.eigh(H)
    w = np.maximum(w, 0.0)
    ct = Q.T @ c
    scale = max(float(w[-1]), 1e-300)
    if R is None:
        return Q @ (ct / np.maximum(w, _EPS * scale))
    if not np.any(ct):
        return np.zeros_like(c)
    if w[0] > 1e-14 * scale:
        d0 = Q @ (ct / w)
        if np.linalg.norm(d0) <= R:
            return d0

    def psi(mu):
        with np.errstate(divide="ignore", invalid="ignore"):
            norm = np.linalg.norm(np.where(ct == 0.0, 0.0, ct / (w + mu)))
        return 1.0 / R - (0.0 if not np.isfinite(norm) else 1.0 / norm) if norm > 0 else -np.inf

    hi = float(np.linalg.norm(ct)) / R
    lo = 0.0
    if not psi(lo) > 0.0:           # "hard case": c has no component along the null space
        lo = 1e-300
        if not psi(lo) > 0.0:
            return Q @ (ct / np.maximum(w, _EPS * scale))
    if psi(hi) > 0.0:               # cannot happen in exact arithmetic; widen the bracket
        hi *= 2.0
    mu = optimize.brentq(psi, lo, hi, xtol=1e-300, rtol=4 * _EPS, maxiter=200)
    return Q @ (ct / (w + mu))


def _line_search(problem, theta, value, step, slope, mu=0.0, project_onto_ball=True):
    """Backtracking (Armijo) along ``step``; returns ``(theta, value)`` or None, also as soon as
    the decrease to expect, ``-t slope``, is below F's own rounding (halving further would only
    evaluate F again)."""
    t = 1.0
    floor = 16 * _EPS * abs(value)
    for _ in range(40):
        if slope < 0.0 and -t * slope <= floor:
            return None
        cand = theta + t * step
        if project_onto_ball:
            cand = project(problem, cand)
        flat = cand.reshape(-1)
        cand_value = problem.objective(cand) + 0.5 * mu * float(flat @ flat)
        if cand_value <= value + 1e-4 * t * min(slope, 0.0) and cand_value < value:
            return cand, cand_value
        t *= 0.5
    return None


def newton_ball(problem, theta, tol, max_iter=100):
    """Projected Newton with the exact Hessian (d <= EXPLICIT_MAX_DIM).

    Returns ``(theta, gap)``: the iterate with the smallest certificate, and that certificate.
    The certificate (three passes over X) is computed only once the model predicts a decrease
    below ``tol``.
    """
    shape = problem.theta_shape
    theta = project(problem, center(problem, np.asarray(theta, dtype=np.float64)))
    best, best_gap = theta, math.inf
    value = problem.objective(theta)
    for _ in range(max_iter):
        model = _Model(problem, theta)
        H = model.hessian()
        g = model.grad.reshape(-1)
        target = ball_qp(H, H @ theta.reshape(-1) - g, problem.radius)
        step = center(problem, target.reshape(shape)) - theta
        s = step.reshape(-1)
        slope = float(g @ s)
        predicted = -(slope + 0.5 * float(s @ (H @ s)))
        if predicted <= tol:
            gap = default_gap(problem, theta)
            improvement = best_gap / max(gap, 1e-300)
            if gap < best_gap:
                best, best_gap = theta, gap
            # done when the gap is tiny, or within tol and no longer halving per step
            if best_gap <= 1e-3 * tol or (best_gap <= tol and improvement < 2.0):
                break
        moved = _line_search(problem, theta, value, step, slope)
        if moved is None:
            # Near the optimum F no longer decreases measurably (its changes are below its
            # rounding), but the full step can still shrink the gradient: judge it by the
            # certificate instead.
            cand = project(problem, theta + step)
            gap = default_gap(problem, cand)
            if not gap < best_gap:
                break
            best, best_gap = cand, gap
            moved = cand, problem.objective(cand)
        theta, value = moved
    if best_gap == math.inf or best is not theta:
        gap = default_gap(problem, theta)
        if gap < best_gap:
            best, best_gap = theta, gap
    return best, best_gap


def _cg(hess_vec, b, rtol, max_iter):
    """Conjugate gradients for ``H x = b`` (H symmetric positive definite, x of b's shape)."""
    x = np.zeros_like(b)
    r = b.copy()
    d = r.copy()
    rr = float(np.vdot(r, r))
    stop = (rtol ** 2) * rr
    for _ in range(max_iter):
        if rr <= stop:
            break
        Hd = hess_vec(d)
        curvature = float(np.vdot(d, Hd))
        if curvature <= 0.0:
            break
        a = rr / curvature
        x += a * d
        r -= a * Hd
        rr_new = float(np.vdot(r, r))
        d *= rr_new / rr
        d += r
        rr = rr_new
    return x


class _CsrProducts:
    """``X @ v`` and ``X^T r`` for an in-memory CSR X by SciPy's sequential sparse products,
    ``X^T`` held as a CSR copy made once per solve (the rows' own ``rmatvec`` adds 64 blocks of
    p partial sums, which at p = 10^5 costs ten times the product itself). Only the reference
    minimiser's Newton-CG uses it: its point is certified whatever the bits of its iterates,
    and no solver's products change."""

    def __init__(self, X):
        self.X = as_float64(X).tocsr()
        self.XT = self.X.T.tocsr()

    def matvec(self, v):
        return self.X @ v

    def rmatvec(self, r):
        return self.XT @ r


def _products(problem):
    """The products Newton-CG runs on: :class:`_CsrProducts` for X in memory as CSR, else the
    rows' own (dense X and X in chunks: the same bits for any thread count and chunking)."""
    if problem.rows.random_access and sparse.issparse(problem.X):
        return _CsrProducts(problem.X)
    return None


def _minimise_with_multiplier(problem, theta, mu, gtol, rows=None, max_iter=100):
    """Newton-CG on ``F + (mu/2)||theta||^2`` without constraint (``lambda + mu > 0``)."""
    value = None
    model = None
    for _ in range(max_iter):
        model = _Model(problem, theta, mu, rows)
        value = model.value
        gnorm = float(np.linalg.norm(model.grad))
        if gnorm <= gtol:
            break
        forcing = min(0.5, math.sqrt(gnorm))
        step = _cg(model.hess_vec, -model.grad, forcing, 250)
        slope = float(np.vdot(model.grad, step))
        moved = _line_search(problem, theta, value, step, slope, mu=mu,
                             project_onto_ball=False)
        if moved is None:
            # F_mu no longer decreases measurably: judge the full step by the gradient.
            cand = _Model(problem, theta + step, mu, rows)
            if not np.linalg.norm(cand.grad) < gnorm:
                break
            moved = cand.theta, cand.value
        theta, value = moved
    return theta, model


def _next_multiplier(model, norm, R, lo, hi, floor):
    """The next multiplier of the secular equation ``||theta(mu)|| = R``, inside ``(lo, hi)``.

    Newton's method on ``log ||theta(mu)|| = log R`` in ``t = log mu``, whose slope
    ``d log||theta|| / d log mu = -mu theta^T (H + mu I)^{-1} theta / ||theta||^2`` takes one
    CG solve (to 1e-6: the slope need not be exact, the bracket keeps the iteration safe).
    ``||theta(mu)||`` is close to a power of ``mu`` on the losses here (``mu^{-1/2}`` on
    separable data, where ``theta(0)`` does not exist), so the step in ``log mu`` neither
    overshoots below 0, as Newton's on ``1/||theta||`` does from above the root, nor crawls.
    Outside the bracket: its geometric mean, or with no lower end yet ``hi / 10^4``, never
    below ``floor`` (where a point inside the ball is certified by the multiplier alone).
    """
    mu = model.mu
    slope = math.nan
    if norm > 0.0:
        u = _cg(model.hess_vec, model.theta, 1e-6, 500)
        slope = -mu * float(np.vdot(model.theta, u)) / (norm * norm)
    candidate = math.nan
    if slope < 0.0:
        with np.errstate(over="ignore", under="ignore"):
            candidate = mu * float(np.exp(-math.log(norm / R) / slope))
    if not lo < candidate < hi:
        candidate = math.sqrt(lo * hi) if lo > 0.0 else 1e-4 * hi
    return max(candidate, floor) if lo == 0.0 else candidate


def _secular_gap(problem, mu, norm, distance):
    """A bound on the suboptimality of ``theta(mu)`` (of norm ``norm``, ``distance`` from R),
    projected onto the ball, over the ball.

    With the default dual point ``v = (lambda + mu) theta`` the duality gap of a point inside
    the ball is at most ``mu ||theta|| (R - ||theta||)``. Outside, projecting moves theta by
    ``distance`` along ``-theta``, where ``grad F = -mu theta``: F grows by at most
    ``mu ||theta|| distance + (beta + lambda) distance^2 / 2`` (beta the loss's smoothness),
    and ``F(theta(mu)) <= F(theta*) + (mu / 2)(R^2 - ||theta||^2) < F(theta*)``. So the
    secular equation need only be solved until this is below the tolerance: at a tiny mu,
    ``||theta(mu)|| = R`` to 1e-13 would take a gradient below ``1e-13 mu``.
    """
    bound = mu * norm * distance
    if norm > problem.radius and distance > 0.0:
        bound += 0.5 * (problem.smoothness + problem.reg) * distance * distance
    return bound


def newton_cg_ball(problem, theta, tol, max_iter=60):
    """Newton-CG with the ball's multiplier from the secular equation (large d, sparse X).

    Each multiplier's minimiser ``theta(mu)`` of ``F + (mu/2)||theta||^2`` is solved only as
    accurately as the distance of ``||theta||`` from R warrants (its gradient within
    ``10^-2 (lambda + mu)`` times the last distance, which moves ``||theta||`` by at most a
    hundredth of it), and to the full tolerance once close. The multiplier comes from
    :func:`_next_multiplier`. The iteration stops when ``||theta(mu)|| = R`` to 1e-13, or once
    :func:`_secular_gap` is below ``10^-3 tol``: then the ball may be inactive (``mu`` need
    not reach 0) or ``mu`` tiny (the norm need not be exact).

    Returns ``(theta, gap)`` like :func:`newton_ball`.
    """
    R, lam = problem.radius, problem.reg
    rows = _products(problem)
    theta = center(problem, np.asarray(theta, dtype=np.float64))
    # ||grad F_mu|| <= gtol puts theta within gtol / (lambda + mu) of theta(mu), and F within
    # gtol^2 / (2 (lambda + mu)) of its minimum; the certificate is then of order gtol * R.
    gtol = 1e-3 * tol / max(1.0, R if R is not None else 1.0)
    if R is None or lam > 0.0:
        inner, _ = _minimise_with_multiplier(problem, theta, 0.0, gtol, rows)
        if R is None or np.linalg.norm(inner) <= R:
            final = project(problem, center(problem, inner))
            return final, default_gap(problem, final)
        theta = inner
    # ||theta(mu)|| <= ||grad F(0)|| / (lambda + mu): at mu_hi the ball is not violated.
    grad0 = _Model(problem, np.zeros(problem.theta_shape), rows=rows).grad
    if float(np.linalg.norm(grad0)) <= gtol:
        # 0 (in the ball) is stationary, so the minimiser; theta(mu) would be 0 for every mu
        final = np.zeros(problem.theta_shape)
        return final, default_gap(problem, final)
    lo, hi = 0.0, float(np.linalg.norm(grad0)) / R + 1e-300
    floor = 4e-3 * tol / (R * R)        # mu R^2 / 4 bounds mu ||theta|| (R - ||theta||)
    mu, distance = hi, 0.0
    for _ in range(max_iter):
        inner_tol = max(gtol, 1e-2 * (lam + mu) * distance)
        theta, model = _minimise_with_multiplier(problem, theta, mu, inner_tol, rows)
        norm = float(np.linalg.norm(theta))
        distance = abs(norm - R)
        close = (distance <= 1e-13 * R or hi - lo <= 1e-15 * hi
                 or _secular_gap(problem, mu, norm, distance) <= 1e-3 * tol)
        # a loose solve decides nothing that its error, inner_tol / (lambda + mu) on theta,
        # could reverse: then this mu again, to the full tolerance
        if inner_tol > gtol and (close or distance <= inner_tol / (lam + mu)):
            distance = 0.0
            continue
        if close:
            break
        if norm > R:
            lo = max(lo, mu)
        else:
            hi = min(hi, mu)
        mu = _next_multiplier(model, norm, R, lo, hi, floor)
    final = project(problem, center(problem, theta))
    return final, default_gap(problem, final)


def minimise_smooth(problem, theta, tol):
    """The second-order method that suits the problem's size: exact Hessian for
    ``d <= EXPLICIT_MAX_DIM`` dense, Newton-CG otherwise."""
    d = problem.p * problem.loss_object.n_outputs
    if d <= EXPLICIT_MAX_DIM:
        return newton_ball(problem, theta, tol)
    return newton_cg_ball(problem, theta, tol)


def _with_huber_width(problem, width):
    """The same problem with the huber_hinge loss of the given width (views of the data)."""
    from ..losses import HuberHinge

    smoothed = problem._with_data(problem.X, problem.y)
    smoothed.loss_object = HuberHinge(width)
    smoothed.loss = smoothed.loss_object.name
    smoothed.huber_width = width
    return smoothed


def _blas_margins(X, theta):
    """``X @ theta`` by BLAS, as on float64 X; float32 X by blocks of rows converted to float64
    (each row's dot product is BLAS's on the float64 rows: the same bits, without a float64
    copy of X)."""
    if sparse.issparse(X) or X.dtype == np.float64:
        return X @ theta
    out = np.empty(X.shape[0])
    with one_blas_thread():
        for s in row_blocks(X.shape[0]):
            out[s] = as_float64(X[s]) @ theta
    return out


def _hinge_active_set(problem, theta, width):
    """Exact hinge solution on the pieces that ``theta`` (a huber_hinge minimiser of the given
    width) identifies, or None.

    With M the records on the quadratic piece (``|1 - y_i z_i| <= width``, the margin support
    vectors in the limit) and L those beyond it (``y_i z_i < 1 - width``, ``b_i = 1``), the hinge
    minimiser on those pieces solves the equality-constrained problem
    ``min (1/n) sum_L (1 - y_i <x_i, theta>) + ((lambda + mu)/2) ||theta||^2`` subject to
    ``y_i <x_i, theta> = 1`` on M, whose KKT system ``(lambda + mu) theta = g_L + A^T nu``,
    ``A theta = 1`` (``A`` the rows ``y_i x_i`` of M, ``g_L = (1/n) sum_L y_i x_i``) is of the
    size of M. ``b_M = n nu`` (clipped to [0, 1]) completes the dual point. ``mu`` is the ball's
    multiplier: 0 if the ball is inactive, else the root of ``||theta(mu)|| = R``. The result
    is only a candidate: the certificate decides.
    """
    # BLAS's X^T w sums over all rows in its own order: float32 X is converted whole (a float64
    # copy while this runs) so that the candidate is the float64 problem's, bit for bit
    X, y, n = as_float64(problem.X), problem.y, problem.n
    R, lam = problem.radius, problem.reg
    m = y * (X @ theta)
    on_piece = np.abs(1.0 - m) <= width
    beyond = m < 1.0 - width
    k = int(on_piece.sum())
    if k == 0 or k > 2 * problem.p:
        return None
    A = X[on_piece]
    A = (A.toarray() if sparse.issparse(A) else np.asarray(A)) * y[on_piece, None]
    gL = X.T @ np.where(beyond, y, 0.0) / n
    ones = np.ones(k)
    gram = A @ A.T
    AgL = A @ gL

    def solve(c):               # theta and nu for lambda + mu = c > 0
        nu = np.linalg.lstsq(gram, c * ones - AgL, rcond=None)[0]
        return (gL + A.T @ nu) / c, nu

    active = R is not None and np.linalg.norm(theta) >= R * (1.0 - 1e-6)
    if not active and lam > 0.0:
        new, nu = solve(lam)
    elif not active:            # lambda + mu = 0: A theta = 1 and A^T nu = -g_L
        new = np.linalg.lstsq(A, ones, rcond=None)[0]
        nu = np.linalg.lstsq(A.T, -gL, rcond=None)[0]
    else:
        def excess(c):          # inf (not a warning) when a tiny c overflows
            with np.errstate(over="ignore", invalid="ignore"):
                value = float(np.linalg.norm(solve(c)[0])) - R
            return value if math.isfinite(value) else math.inf
        lo = max(lam, 1e-300)
        hi = max(2.0 * lo, 1.0)
        for _ in range(200):
            if excess(hi) <= 0.0:
                break
            hi *= 2.0
        if excess(lo) <= 0.0 or excess(hi) > 0.0:
            return None
        c = optimize.brentq(excess, lo, hi, xtol=1e-300, rtol=4 * _EPS, maxiter=200)
        new, nu = solve(c)
    if not np.all(np.isfinite(new)) or not np.all(np.isfinite(nu)):
        return None
    b = np.where(beyond, 1.0, 0.0)
    b[on_piece] = np.clip(n * nu, 0.0, 1.0)
    return project(problem, new), b * y


def hinge_by_smoothing(problem, theta, tol, widths=None):
    """Hinge minimiser by continuation on the huber_hinge width; see the module docstring.

    Returns ``(theta, alpha, gap)``: the point, the dual point that certifies it for the hinge
    loss, and the certified hinge gap.
    """
    if widths is None:
        widths = [0.5 * 10.0 ** -k for k in range(0, 12)]
    best = (None, None, math.inf)
    previous = math.inf
    for width in widths:
        smoothed = _with_huber_width(problem, width)
        # the huber gap of this stage need only be small against the hinge gap it aims for
        theta, _ = minimise_smooth(smoothed, theta, tol)
        z = _blas_margins(problem.X, theta)
        b = np.clip((1.0 + width - problem.y * z) / (2.0 * width), 0.0, 1.0)
        alpha = feasible_alpha(problem, b * problem.y)
        gap = duality_gap(problem, theta, alpha)
        if gap < best[2]:
            best = (theta, alpha, gap)
        polished = _hinge_active_set(problem, theta, width)
        if polished is not None:
            polished_gap = duality_gap(problem, *polished)
            if polished_gap < best[2]:
                best = (*polished, polished_gap)
        if best[2] <= 1e-3 * tol or (best[2] <= tol and best[2] > 0.5 * previous):
            break               # at the rounding floor, or no longer improving
        previous = best[2]
    return best
