r"""AdaSSP: sufficient-statistics perturbation with an adaptive ridge (Wang 2018, Alg. 2), for
the squared loss.

Three noisy releases of the sufficient statistics of least squares, then post-processing: the
smallest eigenvalue of ``X^T X`` (which sets the ridge), ``X^T X`` itself and ``X^T y``. Under
dpsolve's replace-one neighbours (docs/conventions.md) with ``||x|| <= B`` and ``|y| <= B_y``
their sensitivities are (docs/adassp.md derives each):

* ``lambda_min(X^T X)``: ``B^2`` (Weyl);
* ``X^T X``, released as its half-vectorisation with the off-diagonal entries weighted by
  ``sqrt(2)`` (an isometry for the Frobenius norm): L2 ``sqrt(2) B^2`` (``B^2`` when p = 1),
  L1 ``sqrt(p (p + 1)) B^2`` (``B^2`` when p = 1);
* ``X^T y``: L2 ``2 B B_y``, L1 ``2 sqrt(p) B B_y``.

Pure epsilon uses the L2 ones with the l2-norm (gamma-norm) mechanism for p >= 2 (Laplace with
the L1 ones for p = 1), and Gaussian (epsilon, delta) the L2 ones.
"""
import math

import dp_accounting
import numpy as np
from scipy import special

from .. import bounds
from .._ordered_linalg import one_blas_thread, rmatvec, weighted_gram
from .._projection import scale_onto_ball
from .._validation import Real
from ..privacy.accounting import epsilon_of, gaussian_event, pure_event
from ..privacy.calibration import _gaussian_unit_sigma, check_noise_scale, warn_large_delta
from ..privacy.mechanisms import gamma_norm_scale, laplace_scale
from ..privacy.samplers import gamma_norm_noise, gaussian_noise, laplace_noise
# the tail bounds on the matrix noise, public here before they moved to privacy.tail_bounds
from ..privacy.tail_bounds import gamma_norm_moments as _gamma_norm_moments
from ..privacy.tail_bounds import gamma_norm_tail, gaussian_tail, laplace_tail
from ..privacy.tail_bounds import tail_moments as _tail_moments
from ._hooks import Hooks
from ._registry import register
from ._accepts import Accepts
from ._lifecycle import Bound, Plan, Released, SolverSpec, lifecycle

SOURCE = ("Wang 2018, 'Revisiting differentially private linear regression: optimal and "
          "adaptive prediction & estimation in unbounded domain' (UAI), Algorithm 2 (AdaSSP), "
          "with replace-one sensitivities and exact Gaussian calibration")

#: Failure probability of the two tail bounds that set the ridge (Wang's rho).
DEFAULT_RHO = 0.05
#: Share of mu^2 (Gaussian) spent on lambda_min(X^T X): it only moves the ridge.
MIN_EIGENVALUE_SHARE = 0.05
#: The rest of mu^2 is split between X^T X and X^T y in proportion 1 : 2 (docs/adassp.md: the
#: error of the solve is ``||e - E theta*||`` and, for ``B ||theta*|| ~ B_y``, the shares that
#: minimise it are proportional to ``Delta_A ||theta*|| : Delta_b``, i.e. 1 : 2).
MATRIX_SHARE = (1.0 - MIN_EIGENVALUE_SHARE) / 3.0
VECTOR_SHARE = 2.0 * (1.0 - MIN_EIGENVALUE_SHARE) / 3.0

#: Pure epsilon with the gamma-norm mechanism: the extra ridge aims at this fraction of the tail
#: bound t (``lambda = max(0, PURE_RIDGE_FACTOR t - n reg - lambda_tilde)``). t is a sound
#: ``1 - rho`` bound but about twice the typical ``-lambda_min(E)``, and the ridge's bias cost
#: more R^2 than the variance it removed: measured in docs/adassp.md (post-processing only).
PURE_RIDGE_FACTOR = 0.5

PARAMETERS = {
    "rho": Real(0.0, 1.0),
}


