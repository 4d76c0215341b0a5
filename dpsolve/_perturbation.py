"""Output perturbation (Chaudhuri, Monteleoni & Sarwate 2011, Alg. 1) and objective
perturbation as Approximate Minima Perturbation (CMS 2011 Alg. 2, Kifer et al. 2012, Iyengar et
al. 2019)."""
import math
import time
import warnings

import dp_accounting
import numpy as np

from . import _fixed_iteration as fixed
from ._secure import check_secure, generator as secure_generator, release
from ._validation import check_choice, check_real
from .fit import Fit
from .privacy.accounting import ACCOUNTANTS, certify, gaussian_event, pure_event
from .privacy.calibration import (check_finite_lipschitz, objective_perturbation_constants,
                                  output_noise_scale, resolve_output_noise)
from .privacy.samplers import gamma_norm_noise, gaussian_noise
from .problem import Problem, reject_multinomial
from .reference import reference_minimizer

OUTPUT_SOURCE = ("Chaudhuri, Monteleoni & Sarwate 2011, Alg. 1 'ERM with output perturbation', "
                 "as presented in Chen's 2019 slides 'Differential Privacy and Distributed "
                 "Learning'")
OBJECTIVE_SOURCE = ("Chaudhuri, Monteleoni & Sarwate 2011, Alg. 2 with Kifer, Smith & Thakurta "
                    "2012's constants, as Approximate Minima Perturbation (Iyengar et al. 2019); "
                    "beyond dpsolve's source documents")
NOISES = ("gamma_norm", "gaussian")
GAUSSIAN_CALIBRATIONS = ("paper",) + ACCOUNTANTS
# c with |loss''(z)| <= c (as a function of the margin): logistic 1/4, huber_hinge 1/(2h)
_CURVATURE = {"logistic": lambda problem: 0.25,
              "huber_hinge": lambda problem: 1.0 / (2.0 * problem.huber_width)}


def _check_common(solver, problem, tolerance):
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    if problem.reg <= 0.0:
        raise ValueError(f"{solver} needs a strongly convex objective: give the Problem reg > 0")
    L = check_finite_lipschitz(solver, problem)
    tolerance = check_real(tolerance, "tolerance", low=0.0, high=1e-2, high_inclusive=True)
    return L, tolerance


def _output_noise(noise, delta, epsilon, sensitivity, calibration, p, n, rng):
    """Noise for one release of L2 ``sensitivity``: returns (vector, event, noise dict, sigma)."""
    scale = output_noise_scale(noise, epsilon, delta, sensitivity, calibration)
    if noise == "gamma_norm":
        return (gamma_norm_noise(scale, p, rng=rng), pure_event(epsilon),
                {"gamma_norm": scale}, None)
    sigma = scale
    return gaussian_noise(sigma, p, rng=rng), gaussian_event(sigma, sensitivity), \
        {"gaussian": sigma}, sigma


def _resolve_noise(noise, epsilon, delta, calibration, n, output_share=1.0):
    """Validate the noise choice; ``output_share`` of epsilon goes to the output noise."""
    return resolve_output_noise(noise, epsilon, delta, calibration, n, output_share,
                                GAUSSIAN_CALIBRATIONS)


def _release(problem, minimizer, noise, project):
    """``minimizer + noise``, projected onto C when asked (post-processing)."""
    theta = minimizer + noise
    if project and problem.radius is not None:
        norm = np.linalg.norm(theta)
        if norm > problem.radius:
            theta *= problem.radius / norm
    return theta


