"""joint_sgd (Huang et al., joint DP, Algorithm 1; docs/joint_dp.md): the kernel against a
literal Python version of the algorithm, owner-level accounting, the joint objective's certified
minimiser, and the baselines."""
import itertools
import math
import types
import warnings

import numpy as np
import pytest

import dpsolve
from dpsolve import joint
from dpsolve._projection import scale_onto_ball
from dpsolve._kernels import losses as _losses
from dpsolve.privacy import PrivacyWarning, epsilon_of, group_privacy
from dpsolve.privacy.calibration import DEFAULT_STEPS_SLACK, nsgd_paper_sigma
from dpsolve.solvers import joint_sgd as joint_solver
from dpsolve.privacy.mechanisms import _quotient_down, gaussian_epsilon, gaussian_sigma_analytic


def _binary(n=120, p=3, sizes=(40, 50, 30), reg=0.01, radius=1.0, seed=0):
    X, y = dpsolve.datasets.make_synthetic(n=n, p=p, rng=seed)
    problem = dpsolve.Problem(X, y, "logistic", radius=radius, reg=reg)
    return problem, dpsolve.Parties.from_sizes(problem, list(sizes))


def _multinomial(n=90, p=3, K=3, sizes=(30, 30, 30), reg=0.01, seed=0):
    rng = np.random.default_rng(seed)
    X = dpsolve.datasets.unit_rows(rng.standard_normal((n, p)))
    y = np.argmax(X @ rng.standard_normal((p, K)) + 0.3 * rng.standard_normal((n, K)), axis=1)
    problem = dpsolve.Problem(X, y, "multinomial", radius=2.0, reg=reg, n_classes=K)
    return problem, dpsolve.Parties.from_sizes(problem, list(sizes))


def _softmax_derivative(z, label):
    """softmax(z) - e_label in the kernel's arithmetic (_kernels/_loss.pxd)."""
    m = z[0]
    for v in z[1:]:
        if v > m:
            m = v
    e, total, others = [], 0.0, 0.0
    for c, v in enumerate(z):
        e.append(math.exp(v - m))
        total += e[-1]
        if c != label:
            others += e[-1]
    return [-others / total if c == label else e[c] / total for c in range(len(z))]


def _sequential_norm(values):
    sq = 0.0
    for v in values:
        sq += v * v
    return math.sqrt(sq)


def _literal(problem, owners, fit, rng_seed):
    """Algorithm 1 written out in Python, step by step, reading owner j's own rows only, with
    noise on u only; the same draws as joint_sgd (schedule, records, noise streams)."""
    cols = fit.model.personal_columns
    K = problem.n_classes if problem.loss == "multinomial" else 1
    p, k, N, T = problem.p, cols.size, owners.m, fit.steps
    eta, lam = fit.settings["step_size"], problem.reg
    r_u, r_x = fit.settings["shared_radius"], fit.settings["personal_radius"]
    schedule_rng, record_rng, noise_rng = np.random.default_rng(rng_seed).spawn(3)
    seq = joint_solver._schedule(N, T, fit.settings["schedule"], schedule_rng)
    sizes = np.array(owners.sizes)
    local = record_rng.integers(0, sizes[seq])
    u = [0.0] * (p * K)
    x = [[0.0] * (k * K) for _ in range(N)]
    u_sum = [0.0] * (p * K)
    x_sum = [[0.0] * (k * K) for _ in range(N)]
    for t in range(T):
        j, i = int(seq[t]), int(local[t])
        a, label = owners[j].X[i], owners[j].y[i]        # owner j's own copy of its row
        z = [0.0] * K
        for q in range(p):
            for c in range(K):
                z[c] += a[q] * u[q * K + c]
        for q in range(k):
            for c in range(K):
                z[c] += a[cols[q]] * x[j][q * K + c]
        if K == 1:
            d = [float(dpsolve._kernels.losses.loss_derivatives(
                problem.loss_object.kernel_id, np.array([z[0]]), np.array([label]), problem.loss_object.kernel_param)[0])]
        else:
            d = _softmax_derivative(z, int(label))
        for q in range(p * K):
            u_sum[q] += u[q]
        for jj in range(N):
            for q in range(k * K):
                x_sum[jj][q] += x[jj][q]
        new_x = [x[j][q * K + c] - eta * (a[cols[q]] * d[c] + lam * x[j][q * K + c])
                 for q in range(k) for c in range(K)]
        norm = _sequential_norm(new_x)
        x[j] = [v * (r_x / norm) for v in new_x] if norm > r_x else new_x
        new_u = []
        for q in range(p):
            for c in range(K):
                g = a[q] * d[c]
                if fit.sigma > 0.0:
                    g += fit.sigma * noise_rng.standard_normal()
                new_u.append(u[q * K + c] - eta * (g + lam * u[q * K + c]))
        norm = _sequential_norm(new_u)
        u = [v * (r_u / norm) for v in new_u] if norm > r_u else new_u
    return np.array(u_sum) / T, np.array(x_sum) / T


@pytest.mark.parametrize("make", [_binary, _multinomial])
@pytest.mark.parametrize("schedule", ["balanced", "uniform"])
def test_kernel_is_the_algorithm(make, schedule):
    """Same draws, same arithmetic: the kernel's averages match the literal algorithm (up to the
    order in which the lazily kept personal averages are added)."""
    problem, owners = make()
    fit = dpsolve.joint_sgd(problem, owners, sigma=0.7, delta=1e-3, steps=150,
                            schedule=schedule, personal_columns=[0, 2], rng=5)
    u, x = _literal(problem, owners, fit, 5)
    assert np.array_equal(fit.theta.ravel(), u)         # u: the same sums in the same order
    np.testing.assert_allclose(fit.model.personal.reshape(owners.m, -1), x, rtol=1e-12,
                               atol=1e-15)


