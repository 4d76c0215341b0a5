"""dpsolve.audit: the confidence bounds are right, the audits do not contradict correct
mechanisms, and they catch broken ones (each audit also runs a mutant that must be caught).

Every assertion compares a lower bound that holds with probability >= 0.95 (Clopper–Pearson, see
dpsolve/audit.py) with the claimed epsilon or mu. A correct mechanism fails the "not
contradicted" check with probability at most 5% over seeds; the seeds are fixed, so each test is
deterministic.
"""
import dataclasses
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

import dpsolve
from conftest import fit_with, inner_solver
from dpsolve.audit import (AuditResult, audit, audit_scores, canary_neighbours,
                           clopper_pearson)
from dpsolve.privacy import (gamma_norm_noise, gamma_norm_scale, gaussian_noise,
                             gaussian_sigma_analytic, laplace_noise, laplace_scale)

EPSILON, DELTA = 1.0, 1e-5
DRAWS = 500_000                 # per dataset


# -- Clopper–Pearson ------------------------------------------------------------------------------
@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (1, 1000), (517, 1000), (5, 10**6)])
def test_clopper_pearson_matches_scipy_exact_interval(k, n):
    """scipy's two-sided exact interval at level 1 - 2 alpha has the one-sided bounds as ends."""
    alpha = 0.025
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=1 - 2 * alpha, method="exact")
    assert clopper_pearson(k, n, alpha, "lower") == pytest.approx(ci.low, rel=1e-9, abs=1e-15)
    assert clopper_pearson(k, n, alpha, "upper") == pytest.approx(ci.high, rel=1e-9, abs=1e-15)


def test_clopper_pearson_vectorised_and_bad_input():
    low = clopper_pearson(np.array([0, 5, 10]), np.array([10, 10, 10]), 0.05, "lower")
    assert low.shape == (3,) and low[0] == 0.0 and 0 < low[1] < 0.5 < low[2] < 1
    with pytest.raises(ValueError, match="successes"):
        clopper_pearson(11, 10, 0.05, "lower")
    with pytest.raises(ValueError, match="alpha"):
        clopper_pearson(1, 10, 1.5, "lower")
    with pytest.raises(ValueError, match="side"):
        clopper_pearson(1, 10, 0.05, "both")


@pytest.mark.slow
def test_audit_bounds_cover_the_truth():
    """Randomised response with e^epsilon = 3 has TPR / FPR exactly 3 for its one informative
    test. Over 300 independent audits the lower bound may exceed ln 3 in at most 5% of them in
    expectation; 300 * 0.05 = 15, and Binomial(300, 0.05) exceeds 27 with probability < 0.1%."""
    rng = np.random.default_rng(0)
    p_hi = 0.75                               # 0.75 / 0.25 = 3
    exceed = 0
    for _ in range(300):
        a = rng.random(2000) < p_hi
        b = rng.random(2000) < 1 - p_hi
        exceed += audit_scores(a.astype(float), b.astype(float)).epsilon > np.log(3)
    assert exceed <= stats.binom.ppf(0.999, 300, 0.05)


# -- mechanisms at epsilon = 1, each with a mutant drawing half the noise ------------------------
def _shift_mechanism(sampler, scale, dim):
    """The mechanism on the query value ``q`` (a vector): ``q + noise``, vectorised."""
    def mechanism(q, rng, size):
        return q + sampler(scale, dim, size=size, rng=rng)
    return mechanism


def _gamma_norm_llr(dim):
    """Likelihood-ratio statistic of the gamma-norm mechanism for the queries 0 and e_1."""
    v = np.zeros(dim)
    v[0] = 1.0
    return lambda out: np.linalg.norm(out - v, axis=1) - np.linalg.norm(out, axis=1)


MECHANISMS = {
    # name: (sampler, scale calibrated by dpsolve for sensitivity 1, dim, delta, statistic)
    "gaussian": (gaussian_noise, gaussian_sigma_analytic(1.0, EPSILON, DELTA), 1, DELTA, None),
    "laplace": (laplace_noise, laplace_scale(1.0, EPSILON), 1, 0.0, None),
    "gamma_norm": (gamma_norm_noise, gamma_norm_scale(1.0, EPSILON), 3, 0.0, _gamma_norm_llr(3)),
}


