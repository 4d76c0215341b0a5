r"""DP-SGD: Poisson-subsampled gradient descent with per-sample clipping (Abadi et al. 2016).

The solver written to show what adding one takes (docs/adding_a_solver.md): this module (spec,
plan, run, bound) and one line in ``dpsolve/solvers/__init__.py``; the kernel is the clipped
gradient sum DP-GD already uses (``_kernels/gd.pyx``), run on each step's sample.
"""
import math

import numpy as np

from .. import bounds
from .._projection import scale_onto_ball
from .._validation import Integer, Options, Real
from ..privacy.accounting import PoissonSampling, gaussian_event
from ..privacy.calibration import gaussian_sigma
from ._registry import register
from ._clipping import default_clip_norm
from ._accepts import Accepts
from ._hooks import Hooks
from ._lifecycle import Bound, Plan, Released, SolverSpec, lifecycle

SOURCE = ("Abadi et al. 2016, 'Deep Learning with Differential Privacy', Algorithm 1 (DP-SGD) "
          "with Poisson sampling, accounted by the privacy loss distribution")
#: dp_accounting's RDP accountant supports Poisson sampling under add/remove neighbours only;
#: the guarantee here is replace-one, which PLD supports.
CALIBRATIONS = ("pld",)
#: Default expected batch size and number of epochs (public choices, not tuned on data).
DEFAULT_BATCH = 64
DEFAULT_EPOCHS = 5
#: The analysis :func:`bound` states.
BOUND_NAME = ("projected SGD bound at DP-SGD's noise (Abadi et al. 2016; Nemirovski et al. "
              "2009)")

PARAMETERS = {
    "sampling_rate": [None, Real(0.0, 1.0, high_inclusive=True)],
    "steps": [None, Integer(1)],
    "clip_norm": [None, Real(0.0)],
    "step_size": [None, Real(0.0)],
    "calibration": Options(CALIBRATIONS),
    "sigma": [None, Real(0.0, low_inclusive=True)],  # its upper limit depends on n
}


@lifecycle
def dp_sgd(problem, epsilon=None, delta=None, *, sampling_rate=None, steps=None,
           clip_norm=None, step_size=None, calibration="pld", sigma=None, secure=False,
           rng=None, accountant=None):
    r"""Differentially private ERM by DP-SGD (Abadi et al. 2016): Poisson-subsampled,
    per-sample clipped, noisy projected gradient steps, averaged.

    From ``w_0 = 0``, for ``t = 1 .. T``: every record joins the sample ``S_t`` independently
    with probability q, and

    .. math::

        w_t = \Pi\!\left(w_{t-1} - \eta\left(\frac{1}{qn}\Big(\sum_{i \in S_t}
        \mathrm{CLIP}_C\big(\nabla \ell(w_{t-1}; x_i, y_i)\big) + z_t\Big)
        + \lambda w_{t-1}\right)\right), \qquad z_t \sim N(0, \sigma^2 I_p),

    with ``CLIP_C(v) = v min(1, C/||v||)`` and Π the projection onto C (or, without a
    constraint, onto the ball of radius :func:`dpsolve.bounds.minimizer_norm_bound`, which
    holds the minimiser). The average of ``w_1 .. w_T`` is returned.

    Parameters
    ----------
    {{problem}}
    epsilon, delta : float
        Target privacy, ``epsilon > 0``, ``0 < delta < 1/2``. Leave epsilon None when passing
        ``sigma``.
    sampling_rate : float, optional
        q in (0, 1]. Default ``min(1, 64 / n)`` (an expected batch of 64 records).
    steps : int, optional
        T >= 1. Default five epochs, ``ceil(5 / q)``.
    clip_norm : float, optional
        C > 0. Default the Lipschitz constant L (clipping then never changes a gradient, and
        the bound holds).
    step_size : float, optional
        Constant eta > 0. Default ``R / (G sqrt(T))`` with ``G^2`` the bound on the step
        direction's second moment of :func:`dp_sgd_bound`, the step size of that bound.
    calibration : {"pld"}
        The least sigma the PLD accountant certifies for T Poisson-subsampled Gaussians of
        sensitivity 2C (replace-one).
    sigma : float, optional
        Explicit noise standard deviation on the clipped sum instead of a calibration; the fit
        claims what PLD certifies at ``delta``.
    {{secure}}
    rng : None, int, SeedSequence or Generator
        Source of the samples (``rng.random(n)`` per step) and the noise
        (``rng.standard_normal(p)`` per step), in that order. X in chunks of rows (a Problem
        built from a Dask array or a :class:`~dpsolve.chunked.RowChunks`): one
        ``SeedSequence`` drawn from it first, spawned into one stream per chunk at every step;
        each chunk draws its own sample where it lives (never stored, never returned).
    {{accountant}}

    Returns
    -------
    Fit
        ``theta`` the average iterate, ``sigma``, ``steps``, ``settings`` with the resolved
        ``sampling_rate``, ``clip_norm``, ``step_size`` and ``radius``; the DpEvent is T
        Poisson-sampled Gaussians of noise multiplier ``sigma / (2C)``.

    Notes
    -----
    Privacy: replacing one record changes the clipped sum by at most 2C whatever the sample, so
    each step is a subsampled Gaussian mechanism; T of them compose adaptively. The samples and
    their sizes stay inside the solver (amplification by sampling needs them secret), and so
    does how many gradients were clipped. With X in chunks of rows every row is still in a
    step's sample with probability q, independently of the others: the accounting is the same.

    Utility: :func:`dp_sgd_bound`.
    """


