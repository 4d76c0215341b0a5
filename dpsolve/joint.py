"""Learning across data owners with joint differential privacy (Huang et al. 2023): noisy SGD
with shared and personalised parameters, its objective and exact minimiser, and the paper's three
baselines.

The model (the paper's convex instance; docs/joint_dp.md): owner j's record ``(a, y)`` has logits
``u^T a + x_j^T a_P``, with ``u`` shared by every owner (one weight per column, ``(p,)`` or
``(p, K)``) and ``x_j`` owner j's own (one weight per personalised column ``P``). The objective is

    J(x, u) = (1/N) sum_j [ (1/n_j) sum_{i in S_j} loss(u^T a_i + x_j^T a_{i,P}; y_i)
                            + (lambda/2) ||x_j||^2 ] + (lambda/2) ||u||^2

over ``||u|| <= R_U`` and ``||x_j|| <= R_X`` (Frobenius norms for K classes): each owner's mean
loss counts equally, which is what sampling an owner and then one of its records minimises. With
owners of equal size the loss part is the Problem's pooled mean.
"""
import dataclasses
import math
import time

import numpy as np

from ._kernels import joint as _joint
from ._kernels import losses as _losses
from ._kernels.vector import project_l2_ball   # the kernels' sequential projection
from ._secure import check_secure, generator as secure_generator, release
from ._validation import check_choice, check_int, check_real
from .fit import Fit
from .parties import check_parties
from .privacy.accounting import (ACCOUNTANTS, UniformSampling, calibrate,
                                 certify, epsilon_of, gaussian_event)
from .privacy.calibration import (exact_gaussian_sigma, fewest_steps_near_best,
                                  nsgd_paper_sigma, warn_large_delta)
from .privacy.mechanisms import gaussian_sigma_analytic
from .problem import Problem

SOURCE = ("Huang et al. 2023, 'Learning across Data Owners with Joint Differential Privacy', "
          "Algorithm 1 (NSGD), Lemma 3.2, Theorem 3.1")
SCHEDULES = ("balanced", "uniform")
CALIBRATIONS = ("paper",) + ACCOUNTANTS
LOSSES = ("logistic", "huber_hinge", "hinge", "squared", "multinomial")
# default T: the fewest whole epochs (T = e n) in [1, MAX_EPOCHS] within 10% of the best bound
MAX_EPOCHS = 50
_CHUNK = 1 << 18


# -- the model --------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, eq=False)
class JointModel:
    """Shared and personalised parameters of a joint model.

    Attributes
    ----------
    shared : ndarray, shape (p,) or (p, K)
        ``u``, the same for every owner.
    personal : ndarray, shape (N, k) or (N, k, K)
        ``x_j`` for each owner j (released to owner j only).
    personal_columns : ndarray of int, shape (k,)
        The columns P the personalised parameters weigh.
    """

    shared: np.ndarray
    personal: np.ndarray
    personal_columns: np.ndarray

    def __post_init__(self):
        for name in ("shared", "personal", "personal_columns"):
            a = np.array(getattr(self, name), copy=True)
            a.flags.writeable = False
            object.__setattr__(self, name, a)

    def logits(self, X, owner):
        """``X @ u + X[:, P] @ x_owner`` for rows X of one owner: shape (n,) or (n, K)."""
        X = np.asarray(X, dtype=float)
        return X @ self.shared + X[:, self.personal_columns] @ self.personal[owner]

    def predict(self, X, owner, problem):
        """Predicted labels (in the Problem's original label values) for rows of one owner."""
        z = self.logits(X, owner)
        classes = np.asarray(problem.classes)
        if z.ndim == 2:
            return classes[np.argmax(z, axis=1)]
        return np.where(z >= 0.0, classes[1], classes[0])