def _audit_mechanism(name, noise_factor):
    sampler, scale, dim, delta, statistic = MECHANISMS[name]
    q0, q1 = np.zeros(dim), np.eye(dim)[0]            # neighbouring queries, distance 1
    return audit(_shift_mechanism(sampler, noise_factor * scale, dim), q0, q1, runs=DRAWS,
                 batch=100_000, statistic=statistic, delta=delta, rng=1)


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow)
                                  if name in ("gamma_norm", "laplace") else name
                                  for name in sorted(MECHANISMS)])
def test_mechanism_audit_does_not_contradict_epsilon_and_catches_half_noise(name):
    honest = _audit_mechanism(name, 1.0)
    mutant = _audit_mechanism(name, 0.5)
    assert isinstance(honest, AuditResult)
    assert honest.epsilon <= EPSILON, honest
    assert mutant.epsilon > EPSILON, mutant
    if name == "gaussian":            # exactly mu-GDP with mu = 1 / sigma
        mu = 1.0 / MECHANISMS[name][1]
        assert honest.mu <= mu < mutant.mu


def test_audit_is_tight_for_laplace():
    """Not only valid: at 5e5 draws the Laplace audit finds most of epsilon. Its test S <= t,
    t <= 0, has likelihood ratio exactly e^epsilon; with about 10^4-10^5 events on each side of
    the 2.5e5 evaluation runs, each one-sided 97.5% Clopper-Pearson bound is within about 2% of
    its frequency, so the bound loses about 0.04 of epsilon: 0.95 leaves room for that."""
    assert _audit_mechanism("laplace", 1.0).epsilon > 0.95


def test_default_statistic_projects_on_the_mean_difference():
    """Vector outputs without a statistic: the direction comes from the selection runs, and the
    Gaussian audit in 5 dimensions behaves like the 1-dimensional one."""
    sigma = gaussian_sigma_analytic(1.0, EPSILON, DELTA)
    mech = _shift_mechanism(gaussian_noise, sigma, 5)
    q1 = np.full(5, 1 / np.sqrt(5))
    honest = audit(mech, np.zeros(5), q1, runs=200_000, batch=50_000, delta=DELTA, rng=2)
    mutant = audit(_shift_mechanism(gaussian_noise, sigma / 2, 5), np.zeros(5), q1,
                   runs=200_000, batch=50_000, delta=DELTA, rng=2)
    assert honest.mu <= 1 / sigma < mutant.mu


def test_audit_is_reproducible_and_accepts_unbatched_mechanisms():
    def mech(q, rng):
        return q + rng.laplace()
    first = audit(mech, 0.0, 1.0, runs=500, rng=3)
    assert first == audit(mech, 0.0, 1.0, runs=500, rng=3)
    assert first != audit(mech, 0.0, 1.0, runs=500, rng=4)


