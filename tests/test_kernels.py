"""Kernels: loss derivatives, projection, and the SGD1 loop against a step-by-step reference."""
import math
import re

import numpy as np
import pytest
from scipy import stats

from dpsolve._kernels import gd, joint, losses, minibatch, sgd, threads, vector
from dpsolve._kernels.stream import Stream

KINDS = losses.LOSS_KINDS
# huber_hinge width used below (not a power of two, so that 1 +- WIDTH is rounded); the
# other losses ignore the width argument.
WIDTH = 0.7


def numpy_loss(name, z, y, h=WIDTH):
    if name == "logistic":
        return np.logaddexp(0.0, -y * z)
    if name == "hinge":
        return np.maximum(0.0, 1.0 - y * z)
    if name == "huber_hinge":   # CMS 2011, with u = 1 - yz
        u = 1.0 - y * z
        return np.where(u > h, u, np.where(u < -h, 0.0, (u + h) ** 2 / (4 * h)))
    return 0.5 * (z - y) ** 2


def numpy_dloss(name, z, y, h=WIDTH):
    if name == "logistic":
        return -y / (1.0 + np.exp(y * z))
    if name == "hinge":
        return np.where(y * z < 1.0, -y, 0.0)
    if name == "huber_hinge":
        return -y * np.clip((1.0 - y * z + h) / (2 * h), 0.0, 1.0)
    return z - y


def numpy_d2loss(name, z, y, h=WIDTH):
    if name == "logistic":
        s = 1.0 / (1.0 + np.exp(-y * z))
        return s * (1.0 - s)
    if name == "hinge":
        return np.zeros_like(z)
    if name == "huber_hinge":
        return np.where(np.abs(1.0 - y * z) <= h, 1.0 / (2 * h), 0.0)
    return np.ones_like(z)


