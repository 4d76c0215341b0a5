"""Multi-party model aggregation with output perturbation (Jayaraman et al. 2018)."""
import math

import numpy as np

from .._ordered_linalg import one_blas_thread
from .._projection import scale_onto_ball
from .._validation import Boolean, Options, Real
from ..privacy.accounting import ACCOUNTANTS, pure_event
from ..privacy.calibration import OUTPUT_NOISES, resolve_output_noise
from ..privacy.samplers import laplace_noise
from . import _inner
from ._registry import register
from ._accepts import Accepts
from ._lifecycle import Plan, Released, SolverSpec, lifecycle

SOURCE = ("Jayaraman et al. 2018, 'Model aggregation with output perturbation', as presented in "
          "Chen's 2019 slides 'Differential Privacy and Distributed Learning'")
SLIDES_NOISE = "laplace_slides"

PARAMETERS = {
    "tolerance": Real(0.0, 1e-2, high_inclusive=True),
    "noise": [None, Options(OUTPUT_NOISES + (SLIDES_NOISE,))],
    "calibration": Options(("paper",) + ACCOUNTANTS),   # used by Gaussian noise only
    "project": Boolean(),
}


@lifecycle
def aggregated_output_perturbation(problem, parties, epsilon, delta=None, *, noise=None,
                                   tolerance=1e-10, calibration="pld", project=True,
                                   secure=False, rng=None, accountant=None):
    r"""Differentially private ERM across parties by averaging their local minimisers and
    perturbing the average once (Jayaraman et al. 2018).

    Party j minimises its own objective ``F_j(theta) = (1/n_j) sum_{i in S_j} loss + (lambda/2)
    ||theta||^2`` over C to a gap ``g`` (``tolerance``, fixed before solving); the
    average is perturbed inside secure aggregation, and only the result is released:

    .. math:: \hat\theta = \frac1m \sum_{j=1}^m \hat\theta_j + b, \qquad
              \Delta_2 = \frac1m\left(\frac{2L}{n_{(1)}\lambda} + 2\sqrt{\frac{2g}{\lambda}}\right),

    ``n_(1)`` the smallest party. Replacing one record of party j moves ``theta_j*`` by at most
    ``2L/(n_j lambda)`` (as for :func:`output_perturbation`), and each local minimiser (of gap
    at most g) is within ``sqrt(2g/lambda)`` of its exact one, on both datasets.

    Parameters
    ----------
    {{problem}}
        ``reg > 0``, finite Lipschitz constant; any loss (hinge included).
    parties : Parties
        A partition of ``problem``'s rows.
    epsilon : float
        > 0.
    delta : float, optional
        None for ``"gamma_norm"`` and ``"laplace_slides"`` (pure DP); in (0, 1/2) for
        ``"gaussian"``.
    noise : {"gamma_norm", "gaussian", "laplace_slides"}, optional
        ``"gamma_norm"``: density proportional to ``exp(-epsilon ||b|| / Delta_2)``, epsilon-DP.
        ``"gaussian"``: ``N(0, sigma^2 I)`` calibrated by ``calibration``, (epsilon, delta)-DP.
        ``"laplace_slides"``: the slides' per-coordinate ``Lap(2L / (m n_(1) lambda epsilon))``,
        a labelled reproduction: that scale is set by an L2 sensitivity while per-coordinate
        Laplace needs the L1 one (up to ``sqrt(p)`` times larger), so it is only about
        ``epsilon sqrt(p)``-DP; the fit reports the true value and warns. Default: gamma-norm
        when ``delta`` is None, else Gaussian.
    tolerance : float, default 1e-10
        Gap g of every local solve, in (0, 1e-2], as in :func:`output_perturbation`: research
        mode certifies it or falls back to the fixed-iteration solver (hinge, which has no
        fallback, still raises RuntimeError if a certificate fails); ``secure=True`` always
        runs the fixed-iteration solver, the same public number of steps in every party, and
        refuses a tolerance below its float64 floor before any work.
    calibration : {"pld", "rdp", "zcdp", "strong", "basic", "paper"}
        Gaussian noise only, as in :func:`output_perturbation`.
    project : bool, default True
        Project the release onto C (post-processing).
    {{rng}}
        The secure aggregator's, for the one noise draw.
    {{secure}}
        With ``secure=True`` every local solve is the fixed-iteration solver (a smooth loss is
        needed: hinge is refused, use huber_hinge).
    {{accountant}}

    Returns
    -------
    Fit
        ``steps = 1``; ``settings`` with the sensitivity, the tolerance, ``inner_solver`` and
        ``inner_steps`` (as in :func:`output_perturbation`); ``observers``: B and the parties
        see only the released average, so each gets the same guarantee as an outsider.

    Notes
    -----
    Never released: a party's local minimiser (it is an input to secure aggregation only), the
    gaps reached. Source: Jayaraman et al. 2018, as presented in Chen's 2019 slides
    ("Model Aggregation with Output Perturbation"; see docs/sources.md). The slides' L1/L2
    mistake and what dpsolve does about it: docs/multiparty.md and docs/source_mistakes.md.
    """