def test_audit_bad_input():
    mech = lambda q, rng: q + rng.normal()       # noqa: E731
    with pytest.raises(TypeError, match="mechanism"):
        audit(3, 0.0, 1.0, runs=10)
    with pytest.raises(ValueError, match="runs"):
        audit(mech, 0.0, 1.0, runs=2)
    with pytest.raises(TypeError, match="runs"):
        audit(mech, 0.0, 1.0, runs=10.5)
    with pytest.raises(ValueError, match="delta"):
        audit(mech, 0.0, 1.0, runs=10, delta=1.0)
    with pytest.raises(ValueError, match="confidence"):
        audit(mech, 0.0, 1.0, runs=10, confidence=1.0)
    with pytest.raises(ValueError, match="selection_fraction"):
        audit(mech, 0.0, 1.0, runs=10, selection_fraction=0.0)
    with pytest.raises(TypeError, match="statistic"):
        audit(mech, 0.0, 1.0, runs=10, statistic="mean")
    with pytest.raises(ValueError, match="one number per run"):
        audit(mech, 0.0, 1.0, runs=10, statistic=lambda o: o[:3, 0])
    with pytest.raises(ValueError, match="rows"):
        audit(lambda q, rng, size: np.zeros(size + 1), 0.0, 1.0, runs=10, batch=5)
    with pytest.raises(ValueError, match="NaN"):
        audit_scores([0.0, 1.0, np.nan, 2.0], [0.0, 1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="at least 4"):
        audit_scores([0.0, 1.0], [0.0, 1.0, 2.0, 3.0])


# -- the claim under audit and its delta -----------------------------------------------------------
def _reveal_scores(delta, runs, seed):
    """A (0, delta)-DP mechanism, hence (0.5, delta)-DP: on D it reveals the secret (score 1)
    with probability delta, on D' never; otherwise both output 0."""
    rng = np.random.default_rng(seed)
    return (rng.random(runs) < delta).astype(float), np.zeros(runs)


def test_audit_is_run_at_the_claims_delta():
    """At delta = 0 the audit of a correct (0.5, 0.05)-DP mechanism finds epsilon far above 0.5:
    the old default (delta = 0 whatever the claim) made such a comparison look like a refuted
    claim. Given the claim, the audit runs at its delta and does not contradict it."""
    scores, neighbour_scores = _reveal_scores(0.05, 4000, 0)
    at_zero = audit_scores(scores, neighbour_scores)                 # no claim: delta = 0
    assert at_zero.delta == 0.0 and at_zero.claimed_epsilon is None
    assert at_zero.epsilon > 2.0, at_zero
    for claim in [(0.5, 0.05), [0.5, 0.05]]:
        result = audit_scores(scores, neighbour_scores, claim=claim)
        assert result.delta == 0.05 and result.claimed_epsilon == 0.5, result
        assert result.epsilon <= result.claimed_epsilon and result.claimed_mu is None
        assert "claimed epsilon 0.5" in str(result)
    # the same through audit(), with the mechanism itself
    def reveal(secret, rng, size):
        return np.where(rng.random(size) < 0.05, secret, 0.0)
    result = audit(reveal, 1.0, 0.0, runs=4000, batch=4000, claim=(0.5, 0.05), rng=0)
    assert result.delta == 0.05 and result.epsilon <= 0.5, result
    assert audit(reveal, 1.0, 0.0, runs=4000, batch=4000, rng=0).epsilon > 2.0
    # an explicit delta still wins; below the claim's delta the claim states nothing
    explicit = audit_scores(scores, neighbour_scores, claim=(0.5, 0.05), delta=0.0)
    assert explicit.delta == 0.0 and explicit.claimed_epsilon == np.inf
    assert explicit.epsilon == at_zero.epsilon
    above = audit_scores(scores, neighbour_scores, claim=(0.5, 0.05), delta=0.1)
    assert above.delta == 0.1 and above.claimed_epsilon == 0.5
    claimed = audit_scores(scores, neighbour_scores, claim=(0.5, 0.05))
    assert audit_scores(scores, neighbour_scores, delta=0.05) == dataclasses.replace(
        claimed, claimed_epsilon=None)


def _fit_claim():
    from dpsolve.audit import gdp_mu
    P = _tiny_problem("huber_hinge", n=40, p=3, radius=None, reg=0.05)
    fit = dpsolve.output_perturbation(P, 2.0, DELTA, rng=0)
    return fit, gdp_mu(fit)


def test_claim_from_a_fit_sets_delta_epsilon_and_mu():
    fit, mu = _fit_claim()
    scores, neighbour_scores = np.random.default_rng(0).normal(size=(2, 100))
    result = audit_scores(scores, neighbour_scores, claim=fit)
    assert result.delta == fit.delta == DELTA
    assert result.claimed_epsilon == fit.epsilon == 2.0 and result.claimed_mu == mu
    assert result == audit_scores(scores, neighbour_scores, delta=DELTA, claim=fit)
    # at another delta: the epsilon its DpEvent is certified for there
    other = audit_scores(scores, neighbour_scores, claim=fit, delta=1e-3)
    assert other.delta == 1e-3 and other.claimed_epsilon == fit.certified_epsilon(1e-3)
    assert other.claimed_mu == mu
    # its PrivacyReport: the (epsilon, delta) claim alone
    report = audit_scores(scores, neighbour_scores, claim=fit.privacy)
    assert (report.delta, report.claimed_epsilon, report.claimed_mu) == (DELTA, 2.0, None)
    # a pure-DP fit: delta 0, no mu
    pure = dpsolve.minibatch_sgd(_tiny_problem(n=40, p=3, reg=0.05), 1.0, rng=0)
    result = audit_scores(scores, neighbour_scores, claim=pure)
    assert (result.delta, result.claimed_epsilon, result.claimed_mu) == (0.0, 1.0, None)


def test_claim_from_a_dp_event():
    from dpsolve.privacy import epsilon_of, gaussian_event, pure_event
    scores, neighbour_scores = np.random.default_rng(0).normal(size=(2, 100))
    sigma = gaussian_sigma_analytic(1.0, EPSILON, DELTA)
    event = gaussian_event(sigma, 1.0)
    result = audit_scores(scores, neighbour_scores, claim=event, delta=DELTA)
    assert result.claimed_epsilon == epsilon_of(event, DELTA)
    assert result.claimed_epsilon == pytest.approx(EPSILON, rel=1e-3)
    assert result.claimed_mu == pytest.approx(1 / sigma, rel=1e-12)
    with pytest.raises(ValueError, match="pass delta"):      # an event states no delta
        audit_scores(scores, neighbour_scores, claim=event)
    pure = audit_scores(scores, neighbour_scores, claim=pure_event(0.5, steps=2))
    assert (pure.delta, pure.claimed_epsilon, pure.claimed_mu) == (0.0, 1.0, None)
    # the Laplace mechanism audited against its pure-DP event
    sampler, scale = laplace_noise, laplace_scale(1.0, EPSILON)
    result = audit(_shift_mechanism(sampler, scale, 1), np.zeros(1), np.ones(1), runs=20_000,
                   batch=20_000, claim=pure_event(EPSILON), rng=1)
    assert result.delta == 0.0 and result.epsilon <= result.claimed_epsilon == EPSILON


def test_bad_claims_are_refused_before_any_run():
    def mech(q, rng):
        raise AssertionError("the mechanism must not run")
    for claim, error, match in [("fit", TypeError, "claim must be"),
                                ((1.0,), TypeError, "claim must be"),
                                ((1.0, "0.1"), TypeError, "claim must be"),
                                (np.array([1.0, 1e-5]), TypeError, "claim must be"),
                                ((True, 1e-5), TypeError, "claim's epsilon"),
                                ((-1.0, 1e-5), ValueError, "claim's epsilon"),
                                ((1.0, 1.0), ValueError, "claim's delta"),
                                (dpsolve.privacy.gaussian_event(2.0, 1.0), ValueError,
                                 "pass delta")]:
        with pytest.raises(error, match=match):
            audit(mech, 0.0, 1.0, runs=10, claim=claim)
    with pytest.raises(ValueError, match="delta"):
        audit(mech, 0.0, 1.0, runs=10, claim=(1.0, 1e-5), delta=-0.1)


@pytest.mark.slow
def test_audit_is_reachable_from_the_package():
    """``import dpsolve`` alone makes ``dpsolve.audit`` available (a fresh interpreter, so no
    other test's import of dpsolve.audit can hide a missing export)."""
    code = ("import dpsolve; assert callable(dpsolve.audit.audit); "
            "assert callable(dpsolve.audit.audit_scores); "
            "assert 'audit' in dpsolve.__all__ and 'privacy' in dpsolve.__all__; "
            "ns = {}; exec('from dpsolve import *', ns); assert ns['audit'] is dpsolve.audit")
    # run where the dpsolve under test lives: from the repository root, `-c` would otherwise
    # import the unbuilt source tree after a regular `pip install .`
    here = os.path.dirname(os.path.dirname(os.path.abspath(dpsolve.__file__)))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=here)
    assert done.returncode == 0, done.stderr


