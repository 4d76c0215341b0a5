r"""Approximate Minima Perturbation: objective perturbation's privacy constants and the
settings :func:`dpsolve.objective_perturbation` plans from them.

Objective perturbation (Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 2, with Kifer, Smith &
Thakurta 2012's constants) run with an approximate minimiser, as Iyengar et al. 2019's
Approximate Minima Perturbation (AMP): ``b`` perturbs the objective, the inner solve stops at a
gap ``g`` fixed in advance, and an output noise ``b_2`` pays for the inexactness. Everything the
method decides before it reads the data is here, from public constants only:

* **privacy constants**, in :mod:`~.privacy_constants` and importable from here too: the
  Jacobian term (:func:`~.privacy_constants.objective_jacobian_term`), the epsilon' of
  gamma-norm objective noise
  (:func:`~.privacy_constants.objective_perturbation_constants`, CMS 2011's own rule in
  :func:`~.privacy_constants.cms_objective_constants`), the sigma of Gaussian objective
  noise (:func:`~.privacy_constants.gaussian_objective_sigma`,
  :func:`~.privacy_constants.gaussian_objective_constants`) and the split of delta
  between the two noises (:func:`~.privacy_constants.resolve_objective_noise`);
* **the settings search**: the objective noise, the output share of epsilon and the extra
  regularisation Delta that minimise the utility bound
  (:func:`objective_perturbation_settings`; the bound itself is
  :func:`dpsolve.solvers.objective_perturbation.objective_perturbation_bound`);
* **the inner tolerance** g of ``tolerance="auto"`` (:func:`auto_tolerance`);
* :func:`plan_settings`, all of these for one fit, each computed once.
"""
import collections
import functools
import math

import numpy as np

from ... import _fixed_iteration as fixed
from ..._capabilities import multinomial_solvers
from ..._numerics import bounded_minimum
from ..._validation import check_choice, check_real
from ...bounds import noise_moments, require_constraint
from .privacy_constants import (cms_objective_constants, gaussian_objective_constants,
                                gaussian_objective_sigma, objective_jacobian_term,
                                objective_perturbation_constants, resolve_objective_noise)
# public names of this module before they moved to privacy_constants
from .privacy_constants import gaussian_objective_delta, gaussian_objective_tail  # noqa: F401
from ...privacy.calibration import OUTPUT_NOISES, check_noise_scale, resolve_output_noise
from ...privacy.mechanisms import gaussian_sigma_analytic, gaussian_sigma_classic
from ...problem import Problem, reject_multinomial


# -- the utility bound the settings minimise ----------------------------------------------------
#: Output-noise shares the objective-perturbation search tries first (geometric, 1e-4 .. 0.5),
#: before refining around the best.
_FRACTIONS = tuple(float(f) for f in np.geomspace(1e-4, 0.5, 25))

#: What the objective-perturbation bound needs of a Problem: public constants only.
_OPConstants = collections.namedtuple("_OPConstants", "n p lam B c l0 beta")


def _op_constants(problem):
    loss = problem.loss_object
    return _OPConstants(problem.n, problem.p, problem.reg, problem.row_norm, loss.curvature,
                        loss.max_value_at_zero(), problem.smoothness)


def _objective_moments(k, objective, eps_obj, mu):
    """``(E||v||, E||v||^2, noise parameter)`` of the objective noise ``v = b/n`` at the budget
    ``eps_obj`` and ``mu = lambda + Delta``, or None where the Jacobian term spends it all.
    ``objective``: ``("gamma_norm", 0)`` (the parameter returned is epsilon'), ``("cms", 0)``
    (CMS 2011's constants, with mu from their rule) or ``("gaussian", delta_obj)`` (sigma)."""
    kind, delta_obj = objective
    cB2 = k.c * k.B * k.B
    if kind == "gaussian":
        sigma = gaussian_objective_sigma(cB2, k.B, k.n, mu, eps_obj, delta_obj)
        if not math.isfinite(sigma):
            return None
        return (*noise_moments("gaussian", sigma / k.n, k.p), sigma)
    if kind == "cms":
        eps_prime = cms_objective_constants(cB2, k.n, k.lam, eps_obj)[0]
    else:
        eps_prime = eps_obj - objective_jacobian_term(cB2, k.n, mu)
    if not eps_prime > 0.0:
        return None
    return (*noise_moments("gamma_norm", 2.0 * k.B / eps_prime / k.n, k.p), eps_prime)


