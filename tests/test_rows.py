"""One interface over rows (dpsolve.rows): every backend gives the bits of the kernel call it
stands for, on the same rows, and the solvers never ask how X is stored."""
import ast
import pathlib
import warnings

import numpy as np
import pytest
from scipy import sparse

import dpsolve
from dpsolve import Problem, _ordered_linalg
from dpsolve._kernels import gd
from dpsolve._row_ops import kernel_rows, row_norms
from dpsolve.rows import MemoryRows, RowChunks, Rows, rows_of

SOLVERS = pathlib.Path(dpsolve.__file__).parent / "solvers"
N, P, K = 150, 6, 3
LAYOUT = (40, 75, 35)


def _problem(loss="logistic", storage="dense", dtype=np.float64, layout=None, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.standard_normal((N, P)) * rng.uniform(0.1, 1.3, (N, 1))).astype(dtype)
    if loss == "multinomial":
        y, kwargs = rng.integers(0, K, N), {"n_classes": K}
    else:
        y, kwargs = np.where(rng.standard_normal(N) > 0, 1.0, -1.0), {}
    if storage == "csr":
        X[np.abs(X) < 0.4] = 0.0
        X = sparse.csr_array(X)
    if layout is not None:
        bounds = np.cumsum((0,) + layout)
        cut = [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:])]
        X = RowChunks.from_arrays([X[s] for s in cut], [y[s] for s in cut])
        y = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)        # rows clipped to row_norm
        return Problem(X, y, loss, radius=1.0, reg=0.1, row_norm=1.0, **kwargs)


def _theta(loss):
    rng = np.random.default_rng(3)
    return rng.standard_normal((P, K) if loss == "multinomial" else P) * 0.4


def _kernel_sum(X, y, theta, loss, clip, rows=None):
    """The clipped gradient kernel called directly on X (its row norms), as solvers did."""
    out = np.empty(theta.shape)
    scratch = np.empty((64, theta.size))
    norms = row_norms(X)
    extra = {} if rows is None else {"rows": rows}
    if loss.is_multinomial:
        clipped = gd.clipped_gradient_sum_multinomial(
            kernel_rows(X), y, theta, norms, clip, out, scratch, np.empty((64, 2 * K)), **extra)
    else:
        clipped = gd.clipped_gradient_sum(kernel_rows(X), y, loss.kernel_id, loss.kernel_param,
                                          theta, norms, clip, out, scratch, **extra)
    return out, clipped


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


# -- no solver asks how X is stored -------------------------------------------------------------
def _mentions(path, name):
    tree = ast.parse(path.read_text(), filename=str(path))
    return sorted({node.lineno for node in ast.walk(tree)
                   if (isinstance(node, ast.Attribute) and node.attr == name)
                   or (isinstance(node, ast.Name) and node.id == name)
                   or (isinstance(node, ast.Constant) and node.value == name)})


def test_no_solver_module_mentions_is_chunked():
    found = {path.name: lines for path in sorted(SOLVERS.rglob("*.py"))
             if (lines := _mentions(path, "is_chunked"))}
    assert not found, f"ask problem.rows, not how X is stored: {found}"


