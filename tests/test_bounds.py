"""dpsolve.bounds: closed forms, normalisation, errors."""
import math

import numpy as np
import pytest

import dpsolve
from dpsolve import Problem, bounds


@pytest.fixture
def P():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 9)) / 4
    return Problem(X, rng.choice([0, 1], 100), "logistic", radius=2.0, reg=0.5, row_norm=1.5)


def test_theorem_2_lipschitz(P):
    G, D = 1.5 + 0.5 * 2.0, 4.0
    expected_sum = G * D * math.log(1.25 * 100 ** 2 / 1e-7) ** 2 * 3.0 / 0.5
    assert bounds.noisy_sgd_lipschitz_bound(P, 0.5, 1e-7, form="sum") == pytest.approx(expected_sum)
    assert bounds.noisy_sgd_lipschitz_bound(P, 0.5, 1e-7) == pytest.approx(expected_sum / 100)


def test_theorem_2_strongly_convex(P):
    G = 2.5
    expected_sum = G ** 2 * math.log(1.25e4 / 1e-7) ** 3 * 9 / (100 * 0.5 * 0.25)
    assert bounds.noisy_sgd_strongly_convex_bound(P, 0.5, 1e-7, form="sum") == pytest.approx(expected_sum)
    assert bounds.noisy_sgd_strongly_convex_bound(P, 0.5, 1e-7, form="mean") == pytest.approx(expected_sum / 100)


def test_lower_bounds(P):
    G, D = 2.5, 4.0
    assert bounds.lower_bound_lipschitz(P, 0.5) == pytest.approx(G * D * min(1, 3 / 50))
    assert bounds.lower_bound_lipschitz(P, 0.001) == pytest.approx(G * D)
    assert bounds.lower_bound_lipschitz(P, 0.5, form="sum") == pytest.approx(100 * G * D * 3 / 50)
    assert bounds.lower_bound_strongly_convex(P, 0.5) == pytest.approx(
        min(G * D, G ** 2 * 9 / (0.5 * 0.25 * 100 ** 2)))


def test_huber_hinge_bounds_use_lipschitz_B(P):
    """huber_hinge has L = B (docs/conventions.md), so every bound equals the logistic one
    on the same data (G = B + lambda R = 2.5), whatever the width; only the smoothness differs."""
    for width in (0.05, 0.5, 4.0):
        H = Problem(P.X, P.y, "huber_hinge", radius=2.0, reg=0.5, row_norm=1.5, huber_width=width)
        assert H.gradient_bound == P.gradient_bound == 2.5
        assert H.smoothness == 1.5 ** 2 / (2 * width)
        for f in (bounds.noisy_sgd_lipschitz_bound, bounds.noisy_sgd_strongly_convex_bound):
            assert f(H, 0.5, 1e-7) == f(P, 0.5, 1e-7)
        for f in (bounds.lower_bound_lipschitz, bounds.lower_bound_strongly_convex):
            assert f(H, 0.5, form="sum") == f(P, 0.5, form="sum")


def test_bounds_shrink_as_epsilon_grows(P):
    for f in (bounds.noisy_sgd_lipschitz_bound, bounds.noisy_sgd_strongly_convex_bound):
        assert f(P, 0.9, 1e-7) < f(P, 0.1, 1e-7)


def test_errors(P):
    Q = Problem(P.X, P.y, "logistic", radius=1.0, row_norm=1.5)
    with pytest.raises(ValueError, match="needs problem.reg > 0"):
        bounds.noisy_sgd_strongly_convex_bound(Q, 0.5, 1e-7)
    with pytest.raises(ValueError, match="needs problem.reg > 0"):
        bounds.lower_bound_strongly_convex(Q, 0.5)
    with pytest.raises(ValueError, match="form must be one of"):
        bounds.noisy_sgd_lipschitz_bound(P, 0.5, 1e-7, form="total")
    with pytest.raises(ValueError, match="epsilon must lie in"):
        bounds.noisy_sgd_lipschitz_bound(P, 0.0, 1e-7)
    with pytest.raises(ValueError, match="delta must lie in"):
        bounds.noisy_sgd_lipschitz_bound(P, 0.5, 1.5)
    with pytest.raises(TypeError, match="dpsolve.Problem"):
        bounds.lower_bound_lipschitz("P", 0.5)


