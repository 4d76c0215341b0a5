"""The certificate: a true upper bound on ``F(theta) - F(theta*)``, rounding included.

Margin losses: the Fenchel duality gap ``F(theta) - D(alpha)``, each record's loss and conjugate
terms (and their rounding) from the loss object (:meth:`dpsolve.losses.Loss.certificate_terms`).
Multinomial: the gradient certificate (Frank–Wolfe gap over the ball, or
``||grad F||^2 / (2 lambda)``). Both add an explicit allowance for floating-point rounding
(docs/reference_minimizer.md).

X is read once, in blocks of rows: every per-record quantity lives only for its block (the memory
beyond X is a few blocks and p-vectors), ``|X|`` is never formed (the rounding of a dot product
is bounded through the row norms), and the sums over the n records are two-level: a block sum
(any order, at most ``BLOCK_ROWS`` terms) and then a sum of the blocks' results. Any summation
order of k terms is within ``gamma_{k-1} sum |a_i|`` of the exact sum, so a two-level sum is
within ``gamma_{m + k/m}``, not ``gamma_k`` — at n = 10^6 that is ``1e-12`` rather than
``2e-10`` relative, which is what lets a gap of 1e-9 be certified there.
"""
import math

import numpy as np
from scipy import sparse

from .._ordered_linalg import BLOCK_ROWS, row_blocks
from .._row_ops import as_float64, row_max_norms, row_norms

_EPS = np.finfo(np.float64).eps
# A norm may exceed R by this relative amount and still count as "in C up to rounding".
BALL_SLACK = 1e-12


def gamma(k):
    """Classical rounding-error factor ``gamma_k = k u / (1 - k u)`` (taken with u = eps,
    twice the unit roundoff, for a margin)."""
    k = float(k)
    return k * _EPS / max(1.0 - k * _EPS, 0.5)


