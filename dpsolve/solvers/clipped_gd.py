"""Full-batch gradient descent with per-sample clipping and Gaussian noise: DP-GD as in the
lecture notes "DP Gradient Descent" (per-sample clipping as in Abadi et al. 2016)."""
import math

import numpy as np

from ..bounds import (check_bound_arguments, from_mean, minimizer_norm_bound,
                      parameter_count)
from .._projection import scale_onto_ball
from .._validation import Boolean, Integer, Options, Real, check_choice, check_real
from ..privacy.accounting import ACCOUNTANTS, calibrate, gaussian_event
from ..privacy.calibration import (MAX_DEFAULT_STEPS, exact_gaussian_sigma,
                                   fewest_steps_near_best, gaussian_sigma)
from ._registry import register
from ._clipping import default_clip_norm
from ._accepts import Accepts
from ._hooks import Hooks
from ._lifecycle import Bound, Plan, Released, SolverSpec, lifecycle

SOURCE = ("full-batch DP gradient descent with the per-sample clipping of Abadi et al. 2016, as "
          "in the lecture notes 'Lecture 4: DP Gradient Descent' (Alg. DP-GD and its "
          "basic-composition privacy analysis)")
CALIBRATIONS = ("paper",) + ACCOUNTANTS
OUTPUTS = ("average", "last")

PARAMETERS = {
    "clip_norm": [None, Real(0.0)],          # None: L, which needs the Problem (in plan)
    "steps": [None, Integer(1)],
    "step_size": [None, Real(0.0)],
    "calibration": Options(CALIBRATIONS),    # ignored with an explicit sigma
    "sigma": [None, Real(0.0, low_inclusive=True)],  # its upper limit depends on n
    "project": Boolean(),
    "output": Options(OUTPUTS),
}


def dpgd_paper_sigma(n, clip_norm, steps, epsilon, delta):
    """The DP-GD lecture notes' noise: ``s = 4 C T sqrt(ln(2T/delta)) / (epsilon n)``.

    The lecture makes each step ``(epsilon/T, delta/T)``-DP with its Gaussian claim
    (``sigma >= 2 Delta sqrt(ln(2/delta)) / epsilon`` for ``epsilon, delta in (0, 1)``) at the
    sensitivity ``Delta = 2C/n`` of the clipped mean gradient, and adds up by basic composition.
    (Its final line writes ``sqrt(log^2(1/delta))``; the expression above is what its own claims
    give.) Valid as stated for ``epsilon, delta in (0, 1)``. Works on arrays of ``steps``.

    Parameters
    ----------
    n : int
        Number of records.
    clip_norm : float
        Clipping norm C of the per-sample gradients.
    steps : int or array_like of int
        Number of steps T.
    epsilon : float
        Target epsilon, in (0, 1).
    delta : float
        Target delta, in (0, 1).

    Returns
    -------
    float or ndarray
        The noise standard deviation s on the clipped mean gradient, of the shape of ``steps``.
    """
    steps = np.asarray(steps, dtype=float)
    return 4.0 * clip_norm * steps * np.sqrt(np.log(2.0 * steps / delta)) / (epsilon * n)


def dpgd_noise(n, clip_norm, steps, epsilon, delta, calibration):
    """DP-GD's noise standard deviation s on the clipped mean gradient for T = ``steps`` (an int,
    or an array for ``"paper"`` and ``"pld"``) under ``calibration``.

    The clipped mean gradient has L2 sensitivity ``2C/n`` (replace-one).

    Parameters
    ----------
    n : int
        Number of records.
    clip_norm : float
        Clipping norm C.
    steps : int or array_like of int
        Number of steps T; an array only for ``"paper"`` and ``"pld"``.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float
        Target delta, in (0, 1).
    calibration : str
        ``"paper"`` (:func:`dpgd_paper_sigma`), ``"pld"`` (exact, in closed form:
        ``(2C/n) sqrt(T) sigma_1``, :func:`exact_gaussian_sigma`, rounded up), or another
        accountant's name (:func:`dpsolve.privacy.calibrate` for T releases, its multiplier
        times the sensitivity rounded up).

    Returns
    -------
    float or ndarray
        The noise standard deviation s, of the shape of ``steps``.
    """
    if calibration == "paper":
        return dpgd_paper_sigma(n, clip_norm, steps, epsilon, delta)
    sensitivity = 2.0 * clip_norm / n
    if calibration == "pld":
        # T Gaussians compose exactly to one with mu = sqrt(T) Delta / s
        return exact_gaussian_sigma(sensitivity, steps, epsilon, delta)
    return calibrate(epsilon, delta, sensitivity=sensitivity, steps=int(steps),
                     accountant=calibration)


