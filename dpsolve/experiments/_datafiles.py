"""Data files of the command line and of sweeps: their names checked before anything is read
(:func:`check_data_file`, which a sweep's validation runs), and their rows read
(:func:`load_file`); the ``.npy`` files of rows in chunks listed and checked from their
headers (:func:`chunk_files`). Imports nothing of dpsolve's own."""
import contextlib
import glob
import os
import warnings
import zipfile
from pathlib import Path

import numpy as np
from scipy import sparse

from .._validation import check_input_file

#: The data file formats :func:`load_file` reads, and those of a separate labels file.
DATA_SUFFIXES = (".npy", ".npz", ".csv")
LABEL_SUFFIXES = (".npy", ".csv")


def check_data_file(path, labels=None, names=("path", "labels")):
    """Check a data file's name, and its labels file's, before anything is read.

    Parameters
    ----------
    path : str or Path
        The data file: ``.npy``, ``.npz`` or ``.csv``.
    labels : str or Path, optional
        A separate labels file, ``.npy`` or ``.csv``; needed with an ``.npy`` data file.
    names : (str, str)
        How the two are named in messages (``("--data", "--labels")`` for the command line,
        ``("data.path", "data.labels")`` in a sweep).

    Raises
    ------
    TypeError
        If a name is not a string or path.
    ValueError
        If a file does not exist, is a directory or has another suffix, or an ``.npy`` data file
        has no labels file.
    """
    for value, name, suffixes in ((path, names[0], DATA_SUFFIXES),
                                  (labels, names[1], LABEL_SUFFIXES)):
        if value is None and name == names[1]:
            continue
        if isinstance(value, bool) or not isinstance(value, (str, os.PathLike)) or not str(value):
            raise TypeError(f"{name} must be a file name (a string), got {value!r}")
        file = Path(value)
        if file.suffix.lower() not in suffixes:
            raise ValueError(f"{name} {file}: must be a {', '.join(suffixes[:-1])} or "
                             f"{suffixes[-1]} file")
        if file.is_dir():
            raise ValueError(f"{name} {file}: is a directory, not a file")
        check_input_file(file, f"{name} {file}")
    if Path(path).suffix.lower() == ".npy" and labels is None:
        raise ValueError(f"{names[0]} {path}: an .npy file of rows needs its labels in a second "
                         f"file ({names[1]})")


#: How a chunks source's ``rows`` and ``labels`` are given, for the messages.
CHUNK_FORM = ('a list of .npy file names, or one glob pattern (a string such as '
              '"data/x_*.npy", whose matches are sorted by name)')


def _chunk_names(value, name):
    """The files a chunks source's key names: a list as given, or a glob pattern's matches
    sorted by name (relative names from the working directory, as a file source's)."""
    if isinstance(value, (str, os.PathLike)) and not isinstance(value, bool) and str(value):
        files = sorted(glob.glob(str(value)))
        if not files:
            raise ValueError(f"{name} = {str(value)!r}: no file matches the pattern; "
                             f"accepted: {CHUNK_FORM}")
        return files
    if (not isinstance(value, (list, tuple)) or not value
            or not all(isinstance(v, (str, os.PathLike)) and str(v) for v in value)):
        raise TypeError(f"{name} must be {CHUNK_FORM}, got {value!r}")
    return [str(v) for v in value]


def _npy_header(file, name, ndim):
    """The shape and dtype of an ``.npy`` file, read from its header only (memory-mapped, as
    each run maps it)."""
    file = Path(file)
    if file.suffix.lower() != ".npy":
        raise ValueError(f"{name} {file}: must be a .npy file (each chunk is one .npy file); "
                         f"accepted: {CHUNK_FORM}")
    if file.is_dir():
        raise ValueError(f"{name} {file}: is a directory, not a file")
    check_input_file(file, f"{name} {file}")
    try:
        array = np.load(file, mmap_mode="r")
    except (OSError, ValueError, EOFError) as exc:
        raise ValueError(f"{name} {file}: cannot be memory-mapped as an .npy array: "
                         f"{exc}") from None
    shape, dtype = tuple(array.shape), array.dtype
    del array
    if len(shape) != ndim:
        what = "2-D (rows by columns)" if ndim == 2 else "1-D (one label per row)"
        raise ValueError(f"{name} {file}: must hold a {what} array, got shape {shape}")
    return shape, dtype


