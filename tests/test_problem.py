"""Problem: validation, label mapping, clipping, constants, objective and gradient."""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse

from dpsolve import Problem


def data(n=50, p=4, seed=0):
    """Rows inside the unit ball and labels -1/+1."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) / (2 * math.sqrt(p))
    return X, np.where(rng.choice([3, 7], n) == 7, 1.0, -1.0)


def test_labels_are_mapped_by_the_public_classes():
    X, y = data()
    y = np.where(y > 0, 7, 3)
    P = Problem(X, y, "logistic", classes=(3, 7))
    assert P.classes == (3, 7) and P.n_classes == 2
    assert np.array_equal(P.y, np.where(y == 7, 1.0, -1.0))
    # the order given is the order used: classes[0] is the negative class
    Q = Problem(X, y, "logistic", classes=(7, 3))
    assert np.array_equal(Q.y, -P.y)
    # without classes: -1/+1 or 0/1 labels (0 read as -1), and classes is the public (-1, 1)
    pm = np.where(y == 7, 1, -1)
    for labels in (pm, (pm + 1) // 2, pm.astype(float), pm > 0):
        R = Problem(X, labels, "logistic")
        assert R.classes == (-1, 1) and np.array_equal(R.y, P.y)
    # string labels
    S = Problem(X, np.where(y == 7, "spam", "ham"), "hinge", classes=("ham", "spam"))
    assert np.array_equal(S.y, P.y)


def test_label_set_is_not_read_off_the_data():
    """The privacy bug this guards against: with the label set taken from the values present,
    999 records labelled 7 and one labelled 5 gave classes (5, 7); relabelling that one record
    9 gave (7, 9) and flipped every other label, and replacing a class's only record changed
    theta's shape. With a public label set, neighbouring datasets differ in one coded label,
    and the classes, the shape and every other record's coding stay the same."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((1000, 3)) / 8
    y = np.full(1000, 7)
    y[0] = 5
    y_prime = y.copy()
    y_prime[0] = 9
    for loss in ("multinomial",):
        P = Problem(X, y, loss, classes=(5, 7, 9))
        Q = Problem(X, y_prime, loss, classes=(5, 7, 9))
        assert P.classes == Q.classes == (5, 7, 9)
        assert P.theta_shape == Q.theta_shape == (3, 3)
        assert np.array_equal(P.y[1:], Q.y[1:]) and (P.y[0], Q.y[0]) == (0, 2)
        assert P.describe() == Q.describe()
    # binary: the neighbour replaces the 5 by a 7 (9 is not in the public set, so refused)
    P = Problem(X, y, "logistic", classes=(5, 7))
    Q = Problem(X, np.full(1000, 7), "logistic", classes=(5, 7))
    assert P.classes == Q.classes and np.array_equal(P.y[1:], Q.y[1:])
    with pytest.raises(ValueError, match="outside classes"):
        Problem(X, y_prime, "logistic", classes=(5, 7))
    # without a public label set, such labels are refused, naming classes
    with pytest.raises(ValueError, match="classes"):
        Problem(X, y, "logistic")
    with pytest.raises(ValueError, match="classes"):
        Problem(X, y, "multinomial")


def test_one_public_class_present_is_valid():
    """A dataset in which only one of the public classes occurs is a neighbour of one in which
    both do: refusing it would reveal the data."""
    X, _ = data()
    P = Problem(X, np.full(50, 7), "logistic", classes=(3, 7))
    assert P.classes == (3, 7) and np.all(P.y == 1.0)
    assert Problem(X, np.ones(50), "hinge").classes == (-1, 1)
    M = Problem(X, np.zeros(50, dtype=int), "multinomial", n_classes=4)
    assert M.classes == (0, 1, 2, 3) and M.theta_shape == (4, 4) and np.all(M.y == 0)


def test_inputs_are_copied_not_modified():
    X, y = data()
    X[0] *= 100   # a row above the bound: it is clipped in the problem's copy only
    X0, y0 = X.copy(), y.copy()
    with pytest.warns(UserWarning, match="1 of 50 rows"):
        P = Problem(X, y, "hinge")
    assert np.array_equal(X, X0) and np.array_equal(y, y0)
    assert np.linalg.norm(P.X, axis=1).max() <= 1.0
    assert not P.X.flags.writeable


