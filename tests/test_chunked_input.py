"""RowChunks' constructors refuse bad input with a TypeError or ValueError naming the parameter
(and the chunk) before any chunk is used: chunks that are not arrays, a single array or path in
place of a sequence, files that are not ``.npy`` arrays, dtypes that are not real numbers, a
client that is not a ``distributed.Client`` (docs/cluster.md, "Rows on the workers")."""
import os
import pathlib

import numpy as np
import pytest
from scipy import sparse

from dpsolve.chunked import RowChunks
from dpsolve.losses import make_loss

#: A loss object for the reductions' argument checks (its kernel is never reached).
_LOGISTIC = make_loss("logistic")

N, P = 40, 3
_rng = np.random.default_rng(0)
X = _rng.standard_normal((N, P))
Y = np.where(X[:, 0] > 0, 1.0, -1.0)


class _Frame:
    """A stand-in for any DataFrame-like object (with ``to_numpy``, as pandas' and polars' have):
    a shape, dtypes per column and ``to_numpy``, but no ``dtype``."""

    def __init__(self, values):
        self._values = values
        self.shape = values.shape
        self.dtypes = [values.dtype] * values.shape[1]

    def to_numpy(self):
        return self._values


@pytest.fixture
def files(tmp_path):
    """Paths of chunk files: X and y as .npy, X as .npz, an object array, text, a folder."""
    paths = {"x": tmp_path / "x.npy", "y": tmp_path / "y.npy", "npz": tmp_path / "x.npz",
             "objects": tmp_path / "objects.npy", "text": tmp_path / "text.npy",
             "strings": tmp_path / "strings.npy", "folder": tmp_path}
    np.save(paths["x"], X)
    np.save(paths["y"], Y)
    np.savez(paths["npz"], X=X)
    np.save(paths["objects"], np.array([[{"a": 1}]] * N, dtype=object), allow_pickle=True)
    paths["text"].write_text("1,2,3\n")
    np.save(paths["strings"], X.astype(str))
    return paths


# -- from_arrays --------------------------------------------------------------------------------
@pytest.mark.parametrize("chunk, match", [
    (X.tolist(), r"X_chunks\[0\] must be a numpy array or a scipy\.sparse matrix, got list; "
                 r"convert it with np\.asarray"),
    (_Frame(X), r"X_chunks\[0\] must be a numpy array .* got _Frame; convert it with "
                r"\.to_numpy\(\)"),
    ("rows", r"X_chunks\[0\] must be a numpy array or a scipy\.sparse matrix, got str"),
], ids=["list of rows", "dataframe-like", "string"])
def test_from_arrays_refuses_chunks_that_are_not_arrays(chunk, match):
    with pytest.raises(TypeError, match=match):
        RowChunks.from_arrays([chunk], [Y])


def test_from_arrays_refuses_a_pandas_dataframe():
    import pandas as pd         # a test dependency: DataFrames are what users pass
    with pytest.raises(TypeError, match=r"X_chunks\[0\] .* got DataFrame; .*to_numpy"):
        RowChunks.from_arrays([pd.DataFrame(X)], [Y])


@pytest.mark.parametrize("X_chunks, y_chunks, match", [
    (X, [Y], r"X_chunks must be a sequence .* got a single ndarray of shape \(40, 3\); pass "
             r"\[X_chunk\] for one chunk"),
    ([X], Y, r"y_chunks must be a sequence .* got a single ndarray of shape \(40,\)"),
    (sparse.csr_array(X), [Y], r"X_chunks must be a sequence .* got a single csr_array"),
    ({"a": X}, [Y], r"X_chunks must be a sequence .* got a dict \(a mapping\)"),
    (3, [Y], r"X_chunks must be a sequence .* got int"),
], ids=["one array", "one y array", "one sparse matrix", "dict", "int"])
def test_from_arrays_refuses_a_single_thing_in_place_of_the_chunks(X_chunks, y_chunks, match):
    with pytest.raises(TypeError, match=match):
        RowChunks.from_arrays(X_chunks, y_chunks)


