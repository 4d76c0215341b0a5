"""The loss objects' constants (dpsolve.losses) against numerical maximisation with the kernels."""
import math

import numpy as np
import pytest

from dpsolve.losses import LOSSES, Hinge, HuberHinge, Logistic, Multinomial, Squared, make_loss

#: Every registered margin loss with its default parameters (so a new loss is checked here
#: without being listed), and the built-in ones at other parameters.
MARGIN_LOSSES = ([cls() for cls in LOSSES.values() if not cls.is_multinomial]
                 + [HuberHinge(0.3), HuberHinge(2.0), Squared(0.7)])


def _labels(loss):
    if loss.classification:
        return np.array([-1.0, 1.0])
    return np.array([-1.0, 0.0, 1.0]) * loss.label_bound       # real targets, |y| <= B_y


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


# -- the per-loss maths the Problem and the certificates read ----------------------------------
def test_label_sets_and_coding_are_the_losses():
    assert Logistic.public_classes(None, None) == (-1, 1)
    assert Hinge.public_classes(["no", "yes"], None) == ("no", "yes")
    assert Multinomial.public_classes(None, 3) == (0, 1, 2)
    assert Squared.public_classes(None, None) is None
    with pytest.raises(ValueError, match="n_classes is for loss='multinomial'"):
        Logistic.public_classes(None, 3)
    with pytest.raises(ValueError, match="needs the public label set"):
        Multinomial.public_classes(None, None)
    with pytest.raises(ValueError, match="not loss='squared'"):
        Squared.public_classes((0, 1), None)
    with pytest.raises(ValueError, match="distinct"):
        Multinomial.public_classes(("a", "a"), None)
    y = np.array(["yes", "no", "yes"])
    np.testing.assert_array_equal(Logistic().code_labels(y, ("no", "yes")), [1.0, -1.0, 1.0])
    np.testing.assert_array_equal(Hinge().code_labels(np.array([0, 1]), (-1, 1), True),
                                  [-1.0, 1.0])
    codes = Multinomial(3).code_labels(np.array(["c", "a", "b"]), ("a", "b", "c"))
    assert codes.dtype == np.intp and codes.tolist() == [2, 0, 1]
    with pytest.raises(ValueError, match="label_bound=0.5"):
        Squared(0.5).code_labels(np.array([0.2, -0.7]), None)


def test_shapes_and_centring():
    theta = np.arange(6.0).reshape(3, 2)
    assert Logistic().parameter_shape(3) == (3,) and Logistic().n_outputs == 1
    assert Multinomial(2).parameter_shape(3) == (3, 2) and Multinomial(4).n_outputs == 4
    assert Multinomial(2).is_multinomial and not Squared().is_multinomial
    assert Hinge().binary and not Squared().binary and not Multinomial(3).binary
    assert Logistic().center(theta) is theta
    centred = Multinomial(2).center(theta)
    np.testing.assert_allclose(centred.sum(axis=1), 0.0)
    np.testing.assert_allclose(np.diff(centred, axis=1), np.diff(theta, axis=1))


@pytest.mark.parametrize("loss", MARGIN_LOSSES, ids=repr)
def test_conjugate_meets_fenchel_young_with_equality_at_the_derivative(loss):
    """``loss(z) + loss^*(-alpha) >= -alpha z`` for every alpha in the domain, with equality at
    ``alpha = -loss'(z)`` (where the loss is differentiable)."""
    rng = np.random.default_rng(3)
    y = rng.choice(_labels(loss), 400)
    z = rng.normal(scale=2.0, size=400)
    alpha = loss.clip_dual(rng.normal(size=400), y)
    gap = loss.values(z, y) + loss.conjugate(alpha, y) + alpha * z
    assert np.min(gap) >= -1e-12
    best = loss.clip_dual(-loss.derivatives(z, y), y)
    tight = loss.values(z, y) + loss.conjugate(best, y) + best * z
    kink = np.abs(1.0 - y * z) < 1e-9 if isinstance(loss, Hinge) else np.zeros(400, bool)
    np.testing.assert_allclose(tight[~kink], 0.0, atol=1e-12)
    phi, _, conj, conj_mag, _ = loss.certificate_terms(z, np.zeros(400), best, y)
    np.testing.assert_allclose(phi, loss.values(z, y), rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(conj, loss.conjugate(best, y))
    assert np.all(conj_mag >= np.abs(conj))


def test_multinomial_has_no_conjugate_in_one_variable():
    with pytest.raises(NotImplementedError, match="multinomial"):
        Multinomial(3).conjugate(np.zeros(2), np.zeros(2, dtype=np.intp))


@pytest.mark.parametrize("loss", [Logistic(), HuberHinge(0.3), Squared(0.7), Multinomial(3)],
                         ids=repr)
def test_logit_hessian_times_is_the_derivatives_derivative(loss):
    """``logit_hessian_times(logit_curvature(z), v)`` against central differences of
    :meth:`derivatives` along v (away from huber_hinge's two kinks)."""
    rng = np.random.default_rng(4)
    n = 300
    if isinstance(loss, Multinomial):
        z, v = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
        y = rng.integers(0, 3, n).astype(np.intp)
    else:
        z, v = rng.normal(scale=2.0, size=n), rng.normal(size=n)
        y = rng.choice(_labels(loss), n)
    step = 1e-6
    numeric = (loss.derivatives(z + step * v, y) - loss.derivatives(z - step * v, y)) / (2 * step)
    exact = loss.logit_hessian_times(loss.logit_curvature(z, y), v)
    smooth = np.ones(n, bool)
    if isinstance(loss, HuberHinge):
        u = 1.0 - y * z
        smooth = np.abs(np.abs(u) - loss.width) > 1e-4 * (1 + np.abs(v))
    np.testing.assert_allclose(exact[smooth], numeric[smooth], rtol=1e-5, atol=1e-7)
