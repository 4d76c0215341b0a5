"""dpsolve.reference: certified reference minimisers (docs/reference_minimizer.md).

The certificate must be a true upper bound on F(theta) - F(theta*), small at the reference
solution, and unaffected by what is on disk. Every problem is seeded; every cache lives in
tmp_path.
"""
import math

import numpy as np
import pytest
from scipy import optimize, special

import dpsolve.reference as reference_module
from dpsolve import Problem
from dpsolve.reference import (ReferenceSolution, certificate, excess_risk,
                               reference_minimizer)
from dpsolve.reference._newton import project

LOSSES = ("logistic", "hinge", "squared", "huber_hinge")
# (radius, reg): ball active without regularisation, ball inactive, ball active with
# regularisation, no constraint.
SETTINGS = [(0.5, 0.0), (100.0, 0.0), (0.5, 0.05), (None, 0.01)]
SETTING_IDS = ["active", "inactive", "active-reg", "unconstrained"]
# loss x setting; the fast tier runs the diagonal (every loss once, every setting once) and the
# rest is marked slow (run it with -m "slow or not slow")
GRID = [pytest.param(loss, radius, reg, id=f"{loss}-{setting}",
                     marks=() if i == j else pytest.mark.slow)
        for i, loss in enumerate(LOSSES)
        for j, ((radius, reg), setting) in enumerate(zip(SETTINGS, SETTING_IDS))]


