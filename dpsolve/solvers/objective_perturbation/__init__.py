"""Objective perturbation as Approximate Minima Perturbation: Chaudhuri, Monteleoni & Sarwate
2011, Algorithm 2, with Kifer, Smith & Thakurta 2012's constants and Iyengar et al. 2019's
treatment of an approximate minimiser."""
import math

import dp_accounting
import numpy as np

from ... import _fixed_iteration as fixed
from ..._capabilities import multinomial_solvers
from ..._validation import Options, Real, RealArray, check_real
from ...bounds import check_bound_arguments, from_mean, noise_moments, require_constraint
from ...privacy.accounting import ACCOUNTANTS, ApproxDpEvent, pure_event
from ...privacy.calibration import OUTPUT_NOISES, output_noise_scale
from ...problem import reject_multinomial
from .. import _inner
from .._hooks import Hooks
from .._prediction import GRID_POINTS, prediction_constants
from .._registry import register
from .._accepts import Accepts
from .._lifecycle import Bound, Plan, Released, SolverSpec, lifecycle
from . import approximate_minima, privacy_constants

SOURCE = ("Chaudhuri, Monteleoni & Sarwate 2011, Alg. 2 with Kifer, Smith & Thakurta "
          "2012's constants, as Approximate Minima Perturbation (Iyengar et al. 2019); "
          "beyond dpsolve's source documents")
# |loss'| <= 1 and a bound on loss'' (the loss's ``curvature``) of a convex loss of one margin
# (the Jacobian of the noise-to-minimiser map has rank-one corrections): what the privacy proof
# needs. The kernels are not: the inner solves evaluate a loss without a kernel entry through
# its own methods.
NEEDS = ("convex", "margin", "smooth", "unit_derivative")

PARAMETERS = {
    "objective_noise": Options(("auto",) + OUTPUT_NOISES),   # Gaussian needs delta: in plan
    "tolerance": [Options(("auto",)), Real(0.0, 1e-2, high_inclusive=True)],
    "output_fraction": [Options(("auto",)), Real(0.0, 1.0)],
    "extra_reg": [Options(("auto", "cms")), Real(0.0, low_inclusive=True)],
    "noise": [None, Options(OUTPUT_NOISES)],          # None: from delta (resolve_output_noise)
    "calibration": Options(("paper",) + ACCOUNTANTS),   # used by Gaussian noise only
    "centre": [None, RealArray()],                   # of theta's shape: in plan
    "centre_bound": [None, Real(0.0, low_inclusive=True)],  # >= ||centre||, <= 1e6: in plan
}