# -- canaries ---------------------------------------------------------------------------------------
def _tiny_problem(loss="hinge", n=100, p=10, **settings):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(n, p))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return dpsolve.Problem(X, y, loss, **settings)


def test_canary_neighbours_differ_in_one_record_on_an_unused_coordinate():
    P = _tiny_problem(radius=2.0, reg=0.01)
    X_before = P.X.copy()
    for neighbour in ("flip", "zero"):
        D, D2, statistic = canary_neighbours(P, neighbour=neighbour)
        assert D.X.shape == D2.X.shape == (101, 11)
        assert np.array_equal(D.X[:100, :10], P.X) and not D.X[:100, 10].any()
        assert D.X[100, 10] == P.row_norm
        differ = np.flatnonzero((D.X != D2.X).any(axis=1) | (D.y != D2.y))
        assert differ.tolist() == [100]
        assert (D.loss, D.radius, D.reg) == (P.loss, P.radius, P.reg)
        assert statistic(np.arange(22.0).reshape(2, 11)).tolist() == [10.0, 21.0]
    assert np.array_equal(P.X, X_before)
    with pytest.raises(ValueError, match="binary classification"):
        canary_neighbours(_tiny_problem("squared", radius=1.0))
    with pytest.raises(ValueError, match="neighbour"):
        canary_neighbours(P, neighbour="add")
    with pytest.raises(TypeError, match="Problem"):
        canary_neighbours(P.X)