def _columns(problem, personal_columns):
    if isinstance(personal_columns, str):
        check_choice(personal_columns, "personal_columns", ("all",))
        return np.arange(problem.p, dtype=np.intp)
    cols = np.asarray(personal_columns)
    if cols.ndim != 1 or not (cols.size == 0 or np.issubdtype(cols.dtype, np.integer)):
        raise TypeError("personal_columns must be 'all' or a 1-D array of column indices")
    if cols.size and (cols.min() < 0 or cols.max() >= problem.p):
        raise ValueError(f"personal_columns must lie in [0, {problem.p})")
    if np.unique(cols).size != cols.size:
        raise ValueError("personal_columns lists a column more than once")
    return np.sort(cols.astype(np.intp))


def _radii(problem, shared_radius, personal_radius):
    default = problem.radius
    r_u = default if shared_radius is None else check_real(shared_radius, "shared_radius", low=0.0)
    r_x = default if personal_radius is None else check_real(personal_radius, "personal_radius",
                                                             low=0.0)
    if r_u is None or r_x is None:
        raise ValueError("the joint model needs bounded domains: give the Problem a radius or "
                         "pass shared_radius and personal_radius")
    return r_u, r_x


#: Largest magnitude the kernel's arithmetic may reach on the logits and the personalised
#: blocks (checked on public constants; far enough below the float64 maximum, ~1.8e308, that
#: rounding cannot overflow).
_FINITE_LIMIT = 1e300


@dataclasses.dataclass(frozen=True)
class JointGradientBound:
    """Per-record gradient bounds of the joint loss over the joint domain
    (:func:`joint_gradient_bound`).

    Attributes
    ----------
    shared : float
        ``L_u``: ``||grad_u h|| <= L_u`` for every record, ``u`` in U and ``x_j`` in X. Each
        shared-block message has replace-one sensitivity ``2 L_u``.
    personal : float
        ``L_x``: ``||grad_x h|| <= L_x`` (0 without a personalised block).
    margin : float
        ``M``: every logit (every logit vector, in Euclidean norm, for K classes) is at most
        ``M`` in magnitude: ``B (R_U + R_X)``, or ``B R_U`` without a personalised block.
    """

    shared: float
    personal: float
    margin: float