def plan(problem, parties, target, options):
    """The sensitivity of the average, its noise and the local solves' plan, from public
    constants (the parties' sizes included)."""
    epsilon, delta, secure = target.epsilon, target.delta, target.secure
    noise, tolerance = options["noise"], options["tolerance"]
    calibration, project = options["calibration"], options["project"]
    L = _inner._lipschitz("aggregated_output_perturbation", problem)
    if noise == SLIDES_NOISE:
        epsilon = float(epsilon)                        # checked (SPEC.accepts)
        if delta not in (None, 0, 0.0):
            raise ValueError('noise="laplace_slides" is a pure-DP mechanism: pass delta=None')
        delta = 0.0
    else:
        noise, epsilon, delta, calibration = resolve_output_noise(noise, epsilon, delta,
                                                                  calibration, problem.n)
    # one plan for every party: it depends on public constants only (the floor on the whole n,
    # which bounds every party's size)
    inner = _inner._inner_plan(problem, tolerance, "aggregated_output_perturbation", secure)
    m, lam, n1 = parties.m, problem.reg, parties.smallest
    nominal = 2.0 * L / (m * n1 * lam)                  # the slides' sensitivity
    sensitivity = nominal + 2.0 * math.sqrt(2.0 * tolerance / lam) / m
    if noise == SLIDES_NOISE:
        scale = nominal / epsilon
        # per-coordinate Laplace of scale s is (Delta_1 / s)-DP, and Delta_1 <= sqrt(p) Delta_2
        dim = math.prod(problem.theta_shape)
        event = pure_event(math.sqrt(dim) * sensitivity / scale)
        noise_scales, sigma, method = {"laplace": scale}, None, "paper"
    else:
        scale, event, noise_scales, sigma = _inner._output_noise(noise, delta, epsilon,
                                                                 sensitivity, calibration)
        method = "paper" if noise == "gamma_norm" else calibration
    return Plan(epsilon=epsilon, delta=delta, method=method, event=event, sigma=sigma,
                noise=noise_scales,
                settings={"noise": noise, "tolerance": tolerance, "sensitivity": sensitivity,
                          "project": project, **_inner._inner_settings(inner, secure)},
                run_inputs={"inner": inner, "secure": secure, "scale": scale,
                            "inner_solver": _inner.INNER_SOLVER})


def noisy_average(minimizers, noise, scale, rng, draw=_inner.INNER_SOLVER.draw):
    """What secure aggregation reveals: the average of the parties' minimisers plus one noise
    draw from ``rng`` (``noise``: ``"laplace_slides"``, ``"gamma_norm"`` or ``"gaussian"``, of
    this scale; the last two by ``draw``, an :class:`~dpsolve.solvers._inner.InnerSolver`'s).
    Runs in this process, or on the aggregator's worker for parties on workers."""
    total = np.zeros(minimizers[0].shape)
    for minimizer in minimizers:
        total += minimizer
    average = total / len(minimizers)
    dim = average.size                                  # noisy coordinates (p, or p K)
    if noise == SLIDES_NOISE:
        b = laplace_noise(scale, dim, rng=rng)
    else:
        b = draw(noise, scale, dim, rng)
    return average + b.reshape(average.shape)


def _local_minimizer(party, state, tolerance, inner, secure, solver):
    """The party's local minimiser (its step, module-level: sent to Dask workers)."""
    with one_blas_thread():             # the bits of the fit in one process (_ordered_linalg.py)
        return solver.minimizer(party.local_problem(), tolerance, inner, secure)


def _noisy_average(minimizers, noise, scale, rng, draw):
    """The aggregator's step: :func:`noisy_average` and the advanced ``rng``."""
    return noisy_average(minimizers, noise, scale, rng, draw), rng


def run(problem, parties, plan, rng):
    """Every party's local solve, their average (inside secure aggregation), one noise draw."""
    settings, state = plan.settings, plan.run_inputs
    # each party solves where it is (on its worker, for parties on workers); only the noisy
    # average leaves the aggregator, and ``rng`` is advanced as if it had been drawn here
    solver = state["inner_solver"]
    minimizers = parties.map(_local_minimizer, settings["tolerance"], state["inner"],
                             state["secure"], solver, gather=False)
    theta, advanced = parties.reduce(_noisy_average, minimizers, settings["noise"],
                                     state["scale"], rng, solver.draw)
    if advanced is not rng:
        rng.bit_generator.state = advanced.bit_generator.state
    if settings["project"] and problem.radius is not None:
        scale_onto_ball(theta, problem.radius)          # post-processing
    # B and the parties see only the released average, as an outsider does
    certified = plan.report.certified_epsilon
    return Released(theta=theta, observers={"outsider": certified, "coordinator": certified,
                                            "parties": certified})


def bound(problem, parties, plan):
    """None: :mod:`dpsolve.bounds` has no excess-risk bound for model aggregation
    (docs/multiparty.md)."""
    return None


SPEC = register(SolverSpec(
    accepts=Accepts(delta="optional", zero_delta_is_pure=True),
    name="aggregated_output_perturbation", function=aggregated_output_perturbation,
    works=("Jayaraman et al. 2018",), source=SOURCE,
    # as output_perturbation's, for each party's minimiser
    needs=("convex", "compiled"), partition="parties",
    neighbours="replace-one record", guarantee="dp", parameters=PARAMETERS, plan=plan, run=run,
    bound=bound, page="multiparty.md",
    nonfinite_hint="the noise scale overflowed: use a larger epsilon or reg",
    observer_note=": B and the parties see only the released average, as an outsider does",
    example={"epsilon": 1.0, "delta": 1e-6}, example_problem={"radius": 1.0, "reg": 0.1},
    parts=2))
