"""Rows held in consecutive chunks, locally or on the workers of a Dask cluster.

A :class:`RowChunks` is X and its coded labels y cut into consecutive blocks of rows, in order.
Every pass over the data is a function of one chunk, run where the chunk lives; only its
result (a p-vector, a (p, p) matrix, or an n_c-vector of margins or norms) comes back, and the
driver adds the per-chunk results in chunk order (``out += part``, starting from zeros). X
itself never travels to the driver.

Two backends share one interface:

* local (:meth:`RowChunks.from_arrays`, or :meth:`RowChunks.from_npy` without a client): the
  chunks are arrays in this process and every per-chunk function runs here, one chunk after
  the other;
* Dask (:meth:`RowChunks.from_dask`, or :meth:`RowChunks.from_npy` with a client): each chunk
  is a future held by a worker of a ``distributed.Client``; the per-chunk functions run there
  and their results are gathered in chunk order.

Bit-identity: every per-chunk function is one of dpsolve's kernels or ordered products
(:mod:`dpsolve._ordered_linalg`), whose sums have an order fixed by the chunk's shape only, never
by a thread count or a machine. A reduction over Dask chunks is therefore bit-identical to the
same reduction over the same chunks held locally (and a single local chunk gives the bits of the
plain in-memory call). Chunks of different sizes sum in different blocks: the bits depend on
the chunking, which is part of the data's layout, as the order of the rows is.

``dask`` and ``distributed`` are an optional extra (``pip install "dpsolve[dask]"``), imported
only when a Dask backend is asked for.
"""
import collections.abc
import numbers
import os
import threading
import warnings

import numpy as np
from scipy import sparse

from ._ordered_linalg import matvec as _matvec
from ._ordered_linalg import rmatvec as _rmatvec
from ._ordered_linalg import weighted_gram as _weighted_gram
from ._row_ops import kernel_rows, row_norms
from ._validation import check_input_file
from .losses import DEFAULT_BINARY_CODINGS

#: The fixed blocks of the clipped-gradient kernels' sums: rows of their scratch array
#: (``_kernels/gd.pyx``).
_BLOCKS = 64


def require_distributed(what="Rows on a Dask cluster"):
    """The ``distributed`` module, or an ImportError saying that ``what`` needs it and how to
    install it (the extra is optional)."""
    try:
        import distributed
    except ImportError:      # pragma: no cover - the extra is not installed
        raise ImportError(f"{what}: needs dask.distributed (pip install "
                          "\"dpsolve[dask]\")") from None
    return distributed


# -- per-chunk functions (module level: they are pickled to the workers) ----------------------
# A chunk is the tuple (X_c, y_c, norms_c), norms_c None until the chunk is validated.

def _pack(X, y):
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


def _load_npy(x_path, y_path, c=0):
    """A chunk memory-mapped from its two ``.npy`` files, where this runs (chunk ``c``, named
    in the errors)."""
    return (_load_one_npy(x_path, f"x_paths[{c}]"), _load_one_npy(y_path, f"y_paths[{c}]"),
            None)


def _chunk_sequence(value, name, items):
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


def _check_x_chunk(X, name):
    """One chunk of rows given to :meth:`RowChunks.from_arrays`: a numpy array (a memmap
    included) or a scipy.sparse matrix of real numbers, else a TypeError naming ``name``.
    Nothing is converted: the chunks are kept as given, so a list of rows or a DataFrame
    (which would need a copy) is refused with the conversion to make."""
    if not (isinstance(X, np.ndarray) or sparse.issparse(X)):
        hint = ("; convert it with .to_numpy()" if hasattr(X, "to_numpy")
                else "; convert it with np.asarray" if isinstance(X, (list, tuple)) else "")
        raise TypeError(f"{name} must be a numpy array or a scipy.sparse matrix, got "
                        f"{type(X).__name__}{hint}")


def _check_real_dtype(dtype, what):
    """A TypeError naming ``what`` unless ``dtype`` holds real numbers: integers or floats
    (a Problem refuses booleans, complex numbers, strings and objects the same way)."""
    if np.dtype(dtype).kind not in "iuf":
        raise TypeError(f"{what} must hold real numbers (integers or floats), got dtype "
                        f"{np.dtype(dtype)}")


def _paths(value, name):
    """``value`` as a list of path strings, one per chunk, or a TypeError naming ``name``
    (and the entry) for a single path or an entry that is not a path."""
    paths = _chunk_sequence(value, name, "paths to .npy files")
    out = []
    for c, path in enumerate(paths):
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(f"{name}[{c}] must be a path (a str or os.PathLike), got "
                            f"{type(path).__name__}")
        out.append(os.fsdecode(path))
    return out


