"""Private Frank-Wolfe over the l1 ball (Talwar-Thakurta-Zhang 2015, "Nearly optimal private
LASSO"): each step chooses a vertex ``+-R e_j`` by the exponential mechanism."""
import math

import numpy as np
from scipy import sparse

from .._kernels import frank_wolfe as _frank_wolfe
from .._validation import Integer
from ..bounds import check_bound_arguments, from_mean
from ..privacy.accounting import exponential_event
from ..privacy.calibration import (MAX_DEFAULT_STEPS, check_finite_lipschitz,
                                   fewest_steps_near_best)
from ._accepts import Accepts
from ._lifecycle import Bound, Plan, Released, SolverSpec, lifecycle
from ._registry import register

SOURCE = ("Talwar, Thakurta & Zhang 2015, 'Nearly optimal private LASSO', Algorithm 1 (private "
          "Frank-Wolfe over the l1 ball, mu_t = 2/(t + 2)), each vertex chosen by the exponential "
          "mechanism (Gumbel-max) and the steps composed through zCDP (Cesar & Rogers 2021)")

PARAMETERS = {
    "steps": [None, Integer(1)],
}


@lifecycle
def frank_wolfe(problem, epsilon, delta=None, *, steps=None, secure=False, rng=None,
                accountant=None):
    r"""Differentially private ERM over the l1 ball by private Frank-Wolfe
    (Talwar-Thakurta-Zhang 2015).

    Minimises ``F(theta) = (1/n) sum_i loss(<theta, x_i>; y_i) + (lambda/2) ||theta||_2^2`` over
    ``C = {||theta||_1 <= R}`` (``problem.constraint == "l1"``, rows bounded in the l-infinity
    norm by ``B = problem.row_norm``). From ``theta_0 = 0``, for ``t = 0 .. T-1``: score the
    2p vertices ``v = +-R e_j`` of C by ``<v, grad F(theta_t)> = +-R g_j``,
    ``g = X^T r / n + lambda theta_t``, ``r_i = loss'(<theta_t, x_i>; y_i)``; choose one by the
    exponential mechanism,

    .. math::

        P[v] \propto \exp\!\left(-\frac{\epsilon_0 \langle v, \nabla F(\theta_t)\rangle}
                                        {2 \Delta}\right),
        \qquad \Delta = \frac{2 R L}{n},

    and set ``theta_{t+1} = (1 - mu_t) theta_t + mu_t v`` with ``mu_t = 2 / (t + 2)``.
    ``theta_T`` is returned; every iterate is in C (a convex combination of vertices).

    Parameters
    ----------
    {{problem}}
        With ``constraint="l1"`` and a smooth margin loss; ``L = problem.lipschitz`` (the
        largest ``|loss'|`` times B) must be finite.
    epsilon : float
        Target epsilon > 0.
    delta : float, optional
        Target delta in (0, 1), composed through zCDP; None: pure epsilon-DP (``epsilon_0 =
        epsilon / T``).
    steps : int, optional
        T; default the fewest in [1, 10^4] whose bound (:func:`frank_wolfe_bound`) is within
        10% of the least, from public constants only (about ``(n epsilon)^(2/3)``).
    rng : None, int, SeedSequence or Generator
        Source of the Gumbel variables: ``2p`` per step, drawn as ``rng.gumbel(size=2 * p)``
        would (numpy's ``random_gumbel``: ``-log(-log(U))``, ``U = 1 - next_double()`` with
        53 random bits, ``U = 1`` redrawn), in vertex order ``+R e_0, -R e_0, +R e_1, ...``.
    {{secure}}
    {{accountant}}

    Returns
    -------
    Fit
        ``theta = theta_T``, ``steps = T``, ``noise = {"gumbel": 2 Delta / epsilon_0}`` (the
        Gumbel scale on the scores ``<v, grad F>``), ``settings`` with ``step_epsilon``
        (``epsilon_0``) and ``sensitivity`` (Delta); the DpEvent is T exponential mechanisms
        (``BoundedRangeDpEvent(epsilon_0)``, self-composed).

    Notes
    -----
    Privacy. Under replace-one neighbours a score ``+-R g_j`` changes by at most
    ``R |x_ij loss'_i - x'_ij loss'_i'| / n <= 2 R L / n = Delta`` (the ridge term does not
    depend on the data), so each choice is the exponential mechanism for the utility
    ``-<v, grad F>`` of sensitivity Delta: ``epsilon_0``-DP and ``epsilon_0``-bounded range,
    hence ``(epsilon_0^2 / 8)``-zCDP (Cesar & Rogers 2021). The T choices compose adaptively
    (the iterates are functions of the earlier choices): ``T epsilon_0`` for pure DP, and for
    ``delta > 0`` ``rho = T epsilon_0^2 / 8``, ``epsilon = rho + 2 sqrt(rho ln(1/delta))``
    (Bun & Steinke 2016), solved exactly for ``epsilon_0`` (the larger of the two readings'
    ``epsilon_0`` is used). The Gumbel-max choice (argmax of ``-<v, grad F> epsilon_0 /
    (2 Delta) + G_v``) is the exponential mechanism exactly in real arithmetic; in floating
    point its distribution differs by the rounding of the draws (docs/frank_wolfe.md).

    Utility: :func:`frank_wolfe_bound`; the lower bound: :func:`dpsolve.bounds.l1_erm_lower_bound`.

    Source: Talwar, Thakurta & Zhang 2015, Algorithm 1 (they choose by report-noisy-max with
    Laplace noise and compose by advanced composition; here the exponential mechanism and
    zCDP, which need less noise for the same target).
    """