def second_moment_bound(problem, clip_norm, sampling_rate, sigma, radius):
    r"""``G^2``, a bound on ``E||d_t||^2`` for DP-SGD's step direction
    ``d_t = (sum_{S_t} CLIP(g_i) + z_t)/(qn) + lambda w``:
    ``(C + lambda R)^2 + C^2 / (qn) + p sigma^2 / (qn)^2`` (the Poisson sample adds variance at
    most ``q n C^2`` to the clipped sum).

    Parameters
    ----------
    problem : Problem
    clip_norm, sampling_rate, sigma, radius : float
        C, q, sigma and the projection radius R.

    Returns
    -------
    float
    """
    qn = sampling_rate * problem.n
    return ((clip_norm + problem.reg * radius) ** 2 + clip_norm ** 2 / qn
            + problem.p * sigma ** 2 / qn ** 2)


def dp_sgd_bound(problem, *, clip_norm, sampling_rate, sigma, steps):
    r"""Excess-risk bound of :func:`dp_sgd` with its default step size, mean form:
    ``E F(w_bar) - F(w*) <= R G / sqrt(T)`` for projected SGD with unbiased directions of second
    moment at most ``G^2`` (:func:`second_moment_bound`) and step ``R / (G sqrt(T))``
    (Nemirovski et al. 2009; Bubeck 2015, Thm 6.1), R the projection radius. Valid when
    ``clip_norm`` is at least the Lipschitz constant (clipping then changes no gradient).

    Parameters
    ----------
    problem : Problem
    clip_norm, sampling_rate, sigma : float
        C, q and the noise standard deviation on the clipped sum.
    steps : int
        T.

    Returns
    -------
    float
    """
    R = bounds.minimizer_norm_bound(problem)
    G2 = second_moment_bound(problem, clip_norm, sampling_rate, sigma, R)
    return R * math.sqrt(G2 / steps)


def _defaults(problem, sampling_rate, steps, clip_norm, sigma):
    """``(clip_norm, sampling_rate, steps)`` with the defaults resolved (no noise involved)."""
    clip_norm = default_clip_norm(problem) if clip_norm is None else clip_norm
    q = min(1.0, DEFAULT_BATCH / problem.n) if sampling_rate is None else sampling_rate
    if steps is None:
        if sigma is not None:
            raise TypeError("dp_sgd with an explicit sigma needs steps")
        steps = math.ceil(DEFAULT_EPOCHS / q)
    return clip_norm, q, steps