def _perturbed_minimiser_bound(k, v1, v2, mu, tolerance):
    r"""Bound on ``F(theta_tilde) - F*`` for the inner solution ``theta_tilde`` of objective
    perturbation (before the output noise), the smaller of two analyses (both hold, so their
    minimum does), with ``v = b/n`` (``v1 = E||v||``, ``v2 = E||v||^2``), ``Delta = mu -
    lambda``, ``r = sqrt(2g/mu)``:

    * through lambda-strong convexity of F: ``||grad F(theta_tilde)|| <= gamma + ||v|| +
      Delta ||theta_tilde||`` with ``gamma = sqrt(2 mu g)`` and ``||theta_tilde|| <=
      (2||v|| + sqrt(2 mu l_0))/mu + r``, so ``F - F* <= (A + C||v||)^2 / (2 lambda)`` with
      ``A = gamma + Delta (sqrt(2 mu l_0)/mu + r)``, ``C = 1 + 2 Delta/mu``;
    * through mu-strong convexity of ``G = F + (Delta/2)||.||^2``: its minimiser moves by at
      most ``||v||/mu`` under the linear term, so ``G(theta_tilde) - G* <= ||v|| (||v||/mu + r)
      + g``, and ``F(theta_tilde) - F* <= G(theta_tilde) - G* + (G* - F*)``. The bias of
      Delta: with ``a = F(0) - F*``, ``b = F* >= (lambda/2)||theta*||^2`` (losses >= 0, so
      ``a + b <= l_0``) and t = Delta/lambda, convexity along ``s theta*`` gives
      ``G* - F* <= (1 - s) a + s^2 t b <= l_0 max(1 - s, s^2 t)`` for every s in [0, 1]; at
      ``s = 2 / (1 + sqrt(1 + 4t))`` that is ``l_0 (1 - s)``: about ``Delta l_0 / lambda``
      for a small Delta, never above ``l_0``. The noise is divided by mu, not lambda."""
    extra = mu - k.lam
    r = math.sqrt(2.0 * tolerance / mu)
    A = math.sqrt(2.0 * mu * tolerance) + extra * (math.sqrt(2.0 * mu * k.l0) / mu + r)
    C = 1.0 + 2.0 * extra / mu
    through_lambda = (A * A + 2.0 * A * C * v1 + C * C * v2) / (2.0 * k.lam)
    t = extra / k.lam
    bias = k.l0 * (1.0 - 2.0 / (1.0 + math.sqrt(1.0 + 4.0 * t)))
    through_mu = v2 / mu + v1 * r + tolerance + bias
    return min(through_lambda, through_mu)


def perturbed_minimiser_bound(problem, objective, delta_objective, epsilon_objective, mu,
                              tolerance):
    """Bound on ``F(theta_tilde) - F*`` (mean form) for objective perturbation's inner solution
    ``theta_tilde``, before the output noise: the smaller of the two analyses of
    :func:`_perturbed_minimiser_bound`, at the expected norms of the objective noise.

    Parameters
    ----------
    problem : Problem
        Gives n, p, lambda, B, the loss's curvature bound and its largest value at 0.
    objective : {"gamma_norm", "gaussian", "cms"}
        The objective noise (``"cms"``: gamma-norm at CMS 2011's constants).
    delta_objective : float
        The objective noise's delta (0 for gamma-norm).
    epsilon_objective : float
        The objective noise's share of epsilon.
    mu : float
        ``lambda + Delta``.
    tolerance : float
        The inner solve's gap g.

    Returns
    -------
    float
    """
    require_constraint(problem, "l2", "perturbed_minimiser_bound")
    k = _op_constants(problem)
    moments = _objective_moments(k, (objective, delta_objective), epsilon_objective, mu)
    return _perturbed_minimiser_bound(k, moments[0], moments[1], mu, tolerance)