def _check_client(client, distributed):
    """``client``: None or a ``distributed.Client``, else a TypeError."""
    if client is not None and not isinstance(client, distributed.Client):
        raise TypeError(f"client must be a distributed.Client or None, got "
                        f"{type(client).__name__}")


def _chunk_info(chunk):
    """The public layout of a chunk: its shape, its dtype and y's length."""
    X, y, _ = chunk
    return (tuple(X.shape), np.dtype(X.dtype), tuple(np.shape(y)))


def _norms_of(chunk):
    X, _, norms = chunk
    return row_norms(X) if norms is None else norms


def _dense_ready(X):
    """X as the kernels take it: CSR as it is, a dense chunk C-contiguous in float32 or
    float64 (a copy only when it is not already; a validated chunk never needs one)."""
    if sparse.issparse(X):
        return X
    if X.dtype not in (np.float32, np.float64):
        return np.ascontiguousarray(X, dtype=np.float64)
    return np.ascontiguousarray(X)


def _clipped_sum(chunk, theta, kind, h, clip, rows=None):
    """The clipped gradient sum of one chunk (binary or squared losses) and its clipped
    count."""
    from ._kernels import gd
    X, y, _ = chunk
    X = _dense_ready(X)
    out = np.empty(theta.shape[0])
    clipped = gd.clipped_gradient_sum(
        kernel_rows(X), np.ascontiguousarray(y, dtype=np.float64), int(kind), float(h), theta,
        _norms_of(chunk), float(clip), out, np.empty((_BLOCKS, theta.shape[0])), rows)
    return out, int(clipped)


def _clipped_sum_multinomial(chunk, theta, clip, rows=None):
    """The multinomial clipped gradient sum of one chunk and its clipped count."""
    from ._kernels import gd
    X, y, _ = chunk
    X = _dense_ready(X)
    p, K = theta.shape
    out = np.empty((p, K))
    clipped = gd.clipped_gradient_sum_multinomial(
        kernel_rows(X), np.ascontiguousarray(y, dtype=np.intp), theta, _norms_of(chunk),
        float(clip), out, np.empty((_BLOCKS, p * K)), np.empty((_BLOCKS, 2 * K)), rows)
    return out, int(clipped)


def _poisson_rows(seed, n, rate):
    """The rows of a chunk of n rows that Poisson sampling at ``rate`` keeps, from ``seed``."""
    return np.flatnonzero(np.random.default_rng(seed).random(n) < rate).astype(np.intp)


def _chunk_clipped_sum(chunk, theta, kind, h, clip):
    return _clipped_sum(chunk, theta, kind, h, clip)


def _chunk_clipped_sum_multinomial(chunk, theta, clip):
    return _clipped_sum_multinomial(chunk, theta, clip)


def _chunk_sampled_sum(chunk, seed, theta, kind, h, clip, rate):
    # only the sum leaves the worker: not the seed, the sampled rows or their count
    rows = _poisson_rows(seed, chunk[0].shape[0], rate)
    return _clipped_sum(chunk, theta, kind, h, clip, rows)[0]


def _chunk_sampled_sum_multinomial(chunk, seed, theta, clip, rate):
    rows = _poisson_rows(seed, chunk[0].shape[0], rate)
    return _clipped_sum_multinomial(chunk, theta, clip, rows)[0]


def _chunk_matvec(chunk, v):
    return _matvec(_dense_ready(chunk[0]), v)


def _chunk_rmatvec(chunk, r):
    return _rmatvec(_dense_ready(chunk[0]), r)


def _chunk_weighted_gram(chunk, w):
    return _weighted_gram(_dense_ready(chunk[0]), w)


def _chunk_row_norms(chunk):
    return _norms_of(chunk)


def _chunk_labels(chunk):
    return np.asarray(chunk[1])


class _MapCall:
    """``fn(X_c, y_c, *args_c, **kwargs)`` as a picklable callable taking the chunk first."""

    def __init__(self, fn, kwargs):
        self.fn, self.kwargs = fn, dict(kwargs)

    def __call__(self, chunk, *args):
        X, y, _ = chunk
        return self.fn(X, y, *args, **self.kwargs)


_WARNINGS_LOCK = threading.Lock()


def _is_clip_warning(record):
    return issubclass(record.category, UserWarning) and "clipped" in str(record.message)