@lifecycle
def objective_perturbation(problem, epsilon, delta=None, *, objective_noise="auto",
                           output_fraction="auto", extra_reg="auto", noise=None,
                           tolerance="auto", calibration="pld", centre=None,
                           centre_bound=None, secure=False, rng=None, accountant=None):
    r"""Differentially private ERM by objective perturbation, run as Approximate Minima
    Perturbation (AMP; CMS 2011 Alg. 2, Kifer et al. 2012, Iyengar et al. 2019).

    The budget is split: ``epsilon_obj = (1 - output_fraction) epsilon`` perturbs the objective,
    ``epsilon_out = output_fraction * epsilon`` pays for the solver's inexactness. By default
    the split and the extra regularisation Delta are the ones that minimise the method's
    utility bound, chosen from public constants only
    (:func:`~.approximate_minima.objective_perturbation_settings`).

    1. ``epsilon' = epsilon_obj - ln(1 + cB^2 / (n (lambda + Delta)))`` (the Jacobian term
       once: CMS 2011 and Kifer et al. 2012 subtract it twice; docs/perturbation.md), for any
       Delta fixed in advance that leaves it positive; draw ``b`` with density proportional to
       ``exp(-epsilon' ||b|| / (2B))``, or, with ``objective_noise="gaussian"``, from
       ``N(0, sigma^2 I)`` at ``(epsilon_obj, delta)``.
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
    {{problem}}
        ``reg > 0``, no constraint (``radius=None``), a loss with ``|loss'| <= 1`` and bounded
        ``loss''``: ``"logistic"`` or ``"huber_hinge"`` (use it for hinge-type problems).
    epsilon : float
        Total epsilon > 0.
    delta : float, optional
        None: epsilon-DP (gamma-norm noise in the objective and on the output). In (0, 1): the
        claim is (epsilon, delta), and Gaussian noise goes where the bound says it helps.
    objective_noise : {"auto", "gamma_norm", "gaussian"}, default "auto"
        The noise b in the objective. ``"gamma_norm"``: density proportional to
        ``exp(-epsilon' ||b|| / (2B))``, epsilon-DP. ``"gaussian"`` (needs delta):
        ``N(0, sigma^2 I)`` with sigma from
        :func:`~dpsolve.privacy_constants.gaussian_objective_sigma`, an
        ``(epsilon_obj, delta)``-DP release (Kifer et al. 2012's Gaussian variant, dpsolve's
        constants). ``"auto"``: gamma-norm without delta, else the one with the smaller utility
        bound (Gaussian in high dimension: ``E||b||^2`` is ``p sigma^2`` against
        ``p (p + 1) s^2``).
    output_fraction : "auto" or float, default "auto"
        Share of epsilon for the output noise, in (0, 1); ``"auto"``: the share that minimises
        the utility bound (small: 0.001–0.007 at n = 1000, lambda = 1e-3, epsilon = 0.1–3 with
        the inner solve certified to 1e-12, and 1e-4–7e-4 with ``tolerance="auto"``).
    extra_reg : "auto", "cms" or float, default "auto"
        Delta ``>= 0`` added to the regulariser of the perturbed objective. ``"auto"``: the
        Delta that minimises the utility bound at the split; ``"cms"``: CMS 2011's two-branch
        rule (Delta = 0 whenever that leaves epsilon' > 0, however little); a number: that
        Delta (ValueError if it leaves no epsilon').
    noise : {"gamma_norm", "gaussian"}, optional
        Output noise. Default: Gaussian when gamma-norm objective noise is given delta, else
        gamma-norm (with Gaussian objective noise, which then takes all of delta). When both
        noises are Gaussian, delta is split evenly between them.
    tolerance : "auto" or float, default "auto"
        Gap g of the inner solve, in (0, 1e-2]. ``"auto"``: twice the float64 floor of the
        fixed-iteration solver for this problem, at most 1e-12
        (:func:`~.approximate_minima.auto_tolerance`; a
        smaller g needs less output noise). If Newton's method cannot certify g (it almost
        always does within a few steps), research mode falls back to the fixed-iteration solver
        (no exception). ``secure=True`` refuses a tolerance below the float64 floor of
        :mod:`dpsolve._fixed_iteration` (ValueError, before any work).
    calibration : {"pld", "rdp", "zcdp", "strong", "basic", "paper"}
        For Gaussian output noise, as in :func:`output_perturbation`.
    centre : array of shape ``problem.theta_shape``, optional
        A public point c at which both regularisers are centred:
        ``F_b(theta) = L(theta) + <b, theta>/n + ((lambda + Delta)/2)||theta - c||^2``. That is
        a public linear term ``-(lambda + Delta) <c, theta>`` added to the objective, which
        leaves the privacy proof unchanged (the density ratio depends on ``b``'s difference
        between neighbours and on the Hessian, neither of which it changes); with c on the
        intercept coordinate it is a margin offset (docs/intercepts.md). It must not depend on
        the data, or be a release composed in (the estimators' private base rate). Default 0.
    centre_bound : float, optional
        A public bound on ``||centre||`` (at least it), from which the inner solve's step count
        and tolerance are planned, so that they (and the Fit's settings) do not depend on a
        centre released from the data; default ``||centre||``.
    {{rng}}
        ``b`` is drawn first, then ``b_2``.
    {{secure}}
        With ``secure=True`` the inner solve is the fixed-iteration solver only (no Newton, no
        certificate, no data-dependent branch or exception).
    {{accountant}}

    Returns
    -------
    Fit
        ``noise = {"objective_gamma_norm": 2B/epsilon'`` or ``"objective_gaussian": sigma,
        "gamma_norm" or "gaussian": ...}``, ``settings`` with ``objective_noise``, epsilon' (or
        ``objective_sigma`` and ``delta_objective``), the Jacobian term it paid
        (``jacobian_term``; CMS 2011's with ``extra_reg="cms"``), Delta, the split, the tolerance,
        ``inner_solver`` (``"fixed"`` or ``"certified_else_fixed"``) and ``inner_steps`` (the
        public K); ``dp_event`` the composition of a :class:`~dpsolve.privacy.PureDpEvent` (or,
        for Gaussian objective noise, an :class:`~dpsolve.privacy.ApproxDpEvent`) and the
        output event.

    Notes
    -----
    Privacy. Objective perturbation's proof (CMS 2011 Thm 9; Kifer et al. 2012 Thm 4) is for the
    exact minimiser of ``F_b``, which no solver delivers; AMP's argument (Iyengar et al. 2019,
    Thm 1) covers a minimiser within a fixed distance ``r = sqrt(2g/(lambda+Delta))`` of it with
    output noise for sensitivity ``2r``, composing to ``epsilon_obj + epsilon_out``. Needs
    ``|loss'| <= 1`` and ``loss'' <= c`` (docs/perturbation.md). Never released: the
    un-noised minimiser, the perturbed objective's gap. Utility:
    :func:`dpsolve.solvers.objective_perturbation.objective_perturbation_bound`.
    """


