"""Exact reference minimisers with a certified optimality gap (docs/conventions.md).

Excess risk ``F(theta) - F(theta*)`` is the quantity every theorem in dpsolve bounds, so it needs
``theta*``. :func:`reference_minimizer` computes it in three steps:

1. **Cone solve.** The problem is written in cvxpy and solved with Clarabel at tight tolerances
   (SCS if Clarabel fails or errs)::

       minimise   (1/n) sum_i loss(<x_i, theta>; y_i) + (lambda/2) ||theta||^2
       subject to ||theta||_2 <= R            (when radius is not None)

2. **Polishing.** Interior-point solvers stop around 1e-8 and sometimes report
   ``optimal_inaccurate`` (plain cvxpy does so on logistic with n = 10^4, p = 50). For the smooth
   losses (logistic, squared, huber_hinge) the solution is refined by Newton's method.
   huber_hinge is only once differentiable; its loss'' (``1/(2h)`` on the quadratic piece, 0
   elsewhere) is a generalised Hessian, with which Newton's method on a piecewise-quadratic
   objective still converges fast once the pieces are settled. Each step minimises the
   second-order model ``g^T d + d^T H d / 2``, with ``H = (1/n) X^T diag(loss'') X + lambda I``,
   exactly over the ball (a trust-region-type subproblem solved by eigendecomposition and a
   one-dimensional secular equation). When the ball is active this is Newton's method on the
   KKT system ``grad F(theta) + mu theta = 0, ||theta||^2 = R^2`` in ``(theta, mu)``. When it is
   inactive the step is a plain Newton step. Every iterate is kept in C, and the iterate with
   the smallest certificate is kept. For the hinge loss (not differentiable) the cone solver's
   constraint duals give the dual point of the certificate. For the multinomial loss the same
   step runs on the vectorised (p K)-dimensional parameter, with the Hessian
   ``(1/n) sum_i (diag(s_i) - s_i s_i^T) kron x_i x_i^T + lambda I`` (see :func:`_hessian`).

3. **Certificate.** :func:`certificate` is the Fenchel duality gap. For every dual-feasible
   ``alpha``, ``D(alpha) <= F(theta*)``, so ``F(theta_hat) - D(alpha)`` bounds the suboptimality
   of ``theta_hat`` from above. For the multinomial loss (smooth) it is a gradient certificate
   instead: the Frank–Wolfe gap over the ball, or ``||grad F||^2 / (2 lambda)`` by strong
   convexity, whichever is smaller. The gap includes an explicit allowance for floating-point
   rounding, so it is a true upper bound on ``F(theta_hat) - F(theta*)``, not an estimate.

Results are cached on disk (see :func:`reference_minimizer`). A cached file is never trusted:
its certificate is recomputed before use.
"""
import hashlib
import json
import math
import os
import tempfile
import time as _time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import optimize, special

from ._validation import check_real
from .problem import Problem

__all__ = ["ReferenceSolution", "certificate", "reference_minimizer", "excess_risk"]

#: Version of the on-disk cache format. Bump it when the format or the solver changes
#: meaning; old files are then ignored.
CACHE_FORMAT_VERSION = 1

_EPS = np.finfo(np.float64).eps
# A norm may exceed R by this relative amount and still count as "in C up to rounding".
_BALL_SLACK = 1e-12


@dataclass(frozen=True, eq=False)
class ReferenceSolution:
    """A certified approximate minimiser of ``F`` over C (docs/conventions.md).

    Attributes
    ----------
    theta : ndarray, shape ``problem.theta_shape``
        Read-only copy of the solution ``theta_hat``, shape (p,) or (p, K) for multinomial. It
        lies in C: ``||theta_hat||_2 <= R`` (the Frobenius norm for multinomial).
    value : float
        ``F(theta_hat)`` as computed by ``problem.objective``.
    gap : float
        Certified upper bound on ``F(theta_hat) - F(theta*)``: the certificate of
        :func:`certificate` (Fenchel duality gap; gradient certificate for multinomial),
        including its floating-point allowance. Hence ``F(theta*) in [value - gap, value]``.
    status : str
        How the solution was obtained, e.g. ``"optimal"`` (cone solver alone),
        ``"optimal_inaccurate+polished"`` (solver result refined by Newton polishing),
        ``"failed+polished"`` (both cone solvers failed; Newton from ``theta = 0``). The suffix
        ``"+gap_above_tol"`` means that the requested tolerance was not reached (a warning is
        also issued, and the result is not cached).
    solver : str
        ``"CLARABEL"`` or ``"SCS"``: the cone solver whose result was used, or ``"NONE"`` if
        both failed.
    time : float
        Seconds spent solving: the cvxpy call (canonicalisation and solve) plus polishing. Cache
        I/O and certificate checks of cached results are not included. A cached result
        reports the time of the original solve.
    cached : bool
        True when the result was read from the disk cache (and re-certified).
    """

    theta: np.ndarray
    value: float
    gap: float
    status: str
    solver: str
    time: float
    cached: bool

    def __repr__(self):
        return (f"ReferenceSolution(value={self.value!r}, gap={self.gap:.3g}, "
                f"status={self.status!r}, solver={self.solver!r}, time={self.time:.3g}, "
                f"cached={self.cached!r}, p={self.theta.shape[0]})")