@lifecycle
def adassp(problem, epsilon, delta=None, *, rho=DEFAULT_RHO, secure=False, rng=None,
           accountant=None):
    r"""Differentially private ridge regression by sufficient-statistics perturbation with an
    adaptive ridge (AdaSSP; Wang 2018, Alg. 2).

    Estimates the minimiser of the Problem's squared-loss objective
    ``F(theta) = (1/2n) ||X theta - y||^2 + (reg/2) ||theta||^2``, i.e. the solution of
    ``(X^T X + n reg I) theta = X^T y``, from noisy sufficient statistics:

    .. math::

        \hat\theta = (\Pi_+(X^\top X + E) + (n\,\mathrm{reg} + \lambda) I)^{+}\,(X^\top y + e),

    with E a symmetric noise matrix, e a noise vector, ``Pi_+`` the projection onto the PSD
    cone (eigenvalues clipped at 0) and ``^+`` the pseudo-inverse (the inverse whenever
    ``n reg + lambda > 0``). The extra ridge ``lambda = max(0, c t - n reg - lambda_tilde)``
    (c = 1 except for the gamma-norm mechanism, c = ``PURE_RIDGE_FACTOR``) makes, for c = 1,
    the noisy matrix positive definite with probability ``1 - 2 rho`` at least, where t bounds
    ``-lambda_min(E)`` with probability ``1 - rho`` (Tropp 2012) and ``lambda_tilde`` is a noisy
    lower bound on ``lambda_min(X^T X)`` (with probability ``1 - rho``). With a radius, theta is
    projected onto the ball (post-processing).

    Parameters
    ----------
    {{problem}}
        Loss ``"squared"`` only; dense or sparse (CSR) X.
    epsilon : float
        > 0.
    delta : float, optional
        None or 0: epsilon-DP: Laplace noise on ``lambda_min(X^T X)`` (5% of epsilon), and
        for p >= 2 the l2-norm (gamma-norm) mechanism, density ``exp(-eps_k ||v|| / Delta_2k)``,
        on the half-vectorised ``X^T X`` and on ``X^T y`` (:func:`pure_mechanism`; Laplace for
        p = 1), the rest of epsilon split by :func:`pure_matrix_share`; the extra ridge aims at
        ``PURE_RIDGE_FACTOR = 0.5`` times the tail bound
        (:func:`~dpsolve.privacy.tail_bounds.gamma_norm_tail`). In (0, 1/2):
        (epsilon, delta)-DP with Gaussian noise, calibrated exactly: the three releases compose
        to one Gaussian mechanism with ``mu^2 = sum_k (Delta_k / sigma_k)^2``, mu the analytic
        Gaussian mechanism's (Balle & Wang 2018), split 5% / 31.67% / 63.33% of ``mu^2``
        between ``lambda_min(X^T X)``, ``X^T X`` and ``X^T y``.
    rho : float, default 0.05
        In (0, 1): the failure probability of each tail bound that sets the ridge (Wang's rho).
    {{rng}}
    {{secure}}
    {{accountant}}

    Returns
    -------
    Fit
        ``theta`` the estimate; ``sigma`` the Gaussian standard deviation on ``X^T y`` (None
        for pure epsilon); ``noise`` every scale (``"gaussian_min_eigenvalue"``,
        ``"gaussian_matrix"``, ``"gaussian_vector"``, or the same ``"laplace_*"`` ones; for
        the matrix the diagonal's scale, the off-diagonal entries get it divided by
        ``sqrt(2)``; pure epsilon with p >= 2: ``"laplace_min_eigenvalue"``,
        ``"gamma_norm_matrix"`` and ``"gamma_norm_vector"``, the scales s of the densities
        ``exp(-||v|| / s)`` of the half-vector's and the vector's noise);
        ``settings`` the mechanism, sensitivities, shares, ``rho``, the tail bound ``t``
        (``ridge_threshold``), the fraction of it the ridge aims at (``ridge_factor``: 0.5 for
        the gamma-norm mechanism, else 1), the largest extra ridge (``max_extra_ridge``) and the user's
        ridge ``n reg`` (``user_ridge``). The ridge actually used depends on the data and is not
        released. ``dp_event``: a ``ComposedDpEvent`` of three ``GaussianDpEvent`` (noise
        multipliers ``sigma_k / Delta_k``), or for pure epsilon of a ``LaplaceDpEvent``
        (``b / B^2``) and two ``PureDpEvent(eps_k)`` (the l2-norm mechanism; three
        ``LaplaceDpEvent`` ``b_k / Delta_1k`` for p = 1).

    Notes
    -----
    Privacy (replace-one, docs/adassp.md): ``lambda_min`` moves by at most ``B^2`` (Weyl);
    ``||x x^T - x' x'^T||_F <= sqrt(2) B^2`` (equality for orthogonal rows of norm B), and the
    weighted half-vectorisation has that Frobenius norm; ``||x y - x' y'|| <= 2 B B_y``. Every
    later step is post-processing.

    Utility: :func:`adassp_bound` (in expectation, without a radius).

    Source: Wang 2018 (UAI), Algorithm 2; Wang's constants are for add/remove neighbours and the
    ``sqrt(log(6/delta))`` calibration, both replaced here.
    """


