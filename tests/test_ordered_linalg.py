"""NumPy's solves give the same bits for any thread count (dpsolve/_ordered_linalg.py): BLAS held at one
thread inside them, the Hessian's blocks spread over dpsolve's threads and added in order."""
import hashlib
import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import dpsolve
from dpsolve import _ordered_linalg
from dpsolve._kernels.threads import max_threads, set_num_threads
from dpsolve.reference import reference_minimizer


@pytest.fixture
def restore_threads():
    before = max_threads()
    yield
    set_num_threads(before)


def _digest(theta):
    return hashlib.sha256(np.ascontiguousarray(theta).tobytes()).hexdigest()


def _blas_splits_sums(X, r):
    with threadpool_limits(1, "blas"):
        one = X.T @ r
    with threadpool_limits(2, "blas"):
        two = X.T @ r
    return not np.array_equal(one, two)


def _problem(loss, n=20_000, p=50, **options):
    if loss == "multinomial":
        rng = np.random.default_rng(2)
        X = rng.standard_normal((n, p))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        return dpsolve.Problem(X, rng.integers(0, 3, n), loss, n_classes=3, **options)
    X, y = dpsolve.datasets.make_synthetic(n, p, rng=2)
    return dpsolve.Problem(X, y, loss, **options)


SETTINGS = [(2, 2), (1, 1), (2, 1), (1, 2)]         # (BLAS threads, dpsolve's threads)


@pytest.mark.parametrize("loss, options", [
    ("logistic", {"reg": 1e-3, "radius": None}),
    # the ball active: trust-region steps (this and the next two: the slow tier)
    pytest.param("logistic", {"reg": 0.0, "radius": 1.0}, marks=pytest.mark.slow),
    pytest.param("huber_hinge", {"reg": 1e-3, "radius": None}, marks=pytest.mark.slow),
    pytest.param("multinomial", {"reg": 1e-3, "radius": None}, marks=pytest.mark.slow)])
def test_reference_minimizer_has_the_same_bits_for_any_thread_count(restore_threads, loss,
                                                                    options):
    problem = _problem(loss, **options)
    if not _blas_splits_sums(problem.X, np.linspace(-1, 1, problem.n)):
        pytest.skip("this BLAS sums X^T r the same way with 1 and 2 threads: nothing to check")
    seen = set()
    for blas, ours in SETTINGS:
        set_num_threads(ours)
        with threadpool_limits(blas, "blas"):
            seen.add(_digest(reference_minimizer(problem, cache=False).theta))
    assert len(seen) == 1


@pytest.mark.parametrize("solve", [
    lambda pr: dpsolve.output_perturbation(pr, 1.0, rng=4),
    pytest.param(lambda pr: dpsolve.objective_perturbation(pr, 1.0, rng=4),
                 marks=pytest.mark.slow),
    pytest.param(lambda pr: dpsolve.aggregated_output_perturbation(
        pr, dpsolve.Parties.from_sizes(pr, [12_000, 8_000]), 1.0, rng=4), marks=pytest.mark.slow)],
    ids=["output", "objective", "aggregated"])
def test_perturbation_solvers_have_the_same_bits_for_any_thread_count(restore_threads, solve):
    problem = _problem("logistic", reg=1e-2, radius=None)
    seen = set()
    for blas, ours in SETTINGS:
        set_num_threads(ours)
        with threadpool_limits(blas, "blas"):
            seen.add(_digest(solve(problem).theta))
    assert len(seen) == 1


def _blas_counts():
    from threadpoolctl import threadpool_info
    return [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]


def test_one_blas_thread_holds_until_the_last_holder_leaves():
    with threadpool_limits(2, "blas"):
        before = _blas_counts()
        with _ordered_linalg.one_blas_thread():
            assert set(_blas_counts()) == {1}
            with _ordered_linalg.one_blas_thread():            # nested
                assert set(_blas_counts()) == {1}
            assert set(_blas_counts()) == {1}
            # another thread enters and leaves while this one holds the limit
            seen = []
            other = threading.Thread(target=lambda: seen.append(_entered_and_left()))
            other.start()
            other.join()
            assert seen == [[1]] and set(_blas_counts()) == {1}
        assert _blas_counts() == before


def _entered_and_left():
    with _ordered_linalg.one_blas_thread():
        inside = sorted(set(_blas_counts()))
    return inside


