r"""Noisy mini-batch SGD with the step-size schedule and iteration count of private stochastic
convex optimisation (Bassily, Feldman, Talwar & Thakurta 2019), the baseline of the DP-SCO
theorem page: excess *population* risk ``O(LM (1/sqrt(n) + sqrt(p log(1/delta))/(n epsilon)))``.

The loop is DP-SGD's (:mod:`~dpsolve.solvers.dp_sgd`): the clipped gradient sum DP-GD already
uses (``_kernels/gd.pyx``) on each step's Poisson sample, read in place; the noise is calibrated
by dpsolve's PLD accountant for that sampling, exactly, under replace-one neighbours.
"""
import math

import numpy as np
import scipy.stats

from .._projection import scale_onto_ball
from .._validation import Integer, Options, Real, check_real
from ..privacy.accounting import PoissonSampling, gaussian_event
from ..privacy.calibration import check_finite_lipschitz, check_noise_scale, gaussian_sigma
from ..privacy.mechanisms import _product_up
from ._registry import register
from ._accepts import Accepts
from ._hooks import Hooks
from ._lifecycle import Bound, Plan, Released, SolverSpec, lifecycle

SOURCE = ("Bassily, Feldman, Talwar & Thakurta 2019, 'Private stochastic convex optimization "
          "with optimal rates', noisy mini-batch SGD (A_noisy-SGD) with its SCO schedule; "
          "Poisson-sampled batches, noise calibrated by the privacy loss distribution")
#: "pld": the least noise dpsolve's PLD accountant certifies for the Poisson sampling run here;
#: "paper": the moments-accountant formula dpsolve attributes to the paper, kept for comparison.
CALIBRATIONS = ("pld", "paper")
BOUND_NAME = ("projected SGD bound at sco_sgd's noise (Nemirovski et al. 2009), as in "
              "Bassily-Feldman-Talwar-Thakurta 2019")

PARAMETERS = {
    "steps": [None, Integer(1)],
    "batch_size": [None, Integer(1)],       # <= n: checked against the Problem in plan
    "step_size": [None, Real(0.0)],
    "calibration": Options(CALIBRATIONS),
    "sigma": [None, Real(0.0, low_inclusive=True)],  # its upper limit depends on n
}