def _objective_perturbation_value(k, epsilon, fraction, mu, unit, noise, tolerance,
                                  objective):
    """The bound of
    :func:`~dpsolve.solvers.objective_perturbation.objective_perturbation_bound` (mean form) for
    the constants ``k`` at the split ``fraction`` and the total regularisation
    ``mu = lambda + Delta``, with the output noise's scale per unit of sensitivity ``unit``;
    inf where the objective has no budget."""
    moments = _objective_moments(k, objective, (1.0 - fraction) * epsilon, mu)
    if moments is None or not math.isfinite(unit):
        return math.inf
    r = math.sqrt(2.0 * tolerance / mu)
    _, m2 = noise_moments(noise, unit * 2.0 * r, k.p)
    return (_perturbed_minimiser_bound(k, moments[0], moments[1], mu, tolerance)
            + 0.5 * (k.beta + k.lam) * m2)


def _unit_output_scale(noise, epsilon, delta, calibration):
    """Output-noise scale per unit of L2 sensitivity at this epsilon: exact (Balle–Wang) for
    Gaussian noise under an accountant, which a single Gaussian release's accountants agree
    with; inf where the classic mechanism is not defined (epsilon >= 1)."""
    if noise == "gamma_norm":
        return 1.0 / epsilon
    if calibration == "paper":
        return gaussian_sigma_classic(1.0, epsilon, delta) if epsilon < 1.0 else math.inf
    return gaussian_sigma_analytic(1.0, epsilon, delta)


def _best_mu(k, epsilon, fraction, unit, noise, tolerance, objective):
    """The total regularisation ``mu >= lambda`` that minimises the bound at this split: a
    bounded search in log mu above the smallest mu whose Jacobian term leaves some of the
    objective's budget, and ``Delta = 0`` itself when lambda alone leaves some."""
    eps_obj = (1.0 - fraction) * epsilon
    floor = k.c * k.B * k.B / (k.n * math.expm1(eps_obj)) if eps_obj < 700.0 else 0.0
    low = max(k.lam, floor * (1.0 + 1e-9))

    def value(t):
        return _objective_perturbation_value(k, epsilon, fraction, math.exp(t), unit, noise,
                                             tolerance, objective)

    t = bounded_minimum(value, math.log(low), math.log(low) + 30.0, 1e-6)
    at_low = value(math.log(low))
    at_t = value(t)
    if at_low <= at_t:
        return low, at_low                      # exactly lambda (Delta = 0) when low is lambda
    return max(low, math.exp(t)), at_t


@functools.lru_cache(maxsize=256)
def _objective_perturbation_search(k, epsilon, delta, output_fraction, extra_reg, noise,
                                   tolerance, calibration, objective):
    """The search of :func:`objective_perturbation_settings` (arguments checked, ``delta`` the
    output noise's; a pure function of public constants, cached)."""
    done = {}

    def at(fraction):
        # a pure function of the split: the refinement's last point is asked for again
        if fraction not in done:
            done[fraction] = _at(fraction)
        return done[fraction]

    def _at(fraction):
        unit = _unit_output_scale(noise, fraction * epsilon, delta, calibration)
        if extra_reg == "auto":
            return _best_mu(k, epsilon, fraction, unit, noise, tolerance, objective)
        eps_obj = (1.0 - fraction) * epsilon
        if extra_reg == "cms":
            mu = k.lam + cms_objective_constants(k.c * k.B ** 2, k.n, k.lam, eps_obj)[1]
        else:
            mu = k.lam + extra_reg
        return mu, _objective_perturbation_value(k, epsilon, fraction, mu, unit, noise,
                                                 tolerance, objective)

    if output_fraction == "auto":
        results = [at(f) for f in _FRACTIONS]
        best = min(range(len(results)), key=lambda i: results[i][1])
        lo = _FRACTIONS[max(best - 1, 0)]
        hi = _FRACTIONS[min(best + 1, len(_FRACTIONS) - 1)]
        fraction = math.exp(bounded_minimum(lambda t: at(math.exp(t))[1], math.log(lo),
                                            math.log(hi), 1e-3))
        mu, value = at(fraction)
        if results[best][1] <= value:
            fraction, (mu, value) = _FRACTIONS[best], results[best]
    else:
        fraction = output_fraction
        mu, value = at(fraction)
    extra = extra_reg if extra_reg not in ("auto", "cms") else mu - k.lam
    return fraction, extra, value


