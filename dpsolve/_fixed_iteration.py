r"""The fixed-iteration inner solver of output perturbation, objective perturbation and model
aggregation: V-FISTA run for a number of steps K computed from public constants alone.

Why. The privacy of those three solvers rests on an inner solve reaching a fixed tolerance g,
``F(theta_hat) - F* <= g``. A solver that iterates until a certificate reaches g stops after a
data-dependent number of steps and may fail, and both the stopping time and the failure are
releases. This solver needs no certificate: the number
of steps is fixed in advance, and its guarantee holds by construction on every dataset.

The method (Beck 2017, *First-Order Methods in Optimization*, section 10.7.7, V-FISTA; the
constant-momentum scheme of Nesterov 2004, section 2.2). For ``min_{theta in C} f(theta)``
with f ``L_f``-smooth and ``mu``-strongly convex and C closed and convex:

.. math::

    x_{k+1} = \Pi_C\big(y_k - \nabla f(y_k) / L_f\big), \qquad
    y_{k+1} = x_{k+1} + \frac{\sqrt\kappa - 1}{\sqrt\kappa + 1}(x_{k+1} - x_k), \qquad
    \kappa = L_f / \mu,

from ``y_0 = x_0``. Beck's Theorem 10.42:

.. math::

    f(x_k) - f^* \le \Big(1 - \frac{1}{\sqrt\kappa}\Big)^k
        \Big(f(x_0) - f^* + \frac{\mu}{2}\|x_0 - x^*\|^2\Big).

K is the least k making the right side at most g, with the bracket replaced by a bound
``C_0`` that holds on every dataset:

* **Output perturbation, aggregation** (``f = F``, ``L_f = beta + lambda``, ``mu = lambda``,
  ``x_0 = 0``). ``||grad F(0)|| = ||(1/n) sum_i loss'(0; y_i) x_i|| <= G_0``, the largest
  per-record gradient at 0 (:func:`start_gradient_bound`). The minimiser over C satisfies
  ``lambda ||theta*||^2 <= <grad F(0) - grad F(theta*), -theta*> <= G_0 ||theta*||`` (strong
  convexity and optimality, ``<grad F(theta*), 0 - theta*> >= 0``), so ``||theta*|| <= D_0 =
  min(R, G_0 / lambda)``; by strong convexity ``F(0) - F* <= G_0 ||theta*|| - (lambda/2)
  ||theta*||^2``, and the bracket is at most ``C_0 = G_0 D_0`` (the two quadratic terms cancel).
  ``G_0 <= L``, so ``C_0 <= L D_0``.
* **Objective perturbation** (``f = F_b = F + <b, .>/n + (Delta/2)||.||^2``, no constraint,
  ``L_f = beta + lambda + Delta``, ``mu = lambda + Delta``). The number of steps must not depend
  on b, whose norm is secret, so the start is ``x_0 = -b / (n mu)``, the minimiser of the
  quadratic part ``(mu/2)||theta||^2 + <b, theta>/n``: there ``grad F_b(x_0) = (1/n) sum_i
  loss'(<x_i, x_0>) x_i`` has norm at most L whatever b is, so ``||x_0 - x*|| <= L / mu`` and
  ``F_b(x_0) - F_b* <= L^2 / (2 mu)``, and ``C_0 = L^2 / mu``.

The smoothness ``beta`` is ``problem.smoothness`` (the Frobenius-norm constant for
multinomial); hinge has none, so it has no guarantee by construction.

Floating point. Theorem 10.42 is exact arithmetic. In float64 every step computes the
gradient with an error and rounds the new iterates. Schmidt, Le Roux & Bach (2011, Prop. 4)
bound this accelerated scheme with gradient errors ``e_i``: the errors enter the square root
of the bound through ``2 sqrt(2/mu) sum_i e_i (1 - 1/sqrt(kappa))^{(k-i)/2}``, at most
``4 sqrt(2 kappa / mu) e`` for errors of norm at most e. :func:`float_floor` bounds e from public
magnitudes (the classical bounds ``gamma_k = k eps / (1 - k eps)`` of Higham 2002 for the
n-term sums and the p-term margins, and the rounding of each new iterate) and returns the least
g for which that term is at most ``sqrt(g) / 4``, about ``512 kappa e^2 / mu``.
``secure=True`` refuses a tolerance below it, before any work.
"""
import math
from dataclasses import dataclass

