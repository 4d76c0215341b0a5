"""The loss objects' constants (dpsolve.losses) against numerical maximisation with the kernels."""
import math

import numpy as np
import pytest

from dpsolve.losses import Hinge, HuberHinge, Logistic, Multinomial, Squared, make_loss

MARGIN_LOSSES = [Logistic(), Hinge(), HuberHinge(0.3), HuberHinge(2.0), Squared(0.7)]


def _labels(loss):
    return np.array([-0.7, 0.0, 0.7]) if isinstance(loss, Squared) else np.array([-1.0, 1.0])


@pytest.mark.parametrize("loss", MARGIN_LOSSES, ids=repr)
def test_values_and_derivatives_at_zero_are_the_maxima_over_labels(loss):
    y = _labels(loss)
    z = np.zeros_like(y)
    assert np.max(loss.values(z, y)) == pytest.approx(loss.max_value_at_zero(), rel=1e-15)
    assert np.max(np.abs(loss.derivatives(z, y))) == pytest.approx(loss.derivative_at_zero(),
                                                                   rel=1e-15)


@pytest.mark.parametrize("loss", MARGIN_LOSSES, ids=repr)
def test_curvature_and_lipschitz_bound_the_kernels(loss):
    """Over a fine grid of margins in [-R B, R B] (B = 2, R = 1.5) and every label: |loss''| <=
    curvature and |loss'| B <= lipschitz(B, R), both attained up to the grid (logistic's
    Lipschitz bound only in the limit)."""
    B, R = 2.0, 1.5
    z = np.linspace(-R * B, R * B, 20001)
    worst_d, worst_c = 0.0, 0.0
    for label in _labels(loss):
        y = np.full_like(z, label)
        worst_d = max(worst_d, np.max(np.abs(loss.derivatives(z, y))))
        worst_c = max(worst_c, np.max(np.abs(loss.second_derivatives(z, y))))
    assert worst_d * B <= loss.lipschitz(B, R) * (1 + 1e-12)
    if not isinstance(loss, Logistic):      # logistic's |loss'| only approaches 1 as |z| grows
        assert worst_d * B >= loss.lipschitz(B, R) * (1 - 1e-3)  # the bound is tight
    if loss.smooth:
        assert worst_c == pytest.approx(loss.curvature, rel=1e-3)
        assert loss.smoothness(B) == pytest.approx(loss.curvature * B * B, rel=1e-15)
    else:
        assert math.isinf(loss.smoothness(B))


def test_multinomial_constants():
    K = 4
    loss = Multinomial(K)
    Z = np.zeros((K, K))
    labels = np.arange(K, dtype=np.intp)
    assert np.max(loss.values(Z, labels)) == pytest.approx(math.log(K))
    grads = loss.derivatives(Z, labels)
    assert np.max(np.linalg.norm(grads, axis=1)) == pytest.approx(loss.derivative_at_zero())
    rng = np.random.default_rng(0)
    Z = rng.normal(scale=20, size=(5000, K))
    y = rng.integers(0, K, 5000).astype(np.intp)
    assert np.max(np.linalg.norm(loss.derivatives(Z, y), axis=1)) <= loss.derivative_bound


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="huber_width"):
        HuberHinge(0.0)
    with pytest.raises(ValueError, match="label_bound"):
        Squared(-1.0)
    with pytest.raises(ValueError, match="n_classes"):
        Multinomial(1)
    with pytest.raises(ValueError, match="loss must be one of"):
        make_loss("cosine")
    assert make_loss("huber_hinge", huber_width=0.25) == HuberHinge(0.25)
