"""A Problem on rows in chunks (a Dask array chunked by rows, or a RowChunks): clipped_gd,
dp_sgd, output_perturbation and the reference minimiser with its certificate give, bit for
bit, the same result on the chunks held by Dask workers as on the same chunks held locally,
and with one chunk the in-memory Problem's (dp_sgd excepted: its Poisson sample is drawn chunk
by chunk); X never reaches the driver; every other solver refuses the Problem before any work;
the release's metadata does not depend on the neighbour."""
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import dpsolve
from dpsolve import Problem, _fixed_iteration, reference_minimizer
from dpsolve.chunked import RowChunks
from dpsolve.reference import certificate
from dpsolve.solvers import registry
from test_chunked import _assert_no_rows_of_X
from test_neighbour_metadata import release_metadata

P, K = 5, 3
ROWS = (37, 100, 63)
N = sum(ROWS)
#: The solvers registered with chunked=True, in registration order.
CHUNKED_SOLVERS = ("clipped_gd", "output_perturbation", "dp_sgd", "phased_erm")
DTYPES = [np.float64, np.float32]


def _data(n=N, p=P, seed=0, loss="logistic"):
    rng = np.random.default_rng(seed)
    # norms up to about 2.5: row_norm=1 clips some rows, not all
    X = rng.standard_normal((n, p)) * rng.uniform(0.1, 1.1, (n, 1))
    score = X @ np.linspace(1, -1, p)
    if loss == "multinomial":
        y = rng.integers(0, K, n)
    elif loss == "squared":
        y = np.clip(score + 0.1 * rng.standard_normal(n), -1.0, 1.0)
    else:
        y = np.where(score + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def _options(loss):
    extra = {"n_classes": K} if loss == "multinomial" else {}
    return {"loss": loss, "radius": 1.0, "reg": 0.1, "row_norm": 1.0, **extra}


def _split(a, rows):
    bounds = np.cumsum((0,) + tuple(rows))
    return [a[s:e] for s, e in zip(bounds[:-1], bounds[1:])]


def _quiet(build):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)       # the clipped-rows warning
        return build()


def _on_dask(X, y, loss, rows=ROWS, **options):
    da = pytest.importorskip("dask.array")
    Xd = da.from_array(X, chunks=(tuple(rows), (X.shape[1],)))
    yd = da.from_array(y, chunks=(tuple(rows),))
    return _quiet(lambda: Problem(Xd, yd, **_options(loss), **options))


def _local(X, y, loss, rows=ROWS, **options):
    chunks = RowChunks.from_arrays(_split(X, rows), _split(y, rows))
    return _quiet(lambda: Problem(chunks, None, **_options(loss), **options))


def _in_memory(X, y, loss, **options):
    return _quiet(lambda: Problem(X, y, **_options(loss), **options))


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


def _clipped_gd(problem):
    return dpsolve.clipped_gd(problem, epsilon=1.0, delta=1e-6, steps=15, rng=5)


def _dp_sgd(problem):
    return dpsolve.dp_sgd(problem, epsilon=1.0, delta=1e-6, steps=15, sampling_rate=0.2,
                          rng=5)


def _output_perturbation(problem):
    return dpsolve.output_perturbation(problem, epsilon=1.0, delta=1e-6, rng=5)