import numpy as np

from ._kernels import linalg as _linalg
from ._numerics import accelerated_steps

__all__ = ["Plan", "output_plan", "objective_plan", "minimize", "start_gradient_bound",
           "float_floor", "check_tolerance", "refuse_nonsmooth"]

_EPS = np.finfo(np.float64).eps
#: g must be at least this times ``kappa e^2 / mu``: then the rounding term of the
#: inexact-gradient bound, ``4 sqrt(2 kappa / mu) e``, is at most ``sqrt(g) / 4``.
FLOOR_FACTOR = 512.0
#: Objective perturbation: ``||b||`` exceeds ``s (p + sqrt(2 p a) + a)`` with probability at most
#: ``e^{-a}`` (Gamma(p, s) is sub-gamma with variance factor ``p s^2`` and scale s; Boucheron,
#: Lugosi & Massart 2013, section 2.4); a = 46 makes that below 1e-20.
NOISE_TAIL = 46.0


@dataclass(frozen=True)
class Plan:
    """Everything the fixed-iteration solver needs, all computed from public constants.

    Attributes
    ----------
    steps : int
        K, the number of V-FISTA steps.
    smoothness, strong_convexity : float
        ``L_f`` and ``mu`` of the objective solved.
    momentum : float
        ``(sqrt(kappa) - 1) / (sqrt(kappa) + 1)``.
    initial_bound : float
        ``C_0``, the public bound on ``f(x_0) - f* + (mu/2)||x_0 - x*||^2``.
    floor : float
        The least tolerance float64 is taken to deliver (:func:`float_floor`).
    tolerance : float
        g.
    """

    steps: int
    smoothness: float
    strong_convexity: float
    momentum: float
    initial_bound: float
    floor: float
    tolerance: float


def _gamma(k):
    """``gamma_k = k eps / (1 - k eps)`` (Higham 2002; eps = 2**-52, twice the unit roundoff,
    for a margin)."""
    k = float(k)
    return k * _EPS / max(1.0 - k * _EPS, 0.5)


def refuse_nonsmooth(problem, solver):
    """ValueError (before any work) for a loss without a smoothness constant: no fixed number of
    first-order steps reaches a tolerance on every dataset."""
    if not math.isfinite(problem.smoothness):
        raise ValueError(
            f"{solver} with secure=True needs a smooth loss: the inner solve must reach its "
            f"tolerance in a fixed number of steps on every dataset, and loss={problem.loss!r} "
            "has no smoothness constant (use loss='huber_hinge', the hinge loss with its kink "
            "smoothed, or secure=False)")


def start_gradient_bound(problem):
    """``G_0 = max_y ||grad loss(0; x, y)||`` over records with ``||x|| <= B``: ``B |loss'(0; y)|``.

    logistic ``loss'(0) = -y/2``: ``B/2``. huber_hinge: the margin 0 is on the linear piece when
    ``h < 1`` (slope 1) and on the quadratic one otherwise (slope ``(1 + h)/(2h) <= 1``):
    ``B min(1, (1 + h)/(2h))``. squared ``loss'(0) = -y``: ``B B_y``. multinomial
    ``softmax(0) - e_y`` has norm ``sqrt((K - 1)/K)``. Always at most L.
    """
    if not problem.loss_object.smooth:
        raise ValueError(f"loss={problem.loss!r} has no smoothness constant")
    return problem.row_norm * problem.loss_object.derivative_at_zero()


