"""Output perturbation: Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 1."""
import math

from .._validation import Boolean, Options, Real, check_real
from ..bounds import (check_bound_arguments, from_mean, noise_moments, parameter_count,
                      require_constraint)
from ..privacy.accounting import ACCOUNTANTS
from ..privacy.calibration import OUTPUT_NOISES, output_noise_scale, resolve_output_noise
from . import _inner
from ._hooks import Hooks
from ._prediction import prediction_constants
from ._registry import register
from ._accepts import Accepts
from ._lifecycle import Bound, Plan, Released, SolverSpec, lifecycle

SOURCE = ("Chaudhuri, Monteleoni & Sarwate 2011, Alg. 1 'ERM with output perturbation', "
          "as presented in Chen's 2019 slides 'Differential Privacy and Distributed "
          "Learning'")

PARAMETERS = {
    "tolerance": Real(0.0, 1e-2, high_inclusive=True),
    "noise": [None, Options(OUTPUT_NOISES)],  # None: from delta (resolve_output_noise)
    "calibration": Options(("paper",) + ACCOUNTANTS),   # used by Gaussian noise only
    "project": Boolean(),
}


@lifecycle
def output_perturbation(problem, epsilon, delta=None, *, noise=None, tolerance=1e-10,
                        calibration="pld", project=True, secure=False, rng=None, accountant=None):
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
    {{problem}}
        Needs ``reg > 0`` and a finite Lipschitz constant. Any loss, hinge and multinomial
        included. For multinomial, theta has shape (p, K), the noise is drawn on all p K
        coordinates (``L = sqrt(2) B`` and the norms are Frobenius), and the minimiser comes
        from :func:`dpsolve.reference_minimizer`.
    epsilon : float
        > 0.
    delta : float, optional
        None (default) with ``noise="gamma_norm"``: epsilon-DP. In (0, 1/2) with
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
    {{rng}}
    {{secure}}
        With ``secure=True`` the minimiser comes from the fixed-iteration solver only (no
        certificate, no data-dependent branch or exception), so the loss must be smooth (hinge
        is refused: use huber_hinge).
    {{accountant}}

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
    X in chunks of rows (a Problem built from a Dask array or a
    :class:`~dpsolve.chunked.RowChunks`, smooth losses only): every pass of the inner solve
    is a per-chunk computation where the chunk lives, added here in chunk order (Newton in
    research mode, no cone solve); the noise is drawn here.
    Utility: :func:`dpsolve.solvers.output_perturbation.output_perturbation_bound`.

    Source: Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 1, and its sensitivity claim, as
    presented in Chen's 2019 slides ("Output Perturbation - non-distributed setting"; see
    docs/sources.md).
    """


def plan(problem, partition, target, options):
    """The sensitivity, the output noise and the inner solve's plan, from public constants."""
    epsilon, delta, secure = target.epsilon, target.delta, target.secure
    noise, tolerance = options["noise"], options["tolerance"]
    calibration, project = options["calibration"], options["project"]
    if not problem.rows.random_access and not problem.loss_object.smooth:
        raise ValueError(f"output_perturbation with X in chunks of rows needs a smooth loss "
                         f"(its inner solve runs chunk by chunk; loss={problem.loss!r} needs "
                         "the cone solve, on X in memory): use loss='huber_hinge'")
    L = _inner._lipschitz("output_perturbation", problem)
    noise, epsilon, delta, calibration = resolve_output_noise(noise, epsilon, delta, calibration,
                                                              problem.n)
    inner = _inner._inner_plan(problem, tolerance, "output_perturbation", secure)
    n, lam = problem.n, problem.reg
    sensitivity = 2.0 * L / (n * lam) + 2.0 * math.sqrt(2.0 * tolerance / lam)
    scale, event, noise_scales, sigma = _inner._output_noise(noise, delta, epsilon, sensitivity,
                                                             calibration)
    return Plan(epsilon=epsilon, delta=delta,
                method="paper" if noise == "gamma_norm" else calibration, event=event,
                sigma=sigma, noise=noise_scales,
                settings={"noise": noise, "tolerance": tolerance, "sensitivity": sensitivity,
                          "project": project, **_inner._inner_settings(inner, secure)},
                run_inputs={"inner": inner, "secure": secure, "scale": scale,
                            "inner_solver": _inner.INNER_SOLVER})


def run(problem, partition, plan, rng):
    """The inner solve, then the one noise draw."""
    settings, state = plan.settings, plan.run_inputs
    solver = state["inner_solver"]
    theta_hat = solver.minimizer(problem, settings["tolerance"], state["inner"], state["secure"])
    # (multinomial: the mechanism runs on the p K coordinates of the flattened parameter)
    b = solver.draw(settings["noise"], state["scale"], theta_hat.size, rng)
    return Released(theta=_inner._release(problem, theta_hat, b.reshape(theta_hat.shape),
                                          settings["project"]))


