r"""Phased ERM (localisation): Feldman, Koren & Talwar 2020, "Private stochastic convex
optimization: optimal rates in linear time", the phased-ERM algorithm of their localisation
approach, for smooth convex losses.

Phase ``i = 1..k`` reads its own slice of ``n_i = floor(n / 2^i)`` consecutive rows (the slices
are disjoint: every record is read by one phase only), takes the step ``eta_i = eta 4^{-i}``,
minimises the phase objective

.. math::

    F_i(w) = \frac{1}{n_i} \sum_{j \in S_i} \ell(w; z_j) + \frac{\rho}{2}\|w\|^2
             + \frac{\lambda_i}{2} \|w - w_{i-1}\|^2, \qquad \lambda_i = \frac{2}{\eta_i n_i}

over the ball C (``rho`` the Problem's ``reg``; the regulariser ``||w - w_{i-1}||^2 / (eta_i
n_i)`` as dpsolve reads Feldman-Koren-Talwar: docs/phased_erm.md lists the constants attributed
to the paper, which are not checked against its text, and shows that neither the privacy nor
the bound rests on them) to a distance ``r_i`` from its exact minimiser certified by
construction (a fixed, public number of V-FISTA steps, :mod:`dpsolve._fixed_iteration`), and
releases ``w_i = Pi_C(w_hat_i + N(0, sigma_i^2 I))``.
"""
import math

import numpy as np

from .. import _fixed_iteration as fixed
from .._projection import scale_onto_ball
from .._validation import Integer, Real
from ..bounds import parameter_count
from ..privacy.accounting import gaussian_event
from ..privacy.calibration import (check_finite_lipschitz, check_noise_scale,
                                   exact_gaussian_sigma, warn_large_delta)
from ..privacy.samplers import gaussian_noise
from ..rows import Rows, rows_of
from . import _inner as _inner_module
from ._accepts import Accepts
from ._hooks import Hooks
from ._lifecycle import Plan, Released, SolverSpec, lifecycle
from ._registry import register

SOURCE = ("Feldman, Koren & Talwar 2020, 'Private stochastic convex optimization: optimal rates "
          "in linear time', the phased-ERM (localisation) algorithm and its step size eta; "
          "noise calibrated exactly to each phase's sensitivity (analytic Gaussian mechanism)")

PARAMETERS = {
    "step_size": [None, Real(0.0)],                 # None: the default eta (public constants)
    "phases": [None, Integer(1)],                   # None: floor(log2 n); at most that
    "inner_tolerance": Real(0.0, 1.0, high_inclusive=True),
}