def default_steps(problem, clip_norm, epsilon, delta, calibration, output="average"):
    """The default number of steps of :func:`clipped_gd`.

    The fewest steps T in [1, 10^4] whose bound (:func:`dpgd_optimisation_error` for
    ``output``, at the noise of ``"paper"``, or of exact Gaussian accounting for any
    accountant) is within 10% of the least
    (:func:`dpsolve.privacy.calibration.fewest_steps_near_best`).

    Parameters
    ----------
    problem : Problem
    clip_norm : float
        The clipping norm C.
    epsilon, delta : float
        The target privacy.
    calibration : str
        ``"paper"``, or an accountant's name.
    output : {"average", "last"}, default "average"
        The iterate released.

    Returns
    -------
    int
        T. It depends only on public quantities (n, p, the Problem's constants, C, epsilon,
        delta), never on the data.
    """
    grid, error = _bound_curve(problem, clip_norm, epsilon, delta, calibration, output)
    return fewest_steps_near_best(grid, error)


def _bound_curve(problem, clip_norm, epsilon, delta, calibration, output):
    grid = np.arange(1, MAX_DEFAULT_STEPS + 1)
    curve_calibration = "paper" if calibration == "paper" else "pld"
    noise = dpgd_noise(problem.n, clip_norm, grid, epsilon, delta, curve_calibration)
    return grid, dpgd_optimisation_error(problem, clip_norm, grid, noise, output)


def default_step_size(problem, clip_norm, steps, sigma):
    """The default constant step size of :func:`clipped_gd`.

    ``1 / beta_F`` for a smooth loss; ``R / sqrt(T (G^2 + p s^2))`` otherwise (the step sizes
    of :func:`dpsolve.solvers.clipped_gd.dpgd_optimisation_error`; p counts the noisy coordinates).

    Parameters
    ----------
    problem : Problem
    clip_norm : float
        The clipping norm C (``G = C + lambda R``).
    steps : int
        T.
    sigma : float
        The noise standard deviation s on the mean gradient.

    Returns
    -------
    float
    """
    beta = problem.smoothness + problem.reg
    if math.isfinite(beta):
        return 1.0 / beta
    R = minimizer_norm_bound(problem)
    G = clip_norm + problem.reg * R
    return R / math.sqrt(steps * (G * G + math.prod(problem.theta_shape) * sigma * sigma))