def _record_gradient_bound(problem, Y):
    """Bound on a per-record loss gradient over ``||theta|| <= Y``: L for the losses with
    bounded ``loss'``; ``B (B Y + B_y)`` for squared."""
    return problem.loss_object.lipschitz(problem.row_norm, Y)


def float_floor(problem, smoothness, mu, center, steps, n=None):
    r"""The least tolerance the fixed-iteration solver is taken to deliver in float64.

    One step computes ``grad f(y) = (1/n) X^T loss'(X y) + mu y (+ b/n)`` and the new iterates.
    At a point with ``||y|| <= Y`` the computed gradient errs, in norm, by at most

    .. math::

        e(Y) = \gamma_{n + 2q + 16}\, G_Y + \gamma_{p + 16}\, \beta\, Y + 8\,\epsilon\, L_f\, Y:

    the n-term sums ``(1/n) sum_i d_i x_i`` err by ``gamma_n (1/n) sum_i |d_i| ||x_i|| <=
    gamma_n G_Y`` (``G_Y`` a per-record gradient bound on that ball, :func:`start_gradient_bound`'s
    companion; for multinomial the q classes add the softmax kernel's own ``O(q eps)``, else
    ``q = 0``); each margin ``<x_i, y>``
    errs by ``gamma_p B Y``, which moves ``loss'`` by at most ``c`` times that (``|loss''| <= c``,
    ``beta = c B^2``), summed to ``gamma_p beta Y``; the ridge and linear terms, the step, the
    momentum and the projection each round a vector of norm at most ``L_f Y`` in gradient units
    (a rounded iterate is an exact one with a gradient error ``L_f`` times the rounding; a
    rounded projection is an inexact proximal step whose error is of second order). The
    constants 16 and 8 absorb the few extra roundings per entry.

    Schmidt, Le Roux & Bach (2011, Prop. 4) bound the accelerated scheme with gradient errors
    ``e_i`` by ``(1 - 1/sqrt(kappa))^k (sqrt(2 (f(x_0) - f*)) + 2 sqrt(2/mu) sum_{i<=k} e_i
    (1 - 1/sqrt(kappa))^{-i/2} + ...)^2``. The gradients are taken at ``||y_i|| <=
    ||x*|| + (1 - 1/sqrt(kappa))^{i/2} s`` (``center`` bounds ``||x*||``, and
    ``s = 3 sqrt(2 C_0 / mu)`` because ``F(x_i) - F* >= (mu/2)||x_i - x*||^2`` and
    ``y_i = x_i + m (x_i - x_{i-1})`` with m < 1), so ``e_i <= e_inf +
    (1 - 1/sqrt(kappa))^{i/2} c s`` with ``e_inf = e(center)`` and c the factor of Y in e. After
    K steps (``(1 - 1/sqrt(kappa))^{K/2} <= sqrt(g / C_0)``) the error term is at most

    .. math::

        E = 2\sqrt{2/\mu}\,\big(2\sqrt\kappa\, e_\infty + K c\, s \sqrt{g / C_0}\big)
          = 4\sqrt{2\kappa/\mu}\; e_\infty + 12 K c \sqrt{g} / \mu,

    using ``sum_j (1 - 1/sqrt(kappa))^{j/2} <= 2 sqrt(kappa)``. The floor is the least g with
    ``E <= sqrt(g) / 4`` (rounding moves the square root of the bound by at most a quarter of
    sqrt(g)):

    .. math::

        g_{\min} = \frac{512\, \kappa\, e_\infty^2 / \mu}{(1 - 48 K c / \mu)^2}

    (infinite if ``48 K c >= mu``). ``n`` defaults to ``problem.n``.
    """
    n = problem.n if n is None else n
    classes = problem.loss_object.n_outputs if problem.loss_object.kernel_id is None else 0
    kappa = smoothness / mu
    sums, margins = _gamma(n + 2 * classes + 16), _gamma(problem.p + 16)
    rounding = 8.0 * _EPS * smoothness
    e_inf = (sums * _record_gradient_bound(problem, center)
             + (margins * problem.smoothness + rounding) * center)
    c = margins * problem.smoothness + rounding
    if not math.isfinite(problem.loss_object.derivative_bound):
        c += sums * problem.row_norm ** 2           # G_Y grows with Y: B^2 per unit of Y
    shrink = 1.0 - 48.0 * steps * c / mu
    if shrink <= 0.0:
        return math.inf
    return FLOOR_FACTOR * kappa * e_inf * e_inf / mu / (shrink * shrink)