# -- solvers end to end, with a canary ----------------------------------------------------------
def test_gdp_mu_of_gaussian_events():
    from dpsolve.audit import gdp_mu
    from dpsolve.privacy import gaussian_event, PoissonSampling
    assert gdp_mu(gaussian_event(2.0, 1.0, steps=9)) == pytest.approx(1.5)
    with pytest.raises(ValueError, match="gdp_mu"):
        gdp_mu(gaussian_event(2.0, 1.0, steps=9, sampling=PoissonSampling(0.1)))
    with pytest.raises(TypeError, match="DpEvent"):
        gdp_mu(1.0)


GD_EPSILON, GD_STEPS, GD_CLIP = 2.0, 50, 0.5
SOLVER_RUNS = 1500             # per dataset


def _clipped_gd_last(problem, rng):
    return dpsolve.clipped_gd(problem, GD_EPSILON, DELTA, steps=GD_STEPS, clip_norm=GD_CLIP,
                              output="last", rng=rng).theta


def _halve_noise(monkeypatch, module):
    """Mutant: the solver draws half the noise it accounts for (a sigma/variance slip)."""
    from dpsolve.solvers import _lifecycle
    real = _lifecycle.generator

    class HalfNoise:
        def __init__(self, generator):
            self.generator = generator

        def standard_normal(self, *args, **kwargs):
            return 0.5 * self.generator.standard_normal(*args, **kwargs)

    # the Generator run_plan hands to the solver's run (the only solver run here is ``module``'s)
    monkeypatch.setattr(_lifecycle, "generator", lambda *a, **k: HalfNoise(real(*a, **k)))


def _no_clipping(monkeypatch, module):
    """Mutant: per-sample gradients are not clipped (in the kernel every solver reaches through
    ``problem.rows``, for X in memory)."""
    from dpsolve.rows import _memory as module
    real = module._gd.clipped_gradient_sum

    class Kernels:
        @staticmethod
        def clipped_gradient_sum(X, y, kind, h, w, norms, clip_norm, grad, scratch):
            return real(X, y, kind, h, w, norms, np.inf, grad, scratch)

    monkeypatch.setattr(module, "_gd", Kernels)


def _add_remove_sensitivity(monkeypatch, module):
    """Mutant: noise and event use the add/remove sensitivity C/n for replace-one neighbours."""
    real_sigma, real_event = module.gaussian_sigma, module.gaussian_event
    monkeypatch.setattr(module, "gaussian_sigma", lambda *a, sensitivity, **k: real_sigma(
        *a, sensitivity=sensitivity / 2, **k))
    monkeypatch.setattr(module, "gaussian_event", lambda sigma, sensitivity, **k: real_event(
        sigma, sensitivity / 2, **k))


@pytest.mark.slow
@pytest.mark.parametrize("mutant", [None, _halve_noise, _no_clipping, _add_remove_sensitivity])
def test_clipped_gd_audit(mutant, monkeypatch):
    """DP-GD (the DP gradient descent lecture notes, after Abadi et al. 2016; docs/clipped_gd.md)
    with a hinge canary clipped to C = 0.5 and T = 50 full-batch steps: the canary's coordinate
    of the last iterate is Gaussian with the same variance on both datasets, so the release is
    exactly mu-GDP with the mu of its DpEvent. The honest solver's mu and epsilon are not
    contradicted; each mutant's mu lower bound exceeds the claimed mu."""
    import dpsolve.solvers.clipped_gd as module
    from dpsolve.audit import gdp_mu
    P = _tiny_problem(radius=10.0)
    D, D2, statistic = canary_neighbours(P)
    claimed = dpsolve.clipped_gd(D, GD_EPSILON, DELTA, steps=GD_STEPS, clip_norm=GD_CLIP,
                                 output="last", rng=0)
    mu = gdp_mu(claimed)
    if mutant is not None:
        mutant(monkeypatch, module)
    result = audit(_clipped_gd_last, D, D2, runs=SOLVER_RUNS, statistic=statistic,
                   claim=claimed, rng=1)
    assert (result.delta, result.claimed_epsilon, result.claimed_mu) == (DELTA, GD_EPSILON, mu)
    if mutant is None:
        assert result.epsilon <= GD_EPSILON and result.mu <= mu, result
    else:
        assert result.mu > mu, result