# -- Dask chunks against the same chunks held locally -------------------------------------------
@pytest.mark.slow
def test_every_chunk_stays_on_its_worker(client, tmp_path):
    """Every task on a chunk runs where the chunk is, so no chunk is ever copied to a second
    worker (left free, Dask's work stealing moves tasks to an idle worker with their data, and
    a memory-mapped chunk travels as its bytes); chunk files are dealt to the workers in turn."""
    X, y = _data()
    xs, ys = [], []
    for c, (Xc, yc) in enumerate(zip(_split(X, ROWS), _split(y, ROWS))):
        xs.append(tmp_path / f"x_{c}.npy")
        ys.append(tmp_path / f"y_{c}.npy")
        np.save(xs[-1], Xc)
        np.save(ys[-1], yc)
    problem = _quiet(lambda: Problem(RowChunks.from_npy(xs, ys, client=client), None,
                                     **_options("logistic")))
    _clipped_gd(problem)
    reference_minimizer(problem, cache=False)
    chunks = problem.X._backend.chunks
    held = client.who_has(chunks)
    assert all(len(held[f.key]) == 1 for f in chunks)
    assert len({held[f.key][0] for f in chunks}) == 2


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("loss", ["logistic", "multinomial"])
def test_clipped_gd_on_dask_equals_the_local_chunks(client, watched, loss, dtype):
    X, y = _data(loss=loss)
    X = X.astype(dtype)
    remote = _on_dask(X, y, loss)
    assert remote.is_chunked and remote.X.client is client and remote.X.dtype == dtype
    a = _clipped_gd(remote)
    b = _clipped_gd(_local(X, y, loss))
    _same_bits(a.theta, b.theta)
    assert release_metadata(a) == release_metadata(b)
    _assert_no_rows_of_X(watched, P)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_dp_sgd_on_dask_equals_the_local_chunks(client, watched, dtype):
    X, y = _data()
    X = X.astype(dtype)
    a = _dp_sgd(_on_dask(X, y, "logistic"))
    b = _dp_sgd(_local(X, y, "logistic"))
    _same_bits(a.theta, b.theta)
    assert release_metadata(a) == release_metadata(b)
    _assert_no_rows_of_X(watched, P)
    # a fresh sample each step and each seed: other seeds, other bits
    c = dpsolve.dp_sgd(_local(X, y, "logistic"), epsilon=1.0, delta=1e-6, steps=15,
                       sampling_rate=0.2, rng=6)
    assert c.theta.tobytes() != b.theta.tobytes()


@pytest.mark.slow
def test_dp_sgd_keeps_no_seed(client):
    X, y = _data()
    fit = _dp_sgd(_local(X, y, "logistic"))
    text = repr(fit) + repr(fit.settings) + repr(fit.noise) + repr(fit.observers)
    assert "SeedSequence" not in text and "entropy" not in text


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("loss", ["logistic", "squared", "multinomial"])
def test_reference_minimizer_on_dask_equals_the_local_chunks(client, watched, loss, dtype):
    X, y = _data(loss=loss)
    X = X.astype(dtype)
    remote, local = _on_dask(X, y, loss), _local(X, y, loss)
    a = reference_minimizer(remote, cache=False)
    b = reference_minimizer(local, cache=False)
    _same_bits(a.theta, b.theta)
    assert a.gap == b.gap <= 1e-9 and a.value == b.value and a.status == b.status
    assert certificate(remote, a.theta) == certificate(local, b.theta) == a.gap
    _assert_no_rows_of_X(watched, P)
    # the same minimiser as in memory, to within the certified gaps
    whole = reference_minimizer(_in_memory(X, y, loss), cache=False)
    assert abs(a.value - whole.value) <= a.gap + whole.gap + 1e-14


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("loss", ["logistic", "multinomial"])
def test_output_perturbation_on_dask_equals_the_local_chunks(client, watched, loss, dtype):
    X, y = _data(loss=loss)
    X = X.astype(dtype)
    remote, local = _on_dask(X, y, loss), _local(X, y, loss)
    a, b = _output_perturbation(remote), _output_perturbation(local)
    _same_bits(a.theta, b.theta)
    assert release_metadata(a) == release_metadata(b)
    # secure mode's inner solve (its noise is the operating system's): the fixed iterations
    plan = _fixed_iteration.output_plan(local, 1e-6)
    _same_bits(_fixed_iteration.minimize(remote, plan), _fixed_iteration.minimize(local, plan))
    _assert_no_rows_of_X(watched, P)


@pytest.mark.slow
def test_the_cache_key_hashes_the_chunks_where_they_live(client, watched, tmp_path):
    from dpsolve.reference import _cache
    X, y = _data()
    remote, local = _on_dask(X, y, "logistic"), _local(X, y, "logistic")
    assert _cache.key(remote, 1e-9) == _cache.key(local, 1e-9)
    X2 = X.copy()
    X2[50, 0] += 0.25
    assert _cache.key(_local(X2, y, "logistic"), 1e-9) != _cache.key(local, 1e-9)
    first = reference_minimizer(remote, cache=tmp_path)
    again = reference_minimizer(remote, cache=tmp_path)
    assert not first.cached and again.cached
    _same_bits(first.theta, again.theta)
    _assert_no_rows_of_X(watched, P)