def _one_objective_noise(problem, epsilon, delta, objective_noise, output_fraction, extra_reg,
                         noise, tolerance, calibration):
    """objective_perturbation_settings for one kind of objective noise (arguments checked)."""
    noise, delta_obj, delta_out = resolve_objective_noise(objective_noise, noise, delta)
    if objective_noise == "gaussian" and extra_reg == "cms":
        raise ValueError('extra_reg="cms" is CMS 2011\'s rule for their (gamma-norm) objective '
                         'noise; with objective_noise="gaussian" use "auto" or a number')
    share = 0.5 if output_fraction == "auto" else output_fraction
    noise, epsilon, delta_out, calibration = resolve_output_noise(
        noise, epsilon, delta_out, calibration, problem.n, share)
    kind = "cms" if extra_reg == "cms" else objective_noise
    objective = (kind, delta_obj)
    k = _op_constants(problem)
    fraction, extra, value = _objective_perturbation_search(
        k, epsilon, delta_out, output_fraction, extra_reg, noise, tolerance, calibration,
        objective)
    eps_obj = (1.0 - fraction) * epsilon
    # these check a fixed extra_reg (ValueError naming the smallest usable one)
    if objective_noise == "gaussian":
        sigma, extra = gaussian_objective_constants(problem, eps_obj, delta_obj, extra)
        parameter = {"objective_sigma": sigma}
    else:
        eps_prime, extra = objective_perturbation_constants(
            problem, eps_obj, None if extra_reg == "cms" else extra)
        parameter = {"epsilon_prime": eps_prime}
    if not math.isfinite(value):
        raise ValueError(f"objective perturbation has no usable settings at epsilon={epsilon:g} "
                         f"(noise={noise!r}, calibration={calibration!r}, output_fraction="
                         f"{fraction:g}): the classic Gaussian mechanism needs the output "
                         "share of epsilon below 1")
    return {"objective_noise": objective_noise, "output_fraction": fraction,
            "extra_reg": extra, **parameter, "noise": noise, "delta_objective": delta_obj,
            "delta_output": delta_out, "bound": value}


