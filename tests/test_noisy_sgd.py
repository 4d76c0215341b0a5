"""noisy_sgd (SGD1, Bassily, Smith & Thakurta 2014; docs/noisy_sgd.md): calibration, privacy
event, reproducibility, convergence, errors."""
import math

import dp_accounting
import numpy as np
import pytest

import dpsolve
from dpsolve import Problem, noisy_sgd, reference_minimizer
from dpsolve.solvers.noisy_sgd import noisy_sgd_paper_sigma
from dpsolve.privacy import PrivacyWarning, epsilon_of


def problem(loss="logistic", n=200, p=5, seed=0, **kw):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w = rng.standard_normal(p)
    y = np.sign(X @ w + 0.3 * rng.standard_normal(n)) if loss != "squared" else np.clip(X @ w, -1, 1)
    kw.setdefault("radius", 1.0)
    return Problem(X, y, loss, **kw)


def test_paper_sigma_is_equation_3():
    # sigma^2 = 16 L^2 n^2 ln^2(1.25 n^2 / delta) / eps^2 at n = 100, L = 2, eps = 0.5, delta = 1e-7
    expected = math.sqrt(16 * 4 * 100 ** 2 * math.log(1.25e4 / 1e-7) ** 2 / 0.25)
    assert noisy_sgd_paper_sigma(100, 2.0, 0.5, 1e-7) == pytest.approx(expected, rel=1e-14)
    P = problem(n=100)
    fit = noisy_sgd(P, 0.5, 1e-7, steps=10, rng=0)
    assert fit.sigma == noisy_sgd_paper_sigma(100, 1.0, 0.5, 1e-7)
    assert (fit.epsilon, fit.delta, fit.steps, fit.calibration) == (0.5, 1e-7, 10, "paper")
    assert fit.solver == "noisy_sgd" and "Bassily-Smith-Thakurta 2014" in fit.source
    assert fit.wall_time >= 0


@pytest.mark.slow
def test_default_steps_is_n_squared():
    P = problem(n=30)
    assert noisy_sgd(P, 0.9, 1e-6, rng=0).steps == 900


@pytest.mark.slow
def test_dp_event_describes_the_release():
    P = problem(n=100, row_norm=2.0)
    fit = noisy_sgd(P, 0.5, 1e-7, steps=1000, rng=0)
    event = fit.dp_event
    assert isinstance(event, dp_accounting.SelfComposedDpEvent) and event.count == 1000
    sampled = event.event
    assert isinstance(sampled, dp_accounting.SampledWithoutReplacementDpEvent)
    assert (sampled.source_dataset_size, sampled.sample_size) == (100, 1)
    # multiplier relative to the replace-one sensitivity 2 n L of G_t
    assert sampled.event.noise_multiplier == pytest.approx(fit.sigma / (2 * 100 * 2.0), rel=1e-15)


@pytest.mark.slow
def test_paper_noise_is_certified_far_below_the_claim():
    """docs/noisy_sgd.md: at n = 1000, eps = 0.5, delta ~ 1e-9, SGD1's noise (3) certifies
    ~0.08 under RDP with sampling without replacement."""
    P = problem(n=1000, p=3)
    fit = noisy_sgd(P, 0.5, 0.999e-9, steps=5, rng=0)    # steps=5: only the event is checked
    full = dp_accounting.SelfComposedDpEvent(fit.dp_event.event, 1000 ** 2)
    assert epsilon_of(full, 0.999e-9, "rdp") == pytest.approx(0.0821, abs=0.001)


@pytest.mark.slow
def test_explicit_sigma_reports_certified_epsilon():
    P = problem(n=100)
    fit = noisy_sgd(P, sigma=500.0, delta=1e-6, steps=2000, rng=0)
    assert fit.calibration == "explicit" and fit.sigma == 500.0
    assert 0 < fit.epsilon == fit.certified_epsilon() < math.inf
    more_noise = noisy_sgd(P, sigma=1000.0, delta=1e-6, steps=2000, rng=0)
    assert more_noise.epsilon < fit.epsilon
    free = noisy_sgd(P, sigma=0.0, delta=1e-6, steps=10, rng=0)
    assert free.epsilon == math.inf
    assert isinstance(free.dp_event, dp_accounting.NonPrivateDpEvent)


@pytest.mark.slow
def test_warns_when_accountant_certifies_less_than_claimed(monkeypatch):
    import dpsolve.solvers.noisy_sgd as module
    monkeypatch.setattr(module, "noisy_sgd_paper_sigma", lambda n, L, eps, delta: 1.0)
    with pytest.warns(PrivacyWarning, match="certifies epsilon"):
        noisy_sgd(problem(n=50), 0.5, 1e-6, steps=100, rng=0)


