"""Private Frank-Wolfe over the l1 ball (Talwar-Thakurta-Zhang 2015): what is specific to it.

The common checks (tests/test_common_checks.py) run it on its example; its sensitivity is
checked in tests/test_sensitivity.py and its neighbours' metadata in
tests/test_neighbour_metadata.py.
"""
import math

import numpy as np
import pytest
from scipy import sparse, stats

import dpsolve
from dpsolve import Problem
from dpsolve._kernels import frank_wolfe as _kernel
from dpsolve._kernels import threads
from dpsolve.bounds import l1_erm_lower_bound
from dpsolve.privacy import BudgetAccountant, BudgetExceededError, zcdp_to_dp
from dpsolve.privacy.accounting import BoundedRangeDpEvent
from dpsolve.solvers.frank_wolfe import (default_steps, frank_wolfe_bound, step_epsilon)

SEED = 20261128
UNIT = np.finfo(float).eps / 2.0


def _data(n=120, p=15, seed=SEED, density=0.5):
    """Rows in the l-inf ball of radius 1 with about half their entries 0, labels from a sparse
    linear model."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, p)) * (rng.random((n, p)) < density)
    w = np.zeros(p)
    w[:3] = (2.0, -1.5, 1.0)
    y = np.where(X @ w + 0.3 * rng.standard_normal(n) > 0.0, 1.0, -1.0)
    return X, y


def _problem(X=None, y=None, loss="logistic", radius=2.0, **options):
    if X is None:
        X, y = _data()
    return Problem(X, y, loss, constraint="l1", radius=radius, **options)


def numpy_frank_wolfe(problem, steps):
    """Plain (non-private) Frank-Wolfe over the l1 ball in NumPy: the exact linear minimiser
    ``-R sign(g_j) e_j``, ``j = argmax |g_j|``, and the kernel's update order, so that the same
    choices give the same bits."""
    R = problem.radius
    theta = np.zeros(problem.p)
    for t in range(steps):
        g = problem.gradient(theta)
        j = int(np.argmax(np.abs(g)))
        mu = 2.0 / (t + 2.0)
        step = -(mu * R) if g[j] > 0.0 else mu * R
        theta = (1.0 - mu) * theta
        theta[j] = theta[j] + step
    return theta


def test_noise_free_limit_is_plain_frank_wolfe():
    """At epsilon = 1e12 the Gumbel noise (of scale 2 Delta / epsilon_0) is far below the gaps
    between the scores: the choices, hence the iterates (the same float operations), are plain
    Frank-Wolfe's, bit for bit."""
    problem = _problem(reg=0.01)
    fit = dpsolve.frank_wolfe(problem, 1e12, steps=40, rng=SEED)
    expected = numpy_frank_wolfe(problem, 40)
    # the margin this needs: the best two scores differ by far more than the noise at every step
    assert fit.noise["gumbel"] * 60.0 < 1e-6
    assert np.array_equal(fit.theta, expected)


def test_dense_csr_and_float32_give_the_same_bits():
    X, y = _data()
    fits = [dpsolve.frank_wolfe(_problem(A, y), 1.0, 1e-6, steps=25, rng=SEED).theta
            for A in (X, sparse.csr_array(X), X.astype(np.float32))]
    # the float32 copy holds other values: compared with the float64 copy of itself
    X32 = X.astype(np.float32).astype(np.float64)
    fits.append(dpsolve.frank_wolfe(_problem(X32, y), 1.0, 1e-6, steps=25, rng=SEED).theta)
    assert np.array_equal(fits[0], fits[1])
    assert np.array_equal(fits[2], fits[3])