def test_personal_blocks_get_no_noise_and_see_only_their_owner():
    problem, owners = _binary()
    # an owner's block moves only by its own records' gradients: with no steps for owner 2 its
    # block stays at zero whatever the noise
    fit = dpsolve.joint_sgd(problem, owners, sigma=1e6, delta=1e-3, steps=2, rng=0)
    seq = joint_solver._schedule(3, 2, "balanced", np.random.default_rng(0).spawn(3)[0])
    untouched = sorted(set(range(3)) - set(seq.tolist()))
    assert untouched and np.all(fit.model.personal[untouched[0]] == 0.0)
    # and changing another owner's rows leaves owner 0's first-step block unchanged
    X = np.array(problem.X)
    X[problem.n - 30:] *= -1.0                   # owner 2's rows
    other = dpsolve.Problem(X, problem.y, "logistic", radius=1.0, reg=problem.reg)
    other_owners = dpsolve.Parties.from_sizes(other, [40, 50, 30])
    a = dpsolve.joint_sgd(problem, owners, sigma=1.0, delta=1e-3, steps=1, rng=3)
    b = dpsolve.joint_sgd(other, other_owners, sigma=1.0, delta=1e-3, steps=1, rng=3)
    first = joint_solver._schedule(3, 1, "balanced", np.random.default_rng(3).spawn(3)[0])[0]
    if first != 2:
        assert np.array_equal(a.model.personal, b.model.personal)


def test_owner_level_accounting_is_exact():
    problem, owners = _binary()
    fit = dpsolve.joint_sgd(problem, owners, 1.0, 1e-4, steps=300, rng=0)
    assert fit.settings["max_owner_steps"] == 100          # balanced: ceil(300 / 3)
    mu = math.sqrt(100) * 2.0 * problem.lipschitz / fit.sigma
    assert gaussian_epsilon(mu, 1e-4) == pytest.approx(1.0, rel=1e-6)
    assert fit.privacy.holds and fit.observers["other_owners"] == fit.privacy.certified_epsilon
    assert fit.settings["guarantee"] == "owner-level joint DP"
    uniform = dpsolve.joint_sgd(problem, owners, 1.0, 1e-4, steps=300, schedule="uniform", rng=0)
    assert uniform.settings["max_owner_steps"] >= 100 and uniform.privacy.holds


@pytest.mark.slow
def test_seed_noise_is_reported_with_what_it_gives():
    problem, owners = _binary()
    with pytest.warns(PrivacyWarning, match="above the claimed"):
        fit = dpsolve.joint_sgd(problem, owners, 1.0, 1e-4, steps=3000, calibration="paper",
                                rng=0)
    assert fit.sigma == pytest.approx(math.sqrt(3000 * math.log(1e4)) / 120, rel=1e-12)
    assert fit.privacy.certified_epsilon > 1.0
    # the seed's own (unsound) record-level reading claims far less
    assert fit.settings["paper_record_level_epsilon"] < fit.privacy.certified_epsilon


@pytest.mark.slow
def test_full_dp_is_record_level():
    problem, owners = _binary()
    fit = joint_solver.collaboration_full_dp(problem, owners, 1.0, 1e-4, steps=600, rng=0)
    assert fit.model.personal.shape == (3, 0)
    assert fit.calibration == "rdp" and fit.privacy.holds
    assert fit.settings["guarantee"] == "record-level DP"
    # the same noise without amplification would certify far more
    assert epsilon_of(dpsolve.privacy.gaussian_event(fit.sigma, 2.0, steps=200), 1e-4,
                      "pld") > 1.0


def test_group_privacy():
    assert group_privacy(0.5, 1e-6, 1) == (0.5, 1e-6)
    eps, delta = group_privacy(0.5, 1e-6, 4)
    assert eps == 2.0 and delta == pytest.approx(4 * math.exp(1.5) * 1e-6)


def test_reproducible_and_inputs_untouched():
    problem, owners = _multinomial()
    X = problem.X.copy()
    a = dpsolve.joint_sgd(problem, owners, 2.0, 1e-3, steps=200, rng=np.random.SeedSequence(1))
    b = dpsolve.joint_sgd(problem, owners, 2.0, 1e-3, steps=200, rng=np.random.SeedSequence(1))
    assert np.array_equal(a.theta, b.theta)
    assert np.array_equal(a.model.personal, b.model.personal)
    assert a.theta.shape == (3, 3) and a.model.personal.shape == (3, 3, 3)
    assert np.array_equal(problem.X, X)


# -- the joint objective, its minimiser, utility ------------------------------------------------------
@pytest.mark.parametrize("make", [_binary, _multinomial])
def test_reference_minimizer_is_certified(make):
    problem, owners = make()
    ref = joint.joint_reference_minimizer(problem, owners, tol=1e-9)
    assert 0.0 <= ref.gap <= 1e-9
    # random feasible points are no better than the minimiser (minus its gap)
    rng = np.random.default_rng(0)
    for _ in range(20):
        u = rng.standard_normal(ref.model.shared.shape)
        x = rng.standard_normal(ref.model.personal.shape)
        for v in x:
            scale_onto_ball(v, 1.0)
        model = joint.JointModel(scale_onto_ball(u, 1.0), x, ref.model.personal_columns)
        assert joint.joint_objective(problem, owners, model) >= ref.value - ref.gap


def test_equal_owners_and_no_personal_block_give_the_pooled_problem():
    problem, owners = _binary(sizes=(40, 40, 40))
    ref = joint.joint_reference_minimizer(problem, owners, personal_columns=[], tol=1e-10)
    pooled = dpsolve.reference_minimizer(problem, tol=1e-10)
    assert ref.value == pytest.approx(pooled.value, abs=ref.gap + pooled.gap + 1e-12)