def joint_gradient_bound(problem, personal_columns="all", *, shared_radius=None,
                         personal_radius=None):
    r"""Per-record gradient bound of the joint loss ``h = loss(u^T a + x_j^T a_P; y)`` for the
    Problem's loss, a block layout and the radii ``R_U``, ``R_X`` (defaults as in
    :func:`joint_sgd`). Public constants only: ``B = row_norm``, ``B_y = label_bound``.

    Both blocks' gradients are the loss derivative in the logits times the features:
    ``grad_u h = a d^T`` and ``grad_x h = a_P d^T`` with ``d = loss'(z; y)`` (a scalar, or
    ``softmax(z) - e_y`` for K classes), of norms ``||a|| ||d||`` and ``||a_P|| ||d||``.
    With ``||a|| <= B``, ``||a_P|| <= ||a||``, ``||u|| <= R_U`` and ``||x_j|| <= R_X``
    (Frobenius norms for K classes), Cauchy-Schwarz bounds the logits by the margin
    ``M = B (R_U + R_X)`` (``B R_U`` without a personalised block), so both norms are at most
    ``B D`` with ``D`` the largest ``||d||`` over logits of norm ``<= M`` and every label:

    * squared: ``D = M + B_y``, so ``L_u = B (B (R_U + R_X) + B_y)`` (``B (B R_U + B_y)``
      without a personalised block). Attained: ``a = B e`` for a unit e on a personalised
      column, ``u = R_U e``, ``x_j = R_X e``, ``y = -B_y``.
    * logistic, hinge, huber_hinge: ``D = 1`` (``|loss'| <= 1``), ``L_u = B``. Attained at
      ``z = 0`` by hinge and by huber_hinge of width ``h < 1``; logistic reaches
      ``B sigmoid(M)`` and approaches B only as M grows (the bound is then conservative).
    * multinomial: ``D = sqrt(2)`` (``||softmax(z) - e_y||^2 <= 2 (1 - s_y)^2``),
      ``L_u = sqrt(2) B``, approached as one wrong class's logit dominates.

    The classification bounds do not depend on the margin and equal ``Problem.lipschitz``. The
    squared loss's does: ``Problem.lipschitz = B (R B + B_y)`` bounds the margin by the
    Problem's single ball of radius R, which understates ``L_u`` whenever there is a
    personalised block (``u`` and ``x_j`` both move the logit) or ``R_U > R``.

    Returns
    -------
    JointGradientBound
        ``shared`` (L_u), ``personal`` (L_x, 0 without a personalised block) and ``margin``
        (M). ValueError if a bound is not finite (or is so large that the solver's arithmetic
        could overflow).
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    if problem.loss not in LOSSES:
        raise ValueError(f"the joint model does not support loss={problem.loss!r}")
    cols = _columns(problem, personal_columns)
    r_u, r_x = _radii(problem, shared_radius, personal_radius)
    B = problem.row_norm
    margin = B * (r_u + r_x) if cols.size else B * r_u
    if problem.loss == "squared":
        shared = B * (margin + problem.label_bound)
    elif problem.loss == "multinomial":
        shared = math.sqrt(2.0) * B             # the expression Problem.lipschitz uses
    else:
        shared = B
    if not (margin < _FINITE_LIMIT and shared < _FINITE_LIMIT):
        raise ValueError(f"the joint model's margin bound {margin:g} or gradient bound "
                         f"{shared:g} is not finite in float64: reduce shared_radius, "
                         "personal_radius, row_norm or label_bound")
    return JointGradientBound(shared=shared, personal=shared if cols.size else 0.0,
                              margin=margin)


def _check_owners(problem, owners):
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    check_parties(problem, owners, "owners")
    if problem.loss not in LOSSES:
        raise ValueError(f"joint_sgd does not support loss={problem.loss!r}")


def _shapes(problem, k, N):
    K = problem.n_classes if problem.loss == "multinomial" else 1
    shared = problem.theta_shape
    personal = (N, k, K) if K > 1 else (N, k)
    return K, shared, personal


def joint_objective(problem, owners, model):
    """``J(x, u)`` of the module docstring for a :class:`JointModel` (or ``(shared, personal,
    personal_columns)``)."""
    _check_owners(problem, owners)
    lam = problem.reg
    total = 0.0
    for j, owner in enumerate(owners):
        z = model.logits(owner.X, j)
        total += _mean_loss(problem, z, owner.y) + 0.5 * lam * float(np.sum(model.personal[j] ** 2))
    return total / owners.m + 0.5 * lam * float(np.sum(model.shared ** 2))


def _loss_at(problem, z, y, derivative=False):
    """The loss (or its derivative in the logits) at logits ``z`` ((n,) or (n, K)), labels y."""
    if problem.loss == "multinomial":
        labels = np.ascontiguousarray(y, dtype=np.intp)
        z = np.ascontiguousarray(z, dtype=float)
        return (_losses.multinomial_derivatives(z, labels) if derivative
                else _losses.multinomial_values(z, labels))
    f = _losses.loss_derivatives if derivative else _losses.loss_values
    return f(problem.loss_function.kernel_id, np.ascontiguousarray(z, dtype=float),
             np.ascontiguousarray(y, dtype=float), problem.loss_function.kernel_param)


def _mean_loss(problem, z, y):
    return float(np.mean(_loss_at(problem, z, y)))


def _owner_gradients(problem, owners, model):
    """Gradient of J: (grad_u, grad_x) with grad_x of shape ``model.personal.shape``."""
    lam = problem.reg
    grad_u = lam * np.array(model.shared, dtype=float)
    grad_x = np.empty(model.personal.shape)
    cols = model.personal_columns
    for j, owner in enumerate(owners):
        z = model.logits(owner.X, j)
        d = _loss_at(problem, z, owner.y, derivative=True) / (owner.n * owners.m)
        grad_u += owner.X.T @ d
        grad_x[j] = owner.X[:, cols].T @ d + (lam / owners.m) * model.personal[j]
    return grad_u, grad_x


# -- noisy SGD -----------------------------------------------------------------------------------
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


def _joint_protocol(problem, owners, cols, K, owner_seq, local, sigma, eta, reg, r_u, r_x, rng):
    """joint_sgd as its protocol, in Python: owner j computes on its own copy of its rows, keeps
    x_j, and sends ``grad_u h + b_t`` (its own noise); everybody applies the same shared step.
    The arithmetic follows ``_kernels/joint.pyx`` term by term, so the result is the same bit for
    bit. Returns (shared average, personal averages, messages)."""
    p, k, N, T = problem.p, cols.size, owners.m, owner_seq.shape[0]
    u = np.zeros(p * K)
    x = np.zeros((N, k * K))
    u_sum, x_sum = np.zeros(p * K), np.zeros((N, k * K))
    last = np.zeros(N, dtype=np.intp)
    messages = np.empty((T, p * K))
    for t in range(T):
        j = int(owner_seq[t])
        a, label = owners[j].X[int(local[t])], owners[j].y[int(local[t])]
        z = [0.0] * K
        for q in range(p):
            for c in range(K):
                z[c] += float(a[q]) * float(u[q * K + c])
        for q in range(k):
            for c in range(K):
                z[c] += float(a[cols[q]]) * float(x[j, q * K + c])
        d = _loss_at(problem, np.array([z]) if K > 1 else np.array(z), np.array([label]),
                     derivative=True).ravel()
        u_sum += u
        x_sum[j] += (t + 1 - last[j]) * x[j]
        last[j] = t + 1
        step = np.array([float(a[cols[q]]) * d[c] + reg * x[j, q * K + c]
                         for q in range(k) for c in range(K)])
        x[j] = project_l2_ball(x[j] - eta * step, r_x)
        message = np.array([float(a[q]) * d[c] for q in range(p) for c in range(K)])
        if sigma > 0.0:
            message = message + sigma * rng.standard_normal(p * K)
        messages[t] = message
        u = _protocol_shared_step(u, message, eta, reg, r_u)
    x_sum += x * (T - last)[:, None]
    return u_sum / T, x_sum / T, messages


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
    T-1`` are returned. The objective is :func:`joint_objective` (each owner's mean loss
    weighted equally).

    Parameters
    ----------
    problem : Problem
        Any loss with a finite Lipschitz constant, ``"multinomial"`` included; ``reg`` (lambda)
        applies to both blocks.
    owners : Parties
        The data owners (N >= 2).
    epsilon, delta : float
        Target joint-DP guarantee (against the other owners). Leave epsilon None with ``sigma``.
    personal_columns : "all" or array of int
        Columns P of the personalised block (default: every column). An empty list gives the
        "collaboration with full DP" baseline: no personalised block, noise on everything.
    shared_radius, personal_radius : float, optional
        Radii of the balls U and X (defaults: ``problem.radius``; one is needed).
    steps : int, optional
        T. Default: the fewest whole epochs ``T = e n``, ``e <= 50``, within 10% of the best
        value of the projected-SGD bound ``R sqrt((G^2 + dim sigma^2)/T)`` at the calibrated
        noise (public constants only).
    step_size : float, optional
        Constant eta; default ``R / sqrt(T (G^2 + dim sigma^2))``, ``R = sqrt(N R_X^2 + R_U^2)``
        (the paper's R) and ``G = sqrt(2) L_u + lambda sqrt(R_X^2 + R_U^2)`` (``L_u`` of
        :func:`joint_gradient_bound`), the optimal constant step of the same bound. With a
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
    secure : bool, default False
        ``True``: noise from a fresh stream seeded from the operating system's entropy (``rng``
        must then be None), released parameters rounded to the ``2**-32`` grid, and
        ``wall_time`` NaN. See docs/secure_noise.md for what this does and does not protect
        against. The default is a reproducible research run.

    Returns
    -------
    Fit
        ``theta = u`` (averaged); ``model`` is a :class:`JointModel` with every owner's
        averaged ``x_j`` (each owner would receive only its own); ``observers`` gives
        ``"other_owners"``; ``settings["gradient_bound"]`` is the bound ``L_u`` on a record's
        shared-block gradient that the noise is calibrated to (sensitivity ``2 L_u``) and
        ``settings["personal_gradient_bound"]`` the personalised block's ``L_x``; with
        ``calibration="paper"``, ``settings["seed_record_level_epsilon"]`` is what the paper's
        record-level argument would claim.

    Raises
    ------
    FloatingPointError
        If the released (averaged) shared parameters are not finite; only they are read, so the
        exception reveals nothing the noisy messages do not (see ``_check_finite``).

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
    domain (:func:`joint_gradient_bound`): for the squared loss the margin can reach
    ``B (R_U + R_X)``, so ``L_u = B (B (R_U + R_X) + B_y)`` (``B (B R_U + B_y)`` without a
    personalised block), not ``Problem.lipschitz = B (R B + B_y)``; dpsolve 0.1.0 used the
    latter and understated epsilon for the squared loss. For the classification losses the
    bound does not depend on the margin and ``L_u = Problem.lipschitz``.
    Utility: :func:`dpsolve.bounds.joint_sgd_bound` (Theorem 3.1).

    Source: Huang et al. 2023, "Learning across Data Owners with Joint Differential Privacy"
    (docs/sources.md), Algorithm 1, Lemma 3.2, Theorem 3.1.
    """
    secure = check_secure(secure, rng, record_transcript)
    _check_owners(problem, owners)
    cols = _columns(problem, personal_columns)
    personalised = cols.size > 0
    r_u, r_x = _radii(problem, shared_radius, personal_radius)
    # L_u over the joint domain (not problem.lipschitz, whose margin bound uses the Problem's
    # single ball): it sets the sensitivity, the paper's noise, G and the default T
    bound = joint_gradient_bound(problem, cols, shared_radius=r_u, personal_radius=r_x)
    L = bound.shared
    schedule = check_choice(schedule, "schedule", SCHEDULES)
    n, p, N, lam = problem.n, problem.p, owners.m, problem.reg
    K, shared_shape, personal_shape = _shapes(problem, cols.size, N)
    dim = p * K                                     # noisy coordinates
    if calibration is None:
        calibration = "pld" if personalised else "rdp"
    if sigma is None:
        calibration = check_choice(calibration, "calibration", CALIBRATIONS)
        if not personalised and calibration == "pld":
            raise ValueError('without a personalised block the accounting samples records, which '
                             'PLD cannot account for: use calibration="rdp"')
        if epsilon is None or delta is None:
            raise TypeError("joint_sgd needs epsilon and delta (or an explicit sigma and delta)")
        epsilon = check_real(epsilon, "epsilon", low=0.0)
    elif epsilon is not None:
        raise ValueError("pass either epsilon (to calibrate the noise) or sigma, not both")
    else:
        sigma = check_real(sigma, "sigma", low=0.0, low_inclusive=True)
        calibration = "explicit"
    if delta is None:
        raise TypeError("joint_sgd needs delta")
    delta = check_real(delta, "delta", low=0.0, high=1.0)
    if steps is not None:
        steps = check_int(steps, "steps", low=1)
    if step_size is not None:
        step_size = check_real(step_size, "step_size", low=0.0)
    if not isinstance(record_transcript, (bool, np.bool_)):
        raise TypeError(f"record_transcript must be a bool, got {type(record_transcript).__name__}")
    transcript_limit = check_int(transcript_limit, "transcript_limit", low=0)
    warn_large_delta(delta, n, stacklevel=2)
    rng = secure_generator(rng, secure)
    schedule_rng, record_rng, noise_rng = rng.spawn(3)

    sensitivity = 2.0 * L          # replace-one: two records' gradients, each of norm <= L_u
    R = math.sqrt(N * r_x ** 2 + r_u ** 2)
    # ||(grad_x h, grad_u h)|| <= sqrt(L_x^2 + L_u^2) <= sqrt(2) L_u, plus the regulariser
    G = math.sqrt(2.0) * L + lam * math.sqrt(r_x ** 2 + r_u ** 2)

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

    if steps is None:
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
        values = _sgd_bound(R, G, dim, curve, grid)
        steps = fewest_steps_near_best(grid, values)

    if record_transcript and steps * dim * 8 > transcript_limit:
        raise ValueError(f"the transcript of {steps} steps would take {steps * dim * 8:,} bytes, "
                         f"above transcript_limit={transcript_limit:,}: raise the limit or run "
                         "fewer steps")
    owner_seq = _schedule(N, steps, schedule, schedule_rng)
    counts = np.bincount(owner_seq, minlength=N)
    k_max = int(counts.max())
    sigma = noise_for(steps, k_max)
    if step_size is None:
        step_size = R / math.sqrt(steps * (G * G + dim * sigma * sigma))
    # No personalised value may overflow, whatever the data: the finiteness check after the run
    # then reads the released shared parameters only (see _check_finite). Public constants.
    if personalised and not (max(r_x + step_size * (bound.personal + lam * r_x), steps * r_x)
                             < _FINITE_LIMIT):
        raise ValueError(f"step_size={step_size:g} with personal_radius={r_x:g} could overflow "
                         "the personalised blocks in float64: reduce step_size")

    # the events: owner level (certified) or record level (no personalised block)
    if personalised:
        event = gaussian_event(sigma, sensitivity, steps=k_max)
    else:
        event = gaussian_event(sigma, sensitivity, steps=k_max,
                               sampling=UniformSampling(owners.smallest, 1))
    report = certify(event, None if calibration == "explicit" else epsilon, delta,
                     calibration, stacklevel=2)
    settings = {"personal_columns": cols.tolist(), "shared_radius": r_u,
                "personal_radius": r_x, "step_size": step_size, "schedule": schedule,
                "max_owner_steps": k_max, "gradient_bound": L,
                "personal_gradient_bound": bound.personal,
                "guarantee": "owner-level joint DP" if personalised else "record-level DP"}
    if calibration == "paper" and personalised:
        seeds_event = gaussian_event(sigma, sensitivity, steps=steps,
                                     sampling=UniformSampling(n, 1))
        settings["seed_record_level_epsilon"] = epsilon_of(seeds_event, delta, "rdp")

    # record draws: owner j picks uniformly among its own rows (its own randomness)
    sizes = np.array(owners.sizes, dtype=np.intp)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
    rows = np.concatenate([owner.rows for owner in owners]).astype(np.intp)
    local = record_rng.integers(0, sizes[owner_seq])
    records = rows[starts[owner_seq] + local]

    start = time.perf_counter()
    transcript = None
    if record_transcript:
        shared, personal, messages = _joint_protocol(problem, owners, cols, K, owner_seq, local,
                                                     sigma, step_size, lam, r_u, r_x, noise_rng)
        transcript = JointTranscript(owners=owner_seq, messages=messages, step_size=step_size,
                                     reg=lam, shared_radius=r_u, shared_shape=shared_shape)
        model = JointModel(shared=shared.reshape(shared_shape),
                           personal=personal.reshape(personal_shape), personal_columns=cols)
    else:
        model = _joint_kernel(problem, owners, cols, K, owner_seq, records, sigma, step_size,
                              lam, r_u, r_x, noise_rng, shared_shape, personal_shape)
    _check_finite(model)
    wall_time = time.perf_counter() - start
    fit = Fit(theta=model.shared, sigma=sigma, steps=steps, solver="joint_sgd", source=SOURCE,
              wall_time=wall_time, dp_event=event, privacy=report, settings=settings,
              observers={"other_owners": report.certified_epsilon}, transcript=transcript,
              model=model)
    return release(fit, secure)


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
    kind = -1 if K > 1 else problem.loss_function.kernel_id
    labels = np.asarray(problem.y, dtype=float)
    for t0 in range(0, steps, _CHUNK):
        t1 = min(t0 + _CHUNK, steps)
        # The kernel's flag (final U and every final X_j finite) is ignored: it reads the
        # personalised blocks, which carry no noise. joint_sgd checks the released average of u
        # instead (_check_finite).
        _joint.joint_sgd_steps(problem.X, labels, kind, problem.loss_function.kernel_param, K, cols, U, Xp,
                               owner_seq[t0:t1], records[t0:t1], sigma, step_size, lam,
                               r_u, r_x, noise_rng, U_sum, X_sum, last, t0, z, d)
    X_sum += Xp * (steps - last)[:, None]
    return JointModel(shared=(U_sum / steps).reshape(shared_shape),
                      personal=(X_sum / steps).reshape(personal_shape), personal_columns=cols)


