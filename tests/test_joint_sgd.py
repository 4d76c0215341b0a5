"""joint_sgd (seed 003, Algorithm 1): the kernel against a literal Python version of the algorithm,
owner-level accounting, the joint objective's certified minimiser, and the baselines."""
import math
import warnings

import numpy as np
import pytest

import dpsolve
from dpsolve import bounds, joint
from dpsolve.privacy import PrivacyWarning, epsilon_of, group_privacy
from dpsolve.privacy.mechanisms import gaussian_epsilon


def _binary(n=120, p=3, sizes=(40, 50, 30), reg=0.01, radius=1.0, seed=0):
    X, y = dpsolve.datasets.make_synthetic(n=n, p=p, rng=seed)
    problem = dpsolve.Problem(X, y, "logistic", radius=radius, reg=reg)
    return problem, dpsolve.Parties.from_sizes(problem, list(sizes))


def _multinomial(n=90, p=3, K=3, sizes=(30, 30, 30), reg=0.01, seed=0):
    rng = np.random.default_rng(seed)
    X = dpsolve.datasets.unit_rows(rng.standard_normal((n, p)))
    y = np.argmax(X @ rng.standard_normal((p, K)) + 0.3 * rng.standard_normal((n, K)), axis=1)
    problem = dpsolve.Problem(X, y, "multinomial", radius=2.0, reg=reg)
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
    seq = joint._schedule(N, T, fit.settings["schedule"], schedule_rng)
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
                problem._kind, np.array([z[0]]), np.array([label]), problem._h)[0])]
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
    seq = joint._schedule(3, 2, "balanced", np.random.default_rng(0).spawn(3)[0])
    untouched = sorted(set(range(3)) - set(seq.tolist()))
    assert untouched and np.all(fit.model.personal[untouched[0]] == 0.0)
    # and changing another owner's rows leaves owner 0's first-step block unchanged
    X = np.array(problem.X)
    X[problem.n - 30:] *= -1.0                   # owner 2's rows
    other = dpsolve.Problem(X, problem.y, "logistic", radius=1.0, reg=problem.reg)
    other_owners = dpsolve.Parties.from_sizes(other, [40, 50, 30])
    a = dpsolve.joint_sgd(problem, owners, sigma=1.0, delta=1e-3, steps=1, rng=3)
    b = dpsolve.joint_sgd(other, other_owners, sigma=1.0, delta=1e-3, steps=1, rng=3)
    first = joint._schedule(3, 1, "balanced", np.random.default_rng(3).spawn(3)[0])[0]
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


def test_seed_noise_is_reported_with_what_it_gives():
    problem, owners = _binary()
    with pytest.warns(PrivacyWarning, match="above the claimed"):
        fit = dpsolve.joint_sgd(problem, owners, 1.0, 1e-4, steps=3000, calibration="paper",
                                rng=0)
    assert fit.sigma == pytest.approx(math.sqrt(3000 * math.log(1e4)) / 120, rel=1e-12)
    assert fit.privacy.certified_epsilon > 1.0
    # the seed's own (unsound) record-level reading claims far less
    assert fit.settings["seed_record_level_epsilon"] < fit.privacy.certified_epsilon


def test_full_dp_is_record_level():
    problem, owners = _binary()
    fit = joint.collaboration_full_dp(problem, owners, 1.0, 1e-4, steps=600, rng=0)
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
        model = joint.JointModel(joint._ball(u, 1.0), np.stack([joint._ball(v, 1.0) for v in x]),
                                 ref.model.personal_columns)
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
    value = bounds.joint_sgd_bound(problem, owners, 1.0, 1e-4)
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
