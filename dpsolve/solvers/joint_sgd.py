"""Joint-DP noisy SGD across data owners (Huang et al. 2023, Algorithm 1): personalised
parameters without noise, shared parameters with Gaussian noise; and the paper's baseline with
full DP (:func:`collaboration_full_dp`), a run of it without a personalised block. The model,
objective, exact minimiser and the baselines without noise are in :mod:`dpsolve.joint`."""
import dataclasses
import math

import numpy as np

from .._kernels import joint as _joint
from .._kernels.vector import project_l2_ball   # the kernels' sequential projection
from .._validation import (Boolean, IndexArray, Integer, Options, Real, check_choice,
                           check_int, check_real)
from ..joint import (FINITE_LIMIT, JointModel, check_personal_columns, joint_excess_risk,
                     joint_gradient_bound, joint_objective, joint_radii,
                     joint_reference_minimizer, joint_shapes, loss_at_logits)
from ..privacy.accounting import ACCOUNTANTS, UniformSampling, calibrate, epsilon_of, gaussian_event
from ..privacy.calibration import (MAX_NOISE_SCALE, check_noise_scale, exact_gaussian_sigma,
                                   fewest_steps_near_best, warn_large_delta)
from ..privacy.mechanisms import gaussian_sigma_analytic
from ..problem import Problem
from ._registry import register
from ._accepts import Accepts
from ._hooks import Hooks
from ._lifecycle import Bound, Measured, Plan, Released, SolverSpec, lifecycle

SOURCE = ("Huang et al. 2023, 'Learning across Data Owners with Joint Differential Privacy', "
          "Algorithm 1 (NSGD), Lemma 3.2, Theorem 3.1")
SCHEDULES = ("balanced", "uniform")
CALIBRATIONS = ("paper",) + ACCOUNTANTS
# default T: the fewest whole epochs (T = e n) in [1, MAX_EPOCHS] within 10% of the best bound
MAX_EPOCHS = 50
_CHUNK = 1 << 18

PARAMETERS = {
    # the columns' range, the radii's defaults and sigma against epsilon: checked in plan
    "personal_columns": [Options(("all",)), IndexArray()],
    "shared_radius": [None, Real(0.0)],
    "personal_radius": [None, Real(0.0)],
    "steps": [None, Integer(1)],
    "step_size": [None, Real(0.0)],
    "calibration": [None, Options(CALIBRATIONS)],   # None: by the personalised block
    "sigma": [None, Real(0.0, MAX_NOISE_SCALE, low_inclusive=True, high_inclusive=True)],
    "schedule": Options(SCHEDULES),
    "record_transcript": Boolean(),
    "transcript_limit": Integer(0),
}


def nsgd_paper_sigma(lipschitz, steps, epsilon, delta, n):
    """Huang et al. 2023's noise (Algorithm 1, line 2, Lemma 3.2 with its universal constants set
    to 1):
    ``sigma = L sqrt(T ln(1/delta)) / (epsilon m N)`` with ``m N = n`` records. Its privacy
    argument amplifies at rate ``1/(N m)`` per record, which the personalised block invalidates
    (docs/joint_dp.md): kept as a labelled reproduction. L is the Lipschitz
    constant of the joint loss in u: :func:`dpsolve.joint_sgd` passes ``L_u`` of
    :func:`dpsolve.joint.joint_gradient_bound`, not ``Problem.lipschitz``.

    Parameters
    ----------
    lipschitz : float
        Lipschitz constant L of the joint loss in the shared parameters u.
    steps : int
        Number of iterations T.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float
        Target delta, in (0, 1).
    n : int
        Number of records ``m N``.

    Returns
    -------
    float
        ``sigma = L sqrt(T ln(1/delta)) / (epsilon n)``.
    """
    return lipschitz * math.sqrt(steps * math.log(1.0 / delta)) / (epsilon * n)


