"""Learning across data owners with joint differential privacy (Huang et al. 2023): the model
with shared and personalised parameters, its objective and exact minimiser, the paper's two
baselines without noise, and the helpers the solver shares. The noisy SGD itself is
:func:`dpsolve.joint_sgd` (in :mod:`dpsolve.solvers.joint_sgd`, a layer above this module), with
the third baseline, :func:`~dpsolve.solvers.joint_sgd.collaboration_full_dp`, which runs it.

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

import numpy as np

from ._kernels import losses as _losses
from ._moved import moved_names
from ._numerics import certified_minimum
from ._projection import scale_onto_ball
from ._validation import check_choice, check_real
from .losses import LOSSES as _LOSS_CLASSES
from .parties import check_parties
from .problem import Problem, _append_intercept_column

#: The joint model takes a loss its kernel evaluates (the margin losses' switch, the softmax):
#: the built-in ones (a loss's ``"compiled"`` property decides; kept as a name).
LOSSES = tuple(name for name, cls in _LOSS_CLASSES.items() if cls().compiled)


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
        """``X @ u + X[:, P] @ x_owner`` for rows X of one owner: shape (n,) or (n, K).

        X is in the Problem's layout (the columns of ``problem.X``, with the intercept column
        when the Problem fits one)."""
        X = np.asarray(X, dtype=float)
        return X @ self.shared + X[:, self.personal_columns] @ self.personal[owner]

    def predict(self, X, owner, problem):
        """Predicted labels (in the Problem's original label values) for rows of one owner.

        X is in the Problem's layout, or, for a Problem with ``fit_intercept``, the user's
        features alone (``problem.n_features`` columns), to which the intercept column is
        appended."""
        X = np.asarray(X, dtype=float)
        if problem.fit_intercept and X.ndim == 2 and X.shape[1] == problem.n_features:
            X = _append_intercept_column(X, problem.intercept_scale)
        z = self.logits(X, owner)
        classes = np.asarray(problem.classes)
        if z.ndim == 2:
            return classes[np.argmax(z, axis=1)]
        return np.where(z >= 0.0, classes[1], classes[0])


def check_personal_columns(problem, personal_columns):
    """The personalised columns P of a joint model, checked against the Problem.

    Parameters
    ----------
    problem : Problem
        The pooled problem; the columns index ``problem.X`` (``problem.p`` columns, with the
        intercept column when the Problem fits one).
    personal_columns : "all" or sequence of int
        ``"all"`` (every column), or distinct column indices in ``[0, problem.p)`` (an empty
        sequence: no personalised block).

    Returns
    -------
    ndarray of intp, shape (k,)
        The columns, sorted. TypeError if they are not ``"all"`` or a 1-D sequence of integers,
        ValueError if one is out of range or repeated.
    """
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


def joint_radii(problem, shared_radius, personal_radius):
    """The radii ``R_U`` and ``R_X`` of the shared and personalised balls.

    Parameters
    ----------
    problem : Problem
        The pooled problem; its ``radius`` is the default of both.
    shared_radius, personal_radius : float or None
        ``R_U`` and ``R_X``, >= 0, or None for ``problem.radius``.

    Returns
    -------
    tuple of float
        ``(R_U, R_X)``. ValueError if either is unbounded (None, with a Problem without a
        radius).
    """
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
FINITE_LIMIT = 1e300


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
    :func:`~dpsolve.joint_sgd`). Public constants only: ``B = row_norm``, ``B_y = label_bound``.

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

    Parameters
    ----------
    problem : Problem
        Loss, row bound B and label bound B_y.
    personal_columns : "all" or sequence of int
        The personalised columns P (an empty sequence: no personalised block).
    shared_radius, personal_radius : float, optional
        ``R_U`` and ``R_X`` (defaults: ``problem.radius``).

    Returns
    -------
    JointGradientBound
        ``shared`` (L_u), ``personal`` (L_x, 0 without a personalised block) and ``margin``
        (M). ValueError if a bound is not finite (or is so large that the solver's arithmetic
        could overflow).
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    if not problem.loss_object.compiled:
        raise ValueError(f"the joint model does not support loss={problem.loss!r}")
    cols = check_personal_columns(problem, personal_columns)
    r_u, r_x = joint_radii(problem, shared_radius, personal_radius)
    B = problem.row_norm
    margin = B * (r_u + r_x) if cols.size else B * r_u
    # the largest loss derivative over logits of norm <= margin, times B: the loss's Lipschitz
    # constant for rows of norm B and a "radius" margin / B (squared: B (margin + B_y))
    loss = problem.loss_object
    shared = (B * (margin + problem.label_bound) if not math.isfinite(loss.derivative_bound)
              else loss.derivative_bound * B)
    if not (margin < FINITE_LIMIT and shared < FINITE_LIMIT):
        raise ValueError(f"the joint model's margin bound {margin:g} or gradient bound "
                         f"{shared:g} is not finite in float64: reduce shared_radius, "
                         "personal_radius, row_norm or label_bound")
    return JointGradientBound(shared=shared, personal=shared if cols.size else 0.0,
                              margin=margin)


def _check_owners(problem, owners):
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    check_parties(problem, owners, "owners")
    if not problem.loss_object.compiled:
        raise ValueError(f"joint_sgd does not support loss={problem.loss!r}")


def joint_shapes(problem, k, N):
    """Shapes of a joint model's parameters.

    Parameters
    ----------
    problem : Problem
        The pooled problem (its loss and number of classes).
    k : int
        Number of personalised columns.
    N : int
        Number of owners.

    Returns
    -------
    K : int
        Number of outputs per logit: ``problem.n_classes`` for the multinomial loss, else 1.
    shared : tuple of int
        Shape of ``u``: ``problem.theta_shape``, ``(p,)`` or ``(p, K)``.
    personal : tuple of int
        Shape of the stacked ``x_j``: ``(N, k)``, or ``(N, k, K)`` for K classes.
    """
    K = problem.loss_object.n_outputs
    shared = problem.theta_shape
    personal = (N, k, K) if K > 1 else (N, k)
    return K, shared, personal


def joint_objective(problem, owners, model):
    """``J(x, u)`` of the module docstring for a :class:`JointModel`.

    Parameters
    ----------
    problem : Problem
        The pooled problem (loss, constraint, regulariser, public bounds).
    owners : Parties
        The data owners, a partition of ``problem``'s rows.
    model : JointModel
        Shared and personalised parameters.

    Returns
    -------
    float
        The joint objective: each owner's mean loss plus its personal ridge term, averaged over
        owners, plus the shared ridge term.
    """
    _check_owners(problem, owners)
    lam = problem.reg
    total = 0.0
    for j, owner in enumerate(owners):
        z = model.logits(owner.X, j)
        total += _mean_loss(problem, z, owner.y) + 0.5 * lam * float(np.sum(model.personal[j] ** 2))
    return total / owners.m + 0.5 * lam * float(np.sum(model.shared ** 2))


def loss_at_logits(problem, z, y, derivative=False):
    """The Problem's loss, or its derivative in the logits, at given logits, by the kernels.

    Parameters
    ----------
    problem : Problem
        Its ``loss_object`` is evaluated.
    z : array_like, shape (n,) or (n, K)
        Logits (K columns for the multinomial loss).
    y : array_like, shape (n,)
        Labels in the Problem's coding (class indices for the multinomial loss).
    derivative : bool, default False
        Return the derivative in the logits instead of the loss.

    Returns
    -------
    ndarray, shape (n,), or (n, K) for the multinomial derivative
        Per-record losses, or their derivatives in the logits.
    """
    if problem.loss_object.is_multinomial:
        labels = np.ascontiguousarray(y, dtype=np.intp)
        z = np.ascontiguousarray(z, dtype=float)
        return (_losses.multinomial_derivatives(z, labels) if derivative
                else _losses.multinomial_values(z, labels))
    f = _losses.loss_derivatives if derivative else _losses.loss_values
    return f(problem.loss_object.kernel_id, np.ascontiguousarray(z, dtype=float),
             np.ascontiguousarray(y, dtype=float), problem.loss_object.kernel_param)


def _mean_loss(problem, z, y):
    return float(np.mean(loss_at_logits(problem, z, y)))


def _owner_gradients(problem, owners, model):
    """Gradient of J: (grad_u, grad_x) with grad_x of shape ``model.personal.shape``."""
    lam = problem.reg
    grad_u = lam * np.array(model.shared, dtype=float)
    grad_x = np.empty(model.personal.shape)
    cols = model.personal_columns
    for j, owner in enumerate(owners):
        # an owner's rows in float64 (float32 is storage only; a product of the float32
        # transpose with d would not take BLAS's float64 order)
        X = np.asarray(owner.X, dtype=np.float64)
        z = model.logits(X, j)
        d = loss_at_logits(problem, z, owner.y, derivative=True) / (owner.n * owners.m)
        grad_u += X.T @ d
        grad_x[j] = X[:, cols].T @ d + (lam / owners.m) * model.personal[j]
    return grad_u, grad_x


# -- the exact minimiser of J --------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, eq=False)
class JointReference:
    """A certified minimiser of :func:`joint_objective`: ``value - min J <= gap``.

    Attributes
    ----------
    model : JointModel
        The minimiser's shared and personalised parameters.
    value : float
        ``J(model)``.
    gap : float
        Certified bound on ``value - min J`` (a Frank-Wolfe gap).
    """

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


def joint_reference_minimizer(problem, owners, personal_columns="all", *, shared_radius=None,
                              personal_radius=None, tol=1e-8, max_iter=200_000):
    """Minimise :func:`joint_objective` over ``||u|| <= R_U``, ``||x_j|| <= R_X`` to a certified
    gap ``tol``, so that joint-DP fits' excess risk can be measured.

    Accelerated projected gradient at step ``1/beta_J``, ``beta_J = 2 beta + lambda`` (a
    record's features enter both blocks, at most doubling the curvature), stopped when the
    Frank-Wolfe gap over the product of balls is at most ``tol``. Needs a smooth loss (logistic,
    huber_hinge, squared, multinomial). RuntimeError if ``max_iter`` iterations do not certify
    ``tol``.

    Parameters
    ----------
    problem : Problem
        The pooled problem (loss, constraint, regulariser, public bounds).
    owners : Parties
        The data owners, a partition of ``problem``'s rows.
    personal_columns : "all" or sequence of int
        The personalised columns P (as in :func:`~dpsolve.joint_sgd`).
    shared_radius, personal_radius : float, optional
        ``R_U`` and ``R_X`` (defaults: ``problem.radius``).
    tol : float, default 1e-8
        Certified gap, > 0.
    max_iter : int, default 200000
        Iterations before RuntimeError.

    Returns
    -------
    JointReference
        The minimiser, ``J`` at it, and the certified gap.
    """
    _check_owners(problem, owners)
    if not math.isfinite(problem.smoothness):
        raise ValueError(f"joint_reference_minimizer needs a smooth loss, got {problem.loss!r} "
                         "(use huber_hinge for hinge-type problems)")
    tol = check_real(tol, "tol", low=0.0)
    cols = check_personal_columns(problem, personal_columns)
    r_u, r_x = joint_radii(problem, shared_radius, personal_radius)
    _, shared_shape, personal_shape = joint_shapes(problem, cols.size, owners.m)

    def gradient(point):
        return _owner_gradients(problem, owners, JointModel(point[0], point[1], cols))

    def project(point):
        for xj in point[1]:                     # each owner's block onto its own ball
            scale_onto_ball(xj, r_x)
        return scale_onto_ball(point[0], r_u), point[1]

    def certificate(point):
        model = JointModel(point[0], point[1], cols)
        return _frank_wolfe_gap(*gradient(point), model, r_u, r_x)

    (u, x), gap = certified_minimum((np.zeros(shared_shape), np.zeros(personal_shape)),
                                    gradient, project, certificate,
                                    1.0 / (2.0 * problem.smoothness + problem.reg), tol,
                                    max_iter, "joint_reference_minimizer")
    model = JointModel(u, x, cols)
    return JointReference(model, joint_objective(problem, owners, model), gap)


def joint_excess_risk(problem, owners, model, reference):
    """``J(model) - J(reference)``; values below ``-reference.gap`` would be a bug.

    Parameters
    ----------
    problem : Problem
        The pooled problem (loss, constraint, regulariser, public bounds).
    owners : Parties
        The data owners, a partition of ``problem``'s rows.
    model : JointModel
        The parameters to evaluate (e.g. ``Fit.model`` of :func:`~dpsolve.joint_sgd`).
    reference : JointReference
        From :func:`joint_reference_minimizer`.

    Returns
    -------
    float
        The excess joint objective; the true one lies in
        ``[value, value + reference.gap]``.
    """
    return joint_objective(problem, owners, model) - reference.value


# -- the paper's baselines -------------------------------------------------------------------------
def per_silo(problem, owners, *, tol=1e-8, max_iter=200_000):
    """Per-silo training: each owner minimises the Problem's objective on its own rows only,
    without noise or collaboration (nothing leaves the owner), to a certified gap ``tol``
    (accelerated projected gradient; Frank-Wolfe certificate over the ball, or
    ``||grad||^2 / (2 lambda)`` without one). Returns the owners' parameters, shape
    ``(N,) + problem.theta_shape``. Needs a smooth loss.

    Parameters
    ----------
    problem : Problem
        The pooled problem (loss, constraint, regulariser, public bounds).
    owners : Parties
        The data owners, a partition of ``problem``'s rows.
    tol : float, default 1e-8
        Certified gap of each owner's solve, > 0.
    max_iter : int, default 200000
        Iterations per owner before RuntimeError.

    Returns
    -------
    ndarray, shape ``(N,) + problem.theta_shape``
        Owner j's minimiser in row j.
    """
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
            return (point[0] if R is None else scale_onto_ball(point[0], R),)

        def certificate(point, local=local):
            g = local.gradient(point[0])
            if R is None:
                return float(np.sum(g * g)) / (2.0 * problem.reg)
            return float(np.sum(g * point[0])) + R * float(np.linalg.norm(g))

        (theta,), _ = certified_minimum((np.zeros(problem.theta_shape),), gradient, project,
                                        certificate, 1.0 / (problem.smoothness + problem.reg),
                                        tol, max_iter, "per_silo")
        models.append(theta)
    return np.stack(models)


def collaboration_without_dp(problem):
    """Collaboration without DP: one shared model trained on everyone's rows, no noise (the
    certified minimiser of the pooled objective).

    Parameters
    ----------
    problem : Problem
        The pooled problem.

    Returns
    -------
    ndarray
        :func:`dpsolve.reference_minimizer`'s theta, of shape ``problem.theta_shape``.
    """
    from .reference import reference_minimizer
    return reference_minimizer(problem).theta


# Joint SGD's bound (Huang et al. 2023, Theorem 3.1) moved to its solver's module, beside the
# spec's ``bound``, and stays here under its name, the same object.
__getattr__, __dir__ = moved_names(__name__, {"joint_sgd_bound": "dpsolve.solvers.joint_sgd"})