@pytest.mark.slow
def test_seeded_runs_are_bit_identical_and_seeds_differ():
    P = problem()
    a = noisy_sgd(P, 0.5, 1e-8, steps=5000, rng=42)
    b = noisy_sgd(P, 0.5, 1e-8, steps=5000, rng=np.random.default_rng(42))
    c = noisy_sgd(P, 0.5, 1e-8, steps=5000, rng=43)
    assert np.array_equal(a.theta, b.theta)
    assert not np.array_equal(a.theta, c.theta)
    g = np.random.default_rng(7)
    first = noisy_sgd(P, 0.5, 1e-8, steps=100, rng=g)
    second = noisy_sgd(P, 0.5, 1e-8, steps=100, rng=g)      # the Generator's stream advanced
    assert not np.array_equal(first.theta, second.theta)
    assert not a.theta.flags.writeable


@pytest.mark.slow
def test_iterates_stay_in_the_ball():
    P = problem(radius=0.3)
    fit = noisy_sgd(P, sigma=1e4, delta=1e-6, steps=3000, rng=1)
    assert np.linalg.norm(fit.theta) <= 0.3 * (1 + 1e-15)


@pytest.mark.parametrize("loss", [pytest.param("logistic", marks=pytest.mark.slow), "hinge",
                                  "squared", pytest.param("huber_hinge", marks=pytest.mark.slow)])
def test_noise_free_sgd_converges_to_theta_star(loss):
    """Shamir & Zhang (2013, Thm 1): projected SGD with eta_t = 1/(lambda t) on a lambda-strongly
    convex objective with E||g||^2 <= G^2 has E[F(theta_T) - F*] <= 17 G^2 (1 + ln T) / (lambda T).
    Here (sum form) the objective n F is n lambda-strongly convex with gradients bounded by n G,
    which gives 17 G^2 (1 + ln T) / (lambda T) for F."""
    lam, T = 0.1, 1_000_000
    P = problem(loss, n=300, reg=lam)
    G = P.gradient_bound
    bound = 17 * G ** 2 * (1 + math.log(T)) / (lam * T)
    ref = reference_minimizer(P)
    risks = [P.objective(noisy_sgd(P, sigma=0.0, delta=1e-6, steps=T, step_size="strongly_convex",
                                   rng=s).theta) - ref.value for s in range(5)]
    assert np.mean(risks) <= bound
    assert min(risks) >= -ref.gap
    assert P.objective(np.zeros(P.p)) - ref.value > 10 * bound    # the bound is not vacuous


@pytest.mark.slow
def test_huber_hinge_runs_with_its_width(monkeypatch):
    """A private fit on huber_hinge: the kernel gets the Problem's width, the calibration uses
    L = B (docs/conventions.md), and the same seed gives the same fit."""
    import dpsolve.solvers.noisy_sgd as module
    seen = []
    real = module._sgd.noisy_sgd_steps

    def spy(X, y, kind, h, *rest):
        seen.append((kind, h))
        return real(X, y, kind, h, *rest)

    monkeypatch.setattr(module._sgd, "noisy_sgd_steps", spy)
    P = problem("huber_hinge", n=100, row_norm=2.0, huber_width=0.25)
    fit = noisy_sgd(P, 0.5, 1e-7, steps=5000, rng=3)
    assert seen == [(dpsolve._kernels.losses.LOSS_KINDS["huber_hinge"], 0.25)]
    assert fit.sigma == noisy_sgd_paper_sigma(100, 2.0, 0.5, 1e-7)
    assert np.all(np.isfinite(fit.theta)) and np.linalg.norm(fit.theta) <= 1.0 * (1 + 1e-15)
    assert np.any(fit.theta != 0.0)
    assert np.array_equal(noisy_sgd(P, 0.5, 1e-7, steps=5000, rng=3).theta, fit.theta)
    # the width matters: another width gives another (noise-free) trajectory
    Q = problem("huber_hinge", n=100, row_norm=2.0, huber_width=2.0)
    a = noisy_sgd(P, sigma=0.0, delta=1e-7, steps=2000, rng=4).theta
    b = noisy_sgd(Q, sigma=0.0, delta=1e-7, steps=2000, rng=4).theta
    assert not np.array_equal(a, b)


@pytest.mark.slow
def test_lipschitz_step_size_uses_equation_4(monkeypatch):
    import dpsolve.solvers.noisy_sgd as module
    seen = {}
    real = module._sgd.noisy_sgd_steps

    def spy(X, y, kind, h, theta, t0, t1, sigma, schedule, eta0, reg, radius, *streams_counts):
        seen.update(schedule=schedule, eta0=eta0)
        return real(X, y, kind, h, theta, t0, t1, sigma, schedule, eta0, reg, radius,
                    *streams_counts)

    monkeypatch.setattr(module._sgd, "noisy_sgd_steps", spy)
    P = problem(n=80, p=5, radius=2.0, reg=0.5)
    fit = noisy_sgd(P, 0.5, 1e-7, steps=10, rng=0)
    G = 1.0 + 0.5 * 2.0
    assert seen["schedule"] == module._sgd.SCHEDULES["inv_sqrt"]
    assert seen["eta0"] == pytest.approx(4.0 / math.sqrt(80 ** 2 * G ** 2 + 5 * fit.sigma ** 2))
    noisy_sgd(P, 0.5, 1e-7, steps=10, step_size="strongly_convex", rng=0)
    assert seen["schedule"] == module._sgd.SCHEDULES["inv"]
    assert seen["eta0"] == pytest.approx(1.0 / (0.5 * 80))