@lifecycle
def phased_erm(problem, epsilon, delta=None, *, step_size=None, phases=None,
               inner_tolerance=1e-3, secure=False, rng=None, accountant=None):
    r"""Differentially private stochastic convex optimisation by phased ERM (localisation),
    Feldman, Koren & Talwar 2020.

    Phase ``i = 1, ..., k`` reads the next ``n_i = floor(n / 2^i)`` rows (disjoint slices, in row
    order), minimises

    .. math::

        F_i(w) = \frac1{n_i}\sum_{j \in S_i} \ell(w; z_j) + \frac{\rho}{2}\|w\|^2
                 + \frac{\lambda_i}{2}\|w - w_{i-1}\|^2,
        \qquad \lambda_i = \frac{2}{\eta_i n_i}, \quad \eta_i = \eta\, 4^{-i},

    over the ball C from ``w_0 = 0`` (``rho`` the Problem's ``reg``), and releases
    ``w_i = Pi_C(w_hat_i + N(0, sigma_i^2 I))``; the fit is ``w_k``. The inner solve is V-FISTA
    for a number of steps fixed from public constants, which puts ``w_hat_i`` within
    ``r_i = sqrt(2 g_i / mu_i)`` of the exact minimiser (``mu_i = lambda_i + rho``, ``g_i`` the
    gap it reaches by construction). The replace-one sensitivity of phase i is

    .. math:: \Delta_i = \frac{2L}{\mu_i n_i} + 2 r_i

    (the exact minimiser of a ``mu_i``-strongly convex objective moves by at most
    ``2L/(mu_i n_i)``; the inner solution is within ``r_i`` of it on both datasets), and
    ``sigma_i = z Delta_i`` with the same noise multiplier z in every phase.

    Privacy: a record is read by one phase only, and every phase is a Gaussian mechanism of
    multiplier z given the previous release; the later phases are post-processing of it
    (parallel composition under replace-one). The whole run is therefore one Gaussian mechanism
    of multiplier z, calibrated exactly (analytic Gaussian mechanism) to (epsilon, delta).

    Parameters
    ----------
    {{problem}}
        A smooth convex loss (logistic, squared, huber_hinge, multinomial) with a constraint
        radius R and a finite Lipschitz constant.
    epsilon : float
        > 0.
    delta : float
        In (0, 1); required (None is refused with a TypeError).
    step_size : float, optional
        eta > 0. Default ``eta = (D / L) min(4 / sqrt(n), epsilon / sqrt(p log(1/delta)))``
        with ``D = 2R`` the diameter of C (p the number of noisy coordinates), the step size
        dpsolve attributes to Feldman-Koren-Talwar's theorem for smooth losses (not checked
        against the paper's text; it affects the risk reached, not the privacy).
    phases : int, optional
        k, at most ``floor(log2 n)`` so that every phase reads at least one row; default
        ``floor(log2 n)``. The ``n - sum_i n_i`` rows left over are not read.
    inner_tolerance : float, default 1e-3
        tau in (0, 1]: the inner solve runs until ``r_i <= tau 2L / (mu_i n_i)``, so the
        sensitivity is at most ``(1 + 2 tau)`` times the exact minimiser's (never below what
        float64 delivers by construction, :func:`dpsolve._fixed_iteration.float_floor`).
    {{secure}}
    {{rng}}
    {{accountant}}

    Returns
    -------
    Fit
        ``steps = k``; ``noise`` the first (largest) phase's sigma; ``settings`` the step size,
        the phases' sizes, steps, regularisers, inner steps, sensitivities and sigmas, and the
        noise multiplier.

    Notes
    -----
    Bound: the excess *population* risk ``L(w_k) - min_C L`` (rows i.i.d., ``reg = 0``) has
    the explicit bound :func:`population_bound` (the Fit's population bound; the derivation is
    in docs/phased_erm.md). No excess *empirical* risk bound is stated: a phase sees only its
    slice, and nothing ties the slices' risks to the whole sample's when the rows are not
    i.i.d., so ``SolverSpec.bound`` is None for every plan.

    X dense, CSR or in chunks of rows (a Dask array or a :class:`~dpsolve.chunked.RowChunks`):
    each inner step sums the phase's rows of every chunk where the chunk lives and adds the
    chunks' sums in chunk order (one chunk: the bits of the rows in memory).

    Source: Feldman, Koren & Talwar 2020 (STOC), the phased-ERM algorithm of their
    localisation approach (arXiv:2005.04763).
    """


def default_step_size(problem, epsilon, delta):
    """The default ``eta = (D / L) min(4 / sqrt(n), epsilon / sqrt(p log(1/delta)))`` (``D = 2R``;
    p the number of noisy coordinates), from public constants: the step size dpsolve attributes
    to Feldman-Koren-Talwar 2020's theorem for smooth losses, not checked against its text
    (docs/phased_erm.md).

    Parameters
    ----------
    problem : Problem
        With a constraint radius and a finite Lipschitz constant.
    epsilon, delta : float
        The target privacy.

    Returns
    -------
    float
    """
    n, p = problem.n, parameter_count(problem)
    private = epsilon / math.sqrt(p * math.log(1.0 / delta))
    return problem.diameter / problem.lipschitz * min(4.0 / math.sqrt(n), private)