@lifecycle
def clipped_gd(problem, epsilon=None, delta=None, *, clip_norm=None, steps=None, step_size=None,
               calibration="pld", sigma=None, project=True, output="average", secure=False,
               rng=None, accountant=None):
    r"""Differentially private ERM by full-batch gradient descent with per-sample clipping
    (Alg. DP-GD of the lecture notes "DP Gradient Descent"; the clipping of Abadi et al.
    2016).

    From ``w_0 = 0``, for ``t = 1 .. T``:

    .. math::

        \hat g_t &= \frac1n \sum_{i=1}^n \mathrm{CLIP}_C\!\left(\nabla \ell(w_{t-1}; x_i, y_i)\right),
        \qquad \mathrm{CLIP}_C(v) = v \min\!\left(1, \frac{C}{\|v\|}\right), \\
        w_t &= \Pi\!\left(w_{t-1} - \eta \left(\hat g_t + \lambda w_{t-1} + z_t\right)\right),
        \qquad z_t \sim N(0, s^2 I_p),

    and the average of ``w_1 .. w_T`` (or ``w_T``) is returned. The regulariser's gradient is added
    after clipping (it is the same for neighbouring datasets). For a linear model the per-sample
    gradient is ``loss'(z_i) x_i``, of norm ``|loss'(z_i)| ||x_i||``, so clipping costs one
    multiply per row; the sum runs on both cores (``_kernels/gd.pyx``).

    Multinomial problems (K classes): ``w`` has shape (p, K) and the per-sample gradient is
    ``x_i (softmax(w^T x_i) - e_{y_i})^T``, of Frobenius norm
    ``||x_i|| ||softmax(w^T x_i) - e_{y_i}||``, so clipping is again one scale per row; the noise
    is ``N(0, s^2 I)`` on all p K coordinates, norms and the projection are Frobenius, and the
    sensitivity is still ``2C/n`` (default ``C = L = sqrt(2) B``).

    Parameters
    ----------
    {{problem}}
    epsilon, delta : float
        Target privacy. ``calibration="paper"`` needs both in (0, 1); the accountants accept any
        ``epsilon > 0``, ``0 < delta < 1/2``. Leave epsilon None when passing ``sigma``.
    clip_norm : float, optional
        Clipping norm C > 0. Default: the Lipschitz constant L of the loss, so that clipping
        never changes a gradient and the bounds hold (a smaller C trades bias for less noise,
        which is tuning and would have to be done on public data).
    steps : int, optional
        T >= 1. Default: :func:`default_steps`, the fewest steps within 10% of the best value of
        the excess-risk bound (:func:`~dpsolve.solvers.clipped_gd.clipped_gd_bound`) over T in
        [1, 10^4], computed from public constants only.
    step_size : float, optional
        Constant eta > 0. Default: ``1 / (beta + lambda)`` for smooth losses, and
        ``R / sqrt(T (G^2 + p s^2))`` (``G = C + lambda R``) for the hinge loss, the step sizes of
        :func:`dpsolve.solvers.clipped_gd.dpgd_optimisation_error` (:func:`default_step_size`).
    calibration : {"pld", "rdp", "zcdp", "strong", "basic", "paper"}
        ``"paper"``: the lecture's basic composition,
        :func:`~dpsolve.privacy.calibration.dpgd_paper_sigma`. An accountant name: the least
        noise it certifies for T Gaussian releases of sensitivity ``2C/n``; ``"pld"`` (default)
        is exact here (T Gaussians compose to one Gaussian).
    sigma : float, optional
        Explicit noise standard deviation s >= 0 on the mean gradient instead of a calibration;
        the fit claims the epsilon the PLD accountant certifies at ``delta``.
    project : bool, default True
        Project every iterate onto C. Without a constraint (``radius=None``) the iterates are
        projected onto the ball of radius ``sqrt(2 max loss(0) / lambda)``
        (:func:`dpsolve.minimizer_norm_bound`), which contains the minimiser, so the
        problem is unchanged and the iterates stay bounded. ``False`` runs plain gradient steps
        (the bounds then do not apply).
    output : {"average", "last"}, default "average"
        The average of ``w_1 .. w_T`` or ``w_T``. The default T is the one for the iterate
        released: for ``"last"`` on a smooth, strongly convex problem (``reg > 0``) from the
        last-iterate bound (linear convergence, the noise divided by lambda), which needs far
        fewer steps; measured, the average's risk is still lower (docs/clipped_gd.md).
    rng : None, int, SeedSequence or Generator
        Source of the noise, ``rng.standard_normal(problem.theta_shape)`` once per step.
    {{secure}}
    {{accountant}}

    Returns
    -------
    Fit
        ``theta`` of shape ``problem.theta_shape`` ((p,), or (p, K) for multinomial),
        ``sigma = s`` (on the mean gradient), ``steps = T``, ``settings`` with the resolved
        ``clip_norm``, ``step_size``, ``project`` and ``output``; the DpEvent is the T-fold
        composition of a Gaussian with noise multiplier ``s / (2C/n)``.

    Notes
    -----
    Privacy. Under replace-one neighbours the clipped mean gradient has L2 sensitivity ``2C/n``
    whatever the data, so each step is a Gaussian mechanism and the T steps compose adaptively.
    The guarantee covers the whole sequence of noisy gradients (equivalently all iterates, as the
    lecture releases them); the returned average is post-processing. The solver never stops
    early and never reports how many gradients were clipped (that count depends on the data).

    X in chunks of rows (a Problem built from a Dask array or a
    :class:`~dpsolve.chunked.RowChunks`): each chunk's clipped sum runs where the chunk lives,
    the sums are added here in chunk order and the noise is drawn here; the result equals, bit
    for bit, the one on the same chunks held locally (with one chunk, the in-memory one).

    Utility: :func:`dpsolve.solvers.clipped_gd.clipped_gd_bound`.

    Source: the lecture notes "DP Gradient Descent" (docs/sources.md), Alg. DP-GD (steps 1-6)
    and "A First Privacy Analysis". Differences, all stated in docs/clipped_gd.md: the lecture's
    CLIP is garbled and is read as ``v min(1, C/||v||)``; its final noise line is worked through
    from its own claims (:func:`~dpsolve.privacy.calibration.dpgd_paper_sigma`); the projection
    and the regulariser are dpsolve's additions for constrained, regularised problems.
    """