def _validate_chunk(chunk, problem_class, kwargs):
    """Build ``problem_class(X_c, y_c, **kwargs)`` (a :class:`~dpsolve.Problem`) on the
    worker: the validated chunk (kept there) and public facts for the driver (shape, dtype,
    the clipped-row count, the default binary codings the labels fit). Warnings are caught
    here: one per chunk would tell the driver each chunk's count."""
    X, y, _ = chunk
    # catch_warnings swaps process-wide state: workers sharing a process (threads) take turns
    with _WARNINGS_LOCK, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        problem = problem_class(X, y, **kwargs)
    clipped = 0
    others = []
    for record in caught:
        if _is_clip_warning(record):
            # the count Problem's warning gives: rows beyond the bound by more than rounding
            bound = problem.feature_row_norm
            clipped = int(np.count_nonzero(row_norms(X) > bound * (1.0 + 1e-12)))
        else:
            others.append((record.category, str(record.message)))
    fits = None
    loss = problem.loss_object
    if kwargs.get("classes") is None and loss.classification and not loss.is_multinomial:
        labels = np.unique(np.asarray(y))
        fits = tuple(bool(np.all(np.isin(labels, coding))) for coding in DEFAULT_BINARY_CODINGS)
    validated = (problem.X, problem.y, row_norms(problem.X))
    info = {"shape": tuple(problem.X.shape), "dtype": np.dtype(problem.X.dtype),
            "clipped": clipped, "codings": fits, "warnings": others}
    return validated, info


def _first(pair):
    return pair[0]


def _second(pair):
    return pair[1]


# -- the two backends --------------------------------------------------------------------------
class _Local:
    """Chunks as tuples in this process; per-chunk functions run here, in chunk order."""

    client = None

    def __init__(self, chunks):
        self.chunks = list(chunks)

    def run(self, fn, per_chunk_args, shared=()):
        return [fn(chunk, *[a[c] for a in per_chunk_args], *shared)
                for c, chunk in enumerate(self.chunks)]

    def derive(self, fn, *shared):
        """Per chunk, ``fn(chunk, *shared)`` -> (new chunk, public info)."""
        pairs = [fn(chunk, *shared) for chunk in self.chunks]
        return _Local(p[0] for p in pairs), [p[1] for p in pairs]


class _Dask:
    """Chunks as futures held by workers; per-chunk functions are submitted to run where the
    chunk is and their results gathered in chunk order."""

    def __init__(self, client, futures, homes=None):
        self.client = client
        self.chunks = list(futures)
        self._homes = homes

    def homes(self):
        """The worker holding each chunk. Every task on a chunk is pinned to it: left free,
        Dask's work stealing would run a task on an idle worker and copy the chunk's rows
        there (a memory-mapped chunk is sent as its bytes), until every worker held all of
        X."""
        if self._homes is None:
            require_distributed().wait(self.chunks)
            held = self.client.who_has(self.chunks)
            self._homes = [tuple(held[f.key])[:1] for f in self.chunks]
        return self._homes

    def _submit(self, c, fn, *args):
        return self.client.submit(fn, *args, pure=False, workers=self.homes()[c],
                                  allow_other_workers=False)

    def run(self, fn, per_chunk_args, shared=()):
        futures = [self._submit(c, fn, chunk, *[a[c] for a in per_chunk_args], *shared)
                   for c, chunk in enumerate(self.chunks)]
        return self.client.gather(futures)

    def derive(self, fn, *shared):
        pairs = [self._submit(c, fn, chunk, *shared) for c, chunk in enumerate(self.chunks)]
        new = [self._submit(c, _first, pair) for c, pair in enumerate(pairs)]
        infos = self.client.gather([self._submit(c, _second, pair)
                                    for c, pair in enumerate(pairs)])
        return _Dask(self.client, new, self.homes()), infos


def _sum_in_order(parts, shape):
    """``out += part`` from zeros, in chunk order: the one order of the driver's sums."""
    out = np.zeros(shape)
    for part in parts:
        out += part
    return out


def _check_seeds(seeds, n_chunks):
    seeds = list(seeds)
    if len(seeds) != n_chunks or not all(isinstance(s, np.random.SeedSequence) for s in seeds):
        raise TypeError(f"seeds must be {n_chunks} np.random.SeedSequence objects, one per "
                        f"chunk (e.g. SeedSequence(...).spawn({n_chunks})), got "
                        f"{len(seeds)} of types {sorted({type(s).__name__ for s in seeds})}")
    return seeds


def _check_rate(rate):
    # a bool or a string is not a rate (float() would take True and "0.5")
    if isinstance(rate, (bool, np.bool_)) or not isinstance(rate, numbers.Real):
        raise TypeError(f"sampling_rate must be a real number in (0, 1], got "
                        f"{type(rate).__name__}")
    rate = float(rate)
    if not 0.0 < rate <= 1.0:
        raise ValueError(f"sampling_rate must be in (0, 1], got {rate!r}")
    return rate