def output_perturbation_bound(problem, epsilon, delta=None, *, noise=None, tolerance=1e-10,
                              calibration="pld", form="mean"):
    r"""Excess-risk bound of :func:`dpsolve.output_perturbation` at its noise, explicit constants:

    * with a constraint (the released vector is projected onto C, and F is G-Lipschitz on C with
      ``G = L + lambda R``): ``g + G E||b||``;
    * without one, smooth loss: ``g + (beta + lambda) E||b||^2 / 2`` (the linear term has mean 0);
    * without one, hinge: ``g + L E||b|| + lambda E||b||^2 / 2``,

    with g the tolerance and b the output noise (``E||b|| = p s``, ``E||b||^2 = p(p+1)s^2`` for
    gamma-norm of scale s; ``sqrt(p) sigma`` and ``p sigma^2`` for Gaussian; p is ``p K`` for
    multinomial). Chaudhuri et al. (2011) bound the generalisation error rather than this; these
    follow from Lipschitz continuity or smoothness of F at a g-optimal point. Mean form (times n
    for ``form="sum"``).

    Parameters
    ----------
    problem : Problem
        With ``reg > 0`` (ValueError otherwise).
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float, optional
        None (or 0) for gamma-norm noise; in (0, 1) for Gaussian noise.
    noise : {"gamma_norm", "gaussian"}, optional
        The output noise; default ``"gamma_norm"`` without ``delta`` (epsilon-DP), else
        ``"gaussian"``.
    tolerance : float, default 1e-10
        The optimisation tolerance g of the non-private minimiser, in (0, 1e-2].
    calibration : {"pld", "rdp", "zcdp", "strong", "basic", "paper"}, default "pld"
        Calibration of Gaussian noise (ignored for gamma-norm), as in
        :func:`dpsolve.output_perturbation`.
    form : {"mean", "sum"}, default "mean"
        Normalisation: ``F(theta) - F(theta*)`` (mean form) or ``n`` times it (sum
        form, ``L = n F``).

    Returns
    -------
    float
        The bound.
    """
    check_bound_arguments(problem, epsilon, None, form)
    if problem.reg <= 0.0:
        raise ValueError("output perturbation needs problem.reg > 0")
    noise, epsilon, delta, calibration = resolve_output_noise(noise, epsilon, delta,
                                                              calibration, problem.n)
    tolerance = check_real(tolerance, "tolerance", low=0.0, high=1e-2, high_inclusive=True)
    n, p, lam, L = problem.n, parameter_count(problem), problem.reg, problem.lipschitz
    sensitivity = 2.0 * L / (n * lam) + 2.0 * math.sqrt(2.0 * tolerance / lam)
    scale = output_noise_scale(noise, epsilon, delta, sensitivity, calibration)
    m1, m2 = noise_moments(noise, scale, p)
    if problem.radius is not None:
        value = tolerance + (L + lam * problem.radius) * m1
    elif math.isfinite(problem.smoothness):
        value = tolerance + 0.5 * (problem.smoothness + lam) * m2
    else:
        value = tolerance + L * m1 + 0.5 * lam * m2
    return from_mean(value, problem, form)


def bound(problem, partition, plan):
    """:func:`output_perturbation_bound` at the plan's target epsilon and delta and its noise,
    tolerance and calibration."""
    epsilon, delta = plan.target.epsilon, plan.target.delta
    if delta is not None and delta == 0:
        # pure DP asked for as delta=0: the bound takes any delta given for Gaussian noise's
        return None
    settings = plan.settings
    calibration = plan.method if plan.method not in ("paper", "explicit") else (
        "paper" if plan.method == "paper" else "pld")
    return Bound(output_perturbation_bound(
        problem, epsilon, delta, noise=settings["noise"], tolerance=settings["tolerance"],
        calibration=calibration), "output perturbation (CMS 2011)")


def prediction_reg(problem, epsilon, delta=None):
    r"""The ridge for prediction (:mod:`dpsolve.tuning`): the release is ``theta_lambda + u``
    with ``||u||`` of scale ``2L / (n lambda epsilon)`` and a ``beta``-smooth loss, so
    ``E = beta E||u||^2 / 2`` with ``E||u||^2 = p (p + 1) (2L / (n lambda epsilon))^2``; the
    minimiser of ``lambda R_0^2 / 2 + E`` falls like ``(n epsilon)^{-2/3}``. A loss that is not
    smooth (the hinge) is only ``L``-Lipschitz: ``E = L E||u|| = L p 2L / (n lambda epsilon)``
    (``||u||`` is Gamma(p) distributed), whose minimiser falls like ``(n epsilon)^{-1/2}``.

    Parameters
    ----------
    problem : Problem
        Only its public constants are read (a finite Lipschitz constant).
    epsilon : float
        The fit's epsilon.
    delta : float or None
        Unused: the rule is the gamma-norm noise's.

    Returns
    -------
    float
    """
    require_constraint(problem, "l2", "output_perturbation's prediction_reg")
    n, p, _, R0 = prediction_constants(problem)
    L, beta = problem.lipschitz, problem.smoothness
    if not math.isfinite(beta):
        # minimise lam R0^2/2 + L p (2L / (n lam eps)): lam = (2L / R0) sqrt(p / (n eps))
        return 2.0 * L / R0 * math.sqrt(p / (n * epsilon))
    # E||u||^2 = p (p + 1) (2L / (n lam eps))^2; minimise lam R0^2/2 + beta E||u||^2 / 2
    return (2.0 * beta * p * (p + 1) * (2.0 * L / (n * epsilon)) ** 2 / R0 ** 2) ** (1 / 3)


SPEC = register(SolverSpec(
    accepts=Accepts(delta="optional", zero_delta_is_pure=True),
    name="output_perturbation", function=output_perturbation,
    works=("Chaudhuri, Monteleoni & Sarwate 2011",), source=SOURCE,
    # a convex loss: the ridge then bounds the minimiser's sensitivity; its inner solves run
    # on the kernels
    needs=("convex", "compiled"), partition=None,
    neighbours="replace-one record", guarantee="dp", parameters=PARAMETERS, plan=plan, run=run,
    bound=bound, page="perturbation.md",
    nonfinite_hint="the noise scale overflowed: use a larger epsilon or reg",
    example={"epsilon": 1.0, "delta": 1e-6}, example_problem={"radius": 1.0, "reg": 0.1},
    sparse=True, chunked=True, hooks=Hooks(prediction_reg=prediction_reg)))
