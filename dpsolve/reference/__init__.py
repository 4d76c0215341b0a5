"""Exact reference minimisers with a certified optimality gap (docs/reference_minimizer.md).

Excess risk ``F(theta) - F(theta*)`` is the quantity every theorem in dpsolve bounds, so it needs
``theta*`` of::

    minimise   (1/n) sum_i loss(<x_i, theta>; y_i) + (lambda/2) ||theta||^2
    subject to ||theta||_2 <= R            (when radius is not None)

:func:`reference_minimizer` computes it in two steps, and a third when they fall short:

1. **A second-order method** (:mod:`._newton`). Smooth losses (logistic, squared,
   huber_hinge, multinomial): Newton's method from ``theta = 0``, with the exact Hessian and
   each step minimising the quadratic model over the ball (a trust-region subproblem, solved
   in the Hessian's eigenbasis) while ``d = p K <= 512``, Newton-CG with the ball's multiplier
   from the secular equation beyond (on CSR X, SciPy's sparse products: wide bag-of-words
   rows, n = 10^4 and p = 10^5, in seconds). Hinge: the same on huber_hinge with a width
   shrinking tenfold per stage, certified as a hinge solution by the huber dual point.
2. **Certificate** (:func:`certificate`, :mod:`._certificate`): the Fenchel duality gap. For
   every dual-feasible ``alpha``, ``D(alpha) <= F(theta*)``, so ``F(theta_hat) - D(alpha)``
   bounds the suboptimality of ``theta_hat`` from above. For the multinomial loss it is a
   gradient certificate instead: the Frank–Wolfe gap over the ball, or
   ``||grad F||^2 / (2 lambda)``, whichever is smaller. The gap includes an explicit allowance
   for floating-point rounding, so it is a true upper bound, not an estimate.
3. **Fallback** (:mod:`._cone`): if the certificate is above ``tol``, the problem is solved as a
   cone program with cvxpy (Clarabel, then SCS), polished by the same Newton method, and the
   better certified point is kept. The tests use the cone solve as an independent cross-check.

Over the l1 ball (``Problem(constraint="l1")``, C = {||theta||_1 <= R}) the solve is
:mod:`._l1`'s: accelerated projected gradient with the exact projection onto the ball, then
active-set Newton on the support found, alternated until the certificate is reached; the
certificate is the same Fenchel duality gap with the l1 ball's conjugate
``h*(v) = min_{tau >= 0} tau R + sum_j (|v_j| - tau)_+^2 / (2 lambda)``, which is the
Frank–Wolfe gap ``<g, theta> + R ||g||_inf`` when ``lambda = 0``. The smooth losses only
(hinge is refused), X in memory (dense or CSR).

Results are cached on disk (:mod:`._cache`). A cached file is never trusted: its certificate is
recomputed before use. It holds theta-hat and nothing per record: a hinge solution's dual point
(whose signs are the labels) is rebuilt from theta-hat and the data when the file is read.
"""
import math
import time as _time
import warnings
from dataclasses import dataclass

import numpy as np

from .. import _validation
from .._ordered_linalg import one_blas_thread
from ..problem import Problem
from . import _cache
from ._certificate import BALL_SLACK, default_gap, duality_gap, feasible_alpha
from ._cone import cone_solve as _cone_solve
from ._l1 import minimise_l1
from ._newton import _blas_margins, _hinge_active_set
from ._newton import center, hinge_by_smoothing, minimise_smooth, project

__all__ = ["ReferenceSolution", "certificate", "reference_minimizer", "excess_risk"]

#: The methods :func:`reference_minimizer` accepts.
METHODS = ("auto", "newton", "cvxpy")