def phase_sizes(n, phases=None):
    """``n_i = floor(n / 2^i)`` for ``i = 1..k`` (default ``k = floor(log2 n)``).

    Parameters
    ----------
    n : int
        Number of rows, at least 2.
    phases : int, optional
        k; ValueError beyond ``floor(log2 n)``, where a phase would read no row.

    Returns
    -------
    list of int
    """
    most = n.bit_length() - 1                       # floor(log2 n)
    if most < 1:
        raise ValueError(f"phased_erm needs n >= 2 rows, got n={n}")
    if phases is None:
        phases = most
    if phases > most:
        raise ValueError(f"phases must lie in [1, {most}] (floor(log2 n) for n={n}: every phase "
                         f"reads n / 2^i >= 1 rows), got {phases}")
    return [n >> i for i in range(1, phases + 1)]


def _inner(problem, n_i, mu, tau, L):
    """The fixed-iteration plan of one phase and the distance ``r`` it certifies, from public
    constants: ``||grad F_i(w_{i-1})|| <= G_0 = L + rho R`` (the proximity term vanishes at its
    centre), so ``||w* - w_{i-1}|| <= D_0 = min(2R, G_0 / mu)`` and the bracket of Beck's
    bound is at most ``C_0 = G_0 D_0`` (:mod:`dpsolve._fixed_iteration`); the gap g is
    ``mu r^2 / 2`` at ``r = tau 2L / (mu n_i)``, raised to the float64 floor if below it."""
    R = problem.radius
    G0 = L + problem.reg * R
    D0 = min(2.0 * R, G0 / mu)
    smoothness = problem.smoothness + mu
    target = 0.5 * mu * (tau * 2.0 * L / (mu * n_i)) ** 2
    plan = fixed._plan(problem, smoothness, mu, G0 * D0, R, target, n_i)
    if plan.floor > target:
        if not math.isfinite(plan.floor):
            raise ValueError(f"phased_erm: float64 cannot certify the inner solve of a phase of "
                             f"{n_i} rows (mu = {mu:.3g}); pass fewer phases or a larger "
                             "step_size")
        plan = fixed._plan(problem, smoothness, mu, G0 * D0, R, plan.floor, n_i)
    gap = max(plan.tolerance, plan.floor)
    return plan, math.sqrt(2.0 * gap / mu)


def _phases(problem, epsilon, delta, eta, sizes, tau):
    """Each phase's public constants: start row, size, lambda_i, inner plan, sensitivity and
    sigma (``exact_gaussian_sigma`` at its own sensitivity: the same multiplier in all)."""
    L = check_finite_lipschitz("phased_erm", problem)
    out, start = [], 0
    for i, n_i in enumerate(sizes, start=1):
        lam = 2.0 / (eta * 4.0 ** -i * n_i)
        if not 0.0 < lam < math.inf:
            raise ValueError(f"step_size={eta:g} makes phase {i}'s regulariser 2 / (eta_i n_i) "
                             "overflow in float64: pass a larger step_size")
        mu = lam + problem.reg
        inner, r = _inner(problem, n_i, mu, tau, L)
        if inner.steps > _inner_module.MAX_INNER_STEPS:
            raise ValueError(f"step_size={eta:g} makes phase {i}'s inner solve need "
                             f"{inner.steps:.3g} steps (condition number "
                             f"{inner.smoothness / mu:.3g}), above "
                             f"{_inner_module.MAX_INNER_STEPS:g}: pass a smaller step_size")
        sensitivity = 2.0 * L / (mu * n_i) + 2.0 * r
        sigma = float(exact_gaussian_sigma(sensitivity, 1, epsilon, delta))
        out.append({"start": start, "size": n_i, "lam": lam, "mu": mu, "inner": inner,
                    "distance": r, "sensitivity": sensitivity, "sigma": sigma})
        start += n_i
    return out


