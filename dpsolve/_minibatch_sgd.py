"""Mini-batch SGD with gamma-norm noise, epsilon-DP (Song, Chaudhuri & Sarwate 2013)."""
import math
import time

import dp_accounting
import numpy as np

from ._kernels import minibatch as _minibatch
from ._secure import check_secure, generator as secure_generator, release
from ._validation import check_choice, check_int, check_real
from .fit import Fit
from .privacy.accounting import certify, pure_event
from .problem import Problem, reject_multinomial

SOURCE = ("Song, Chaudhuri & Sarwate 2013, 'Stochastic gradient descent with differentially "
          "private updates', mini-batch update with noise density exp(-(alpha/2)||z||)")
SCHEDULES = ("inv_sqrt", "constant", "inv")


def minibatch_sgd(problem, epsilon=None, *, batch_size=10, schedule="inv_sqrt", step_size=1.0,
                  noise_scale=None, secure=False, rng=None):
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
    problem : Problem
        Needs ``reg > 0`` and a per-sample gradient bound ``L = problem.lipschitz <= 1`` (the
        paper's ``||grad loss|| <= 1``; with rows bounded by ``row_norm <= 1`` the logistic and
        hinge losses qualify).
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
    secure : bool, default False
        ``True``: noise from a fresh stream seeded from the operating system's entropy (``rng``
        must then be None), released parameters rounded to the ``2**-32`` grid, and
        ``wall_time`` NaN. See docs/secure_noise.md for what this does and does not protect
        against. The default is a reproducible research run.

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

    Source: Song, Chaudhuri & Sarwate, "Stochastic gradient descent with differentially private
    updates", GlobalSIP 2013: the mini-batch update and its noise density (eq. (1) of the blog
    notes summarising the paper, see docs/sources.md).
    """
    secure = check_secure(secure, rng)
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    reject_multinomial(problem, "minibatch_sgd")
    n, p = problem.n, problem.p
    if problem.reg <= 0.0:
        raise ValueError("minibatch_sgd needs a regularised objective: give the Problem reg > 0")
    L = problem.lipschitz
    if not L <= 1.0:
        raise ValueError(f"minibatch_sgd needs per-sample gradients of norm <= 1 (Song, "
                         f"Chaudhuri & Sarwate's assumption); this Problem's Lipschitz "
                         f"constant is {L:g}: scale the rows so that row_norm <= 1")
    batch_size = check_int(batch_size, "batch_size", low=1)
    if batch_size > n:
        raise ValueError(f"batch_size must be <= n={n}, got {batch_size}")
    schedule = check_choice(schedule, "schedule", SCHEDULES)
    step_size = check_real(step_size, "step_size", low=0.0)
    sensitivity = 2.0 * L       # of a batch's gradient sum, replace-one
    if noise_scale is None:
        if epsilon is None:
            raise TypeError("minibatch_sgd needs epsilon (or an explicit noise_scale)")
        epsilon = check_real(epsilon, "epsilon", low=0.0)
        noise_scale = sensitivity / epsilon
        method = "paper"
    else:
        if epsilon is not None:
            raise ValueError("pass either epsilon (to calibrate the noise) or noise_scale, "
                             "not both")
        noise_scale = check_real(noise_scale, "noise_scale", low=0.0, low_inclusive=True)
        epsilon = sensitivity / noise_scale if noise_scale > 0.0 else math.inf
        method = "explicit"
    rng = secure_generator(rng, secure)

    radius = 1.0 / problem.reg
    if problem.radius is not None:
        radius = min(radius, problem.radius)
    eta0 = 1.0 / problem.reg if schedule == "inv" else step_size
    if math.isinf(epsilon):
        event = dp_accounting.NonPrivateDpEvent()
    else:
        event = pure_event(epsilon)
    report = certify(event, epsilon, 0.0, method)

    start = time.perf_counter()
    order = rng.permutation(n).astype(np.intp)
    theta = np.zeros(p)
    _minibatch.minibatch_sgd_pass(problem.X, problem.y, problem.loss_function.kernel_id, problem.loss_function.kernel_param, theta, order,
                                  batch_size, noise_scale, _minibatch.SCHEDULES[schedule], eta0,
                                  problem.reg, radius, rng)
    # checked on the released theta (the pass's last iterate) only: a function of what is
    # released, it reveals nothing more
    if not np.all(np.isfinite(theta)):
        raise FloatingPointError("minibatch_sgd produced non-finite parameters; reduce the "
                                 "step size")
    wall_time = time.perf_counter() - start
    fit = Fit(theta=theta, sigma=None, steps=-(-n // batch_size), solver="minibatch_sgd",
              source=SOURCE, wall_time=wall_time, dp_event=event, privacy=report,
              noise={"gamma_norm": noise_scale},
              settings={"batch_size": batch_size, "schedule": schedule, "step_size": eta0,
                        "radius": radius})
    return release(fit, secure)