BAD = [
    (dict(epsilon=1.0), ValueError, r"epsilon must lie in \(0, 1\)"),
    (dict(epsilon=0.0), ValueError, "epsilon must lie in"),
    (dict(epsilon=-1.0), ValueError, "epsilon must lie in"),
    (dict(epsilon=np.nan), ValueError, "epsilon must be finite"),
    (dict(epsilon="0.5"), TypeError, "epsilon must be a real number"),
    (dict(epsilon=True), TypeError, "epsilon must be a real number"),
    (dict(delta=1.0 / 50 ** 3), ValueError, "delta must lie in"),
    (dict(delta=0.0), ValueError, "delta must lie in"),
    (dict(delta=None), TypeError, "needs epsilon and delta"),
    (dict(steps=0), ValueError, "steps must be an integer >= 1"),
    (dict(steps=10.5), TypeError, "steps must be an integer"),
    (dict(calibration="exact"), ValueError, "calibration must be one of"),
    (dict(calibration="pld"), ValueError, "PLD cannot account for its index sampling"),
    (dict(calibration="rdp", epsilon=0.0), ValueError, "epsilon must lie in"),
    (dict(calibration="rdp", delta=1.0), ValueError, "delta must lie in"),
    (dict(step_size="adagrad"), ValueError, "step_size must be one of"),
    (dict(step_size="strongly_convex"), ValueError, "needs problem.reg > 0"),
    (dict(rng="seed"), TypeError, "rng must be"),
    (dict(rng=-3), ValueError, "rng must be a non-negative"),
    (dict(sigma=1.0), ValueError, "either epsilon"),
    (dict(epsilon=None, sigma=-1.0), ValueError, "sigma must lie in"),
    (dict(epsilon=None, sigma=np.inf), ValueError, "sigma must be finite"),
    (dict(epsilon=None, sigma=1.0, delta=None), TypeError, "needs delta"),
]


@pytest.mark.parametrize("kwargs,error,match", BAD)
def test_bad_input_is_rejected(kwargs, error, match):
    args = dict(epsilon=0.5, delta=1e-7, steps=10, rng=0)
    args.update(kwargs)
    with pytest.raises(error, match=match):
        noisy_sgd(problem(n=50), **args)


def test_problem_requirements():
    with pytest.raises(TypeError, match="dpsolve.Problem"):
        noisy_sgd(np.zeros((3, 3)), 0.5, 1e-7)
    with pytest.raises(ValueError, match="finite Lipschitz constant"):
        noisy_sgd(problem("squared", radius=None, reg=1.0), 0.5, 1e-9)
    with pytest.raises(ValueError, match="needs a bounded C"):
        noisy_sgd(problem(radius=None, reg=1.0), 0.5, 1e-9)


# rdp: a second of RDP calibration over n^2 sampled steps; the others, a quarter each
@pytest.mark.slow
@pytest.mark.parametrize("accountant", ["rdp", "zcdp", "strong", "basic"])
def test_tight_calibrations_certify_the_target_with_less_noise(accountant):
    """Same (epsilon, delta) as the paper calibration; the accountant certifies it, within the
    calibration's relative precision (sigma within 1e-3 of the least certified noise)."""
    P = problem(n=100)
    paper = noisy_sgd(P, 0.5, 1e-7, steps=5000, rng=0)
    fit = noisy_sgd(P, 0.5, 1e-7, steps=5000, calibration=accountant, rng=0)
    assert fit.calibration == accountant and fit.epsilon == 0.5
    assert fit.certified_epsilon(accountant=accountant) <= 0.5
    # 0.2% less noise would exceed the target: the calibration is not loose
    from dpsolve.privacy import gaussian_event
    tighter = gaussian_event(fit.sigma / 1.002, 2 * 100 * 1.0, steps=5000,
                             sampling=dpsolve.privacy.UniformSampling(100))
    assert epsilon_of(tighter, 1e-7, accountant) > 0.5
    assert fit.privacy.certified_by == "rdp" and fit.privacy.holds
    if accountant == "rdp":
        assert fit.sigma < paper.sigma / 3


@pytest.mark.slow
def test_tight_calibration_accepts_epsilon_above_one():
    fit = noisy_sgd(problem(n=100), 2.0, 1e-6, steps=2000, calibration="rdp", rng=0)
    assert fit.privacy.certified_epsilon <= 2.0


@pytest.mark.slow
def test_privacy_report_of_paper_fit():
    fit = noisy_sgd(problem(n=100), 0.5, 1e-7, steps=2000, rng=0)
    report = fit.privacy
    assert (report.epsilon, report.delta, report.method, report.certified_by) == (0.5, 1e-7, "paper", "rdp")
    assert report.certified_epsilon == fit.certified_epsilon() < 0.5
    assert "certifies" in str(report)


def test_warns_when_delta_is_not_below_one_over_n():
    with pytest.warns(PrivacyWarning, match="delta=0.02 >= 1/n"):
        noisy_sgd(problem(n=50), sigma=10.0, delta=0.02, steps=10, rng=0)