def test_the_ast_check_finds_a_planted_mention(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def run(problem):\n    if problem.is_chunked:\n        pass\n")
    assert _mentions(planted, "is_chunked") == [2]


# -- every backend implements the whole interface -----------------------------------------------
REDUCTIONS = [name for name, value in vars(Rows).items()
              if callable(value) and not name.startswith("_")]


@pytest.mark.parametrize("backend", [MemoryRows, RowChunks])
def test_every_backend_implements_every_reduction(backend):
    assert set(REDUCTIONS) >= {"clipped_gradient_sum", "poisson_sampler", "matvec", "rmatvec",
                               "weighted_gram", "fixed_order_gram", "row_norms", "labels",
                               "map_parts", "sum_parts"}
    missing = [name for name in REDUCTIONS if getattr(backend, name) is getattr(Rows, name)]
    assert not missing


def test_problem_rows_is_the_backend_of_its_storage():
    dense, csr, chunked = _problem(), _problem(storage="csr"), _problem(layout=LAYOUT)
    assert isinstance(dense.rows, MemoryRows) and dense.rows.random_access
    assert isinstance(csr.rows, MemoryRows) and csr.rows.part_rows == (N,)
    assert chunked.rows is chunked.X and not chunked.rows.random_access
    assert chunked.rows.part_rows == LAYOUT
    assert rows_of(chunked.X, chunked.y) is chunked.X


# -- in memory: the kernel call itself ----------------------------------------------------------
STORAGES = [("dense", np.float64), ("csr", np.float64), ("dense", np.float32),
            ("csr", np.float32)]


@pytest.mark.parametrize("storage, dtype", STORAGES)
@pytest.mark.parametrize("loss", ["logistic", "huber_hinge", "squared", "multinomial"])
@pytest.mark.parametrize("clip", [0.3, np.inf])
def test_memory_rows_clipped_sum_is_the_kernel_call(storage, dtype, loss, clip):
    problem = _problem(loss, storage, dtype)
    theta, obj = _theta(loss), problem.loss_object
    got, clipped = problem.rows.clipped_gradient_sum(theta, obj, clip)
    want, want_clipped = _kernel_sum(problem.X, problem.y, theta, obj, clip)
    _same(got, want)
    assert clipped == want_clipped and (clip == np.inf) == (clipped == 0)
    rows = np.array([3, 3, 17, 140, 0], dtype=np.intp)
    _same(problem.rows.clipped_gradient_sum(theta, obj, clip, rows=rows)[0],
          _kernel_sum(problem.X, problem.y, theta, obj, clip, rows=rows)[0])


@pytest.mark.parametrize("storage, dtype", STORAGES)
def test_memory_rows_products_are_the_ordered_products(storage, dtype):
    problem = _problem("logistic", storage, dtype)
    rows, X = problem.rows, problem.X
    rng = np.random.default_rng(4)
    v, V, r, R, w = (rng.standard_normal(P), rng.standard_normal((P, K)),
                     rng.standard_normal(N), rng.standard_normal((N, K)), rng.uniform(0, 1, N))
    _same(rows.matvec(v), _ordered_linalg.matvec(X, v))
    _same(rows.matvec(V), _ordered_linalg.matvec(X, V))
    _same(rows.rmatvec(r), _ordered_linalg.rmatvec(X, r))
    _same(rows.rmatvec(R), _ordered_linalg.rmatvec(X, R))
    _same(rows.weighted_gram(w), _ordered_linalg.weighted_gram(X, w))
    _same(rows.fixed_order_gram(w), _ordered_linalg.fixed_order_gram(X, w))
    _same(rows.row_norms(), row_norms(X))
    _same(rows.labels(), problem.y)


def test_memory_rows_poisson_sampler_draws_the_sample_from_the_generator():
    problem = _problem("huber_hinge")
    theta, obj, q = _theta("huber_hinge"), problem.loss_object, 0.2
    a, b = np.random.default_rng(9), np.random.default_rng(9)
    sampler = problem.rows.poisson_sampler(a, q)
    assert a.random() == b.random()            # nothing drawn before the first sample
    for _ in range(3):
        keep = np.flatnonzero(b.random(N) < q).astype(np.intp)
        _same(sampler(theta, obj, 0.5),
              _kernel_sum(problem.X, problem.y, theta, obj, 0.5, rows=keep)[0])
    assert a.random() == b.random()


# -- in chunks: the same kernel on each chunk, added in chunk order -----------------------------
def _chunk_problems(loss, storage="dense"):
    """The chunked problem and, for each chunk, the in-memory problem of its rows."""
    whole = _problem(loss, storage)
    bounds = np.cumsum((0,) + LAYOUT)
    parts = [whole._with_data(whole.X[a:b], whole.y[a:b])
             for a, b in zip(bounds[:-1], bounds[1:])]
    return _problem(loss, storage, layout=LAYOUT), parts


def _in_order(results, shape):
    out = np.zeros(shape)
    for part in results:
        out += part
    return out


@pytest.mark.parametrize("storage", ["dense", "csr"])
@pytest.mark.parametrize("loss", ["logistic", "multinomial"])
def test_row_chunks_add_the_memory_rows_results_in_chunk_order(loss, storage):
    chunked, parts = _chunk_problems(loss, storage)
    theta, obj = _theta(loss), chunked.loss_object
    rng = np.random.default_rng(5)
    r, w = rng.standard_normal(N), rng.uniform(0, 1, N)
    bounds = np.cumsum((0,) + LAYOUT)
    cut = [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:])]
    got, clipped = chunked.rows.clipped_gradient_sum(theta, obj, 0.3)
    each = [part.rows.clipped_gradient_sum(theta, obj, 0.3) for part in parts]
    _same(got, _in_order([g for g, _ in each], theta.shape))
    assert clipped == sum(c for _, c in each)
    _same(chunked.rows.rmatvec(r), _in_order(
        [part.rows.rmatvec(np.ascontiguousarray(r[s])) for part, s in zip(parts, cut)], (P,)))
    for name in ("weighted_gram", "fixed_order_gram"):
        _same(getattr(chunked.rows, name)(w), _in_order(
            [getattr(part.rows, name)(np.ascontiguousarray(w[s])) for part, s in zip(parts, cut)],
            (P, P)))
    v = theta if theta.ndim == 1 else theta[:, 0]
    _same(chunked.rows.matvec(v), np.concatenate([part.rows.matvec(v) for part in parts]))
    _same(chunked.rows.row_norms(), np.concatenate([part.rows.row_norms() for part in parts]))
    _same(chunked.rows.labels(), np.concatenate([part.rows.labels() for part in parts]))