def objective_perturbation_settings(problem, epsilon, delta=None, *, objective_noise="auto",
                                    output_fraction="auto", extra_reg="auto", noise=None,
                                    tolerance=1e-12, calibration="pld"):
    r"""The objective noise, the split and the extra regularisation of
    :func:`dpsolve.objective_perturbation`, chosen from public constants only: the ones that
    minimise :func:`dpsolve.solvers.objective_perturbation.objective_perturbation_bound`.

    Objective perturbation may add any ``Delta >= 0`` to the regulariser, fixed before seeing
    the data, as long as the Jacobian term ``ln(1 + cB^2/(n (lambda + Delta)))`` leaves some of
    the objective's budget (:func:`objective_jacobian_term`). CMS
    2011's rule takes ``Delta = 0`` whenever that is positive, which can leave almost nothing:
    at n = 1000, lambda = 1e-3, epsilon_obj = 0.45 (logistic, B = 1) their constants leave
    ``epsilon' = 0.004`` and a noise scale of 500. Here ``mu = lambda + Delta`` minimises the
    bound for each split (a 1-D search in log mu), and the split f (``output_fraction``) is
    searched over a geometric grid from 1e-4 to 0.5, then refined around the best. With
    ``delta`` given and ``objective_noise="auto"``, both objective noises are searched and the
    smaller bound wins (gamma-norm noise has ``E||b||^2 = p(p+1) s^2``, Gaussian ``p sigma^2``:
    Gaussian wins in high dimension). Only n, p, lambda, B, the loss's constants, epsilon,
    delta, the noises and the tolerance enter: the choice is public. For Gaussian output noise
    the search uses the exact Gaussian calibration (Balle–Wang) that a single release's
    accountants agree with; the fit then calibrates with ``calibration``.

    Parameters
    ----------
    problem : Problem
        With ``reg > 0`` and ``radius=None``.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float, optional
        Target delta, in (0, 1), or None for epsilon-DP.
    objective_noise : {"auto", "gamma_norm", "gaussian"}, default "auto"
        The noise b in the objective; ``"gaussian"`` needs delta; ``"auto"``: gamma-norm
        without delta, else the one with the smaller bound.
    output_fraction : "auto" or float, default "auto"
        The split f in (0, 1), or ``"auto"`` to search it.
    extra_reg : "auto", "cms" or float, default "auto"
        Delta ``>= 0``; ``"cms"`` for CMS 2011's rule (gamma-norm objective noise only);
        ``"auto"`` to search it.
    noise : {"gamma_norm", "gaussian"}, optional
        The output noise; default Gaussian when gamma-norm objective noise is given delta,
        else gamma-norm. Delta is split evenly when both noises are Gaussian.
    tolerance : float, default 1e-12
        The inner solver's gap g, in (0, 1e-2].
    calibration : str, default "pld"
        For Gaussian output noise: ``"paper"`` (classic mechanism, which needs
        ``f epsilon < 1``) or an accountant.

    Returns
    -------
    dict
        ``objective_noise``, ``output_fraction``, ``extra_reg`` (Delta), ``epsilon_prime``
        (gamma-norm objective noise) or ``objective_sigma`` (Gaussian, sum form), ``noise``
        (the output noise), ``delta_objective``, ``delta_output`` and ``bound`` (the
        mean-form bound at those settings, with the search's calibration).

    Raises
    ------
    ValueError
        For an invalid argument, or a fixed ``extra_reg`` that leaves the objective no budget.
    TypeError
        For ``objective_noise="gaussian"`` or ``noise="gaussian"`` without delta.
    """
    require_constraint(problem, "l2", "objective_perturbation_settings")
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    check_real(epsilon, "epsilon", low=0.0)
    reject_multinomial(problem, "objective_perturbation_settings", multinomial_solvers())
    if problem.reg <= 0.0 or problem.radius is not None:
        raise ValueError("objective perturbation needs reg > 0 and radius=None")
    # either objective noise has a scale of at least B / epsilon (sum form, epsilon' <= epsilon):
    # an epsilon that puts it beyond float64's range is refused before the search
    check_noise_scale("objective_perturbation", problem.row_norm / epsilon, epsilon,
                      "objective noise scale")
    check_choice(objective_noise, "objective_noise", ("auto",) + OUTPUT_NOISES)
    if output_fraction != "auto":
        output_fraction = check_real(output_fraction, "output_fraction", low=0.0, high=1.0)
    if isinstance(extra_reg, str):
        check_choice(extra_reg, "extra_reg", ("auto", "cms"))
    else:
        extra_reg = check_real(extra_reg, "extra_reg", low=0.0, low_inclusive=True)
    tolerance = check_real(tolerance, "tolerance", low=0.0, high=1e-2, high_inclusive=True)
    args = (output_fraction, extra_reg, noise, tolerance, calibration)
    if objective_noise != "auto":
        return _one_objective_noise(problem, epsilon, delta, objective_noise, *args)
    if delta is None or delta == 0 or extra_reg == "cms":
        return _one_objective_noise(problem, epsilon, delta, "gamma_norm", *args)
    found, errors = [], []
    for kind in OUTPUT_NOISES:
        try:
            found.append(_one_objective_noise(problem, epsilon, delta, kind, *args))
        except ValueError as error:     # this kind cannot take these options; the other may
            errors.append(error)
    if not found:
        raise errors[0]
    return min(found, key=lambda settings: settings["bound"])


# -- the inner tolerance ------------------------------------------------------------------------
#: The inner solve's tolerance g (its certified gap) from which ``tolerance="auto"`` starts,
#: and the largest it takes.
DEFAULT_TOLERANCE = 1e-12


