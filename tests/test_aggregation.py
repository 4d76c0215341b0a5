"""aggregated_output_perturbation: Jayaraman et al. 2018's model aggregation, as in Chen's 2019
slides (docs/multiparty.md)."""
import math
import warnings

import numpy as np
import pytest
from scipy import stats

import dpsolve
from dpsolve.solvers._inner import _certified_minimizer
from dpsolve.privacy import PrivacyWarning
from dpsolve.privacy.mechanisms import gaussian_sigma_analytic


def _setting(X=None, y=None, sizes=(60, 100, 40), reg=0.05, radius=None, loss="logistic"):
    if X is None:
        X, y = dpsolve.datasets.make_synthetic(n=sum(sizes), p=4, rng=0)
    problem = dpsolve.Problem(X, y, loss, radius=radius, reg=reg)
    return problem, dpsolve.Parties.from_sizes(problem, list(sizes))


def _average(parties, tolerance):
    return sum(_certified_minimizer(party.local_problem(), tolerance)
               for party in parties) / parties.m


@pytest.mark.parametrize("loss,radius", [("logistic", None), ("hinge", 1.0)])
def test_sensitivity_covers_a_replaced_record_in_the_smallest_party(loss, radius):
    """The un-noised average moves by at most Delta_2 when one record is replaced."""
    X, y = dpsolve.datasets.make_synthetic(n=200, p=4, rng=1)
    problem, parties = _setting(X, y, loss=loss, radius=radius)
    tolerance = 1e-10
    fit = dpsolve.aggregated_output_perturbation(problem, parties, 1.0, tolerance=tolerance,
                                                 rng=0)
    base = _average(parties, tolerance)
    worst = 0.0
    for sign in (-1.0, 1.0):
        for row in (160, 199):                      # the smallest party holds rows 160..199
            X2, y2 = X.copy(), y.copy()
            X2[row] = sign * X[row] / np.linalg.norm(X[row])
            y2[row] = -y[row]
            _, neighbour = _setting(X2, y2, loss=loss, radius=radius)
            worst = max(worst, np.linalg.norm(_average(neighbour, tolerance) - base))
    assert 0.0 < worst <= fit.settings["sensitivity"]
    nominal = 2.0 / (parties.m * parties.smallest * problem.reg)
    assert fit.settings["sensitivity"] == pytest.approx(
        nominal + 2 * math.sqrt(2 * tolerance / problem.reg) / parties.m, rel=1e-14)


@pytest.mark.slow
def test_gamma_norm_noise_has_the_right_norm_distribution():
    problem, parties = _setting()
    average = _average(parties, 1e-10)
    fits = [dpsolve.aggregated_output_perturbation(problem, parties, 2.0, rng=seed)
            for seed in range(300)]
    scale = fits[0].noise["gamma_norm"]
    assert scale == pytest.approx(fits[0].settings["sensitivity"] / 2.0, rel=1e-15)
    norms = np.array([np.linalg.norm(f.theta - average) for f in fits]) / scale
    assert stats.kstest(norms, stats.gamma(a=problem.p).cdf).pvalue > 1e-4
    assert all(f.privacy.holds and f.delta == 0.0 for f in fits[:3])


def test_gaussian_noise_is_the_exact_calibration():
    problem, parties = _setting()
    fit = dpsolve.aggregated_output_perturbation(problem, parties, 1.0, 1e-6, rng=0)
    assert fit.sigma == pytest.approx(
        gaussian_sigma_analytic(fit.settings["sensitivity"], 1.0, 1e-6), rel=2e-3)
    assert fit.sigma >= gaussian_sigma_analytic(fit.settings["sensitivity"], 1.0, 1e-6)
    assert fit.privacy.holds
    assert set(fit.observers.values()) == {fit.privacy.certified_epsilon}


def test_slides_laplace_reports_its_true_guarantee():
    problem, parties = _setting()
    with pytest.warns(PrivacyWarning, match="above the claimed"):
        fit = dpsolve.aggregated_output_perturbation(problem, parties, 1.0,
                                                     noise="laplace_slides", rng=0)
    scale = 2.0 / (parties.m * parties.smallest * problem.reg)
    assert fit.noise["laplace"] == pytest.approx(scale, rel=1e-15)
    assert fit.epsilon == 1.0 and not fit.privacy.holds
    true_eps = math.sqrt(problem.p) * fit.settings["sensitivity"] / scale
    assert fit.privacy.certified_epsilon == pytest.approx(true_eps, rel=1e-12)
    assert fit.privacy.certified_epsilon >= math.sqrt(problem.p)


