"""What output perturbation, objective perturbation and model aggregation share: a minimiser
within a tolerance fixed in advance (certified, or guaranteed by construction by the
fixed-iteration solver of :mod:`dpsolve._fixed_iteration`), and the noise released on it.

What runs on the data, the inner solve and the noise draw, is an :class:`InnerSolver` that
the three solvers' plans carry (``Plan.run_inputs["inner_solver"]``, :data:`INNER_SOLVER` by
default): a test replaces one of its parts in the plan it runs (``dataclasses.replace``),
not in this module.
"""
import dataclasses
import math
from typing import Callable
import warnings

import numpy as np

from .. import _fixed_iteration as fixed
from .._projection import scale_onto_ball      # the kernels' own, summed in index order
# every sum of the inner solves in an order fixed by the shapes alone, never BLAS's (whose
# kernels, chosen per CPU, add in different orders): the same bits on every machine
from .._ordered_linalg import (cholesky_solve, factor_solve, fixed_order_dot, fixed_order_norm,
                               fixed_order_sum)
from ..privacy.accounting import gaussian_event, pure_event
from ..privacy.calibration import check_finite_lipschitz, output_noise_scale
from ..privacy.samplers import gamma_norm_noise, gaussian_noise
from ..reference import reference_minimizer


def _lipschitz(solver, problem):
    """The Lipschitz constant L of a strongly convex problem, which every sensitivity here rests
    on; ValueError without ``reg > 0`` or a finite L."""
    if problem.reg <= 0.0:
        raise ValueError(f"{solver} needs a strongly convex objective: give the Problem reg > 0")
    return check_finite_lipschitz(solver, problem)


def _output_noise(noise, delta, epsilon, sensitivity, calibration):
    """The noise of one release of L2 ``sensitivity``, from public constants: returns
    ``(scale, event, noise scales by name, sigma)``; :func:`_draw` draws it."""
    scale = output_noise_scale(noise, epsilon, delta, sensitivity, calibration)
    if noise == "gamma_norm":
        return scale, pure_event(epsilon), {"gamma_norm": scale}, None
    return scale, gaussian_event(scale, sensitivity), {"gaussian": scale}, scale


def _draw(noise, scale, size, rng):
    """``size`` coordinates of ``"gamma_norm"`` or ``"gaussian"`` noise of this scale."""
    if noise == "gamma_norm":
        return gamma_norm_noise(scale, size, rng=rng)
    return gaussian_noise(scale, size, rng=rng)


def _release(problem, minimizer, noise, project):
    """``minimizer + noise``, projected onto C when asked (post-processing)."""
    theta = minimizer + noise
    if project and problem.radius is not None:
        scale_onto_ball(theta, problem.radius)
    return theta


#: Most steps the fixed-iteration solver is planned for. Its K grows as the square root of the
#: condition number ``(beta + lambda) / lambda``; beyond this (lambda below about 1e-12 beta)
#: its work has no useful bound.
MAX_INNER_STEPS = 10 ** 7


def _bounded(plan, solver, secure):
    """``plan`` if its K is at most MAX_INNER_STEPS. Else ``secure``: a ValueError naming reg and
    the tolerance (before any work); research mode: None (no fallback: the certified solve must
    reach the tolerance, or the fit raises RuntimeError, as for hinge)."""
    if plan is None or plan.steps <= MAX_INNER_STEPS:
        return plan
    if secure:
        raise ValueError(
            f"{solver} with secure=True: the fixed-iteration solver would need {plan.steps:.3g} "
            f"steps (condition number (beta + reg) / reg = "
            f"{plan.smoothness / plan.strong_convexity:.3g}), above {MAX_INNER_STEPS:g}: raise "
            "the Problem's reg or the tolerance")
    return None


def _inner_plan(problem, tolerance, solver, secure, n=None):
    """The fixed-iteration solver's plan for ``min_C F`` (:func:`dpsolve._fixed_iteration.
    output_plan`), from public constants only, checked before any work.

    ``secure``: a loss without smoothness (hinge), a tolerance below the float64 floor and more
    than MAX_INNER_STEPS steps are refused (ValueError). Research mode: None for hinge and
    beyond MAX_INNER_STEPS (no fallback exists), else the plan of the fallback. ``n`` bounds
    the size of every problem the plan will run on (default ``problem.n``)."""
    if secure:
        fixed.refuse_nonsmooth(problem, solver)
    if not math.isfinite(problem.smoothness):
        return None
    plan = _bounded(fixed.output_plan(problem, tolerance, n), solver, secure)
    if secure:
        fixed.check_tolerance(plan, solver)
    return plan


