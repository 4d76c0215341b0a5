"""Kernels on float32 X: a storage format only. Each entry is converted to double before any
arithmetic, so every kernel's result on float32 X (dense or CSR) equals, bit for bit, its result
on the float64 copy of the same values, for any thread count."""
import numpy as np
import pytest
from scipy import sparse

from dpsolve import losses
from dpsolve._kernels import gd, minibatch, sgd, threads
from dpsolve._kernels.stream import Stream
from dpsolve._row_ops import kernel_rows

BINARY = ("logistic", "hinge", "squared", "huber_hinge")
BLOCKS = 64
# (n, p): p < 8 and p >= 32 take the unrolled margins loop without and with prefetching; n not a
# multiple of 64 leaves uneven blocks and rows after the last group of eight; n p is above the
# kernels' PARALLEL_MIN_WORK (20000 entries), so two threads really split the blocks
SHAPES = [(4099, 7), (701, 37), (250, 9)]


def data(n, p, seed, *, density=0.6):
    """Random float32 X (some entries zero) and its float64 copy, labels, theta and row norms.
    The values use all of float32's 24 bits, so products and sums in float32 would round
    differently from those in double."""
    rng = np.random.default_rng(seed)
    X32 = (rng.standard_normal((n, p)) * rng.uniform(0.5, 2.0, (n, 1))).astype(np.float32)
    X32[rng.random((n, p)) > density] = 0
    X64 = X32.astype(np.float64)
    y = rng.choice([-1.0, 1.0], n)
    theta = rng.standard_normal(p) / np.sqrt(p)
    row_norms = np.linalg.norm(X64, axis=1)
    return X32, X64, y, theta, row_norms


def both_storages(X32, X64):
    """[(float32 rows, float64 rows)] dense and CSR, as the kernels take them."""
    csr = kernel_rows(sparse.csr_array(X64))
    csr32 = csr[:2] + (csr[2].astype(np.float32),) + csr[3:]
    return [(X32, X64), (csr32, csr)]


def at_threads(fn):
    """[fn() at one thread, fn() at two threads]."""
    before = threads.max_threads()
    try:
        results = []
        for count in (1, 2):
            threads.set_num_threads(count)
            results.append(fn())
        return results
    finally:
        threads.set_num_threads(before)


def same(a, b):
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(u, v) for u, v in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    return a == b


def clipped_sum(X, y, loss, theta, row_norms, clip, rows=None):
    spec = losses.make_loss(loss)
    out, scratch = np.empty(theta.size), np.empty((BLOCKS, theta.size))
    extra = () if rows is None else (rows,)
    clipped = gd.clipped_gradient_sum(X, y, spec.kernel_id, spec.kernel_param, theta, row_norms,
                                      clip, out, scratch, *extra)
    return out, clipped


def multinomial_sum(X, y, theta, row_norms, clip, rows=None):
    p, K = theta.shape
    out = np.empty((p, K))
    scratch, work = np.empty((BLOCKS, p * K)), np.empty((BLOCKS, 2 * K))
    extra = () if rows is None else (rows,)
    clipped = gd.clipped_gradient_sum_multinomial(X, y, theta, row_norms, clip, out, scratch,
                                                  work, *extra)
    return out, clipped


@pytest.mark.parametrize("n, p", SHAPES)
@pytest.mark.parametrize("loss", BINARY)
def test_clipped_gradient_sum_float32_equals_float64(loss, n, p):
    X32, X64, y, theta, row_norms = data(n, p, 1)
    clip = float(np.median(row_norms)) * 0.3     # clips some rows, not all
    for A32, A64 in both_storages(X32, X64):
        expected = clipped_sum(A64, y, loss, theta, row_norms, clip)
        assert 0 < expected[1] < n or loss in ("hinge", "huber_hinge")
        for result in at_threads(lambda: clipped_sum(A32, y, loss, theta, row_norms, clip)):
            assert same(result, expected)
        for result in at_threads(lambda: clipped_sum(A64, y, loss, theta, row_norms, clip)):
            assert same(result, expected)


@pytest.mark.parametrize("n, p", SHAPES)
def test_row_margins_and_weighted_row_sum_float32_equal_float64(n, p):
    X32, X64, y, theta, row_norms = data(n, p, 2)
    r = np.random.default_rng(3).standard_normal(n)
    r[::5] = 0.0

    def margins(X):
        out = np.empty(n)
        gd.row_margins(X, theta, out)
        return out

    def weighted(X):
        out = np.empty(p)
        gd.weighted_row_sum(X, r, out, np.empty((BLOCKS, p)))
        return out

    for A32, A64 in both_storages(X32, X64):
        for kernel in (margins, weighted):
            expected = kernel(A64)
            for result in at_threads(lambda: kernel(A32)):
                assert same(result, expected)


