"""Mini-batch SGD with gamma-norm noise, epsilon-DP (Song, Chaudhuri & Sarwate 2013)."""
import math

import dp_accounting
import numpy as np

from .._capabilities import multinomial_solvers
from .._kernels import minibatch as _minibatch
from .._row_ops import kernel_rows
from .._validation import Integer, Options, Real, check_int
from ..bounds import check_bound_arguments, from_mean
from ..privacy.accounting import pure_event
from ..privacy.calibration import MAX_NOISE_SCALE, check_noise_scale
from ..problem import reject_multinomial
from ._registry import register
from ._accepts import Accepts
from ._lifecycle import Bound, Plan, Released, SolverSpec, lifecycle

SOURCE = ("Song, Chaudhuri & Sarwate 2013, 'Stochastic gradient descent with differentially "
          "private updates', mini-batch update with noise density exp(-(alpha/2)||z||)")
SCHEDULES = ("inv_sqrt", "constant", "inv")

PARAMETERS = {
    "batch_size": Integer(1),                # <= n: checked against the Problem in plan
    "schedule": Options(SCHEDULES),
    "step_size": Real(0.0),
    "noise_scale": [None, Real(0.0, MAX_NOISE_SCALE, low_inclusive=True, high_inclusive=True)],
}


@lifecycle
def minibatch_sgd(problem, epsilon=None, *, batch_size=10, schedule="inv_sqrt", step_size=1.0,
                  noise_scale=None, secure=False, rng=None, accountant=None):
    r"""Epsilon-DP ERM by one pass of mini-batch SGD with gamma-norm gradient noise
    (Song, Chaudhuri & Sarwate 2013).

    Minimises ``F(w) = (lambda/2) ||w||^2 + (1/n) sum_i loss(<w, x_i>; y_i)`` (``lambda =
    problem.reg > 0``). The rows are put in a uniformly random order and cut into disjoint
    batches ``B_1, B_2, ...`` of ``b = batch_size`` rows (the last holds the ``n mod b`` left over,
    if any). From ``w_1 = 0``, for each batch:

    .. math::

        w_{t+1} = \Pi_{r}\!\left(w_t - \eta_t\left(\lambda w_t
                  + \frac{1}{|B_t|}\Big(\sum_{i \in B_t} \nabla \ell(w_t; x_i, y_i) + Z_t\Big)\right)\right),
        \qquad \rho(Z_t) \propto e^{-\epsilon \|Z_t\| / (2L)},

    with ``Pi_r`` the projection onto the ball of radius ``r = min(R, 1/lambda)``. The last
    iterate is returned.

    Parameters
    ----------
    {{problem}}
        It needs ``reg > 0`` and a per-sample gradient bound ``L = problem.lipschitz <= 1`` (the
        paper's ``||grad loss|| <= 1``; with rows bounded by ``row_norm <= 1`` the logistic and
        hinge losses qualify; with ``fit_intercept`` the bound is ``sqrt(row_norm^2 +
        intercept_scale^2)``).
    epsilon : float
        Target epsilon > 0 (pure DP: delta = 0). Leave None when passing ``noise_scale``.
    batch_size : int, default 10
        b in [1, n]. The paper finds b = 1 far from the non-private objective and b of about 10
        close to it (docs/minibatch_sgd.md reproduces that experiment).
    schedule : {"inv_sqrt", "constant", "inv"}
        ``eta_t = step_size / sqrt(t)`` (default, the paper's ``1/sqrt(t)`` with step_size 1),
        ``eta_t = step_size``, or ``eta_t = 1 / (lambda t)`` (step_size is then ignored).
    step_size : float, default 1
        eta_0 > 0 of the first two schedules.
    noise_scale : float, optional
        Explicit scale s >= 0 of the noise density ``exp(-||z|| / s)`` instead of ``2L/epsilon``;
        the fit claims ``epsilon = 2L / s`` (infinite for s = 0, no noise).
    rng : None, int, SeedSequence or Generator
        Source of the row order (``rng.permutation(n)``, drawn first) and of the noise.
    {{secure}}
    {{accountant}}

    Returns
    -------
    Fit
        ``theta = w_{T+1}`` with ``T = ceil(n / b)``; ``sigma = None``,
        ``noise = {"gamma_norm": s}``; ``privacy`` claims ``(epsilon, 0)``, certified by basic
        composition; ``dp_event`` is a :class:`~dpsolve.privacy.PureDpEvent`.

    Notes
    -----
    Privacy. Under replace-one neighbours a record lies in exactly one batch, whose gradient sum
    then changes by at most ``2L`` in L2 norm; the gamma-norm noise of scale ``2L/epsilon`` makes
    that step epsilon-DP, and every other step is the same function of the past on both datasets.
    So the whole sequence of iterates is epsilon-DP: one pass, disjoint batches, and a
    data-independent order make this parallel composition. A second pass would double epsilon;
    this solver makes exactly one.

    The paper writes the noise density as ``exp(-(alpha/2)||z||)`` with ``||grad|| <= 1``, i.e.
    ``2L/epsilon`` with ``L = 1``; for ``L < 1`` the same argument allows the smaller scale used
    here (docs/minibatch_sgd.md).

    Utility: :func:`~dpsolve.solvers.minibatch_sgd.minibatch_sgd_bound` (``schedule="inv"``,
    smooth losses).

    Source: Song, Chaudhuri & Sarwate, "Stochastic gradient descent with differentially private
    updates", GlobalSIP 2013: the mini-batch update and its noise density (eq. (1) of the blog
    notes summarising the paper, see docs/sources.md).
    """