def _check_finite(model):
    """FloatingPointError if the averaged shared parameters are not finite.

    Only ``u`` is read. An exception that depended on the personalised blocks (no noise, a
    function of their owner's records) would be a release the analysis does not cover; the
    average of ``u^0 .. u^{T-1}`` is a function of the noisy messages alone
    (:meth:`JointTranscript.replay`), so raising on it is post-processing.

    Nothing is lost. joint_sgd has checked (public constants) that ``|z| <= M``, the loss
    derivative and every personal step stay far below the float64 maximum while ``u`` and
    ``x_j`` are finite (they are then in their balls): a step on ``x_j`` can produce a
    non-finite value only from a non-finite logit, that is from a non-finite ``u^t`` (the
    first such ``x_j`` was finite before), and ``u^t`` with ``t < T`` enters the average, which
    is then not finite either. So the personalised blocks are non-finite only if the released
    ``u`` is. (``u^T`` after the last step is not released and not checked.)
    """
    if not np.all(np.isfinite(model.shared)):
        raise FloatingPointError("joint_sgd produced non-finite shared parameters (the noise or "
                                 "the step overflowed float64): reduce step_size or sigma")


# -- the exact minimiser of J --------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, eq=False)
class JointReference:
    """A certified minimiser of :func:`joint_objective`: ``value - min J <= gap``."""

    model: JointModel
    value: float
    gap: float


