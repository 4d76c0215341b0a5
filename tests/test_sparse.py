"""Sparse X (docs/sparse.md): a scipy.sparse matrix is held as a canonical CSR array, never
densified, and every solver either takes it or refuses it before any work.

The kernels read a CSR row at its stored entries in column order, and skipping a zero only skips
adding ``+-0`` to a sum, so the kernel solvers must give bit-identical results on the same
matrix stored densely; the perturbation solvers' inner solve (scipy's sparse products) may differ
in the last bits, within their certified tolerance.
"""
import tracemalloc
import warnings

import numpy as np
import pytest
from scipy import sparse

import dpsolve
from dpsolve import Problem
from dpsolve.reference import certificate, excess_risk, reference_minimizer
from dpsolve.solvers import registry

KERNEL_SOLVERS = ("noisy_sgd", "clipped_gd", "minibatch_sgd", "dp_sgd")
PERTURBATION_SOLVERS = ("output_perturbation", "objective_perturbation")


def sparse_rows(n=300, p=40, density=0.1, seed=0):
    """Random CSR rows of norm at most 1 (none on the bound: no clipping)."""
    rng = np.random.default_rng(seed)
    X = sparse.random(n, p, density=density, format="csr", random_state=rng)
    X.data = rng.standard_normal(X.nnz)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    return sparse.csr_array(X.multiply(1.0 / (1.01 * max(norms.max(), 1e-12))).tocsr())


def labels(loss, X, seed=0):
    rng = np.random.default_rng(seed)
    z = X @ rng.standard_normal(X.shape[1])
    if loss == "squared":
        return np.clip(z, -1, 1)
    if loss == "multinomial":
        return np.argmax(X @ rng.standard_normal((X.shape[1], 3))
                         + 0.1 * rng.standard_normal((X.shape[0], 3)), axis=1)
    return np.where(z + 0.1 * rng.standard_normal(X.shape[0]) > 0, 1, -1)


def pair(loss, options, seed=0):
    """The same data as a sparse and as a dense Problem."""
    X = sparse_rows(seed=seed)
    y = labels(loss, X, seed)
    extra = {"n_classes": 3} if loss == "multinomial" else {}
    return (Problem(X, y, loss, **options, **extra),
            Problem(X.toarray(), y, loss, **options, **extra))


def cases(names):
    # noisy_sgd's cases share one RDP calibration over n^2 sampled steps (a second and a half):
    # the slow tier's
    return [pytest.param(spec, loss, id=f"{spec.name}-{loss}",
                         marks=pytest.mark.slow if spec.name == "noisy_sgd" else ())
            for spec in registry() if spec.name in names for loss in spec.losses
            if not (spec.name == "minibatch_sgd" and loss == "squared")]  # needs L <= 1


# -- the Problem --------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil"])
def test_problem_holds_a_canonical_csr_copy(fmt):
    X = sparse_rows()
    given = X.asformat(fmt)
    before = given.copy()
    P = Problem(given, labels("logistic", X))
    assert P.is_sparse and isinstance(P.X, sparse.csr_array)
    assert P.X.has_canonical_format
    assert P.X.indices.dtype == np.intp and P.X.indptr.dtype == np.intp
    assert not P.X.data.flags.writeable and not P.X.indices.flags.writeable
    np.testing.assert_array_equal(P.X.toarray(), X.toarray())
    assert (given != before).nnz == 0                 # the caller's matrix is untouched
    with pytest.raises(ValueError):
        P.X.data[0] = 1.0


def test_duplicates_are_summed_and_rows_clipped_like_dense_rows():
    X = sparse.coo_array(([3.0, 1.0, 0.5], ([0, 0, 1], [1, 1, 0])), shape=(2, 3))
    with pytest.warns(UserWarning, match="1 of 2 rows"):
        P = Problem(X, [1, -1], row_norm=2.0)
    assert P.X.nnz == 2 and P.X[[0]].toarray()[0, 1] <= 2.0
    assert P.X[[0]].toarray()[0, 1] == pytest.approx(2.0, rel=1e-15)
    with pytest.raises(ValueError, match="clip_rows"):
        Problem(X, [1, -1], row_norm=2.0, clip_rows=False)


@pytest.mark.parametrize("make, error, match", [
    (lambda: sparse.csr_array(np.array([[np.nan, 1.0]])), ValueError, "NaN"),
    (lambda: sparse.csr_array(np.array([[1 + 1j, 0]])), TypeError, "real numbers"),
    (lambda: sparse.csr_array((0, 3)), ValueError, "at least one row"),
])
def test_bad_sparse_input(make, error, match):
    X = make()
    with pytest.raises(error, match=match):
        Problem(X, np.ones(X.shape[0]))