# -- argument checks -------------------------------------------------------------------------
def _check_problem(problem):
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    return problem


def _check_tol(tol):
    return check_real(tol, "tol", low=0.0, high=1e-2, high_inclusive=True)


def _check_in_ball(problem, theta):
    if problem.radius is None:
        return
    norm = float(np.linalg.norm(theta))
    if norm > problem.radius * (1.0 + _BALL_SLACK):
        raise ValueError(
            f"theta lies outside the constraint set: ||theta|| = {norm:.17g} > radius = "
            f"{problem.radius:g}; project it onto the ball first (the certificate bounds the "
            "suboptimality of feasible points)"
        )


def _project(problem, theta):
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


def _gamma(k):
    """Classical rounding-error factor ``gamma_k = k u / (1 - k u)`` (taken with u = eps,
    twice the unit roundoff, for a margin)."""
    k = float(k)
    return k * _EPS / max(1.0 - k * _EPS, 0.5)


# -- certificate -----------------------------------------------------------------------------
def _feasible_alpha(problem, alpha):
    """Map ``alpha`` into the domain of the conjugates: ``b = alpha * y in [0, 1]`` for the
    classification losses, huber_hinge included (``alpha = b y``); any real vector for the
    squared loss."""
    alpha = np.asarray(alpha, dtype=np.float64)
    if alpha.shape != (problem.n,):
        raise ValueError(f"alpha must have shape ({problem.n},), got {alpha.shape}")
    if not np.all(np.isfinite(alpha)):
        raise ValueError("alpha contains NaN or infinite values")
    if problem.loss == "squared":
        return np.array(alpha, copy=True)
    # y is exactly +-1, so b * y is exact and b = alpha * y is recovered exactly.
    return np.clip(alpha * problem.y, 0.0, 1.0) * problem.y


def _duality_gap(problem, theta, alpha, absX):
    """``F(theta) - D(alpha)`` plus a floating-point allowance, for a feasible ``alpha``.

    ``F`` is evaluated here (not by the kernels) so that every term's rounding error can be
    accounted for. The allowance follows the standard bounds for dot products and sums
    (``|fl(sum a_i) - sum a_i| <= gamma_k sum |a_i|``), doubled for safety.
    """
    X, y, n, p = problem.X, problem.y, problem.n, problem.p
    lam, R = problem.reg, problem.radius
    z = X @ theta
    z_err = _gamma(p + 1) * (absX @ np.abs(theta))       # |fl(z_i) - z_i|

    # Primal loss terms and their sensitivity to the error in z.
    if problem.loss == "logistic":
        u = y * z
        phi = np.logaddexp(0.0, -u)                       # log(1 + e^{-u}), |phi'| <= 1
        phi_err = z_err
        b = alpha * y                                     # in [0, 1]
        one_minus_b = 1.0 - b                             # exact for b >= 1/2
        conj = special.xlogy(b, b) + special.xlogy(one_minus_b, one_minus_b)
        conj_mag = np.abs(conj)
        # rounding of 1 - b when b < 1/2: |d/d(1-b)| = |log(1-b) + 1| <= 1.7, error <= eps/2
        conj_extra = _EPS
    elif problem.loss == "hinge":
        u = y * z
        phi = np.maximum(0.0, 1.0 - u)                    # |phi'| <= 1
        phi_err = z_err
        conj = -(alpha * y)                               # -b
        conj_mag = np.abs(conj)
        conj_extra = 0.0
    elif problem.loss == "huber_hinge":
        w = problem.huber_width
        u = 1.0 - y * z                                   # y z is exact: y = +-1
        # 0 for u < -w, (u + w)^2 / (4w) for |u| <= w, u for u > w; |phi'| <= 1
        phi = np.where(u > w, u, np.where(u < -w, 0.0, (u + w) ** 2 / (4.0 * w)))
        # Beyond the error in z: on the quadratic piece, rounding 1 - yz and u + w moves the
        # argument by at most (|u| + 2w) eps/2 <= 1.5 w eps, at slope <= 1; the other rounding
        # is relative to |phi| (below). Charged on every term: 2 w eps.
        phi_err = z_err + 2.0 * _EPS * w
        b = alpha * y                                     # in [0, 1]
        # phi*(-alpha) = -b - w b (1 - b) (see certificate())
        conj = -b - w * b * (1.0 - b)
        conj_mag = b + w * b * (1.0 - b)                  # = |conj|: both terms are >= 0
        # rounding of 1 - b when b < 1/2 (error <= eps/2), times w b <= w
        conj_extra = w * _EPS
    else:
        r = z - y
        phi = 0.5 * r * r
        phi_err = (np.abs(r) + z_err) * z_err + 0.5 * z_err * z_err
        conj = 0.5 * alpha * alpha - alpha * y
        conj_mag = 0.5 * alpha * alpha + np.abs(alpha * y)
        conj_extra = 0.0

    sq = float(np.dot(theta, theta))
    h = 0.5 * lam * sq
    v = (X.T @ alpha) / n
    nv = float(np.linalg.norm(v))
    if R is None:
        hstar = nv * nv / (2.0 * lam)
        grad_hstar = nv / lam
    elif lam > 0.0 and nv <= lam * R:
        hstar = nv * nv / (2.0 * lam)
        grad_hstar = R
    else:
        hstar = R * nv - 0.5 * lam * R * R
        grad_hstar = R

    mean_phi = float(np.mean(phi))
    mean_conj = float(np.mean(conj))
    primal = mean_phi + h
    dual = -mean_conj - hstar
    gap = primal - dual

    # Floating-point allowance.
    mean_abs_phi = float(np.mean(np.abs(phi)))
    mean_abs_conj = float(np.mean(conj_mag))
    v_err = np.linalg.norm(_gamma(n + 2) * (absX.T @ np.abs(alpha)) / n + _EPS * np.abs(v))
    if R is None:
        grad_hstar = (nv + v_err) / lam   # bounds ||grad h*|| between v and fl(v)
    # (with a constraint, h* is R-Lipschitz everywhere)
    allowance = (
        float(np.mean(phi_err)) + 4.0 * _EPS * mean_abs_phi            # z errors, evaluation
        + _gamma(n + 2) * (mean_abs_phi + mean_abs_conj)               # the two means
        + 4.0 * _EPS * mean_abs_conj + conj_extra                      # conjugate evaluation
        + _gamma(p + 4) * (abs(h) + abs(hstar))                        # ||theta||^2, ||v||^2
        + grad_hstar * v_err                                           # error in v through h*
        + 4.0 * _EPS * (abs(primal) + abs(dual) + mean_abs_phi + mean_abs_conj)  # final sums
    )
    if not math.isfinite(gap) or not math.isfinite(allowance):
        return math.inf
    return max(0.0, gap + 2.0 * allowance)