def test_thread_counts_give_the_same_bits():
    """Enough stored entries (n p = 2.5e5) for the kernel to run its loops on two threads."""
    X, y = _data(n=500, p=500, density=1.0)
    problem = _problem(X, y)
    before = threads.max_threads()
    try:
        out = []
        for count in (1, 2, 3):
            threads.set_num_threads(count)
            out.append(dpsolve.frank_wolfe(problem, 1.0, 1e-6, steps=4, rng=SEED).theta)
    finally:
        threads.set_num_threads(before)
    assert np.array_equal(out[0], out[1]) and np.array_equal(out[0], out[2])


def test_the_same_seed_gives_the_same_bits_and_another_seed_another_draw():
    problem = _problem()
    a, b, c = (dpsolve.frank_wolfe(problem, 1.0, 1e-6, steps=30, rng=s).theta
               for s in (SEED, SEED, SEED + 1))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("radius", [0.3, 2.0, 50.0])
def test_every_iterate_is_in_the_l1_ball(radius):
    """Every iterate is a convex combination of vertices. The run with ``steps = T`` draws the
    same variables as the first T steps of a longer one, so its output is that run's T-th
    iterate. ``||theta_t||_1`` in floating point: each of the t updates rounds every entry by
    at most one unit roundoff relative (a product, and one sum for the chosen entry), so
    ``||theta_t||_1 <= R (1 + 3 t u)`` bounds it, with the sum's own rounding inside."""
    problem = _problem(radius=radius)
    for steps in (1, 2, 5, 17, 60):
        theta = dpsolve.frank_wolfe(problem, 2.0, 1e-6, steps=steps, rng=SEED).theta
        assert math.fsum(np.abs(theta)) <= radius * (1.0 + 3.0 * steps * UNIT)
        assert np.count_nonzero(theta) <= steps       # one vertex per step


def _gumbel_max_reference(grad, weight, generator):
    """The exponential mechanism as the kernel draws it, in NumPy: u = (-w g_0, w g_0, -w g_1,
    ...), G = rng.gumbel(size=2p), the first argmax of u + G."""
    u = np.empty(2 * grad.size)
    u[0::2] = -(weight * grad)
    u[1::2] = weight * grad
    return int(np.argmax(u + generator.gumbel(size=u.size)))


def _one_step(problem, weight, generator):
    """The kernel's first step at theta_0 = 0; returns (chosen vertex, the gradient it used)."""
    n, p = problem.n, problem.p
    theta, grad, chosen = np.zeros(p), np.empty(p), np.empty(1, dtype=np.intp)
    _kernel.private_frank_wolfe(np.ascontiguousarray(problem.X.T), problem.y,
                                problem.loss_object.kernel_id, 0.0,
                                problem.radius, problem.radius * problem.row_norm,
                                problem.reg, weight, 1, theta, np.zeros(n),
                                np.empty(n), grad, np.empty(2 * p), chosen, generator)
    return int(chosen[0]), grad


def test_the_kernel_draws_the_gumbel_variables_numpy_draws():
    problem = _problem()
    for seed in range(20):
        k, grad = _one_step(problem, 3.0, np.random.default_rng(seed))
        assert k == _gumbel_max_reference(grad, 3.0, np.random.default_rng(seed))
        # the gradient is the Problem's at 0 (one ordered sum per column: the values agree
        # within the rounding of an n-term sum, gamma(n) times sum |x_ij r_i| / n <= 1)
        assert np.max(np.abs(grad - problem.gradient(np.zeros(problem.p)))) <= \
            2.0 * problem.n * UNIT