# -- solvers -----------------------------------------------------------------------------------
@pytest.mark.parametrize("spec, loss", cases(KERNEL_SOLVERS))
def test_kernel_solvers_are_bit_identical_on_sparse_and_dense(spec, loss):
    S, D = pair(loss, spec.example_problem)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = spec.function(S, rng=3, **spec.example)
        b = spec.function(D, rng=3, **spec.example)
    np.testing.assert_array_equal(a.theta, b.theta)
    assert (a.epsilon, a.delta, a.noise, a.steps) == (b.epsilon, b.delta, b.noise, b.steps)


@pytest.mark.parametrize("spec, loss", cases(PERTURBATION_SOLVERS))
def test_perturbation_solvers_take_sparse_x(spec, loss):
    """The same privacy metadata; theta within twice the certified inner tolerance's reach
    (the two inner solves differ only in the rounding of scipy's sparse products)."""
    S, D = pair(loss, spec.example_problem)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = spec.function(S, rng=3, **spec.example)
        b = spec.function(D, rng=3, **spec.example)
    assert (a.epsilon, a.delta, a.noise, a.settings) == (b.epsilon, b.delta, b.noise, b.settings)
    # both inner minimisers are within sqrt(2 tol / lambda) of the exact one (strong convexity)
    tol = a.settings.get("tolerance", 1e-10)
    reach = 2 * np.sqrt(2 * tol / S.reg)
    assert np.linalg.norm(a.theta - b.theta) <= reach