def plan(problem, partition, target, options):
    """The objective noise, the budget split and Delta (from the utility bound, or as given),
    the noise scales and the inner solve's K, from public constants."""
    epsilon, delta, secure = target.epsilon, target.delta, target.secure
    objective_noise, output_fraction, extra_reg = (
        options["objective_noise"], options["output_fraction"], options["extra_reg"])
    noise, tolerance, calibration = options["noise"], options["tolerance"], options["calibration"]
    centre, centre_bound = options["centre"], options["centre_bound"]
    if problem.radius is not None:
        raise ValueError("objective_perturbation's analysis is for an unconstrained problem: "
                         "use a Problem with radius=None (and reg > 0)")
    centre = check_centre(centre, problem)
    centre_bound = _check_centre_bound(centre_bound, centre)
    _inner._lipschitz("objective_perturbation", problem)
    # the tolerance, the settings at it and the noises, each resolved once
    amp = approximate_minima.plan_settings(
        problem, epsilon, delta, tolerance=tolerance, centre_bound=centre_bound,
        objective_noise=objective_noise, output_fraction=output_fraction, extra_reg=extra_reg,
        noise=noise, calibration=calibration)
    epsilon, tolerance, noise, calibration = amp.epsilon, amp.tolerance, amp.noise, amp.calibration
    objective_noise, output_fraction, extra_reg = (amp.objective_noise, amp.output_fraction,
                                                   amp.extra_reg)
    eps_obj, eps_out, delta_obj, delta_out = (amp.epsilon_objective, amp.epsilon_output,
                                              amp.delta_objective, amp.delta_output)
    objective_scale, jacobian, sensitivity = (amp.objective_scale, amp.jacobian_term,
                                              amp.output_sensitivity)
    if objective_noise == "gaussian":
        objective_event = ApproxDpEvent(eps_obj, delta_obj)
        objective_settings = {"objective_sigma": objective_scale, "delta_objective": delta_obj}
    else:
        objective_event = pure_event(eps_obj)
        objective_settings = {"epsilon_prime": amp.epsilon_prime}
    # K from public constants only (not from b, whose norm is secret): start at -b/(n mu)
    inner = _inner._bounded(amp.inner, "objective_perturbation", secure)
    if secure:
        fixed.check_tolerance(inner, "objective_perturbation")
    scale, out_event, out_noise, sigma = _inner._output_noise(noise, delta_out, eps_out,
                                                              sensitivity, calibration)
    return Plan(epsilon=epsilon, delta=delta_obj + delta_out,
                method="paper" if noise == "gamma_norm" else calibration,
                event=dp_accounting.ComposedDpEvent([objective_event, out_event]),
                sigma=sigma,
                noise={f"objective_{objective_noise}": objective_scale, **out_noise},
                settings={"objective_noise": objective_noise, "epsilon_objective": eps_obj,
                          "epsilon_output": eps_out, "output_fraction": output_fraction,
                          **objective_settings, "jacobian_term": jacobian,
                          "extra_reg": extra_reg,
                          "tolerance": tolerance, "output_sensitivity": sensitivity,
                          "noise": noise, "centred": centre is not None,
                          **_inner._inner_settings(inner, secure)},
                run_inputs={"inner": inner, "secure": secure, "scale": scale, "centre": centre,
                            "inner_solver": _inner.INNER_SOLVER})