@pytest.mark.parametrize("n, p, K", [(1201, 7, 3), (333, 33, 4)])
def test_multinomial_float32_equals_float64(n, p, K):
    X32, X64, _, _, row_norms = data(n, p, 4)
    rng = np.random.default_rng(5)
    y = rng.integers(0, K, n).astype(np.intp)
    theta = rng.standard_normal((p, K)) / np.sqrt(p)
    clip = float(np.median(row_norms)) * 0.5
    for A32, A64 in both_storages(X32, X64):
        expected = multinomial_sum(A64, y, theta, row_norms, clip)
        assert 0 < expected[1] < n
        for result in at_threads(lambda: multinomial_sum(A32, y, theta, row_norms, clip)):
            assert same(result, expected)


def test_float32_arithmetic_would_be_caught():
    """The fixture's float32 products and sums differ from the double ones: a kernel computing
    in float32 would fail the equalities above."""
    X32, X64, _, theta, _ = data(701, 37, 2)
    in_double = np.empty(701)
    gd.row_margins(X32, theta, in_double)
    in_single = (X32 * theta.astype(np.float32)).sum(axis=1, dtype=np.float32)
    assert np.mean(in_single.astype(np.float64) != in_double) > 0.9
    assert np.array_equal(in_double, np.array([sum(float(a) * b for a, b in zip(row, theta))
                                               for row in X64]))