@lifecycle
def joint_sgd(problem, owners, epsilon=None, delta=None, *, personal_columns="all",
              shared_radius=None, personal_radius=None, steps=None, step_size=None,
              calibration=None, sigma=None, schedule="balanced", record_transcript=False,
              transcript_limit=2 ** 28, secure=False, rng=None):
    r"""Joint-DP noisy SGD (Huang et al. 2023, Algorithm 1): personalised parameters without noise,
    shared parameters with Gaussian noise, iterate averaging.

    At step t, owner ``j_t`` (from a data-independent schedule) draws one of its records ``i_t``
    uniformly and updates only its own block and the shared one:

    .. math::

        x_{j_t} &\leftarrow \Pi_{\mathcal X}\left(x_{j_t} - \eta (\nabla_x h + \lambda x_{j_t})
        \right), \\
        u &\leftarrow \Pi_{\mathcal U}\left(u - \eta (\nabla_u h + \lambda u + b_t)\right),
        \qquad b_t \sim N(0, \sigma^2 I),

    with ``h = loss(u^T a + x_j^T a_P; y)``; the averages of ``(x^t, u^t)`` over ``t = 0 ..
    T-1`` are returned. The objective is :func:`dpsolve.joint.joint_objective` (each owner's mean loss
    weighted equally).

    Parameters
    ----------
    problem : Problem
        The data and public bounds (:class:`dpsolve.Problem`). Any loss with a finite Lipschitz constant, ``"multinomial"`` included; ``reg`` (lambda)
        applies to both blocks.
    owners : Parties
        The data owners (N >= 2).
    epsilon, delta : float
        Target joint-DP guarantee (against the other owners). Leave epsilon None with ``sigma``.
    personal_columns : "all" or array of int
        Columns P of the personalised block (default: every column). An empty list gives the
        "collaboration with full DP" baseline: no personalised block, noise on everything.
        Columns are those of ``problem.X``: with ``fit_intercept`` the intercept column (index
        ``problem.n_features``, the last) is always in the shared block, and also in the
        personalised one (an offset of each owner's own) when listed, as ``"all"`` does.
    shared_radius, personal_radius : float, optional
        Radii of the balls U and X (defaults: ``problem.radius``; one is needed).
    steps : int, optional
        T. Default: the fewest whole epochs ``T = e n``, ``e <= 50``, within 10% of the best
        value of the projected-SGD bound ``R sqrt((G^2 + dim sigma^2)/T)`` at the calibrated
        noise (public constants only).
    step_size : float, optional
        Constant eta; default ``R / sqrt(T (G^2 + dim sigma^2))``, ``R = sqrt(N R_X^2 + R_U^2)``
        (the paper's R) and ``G = sqrt(2) L_u + lambda sqrt(R_X^2 + R_U^2)`` (``L_u`` of
        :func:`dpsolve.joint.joint_gradient_bound`), the optimal constant step of the same bound. With a
        personalised block, a step size (given or default) for which the personalised updates
        could overflow float64 is refused (ValueError) before the run.
    calibration : {"pld", "rdp", "zcdp", "strong", "basic", "paper"}, optional
        With a personalised block (default ``"pld"``): the owner-level accounting below, by the
        named accountant; ``"paper"`` is :func:`nsgd_paper_sigma`. Without one (default
        ``"rdp"``): record-level accounting with amplification.
    sigma : float, optional
        Explicit noise standard deviation; the fit claims what the accountant certifies.
    schedule : {"balanced", "uniform"}
        The owner sequence: ``"balanced"`` (default) visits the owners in a fresh random order each
        round, so each owner gets ``ceil(T/N)`` or ``floor(T/N)`` steps; ``"uniform"`` draws each
        ``j_t`` uniformly (as the paper does), and the noise is calibrated to the schedule's
        largest count (the schedule is drawn first, from public randomness).
    record_transcript : bool, default False
        Run the protocol step by step in Python (each owner computing on its own copy of its
        rows) and return what the other owners see as ``Fit.transcript``
        (:class:`JointTranscript`: the schedule and each step's noisy shared-block message);
        ``transcript.replay()`` gives back ``Fit.theta`` bit for bit. Slow: for small runs.
        Without it the same computation runs in C, with the same result.
    transcript_limit : int, default 2**28
        Largest transcript in bytes (``T p K 8``); a larger one raises ValueError before any
        work.
    rng : None, int, SeedSequence or Generator
        Spawned into three streams: the schedule, the owners' record draws and the noise.
    {{secure}}

    Returns
    -------
    Fit
        ``theta = u`` (averaged); ``model`` is a :class:`dpsolve.joint.JointModel` with every owner's
        averaged ``x_j`` (each owner would receive only its own); ``observers`` gives
        ``"other_owners"``; ``settings["gradient_bound"]`` is the bound ``L_u`` on a record's
        shared-block gradient that the noise is calibrated to (sensitivity ``2 L_u``) and
        ``settings["personal_gradient_bound"]`` the personalised block's ``L_x``; with
        ``calibration="paper"``, ``settings["paper_record_level_epsilon"]`` is what the paper's
        record-level argument would claim.

    Raises
    ------
    FloatingPointError
        If the released (averaged) shared parameters are not finite; only they are read, so the
        exception reveals nothing the noisy messages do not (see :func:`run`).

    Notes
    -----
    Privacy (docs/joint_dp.md). The paper amplifies by sampling at rate ``1/(Nm)`` per record,
    which does not hold: ``x_j`` carries no noise and depends on all of owner j's records, and it
    enters ``grad_u h`` at every later step of owner j, so a changed record can move every later
    u-step of its owner. dpsolve certifies instead an **owner-level** joint-DP
    guarantee: given the (data-independent) schedule, owner j's ``K_j`` u-steps are adaptively
    composed Gaussian mechanisms of sensitivity ``2 L_u`` each whatever x_j is, so the other
    owners' view is
    ``(epsilon, delta)``-DP with ``mu = sqrt(K_max) 2 L_u / sigma`` (PLD, exact). It holds when
    any number of owner j's records change, so it covers record-level and user-level joint DP
    at once (no group-privacy factor). Without a personalised block the u-steps of owner j each
    read one record drawn uniformly from its ``n_j``, and record-level amplification holds
    (RDP; user level then needs :func:`dpsolve.privacy.group_privacy`).

    ``L_u`` bounds ``||grad_u h|| = ||loss'(u^T a + x_j^T a_P; y) a||`` over the whole joint
    domain (:func:`dpsolve.joint.joint_gradient_bound`): for the squared loss the margin can reach
    ``B (R_U + R_X)``, so ``L_u = B (B (R_U + R_X) + B_y)`` (``B (B R_U + B_y)`` without a
    personalised block), not ``Problem.lipschitz = B (R B + B_y)``, which would understate
    epsilon for the squared loss. For the classification losses the
    bound does not depend on the margin and ``L_u = Problem.lipschitz``.
    Utility: :func:`~dpsolve.solvers.joint_sgd.joint_sgd_bound` (Theorem 3.1).

    Source: Huang et al. 2023, "Learning across Data Owners with Joint Differential Privacy"
    (docs/sources.md), Algorithm 1, Lemma 3.2, Theorem 3.1.
    """