# -- one chunk gives the in-memory bits ----------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("loss", ["logistic", "squared", "multinomial"])
def test_one_chunk_gives_the_in_memory_bits(loss, dtype):
    X, y = _data(loss=loss)
    X = X.astype(dtype)
    one, whole = _local(X, y, loss, rows=(N,)), _in_memory(X, y, loss)
    assert not whole.is_chunked and one.is_chunked
    _same_bits(one.y, whole.y)
    _same_bits(_clipped_gd(one).theta, _clipped_gd(whole).theta)
    a, b = reference_minimizer(one, cache=False), reference_minimizer(whole, cache=False)
    _same_bits(a.theta, b.theta)
    assert a.gap == b.gap and a.value == b.value
    _same_bits(_output_perturbation(one).theta, _output_perturbation(whole).theta)
    plan = _fixed_iteration.output_plan(whole, 1e-6)
    _same_bits(_fixed_iteration.minimize(one, plan), _fixed_iteration.minimize(whole, plan))


@pytest.mark.slow
def test_one_dask_chunk_gives_the_in_memory_bits(client):
    X, y = _data()
    remote, whole = _on_dask(X, y, "logistic", rows=(N,)), _in_memory(X, y, "logistic")
    _same_bits(_clipped_gd(remote).theta, _clipped_gd(whole).theta)
    _same_bits(reference_minimizer(remote, cache=False).theta,
               reference_minimizer(whole, cache=False).theta)


# -- the Problem -------------------------------------------------------------------------------
@pytest.mark.slow
def test_the_problem_reads_as_any_other(client):
    X, y = _data()
    remote, whole = _on_dask(X, y, "logistic"), _in_memory(X, y, "logistic")
    assert (remote.n, remote.p, remote.describe()) == (whole.n, whole.p, whole.describe())
    assert not remote.is_sparse and remote.X.validated
    _same_bits(remote.y, whole.y)
    assert not remote.y.flags.writeable
    theta = np.linspace(-0.3, 0.3, P)
    # margins are per row: the same bits whatever the chunks
    _same_bits(remote.margins(theta), whole.margins(theta))
    assert np.isclose(remote.objective(theta), whole.objective(theta), rtol=1e-14)
    assert np.allclose(remote.gradient(theta), whole.gradient(theta), rtol=1e-13, atol=1e-15)
    assert remote._with_reg(0.5).X is remote.X


@pytest.mark.slow
def test_a_row_chunks_x_carries_its_labels(client):
    X, y = _data()
    chunks = RowChunks.from_arrays(_split(X, ROWS), _split(y, ROWS))
    with pytest.raises(ValueError, match="y must be None"):
        Problem(chunks, y, **_options("logistic"))


@pytest.mark.slow
def test_the_intercept_column_is_added_on_the_workers(client):
    X, y = _data()
    a = _on_dask(X, y, "logistic", fit_intercept=True)
    b = _local(X, y, "logistic", fit_intercept=True)
    assert a.p == b.p == P + 1 and a.X.shape == (N, P + 1)
    _same_bits(_clipped_gd(a).theta, _clipped_gd(b).theta)