OP_EPSILON = 2.0


def _output_perturbation(problem, rng):
    return dpsolve.output_perturbation(problem, OP_EPSILON, DELTA, rng=rng).theta


def _op_half_noise(plan):
    """The plan's inner solver draws half the Gaussian noise."""
    real = plan.run_inputs["inner_solver"].draw
    return inner_solver(draw=lambda noise, scale, size, rng: 0.5 * real(noise, scale, size,
                                                                         rng))(plan)


def _op_add_remove_sensitivity(plan):
    """The plan's noise scale calibrated to the add/remove sensitivity (half the replace-one)."""
    from dpsolve.solvers._inner import _output_noise
    settings = plan.settings
    scale = _output_noise(settings["noise"], plan.delta, plan.epsilon,
                          settings["sensitivity"] / 2, plan.method)[0]
    return dataclasses.replace(plan, run_inputs={**plan.run_inputs, "scale": scale})


@pytest.mark.slow
@pytest.mark.parametrize("mutant", [None, _op_half_noise, _op_add_remove_sensitivity])
def test_output_perturbation_audit(mutant):
    """Output perturbation (Chaudhuri, Monteleoni & Sarwate 2011; Jayaraman et al. 2018;
    docs/perturbation.md) with Gaussian noise is one Gaussian release of the minimiser. With
    the huber_hinge canary (h = 1/2) and n lambda = 5.05 > 2 B^2, the canary's margin stays
    below 1 - h, so its coordinate of the minimiser is exactly +-L/(n lambda) (checked below):
    the release meets its sensitivity bound, up to the inner solver's tolerance term, and is
    mu-GDP with the mu of its event. Mutants: half the noise, and the add/remove sensitivity
    for replace-one neighbours."""
    from dpsolve.audit import gdp_mu
    P = _tiny_problem("huber_hinge", radius=None, reg=0.05)
    D, D2, statistic = canary_neighbours(P)
    shift = [dpsolve.reference_minimizer(d, cache=False).theta[-1] for d in (D, D2)]
    assert shift == pytest.approx([1 / (D.n * D.reg), -1 / (D.n * D.reg)], rel=1e-9)
    claimed = dpsolve.output_perturbation(D, OP_EPSILON, DELTA, rng=0)
    mu = gdp_mu(claimed)
    solver = _output_perturbation if mutant is None else (
        lambda problem, rng: fit_with(dpsolve.output_perturbation, problem, OP_EPSILON, DELTA,
                                      rng=rng, change=mutant).theta)
    result = audit(solver, D, D2, runs=SOLVER_RUNS, statistic=statistic, claim=claimed, rng=1)
    assert (result.delta, result.claimed_mu) == (DELTA, mu)
    if mutant is None:
        assert result.epsilon <= OP_EPSILON and result.mu <= mu, result
    else:
        assert result.mu > mu, result


@pytest.mark.slow
def test_noisy_sgd_audit_catches_missing_noise_only():
    """SGD1 (Bassily, Smith & Thakurta 2014; docs/noisy_sgd.md) samples one record per step,
    so its privacy comes mostly from the sampling, and its last iterate hides small slips from
    an audit of this size: at n = 100, T = 100, (2, 1e-5) by the RDP accountant, 2,000 runs of
    the last iterate gave an epsilon lower bound of 0.49 with a tenth of the noise
    (docs/auditing.md). What it must catch is a solver that adds no noise at all."""
    P = _tiny_problem(radius=100.0)
    D, D2, statistic = canary_neighbours(P)
    sigma = dpsolve.noisy_sgd(D, 2.0, DELTA, steps=100, calibration="rdp", rng=0).sigma

    def solver(factor):
        return lambda problem, rng: dpsolve.noisy_sgd(problem, delta=DELTA, sigma=factor * sigma,
                                                      steps=100, rng=rng).theta

    honest = audit(solver(1.0), D, D2, runs=2000, statistic=statistic, delta=DELTA, rng=1)
    assert honest.epsilon <= 2.0, honest
    silent = audit(solver(0.0), D, D2, runs=2000, statistic=statistic, delta=DELTA, rng=1)
    assert silent.epsilon > 2.0, silent


