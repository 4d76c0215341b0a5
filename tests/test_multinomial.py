"""The multinomial (softmax) loss for K classes (docs/conventions.md, losses): kernels, Problem,
reference minimiser, bounds, clipped_gd, output perturbation, and the solvers that refuse it.

theta has shape (p, K); norms of theta are Frobenius norms. Tolerances are worst-case rounding
bounds (eps = 2^-52, gamma_k = k eps / (1 - k eps)) or follow from the certificates.
"""
import math

import numpy as np
import pytest
from scipy import special

import dpsolve
from dpsolve import Problem, bounds
from dpsolve._kernels import gd, losses
from dpsolve.privacy import gamma_norm_noise
from dpsolve.reference import certificate, excess_risk, reference_minimizer
from test_kernels import assert_same_output_on_1_2_3_threads

EPS = np.finfo(float).eps
SUPPORTED = "does not support loss='multinomial'.*clipped_gd, output_perturbation"


def gamma(k):
    return k * EPS / (1 - k * EPS)


def digits(n=300, seed=0):
    """scikit-learn's 8x8 digits (shipped with it, never downloaded), 10 classes, pooled by 2x2
    means to 16 features, rows scaled to unit norm (a per-record transform); n records drawn
    by a seeded permutation."""
    sk = pytest.importorskip("sklearn.datasets")
    X, y = sk.load_digits(return_X_y=True)
    X = X.reshape(-1, 4, 2, 4, 2).mean(axis=(2, 4)).reshape(-1, 16)
    rows = np.random.default_rng(seed).permutation(y.shape[0])[:n]
    return dpsolve.datasets.unit_rows(X[rows]), y[rows]


def blobs(n=200, p=4, K=3, seed=0):
    """K Gaussian clusters, rows scaled to unit norm; labels 0..K-1."""
    rng = np.random.default_rng(seed)
    centres = 1.5 * rng.standard_normal((K, p))
    y = rng.integers(K, size=n)
    return dpsolve.datasets.unit_rows(centres[y] + rng.standard_normal((n, p))), y


# -- kernels ---------------------------------------------------------------------------------
def _high_precision(Z, labels):
    """Loss, derivative and softmax in 50-digit arithmetic (mpmath), rounded to float64.

    Written so that no step cancels (50 digits would not resolve log(1 + 1e-200) or
    softmax_y - 1 when the other classes have probability 1e-200): the loss as
    log1p(sum_{k != a} e_k) + (m - z_y), with e_k = exp(z_k - m), m = z_a the largest logit;
    the y-th derivative as -sum_{k != y} e_k / sum_k e_k."""
    mp = pytest.importorskip("mpmath")     # a dependency of dp-accounting
    n, K = Z.shape
    v, d, s = np.empty(n), np.empty((n, K)), np.empty((n, K))
    with mp.workdps(50):
        for i in range(n):
            z = [mp.mpf(float(t)) for t in Z[i]]
            y, a = int(labels[i]), int(np.argmax(Z[i]))
            e = [mp.exp(t - z[a]) for t in z]
            total = mp.fsum(e)
            v[i] = float(mp.log1p(mp.fsum(e[:a] + e[a + 1:])) + (z[a] - z[y]))
            for k in range(K):
                s[i, k] = float(e[k] / total)
                d[i, k] = float(e[k] / total if k != y else -mp.fsum(e[:y] + e[y + 1:]) / total)
    return v, d, s