def test_the_choice_follows_the_exponential_mechanism():
    """20000 choices at theta_0 = 0 against the exact probabilities
    ``softmax(-weight <v, g> / R)`` over the 2p vertices: a chi-square goodness-of-fit test at
    false-alarm rate 1e-3 (the seeds are fixed, so the outcome is too; a wrong sampler, such
    as one with the sign of the utility flipped or the weight halved, fails it by far)."""
    X, y = _data(n=40, p=3)
    problem = _problem(X, y)
    weight = 8.0
    grad = _one_step(problem, weight, np.random.default_rng(0))[1]
    u = np.empty(2 * problem.p)
    u[0::2], u[1::2] = -weight * grad, weight * grad
    prob = np.exp(u - u.max())
    prob /= prob.sum()
    draws = 20000
    assert draws * prob.min() >= 5.0          # the chi-square approximation holds
    generator = np.random.default_rng(SEED)
    counts = np.bincount([_one_step(problem, weight, generator)[0] for _ in range(draws)],
                         minlength=prob.size)
    statistic = float(np.sum((counts - draws * prob) ** 2 / (draws * prob)))
    assert statistic <= stats.chi2.ppf(1.0 - 1e-3, prob.size - 1), (counts, draws * prob)


def test_step_epsilon_meets_the_target_exactly():
    for steps in (1, 7, 100, 5000):
        pure = float(step_epsilon(0.7, None, steps))
        assert pure * steps <= 0.7 and pure * steps >= 0.7 * (1 - 1e-13)
        eps0 = float(step_epsilon(0.7, 1e-6, steps))
        zcdp = zcdp_to_dp(steps * eps0 * eps0 / 8.0, 1e-6)
        assert min(zcdp, eps0 * steps) <= 0.7
        assert max(min(zcdp, eps0 * steps), 0.0) >= 0.7 * (1 - 1e-12)


def test_the_event_is_the_composed_exponential_mechanisms_and_the_budget_records_it():
    problem = _problem()
    fit = dpsolve.frank_wolfe(problem, 1.0, 1e-6, steps=200, rng=SEED)
    eps0 = fit.settings["step_epsilon"]
    assert fit.dp_event.count == 200 and fit.dp_event.event == BoundedRangeDpEvent(eps0)
    assert fit.privacy.holds and fit.privacy.method == "zcdp"
    # zCDP's epsilon_0 is above basic composition's epsilon / T here
    assert eps0 > 1.0 / 200
    pure = dpsolve.frank_wolfe(problem, 1.0, steps=200, rng=SEED)
    assert pure.privacy.delta == 0.0 and pure.settings["step_epsilon"] * 200 <= 1.0
    budget = BudgetAccountant(1.3, 1e-6)     # two fits compose to 1.42
    dpsolve.frank_wolfe(problem, 1.0, 1e-6, steps=200, rng=SEED, accountant=budget)
    with pytest.raises(BudgetExceededError):
        dpsolve.frank_wolfe(problem, 1.0, 1e-6, steps=200, rng=SEED, accountant=budget)


def test_other_constraints_and_losses_are_refused():
    X, y = _data()
    with pytest.raises(ValueError, match="constraint"):
        dpsolve.frank_wolfe(Problem(X, y, "logistic", radius=1.0), 1.0, 1e-6)
    with pytest.raises(ValueError, match="hinge"):
        dpsolve.frank_wolfe(_problem(X, y, "hinge"), 1.0, 1e-6)


def test_default_steps_minimise_the_bound_from_public_constants():
    problem = _problem()
    grid = np.arange(1, 10001)
    values = frank_wolfe_bound(problem, 1.0, 1e-6, steps=grid)
    steps = default_steps(problem, 1.0, 1e-6)
    assert values[steps - 1] <= 1.1 * values.min()
    assert values[: steps - 1].min() > 1.1 * values.min()
    assert dpsolve.frank_wolfe(problem, 1.0, 1e-6, rng=SEED).steps == steps
    # the same n, p and constants on other data: the same T
    X, y = _data(seed=SEED + 5)
    assert default_steps(_problem(X, y), 1.0, 1e-6) == steps