def test_noise_free_joint_sgd_approaches_the_minimiser():
    """Projected SGD's guarantee for the averaged iterate, E[J] - J* <= R G / sqrt(T), holds for
    the mean of 5 runs; the reference's gap is the tolerance on J*."""
    problem, owners = _binary(reg=0.01)
    ref = joint.joint_reference_minimizer(problem, owners, tol=1e-9)
    T = 20_000
    risks = [joint.joint_excess_risk(problem, owners, dpsolve.joint_sgd(
        problem, owners, sigma=0.0, delta=1e-3, steps=T, rng=s).model, ref) for s in range(5)]
    R = math.sqrt(3 * 1.0 + 1.0)
    G = math.sqrt(2.0) + 0.01 * math.sqrt(2.0)
    assert min(risks) >= -ref.gap
    assert np.mean(risks) <= R * G / math.sqrt(T)


def test_baselines():
    problem, owners = _binary(reg=0.05)
    silo = joint.per_silo(problem, owners, tol=1e-10)
    assert silo.shape == (3, problem.p)
    for j, owner in enumerate(owners):
        ref = dpsolve.reference_minimizer(owner.local_problem(), tol=1e-10, cache=False)
        # both are within sqrt(2 gap / lambda) of the local minimiser
        assert np.linalg.norm(silo[j] - ref.theta) <= 2 * math.sqrt(2 * 1e-10 / 0.05)
    pooled = joint.collaboration_without_dp(problem)
    assert np.array_equal(pooled, dpsolve.reference_minimizer(problem).theta)


def test_theorem_3_1_bound():
    problem, owners = _binary()
    value = joint.joint_sgd_bound(problem, owners, 1.0, 1e-4)
    R = math.sqrt(3 * 4.0 + 4.0)
    assert value == pytest.approx(R * (1 / math.sqrt(120) + math.sqrt(3 * math.log(1e4)) / 120))