@pytest.mark.parametrize("chunk, error, match", [
    (X[0], ValueError, r"X_chunks\[0\]: chunk 0 of X must be 2-D, got shape \(3,\)"),
    (X[:, :0], ValueError, r"X_chunks\[0\]: chunk 0 of X has no columns"),
    (X.astype(str), TypeError, r"X_chunks\[0\]: chunk 0 of X must hold real numbers"),
    (X > 0, TypeError, r"X_chunks\[0\]: chunk 0 of X must hold real numbers .* got dtype bool"),
    (X.astype(object), TypeError, r"chunk 0 of X must hold real numbers .* dtype object"),
    (X.astype(complex), TypeError, r"chunk 0 of X must hold real numbers .* complex128"),
    (sparse.csr_array(X > 0), TypeError, r"chunk 0 of X must hold real numbers .* bool"),
], ids=["1-D", "no columns", "strings", "bool", "objects", "complex", "sparse bool"])
def test_from_arrays_refuses_chunks_of_the_wrong_shape_or_dtype(chunk, error, match):
    with pytest.raises(error, match=match):
        RowChunks.from_arrays([chunk], [Y[:1] if chunk.ndim == 1 else Y])


def test_from_arrays_names_the_sequences_when_they_are_empty():
    with pytest.raises(ValueError, match="X_chunks: at least one chunk of rows is needed"):
        RowChunks.from_arrays([], [])


def test_from_arrays_still_takes_arrays_memmaps_and_sparse_chunks(tmp_path):
    np.save(tmp_path / "x.npy", X)
    mapped = np.load(tmp_path / "x.npy", mmap_mode="r")
    chunks = RowChunks.from_arrays((mapped[:15], sparse.csr_array(X[15:30]), X[30:].astype(int)
                                    .astype(float)), iter([Y[:15], list(Y[15:30]), Y[30:]]))
    assert chunks.chunk_rows == (15, 15, 10) and chunks.shape == (N, P)


# -- from_npy -----------------------------------------------------------------------------------
@pytest.mark.parametrize("x_paths, y_paths, match", [
    ("x", "y", r"x_paths must be a sequence \(a list or tuple\) of paths to \.npy files, one per "
               r"chunk, got the single path '.*x\.npy'; pass \[x_path\] for one chunk"),
    ("x-path", ["y"], r"x_paths must be a sequence .* got the single path '.*x\.npy'"),
    (["x"], "y", r"y_paths must be a sequence .* got the single path '.*y\.npy'"),
], ids=["two strings", "one pathlib.Path", "y a string"])
def test_from_npy_refuses_a_single_path(files, x_paths, y_paths, match):
    def resolve(value):
        if value == "x-path":
            return pathlib.Path(files["x"])
        if isinstance(value, list):
            return [str(files[v]) for v in value]
        return str(files[value])
    with pytest.raises(TypeError, match=match):
        RowChunks.from_npy(resolve(x_paths), resolve(y_paths))


def test_from_npy_refuses_a_named_pipe_unopened(files):
    # np.load would block on it until a writer came
    import os
    pipe = files["folder"] / "pipe.npy"
    os.mkfifo(pipe)
    with pytest.raises(ValueError, match=r"x_paths\[0\] '.*pipe\.npy': is a named pipe"):
        RowChunks.from_npy([pipe], [files["y"]])