@lifecycle
def sco_sgd(problem, epsilon=None, delta=None, *, steps=None, batch_size=None, step_size=None,
            calibration="pld", sigma=None, secure=False, rng=None, accountant=None):
    r"""Differentially private stochastic convex optimisation by noisy mini-batch SGD with the
    schedule of Bassily, Feldman, Talwar & Thakurta 2019.

    Minimises the mean-form objective ``F(w) = (1/n) sum_i loss(<w, x_i>; y_i) +
    (lambda/2)||w||^2`` over the ball C of radius R (``lambda = problem.reg``; with ``reg = 0``
    the objective is the empirical risk, whose population counterpart
    ``L(w) = E loss(<w, x>; y)`` the theory bounds). From ``w_0 = 0``, for ``t = 0 .. T-1``:
    every record joins the batch ``B_t`` independently with probability ``q = m/n`` (a Poisson
    sample of expected size m), and

    .. math::

        w_{t+1} = \Pi_C\!\left(w_t - \eta\left(\frac{1}{m}\Big(\sum_{i \in B_t}
        \nabla \ell(w_t; x_i, y_i) + z_t\Big) + \lambda w_t\right)\right), \qquad
        z_t \sim N(0, \sigma^2 I_p).

    The average ``(1/T) sum_{t=1..T} w_t`` is returned. The schedule (the one dpsolve attributes
    to the paper, not checked against its text; from public constants only:
    :func:`sco_schedule`) is ``T = ceil(min(n/8, n^2 epsilon^2 / (32 p
    log(1/delta))))``, ``m = ceil(max(n sqrt(epsilon/(4T)), 1))`` (at most n) and
    ``eta = M / (L sqrt(T))`` with ``M = 2R`` the diameter of C and L the loss's Lipschitz
    constant. The loop is :func:`dpsolve.dp_sgd`'s at ``sampling_rate = m/n``, ``steps = T``,
    ``step_size = eta`` and ``clip_norm = L``.

    Parameters
    ----------
    {{problem}}
        It needs a radius (the paper's bounded domain) and a finite Lipschitz constant.
    epsilon, delta : float
        Target privacy, ``epsilon > 0``, ``0 < delta < 1/2``. Leave epsilon None when passing
        ``sigma``.
    steps : int, optional
        T >= 1. Default the schedule's T (:func:`sco_schedule`).
    batch_size : int, optional
        The expected batch size m in [1, n] (the sampling rate is m/n). Default the schedule's
        m.
    step_size : float, optional
        Constant eta > 0. Default the schedule's ``M / (L sqrt(T))``.
    calibration : {"pld", "paper"}
        ``"pld"``: the least sigma dpsolve's PLD accountant certifies for T Poisson-sampled
        Gaussians of sensitivity 2L (replace-one) at rate m/n. ``"paper"``: the formula
        dpsolve attributes to the paper (unchecked),
        ``sigma^2 = 8 T L^2 log(1/delta) / (n^2 epsilon^2)`` on the batch mean
        (:func:`sco_sgd_paper_sigma`, for ``epsilon <= 1``); the fit reports what PLD
        certifies for it.
    sigma : float, optional
        Explicit noise standard deviation on the batch's gradient sum instead of a
        calibration; needs ``steps`` and ``batch_size`` (the schedule reads epsilon), and the
        fit claims what the PLD accountant certifies at ``delta``.
    {{secure}}
    rng : None, int, SeedSequence or Generator
        Source of the batches (``rng.random(n)`` per step, in pieces) and the noise
        (``rng.standard_normal(p)`` per step), in that order.
    {{accountant}}

    Returns
    -------
    Fit
        ``theta`` the average iterate, ``sigma`` (on the batch's gradient sum), ``steps``,
        ``settings`` with the resolved ``batch_size``, ``sampling_rate``, ``step_size`` and
        ``clip_norm`` (L); the DpEvent is T Poisson-sampled Gaussians of noise multiplier
        ``sigma / (2L)``.

    Notes
    -----
    Privacy: replacing one record changes a batch's gradient sum by at most 2L (each gradient
    has norm at most L; the kernel clips at L, which changes no gradient), whatever the batch,
    so each step is a Poisson-subsampled Gaussian mechanism and the T steps compose
    adaptively. The batches and their sizes stay inside the solver (amplification by sampling
    needs them secret).

    What is the paper's and what is dpsolve's (docs/sco_sgd.md tabulates it): the update, the
    averaged output, the schedule (T, m, eta) and the paper's sigma are as dpsolve attributes
    them to the paper, not checked against its text; the paper is read as drawing each batch
    as m records with replacement and calibrating sigma by the moments accountant of Abadi et
    al. 2016. dpsolve draws Poisson batches of expected size m, which its PLD accountant
    accounts for exactly under replace-one neighbours, and calibrates sigma for that. The
    bounds (:func:`sco_sgd_bound`, :func:`sco_sgd_population_bound`) are re-derived with
    explicit constants for this sampling at the fit's own T, m, eta and sigma. Neither the
    privacy nor the bounds rest on the attributed constants.
    """


def sco_schedule(n, p, epsilon, delta, lipschitz, diameter):
    r"""The default schedule ``(T, m, eta)`` from public constants, as dpsolve attributes it to
    Bassily, Feldman, Talwar & Thakurta 2019's noisy SGD for smooth losses (not checked against
    the paper's text: docs/sco_sgd.md; T and m rounded up to integers, m capped at n).

    .. math::

        T = \left\lceil \min\!\Big(\frac{n}{8}, \frac{n^2 \epsilon^2}{32\, p \log(1/\delta)}
        \Big)\right\rceil, \quad
        m = \min\!\Big(n, \Big\lceil \max\!\Big(n \sqrt{\tfrac{\epsilon}{4T}}, 1\Big)
        \Big\rceil\Big), \quad \eta = \frac{M}{L \sqrt{T}}.

    Parameters
    ----------
    n, p : int
        Records and dimension.
    epsilon, delta : float
        The target.
    lipschitz : float
        L, finite and > 0.
    diameter : float
        M, the diameter of C.

    Returns
    -------
    tuple of (int, int, float)
        T, m and eta.
    """
    steps = max(1, math.ceil(min(n / 8.0, n * n * epsilon * epsilon
                                 / (32.0 * p * math.log(1.0 / delta)))))
    batch = min(n, math.ceil(max(n * math.sqrt(epsilon / (4.0 * steps)), 1.0)))
    return steps, batch, diameter / (lipschitz * math.sqrt(steps))


