"""What the constructors of :class:`dpsolve.rows.RowChunks` take: checks of the chunks' sequences,
paths, clients and dtypes, and the loading of ``.npy`` chunks where they are used.

A chunk is the tuple ``(X_c, y_c, norms_c)``, ``norms_c`` None until the chunk is validated.
"""
import collections.abc
import numbers
import os

import numpy as np
from scipy import sparse

from .._validation import check_input_file


def pack(X, y):
    """A chunk from its two arrays, on the worker holding X."""
    return (X, y, None)


def _load_one_npy(path, name):
    """The array of one ``.npy`` file, memory-mapped, or a ValueError naming ``name`` (the
    parameter and the chunk, e.g. ``x_paths[2]``) when the file is missing, a directory, an
    ``.npz`` archive or not an array NumPy can map. Checked where the file is read (with a
    client, on the worker: the driver may not see the workers' files)."""
    # a missing file, a directory or a named pipe (whose open would block) refused unopened
    check_input_file(path, f"{name} {path!r}")
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        # pickled or object arrays, a truncated or foreign file: NumPy's reason is kept
        raise ValueError(f"{name} {path!r} is not an .npy file of numbers NumPy can map: "
                         f"{exc}") from None
    if not isinstance(array, np.ndarray):
        # np.load gives an NpzFile for an .npz archive (several named arrays)
        close = getattr(array, "close", None)
        if close is not None:
            close()
        raise ValueError(f"{name} {path!r} is an .npz archive, not an .npy file: save each "
                         "chunk's X and y with np.save, one array per file")
    return array


def load_npy(x_path, y_path, c=0):
    """A chunk memory-mapped from its two ``.npy`` files, where this runs (chunk ``c``, named
    in the errors)."""
    return (_load_one_npy(x_path, f"x_paths[{c}]"), _load_one_npy(y_path, f"y_paths[{c}]"),
            None)


def chunk_sequence(value, name, items):
    """``value`` as a list of one entry per chunk, or a TypeError naming ``name``: a string,
    a path, an array (a numpy, sparse, Dask or pandas object) or a mapping is one thing, not a
    sequence of chunks, and iterating it would cut it into characters or rows."""
    single = None
    if isinstance(value, (str, bytes, os.PathLike)):
        single = f"the single path {os.fspath(value)!r}"
    elif hasattr(value, "shape") or sparse.issparse(value):
        single = f"a single {type(value).__name__} of shape {getattr(value, 'shape', None)}"
    elif isinstance(value, collections.abc.Mapping):
        single = f"a {type(value).__name__} (a mapping)"
    if single is not None:
        raise TypeError(f"{name} must be a sequence (a list or tuple) of {items}, one per "
                        f"chunk, got {single}; pass [{name[:-1]}] for one chunk")
    try:
        return list(value)
    except TypeError:
        raise TypeError(f"{name} must be a sequence (a list or tuple) of {items}, one per "
                        f"chunk, got {type(value).__name__}") from None


def check_x_chunk(X, name):
    """One chunk of rows given to :meth:`RowChunks.from_arrays`: a numpy array (a memmap
    included) or a scipy.sparse matrix of real numbers, else a TypeError naming ``name``.
    Nothing is converted: the chunks are kept as given, so a list of rows or a DataFrame
    (which would need a copy) is refused with the conversion to make."""
    if not (isinstance(X, np.ndarray) or sparse.issparse(X)):
        hint = ("; convert it with .to_numpy()" if hasattr(X, "to_numpy")
                else "; convert it with np.asarray" if isinstance(X, (list, tuple)) else "")
        raise TypeError(f"{name} must be a numpy array or a scipy.sparse matrix, got "
                        f"{type(X).__name__}{hint}")


def check_real_dtype(dtype, what):
    """A TypeError naming ``what`` unless ``dtype`` holds real numbers: integers or floats
    (a Problem refuses booleans, complex numbers, strings and objects the same way)."""
    if np.dtype(dtype).kind not in "iuf":
        raise TypeError(f"{what} must hold real numbers (integers or floats), got dtype "
                        f"{np.dtype(dtype)}")


def paths(value, name):
    """``value`` as a list of path strings, one per chunk, or a TypeError naming ``name``
    (and the entry) for a single path or an entry that is not a path."""
    paths = chunk_sequence(value, name, "paths to .npy files")
    out = []
    for c, path in enumerate(paths):
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(f"{name}[{c}] must be a path (a str or os.PathLike), got "
                            f"{type(path).__name__}")
        out.append(os.fsdecode(path))
    return out


def check_client(client, distributed):
    """``client``: None or a ``distributed.Client``, else a TypeError."""
    if client is not None and not isinstance(client, distributed.Client):
        raise TypeError(f"client must be a distributed.Client or None, got "
                        f"{type(client).__name__}")


def chunk_info(chunk):
    """The public layout of a chunk: its shape, its dtype and y's length."""
    X, y, _ = chunk
    return (tuple(X.shape), np.dtype(X.dtype), tuple(np.shape(y)))


def check_seeds(seeds, n_chunks):
    seeds = list(seeds)
    if len(seeds) != n_chunks or not all(isinstance(s, np.random.SeedSequence) for s in seeds):
        raise TypeError(f"seeds must be {n_chunks} np.random.SeedSequence objects, one per "
                        f"chunk (e.g. SeedSequence(...).spawn({n_chunks})), got "
                        f"{len(seeds)} of types {sorted({type(s).__name__ for s in seeds})}")
    return seeds


def check_rate(rate):
    # a bool or a string is not a rate (float() would take True and "0.5")
    if isinstance(rate, (bool, np.bool_)) or not isinstance(rate, numbers.Real):
        raise TypeError(f"sampling_rate must be a real number in (0, 1], got "
                        f"{type(rate).__name__}")
    rate = float(rate)
    if not 0.0 < rate <= 1.0:
        raise ValueError(f"sampling_rate must be in (0, 1], got {rate!r}")
    return rate