def _frank_wolfe_gap(grad_u, grad_x, model, r_u, r_x):
    """``J(theta) - min J <= <g, theta> + sum_blocks R_b ||g_b||`` over the product of balls."""
    gap = float(np.sum(grad_u * model.shared)) + r_u * float(np.linalg.norm(grad_u))
    for j in range(grad_x.shape[0]):
        gap += float(np.sum(grad_x[j] * model.personal[j])) + r_x * float(
            np.linalg.norm(grad_x[j]))
    return gap


def _ball(a, radius):
    norm = float(np.linalg.norm(a))
    return a * (radius / norm) if norm > radius else a


def _fista(point, gradient, project, certificate, step, tol, max_iter, what):
    """Accelerated projected gradient (FISTA with adaptive restart, O'Donoghue & Candes 2015)
    on a tuple of arrays, until ``certificate(point)`` (a bound on the gap) is at most ``tol``.
    Returns ``(point, gap)``; RuntimeError if ``max_iter`` iterations do not reach ``tol``."""
    previous = point
    momentum, gap = 1.0, math.inf
    for it in range(max_iter):
        if it % 25 == 0:
            gap = certificate(point)
            if gap <= tol:
                return point, gap
        beta = (momentum - 1.0) / (momentum + 2.0)
        ahead = tuple(a + beta * (a - b) for a, b in zip(point, previous))
        grads = gradient(ahead)
        previous, point = point, project(tuple(a - step * g for a, g in zip(ahead, grads)))
        descent = sum(float(np.sum(g * (a - b))) for g, a, b in zip(grads, point, previous))
        momentum = 1.0 if descent > 0.0 else momentum + 1.0
    raise RuntimeError(f"{what} reached a gap of {gap:.3g} after {max_iter} iterations, above "
                       f"tol={tol:g}")