def sco_sgd_paper_sigma(n, lipschitz, epsilon, delta, steps, batch_size):
    r"""The paper's noise as dpsolve attributes it (not checked against the paper's text:
    docs/sco_sgd.md), as the standard deviation on the batch's gradient *sum*: ``N(0, s^2 I)``
    on the batch mean with ``s^2 = 8 T L^2 log(1/delta) / (n^2 epsilon^2)``, for
    ``epsilon <= 1``, i.e. ``m s`` on the sum. A fit calibrated by it claims the target and
    reports what the PLD accountant certifies (a PrivacyWarning if that is above the claim).

    Parameters
    ----------
    n : int
        Records.
    lipschitz : float
        L.
    epsilon, delta : float
        The target.
    steps, batch_size : int
        T and m.

    Returns
    -------
    float
        ``m sqrt(8 T log(1/delta)) L / (n epsilon)``.
    """
    return batch_size * math.sqrt(8.0 * steps * math.log(1.0 / delta)) * lipschitz \
        / (n * epsilon)


def _schedule(problem, target, options):
    """``(T, m, eta)``: the caller's values, :func:`sco_schedule` for the others."""
    steps, batch, eta = options["steps"], options["batch_size"], options["step_size"]
    L = problem.lipschitz
    if target.epsilon is None:
        if steps is None or batch is None:
            raise TypeError("sco_sgd with an explicit sigma needs steps and batch_size (the "
                            "paper's schedule reads epsilon)")
    else:
        T0, m0, _ = sco_schedule(problem.n, problem.p, target.epsilon, target.delta, L,
                                 problem.diameter)
        steps = T0 if steps is None else steps
        batch = m0 if batch is None else batch
    if eta is None:
        eta = problem.diameter / (L * math.sqrt(steps))
    return steps, batch, eta


def plan(problem, partition, target, options):
    """The schedule, the sampling and the noise from public constants only."""
    if problem.radius is None:
        raise ValueError("sco_sgd needs a bounded C (the paper's domain of diameter M): give "
                         "the Problem a radius")
    L = check_finite_lipschitz("sco_sgd", problem)
    n = problem.n
    steps, batch, eta = _schedule(problem, target, options)
    if batch > n:
        raise ValueError(f"batch_size must be <= n={n}, got {batch}")
    sensitivity = 2.0 * L           # replace-one, of a batch's gradient sum (clip at L)
    sampling = PoissonSampling(batch / n)

    def paper(epsilon, delta):
        epsilon = check_real(epsilon, "epsilon", low=0.0, high=1.0, high_inclusive=True)
        return sco_sgd_paper_sigma(n, L, epsilon, delta, steps, batch)

    # The PLD search is over the noise multiplier sigma / sensitivity alone: calibrated at unit
    # sensitivity (cached for every L) and scaled up, it is the same float as at 2L
    unit = options["sigma"] is None and options["calibration"] == "pld"
    sigma, epsilon, delta, method = gaussian_sigma(
        "sco_sgd", n=n, epsilon=target.epsilon, delta=target.delta, sigma=options["sigma"],
        calibration=options["calibration"], calibrations=CALIBRATIONS, paper=paper,
        sensitivity=1.0 if unit else sensitivity, steps=steps, sampling=sampling)
    if unit:
        sigma = check_noise_scale("sco_sgd", _product_up(sensitivity, sigma), epsilon,
                                  "noise standard deviation")
    return Plan(epsilon=epsilon, delta=delta, method=method,
                event=gaussian_event(sigma, sensitivity, steps=steps, sampling=sampling),
                sigma=sigma, steps=steps,
                settings={"batch_size": batch, "sampling_rate": sampling.rate,
                          "step_size": eta, "clip_norm": L})


def run(problem, partition, plan, rng):
    """T steps: each sums the clipped gradients of a Poisson sample at rate m/n
    (``problem.rows.poisson_sampler``: ``rng.random(n)`` in pieces, the sampled rows read in
    place by the DP-GD kernel; clipping at L changes no gradient), adds the noise
    (``rng.standard_normal(p)``), steps and projects; the iterates are averaged."""
    settings = plan.settings
    m, eta, clip = settings["batch_size"], settings["step_size"], settings["clip_norm"]
    radius, reg, sigma, loss = problem.radius, problem.reg, plan.sigma, problem.loss_object
    sampled_sum = problem.rows.poisson_sampler(rng, settings["sampling_rate"])
    w, total = np.zeros(problem.p), np.zeros(problem.p)
    for _ in range(plan.steps):
        grad = sampled_sum(w, loss, clip)
        noise = rng.standard_normal(problem.p)
        w -= eta * ((grad + sigma * noise) / m + reg * w)
        scale_onto_ball(w, radius)
        total += w
    return Released(theta=total / plan.steps)