def plan(problem, partition, target, options):
    """Step size, phases, inner plans and noise from public constants; raises before the data
    are read."""
    epsilon, delta = target.epsilon, target.delta
    if problem.radius is None:
        raise ValueError("phased_erm needs a constraint: give the Problem a radius")
    check_finite_lipschitz("phased_erm", problem)
    sizes = phase_sizes(problem.n, options["phases"])
    eta = options["step_size"]
    if eta is None:
        eta = default_step_size(problem, epsilon, delta)
    phases = _phases(problem, epsilon, delta, eta, sizes, options["inner_tolerance"])
    check_noise_scale("phased_erm", phases[0]["sigma"], epsilon, "noise standard deviation")
    warn_large_delta(delta, problem.n, stacklevel=2)
    # the event: the phase of least multiplier (all equal up to rounding)
    weakest = min(phases, key=lambda ph: ph["sigma"] / ph["sensitivity"])
    event = gaussian_event(weakest["sigma"], weakest["sensitivity"])
    settings = {
        "step_size": eta, "phases": len(sizes), "phase_sizes": tuple(sizes),
        "phase_steps": tuple(eta * 4.0 ** -i for i in range(1, len(sizes) + 1)),
        "phase_regs": tuple(ph["lam"] for ph in phases),
        "inner_steps": tuple(ph["inner"].steps for ph in phases),
        "inner_distances": tuple(ph["distance"] for ph in phases),
        "sensitivities": tuple(ph["sensitivity"] for ph in phases),
        "sigmas": tuple(ph["sigma"] for ph in phases),
        "noise_multiplier": weakest["sigma"] / weakest["sensitivity"],
        "inner_tolerance": options["inner_tolerance"],
    }
    return Plan(epsilon=epsilon, delta=delta, method="pld", event=event,
                sigma=phases[0]["sigma"], steps=len(sizes),
                noise={"gaussian": phases[0]["sigma"]}, settings=settings,
                run_inputs={"phases": phases})


def _slice_gradient_sum(X, y, start, stop, theta=None, loss=None):
    """One chunk's part of a phase: the gradient sum of its rows ``start:stop`` (the gradient
    kernel on those rows, as on rows in memory), zeros if the phase has none of its rows. Run
    where the chunk lives (module level: pickled to Dask's workers)."""
    if stop <= start:
        return np.zeros(theta.shape)
    return rows_of(X[start:stop], y[start:stop]).clipped_gradient_sum(theta, loss, math.inf)[0]


class _ChunkSlice(Rows):
    """Rows ``start:stop`` of rows in chunks, seen as the rows of a phase: its gradient sum is
    each chunk's part of the slice summed where the chunk lives
    (:func:`_slice_gradient_sum`), the parts added in chunk order. The slice's bounds in each
    chunk come from the public layout alone."""

    _row_chunks = True          # a Problem keeps it as it is (Problem._with_data)

    def __init__(self, chunks, start, stop):
        bounds = np.cumsum((0,) + tuple(chunks.chunk_rows))
        self._chunks = chunks
        self._starts = [int(min(max(start - a, 0), b - a)) for a, b in zip(bounds, bounds[1:])]
        self._stops = [int(min(max(stop - a, 0), b - a)) for a, b in zip(bounds, bounds[1:])]
        self.shape = (stop - start, chunks.shape[1])
        self.dtype = chunks.dtype
        self.part_rows = tuple(b - a for a, b in zip(self._starts, self._stops))

    def clipped_gradient_sum(self, theta, loss, clip, rows=None):
        """The slice's gradient sum (``clip`` must be inf: a phase clips nothing)."""
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        parts = self._chunks.map(_slice_gradient_sum, self._starts, self._stops, theta=theta,
                                 loss=loss)
        total = np.zeros(theta.shape)
        for part in parts:
            total += part
        return total, 0


def _phase_problem(problem, start, stop):
    """The Problem on rows ``start:stop`` (views of X in memory; a :class:`_ChunkSlice` of rows
    in chunks), with every setting and public bound of ``problem``."""
    y = problem.y[start:stop]
    if problem.rows.random_access:
        return problem._with_data(problem.X[start:stop], y)
    return problem._with_data(_ChunkSlice(problem.rows, start, stop), y)