def _gradient_gap(problem, theta, absX):
    """Gradient certificate for the smooth multinomial loss, plus a floating-point allowance.

    With ``G = grad F(theta)`` (exact), ``F(theta) - F(theta*) <= <G, theta> + R ||G||`` for
    theta in C (Frank–Wolfe: convexity, and ``-<G, theta*> <= R ||G||``), and
    ``<= ||G||^2 / (2 lambda)`` when ``lambda > 0`` (the minimum of the strongly convex model
    over all of R^{p x K}, which is at most the minimum over C). The smaller bound is returned.

    The computed gradient ``g`` differs from G by at most E (Frobenius), bounded from: the
    error in the logits ``|fl(z) - z| <= gamma_{p+1} |X| |theta|``, which moves the derivative
    ``softmax(z) - e_y`` by at most half as much in each row's L2 norm (its Jacobian
    ``diag(s) - s s^T`` has norm <= 1/2); the kernel's own rounding, at most ``(K + 4) eps`` per
    entry (relative errors ``gamma_K`` in the sum of exponentials and ``eps`` in exp and the
    division, and ``e_k |z_k - m| eps / 2 <= eps / 5`` from rounding ``z_k - m``), charged as
    ``(K + 8) eps``; and the sums of ``X^T D``, ``gamma_{n+2}`` relative. Then
    ``<G, theta> + R||G|| <= <g, theta> + R||g|| + E (||theta|| + R)``, and
    ``||G|| <= ||g|| + E``. The allowance also covers the rounding in evaluating ``F(theta)``
    (the loss is sqrt(2)-Lipschitz in each row's logits), so that ``value - gap`` of a
    ReferenceSolution stays below ``F(theta*)``. Like :func:`_duality_gap`, the allowance is
    doubled.
    """
    X, n, p = problem.X, problem.n, problem.p
    lam, R = problem.reg, problem.radius
    K = problem.n_classes
    d = p * K
    abs_theta = np.abs(theta)
    z = X @ theta
    z_row_err = np.linalg.norm(_gamma(p + 1) * (absX @ abs_theta), axis=1)   # per record, L2
    D = problem._loss_derivatives(z)
    kernel_err = (K + 8) * _EPS
    g = X.T @ D / n + lam * theta
    D_err = 0.5 * z_row_err[:, None] + kernel_err                           # per entry
    g_err = (_gamma(n + 2) * (absX.T @ np.abs(D)) / n + (absX.T @ D_err) / n * (1.0 + _EPS)
             + _EPS * (lam * abs_theta + np.abs(g)))
    E = float(np.linalg.norm(g_err))
    norm_g = float(np.linalg.norm(g))
    norm_theta = float(np.linalg.norm(theta))

    bounds = []
    if R is not None:
        inner = float(np.dot(g.reshape(-1), theta.reshape(-1)))
        fw = inner + R * norm_g
        fw_err = (_gamma(d + 2) * (float(np.sum(np.abs(g) * abs_theta)) + R * norm_g)
                  + E * (norm_theta * (1.0 + _gamma(d + 2)) + R) + 4.0 * _EPS * abs(fw))
        bounds.append(fw + 2.0 * fw_err)
    if lam > 0.0:
        G = norm_g * (1.0 + _gamma(d + 2)) + E
        bounds.append(G * G / (2.0 * lam) * (1.0 + 8.0 * _EPS))

    # Rounding in F(theta) as problem.objective computes it.
    values = problem._loss_values(z)
    reg_term = 0.5 * lam * norm_theta * norm_theta
    value_err = (float(np.mean(np.sqrt(2.0) * z_row_err + kernel_err * (1.0 + np.abs(values))))
                 + _gamma(n + 2) * float(np.mean(np.abs(values)))
                 + _gamma(d + 4) * reg_term
                 + 4.0 * _EPS * (float(np.mean(np.abs(values))) + reg_term))
    gap = min(bounds) + 2.0 * value_err
    if not math.isfinite(gap):
        return math.inf
    return max(0.0, gap)