def make_problem(loss, n=300, p=5, radius=1.0, reg=0.0, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    X /= np.linalg.norm(X, axis=1).max()
    z = 3.0 * X @ rng.standard_normal(p)
    if loss == "squared":
        y = np.clip(z / 3.0 + 0.1 * rng.standard_normal(n), -1.0, 1.0)
    else:   # noisy labels: not separable, so the unregularised minimiser is interior
        y = np.where(z + rng.standard_normal(n) > 0, 1, -1)
    return Problem(X.astype(dtype), y, loss, radius=radius, reg=reg)


def random_points_in_ball(P, rng, k, scale):
    R = P.radius if P.radius is not None else 20.0
    pts = rng.standard_normal((k, P.p)) * scale
    norms = np.linalg.norm(pts, axis=1, keepdims=True)
    return np.where(norms > R, pts * (R / norms) * (1 - 1e-12), pts)


def dual_value(P, alpha):
    """Independent evaluation of D(alpha) (textbook formulas, no floating-point care)."""
    lam, R = P.reg, P.radius
    if P.loss == "squared":
        conj = alpha ** 2 / 2 - alpha * P.y
    else:
        b = alpha * P.y
        conj = {"hinge": -b, "huber_hinge": -b - P.huber_width * b * (1 - b),
                "logistic": special.xlogy(b, b) + special.xlogy(1 - b, 1 - b)}[P.loss]
    v = P.X.T @ alpha / P.n
    nv = np.linalg.norm(v)
    if R is None:
        hstar = nv ** 2 / (2 * lam)
    elif nv <= lam * R:
        hstar = nv ** 2 / (2 * lam)
    else:
        hstar = R * nv - lam * R ** 2 / 2
    return -np.mean(conj) - hstar


# -- the certificate is a true upper bound -----------------------------------------------------
@pytest.mark.parametrize("loss,radius,reg", GRID)
def test_gap_bounds_distance_to_a_tighter_solution(loss, radius, reg, tmp_path):
    P = make_problem(loss, radius=radius, reg=reg, seed=1)
    ref = reference_minimizer(P, tol=1e-6, cache=tmp_path)
    # F(theta_hat) - F(theta*) <= gap, and F(theta*) <= F(theta) for every feasible theta:
    # compare with a tighter solve and with an independent plain cvxpy solve.
    others = [independent_solve(P)]
    if loss != "hinge":     # (hinge has no polishing: the cone solver's answer is final)
        tight = reference_minimizer(P, tol=1e-11, cache=False)
        assert tight.gap <= 1e-11
        assert tight.value - ref.value <= tight.gap
        others.append(tight.theta)
    for theta in others:
        assert ref.value - P.objective(theta) <= ref.gap
    assert 0.0 <= ref.gap <= 1e-6


def independent_solve(P):
    """Plain cvxpy (Clarabel defaults, cp.pos for the hinge), projected onto C. huber_hinge is
    written with cvxpy's Huber function, not as the module's infimal convolution: with
    w = 1 + h - yz, loss = huber(pos(w), 2h) / (4h), huber(s, M) = s^2 (|s| <= M), 2M|s| - M^2."""
    import cvxpy as cp
    theta = cp.Variable(P.p)
    margins = cp.multiply(P.y, P.X @ theta)
    h = P.huber_width

    def huber_hinge():
        return cp.sum(cp.huber(cp.pos(1 + h - margins), 2 * h)) / (4 * h * P.n)

    obj = {"logistic": lambda: cp.sum(cp.logistic(-margins)) / P.n,
           "hinge": lambda: cp.sum(cp.pos(1 - margins)) / P.n,
           "squared": lambda: cp.sum_squares(P.X @ theta - P.y) / (2 * P.n),
           "huber_hinge": huber_hinge}[P.loss]()
    obj = obj + P.reg / 2 * cp.sum_squares(theta)
    cons = [] if P.radius is None else [cp.norm(theta, 2) <= P.radius]
    cp.Problem(cp.Minimize(obj), cons).solve(solver="CLARABEL")
    return project(P, theta.value)


@pytest.mark.parametrize("loss,radius,reg", GRID)
def test_certificate_is_an_upper_bound_at_random_feasible_points(loss, radius, reg, tmp_path):
    P = make_problem(loss, radius=radius, reg=reg, seed=2)
    ref = reference_minimizer(P, cache=tmp_path)
    rng = np.random.default_rng(3)
    theta_star = np.asarray(ref.theta)
    points = np.vstack([
        random_points_in_ball(P, rng, 10, scale=1.0),                          # far away
        theta_star + random_points_in_ball(P, rng, 10, scale=1e-3),            # close by
        theta_star + random_points_in_ball(P, rng, 10, scale=1e-7),            # very close
    ])
    for theta in points:
        theta = project(P, theta)
        F = P.objective(theta)
        cert = certificate(P, theta)
        assert cert >= F - ref.value          # F(theta*) <= ref.value
        # any dual point, even a random one, gives a valid (if poor) bound
        alpha = rng.uniform(-1.5, 1.5, P.n)
        assert certificate(P, theta, alpha) >= F - ref.value
        assert certificate(P, theta, alpha) <= cert
        # and it is the duality gap of the default dual point, plus a small allowance
        gap = F - dual_value(P, -P.loss_derivatives(theta))
        assert gap - 1e-12 <= cert <= max(gap, 0.0) + 1e-10


@pytest.mark.parametrize("loss", LOSSES)
def test_certificate_is_not_fooled_at_the_optimum(loss, tmp_path):
    """Near theta* the raw duality gap is at the rounding level. The certificate must still
    dominate the true suboptimality of every nearby feasible point, which a tighter solve
    bounds from below."""
    P = make_problem(loss, n=1000, p=10, radius=0.5, reg=0.0, seed=4)
    tight = reference_minimizer(P, tol=1e-12, cache=tmp_path)
    rng = np.random.default_rng(5)
    for _ in range(20):
        theta = project(P, tight.theta + 1e-9 * rng.standard_normal(P.p))
        assert certificate(P, theta) >= P.objective(theta) - tight.value
        assert certificate(P, theta) > 0.0


def test_certificate_grows_with_suboptimality(tmp_path):
    P = make_problem("logistic", seed=6)
    ref = reference_minimizer(P, cache=tmp_path)
    worse = project(P, 0.5 * np.asarray(ref.theta))
    assert certificate(P, worse) >= P.objective(worse) - ref.value > 1e-4


# -- the certificate is small ------------------------------------------------------------------
@pytest.mark.parametrize("loss,radius,reg", GRID)
def test_reference_reaches_1e_9(loss, radius, reg, tmp_path):
    P = make_problem(loss, n=2000, p=20, radius=radius, reg=reg, seed=7)
    ref = reference_minimizer(P, cache=tmp_path)
    assert ref.gap <= 1e-9
    assert ref.gap == certificate(P, ref.theta, None) or loss == "hinge"
    assert ref.value == P.objective(ref.theta)
    assert ref.solver == "NEWTON"          # dpsolve's own method, no cone solve needed
    assert ref.time > 0 and ref.cached is False
    assert not ref.theta.flags.writeable
    if radius is not None:
        assert np.linalg.norm(ref.theta) <= radius
        if radius < 1:      # the small ball is active at the solution
            assert np.linalg.norm(ref.theta) > radius * (1 - 1e-9)
        else:
            assert np.linalg.norm(ref.theta) < 0.9 * radius


def multinomial_problem(n=300, p=5, K=3, radius=1.0, reg=0.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    X /= np.linalg.norm(X, axis=1).max()
    y = np.argmax(3.0 * X @ rng.standard_normal((p, K)) + rng.standard_normal((n, K)), axis=1)
    return Problem(X, y, "multinomial", radius=radius, reg=reg, n_classes=K)


# hinge with the ball inactive: an active-set solve of about half a second, in the slow tier
CROSS_CHECK = [pytest.param(loss, radius, reg, id=f"{loss}-{setting}",
                            marks=pytest.mark.slow if (loss, setting) == ("hinge", "inactive")
                            else ())
               for loss in LOSSES + ("multinomial",)
               for (radius, reg), setting in zip(SETTINGS, SETTING_IDS)]


@pytest.mark.parametrize("loss,radius,reg", CROSS_CHECK)
@pytest.mark.parametrize("explicit", [True, False], ids=["hessian", "newton-cg"])
def test_second_order_agrees_with_cvxpy(loss, radius, reg, explicit, monkeypatch):
    """dpsolve's own solvers against the independent cone solve: both certified to 1e-9, so
    both values lie within their gaps above F(theta*), hence within 1e-9 of each other. Run
    with the exact Hessian and with Newton-CG (the path of large p K and sparse X, forced
    here by a dimension threshold of 0)."""
    from dpsolve.reference import _newton
    if not explicit:
        monkeypatch.setattr(_newton, "EXPLICIT_MAX_DIM", 0)
    if loss == "multinomial":
        P = multinomial_problem(radius=radius, reg=reg, seed=31)
    else:
        P = make_problem(loss, n=300, p=5, radius=radius, reg=reg, seed=31)
    own = reference_minimizer(P, cache=False, method="newton")
    cone = reference_minimizer(P, cache=False, method="cvxpy")
    assert own.solver == "NEWTON" and cone.solver in ("CLARABEL", "SCS")
    assert own.gap <= 1e-9 and cone.gap <= 1e-9
    assert abs(own.value - cone.value) <= max(own.gap, cone.gap) <= 1e-9
    # both lie in C and (for a strongly convex F) close to each other
    if radius is not None:
        assert np.linalg.norm(own.theta) <= radius
    if reg > 0:
        dist = np.sqrt(2 * own.gap / reg) + np.sqrt(2 * cone.gap / reg)
        assert np.linalg.norm(own.theta - cone.theta) <= dist


@pytest.mark.slow
def test_hinge_active_set_certifies_what_smoothing_alone_cannot():
    """Smoothing alone leaves a hinge gap of about (w / n) sum b_i (1 - b_i) that stalls as w
    shrinks (the huber problem's rounding grows like 1/w); the exact solution on the pieces it
    identifies closes it."""
    from dpsolve.reference import _newton
    P = make_problem("hinge", n=300, p=5, radius=100.0, reg=0.0, seed=0)
    smoothing_only = []
    theta = np.zeros(P.p)
    for width in [0.5 * 10.0 ** -k for k in range(12)]:
        theta, _ = _newton.minimise_smooth(_newton._with_huber_width(P, width), theta, 1e-9)
        b = np.clip((1 + width - P.y * (P.X @ theta)) / (2 * width), 0, 1)
        smoothing_only.append(certificate(P, theta, b * P.y))
    assert min(smoothing_only) > 1e-10
    theta, alpha, gap = _newton.hinge_by_smoothing(P, np.zeros(P.p), 1e-9)
    assert gap <= 1e-11 and gap == certificate(P, theta, alpha)


def test_hinge_gap_uses_the_solvers_dual_point(tmp_path):
    """At a hinge minimiser the subgradient dual point is poor (b_i in {0, 1} on the support
    vectors); the solver's constraint duals certify the solution."""
    P = make_problem("hinge", n=2000, p=20, radius=100.0, reg=0.0, seed=7)
    ref = reference_minimizer(P, cache=tmp_path)
    assert ref.gap <= 1e-9
    assert certificate(P, ref.theta) > 100 * ref.gap


def _pieces(P, theta):
    """How many records lie on the linear, quadratic and zero piece of huber_hinge at theta."""
    u, h = 1 - P.y * (P.X @ theta), P.huber_width
    return int(np.sum(u > h)), int(np.sum(np.abs(u) <= h)), int(np.sum(u < -h))


@pytest.mark.parametrize("radius,reg", [(2.0, 0.0), (3.0, 0.0), (None, 0.01)],
                         ids=["active", "active-all-pieces", "unconstrained"])
def test_huber_hinge_reference_n2000_p10(radius, reg, tmp_path):
    """Certified to 1e-9 with the ball and without it, and the certificate is an honest duality
    gap: weak duality F(theta_hat) - D(alpha) >= 0 holds for the default dual point, evaluated
    independently (up to rounding of the sums, ~(n + p) eps), and the certificate bounds it."""
    P = make_problem("huber_hinge", n=2000, p=10, radius=radius, reg=reg, seed=21)
    ref = reference_minimizer(P, cache=tmp_path)
    assert ref.gap <= 1e-9 and ref.solver == "NEWTON"
    linear, quadratic, _ = _pieces(P, ref.theta)
    assert linear > 0 and quadratic > 0           # not secretly the hinge or a quadratic loss
    if radius is not None:
        assert np.linalg.norm(ref.theta) > radius * (1 - 1e-9)   # the ball is active
    alpha = -P.loss_derivatives(ref.theta)
    raw_gap = ref.value - dual_value(P, alpha)
    rounding = 2 * (P.n + P.p) * np.finfo(float).eps * (1 + abs(ref.value))
    assert -rounding <= raw_gap <= ref.gap


@pytest.mark.parametrize("radius,reg", [(2.0, 0.0), (None, 0.05)], ids=["ball", "unconstrained"])
def test_huber_hinge_reference_agrees_with_scipy(radius, reg, tmp_path):
    """scipy.optimize on a small problem, with its own optimality measure: F(theta*) lies in
    [ref.value - ref.gap, ref.value], so ref.value - F(theta_scipy) <= ref.gap, and
    F(theta_scipy) - F(theta*) is at most the Frank-Wolfe gap <g, theta> + R ||g|| over the ball
    (||g||^2 / (2 lambda) without it, by lambda-strong convexity), with g = grad F(theta_scipy).
    Without the ball, strong convexity also bounds the distance between the two solutions."""
    P = make_problem("huber_hinge", n=200, p=4, radius=radius, reg=reg, seed=21)
    ref = reference_minimizer(P, cache=tmp_path)
    x0 = np.zeros(P.p)
    if radius is None:
        res = optimize.minimize(P.objective, x0, jac=P.gradient, method="BFGS",
                                options=dict(gtol=1e-10, maxiter=10_000))
    else:
        ball = dict(type="ineq", fun=lambda t: radius ** 2 - t @ t, jac=lambda t: -2 * t)
        res = optimize.minimize(P.objective, x0, jac=P.gradient, method="SLSQP",
                                constraints=[ball], options=dict(ftol=1e-15, maxiter=1000))
    theta = project(P, res.x)
    F, g = P.objective(theta), P.gradient(theta)
    rounding = 2 * (P.n + P.p) * np.finfo(float).eps * (1 + abs(F))
    if radius is None:
        solver_gap = g @ g / (2 * reg)
    else:
        solver_gap = max(g @ theta + radius * np.linalg.norm(g), 0.0)
    assert solver_gap <= 1e-8                       # scipy did converge
    assert ref.value - F <= ref.gap + rounding
    assert F - ref.value <= solver_gap + rounding
    if radius is None:   # ||theta - theta*|| <= sqrt(2 (F(theta) - F*) / lambda) for both
        dist = np.sqrt(2 * ref.gap / reg) + np.linalg.norm(g) / reg
        assert np.linalg.norm(theta - ref.theta) <= dist + 1e-12


def test_huber_hinge_cone_formulation_alone_is_accurate(monkeypatch, tmp_path):
    """The cvxpy model (an infimal convolution) is the kernels' loss: without Newton
    polishing, the cone solver's answer (interior-point tolerance 1e-7) is already certified
    to about that level. A wrong model (e.g. a factor 2 off on the quadratic piece) would
    leave a gap of order 1e-3 or more."""
    monkeypatch.setattr(reference_module, "minimise_smooth",
                        lambda problem, theta, tol: (theta, math.inf))
    for radius, reg in [(2.0, 0.0), (None, 0.01)]:
        P = make_problem("huber_hinge", n=500, p=6, radius=radius, reg=reg, seed=23)
        assert _pieces(P, np.asarray(independent_solve(P)))[1] > 0
        ref = reference_minimizer(P, tol=1e-6, cache=False, method="cvxpy")
        assert "polished" not in ref.status and ref.solver == "CLARABEL"
        assert ref.gap <= 1e-6


def test_huber_hinge_conjugate_matches_a_numerical_supremum():
    """phi*(-alpha) = sup_z (-alpha z - loss(z; y)) = -b - h b (1 - b) for b = alpha y in [0, 1]
    (the formula the certificate uses), against the supremum over a grid of spacing d. The
    objective is concave with curvature <= 1/(2h), so the grid misses the supremum by at most
    (1/(2h)) (d/2)^2 / 2 = d^2 / (16 h); and it can never exceed it."""
    from dpsolve._kernels import losses
    h, d = 0.3, 1e-4
    z = np.linspace(-5.0, 5.0, 100_001)             # spacing d; maximisers lie in [-1.3, 1.3]
    for y in (1.0, -1.0):
        for b in (0.0, 0.05, 0.5, 0.77, 1.0):
            loss = losses.loss_values(losses.LOSS_KINDS["huber_hinge"], z, np.full_like(z, y), h)
            sup = np.max(-b * y * z - loss)
            closed = -b - h * b * (1 - b)
            assert closed - d * d / (16 * h) - 1e-14 <= sup <= closed + 1e-14


@pytest.mark.slow
def test_logistic_n10000_p50(tmp_path):
    """The hard case: plain cvxpy returns optimal_inaccurate at tight tolerances here."""
    P = make_problem("logistic", n=10_000, p=50, radius=1.0, reg=0.0, seed=8)
    ref = reference_minimizer(P, cache=False, method="cvxpy")
    assert ref.gap <= 1e-9
    assert "polished" in ref.status
    own = reference_minimizer(P, cache=False, method="newton")
    assert own.gap <= 1e-9 and abs(own.value - ref.value) <= own.gap + ref.gap


def test_polishing_recovers_from_solver_failure(monkeypatch, tmp_path):
    monkeypatch.setattr(reference_module, "_cone_solve",
                        lambda problem, tol: (None, None, "failed", "NONE"))
    for loss in ("logistic", "squared", "huber_hinge"):
        P = make_problem(loss, n=500, p=8, radius=0.5, reg=0.01, seed=9)
        ref = reference_minimizer(P, cache=False, method="cvxpy")
        assert ref.status == "failed+polished" and ref.solver == "NONE"
        assert ref.gap <= 1e-9


def test_scs_is_the_fallback_when_clarabel_errs(monkeypatch):
    import cvxpy as cp
    real_solve = cp.Problem.solve

    def solve(self, *args, **kwargs):
        if kwargs.get("solver") == "CLARABEL":
            raise cp.error.SolverError("simulated Clarabel failure")
        return real_solve(self, *args, **kwargs)

    monkeypatch.setattr(cp.Problem, "solve", solve)
    P = make_problem("squared", n=300, p=5, radius=0.5, seed=10)
    ref = reference_minimizer(P, cache=False, method="cvxpy")
    assert ref.solver == "SCS"
    assert ref.gap <= 1e-9


def test_gap_above_tol_warns_and_is_not_cached(monkeypatch, tmp_path):
    """With the second-order method and both cone solvers failing, the origin cannot be
    certified."""
    monkeypatch.setattr(reference_module, "_cone_solve",
                        lambda problem, tol: (None, None, "failed", "NONE"))
    monkeypatch.setattr(reference_module, "hinge_by_smoothing",
                        lambda problem, theta, tol: (theta, None, math.inf))
    P = make_problem("hinge", seed=11)
    with pytest.warns(RuntimeWarning, match="above tol"):
        ref = reference_minimizer(P, cache=tmp_path)
    assert ref.status.endswith("+gap_above_tol") and ref.gap > 1e-9
    assert list(tmp_path.iterdir()) == []


# -- cache -------------------------------------------------------------------------------------
@pytest.mark.parametrize("loss", LOSSES)
def test_cache_round_trip(loss, tmp_path, monkeypatch):
    monkeypatch.setenv("DPSOLVE_CACHE", str(tmp_path / "env-cache"))
    P = make_problem(loss, radius=0.5, seed=12)
    fresh = reference_minimizer(P)
    files = list((tmp_path / "env-cache").glob("*.npz"))
    assert len(files) == 1
    again = reference_minimizer(P)
    assert fresh.cached is False and again.cached is True
    assert np.array_equal(again.theta, fresh.theta)
    assert again.value == fresh.value
    assert again.gap <= 1e-9           # re-certified (hinge: with the stored dual point)
    assert (again.status, again.solver, again.time) == (fresh.status, fresh.solver, fresh.time)
    assert not again.theta.flags.writeable
    # the same data under another problem or tolerance is another entry
    reference_minimizer(Problem(P.X, P.y, loss, radius=0.6))
    reference_minimizer(P, tol=1e-8)
    assert len(list((tmp_path / "env-cache").glob("*.npz"))) == 3


def test_cache_locations(tmp_path, monkeypatch):
    P = make_problem("squared", seed=13)
    monkeypatch.delenv("DPSOLVE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    reference_minimizer(P)
    assert len(list((tmp_path / "xdg" / "dpsolve").glob("*.npz"))) == 1
    monkeypatch.setenv("DPSOLVE_CACHE", str(tmp_path / "env"))
    assert reference_minimizer(P).cached is False
    assert reference_minimizer(P, cache=str(tmp_path / "xdg" / "dpsolve")).cached is True
    assert reference_minimizer(P, cache=tmp_path / "env").cached is True
    assert reference_minimizer(P, cache=False).cached is False


def test_corrupted_cache_is_detected_and_replaced(tmp_path):
    P = make_problem("logistic", radius=0.5, seed=14)
    fresh = reference_minimizer(P, cache=tmp_path)
    (path,) = tmp_path.glob("*.npz")
    path.write_bytes(b"not an npz file")
    resolved = reference_minimizer(P, cache=tmp_path)
    assert resolved.cached is False and resolved.gap <= 1e-9
    np.testing.assert_allclose(resolved.theta, fresh.theta, atol=1e-6)
    assert reference_minimizer(P, cache=tmp_path).cached is True     # the file was rewritten
    assert [p.name for p in tmp_path.iterdir()] == [path.name]       # no temporary files left


def test_tampered_cache_is_not_trusted(tmp_path):
    """A well-formed file with the right key but a suboptimal theta fails re-certification."""
    P = make_problem("squared", radius=0.5, seed=15)
    fresh = reference_minimizer(P, cache=tmp_path)
    (path,) = tmp_path.glob("*.npz")
    with np.load(path) as f:
        contents = dict(f)
    contents["theta"] = 0.9 * contents["theta"]
    contents["gap"] = np.float64(0.0)       # lies are ignored: the certificate is recomputed
    with open(path, "wb") as fh:
        np.savez(fh, **contents)
    resolved = reference_minimizer(P, cache=tmp_path)
    assert resolved.cached is False
    assert resolved.value == pytest.approx(fresh.value, abs=1e-9)
    assert resolved.gap <= 1e-9


# -- excess risk -------------------------------------------------------------------------------
@pytest.mark.parametrize("loss", LOSSES)
def test_excess_risk(loss, tmp_path, monkeypatch):
    monkeypatch.setenv("DPSOLVE_CACHE", str(tmp_path))
    P = make_problem(loss, radius=0.5, reg=0.01, seed=16)
    ref = reference_minimizer(P)
    assert -ref.gap <= excess_risk(P, ref.theta, ref) <= ref.gap
    assert excess_risk(P, ref.theta) == excess_risk(P, ref.theta, ref)   # computed (cached)
    worse = np.zeros(P.p)
    assert excess_risk(P, worse, ref) == pytest.approx(P.objective(worse) - ref.value)
    assert excess_risk(P, worse, ref) > 1e-3
    # points outside C (output perturbation) are evaluated as they are
    outside = 10.0 * np.asarray(ref.theta) / np.linalg.norm(ref.theta)
    assert excess_risk(P, outside, ref) == pytest.approx(P.objective(outside) - ref.value)


# -- errors ------------------------------------------------------------------------------------
def test_bad_inputs(tmp_path):
    P = make_problem("logistic", radius=0.5, seed=17)
    ref = reference_minimizer(P, cache=tmp_path)
    with pytest.raises(TypeError, match="dpsolve.Problem"):
        reference_minimizer("P")
    with pytest.raises(TypeError, match="dpsolve.Problem"):
        certificate(None, np.zeros(P.p))
    with pytest.raises(TypeError, match="dpsolve.Problem"):
        excess_risk({}, np.zeros(P.p), ref)
    for tol in (0.0, -1e-9, 0.1, math.nan, math.inf):
        with pytest.raises(ValueError, match="tol"):
            reference_minimizer(P, tol=tol, cache=False)
    with pytest.raises(TypeError, match="tol"):
        reference_minimizer(P, tol="1e-9", cache=False)
    with pytest.raises(TypeError, match="cache"):
        reference_minimizer(P, cache=3)
    with pytest.raises(ValueError, match="method must be one of"):
        reference_minimizer(P, cache=False, method="lbfgs")
    with pytest.raises(ValueError, match=r"theta must have shape \(5,\)"):
        certificate(P, np.zeros(4))
    with pytest.raises(ValueError, match=r"theta must have shape \(5,\)"):
        excess_risk(P, np.zeros((5, 1)), ref)
    with pytest.raises(ValueError, match="NaN"):
        certificate(P, np.full(P.p, np.nan))
    with pytest.raises(ValueError, match="outside the constraint set"):
        certificate(P, np.full(P.p, 1.0))
    with pytest.raises(ValueError, match=r"alpha must have shape \(300,\)"):
        certificate(P, np.zeros(P.p), alpha=np.zeros(3))
    with pytest.raises(TypeError, match="ReferenceSolution"):
        excess_risk(P, np.zeros(P.p), reference=np.zeros(P.p))
    other = reference_minimizer(make_problem("logistic", radius=0.5, seed=18), cache=tmp_path)
    with pytest.raises(ValueError, match="does not belong"):
        excess_risk(P, np.zeros(P.p), other)
    with pytest.raises(ValueError, match="does not belong"):
        excess_risk(make_problem("logistic", p=6, seed=17), np.zeros(6), ref)
    assert isinstance(ref, ReferenceSolution)
    with pytest.raises(AttributeError):
        ref.gap = 0.0                  # frozen
    with pytest.raises(ValueError):
        ref.theta[0] = 1.0             # read-only