def test_clipping_scales_rows_onto_the_bound():
    X, y = data()
    X[:3] *= 50
    with pytest.warns(UserWarning, match="3 of 50 rows had norm above row_norm=2"):
        P = Problem(X, y, row_norm=2.0)
    norms = np.linalg.norm(P.X, axis=1)
    assert np.all(norms <= 2.0)
    np.testing.assert_allclose(norms[:3], 2.0, rtol=1e-15)
    np.testing.assert_allclose(P.X[:3] / norms[:3, None], X[:3] / np.linalg.norm(X[:3], axis=1)[:, None])
    with pytest.raises(ValueError, match="3 rows of X have norm above row_norm=2"):
        Problem(X, y, row_norm=2.0, clip_rows=False)


def test_rounding_level_excess_is_clipped_silently():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((500, 7))
    X /= np.linalg.norm(X, axis=1, keepdims=True)   # some norms come out as 1 + 2^-52
    y = rng.choice([0, 1], 500)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        P = Problem(X, y, clip_rows=False)
    assert np.linalg.norm(P.X, axis=1).max() <= 1.0


def test_constants():
    X, y = data()
    P = Problem(X, y, "logistic", radius=2.0, reg=0.1, row_norm=1.5)
    assert P.lipschitz == 1.5 and P.smoothness == 1.5 ** 2 / 4
    assert P.gradient_bound == 1.5 + 0.1 * 2.0 and P.diameter == 4.0 and P.strong_convexity == 0.1
    Q = Problem(X, np.linspace(-1, 1, 50), "squared", radius=3.0, label_bound=1.0)
    assert Q.lipschitz == 1.0 * (3.0 * 1.0 + 1.0) and Q.smoothness == 1.0
    assert Problem(X, y, "hinge").smoothness == math.inf
    assert Problem(X, np.zeros(50), "squared", radius=None, reg=1.0).lipschitz == math.inf


def test_huber_hinge_constants_and_description():
    """docs/conventions.md: L = B (|loss'| <= 1), beta = B^2 / (2h)."""
    X, y = data()
    P = Problem(X, np.where(y > 0, 7, 3), "huber_hinge", radius=2.0, reg=0.1, row_norm=1.5,
                huber_width=0.3, classes=(3, 7))
    assert P.huber_width == 0.3 and P.classes == (3, 7) and set(np.unique(P.y)) == {-1.0, 1.0}
    assert P.lipschitz == 1.5 and P.smoothness == 1.5 ** 2 / 0.6
    assert P.gradient_bound == 1.5 + 0.1 * 2.0
    assert Problem(X, y, "huber_hinge").huber_width == 0.5                # the default
    assert Problem(X, y, "huber_hinge").smoothness == 1.0
    assert P.describe()["huber_width"] == 0.3 and "huber_width=0.3" in repr(P)
    # stored for every loss, but only huber_hinge's description (and cache key) mentions it
    Q = Problem(X, y, "logistic", huber_width=0.3)
    assert Q.huber_width == 0.3 and "huber_width" not in Q.describe()
    assert Q.describe() == Problem(X, y, "logistic").describe()
    # the second derivative is bounded by 1/(2h): beta = B^2 max loss'' with ||x|| <= B
    theta = np.random.default_rng(4).standard_normal(4)
    assert P.loss_second_derivatives(theta).max() <= 1 / 0.6


@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared", "huber_hinge"])
def test_objective_and_gradient(loss):
    X, y = data(seed=2)
    if loss == "squared":
        y = np.linspace(-0.9, 0.9, 50)
    w = 0.9     # huber_width, not the default: checks that the Problem's width reaches the kernels
    P = Problem(X, y, loss, radius=1.0, reg=0.3, huber_width=w)
    theta = np.random.default_rng(3).standard_normal(4) / 3
    z, t = X @ theta, P.y
    u = 1 - t * z
    huber = np.where(u > w, u, np.where(u < -w, 0.0, (u + w) ** 2 / (4 * w)))
    if loss == "huber_hinge":   # the data reach both the quadratic and the linear piece
        assert np.any(np.abs(u) <= w) and np.any(u > w)
    per_sample = {"logistic": np.logaddexp(0, -t * z), "hinge": np.maximum(0, 1 - t * z),
                  "squared": 0.5 * (z - t) ** 2, "huber_hinge": huber}[loss]
    expected = per_sample.mean() + 0.15 * theta @ theta
    assert P.objective(theta) == pytest.approx(expected, rel=1e-14)
    h = 1e-6
    fd = np.array([(P.objective(theta + h * e) - P.objective(theta - h * e)) / (2 * h)
                   for e in np.eye(4)])
    # away from hinge kinks the central difference is exact up to rounding (2 eps F / 2h)
    np.testing.assert_allclose(P.gradient(theta), fd, atol=1e-8)