def plan(problem, partition, target, options):
    """C, T, the noise and the step size from public constants (the lecture's DP-GD)."""
    epsilon, delta = target.epsilon, target.delta
    clip_norm, steps, step_size = options["clip_norm"], options["steps"], options["step_size"]
    calibration, sigma = options["calibration"], options["sigma"]
    project, output = options["project"], options["output"]
    n = problem.n
    clip_norm = default_clip_norm(problem) if clip_norm is None else clip_norm
    # (the default-T search below evaluates the noise at (epsilon, delta), whose ranges, with
    # the paper calibration's own, SPEC.accepts declares and the lifecycle has checked)
    if steps is None and sigma is not None:
        raise TypeError("clipped_gd with an explicit sigma needs steps")
    if steps is None and epsilon is not None and delta is not None:
        curve = output if output == "average" or dpgd_last_iterate_applies(problem) \
            else "average"          # no last-iterate bound: T from the average's
        steps = default_steps(problem, clip_norm, epsilon, delta, calibration, curve)

    sensitivity = 2.0 * clip_norm / n       # replace-one, of the clipped mean gradient
    sigma, epsilon, delta, calibration = gaussian_sigma(
        "clipped_gd", n=n, epsilon=epsilon, delta=delta, sigma=sigma, calibration=calibration,
        calibrations=CALIBRATIONS,
        paper=lambda e, d: float(dpgd_paper_sigma(n, clip_norm, steps, e, d)),
        sensitivity=sensitivity, steps=steps)
    if step_size is None:
        step_size = default_step_size(problem, clip_norm, steps, sigma)
    radius = minimizer_norm_bound(problem) if project else math.inf
    return Plan(epsilon=epsilon, delta=delta, method=calibration,
                event=gaussian_event(sigma, sensitivity, steps=steps), sigma=sigma, steps=steps,
                settings={"clip_norm": clip_norm, "step_size": step_size, "project": project,
                          "output": output},
                run_inputs={"radius": radius})


def run(problem, partition, plan, rng):
    """T full-batch steps: the clipped gradient sum in C (``problem.rows``: on each chunk's
    worker for rows in chunks, the sums added here in chunk order), the noise, the update and
    the projection in numpy."""
    clip_norm, step_size = plan.settings["clip_norm"], plan.settings["step_size"]
    sigma, radius = plan.sigma, plan.run_inputs["radius"]
    shape = problem.theta_shape
    w = np.zeros(shape)
    total = np.zeros(shape)
    rows, loss = problem.rows, problem.loss_object
    n, lam = problem.n, problem.reg
    for _ in range(plan.steps):
        grad = rows.clipped_gradient_sum(w, loss, clip_norm)[0]
        noise = rng.standard_normal(shape)
        # w <- Pi(w - eta (g/n + lam w + s xi)); one fused update
        w -= step_size * (grad / n + lam * w + sigma * noise)
        scale_onto_ball(w, radius)
        total += w
    # the lifecycle checks only what is released: the last iterate is not, with the average
    theta = total / plan.steps if plan.settings["output"] == "average" else w
    return Released(theta=theta)


def dpgd_last_iterate_applies(problem):
    """Whether :func:`dpgd_optimisation_error` has a bound for the last iterate: a smooth loss
    and ``lambda > 0`` (strong convexity).

    Parameters
    ----------
    problem : Problem

    Returns
    -------
    bool
    """
    return math.isfinite(problem.smoothness) and problem.reg > 0.0