def certificate(problem, theta, alpha=None):
    r"""Certified upper bound on ``F(theta) - F(theta*)``: the Fenchel duality gap.

    Write ``F(theta) = (1/n) sum_i phi_i(<x_i, theta>) + h(theta)`` with
    ``phi_i(z) = loss(z; y_i)`` and ``h = (lambda/2) ||.||^2 + iota_C``. Weak duality gives, for
    every dual point ``alpha`` in the domain of the conjugates,

    .. math::

        D(\alpha) = -\frac1n \sum_i \phi_i^*(-\alpha_i)
                    - h^*\Big(\frac1n \sum_i \alpha_i x_i\Big) \le F(\theta^*),

    so ``F(theta) - D(alpha) >= F(theta) - F(theta*)`` (docs/conventions.md). The conjugates,
    with ``b_i = alpha_i y_i`` for the classification losses, are:

    * logistic: ``phi*(-alpha) = b log b + (1 - b) log(1 - b)``, ``b in [0, 1]``;
    * hinge: ``phi*(-alpha) = -b``, ``b in [0, 1]``;
    * huber_hinge of width ``w = problem.huber_width`` (the loss table's h):
      ``phi*(-alpha) = -b - w b (1 - b)``, ``b in [0, 1]``. Equivalently
      ``loss(z; y) = max_{b in [0, 1]} b (1 + w - yz) - w b^2``: the hinge loss
      ``max_b b (1 - yz)`` smoothed by subtracting ``w b (1 - b)`` from its conjugate;
    * squared: ``phi*(-alpha) = alpha^2 / 2 - alpha y``;
    * ``h*(v) = ||v||^2 / (2 lambda)`` if ``||v|| <= lambda R``, else
      ``R ||v|| - lambda R^2 / 2``. This is ``R ||v||`` when ``lambda = 0`` and
      ``||v||^2 / (2 lambda)`` when there is no constraint.

    The default dual point is ``alpha_i = -loss'(<x_i, theta>)``, which is optimal when ``theta``
    is. The gap then vanishes at ``theta*`` for the smooth losses. For the hinge loss, pass the
    solver's constraint duals as ``alpha`` (:func:`reference_minimizer` does this). For
    huber_hinge the default is ``b_i = clip((1 + w - y_i z_i) / (2w), 0, 1)``.

    For the multinomial loss (``theta`` of shape (p, K), smooth) the certificate is the gradient
    bound of docs/conventions.md instead, with ``g = grad F(theta)`` and Frobenius norms: the
    Frank–Wolfe gap ``<g, theta> + R ||g||`` over the ball, or ``||g||^2 / (2 lambda)`` by
    strong convexity when ``lambda > 0``, whichever is smaller (see :func:`_gradient_gap`).
    It vanishes at ``theta*`` too, but only at first order in ``||g||`` when the ball is
    inactive and ``lambda = 0``.

    Parameters
    ----------
    problem : Problem
    theta : array_like, shape ``problem.theta_shape``
        A point of C (up to a relative rounding slack of 1e-12 on the norm).
    alpha : array_like, shape (n,), optional
        A dual point. It is first clipped to the conjugates' domain (``b_i`` to ``[0, 1]``), so
        any finite vector gives a valid bound. The smaller of the gaps for ``alpha`` and for the
        default dual point is returned. Not accepted for multinomial.

    Returns
    -------
    float
        ``F(theta) - D(alpha)`` plus an explicit allowance for floating-point rounding in
        evaluating both sides. The allowance uses worst-case bounds of order
        ``(n + p) eps`` times the magnitudes of the summed terms. It is at least 0, and it is an
        upper bound on ``F(theta) - F(theta*)`` even after rounding. It is ``inf`` if something
        overflowed.

    Raises
    ------
    TypeError
        If ``problem`` is not a :class:`~dpsolve.Problem`.
    ValueError
        If ``theta`` or ``alpha`` has the wrong shape or non-finite entries, if ``theta`` lies
        outside C, or if ``alpha`` is given for a multinomial problem.
    """
    _check_problem(problem)
    theta = problem._theta(theta)
    _check_in_ball(problem, theta)
    if alpha is not None and problem.loss == "multinomial":
        raise ValueError("the multinomial certificate is a gradient certificate: it takes no "
                         "dual point alpha")
    absX = np.abs(problem.X)
    best = _default_gap(problem, theta, absX)
    if alpha is not None:
        best = min(best, _duality_gap(problem, theta, _feasible_alpha(problem, alpha), absX))
    return best