@pytest.mark.parametrize("K", [2, 3, 10])
def test_values_and_derivatives_match_high_precision(K):
    """Error bounds of the kernels (with m = max_k z_k, p the softmax):
    value: (K + 4) eps v + eps sum_k p_k |z_k - m| (relative gamma_K in the sum of
    exponentials, eps in exp, log1p and the additions, and the rounding of z_k - m, which moves
    exp(z_k - m) by p_k |z_k - m| eps / 2 relative to the sum); derivative entry k:
    (K + 3) eps |d_k| + eps sum_j p_j |z_j - m|. Plus eps/2 |.| for rounding the reference."""
    rng = np.random.default_rng(K)
    n = 400
    Z = rng.standard_normal((n, K)) * rng.choice([0.1, 3.0, 30.0, 300.0], (n, 1))
    labels = rng.integers(K, size=n).astype(np.intp)
    # well-classified records, whose loss is tiny: log1p must keep its relative accuracy
    Z[:50] = 0.0
    Z[np.arange(50), labels[:50]] = rng.uniform(20, 40, 50)
    v_ref, d_ref, s = _high_precision(Z, labels)
    spread = np.sum(s * np.abs(Z - Z.max(axis=1, keepdims=True)), axis=1)
    v = losses.multinomial_values(Z, labels)
    assert np.all(np.abs(v - v_ref) <= EPS * ((K + 5) * v_ref + spread))
    assert np.all(v[:50] > 0) and np.all(v[:50] < (K - 1) * math.exp(-19))
    norms = np.empty(n)
    d = losses.multinomial_derivatives(Z, labels, norms)
    d_tol = EPS * ((K + 4) * np.abs(d_ref) + spread[:, None])
    assert np.all(np.abs(d - d_ref) <= d_tol)
    # the returned norm is the norm of the row written; ||s - e_y|| <= sqrt(2)
    assert np.all(np.abs(norms - np.linalg.norm(d, axis=1))
                  <= gamma(K + 2) * np.linalg.norm(d, axis=1))
    assert np.all(norms <= math.sqrt(2) * (1 + 4 * EPS))
    assert norms.max() > 1.4                    # the 300-scaled rows come close to sqrt(2)


def test_two_classes_is_the_logistic_loss_bit_for_bit():
    """With logits (0, u) and class 1 = label +1, the multinomial formulas reduce to the
    logistic ones of _loss.pxd operation for operation: the same bits."""
    rng = np.random.default_rng(1)
    u = np.concatenate([rng.uniform(-40, 40, 2000), [0.0, -0.0, 800.0, -800.0, 1e-300]])
    classes = rng.integers(2, size=u.shape[0]).astype(np.intp)
    labels = np.where(classes == 1, 1.0, -1.0)
    Z = np.column_stack([np.zeros_like(u), u])
    logistic = losses.LOSS_KINDS["logistic"]
    assert np.array_equal(losses.multinomial_values(Z, classes),
                          losses.loss_values(logistic, u, labels, 0.0))
    d = losses.multinomial_derivatives(Z, classes)
    assert np.array_equal(d[:, 1], losses.loss_derivatives(logistic, u, labels, 0.0))
    assert np.array_equal(d[:, 0], -d[:, 1])