def _optimisation_error(problem, steps, batch_size, step_size, sigma):
    """``R^2/(2 eta T) + eta G2 / 2 + G R / T`` (see :func:`sco_sgd_bound`)."""
    R, G, L, m = problem.radius, problem.gradient_bound, problem.lipschitz, batch_size
    second_moment = (G * G + (1.0 - m / problem.n) * L * L / m
                     + problem.p * (sigma / m) ** 2)
    return (R * R / (2.0 * step_size * steps) + step_size * second_moment / 2.0
            + G * R / steps)


def sco_sgd_bound(problem, *, steps, batch_size, step_size, sigma):
    r"""Expected excess empirical risk of :func:`sco_sgd`'s average iterate, mean form:

    .. math::

        E\,F(\bar w_T) - \min_C F \le \frac{R^2}{2\eta T} + \frac{\eta}{2}\Big(G^2
        + \frac{(1 - q) L^2}{m} + \frac{p\,\sigma^2}{m^2}\Big) + \frac{G R}{T},

    with R the radius of C (``||w_0 - w*|| <= R`` from ``w_0 = 0``), ``G = L + lambda R``
    (``problem.gradient_bound``), ``q = m/n`` and ``sigma`` the noise on the batch's sum. The
    step direction ``(sum_{B_t} grad + z_t)/m + lambda w`` is unbiased for the gradient of F,
    with second moment at most the bracket (the Poisson sample adds variance at most
    ``n q (1-q) L^2`` to the sum). Projected SGD bounds the average of ``w_0 .. w_{T-1}`` by
    the first two terms (Nemirovski et al. 2009; Bubeck 2015, Thm 6.1); the average of
    ``w_1 .. w_T`` differs by ``(F(w_T) - F(w_0))/T <= G R / T``. Explicit constants; any T,
    m, eta.

    Parameters
    ----------
    problem : Problem
        With a radius and a finite Lipschitz constant.
    steps, batch_size : int
        T and the expected batch size m.
    step_size, sigma : float
        eta and the noise standard deviation on the batch's gradient sum.

    Returns
    -------
    float
    """
    return _optimisation_error(problem, steps, batch_size, step_size, sigma)


def sco_sgd_population_bound(problem, *, steps, batch_size, step_size, sigma):
    r"""Expected excess population risk ``E L(w_bar) - min_C L`` of :func:`sco_sgd` on n
    i.i.d. records, for ``reg = 0`` and a beta-smooth loss:

    .. math::

        \underbrace{\frac{R^2}{2\eta T} + \frac{\eta}{2}\Big(L^2 + \frac{(1-q)L^2}{m}
        + \frac{p\,\sigma^2}{m^2}\Big) + \frac{L R}{T}}_{\text{empirical}}
        + L\Big(\frac{\eta L (T + 1)}{n} + 2 R\, T\, P\big[\mathrm{Bin}(n-1, q)
        > \tfrac{2m}{\eta\beta}\big]\Big).

    The first part bounds the excess empirical risk (:func:`sco_sgd_bound`); the second is the
    uniform stability of the averaged iterate, which bounds the expected generalisation gap
    (Bousquet & Elisseeff 2002). Run the two neighbouring datasets (record k differs) with the
    same samples and noise. While the batch's other records number at most ``2m/(eta beta)``,
    the step on them is a gradient step of size ``eta <= 2/s`` on an s-smooth convex function,
    non-expansive, and so is the projection (Hardt, Recht & Singer 2016); record k, when
    sampled (probability q), moves the iterates apart by at most ``2 eta L / m``. So
    ``E||w_t - w_t'|| <= 2 eta L t / n`` and the averages are within ``eta L (T+1)/n``;
    otherwise (the binomial tail, at most once in T steps) they are within the diameter 2R.
    A loss change is at most L times that. This is Bassily, Feldman, Talwar & Thakurta 2019's
    argument (their stability lemma, ``L^2 T eta / n``), re-derived for the averaged iterate
    and Poisson batches. The tail is astronomically small at the schedule (``eta beta`` is far
    below 1).

    Parameters
    ----------
    problem : Problem
        With ``reg = 0``, a radius and a smooth loss (else ValueError).
    steps, batch_size : int
        T and the expected batch size m.
    step_size, sigma : float
        eta and the noise standard deviation on the batch's gradient sum.

    Returns
    -------
    float
    """
    if problem.reg != 0.0:
        raise ValueError("the population bound is for the unregularised loss: reg must be 0")
    beta = problem.smoothness
    if not math.isfinite(beta):
        raise ValueError(f"the population bound needs a smooth loss; {problem.loss} is not")
    n, L, R, m = problem.n, problem.lipschitz, problem.radius, batch_size
    tail = 0.0
    if step_size * beta > 0.0:
        tail = float(scipy.stats.binom.sf(math.floor(2.0 * m / (step_size * beta)), n - 1,
                                          m / n))
    stability = L * (step_size * L * (steps + 1) / n + 2.0 * R * min(1.0, steps * tail))
    return _optimisation_error(problem, steps, batch_size, step_size, sigma) + stability