def joint_reference_minimizer(problem, owners, personal_columns="all", *, shared_radius=None,
                              personal_radius=None, tol=1e-8, max_iter=200_000):
    """Minimise :func:`joint_objective` over ``||u|| <= R_U``, ``||x_j|| <= R_X`` to a certified
    gap ``tol``, so that joint-DP fits' excess risk can be measured.

    Accelerated projected gradient at step ``1/beta_J``, ``beta_J = 2 beta + lambda`` (a
    record's features enter both blocks, at most doubling the curvature), stopped when the
    Frank-Wolfe gap over the product of balls is at most ``tol``. Needs a smooth loss (logistic,
    huber_hinge, squared, multinomial). RuntimeError if ``max_iter`` iterations do not certify
    ``tol``.
    """
    _check_owners(problem, owners)
    if not math.isfinite(problem.smoothness):
        raise ValueError(f"joint_reference_minimizer needs a smooth loss, got {problem.loss!r} "
                         "(use huber_hinge for hinge-type problems)")
    tol = check_real(tol, "tol", low=0.0)
    cols = _columns(problem, personal_columns)
    r_u, r_x = _radii(problem, shared_radius, personal_radius)
    _, shared_shape, personal_shape = _shapes(problem, cols.size, owners.m)

    def gradient(point):
        return _owner_gradients(problem, owners, JointModel(point[0], point[1], cols))

    def project(point):
        return _ball(point[0], r_u), np.stack([_ball(xj, r_x) for xj in point[1]])

    def certificate(point):
        model = JointModel(point[0], point[1], cols)
        return _frank_wolfe_gap(*gradient(point), model, r_u, r_x)

    (u, x), gap = _fista((np.zeros(shared_shape), np.zeros(personal_shape)), gradient, project,
                         certificate, 1.0 / (2.0 * problem.smoothness + problem.reg), tol,
                         max_iter, "joint_reference_minimizer")
    model = JointModel(u, x, cols)
    return JointReference(model, joint_objective(problem, owners, model), gap)