def _inner_settings(plan, secure):
    """The public description of the inner solve for a fit's settings."""
    if secure:
        return {"inner_solver": "fixed", "inner_steps": plan.steps}
    if plan is None:
        return {"inner_solver": "certified", "inner_steps": None}
    return {"inner_solver": "certified_else_fixed", "inner_steps": plan.steps}


_EPS = np.finfo(np.float64).eps


def _gamma(k):
    """``gamma_k = k eps / (1 - k eps)``, Higham's (2002) bound on the relative error of a
    k-term sum or product (eps = 2**-52, twice the unit roundoff: generous)."""
    return k * _EPS / max(1.0 - k * _EPS, 0.5)


class _Smooth:
    """``F_b(theta) = F(theta) + <linear, theta> + (extra/2)||theta||^2`` for a smooth margin
    loss: value, gradient with a bound on its rounding error, and Hessian, every sum in a
    fixed order (dpsolve's kernels through ``problem.rows``: ``gd.row_margins`` for
    ``X theta``, the loss kernels, ``gd.weighted_row_sum`` for ``X^T d``,
    ``linalg.weighted_gram`` for ``X^T diag(w) X``, and sequential dot products and norms): no
    BLAS, so the same bits on every machine."""

    def __init__(self, problem, linear=None, extra=0.0):
        self.problem, self.extra = problem, float(extra)
        self.rows = problem.rows
        self.linear = None if linear is None else np.ascontiguousarray(linear, dtype=np.float64)
        self.mu = problem.reg + self.extra                 # strong convexity of F_b
        self.n, self.p = problem.n, problem.p
        loss = problem.loss_object
        self.curvature = loss.curvature                    # |loss''| <= c: loss' is c-Lipschitz
        self.width = float(loss.kernel_param)              # the huber_hinge width, else 0
        self.labels = float(np.max(np.abs(problem.y))) if self.n else 0.0
        self.linear_norm = 0.0 if linear is None else fixed_order_norm(self.linear)

    def value(self, theta):
        """``F_b(theta)``: the losses added in row order, then the quadratic and linear
        terms."""
        problem = self.problem
        values = problem._loss_values(self.rows.matvec(theta))
        out = fixed_order_sum(values) / self.n + 0.5 * self.mu * fixed_order_dot(theta, theta)
        if self.linear is not None:
            out += fixed_order_dot(self.linear, theta)
        return out

    def gradient(self, theta):
        """``(v, E)``: the computed gradient v of F_b at theta and a bound E on
        ``||v - grad F_b(theta)||``.

        The margins ``z_i = <x_i, theta>`` (p-term sums) err by at most ``gamma_p B ||theta||``
        (B = ``row_norm`` bounds every ``||x_i||``), which moves ``loss'`` by at most c times
        that (c = the loss's curvature); the loss kernel's own rounding is a few eps of
        ``|loss'| + c (|z| + 2 + h + |y|)`` (h the huber width: its linear pieces' offsets);
        the n-term sums ``(1/n) sum_i d_i x_i`` err by ``gamma_{n+2} (1/n) sum_i |d_i|
        ||x_i|| <= gamma_{n+2} B max|d_i|``; the ridge, linear and extra terms add a few
        roundings of vectors of norm at most ``||v||``, ``mu ||theta||``, ``||linear||``. A
        factor 2 over all of it absorbs the norms' own rounding."""
        problem = self.problem
        z = self.rows.matvec(theta)
        d = problem._loss_derivatives(z)
        v = self.rows.rmatvec(d) / self.n + problem.reg * theta
        if self.extra:
            v = v + self.extra * theta
        if self.linear is not None:
            v = v + self.linear
        B, c, p = problem.row_norm, self.curvature, self.p
        top_d = float(np.max(np.abs(d))) if self.n else 0.0
        top_z = float(np.max(np.abs(z))) if self.n else 0.0
        tnorm = fixed_order_norm(theta)
        kernel = 16.0 * _EPS * (top_d + c * (top_z + 2.0 + self.width + self.labels))
        error = (_gamma(self.n + 2) * B * top_d
                 + B * (c * _gamma(p + 2) * B * tnorm + kernel)
                 + 4.0 * _EPS * (fixed_order_norm(v) + self.mu * tnorm + self.linear_norm))
        return v, 2.0 * error

    def hessian(self, theta, shift=0.0):
        """``(1/n) X^T diag(loss'') X + (mu + shift) I``."""
        problem = self.problem
        curvature = problem.loss_object.second_derivatives(self.rows.matvec(theta), problem.y)
        H = self.rows.fixed_order_gram(curvature) / self.n
        H[np.diag_indices_from(H)] += self.mu + shift
        return H