def _plan_values(plan):
    settings = plan.settings
    return dict(steps=plan.steps, batch_size=settings["batch_size"],
                step_size=settings["step_size"], sigma=plan.sigma)


def bound(problem, partition, plan):
    """:func:`sco_sgd_bound` at the plan's T, m, eta and sigma."""
    return Bound(sco_sgd_bound(problem, **_plan_values(plan)), BOUND_NAME)


def population_bound(problem, partition, plan):
    """``Hooks.population_bound``: :func:`sco_sgd_population_bound` at the plan's values;
    None where it does not apply (``reg > 0``, a non-smooth loss)."""
    if problem.reg != 0.0 or not math.isfinite(problem.smoothness):
        return None
    return sco_sgd_population_bound(problem, **_plan_values(plan))


def bound_floor(problem):
    """A lower bound on :func:`bound` at sco_sgd's default settings, whatever its noise and
    target, without calibrating (``Hooks.bound_floor``: the PLD calibration of its T
    Poisson-sampled Gaussians takes 0.1 s to over a second): :func:`sco_sgd_bound` without the
    noise and the sampling terms (``sigma = 0``, ``m = n``) at the largest default T,
    ``ceil(n/8)``, with the default ``eta = M/(L sqrt(T))``. Those terms are non-negative and,
    at that step size, the rest decreases in T (``RL/(4 sqrt(T))``, ``R G^2/(L sqrt(T))`` and
    ``GR/T``).

    Returns
    -------
    float or None
        The floor; None without a radius or a finite Lipschitz constant (no plan there).
    """
    L = problem.lipschitz
    if problem.radius is None or not 0.0 < L < math.inf:
        return None
    steps = max(1, math.ceil(problem.n / 8.0))
    return sco_sgd_bound(problem, steps=steps, batch_size=problem.n,
                         step_size=problem.diameter / (L * math.sqrt(steps)), sigma=0.0)


def paper_sigma(problem, partition, plan):
    """The paper's noise on the batch's sum at the plan's target and schedule
    (``Hooks.paper_sigma``): :func:`sco_sgd_paper_sigma`."""
    return sco_sgd_paper_sigma(problem.n, problem.lipschitz, plan.epsilon, plan.delta,
                               plan.steps, plan.settings["batch_size"])


SPEC = register(SolverSpec(
    accepts=Accepts(explicit_noise="sigma",
                    narrower={("calibration", "paper"): Real(0.0, 1.0, high_inclusive=True)}),
    name="sco_sgd", function=sco_sgd, works=("Bassily, Feldman, Talwar & Thakurta 2019",),
    source=SOURCE,
    # the kernels' switch over the margin losses (theta in R^p)
    needs=("margin", "compiled"), partition=None,
    neighbours="replace-one record", guarantee="dp", parameters=PARAMETERS, plan=plan, run=run,
    bound=bound, page="sco_sgd.md", nonfinite_hint="reduce step_size",
    example={"epsilon": 1.0, "delta": 1e-6}, example_problem={"radius": 1.0},
    sparse=True, hooks=Hooks(population_bound=population_bound, paper_sigma=paper_sigma,
                bound_floor=bound_floor)))