def check_centre(centre, problem):
    """None, or ``centre`` as a new finite float64 array of ``problem.theta_shape``."""
    if centre is None:
        return None
    try:
        value = np.array(centre, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"centre must be None or an array of real numbers of shape "
                        f"{problem.theta_shape}") from None
    if value.shape != tuple(problem.theta_shape):
        raise ValueError(f"centre must have shape {problem.theta_shape} (theta's), got "
                         f"{value.shape}")
    if not np.all(np.isfinite(value)) or _norm(value) > CENTRE_MAX_NORM:
        raise ValueError(f"centre must be finite with norm at most {CENTRE_MAX_NORM:g}")
    return value


#: Beyond this a centre is a mistake (a margin offset of 1e6 in logits is a constant predictor).
CENTRE_MAX_NORM = 1e6


def _norm(centre):
    return 0.0 if centre is None else float(np.linalg.norm(centre))


def _check_centre_bound(bound, centre):
    """The public bound on ``||centre||`` the plan uses: ``bound`` (checked to cover the
    centre), or the centre's norm."""
    if bound is None:
        return _norm(centre)
    bound = check_real(bound, "centre_bound", low=0.0, low_inclusive=True,
                       high=CENTRE_MAX_NORM, high_inclusive=True)
    if _norm(centre) > bound:
        raise ValueError(f"centre_bound={bound:g} is below the centre's norm "
                         f"{_norm(centre):g}")
    return bound


def run(problem, partition, plan, rng):
    """Draw b, minimise the perturbed objective, draw the output noise b_2."""
    settings, state = plan.settings, plan.run_inputs
    solver = state["inner_solver"]
    mu = problem.reg + settings["extra_reg"]
    kind = settings["objective_noise"]
    b = solver.draw(kind, plan.noise[f"objective_{kind}"], problem.p, rng)
    linear = b / problem.n
    if state["centre"] is not None:
        # ((lambda + Delta)/2)||theta - c||^2 = the uncentred term - mu <c, theta> + constant
        linear = linear - mu * state["centre"]
    if state["secure"]:
        theta_hat = solver.fixed_iteration(problem, state["inner"], linear=linear,
                                           start=-linear / mu)
    else:
        theta_hat = solver.newton(problem, linear, settings["extra_reg"],
                                  math.sqrt(2.0 * mu * settings["tolerance"]))
        if theta_hat is None:
            theta_hat = solver.fallback(problem, state["inner"], linear=linear,
                                        start=-linear / mu)
    b2 = solver.draw(settings["noise"], state["scale"], problem.p, rng)
    return Released(theta=theta_hat + b2)