def test_extreme_logits_stay_finite():
    Z = np.array([[800.0, -800.0, 0.0], [800.0, -800.0, 0.0], [0.0, 0.0, 0.0]])
    labels = np.array([1, 0, 2], dtype=np.intp)
    np.testing.assert_allclose(losses.multinomial_values(Z, labels), [1600.0, 0.0, math.log(3)],
                               rtol=4 * EPS)
    d = losses.multinomial_derivatives(Z, labels)
    np.testing.assert_array_equal(d[:2], [[1.0, -1.0, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(d[2], [1 / 3, 1 / 3, -2 / 3], rtol=4 * EPS)


def test_wrappers_check_shapes_and_labels():
    Z = np.zeros((4, 3))
    for f in (losses.multinomial_values, losses.multinomial_derivatives):
        with pytest.raises(ValueError, match=r"labels must lie in \[0, 3\), got 3 at index 2"):
            f(Z, np.array([0, 1, 3, 2], dtype=np.intp))
        with pytest.raises(ValueError, match=r"got -1 at index 0"):
            f(Z, np.array([-1, 1, 2, 2], dtype=np.intp))
        with pytest.raises(ValueError, match="differ in length"):
            f(Z, np.zeros(3, dtype=np.intp))
        with pytest.raises(ValueError, match="at least one column"):
            f(np.zeros((4, 0)), np.zeros(4, dtype=np.intp))
        with pytest.raises(ValueError):            # float labels: wrong buffer type
            f(Z, np.zeros(4))
    with pytest.raises(ValueError, match="norms must have length 4"):
        losses.multinomial_derivatives(Z, np.zeros(4, dtype=np.intp), np.empty(3))


def _clipped_multinomial_reference(X, y, theta, clip):
    """Python floats in the kernel's order: 64 fixed row blocks, logits summed over j in order,
    block sums added in block order. The derivative row comes from the kernel (tested above)."""
    n, p = X.shape
    K = theta.shape[1]
    norms = np.linalg.norm(X, axis=1)
    out = [[0.0] * K for _ in range(p)]
    clipped = 0
    for b in range(64):
        acc = [[0.0] * K for _ in range(p)]
        for i in range(b * n // 64, (b + 1) * n // 64):
            z = [0.0] * K
            for j in range(p):
                for k in range(K):
                    z[k] += float(X[i, j]) * float(theta[j, k])
            r = np.empty(1)
            d = [float(t) for t in losses.multinomial_derivatives(np.array([z]), y[i:i + 1], r)[0]]
            g = float(r[0]) * float(norms[i])
            if g > clip:
                d = [t * (clip / g) for t in d]
                clipped += 1
            for j in range(p):
                for k in range(K):
                    acc[j][k] += d[k] * float(X[i, j])
        for j in range(p):
            for k in range(K):
                out[j][k] += acc[j][k]
    return np.array(out), clipped


def _kernel_sum(X, y, theta, clip):
    p, K = theta.shape
    out = np.empty((p, K))
    clipped = gd.clipped_gradient_sum_multinomial(
        X, y, theta, np.linalg.norm(X, axis=1), clip, out, np.empty((64, p * K)),
        np.empty((64, 2 * K)))
    return out, clipped


@pytest.mark.parametrize("clip", [0.3, math.inf])
def test_clipped_sum_matches_reference(clip):
    rng = np.random.default_rng(21)
    n, p, K = 300, 4, 3
    X = rng.normal(size=(n, p)) / 2
    y = rng.integers(K, size=n).astype(np.intp)
    theta = rng.normal(size=(p, K))
    out, clipped = _kernel_sum(X, y, theta, clip)
    expected, expected_clipped = _clipped_multinomial_reference(X, y, theta, clip)
    assert np.array_equal(out, expected) and clipped == expected_clipped
    if clip == math.inf:
        # NumPy: X^T (softmax(X theta) - Y). Each logit differs by at most 2 gamma_p |X||theta|
        # between the two evaluations, which moves a derivative row by at most half that (L2);
        # each softmax entry is within (K + 4) eps (plus the spread term, small here) in both;
        # the sums over n rows add 2 gamma_n |X|^T |D|.
        S = special.softmax(X @ theta, axis=1)
        D = S - np.eye(K)[y]
        z_err = np.linalg.norm(2 * gamma(p) * (np.abs(X) @ np.abs(theta)), axis=1)
        spread = np.sum(S * np.abs(X @ theta - (X @ theta).max(axis=1, keepdims=True)), axis=1)
        d_err = 0.5 * z_err + 2 * EPS * ((K + 4) + spread)
        tol = 2 * gamma(n) * (np.abs(X).T @ np.abs(D)) + np.abs(X).T @ d_err[:, None]
        assert np.all(np.abs(out - X.T @ D) <= tol)
        assert clipped == 0
    else:
        assert 0 < clipped < n


@pytest.mark.slow
def test_clipped_sum_is_the_same_on_one_thread(tmp_path):
    """Fixed blocks: the same bits for 1, 2 and 3 OpenMP threads."""
    code = (
        "import numpy as np; from dpsolve._kernels import gd\n"
        "r = np.random.default_rng(3); X = r.normal(size=(5000, 7))\n"
        "y = r.integers(10, size=5000).astype(np.intp); o = np.empty((7, 10))\n"
        "gd.clipped_gradient_sum_multinomial(X, y, r.normal(size=(7, 10)),"
        " np.linalg.norm(X, axis=1), 0.3, o, np.empty((64, 70)), np.empty((64, 20)))\n"
        "print(o.tobytes().hex())"
    )
    assert_same_output_on_1_2_3_threads(code, tmp_path)


def test_clipped_sum_rejects_bad_shapes_and_labels():
    X, y, theta = np.ones((10, 3)), np.zeros(10, dtype=np.intp), np.zeros((3, 4))
    args = (np.ones(10), 1.0, np.empty((3, 4)))
    with pytest.raises(ValueError, match="scratch"):
        gd.clipped_gradient_sum_multinomial(X, y, theta, *args, np.empty((64, 3)),
                                            np.empty((64, 8)))
    with pytest.raises(ValueError, match="work"):
        gd.clipped_gradient_sum_multinomial(X, y, theta, *args, np.empty((64, 12)),
                                            np.empty((64, 4)))
    with pytest.raises(ValueError, match="shape mismatch"):
        gd.clipped_gradient_sum_multinomial(X, y, np.zeros((2, 4)), *args, np.empty((64, 8)),
                                            np.empty((64, 8)))
    bad = y.copy()
    bad[7] = 4
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 4\), got 4 at index 7"):
        gd.clipped_gradient_sum_multinomial(X, bad, theta, *args, np.empty((64, 12)),
                                            np.empty((64, 8)))


# -- Problem ---------------------------------------------------------------------------------
def test_labels_classes_and_shapes():
    X, _ = blobs(6, 4)
    P = Problem(X, ["emu", "cat", "dog", "cat", "emu", "emu"], "multinomial",
                classes=("cat", "dog", "emu"))
    assert P.classes == ("cat", "dog", "emu") and P.n_classes == 3
    assert P.y.dtype == np.intp and P.y.tolist() == [2, 0, 1, 0, 2, 2]
    assert not P.y.flags.writeable
    assert P.theta_shape == (4, 3)
    Q = Problem(X, [7, 3, 5, 3, 9, 7], "multinomial", classes=(3, 5, 7, 9))
    assert Q.classes == (3, 5, 7, 9) and Q.y.tolist() == [2, 0, 1, 0, 3, 2]
    assert Q.margins(np.zeros((4, 4))).shape == (6, 4)
    # the binary losses: two classes, a vector parameter, nothing else changes
    for loss in ("logistic", "hinge", "huber_hinge"):
        B = Problem(X, [0, 1, 0, 1, 1, 0], loss)
        assert B.n_classes == 2 and B.theta_shape == (4,) and B.y.dtype == np.float64
    S = Problem(X, np.zeros(6), "squared")
    assert S.n_classes is None and S.theta_shape == (4,)


@pytest.mark.parametrize("y, match", [
    ([1, 1, 1, 3], r"outside classes=\(0, 1, 2\): \[3\]"),
    (["a"] * 4, r"outside classes=\(0, 1, 2\): \['a'\]"),
    ([0.0, np.nan, 1.0, 2.0], "y contains NaN"),
    ([0, 1, 2], "y must have shape"),
])
def test_bad_labels(y, match):
    with pytest.raises(ValueError, match=match):
        Problem(np.full((4, 2), 0.1), y, "multinomial", n_classes=3)


def test_classes_are_public():
    """K and the coding come from classes / n_classes, never from the labels present: a
    dataset holding one class still has a (p, K) parameter, and classes may be given in any
    order (y == classes[k] is coded k)."""
    X = np.full((4, 2), 0.1)
    P = Problem(X, [1, 1, 1, 1], "multinomial", n_classes=3)
    assert P.classes == (0, 1, 2) and P.theta_shape == (2, 3) and P.y.tolist() == [1] * 4
    Q = Problem(X, ["b", "a", "c", "a"], "multinomial", classes=("c", "a", "b"))
    assert Q.y.tolist() == [2, 1, 0, 1]
    with pytest.raises(ValueError, match="needs the public label set.*n_classes"):
        Problem(X, [0, 1, 2, 0], "multinomial")


def test_constants_and_description():
    """docs/conventions.md: L = sqrt(2) B (Frobenius), beta = B^2 / 2."""
    X, y = blobs(50, 4, 5)
    P = Problem(X, y, "multinomial", n_classes=5, radius=2.0, reg=0.1, row_norm=1.5)
    assert P.lipschitz == math.sqrt(2) * 1.5 and P.smoothness == 1.5 ** 2 / 2
    assert P.gradient_bound == math.sqrt(2) * 1.5 + 0.1 * 2.0
    assert P.describe()["n_classes"] == 5 and "n_classes=5" in repr(P)
    # only multinomial's description (and reference cache key) mentions the classes
    L = Problem(X, y % 2, "logistic", radius=2.0, reg=0.1, row_norm=1.5)
    assert "n_classes" not in L.describe()
    # the constants hold: per-sample gradients ||x|| ||s - e_y|| <= L, and the Hessian of the
    # loss in the logits, diag(s) - s s^T, has largest eigenvalue <= 1/2
    rng = np.random.default_rng(2)
    theta = rng.standard_normal((4, 5)) * 50
    r = np.empty(50)
    losses.multinomial_derivatives(np.ascontiguousarray(P.margins(theta)), P.y, r)
    assert np.all(r * np.linalg.norm(P.X, axis=1) <= P.lipschitz * (1 + 4 * EPS))
    for s in [special.softmax(rng.standard_normal(5) * 3) for _ in range(200)] + [
            np.array([0.5, 0.5, 0.0, 0.0, 0.0])]:
        assert np.linalg.eigvalsh(np.diag(s) - np.outer(s, s)).max() <= 0.5 * (1 + 8 * EPS)


def test_theta_is_checked():
    X, y = blobs(20, 4, 3)
    P = Problem(X, y, "multinomial", n_classes=3)
    with pytest.raises(ValueError, match=r"theta must have shape \(4, 3\) for loss='multinomial'"):
        P.objective(np.zeros(4))
    with pytest.raises(ValueError, match=r"shape \(4, 3\)"):
        P.gradient(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="theta contains NaN"):
        P.objective(np.full((4, 3), np.nan))
    with pytest.raises(ValueError, match=r"theta must have shape \(4,\) for loss='logistic'"):
        Problem(X, y % 2).objective(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="K x K matrix"):
        P.loss_second_derivatives(np.zeros((4, 3)))


def test_objective_and_gradient():
    X, y = blobs(60, 4, 3, seed=2)
    P = Problem(X, y, "multinomial", n_classes=3, radius=1.0, reg=0.3)
    theta = np.random.default_rng(3).standard_normal((4, 3))
    Z = X @ theta
    per_sample = special.logsumexp(Z, axis=1) - Z[np.arange(60), y]
    F = P.objective(theta)
    assert F == pytest.approx(per_sample.mean() + 0.15 * np.sum(theta ** 2), rel=1e-14)
    G = P.gradient(theta)
    assert G.shape == (4, 3) and P.loss_derivatives(theta).shape == (60, 3)
    np.testing.assert_allclose(G, X.T @ (special.softmax(Z, axis=1) - np.eye(3)[y]) / 60
                               + 0.3 * theta, rtol=1e-13, atol=1e-15)
    # central differences: truncation h^2/6 times the third derivative along a unit direction
    # (the third central moment of logits a = V^T x with ||a|| <= 1: at most
    # (max a - min a) Var(a) <= sqrt(2) / 2); rounding of the two evaluations over 2h, each off
    # by at most sqrt(2) times the logit error (gamma_p |X| |theta| over K logits), the kernel's
    # (K + 4) eps v + eps max|z_k - m|, and gamma_n in the mean (with |F| + 1 for theta +- e)
    h = 1e-5
    logits = np.abs(X) @ np.abs(theta)
    F_err = (math.sqrt(2) * gamma(4) * math.sqrt(3) * logits.max()
             + (gamma(60) + 7 * EPS) * (abs(F) + 1) + 2 * EPS * np.abs(Z).max())
    fd = np.empty((4, 3))
    for j in range(4):
        for k in range(3):
            e = np.zeros((4, 3))
            e[j, k] = h
            fd[j, k] = (P.objective(theta + e) - P.objective(theta - e)) / (2 * h)
    assert np.all(np.abs(fd - G) <= h * h / (6 * math.sqrt(2)) + 2 * F_err / (2 * h))


def _two_class_tol(X, W, F):
    """How far the K = 2 and logistic objectives at W and w = W1 - W0 may differ by rounding:
    the margins (two dot products and a difference against one dot product of a difference,
    and the centring of W) differ by at most 4 gamma_p |X| (|W0| + |W1|), the loss is
    1-Lipschitz in the margin, and the sums and the regulariser add 16 eps (1 + F)."""
    return (float(np.mean(4 * gamma(X.shape[1]) * np.abs(X) @ np.abs(W).sum(axis=1)))
            + 16 * EPS * (1 + abs(F)))


def test_two_classes_objective_is_the_logistic_objective():
    """K = 2, W = (W0, W1), w = W1 - W0: the losses agree (logit difference = margin); the
    regulariser agrees with reg / 2 for centred W (||W||^2 = ||w||^2 / 2), and for any W the
    multinomial objective is the larger."""
    X, y = dpsolve.datasets.make_synthetic(200, 4, rng=5)
    lam = 0.2
    M = Problem(X, y, "multinomial", classes=(-1, 1), reg=lam, radius=None)
    Lg = Problem(X, y, "logistic", reg=lam / 2, radius=None)
    rng = np.random.default_rng(6)
    for _ in range(5):
        W = rng.standard_normal((4, 2))
        w = W[:, 1] - W[:, 0]
        C = W - W.mean(axis=1, keepdims=True)
        tol = _two_class_tol(X, W, Lg.objective(w))
        assert abs(M.objective(C) - Lg.objective(w)) <= tol
        assert M.objective(W) >= Lg.objective(w) - tol


# -- reference minimiser ----------------------------------------------------------------------
SETTINGS = [(1.0, 0.0), (100.0, 0.0), (1.0, 0.05), (None, 0.01)]
SETTING_IDS = ["active", "large-ball", "active-reg", "unconstrained"]


@pytest.mark.slow
@pytest.mark.parametrize("radius,reg", SETTINGS, ids=SETTING_IDS)
def test_reference_reaches_tol_on_digits(radius, reg, tmp_path):
    P = Problem(*digits(), "multinomial", n_classes=10, radius=radius, reg=reg)
    ref = reference_minimizer(P, cache=tmp_path)
    assert ref.theta.shape == (16, 10) and not ref.theta.flags.writeable
    assert 0.0 <= ref.gap <= 1e-9
    assert ref.value == P.objective(ref.theta)
    if radius is not None:
        assert np.linalg.norm(ref.theta) <= radius
    # centred: adding a vector to every column changes no loss, only the norm
    assert np.all(np.abs(ref.theta.sum(axis=1)) <= 1e-12 * np.linalg.norm(ref.theta))
    # the certificate is an upper bound on F(theta) - F(theta*) at feasible points, and no
    # feasible point is better than value - gap
    rng = np.random.default_rng(4)
    for scale in (1e-6, 1e-3, 1.0):
        theta = ref.theta + scale * rng.standard_normal((16, 10))
        if radius is not None:
            theta *= min(1.0, radius / np.linalg.norm(theta) * (1 - 1e-12))
        assert P.objective(theta) - ref.value <= certificate(P, theta) + ref.gap
        assert P.objective(theta) >= ref.value - ref.gap
    assert certificate(P, np.zeros((16, 10))) >= P.objective(np.zeros((16, 10))) - ref.value


@pytest.mark.parametrize("reg", [1e-2, pytest.param(1e-3, marks=pytest.mark.slow)])
def test_reference_agrees_with_scikit_learn(reg):
    """scikit-learn's LogisticRegression minimises C sum_i loss + ||W||^2 / 2, the objective
    times n C with C = 1/(n lambda). Both solutions are certified here: by lambda-strong
    convexity, ||theta - theta*||^2 <= 2 gap / lambda for each, so they are within the sum."""
    linear_model = pytest.importorskip("sklearn.linear_model")
    X, y = digits()
    P = Problem(X, y, "multinomial", n_classes=10, radius=None, reg=reg)
    ref = reference_minimizer(P, cache=False)
    clf = linear_model.LogisticRegression(C=1 / (P.n * reg), fit_intercept=False, tol=1e-12,
                                          max_iter=10_000).fit(X, y)
    assert tuple(clf.classes_) == P.classes
    theirs = np.ascontiguousarray(clf.coef_.T)
    gap_theirs = certificate(P, theirs)
    distance = math.sqrt(2 * gap_theirs / reg) + math.sqrt(2 * ref.gap / reg)
    assert np.linalg.norm(theirs - ref.theta) <= distance
    assert distance <= 1e-4 * np.linalg.norm(ref.theta)     # a test that can fail


@pytest.mark.parametrize("radius,reg", [(None, 0.02), (1.0, 0.05), (1.0, 0.0)])
def test_two_classes_reference_is_the_logistic_reference(radius, reg):
    """min over ||W||_F <= R of the K = 2 objective with reg lambda = min over ||w|| <= sqrt(2) R
    of the logistic objective with reg lambda / 2, at W* = (-w*/2, w*/2) (the minimiser is
    centred; see test_two_classes_objective_is_the_logistic_objective)."""
    X, y = dpsolve.datasets.make_synthetic(300, 4, noise=0.5, rng=7)
    M = Problem(X, y, "multinomial", classes=(-1, 1), radius=radius, reg=reg)
    Lg = Problem(X, y, "logistic", radius=None if radius is None else math.sqrt(2) * radius,
                 reg=reg / 2)
    rm, rl = reference_minimizer(M, cache=False), reference_minimizer(Lg, cache=False)
    # both values lie in [F*, F* + gap] (each certificate covers the rounding of its value)
    assert abs(rm.value - rl.value) <= rm.gap + rl.gap
    w = rm.theta[:, 1] - rm.theta[:, 0]
    assert Lg.objective(w) - rl.value <= rm.gap + rl.gap + _two_class_tol(X, rm.theta, rm.value)
    if reg > 0:     # (lambda/2)-strong convexity: ||w - w*||^2 <= 4 gap / lambda for each
        assert np.linalg.norm(w - rl.theta) <= (
            2 * (math.sqrt(rm.gap / reg) + math.sqrt(rl.gap / reg))
            + 4 * EPS * np.linalg.norm(rm.theta))


def test_reference_cache_round_trip_and_excess_risk(tmp_path):
    X, y = blobs(150, 4, 3, seed=8)
    P = Problem(X, y, "multinomial", n_classes=3, radius=None, reg=0.05)
    first = reference_minimizer(P, cache=tmp_path)
    second = reference_minimizer(P, cache=tmp_path)
    assert not first.cached and second.cached
    assert np.array_equal(first.theta, second.theta) and second.gap <= 1e-9
    assert len(list(tmp_path.glob("reference-*.npz"))) == 1
    theta = np.full((4, 3), 0.1)
    assert excess_risk(P, theta, first) == P.objective(theta) - first.value
    with pytest.raises(ValueError, match="theta must have shape"):
        excess_risk(P, np.zeros(4), first)
    other = Problem(X, y % 2, "logistic", radius=None, reg=0.05)
    with pytest.raises(ValueError, match="reference does not belong"):
        excess_risk(other, np.zeros(4), first)
    with pytest.raises(ValueError, match="takes no dual point"):
        certificate(P, theta, np.zeros(150))
    with pytest.raises(ValueError, match="outside the constraint set"):
        certificate(Problem(X, y, "multinomial", n_classes=3, radius=0.5), np.full((4, 3), 1.0))


# -- bounds ----------------------------------------------------------------------------------
def test_bounds_use_p_times_K_and_ln_K():
    X, y = blobs(500, 4, 5, seed=9)
    ridge = Problem(X, y, "multinomial", n_classes=5, radius=None, reg=0.1)
    ball = Problem(X, y, "multinomial", n_classes=5, radius=2.0, reg=0.1)
    d = 4 * 5
    assert bounds._max_loss_at_zero(ridge) == math.log(5)
    R = bounds.minimizer_norm_bound(ridge)
    assert R == math.sqrt(2 * math.log(5) / 0.1)
    assert np.linalg.norm(reference_minimizer(ridge, cache=False).theta) <= R
    beta = 0.5 + 0.1
    assert float(bounds.dpgd_optimisation_error(ridge, ridge.lipschitz, 50, 0.01)) == \
        pytest.approx(beta * R * R / 100 + d * 0.01 ** 2 / (2 * beta), rel=1e-14)
    G = math.sqrt(2) + 0.1 * 2.0
    assert bounds.lower_bound_lipschitz(ball, 0.5) == pytest.approx(
        G * 4.0 * min(1, math.sqrt(d) / (0.5 * 500)), rel=1e-14)
    assert bounds.lower_bound_strongly_convex(ball, 0.5) == pytest.approx(
        min(G * 4.0, G * G * d / (0.1 * 0.25 * 500 ** 2)), rel=1e-14)
    # output perturbation with a ball: g + G E||b||, E||b|| = d s for gamma-norm noise
    s = (2 * math.sqrt(2) / (500 * 0.1) + 2 * math.sqrt(2 * 1e-10 / 0.1)) / 0.5
    assert bounds.output_perturbation_bound(ball, 0.5) == pytest.approx(1e-10 + G * d * s,
                                                                        rel=1e-14)
    assert bounds.clipped_gd_bound(ball, 1.0, 1e-6, steps=20) > 0
    for f, args in [(bounds.noisy_sgd_lipschitz_bound, (0.5, 1e-6)),
                    (bounds.noisy_sgd_strongly_convex_bound, (0.5, 1e-6)),
                    (bounds.objective_perturbation_bound, (0.5,))]:
        with pytest.raises(ValueError, match=SUPPORTED):
            f(ridge, *args)
    with pytest.raises(ValueError, match=SUPPORTED):
        bounds.minibatch_sgd_bound(ridge, 0.5, batch_size=10)


# -- clipped_gd ------------------------------------------------------------------------------
# (the bitwise replay of clipped_gd on a multinomial problem is in test_clipped_gd.py)
@pytest.mark.slow
def test_clipped_gd_noise_free_limit_is_gradient_descent():
    """sigma = 0, C = L: projected GD with step 1/beta; the averaged iterate is within
    beta R^2 / (2T) of the optimum (dpgd_optimisation_error at zero noise) plus the gap."""
    P = Problem(*digits(), "multinomial", n_classes=10, radius=2.0)
    ref = reference_minimizer(P)
    fit = dpsolve.clipped_gd(P, sigma=0.0, delta=1e-5, steps=300, rng=0)
    assert fit.settings["clip_norm"] == math.sqrt(2) and fit.settings["step_size"] == 2.0
    rate = float(bounds.dpgd_optimisation_error(P, P.lipschitz, 300, 0.0))
    assert -ref.gap <= excess_risk(P, fit.theta, ref) <= rate + ref.gap
    assert np.linalg.norm(fit.theta) <= 2.0 * (1 + 1e-12)


@pytest.mark.slow
def test_clipped_gd_at_large_epsilon_is_close_to_the_optimum():
    """The bound is on the expected excess risk: the mean over seeds must not exceed it by 3
    standard errors, and at epsilon = 200 it is a small fraction of F(0) - F(theta*)."""
    P = Problem(*digits(), "multinomial", n_classes=10, radius=2.0)
    ref = reference_minimizer(P)
    fit = dpsolve.clipped_gd(P, 200.0, 1e-6, rng=0)
    bound = bounds.clipped_gd_bound(P, 200.0, 1e-6, steps=fit.steps)
    assert bound <= 0.1 * (P.objective(np.zeros((16, 10))) - ref.value)
    risks = [excess_risk(P, dpsolve.clipped_gd(P, 200.0, 1e-6, rng=s).theta, ref)
             for s in range(10)]
    assert np.mean(risks) - 3 * np.std(risks, ddof=1) / math.sqrt(10) <= bound
    # privacy: sensitivity 2C/n with C = L = sqrt(2)
    sens = 2 * math.sqrt(2) / P.n
    assert fit.dp_event.event.noise_multiplier == pytest.approx(fit.sigma / sens, rel=1e-15)
    assert fit.privacy.holds


def test_clipped_gd_unconstrained_projects_onto_the_minimiser_ball():
    X, y = blobs(300, 4, 3, seed=11)
    P = Problem(X, y, "multinomial", n_classes=3, radius=None, reg=0.1)
    R = bounds.minimizer_norm_bound(P)
    fit = dpsolve.clipped_gd(P, 1.0, 1e-6, rng=0)
    assert fit.theta.shape == (4, 3) and np.linalg.norm(fit.theta) <= R * (1 + 1e-12)


# -- the other solvers -------------------------------------------------------------------------
def test_output_perturbation_is_the_certified_minimiser_plus_noise_on_p_K_coordinates():
    X, y = blobs(300, 4, 3, seed=12)
    for radius in (None, 5.0):
        P = Problem(X, y, "multinomial", n_classes=3, radius=radius, reg=0.05)
        g = 1e-10
        fit = dpsolve.output_perturbation(P, 0.5, tolerance=g, project=False, rng=3)
        delta2 = 2 * math.sqrt(2) / (300 * 0.05) + 2 * math.sqrt(2 * g / 0.05)
        assert fit.settings["sensitivity"] == pytest.approx(delta2, rel=1e-15)
        assert fit.theta.shape == (4, 3)
        b = gamma_norm_noise(delta2 / 0.5, 12, rng=3).reshape(4, 3)
        ref = reference_minimizer(P, tol=1e-11, cache=False)
        assert np.linalg.norm(fit.theta - b - ref.theta) <= (
            math.sqrt(2 * g / 0.05) + math.sqrt(2 * ref.gap / 0.05) + 1e-12)
    projected = dpsolve.output_perturbation(P, 0.01, rng=3)
    assert np.linalg.norm(projected.theta) <= 5.0 * (1 + 1e-12)


def test_other_solvers_refuse_multinomial_before_anything_else():
    """The loss is checked first: even with another bad argument, the error is about it."""
    X, y = blobs(40, 3, 3)
    P = Problem(X, y, "multinomial", n_classes=3, radius=None, reg=0.1)
    with pytest.raises(ValueError, match=SUPPORTED):
        dpsolve.noisy_sgd(P, 0.5, 1e-6, steps=0)
    with pytest.raises(ValueError, match=SUPPORTED):
        dpsolve.minibatch_sgd(P, 0.5, batch_size=0)
    with pytest.raises(ValueError, match=SUPPORTED):
        dpsolve.objective_perturbation(P, 0.5, output_fraction=2.0)
    # Parties take K classes (joint_sgd's owners); the protocols that exchange R^p vectors refuse
    parties = dpsolve.Parties.from_sizes(P, [20, 20])
    with pytest.raises(ValueError, match=SUPPORTED):
        dpsolve.noisy_sgd(P, 0.5, 1e-6, parties=parties)
    with pytest.raises(ValueError, match=SUPPORTED):
        dpsolve.multiparty_gd(P, parties, 0.5, 1e-6, steps=0)
