"""Large read-only inputs are not copied, writable ones are copied and left as they were, and
fitting on a memory-mapped X allocates O(n) beyond X, not O(n p).

A Problem shares the caller's memory only when nothing can write to it (the array and every
array in its ``.base`` chain read-only, or a memory map opened for reading) and no row needs
clipping; everything else is copied once, and the caller's array (bytes and flags) is never
changed.
"""
import tracemalloc
import warnings

import numpy as np
import pytest
from scipy import sparse

import dpsolve
from dpsolve import Problem
from dpsolve._kernels.threads import max_threads
from dpsolve._row_ops import row_norms

BLOCK = 4096            # rows per block of the row-norm pass and of the ordered linear algebra


def _rows(n, p, seed=0, norm=0.6, dtype=np.float32):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    X *= norm / np.linalg.norm(X, axis=1, keepdims=True)
    return X.astype(dtype)


FLAGS = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED", "WRITEBACKIFCOPY")


def _flags(X):
    return {name: X.flags[name] for name in FLAGS}


def _labels(X):
    return np.where(np.asarray(X[:, 0], dtype=np.float64) > 0, 1.0, -1.0)


def _memmap(path, X):
    np.save(path, X)
    return np.load(path, mmap_mode="r")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_read_only_array_is_shared_not_copied(dtype):
    X = _rows(50, 4, dtype=dtype)
    X.flags.writeable = False
    P = Problem(X, _labels(X))
    assert P.X.dtype == dtype and np.shares_memory(P.X, X)
    assert not P.X.flags.writeable and not X.flags.writeable
    fit = dpsolve.clipped_gd(P, 1.0, 1e-6, steps=5, rng=0)
    assert np.all(np.isfinite(fit.theta))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_read_only_memmap_is_shared_not_copied(tmp_path, dtype):
    X = _memmap(tmp_path / "X.npy", _rows(50, 4, dtype=dtype))
    assert isinstance(X, np.memmap) and not X.flags.writeable
    P = Problem(X, _labels(X))
    assert P.X.dtype == dtype and np.shares_memory(P.X, X)
    assert not P.X.flags.writeable


def test_a_raw_memmap_opened_for_reading_is_shared(tmp_path):
    X = _rows(40, 5)
    X.tofile(tmp_path / "X.f32")
    M = np.memmap(tmp_path / "X.f32", mode="r", dtype=np.float32, shape=X.shape)
    P = Problem(M, _labels(X))
    assert np.shares_memory(P.X, M) and P.X.dtype == np.float32


# dp_sgd's epsilon of sigma, most of a second: the slow tier
@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_writable_array_is_copied_and_left_unchanged(dtype):
    X = _rows(60, 4, dtype=dtype)
    before, flags = X.tobytes(), _flags(X)
    P = Problem(X, _labels(X))
    assert P.X.dtype == dtype and not np.shares_memory(P.X, X)
    dpsolve.clipped_gd(P, 1.0, 1e-6, steps=5, rng=0)
    dpsolve.dp_sgd(P, None, 1e-6, sigma=1.0, sampling_rate=0.2, steps=5, rng=0)
    assert X.tobytes() == before and _flags(X) == flags and X.flags.writeable


def test_a_read_only_view_of_a_writable_array_is_copied():
    base = _rows(60, 4)
    view = base.view()
    view.flags.writeable = False
    P = Problem(view, _labels(base))
    assert not np.shares_memory(P.X, base)
    base[0, 0] = 0.5                        # the owner may still write: the Problem is not hit
    assert P.X[0, 0] != 0.5 and base.flags.writeable


def test_a_non_contiguous_read_only_array_is_copied():
    X = _rows(60, 8)
    X.flags.writeable = False
    P = Problem(X[:, ::2], _labels(X))
    assert P.X.flags.c_contiguous and not np.shares_memory(P.X, X)