def _default_gap(problem, theta, absX):
    """The certificate at the default dual point (margin losses) or the gradient certificate
    (multinomial)."""
    if problem.loss == "multinomial":
        return _gradient_gap(problem, theta, absX)
    return _duality_gap(problem, theta, _feasible_alpha(problem, -problem.loss_derivatives(theta)),
                        absX)


def _center(problem, theta):
    """Multinomial: subtract from every row of theta its mean over the K classes.

    Adding the same vector to every column shifts all K logits of a record equally, which leaves
    the loss unchanged; centring removes that component, so the norm (and the regulariser) can
    only fall and the point stays in C. The minimiser over C can be taken centred (it is, when
    ``lambda > 0``), and Newton's method then runs in the subspace where the Hessian is not
    singular along that direction. Other losses: theta unchanged.
    """
    if problem.loss != "multinomial":
        return theta
    return theta - theta.mean(axis=1, keepdims=True)


# -- cone solve ------------------------------------------------------------------------------
def _cone_solve(problem, tol):
    """Solve with cvxpy (Clarabel, then SCS). Returns ``(theta, alpha, status, solver)``. Here
    ``alpha`` is the dual point from the margin constraints (hinge only, else None). ``theta`` is
    None if both solvers fail."""
    import cvxpy as cp

    X, y, n = problem.X, problem.y, problem.n
    theta = cp.Variable(problem.theta_shape)
    z = X @ theta
    constraints = []
    margin = None
    if problem.loss == "multinomial":
        # log sum_k exp(z_ik) - z_{i y_i}, with the true-class logits picked by a one-hot mask
        onehot = np.zeros((n, problem.n_classes))
        onehot[np.arange(n), y] = 1.0
        objective = (cp.sum(cp.log_sum_exp(z, axis=1)) - cp.sum(cp.multiply(onehot, z))) / n
    elif problem.loss == "logistic":
        objective = cp.sum(cp.logistic(-cp.multiply(y, z))) / n
    elif problem.loss == "hinge":
        # Explicit slacks so that the margin constraints' duals (the dual point) are exposed.
        xi = cp.Variable(n)
        margin = xi >= 1 - cp.multiply(y, z)
        constraints += [xi >= 0, margin]
        objective = cp.sum(xi) / n
    elif problem.loss == "huber_hinge":
        # With w = 1 + h - y z the loss is 0 (w < 0), w^2 / (4h) (0 <= w <= 2h), w - h (w > 2h),
        # which is min_a a^2 / (4h) + pos(w - a) (attained at a = clip(w, 0, 2h)): a QP.
        # (cp.huber(cp.pos(w), 2h) / (4h) is the same function but took Clarabel 6x longer at
        # n = 10^4, p = 50.)
        h = problem.huber_width
        a = cp.Variable(n)
        objective = (cp.sum_squares(a) / (4 * h)
                     + cp.sum(cp.pos(1 + h - cp.multiply(y, z) - a))) / n
    else:
        objective = cp.sum_squares(z - y) / (2 * n)
    if problem.reg > 0:
        objective = objective + 0.5 * problem.reg * cp.sum_squares(theta)
    if problem.radius is not None:
        # (the Frobenius norm for multinomial; cp.norm(matrix, 2) would be the spectral norm)
        norm = cp.norm(theta, "fro") if problem.loss == "multinomial" else cp.norm(theta, 2)
        constraints.append(norm <= problem.radius)
    cvx = cp.Problem(cp.Minimize(objective), constraints)

    # Hinge: the solver's answer is final, so ask for tight tolerances (1e-10; asking Clarabel
    # for less has been seen to give worse answers, not better ones). Smooth losses: the
    # solution only warm-starts Newton polishing, which converges quadratically from there.
    # Tight interior-point tolerances would cost many slow exponential-cone iterations (logistic
    # at n = 10^4, p = 50: 5-28 s at 1e-10 against 4-9 s at 1e-7; polishing adds < 0.1 s).
    inner = 1e-10 if problem.loss == "hinge" else 1e-7
    attempts = [
        ("CLARABEL", dict(tol_gap_abs=inner, tol_gap_rel=inner, tol_feas=inner,
                          tol_ktratio=1e-8, max_iter=400)),
        ("SCS", dict(eps_abs=inner, eps_rel=inner, max_iters=200_000)),
    ]
    for name, opts in attempts:
        if name not in cp.installed_solvers():
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cvx.solve(solver=name, **opts)
        except Exception:          # noqa: BLE001 - a solver error means: try the next one
            continue
        if cvx.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or theta.value is None:
            continue
        value = np.asarray(theta.value, dtype=np.float64).reshape(problem.theta_shape)
        if not np.all(np.isfinite(value)):
            continue
        alpha = None
        if margin is not None and margin.dual_value is not None:
            # Lagrangian (1/n) sum xi - sum mu_i (xi_i - 1 + y_i z_i): b_i = n mu_i in [0, 1].
            mu = np.asarray(margin.dual_value, dtype=np.float64).reshape(n)
            if np.all(np.isfinite(mu)):
                alpha = np.clip(n * mu, 0.0, 1.0) * y
        return value, alpha, str(cvx.status), name
    return None, None, "failed", "NONE"