def _gap_bound(model, theta, v, error, radius):
    """An upper bound on ``F_b(theta) - min_C F_b`` for a theta in C (the ball of ``radius``,
    or R^p for None), from the computed gradient v (``||v - grad F_b(theta)|| <= error``).

    Strong convexity (modulus mu) gives ``F_b(u) >= F_b(theta) + <g, u - theta> + (mu/2)
    ||u - theta||^2`` with g the true gradient, so the gap is at most ``b(g) = max_{u in C}
    <g, theta - u> - (mu/2)||u - theta||^2``: ``||g||^2 / (2 mu)`` over R^p, and with
    ``c = theta - g/mu`` outside the ball (the maximiser is ``u = R c/||c||``)
    ``<g, theta> + mu R ||c|| - (mu/2)(R^2 + ||theta||^2)``, which tends to 0 at the
    constrained minimiser (where ``g = -nu theta``, ``||theta|| = R``). b is convex in g with
    gradient ``theta - u(g)``, and u is 1/mu-Lipschitz (a projection), so
    ``b(g) <= b(v) + (||theta - u(v)|| + error/mu) error``: the gradient's rounding enters to
    second order near the minimiser. Each formula's own rounding (sums of at most p + 8
    terms) is added, as is the error of taking the outer branch when the computed ``||c||``
    exceeds R by rounding only."""
    mu, p = model.mu, model.p
    up = 1.0 + _gamma(p + 4)
    vnorm = fixed_order_norm(v)
    bound = (vnorm * up + error) ** 2 / (2.0 * mu) * (1.0 + 8.0 * _EPS)
    if radius is None:
        return bound
    c = theta - v / mu
    cnorm = fixed_order_norm(c)
    if not cnorm > radius:
        return bound
    tnorm = fixed_order_norm(theta)
    g = _gamma(p + 8)
    outer = (fixed_order_dot(v, theta) + mu * radius * cnorm
             - 0.5 * mu * (radius * radius + tnorm * tnorm))
    rounding = (8.0 * g * (vnorm * radius + mu * radius * cnorm + mu * radius * radius)
                + 2.0 * mu * (g * cnorm) ** 2)
    u = c * (radius / cnorm)
    distance = fixed_order_norm(theta - u) * up + 4.0 * g * (radius + tnorm)
    return min(bound, outer + rounding + (distance + error / mu) * error)


def _inside(theta, radius):
    """theta scaled, if needed, so that its computed norm is at most ``R (1 - 8 (p + 4)
    eps)``: then its true norm is at most R (a p-term sum of squares errs by at most
    ``gamma_p``)."""
    if radius is None:
        return theta
    limit = radius * (1.0 - 8.0 * (theta.size + 4) * _EPS)
    norm = fixed_order_norm(theta)
    if norm > limit:
        theta = theta * (limit / norm)
    return theta


def _newton_perturbed(problem, linear, extra_reg, gradient_tol, max_iter=100):
    """Minimise ``F(theta) + <linear, theta> + (extra_reg/2)||theta||^2`` (unconstrained, smooth,
    (lambda + extra_reg)-strongly convex) by damped Newton until ``||gradient|| <= gradient_tol``
    holds for the true gradient (the computed one's norm, rounded up, plus a bound on its
    rounding error: :meth:`_Smooth.gradient`). Returns theta, or None if that was not reached.

    Every sum in a fixed order (:class:`_Smooth`; the Newton system by Cholesky,
    :func:`dpsolve._ordered_linalg.cholesky_solve`): no BLAS, the same bits on every
    machine."""
    model = _Smooth(problem, linear, extra_reg)
    up = 1.0 + _gamma(problem.p + 4)

    def certified(theta, v, error):
        return fixed_order_norm(v) * up + error <= gradient_tol

    return _newton(model, np.zeros(problem.p), None, certified, max_iter)