def test_one_blas_thread_restores_after_an_exception():
    with threadpool_limits(2, "blas"):
        before = _blas_counts()
        with pytest.raises(RuntimeError):
            with _ordered_linalg.one_blas_thread():
                raise RuntimeError("inside")
        assert _blas_counts() == before


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_blocked_sum_adds_the_blocks_in_order(restore_threads, threads):
    # terms whose sum depends on the order: 1e16 + 1 - 1e16 ...
    terms = [np.array([1e16]), np.array([1.0]), np.array([-1e16]), np.array([1.0])] * 5
    set_num_threads(threads)
    out = _ordered_linalg.blocked_sum(lambda i: terms[i], list(range(len(terms))), np.zeros(1))
    expected = np.zeros(1)
    for term in terms:
        expected += term
    assert out.tobytes() == expected.tobytes()


def test_weighted_gram_by_blocks_matches_the_product(restore_threads):
    rng = np.random.default_rng(0)
    X, w = rng.standard_normal((10_000, 7)), rng.random(10_000)
    grams = []
    for threads in (1, 2):
        set_num_threads(threads)
        grams.append(_ordered_linalg.weighted_gram(X, w))
    assert grams[0].tobytes() == grams[1].tobytes()
    # the same matrix as one product, to rounding: a sum of n terms of size |x_i||x_j| w
    bound = 2 * 10_000 * np.finfo(float).eps * ((np.abs(X).T * w) @ np.abs(X))
    assert np.all(np.abs(grams[0] - (X.T * w) @ X) <= bound)


def test_weighted_row_sum_is_x_transpose_r_for_any_threads_and_storage(restore_threads):
    from scipy import sparse

    from dpsolve._kernels import gd
    from dpsolve._row_ops import kernel_rows
    rng = np.random.default_rng(5)
    X = rng.standard_normal((30_000, 37))
    X[rng.random(X.shape) < 0.7] = 0.0
    r = rng.standard_normal(30_000)
    r[::3] = 0.0
    outs = []
    for threads in (1, 2, 3):
        set_num_threads(threads)
        for rows in (X, kernel_rows(sparse.csr_array(X))):
            out = np.empty(37)
            gd.weighted_row_sum(rows, r, out, np.empty((64, 37)))
            outs.append(out.tobytes())
    assert len(set(outs)) == 1          # thread counts, dense and CSR: the same bits
    got = np.frombuffer(outs[0])
    bound = 2 * 30_000 * np.finfo(float).eps * (np.abs(X).T @ np.abs(r))
    assert np.all(np.abs(got - X.T @ r) <= bound)
    assert np.array_equal(_ordered_linalg.rmatvec(X, r), got)
    with pytest.raises(ValueError, match="shape mismatch"):
        gd.weighted_row_sum(X, r[:-1], np.empty(37), np.empty((64, 37)))
    with pytest.raises(ValueError, match="scratch"):
        gd.weighted_row_sum(X, r, np.empty(37), np.empty((63, 37)))


def test_matvec_sums_each_row_in_order_for_any_threads_and_storage(restore_threads):
    from scipy import sparse
    rng = np.random.default_rng(6)
    X, v, V = rng.standard_normal((10_000, 9)), rng.standard_normal(9), rng.standard_normal((9, 3))
    X[rng.random(X.shape) < 0.3] = 0.0
    with threadpool_limits(1, "blas"):
        plain_k = X @ V
    # each row summed over its columns in order, as the kernels' dot product
    expected = np.empty(10_000)
    for i, row in enumerate(X):
        s = 0.0
        for a, b in zip(row, v):
            s += float(a) * float(b)
        expected[i] = s
    for threads in (1, 2):
        set_num_threads(threads)
        assert _ordered_linalg.matvec(X, v).tobytes() == expected.tobytes()
        assert _ordered_linalg.matvec(sparse.csr_array(X), v).tobytes() == expected.tobytes()
        # (n, K): by blocks of rows, each one BLAS product: the whole product's bits
        assert np.array_equal(_ordered_linalg.matvec(X, V), plain_k)


def test_row_margins_refuses_mismatched_shapes():
    from dpsolve._kernels import gd
    X = np.zeros((5, 3))
    with pytest.raises(ValueError, match="shape mismatch"):
        gd.row_margins(X, np.zeros(2), np.empty(5))
    with pytest.raises(ValueError, match="shape mismatch"):
        gd.row_margins(X, np.zeros(3), np.empty(4))


def test_blocked_products_leave_the_blas_limit(restore_threads):
    # the blocks are computed under the one-thread limit; it must be lifted when they are done
    rng = np.random.default_rng(7)
    X, V, w = rng.standard_normal((9_000, 4)), rng.standard_normal((4, 3)), rng.random(9_000)
    with threadpool_limits(2, "blas"):
        before = _blas_counts()
        for threads in (1, 2):
            set_num_threads(threads)
            _ordered_linalg.matvec(X, V)
            _ordered_linalg.weighted_gram(X, w)
            assert _blas_counts() == before