def run(problem, partition, plan, rng):
    """The phases in order: each one's inner solve on its own rows, its noise, the projection."""
    R = problem.radius
    w = np.zeros(problem.theta_shape)
    for phase in plan.run_inputs["phases"]:
        rows = _phase_problem(problem, phase["start"], phase["start"] + phase["size"])
        # (lambda/2)||w - c||^2 = (lambda/2)||w||^2 - lambda <c, w> + const: the plan's mu
        # carries lambda + reg, the linear term -lambda c, and the solve starts at c
        w_hat = fixed.minimize(rows, phase["inner"], linear=-phase["lam"] * w, start=w)
        noise = gaussian_noise(phase["sigma"], w_hat.size, rng=rng)
        w = np.ascontiguousarray(w_hat + noise.reshape(w_hat.shape))
        scale_onto_ball(w, R)                        # post-processing
    return Released(theta=w)


def phased_erm_population_bound(problem, settings):
    r"""The excess population risk bound of the plan's settings (reg = 0), explicit constants:

    .. math::

        \frac{\lambda_1}{2} R^2 + \sum_{i=2}^k \frac{\lambda_i}{2} p\,\sigma_{i-1}^2
        + \sum_{i=1}^k \Big(\frac{2L^2}{\lambda_i n_i} + L r_i\Big) + L \sqrt{p}\,\sigma_k

    (docs/phased_erm.md derives it: the stability of each phase's regularised ERM on fresh
    rows, the phases telescoped as in Feldman-Koren-Talwar 2020, with ``E||w_{i-1} -
    w_hat_{i-1}||^2 <= p sigma_{i-1}^2`` since the projection onto C is non-expansive).

    Parameters
    ----------
    problem : Problem
        Its public constants (L, R, p).
    settings : mapping
        A plan's settings.

    Returns
    -------
    float
    """
    L, R, p = problem.lipschitz, problem.radius, parameter_count(problem)
    lams, sigmas = settings["phase_regs"], settings["sigmas"]
    sizes, distances = settings["phase_sizes"], settings["inner_distances"]
    value = 0.5 * lams[0] * R * R + L * math.sqrt(p) * sigmas[-1]
    for i in range(len(sizes)):
        if i > 0:
            value += 0.5 * lams[i] * p * sigmas[i - 1] ** 2
        value += 2.0 * L * L / (lams[i] * sizes[i]) + L * distances[i]
    return value


def population_bound(problem, partition, plan):
    """:func:`phased_erm_population_bound` at the plan (``Hooks.population_bound``); None with a
    ridge (``reg > 0``: the population risk L has no ridge, the phases minimise one)."""
    if problem.reg > 0.0:
        return None
    return phased_erm_population_bound(problem, plan.settings)


def bound(problem, partition, plan):
    """None: no excess *empirical* risk bound holds for every dataset (a phase sees only its
    slice); the population bound is :func:`population_bound`."""
    return None


SPEC = register(SolverSpec(
    accepts=Accepts(delta="required"),
    name="phased_erm", function=phased_erm, works=("Feldman, Koren & Talwar 2020",),
    source=SOURCE,
    # smooth: the inner solve reaches its distance in a fixed number of steps on every dataset;
    # convex: each phase objective is strongly convex, which the sensitivity rests on
    needs=("convex", "smooth", "compiled"), partition=None,
    neighbours="replace-one record", guarantee="dp", parameters=PARAMETERS, plan=plan, run=run,
    bound=bound, page="phased_erm.md",
    nonfinite_hint="the noise scale overflowed: use a larger epsilon",
    example={"epsilon": 1.0, "delta": 1e-6}, example_problem={"radius": 1.0},
    sparse=True, chunked=True, hooks=Hooks(population_bound=population_bound)))