@pytest.mark.parametrize("spec", [s for s in registry() if not s.sparse], ids=lambda s: s.name)
def test_the_other_solvers_refuse_sparse_naming_those_that_take_it(spec):
    loss = spec.losses[0]
    S, _ = pair(loss, spec.example_problem)
    takers = [s.name for s in registry() if s.sparse]
    with pytest.raises(TypeError, match="sparse X") as info:
        if spec.partition is None:
            spec.function(S, rng=0, **spec.example)
        else:
            dpsolve.Parties.from_sizes(S, [S.n // 2, S.n - S.n // 2])
    for name in takers:
        assert name in str(info.value)


@pytest.mark.slow
def test_sparse_never_densified():
    """n = p = 20,000 at density 1e-4: densely that is 3.2 GB, as CSR 0.6 MB. clipped_gd and
    noisy_sgd run, and the reference minimiser certifies theta*, all within 100 MB of Python
    allocations (numpy's arrays are tracked by tracemalloc)."""
    n = p = 20_000
    rng = np.random.default_rng(0)
    X = sparse.random(n, p, density=1e-4, format="csr", random_state=rng)
    y = np.where(rng.standard_normal(n) > 0, 1, -1)
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            P = Problem(X, y, "logistic", radius=1.0)
        dpsolve.clipped_gd(P, 1.0, 1e-6, steps=3, rng=0)
        dpsolve.noisy_sgd(P, 0.9, 1e-14, steps=1000, rng=0)
        ref = reference_minimizer(P, cache=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert ref.gap <= 1e-9
    assert peak < 100e6


# -- reference minimiser and excess risk --------------------------------------------------------
@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared", "huber_hinge", "multinomial"])
@pytest.mark.parametrize("explicit", [True, False], ids=["hessian", "newton-cg"])
def test_reference_minimizer_on_sparse_agrees_with_dense(loss, explicit, monkeypatch):
    from dpsolve.reference import _newton
    if not explicit:
        monkeypatch.setattr(_newton, "EXPLICIT_MAX_DIM", 0)
    S, D = pair(loss, {"radius": 1.0, "reg": 0.01})
    a = reference_minimizer(S, cache=False)
    b = reference_minimizer(D, cache=False)
    assert a.gap <= 1e-9 and b.gap <= 1e-9
    assert abs(a.value - b.value) <= max(a.gap, b.gap)
    # the sparse certificate of the dense answer, and the other way round
    assert certificate(S, b.theta) <= 1e-9 and certificate(D, a.theta) <= 1e-9
    theta = np.zeros(S.theta_shape)
    assert excess_risk(S, theta, a) == pytest.approx(excess_risk(D, theta, b), abs=2e-9)


def test_sparse_reference_cache_key_depends_on_the_matrix(tmp_path):
    S, _ = pair("logistic", {"radius": 1.0})
    first = reference_minimizer(S, cache=tmp_path)
    again = reference_minimizer(S, cache=tmp_path)
    assert again.cached and np.array_equal(first.theta, again.theta)
    X = S.X.copy()
    X.data = X.data * 0.5
    other = Problem(X, S.y, "logistic", radius=1.0)
    assert not reference_minimizer(other, cache=tmp_path).cached


# -- files ---------------------------------------------------------------------------------------
def test_sparse_npz_files_load_sparse(tmp_path):
    from dpsolve.experiments.runs import load_file
    X = sparse_rows()
    y = labels("logistic", X)
    path = tmp_path / "data.npz"
    sparse.save_npz(path, sparse.csr_matrix(X))
    with pytest.raises(ValueError, match="labels"):
        load_file(path)
    np.save(tmp_path / "y.npy", y)
    got_X, got_y = load_file(path, tmp_path / "y.npy")
    assert sparse.issparse(got_X)
    np.testing.assert_array_equal(got_X.toarray(), X.toarray())
    np.testing.assert_array_equal(got_y, y)
    # y inside the file, beside the matrix's arrays
    with np.load(path) as f:
        parts = dict(f)
    np.savez(tmp_path / "both.npz", y=y, **parts)
    got_X, got_y = load_file(tmp_path / "both.npz")
    assert sparse.issparse(got_X) and np.array_equal(got_y, y)


def test_cli_solve_on_a_sparse_file_matches_the_dense_file(tmp_path, capsys):
    import json

    from dpsolve.cli import main
    X = sparse_rows()
    y = labels("logistic", X)
    sparse.save_npz(tmp_path / "sparse.npz", sparse.csr_matrix(X))
    np.save(tmp_path / "y.npy", y)
    np.savez(tmp_path / "dense.npz", X=X.toarray(), y=y)
    outputs = []
    for args in (["--data", str(tmp_path / "sparse.npz"), "--labels", str(tmp_path / "y.npy")],
                 ["--data", str(tmp_path / "dense.npz")]):
        assert main(["solve", *args, "--solver", "clipped_gd", "--epsilon", "1", "--delta",
                     "1e-6", "--seed", "0"]) == 0
        outputs.append(json.loads(capsys.readouterr().out))
    assert outputs[0]["theta"] == outputs[1]["theta"]


# -- intercepts ----------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("scale", [0.1, 1.0])
def test_sparse_intercept_stays_sparse_and_matches_dense(scale):
    """The constant column is appended as stored entries (never densified); rows keep within
    the public bound sqrt(B^2 + s^2); the kernel solvers agree bit for bit with the dense
    augmented problem (rows inside the bound, so no clipping differs)."""
    from dpsolve._row_ops import row_norms
    X = sparse_rows()
    y = labels("logistic", X)
    options = {"fit_intercept": True, "intercept_scale": scale}
    S = Problem(X, y, "logistic", **options)
    D = Problem(X.toarray(), y, "logistic", **options)
    assert S.is_sparse and S.X.shape == (X.shape[0], X.shape[1] + 1)
    assert S.X.nnz == X.nnz + X.shape[0] and S.X.indices.dtype == np.intp
    assert S.X.has_canonical_format
    np.testing.assert_array_equal(S.X.toarray(), D.X)
    assert np.all(row_norms(S.X) <= S.row_norm) and S.row_norm == D.row_norm
    for spec in registry():
        if spec.name not in ("noisy_sgd", "clipped_gd", "dp_sgd"):
            continue
        S = Problem(X, y, "logistic", **spec.example_problem, **options)
        D = Problem(X.toarray(), y, "logistic", **spec.example_problem, **options)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = spec.function(S, rng=2, **spec.example)
            b = spec.function(D, rng=2, **spec.example)
        np.testing.assert_array_equal(a.theta, b.theta)


def test_sparse_rows_are_clipped_to_the_feature_bound_before_the_intercept():
    """Rows above B are scaled onto B (not onto sqrt(B^2 + s^2)) and then augmented."""
    from dpsolve._row_ops import row_norms
    X = sparse.csr_array(np.array([[3.0, 0.0, 4.0], [0.0, 0.3, 0.0]]))
    with pytest.warns(UserWarning, match="1 of 2 rows"):
        S = Problem(X, [1, -1], fit_intercept=True, intercept_scale=0.5)
    features = S.X[:, :3]
    assert row_norms(features)[0] <= 1.0 and row_norms(features)[0] == pytest.approx(1.0)
    np.testing.assert_array_equal(S.X[:, [3]].toarray().ravel(), [0.5, 0.5])


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_the_cone_solve_takes_sparse_x_too(loss):
    """The cvxpy fallback builds its model from the CSR matrix; both certified, both agree."""
    S, _ = pair(loss, {"radius": 1.0})
    own = reference_minimizer(S, cache=False, method="newton")
    cone = reference_minimizer(S, cache=False, method="cvxpy")
    assert own.gap <= 1e-9 and cone.gap <= 1e-9
    assert abs(own.value - cone.value) <= max(own.gap, cone.gap)
