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


# -- rows beyond float64's squares, and the numerical range of the constants --------------------
def _direction(x):
    """x / ||x|| computed after scaling by the largest |entry| (no overflow or underflow)."""
    x = np.asarray(x, dtype=float) / np.max(np.abs(x))
    return x / np.linalg.norm(x)


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_rows_whose_squares_overflow_are_clipped_onto_the_bound(layout):
    """A row of 1e200s has norm 2e200, not inf: it is clipped onto row_norm with its direction,
    not multiplied by row_norm / inf = 0. Rows of norm beyond float64 (1e308s) too; a row whose
    squares underflow keeps its bits (it is far inside the bound)."""
    p = 4
    X, y = data(n=8, p=p)
    X[0] = 1e200
    X[1] = [1.5e308, -1.5e308, 1.5e308, 0.0]        # norm 2.6e308: beyond float64
    X[2] = [3e200, -4e200, 0.0, 0.0]
    X[3] = 1e-200                                   # squares underflow to 0
    given = scipy.sparse.csr_matrix(X) if layout == "csr" else X
    with pytest.warns(UserWarning, match="3 of 8 rows had norm above row_norm=2"):
        P = Problem(given, y, row_norm=2.0)
    Z = P.X.toarray() if layout == "csr" else P.X
    # each entry of a clipped row is rounded twice at most (divided by its largest entry, then
    # scaled), and its norm sums p squares: a few (p + 4) ulps
    tol = 4 * (p + 4) * np.finfo(float).eps
    for i in range(3):
        assert np.linalg.norm(Z[i]) <= 2.0
        np.testing.assert_allclose(np.linalg.norm(Z[i]), 2.0, rtol=tol)
        np.testing.assert_allclose(Z[i] / 2.0, _direction(X[i]), rtol=tol, atol=tol)
    assert np.array_equal(Z[3:], X[3:])


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_row_norms_scale_rows_whose_squares_overflow_or_underflow(layout):
    from dpsolve._row_ops import row_norms
    rng = np.random.default_rng(3)
    X = rng.standard_normal((6, 5))
    X[0] *= 1e200
    X[1] *= 1e-200
    X[2] = [1.5e308, 1.5e308, 1.5e308, 0.0, 0.0]
    X[3] = 0.0
    given = scipy.sparse.csr_matrix(X) if layout == "csr" else X
    norms = row_norms(given)
    for i in (0, 1):
        m = np.max(np.abs(X[i]))
        np.testing.assert_allclose(norms[i], m * np.linalg.norm(X[i] / m), rtol=1e-15)
    assert norms[2] == np.inf                       # sqrt(3) 1.5e308 is beyond float64
    assert norms[3] == 0.0
    # ordinary rows keep the plain computation's value (dense: bit for bit)
    plain = np.linalg.norm(X[4:], axis=1)
    if layout == "dense":
        assert np.array_equal(norms[4:], plain)
    else:
        np.testing.assert_allclose(norms[4:], plain, rtol=1e-15)


def test_clipping_onto_the_smallest_bound_ends():
    """row_norm = 1e-150, the bottom of the range (hinge: no smoothness beta = B^2/4 to leave
    it): unit rows are clipped onto it in a bounded number of rounds (a bound of 1e-160 once
    looped for ever on their underflowing squares)."""
    X, y = data()
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    with pytest.warns(UserWarning, match="50 of 50 rows"):
        P = Problem(X, y, "hinge", row_norm=1e-150)
    from dpsolve._row_ops import row_norms
    norms = row_norms(P.X)
    assert np.all(norms <= 1e-150)
    np.testing.assert_allclose(norms, 1e-150, rtol=1e-14)
    np.testing.assert_allclose(P.X * 1e150, X, rtol=1e-14, atol=1e-15)