def objective_perturbation_bound(problem, epsilon, delta=None, *, objective_noise="auto",
                                 output_fraction="auto", extra_reg="auto", noise=None,
                                 tolerance=1e-12, calibration="pld", form="mean"):
    r"""Excess-risk bound of :func:`dpsolve.objective_perturbation`, explicit constants.

    With ``v = b/n`` the objective noise, Delta the extra regularisation, ``mu = lambda + Delta``,
    ``gamma = sqrt(2 mu g)`` the certified gradient norm and ``r = sqrt(2g/mu)``, the inner
    solution's excess risk is bounded by the smaller of two analyses
    (both hold, so their minimum does): through lambda-strong convexity of F,
    ``(A + C||v||)^2 / (2 lambda)`` with ``A = gamma + Delta (sqrt(2 mu l_0)/mu + r)``,
    ``C = 1 + 2 Delta / mu`` (``l_0`` = max loss at 0); through mu-strong convexity of the
    regularised objective, ``||v||^2/mu + ||v|| r + g + l_0 (1 - 2/(1 + sqrt(1 + 4 Delta /
    lambda)))`` (the last term, Delta's bias, is about ``Delta l_0 / lambda`` for a small Delta
    and never above ``l_0``). The output noise
    ``b_2`` adds ``(beta + lambda) E||b_2||^2 / 2``. Expectations use the moments of b
    (gamma-norm: ``||b|| ~ Gamma(p, 2B/epsilon')``; Gaussian: ``E||b||^2 = p sigma^2``). This is
    ``O(p^2 / (n^2 epsilon^2 lambda))`` for gamma-norm noise, the rate of Chaudhuri et al.
    (2011), and ``O(p log(1/delta) / (n^2 epsilon^2 lambda))`` for Gaussian noise. Mean form
    (times n for ``form="sum"``). Not for multinomial problems (objective_perturbation does not
    take them).

    Parameters
    ----------
    problem : Problem
        With ``reg > 0`` and ``radius=None`` (ValueError otherwise).
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float, optional
        None (or 0) for epsilon-DP; in (0, 1) for (epsilon, delta).
    objective_noise : {"auto", "gamma_norm", "gaussian"}, default "auto"
        As in :func:`~.approximate_minima.objective_perturbation_settings`.
    output_fraction : "auto" or float, default "auto"
        In (0, 1): the share of epsilon spent on the output noise ``b_2``; the rest goes to the
        objective noise b. ``"auto"``: the share
        :func:`~.approximate_minima.objective_perturbation_settings` chooses, as the
        solver does by default.
    extra_reg : "auto", "cms" or float, default "auto"
        Delta, as in
        :func:`~.approximate_minima.objective_perturbation_settings`.
    noise : {"gamma_norm", "gaussian"}, optional
        The output noise ``b_2``, as in
        :func:`~.approximate_minima.objective_perturbation_settings`.
    tolerance : float, default 1e-12
        The optimisation tolerance g of the inner solver, in (0, 1e-2].
    calibration : {"pld", "rdp", "zcdp", "strong", "basic", "paper"}, default "pld"
        Calibration of Gaussian output noise (ignored for gamma-norm), as in
        :func:`dpsolve.objective_perturbation`.
    form : {"mean", "sum"}, default "mean"
        Normalisation: ``F(theta) - F(theta*)`` (mean form) or ``n`` times it (sum
        form, ``L = n F``).

    Returns
    -------
    float
        The bound.
    """
    check_bound_arguments(problem, epsilon, None, form)
    reject_multinomial(problem, "objective_perturbation_bound", multinomial_solvers())
    settings = approximate_minima.objective_perturbation_settings(
        problem, epsilon, delta, objective_noise=objective_noise,
        output_fraction=output_fraction, extra_reg=extra_reg, noise=noise, tolerance=tolerance,
        calibration=calibration)
    fraction, extra, noise = (settings["output_fraction"], settings["extra_reg"],
                              settings["noise"])
    p, lam = problem.p, problem.reg
    mu = lam + extra
    r = math.sqrt(2.0 * tolerance / mu)
    inner = approximate_minima.perturbed_minimiser_bound(
        problem, "cms" if extra_reg == "cms" else settings["objective_noise"],
        settings["delta_objective"], (1.0 - fraction) * epsilon, mu, tolerance)
    scale = output_noise_scale(noise, fraction * epsilon, settings["delta_output"], 2.0 * r,
                               calibration)
    _, m2 = noise_moments(noise, scale, p)
    value = inner + 0.5 * (problem.smoothness + lam) * m2
    return from_mean(value, problem, form)