def step_epsilon(epsilon, delta, steps):
    """Each step's ``epsilon_0`` for T = ``steps`` exponential mechanisms to be
    (epsilon, delta)-DP: ``epsilon / T`` for ``delta`` None (basic composition, exact for pure
    DP), else the larger of that and zCDP's (``T epsilon_0^2 / 8 = rho`` with
    ``sqrt(rho) = epsilon / (sqrt(ln(1/delta) + epsilon) + sqrt(ln(1/delta)))``, the root of
    ``rho + 2 sqrt(rho ln(1/delta)) = epsilon``). Rounded down by a few ulps (less privacy loss).
    Works on arrays of ``steps``.

    Parameters
    ----------
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float or None
        Target delta in (0, 1), or None for pure DP.
    steps : int or array_like of int
        Number of steps T.

    Returns
    -------
    float or ndarray
        ``epsilon_0``, of the shape of ``steps``.
    """
    steps = np.asarray(steps, dtype=float)
    value = epsilon / steps
    if delta is not None:
        log_inv = -math.log(delta)
        root_rho = epsilon / (math.sqrt(log_inv + epsilon) + math.sqrt(log_inv))
        value = np.maximum(value, np.sqrt(8.0 / steps) * root_rho)
    return value * (1.0 - 8.0 * np.finfo(float).eps)


def curvature_bound(problem):
    r"""Jaggi's 2013 curvature constant of F over the l1 ball, bounded:
    ``Gamma <= (2R)^2 (beta + lambda)`` with ``beta = problem.smoothness`` (the margin loss's
    smoothness times ``B^2``, B the rows' l-infinity bound).

    For ``y = theta + gamma (v - theta)`` with theta, v in C:
    ``F(y) - F(theta) - <grad F(theta), y - theta> <= (gamma^2 / 2) ((1/n) sum_i
    beta_m <x_i, v - theta>^2 + lambda ||v - theta||_2^2)``, and ``|<x_i, v - theta>| <=
    B ||v - theta||_1 <= 2 R B``, ``||v - theta||_2 <= ||v - theta||_1 <= 2R``.

    Parameters
    ----------
    problem : Problem

    Returns
    -------
    float
        The bound on Gamma (inf for a loss that is not smooth).
    """
    return (2.0 * problem.radius) ** 2 * (problem.smoothness + problem.reg)


def frank_wolfe_bound(problem, epsilon, delta=None, *, steps, form="mean"):
    r"""Bound on ``E F(theta_T) - min_C F`` for :func:`dpsolve.frank_wolfe` with T = ``steps``:

    .. math::

        \frac{2 \Gamma}{T + 2} + \frac{2 \Delta}{\epsilon_0} \ln(2p),
        \qquad \Delta = \frac{2 R L}{n},

    Gamma from :func:`curvature_bound`, ``epsilon_0`` from :func:`step_epsilon`.

    Derivation (Frank-Wolfe with an inexact linear oracle, as in Jaggi 2013). Let
    ``h_t = F(theta_t) - F*`` and ``e_t = <v_t, g_t> - min_v <v, g_t>`` the oracle's error.
    Curvature gives ``F(theta_{t+1}) <= F(theta_t) + mu_t <g_t, v_t - theta_t> + mu_t^2
    Gamma / 2``, and convexity ``<g_t, theta* - theta_t> <= -h_t``, so ``h_{t+1} <= (1 - mu_t)
    h_t + mu_t e_t + mu_t^2 Gamma / 2``. If ``E[e_t | past] <= e``, induction from
    ``h_1 <= e + Gamma/2`` gives ``E h_t <= 2 Gamma / (t + 2) + e`` for ``mu_t = 2/(t + 2)``
    (``(t + 1)(t + 3) <= (t + 2)^2``). The exponential mechanism over m = 2p vertices, at
    ``s = epsilon_0 / (2 Delta)``, has ``E[e_t] <= ln(m) / s``: its distribution pi maximises
    ``E_pi[u] + H(pi) / s`` (the Gibbs variational principle), whose value
    ``(1/s) ln sum exp(s u)`` is at least ``max u``, and ``H(pi) <= ln m``. (The tail bound
    ``P[e_t >= c] <= m e^{-s c}`` gives ``(ln m + 1) / s``, 1/s more.)

    Mean form (times n for ``form="sum"``); explicit constants.

    Parameters
    ----------
    problem : Problem
        With ``constraint="l1"``, a finite ``lipschitz`` and ``smoothness``.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float or None
        Target delta in (0, 1), or None (pure DP).
    steps : int or array_like of int
        T.
    form : {"mean", "sum"}, default "mean"
        Normalisation: ``F(theta) - F(theta*)`` (mean form) or ``n`` times it.

    Returns
    -------
    float or ndarray
        The bound, of the shape of ``steps``.
    """
    check_bound_arguments(problem, epsilon, delta, form, constraint="l1")
    steps = np.asarray(steps, dtype=float)
    sensitivity = 2.0 * problem.radius * problem.lipschitz / problem.n
    noise = 2.0 * sensitivity / step_epsilon(epsilon, delta, steps) * math.log(2.0 * problem.p)
    value = 2.0 * curvature_bound(problem) / (steps + 2.0) + noise
    if value.ndim == 0:
        return from_mean(float(value), problem, form)
    return value * (problem.n if form == "sum" else 1.0)