class RowChunks:
    """X and its (coded) labels y as consecutive chunks of rows, held locally or on Dask
    workers.

    Build one with :meth:`from_arrays`, :meth:`from_dask` or :meth:`from_npy`; validate it
    with :meth:`validate` (each chunk becomes a :class:`~dpsolve.Problem`'s X and y, on its
    worker). The reductions (:meth:`clipped_gradient_sum`, :meth:`matvec`, :meth:`rmatvec`,
    :meth:`weighted_gram`, ...) run one task per chunk where the chunk lives and add the
    results on the driver in chunk order.

    Parameters
    ----------
    backend : object
        Where the chunks live (internal: build a RowChunks with the constructors above).
    chunk_rows : sequence of int
        The rows of each chunk, in order.
    p : int
        The columns of X.
    dtype : numpy.dtype
        X's dtype.
    validated : bool, default False
        Whether the chunks are a Problem's validated X and y, with their row norms.

    Attributes
    ----------
    shape : tuple of int
        ``(n, p)`` of all the rows.
    dtype : numpy.dtype
        X's dtype (float32 or float64 once validated), the same for every chunk.
    chunk_rows : tuple of int
        The rows of each chunk, in order (public: the layout, not the data).
    n_chunks : int
        The number of chunks.
    validated : bool
        Whether the chunks are validated Problem data (with their row norms kept beside them).
    client : distributed.Client or None
        The client of the Dask backend; None for local chunks.

    Notes
    -----
    Every reduction is bit-identical between the two backends for the same chunks: the
    per-chunk work is a dpsolve kernel or ordered product (sums in an order fixed by the
    chunk's shape) and the driver adds the chunks in order. The driver never holds X: it
    receives p-vectors, (p, p) matrices and vectors of one value per row.
    """

    #: Marks rows in chunks for the modules below this one (:mod:`dpsolve._ordered_linalg`),
    #: which dispatch on it without importing this module.
    _row_chunks = True

    def __init__(self, backend, chunk_rows, p, dtype, validated=False):
        self._backend = backend
        self.chunk_rows = tuple(int(r) for r in chunk_rows)
        self.shape = (sum(self.chunk_rows), int(p))
        self.dtype = np.dtype(dtype)
        self.validated = bool(validated)

    @property
    def n_chunks(self):
        """The number of chunks."""
        return len(self.chunk_rows)

    @property
    def client(self):
        """The ``distributed.Client`` holding the chunks, or None for local chunks."""
        return self._backend.client

    def __repr__(self):
        where = "local" if self.client is None else "dask"
        return (f"RowChunks({where}, shape={self.shape}, dtype={self.dtype}, "
                f"n_chunks={self.n_chunks}, validated={self.validated})")

    # -- constructors ----------------------------------------------------------------------
    @classmethod
    def from_arrays(cls, X_chunks, y_chunks):
        """Local chunks: the arrays themselves, in order (not copied).

        Parameters
        ----------
        X_chunks : sequence of 2-D numpy arrays or scipy.sparse matrices
            The blocks of rows, in order (a list or tuple, at least one), all with the same
            number of columns (at least one) and the same real dtype, none empty. Kept as
            given: a list of rows or a DataFrame is refused (pass ``np.asarray(chunk)`` or
            ``chunk.to_numpy()``), and so is a single array (pass ``[X]`` for one chunk).
        y_chunks : sequence of 1-D array_like
            The labels of each block, as many as ``X_chunks``, each with its block's rows
            (coded as the kernels read them once validated).

        Returns
        -------
        RowChunks
            Chunks held in this process; every per-chunk function runs here.

        Raises
        ------
        TypeError
            If ``X_chunks`` or ``y_chunks`` is not a sequence of chunks, or a chunk of X is not
            a numpy array or a scipy.sparse matrix of real numbers (integers or floats).
        ValueError
            If the two sequences differ in length, are empty, or a chunk's shape does not fit
            (X not 2-D, no rows or no columns, columns differing between chunks, y not 1-D
            with its chunk's rows), or the chunks' dtypes differ.
        """
        X_chunks = _chunk_sequence(X_chunks, "X_chunks", "2-D arrays")
        y_chunks = _chunk_sequence(y_chunks, "y_chunks", "1-D arrays of labels")
        for c, X in enumerate(X_chunks):
            _check_x_chunk(X, f"X_chunks[{c}]")
        if len(X_chunks) != len(y_chunks):
            raise ValueError(f"X_chunks and y_chunks must have as many chunks, got "
                             f"{len(X_chunks)} and {len(y_chunks)}")
        infos = [_chunk_info((X, y, None)) for X, y in zip(X_chunks, y_chunks)]
        rows, p, dtype = cls._check_layout(infos, ("X_chunks", "y_chunks"))
        return cls(_Local(zip(X_chunks, y_chunks, [None] * len(X_chunks))), rows, p, dtype)

    @classmethod
    def from_dask(cls, X, y, client=None):
        """Chunks of a Dask array, persisted on the workers (X is never computed here).

        Parameters
        ----------
        X : dask.array.Array, shape (n, p)
            Chunked by rows only (one chunk across the columns), with known chunk sizes.
        y : dask.array.Array or ndarray, shape (n,)
            A Dask array with X's row chunks, or a numpy array, split here by X's row chunks
            and sent to the workers.
        client : distributed.Client, optional
            Default ``distributed.get_client()``.

        Returns
        -------
        RowChunks
            One future per chunk of rows, held on the workers.

        Raises
        ------
        TypeError
            If ``client`` is not a ``distributed.Client`` (or None), X is not a 2-D Dask
            array, or X's dtype is not a real one (integers or floats).
        ValueError
            If X splits its columns (``X.rechunk({1: -1})`` fixes it), has unknown chunk
            sizes, or y's chunks do not match X's rows.
        """
        distributed = require_distributed()
        _check_client(client, distributed)
        if getattr(X, "ndim", None) != 2 or not hasattr(X, "to_delayed"):
            raise TypeError(f"X must be a 2-D dask array, got {type(X).__name__} of shape "
                            f"{getattr(X, 'shape', None)}")
        _check_real_dtype(X.dtype, "X")
        row_chunks, col_chunks = X.chunks
        if any(np.isnan(c) for c in row_chunks + col_chunks):
            raise ValueError("X has unknown chunk sizes; call X.compute_chunk_sizes() first")
        if len(col_chunks) != 1:
            raise ValueError(f"X must be chunked by rows only, got {len(col_chunks)} chunks "
                             f"across its {X.shape[1]} columns {col_chunks}; pass "
                             "X.rechunk({1: -1})")
        client = distributed.get_client() if client is None else client
        x_blocks = list(X.to_delayed().ravel())
        if hasattr(y, "to_delayed"):
            if getattr(y, "ndim", None) != 1 or tuple(y.chunks[0]) != tuple(row_chunks):
                raise ValueError(f"y must be 1-D with X's row chunks {tuple(row_chunks)}, got "
                                 f"chunks {y.chunks}; pass y.rechunk({{0: X.chunks[0]}})")
            y_parts = client.compute(list(y.to_delayed().ravel()))
        else:
            y = np.asarray(y)
            if y.ndim != 1 or y.shape[0] != X.shape[0]:
                raise ValueError(f"y must have shape ({X.shape[0]},) to match X, got {y.shape}")
            bounds = np.cumsum((0,) + tuple(row_chunks))
            y_parts = client.scatter([y[a:b] for a, b in zip(bounds[:-1], bounds[1:])])
        x_parts = client.compute(x_blocks)
        chunks = [client.submit(_pack, xf, yf, pure=False) for xf, yf in zip(x_parts, y_parts)]
        backend = _Dask(client, chunks)
        rows, p, dtype = cls._check_layout(backend.run(_chunk_info, ()), ("X", "y"))
        return cls(backend, rows, p, dtype)

    @classmethod
    def from_npy(cls, x_paths, y_paths, client=None):
        """Chunks from ``.npy`` files, one pair per chunk, each memory-mapped
        (``np.load(path, mmap_mode="r")``) where it is used.

        Parameters
        ----------
        x_paths, y_paths : sequence of str or path-like
            The files of each chunk's X (2-D, real numbers) and y (1-D), in order: a list or
            tuple with one path per chunk, as many in each. A single path (a string or a
            ``pathlib.Path``) is refused rather than read as one chunk: a string is a
            sequence of characters, and a sweep that meant several files should not run on
            one; pass ``[path]`` for one chunk. Each file must be an ``.npy`` file written by
            ``np.save`` (not an ``.npz`` archive, not pickled objects). With a client, every
            worker must see the paths (they are checked where they are read).
        client : distributed.Client, optional
            The cluster that loads and holds the chunks (one worker each); None: the files are
            mapped in this process (local backend).

        Returns
        -------
        RowChunks

        Raises
        ------
        TypeError
            If ``x_paths`` or ``y_paths`` is not a sequence of paths, or ``client`` is not a
            ``distributed.Client`` (or None).
        ValueError
            If the two sequences differ in length or are empty, a file is missing, is a
            directory, an ``.npz`` archive or not an array NumPy can map, or the chunks'
            shapes or dtypes do not fit (as :meth:`from_arrays`).
        """
        x_paths = _paths(x_paths, "x_paths")
        y_paths = _paths(y_paths, "y_paths")
        if len(x_paths) != len(y_paths):
            raise ValueError(f"x_paths and y_paths must name as many chunks, got "
                             f"{len(x_paths)} and {len(y_paths)}")
        if not x_paths:
            raise ValueError("x_paths and y_paths must name at least one chunk, got none")
        if client is None:
            backend = _Local([_load_npy(a, b, c)
                              for c, (a, b) in enumerate(zip(x_paths, y_paths))])
        else:
            _check_client(client, require_distributed())
            # the chunks dealt to the workers in turn: each maps only its own files
            workers = sorted(client.scheduler_info()["workers"])
            backend = _Dask(client, [client.submit(_load_npy, a, b, c, pure=False,
                                                   workers=[workers[c % len(workers)]],
                                                   allow_other_workers=False)
                                     for c, (a, b) in enumerate(zip(x_paths, y_paths))])
        rows, p, dtype = cls._check_layout(backend.run(_chunk_info, ()),
                                           ("x_paths", "y_paths"))
        return cls(backend, rows, p, dtype)

    @staticmethod
    def _check_layout(infos, names=None):
        """Rows per chunk, p and dtype from the chunks' public layouts, refusing a mismatch;
        ``names``, the parameters that gave X's and y's chunks, prefix the messages."""
        x_name, y_name = names if names is not None else (None, None)

        def where(name, c):
            return "" if name is None else f"{name}[{c}]: "

        if not infos:
            raise ValueError(f"{x_name or 'X'}: at least one chunk of rows is needed, got "
                             "none")
        for c, (shape, dtype, y_shape) in enumerate(infos):
            if len(shape) != 2:
                raise ValueError(f"{where(x_name, c)}chunk {c} of X must be 2-D, got shape "
                                 f"{shape}")
            if shape[0] == 0:
                raise ValueError(f"{where(x_name, c)}chunk {c} of X has no rows; drop empty "
                                 "chunks (for a dask array, rechunk its rows)")
            if shape[1] == 0:
                raise ValueError(f"{where(x_name, c)}chunk {c} of X has no columns")
            _check_real_dtype(dtype, f"{where(x_name, c)}chunk {c} of X")
            if y_shape != (shape[0],):
                raise ValueError(f"{where(y_name, c)}chunk {c} of y must have shape "
                                 f"({shape[0]},) to match X's chunk, got {y_shape}")
        ps = {shape[1] for shape, _, _ in infos}
        dtypes = {dtype for _, dtype, _ in infos}
        if len(ps) != 1:
            raise ValueError(f"every chunk of X must have the same columns, got {sorted(ps)}")
        if len(dtypes) != 1:
            raise ValueError(f"every chunk of X must have the same dtype, got "
                             f"{sorted(str(d) for d in dtypes)}")
        return [shape[0] for shape, _, _ in infos], ps.pop(), dtypes.pop()

    # -- per-chunk functions ---------------------------------------------------------------
    def map(self, fn, *per_chunk_args, **kwargs):
        """``fn(X_c, y_c, *args_c, **kwargs)`` for every chunk c, where the chunk lives.

        Parameters
        ----------
        fn : callable
            Picklable (defined at module level) for a Dask backend.
        *per_chunk_args : sequences
            One sequence per extra positional argument, each with one entry per chunk.
        **kwargs
            The same for every chunk.

        Returns
        -------
        list
            The results, in chunk order (gathered to the driver on Dask: return no X).
        """
        return self._backend.run(_MapCall(fn, kwargs), self._per_chunk(per_chunk_args))

    def _per_chunk(self, per_chunk_args):
        out = []
        for k, args in enumerate(per_chunk_args):
            args = list(args)
            if len(args) != self.n_chunks:
                raise ValueError(f"per-chunk argument {k} must have one entry per chunk "
                                 f"({self.n_chunks}), got {len(args)}")
            out.append(args)
        return out

    def _split(self, values, name):
        """An n-vector (or (n, K) array) cut into the chunks' rows."""
        values = np.asarray(values, dtype=np.float64)
        if values.ndim not in (1, 2) or values.shape[0] != self.shape[0]:
            raise ValueError(f"{name} must have {self.shape[0]} rows (one per row of X), got "
                             f"shape {values.shape}")
        bounds = np.cumsum((0,) + self.chunk_rows)
        return [np.ascontiguousarray(values[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]

    # -- validation ------------------------------------------------------------------------
    def validate(self, problem_class, *, warn=True, **problem_kwargs):
        """Each chunk validated on its worker as ``problem_class(X_c, y_c, **problem_kwargs)``.

        The validated chunk (``problem.X``, ``problem.y``) and its row norms stay where the
        chunk is; the driver receives only shapes, the dtype and the number of rows clipped.

        Parameters
        ----------
        problem_class : type
            :class:`dpsolve.Problem` (or a subclass): the class built on each chunk. It is
            passed in because this module sits below :mod:`dpsolve.problem`, which builds a
            RowChunks for a Problem given a Dask array.
        warn : bool, default True
            Show the total clipped count in one warning, worded as Problem's (the per-chunk
            warnings are caught on the workers).
        **problem_kwargs
            Problem's public parameters (loss, radius, reg, row_norm, classes, clip_rows,
            fit_intercept, ...), the same for every chunk.

        Returns
        -------
        chunks : RowChunks
            The validated chunks (``validated`` True).
        n_clipped : int
            Rows whose norm exceeded ``row_norm`` beyond rounding and were clipped (not
            stored anywhere).

        Raises
        ------
        ValueError, TypeError
            What Problem raises on a chunk; and, for a binary loss without ``classes=``, labels
            that are -1/+1 in one chunk and 0/1 in another.

        Notes
        -----
        The chunks of ``self`` are left as they were: drop this RowChunks to free them on the
        workers. Warnings other than the clipping one are shown once each on the driver.
        """
        new, infos = self._backend.derive(_validate_chunk, problem_class, dict(problem_kwargs))
        codings = [i["codings"] for i in infos if i["codings"] is not None]
        if codings:
            # each chunk's labels fit one coding; all of them together must fit the same one
            if not np.any(np.logical_and.reduce(codings)):
                loss = problem_kwargs.get("loss", "logistic")
                raise ValueError(
                    f"loss={getattr(loss, 'name', loss)!r} without classes= needs labels in "
                    "{-1, +1} or in {0, 1} across all chunks, got a mix: pass "
                    "classes=(negative, positive), the public label set")
        rows, p, dtype = self._check_layout([(i["shape"], i["dtype"], (i["shape"][0],))
                                             for i in infos])
        if rows != list(self.chunk_rows):     # pragma: no cover - Problem keeps every row
            raise RuntimeError("validation changed the chunks' rows")
        n_clipped = sum(i["clipped"] for i in infos)
        seen = set()
        for i in infos:
            for category, message in i["warnings"]:
                if (category, message) not in seen:
                    seen.add((category, message))
                    warnings.warn(message, category, stacklevel=2)
        if warn and n_clipped:
            bound = problem_kwargs.get("row_norm", 1.0)
            warnings.warn(f"{n_clipped} of {self.shape[0]} rows had norm above "
                          f"row_norm={bound:g} and were clipped to it", UserWarning,
                          stacklevel=2)
        return RowChunks(new, rows, p, dtype, validated=True), n_clipped

    # -- reductions, summed on the driver in chunk order -----------------------------------
    def _theta(self, theta, ndim):
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        if theta.ndim != ndim or theta.shape[0] != self.shape[1]:
            want = f"({self.shape[1]},)" if ndim == 1 else f"({self.shape[1]}, K)"
            raise ValueError(f"theta must have shape {want}, got {theta.shape}")
        return theta

    def clipped_gradient_sum(self, theta, loss_kernel_id, loss_kernel_param, clip):
        """``sum_i CLIP_clip(loss'(<theta, x_i>, y_i) x_i)`` over all rows, for a loss with one
        margin (``gd.clipped_gradient_sum`` on each chunk, where it lives).

        Parameters
        ----------
        theta : ndarray, shape (p,)
            The parameter, sent to every chunk.
        loss_kernel_id, loss_kernel_param : int, float
            ``Loss.kernel_id`` and ``Loss.kernel_param`` of the problem's loss.
        clip : float
            The clipping norm C of each row's gradient (``inf``: none).

        Returns
        -------
        total : ndarray, shape (p,)
            The chunks' sums added in chunk order.
        clipped : int
            The number of clipped rows.
        """
        theta = self._theta(theta, 1)
        parts = self._backend.run(_chunk_clipped_sum, (),
                                  (theta, int(loss_kernel_id), float(loss_kernel_param),
                                   float(clip)))
        return _sum_in_order([g for g, _ in parts], theta.shape), sum(c for _, c in parts)

    def clipped_gradient_sum_multinomial(self, theta, clip):
        """The multinomial loss's clipped gradient sum
        (``gd.clipped_gradient_sum_multinomial`` on each chunk; y holds labels in [0, K)).

        Parameters
        ----------
        theta : ndarray, shape (p, K)
            The parameter, sent to every chunk.
        clip : float
            The clipping norm C of each row's gradient (Frobenius; ``inf``: none).

        Returns
        -------
        total : ndarray, shape (p, K)
            The chunks' sums added in chunk order.
        clipped : int
            The number of clipped rows.
        """
        theta = self._theta(theta, 2)
        parts = self._backend.run(_chunk_clipped_sum_multinomial, (), (theta, float(clip)))
        return _sum_in_order([g for g, _ in parts], theta.shape), sum(c for _, c in parts)

    def sampled_clipped_gradient_sum(self, theta, loss_kernel_id, loss_kernel_param, clip,
                                     sampling_rate, seeds):
        """The clipped gradient sum over a Poisson sample of the rows, drawn chunk by chunk
        on the workers.

        Chunk c keeps its rows where ``np.random.default_rng(seeds[c]).random(n_c) <
        sampling_rate`` and sums their clipped gradients; only that sum returns to the driver
        (not the sample, its size or the seed), and the sums are added in chunk order.

        Parameters
        ----------
        theta : ndarray, shape (p,)
            The parameter, sent to every chunk.
        loss_kernel_id, loss_kernel_param : int, float
            ``Loss.kernel_id`` and ``Loss.kernel_param`` of the problem's loss.
        clip : float
            The clipping norm C of each row's gradient (``inf``: none).
        sampling_rate : float
            The probability q in (0, 1] that a row is in the sample.
        seeds : sequence of numpy.random.SeedSequence
            One per chunk, fresh for every step (spawned by the caller); never stored here.

        Returns
        -------
        ndarray, shape (p,)
            The sampled rows' clipped gradients, summed per chunk and added in chunk order.
        """
        theta = self._theta(theta, 1)
        seeds = _check_seeds(seeds, self.n_chunks)
        parts = self._backend.run(_chunk_sampled_sum, [seeds],
                                  (theta, int(loss_kernel_id), float(loss_kernel_param),
                                   float(clip), _check_rate(sampling_rate)))
        return _sum_in_order(parts, theta.shape)

    def sampled_clipped_gradient_sum_multinomial(self, theta, clip, sampling_rate, seeds):
        """:meth:`sampled_clipped_gradient_sum` for the multinomial loss.

        Parameters
        ----------
        theta : ndarray, shape (p, K)
            The parameter, sent to every chunk.
        clip : float
            The clipping norm C of each row's gradient (Frobenius; ``inf``: none).
        sampling_rate : float
            The probability q in (0, 1] that a row is in the sample.
        seeds : sequence of numpy.random.SeedSequence
            One per chunk, fresh for every step; never stored here.

        Returns
        -------
        ndarray, shape (p, K)
            The sampled rows' clipped gradients, summed per chunk and added in chunk order.
        """
        theta = self._theta(theta, 2)
        seeds = _check_seeds(seeds, self.n_chunks)
        parts = self._backend.run(_chunk_sampled_sum_multinomial, [seeds],
                                  (theta, float(clip), _check_rate(sampling_rate)))
        return _sum_in_order(parts, theta.shape)

    def matvec(self, v):
        """``X @ v``: each chunk's rows by :func:`dpsolve._ordered_linalg.matvec` where it
        lives, concatenated in chunk order on the driver.

        Parameters
        ----------
        v : ndarray, shape (p,) or (p, K)
            Sent to every chunk.

        Returns
        -------
        ndarray, shape (n,) or (n, K)
            One value (or K) per row: the O(n) result the driver may hold.
        """
        v = np.ascontiguousarray(v, dtype=np.float64)
        if v.ndim not in (1, 2) or v.shape[0] != self.shape[1]:
            raise ValueError(f"v must have shape ({self.shape[1]},) or ({self.shape[1]}, K), "
                             f"got {v.shape}")
        return np.concatenate(self._backend.run(_chunk_matvec, (), (v,)))

    def rmatvec(self, r):
        """``X.T @ r``: r cut by the chunks' rows, each chunk's
        :func:`dpsolve._ordered_linalg.rmatvec` where it lives, added in chunk order.

        Parameters
        ----------
        r : ndarray, shape (n,) or (n, K)
            One value (or K) per row; each chunk receives its own rows' part.

        Returns
        -------
        ndarray, shape (p,) or (p, K)
        """
        parts = self._split(r, "r")
        shape = (self.shape[1],) + parts[0].shape[1:]
        return _sum_in_order(self._backend.run(_chunk_rmatvec, [parts]), shape)

    def weighted_gram(self, w):
        """``X^T diag(w) X``: each chunk's :func:`dpsolve._ordered_linalg.weighted_gram`
        where it lives, added in chunk order.

        Parameters
        ----------
        w : ndarray, shape (n,)
            One weight per row; each chunk receives its own rows' part.

        Returns
        -------
        ndarray, shape (p, p)
        """
        parts = self._split(w, "w")
        if parts[0].ndim != 1:
            raise ValueError(f"w must have shape ({self.shape[0]},), got {np.shape(w)}")
        p = self.shape[1]
        return _sum_in_order(self._backend.run(_chunk_weighted_gram, [parts]), (p, p))

    def row_norms(self):
        """``||x_i||`` of every row (:func:`dpsolve._row_ops.row_norms`, kept on the workers
        once validated, else computed there), concatenated in chunk order.

        Returns
        -------
        ndarray, shape (n,)
        """
        return np.concatenate(self._backend.run(_chunk_row_norms, ()))

    def labels(self):
        """y of every row (the coded labels once validated), concatenated in chunk order: one
        value per row, which the driver may hold.

        Returns
        -------
        ndarray, shape (n,)
        """
        return np.concatenate(self._backend.run(_chunk_labels, ()))