def sum_terms(n):
    """``k`` such that a two-level sum of ``n`` terms is within ``gamma_k sum |a_i|``."""
    return min(n, BLOCK_ROWS) + -(-n // BLOCK_ROWS) + 2


def _problem_sum_terms(problem):
    """:func:`sum_terms` of the problem's two-level sums as they run: the rows are cut into
    blocks part by part (``problem.rows.part_rows``: all the rows in memory, each chunk of
    rows in chunks), at most ``BLOCK_ROWS`` rows each, ``sum_c ceil(n_c / BLOCK_ROWS)`` of
    them; with one part, ``sum_terms(n)``."""
    rows = problem.rows.part_rows
    return max(min(r, BLOCK_ROWS) for r in rows) + sum(-(-r // BLOCK_ROWS) for r in rows) + 2


def _block_parts(problem, parts_of, alpha=None, **kwargs):
    """``parts_of(X, y, alpha, **kwargs)`` (the per-block parts of the rows X, y, by
    :func:`row_blocks`) over all the rows (``problem.rows.map_parts``: in memory at once; in
    chunks on each chunk's worker), the parts' lists joined in order (the blocks, in
    order)."""
    per_part = problem.rows.map_parts(parts_of, alpha, **kwargs)
    joined = {key: [] for key in per_part[0]}
    for parts in per_part:
        for key, values in parts.items():
            joined[key].extend(values)
    return joined


def _product_gamma(Xb):
    """``gamma_{k+1}`` for each row's product ``x_i^T theta``, k the terms it adds: a CSR
    row's stored entries (SciPy's product sums only those; one factor per row), else p."""
    if sparse.issparse(Xb) and Xb.format == "csr":
        k = np.diff(Xb.indptr).astype(np.float64) + 1.0
        return k * _EPS / (1.0 - k * _EPS)
    return gamma(Xb.shape[1] + 1)


def _row_bounds(Xb, theta):
    """For one block: the row norms, enlarged by ``1 + gamma_{p+2}`` to cover their own
    rounding, and the bound ``gamma_{k+1} ||x_i|| ||theta_k||`` on ``|fl(z_ik) - z_ik|``, with
    k the terms the row's product adds (p, or a CSR row's stored entries).

    Any order of a dot product of k terms is within ``gamma_{k+1} |x_i|^T |theta|`` of the
    exact margin, and ``|x_i|^T |theta| <= ||x_i|| ||theta||`` (Cauchy–Schwarz), so ``|X|``
    is never formed. On a wide CSR X (p = 10^5, 200 entries a row) k rather than p keeps the
    allowance (about ``gamma_k ||x_i|| R`` per record) a thousand times below the gap.
    """
    p = Xb.shape[1]
    norms = row_norms(Xb) * (1.0 + gamma(p + 2))
    theta_norms = np.sqrt(np.sum(theta * theta, axis=0)) * (1.0 + gamma(p + 2))
    factor = _product_gamma(Xb)
    if theta.ndim == 2:
        return norms, (factor * norms)[:, None] * theta_norms
    return norms, factor * norms * theta_norms


def _l1_row_bounds(Xb, theta):
    """:func:`_row_bounds` for the l1 ball (a vector theta), tighter: the margin's rounding
    within ``gamma_{k+1} |x_i|^T |theta|`` with k the terms the product adds (a CSR row's
    stored entries, else p), and ``|x_i|^T |theta| <= min(||x_i||_2 ||theta||_2,
    ||x_i||_inf ||theta||_1)`` (Cauchy-Schwarz, Hoelder). Also the rows' l-inf norms."""
    p = Xb.shape[1]
    norms = row_norms(Xb) * (1.0 + gamma(p + 2))
    terms = (np.diff(Xb.indptr).astype(np.float64) if hasattr(Xb, "indptr")
             else np.full(Xb.shape[0], float(p)))
    grow = 1.0 + gamma(p + 2)
    magnitude = np.minimum(norms * (math.sqrt(float(np.sum(theta * theta))) * grow),
                           row_max_norms(Xb) * (float(np.sum(np.abs(theta))) * grow))
    k = terms + 1.0
    return norms, k * _EPS / (1.0 - k * _EPS) * magnitude, row_max_norms(Xb)


def _total(parts):
    """The sum of the blocks' results (the second level of a two-level sum)."""
    return np.sum(parts, axis=0)


def feasible_alpha(problem, alpha):
    """Map ``alpha`` into the domain of the conjugates: ``b = alpha * y in [0, 1]`` for the
    classification losses, huber_hinge included (``alpha = b y``); any real vector for the
    squared loss."""
    alpha = np.asarray(alpha, dtype=np.float64)
    if alpha.shape != (problem.n,):
        raise ValueError(f"alpha must have shape ({problem.n},), got {alpha.shape}")
    if not np.all(np.isfinite(alpha)):
        raise ValueError("alpha contains NaN or infinite values")
    # y is exactly +-1, so b * y is exact and b = alpha * y is recovered exactly.
    return np.array(problem.loss_object.clip_dual(alpha, problem.y), copy=True)


def _record_sums(problem, theta, alpha):
    """The one pass over X of :func:`duality_gap`, by blocks of rows (two-level sums).

    Returns
    -------
    total : dict of float
        Over the records: the losses ``phi`` and ``|phi|``, their rounding bounds, the
        conjugate terms and their magnitudes, and ``sum_i ||x_i|| |alpha_i|``.
    xa_sum : ndarray of shape (p,)
        ``X^T alpha``.
    conj_extra : float
        The loss's extra conjugate allowance (of the last block; 0 without rows).
    """
    kwargs = {"l1": True} if problem.constraint == "l1" else {}
    parts = _block_parts(problem, _record_parts, alpha, theta=theta, loss=problem.loss_object,
                         **kwargs)
    xa_parts, extras = parts.pop("xa"), parts.pop("conj_extra")
    total = {key: float(_total(values)) for key, values in parts.items()}
    return total, _total(xa_parts), (extras[-1] if extras else 0.0)


def _record_parts(X, y, alpha, theta, loss, l1=False):
    """The per-block parts of :func:`_record_sums` over the rows X, y (alpha: theirs, or
    None), by blocks of rows; module level, to run where a chunk of rows lives. ``l1``: the
    l1 ball's tighter margin bounds (:func:`_l1_row_bounds`) and ``sum_i ||x_i||_inf
    |alpha_i|``."""
    sums = {key: [] for key in ("phi", "abs_phi", "phi_err", "conj", "conj_mag", "xa_norm",
                                "xa", "conj_extra") + (("xa_inf",) if l1 else ())}
    for s in row_blocks(X.shape[0]):
        Xb, yb = as_float64(X[s]), y[s]         # float32 X: this block in float64
        zb = Xb @ theta
        if l1:
            norms, z_err, inf_norms = _l1_row_bounds(Xb, theta)
        else:
            norms, z_err = _row_bounds(Xb, theta)
        if alpha is None:
            ab = loss.clip_dual(-loss.derivatives(zb, yb), yb)
        else:
            ab = alpha[s]
        phi, phi_err, conj, conj_mag, conj_extra = loss.certificate_terms(zb, z_err, ab, yb)
        sums["phi"].append(phi.sum())
        sums["abs_phi"].append(np.abs(phi).sum())
        sums["phi_err"].append(np.sum(phi_err))
        sums["conj"].append(conj.sum())
        sums["conj_mag"].append(conj_mag.sum())
        sums["xa_norm"].append(np.sum(norms * np.abs(ab)))
        if l1:
            sums["xa_inf"].append(np.sum(inf_norms * np.abs(ab)))
        sums["xa"].append(Xb.T @ ab)
        sums["conj_extra"].append(conj_extra)
    return sums


def _regulariser_conjugate(nv, lam, R):
    """``h*(v)`` and a bound on ``||grad h*||`` at ``||v|| = nv`` for ``h = (lam/2)||.||^2``
    (plus the indicator of the ball of radius R, if given).

    Parameters
    ----------
    nv : float
        ``||v||``.
    lam : float
    R : float or None

    Returns
    -------
    hstar, grad_hstar : float
    """
    if R is None:
        return nv * nv / (2.0 * lam), nv / lam
    if lam > 0.0 and nv <= lam * R:
        return nv * nv / (2.0 * lam), R
    return R * nv - 0.5 * lam * R * R, R


def _l1_regulariser_conjugate(v, lam, R):
    """``h*(v)`` for ``h = (lam/2)||.||_2^2 + iota_{||.||_1 <= R}``, and R, a bound on
    ``||grad h*||_1`` (hence on ``|h*(v) - h*(v')| / ||v - v'||_2``).

    ``h*(v) = max_{||t||_1 <= R} <v, t> - (lam/2)||t||^2``. Lagrangian duality on the l1
    constraint gives ``h*(v) = min_{tau >= 0} tau R + sum_j (|v_j| - tau)_+^2 / (2 lam)``, the
    minimum at the threshold of the projection of v onto the l1 ball of radius ``lam R`` (0 when
    ``||v||_1 <= lam R``). Every ``tau >= 0`` gives an upper bound on ``h*``, so the rounding in
    tau costs nothing: the dual value stays a lower bound. ``lam = 0``: ``R ||v||_inf``.
    """
    a = np.abs(v)
    if lam == 0.0:
        return R * float(np.max(a, initial=0.0)), R
    from .._projection import _l1_threshold
    tau = _l1_threshold(a, lam * R) if float(np.sum(a)) > lam * R else 0.0
    excess = np.maximum(a - tau, 0.0)
    return tau * R + float(np.sum(excess * excess)) / (2.0 * lam), R


def duality_gap(problem, theta, alpha=None):
    """``F(theta) - D(alpha)`` plus a floating-point allowance, for a feasible ``alpha``
    (``None``: the default dual point ``-loss'(z)``, clipped to the domain).

    ``F`` is evaluated here (not by the kernels) so that every term's rounding error can be
    accounted for. The allowance follows the standard bounds for dot products and sums
    (``|fl(sum a_i) - sum a_i| <= gamma_k sum |a_i|``, k the height of the summation tree),
    doubled for safety. One pass over X, by blocks of rows: every per-record quantity lives
    only for its block, so the memory beyond X is a few blocks and p-vectors.

    Over the l1 ball (``constraint="l1"``) h's conjugate is
    :func:`_l1_regulariser_conjugate`; with ``lam = 0`` and the default dual point the gap is
    the Frank-Wolfe gap ``<g, theta> + R ||g||_inf`` (Fenchel-Young holds with equality for
    each record), and with ``lam > 0`` it is at most that.
    """
    n, p = problem.n, problem.p
    lam, R = problem.reg, problem.radius
    gn = gamma(_problem_sum_terms(problem))
    total, xa_sum, conj_extra = _record_sums(problem, theta, alpha)

    sq = float(np.dot(theta, theta))
    h = 0.5 * lam * sq
    v = xa_sum / n
    nv = float(np.linalg.norm(v))
    if problem.constraint == "l1":
        hstar, grad_hstar = _l1_regulariser_conjugate(v, lam, R)
    else:
        hstar, grad_hstar = _regulariser_conjugate(nv, lam, R)

    mean_phi = total["phi"] / n
    mean_conj = total["conj"] / n
    primal = mean_phi + h
    dual = -mean_conj - hstar
    gap = primal - dual

    # Floating-point allowance. |X|^T |alpha| has norm at most sum_i ||x_i|| |alpha_i|.
    mean_abs_phi = total["abs_phi"] / n
    mean_abs_conj = total["conj_mag"] / n
    v_err = gn * total["xa_norm"] * (1.0 + gn) / n + _EPS * nv
    if problem.constraint == "l1":
        # h* is R-Lipschitz in l-inf: the error of v in l-inf, through |x_ij| <= ||x_i||_inf
        v_err = (gn * total["xa_inf"] * (1.0 + gn) / n
                 + _EPS * float(np.max(np.abs(v), initial=0.0)))
    if R is None:
        grad_hstar = (nv + v_err) / lam   # bounds ||grad h*|| between v and fl(v)
    # (with a constraint, h* is R-Lipschitz everywhere)
    allowance = (
        total["phi_err"] / n * (1.0 + gn) + 4.0 * _EPS * mean_abs_phi   # z errors, evaluation
        + gn * (mean_abs_phi + mean_abs_conj)                          # the two means
        + 4.0 * _EPS * mean_abs_conj + conj_extra                      # conjugate evaluation
        + gamma(p + 4) * (abs(h) + abs(hstar))                         # ||theta||^2, ||v||^2
        + grad_hstar * v_err                                           # error in v through h*
        + 4.0 * _EPS * (abs(primal) + abs(dual) + mean_abs_phi + mean_abs_conj)  # final sums
    )
    if not math.isfinite(gap) or not math.isfinite(allowance):
        return math.inf
    return max(0.0, gap + 2.0 * allowance)


def gradient_gap(problem, theta):
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
    ``(K + 8) eps``; and the two-level sums of ``X^T D``. Then
    ``<G, theta> + R||G|| <= <g, theta> + R||g|| + E (||theta|| + R)``, and
    ``||G|| <= ||g|| + E``. The allowance also covers the rounding in evaluating ``F(theta)``
    (the loss is sqrt(2)-Lipschitz in each row's logits), so that ``value - gap`` of a
    ReferenceSolution stays below ``F(theta*)``. Like :func:`duality_gap`, the allowance is
    doubled.
    """
    n = problem.n
    lam, R = problem.reg, problem.radius
    K = problem.n_classes
    d = problem.p * K
    gn = gamma(_problem_sum_terms(problem))
    abs_theta = np.abs(theta)
    sums = _block_parts(problem, _gradient_parts, theta=theta, loss=problem.loss_object)
    xd_parts = sums.pop("xd")
    total = {key: float(_total(parts)) for key, parts in sums.items()}
    g = _total(xd_parts) / n + lam * theta
    # |X|^T |D| and |X|^T D_err have Frobenius norms at most sum_i ||x_i|| ||.||_i
    E = (gn * total["xd_norm"] * (1.0 + gn) / n + total["xderr_norm"] / n * (1.0 + gn) ** 2
         + _EPS * (lam * float(np.linalg.norm(theta)) + float(np.linalg.norm(g))))
    norm_g = float(np.linalg.norm(g))
    norm_theta = float(np.linalg.norm(theta))

    bounds = []
    if R is not None:
        inner = float(np.dot(g.reshape(-1), theta.reshape(-1)))
        fw = inner + R * norm_g
        fw_err = (gamma(d + 2) * (float(np.sum(np.abs(g) * abs_theta)) + R * norm_g)
                  + E * (norm_theta * (1.0 + gamma(d + 2)) + R) + 4.0 * _EPS * abs(fw))
        bounds.append(fw + 2.0 * fw_err)
    if lam > 0.0:
        G = norm_g * (1.0 + gamma(d + 2)) + E
        bounds.append(G * G / (2.0 * lam) * (1.0 + 8.0 * _EPS))

    # Rounding in F(theta) as problem.objective computes it.
    reg_term = 0.5 * lam * norm_theta * norm_theta
    mean_abs_values = total["abs_values"] / n
    value_err = (total["value_err"] / n * (1.0 + gn)
                 + gamma(n + 2) * mean_abs_values          # np.mean in problem.objective
                 + gamma(d + 4) * reg_term
                 + 4.0 * _EPS * (mean_abs_values + reg_term))
    gap = min(bounds) + 2.0 * value_err
    if not math.isfinite(gap):
        return math.inf
    return max(0.0, gap)


def default_gap(problem, theta):
    """The certificate at the default dual point ``alpha = -loss'`` (margin losses) or the
    gradient certificate (multinomial)."""
    if problem.loss_object.is_multinomial:
        return gradient_gap(problem, theta)
    return duality_gap(problem, theta)


def _gradient_parts(X, y, alpha, theta, loss):
    """The per-block parts of :func:`gradient_gap` over the rows X, y (alpha unused), by
    blocks of rows; module level, to run where a chunk of rows lives."""
    K = theta.shape[1]
    kernel_err = (K + 8) * _EPS
    sums = {key: [] for key in ("xd_norm", "xderr_norm", "abs_values", "value_err", "xd")}
    for s in row_blocks(X.shape[0]):
        Xb, yb = as_float64(X[s]), y[s]     # float32 X: this block in float64
        zb = Xb @ theta
        norms, z_err = _row_bounds(Xb, theta)
        z_row_err = np.linalg.norm(z_err, axis=1)                            # per record, L2
        D = loss.derivatives(zb, yb)
        # per record, the L2 norm over the K entries of the error in D
        D_err = 0.5 * z_row_err + kernel_err * math.sqrt(K)
        values = loss.values(zb, yb)
        sums["xd"].append(Xb.T @ D)
        sums["xd_norm"].append(np.sum(norms * np.linalg.norm(D, axis=1)))
        sums["xderr_norm"].append(np.sum(norms * D_err))
        sums["abs_values"].append(np.abs(values).sum())
        sums["value_err"].append(np.sum(np.sqrt(2.0) * z_row_err
                                        + kernel_err * (1.0 + np.abs(values))))
    return sums