# -- sensitivities and the weighted half-vectorisation --------------------------------------------
def half_vector(M):
    """The upper triangle of a symmetric ``M`` (diagonal included), row by row, with the
    off-diagonal entries multiplied by ``sqrt(2)``: ``||half_vector(M)||_2 = ||M||_F``.

    Parameters
    ----------
    M : ndarray, shape (p, p)

    Returns
    -------
    ndarray, shape (p (p + 1) / 2,)
    """
    p = M.shape[0]
    rows, cols = np.triu_indices(p)
    return M[rows, cols] * np.where(rows == cols, 1.0, math.sqrt(2.0))


def from_half_vector(v, p):
    """The symmetric matrix whose :func:`half_vector` is ``v``.

    Parameters
    ----------
    v : ndarray, shape (p (p + 1) / 2,)
    p : int

    Returns
    -------
    ndarray, shape (p, p)
    """
    rows, cols = np.triu_indices(p)
    values = v / np.where(rows == cols, 1.0, math.sqrt(2.0))
    M = np.zeros((p, p))
    M[rows, cols] = values
    M[cols, rows] = values
    return M


def sensitivities(problem):
    """The replace-one sensitivities of the three releases, from B, B_y and p.

    Parameters
    ----------
    problem : Problem

    Returns
    -------
    dict
        ``min_eigenvalue`` (``B^2``, L1 = L2), ``matrix_l2`` (``sqrt(2) B^2``, ``B^2`` for
        p = 1), ``matrix_l1`` (``sqrt(p (p + 1)) B^2``, ``B^2`` for p = 1), ``vector_l2``
        (``2 B B_y``), ``vector_l1`` (``2 sqrt(p) B B_y``).
    """
    B, By, p = problem.row_norm, problem.label_bound, problem.p
    B2 = B * B
    return {
        "min_eigenvalue": B2,
        "matrix_l2": (math.sqrt(2.0) if p > 1 else 1.0) * B2,
        "matrix_l1": (math.sqrt(p * (p + 1.0)) if p > 1 else 1.0) * B2,
        "vector_l2": 2.0 * B * By,
        "vector_l1": 2.0 * math.sqrt(p) * B * By,
    }


# -- plan ----------------------------------------------------------------------------------------
def _resolve_delta(delta):
    """0 for None (pure epsilon-DP), else delta (checked: SPEC.accepts) as a float."""
    return 0.0 if delta is None else float(delta)


