"""The pieces of "same bits on every machine" (docs/conventions.md) that are not a pinned hash:
the grid that accountant searches round onto, and the projection's norm."""
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, strategies as st

from dpsolve._kernels.vector import project_l2_ball
from dpsolve._ordered_linalg import fixed_order_dot
from dpsolve._projection import scale_onto_ball
from dpsolve.privacy import accounting, calibration, epsilon_of
from dpsolve.privacy.mechanisms import MULTIPLIER_GRID_BITS, multiplier_onto_grid


@given(st.floats(min_value=1e-300, max_value=1e300))
def test_grid_point_is_the_least_at_or_above(m):
    g = multiplier_onto_grid(m)
    fraction, _ = math.frexp(g)
    assert math.ldexp(fraction, MULTIPLIER_GRID_BITS) == int(math.ldexp(fraction,
                                                                        MULTIPLIER_GRID_BITS))
    assert g >= m
    # the grid point below is below m: exact, in rationals
    below = Fraction(g) - Fraction(math.ldexp(1.0, math.frexp(g)[1] - MULTIPLIER_GRID_BITS))
    assert below < Fraction(m) or g == m
    assert g <= m * (1.0 + 2.0 ** (1 - MULTIPLIER_GRID_BITS))
    assert multiplier_onto_grid(g) == g
    up = multiplier_onto_grid(m, 3)
    assert up > g and multiplier_onto_grid(up) == up


def test_grid_steps_cross_a_binade_onto_the_grid():
    top = math.ldexp(2 ** MULTIPLIER_GRID_BITS - 1, -MULTIPLIER_GRID_BITS)   # last point below 1
    assert multiplier_onto_grid(top, 1) == 1.0
    assert multiplier_onto_grid(top, 2) == 1.0 + 2.0 ** (1 - MULTIPLIER_GRID_BITS)


@pytest.mark.parametrize("accountant", ["rdp", pytest.param("pld", marks=pytest.mark.slow)])
def test_calibrated_multiplier_is_a_certified_grid_point(accountant):
    sampling = accounting.PoissonSampling(0.05)
    sigma = accounting.calibrate(1.0, 1e-6, sensitivity=1.0, steps=40, sampling=sampling,
                                 accountant=accountant, neighbours="add_remove")
    assert multiplier_onto_grid(sigma) == sigma
    event = accounting.gaussian_event(sigma, 1.0, steps=40, sampling=sampling)
    assert epsilon_of(event, 1e-6, accountant, neighbours="add_remove") <= 1.0


def test_dp_sgd_pld_sigma_is_a_grid_multiple_of_the_sensitivity():
    sigma = calibration.poisson_pld_sigma.__wrapped__(1.0, 1e-6, sensitivity=2.0, steps=40,
                                                      rate=0.05)
    assert multiplier_onto_grid(sigma / 2.0) == sigma / 2.0


def test_projection_norm_is_summed_in_index_order():
    rng = np.random.default_rng(0)
    for p in (1, 7, 64, 1001):
        theta = rng.standard_normal(p) * 10.0
        total = 0.0
        for value in theta.tolist():            # Python floats: IEEE, one term at a time
            total += value * value
        expected = np.array([v * (1.0 / math.sqrt(total)) for v in theta.tolist()])
        assert np.array_equal(scale_onto_ball(theta.copy(), 1.0), expected)
        assert np.array_equal(project_l2_ball(theta, 1.0), expected)
        assert fixed_order_dot(theta, theta) == total


@pytest.mark.parametrize("scale", [1e160, 1e200, 1e300])
def test_projection_of_huge_iterates_is_not_zero(scale):
    theta = np.array([3.0, -4.0, 0.0]) * scale
    out = scale_onto_ball(theta, 2.0)
    np.testing.assert_allclose(out, [1.2, -1.6, 0.0], rtol=4 * np.finfo(float).eps)
    assert np.array_equal(project_l2_ball(np.array([3.0, -4.0, 0.0]) * scale, 2.0), out)


def test_projection_within_and_without_radius_overflow():
    # a radius whose square overflows: a finite norm below it is left alone, a larger one scaled
    theta = np.array([1e200, 0.0])
    assert np.array_equal(scale_onto_ball(theta.copy(), 1e250), theta)
    np.testing.assert_allclose(scale_onto_ball(np.array([1e300, 0.0]), 1e250), [1e250, 0.0])


def test_projection_refuses_what_it_cannot_scale_in_place():
    with pytest.raises(TypeError, match="C-contiguous float64"):
        scale_onto_ball(np.ones((4, 4))[:, 0], 1.0)
    with pytest.raises(TypeError, match="C-contiguous float64"):
        scale_onto_ball(np.ones(3, dtype=np.float32), 1.0)


def test_clipped_gd_with_a_huge_step_size_is_not_projected_to_zero():
    import dpsolve
    X, y = dpsolve.datasets.make_synthetic(200, 4, rng=1)
    fit = dpsolve.clipped_gd(dpsolve.Problem(X, y, "logistic", radius=1.0, reg=0.01), 1.0, 1e-6,
                             steps=5, step_size=1e200, rng=0)
    assert np.all(np.isfinite(fit.theta)) and np.linalg.norm(fit.theta) > 0.0