def _inner_plan(problem, tolerance, solver, secure, n=None):
    """The fixed-iteration solver's plan for ``min_C F`` (:func:`dpsolve._fixed_iteration.
    output_plan`), from public constants only, checked before any work.

    ``secure``: a loss without smoothness (hinge) and a tolerance below the float64 floor are
    refused (ValueError). Research mode: None for hinge (no fallback exists), else the plan of
    the fallback. ``n`` bounds the size of every problem the plan will run on (default
    ``problem.n``)."""
    if secure:
        fixed.refuse_nonsmooth(problem, solver)
    if not math.isfinite(problem.smoothness):
        return None
    plan = fixed.output_plan(problem, tolerance, n)
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
    run time reveals that this happened; docs/secure_noise.md)."""
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
            and problem.loss != "multinomial"):
        theta = _newton_perturbed(problem, np.zeros(problem.p), 0.0,
                                  math.sqrt(2.0 * problem.reg * tolerance))
        if theta is not None:
            return theta
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        solution = reference_minimizer(problem, tol=tolerance, cache=False)
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


def output_perturbation(problem, epsilon, delta=None, *, noise=None, tolerance=1e-10,
                        calibration="pld", project=True, secure=False, rng=None):
    r"""Differentially private ERM by output perturbation (Chaudhuri, Monteleoni & Sarwate
    2011, Alg. 1).

    Releases ``theta_hat + b``: ``theta_hat`` minimises the objective
    ``F(theta) = (1/n) sum_i loss(<theta, x_i>; y_i) + (lambda/2) ||theta||^2`` over C to a
    gap ``F(theta_hat) - min F <= g`` (the ``tolerance``, fixed before solving; certified, or
    guaranteed by construction by the fixed-iteration solver), and ``b`` is noise for the L2
    sensitivity

    .. math:: \Delta_2 = \frac{2L}{n\lambda} + 2\sqrt{\frac{2g}{\lambda}}.

    The first term bounds how far the exact minimiser moves when one record is replaced
    (Chaudhuri-Monteleoni-Sarwate's claim, with L the Lipschitz constant; it holds for non-smooth
    losses and with the ball constraint). The second covers the solver:
    ``||theta_hat - theta*|| <= sqrt(2g/lambda)`` by lambda-strong convexity, on both datasets.

    Parameters
    ----------
    problem : Problem
        Needs ``reg > 0`` and a finite Lipschitz constant. Any loss, hinge and multinomial
        included. For multinomial, theta has shape (p, K), the noise is drawn on all p K
        coordinates (``L = sqrt(2) B`` and the norms are Frobenius), and the minimiser comes
        from :func:`dpsolve.reference_minimizer`.
    epsilon : float
        > 0.
    delta : float, optional
        None (default) with ``noise="gamma_norm"``: epsilon-DP. In (0, 1) with
        ``noise="gaussian"``.
    noise : {"gamma_norm", "gaussian"}, optional
        ``"gamma_norm"``: density proportional to ``exp(-epsilon ||b|| / Delta_2)`` (the
        slides' ``exp(-n lambda epsilon ||b|| / 2)`` for ``L = 1``, ``g = 0``). ``"gaussian"``:
        ``N(0, sigma^2 I)``. Default: gamma-norm when ``delta`` is None, else Gaussian.
    tolerance : float, default 1e-10
        The gap g, in (0, 1e-2], chosen before seeing the data; the noise covers it. Research
        mode: the certified solve below reaches it, or, if its certificate fails, the
        fixed-iteration solver (V-FISTA for a fixed, public number of steps, whose guarantee
        holds by construction; not for hinge, which then raises RuntimeError).
        ``secure=True``: always the fixed-iteration solver; a tolerance below the float64 floor
        of :mod:`dpsolve._fixed_iteration` is refused (ValueError) before any work.
    calibration : {"pld", "rdp", "zcdp", "strong", "basic", "paper"}
        Gaussian noise only: ``"paper"`` is the classic Gaussian mechanism, as in Chen's
        2019 slides (``sigma = Delta_2 sqrt(2 ln(1.25/delta)) / epsilon``, epsilon < 1);
        ``"pld"`` (default) the exact, least sigma (analytic Gaussian mechanism).
    project : bool, default True
        Project the released vector onto C (post-processing; it can only move it closer to
        theta*). No effect without a constraint.
    rng : None, int, SeedSequence or Generator
    secure : bool, default False
        ``True``: noise from a fresh stream seeded from the operating system's entropy (``rng``
        must then be None), released parameters rounded to the ``2**-32`` grid, and
        ``wall_time`` NaN; the minimiser comes from the fixed-iteration solver only (no
        certificate, no data-dependent branch or exception), so the loss must be smooth (hinge
        is refused: use huber_hinge). See docs/secure_noise.md for what this does and does not
        protect against. The default is a reproducible research run.

    Returns
    -------
    Fit
        ``steps = 1``; ``noise`` holds the scale; ``settings`` the tolerance, the sensitivity,
        ``inner_solver`` (``"fixed"`` with ``secure``, else ``"certified_else_fixed"``, or
        ``"certified"`` for hinge) and ``inner_steps``, the public number of fixed-iteration
        steps K (None for hinge); ``dp_event`` a :class:`~dpsolve.privacy.PureDpEvent` or a
        Gaussian event.

    Notes
    -----
    Never released: the un-noised ``theta_hat`` (it is not cached on disk either) and the gap
    actually reached (it depends on the data; only the fixed ``tolerance`` sets the noise,
    Iyengar et al. 2019). In research mode, whether the certified path or the
    fallback ran is not in the fit, but the time the call takes reveals it; with ``secure``
    the inner solve is the same fixed computation on every dataset (docs/secure_noise.md).
    Utility: :func:`dpsolve.bounds.output_perturbation_bound`.

    Source: Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 1, and its sensitivity claim, as
    presented in Chen's 2019 slides ("Output Perturbation - non-distributed setting"; see
    docs/sources.md).
    """
    secure = check_secure(secure, rng)
    L, tolerance = _check_common("output_perturbation", problem, tolerance)
    noise, epsilon, delta, calibration = _resolve_noise(noise, epsilon, delta, calibration,
                                                        problem.n)
    if not isinstance(project, (bool, np.bool_)):
        raise TypeError(f"project must be a bool, got {type(project).__name__}")
    plan = _inner_plan(problem, tolerance, "output_perturbation", secure)
    rng = secure_generator(rng, secure)
    n, lam = problem.n, problem.reg
    sensitivity = 2.0 * L / (n * lam) + 2.0 * math.sqrt(2.0 * tolerance / lam)

    start = time.perf_counter()
    theta_hat = _inner_minimizer(problem, tolerance, plan, secure)
    # (multinomial: the mechanism runs on the p K coordinates of the flattened parameter)
    b, event, noise_scales, sigma = _output_noise(noise, delta, epsilon, sensitivity, calibration,
                                                  theta_hat.size, n, rng)
    theta = _release(problem, theta_hat, b.reshape(theta_hat.shape), project)
    del theta_hat
    wall_time = time.perf_counter() - start
    method = "paper" if noise == "gamma_norm" else calibration
    report = certify(event, epsilon, delta, method)
    fit = Fit(theta=theta, sigma=sigma, steps=1, solver="output_perturbation",
              source=OUTPUT_SOURCE, wall_time=wall_time, dp_event=event, privacy=report,
              noise=noise_scales,
              settings={"noise": noise, "tolerance": tolerance, "sensitivity": sensitivity,
                        "project": bool(project), **_inner_settings(plan, secure)})
    return release(fit, secure)


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
        H = (X.T * curvature) @ X / n + mu * np.eye(p)
        step = np.linalg.solve(H, grad)
        f0, t = value(theta), 1.0
        while t > 1e-10 and value(theta - t * step) > f0 - 0.25 * t * (grad @ step):
            t *= 0.5
        theta = theta - t * step
    return None


def objective_perturbation(problem, epsilon, delta=None, *, output_fraction=0.1,
                           noise=None, tolerance=1e-12, calibration="pld", secure=False, rng=None):
    r"""Differentially private ERM by objective perturbation, run as Approximate Minima
    Perturbation (AMP; CMS 2011 Alg. 2, Kifer et al. 2012, Iyengar et al. 2019).

    The budget is split: ``epsilon_obj = (1 - output_fraction) epsilon`` perturbs the objective,
    ``epsilon_out = output_fraction * epsilon`` pays for the solver's inexactness.

    1. ``(epsilon', Delta) = objective_perturbation_constants(problem, epsilon_obj)``; draw
       ``b`` with density proportional to ``exp(-epsilon' ||b|| / (2B))``.
    2. Minimise ``F_b(theta) = F(theta) + <b, theta>/n + (Delta/2)||theta||^2`` to
       ``F_b(theta_hat) - min F_b <= g``, g = ``tolerance`` fixed in advance. Research mode:
       Newton's method until ``||grad F_b|| <= sqrt(2 (lambda + Delta) g)``, which certifies
       it (strong convexity), or, if that certificate is not reached, the fixed-iteration
       solver. ``secure=True``: always the fixed-iteration solver, K V-FISTA steps from
       ``-b / (n (lambda + Delta))``, with K from public constants only (not from ``||b||``).
    3. Release ``theta_hat + b_2``, with ``b_2`` noise for L2 sensitivity
       ``2 sqrt(2 g / (lambda + Delta))`` at ``epsilon_out`` (gamma-norm; or Gaussian at
       ``(epsilon_out, delta)``).

    Parameters
    ----------
    problem : Problem
        ``reg > 0``, no constraint (``radius=None``), a loss with ``|loss'| <= 1`` and bounded
        ``loss''``: ``"logistic"`` or ``"huber_hinge"`` (use it for hinge-type problems).
    epsilon : float
        Total epsilon > 0.
    delta : float, optional
        None: epsilon-DP (gamma-norm output noise). In (0, 1): Gaussian output noise, and the
        claim is (epsilon, delta).
    output_fraction : float, default 0.1
        Share of epsilon for the output noise, in (0, 1).
    noise : {"gamma_norm", "gaussian"}, optional
        Output noise; default gamma-norm when delta is None, else Gaussian.
    tolerance : float, default 1e-12
        Gap g of the inner solve, in (0, 1e-2]. If Newton's method cannot certify it (it almost
        always does within a few steps), research mode falls back to the fixed-iteration solver
        (no exception). ``secure=True`` refuses a tolerance below the float64 floor of
        :mod:`dpsolve._fixed_iteration` (ValueError, before any work).
    calibration : {"pld", "rdp", "zcdp", "strong", "basic", "paper"}
        For Gaussian output noise, as in :func:`output_perturbation`.
    rng : None, int, SeedSequence or Generator
        ``b`` is drawn first, then ``b_2``.
    secure : bool, default False
        ``True``: noise from a fresh stream seeded from the operating system's entropy (``rng``
        must then be None), released parameters rounded to the ``2**-32`` grid, and
        ``wall_time`` NaN; the inner solve is the fixed-iteration solver only (no Newton, no
        certificate, no data-dependent branch or exception). See docs/secure_noise.md for what
        this does and does not protect against. The default is a reproducible research run.

    Returns
    -------
    Fit
        ``noise = {"objective_gamma_norm": 2B/epsilon', "gamma_norm" or "gaussian": ...}``,
        ``settings`` with epsilon', Delta, the split, the tolerance, ``inner_solver``
        (``"fixed"`` or ``"certified_else_fixed"``) and ``inner_steps`` (the public K);
        ``dp_event`` the composition of a :class:`~dpsolve.privacy.PureDpEvent` (objective)
        and the output event.

    Notes
    -----
    Privacy. Objective perturbation's proof (CMS 2011 Thm 9; Kifer et al. 2012 Thm 4) is for the
    exact minimiser of ``F_b``, which no solver delivers; AMP's argument (Iyengar et al. 2019,
    Thm 1) covers a minimiser within a fixed distance ``r = sqrt(2g/(lambda+Delta))`` of it with
    output noise for sensitivity ``2r``, composing to ``epsilon_obj + epsilon_out``. Needs
    ``|loss'| <= 1`` and ``loss'' <= c`` (docs/perturbation.md). Never released: the
    un-noised minimiser, the perturbed objective's gap. Utility:
    :func:`dpsolve.bounds.objective_perturbation_bound`.
    """
    secure = check_secure(secure, rng)
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    reject_multinomial(problem, "objective_perturbation")
    if problem.loss not in _CURVATURE:
        raise ValueError(f"objective_perturbation needs a twice-differentiable loss with "
                         f"|loss'| <= 1: one of {sorted(_CURVATURE)}, got {problem.loss!r} "
                         "(for hinge problems use huber_hinge)")
    if problem.radius is not None:
        raise ValueError("objective_perturbation's analysis is for an unconstrained problem: "
                         "use a Problem with radius=None (and reg > 0)")
    L, tolerance = _check_common("objective_perturbation", problem, tolerance)
    output_fraction = check_real(output_fraction, "output_fraction", low=0.0, high=1.0)
    noise, epsilon, delta, calibration = _resolve_noise(noise, epsilon, delta, calibration,
                                                        problem.n, output_fraction)
    n, p, lam, B = problem.n, problem.p, problem.reg, problem.row_norm
    eps_obj = (1.0 - output_fraction) * epsilon
    eps_out = output_fraction * epsilon
    eps_prime, extra_reg = objective_perturbation_constants(problem, eps_obj)
    objective_scale = 2.0 * B / eps_prime
    radius_gap = math.sqrt(2.0 * tolerance / (lam + extra_reg))
    sensitivity = 2.0 * radius_gap
    # K from public constants only (not from b, whose norm is secret): start at -b/(n mu)
    plan = fixed.objective_plan(problem, tolerance, extra_reg, objective_scale)
    if secure:
        fixed.check_tolerance(plan, "objective_perturbation")
    rng = secure_generator(rng, secure)

    start = time.perf_counter()
    b = gamma_norm_noise(objective_scale, p, rng=rng)
    linear = b / n
    if secure:
        theta_hat = fixed.minimize(problem, plan, linear=linear, start=-linear / (lam + extra_reg))
    else:
        theta_hat = _newton_perturbed(problem, linear, extra_reg,
                                      math.sqrt(2.0 * (lam + extra_reg) * tolerance))
        if theta_hat is None:
            theta_hat = _fallback(problem, plan, linear=linear, start=-linear / (lam + extra_reg))
    b2, out_event, out_noise, sigma = _output_noise(noise, delta, eps_out, sensitivity,
                                                    calibration, p, n, rng)
    theta = theta_hat + b2
    del theta_hat, b, linear
    wall_time = time.perf_counter() - start
    event = dp_accounting.ComposedDpEvent([pure_event(eps_obj), out_event])
    report = certify(event, epsilon, delta, "paper" if noise == "gamma_norm" else calibration)
    fit = Fit(theta=theta, sigma=sigma, steps=1, solver="objective_perturbation",
              source=OBJECTIVE_SOURCE, wall_time=wall_time, dp_event=event, privacy=report,
              noise={"objective_gamma_norm": objective_scale, **out_noise},
              settings={"epsilon_objective": eps_obj, "epsilon_output": eps_out,
                        "epsilon_prime": eps_prime, "extra_reg": extra_reg,
                        "tolerance": tolerance, "output_sensitivity": sensitivity,
                        "noise": noise, **_inner_settings(plan, secure)})
    return release(fit, secure)