def _margins(name, rng, size=2000):
    z = rng.uniform(-30, 30, size)
    y = rng.choice([-1.0, 1.0], size) if name != "squared" else rng.uniform(-1, 1, size)
    if name == "huber_hinge":   # half of the margins around the quadratic piece and its joins
        z[::2] = y[::2] * rng.uniform(1 - 2 * WIDTH, 1 + 2 * WIDTH, size // 2)
    return z, y


@pytest.mark.parametrize("name", sorted(KINDS))
def test_losses_match_numpy(name):
    z, y = _margins(name, np.random.default_rng(1))
    np.testing.assert_allclose(losses.loss_values(KINDS[name], z, y, WIDTH), numpy_loss(name, z, y),
                               rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(losses.loss_derivatives(KINDS[name], z, y, WIDTH),
                               numpy_dloss(name, z, y), rtol=1e-13, atol=1e-300)
    # (the logistic reference 1 - s loses relative accuracy where s -> 1)
    np.testing.assert_allclose(losses.loss_second_derivatives(KINDS[name], z, y, WIDTH),
                               numpy_d2loss(name, z, y), rtol=1e-13,
                               atol=1e-15 if name == "logistic" else 1e-300)


@pytest.mark.parametrize("name", sorted(set(KINDS) - {"huber_hinge"}))
def test_other_losses_ignore_the_width(name):
    z, y = _margins(name, np.random.default_rng(6))
    for f in (losses.loss_values, losses.loss_derivatives, losses.loss_second_derivatives):
        ref = f(KINDS[name], z, y, WIDTH)
        for h in (0.0, -1.0, math.nan, math.inf):
            assert np.array_equal(f(KINDS[name], z, y, h), ref)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_derivatives_match_finite_differences(name):
    z, y = _margins(name, np.random.default_rng(2))
    if name == "hinge":   # stay away from the kink, where there is no derivative
        keep = np.abs(1.0 - y * z) > 1e-3
        z, y = z[keep], y[keep]
    if name == "huber_hinge":   # and from the joins, where the second derivative jumps
        keep = np.abs(np.abs(1.0 - y * z) - WIDTH) > 1e-3
        z, y = z[keep], y[keep]
    h = 1e-6
    kind = KINDS[name]
    eps = np.finfo(float).eps

    def fd_tolerance(f, df, z):
        # truncation h^2/6 max|third derivative| (<= h^2/6 here) plus rounding: f(z +- h) is off
        # by eps |f| and, since z +- h is itself rounded, by eps |z| |f'|; both divided by 2h.
        return h * h / 6 + 2 * eps * (np.abs(f) + np.abs(z) * np.abs(df) + 1) / (2 * h)

    def f(z, order=0):
        return (losses.loss_values, losses.loss_derivatives,
                losses.loss_second_derivatives)[order](kind, z, y, WIDTH)

    value, d1 = f(z), f(z, 1)
    fd = (f(z + h) - f(z - h)) / (2 * h)
    assert np.all(np.abs(fd - d1) <= fd_tolerance(value, d1, z))
    if name != "hinge":
        d2 = f(z, 2)
        fd2 = (f(z + h, 1) - f(z - h, 1)) / (2 * h)
        assert np.all(np.abs(fd2 - d2) <= fd_tolerance(d1, d2, z))


def test_logistic_is_stable_at_extreme_margins():
    z = np.array([-800.0, 800.0, 0.0])
    y = np.ones(3)
    kind = KINDS["logistic"]
    assert np.all(np.isfinite(losses.loss_values(kind, z, y, WIDTH)))
    np.testing.assert_allclose(losses.loss_values(kind, z, y, WIDTH), [800.0, 0.0, math.log(2.0)])
    np.testing.assert_allclose(losses.loss_derivatives(kind, z, y, WIDTH), [-1.0, 0.0, -0.5])


# -- huber_hinge (Chaudhuri-Monteleoni-Sarwate 2011) ----------------------------------------------
HUBER = KINDS["huber_hinge"]
EPS = np.finfo(float).eps


@pytest.mark.parametrize("h", [0.5, 0.3, 1e-3, 2.0])
@pytest.mark.parametrize("label", [1.0, -1.0])
def test_huber_hinge_is_continuously_differentiable_at_the_joins(h, label):
    """At the joins yz = 1 -+ h the value and the derivative have no jump: on both sides of a
    join, within t of it, they differ by at most t |loss'| <= t and t |loss''| <= t / (2h)
    (plus rounding). Their values there are h, -y (yz = 1 - h) and 0, 0 (yz = 1 + h)."""
    for m_join, value, slope in [(1.0 - h, h, -label), (1.0 + h, 0.0, 0.0)]:
        for t in (1e-12, 1e-9, 1e-6, 1e-3):
            z = label * np.array([m_join - t, m_join + t])
            y = np.full(2, label)
            v = losses.loss_values(HUBER, z, y, h)
            d = losses.loss_derivatives(HUBER, z, y, h)
            dist = abs(z[1] - z[0])                    # 2t up to rounding
            rounding = 8 * EPS * (1.0 + h)
            assert abs(v[1] - v[0]) <= dist + rounding
            assert abs(d[1] - d[0]) <= dist / (2 * h) + rounding / h
            assert np.all(np.abs(v - value) <= t + rounding)
            assert np.all(np.abs(d - slope) <= t / (2 * h) + rounding / h)
    # the second derivative jumps there: 1/(2h) on the closed middle piece, 0 outside
    m = np.array([1.0 - 2 * h, 1.0 - 0.5 * h, 1.0, 1.0 + 0.5 * h, 1.0 + 2 * h])
    d2 = losses.loss_second_derivatives(HUBER, label * m, np.full(5, label), h)
    assert d2.tolist() == [0.0, 1.0 / (2 * h), 1.0 / (2 * h), 1.0 / (2 * h), 0.0]


def test_huber_hinge_approaches_hinge_as_the_width_shrinks():
    """0 <= huber_h - hinge <= h/4, with equality h/4 at yz = 1; the derivatives agree outside
    the quadratic piece and differ by at most 1 inside it; |loss'| <= 1 always."""
    rng = np.random.default_rng(8)
    y = rng.choice([-1.0, 1.0], 4000)
    m = np.concatenate([rng.uniform(-3, 5, 2000), 1.0 + rng.uniform(-1e-3, 1e-3, 2000)])
    z = y * m
    hinge = losses.loss_values(KINDS["hinge"], z, y, 0.0)
    dhinge = losses.loss_derivatives(KINDS["hinge"], z, y, 0.0)
    previous = math.inf
    for h in (1.0, 1e-1, 1e-2, 1e-4, 1e-6, 1e-8):
        v = losses.loss_values(HUBER, z, y, h)
        d = losses.loss_derivatives(HUBER, z, y, h)
        rounding = 4 * EPS * (1.0 + np.abs(m))            # in 1 - yz and the pieces
        diff = v - hinge
        assert np.all(diff >= -rounding) and np.all(diff <= h / 4 + rounding)
        assert np.all(np.abs(d) <= 1.0)
        outside = np.abs(1.0 - m) > h
        assert np.array_equal(d[outside], dhinge[outside])
        assert np.max(np.abs(diff)) < previous            # converges monotonically in h
        previous = np.max(np.abs(diff))
        at_one = losses.loss_values(HUBER, np.array([1.0, -1.0]), np.array([1.0, -1.0]), h)
        np.testing.assert_allclose(at_one, h / 4, rtol=4 * EPS)
    assert previous <= 1e-8 / 4 + 1e-14


def _margin_kernel_calls(kind, h):
    """name -> one call of that entry point on a tiny problem, with loss ``kind`` and width h."""
    X, y, z = np.full((3, 2), 0.5), np.ones(3), np.zeros(3)

    def intp(*values):
        return np.array(values, dtype=np.intp)

    return {
        "loss_values": lambda: losses.loss_values(kind, z, y, h),
        "loss_derivatives": lambda: losses.loss_derivatives(kind, z, y, h),
        "loss_second_derivatives": lambda: losses.loss_second_derivatives(kind, z, y, h),
        "sgd": lambda: sgd.noisy_sgd_steps(X, y, kind, h, np.zeros(2), 1, 2, 0.0,
                                           sgd.SCHEDULES["inv_sqrt"], 0.1, 0.0, 1.0, *streams(0)),
        "gd": lambda: gd.clipped_gradient_sum(X, y, kind, h, np.zeros(2), np.ones(3), 1.0,
                                              np.empty(2), np.empty((64, 2))),
        "minibatch": lambda: minibatch.minibatch_sgd_pass(
            X, y, kind, h, np.zeros(2), intp(0, 1, 2), 2, 0.0, minibatch.SCHEDULES["inv_sqrt"],
            0.1, 0.0, 1.0, np.random.default_rng(0)),
        "joint": lambda: joint.joint_sgd_steps(
            X, y, kind, h, 1, intp(0), np.zeros(2), np.zeros((1, 1)), intp(0), intp(1), 0.0, 0.1,
            0.0, 1.0, 1.0, np.random.default_rng(0), np.zeros(2), np.zeros((1, 1)), intp(0), 0,
            np.zeros(1), np.zeros(1)),
    }


@pytest.mark.parametrize("kernel", sorted(_margin_kernel_calls(0, 0.0)))
@pytest.mark.parametrize("h", [0.0, -0.5, math.nan, math.inf])
def test_huber_hinge_width_is_checked_by_every_kernel(kernel, h):
    with pytest.raises(ValueError, match=re.escape(
            f"huber_hinge needs a finite width h > 0, got {h!r}")):
        _margin_kernel_calls(HUBER, h)[kernel]()
    # the same call goes through with a good width, and for a loss that ignores the width: it
    # was the width that was refused
    _margin_kernel_calls(HUBER, WIDTH)[kernel]()
    _margin_kernel_calls(KINDS["hinge"], h)[kernel]()


def test_projection():
    rng = np.random.default_rng(3)
    for _ in range(100):
        v = rng.standard_normal(7) * rng.uniform(0.1, 10)
        r = rng.uniform(0.5, 3)
        out = vector.project_l2_ball(v, r)
        expected = v if np.linalg.norm(v) <= r else v * r / np.linalg.norm(v)
        np.testing.assert_allclose(out, expected, rtol=1e-15)
        assert np.linalg.norm(out) <= r * (1 + 4e-16)
    v = np.array([3.0, 4.0])
    vector.project_l2_ball(v, 1.0)
    assert v.tolist() == [3.0, 4.0]   # input untouched


# -- the SGD1 loop ------------------------------------------------------------------------------
def streams(seed):
    """(index stream, noise stream), as dpsolve.noisy_sgd seeds them."""
    g = np.random.default_rng(seed)
    return Stream.from_generator(g), Stream.from_generator(g)


def python_dloss(name, z, y):
    """The same formulas as _kernels/_loss.pxd, evaluated by Python's floats (same libm)."""
    if name == "logistic":
        m = y * z
        if m > 0.0:
            e = math.exp(-m)
            return -y * e / (1.0 + e)
        return -y / (1.0 + math.exp(m))
    if name == "hinge":
        return -y if y * z < 1.0 else 0.0
    if name == "huber_hinge":
        m = 1.0 - y * z
        if m > WIDTH:
            return -y
        if m < -WIDTH:
            return 0.0
        return -y * ((m + WIDTH) / (2.0 * WIDTH))
    return z - y


def sgd1_reference(X, y, name, steps, sigma, schedule, eta0, reg, radius, indices, noise):
    """SGD1 (Bassily, Smith & Thakurta 2014), one step at a time, in the kernel's order of
    floating-point operations."""
    n, p = X.shape
    th = [0.0] * p
    for t in range(1, steps + 1):
        i = indices.integers(n)
        z = 0.0
        for j in range(p):
            z += X[i, j] * th[j]
        g = n * python_dloss(name, z, y[i])
        eta = eta0 / math.sqrt(t) if schedule == "inv_sqrt" else eta0 / t
        sq = 0.0
        for j in range(p):
            step = g * X[i, j] + n * reg * th[j]
            if sigma > 0.0:
                step = step + sigma * noise.standard_normal()
            th[j] = th[j] - eta * step
            sq += th[j] * th[j]
        if sq > radius * radius:
            c = radius / math.sqrt(sq)
            th = [v * c for v in th]
    return np.array(th)


@pytest.mark.parametrize("name", sorted(KINDS))
@pytest.mark.parametrize("sigma", [0.0, 2.5])
@pytest.mark.parametrize("schedule,reg,radius", [("inv_sqrt", 0.0, 0.7), ("inv", 0.3, math.inf)])
def test_sgd_loop_equals_step_by_step_reference(name, sigma, schedule, reg, radius):
    rng = np.random.default_rng(4)
    n, p, steps = 37, 6, 400
    X = rng.standard_normal((n, p))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = rng.choice([-1.0, 1.0], n) if name != "squared" else rng.uniform(-1, 1, n)
    eta0 = 0.05 if schedule == "inv_sqrt" else 1.0 / (max(reg, 1e-3) * n)
    theta = np.zeros(p)
    kernel, ref = streams(99), streams(99)
    assert sgd.noisy_sgd_steps(X, y, KINDS[name], WIDTH, theta, 1, steps + 1, sigma,
                               sgd.SCHEDULES[schedule], eta0, reg, radius, *kernel)
    expected = sgd1_reference(X, y, name, steps, sigma, schedule, eta0, reg, radius, *ref)
    assert np.array_equal(theta, expected)          # bit for bit
    for a, b in zip(kernel, ref):                   # both consumed exactly the same streams
        assert np.array_equal(a.state, b.state)
    assert np.any(theta != 0.0)


def test_sgd_loop_split_into_chunks_is_identical():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((20, 4)) / 3
    y = rng.choice([-1.0, 1.0], 20)
    whole, parts = np.zeros(4), np.zeros(4)
    sgd.noisy_sgd_steps(X, y, 0, 0.0, whole, 1, 301, 1.0, 0, 0.1, 0.0, 1.0, *streams(7))
    s = streams(7)
    for a, b in [(1, 50), (50, 51), (51, 301)]:
        sgd.noisy_sgd_steps(X, y, 0, 0.0, parts, a, b, 1.0, 0, 0.1, 0.0, 1.0, *s)
    assert np.array_equal(whole, parts)


@pytest.mark.parametrize("p,steps", [(3, 20_000), (50, 1_000), (7000, 5)])
def test_sgd_noise_drawn_ahead_on_a_second_core_is_bit_identical(p, steps):
    """With two threads the noise is drawn a block ahead on the second core (several blocks
    here, the last one partial; at p = 7000 a block is 2 steps); with one thread it is drawn
    inline. Same theta, same final stream states, same draw counts, and the same as the
    step-by-step reference."""
    rng = np.random.default_rng(6)
    n = 40
    X = rng.standard_normal((n, p)) / math.sqrt(p)
    y = rng.choice([-1.0, 1.0], n)
    results = []
    before = threads.max_threads()
    try:
        for count in (1, 2):
            threads.set_num_threads(count)
            assert threads.max_threads() == count
            theta, counts, s = np.zeros(p), np.zeros(n, dtype=np.intp), streams(8)
            assert sgd.noisy_sgd_steps(X, y, 0, 0.0, theta, 1, steps + 1, 3.0, 0, 0.02, 0.1, 0.9,
                                       *s, counts)
            results.append((theta, counts, [a.state.copy() for a in s]))
    finally:
        threads.set_num_threads(before)
    (t1, c1, s1), (t2, c2, s2) = results
    assert np.array_equal(t1, t2) and np.array_equal(c1, c2)
    assert all(np.array_equal(a, b) for a, b in zip(s1, s2))
    assert c1.sum() == steps
    if p * steps <= 100_000:        # the Python reference is slow
        expected = sgd1_reference(X, y, "logistic", steps, 3.0, "inv_sqrt", 0.02, 0.1, 0.9,
                                  *streams(8))
        assert np.array_equal(t1, expected)


def test_sgd_streams_must_be_two():
    X, y = np.full((3, 2), 0.5), np.ones(3)
    s = Stream.from_generator(np.random.default_rng(0))
    with pytest.raises(ValueError, match="two different Streams"):
        sgd.noisy_sgd_steps(X, y, 0, 0.0, np.zeros(2), 1, 2, 1.0, 0, 0.1, 0.0, 1.0, s, s)


def test_one_schedule_enum_for_every_kernel():
    """A schedule's integer is the same in every kernel that supports it (Python code passes
    integers looked up in one kernel's SCHEDULES, tests sometimes in another's)."""
    assert set(minibatch.SCHEDULES) == {"inv_sqrt", "constant", "inv"}
    assert set(sgd.SCHEDULES) == {"inv_sqrt", "inv"}
    assert sgd.SCHEDULES.items() <= minibatch.SCHEDULES.items()
    assert len(set(minibatch.SCHEDULES.values())) == 3


@pytest.mark.parametrize("schedule", [minibatch.SCHEDULES["constant"], -1, 3])
def test_kernels_refuse_a_schedule_they_do_not_have(schedule):
    """SGD1 has no constant schedule; an unknown integer must not silently mean some schedule."""
    X, y = np.full((3, 2), 0.5), np.ones(3)
    with pytest.raises(ValueError, match="schedule must be one of"):
        sgd.noisy_sgd_steps(X, y, 0, 0.0, np.zeros(2), 1, 2, 0.0, schedule, 0.1, 0.0, 1.0,
                            *streams(0))
    if schedule not in minibatch.SCHEDULES.values():
        with pytest.raises(ValueError, match="schedule must be one of"):
            minibatch.minibatch_sgd_pass(X, y, 0, 0.0, np.zeros(2), np.arange(3, dtype=np.intp),
                                         2, 0.0, schedule, 0.1, 0.0, 1.0,
                                         np.random.default_rng(0))


def test_sgd_noise_moments():
    """With zero features the first step is theta_1 = -eta sigma xi: test xi ~ N(0, I_p)."""
    p, sigma = 200_000, 3.0
    theta = np.zeros(p)
    sgd.noisy_sgd_steps(np.zeros((1, p)), np.ones(1), 0, 0.0, theta, 1, 2, sigma, 0, 1.0, 0.0,
                        math.inf, *streams(11))
    xi = -theta / sigma
    # 5-sigma bands of the sample moments of N = p standard normals
    assert abs(xi.mean()) < 5 / math.sqrt(p)
    assert abs(xi.var() - 1.0) < 5 * math.sqrt(2.0 / p)
    assert abs(stats.skew(xi)) < 5 * math.sqrt(6.0 / p)
    assert abs(stats.kurtosis(xi)) < 5 * math.sqrt(24.0 / p)
    # Kolmogorov-Smirnov: reject at level 1e-6 only (DKW bound sqrt(ln(2/alpha) / (2N)))
    assert stats.kstest(xi, "norm").statistic < math.sqrt(math.log(2 / 1e-6) / (2 * p))


def test_sgd_index_draws_are_uniform():
    """One-hot rows, hinge with y = +1 and tiny steps (margins stay below the kink, so
    loss' = -1): step t adds exactly eta0 n / t to the coordinate of the drawn row."""
    n, steps, eta0 = 10, 100_000, 1e-6
    theta = np.zeros(n)
    sgd.noisy_sgd_steps(np.eye(n), np.ones(n), KINDS["hinge"], 0.0, theta, 1, steps + 1, 0.0,
                        sgd.SCHEDULES["inv"], eta0, 0.0, math.inf, *streams(12))
    idx = streams(12)[0].integers(n, size=steps)
    expected = np.zeros(n)
    np.add.at(expected, idx, eta0 * n / np.arange(1, steps + 1))
    np.testing.assert_allclose(theta, expected, rtol=1e-10)
    assert stats.chisquare(np.bincount(idx, minlength=n)).pvalue > 1e-6


# -- full-batch clipped gradient (DP-GD, Abadi et al. 2016; docs/clipped_gd.md) -------------------
def _clipped_sum_reference(X, y, name, theta, clip):
    """Python floats in the kernel's order: 64 fixed row blocks, rows summed in order within a
    block, block sums added in block order. IEEE doubles, so the result must agree bit for bit."""
    n, p = X.shape
    kind = KINDS[name]
    norms = np.linalg.norm(X, axis=1)
    out = [0.0] * p
    clipped = 0
    for b in range(64):
        acc = [0.0] * p
        for i in range(b * n // 64, (b + 1) * n // 64):
            z = 0.0
            for j in range(p):
                z += float(X[i, j]) * float(theta[j])
            d = float(losses.loss_derivatives(kind, np.array([z]), y[i:i + 1], WIDTH)[0])
            g = abs(d) * float(norms[i])
            if g > clip:
                d = d * (clip / g)
                clipped += 1
            if d != 0.0:
                for j in range(p):
                    acc[j] += d * float(X[i, j])
        for j in range(p):
            out[j] += acc[j]
    return np.array(out), clipped


@pytest.mark.parametrize("name", sorted(KINDS))
@pytest.mark.parametrize("clip", [0.05, math.inf])
def test_clipped_gradient_sum_matches_reference_bitwise(name, clip):
    from dpsolve._kernels import gd
    rng = np.random.default_rng(21)
    n, p = 300, 4
    X = rng.normal(size=(n, p)) / 2
    y = rng.choice([-1.0, 1.0], n) if name != "squared" else rng.uniform(-1, 1, n)
    theta = rng.normal(size=p)
    out, scratch = np.empty(p), np.empty((64, p))
    clipped = gd.clipped_gradient_sum(X, y, KINDS[name], WIDTH, theta, np.linalg.norm(X, axis=1),
                                      clip, out, scratch)
    expected, expected_clipped = _clipped_sum_reference(X, y, name, theta, clip)
    assert np.array_equal(out, expected)
    assert clipped == expected_clipped
    if clip == math.inf:    # unclipped: the plain gradient sum, up to summation order
        d = losses.loss_derivatives(KINDS[name], X @ theta, y, WIDTH)
        np.testing.assert_allclose(out, X.T @ d, rtol=1e-12, atol=1e-12)
    else:
        assert 0 < clipped


def assert_same_output_on_1_2_3_threads(code, tmp_path):
    """``python -c code`` prints the same non-empty output with OMP_NUM_THREADS 1, 2 and 3. Run
    outside the source tree, whose dpsolve/ has no compiled kernels after a regular install,
    with the directory of the dpsolve under test first on the path: otherwise another installed
    copy, e.g. an editable install of a different checkout, would be tested instead."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import dpsolve
    package_root = str(Path(dpsolve.__file__).resolve().parents[1])
    pythonpath = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
    outs = {t: subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, cwd=tmp_path,
                              env={**os.environ, "OMP_NUM_THREADS": t,
                                   "PYTHONPATH": pythonpath}).stdout
            for t in ("1", "2", "3")}
    assert outs["1"] == outs["2"] == outs["3"] != ""


@pytest.mark.slow
def test_clipped_gradient_sum_is_the_same_on_one_thread(tmp_path):
    """Fixed blocks make the result independent of the number of OpenMP threads."""
    code = (
        "import numpy as np; from dpsolve._kernels import gd\n"
        "r = np.random.default_rng(3); X = r.normal(size=(5000, 7)); y = r.choice([-1., 1.], 5000)\n"
        "o = np.empty(7); gd.clipped_gradient_sum(X, y, 0, 0.0, r.normal(size=7),"
        " np.linalg.norm(X, axis=1), 0.3, o, np.empty((64, 7))); print(o.tobytes().hex())"
    )
    assert_same_output_on_1_2_3_threads(code, tmp_path)


def test_set_num_threads_changes_the_threads_not_the_result():
    r = np.random.default_rng(4)
    X, y, theta = r.normal(size=(3000, 5)), r.choice([-1.0, 1.0], 3000), r.normal(size=5)
    norms = np.linalg.norm(X, axis=1)
    before = threads.max_threads()
    outs = []
    try:
        for count in (1, 2):
            threads.set_num_threads(count)
            # exactly 1 after asking for 1; 2 after asking for 2 unless built without OpenMP
            assert threads.max_threads() == 1 if count == 1 else threads.max_threads() in (1, 2)
            out = np.empty(5)
            gd.clipped_gradient_sum(X, y, 0, 0.0, theta, norms, 0.3, out, np.empty((64, 5)))
            outs.append(out.tobytes())
    finally:
        threads.set_num_threads(before)
    assert outs[0] == outs[1]
    with pytest.raises(ValueError, match="at least 1"):
        threads.set_num_threads(0)
    # the names gd had before the threads module, for code written against them
    assert (gd.set_num_threads, gd.max_threads) == (threads.set_num_threads,
                                                    threads.max_threads)


def test_clipped_gradient_sum_rejects_bad_shapes():
    from dpsolve._kernels import gd
    X = np.ones((10, 3))
    with pytest.raises(ValueError, match="scratch"):
        gd.clipped_gradient_sum(X, np.ones(10), 0, 0.0, np.zeros(3), np.ones(10), 1.0, np.empty(3),
                                np.empty((8, 3)))
    with pytest.raises(ValueError, match="shape mismatch"):
        gd.clipped_gradient_sum(X, np.ones(9), 0, 0.0, np.zeros(3), np.ones(10), 1.0, np.empty(3),
                                np.empty((64, 3)))