@pytest.mark.slow
def test_the_clip_warning_is_shown_once_with_the_total(client):
    X, y = _data()
    with pytest.warns(UserWarning) as whole:
        Problem(X, y, **_options("logistic"))
    da = pytest.importorskip("dask.array")
    Xd = da.from_array(X, chunks=(ROWS, (P,)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Problem(Xd, y, **_options("logistic"))
    assert [str(w.message) for w in caught] == [str(whole[0].message)]
    assert caught[0].filename == __file__          # pointed at the caller's line
    with pytest.raises(ValueError, match="clip_rows=True"):
        Problem(Xd, y, clip_rows=False, **_options("logistic"))


# -- refusals ----------------------------------------------------------------------------------
def _refusal_problem(spec):
    loss = next((name for name in spec.losses if name != "multinomial"), "multinomial")
    X, y = _data(loss=loss)
    # in the solver's own geometry (SolverSpec.constraints), so the chunks are what it refuses
    return _local(X, y, loss, constraint=spec.constraints[0])


@pytest.mark.parametrize("spec", [s for s in registry() if not s.chunked],
                         ids=lambda s: s.name)
def test_every_other_solver_refuses_chunks_before_any_work(spec, monkeypatch):
    problem = _refusal_problem(spec)

    def no_work(*args, **kwargs):
        raise AssertionError("a chunk was read")

    monkeypatch.setattr(problem.X._backend, "run", no_work)
    with pytest.raises(TypeError) as refused:
        spec.function(problem, *([None] if spec.partition else []), **spec.example)
    message = str(refused.value)
    assert spec.name in message and "chunks of rows" in message
    assert f"the solvers that do are {', '.join(CHUNKED_SOLVERS)}" in message


def test_the_chunked_solvers_are_the_registered_takers():
    assert tuple(s.name for s in registry() if s.chunked) == CHUNKED_SOLVERS


def test_the_parties_and_the_audit_refuse_chunks():
    from dpsolve import Parties
    from dpsolve.audit import canary_neighbours
    X, y = _data()
    problem = _local(X, y, "logistic")
    with pytest.raises(TypeError, match="Parties .* chunks of rows"):
        Parties.from_sizes(problem, [100, 100])
    with pytest.raises(TypeError, match="canary_neighbours .* chunks of rows"):
        canary_neighbours(problem)


def test_the_reference_minimizer_refuses_what_needs_x_in_memory():
    X, y = _data()
    hinge = _local(X, y, "hinge")
    with pytest.raises(ValueError, match="loss='hinge'"):
        reference_minimizer(hinge, cache=False)
    with pytest.raises(ValueError, match="method='cvxpy'"):
        reference_minimizer(_local(X, y, "logistic"), cache=False, method="cvxpy")
    with pytest.raises(ValueError, match="smooth loss"):
        _output_perturbation(hinge)
    # the certificate itself runs chunk by chunk for every margin loss
    theta = np.full(P, 0.1)
    assert certificate(hinge, theta) > 0.0


# -- privacy: neighbours are rows wherever they live ---------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("run", [_clipped_gd, _dp_sgd, _output_perturbation],
                         ids=["clipped_gd", "dp_sgd", "output_perturbation"])
def test_release_metadata_does_not_depend_on_the_neighbour(client, run):
    X, y = _data()
    X2, y2 = X.copy(), y.copy()
    X2[60], y2[60] = 0.3 * X[61], -y[61]           # one row replaced, in the second chunk
    fits = []
    for data in ((X, y), (X2, y2)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fits.append(run(_on_dask(*data, "logistic")))
        assert not caught
    assert release_metadata(fits[0]) == release_metadata(fits[1])
    assert fits[0].theta.tobytes() != fits[1].theta.tobytes()


# -- real worker processes ----------------------------------------------------------------------
@pytest.mark.slow
def test_worker_processes_give_the_local_bits():
    distributed = pytest.importorskip("distributed")
    X, y = _data()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster):
        for loss in ("logistic", "multinomial"):
            X, y = _data(loss=loss)
            remote, local = _on_dask(X, y, loss), _local(X, y, loss)
            _same_bits(_clipped_gd(remote).theta, _clipped_gd(local).theta)
            a = reference_minimizer(remote, cache=False)
            b = reference_minimizer(local, cache=False)
            _same_bits(a.theta, b.theta)
            assert a.gap == b.gap <= 1e-9


@pytest.mark.slow
def test_the_worked_example_of_the_cluster_page_runs(tmp_path):
    """docs/cluster.md's worked example, as written, in a fresh interpreter, on ten small chunk
    files in data/ (a LocalCluster of two worker processes)."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "cluster.md").read_text()
    code = page.split("A worked example:")[1].split("```python\n")[1].split("```")[0]
    data = tmp_path / "data"
    data.mkdir()
    rng = np.random.default_rng(0)
    for c in range(10):
        X = rng.standard_normal((300, 8)).astype(np.float32)
        X /= (np.linalg.norm(X.astype(np.float64), axis=1) * 1.01).astype(np.float32)[:, None]
        np.save(data / f"x_{c:03d}.npy", X)
        np.save(data / f"y_{c:03d}.npy", np.where(X[:, 0] > 0, 1.0, -1.0))
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "certified within" in out.stdout
