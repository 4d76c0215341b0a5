"""The reference minimiser over the l1 ball ``{||theta||_1 <= R}`` (``constraint="l1"``).

Two methods, alternated until the certificate (:func:`._certificate.duality_gap` with the l1
ball's conjugate: the Frank-Wolfe gap ``<g, theta> + R ||g||_inf`` when ``lambda = 0``) is at
most ``tol``:

1. **Accelerated projected gradient** (FISTA, Beck-Teboulle 2009) with the exact projection
   onto the l1 ball (:func:`dpsolve._projection.project_l1_ball`; Duchi-Shalev-Shwartz-Singer-
   Chandra 2008), a backtracked step and adaptive restart (O'Donoghue-Candes 2015). It finds
   the support and the signs of the minimiser; each step is one product by X and one by X^T,
   the margins of the extrapolated point formed from those of the iterates (they are linear).
2. **Active-set Newton** on that support: with the signs s fixed, the minimiser over the face
   ``{theta_S : s^T theta_S = R}`` (or of the support's free problem when the ball is not
   active), by Newton's method with the exact Hessian ``X_S^T D X_S / n + lambda I`` of the
   support's columns and one equality constraint, steps shortened where an entry would cross
   zero (it then leaves the support). It converges quadratically once the support is right;
   if the certificate then still falls short, FISTA resumes from the polished point.

The products by X run on NumPy/SciPy (BLAS for dense X): the iterates are not the same bits on
every machine, but the point returned is certified whatever they are. The losses must be
smooth (logistic, squared, huber_hinge): the hinge loss over the l1 ball is refused.
"""
import math

import numpy as np
from scipy import sparse

from .._projection import _l1_norm, project_l1_ball
from .._row_ops import as_float64
from ._certificate import duality_gap

#: Supports up to this size are polished by Newton with a dense (|S|+1)^2 KKT system.
MAX_NEWTON_SUPPORT = 2000


class _Data:
    """X (float64, and its transpose for fast products when sparse) and the loss."""

    def __init__(self, problem):
        self.problem = problem
        self.X = as_float64(problem.X)
        self.XT = self.X.T.tocsr() if sparse.issparse(self.X) else self.X.T
        self.columns = self.X.tocsc() if sparse.issparse(self.X) else self.X
        self.y, self.n, self.lam, self.R = problem.y, problem.n, problem.reg, problem.radius
        self.loss = problem.loss_object

    def margins(self, theta):
        return np.asarray(self.X @ theta, dtype=np.float64)

    def value(self, theta, z):
        """``F(theta)`` from the margins ``z``."""
        return (float(np.mean(self.loss.values(z, self.y)))
                + 0.5 * self.lam * float(theta @ theta))

    def gradient(self, theta, z):
        """``grad F(theta)`` from the margins ``z``."""
        d = self.loss.derivatives(z, self.y)
        return np.asarray(self.XT @ d, dtype=np.float64) / self.n + self.lam * theta

    def support_hessian(self, support, z):
        """``X_S^T diag(loss'') X_S / n + lambda I`` on the columns ``support``."""
        w = self.loss.second_derivatives(z, self.y) / self.n
        XS = self.columns[:, support]
        if sparse.issparse(XS):
            H = (XS.T @ XS.multiply(w[:, None]).tocsc()).toarray()
        else:
            H = (XS.T * w) @ XS
        H[np.diag_indices_from(H)] += self.lam
        return H

    def frank_wolfe_gap(self, theta, g):
        """``<g, theta> + R ||g||_inf``, as computed (no rounding allowance): a guide."""
        return float(g @ theta) + self.R * float(np.max(np.abs(g)))


def _power_lipschitz(data, iterations=20):
    """An estimate (from below) of the Lipschitz constant of grad F in l2,
    ``beta_z ||X||_2^2 / n + lambda``, by power iteration on X^T X; the step backtracks from
    it."""
    v = np.random.default_rng(0).standard_normal(data.problem.p)
    v /= np.linalg.norm(v)
    sigma2 = 0.0
    for _ in range(iterations):
        w = np.asarray(data.XT @ (data.X @ v), dtype=np.float64)
        sigma2 = float(np.linalg.norm(w))
        if sigma2 == 0.0:
            break
        v = w / sigma2
    curvature = data.loss.smoothness(1.0)        # the margin's smoothness (row bound 1)
    return max(curvature * sigma2 / data.n + data.lam, 1e-12)


def fista(data, theta, L, max_steps, target):
    """FISTA with backtracking and adaptive restart from ``theta`` (in the ball), for at most
    ``max_steps`` steps or until the Frank-Wolfe gap (read every 10 steps) is below
    ``target``. Returns ``(theta, L)``."""
    R = data.R
    z = data.margins(theta)
    x, zx = theta, z
    y, zy, t = theta, z, 1.0
    for step in range(1, max_steps + 1):
        fy = data.value(y, zy)
        gy = data.gradient(y, zy)
        while True:
            x_new = project_l1_ball(y - gy / L, R)
            z_new = data.margins(x_new)
            diff = x_new - y
            bound = fy + float(gy @ diff) + 0.5 * L * float(diff @ diff)
            if data.value(x_new, z_new) <= bound + 1e-14 * (1.0 + abs(fy)):
                break
            L *= 2.0
        restart = float(gy @ (x_new - x)) > 0.0          # uphill: momentum off
        t_new = 1.0 if restart else 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        beta = 0.0 if restart else (t - 1.0) / t_new
        y = x_new + beta * (x_new - x)
        zy = z_new + beta * (z_new - zx)
        x, zx, t = x_new, z_new, t_new
        if step % 10 == 0:
            if data.frank_wolfe_gap(x, data.gradient(x, zx)) <= target:
                break
            zy = data.margins(y)                            # drop the margins' drift
    return x, L