def chunk_files(rows, labels, names=("rows", "labels")):
    """The ``.npy`` files of rows held in chunks, one pair per chunk, checked from their headers
    before anything else is read.

    Parameters
    ----------
    rows, labels : str or list of str
        Each a list of ``.npy`` file names, in chunk order, or one glob pattern whose matches
        are sorted by name (``"data/x_*.npy"``: ``x_10`` sorts before ``x_2``, so number the
        chunks with leading zeros). Relative names are from the working directory.
    names : (str, str)
        How the two are named in messages (``("data.rows", "data.labels")`` in a sweep).

    Returns
    -------
    rows, labels : list of str
        The files, in chunk order.

    Raises
    ------
    TypeError
        If ``rows`` or ``labels`` is neither a non-empty list of names nor a pattern.
    ValueError
        If a pattern matches nothing, the two name different numbers of files, a file is
        missing, not ``.npy`` or cannot be memory-mapped, a rows file is not 2-D or has no
        rows, a labels file is not 1-D or has not its rows file's number of rows, or the rows
        files differ in their columns or dtype.
    """
    rows, labels = _chunk_names(rows, names[0]), _chunk_names(labels, names[1])
    if len(rows) != len(labels):
        raise ValueError(f"{names[0]} and {names[1]} must name as many files (one pair per "
                         f"chunk), got {len(rows)} and {len(labels)}")
    first = None
    for x_file, y_file in zip(rows, labels):
        (n, p), dtype = _npy_header(x_file, names[0], 2)
        (n_labels,), _ = _npy_header(y_file, names[1], 1)
        if n == 0:
            raise ValueError(f"{names[0]} {x_file}: holds no rows; drop empty chunks")
        if n_labels != n:
            raise ValueError(f"{names[1]} {y_file}: holds {n_labels} labels, but its rows file "
                             f"{names[0]} {x_file} holds {n} rows (each pair is one chunk)")
        if first is None:
            first = (x_file, p, dtype)
        elif (p, dtype) != first[1:]:
            raise ValueError(f"{names[0]} {x_file}: {p} columns of {dtype}, but {first[0]} has "
                             f"{first[1]} columns of {first[2]}: every chunk needs the same "
                             "columns and dtype")
    return rows, labels


class _FileError(ValueError):
    """A file that cannot be read, or does not hold what its format needs (the message names
    it; not wrapped again by an enclosing :func:`_reading`)."""


@contextlib.contextmanager
def _reading(name, file):
    """NumPy's and SciPy's errors while reading ``file`` as a ValueError naming it (``name``:
    ``--data``, ``data.labels``, ...)."""
    try:
        yield
    except _FileError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        # NumPy's message may quote a cell of the file: shown to the data holder, never stored
        raise _FileError(f"{name} {file}: cannot be read: {exc}") from None


def _read_csv(file, name):
    """A CSV file of numbers as a 2-D array; an empty file is refused (NumPy would warn)."""
    with _reading(name, file), warnings.catch_warnings():
        # NumPy warns "input contained no data" with the file's path: refused below instead
        warnings.simplefilter("ignore", UserWarning)
        table = np.loadtxt(file, delimiter=",", ndmin=2)
    if table.size == 0:
        raise _FileError(f"{name} {file}: the file holds no rows")
    return table


def _read_labels(file, name):
    file = Path(file)
    if file.suffix.lower() == ".csv":
        return _read_csv(file, name).reshape(-1)
    with _reading(name, file):
        return np.load(file)


def load_file(path, labels=None, names=("path", "labels")):
    """Rows from a ``.npy`` (with ``labels`` a second file), ``.npz`` or ``.csv`` file (the
    last column is the label, unless ``labels`` names a file).

    An ``.npz`` file holds arrays ``X`` and ``y``, or a sparse matrix as
    ``scipy.sparse.save_npz`` writes it (arrays ``format``, ``shape``, ``data``, ``indices``,
    ``indptr``) with the labels as an array ``y`` beside them or in ``labels``. A labels file
    is ``.npy`` or ``.csv`` (one label a line). A sparse X is returned sparse
    (docs/sparse.md).

    Parameters
    ----------
    path : str or Path
        The data file.
    labels : str or Path, optional
        The labels file.
    names : (str, str)
        How ``path`` and ``labels`` are named in messages (``("--data", "--labels")`` on the
        command line).

    Returns
    -------
    X : ndarray or scipy.sparse.csr_array
    y : ndarray

    Raises
    ------
    TypeError, ValueError
        Before anything is read, for the names (:func:`check_data_file`); then, naming the
        file, for a file that cannot be read as the format its suffix says, an empty file, or
        arrays that are missing.
    """
    check_data_file(path, labels, names)
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".npz":
        with _reading(names[0], path), np.load(path) as f:
            if "format" in f and "X" not in f:
                X = sparse.load_npz(path)
                if "y" in f:
                    return X, f["y"]
                if labels is None:
                    raise _FileError(f"{names[0]} {path}: a sparse .npz file needs its labels "
                                     f"as an array y in the file or in {names[1]}")
                return X, _read_labels(labels, names[1])
            if "X" not in f or "y" not in f:
                raise _FileError(f"{names[0]} {path}: an .npz file needs arrays named X and y "
                                 "(or a scipy.sparse matrix saved by save_npz, and y)")
            return f["X"], f["y"]
    if suffix == ".npy":
        with _reading(names[0], path):
            X = np.load(path)
        return X, _read_labels(labels, names[1])
    table = _read_csv(path, names[0])
    if labels is not None:
        return table, _read_labels(labels, names[1])
    if table.shape[1] < 2:
        raise _FileError(f"{names[0]} {path}: a .csv file without {names[1]} needs at least "
                         "two columns (the features, then the label)")
    return table[:, :-1], table[:, -1]