def test_a_memmap_whose_rows_need_clipping_is_copied_and_the_file_kept(tmp_path):
    X = _rows(50, 4)
    X[::7] *= np.float32(3.0)               # some rows above row_norm=1
    M = _memmap(tmp_path / "X.npy", X)
    on_disk = (tmp_path / "X.npy").read_bytes()
    with pytest.warns(UserWarning, match="clipped"):
        P = Problem(M, _labels(X))
    assert P.X.dtype == np.float32 and not np.shares_memory(P.X, M)
    assert (tmp_path / "X.npy").read_bytes() == on_disk
    assert np.all(row_norms(P.X) <= 1.0)
    np.testing.assert_array_equal(P.X[1::7], X[1::7])     # rows within the bound as given


@pytest.mark.parametrize("bound", [1.0, 0.7, 3.3, 1e-3])
def test_clipped_float32_rows_are_within_the_bound_in_float64(bound):
    """Rows scaled to just above B: after clipping, each stored float32 row's norm computed in
    float64 is at most B (a float32 rounding of a row scaled onto the sphere can land above
    it; the nudge then moves float32 entries)."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((3000, 7))
    X *= (bound * (1.0 + rng.uniform(1e-7, 1e-5, (3000, 1)))) / np.linalg.norm(
        X, axis=1, keepdims=True)
    X32 = X.astype(np.float32)
    assert np.sum(row_norms(X32) > bound) > 100
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        P = Problem(X32, _labels(X32), row_norm=bound)
    assert P.X.dtype == np.float32
    norms = np.linalg.norm(P.X.astype(np.float64), axis=1)
    assert np.all(norms <= bound) and np.all(row_norms(P.X) <= bound)
    assert np.min(norms) > bound * (1.0 - 1e-5)      # clipped onto the sphere, not below it
    # and the same with an intercept column (its nudge moves the float32 features)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        Q = Problem(X32, _labels(X32), row_norm=bound, fit_intercept=True, intercept_scale=0.5)
    assert Q.X.dtype == np.float32 and np.all(row_norms(Q.X) <= Q.row_norm)


def test_csr_float32_is_kept_float32():
    X = _rows(80, 6)
    X[X < 0.1] = 0.0
    S = sparse.csr_array(X)
    data = S.data.copy()
    P = Problem(S, _labels(X))
    assert P.is_sparse and P.X.dtype == np.float32 and P.X.data.dtype == np.float32
    assert np.array_equal(S.data, data)
    fit = dpsolve.clipped_gd(P, 1.0, 1e-6, steps=5, rng=0)
    assert np.all(np.isfinite(fit.theta))


# -- memory ------------------------------------------------------------------------------------
N, P_COLS = 200_000, 50


@pytest.fixture(scope="module")
def memmapped_problem(tmp_path_factory):
    """A read-only float32 memory map of N x P_COLS rows of norm 0.6 and its Problem (no
    clipping: the Problem is a view of the map)."""
    path = tmp_path_factory.mktemp("memmap") / "X.npy"
    W = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(N, P_COLS))
    for start in range(0, N, 20_000):
        W[start:start + 20_000] = _rows(20_000, P_COLS, seed=start)
    del W
    X = np.load(path, mmap_mode="r")
    problem = Problem(X, _labels(X), "logistic", radius=1.0, reg=0.01, clip_rows=False)
    assert np.shares_memory(problem.X, X)
    return problem


def _peak_beyond(call):
    """Bytes allocated at the peak of ``call()`` beyond what was allocated before (NumPy reports
    its allocations to tracemalloc)."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        call()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def _fit_bound(n, p):
    """What a fit may allocate beyond X: the row norms (8 n bytes) and a few bool masks of the
    norm pass (n bytes each: 4 n); while the norms are computed, one block of 4096 rows
    converted to float64 and its squares (2 * 8 * 4096 p bytes); 64 p doubles of kernel
    scratch; and 1 MiB for the rest (iterates, noise, the sampler's block of 2**16 uniforms,
    the sample's indices)."""
    return 8 * n + 4 * n + 2 * 8 * BLOCK * p + 8 * 64 * p + 2 ** 20