def auto_tolerance(problem, epsilon, delta=None, *, objective_noise="auto",
                   output_fraction="auto", extra_reg="auto", noise=None, calibration="pld",
                   centre_bound=0.0):
    """The inner solve's tolerance g for ``tolerance="auto"``: twice the float64 floor of the
    fixed-iteration solver at the chosen settings (what secure mode can deliver by
    construction, :func:`dpsolve._fixed_iteration.float_floor`), at most 1e-12.

    A smaller g needs less output noise (sensitivity ``2 sqrt(2g/(lambda + Delta))``), so a
    smaller share of epsilon, so more epsilon' for the objective noise. The floor depends on
    the settings and the settings on g: three rounds of (settings at g, floor at those
    settings) from g = 1e-12, each only ever lowering g while it stays above twice the floor.
    From public constants only.

    Parameters
    ----------
    problem : Problem
        With ``reg > 0`` and ``radius=None``.
    epsilon : float
        Target epsilon.
    delta : float, optional
        Target delta (Gaussian output noise), or None.
    objective_noise, output_fraction, extra_reg, noise, calibration
        As :func:`dpsolve.objective_perturbation` takes them.
    centre_bound : float, default 0
        A bound on the regularisers' centre's norm (the centre moves the minimiser, and with
        it the floor).

    Returns
    -------
    float
        g, in ``[2 * floor, 1e-12]`` (1e-12 when the floor is above 5e-13).
    """
    require_constraint(problem, "l2", "auto_tolerance")
    options = {"objective_noise": objective_noise, "output_fraction": output_fraction,
               "extra_reg": extra_reg, "noise": noise, "calibration": calibration}
    return _auto_tolerance(problem, epsilon, delta, options, centre_bound)[0]


def _at_tolerance(problem, epsilon, delta, tolerance, options, centre_bound):
    """``(settings, objective noise scale, fixed-iteration plan)`` at the inner tolerance g:
    :func:`objective_perturbation_settings` at g, the scale of the objective noise they give
    (sum form), and the fixed-iteration solver's plan for the perturbed objective (its K, and
    the float64 floor :func:`auto_tolerance` compares with g)."""
    chosen = objective_perturbation_settings(problem, epsilon, delta, tolerance=tolerance,
                                             **options)
    if chosen["objective_noise"] == "gaussian":
        scale = chosen["objective_sigma"]
    else:
        scale = 2.0 * problem.row_norm / chosen["epsilon_prime"]
    inner = fixed.objective_plan(problem, tolerance, chosen["extra_reg"], scale,
                                 chosen["objective_noise"], centre_norm=centre_bound)
    return chosen, scale, inner


def _auto_tolerance(problem, epsilon, delta, options, centre_bound):
    """:func:`auto_tolerance`'s g and :func:`_at_tolerance` at it: each g the rounds try is
    planned once (a round asks again for the g the previous one accepted), and the plan keeps
    the one at the g returned instead of searching the settings again."""
    planned = {}

    def floor(tolerance):
        if tolerance not in planned:
            planned[tolerance] = _at_tolerance(problem, epsilon, delta, tolerance, options,
                                               centre_bound)
        return planned[tolerance][2].floor

    tolerance = accepted = DEFAULT_TOLERANCE
    for _ in range(3):
        candidate = 2.0 * floor(tolerance)
        if not candidate < tolerance:
            break
        tolerance = candidate
        # the floor grows (slowly) as g falls: keep only a g above its own floor
        if floor(tolerance) <= tolerance:
            accepted = tolerance
    return accepted, planned[accepted]


# -- one fit's plan ------------------------------------------------------------------------------
#: What :func:`plan_settings` returns.
Settings = collections.namedtuple("Settings", [
    "tolerance", "objective_noise", "output_fraction", "extra_reg", "noise", "calibration",
    "epsilon", "epsilon_objective", "epsilon_output", "epsilon_prime", "delta_objective",
    "delta_output", "objective_scale", "jacobian_term", "output_sensitivity", "inner"])
