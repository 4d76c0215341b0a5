"""What output perturbation, objective perturbation and model aggregation share: a minimiser
within a tolerance fixed in advance (certified, or guaranteed by construction by the
fixed-iteration solver of :mod:`dpsolve._fixed_iteration`), and the noise released on it.

The solver modules call these through this module (``_inner.<name>``), not by importing the
names, so that a test that replaces one here (``_newton_perturbed``, ``reference_minimizer``,
``_output_noise``, the samplers) replaces it for all three solvers.
"""
import math
import warnings

import numpy as np

from .._projection import scale_onto_ball
from .. import _fixed_iteration as fixed
from .._ordered_linalg import weighted_gram   # by blocks: the same bits for any thread count
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


def _fallback(problem, plan, **kwargs):
    """Research mode, when the certified path did not certify: the fixed-iteration solver (its
    run time reveals that this happened; docs/secure_noise.md). None (a plan beyond
    MAX_INNER_STEPS): RuntimeError, as for hinge."""
    if plan is None:
        raise RuntimeError("the solver could not certify the minimiser to its tolerance, and "
                           f"the fixed-iteration fallback would need more than "
                           f"{MAX_INNER_STEPS:g} steps; raise the Problem's reg or the "
                           "tolerance (nothing was released)")
    if plan.tolerance < plan.floor:
        warnings.warn(f"the certified solve did not reach tolerance={plan.tolerance:g}, and the "
                      f"fixed-iteration fallback guarantees it only in exact arithmetic below "
                      f"the float64 floor {plan.floor:.3g}", RuntimeWarning, stacklevel=4)
    return fixed.minimize(problem, plan, **kwargs)


def _certified_minimizer(problem, tolerance, plan=None):
    """A minimiser within the fixed tolerance, never cached (it is not private). Research mode.

    Smooth margin loss without a constraint: Newton's method until ``||grad F||^2 / (2 lambda)
    <= g``; otherwise (multinomial included) the reference solver (cvxpy, polished, certified).
    If neither certifies g, the fixed-iteration solver (``plan``, by default
    :func:`_inner_plan`'s), whose guarantee holds by construction. A hinge problem has no such
    fallback: RuntimeError, without saying how far it got."""
    # (_newton_perturbed needs one second derivative per record, which multinomial has not)
    if (problem.radius is None and math.isfinite(problem.smoothness)
            and not problem.loss_object.is_multinomial):
        theta = _newton_perturbed(problem, np.zeros(problem.p), 0.0,
                                  math.sqrt(2.0 * problem.reg * tolerance))
        if theta is not None:
            return theta
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # rows in chunks: Newton only (the cone solve needs X in memory), the fixed-iteration
        # fallback below when it does not certify
        solution = reference_minimizer(problem, tol=tolerance, cache=False,
                                       method="newton" if problem.is_chunked else "auto")
    if solution.gap <= tolerance:
        return solution.theta
    if plan is None:
        plan = _inner_plan(problem, tolerance, "output_perturbation", False)
    if plan is None:
        raise RuntimeError(f"the solver could not certify the minimiser to tolerance="
                           f"{tolerance:g}; choose a larger tolerance (nothing was released)")
    return _fallback(problem, plan)


def _inner_minimizer(problem, tolerance, plan, secure):
    """``secure``: always the fixed-iteration solver (no certificate, no branch on the data);
    else the certified path with its fallback."""
    if secure:
        return fixed.minimize(problem, plan)
    return _certified_minimizer(problem, tolerance, plan)


def _newton_perturbed(problem, linear, extra_reg, gradient_tol, max_iter=100):
    """Minimise ``F(theta) + <linear, theta> + (extra_reg/2)||theta||^2`` (unconstrained, smooth,
    (lambda + extra_reg)-strongly convex) by damped Newton until ``||gradient|| <= gradient_tol``
    (with a rounding allowance). Returns theta, or None if that was not reached."""
    X, n, p = problem.X, problem.n, problem.p
    mu = problem.reg + extra_reg
    eps = np.finfo(float).eps

    def value(theta):
        return problem.objective(theta) + linear @ theta + 0.5 * extra_reg * (theta @ theta)

    theta = np.zeros(p)
    for _ in range(max_iter):
        grad = problem.gradient(theta) + linear + extra_reg * theta
        # each gradient entry is a sum of n terms of size <= B |loss'| plus the ridge terms
        allowance = 4 * (n + p) * eps * (problem.row_norm + mu * np.linalg.norm(theta)
                                         + np.linalg.norm(linear))
        if np.linalg.norm(grad) + allowance <= gradient_tol:
            return theta
        curvature = problem.loss_second_derivatives(theta)
        H = weighted_gram(X, curvature) / n + mu * np.eye(p)
        step = np.linalg.solve(H, grad)
        f0, t = value(theta), 1.0
        while t > 1e-10 and value(theta - t * step) > f0 - 0.25 * t * (grad @ step):
            t *= 0.5
        theta = theta - t * step
    return None