# -- Newton polishing (smooth losses) ----------------------------------------------------------
def _ball_qp(H, c, R):
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


def _hessian(problem, theta):
    """Hessian of F at theta, as a matrix on the flattened (C-order) parameter.

    Margin losses: ``(1/n) X^T diag(loss'') X + lambda I``. Multinomial: with ``s_i`` the
    softmax of record i, ``(1/n) sum_i (diag(s_i) - s_i s_i^T) kron x_i x_i^T`` (entry
    ``(j K + k, j' K + k')`` is ``(1/n) sum_i x_ij x_ij' (s_ik [k = k'] - s_ik s_ik')``) plus
    ``lambda I``, plus ``omega (I_p kron 1 1^T / K)``: the loss is flat along the directions
    that add one vector to every column, and this term (``omega = B^2/2 + lambda``, the scale of
    the rest) makes the Hessian invertible there without changing it on centred parameters
    (see :func:`_center`).
    """
    X, n, p, lam = problem.X, problem.n, problem.p, problem.reg
    if problem.loss != "multinomial":
        d2 = problem.loss_second_derivatives(theta)
        H = (X.T * d2) @ X / n
    else:
        K = problem.n_classes
        S = problem.loss_derivatives(theta)
        S[np.arange(n), problem.y] += 1.0                 # softmax = derivative + e_y
        M = (X[:, :, None] * S[:, None, :]).reshape(n, p * K)
        H = -(M.T @ M) / n
        H4 = H.reshape(p, K, p, K)                        # a view: writes go into H
        for k in range(K):
            H4[:, k, :, k] += (X.T * S[:, k]) @ X / n
        omega = problem.smoothness + lam
        for j in range(p):
            H4[j, :, j, :] += omega / K
    H.flat[:: H.shape[0] + 1] += lam
    return 0.5 * (H + H.T)


def _newton_polish(problem, theta, best_cert, tol, absX, max_iter=50):
    """Projected Newton on the smooth objective over C; returns the best iterate by
    certificate and its certificate. Works on the flattened parameter (p K entries for
    multinomial, whose iterates are kept centred)."""
    shape = problem.theta_shape
    target = 1e-3 * tol
    best = theta
    current, current_F = theta, problem.objective(theta)
    for _ in range(max_iter):
        if best_cert <= target:
            break
        g = problem.gradient(current).reshape(-1)
        H = _hessian(problem, current)
        # New point: argmin over the ball of the model g^T d + d^T H d / 2, d = t - current.
        target_point = _ball_qp(H, H @ current.reshape(-1) - g, problem.radius)
        step = _center(problem, target_point.reshape(shape)) - current
        slope = float(g @ step.reshape(-1))
        accepted = False
        t = 1.0
        for _ in range(30):
            cand = _project(problem, current + t * step)
            cand_F = problem.objective(cand)
            cand_cert = _default_gap(problem, cand, absX)
            decreased = cand_F <= current_F + 1e-4 * t * min(slope, 0.0) and cand_F < current_F
            if cand_cert < best_cert or decreased:
                accepted = True
                break
            t *= 0.5
        if not accepted:
            break
        current, current_F = cand, cand_F
        if cand_cert < best_cert:
            improvement = best_cert / max(cand_cert, 1e-300)
            best, best_cert = cand, cand_cert
            if best_cert <= tol and improvement < 2.0:
                break                   # converged to rounding level: no further progress
    return best, best_cert