Settings.__doc__ = """Objective perturbation's settings for one fit (:func:`plan_settings`).

Attributes
----------
tolerance : float
    The inner solve's gap g.
objective_noise : {"gamma_norm", "gaussian"}
    The noise in the objective.
output_fraction : float
    The output noise's share of epsilon.
extra_reg : float
    The extra regularisation Delta.
noise : {"gamma_norm", "gaussian"}
    The output noise.
calibration : str
    How the Gaussian output noise is calibrated.
epsilon, epsilon_objective, epsilon_output : float
    The budget and its two shares.
epsilon_prime : float or None
    The epsilon left for gamma-norm objective noise after the Jacobian term; None for
    Gaussian objective noise.
delta_objective, delta_output : float
    The two noises' deltas.
objective_scale : float
    The objective noise's scale: ``2B / epsilon'`` for gamma-norm noise, the standard
    deviation (sum form) for Gaussian noise.
jacobian_term : float
    The Jacobian term :func:`~.privacy_constants.objective_jacobian_term`.
output_sensitivity : float
    The output noise's L2 sensitivity, ``2 sqrt(2g / (lambda + Delta))``.
inner : dpsolve._fixed_iteration.Plan
    The fixed-iteration solver's plan (:func:`dpsolve._fixed_iteration.objective_plan`) at
    the settings, before the cap on its steps.
"""


def plan_settings(problem, epsilon, delta=None, *, tolerance="auto", centre_bound=0.0,
                  objective_noise="auto", output_fraction="auto", extra_reg="auto", noise=None,
                  calibration="pld"):
    """Everything :func:`dpsolve.objective_perturbation` plans from public constants, each
    computed once: the inner tolerance (:func:`auto_tolerance` for ``"auto"``), the settings
    at it (:func:`objective_perturbation_settings`, which also resolves the two noises and the
    split of delta), the objective noise's scale and Jacobian term, the output sensitivity
    ``2 sqrt(2g / (lambda + Delta))`` and the fixed-iteration solver's plan.

    Parameters
    ----------
    problem : Problem
        With ``reg > 0`` and ``radius=None``.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float, optional
        Target delta, in (0, 1), or None for epsilon-DP.
    tolerance : "auto" or float, default "auto"
        The inner solve's gap g, in (0, 1e-2].
    centre_bound : float, default 0
        A public bound on the regularisers' centre's norm.
    objective_noise, output_fraction, extra_reg, noise, calibration
        As :func:`dpsolve.objective_perturbation` takes them.

    Returns
    -------
    Settings

    Raises
    ------
    ValueError, TypeError
        As :func:`objective_perturbation_settings`, and for a tolerance that is neither
        ``"auto"`` nor a number in (0, 1e-2].
    """
    require_constraint(problem, "l2", "plan_settings")
    options = {"objective_noise": objective_noise, "output_fraction": output_fraction,
               "extra_reg": extra_reg, "noise": noise, "calibration": calibration}
    if isinstance(tolerance, str) and tolerance == "auto":
        tolerance, (chosen, scale, inner) = _auto_tolerance(problem, epsilon, delta, options,
                                                             centre_bound)
    elif isinstance(tolerance, str):
        raise ValueError(f"tolerance must be 'auto' or a number in (0, 1e-2], got {tolerance!r}")
    else:
        tolerance = check_real(tolerance, "tolerance", low=0.0, high=1e-2, high_inclusive=True)
        chosen, scale, inner = _at_tolerance(problem, epsilon, delta, tolerance, options,
                                             centre_bound)
    # the search checked epsilon and calibration, and resolved both noises and delta's split
    epsilon = float(epsilon)
    fraction, extra = chosen["output_fraction"], chosen["extra_reg"]
    lam = problem.reg
    eps_obj = (1.0 - fraction) * epsilon
    if chosen["objective_noise"] == "gaussian":
        eps_prime = None
        c = problem.loss_object.curvature
        jacobian = objective_jacobian_term(c * problem.row_norm ** 2, problem.n, lam + extra)
    else:
        eps_prime = chosen["epsilon_prime"]
        jacobian = eps_obj - eps_prime
    return Settings(
        tolerance=tolerance, objective_noise=chosen["objective_noise"], output_fraction=fraction,
        extra_reg=extra, noise=chosen["noise"], calibration=calibration, epsilon=epsilon,
        epsilon_objective=eps_obj, epsilon_output=fraction * epsilon, epsilon_prime=eps_prime,
        delta_objective=chosen["delta_objective"], delta_output=chosen["delta_output"],
        objective_scale=scale, jacobian_term=jacobian,
        output_sensitivity=2.0 * math.sqrt(2.0 * tolerance / (lam + extra)), inner=inner)