def test_solver_bounds_validate_their_assumptions():
    import dpsolve
    X, y = dpsolve.datasets.make_synthetic(200, 3, rng=0)
    ball = dpsolve.Problem(X, y, "logistic", radius=1.0)
    ridge = dpsolve.Problem(X, y, "logistic", radius=None, reg=0.1)
    with pytest.raises(ValueError, match="clip_norm"):
        dpsolve.bounds.clipped_gd_bound(ball, 1.0, 1e-6, steps=10, clip_norm=0.5)
    with pytest.raises(ValueError, match="reg > 0"):
        dpsolve.bounds.output_perturbation_bound(ball, 1.0)
    with pytest.raises(ValueError, match="radius=None"):
        dpsolve.bounds.objective_perturbation_bound(
            dpsolve.Problem(X, y, "logistic", radius=1.0, reg=0.1), 1.0)
    with pytest.raises(ValueError, match="batch_size"):
        dpsolve.bounds.minibatch_sgd_bound(ridge, 1.0, batch_size=201)
    with pytest.raises(TypeError, match="problem"):
        dpsolve.bounds.minimizer_norm_bound(X)
    # the two closed forms of clipped_gd_bound agree: at the pld optimum T*, 2 R C sqrt(p) s1 / n
    from dpsolve.privacy import gaussian_sigma_analytic
    s1 = gaussian_sigma_analytic(1.0, 1.0, 1e-6)
    big = dpsolve.Problem(*dpsolve.datasets.make_synthetic(20_000, 3, rng=0), radius=1.0)
    t_star = 0.25 * 20_000 / (2 * math.sqrt(3) * s1)       # an integer would be within 1 step
    value = float(dpsolve.bounds.dpgd_optimisation_error(
        big, 1.0, t_star, 2 / 20_000 * math.sqrt(t_star) * s1))
    assert value == pytest.approx(2 * math.sqrt(3) * s1 / 20_000, rel=1e-12)


def test_the_bounded_minimiser_takes_scipys_steps():
    # dpsolve._numerics.bounded_minimum transcribes scipy's bounded Brent minimiser with Python
    # floats (for speed): it must return exactly scipy's point on smooth, flat, multi-modal and
    # infinite-valued functions
    import scipy.optimize
    from dpsolve._numerics import bounded_minimum
    rng = np.random.default_rng(0)
    functions = [lambda x: 0.0, lambda x: math.inf if x < 0.3 else (x - 0.5) ** 2]
    for _ in range(200):
        a, b, c = rng.normal(size=3)
        functions.append(lambda x, a=a, b=b, c=c: a * math.sin(3 * x + b) + c * x * x)
        functions.append(lambda x, a=a, b=b: abs(x - a) + b * x)
    for f in functions:
        for lo, hi, tol in ((-2.0, 3.0, 1e-5), (0.02, 0.98, 1e-3)):
            with np.errstate(invalid="ignore"):     # scipy's warning on inf (test below)
                expected = scipy.optimize.minimize_scalar(f, bounds=(lo, hi), method="bounded",
                                                          options={"xatol": tol}).x
            assert bounded_minimum(f, lo, hi, tol) == float(expected)


def test_the_bounded_minimiser_is_silent_where_the_function_is_infinite():
    # why it is not scipy's own: the settings search's bound is inf where the objective has no
    # budget, and scipy's NumPy scalars warn there ("invalid value encountered") where Python
    # floats compute the same nan silently
    import warnings

    import scipy.optimize
    from dpsolve._numerics import bounded_minimum

    def f(x):
        return math.inf if x < 0.3 else (x - 0.5) ** 2

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        expected = scipy.optimize.minimize_scalar(f, bounds=(-2.0, 3.0), method="bounded").x
    assert any(issubclass(w.category, RuntimeWarning) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bounded_minimum(f, -2.0, 3.0, 1e-5) == float(expected)


def test_objective_perturbation_settings_alias_is_deprecated():
    from dpsolve import approximate_minima
    X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(200, 3))
    problem = Problem(X, np.where(X[:, 0] > 0, 1, -1), "logistic", radius=None, reg=0.01)
    with pytest.warns(DeprecationWarning, match="approximate_minima"):
        old = bounds.objective_perturbation_settings(problem, 1.0, 1e-6, tolerance=1e-11)
    assert old == approximate_minima.objective_perturbation_settings(problem, 1.0, 1e-6,
                                                                     tolerance=1e-11)


def _deprecated_cases():
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, (200, 3))
    y = np.where(rng.random(200) < 0.5, -1, 1)
    lipschitz = dpsolve.Problem(X, y, "logistic", radius=1.0)
    strong = dpsolve.Problem(X, y, "logistic", radius=1.0, reg=0.1)
    parties = dpsolve.Parties.from_sizes(strong, [100, 100])
    return [
        ("dpsolve.bounds", "sgd1_lipschitz_bound", "noisy_sgd_lipschitz_bound",
         (lipschitz, 0.5, 1e-6)),
        ("dpsolve.bounds", "sgd1_strongly_convex_bound", "noisy_sgd_strongly_convex_bound",
         (strong, 0.5, 1e-6)),
        ("dpsolve.bounds", "sgd2_bound", "multiparty_gd_bound", (strong, parties, 0.1, 50)),
        ("dpsolve.privacy.calibration", "sgd1_paper_sigma", "noisy_sgd_paper_sigma",
         (1000, 1.0, 0.5, 1e-6)),
        ("dpsolve.privacy.calibration", "sgd2_paper_sigma", "multiparty_gd_paper_sigma",
         (1.0, 100, 0.5, 1e-6)),
    ]


@pytest.mark.parametrize("module, old, new, args", _deprecated_cases(),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_names_with_the_notes_numbers_are_deprecated_aliases(module, old, new, args):
    import importlib
    mod = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=new):
        got = getattr(mod, old)(*args)
    assert got == getattr(mod, new)(*args)


def test_the_transcript_class_keeps_its_old_name_as_a_deprecated_alias():
    from dpsolve import _multiparty
    with pytest.warns(DeprecationWarning, match="NoisySGDTranscript"):
        assert _multiparty.SGD1Transcript is _multiparty.NoisySGDTranscript