def _gaussian_noise(sens, p, epsilon, delta, rho):
    """The (epsilon, delta) side of :func:`plan`: Gaussian noise on the three releases.

    Returns
    -------
    shares, noise, settings : dict
        The budget shares, the noise scales and the mechanism's settings.
    event : DpEvent
        The three releases composed.
    t, factor : float
        The tail bound on ``-lambda_min`` of the matrix noise and the ridge factor (1).
    """
    sigma_1 = _gaussian_unit_sigma("adassp", epsilon, delta)     # 1 / mu
    shares = {"min_eigenvalue": MIN_EIGENVALUE_SHARE, "matrix": MATRIX_SHARE,
              "vector": VECTOR_SHARE}
    sens_l2 = {"min_eigenvalue": sens["min_eigenvalue"], "matrix": sens["matrix_l2"],
               "vector": sens["vector_l2"]}
    factor = 1.0
    for _ in range(60):         # the private side of the rounding of sum(shares) = 1
        sigmas = {k: check_noise_scale("adassp", factor * sens_l2[k] * sigma_1
                                       / math.sqrt(shares[k]), epsilon)
                  for k in shares}
        event = dp_accounting.ComposedDpEvent(
            [gaussian_event(sigmas[k], sens_l2[k]) for k in shares])
        if epsilon_of(event, delta, "pld") <= epsilon:
            break
        factor *= 1.0 + 1e-12 * 2.0 ** _
    t, factor = gaussian_tail(sigmas["matrix"], p, rho), 1.0
    shift = sigmas["min_eigenvalue"] * float(special.ndtri(1.0 - rho))
    noise = {"gaussian_min_eigenvalue": sigmas["min_eigenvalue"],
             "gaussian_matrix": sigmas["matrix"], "gaussian_vector": sigmas["vector"]}
    settings = {"mechanism": "gaussian", "min_eigenvalue_shift": shift}
    return shares, noise, settings, event, t, factor


def _pure_noise(sens, p, epsilon, rho):
    """The pure-epsilon side of :func:`plan`: Laplace noise on ``lambda_min`` and, on the
    matrix and the vector, Laplace (p = 1) or l2-norm noise (:func:`pure_mechanism`).

    Returns the same six values as :func:`_gaussian_noise` (the ridge factor
    ``PURE_RIDGE_FACTOR`` under the l2-norm mechanism).
    """
    mechanism, factor = pure_mechanism(p), 1.0
    rest = 1.0 - MIN_EIGENVALUE_SHARE
    share = pure_matrix_share(p, mechanism)
    shares = {"min_eigenvalue": MIN_EIGENVALUE_SHARE, "matrix": rest * share,
              "vector": rest * (1.0 - share)}
    eps = {k: shares[k] * epsilon for k in shares}
    b_min = check_noise_scale("adassp", laplace_scale(sens["min_eigenvalue"],
                                                      eps["min_eigenvalue"]), epsilon)
    noise = {"laplace_min_eigenvalue": b_min}
    events = [dp_accounting.LaplaceDpEvent(b_min / sens["min_eigenvalue"])]
    if mechanism == "laplace":
        for k in ("matrix", "vector"):
            noise[f"laplace_{k}"] = check_noise_scale(
                "adassp", laplace_scale(sens[f"{k}_l1"], eps[k]), epsilon)
            events.append(dp_accounting.LaplaceDpEvent(noise[f"laplace_{k}"]
                                                       / sens[f"{k}_l1"]))
        t = laplace_tail(noise["laplace_matrix"], p, rho)
    else:
        # the l2-norm (gamma-norm) mechanism: eps_k-DP for L2 sensitivity Delta_2k
        for k in ("matrix", "vector"):
            noise[f"gamma_norm_{k}"] = check_noise_scale(
                "adassp", gamma_norm_scale(sens[f"{k}_l2"], eps[k]), epsilon)
            events.append(pure_event(eps[k]))
        t = gamma_norm_tail(noise["gamma_norm_matrix"], p, rho)
        factor = PURE_RIDGE_FACTOR
    event = dp_accounting.ComposedDpEvent(events)
    # P(Laplace(b) > s) = exp(-s / b) / 2 = rho
    shift = b_min * math.log(1.0 / (2.0 * rho)) if rho < 0.5 else 0.0
    settings = {"mechanism": mechanism, "min_eigenvalue_shift": shift}
    return shares, noise, settings, event, t, factor