# -- cache -----------------------------------------------------------------------------------
def _cache_dir(cache):
    if cache is False or cache is None:
        return None
    if cache is True:
        env = os.environ.get("DPSOLVE_CACHE")
        if env:
            return Path(env)
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = Path(xdg) if xdg else Path.home() / ".cache"
        return base / "dpsolve"
    if isinstance(cache, (str, os.PathLike)):
        return Path(cache)
    raise TypeError(f"cache must be a bool, str or path, got {type(cache).__name__}")


def _cache_key(problem, tol):
    h = hashlib.sha256()
    h.update(f"dpsolve-reference-v{CACHE_FORMAT_VERSION}\n".encode())
    h.update(json.dumps(problem.describe(), sort_keys=True).encode())
    h.update(f"\ntol={float(tol)!r}\nX{problem.X.shape}{problem.X.dtype.str}\n".encode())
    h.update(np.ascontiguousarray(problem.X).tobytes())
    h.update(f"\ny{problem.y.shape}{problem.y.dtype.str}\n".encode())
    h.update(np.ascontiguousarray(problem.y).tobytes())
    return h.hexdigest()


def _load_cached(path, key, problem, tol):
    """Return a re-certified ReferenceSolution from ``path``, or None if it is missing,
    unreadable, from another problem or not certified to ``tol``."""
    try:
        with np.load(path, allow_pickle=False) as f:
            if (int(f["version"]) != CACHE_FORMAT_VERSION or str(f["key"]) != key):
                return None
            theta = np.array(f["theta"], dtype=np.float64)
            alpha = np.array(f["alpha"], dtype=np.float64)
            status, solver, elapsed = str(f["status"]), str(f["solver"]), float(f["time"])
        if theta.shape != problem.theta_shape or not np.all(np.isfinite(theta)):
            return None
        if problem.radius is not None and np.linalg.norm(theta) > problem.radius:
            return None
        if alpha.shape != (problem.n,) or not np.all(np.isfinite(alpha)):
            alpha = None
        gap = certificate(problem, theta, alpha)
    except Exception:              # noqa: BLE001 - any unreadable or invalid file is re-solved
        return None
    if not gap <= tol:
        return None
    theta.flags.writeable = False
    return ReferenceSolution(theta=theta, value=problem.objective(theta), gap=gap,
                             status=status, solver=solver, time=elapsed, cached=True)


def _store(directory, path, key, solution, alpha):
    tmp = None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".tmp-", suffix=".npz",
                                         delete=False) as fh:
            tmp = fh.name
            np.savez(fh, version=np.int64(CACHE_FORMAT_VERSION), key=np.str_(key),
                     theta=solution.theta,
                     alpha=np.zeros(0) if alpha is None else np.asarray(alpha, np.float64),
                     status=np.str_(solution.status), solver=np.str_(solution.solver),
                     time=np.float64(solution.time), value=np.float64(solution.value),
                     gap=np.float64(solution.gap))
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        warnings.warn(f"could not write the reference cache in {directory}: {exc}",
                      RuntimeWarning, stacklevel=3)
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


# -- public API ------------------------------------------------------------------------------
def _solve(problem, tol):
    absX = np.abs(problem.X)
    start = _time.perf_counter()
    theta, alpha, status, solver = _cone_solve(problem, tol)
    if theta is None:
        theta = np.zeros(problem.theta_shape)  # both solvers failed: polish from the origin
    theta = _project(problem, _center(problem, theta))
    gap = _default_gap(problem, theta, absX)
    if alpha is not None:
        alpha = _feasible_alpha(problem, alpha)
        gap_alpha = _duality_gap(problem, theta, alpha, absX)
        if gap_alpha > gap:
            alpha = None                      # the subgradient dual point is better
        gap = min(gap, gap_alpha)
    if problem.loss != "hinge" and (status != "optimal" or gap > tol * 1e-3):
        polished, gap_polished = _newton_polish(problem, theta, gap, tol, absX)
        if gap_polished < gap:
            theta, gap, alpha = polished, gap_polished, None
            status += "+polished"
    elapsed = _time.perf_counter() - start
    if not gap <= tol:
        status += "+gap_above_tol"
        warnings.warn(f"reference_minimizer reached a certified gap of {gap:.3g}, above "
                      f"tol={tol:g} ({problem!r})", RuntimeWarning, stacklevel=3)
    theta = np.array(theta, copy=True)
    theta.flags.writeable = False
    return ReferenceSolution(theta=theta, value=problem.objective(theta), gap=float(gap),
                             status=status, solver=solver, time=elapsed, cached=False), alpha