def test_bound_terms():
    """The bound's two terms, by hand: 2 Gamma / (T + 2) with Gamma = (2R)^2 (beta + lambda),
    and (2 Delta / epsilon_0) ln(2p) with Delta = 2 R L / n."""
    problem = _problem(reg=0.1)
    R, n, p = problem.radius, problem.n, problem.p
    gamma = (2 * R) ** 2 * (0.25 + 0.1)              # logistic: beta = B^2 / 4, B = 1
    eps0 = float(step_epsilon(1.0, 1e-6, 30))
    expected = 2 * gamma / 32 + 2 * (2 * R * 1.0 / n) / eps0 * math.log(2 * p)
    assert math.isclose(frank_wolfe_bound(problem, 1.0, 1e-6, steps=30), expected,
                        rel_tol=1e-12)


@pytest.mark.slow
def test_measured_excess_risk_is_below_the_bound():
    """The mean excess risk of 40 fits at the default T against the bound on its expectation.
    The excess of one fit lies in [0, 2 R L] (F is L-Lipschitz in l1 on a set of l1 diameter
    2R), so by Hoeffding the mean exceeds its expectation by more than
    ``2 R L sqrt(ln(1/alpha) / (2 K))`` with probability at most alpha = 1e-3; the test checks
    the mean minus that margin against the bound."""
    X, y = _data(n=2000, p=200, density=0.3)
    problem = _problem(X, y, radius=3.0)
    reference = dpsolve.reference_minimizer(problem, cache=False)     # certified over the l1 ball
    lower = reference.value - reference.gap
    assert reference.gap < 1e-8
    fits = [dpsolve.frank_wolfe(problem, 1.0, 1e-6, rng=SEED + k) for k in range(40)]
    excess = np.array([problem.objective(f.theta) - lower for f in fits])
    margin = 2 * problem.radius * problem.lipschitz * math.sqrt(math.log(1e3) / (2 * 40))
    bound = frank_wolfe_bound(problem, 1.0, 1e-6, steps=fits[0].steps)
    assert excess.mean() - margin <= bound
    # the lower bound (constant 1) is a scaling below the upper one
    assert l1_erm_lower_bound(problem, 1.0) < bound


def test_the_sweeps_compare_l1_runs_with_the_l1_lower_bound():
    """A sweep's run over the l1 ball reports Talwar-Thakurta-Zhang 2015's lower bound, not the
    l2 ball's (whose sqrt(p) would not apply to rows bounded in l-inf)."""
    from dpsolve.experiments.runs import _bounds
    from dpsolve.solvers import get, plan_fit
    problem = _problem()
    spec = get("frank_wolfe")
    plan = plan_fit(spec, problem, None, 1.0, 1e-6, steps=10)
    upper, _, lower = _bounds(problem, spec, plan)
    assert lower == l1_erm_lower_bound(problem, 1.0)
    assert upper == frank_wolfe_bound(problem, 1.0, 1e-6, steps=10)
    assert _bounds(_problem(reg=0.1), spec, plan_fit(spec, _problem(reg=0.1), None, 1.0,
                                                         1e-6, steps=10))[2] is None


def test_the_kernel_clips_margins_to_the_bound_the_sensitivity_assumes():
    """The scores' sensitivity 2RL/n needs |loss'(z)| <= L on |z| <= R B. The kernel keeps z
    by updates, which rounding can push past R B; it clips z there first. Here z starts out of
    range on purpose (the kernel's contract is z = 0): squared loss, whose derivative z - y
    grows with z, gives the gradient at the clipped margins, not at the given ones."""
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    y = np.zeros(3)
    theta, grad, chosen = np.zeros(2), np.empty(2), np.empty(1, dtype=np.intp)
    z = np.array([5.0, -5.0, 0.25])
    bound = 0.5
    _kernel.private_frank_wolfe(np.ascontiguousarray(X.T), y,
                                dpsolve.losses.make_loss("squared").kernel_id, 0.0, 0.5, bound,
                                0.0, 1.0, 1, theta, z, np.empty(3), grad, np.empty(4), chosen,
                                np.random.default_rng(0))
    clipped = np.array([0.5, -0.5, 0.25])
    np.testing.assert_array_equal(grad, X.T @ clipped / 3)