def test_non_iid_parties_with_one_class_each():
    X, y = dpsolve.datasets.make_synthetic(n=200, p=4, rng=2)
    order = np.argsort(y, kind="stable")
    problem = dpsolve.Problem(X[order], y[order], "logistic", radius=None, reg=0.05)
    negatives = int(np.sum(y < 0))
    parties = dpsolve.Parties.from_indices(problem, [np.arange(negatives),
                                                     np.arange(negatives, 200)])
    assert len(set(parties[0].y)) == 1 and len(set(parties[1].y)) == 1
    fit = dpsolve.aggregated_output_perturbation(problem, parties, 1.0, rng=0)
    assert np.all(np.isfinite(fit.theta))


def test_reproducible_and_inputs_untouched():
    problem, parties = _setting(radius=1.0)
    X = problem.X.copy()
    a = dpsolve.aggregated_output_perturbation(problem, parties, 0.5, rng=3)
    b = dpsolve.aggregated_output_perturbation(problem, parties, 0.5, rng=3)
    assert np.array_equal(a.theta, b.theta)
    assert np.linalg.norm(a.theta) <= 1.0 + 1e-12
    assert np.array_equal(problem.X, X)


def test_bad_input():
    problem, parties = _setting()
    other, _ = _setting(sizes=(60, 100, 40), reg=0.1)
    with pytest.raises(ValueError, match="partition of this problem"):
        dpsolve.aggregated_output_perturbation(other, parties, 1.0)
    with pytest.raises(TypeError, match="parties"):
        dpsolve.aggregated_output_perturbation(problem, None, 1.0)
    with pytest.raises(ValueError, match="noise"):
        dpsolve.aggregated_output_perturbation(problem, parties, 1.0, noise="laplace")
    with pytest.raises(ValueError, match="pure-DP"):
        dpsolve.aggregated_output_perturbation(problem, parties, 1.0, 1e-6,
                                               noise="laplace_slides")
    with pytest.raises(ValueError, match="gamma_norm"):
        dpsolve.aggregated_output_perturbation(problem, parties, 1.0, 1e-6, noise="gamma_norm")
    with pytest.raises(ValueError, match="epsilon"):
        dpsolve.aggregated_output_perturbation(problem, parties, 0.0)
    with pytest.raises(ValueError, match="tolerance"):
        dpsolve.aggregated_output_perturbation(problem, parties, 1.0, tolerance=0.5)
    flat, flat_parties = _setting(reg=0.0, radius=1.0)
    with pytest.raises(ValueError, match="reg > 0"):
        dpsolve.aggregated_output_perturbation(flat, flat_parties, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dpsolve.aggregated_output_perturbation(problem, parties, 1.0, rng=0)


def test_multinomial_models_are_aggregated_with_noise_on_every_coordinate():
    rng = np.random.default_rng(0)
    X = dpsolve.datasets.unit_rows(rng.standard_normal((120, 4)))
    y = np.argmax(X @ rng.standard_normal((4, 3)), axis=1)
    problem = dpsolve.Problem(X, y, "multinomial", radius=None, reg=0.05, n_classes=3)
    parties = dpsolve.Parties.from_sizes(problem, [40, 40, 40])
    fit = dpsolve.aggregated_output_perturbation(problem, parties, 1.0, rng=0)
    assert fit.theta.shape == (4, 3)
    nominal = 2.0 * math.sqrt(2.0) / (3 * 40 * 0.05)        # L = sqrt(2) B for softmax
    assert fit.settings["sensitivity"] == pytest.approx(
        nominal + 2 * math.sqrt(2 * 1e-10 / 0.05) / 3, rel=1e-14)
    with pytest.warns(PrivacyWarning):
        slides = dpsolve.aggregated_output_perturbation(problem, parties, 1.0,
                                                        noise="laplace_slides", rng=0)
    # 12 noisy coordinates: the slides' Laplace is sqrt(12) times weaker than claimed
    assert slides.privacy.certified_epsilon == pytest.approx(
        math.sqrt(12) * slides.settings["sensitivity"] / slides.noise["laplace"], rel=1e-12)


def test_secure_aggregation_runs_one_public_number_of_steps_in_every_party(gradient_evaluations):
    """secure=True: every party runs the fixed-iteration solver for the same K (a function of
    public constants, in the settings), whatever its size and data; no certificate is used."""
    from conftest import fit_with, inner_solver
    from dpsolve import _fixed_iteration as fixed
    calls = gradient_evaluations

    def forbidden(*args, **kwargs):
        raise AssertionError("secure mode ran a certified solver")

    no_certificate = inner_solver(newton=forbidden, newton_ball=forbidden, reference=forbidden)
    for radius, loss in ((None, "logistic"), (1.0, "huber_hinge")):
        problem, parties = _setting(radius=radius, loss=loss)
        calls.clear()
        fit = fit_with(dpsolve.aggregated_output_perturbation, problem, parties, 1.0,
                       secure=True, change=no_certificate)
        K = fit.settings["inner_steps"]
        assert K == fixed.output_plan(problem, 1e-10).steps > 0
        assert calls == [n for party in parties for n in [party.n] * K]
        assert fit.settings["inner_solver"] == "fixed"