def reference_minimizer(problem, *, tol=1e-9, cache=True):
    """Certified minimiser of ``F`` over C (docs/conventions.md).

    Solves ``min_{||theta|| <= R} (1/n) sum_i loss(<x_i, theta>; y_i) + (lambda/2)||theta||^2``
    with cvxpy (Clarabel at tight tolerances, SCS as a fallback). For the smooth losses the
    result is then polished by Newton's method on the KKT system (see the module docstring).
    The result is certified with :func:`certificate`: ``0 <= F(theta_hat) - F(theta*) <= gap``.

    Multinomial (``theta`` of shape (p, K), Frobenius ball): the loss is written as
    ``cp.log_sum_exp(X @ W, axis=1)`` minus the true-class logit; the solution is centred (each
    row of W minus its mean over the classes, which changes no logit difference) and certified
    by the gradient certificate (Frank–Wolfe gap, or ``||grad F||^2 / (2 lambda)``).

    Parameters
    ----------
    problem : Problem
    tol : float, default 1e-9
        Required certified gap, in ``(0, 1e-2]``. Typically the gap reached is far smaller:
        around ``1e-13``–``1e-11`` for the smooth losses, mostly the floating-point allowance.
    cache : bool, str or path-like, default True
        ``True``: cache in ``$DPSOLVE_CACHE`` if set, else ``$XDG_CACHE_HOME/dpsolve`` or
        ``~/.cache/dpsolve``. ``False``: no caching. A str or path: that directory. Entries are
        ``.npz`` files named by a sha256 of ``X``, ``y``, ``problem.describe()``, ``tol`` and
        the format version, written atomically. A cached ``theta`` is used only after its
        certificate has been recomputed (O(np)) and found ``<= tol``. Otherwise the problem is
        solved again and the file overwritten.

    Returns
    -------
    ReferenceSolution
        ``theta`` (in C, read-only), ``value = F(theta)``, ``gap``, ``status``, ``solver``,
        ``time`` and ``cached``.

    Raises
    ------
    TypeError
        If ``problem`` is not a :class:`~dpsolve.Problem`, or ``cache`` has the wrong type.
    ValueError
        If ``tol`` is not in ``(0, 1e-2]``.

    Warns
    -----
    RuntimeWarning
        If the certified gap stays above ``tol``. The result is then returned with status suffix
        ``"+gap_above_tol"`` and not cached. A warning is also issued if the cache cannot be
        written.

    Notes
    -----
    The cache files hold ``theta`` and, for the hinge loss, the solver's dual point. Both are
    functions of the private data. Like the data, they must stay with the data holder.
    """
    _check_problem(problem)
    tol = _check_tol(tol)
    directory = _cache_dir(cache)
    key = path = None
    if directory is not None:
        key = _cache_key(problem, tol)
        path = directory / f"reference-{key}.npz"
        if path.exists():
            hit = _load_cached(path, key, problem, tol)
            if hit is not None:
                return hit
    solution, alpha = _solve(problem, tol)
    if directory is not None and solution.gap <= tol:
        _store(directory, path, key, solution, alpha)
    return solution


def excess_risk(problem, theta, reference=None):
    """Excess risk ``F(theta) - F(theta_hat)`` against a certified reference solution.

    Since ``F(theta*) in [reference.value - reference.gap, reference.value]``, the true excess
    risk ``F(theta) - F(theta*)`` lies in ``[returned, returned + reference.gap]``
    (docs/conventions.md).

    Parameters
    ----------
    problem : Problem
    theta : array_like, shape ``problem.theta_shape``
        Any point of R^p (R^{p x K} for multinomial). It may lie outside C, as output
        perturbation can release such points.
        ``F`` is evaluated there as it is: the constraint is not applied.
    reference : ReferenceSolution, optional
        From :func:`reference_minimizer` for this problem. It is computed (with the default
        tolerance and cache) when omitted.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``problem`` is not a Problem or ``reference`` is not a ReferenceSolution.
    ValueError
        If ``theta`` has the wrong shape or non-finite entries, or if ``reference`` does not
        belong to ``problem`` (wrong dimension, or its value does not match ``F`` at its
        ``theta``).
    """
    _check_problem(problem)
    value = problem.objective(theta)
    if reference is None:
        reference = reference_minimizer(problem)
    elif not isinstance(reference, ReferenceSolution):
        raise TypeError("reference must be a ReferenceSolution from reference_minimizer, got "
                        f"{type(reference).__name__}")
    ref_theta = np.asarray(reference.theta)
    if ref_theta.shape != problem.theta_shape:
        raise ValueError(f"reference does not belong to this problem: its theta has shape "
                         f"{ref_theta.shape}, not {problem.theta_shape}")
    if abs(problem.objective(ref_theta) - reference.value) > 1e-9 * (1.0 + abs(reference.value)):
        raise ValueError("reference does not belong to this problem: F(reference.theta) "
                         "differs from reference.value")
    return float(value - reference.value)