def plan(problem, partition, target, options):
    """Sampling rate, steps, clipping norm, noise and step size from public constants."""
    epsilon, delta = target.epsilon, target.delta
    sampling_rate, steps, clip_norm = (options["sampling_rate"], options["steps"],
                                       options["clip_norm"])
    step_size, calibration, sigma = options["step_size"], options["calibration"], options["sigma"]
    n = problem.n
    clip_norm, q, steps = _defaults(problem, sampling_rate, steps, clip_norm, sigma)
    sensitivity = 2.0 * clip_norm          # replace-one, of the clipped sum over any sample
    sampling = PoissonSampling(q)
    sigma, epsilon, delta, calibration = gaussian_sigma(
        "dp_sgd", n=n, epsilon=epsilon, delta=delta, sigma=sigma, calibration=calibration,
        calibrations=CALIBRATIONS, paper=None, sensitivity=sensitivity, steps=steps,
        sampling=sampling)
    radius = bounds.minimizer_norm_bound(problem)
    if step_size is None:
        G2 = second_moment_bound(problem, clip_norm, q, sigma, radius)
        step_size = radius / math.sqrt(G2 * steps)
    return Plan(epsilon=epsilon, delta=delta, method=calibration,
                event=gaussian_event(sigma, sensitivity, steps=steps, sampling=sampling),
                sigma=sigma, steps=steps,
                settings={"sampling_rate": q, "clip_norm": clip_norm, "step_size": step_size,
                          "radius": radius})


def run(problem, partition, plan, rng):
    """T sampled, clipped, noisy steps: each step's clipped sum over a Poisson sample at rate q
    from ``problem.rows.poisson_sampler`` (X in memory: the sample drawn from ``rng``, its
    rows read in place by the DP-GD kernel, no copy of them).

    Rows in chunks: chunk c draws its own Poisson sample at rate q, from a stream of its own
    (one SeedSequence drawn from ``rng`` first, spawned into one child per chunk at every
    step; it is never stored), and sums the sampled rows' clipped gradients on its worker;
    the sums are added here in chunk order. Every row is still in the step's sample with
    probability q, independently, so the accounting is the same."""
    n, p = problem.n, problem.p
    loss = problem.loss_object
    settings = plan.settings
    q, clip, eta, radius = (settings["sampling_rate"], settings["clip_norm"],
                            settings["step_size"], settings["radius"])
    scale = 1.0 / (q * n)
    sampled_sum = problem.rows.poisson_sampler(rng, q)
    w, total = np.zeros(p), np.zeros(p)
    for _ in range(plan.steps):
        grad = sampled_sum(w, loss, clip)
        noise = rng.standard_normal(p)
        w -= eta * (scale * (grad + plan.sigma * noise) + problem.reg * w)
        scale_onto_ball(w, radius)
        total += w
    return Released(theta=total / plan.steps)


def bound(problem, partition, plan):
    """:func:`dp_sgd_bound` at the plan's settings, when its step size is the default and
    clipping changes no gradient."""
    settings = plan.settings
    if plan.options["step_size"] is not None or settings["clip_norm"] < problem.lipschitz:
        return None
    return Bound(dp_sgd_bound(problem, clip_norm=settings["clip_norm"],
                              sampling_rate=settings["sampling_rate"], sigma=plan.sigma,
                              steps=plan.steps), BOUND_NAME)


def bound_floor(problem):
    """A lower bound on :func:`bound` at dp_sgd's default settings, whatever its noise, from
    public constants and without calibrating: :func:`dp_sgd_bound` at ``sigma = 0`` (the
    bound grows with sigma, and the defaults C, q and T do not depend on it). Its
    ``Hooks.bound_floor``: :func:`dpsolve.choose_solver` leaves out, uncalibrated, a dp_sgd
    that cannot win (its PLD calibration takes 0.1 to over 1 s).

    Returns
    -------
    float or None
        The floor; None where :func:`bound` has no bound at the defaults.
    """
    defaults = SPEC.defaults
    clip_norm, q, steps = _defaults(problem, defaults["sampling_rate"], defaults["steps"],
                                    defaults["clip_norm"], defaults["sigma"])
    if clip_norm < problem.lipschitz:
        return None
    return dp_sgd_bound(problem, clip_norm=clip_norm, sampling_rate=q, sigma=0.0, steps=steps)


SPEC = register(SolverSpec(
    accepts=Accepts(explicit_noise="sigma"),
    name="dp_sgd", function=dp_sgd, works=("Abadi et al. 2016",), source=SOURCE,
    # the kernels' switch over the margin losses (theta in R^p)
    needs=("margin", "compiled"), partition=None,
    neighbours="replace-one record", guarantee="dp", parameters=PARAMETERS, plan=plan, run=run,
    bound=bound, page="dp_sgd.md", nonfinite_hint="reduce step_size",
    example={"epsilon": 1.0, "delta": 1e-6, "sampling_rate": 0.2, "steps": 100},
    example_problem={"radius": 1.0, "reg": 0.01},
    sparse=True, chunked=True, hooks=Hooks(bound_floor=bound_floor)))