@pytest.mark.parametrize("x_name, match", [
    ("npz", r"x_paths\[0\] '.*x\.npz' is an \.npz archive, not an \.npy file"),
    ("missing", r"x_paths\[0\] '.*gone\.npy': no such file"),
    ("folder", r"x_paths\[0\] '.*': is a directory, not a regular file"),
    ("objects", r"x_paths\[0\] '.*objects\.npy' is not an \.npy file of numbers NumPy can map"),
    ("text", r"x_paths\[0\] '.*text\.npy' is not an \.npy file of numbers NumPy can map"),
], ids=["npz", "missing", "folder", "pickled objects", "text file"])
def test_from_npy_refuses_files_that_are_not_npy_arrays(files, x_name, match):
    x = files["folder"] / "gone.npy" if x_name == "missing" else files[x_name]
    with pytest.raises(ValueError, match=match):
        RowChunks.from_npy([x], [files["y"]])


def test_from_npy_names_the_chunk_and_the_parameter(files):
    with pytest.raises(ValueError, match=r"y_paths\[1\] '.*gone\.npy': no such file"):
        RowChunks.from_npy([files["x"], files["x"]], [files["y"], files["folder"] / "gone.npy"])
    with pytest.raises(TypeError, match=r"x_paths\[0\]: chunk 0 of X must hold real numbers"):
        RowChunks.from_npy([files["strings"]], [files["y"]])
    with pytest.raises(TypeError, match=r"x_paths\[1\] must be a path \(a str or os\.PathLike\)"
                                        r", got int"):
        RowChunks.from_npy([files["x"], 3], [files["y"], files["y"]])
    with pytest.raises(ValueError, match="x_paths and y_paths must name at least one chunk"):
        RowChunks.from_npy([], [])
    with pytest.raises(ValueError, match="x_paths and y_paths must name as many chunks"):
        RowChunks.from_npy([files["x"]], [files["y"], files["y"]])


def test_from_npy_still_takes_str_pathlike_and_bytes_paths(files):
    chunks = RowChunks.from_npy((str(files["x"]), files["x"]),
                                [os.fsencode(files["y"]), files["y"]])
    assert chunks.shape == (2 * N, P) and chunks.n_chunks == 2


# -- the Dask constructors ----------------------------------------------------------------------
@pytest.mark.slow
def test_a_client_that_is_not_a_client_is_refused(files):
    pytest.importorskip("distributed")
    da = pytest.importorskip("dask.array")
    with pytest.raises(TypeError, match="client must be a distributed.Client or None, got int"):
        RowChunks.from_dask(da.from_array(X, chunks=(20, P)), Y, client=3)
    with pytest.raises(TypeError, match="client must be a distributed.Client or None, got str"):
        RowChunks.from_npy([files["x"]], [files["y"]], client="tcp://localhost:8786")


@pytest.mark.slow
def test_from_dask_refuses_a_dtype_that_is_not_real(client):
    da = pytest.importorskip("dask.array")
    with pytest.raises(TypeError, match="X must hold real numbers .* got dtype bool"):
        RowChunks.from_dask(da.from_array(X > 0, chunks=(20, P)), Y, client=client)


@pytest.mark.slow
def test_from_npy_checks_the_files_on_the_workers(client, files):
    """With a client the files are checked where they are read (the driver may not see the
    workers' files); the error names the parameter and the chunk all the same."""
    with pytest.raises(ValueError, match=r"x_paths\[1\] '.*x\.npz' is an \.npz archive"):
        RowChunks.from_npy([files["x"], files["npz"]], [files["y"], files["y"]], client=client)
    chunks = RowChunks.from_npy([files["x"]], [files["y"]], client=client)
    assert chunks.shape == (N, P) and chunks.client is client


# -- the reductions' public arguments -----------------------------------------------------------
@pytest.mark.parametrize("rate, error", [("0.5", TypeError), (True, TypeError),
                                         (float("nan"), ValueError), (1.5, ValueError)])
def test_sampling_rate_must_be_a_real_number_in_the_unit_interval(rate, error):
    chunks = RowChunks.from_arrays([X], [Y])
    with pytest.raises(error, match="sampling_rate"):
        chunks.sampled_clipped_gradient_sum(np.zeros(P), _LOGISTIC, 1.0, rate,
                                            [np.random.SeedSequence(0)])