def default_steps(problem, epsilon, delta):
    """The fewest T in [1, 10^4] whose :func:`frank_wolfe_bound` is within 10% of the least
    (:func:`dpsolve.privacy.calibration.fewest_steps_near_best`); public constants only.

    Parameters
    ----------
    problem : Problem
    epsilon : float
    delta : float or None

    Returns
    -------
    int
        T.
    """
    grid = np.arange(1, MAX_DEFAULT_STEPS + 1)
    return fewest_steps_near_best(grid, frank_wolfe_bound(problem, epsilon, delta, steps=grid))


def plan(problem, partition, target, options):
    """T, ``epsilon_0`` and the exponential mechanism's weight from public constants."""
    lipschitz = check_finite_lipschitz("frank_wolfe", problem)
    epsilon, delta = target.epsilon, target.delta
    steps = options["steps"]
    if steps is None:
        steps = default_steps(problem, epsilon, delta)
    eps0 = float(step_epsilon(epsilon, delta, steps))
    sensitivity = 2.0 * problem.radius * lipschitz / problem.n     # replace-one, of one score
    weight = problem.radius * eps0 / (2.0 * sensitivity) if eps0 > 0.0 else 0.0
    if not (0.0 < weight < math.inf and 2.0 * sensitivity / eps0 < math.inf):
        raise ValueError(f"frank_wolfe: epsilon={epsilon!r} over T={steps} steps gives a "
                         f"per-step epsilon of {eps0!r}, outside float64's range for the "
                         "exponential mechanism's weight and noise; choose epsilon or steps "
                         "nearer 1")
    return Plan(epsilon=epsilon, delta=0.0 if delta is None else delta,
                method="basic" if delta is None or eps0 * steps <= epsilon else "zcdp",
                event=exponential_event(eps0, steps=steps), steps=steps,
                noise={"gumbel": 2.0 * sensitivity / eps0},
                settings={"step_epsilon": eps0, "sensitivity": sensitivity},
                # the Gumbel-max weight on g_j: R epsilon_0 / (2 Delta)
                run_inputs={"weight": weight})


def run(problem, partition, plan, rng):
    """The T steps in one kernel call, X read by columns (a transposed copy, or CSC)."""
    X, n, p = problem.X, problem.n, problem.p
    if sparse.issparse(X):
        csc = sparse.csc_array(X)
        csc.sort_indices()
        columns = (np.asarray(csc.indptr, dtype=np.intp), np.asarray(csc.indices, dtype=np.intp),
                   csc.data, p, n)
    else:
        columns = np.ascontiguousarray(X.T)
    loss = problem.loss_object
    theta = np.zeros(p)
    _frank_wolfe.private_frank_wolfe(
        columns, np.ascontiguousarray(problem.y, dtype=np.float64), loss.kernel_id,
        loss.kernel_param, problem.radius, problem.radius * problem.row_norm, problem.reg,
        plan.run_inputs["weight"], plan.steps,
        theta, np.zeros(n), np.empty(n), np.empty(p), np.empty(2 * p),
        np.empty(plan.steps, dtype=np.intp), rng)
    return Released(theta=theta)


def bound(problem, partition, plan):
    """:func:`frank_wolfe_bound` at the plan's target and T."""
    target = plan.target
    return Bound(frank_wolfe_bound(problem, target.epsilon, target.delta, steps=plan.steps),
                 "private Frank-Wolfe bound (inexact oracle, Jaggi 2013; exponential mechanism)")


SPEC = register(SolverSpec(
    name="frank_wolfe", function=frank_wolfe,
    works=("Talwar, Thakurta & Zhang 2015", "Jaggi 2013", "Cesar & Rogers 2021"),
    source=SOURCE, needs=("convex", "margin", "smooth", "compiled"),
    partition=None, neighbours="replace-one record", guarantee="dp", parameters=PARAMETERS,
    plan=plan, run=run, bound=bound, page="frank_wolfe.md",
    nonfinite_hint="check the Problem's bounds (radius, row_norm)",
    accepts=Accepts(delta="optional"),
    example={"epsilon": 1.0, "delta": 1e-6},
    example_problem={"constraint": "l1", "radius": 10.0},
    sparse=True, constraints=("l1",)))