@pytest.mark.slow
def test_minibatch_sgd_audit_catches_missing_noise_only():
    """Song, Chaudhuri & Sarwate 2013's one-pass mini-batch SGD (docs/minibatch_sgd.md; pure
    epsilon, gamma-norm noise in p + 1 = 11 dimensions): the canary's batch is one of ten and its
    noise is spread over 11 coordinates, so the last iterate's canary coordinate is a weak
    statistic; the audit must still catch the noise switched off (``noise_scale=0``) while the
    claim stays epsilon = 1."""
    P = _tiny_problem(radius=None, reg=0.05)
    D, D2, statistic = canary_neighbours(P)
    scale = dpsolve.minibatch_sgd(D, 1.0, rng=0).noise["gamma_norm"]

    def solver(factor):
        return lambda problem, rng: dpsolve.minibatch_sgd(problem, noise_scale=factor * scale,
                                                          rng=rng).theta

    honest = audit(solver(1.0), D, D2, runs=2000, statistic=statistic, rng=1)
    assert honest.epsilon <= 1.0, honest
    silent = audit(solver(0.0), D, D2, runs=2000, statistic=statistic, rng=1)
    assert silent.epsilon > 1.0, silent


@pytest.mark.slow
def test_objective_perturbation_audit_with_the_chosen_extra_reg():
    """Objective perturbation (Chaudhuri, Monteleoni & Sarwate 2011; Kifer et al. 2012; as
    AMP, Iyengar et al. 2019) at its default settings, which add an extra regulariser Delta > 0
    chosen from the utility bound
    (dpsolve.approximate_minima.objective_perturbation_settings): pure
    epsilon = 1 holds on the canary pair, and the audit catches the noise switched off while
    the claim stays epsilon = 1."""
    from dpsolve.solvers._inner import INNER_SOLVER
    P = _tiny_problem("huber_hinge", radius=None, reg=0.005)
    D, D2, statistic = canary_neighbours(P)
    fit = dpsolve.objective_perturbation(D, 1.0, rng=0)
    assert fit.settings["extra_reg"] > 0.0 and fit.epsilon == 1.0 and fit.delta == 0.0
    honest = audit(lambda problem, rng: dpsolve.objective_perturbation(problem, 1.0,
                                                                       rng=rng).theta,
                   D, D2, runs=2000, statistic=statistic, rng=1)
    assert honest.epsilon <= 1.0, honest
    real = INNER_SOLVER.draw
    no_noise = inner_solver(draw=lambda kind, scale, p, rng: 0.0 * real(kind, scale, p, rng))

    def silent(problem, rng):
        return fit_with(dpsolve.objective_perturbation, problem, 1.0, rng=rng,
                        change=no_noise).theta

    caught = audit(silent, D, D2, runs=2000, statistic=statistic, rng=1)
    assert caught.epsilon > 1.0, caught


@pytest.mark.slow
def test_gaussian_objective_perturbation_audit():
    """Objective perturbation with Gaussian objective noise (Kifer et al. 2012's variant with
    dpsolve's constants, ``dpsolve.approximate_minima.gaussian_objective_sigma``) at
    ``(1, DELTA)``: the claim holds on the canary pair, and the audit catches the objective
    noise at a tenth of its sigma while the claim stays the same."""
    from dpsolve.solvers._inner import INNER_SOLVER
    P = _tiny_problem("huber_hinge", radius=None, reg=0.005)
    D, D2, statistic = canary_neighbours(P)

    def run(problem, rng, change=None):
        if change is not None:
            return fit_with(dpsolve.objective_perturbation, problem, 1.0, DELTA,
                            objective_noise="gaussian", rng=rng, change=change).theta
        return dpsolve.objective_perturbation(problem, 1.0, DELTA, objective_noise="gaussian",
                                              rng=rng).theta

    fit = dpsolve.objective_perturbation(D, 1.0, DELTA, objective_noise="gaussian", rng=0)
    assert fit.settings["objective_noise"] == "gaussian" and fit.privacy.holds
    honest = audit(run, D, D2, runs=2000, statistic=statistic, delta=DELTA, rng=1)
    assert honest.epsilon <= 1.0, honest
    real = INNER_SOLVER.draw
    tenth = inner_solver(draw=lambda kind, scale, p, rng: real(
        kind, scale / 10.0 if kind == "gaussian" else scale, p, rng))

    def weak(problem, rng):
        return run(problem, rng, tenth)

    caught = audit(weak, D, D2, runs=2000, statistic=statistic, delta=DELTA, rng=1)
    assert caught.epsilon > 1.0, caught