def plan(problem, partition, target, options):
    """Noise, shares, tail bound and the largest extra ridge, from public constants only."""
    epsilon, delta, rho = target.epsilon, target.delta, options["rho"]
    epsilon, delta = float(epsilon), _resolve_delta(delta)     # checked (SPEC.accepts)
    n, p = problem.n, problem.p
    sens = sensitivities(problem)
    user_ridge = n * problem.reg
    if delta > 0.0:
        warn_large_delta(delta, n, stacklevel=5)
        shares, noise, settings, event, t, factor = _gaussian_noise(sens, p, epsilon, delta,
                                                                    rho)
        method, sigma = "pld", noise["gaussian_vector"]
    else:
        shares, noise, settings, event, t, factor = _pure_noise(sens, p, epsilon, rho)
        method, sigma = "basic", None
    max_extra = max(0.0, factor * t - user_ridge)
    # flat scalars, as every Fit's settings (the side-door checks read them so)
    settings.update({f"share_{k}": v for k, v in shares.items()})
    settings.update({f"sensitivity_{k}": v for k, v in sens.items()})
    settings.update({"rho": rho, "ridge_threshold": t, "ridge_factor": factor,
                     "max_extra_ridge": max_extra, "user_ridge": user_ridge,
                     "project": problem.radius is not None})
    return Plan(epsilon=epsilon, delta=delta, method=method, event=event, sigma=sigma,
                noise=noise, settings=settings)


def pure_mechanism(p):
    """The pure-epsilon noise on ``X^T X`` and ``X^T y``, a public rule in p:
    ``"gamma_norm"`` (the l2-norm mechanism) for p >= 2, ``"laplace"`` for p = 1, where the two
    are the same distribution on X^T X (q = 1) and the Laplace tail bound is exact.

    Parameters
    ----------
    p : int

    Returns
    -------
    str
    """
    return "laplace" if p == 1 else "gamma_norm"


def pure_matrix_share(p, mechanism="laplace"):
    """Share of the epsilon left after ``lambda_min`` spent on ``X^T X`` under pure DP,
    ``w / (1 + w)``: the split of a fixed epsilon between the matrix and the vector that
    minimises the first-order error ``E||e - E theta||^2`` at ``B ||theta|| = B_y``
    (docs/adassp.md), ``a / eps_A^2 + c / eps_b^2`` minimised at ``eps_A : eps_b = a^(1/3) :
    c^(1/3)``. Laplace: ``w = ((p + 1) / (2 sqrt(p)))^(2/3)``. Gamma-norm
    (``E||E theta||^2 = ||theta||^2 s_A^2 (q + 1)(p + 1) / 2``, ``E||e||^2 = p (p + 1) s_b^2``):
    ``w = ((q + 1) / (4 p))^(1/3)``.

    Parameters
    ----------
    p : int
    mechanism : {"laplace", "gamma_norm"}

    Returns
    -------
    float
    """
    if mechanism == "gamma_norm":
        q = p * (p + 1) / 2.0
        w = ((q + 1.0) / (4.0 * p)) ** (1.0 / 3.0)
    else:
        w = ((p + 1.0) / (2.0 * math.sqrt(p))) ** (2.0 / 3.0)
    return w / (1.0 + w)


# -- run -----------------------------------------------------------------------------------------
def _symmetric(H):
    upper = np.triu(H)
    return upper + np.triu(H, 1).T