def joint_excess_risk(problem, owners, model, reference):
    """``J(model) - J(reference)``; values below ``-reference.gap`` would be a bug."""
    return joint_objective(problem, owners, model) - reference.value


# -- the paper's baselines -------------------------------------------------------------------------
def per_silo(problem, owners, *, tol=1e-8, max_iter=200_000):
    """Per-silo training: each owner minimises the Problem's objective on its own rows only,
    without noise or collaboration (nothing leaves the owner), to a certified gap ``tol``
    (accelerated projected gradient; Frank-Wolfe certificate over the ball, or
    ``||grad||^2 / (2 lambda)`` without one). Returns the owners' parameters, shape
    ``(N,) + problem.theta_shape``. Needs a smooth loss."""
    _check_owners(problem, owners)
    if not math.isfinite(problem.smoothness):
        raise ValueError(f"per_silo needs a smooth loss, got {problem.loss!r}")
    tol = check_real(tol, "tol", low=0.0)
    R = problem.radius
    models = []
    for owner in owners:
        local = owner.local_problem()

        def gradient(point, local=local):
            return (local.gradient(point[0]),)

        def project(point):
            return (point[0] if R is None else _ball(point[0], R),)

        def certificate(point, local=local):
            g = local.gradient(point[0])
            if R is None:
                return float(np.sum(g * g)) / (2.0 * problem.reg)
            return float(np.sum(g * point[0])) + R * float(np.linalg.norm(g))

        (theta,), _ = _fista((np.zeros(problem.theta_shape),), gradient, project, certificate,
                             1.0 / (problem.smoothness + problem.reg), tol, max_iter, "per_silo")
        models.append(theta)
    return np.stack(models)


def collaboration_without_dp(problem):
    """Collaboration without DP: one shared model trained on everyone's rows, no noise (the
    certified minimiser of the pooled objective)."""
    from .reference import reference_minimizer
    return reference_minimizer(problem).theta


def collaboration_full_dp(problem, owners, epsilon, delta, **options):
    """Collaboration with full DP: one shared model, noise on every parameter, record-level
    (epsilon, delta)-DP: :func:`joint_sgd` without a personalised block."""
    return joint_sgd(problem, owners, epsilon, delta, personal_columns=[], **options)