def _steps(initial_bound, tolerance, kappa):
    """The least K with ``(1 - 1/sqrt(kappa))^K C_0 <= g`` (with a hair of margin for the
    rounding of the logarithms)."""
    if initial_bound <= tolerance:
        return 0
    if kappa >= 4.0:
        rate = -math.log1p(-1.0 / math.sqrt(kappa))      # > 0
    else:
        # 1 - 1/sqrt(kappa) = (kappa - 1) / (sqrt(kappa) (sqrt(kappa) + 1)): as kappa -> 1 it
        # does not cancel (log1p(-1) failed where kappa rounds to 1), and kappa's own rounding
        # is added back so the rate is never overstated
        root = math.sqrt(kappa)
        contraction = (kappa - 1.0 + 4e-16 * kappa) / (root * (root + 1.0))
        rate = -math.log(contraction)
    return max(1, math.ceil(math.log(initial_bound / tolerance) / rate * (1.0 + 1e-12)))


def _plan(problem, smoothness, mu, initial_bound, center, tolerance, n=None):
    kappa = smoothness / mu
    root = math.sqrt(kappa)
    steps = _steps(initial_bound, tolerance, kappa)
    return Plan(steps=steps, smoothness=smoothness, strong_convexity=mu,
                momentum=(root - 1.0) / (root + 1.0), initial_bound=initial_bound,
                floor=float_floor(problem, smoothness, mu, center, steps, n),
                tolerance=tolerance)


def output_plan(problem, tolerance, n=None):
    """Plan for ``min_C F`` from ``x_0 = 0`` (output perturbation, and each party's local solve
    in model aggregation; ``n`` for the floor defaults to ``problem.n``, which bounds every
    party's size).

    ``L_f = beta + lambda``, ``mu = lambda``, ``C_0 = G_0 D_0`` with ``D_0 = min(R, G_0 /
    lambda) >= ||theta*||`` (module docstring); the floor's ``||x*||`` bound is ``D_0``.
    """
    lam = problem.reg
    G0 = start_gradient_bound(problem)
    D0 = G0 / lam if problem.radius is None else min(problem.radius, G0 / lam)
    return _plan(problem, problem.smoothness + lam, lam, G0 * D0, D0, tolerance, n)


def objective_plan(problem, tolerance, extra_reg, noise_scale, noise="gamma_norm", *,
                   centre_norm=0.0):
    """Plan for ``min F_b`` (objective perturbation) from ``x_0 = c - b / (n mu)`` (c the
    regularisers' public centre, of norm ``centre_norm``; 0 by default).

    ``mu = lambda + Delta``, ``L_f = beta + mu``, ``C_0 = L^2 / mu`` whatever b is (module
    docstring). For the floor only, ``||x*|| <= ||x_0|| + L / mu`` with ``||x_0|| <= t / (n mu)``,
    which ``||b||`` exceeds with probability at most ``e^{-a} < 1e-20`` (a = ``NOISE_TAIL``):
    ``t = s (p + sqrt(2 p a) + a)`` for gamma-norm noise of scale ``s = noise_scale``,
    ``t = s (sqrt(p) + sqrt(2 a))`` for Gaussian noise of standard deviation s (the norm is
    1-Lipschitz: Gaussian concentration).
    """
    mu = problem.reg + extra_reg
    L = problem.lipschitz
    p, a = problem.p, NOISE_TAIL
    if noise == "gaussian":
        tail = math.sqrt(p) + math.sqrt(2.0 * a)
    else:
        tail = p + math.sqrt(2.0 * p * a) + a
    start_norm = centre_norm + noise_scale * tail / (problem.n * mu)
    return _plan(problem, problem.smoothness + mu, mu, L * L / mu, start_norm + L / mu,
                 tolerance)