def _newton_ball(problem, tolerance, max_iter=100):
    """``min_{||theta|| <= R} F`` for a smooth margin loss, to a gap at most ``tolerance``
    certified by :func:`_gap_bound`, or None.

    Projected Newton (as :func:`dpsolve.reference.newton_ball`, BLAS-free): at theta (in the
    ball) the step minimises the quadratic model ``<v, u - theta> + (1/2)(u - theta)^T H
    (u - theta)`` over the ball: ``u(nu) = theta - (H + nu I)^{-1} (v + nu theta)``, with
    ``nu = 0`` if that lies in the ball, else the ``nu > 0`` with ``||u(nu)|| = R``, found by
    a safeguarded Newton iteration on ``1/||u(nu)|| - 1/R`` (Moré & Sorensen 1983) inside a
    bracket; then a backtracking line search along ``u - theta`` (which stays in the ball)."""
    model = _Smooth(problem)
    R = problem.radius

    def certified(theta, v, error):
        return _gap_bound(model, theta, v, error, R) <= tolerance

    return _newton(model, np.zeros(problem.p), R, certified, max_iter)


def _ball_step(H, v, theta, radius, max_iter=60):
    """The minimiser u of ``<v, u - theta> + (1/2)(u - theta)^T H (u - theta)`` over the ball
    (``radius`` None: over R^p), as ``theta - step``; returns ``(step, factor)`` (the Cholesky
    factor of the last ``H + nu I``), or None if a factorisation failed."""
    solved = cholesky_solve(H, v)
    if solved is None:
        return None
    step, factor = solved
    if radius is None:
        return step, factor
    u = theta - step
    norm = fixed_order_norm(u)
    if norm <= radius:
        return step, factor
    # ||u(nu)|| falls from norm > R at nu = 0 towards 0: u(nu) = (H + nu I)^{-1} H u(0), so
    # ||u(nu)|| <= ||H||_F ||u(0)|| / nu, at most R from nu = ||H||_F ||u(0)|| / R on
    lo, hi = 0.0, 2.0 * fixed_order_norm(H) * norm / radius
    eye = np.eye(H.shape[0])
    nu = 0.0
    best = None
    for _ in range(max_iter):
        # Newton on phi(nu) = 1/||u|| - 1/R: phi' = <u, (H + nu I)^{-1} u> / ||u||^3
        w = factor_solve(factor, u)
        slope = fixed_order_dot(u, w)
        proposal = nu + (norm - radius) * norm * norm / (radius * slope) if slope > 0 else -1.0
        if norm > radius:
            lo = nu
        else:
            hi = nu
        nu = proposal if lo < proposal < hi else 0.5 * (lo + hi)
        solved = cholesky_solve(H + nu * eye, v + nu * theta)
        if solved is None:
            return None
        step, factor = solved
        u = theta - step
        norm = fixed_order_norm(u)
        best = (step, factor)
        if abs(norm - radius) <= 1e-12 * radius or hi - lo <= 1e-15 * hi:
            break
    return best


def _newton(model, theta, radius, certified, max_iter):
    """Damped (projected, with a ``radius``) Newton on ``model`` from theta until
    ``certified(theta, v, error)``; returns theta, or None if it was not certified within
    ``max_iter`` steps or a Hessian was not numerically positive definite."""
    for _ in range(max_iter):
        v, error = model.gradient(theta)
        if certified(theta, v, error):
            return theta
        solved = _ball_step(model.hessian(theta), v, theta, radius)
        if solved is None:
            return None
        step = solved[0]
        f0, t = model.value(theta), 1.0
        decrease = fixed_order_dot(v, step)        # > 0: -step is a descent direction
        # near the minimiser the decrease falls below the rounding of the n-term sum F:
        # steps that change F by less than that are taken
        slack = 16.0 * _EPS * (math.sqrt(model.n) + model.p) * (abs(f0) + 1.0)
        while True:
            trial = _inside(theta - t * step, radius)
            if model.value(trial) <= f0 - 0.25 * t * decrease + slack:
                break
            t *= 0.5
            if t < 1e-10:
                return None                        # no progress left: not certifiable
        theta = trial
    return None