ROW_CHOICES = {
    "sorted": lambda n, rng: np.sort(rng.choice(n, n // 3, replace=False)),
    "unsorted with repeats": lambda n, rng: rng.integers(0, n, n // 2 + 13),
    "all, reversed": lambda n, rng: np.arange(n)[::-1].copy(),
    "one": lambda n, rng: np.array([n - 1]),
    "empty": lambda n, rng: np.array([], dtype=np.intp),
}


@pytest.mark.parametrize("choice", ROW_CHOICES)
@pytest.mark.parametrize("loss", ("logistic", "huber_hinge"))
def test_clipped_gradient_sum_rows_equals_gathered_call(loss, choice):
    n, p = 2003, 33
    X32, X64, y, theta, row_norms = data(n, p, 6)
    rows = ROW_CHOICES[choice](n, np.random.default_rng(7)).astype(np.intp)
    clip = float(np.median(row_norms)) * 0.3
    gathered = sparse.csr_array(X64[rows]) if rows.size else sparse.csr_array((0, p))
    csr_gathered = kernel_rows(gathered)
    for A32, A64 in both_storages(X32, X64):
        dense = not isinstance(A64, tuple)
        G = np.ascontiguousarray(X64[rows]) if dense else csr_gathered
        expected = clipped_sum(G, y[rows], loss, theta, row_norms[rows], clip)
        if rows.size == 0:
            assert same(expected, (np.zeros(p), 0))
        for A in (A32, A64):
            for result in at_threads(lambda: clipped_sum(A, y, loss, theta, row_norms, clip,
                                                         rows)):
                assert same(result, expected)


@pytest.mark.parametrize("choice", ROW_CHOICES)
def test_multinomial_rows_equals_gathered_call(choice):
    n, p, K = 1500, 9, 3
    X32, X64, _, _, row_norms = data(n, p, 8)
    rng = np.random.default_rng(9)
    y = rng.integers(0, K, n).astype(np.intp)
    theta = rng.standard_normal((p, K))
    rows = ROW_CHOICES[choice](n, rng).astype(np.intp)
    clip = float(np.median(row_norms))
    for A32, A64 in both_storages(X32, X64):
        dense = not isinstance(A64, tuple)
        G = (np.ascontiguousarray(X64[rows]) if dense
             else kernel_rows(sparse.csr_array(X64[rows]) if rows.size
                              else sparse.csr_array((0, p))))
        expected = multinomial_sum(G, y[rows], theta, row_norms[rows], clip)
        for A in (A32, A64):
            for result in at_threads(lambda: multinomial_sum(A, y, theta, row_norms, clip,
                                                             rows)):
                assert same(result, expected)


@pytest.mark.parametrize("rows, message", [
    (np.array([0, 5, 300]), r"rows must hold row indices in \[0, 300\)"),
    (np.array([-1]), r"rows must hold row indices in \[0, 300\)"),
    (np.array([0, 1], dtype=np.int32), "rows must be a C-contiguous 1-D intp array"),
    (np.array([0.0, 1.0]), "rows must be a C-contiguous 1-D intp array"),
    (np.arange(4)[::2], "rows must be a C-contiguous 1-D intp array"),
    (np.zeros((2, 2), dtype=np.intp), "rows must be a C-contiguous 1-D intp array"),
])
def test_bad_rows_are_refused(rows, message):
    X32, _, y, theta, row_norms = data(300, 5, 10)
    with pytest.raises(ValueError, match=message):
        clipped_sum(X32, y, "logistic", theta, row_norms, 1.0, rows)
    labels = np.zeros(300, dtype=np.intp)
    with pytest.raises(ValueError, match=message):
        multinomial_sum(X32, labels, np.zeros((5, 2)), row_norms, 1.0, rows)


@pytest.mark.parametrize("dtype", [np.float16, np.int64, np.complex128])
def test_other_dtypes_are_refused(dtype):
    X = np.ones((10, 3), dtype=dtype)
    with pytest.raises(ValueError, match="dtype"):
        gd.row_margins(X, np.zeros(3), np.empty(10))
    csr = kernel_rows(sparse.csr_array(np.ones((10, 3))))
    csr = csr[:2] + (csr[2].astype(dtype),) + csr[3:]
    with pytest.raises(ValueError, match="dtype"):
        gd.row_margins(csr, np.zeros(3), np.empty(10))


def test_non_contiguous_float32_is_refused():
    X = np.ones((10, 6), dtype=np.float32)[:, ::2]
    with pytest.raises(ValueError, match="contiguous"):
        gd.row_margins(X, np.zeros(3), np.empty(10))


def streams(seed):
    g = np.random.default_rng(seed)
    return Stream.from_generator(g), Stream.from_generator(g)


@pytest.mark.parametrize("p", [3, 40])
@pytest.mark.parametrize("loss", BINARY)
def test_noisy_sgd_steps_float32_equals_float64(loss, p):
    n, steps = 300, 2500
    X32, X64, y, _, _ = data(n, p, 11)
    spec = losses.make_loss(loss)

    def run(X):
        theta = np.zeros(p)
        counts = np.zeros(n, dtype=np.intp)
        index, noise = streams(12)
        finite = sgd.noisy_sgd_steps(X, y, spec.kernel_id, spec.kernel_param, theta, 1,
                                     steps + 1, 0.5, 0, 0.01, 0.01, 3.0, index, noise, counts)
        return theta, counts, finite, index.state.copy(), noise.state.copy()

    for A32, A64 in both_storages(X32, X64):
        expected = run(A64)
        # two threads draw the noise a block ahead on the second core
        for result in at_threads(lambda: run(A32)):
            assert same(result, expected)


@pytest.mark.parametrize("p", [3, 40])
@pytest.mark.parametrize("loss", BINARY)
def test_minibatch_pass_float32_equals_float64(loss, p):
    n = 523
    X32, X64, y, _, _ = data(n, p, 13)
    spec = losses.make_loss(loss)
    order = np.random.default_rng(14).permutation(n).astype(np.intp)

    def run(X):
        theta = np.zeros(p)
        finite = minibatch.minibatch_sgd_pass(X, y, spec.kernel_id, spec.kernel_param, theta,
                                              order, 17, 0.3, 0, 0.1, 0.01, 2.0,
                                              np.random.default_rng(15))
        return theta, finite

    for A32, A64 in both_storages(X32, X64):
        expected = run(A64)
        assert same(run(A32), expected)


@pytest.mark.parametrize("loss", BINARY)
def test_clipped_gradient_sum_matches_a_sequential_reference_bitwise(loss):
    """Python floats in the kernel's order (64 row blocks, rows in order within a block, block
    sums in block order; each margin and each coordinate's sum in order), on float32 entries
    converted to double: the unrolled and grouped loops change no operation."""
    n, p = 300, 37
    X32, X64, y, theta, row_norms = data(n, p, 16)
    clip = float(np.median(row_norms)) * 0.3
    spec = losses.make_loss(loss)
    out = [0.0] * p
    clipped = 0
    for b in range(BLOCKS):
        acc = [0.0] * p
        for i in range(b * n // BLOCKS, (b + 1) * n // BLOCKS):
            z = 0.0
            for j in range(p):
                z += float(X32[i, j]) * float(theta[j])
            d = float(spec.derivatives(np.array([z]), y[i:i + 1])[0])
            g = abs(d) * float(row_norms[i])
            if g > clip:
                d = d * (clip / g)
                clipped += 1
            if d != 0.0:
                for j in range(p):
                    acc[j] += d * float(X32[i, j])
        for j in range(p):
            out[j] += acc[j]
    for A32, _ in both_storages(X32, X64):
        assert same(clipped_sum(A32, y, loss, theta, row_norms, clip), (np.array(out), clipped))