def collaboration_full_dp(problem, owners, epsilon, delta, **options):
    """Collaboration with full DP: one shared model, noise on every parameter, record-level
    (epsilon, delta)-DP: :func:`~dpsolve.joint_sgd` without a personalised block. The paper's
    third baseline; the other two, :func:`~dpsolve.joint.per_silo` and
    :func:`~dpsolve.joint.collaboration_without_dp`, are in :mod:`dpsolve.joint`.

    Parameters
    ----------
    problem : Problem
        The pooled problem (loss, constraint, regulariser, public bounds).
    owners : Parties
        The data owners, a partition of ``problem``'s rows.
    epsilon, delta : float
        The record-level target.
    **options
        Passed to :func:`~dpsolve.joint_sgd` (``steps``, ``calibration``, ``rng``, ...).

    Returns
    -------
    Fit
        :func:`~dpsolve.joint_sgd`'s fit with ``personal_columns=[]``.
    """
    return joint_sgd(problem, owners, epsilon, delta, personal_columns=[], **options)


def _schedule(N, steps, schedule, rng):
    if schedule == "uniform":
        return rng.integers(N, size=steps).astype(np.intp)
    rounds = -(-steps // N)
    return np.concatenate([rng.permutation(N) for _ in range(rounds)])[:steps].astype(np.intp)


def _sgd_bound(R, G, dim, sigma, steps):
    """Projected SGD with constant step ``R / (Gt sqrt(T))``, averaged iterate:
    ``R Gt / sqrt(T)``, ``Gt^2 = G^2 + dim sigma^2`` (Nemirovski et al. 2009)."""
    steps = np.asarray(steps, dtype=float)
    return R * np.sqrt((G * G + dim * np.asarray(sigma, dtype=float) ** 2) / steps)


@dataclasses.dataclass(frozen=True, eq=False)
class JointTranscript:
    """What the other owners see in a :func:`joint_sgd` run: the public owner schedule and each
    step's message on the shared block (the personalised blocks never leave their owner).

    Attributes
    ----------
    owners : ndarray of int, shape (T,)
        ``j_t`` (public, drawn before the run).
    messages : ndarray, shape (T, p K)
        Owner ``j_t``'s message ``grad_u h + b_t`` (row-major over (p, K)), noise included.
    step_size, reg, shared_radius : float
    shared_shape : tuple
    """

    owners: np.ndarray
    messages: np.ndarray
    step_size: float
    reg: float
    shared_radius: float
    shared_shape: tuple

    def __post_init__(self):
        for name in ("owners", "messages"):
            getattr(self, name).flags.writeable = False

    def replay(self):
        """The released shared parameters, the average of u^0 .. u^{T-1}, recomputed from the
        messages alone (bit-identical to the run)."""
        u = np.zeros(self.messages.shape[1])
        total = np.zeros_like(u)
        for message in self.messages:
            total += u
            u = _protocol_shared_step(u, message, self.step_size, self.reg, self.shared_radius)
        return (total / self.messages.shape[0]).reshape(self.shared_shape)


def _protocol_shared_step(u, message, eta, reg, radius):
    return project_l2_ball(u - eta * (message + reg * u), radius)


class JointOwner:
    """Owner j's side of :func:`joint_sgd`'s protocol: its own rows, its personalised block
    ``x_j`` and the running sum for its average. Used in this process and, on Dask workers, by
    each owner's actor (``Parties.on``): the same arithmetic either way."""

    def __init__(self, party, cols, K):
        self.X, self.y = party.X, party.y
        self.problem = party.local_problem()    # the whole problem's loss, on this owner's rows
        self.cols, self.K = cols, K
        width = cols.size * K
        self.x, self.x_sum, self.last = np.zeros(width), np.zeros(width), 0

    def step(self, t, row, u, sigma, eta, reg, r_x, rng):
        """Step t on the owner's record ``row``: update ``x_j`` and return the noisy message
        ``grad_u h + b_t`` (the noise from ``rng``, which advances)."""
        cols, K = self.cols, self.K
        k, p = cols.size, self.X.shape[1]
        a, label = self.X[row], self.y[row]
        x = self.x
        z = [0.0] * K
        for q in range(p):
            for c in range(K):
                z[c] += float(a[q]) * float(u[q * K + c])
        for q in range(k):
            for c in range(K):
                z[c] += float(a[cols[q]]) * float(x[q * K + c])
        d = loss_at_logits(self.problem, np.array([z]) if K > 1 else np.array(z),
                           np.array([label]), derivative=True).ravel()
        self.x_sum += (t + 1 - self.last) * x
        self.last = t + 1
        step = np.array([float(a[cols[q]]) * d[c] + reg * x[q * K + c]
                         for q in range(k) for c in range(K)])
        self.x = project_l2_ball(x - eta * step, r_x)
        message = np.array([float(a[q]) * d[c] for q in range(p) for c in range(K)])
        if sigma > 0.0:
            message = message + sigma * rng.standard_normal(p * K)
        return message

    def average(self, steps):
        """The average of ``x_j`` over the ``steps`` iterations."""
        return (self.x_sum + self.x * (steps - self.last)) / steps


def _owner_start(party, state, cols, K):
    """Owner's side of a run: a fresh :class:`JointOwner` in its state (module-level, as the
    owners' other steps: sent to Dask workers)."""
    state["joint_owner"] = JointOwner(party, cols, K)


def _owner_step(party, state, t, row, u, sigma, eta, reg, r_x, rng):
    """Owner's step t: ``(message, advanced noise stream)``."""
    return state["joint_owner"].step(t, row, u, sigma, eta, reg, r_x, rng), rng


def _owner_average(party, state, steps):
    """Owner's personalised block averaged over the run (which ends its side)."""
    return state.pop("joint_owner").average(steps)


def _joint_protocol(problem, owners, cols, K, owner_seq, local, sigma, eta, reg, r_u, r_x, rng):
    """joint_sgd as its protocol, in Python: owner j computes on its own copy of its rows, keeps
    x_j, and sends ``grad_u h + b_t`` (its own noise); everybody applies the same shared step.
    The arithmetic follows ``_kernels/joint.pyx`` term by term, so the result is the same bit for
    bit. With owners on Dask workers (``Parties.on``) each step runs on its owner's worker, the
    noise stream travelling with the step. Returns (shared average, personal averages,
    messages)."""
    p, T = problem.p, owner_seq.shape[0]
    owners.map(_owner_start, cols, K)
    u = np.zeros(p * K)
    u_sum = np.zeros(p * K)
    messages = np.empty((T, p * K))
    for t in range(T):
        j = int(owner_seq[t])
        u_sum += u
        message, rng = owners.call(j, _owner_step, t, int(local[t]), u, sigma, eta, reg, r_x,
                                   rng)
        messages[t] = message
        u = _protocol_shared_step(u, message, eta, reg, r_u)
    personal = np.stack(owners.map(_owner_average, T))
    return u_sum / T, personal, messages


def _joint_kernel(problem, owners, cols, K, owner_seq, records, sigma, step_size, lam, r_u, r_x,
                  noise_rng, shared_shape, personal_shape):
    """The run in C, chunked (the bit generator's lock is taken once per chunk)."""
    steps, N, dim = owner_seq.shape[0], owners.m, problem.p * K
    U = np.zeros(dim)
    Xp = np.zeros((N, cols.size * K))
    U_sum = np.zeros(dim)
    X_sum = np.zeros((N, cols.size * K))
    last = np.zeros(N, dtype=np.intp)
    z, d = np.empty(K), np.empty(K)
    kind = -1 if K > 1 else problem.loss_object.kernel_id
    labels = np.asarray(problem.y, dtype=float)
    # the kernel reads float64 rows: float32 X (small multi-party data) converted once
    X = np.asarray(problem.X, dtype=np.float64)
    for t0 in range(0, steps, _CHUNK):
        t1 = min(t0 + _CHUNK, steps)
        # The kernel's flag (final U and every final X_j finite) is ignored: it reads the
        # personalised blocks, which carry no noise. joint_sgd checks the released average of u
        # instead (_check_finite).
        _joint.joint_sgd_steps(X, labels, kind, problem.loss_object.kernel_param, K,
                               cols, U, Xp, owner_seq[t0:t1], records[t0:t1], sigma,
                               step_size, lam, r_u, r_x, noise_rng, U_sum, X_sum, last, t0, z, d)
    X_sum += Xp * (steps - last)[:, None]
    return JointModel(shared=(U_sum / steps).reshape(shared_shape),
                      personal=(X_sum / steps).reshape(personal_shape), personal_columns=cols)


def _noise(calibration, sigma, epsilon, delta, sensitivity, L, n, personalised, owners):
    """sigma(T, K_max) for the calibration: explicit, the paper's, owner level (exact with
    PLD) or record level with amplification (no personalised block)."""
    def noise_for(T, counts_max):
        if calibration == "explicit":
            return sigma
        if calibration == "paper":
            return nsgd_paper_sigma(L, T, epsilon, delta, n)
        if personalised:
            if calibration == "pld":
                return float(exact_gaussian_sigma(sensitivity, counts_max, epsilon, delta))
            return calibrate(epsilon, delta, sensitivity=sensitivity, steps=counts_max,
                             accountant=calibration)
        return calibrate(epsilon, delta, sensitivity=sensitivity, steps=counts_max,
                         sampling=UniformSampling(owners.smallest, 1), accountant=calibration)
    return noise_for


def _default_steps(calibration, sigma, epsilon, delta, sensitivity, L, n, N, personalised,
                   owners, R, G, dim):
    """The fewest whole epochs within 10% of the best projected-SGD bound at the noise each T
    would get (public constants only)."""
    grid = n * np.arange(1, MAX_EPOCHS + 1)
    if calibration == "paper":
        curve = L * np.sqrt(grid * math.log(1.0 / delta)) / (epsilon * n)
    elif calibration == "explicit":
        curve = np.full(grid.shape, sigma)
    elif personalised:      # owner level, exact
        curve = sensitivity * gaussian_sigma_analytic(1.0, epsilon, delta) * np.sqrt(
            np.ceil(grid / N))
    else:       # record level: a sample of rate q behaves like mu ~ q sqrt(K) Delta / sigma
        curve = (sensitivity * gaussian_sigma_analytic(1.0, epsilon, delta)
                 * np.sqrt(np.ceil(grid / N)) / owners.smallest)
    return fewest_steps_near_best(grid, _sgd_bound(R, G, dim, curve, grid))


def _check_calibration(calibration, sigma, epsilon, delta, personalised):
    """``(calibration, sigma, epsilon, delta)`` checked; calibration "explicit" with sigma.
    Epsilon (given exactly when sigma is not) and delta are checked already (SPEC.accepts)."""
    if calibration is None:
        calibration = "pld" if personalised else "rdp"
    # checked also with an explicit sigma, which does not use it: a misspelt option is an error
    calibration = check_choice(calibration, "calibration", CALIBRATIONS)
    if sigma is None:
        if not personalised and calibration == "pld":
            raise ValueError('without a personalised block the accounting samples records, which '
                             'PLD cannot account for: use calibration="rdp"')
        epsilon = float(epsilon)
    else:
        sigma = check_real(sigma, "sigma", low=0.0, high=MAX_NOISE_SCALE, low_inclusive=True,
                           high_inclusive=True)
        calibration = "explicit"
    return calibration, sigma, epsilon, float(delta)


def plan(problem, owners, target, options):
    """Layout, L_u, the noise's calibration and T from public constants. The noise itself,
    the event and the step size depend on the owner schedule, public randomness: :func:`draw`
    completes the plan."""
    epsilon, delta = target.epsilon, target.delta
    personal_columns, shared_radius, personal_radius = (
        options["personal_columns"], options["shared_radius"], options["personal_radius"])
    steps, step_size, calibration = options["steps"], options["step_size"], options["calibration"]
    sigma, schedule = options["sigma"], options["schedule"]
    record_transcript, transcript_limit = options["record_transcript"], options["transcript_limit"]
    cols = check_personal_columns(problem, personal_columns)
    personalised = cols.size > 0
    r_u, r_x = joint_radii(problem, shared_radius, personal_radius)
    # L_u over the joint domain (not problem.lipschitz, whose margin bound uses the Problem's
    # single ball): it sets the sensitivity, the paper's noise, G and the default T
    gradient = joint_gradient_bound(problem, cols, shared_radius=r_u, personal_radius=r_x)
    L = gradient.shared
    n, p, N, lam = problem.n, problem.p, owners.m, problem.reg
    K, shared_shape, personal_shape = joint_shapes(problem, cols.size, N)
    dim = p * K                                     # noisy coordinates
    calibration, sigma, epsilon, delta = _check_calibration(calibration, sigma, epsilon, delta,
                                                            personalised)
    warn_large_delta(delta, n, stacklevel=4)

    sensitivity = 2.0 * L          # replace-one: two records' gradients, each of norm <= L_u
    R = math.sqrt(N * r_x ** 2 + r_u ** 2)
    # ||(grad_x h, grad_u h)|| <= sqrt(L_x^2 + L_u^2) <= sqrt(2) L_u, plus the regulariser
    G = math.sqrt(2.0) * L + lam * math.sqrt(r_x ** 2 + r_u ** 2)
    if steps is None:
        steps = _default_steps(calibration, sigma, epsilon, delta, sensitivity, L, n, N,
                               personalised, owners, R, G, dim)
    if record_transcript and steps * dim * 8 > transcript_limit:
        raise ValueError(f"the transcript of {steps} steps would take {steps * dim * 8:,} bytes, "
                         f"above transcript_limit={transcript_limit:,}: raise the limit or run "
                         "fewer steps")
    return Plan(epsilon=None if calibration == "explicit" else epsilon, delta=delta,
                method=calibration, event=None, sigma=sigma, steps=steps,
                run_inputs={"cols": cols, "K": K, "shapes": (shared_shape, personal_shape),
                            "record_transcript": record_transcript, "sensitivity": sensitivity,
                            "L": L, "gradient": gradient, "radii": (r_u, r_x), "R": R, "G": G,
                            "dim": dim, "schedule": schedule, "step_size": step_size})


def draw(problem, owners, plan, rng):
    """The plan completed by the public randomness its event depends on: ``rng`` is spawned
    into the owner schedule's, the record draws' and the noise's streams, in that order; the
    schedule fixes the most steps any owner takes, hence the noise and the event."""
    schedule_rng, record_rng, noise_rng = rng.spawn(3)
    inputs = plan.run_inputs
    cols, K, (shared_shape, personal_shape) = inputs["cols"], inputs["K"], inputs["shapes"]
    sensitivity, L, gradient, R, G, dim = (inputs[k] for k in ("sensitivity", "L", "gradient",
                                                               "R", "G", "dim"))
    (r_u, r_x), schedule, step_size = inputs["radii"], inputs["schedule"], inputs["step_size"]
    calibration, sigma, delta, steps = plan.method, plan.sigma, plan.delta, plan.steps
    epsilon = plan.epsilon
    n, N, lam = problem.n, owners.m, problem.reg
    personalised = cols.size > 0
    owner_seq = _schedule(N, steps, schedule, schedule_rng)
    k_max = int(np.bincount(owner_seq, minlength=N).max())
    sigma = _noise(calibration, sigma, epsilon, delta, sensitivity, L, n, personalised,
                   owners)(steps, k_max)
    if calibration != "explicit":
        check_noise_scale("joint_sgd", sigma, epsilon, "noise standard deviation")
    if step_size is None:
        step_size = R / math.sqrt(steps * (G * G + dim * sigma * sigma))
    # No personalised value may overflow, whatever the data: the finiteness check after the run
    # then reads the released shared parameters only (see run). Public constants.
    if personalised and not (max(r_x + step_size * (gradient.personal + lam * r_x), steps * r_x)
                             < FINITE_LIMIT):
        raise ValueError(f"step_size={step_size:g} with personal_radius={r_x:g} could overflow "
                         "the personalised blocks in float64: reduce step_size")

    # owner level (certified) or record level (no personalised block)
    sampling = None if personalised else UniformSampling(owners.smallest, 1)
    event = gaussian_event(sigma, sensitivity, steps=k_max, sampling=sampling)
    settings = {"personal_columns": cols.tolist(), "shared_radius": r_u,
                "personal_radius": r_x, "step_size": step_size, "schedule": schedule,
                "max_owner_steps": k_max, "gradient_bound": L,
                "personal_gradient_bound": gradient.personal,
                "guarantee": "owner-level joint DP" if personalised else "record-level DP"}
    if calibration == "paper" and personalised:
        paper_event = gaussian_event(sigma, sensitivity, steps=steps,
                                     sampling=UniformSampling(n, 1))
        settings["paper_record_level_epsilon"] = epsilon_of(paper_event, delta, "rdp")

    # record draws: owner j picks uniformly among its own rows (its own randomness)
    sizes = np.array(owners.sizes, dtype=np.intp)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
    rows = np.concatenate([owner.rows for owner in owners]).astype(np.intp)
    local = record_rng.integers(0, sizes[owner_seq])
    return dataclasses.replace(
        plan, event=event, sigma=sigma, settings=settings,
        run_inputs={"cols": cols, "K": K, "owner_seq": owner_seq, "local": local,
                    "records": rows[starts[owner_seq] + local], "noise_rng": noise_rng,
                    "shapes": (shared_shape, personal_shape),
                    "record_transcript": inputs["record_transcript"]})


def run(problem, owners, plan, rng):
    """The steps in C, or with a transcript the protocol step by step in Python.

    The lifecycle then checks only the released average of ``u``. An exception that depended on
    the personalised blocks (no noise, a function of their owner's records) would be a release
    the analysis does not cover; the average of ``u^0 .. u^{T-1}`` is a function of the noisy
    messages alone (:meth:`JointTranscript.replay`), so raising on it is post-processing. And
    nothing is lost: plan has checked (public constants) that the logits, the loss derivative
    and every personal step stay far below the float64 maximum while ``u`` and ``x_j`` are
    finite, so a personalised block can turn non-finite only after a non-finite ``u^t``, which
    then enters the released average."""
    state, settings = plan.run_inputs, plan.settings
    cols, K, owner_seq = state["cols"], state["K"], state["owner_seq"]
    shared_shape, personal_shape = state["shapes"]
    eta, lam, r_u, r_x = (settings["step_size"], problem.reg, settings["shared_radius"],
                          settings["personal_radius"])
    transcript = None
    if state["record_transcript"] or getattr(owners, "remote", False):
        shared, personal, messages = _joint_protocol(problem, owners, cols, K, owner_seq,
                                                     state["local"], plan.sigma, eta, lam, r_u,
                                                     r_x, state["noise_rng"])
        if state["record_transcript"]:
            transcript = JointTranscript(owners=owner_seq, messages=messages, step_size=eta,
                                         reg=lam, shared_radius=r_u, shared_shape=shared_shape)
        model = JointModel(shared=shared.reshape(shared_shape),
                           personal=personal.reshape(personal_shape), personal_columns=cols)
    else:
        model = _joint_kernel(problem, owners, cols, K, owner_seq, state["records"], plan.sigma,
                              eta, lam, r_u, r_x, state["noise_rng"], shared_shape,
                              personal_shape)
    return Released(theta=model.shared, model=model, transcript=transcript,
                    observers={"other_owners": plan.report.certified_epsilon})


def joint_sgd_bound(problem, owners, epsilon, delta, *, personal_columns="all",
                    shared_radius=None, personal_radius=None):
    r"""Huang et al. 2023, Theorem 3.1 (record level), constant 1:

    .. math:: R L \left(\frac{1}{\sqrt{n}} + \frac{\sqrt{\ell \ln(1/\delta)}}{\epsilon n}\right),
              \qquad R = \sqrt{N D_X^2 + D_U^2},

    with n = mN records, ``ell = p K`` shared coordinates, ``D = 2 * radius`` and L the joint
    loss's per-record gradient bound ``L_u`` over the joint domain for this block layout and
    these radii (:func:`~dpsolve.joint.joint_gradient_bound`; for the squared loss
    ``B (B (R_U + R_X) + B_y)``, not ``problem.lipschitz``). In the joint parameter
    ``(x_j, u)`` the loss is ``sqrt(2) L_u``-Lipschitz; the constant-1 rate absorbs the factor.
    A population-loss rate under the paper's record-level accounting, which dpsolve does not
    certify (see :func:`dpsolve.joint_sgd`): the scaling to compare with, not a guaranteed
    number.

    Parameters
    ----------
    problem : Problem
        The pooled problem of all owners (n records, ``theta_shape`` gives ell).
    owners : int or Parties
        The number of data owners N (``>= 1``), or a Parties (its ``m``).
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float
        Target delta, in (0, 1).
    personal_columns : "all" or array of int, default "all"
        Columns of the personalised block, as in :func:`dpsolve.joint_sgd`.
    shared_radius, personal_radius : float, optional
        Radii ``R_U`` and ``R_X`` of the shared and personalised balls; default
        ``problem.radius``. Both are needed (ValueError otherwise).

    Returns
    -------
    float
        The rate (constant 1), in mean form.
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    check_real(epsilon, "epsilon", low=0.0)
    if delta is not None:
        check_real(delta, "delta", low=0.0, high=1.0)
    m_owners = owners.m if hasattr(owners, "m") else check_int(owners, "owners", low=1)
    r_u = problem.radius if shared_radius is None else shared_radius
    r_x = problem.radius if personal_radius is None else personal_radius
    if r_u is None or r_x is None:
        raise ValueError("Huang et al. 2023's Theorem 3.1 needs bounded domains: pass "
                         "shared_radius and personal_radius, or a Problem with a radius")
    L = joint_gradient_bound(problem, personal_columns, shared_radius=r_u,
                             personal_radius=r_x).shared
    R = math.sqrt(m_owners * (2.0 * r_x) ** 2 + (2.0 * r_u) ** 2)
    shared = int(np.prod(problem.theta_shape))
    n = problem.n
    return R * L * (1.0 / math.sqrt(n)
                    + math.sqrt(shared * math.log(1.0 / delta)) / (epsilon * n))


def bound(problem, owners, plan):
    """Theorem 3.1 of Huang et al. 2023 (record level, constant 1) at the plan's block layout;
    None for an explicit noise (the theorem is stated at a calibrated epsilon)."""
    if plan.method == "explicit":
        return None
    settings = plan.settings
    return Bound(joint_sgd_bound(problem, owners, plan.target.epsilon, plan.target.delta,
                                 personal_columns=settings["personal_columns"],
                                 shared_radius=settings["shared_radius"],
                                 personal_radius=settings["personal_radius"]),
                 "Huang et al. 2023 Theorem 3.1 (record level, constant 1)")


def measure(problem, owners, plan, fit):
    """The fit measured on the joint objective, against its joint minimiser at the plan's
    layout (:func:`dpsolve.joint.joint_reference_minimizer`)."""
    options = plan.options
    reference = joint_reference_minimizer(problem, owners, options["personal_columns"],
                                          shared_radius=options["shared_radius"],
                                          personal_radius=options["personal_radius"])
    return Measured(reference=reference,
                    excess_risk=joint_excess_risk(problem, owners, fit.model, reference),
                    objective=joint_objective(problem, owners, fit.model),
                    released=(fit.theta, fit.model.personal))


def sweep_options(options):
    """A sweep's options as :func:`joint_sgd` takes them: ``personal_columns = "none"`` (TOML
    has no empty column list in a grid) is no personalised block, the full-DP baseline."""
    if options.get("personal_columns") == "none":
        return {**options, "personal_columns": []}
    return options


def paper_sigma(problem, owners, plan):
    """The paper's noise at the plan's target, T and ``L_u`` (``Hooks.paper_sigma``):
    :func:`nsgd_paper_sigma`."""
    return nsgd_paper_sigma(plan.settings["gradient_bound"], plan.steps, plan.epsilon,
                            plan.delta, problem.n)


SPEC = register(SolverSpec(
    accepts=Accepts(explicit_noise="sigma"),
    name="joint_sgd", function=joint_sgd, works=("Huang et al. 2023",), source=SOURCE,
    # its kernel evaluates the margin losses' switch and the softmax
    needs=("compiled",), partition="owners",
    neighbours="replace-one record (owner level with a personalised block: any number of one "
               "owner's records)",
    guarantee="joint_dp", parameters=PARAMETERS, plan=plan, run=run, bound=bound,
    page="joint_dp.md", transcript_option="record_transcript",
    hooks=Hooks(paper_sigma=paper_sigma, draw=draw, measure=measure,
                sweep_options=sweep_options),
    nonfinite_hint="the noise or the step overflowed float64 in the shared parameters: reduce "
                   "step_size or sigma",
    example={"epsilon": 1.0, "delta": 1e-6, "steps": 200, "personal_columns": [0]},
    example_problem={"radius": 1.0, "reg": 0.1}, parts=2))