@pytest.mark.slow
@pytest.mark.parametrize("solver, options", [
    ("clipped_gd", {"steps": 10}),
    # a sample of 0.2 n rows: a copy of them (X[rows]) would be 8 MB per step
    ("dp_sgd", {"steps": 10, "sampling_rate": 0.2}),
])
def test_a_fit_on_a_memmap_allocates_o_of_n_beyond_x(memmapped_problem, solver, options):
    problem = memmapped_problem
    fit = getattr(dpsolve, solver)

    def call():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit(problem, None, 1e-6, sigma=1.0, rng=1, **options)

    call()          # the privacy accounting's caches are filled outside the measurement
    peak = _peak_beyond(call)
    print(f"{solver}: {peak} bytes beyond X, bound {_fit_bound(N, P_COLS)}")
    # measured: 8.0 bytes per row plus 3.34 MB (p = 50); a float32 copy of X would be 40 MB
    assert peak <= _fit_bound(N, P_COLS), peak


def test_building_the_problem_on_a_memmap_allocates_o_of_n(memmapped_problem):
    """Problem on the memory map: the coded labels it keeps (8 bytes a row), the row norms of
    the validation pass (8) and its masks (4); one block of 4096 rows converted to float64 and
    its squares; the labels are coded by blocks of 2**16 (``np.unique`` on all of y at once
    sorted a copy with its argsort and inverse: about 40 bytes a row). Measured at n = 2e5,
    p = 50: 4.9 MB, the block's 3.3 MB and 8 bytes a row."""
    X = memmapped_problem.X
    y = _labels(X)
    bound = 8 * N + 8 * N + 4 * N + 2 * 8 * BLOCK * P_COLS + 2 ** 20
    peak = _peak_beyond(lambda: Problem(X, y, "logistic", radius=1.0, reg=0.01,
                                        clip_rows=False))
    print(f"Problem: {peak} bytes beyond X, bound {bound}")
    assert peak <= bound, peak


@pytest.mark.slow
def test_reference_minimiser_on_a_memmap_allocates_o_of_n(memmapped_problem):
    """θ* by Newton: the margins and the per-record curvature live across a step (16 bytes per
    row, measured 16.3), plus the blocks of rows in flight on dpsolve's threads (each converted
    to float64 and weighted for the Hessian: 2 * 8 * 4096 p bytes, up to 2 per thread and one
    being added). Measured at n = 2e5, p = 50, two threads: 10.0 MB; a float64 copy of X would
    be 80 MB."""
    problem = memmapped_problem
    blocks_in_flight = 2 * max_threads() + 2
    bound = 24 * N + blocks_in_flight * 2 * 8 * BLOCK * P_COLS + 2 ** 21
    peak = _peak_beyond(lambda: dpsolve.reference_minimizer(problem, cache=False))
    print(f"reference_minimizer: {peak} bytes beyond X, bound {bound}")
    assert peak <= bound, peak


@pytest.mark.parametrize("bit_generator", [np.random.PCG64, np.random.MT19937, np.random.Philox,
                                           np.random.SFC64])
def test_dp_sgd_samples_in_pieces_the_numbers_of_one_draw(bit_generator):
    """dp_sgd's Poisson sample draws its n uniforms in pieces of 2**16 (no n-sized temporary):
    each double takes the bit generator's next 64-bit word (two 32-bit words for MT19937),
    so the pieces are the numbers of one ``rng.random(n)`` and the sample is unchanged."""
    from dpsolve.rows._memory import _SAMPLE_BLOCK, poisson_sample
    n, q = 3 * _SAMPLE_BLOCK + 123, 0.05
    a, b = (np.random.Generator(bit_generator(5)) for _ in range(2))
    for _ in range(3):
        np.testing.assert_array_equal(poisson_sample(a, n, q), np.flatnonzero(b.random(n) < q))
    assert a.random() == b.random()