def dpgd_optimisation_error(problem, clip_norm, steps, noise_std, output="average"):
    r"""Bound on ``E F(theta) - F(theta*)`` for T steps of projected gradient descent from 0
    with gradient noise ``N(0, s^2 I_p)``, with dpsolve's default step sizes (numpy arrays
    broadcast over ``steps`` and ``noise_std``).

    ``output="average"`` (the average ``theta_bar`` of the iterates):

    * smooth loss, ``eta = 1 / beta_F`` with ``beta_F = beta + lambda``:
      ``beta_F R^2 / (2T) + p s^2 / (2 beta_F)``;
    * non-smooth loss, ``eta = R / sqrt(T (G^2 + p s^2))`` with ``G = C + lambda R``:
      ``R sqrt((G^2 + p s^2) / T)``,

    with R from :func:`minimizer_norm_bound` (the standard analysis of (sub)gradient descent
    with unbiased gradient noise, e.g. Bubeck 2015, Thms 3.2 and 6.3 with exact gradients
    of variance ``p s^2``).

    ``output="last"`` (the last iterate; smooth loss and ``lambda > 0`` only, else ValueError):
    with ``eta = 1 / beta_F`` the gradient step contracts distances to theta* by
    ``1 - kappa``, ``kappa = lambda / beta_F``, the projection onto a convex set holding theta*
    does not expand them, and the noise adds ``eta^2 p s^2`` in expectation, so
    ``E||theta_T - theta*||^2 <= d_T = (1 - kappa)^{2T} R^2 + p s^2 / (beta_F lambda)``
    (the geometric sum, with ``1 - (1 - kappa)^2 >= kappa``). Then ``F - F* <= G sqrt(d_T)``
    (F is G-Lipschitz on C), and without a constraint, where ``grad F(theta*) = 0``, also
    ``<= beta_F d_T / 2``. The noise term is divided by lambda instead of beta_F, but the
    optimisation term decays geometrically instead of as 1/T: at large n lambda this bound is
    the smaller, with far fewer steps. (Measured, the average still does better there: its
    bound's noise term, which grows with T, ignores that averaging cancels noise;
    docs/clipped_gd.md.)

    Valid when the clipping norm C is at least the Lipschitz constant L (then clipping never
    changes a gradient); with ``C < L`` the clipped gradient is biased and no such bound holds.
    For multinomial, p is the number of noisy coordinates ``p K``.

    Parameters
    ----------
    problem : Problem
        Gives p, ``beta`` (``problem.smoothness``), lambda (``problem.reg``) and R.
    clip_norm : float
        Clipping norm C, at least ``problem.lipschitz`` for the bound to hold (not checked here).
    steps : int or array_like of int
        Number of steps T.
    noise_std : float or array_like of float
        Standard deviation s of the gradient noise per coordinate.
    output : {"average", "last"}, default "average"
        Which iterate the bound is for.

    Returns
    -------
    float or ndarray
        The bound (mean form), broadcast over ``steps`` and ``noise_std``.
    """
    output = check_choice(output, "output", ("average", "last"))
    R = minimizer_norm_bound(problem)
    steps = np.asarray(steps, dtype=float)
    noise = np.asarray(noise_std, dtype=float)
    p = parameter_count(problem)
    beta = problem.smoothness + problem.reg
    G = clip_norm + problem.reg * R
    if output == "last":
        if not dpgd_last_iterate_applies(problem):
            raise ValueError("the last-iterate bound needs a smooth loss and reg > 0 "
                             "(strong convexity); use output='average'")
        kappa = problem.reg / beta
        distance2 = (1.0 - kappa) ** (2.0 * steps) * R * R + p * noise ** 2 / (beta * problem.reg)
        value = G * np.sqrt(distance2)
        if problem.radius is None:
            value = np.minimum(value, 0.5 * beta * distance2)
        return value
    if math.isfinite(beta):
        return beta * R * R / (2.0 * steps) + p * noise ** 2 / (2.0 * beta)
    return R * np.sqrt((G * G + p * noise ** 2) / steps)


