"""Rows in chunks (dpsolve.chunked): every reduction over chunks held on Dask workers equals the
same reduction over the same chunks held locally, bit for bit; one local chunk gives the plain
in-memory call's bits; X never reaches the driver; layouts that cannot work are refused."""
import warnings

import numpy as np
import pytest

from dpsolve import Problem
from dpsolve import _ordered_linalg
from dpsolve._kernels import gd
from dpsolve._row_ops import row_norms
from dpsolve.chunked import RowChunks

P, K = 5, 3
LAYOUTS = {"uneven": (37, 100, 63), "one chunk": (200,)}


def _data(n=200, p=P, seed=0, labels="binary"):
    rng = np.random.default_rng(seed)
    # norms up to about 2.5: row_norm=1 clips some rows, not all
    X = rng.standard_normal((n, p)) * rng.uniform(0.1, 1.1, (n, 1))
    if labels == "binary":
        y = np.where(X @ np.linspace(1, -1, p) + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    else:
        y = rng.integers(0, K, n)
    return X, y


def _split(a, rows):
    bounds = np.cumsum((0,) + tuple(rows))
    return [a[s:e] for s, e in zip(bounds[:-1], bounds[1:])]


def _local(X, y, rows):
    return RowChunks.from_arrays(_split(X, rows), _split(y, rows))


def _dask(X, y, rows, client, dask_y=True):
    da = pytest.importorskip("dask.array")
    Xd = da.from_array(X, chunks=(tuple(rows), (X.shape[1],)))
    yd = da.from_array(y, chunks=(tuple(rows),)) if dask_y else y
    return RowChunks.from_dask(Xd, yd, client=client)


def _kwargs(multinomial=False):
    if multinomial:
        return {"loss": "multinomial", "n_classes": K, "radius": 1.0, "reg": 0.1, "row_norm": 1.0}
    return {"loss": "logistic", "radius": 1.0, "reg": 0.1, "row_norm": 1.0}


def _validated(chunks, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return Problem(chunks, None, **kwargs).X


def _reductions(chunks, multinomial=False):
    """Every reduction of a validated RowChunks, by name."""
    n, p = chunks.shape
    rng = np.random.default_rng(7)
    seeds = np.random.SeedSequence(11).spawn(chunks.n_chunks)
    out = {}
    if multinomial:
        theta = rng.standard_normal((p, K)) * 0.3
        loss = Problem(np.ones((1, p)) / p, [0], **_kwargs(True)).loss_object
        out["clipped"] = chunks.clipped_gradient_sum(theta, loss, 0.7)
        out["sampled"] = chunks.sampled_clipped_gradient_sum(theta, loss, 0.7, 0.3, seeds)
        out["matvec K"] = chunks.matvec(theta)
    else:
        loss = Problem(np.ones((1, p)) / p, [1.0], **_kwargs()).loss_object
        theta = rng.standard_normal(p) * 0.3
        out["clipped"] = chunks.clipped_gradient_sum(theta, loss, 0.7)
        out["unclipped"] = chunks.clipped_gradient_sum(theta, loss, np.inf)
        out["sampled"] = chunks.sampled_clipped_gradient_sum(theta, loss, 0.7, 0.3, seeds)
    out["matvec"] = chunks.matvec(theta[:, 0] if multinomial else theta)
    out["rmatvec"] = chunks.rmatvec(rng.standard_normal(n))
    out["rmatvec K"] = chunks.rmatvec(rng.standard_normal((n, K)))
    out["gram"] = chunks.weighted_gram(rng.uniform(0.0, 1.0, n))
    out["norms"] = chunks.row_norms()
    return out


def _assert_same_bits(a, b):
    assert a.keys() == b.keys()
    for name in a:
        x, y = a[name], b[name]
        if isinstance(x, tuple):              # (sum, clipped count)
            assert x[1] == y[1], name
            x, y = x[0], y[0]
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert x.tobytes() == y.tobytes(), name


def _arrays_in(value):
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _arrays_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _arrays_in(item)


def _assert_no_rows_of_X(received, p):
    """No gathered array holds rows of X: only p-vectors, (p, p) matrices, (p, K) arrays and
    arrays of one value per row (or per row and class)."""
    arrays = list(_arrays_in(received))
    assert arrays                            # the watch did see the results
    # the only arrays with p columns are the (p, p) sums
    assert all(a.ndim == 1 or a.shape[-1] != p or a.shape == (p, p) for a in arrays)


# -- the two backends give the same bits --------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("multinomial", [False, True], ids=["logistic", "multinomial"])
def test_dask_chunks_equal_local_chunks_bit_for_bit(client, watched, layout, dtype,
                                                    multinomial):
    rows = LAYOUTS[layout]
    X, y = _data(labels="multinomial" if multinomial else "binary")
    X = X.astype(dtype)
    local = _validated(_local(X, y, rows), **_kwargs(multinomial))
    remote = _validated(_dask(X, y, rows, client), **_kwargs(multinomial))
    assert remote.chunk_rows == local.chunk_rows == rows
    assert remote.shape == local.shape == (200, P)
    assert remote.dtype == local.dtype
    _assert_same_bits(_reductions(local, multinomial), _reductions(remote, multinomial))
    _assert_no_rows_of_X(watched, P)


@pytest.mark.slow
def test_from_dask_never_computes_X_on_the_driver(client, monkeypatch):
    da = pytest.importorskip("dask.array")

    def refuse(*args, **kwargs):
        raise AssertionError("X was computed on the driver")

    for name in ("compute", "__array__", "persist"):
        monkeypatch.setattr(da.Array, name, refuse)
    X, y = _data()
    chunks = _dask(X, y, LAYOUTS["uneven"], client)
    assert chunks.row_norms().tobytes() == _local(X, y, LAYOUTS["uneven"]).row_norms().tobytes()


@pytest.mark.slow
@pytest.mark.parametrize("layout", LAYOUTS)
def test_y_as_a_numpy_array_is_split_by_the_row_chunks(client, layout):
    rows = LAYOUTS[layout]
    X, y = _data()
    a = _validated(_dask(X, y, rows, client, dask_y=False), **_kwargs())
    b = _validated(_local(X, y, rows), **_kwargs())
    _assert_same_bits(_reductions(a), _reductions(b))


def test_float32_chunks_equal_their_float64_copy_bit_for_bit():
    # float32 is storage only: raw (unvalidated) chunks give the float64 copy's bits
    X, y = _data()
    X = X / np.linalg.norm(X, axis=1, keepdims=True).max()
    X32 = X.astype(np.float32)
    rows = LAYOUTS["uneven"]
    a, b = _local(X32, y, rows), _local(X32.astype(np.float64), y, rows)
    assert a.dtype == np.float32 and b.dtype == np.float64
    _assert_same_bits(_reductions(a), _reductions(b))


# -- one local chunk is the plain in-memory call ------------------------------------------------
def test_one_local_chunk_gives_the_in_memory_bits():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        problem = Problem(X, y, **_kwargs())
    chunks = _validated(_local(X, y, (200,)), **_kwargs())
    loss, p, n = problem.loss_object, problem.p, problem.n
    norms = row_norms(problem.X)
    theta = np.linspace(-0.4, 0.5, p)
    got, clipped = chunks.clipped_gradient_sum(theta, loss, 0.7)
    want = np.empty(p)
    want_clipped = gd.clipped_gradient_sum(problem.X, problem.y, loss.kernel_id,
                                           loss.kernel_param, theta, norms, 0.7, want,
                                           np.empty((64, p)))
    assert got.tobytes() == want.tobytes() and clipped == want_clipped
    seed = np.random.SeedSequence(3)
    sampled = chunks.sampled_clipped_gradient_sum(theta, loss, 0.7, 0.25, [seed])
    keep = np.flatnonzero(np.random.default_rng(seed).random(n) < 0.25)
    gd.clipped_gradient_sum(problem.X[keep], problem.y[keep], loss.kernel_id,
                            loss.kernel_param, theta, norms[keep], 0.7, want, np.empty((64, p)))
    assert sampled.tobytes() == want.tobytes()
    r, w = np.linspace(-1, 1, n), np.linspace(0, 1, n)
    assert chunks.matvec(theta).tobytes() == _ordered_linalg.matvec(problem.X, theta).tobytes()
    assert chunks.rmatvec(r).tobytes() == _ordered_linalg.rmatvec(problem.X, r).tobytes()
    assert (chunks.weighted_gram(w).tobytes()
            == _ordered_linalg.weighted_gram(problem.X, w).tobytes())
    assert chunks.row_norms().tobytes() == norms.tobytes()


def test_chunked_norms_are_the_whole_matrix_norms():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        problem = Problem(X, y, **_kwargs())
    chunks = _validated(_local(X, y, LAYOUTS["uneven"]), **_kwargs())
    assert chunks.row_norms().tobytes() == row_norms(problem.X).tobytes()
    assert chunks.matvec(np.ones(P)).tobytes() == _ordered_linalg.matvec(
        problem.X, np.ones(P)).tobytes()


# -- map ----------------------------------------------------------------------------------------
def _rows_plus(X, y, offset, scale=1):
    return scale * (X.shape[0] + offset)


# the Dask cases are the slow tier's (the test extra has no dask; CI installs it)
WHERE = ["local", pytest.param("dask", marks=pytest.mark.slow)]


def _client_if_dask(request, where):
    """conftest's in-process cluster for the Dask case; none (and no dask) for the local one."""
    return request.getfixturevalue("client") if where == "dask" else None


@pytest.mark.parametrize("where", WHERE)
def test_map_runs_per_chunk_in_chunk_order(request, where):
    client = _client_if_dask(request, where)
    X, y = _data()
    rows = LAYOUTS["uneven"]
    chunks = _local(X, y, rows) if where == "local" else _dask(X, y, rows, client)
    assert chunks.map(_rows_plus, [1, 2, 3], scale=10) == [380, 1020, 660]
    with pytest.raises(ValueError, match="one entry per chunk"):
        chunks.map(_rows_plus, [1, 2])


# -- files --------------------------------------------------------------------------------------
@pytest.mark.parametrize("where", WHERE)
def test_npy_chunks_equal_in_memory_chunks(request, tmp_path, where):
    client = _client_if_dask(request, where)
    X, y = _data()
    rows = LAYOUTS["uneven"]
    x_paths, y_paths = [], []
    for c, (Xc, yc) in enumerate(zip(_split(X, rows), _split(y, rows))):
        x_paths.append(tmp_path / f"X{c}.npy")
        y_paths.append(tmp_path / f"y{c}.npy")
        np.save(x_paths[-1], Xc)
        np.save(y_paths[-1], yc)
    chunks = RowChunks.from_npy(x_paths, y_paths, client=None if where == "local" else client)
    assert chunks.chunk_rows == rows and chunks.shape == (200, P)
    assert (chunks.client is None) == (where == "local")
    _assert_same_bits(_reductions(_validated(chunks, **_kwargs())),
                      _reductions(_validated(_local(X, y, rows), **_kwargs())))


# -- refusals -----------------------------------------------------------------------------------
@pytest.mark.slow
def test_column_split_chunks_are_refused_with_the_fix(client):
    da = pytest.importorskip("dask.array")
    X, y = _data()
    with pytest.raises(ValueError, match=r"rows only.*X\.rechunk\(\{1: -1\}\)"):
        RowChunks.from_dask(da.from_array(X, chunks=(50, 2)), y, client=client)


@pytest.mark.slow
def test_mismatched_y_chunks_are_refused(client):
    da = pytest.importorskip("dask.array")
    X, y = _data()
    Xd = da.from_array(X, chunks=((100, 100), (P,)))
    with pytest.raises(ValueError, match="row chunks"):
        RowChunks.from_dask(Xd, da.from_array(y, chunks=((50, 150),)), client=client)
    with pytest.raises(ValueError, match=r"y must have shape \(200,\)"):
        RowChunks.from_dask(Xd, y[:-1], client=client)


def test_bad_local_layouts_are_refused():
    X, y = _data()
    with pytest.raises(ValueError, match="as many chunks"):
        RowChunks.from_arrays([X], [y[:100], y[100:]])
    with pytest.raises(ValueError, match=r"chunk 1 of y must have shape \(100,\)"):
        RowChunks.from_arrays([X[:100], X[100:]], [y[:100], y[100:150]])
    with pytest.raises(ValueError, match="same columns"):
        RowChunks.from_arrays([X[:100], X[100:, :3]], [y[:100], y[100:]])
    with pytest.raises(ValueError, match="no rows"):
        RowChunks.from_arrays([X, X[:0]], [y, y[:0]])
    with pytest.raises(ValueError, match="at least one chunk"):
        RowChunks.from_arrays([], [])
    chunks = _local(X, y, (200,))
    loss = Problem(np.ones((1, P)) / P, [1.0], **_kwargs()).loss_object
    with pytest.raises(ValueError, match=r"theta must have shape \(5,\)"):
        chunks.clipped_gradient_sum(np.zeros(4), loss, 1.0)
    with pytest.raises(TypeError, match="no row indices"):
        chunks.clipped_gradient_sum(np.zeros(P), loss, 1.0, rows=np.arange(3))
    with pytest.raises(TypeError, match="SeedSequence"):
        chunks.sampled_clipped_gradient_sum(np.zeros(P), loss, 1.0, 0.5, [1])
    with pytest.raises(ValueError, match=r"sampling_rate must be in \(0, 1\]"):
        chunks.sampled_clipped_gradient_sum(np.zeros(P), loss, 1.0, 0.0,
                                            [np.random.SeedSequence(0)])
    with pytest.raises(ValueError, match="r must have 200 rows"):
        chunks.rmatvec(np.zeros(199))


def test_mixed_default_codings_across_chunks_are_refused():
    X, y = _data()
    y01 = np.where(y > 0, 1, 0)
    chunks = RowChunks.from_arrays([X[:100], X[100:]], [y[:100], y01[100:]])
    with pytest.raises(ValueError, match="across all chunks"):
        _validated(chunks, **_kwargs())
    # the same labels 0/1 in every chunk are fine, coded as Problem codes them
    a = _validated(RowChunks.from_arrays([X[:100], X[100:]], [y01[:100], y01[100:]]),
                   **_kwargs())
    b = _validated(RowChunks.from_arrays([X[:100], X[100:]], [y[:100], y[100:]]), **_kwargs())
    _assert_same_bits(_reductions(a), _reductions(b))


# -- validation on the workers ------------------------------------------------------------------
@pytest.mark.slow
def test_validation_clips_on_the_workers_and_returns_only_the_count(client, watched):
    X, y = _data()
    with pytest.warns(UserWarning) as whole:
        problem = Problem(X, y, **_kwargs())
    rows = LAYOUTS["uneven"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chunks = Problem(_dask(X, y, rows, client), None, **_kwargs()).X
    # one warning, Problem's, with the total; none per chunk
    assert [str(w.message) for w in caught] == [str(whole[0].message)]
    expected = int(np.count_nonzero(row_norms(X) > 1.0 + 1e-12))
    assert 0 < expected < 200
    assert str(caught[0].message).startswith(f"{expected} of 200 rows")
    assert chunks.validated and chunks.row_norms().max() <= 1.0
    assert chunks.row_norms().tobytes() == row_norms(problem.X).tobytes()
    _assert_no_rows_of_X(watched, P)
    for info in watched[0]:                  # the layout check: shapes and dtypes only
        assert not list(_arrays_in(info))
    with pytest.raises(ValueError, match="clip_rows=True"):
        Problem(_dask(X, y, rows, client), None, clip_rows=False, **_kwargs())


@pytest.mark.slow
def test_validation_keeps_the_intercept_column_on_the_workers(client):
    X, y = _data()
    kwargs = dict(_kwargs(), fit_intercept=True)
    a = _validated(_dask(X, y, LAYOUTS["uneven"], client), **kwargs)
    b = _validated(_local(X, y, LAYOUTS["uneven"]), **kwargs)
    assert a.shape == b.shape == (200, P + 1)
    r = np.linspace(-1, 1, 200)
    assert a.rmatvec(r).tobytes() == b.rmatvec(r).tobytes()


@pytest.mark.slow
def test_importing_the_module_needs_no_dask(tmp_path):
    import subprocess
    import sys
    # run outside the repository: its root holds a source tree without compiled kernels
    code = ("import sys; sys.modules['dask'] = None; sys.modules['distributed'] = None\n"
            "import dpsolve.chunked as c\n"
            "try:\n    c.RowChunks.from_dask(None, None)\n"
            "except ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=tmp_path).stdout
    assert 'pip install "dpsolve[dask]"' in out


# -- real worker processes ----------------------------------------------------------------------
@pytest.mark.slow
def test_worker_processes_give_the_local_bits():
    distributed = pytest.importorskip("distributed")
    X, y = _data(labels="multinomial")
    rows = LAYOUTS["uneven"]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        for multinomial in (False, True):
            labels = y if multinomial else np.where(y > 0, 1.0, -1.0)
            remote = _validated(_dask(X, labels, rows, client), **_kwargs(multinomial))
            local = _validated(_local(X, labels, rows), **_kwargs(multinomial))
            _assert_same_bits(_reductions(local, multinomial), _reductions(remote, multinomial))
        # a function of the caller's, pickled to the worker processes
        assert remote.map(_rows_plus, [1, 2, 3], scale=10) == [380, 1020, 660]