def _solve_or_least_squares(A, b):
    """``A x = b``, or where A is singular the least-squares solution of least norm.

    The support's Hessian is singular when its columns are dependent (on bag-of-words rows,
    two words that occur in the same documents only): F is then flat along a direction of the
    face, the gradient has no component along it, and the system stays consistent, so the
    least-norm solution is an exact Newton step to one of the minimisers on the face."""
    try:
        x = np.linalg.solve(A, b)
        if np.all(np.isfinite(x)):
            return x
    except np.linalg.LinAlgError:
        pass
    x = np.linalg.lstsq(A, b, rcond=None)[0]
    return x if np.all(np.isfinite(x)) else None


def _kkt_step(H, g, s, r, active):
    """The Newton direction on the support: ``H d = -g`` (free), or with the face's equality
    ``s^T d = r`` and its multiplier nu (``H d + nu s = -g``). Returns ``(d, nu)``, or
    ``(None, None)`` if no finite solution was found."""
    k = g.size
    if not active:
        d = _solve_or_least_squares(H, -g)
        return (None, None) if d is None else (d, 0.0)
    K = np.zeros((k + 1, k + 1))
    K[:k, :k], K[:k, k], K[k, :k] = H, s, s
    sol = _solve_or_least_squares(K, np.concatenate([-g, [r]]))
    if sol is None:
        return None, None
    return sol[:k], float(sol[k])


def _newton_direction(data, theta, z, support):
    """The Newton direction on ``support`` at theta (full length, zero off it), or None where
    it is not a descent direction."""
    s = np.sign(theta[support])
    g = data.gradient(theta, z)[support]
    H = data.support_hessian(support, z)
    active = float(s @ theta[support]) >= data.R * (1.0 - 1e-10)
    d, nu = _kkt_step(H, g, s, 0.0, active)
    if d is not None and active and nu < 0.0:        # the ball's multiplier: not binding
        d, nu = _kkt_step(H, g, s, 0.0, False)
    if d is None or not float(g @ d) < 0.0:
        return None
    full = np.zeros_like(theta)
    full[support] = d
    return full


def _line_search(data, theta, value, d, slope):
    """Projected backtracking along d (Bertsekas 1982's projected Newton): the entries whose
    sign would change are set to 0 (they leave the support, several at once), the point
    projected back onto the ball if it left it; ``(point, value)`` at the first step with
    Armijo's decrease, or None if none decreases F."""
    step = 1.0
    while step > 1e-12:
        trial = theta + step * d
        trial[np.sign(trial) != np.sign(theta)] = 0.0
        if _l1_norm(trial) > data.R:
            trial = project_l1_ball(trial, data.R)
        v = data.value(trial, data.margins(trial))
        if v <= value + 1e-4 * step * slope:
            return trial, v
        step *= 0.5
    return None


def newton_polish(data, theta, max_iter=50):
    """Active-set Newton on the support of ``theta`` (its signs fixed); the point reached
    (``theta`` itself if no step decreased F)."""
    z = data.margins(theta)
    value = data.value(theta, z)
    for _ in range(max_iter):
        support = np.flatnonzero(theta)
        if support.size == 0 or support.size > MAX_NEWTON_SUPPORT:
            break
        d = _newton_direction(data, theta, z, support)
        if d is None:
            break
        found = _line_search(data, theta, value, d, float(data.gradient(theta, z) @ d))
        if found is None:
            break
        improvement = value - found[1]
        theta, value = found
        z = data.margins(theta)
        if improvement <= 1e-16 * (1.0 + abs(value)):
            break
    return theta


def minimise_l1(problem, tol, start=None, max_rounds=40):
    """``(theta, gap)``: FISTA then active-set Newton, alternated until the certificate is at
    most ``tol`` or ``max_rounds`` rounds have run (the gap is then above ``tol``)."""
    data = _Data(problem)
    theta = np.zeros(problem.p) if start is None else project_l1_ball(start, problem.radius)
    L = _power_lipschitz(data)
    best, best_gap = theta, duality_gap(problem, theta)
    steps = 200
    for _ in range(max_rounds):
        if best_gap <= tol:
            break
        theta, L = fista(data, best, L, steps, 0.1 * tol)
        polished = newton_polish(data, theta)
        for candidate in (polished, theta):
            gap = duality_gap(problem, candidate)
            if gap < best_gap:
                best, best_gap = candidate, gap
        steps = min(2 * steps, 5000)
    return best, best_gap