def clipped_gd_bound(problem, epsilon, delta, *, steps, clip_norm=None, calibration="pld",
                     output="average", form="mean"):
    r"""Excess-risk bound of :func:`dpsolve.clipped_gd` (the lecture notes' DP-GD) with its default
    step size and ``output`` (the average of the iterates, or the last one under strong
    convexity), at the noise its calibration gives for T = ``steps``.

    The noise is ``s = 4 C T sqrt(ln(2T/delta)) / (epsilon n)`` for ``calibration="paper"``,
    else the accountant's least noise for T Gaussian releases of sensitivity ``2C/n``
    (``"pld"``: exactly ``s = (2C/n) sqrt(T) sigma_1``, ``sigma_1`` the analytic Gaussian noise
    for (epsilon, delta) at sensitivity 1); the bound is :func:`dpgd_optimisation_error` at that
    noise. With ``"pld"`` and a smooth loss it is minimised at
    ``T* = beta_F R n / (2 C sqrt(p) sigma_1)``, where it equals ``2 R C sqrt(p) sigma_1 / n``,
    the rate ``O(R L sqrt(p ln(1/delta)) / (epsilon n))`` of docs/conventions.md ("Utility lower
    bounds").

    Mean form (times n for ``form="sum"``), explicit constants, valid for ``C >= L``
    (``clip_norm`` defaults to L).

    Parameters
    ----------
    problem : Problem
        The problem :func:`dpsolve.clipped_gd` is run on.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float
        Target delta, in (0, 1).
    steps : int
        Number of steps T.
    clip_norm : float, optional
        Clipping norm C, ``>= problem.lipschitz`` (ValueError otherwise); default L.
    calibration : {"pld", "rdp", "zcdp", "strong", "basic", "paper"}, default "pld"
        How the noise is calibrated, as in :func:`dpsolve.clipped_gd`.
    output : {"average", "last"}, default "average"
        The iterate released (:func:`dpgd_optimisation_error`; ``"last"`` needs a smooth loss
        and ``reg > 0``).
    form : {"mean", "sum"}, default "mean"
        Normalisation: ``F(theta) - F(theta*)`` (mean form) or ``n`` times it (sum
        form, ``L = n F``).

    Returns
    -------
    float
        The bound.
    """
    check_bound_arguments(problem, epsilon, delta, form)
    clip = problem.lipschitz if clip_norm is None else check_real(clip_norm, "clip_norm", low=0.0)
    if clip < problem.lipschitz:
        raise ValueError(f"the bound needs clip_norm >= the Lipschitz constant "
                         f"{problem.lipschitz:g}; clipping below it biases the gradient")
    noise = dpgd_noise(problem.n, clip, steps, epsilon, delta, calibration)
    value = float(dpgd_optimisation_error(problem, clip, steps, noise, output))
    return from_mean(value, problem, form)


def bound(problem, partition, plan):
    """The lecture's DP-GD optimisation bound at this plan's T and C
    (:func:`dpsolve.solvers.clipped_gd.clipped_gd_bound`), at its target (epsilon, delta).

    None without a target (an explicit ``sigma``: epsilon None, or no delta), when C is below
    the Lipschitz constant (the clipped gradient is biased and no such bound holds), or when
    the analysis's step size or projection was not used (a given ``step_size``,
    ``project=False``).
    """
    epsilon, delta = plan.target.epsilon, plan.target.delta
    if epsilon is None or delta is None:
        return None
    if plan.options["step_size"] is not None or not plan.settings["project"]:
        return None
    clip_norm = plan.settings["clip_norm"]
    if clip_norm < problem.lipschitz:
        return None
    # explicit noise is judged at the noise exact accounting would give the target
    calibration = plan.method if plan.method != "explicit" else "pld"
    output = plan.settings["output"]
    if output == "last" and not dpgd_last_iterate_applies(problem):
        return None
    return Bound(clipped_gd_bound(problem, epsilon, delta, steps=plan.steps,
                                         clip_norm=clip_norm, calibration=calibration,
                                         output=output),
                 "DP-GD optimisation bound (lecture notes' DP-GD)" if output == "average" else
                 "DP-GD last-iterate bound (strong convexity)")


def paper_sigma(problem, partition, plan):
    """The lecture's noise at the plan's target, C and T (``Hooks.paper_sigma``):
    :func:`dpgd_paper_sigma`."""
    return float(dpgd_paper_sigma(problem.n, plan.settings["clip_norm"], plan.steps,
                                  plan.epsilon, plan.delta))


SPEC = register(SolverSpec(
    accepts=Accepts(explicit_noise="sigma",
                    narrower={("calibration", "paper"): Real(0.0, 1.0)}),
    name="clipped_gd", function=clipped_gd,
    works=("the lecture notes 'DP Gradient Descent' (Alg. DP-GD)", "Abadi et al. 2016"),
    # clipping bounds the gradients of any loss its kernels evaluate
    source=SOURCE, needs=("compiled",),
    partition=None, neighbours="replace-one record", guarantee="dp", parameters=PARAMETERS,
    plan=plan, run=run, bound=bound, page="clipped_gd.md",
    nonfinite_hint="reduce step_size or keep project=True",
    example={"epsilon": 1.0, "delta": 1e-6, "steps": 50},
    example_problem={"radius": 1.0, "reg": 0.01},
    sparse=True, chunked=True, hooks=Hooks(paper_sigma=paper_sigma)))