def check_tolerance(plan, solver):
    """ValueError (before any work) if the tolerance is below the plan's float64 floor."""
    if plan.tolerance < plan.floor:
        raise ValueError(
            f"{solver} with secure=True: tolerance={plan.tolerance:g} is below what float64 "
            f"can deliver by construction for this problem ({plan.floor:.3g}, from its public "
            f"constants: n, p, B, lambda and the loss's smoothness; see "
            f"docs/perturbation.md); pass tolerance >= {plan.floor:.3g}")


def _gradient_sum(problem):
    """A function of y returning ``sum_i grad loss(<x_i, y>; y_i)`` (``X^T loss'(X y)``, or
    ``X^T (softmax(y^T x_i) - e_{y_i})`` for multinomial) from dpsolve's gradient kernel
    (``gd.clipped_gradient_sum`` without clipping: one pass over the rows, 64 fixed blocks added
    in block order, each margin summed in column order): no BLAS, the same bits on every
    machine and for any thread count, for X dense, CSR or float32 (``problem.rows``; rows in
    chunks: each chunk's sum where it lives, added in chunk order)."""
    rows, loss = problem.rows, problem.loss_object
    if loss.kernel_id is None and not loss.is_multinomial:
        # a loss with no entry in the kernels' switch: its own derivatives at the margins, and
        # the rows' weighted sum, each added in a fixed order (no BLAS, as the kernel's)
        return lambda y: rows.rmatvec(loss.derivatives(rows.matvec(y), problem.y))
    # no clipping (clip = inf): the plain gradient
    return lambda y: rows.clipped_gradient_sum(y, loss, math.inf)[0]


def minimize(problem, plan, *, linear=None, start=None):
    """Run ``plan.steps`` V-FISTA steps on ``F(theta) + <linear, theta> + (extra/2)||theta||^2``
    over C (``extra = plan.strong_convexity - problem.reg``), from ``start`` (default 0).

    Nothing here depends on the data but the values computed: the step count, the step size and
    the momentum are the plan's, there is no test, no stopping rule and no exception on the
    iterates (the projection is a multiplication by ``R / max(||x||, R)`` on every step).

    Every sum in a fixed order, never BLAS's (:func:`_gradient_sum`; the projection's norm
    added in index order), so the iterates have the same bits on every machine. Rows in chunks
    (:class:`dpsolve.chunked.RowChunks`): every step, each chunk's gradient sum is computed
    where the chunk lives and the sums added here in chunk order (with one chunk, the bits of
    the rows in memory). The steps are :func:`dpsolve._numerics.accelerated_steps`' at the
    plan's constant momentum.
    """
    n, shape = problem.n, problem.theta_shape
    gradient_sum = _gradient_sum(problem)
    mu = plan.strong_convexity
    radius = problem.radius

    def gradient(point):
        (y,) = point
        grad = gradient_sum(np.ascontiguousarray(y))
        grad /= n
        grad += mu * y
        if linear is not None:
            grad += linear
        return (grad,)

    def project(point):
        (x,) = point
        if radius is not None:
            # the norm summed in index order (no BLAS): the same bits on every machine
            x *= radius / max(_linalg.norm(x.reshape(-1)), radius)
        return point

    x = np.zeros(shape) if start is None else np.array(start, dtype=np.float64).reshape(shape)
    steps = accelerated_steps((x,), gradient, project, 1.0 / plan.smoothness, plan.momentum)
    for _ in range(plan.steps):
        (x,) = next(steps)
    return x