BAD = [
    (dict(X=[[np.nan, 0.0]] * 4), ValueError, "X contains NaN"),
    (dict(X=[[np.inf, 0.0]] * 4), ValueError, "X contains NaN or infinite"),
    (dict(X=np.zeros(4)), ValueError, "2-dimensional"),
    (dict(X=np.zeros((0, 2)), y=np.zeros(0)), ValueError, "at least one row"),
    (dict(X=[["a", "b"]] * 4), TypeError, "real numbers"),
    (dict(X=scipy.sparse.csr_matrix(np.full((4, 2), np.nan))), ValueError, "X contains NaN"),
    (dict(X=scipy.sparse.csr_matrix((0, 2)), y=np.zeros(0)), ValueError, "at least one row"),
    (dict(y=[1, 2, 1, 1]), ValueError, "needs labels in {-1, \\+1} or in {0, 1}.*classes"),
    (dict(y=[1, 2, 3, 3]), ValueError, "classes"),
    (dict(y=[1, 2, 3, 3], classes=(1, 2)), ValueError, r"outside classes=\(1, 2\): \[3\]"),
    (dict(y=[0, 1, 0]), ValueError, "y must have shape"),
    (dict(y=[0.0, np.nan, 1.0, 1.0]), ValueError, "y contains NaN"),
    (dict(loss="squared", y=[0.0, 2.0, 0.0, 0.0]), ValueError, "label_bound"),
    (dict(loss="squared", y=[0.0, np.inf, 0.0, 0.0]), ValueError, "y contains NaN"),
    (dict(loss="logit"), ValueError, "loss must be one of"),
    (dict(radius=0.0), ValueError, "radius must lie in"),
    (dict(radius=-1.0), ValueError, "radius must lie in"),
    (dict(radius=None), ValueError, "needs reg > 0"),
    (dict(reg=-0.1), ValueError, "reg must lie in"),
    (dict(reg=np.nan), ValueError, "reg must be finite"),
    (dict(row_norm=0.0), ValueError, "row_norm must lie in"),
    (dict(row_norm="1"), TypeError, "row_norm must be a real number"),
    (dict(radius=True), TypeError, "radius must be a real number"),
    (dict(clip_rows="yes"), TypeError, "clip_rows must be a bool"),
    (dict(loss="huber_hinge", huber_width=0.0), ValueError, "huber_width must lie in"),
    (dict(loss="huber_hinge", huber_width=-0.5), ValueError, "huber_width must lie in"),
    (dict(loss="huber_hinge", huber_width=np.nan), ValueError, "huber_width must be finite"),
    (dict(loss="huber_hinge", huber_width=np.inf), ValueError, "huber_width must be finite"),
    (dict(loss="huber_hinge", huber_width="0.5"), TypeError, "huber_width must be a real number"),
    (dict(loss="huber_hinge", huber_width=None), TypeError, "huber_width must be a real number"),
    (dict(loss="huber_hinge", huber_width=True), TypeError, "huber_width must be a real number"),
    (dict(huber_width=0.0), ValueError, "huber_width must lie in"),   # checked for every loss
    (dict(loss="huber_hinge", y=[1, 2, 3, 3]), ValueError, "classes"),
]


@pytest.mark.parametrize("kwargs,error,match", BAD)
def test_bad_input_is_rejected(kwargs, error, match):
    args = dict(X=np.full((4, 2), 0.1), y=[0, 1, 0, 1], loss="logistic")
    args.update(kwargs)
    with pytest.raises(error, match=match):
        Problem(args.pop("X"), args.pop("y"), **args)


def test_theta_is_checked():
    X, y = data()
    P = Problem(X, y)
    with pytest.raises(ValueError, match=r"theta must have shape \(4,\)"):
        P.objective(np.zeros(3))
    with pytest.raises(ValueError, match="theta contains NaN"):
        P.gradient(np.full(4, np.nan))


from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(2, 30), st.integers(1, 6)),
              elements=st.floats(-1e6, 1e6)),
       st.floats(1e-3, 1e3))
def test_clipped_rows_respect_the_bound_and_keep_direction(X, bound):
    y = np.arange(X.shape[0]) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        P = Problem(X, y, row_norm=bound)
    norms = np.linalg.norm(X, axis=1)
    assert np.all(np.linalg.norm(P.X, axis=1) <= bound)
    inside = norms <= bound
    assert np.array_equal(P.X[inside], X[inside])
    out = ~inside
    # a clipped row is the original scaled by a positive factor (to a few ulps; subnormal
    # entries have absolute spacing 5e-324, scaled back by norm/bound <= 1e10 here)
    np.testing.assert_allclose(P.X[out] * norms[out, None] / bound, X[out], rtol=1e-12, atol=1e-300)