def plan(problem, partition, target, options):
    """The noise scale, the projection radius and the step sizes from public constants."""
    epsilon = target.epsilon
    batch_size, schedule = options["batch_size"], options["schedule"]
    step_size, noise_scale = options["step_size"], options["noise_scale"]
    n = problem.n
    if problem.reg <= 0.0:
        raise ValueError("minibatch_sgd needs a regularised objective: give the Problem reg > 0")
    L = problem.lipschitz
    if not L <= 1.0:
        raise ValueError(f"minibatch_sgd needs per-sample gradients of norm <= 1 (Song, "
                         f"Chaudhuri & Sarwate's assumption); this Problem's Lipschitz "
                         f"constant is {L:g}: scale the rows so that row_norm <= 1 (with "
                         "fit_intercept, row_norm**2 + intercept_scale**2 <= 1)")
    if batch_size > n:
        raise ValueError(f"batch_size must be <= n={n}, got {batch_size}")
    sensitivity = 2.0 * L       # of a batch's gradient sum, replace-one
    if noise_scale is None:
        epsilon = float(epsilon)            # given, and checked (SPEC.accepts)
        with np.errstate(over="ignore"):
            noise_scale = check_noise_scale("minibatch_sgd",
                                            float(np.float64(sensitivity) / epsilon), epsilon)
        method = "paper"
    else:
        epsilon = sensitivity / noise_scale if noise_scale > 0.0 else math.inf
        method = "explicit"
    radius = 1.0 / problem.reg
    if problem.radius is not None:
        radius = min(radius, problem.radius)
    event = dp_accounting.NonPrivateDpEvent() if math.isinf(epsilon) else pure_event(epsilon)
    return Plan(epsilon=epsilon, delta=0.0, method=method, event=event, sigma=None,
                steps=-(-n // batch_size), noise={"gamma_norm": noise_scale},
                settings={"batch_size": batch_size, "schedule": schedule,
                          "step_size": 1.0 / problem.reg if schedule == "inv" else step_size,
                          "radius": radius})


def run(problem, partition, plan, rng):
    """One pass in C over a uniformly random order of the rows (drawn first from ``rng``)."""
    settings, loss = plan.settings, problem.loss_object
    order = rng.permutation(problem.n).astype(np.intp)
    theta = np.zeros(problem.p)
    _minibatch.minibatch_sgd_pass(kernel_rows(problem.X), problem.y, loss.kernel_id, loss.kernel_param, theta,
                                  order, settings["batch_size"], plan.noise["gamma_norm"],
                                  _minibatch.SCHEDULES[settings["schedule"]],
                                  settings["step_size"], problem.reg, settings["radius"], rng)
    return Released(theta=theta)


def minibatch_sgd_bound(problem, epsilon, *, batch_size, form="mean"):
    r"""Excess-risk bound for :func:`dpsolve.minibatch_sgd` with ``schedule="inv"``
    (``eta_t = 1/(lambda t)``) on a smooth loss, for the last iterate after its one pass of
    ``T = ceil(n / b)`` steps.

    Song, Chaudhuri & Sarwate (2013) state no convergence theorem. This is the standard
    analysis of SGD on a lambda-strongly convex objective (Rakhlin, Shamir & Sridharan 2012,
    Lemma 1: ``E ||w_T - w*||^2 <= 4 M^2 / (lambda^2 T)`` when ``E ||g_t||^2 <= M^2``), turned
    into objective values by smoothness:

    .. math:: E[F(w_T)] - F(w^*) \le \frac{\beta_F}{2} E\|w_T - w^*\|^2
              \le \frac{2 \beta_F M^2}{\lambda^2 T}, \qquad
              M^2 = G^2 + \frac{p (p + 1) s^2}{b^2},

    with ``G = L + lambda r`` (the batch gradient plus regulariser, r the projection radius),
    ``s = 2L/epsilon`` the noise scale (``||Z|| ~ Gamma(p, s)``, so ``E ||Z||^2 = p (p+1) s^2``),
    ``beta_F = beta + lambda``. Mean form (times n for ``form="sum"``), explicit constants. The
    last batch may be smaller than b; the bound then uses it for every step (conservative).
    Not for multinomial problems (minibatch_sgd does not take them).

    Parameters
    ----------
    problem : Problem
        A smooth loss with ``reg > 0`` (ValueError otherwise).
    epsilon : float
        Epsilon of the gamma-norm noise, ``> 0`` (pure epsilon-DP).
    batch_size : int
        Batch size b, in [1, n].
    form : {"mean", "sum"}, default "mean"
        Normalisation: ``F(theta) - F(theta*)`` (mean form) or ``n`` times it (sum
        form, ``L = n F``).

    Returns
    -------
    float
        The bound.
    """
    check_bound_arguments(problem, epsilon, None, form)
    reject_multinomial(problem, "minibatch_sgd_bound", multinomial_solvers())
    if problem.reg <= 0.0:
        raise ValueError("the bound needs problem.reg > 0")
    beta = problem.smoothness + problem.reg
    if not math.isfinite(beta):
        raise ValueError(f"the bound needs a smooth loss; {problem.loss} is not")
    n, p, lam, L = problem.n, problem.p, problem.reg, problem.lipschitz
    b = check_int(batch_size, "batch_size", low=1)
    if b > n:
        raise ValueError(f"batch_size must be <= n={n}, got {b}")
    smallest = n - (math.ceil(n / b) - 1) * b
    r = 1.0 / lam if problem.radius is None else min(1.0 / lam, problem.radius)
    s = 2.0 * L / epsilon
    M2 = (L + lam * r) ** 2 + p * (p + 1) * s * s / smallest ** 2
    value = 2.0 * beta * M2 / (lam * lam * math.ceil(n / b))
    return from_mean(value, problem, form)


def bound(problem, partition, plan):
    """The strongly convex SGD bound of :func:`dpsolve.solvers.minibatch_sgd.minibatch_sgd_bound` at the
    plan's target epsilon.

    None unless the schedule is ``"inv"`` (the bound's step sizes) and the loss is smooth, and
    without a target epsilon (an explicit ``noise_scale``). The fit itself already required
    ``reg > 0``, a binary loss and ``batch_size <= n``.
    """
    epsilon = plan.target.epsilon
    if plan.settings["schedule"] != "inv" or epsilon is None or \
            not problem.loss_object.smooth:
        return None
    return Bound(minibatch_sgd_bound(problem, epsilon,
                                            batch_size=plan.settings["batch_size"]),
                 "Song-Chaudhuri-Sarwate 2013 SGD bound (schedule inv)")


SPEC = register(SolverSpec(
    accepts=Accepts(delta="none", explicit_noise="noise_scale"),
    name="minibatch_sgd", function=minibatch_sgd, works=("Song, Chaudhuri & Sarwate 2013",),
    # the kernels' switch over the margin losses (theta in R^p)
    source=SOURCE, needs=("margin", "compiled"), partition=None,
    neighbours="replace-one record", guarantee="dp", parameters=PARAMETERS, plan=plan, run=run,
    bound=bound, page="minibatch_sgd.md", nonfinite_hint="reduce the step size",
    example={"epsilon": 1.0, "batch_size": 10}, example_problem={"radius": 1.0, "reg": 0.1},
    sparse=True))