@dataclasses.dataclass(frozen=True)
class InnerSolver:
    """The work on the data that output perturbation, objective perturbation and model
    aggregation share: the certified solve (Newton, the reference solver), the fixed-iteration
    solver, and the noise draw. A plan carries one (``run_inputs["inner_solver"]``).

    Attributes
    ----------
    newton : callable
        :func:`_newton_perturbed`: the unconstrained certified Newton solve, or None.
    newton_ball : callable
        :func:`_newton_ball`: the certified Newton solve on the ball, or None.
    reference : callable
        :func:`dpsolve.reference_minimizer`: the certified solve for the other losses.
    fixed_iteration : callable
        :func:`dpsolve._fixed_iteration.minimize`: the fixed-iteration solver.
    draw : callable
        :func:`_draw`: ``draw(noise, scale, size, rng)``, the output (and objective) noise.
    """

    newton: Callable = _newton_perturbed
    newton_ball: Callable = _newton_ball
    reference: Callable = reference_minimizer
    fixed_iteration: Callable = fixed.minimize
    draw: Callable = _draw

    def fallback(self, problem, plan, **kwargs):
        """Research mode, when the certified path did not certify: the fixed-iteration solver
        (its run time reveals that this happened; docs/secure_noise.md). None (a plan beyond
        MAX_INNER_STEPS): RuntimeError, as for hinge."""
        if plan is None:
            raise RuntimeError("the solver could not certify the minimiser to its tolerance, "
                               f"and the fixed-iteration fallback would need more than "
                               f"{MAX_INNER_STEPS:g} steps; raise the Problem's reg or the "
                               "tolerance (nothing was released)")
        if plan.tolerance < plan.floor:
            warnings.warn(f"the certified solve did not reach tolerance={plan.tolerance:g}, and "
                          f"the fixed-iteration fallback guarantees it only in exact arithmetic "
                          f"below the float64 floor {plan.floor:.3g}", RuntimeWarning,
                          stacklevel=4)
        return self.fixed_iteration(problem, plan, **kwargs)

    def certified(self, problem, tolerance, plan=None):
        """A minimiser within the fixed tolerance, never cached (it is not private). Research
        mode.

        Smooth margin loss: damped Newton's method (:attr:`newton` without a constraint,
        :attr:`newton_ball` with one), every sum in a fixed order, until a bound on the gap
        computed from the gradient certifies g; otherwise (hinge, multinomial) the reference
        solver (cvxpy, polished, certified). If neither certifies g, the fixed-iteration solver
        (``plan``, by default :func:`_inner_plan`'s), whose guarantee holds by construction. A
        hinge problem has no such fallback: RuntimeError, without saying how far it got."""
        # (Newton needs one second derivative per record, which multinomial has not)
        if math.isfinite(problem.smoothness) and not problem.loss_object.is_multinomial:
            if problem.radius is None:
                theta = self.newton(problem, np.zeros(problem.p), 0.0,
                                    math.sqrt(2.0 * problem.reg * tolerance))
            else:
                theta = self.newton_ball(problem, tolerance)
            if theta is not None:
                return theta
            if plan is None:
                plan = _inner_plan(problem, tolerance, "output_perturbation", False)
            return self.fallback(problem, plan)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            # rows without random access (in chunks): Newton only (the cone solve needs X in
            # memory), the fixed-iteration fallback below when it does not certify
            solution = self.reference(problem, tol=tolerance, cache=False,
                                      method="auto" if problem.rows.random_access
                                      else "newton")
        if solution.gap <= tolerance:
            return solution.theta
        if plan is None:
            plan = _inner_plan(problem, tolerance, "output_perturbation", False)
        if plan is None:
            raise RuntimeError(f"the solver could not certify the minimiser to tolerance="
                               f"{tolerance:g}; choose a larger tolerance (nothing was "
                               "released)")
        return self.fallback(problem, plan)

    def minimizer(self, problem, tolerance, plan, secure):
        """``secure``: always the fixed-iteration solver (no certificate, no branch on the
        data); else the certified path with its fallback."""
        if secure:
            return self.fixed_iteration(problem, plan)
        return self.certified(problem, tolerance, plan)


#: The inner solver every plan of the three solvers carries.
INNER_SOLVER = InnerSolver()


def _certified_minimizer(problem, tolerance, plan=None):
    """:meth:`InnerSolver.certified` of :data:`INNER_SOLVER`."""
    return INNER_SOLVER.certified(problem, tolerance, plan)