def test_row_chunks_poisson_sampler_spawns_one_stream_per_chunk_per_call():
    chunked, parts = _chunk_problems("logistic")
    theta, obj, q = _theta("logistic"), chunked.loss_object, 0.3
    a, b = np.random.default_rng(2), np.random.default_rng(2)
    sampler = chunked.rows.poisson_sampler(a, q)
    streams = np.random.SeedSequence(b.integers(0, 2 ** 63, size=4))
    for _ in range(2):
        seeds = streams.spawn(len(parts))
        want = []
        for part, seed in zip(parts, seeds):
            keep = np.flatnonzero(np.random.default_rng(seed).random(part.n) < q)
            want.append(part.rows.clipped_gradient_sum(theta, obj, 0.4,
                                                       rows=keep.astype(np.intp))[0])
        _same(sampler(theta, obj, 0.4), _in_order(want, (P,)))
    assert a.random() == b.random()


def test_one_chunk_gives_the_memory_bits():
    memory = _problem("multinomial")
    one = _problem("multinomial", layout=(N,))
    theta, obj = _theta("multinomial"), memory.loss_object
    for clip in (0.3, np.inf):
        _same(one.rows.clipped_gradient_sum(theta, obj, clip)[0],
              memory.rows.clipped_gradient_sum(theta, obj, clip)[0])
    w = np.linspace(0.0, 1.0, N)
    _same(one.rows.fixed_order_gram(w), memory.rows.fixed_order_gram(w))


def _block_count(X, y, values, offset=0):
    return np.array([X.shape[0] + offset, 0.0 if values is None else float(np.sum(values))])


@pytest.mark.parametrize("layout", [None, LAYOUT])
def test_map_and_sum_parts_cut_the_per_row_values_by_the_parts(layout):
    problem = _problem(layout=layout)
    values = np.arange(N, dtype=np.float64)
    parts = problem.rows.map_parts(_block_count, values, offset=1)
    total = problem.rows.sum_parts(_block_count, values, shape=(2,))
    rows = (N,) if layout is None else layout
    bounds = np.cumsum((0,) + rows)
    assert [tuple(p) for p in parts] == [(r + 1, float(values[a:b].sum()))
                                         for r, a, b in zip(rows, bounds[:-1], bounds[1:])]
    assert [p[1] for p in problem.rows.map_parts(_block_count, None)] == [0.0] * len(rows)
    _same(total, _in_order([np.array([float(r), float(values[a:b].sum())])
                            for r, a, b in zip(rows, bounds[:-1], bounds[1:])], (2,)))


def test_the_storage_page_example_runs():
    """docs/rows.md's example, as the page shows it."""
    import re
    page = pathlib.Path(__file__).parents[1] / "docs" / "rows.md"
    code = re.search(r"```python\n(.*?)```", page.read_text(), re.S).group(1)
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exec(code, namespace)
    problem, theta = namespace["problem"], np.zeros(5)
    _same(namespace["gradient"], _kernel_sum(problem.X, problem.y, theta,
                                             problem.loss_object, np.inf)[0])
    assert namespace["clipped"] == 0 and isinstance(namespace["rows"], MemoryRows)