def run(problem, partition, plan, rng):
    """The statistics, the noise (in the order lambda_min, X^T X, X^T y) and the solve."""
    X, y, p = problem.X, problem.y, problem.p
    settings, noise = plan.settings, plan.noise
    H = _symmetric(weighted_gram(X, np.ones(problem.n)))
    b = rmatvec(X, np.ascontiguousarray(y, dtype=np.float64))
    q = p * (p + 1) // 2
    with one_blas_thread():
        mechanism = settings["mechanism"]
        if mechanism == "gaussian":
            first, draw, prefix = gaussian_noise, gaussian_noise, "gaussian_"
        else:
            first = laplace_noise
            draw, prefix = ((laplace_noise, "laplace_") if mechanism == "laplace"
                            else (gamma_norm_noise, "gamma_norm_"))
        lam_min = float(np.linalg.eigvalsh(H)[0])
        z = first(noise[("gaussian_" if mechanism == "gaussian" else "laplace_")
                        + "min_eigenvalue"], 1, rng=rng)[0]
        lam_tilde = max(lam_min + z - settings["min_eigenvalue_shift"], 0.0)
        E = from_half_vector(draw(noise[prefix + "matrix"], q, rng=rng), p)
        e = draw(noise[prefix + "vector"], p, rng=rng)
        extra = max(0.0, settings["ridge_factor"] * settings["ridge_threshold"]
                    - settings["user_ridge"] - lam_tilde)
        theta = _ridge_solve(H + E, b + e, settings["user_ridge"] + extra)
    if settings["project"]:
        scale_onto_ball(theta, problem.radius)
    return Released(theta=theta)


def _ridge_solve(A, b, ridge):
    """``(Pi_+(A) + ridge I)^+ b`` by one symmetric eigendecomposition: eigenvalues clipped at
    0, the ridge added, zero ones left out (the pseudo-inverse)."""
    values, vectors = np.linalg.eigh(_symmetric(A))
    d = np.maximum(values, 0.0) + ridge
    coef = vectors.T @ b
    inv = np.divide(1.0, d, out=np.zeros_like(d), where=d > 0.0)
    return vectors @ (coef * inv)


# -- bound ---------------------------------------------------------------------------------------
def adassp_bound(problem, *, mechanism, matrix_scale, vector_scale, max_extra_ridge):
    r"""Excess-risk bound of :func:`adassp` in expectation, mean form, for a Problem without a
    radius (``reg > 0``).

    With ``K = X^T X + n reg I``, ``M = Pi_+(X^T X + E) + (n reg + lambda) I`` and
    ``r = e - (Pi_+(X^T X + E) - X^T X + lambda I) theta*``, the released ``theta = M^{-1}
    (X^T y + e)`` has ``theta - theta* = M^{-1} r`` and (the objective is quadratic)
    ``F(theta) - F(theta*) = (theta - theta*)^T K (theta - theta*) / (2n)``. Since
    ``||Pi_+(X^T X + E) - X^T X|| <= 2 ||E||``, ``K <= M + 2 ||E|| I`` and ``M >= n reg I``:

    .. math::

        F(\hat\theta) - F(\theta^*) \le \frac{\|r\|^2}{2n}\Big(\frac{1}{n\,\mathrm{reg}}
        + \frac{2\|E\|}{(n\,\mathrm{reg})^2}\Big), \qquad
        \|r\| \le \|e\| + (2\|E\| + \lambda_{\max}) R,

    with R the minimiser's norm bound (:func:`dpsolve.bounds.minimizer_norm_bound`,
    ``B_y / sqrt(reg)``) and ``lambda_max`` the largest extra ridge. The expectation is taken
    with e independent of E, ``E||e||^2 = p sigma_b^2`` (Laplace: ``2 p b^2``) and the moments
    of ``||E||`` bounded by integrating the two-sided matrix tail bounds (Tropp 2012: Gaussian
    ``2p exp(-t^2 / (sigma^2 (p + 1)))``, Laplace ``2p exp(-t^2 / (2 b^2 (p + 1) + 2 b t))``).

    Parameters
    ----------
    problem : Problem
        Squared loss, no radius, ``reg > 0``.
    mechanism : {"gaussian", "laplace", "gamma_norm"}
    matrix_scale, vector_scale : float
        The standard deviations (Gaussian) or Laplace scales of the diagonal of E and of e, or
        the gamma-norm scales of the half-vector of E and of e.
    max_extra_ridge : float
        ``lambda_max``, the largest extra ridge the solver adds.

    Returns
    -------
    float
        The bound on ``E F(theta) - F(theta*)``.
    """
    n, p = problem.n, problem.p
    R = bounds.minimizer_norm_bound(problem)
    Lam = n * problem.reg
    if mechanism == "gaussian":
        v = (p + 1.0) / 2.0
        m1, m2, m3 = _tail_moments(lambda s: 2.0 * p * math.exp(-s * s / (2.0 * v)),
                                   matrix_scale)
        EY2 = p * vector_scale ** 2
    elif mechanism == "laplace":
        v = p + 1.0
        m1, m2, m3 = _tail_moments(lambda s: 2.0 * p * math.exp(-s * s / (2.0 * (v + s))),
                                   matrix_scale)
        EY2 = 2.0 * p * vector_scale ** 2
    else:
        m1, m2, m3 = _gamma_norm_moments(p, matrix_scale)
        EY2 = p * (p + 1.0) * vector_scale ** 2       # E R^2 for R ~ Gamma(p, s)
    EY = math.sqrt(EY2)
    a, c = 2.0 * R, max_extra_ridge * R
    alpha, beta = 1.0 / Lam, 2.0 / Lam ** 2
    total = (EY2 * (alpha + beta * m1)
             + 2.0 * EY * (a * (alpha * m1 + beta * m2) + c * (alpha + beta * m1))
             + a * a * (alpha * m2 + beta * m3) + 2.0 * a * c * (alpha * m1 + beta * m2)
             + c * c * (alpha + beta * m1))
    return total / (2.0 * n)