def test_bad_input():
    problem, owners = _binary()
    free = dpsolve.Problem(problem.X, problem.y, "logistic", radius=None, reg=0.1)
    free_owners = dpsolve.Parties.from_sizes(free, [40, 50, 30])
    with pytest.raises(ValueError, match="radius"):
        dpsolve.joint_sgd(free, free_owners, 1.0, 1e-4, steps=10)
    with pytest.raises(ValueError, match="personal_columns"):
        dpsolve.joint_sgd(problem, owners, 1.0, 1e-4, personal_columns=[5], steps=10)
    with pytest.raises(ValueError, match="personal_columns"):
        dpsolve.joint_sgd(problem, owners, 1.0, 1e-4, personal_columns="some", steps=10)
    with pytest.raises(ValueError, match="more than once"):
        dpsolve.joint_sgd(problem, owners, 1.0, 1e-4, personal_columns=[1, 1], steps=10)
    with pytest.raises(ValueError, match="partition of this problem"):
        dpsolve.joint_sgd(free, owners, 1.0, 1e-4, steps=10)
    with pytest.raises(ValueError, match="either epsilon"):
        dpsolve.joint_sgd(problem, owners, 1.0, 1e-4, sigma=1.0, steps=10)
    with pytest.raises(ValueError, match="rdp"):
        dpsolve.joint_sgd(problem, owners, 1.0, 1e-4, personal_columns=[], calibration="pld",
                          steps=10)
    with pytest.raises(ValueError, match="schedule"):
        dpsolve.joint_sgd(problem, owners, 1.0, 1e-4, schedule="round", steps=10)
    with pytest.raises(ValueError, match="steps"):
        dpsolve.joint_sgd(problem, owners, 1.0, 1e-4, steps=0)
    with pytest.raises(ValueError, match="delta"):
        dpsolve.joint_sgd(problem, owners, 1.0, 2.0, steps=10)
    with pytest.raises(ValueError, match="shared_radius"):
        dpsolve.joint_sgd(problem, owners, 1.0, 1e-4, shared_radius=-1.0, steps=10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dpsolve.joint_sgd(problem, owners, 1.0, 1e-4, steps=10, rng=0)


@pytest.mark.parametrize("make", [_binary, _multinomial])
def test_protocol_transcript_replays_and_equals_the_kernel(make):
    problem, owners = make()
    run = dict(sigma=0.5, delta=1e-3, steps=120, personal_columns=[1], rng=4)
    fast = dpsolve.joint_sgd(problem, owners, **run)
    slow = dpsolve.joint_sgd(problem, owners, record_transcript=True, **run)
    assert fast.transcript is None
    assert np.array_equal(slow.theta, fast.theta)
    assert np.array_equal(slow.model.personal, fast.model.personal)
    transcript = slow.transcript
    assert transcript.messages.shape == (120, int(np.prod(problem.theta_shape)))
    assert np.array_equal(transcript.replay(), slow.theta)
    # the messages carry the owners' noise: their spread exceeds a noise-free run's
    quiet = dpsolve.joint_sgd(problem, owners, record_transcript=True,
                              **{**run, "sigma": 0.0}).transcript.messages
    assert np.std(transcript.messages - quiet) > 0.25
    with pytest.raises(ValueError, match="transcript_limit"):
        dpsolve.joint_sgd(problem, owners, record_transcript=True, transcript_limit=100, **run)


# -- the per-record gradient bound of the joint loss -----------------------------------------------
# A record (a, y) of owner j has logits z = u^T a + x_j^T a_P; the shared block's gradient is
# grad_u h = a d^T and the personal block's grad_x h = a_P d^T, d = loss'(z; y). joint_sgd's noise
# is calibrated to a bound L_u on ||grad_u h|| over the whole joint domain (||u|| <= R_U,
# ||x_j|| <= R_X, ||a|| <= B, |y| <= B_y or y in the label set): the replace-one sensitivity of a
# u-message is 2 L_u. These tests maximise the gradient norms numerically over that domain and
# compare the maximum with the bound the fit reports and its DpEvent carries.
EPS64 = np.finfo(float).eps
GRADIENT_CASES = {   # name: (loss, row_norm B, label_bound B_y)
    "logistic": ("logistic", 1.0, 1.0),
    "hinge": ("hinge", 1.0, 1.0),
    "huber_hinge": ("huber_hinge", 1.0, 1.0),
    "squared": ("squared", 1.0, 1.0),
    "squared_B2": ("squared", 2.0, 0.5),
    "multinomial": ("multinomial", 1.0, 1.0),
}
# (shared_radius, personal_radius); the Problem's radius is 1 (None: the default, 1)
GRADIENT_RADII = [(None, None), (1.0, 3.0), (2.5, 1.0), (0.5, 0.25), (20.0, 20.0)]
LAYOUTS = {"personal": [1], "none": []}


def _default_radii_fast(radii):
    """The radii as parameters: the defaults in the fast tier, the others marked slow (each one is
    a numerical maximisation; run them with -m "slow or not slow")."""
    return [r if r == (None, None) else pytest.param(r, marks=pytest.mark.slow) for r in radii]


def _cases_fast(fast):
    """The gradient cases as parameters: those in ``fast`` in the fast tier, the others (each a
    numerical maximisation or a fit of up to a second and a half) marked slow."""
    return [case if case in fast else pytest.param(case, marks=pytest.mark.slow)
            for case in sorted(GRADIENT_CASES)]


def _gradient_problem(case, n=40, p=2, K=3):
    loss, B, B_y = GRADIENT_CASES[case]
    rng = np.random.default_rng(1)
    X = B * dpsolve.datasets.unit_rows(rng.standard_normal((n, p)))
    if loss == "multinomial":
        problem = dpsolve.Problem(X, rng.integers(K, size=n), loss, radius=1.0, row_norm=B,
                                  n_classes=K)
    elif loss == "squared":
        problem = dpsolve.Problem(X, B_y * rng.uniform(-1.0, 1.0, n), loss, radius=1.0,
                                  row_norm=B, label_bound=B_y)
    else:
        problem = dpsolve.Problem(X, np.where(rng.random(n) < 0.5, -1.0, 1.0), loss,
                                  radius=1.0, row_norm=B)
    return problem, dpsolve.Parties.from_sizes(problem, [10] * 4)


def _gaussian_multiplier(event):
    """sigma / sensitivity of the Gaussian inside a (self-composed, sampled) DpEvent."""
    while not hasattr(event, "noise_multiplier"):
        event = event.event
    return event.noise_multiplier


def _code_bound(problem, owners, cols, r_u, r_x):
    """The bound L_u a fit's noise is calibrated to, read off its DpEvent: sensitivity
    2 L_u = sigma / noise multiplier (the fit reports it as settings["gradient_bound"], checked
    in test_fit_reports_the_gradient_bounds)."""
    sigma = 1.0
    fit = dpsolve.joint_sgd(problem, owners, sigma=sigma, delta=1e-6, steps=2, rng=0,
                            personal_columns=cols, shared_radius=r_u, personal_radius=r_x)
    return sigma / _gaussian_multiplier(fit.dp_event) / 2.0


def _derivative(problem, z, label):
    """d = loss'(z; y) as the kernels compute it (z of shape (K,))."""
    if problem.loss == "multinomial":
        return _losses.multinomial_derivatives(z[None, :], np.array([label], dtype=np.intp))[0]
    return _losses.loss_derivatives(problem.loss_object.kernel_id, z, np.array([float(label)]), problem.loss_object.kernel_param)


def _gradients(problem, cols, u, x, a, label):
    """(grad_u h, grad_x h) of one record: u (p, K), x (k, K), a (p,)."""
    d = _derivative(problem, a @ u + a[cols] @ x, label)
    return np.outer(a, d), np.outer(a[cols], d)


def _to_ball(w, radius):
    """A smooth map of R^(m+1) onto the closed ball of radius ``radius`` in R^m: direction
    w[:-1], fraction of the radius (1 + sin w[-1]) / 2."""
    norm = math.sqrt(float(w[:-1] @ w[:-1]))
    if norm == 0.0:
        return np.zeros(w.size - 1)
    return (radius * 0.5 * (1.0 + math.sin(w[-1])) / norm) * w[:-1]


class _Domain:
    """The joint domain as a smooth image of R^dim, for maximising over it: blocks (name,
    shape, radius) named u..., x... or a... (shared block, personal block, record); the labels
    are variables (B_y sin t) for the squared loss and enumerated for the classification
    losses."""

    def __init__(self, problem, cols, r_u, r_x, blocks, n_labels=1):
        self.problem, self.n_labels = problem, n_labels
        K = problem.n_classes if problem.loss == "multinomial" else 1
        p, k = problem.p, len(cols)
        sizes = {"u": ((p, K), r_u), "x": ((k, K), r_x), "a": ((p,), problem.row_norm)}
        self.blocks, i = [], 0
        for name in blocks:
            shape, radius = sizes[name[0]]
            m = math.prod(shape)
            self.blocks.append((name, shape, radius, slice(i, i + m + 1)))
            i += m + 1
        self.dim = i + n_labels
        if problem.loss == "squared":
            self.labels = [None]
        elif problem.loss == "multinomial":
            self.labels = list(range(K))
        else:
            self.labels = [-1.0, 1.0]

    def point(self, w, labels):
        out = {name: _to_ball(w[where], radius).reshape(shape)
               for name, shape, radius, where in self.blocks}
        B_y, i = self.problem.label_bound, self.dim - self.n_labels
        return out, [B_y * math.sin(w[i + j]) if lab is None else lab
                     for j, lab in enumerate(labels)]

    def maximise(self, value, candidates, starts, seed=0):
        """max of ``value(point, labels)`` over the analytic candidates and ``starts`` L-BFGS-B
        runs from random points, spread over the choices of the labels (at least one each).
        Every value is taken at a feasible point, so the result is a lower bound on the maximum
        over the domain."""
        from scipy import optimize
        rng = np.random.default_rng(seed)
        best = max((value(*c) for c in candidates), default=0.0)
        choices = list(itertools.product(self.labels, repeat=self.n_labels))
        if self.n_labels == 2 and self.problem.loss != "squared":
            # up to a relabelling (classes permuted, or y -> -y with u, x -> -u, -x) that maps
            # the domain onto itself, a pair of labels is equal or not
            choices = [(self.labels[0], self.labels[0]), (self.labels[0], self.labels[1])]
        for labels in choices:
            for _ in range(max(1, starts // len(choices))):
                res = optimize.minimize(lambda w: -value(*self.point(w, labels)),
                                        rng.standard_normal(self.dim), method="L-BFGS-B",
                                        options={"maxiter": 60})
                best = max(best, value(*self.point(res.x, labels)))
        return best


def _allowance(problem, cols):
    """Rounding allowance for comparing a float64 gradient norm with the bound: each of the at
    most ``n = p K + k K + p + 8`` roundings between (u, x, a, y) and the computed norm (the two
    dot products of z, d, the products a_i d, the norm, the ball maps) moves it by at most one
    unit roundoff of the bound, so computed <= exact (1 + n eps) to first order."""
    K = problem.n_classes if problem.loss == "multinomial" else 1
    return (problem.p * K + len(cols) * K + problem.p + 8) * EPS64


def _attained(problem, cols, r_u, r_x):
    """An analytic maximiser candidate (a = B e on a personalised column, u and x along e; y
    where |loss'| is largest), as a point of _Domain(blocks u, x, a) and its labels."""
    loss, B, K = problem.loss, problem.row_norm, problem.n_classes or 1
    p, k = problem.p, len(cols)
    e = np.zeros(p)
    e[cols[0] if cols else 0] = 1.0
    direction = np.ones(1) if loss != "multinomial" else np.array([-1.0, 1.0] + [0.0] * (K - 2))
    direction = direction / np.linalg.norm(direction)
    sign = {"squared": 1.0, "multinomial": 1.0}.get(loss, -1.0)    # z = +M, or -M with y = +1
    u = sign * r_u * np.outer(e, direction)
    x = sign * r_x * np.outer(e[cols], direction) if k else np.zeros((0, direction.size))
    if loss in ("hinge", "huber_hinge"):
        u, x = 0.0 * u, 0.0 * x                                     # z = 0: |loss'| = 1
    label = {"squared": -problem.label_bound, "multinomial": 0}.get(loss, 1.0)
    return {"u": u, "x": x, "a": B * e}, [label]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("radii", _default_radii_fast(GRADIENT_RADII), ids=str)
@pytest.mark.parametrize("case", _cases_fast({"huber_hinge"}))
def test_gradient_bound_is_the_maximum_of_the_record_gradient(case, radii, layout):
    """Soundness: no record and no (u, x_j) in the domain has a larger gradient than the bound the
    fit uses (numerical maximum <= bound, up to float64 rounding), for either block.

    Tightness: the bound is attained where the loss's |loss'| bound is reached inside the
    domain, so the maximum equals it (to 1e-6): squared (z = M = B (R_U + R_X), y = -B_y, a on
    a personalised column: |z - y| ||a|| = L_u), hinge and huber_hinge with width 0.5
    (|loss'| = 1 at z = 0). Logistic (|loss'| = sigmoid(-y z) < 1) and multinomial
    (||softmax(z) - e_y|| < sqrt(2)) only approach their bounds as the margin M grows: the
    maximum is B sigmoid(M) for logistic, and both are within 1e-6 of the bound at
    R_U = R_X = 20 (M >= 20)."""
    problem, owners = _gradient_problem(case)
    cols = LAYOUTS[layout]
    r_u, r_x = radii
    L_u = _code_bound(problem, owners, cols, r_u, r_x)
    r_u, r_x = (1.0 if r_u is None else r_u), (1.0 if r_x is None else r_x)
    domain = _Domain(problem, cols, r_u, r_x, ["u", "x", "a"])
    allowance = _allowance(problem, cols)
    candidate = _attained(problem, cols, r_u, r_x)

    def shared(point, labels):
        return float(np.linalg.norm(_gradients(problem, cols, point["u"], point["x"],
                                               point["a"], labels[0])[0]))

    def personal(point, labels):
        return float(np.linalg.norm(_gradients(problem, cols, point["u"], point["x"],
                                               point["a"], labels[0])[1]))

    top_u = domain.maximise(shared, [candidate], starts=4)
    assert top_u <= L_u * (1.0 + allowance)                                   # sound
    B = problem.row_norm
    M = B * (r_u + r_x) if cols else B * r_u
    if problem.loss == "squared":
        assert L_u == pytest.approx(B * (M + problem.label_bound), rel=4 * EPS64)
    if problem.loss in ("squared", "hinge", "huber_hinge") or r_u >= 20.0:
        assert top_u >= L_u * (1.0 - 1e-6)                                    # tight
    if problem.loss == "logistic":            # the exact maximum, below the bound B
        assert top_u == pytest.approx(B / (1.0 + math.exp(-M)), rel=1e-6)
    if cols:        # the personalised block: ||a_P d|| <= ||a d||, the same bound, attained
        top_x = domain.maximise(personal, [candidate], starts=2, seed=1)
        assert top_x <= L_u * (1.0 + allowance)
        if problem.loss in ("squared", "hinge", "huber_hinge") or r_u >= 20.0:
            assert top_x >= L_u * (1.0 - 1e-6)


def _squared_pair(problem, r_u, r_x, personalised):
    """Two records of owner j at the same u (one step's history), with personal blocks x, x'
    of the two neighbouring runs, whose squared-loss u-gradients differ the most among pairs
    ``a = B (cos phi, sin phi)``, ``a' = B (cos phi, -sin phi)``, ``u = (0, R_U)``,
    ``x = R_X a / B``, ``x' = -R_X a' / B``, ``y = -B_y``, ``y' = B_y`` (every column
    personalised, or no personal block): ``g - g' = 2 alpha B cos(phi) e_1`` with
    ``alpha = B (R_U sin phi + R_X) + B_y``, largest at
    ``sin phi = (-c + sqrt(c^2 + 8 B^2 R_U^2)) / (4 B R_U)``, ``c = B R_X + B_y``."""
    B, B_y = problem.row_norm, problem.label_bound
    r_x = r_x if personalised else 0.0
    c = B * r_x + B_y
    s = (-c + math.sqrt(c * c + 8.0 * (B * r_u) ** 2)) / (4.0 * B * r_u)
    phi = math.asin(s)
    a, a2 = B * np.array([math.cos(phi), s]), B * np.array([math.cos(phi), -s])
    k = 2 if personalised else 0
    point = {"u": np.array([[0.0], [r_u]]), "a1": a, "a2": a2,
             "x1": (r_x / B * a).reshape(2, 1)[:k], "x2": (-r_x / B * a2).reshape(2, 1)[:k]}
    return point, [-B_y, B_y]


def _difference(problem, cols):
    def value(point, labels):
        g1 = _gradients(problem, cols, point["u"], point["x1"], point["a1"], labels[0])[0]
        g2 = _gradients(problem, cols, point["u"], point["x2"], point["a2"], labels[1])[0]
        return float(np.linalg.norm(g1 - g2))
    return value


@pytest.mark.parametrize("layout", ["all", "none"])
@pytest.mark.parametrize("radii", _default_radii_fast(GRADIENT_RADII[:3]), ids=str)
@pytest.mark.parametrize("case", _cases_fast({"huber_hinge"}))
def test_neighbouring_messages_differ_by_at_most_twice_the_bound(case, radii, layout):
    """The sensitivity the noise is calibrated to, 2 L_u, bounds the difference of owner j's
    u-gradient between two neighbouring runs at one step: the same u (the history so far, which
    the composition conditions on), any personal blocks x, x' (x_j carries no noise and depends
    on the owner's records) and any records (a, y), (a', y')."""
    problem, owners = _gradient_problem(case)
    cols = [0, 1] if layout == "all" else []
    L_u = _code_bound(problem, owners, cols, *radii)
    r_u, r_x = [1.0 if r is None else r for r in radii]
    domain = _Domain(problem, cols, r_u, r_x, ["u", "x1", "x2", "a1", "a2"], n_labels=2)
    B = problem.row_norm
    if problem.loss == "squared":
        candidates = [_squared_pair(problem, r_u, r_x, bool(cols))]
    else:       # hinge and huber_hinge: z = 0 for both, a' = -a: 2 B
        e = np.array([B, 0.0])
        K = problem.n_classes if problem.loss == "multinomial" else 1
        candidates = [({"u": np.zeros((2, K)), "x1": np.zeros((len(cols), K)),
                        "x2": np.zeros((len(cols), K)), "a1": e, "a2": -e},
                       [domain.labels[-1]] * 2)]
    top = domain.maximise(_difference(problem, cols), candidates, starts=2)
    assert top <= 2.0 * L_u * (1.0 + 2.0 * _allowance(problem, cols))
    if problem.loss in ("hinge", "huber_hinge"):
        assert top >= 2.0 * L_u * (1.0 - 1e-12)


# -- the squared loss: what the old bound gave, and the fixed calibration --------------------------
def _squared(n=80, p=3, reg=0.0):
    """B = R = B_y = 1, four owners of 20 records."""
    X, y = dpsolve.datasets.make_synthetic(n=n, p=p, task="regression", rng=0)
    problem = dpsolve.Problem(X, y, "squared", radius=1.0, reg=reg)
    return problem, dpsolve.Parties.from_sizes(problem, [n // 4] * 4)


@pytest.mark.parametrize("radii, old_epsilon", [({}, 1.5507654926), ({"personal_radius": 3.0},
                                                                         2.7141137331)])
def test_squared_loss_owner_level_epsilon(radii, old_epsilon):
    """B = R = B_y = 1, claimed (1, 1e-6). dpsolve 0.1.0 calibrated the noise to
    ``2 Problem.lipschitz = 2 B (R B + B_y) = 4``; the u-gradient reaches
    ``L_u = B (B (R_U + R_X) + B_y)``, 3 with the default radii and 5 with R_X = 3. The old noise
    certifies epsilon = 1.551 and 2.714 under the correct sensitivity 2 L_u (exact Gaussian
    composition, mu = sqrt(K_max) 2 L_u / sigma); the fixed solver's noise certifies 1."""
    problem, owners = _squared()
    eps, delta = 1.0, 1e-6
    fit = dpsolve.joint_sgd(problem, owners, eps, delta, steps=400, rng=0, **radii)
    k = fit.settings["max_owner_steps"]
    B = B_y = R_U = 1.0
    L_u = B * (B * (R_U + radii.get("personal_radius", 1.0)) + B_y)    # not read from the code
    # the fixed solver: its noise is (eps, delta) at the correct sensitivity
    assert gaussian_epsilon(math.sqrt(k) * 2.0 * L_u / fit.sigma, delta) <= eps * (1 + 1e-9)
    assert epsilon_of(dpsolve.privacy.gaussian_event(fit.sigma, 2.0 * L_u, steps=k), delta,
                      "pld") <= eps * (1 + 1e-9)
    assert fit.settings["gradient_bound"] == L_u and fit.privacy.holds
    # what the old noise gives under the correct sensitivity
    old_sigma = 2.0 * problem.lipschitz * math.sqrt(k) * gaussian_sigma_analytic(1.0, eps, delta)
    assert fit.sigma == pytest.approx(old_sigma * L_u / problem.lipschitz, rel=1e-12)
    old = epsilon_of(dpsolve.privacy.gaussian_event(old_sigma, 2.0 * L_u, steps=k), delta, "pld")
    assert old == pytest.approx(gaussian_epsilon(math.sqrt(k) * 2.0 * L_u / old_sigma, delta),
                                rel=1e-9)
    assert old == pytest.approx(old_epsilon, rel=1e-9)


@pytest.mark.parametrize("r_x", [1.0, 3.0])
def test_the_old_sensitivity_is_exceeded_by_a_pair_of_neighbouring_steps(r_x):
    """Not only a gap in the proof: at one step with the same u, owner j's u-gradient in two
    neighbouring runs (different personal blocks and records) can differ by more than the old
    sensitivity 2 B (R B + B_y) = 4: by 4.40 with the default radii and 8.23 with R_X = 3
    (numerical maxima of the difference; 2 L_u = 6 and 10 bound it)."""
    problem, owners = _squared(p=2)
    cols = [0, 1]
    point, labels = _squared_pair(problem, 1.0, r_x, True)
    gap = _difference(problem, cols)(point, labels)
    assert gap > 2.0 * problem.lipschitz
    assert gap == pytest.approx({1.0: (3 + math.sqrt(3)) * math.sqrt(math.sqrt(3) / 2),
                                 3.0: 8.2333318788}[r_x], rel=1e-9)
    L_u = _code_bound(problem, owners, cols, None, r_x)
    assert gap <= 2.0 * L_u
    # every vector of the pair is in its ball
    for name, radius in (("u", 1.0), ("x1", r_x), ("x2", r_x), ("a1", 1.0), ("a2", 1.0)):
        assert np.linalg.norm(point[name]) <= radius * (1 + 4 * EPS64)


@pytest.mark.slow
def test_full_dp_baseline_uses_the_shared_radius():
    """collaboration_full_dp (no personalised block) with shared_radius = 2.5 > the Problem's
    radius 1: L_u = B (B R_U + B_y) = 3.5, not 2. The old noise certifies 1.90 (RDP, record
    level, sampling 1 of 20) for a claimed 1; the fixed noise certifies <= 1."""
    problem, owners = _squared()
    eps, delta = 1.0, 1e-6
    fit = joint_solver.collaboration_full_dp(problem, owners, eps, delta, shared_radius=2.5,
                                             steps=400, rng=0)
    k, L_u = fit.settings["max_owner_steps"], 1.0 * (1.0 * 2.5 + 1.0)
    sampling = dpsolve.privacy.UniformSampling(20, 1)
    event = dpsolve.privacy.gaussian_event(fit.sigma, 2.0 * L_u, steps=k, sampling=sampling)
    assert epsilon_of(event, delta, "rdp") <= eps * (1 + 1e-9)
    assert fit.settings["gradient_bound"] == L_u and fit.settings["personal_gradient_bound"] == 0
    old_sigma = dpsolve.privacy.calibrate(eps, delta, sensitivity=2.0 * problem.lipschitz,
                                          steps=k, sampling=sampling, accountant="rdp")
    old = epsilon_of(dpsolve.privacy.gaussian_event(old_sigma, 2.0 * L_u, steps=k,
                                                    sampling=sampling), delta, "rdp")
    assert old == pytest.approx(1.896, abs=1e-3)
    # with the Problem's own radius and no personal block the two bounds agree
    same = joint_solver.collaboration_full_dp(problem, owners, eps, delta, steps=400, rng=0)
    assert same.settings["gradient_bound"] == problem.lipschitz


def test_paper_calibration_default_steps_and_step_size_use_the_joint_bound():
    """The labelled reproduction of the seed's noise, the default T and the default step size
    all take L_u = 3 (squared, default radii), not Problem.lipschitz = 2. With reg = 1 the
    default-T search itself depends on L (G = sqrt(2) L + lambda sqrt(R_X^2 + R_U^2) against
    the paper noise, which is proportional to L)."""
    problem, owners = _squared(reg=1.0)
    eps, delta, L_u = 1.0, 1e-6, 3.0
    with pytest.warns(PrivacyWarning):
        fit = dpsolve.joint_sgd(problem, owners, eps, delta, calibration="paper", rng=0)
    n, N, dim, lam = problem.n, 4, problem.p, problem.reg
    R, G = math.sqrt(N + 1.0), math.sqrt(2.0) * L_u + lam * math.sqrt(2.0)
    grid = n * np.arange(1, joint_solver.MAX_EPOCHS + 1)
    values = R * np.sqrt((G * G + dim * (L_u * np.sqrt(grid * math.log(1 / delta)) / (eps * n))
                          ** 2) / grid)
    assert fit.steps == int(grid[np.argmax(values <= DEFAULT_STEPS_SLACK * values.min())])
    assert fit.steps == 1520                                   # 1680 with L = 2
    assert fit.sigma == nsgd_paper_sigma(L_u, fit.steps, eps, delta, n)
    assert fit.settings["step_size"] == pytest.approx(
        R / math.sqrt(fit.steps * (G * G + dim * fit.sigma ** 2)), rel=1e-12)


def test_theorem_3_1_bound_uses_the_joint_bound():
    problem, owners = _squared()
    rate = 1 / math.sqrt(80) + math.sqrt(3 * math.log(1e6)) / 80
    value = joint.joint_sgd_bound(problem, owners, 1.0, 1e-6, personal_radius=3.0)
    assert value == pytest.approx(math.sqrt(4 * 36.0 + 4.0) * 5.0 * rate, rel=1e-12)
    value = joint.joint_sgd_bound(problem, owners, 1.0, 1e-6, personal_columns=[],
                                  shared_radius=2.5)
    assert value == pytest.approx(math.sqrt(4 * 4.0 + 25.0) * 3.5 * rate, rel=1e-12)
    # a squared Problem without a radius: finite once the radii are given
    free = dpsolve.Problem(problem.X, problem.y, "squared", radius=None, reg=0.1)
    assert math.isfinite(joint.joint_sgd_bound(free, 4, 1.0, 1e-6, shared_radius=1.0,
                                               personal_radius=1.0))


# a second and a half of calibration, paid by whichever case runs first: the slow tier
@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(GRADIENT_CASES))
def test_fit_reports_the_gradient_bounds(case):
    problem, owners = _gradient_problem(case)
    for cols, radii in (([1], (None, None)), ([1], (2.5, 3.0)), ([], (2.5, 3.0))):
        fit = dpsolve.joint_sgd(problem, owners, 1.0, 1e-6, steps=8, rng=0, personal_columns=cols,
                                shared_radius=radii[0], personal_radius=radii[1])
        bound = joint.joint_gradient_bound(problem, cols, shared_radius=radii[0],
                                           personal_radius=radii[1])
        assert fit.settings["gradient_bound"] == bound.shared
        assert fit.settings["personal_gradient_bound"] == (bound.shared if cols else 0.0)
        # the event's multiplier is sigma / (2 L_u), rounded down (never more noise read than
        # added)
        assert _gaussian_multiplier(fit.dp_event) == _quotient_down(fit.sigma,
                                                                    2.0 * bound.shared)
        if problem.loss != "squared":       # the margin does not matter
            assert bound.shared == problem.lipschitz


def test_gradient_bound_function():
    problem, _ = _squared()
    bound = joint.joint_gradient_bound(problem, shared_radius=2.0, personal_radius=0.5)
    assert (bound.shared, bound.personal, bound.margin) == (3.5, 3.5, 2.5)
    bound = joint.joint_gradient_bound(problem, [], shared_radius=2.0, personal_radius=0.5)
    assert (bound.shared, bound.personal, bound.margin) == (3.0, 0.0, 2.0)
    with pytest.raises(ValueError, match="not finite"):
        joint.joint_gradient_bound(problem, shared_radius=1e308, personal_radius=1e308)
    logistic, _ = _binary()
    assert joint.joint_gradient_bound(logistic, personal_radius=5.0).shared == logistic.lipschitz


# -- non-finite parameters: only the released u is read --------------------------------------------
def test_finiteness_check_reads_only_the_shared_parameters(monkeypatch):
    """The kernel's flag covers the personalised blocks too; joint_sgd must not act on it. A run
    whose personal blocks came out non-finite (simulated: the analysis shows it cannot happen
    while u is finite) returns; a non-finite averaged u raises FloatingPointError."""
    problem, owners = _binary()
    real = joint_solver._joint.joint_sgd_steps

    def personal_nan(*args):
        real(*args)
        args[7][...] = np.nan                   # Xp, the personalised blocks
        return False

    def shared_nan(*args):
        real(*args)
        args[16][0] = np.inf                    # U_sum, the sum behind the released u
        return False

    run = dict(sigma=1.0, delta=1e-3, steps=30, rng=0)
    monkeypatch.setattr(joint_solver, "_joint", types.SimpleNamespace(joint_sgd_steps=personal_nan))
    fit = dpsolve.joint_sgd(problem, owners, **run)
    assert np.all(np.isfinite(fit.theta)) and np.all(np.isnan(fit.model.personal))
    monkeypatch.setattr(joint_solver, "_joint", types.SimpleNamespace(joint_sgd_steps=shared_nan))
    with pytest.raises(FloatingPointError, match="shared"):
        dpsolve.joint_sgd(problem, owners, **run)


def test_noise_overflow_raises_on_the_shared_parameters():
    """eta sigma = 1e320 overflows u (a function of the noisy messages); the personal steps,
    at most 1 + 1e220 (1 + lambda), cannot overflow, so the run is not refused."""
    problem, owners = _binary()
    for record_transcript in (False, True):
        with pytest.raises(FloatingPointError, match="shared"), np.errstate(over="ignore"):
            dpsolve.joint_sgd(problem, owners, sigma=1e100, delta=1e-3, steps=30,
                              step_size=1e220, record_transcript=record_transcript, rng=0)


def test_a_step_size_that_could_overflow_a_personal_block_is_refused_before_the_run(monkeypatch):
    """Refused from public constants alone, whatever the data (the kernel is never called)."""
    problem, owners = _binary()
    monkeypatch.setattr(joint_solver, "_joint", None)
    for X in (problem.X, 1e-6 * problem.X):
        P = dpsolve.Problem(X, problem.y, "logistic", radius=1.0, reg=problem.reg)
        with pytest.raises(ValueError, match="overflow"):
            dpsolve.joint_sgd(P, dpsolve.Parties.from_sizes(P, [40, 50, 30]), sigma=1.0,
                              delta=1e-3, steps=30, step_size=1e305, rng=0)