class _Unread:
    """Stands in for X: any use of it fails the test (the range is checked before the data)."""

    def __array__(self, *args, **kwargs):
        raise AssertionError("X was read")

    def __getattr__(self, name):
        raise AssertionError(f"X was read ({name})")


RANGE = [
    (dict(reg=1e-300), r"reg must be 0 or lie in \[1e-150, 1e\+150\]"),
    (dict(reg=1e200), r"reg must be 0 or lie in \[1e-150"),
    (dict(radius=1e-300), r"radius must lie in \[1e-150, 1e\+150\]"),
    (dict(radius=1e200), r"radius must lie in \[1e-150"),
    (dict(row_norm=1e-160), r"row_norm must lie in \[1e-150"),
    (dict(row_norm=1e150), r"row_norm=1e\+150 put the smoothness beta = 2.5e\+299 outside"),
    (dict(row_norm=1e-100), r"row_norm=1e-100 put the smoothness beta = 2.5e-201 outside"),
    (dict(loss="huber_hinge", huber_width=1e300), r"huber_width must lie in \[1e-150"),
    (dict(loss="huber_hinge", huber_width=1e-150, row_norm=2.0),
     r"row_norm=2, huber_width=1e-150 put the smoothness beta = 2e\+150"),
    (dict(loss="squared", label_bound=1e300), r"label_bound must lie in \[1e-150"),
    (dict(loss="squared", radius=1e100, label_bound=1e100, row_norm=1e70),
     r"row_norm=1e\+70, radius=1e\+100, label_bound=1e\+100 put the Lipschitz constant L"),
    (dict(reg=1e100, radius=1e100),
     r"row_norm=1, reg=1e\+100, radius=1e\+100 put the gradient bound G"),
    (dict(loss="squared", radius=None, reg=1e-150, label_bound=1e100),
     r"reg=1e-150, label_bound=1e\+100 put the bound sqrt\(2 loss\(0\) / reg\)"),
    (dict(fit_intercept=True, intercept_scale=1e-300), r"intercept_scale must lie in \[1e-150"),
    (dict(fit_intercept=True, row_norm=1e75, intercept_scale=2e75),      # beta = B^2/4 + s^2/4
     r"row_norm=1e\+75, intercept_scale=2e\+75 put the smoothness beta = 1.25e\+150"),
]


@pytest.mark.parametrize("kwargs,match", RANGE)
def test_constants_outside_the_numerical_range_are_refused_before_the_data(kwargs, match):
    """Each constant and each derived one (L, beta, G, the minimiser's norm bound) in
    [1e-150, 1e150], so that their squares and products stay finite and nonzero in float64; the
    message names the parameters (and the range), and X is not touched."""
    kwargs = dict(kwargs)
    loss = kwargs.pop("loss", "logistic")
    with pytest.raises(ValueError, match=match):
        Problem(_Unread(), [0, 1], loss, **kwargs)


def test_constants_at_the_edges_of_the_range_are_accepted():
    X, y = data()
    assert Problem(X, y, reg=1e-150, radius=1e150).gradient_bound == 2.0   # 1 + 1e-150 1e150
    assert Problem(X, y, radius=None, reg=1e-150).reg == 1e-150
    assert Problem(X, y, "hinge", row_norm=1e150).lipschitz == 1e150       # hinge: no beta
    Q = Problem(X, np.zeros(50), "squared", radius=1e149, label_bound=1e-150)
    assert Q.lipschitz == 1e149
    assert Problem(X, y, reg=0.0).reg == 0.0                                # 0 is not a scale


def test_loss_function_is_a_deprecated_alias_of_loss_object():
    rng = np.random.default_rng(0)
    problem = Problem(rng.uniform(-0.5, 0.5, (20, 2)), np.where(rng.random(20) < 0.5, -1, 1),
                      "logistic", radius=1.0)
    assert problem.loss == "logistic"
    with pytest.warns(DeprecationWarning, match="loss_object"):
        assert problem.loss_function is problem.loss_object