def bound(problem, partition, plan):
    """:func:`adassp_bound` at the fit's noise, for a Problem without a radius; None with a
    radius (theta is then projected, and the constrained minimiser is not the ridge
    solution the bound compares with)."""
    if problem.radius is not None or problem.reg <= 0.0:
        return None
    settings, noise = plan.settings, plan.noise
    prefix = {"gaussian": "gaussian_", "laplace": "laplace_",
              "gamma_norm": "gamma_norm_"}[settings["mechanism"]]
    scales = noise[prefix + "matrix"], noise[prefix + "vector"]
    return Bound(adassp_bound(problem, mechanism=settings["mechanism"], matrix_scale=scales[0],
                              vector_scale=scales[1],
                              max_extra_ridge=settings["max_extra_ridge"]),
                 "AdaSSP perturbation bound in expectation (docs/adassp.md; Tropp 2012)")


def prediction_reg(problem, epsilon, delta=None):
    """The ridge for prediction (:mod:`dpsolve.tuning`): ``1/n``, scikit-learn's, as AdaSSP
    adds the ridge its noise needs by itself (Wang 2018).

    Parameters
    ----------
    problem : Problem
        Only n is read.
    epsilon, delta : float
        Unused.

    Returns
    -------
    float
    """
    bounds.require_constraint(problem, "l2", "adassp's prediction_reg")
    return 1.0 / problem.n


SPEC = register(SolverSpec(
    accepts=Accepts(delta="optional", delta_range=Real(0.0, 1.0, low_inclusive=True)),
    name="adassp", function=adassp, works=("Wang 2018",), source=SOURCE,
    needs=("sufficient_statistics",),    # it releases noisy X^T X and X^T y, not gradients
    partition=None, neighbours="replace-one record", guarantee="dp",
    parameters=PARAMETERS, plan=plan, run=run, bound=bound, page="adassp.md",
    nonfinite_hint="the noise scale overflowed: use a larger epsilon",
    example={"epsilon": 1.0, "delta": 1e-6}, example_problem={"radius": None, "reg": 0.1},
    sparse=True, hooks=Hooks(prediction_reg=prediction_reg)))