@dataclass(frozen=True, eq=False)
class ReferenceSolution:
    """A certified approximate minimiser of ``F`` over C (docs/conventions.md).

    Attributes
    ----------
    theta : ndarray, shape ``problem.theta_shape``
        Read-only copy of the solution ``theta_hat``, shape (p,) or (p, K) for multinomial. It
        lies in C: ``||theta_hat||_2 <= R`` (the Frobenius norm for multinomial;
        ``||theta_hat||_1 <= R`` with ``constraint="l1"``).
    value : float
        ``F(theta_hat)`` as computed by ``problem.objective``.
    gap : float
        Certified upper bound on ``F(theta_hat) - F(theta*)``: the certificate of
        :func:`certificate` (Fenchel duality gap; gradient certificate for multinomial),
        including its floating-point allowance. Hence ``F(theta*) in [value - gap, value]``.
    status : str
        How the solution was obtained, e.g. ``"optimal"`` (cone solver alone),
        ``"optimal"`` with ``solver="NEWTON"`` (dpsolve's second-order method alone),
        ``"optimal_inaccurate+polished"`` (cone solver's result refined by Newton polishing),
        ``"failed+polished"`` (both cone solvers failed; Newton from ``theta = 0``). The suffix
        ``"+gap_above_tol"`` means that the requested tolerance was not reached (a warning is
        also issued, and the result is not cached).
    solver : str
        ``"NEWTON"`` (the second-order method of :mod:`._newton`), ``"FISTA+NEWTON"`` (the l1
        ball's, :mod:`._l1`), ``"CLARABEL"`` or ``"SCS"``
        (the cone solver whose result was used), or ``"NONE"`` if both cone solvers failed.
    time : float
        Seconds spent solving: the second-order method, and the cvxpy call (canonicalisation
        and solve) plus polishing when it ran. Cache
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


def _refuse_l1(problem):
    """Over the l1 ball: the smooth losses, with X in memory (:mod:`._l1`)."""
    if problem.constraint != "l1":
        return
    if not problem.loss_object.smooth:
        raise ValueError(f"reference_minimizer does not take loss={problem.loss!r} with "
                         "constraint='l1' (its certified solve over the l1 ball is for the "
                         "smooth losses: logistic, squared, huber_hinge); huber_hinge with a "
                         "small huber_width is within huber_width/4 of the hinge loss")
    if not problem.rows.random_access:
        raise ValueError("reference_minimizer with constraint='l1' needs X in memory (dense "
                         "or CSR), not in chunks of rows")


def _l1_norm_of(theta):
    return float(np.sum(np.abs(theta)))


def _check_tol(tol):
    return _validation.check_real(tol, "tol", low=0.0, high=1e-2, high_inclusive=True)


def _check_in_ball(problem, theta):
    if problem.radius is None:
        return
    norm = (_l1_norm_of(theta) if problem.constraint == "l1"
            else float(np.linalg.norm(theta)))
    if norm > problem.radius * (1.0 + BALL_SLACK):
        raise ValueError(
            f"theta lies outside the constraint set: ||theta||{'_1' if problem.constraint == 'l1' else ''} = "
            f"{norm:.17g} > radius = "
            f"{problem.radius:g}; project it onto the ball first (the certificate bounds the "
            "suboptimality of feasible points)"
        )


@one_blas_thread()
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
    is. The gap then vanishes at ``theta*`` for the smooth losses. For the hinge loss, pass a
    better dual point as ``alpha`` (:func:`reference_minimizer` caches the one it found). For
    huber_hinge the default is ``b_i = clip((1 + w - y_i z_i) / (2w), 0, 1)``.

    For the multinomial loss (``theta`` of shape (p, K), smooth) the certificate is the gradient
    bound of docs/conventions.md instead, with ``g = grad F(theta)`` and Frobenius norms: the
    Frank–Wolfe gap ``<g, theta> + R ||g||`` over the ball, or ``||g||^2 / (2 lambda)`` by
    strong convexity when ``lambda > 0``, whichever is smaller.
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
        ``(p + 4096 + n/4096) eps`` times the magnitudes of the summed terms (X is read in
        blocks of 4,096 rows and every sum over the records is two-level). It is at least 0, and it is an
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
    if alpha is not None and problem.loss_object.is_multinomial:
        raise ValueError("the multinomial certificate is a gradient certificate: it takes no "
                         "dual point alpha")
    best = default_gap(problem, theta)
    if alpha is not None:
        best = min(best, duality_gap(problem, theta, feasible_alpha(problem, alpha)))
    return best


# -- public API ------------------------------------------------------------------------------
def _second_order(problem, tol):
    """Step 1: ``(theta, alpha, gap)`` from the second-order methods, started at 0."""
    start = np.zeros(problem.theta_shape)
    if not problem.loss_object.smooth:        # hinge: by huber_hinge smoothing
        return hinge_by_smoothing(problem, start, tol)
    theta, gap = minimise_smooth(problem, start, tol)
    return theta, None, gap


def _cone_fallback(problem, tol):
    """Step 3: ``(theta, alpha, gap, status, solver)`` from the cone solve, polished by Newton
    (smooth losses) and certified."""
    theta, alpha, status, solver = _cone_solve(problem, tol)
    if theta is None:
        theta = np.zeros(problem.theta_shape)  # both solvers failed: polish from the origin
    theta = project(problem, center(problem, theta))
    gap = default_gap(problem, theta)
    if alpha is not None:
        alpha = feasible_alpha(problem, alpha)
        gap_alpha = duality_gap(problem, theta, alpha)
        if gap_alpha > gap:
            alpha = None                      # the subgradient dual point is better
        gap = min(gap, gap_alpha)
    if not problem.loss_object.smooth:
        if not gap <= tol:                     # smoothing continuation from the cone's point
            smoothed, smoothed_alpha, smoothed_gap = hinge_by_smoothing(problem, theta, tol)
            if smoothed_gap < gap:
                theta, alpha, gap = smoothed, smoothed_alpha, smoothed_gap
                status += "+smoothed"
    elif status != "optimal" or gap > tol * 1e-3:
        polished, gap_polished = minimise_smooth(problem, theta, tol)
        if gap_polished < gap:
            theta, gap, alpha = polished, gap_polished, None
            status += "+polished"
    return theta, alpha, gap, status, solver


def _refuse_chunked(problem, method):
    """Rows in chunks: only Newton on a smooth loss runs chunk by chunk (margins, gradients,
    Hessians and the certificate as per-chunk sums); the hinge loss's active-set polish and
    the cone solve need X whole."""
    if problem.rows.random_access:
        return
    if method == "cvxpy":
        raise ValueError("reference_minimizer with method='cvxpy' needs X in memory (the cone "
                         "program holds every row); X in chunks of rows takes method='auto' or "
                         "'newton', for the smooth losses")
    if not problem.loss_object.smooth:
        raise ValueError(f"reference_minimizer does not take loss={problem.loss!r} with X in "
                         "chunks of rows (its active-set polish and cone fallback need X in "
                         "memory); the smooth losses (logistic, squared, huber_hinge, "
                         "multinomial) run chunk by chunk")


def _solve_l1(problem, tol, method):
    """The l1 ball's solve (:mod:`._l1`): ``(theta, alpha, gap, status, solver)``; the cone
    solve (``method="cvxpy"``, or ``"auto"`` when the gap stays above tol) warm-starts it."""
    theta, gap, status, solver = None, math.inf, "optimal", "FISTA+NEWTON"
    if method in ("auto", "newton"):
        theta, gap = minimise_l1(problem, tol)
    if method == "cvxpy" or (method == "auto" and not gap <= tol):
        cone, _, cone_status, cone_solver = _cone_solve(problem, tol)
        polished, polished_gap = minimise_l1(problem, tol, start=cone)
        if polished_gap < gap or theta is None:
            theta, gap = polished, polished_gap
            status, solver = cone_status + "+polished", cone_solver
    return theta, None, gap, status, solver


def _solve(problem, tol, method):
    start = _time.perf_counter()
    if problem.constraint == "l1":
        theta, alpha, gap, status, solver = _solve_l1(problem, tol, method)
        return _solution(problem, tol, start, theta, gap, status, solver), alpha
    theta = alpha = None
    gap = math.inf
    if method in ("auto", "newton"):
        try:
            theta, alpha, gap = _second_order(problem, tol)
        except (np.linalg.LinAlgError, ArithmeticError, ValueError):
            if method == "newton" or not problem.rows.random_access:
                raise
            theta = alpha = None                 # the cone solve below takes over
        status, solver = "optimal", "NEWTON"
    if not problem.rows.random_access and method == "auto" and not gap <= tol:
        # no cone fallback: it would need X in memory
        raise RuntimeError(f"reference_minimizer's Newton method reached a certified gap of "
                           f"{gap:.3g}, above tol={tol:g}, on X in chunks of rows, where the "
                           f"cone fallback (which needs X in memory) cannot run ({problem!r})")
    if method == "cvxpy" or (method == "auto" and not gap <= tol):
        cone = _cone_fallback(problem, tol)
        if cone[2] < gap or theta is None:
            theta, alpha, gap, status, solver = cone
    return _solution(problem, tol, start, theta, gap, status, solver), alpha


def _solution(problem, tol, start, theta, gap, status, solver):
    """The ReferenceSolution of a solve begun at ``start`` (warning if the gap is above
    tol)."""
    elapsed = _time.perf_counter() - start
    if not gap <= tol:
        status += "+gap_above_tol"
        warnings.warn(f"reference_minimizer reached a certified gap of {gap:.3g}, above "
                      f"tol={tol:g} ({problem!r})", RuntimeWarning, stacklevel=4)
    theta = np.array(theta, copy=True)
    theta.flags.writeable = False
    return ReferenceSolution(theta=theta, value=problem.objective(theta), gap=float(gap),
                             status=status, solver=solver, time=elapsed, cached=False)


#: The huber_hinge widths of :func:`._newton.hinge_by_smoothing`'s stages: the pieces a cached
#: hinge theta is read with when its dual point is rebuilt.
_HINGE_WIDTHS = tuple(0.5 * 10.0 ** -k for k in range(0, 12))


def _hinge_dual_point(problem, theta, tol):
    """A dual point certifying the hinge solution ``theta``, rebuilt from theta and the data.

    The cache keeps no dual point (its signs are the labels), and the default one, the
    subgradient at theta, rarely certifies a hinge minimiser: the records on the margin need
    their multipliers. For each smoothing width w (large to small), two candidates, as the
    solve found them: the huber_hinge dual point at theta, ``b_i = clip((1 + w - y_i z_i) /
    (2 w), 0, 1)``, and the multipliers of the active-set solve on the pieces theta's margins
    give at w (:func:`._newton._hinge_active_set`). Either is dual-feasible once clipped, so
    either gives a valid bound for theta; the best is kept, stopping once it is at the
    rounding floor (``1e-3 tol``). A few passes over X per width, no Newton solve.

    Returns
    -------
    ndarray or None
        The dual point with the smallest gap, or None if none was finite.
    """
    margins = problem.y * _blas_margins(problem.X, theta)
    best, best_gap = None, math.inf
    for width in _HINGE_WIDTHS:
        candidates = [np.clip((1.0 + width - margins) / (2.0 * width), 0.0, 1.0) * problem.y]
        polished = _hinge_active_set(problem, theta, width)
        if polished is not None:
            candidates.append(polished[1])
        for alpha in candidates:
            alpha = feasible_alpha(problem, alpha)
            gap = duality_gap(problem, theta, alpha)
            if gap < best_gap:
                best, best_gap = alpha, gap
        if best_gap <= 1e-3 * tol:
            break
    return best


def _load_cached(path, key, problem, tol):
    """A re-certified ReferenceSolution from ``path``, or None if it is missing, unreadable,
    from another problem or not certified to ``tol``."""
    found = _cache.read(path, key)
    if found is None:
        return None
    theta, status, solver, elapsed = found
    try:
        if theta.shape != problem.theta_shape or not np.all(np.isfinite(theta)):
            return None
        norm = _l1_norm_of(theta) if problem.constraint == "l1" else np.linalg.norm(theta)
        if problem.radius is not None and norm > problem.radius:
            return None
        gap = certificate(problem, theta)
        if not gap <= tol and problem.loss == "hinge":
            # the file holds no dual point (see _cache): rebuild one from theta
            alpha = _hinge_dual_point(problem, theta, tol)
            if alpha is not None:
                gap = certificate(problem, theta, alpha)
    except Exception:              # noqa: BLE001 - any invalid file is re-solved
        return None
    if not gap <= tol:
        return None
    theta.flags.writeable = False
    return ReferenceSolution(theta=theta, value=problem.objective(theta), gap=gap,
                             status=status, solver=solver, time=elapsed, cached=True)


@one_blas_thread()
def reference_minimizer(problem, *, tol=1e-9, cache=True, method="auto"):
    """Certified minimiser of ``F`` over C (docs/reference_minimizer.md).

    Solves ``min_{||theta|| <= R} (1/n) sum_i loss(<x_i, theta>; y_i) + (lambda/2)||theta||^2``
    by a second-order method of dpsolve's own (Newton with the exact Hessian, or Newton-CG for
    ``p K > 512``; hinge by smoothing continuation on huber_hinge), falling back to a cone solve
    with cvxpy when the certificate is not reached (see the module docstring). The result is
    certified with :func:`certificate`: ``0 <= F(theta_hat) - F(theta*) <= gap``.

    Over the l1 ball (``constraint="l1"``): accelerated projected gradient with the exact
    projection, then active-set Newton on its support, certified by the duality gap with the
    l1 ball's conjugate (the Frank–Wolfe gap ``<g, theta> + R ||g||_inf`` when
    ``lambda = 0``); for the smooth losses (logistic, squared, huber_hinge) with X in memory,
    dense or CSR (docs/reference_minimizer.md, "Over the l1 ball").

    Multinomial (``theta`` of shape (p, K), Frobenius ball): the solution is centred (each row
    of theta minus its mean over the classes, which changes no logit difference) and certified
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
    method : {"auto", "newton", "cvxpy"}, default "auto"
        ``"auto"``: the second-order method, then the cone solve if its certificate is above
        ``tol``. ``"newton"``: the second-order method only. ``"cvxpy"``: the cone solve (with
        Newton polishing) only, the independent cross-check. Only ``"auto"`` reads the cache
        (every method's certified result is written to it).

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
        If ``tol`` is not in ``(0, 1e-2]`` or ``method`` is not one of the above; with
        ``constraint="l1"``, for the hinge loss or X in chunks of rows.

    Warns
    -----
    RuntimeWarning
        If the certified gap stays above ``tol``. The result is then returned with status suffix
        ``"+gap_above_tol"`` and not cached. A warning is also issued if the cache cannot be
        written.

    Notes
    -----
    The cache files hold ``theta`` and how it was found (the solver's status and name, its
    time), nothing per record: a hinge solution's dual point, whose signs are the labels, is
    not stored but rebuilt from ``theta`` and the data when the file is read (a few passes
    over X). ``theta`` is a function of the private data: like the data, the files must stay
    with the data holder.

    X in chunks of rows (a Problem built from a Dask array or a
    :class:`~dpsolve.chunked.RowChunks`): Newton runs for the smooth losses, every pass over X
    (margins, gradients, Hessians, the certificate's block sums and the cache key's hash) a
    per-chunk computation where the chunk lives, added here in chunk order; the driver holds
    vectors of one value per row, never X. The result is bit-identical to the same chunks
    held locally and, with one chunk, to the in-memory Problem. The hinge loss and
    ``method="cvxpy"`` need X in memory and raise ValueError; with ``method="auto"`` a
    certificate above ``tol`` raises RuntimeError (the cone fallback cannot run).
    """
    _check_problem(problem)
    _refuse_l1(problem)
    tol = _check_tol(tol)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}")
    _refuse_chunked(problem, method)
    directory = _cache.directory(cache)
    key = path = None
    if directory is not None:
        key = _cache.key(problem, tol)
        path = directory / f"reference-{key}.npz"
        if method == "auto" and path.exists():
            hit = _load_cached(path, key, problem, tol)
            if hit is not None:
                return hit
    # the dual point is not cached: for the hinge loss its signs are the labels (_cache)
    solution, _ = _solve(problem, tol, method)
    if directory is not None and solution.gap <= tol:
        _cache.store(directory, path, key, solution)
    return solution


@one_blas_thread()
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