def bound(problem, partition, plan):
    """:func:`objective_perturbation_bound` at the plan's split and Delta."""
    epsilon, delta = plan.target.epsilon, plan.target.delta
    if delta is not None and delta == 0:
        # pure DP asked for as delta=0: the bound takes any delta given for Gaussian noise's
        return None
    settings = plan.settings
    return Bound(objective_perturbation_bound(
        problem, epsilon, delta, objective_noise=settings["objective_noise"],
        output_fraction=settings["output_fraction"],
        extra_reg="cms" if plan.options["extra_reg"] == "cms" else settings["extra_reg"],
        noise=settings["noise"], tolerance=settings["tolerance"]),
        "objective perturbation (CMS 2011 / AMP)")


def refuse_loss(problem):
    """The ValueError for a loss the privacy proof does not cover (``Hooks.refuse_loss``)."""
    raise ValueError(f"objective_perturbation needs a twice-differentiable loss with "
                     f"|loss'| <= 1: one of {sorted(SPEC.losses)}, got {problem.loss!r} (for "
                     "hinge problems use huber_hinge)")


def prediction_reg(problem, epsilon, delta=None):
    r"""The ridge for prediction (:mod:`dpsolve.tuning`), by a search over a public grid: the
    release minimises ``F_lambda + <b, theta>/n``, so ``F_lambda(theta_hat) - min F_lambda <=
    ||b||^2 / (n^2 lambda)`` and ``E = E||b||^2 / (n^2 lambda)``, with ``E||b||^2 = p (p + 1)
    (2B/epsilon')^2`` for gamma-norm noise (``epsilon' = epsilon - ln(1 + c B^2 / (n
    lambda))``) and ``p sigma^2`` for Gaussian noise
    (:func:`~dpsolve.privacy_constants.gaussian_objective_sigma`). A fit at this ridge adds
    none of its own (``extra_reg=0``, ``Hooks.prediction_options``).

    Parameters
    ----------
    problem : Problem
        Only its public constants are read.
    epsilon : float
        The fit's epsilon.
    delta : float or None
        The fit's delta (None or 0: gamma-norm noise).

    Returns
    -------
    float
    """
    require_constraint(problem, "l2", "objective_perturbation's prediction_reg")
    n, p, floor, R0 = prediction_constants(problem)
    grid = np.geomspace(floor, 1e4, GRID_POINTS)
    values = [lam * R0 * R0 / 2.0 + _noise_energy(problem, lam, epsilon, delta, p)
              / (n * n * lam) for lam in grid]
    return float(grid[int(np.argmin(values))])


def _noise_energy(problem, lam, epsilon, delta, p):
    """``E||b||^2`` of the objective's noise (sum form) at ridge ``lam``; inf where the
    Jacobian term alone spends epsilon."""
    cB2 = problem.loss_object.curvature * problem.row_norm ** 2
    if delta:
        sigma = privacy_constants.gaussian_objective_sigma(cB2, problem.row_norm, problem.n,
                                                           lam, epsilon, delta)
        return p * sigma * sigma
    eps_prime = epsilon - privacy_constants.objective_jacobian_term(cB2, problem.n, lam)
    if eps_prime <= 0.0:
        return math.inf
    return p * (p + 1) * (2.0 * problem.row_norm / eps_prime) ** 2


SPEC = register(SolverSpec(
    accepts=Accepts(delta="optional", zero_delta_is_pure=True),
    name="objective_perturbation", function=objective_perturbation,
    works=("Chaudhuri, Monteleoni & Sarwate 2011", "Kifer, Smith & Thakurta 2012",
           "Iyengar et al. 2019"),
    source=SOURCE, needs=NEEDS, partition=None, neighbours="replace-one record",
    guarantee="dp", parameters=PARAMETERS, plan=plan, run=run, bound=bound,
    page="perturbation.md",
    nonfinite_hint="a noise scale overflowed: use a larger epsilon or reg",
    example={"epsilon": 1.0, "delta": 1e-6}, example_problem={"radius": None, "reg": 0.1},
    sparse=True,
    hooks=Hooks(refuse_loss=refuse_loss, prediction_reg=prediction_reg,
                prediction_options={"extra_reg": 0.0})))
