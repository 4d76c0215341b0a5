"""Rows held in consecutive chunks, locally or on the workers of a Dask cluster.

A :class:`RowChunks` is X and its coded labels y cut into consecutive blocks of rows, in order:
the backend of :class:`dpsolve.rows.Rows` for rows that are not one array in this process.
Every pass over the data is a function of one chunk (:mod:`dpsolve.rows._tasks`), run where the
chunk lives; only its result (a p-vector, a (p, p) matrix, or an n_c-vector of margins or
norms) comes back, and the driver adds the per-chunk results in chunk order (``out += part``,
starting from zeros). X itself never travels to the driver.

Two executors share one interface (:mod:`dpsolve.rows._executors`):

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
"""
import numpy as np

from ._executors import Dask, Local, require_distributed, sum_in_order
from ._inputs import (check_client, check_rate, check_real_dtype, check_seeds, check_x_chunk,
                      chunk_info, chunk_sequence, load_npy, pack, paths)
from ._interface import Rows
from ._tasks import (MapCall, clipped_sum_task, derive_task, fixed_order_gram_task,
                     labels_task, matvec_task, rmatvec_task, row_norms_task, sampled_sum_task,
                     weighted_gram_task)


class RowChunks(Rows):
    """X and its (coded) labels y as consecutive chunks of rows, held locally or on Dask
    workers.

    Build one with :meth:`from_arrays`, :meth:`from_dask` or :meth:`from_npy`; validate it
    by passing it to :class:`~dpsolve.Problem` (each chunk becomes a Problem's X and y, on its
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
    def part_rows(self):
        """The rows of each chunk, in order (:attr:`chunk_rows`): the parts whose sums are
        added in order."""
        return self.chunk_rows

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
        X_chunks = chunk_sequence(X_chunks, "X_chunks", "2-D arrays")
        y_chunks = chunk_sequence(y_chunks, "y_chunks", "1-D arrays of labels")
        for c, X in enumerate(X_chunks):
            check_x_chunk(X, f"X_chunks[{c}]")
        if len(X_chunks) != len(y_chunks):
            raise ValueError(f"X_chunks and y_chunks must have as many chunks, got "
                             f"{len(X_chunks)} and {len(y_chunks)}")
        infos = [chunk_info((X, y, None)) for X, y in zip(X_chunks, y_chunks)]
        rows, p, dtype = cls._check_layout(infos, ("X_chunks", "y_chunks"))
        return cls(Local(zip(X_chunks, y_chunks, [None] * len(X_chunks))), rows, p, dtype)

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
        check_client(client, distributed)
        if getattr(X, "ndim", None) != 2 or not hasattr(X, "to_delayed"):
            raise TypeError(f"X must be a 2-D dask array, got {type(X).__name__} of shape "
                            f"{getattr(X, 'shape', None)}")
        check_real_dtype(X.dtype, "X")
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
        chunks = [client.submit(pack, xf, yf, pure=False) for xf, yf in zip(x_parts, y_parts)]
        backend = Dask(client, chunks)
        rows, p, dtype = cls._check_layout(backend.run(chunk_info, ()), ("X", "y"))
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
        x_paths = paths(x_paths, "x_paths")
        y_paths = paths(y_paths, "y_paths")
        if len(x_paths) != len(y_paths):
            raise ValueError(f"x_paths and y_paths must name as many chunks, got "
                             f"{len(x_paths)} and {len(y_paths)}")
        if not x_paths:
            raise ValueError("x_paths and y_paths must name at least one chunk, got none")
        if client is None:
            backend = Local([load_npy(a, b, c)
                              for c, (a, b) in enumerate(zip(x_paths, y_paths))])
        else:
            check_client(client, require_distributed())
            # the chunks dealt to the workers in turn: each maps only its own files
            workers = sorted(client.scheduler_info()["workers"])
            backend = Dask(client, [client.submit(load_npy, a, b, c, pure=False,
                                                   workers=[workers[c % len(workers)]],
                                                   allow_other_workers=False)
                                     for c, (a, b) in enumerate(zip(x_paths, y_paths))])
        rows, p, dtype = cls._check_layout(backend.run(chunk_info, ()),
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
            check_real_dtype(dtype, f"{where(x_name, c)}chunk {c} of X")
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
        return self._backend.run(MapCall(fn, kwargs), self._per_chunk(per_chunk_args))

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

    # -- derived chunks --------------------------------------------------------------------
    def derive(self, fn, *shared):
        """New chunks made where each chunk lives, as ``fn(X_c, y_c, *shared)`` makes them.

        How a :class:`~dpsolve.Problem` validates rows in chunks: ``fn`` builds the chunk's
        Problem on its worker. The new chunk's row norms are computed and kept beside it; the
        driver receives only what ``fn`` reports and the new chunks' layout.

        Parameters
        ----------
        fn : callable
            ``fn(X_c, y_c, *shared)`` -> ``((X, y), info)``: the new chunk's rows and labels
            (the same rows, in order) and public facts for the driver. Picklable (module
            level) for a Dask backend.
        *shared
            The same for every chunk.

        Returns
        -------
        chunks : RowChunks
            The new chunks (``validated`` True). The chunks of ``self`` are left as they were.
        infos : list
            Each chunk's ``info``, in chunk order.
        """
        new, pairs = self._backend.derive(derive_task, fn, shared)
        rows, p, dtype = self._check_layout([layout for _, layout in pairs])
        if rows != list(self.chunk_rows):
            raise ValueError("fn must keep every row of its chunk, in order")
        return RowChunks(new, rows, p, dtype, validated=True), [info for info, _ in pairs]

    # -- reductions, summed on the driver in chunk order -----------------------------------
    def _theta(self, theta):
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        if theta.ndim not in (1, 2) or theta.shape[0] != self.shape[1]:
            raise ValueError(f"theta must have shape ({self.shape[1]},) or ({self.shape[1]}, "
                             f"K), got {theta.shape}")
        return theta

    def clipped_gradient_sum(self, theta, loss, clip, rows=None):
        """``sum_i CLIP_clip(grad loss(theta; x_i, y_i))`` over all rows: the loss's clipped
        gradient kernel on each chunk, where it lives, the sums added in chunk order.

        Parameters
        ----------
        theta : ndarray, shape (p,) or (p, K)
            The parameter ((p, K) for the multinomial loss, whose chunks' y hold labels in
            [0, K)), sent to every chunk.
        loss : Loss
            The problem's loss object (``Problem.loss_object``).
        clip : float
            The clipping norm C of each row's gradient (Frobenius for a matrix; ``inf``:
            none).
        rows : None
            Rows in chunks take no row indices (a sample is drawn on the workers:
            :meth:`sampled_clipped_gradient_sum`).

        Returns
        -------
        total : ndarray, shape of theta
            The chunks' sums added in chunk order.
        clipped : int
            The number of clipped rows.
        """
        if rows is not None:
            raise TypeError("rows in chunks take no row indices: sample on the workers with "
                            "sampled_clipped_gradient_sum or poisson_sampler")
        theta = self._theta(theta)
        parts = self._backend.run(clipped_sum_task, (), (theta, loss, float(clip)))
        return sum_in_order([g for g, _ in parts], theta.shape), sum(c for _, c in parts)

    def sampled_clipped_gradient_sum(self, theta, loss, clip, sampling_rate, seeds):
        """The clipped gradient sum over a Poisson sample of the rows, drawn chunk by chunk
        on the workers.

        Chunk c keeps its rows where ``np.random.default_rng(seeds[c]).random(n_c) <
        sampling_rate`` and sums their clipped gradients; only that sum returns to the driver
        (not the sample, its size or the seed), and the sums are added in chunk order.

        Parameters
        ----------
        theta : ndarray, shape (p,) or (p, K)
            The parameter, sent to every chunk.
        loss : Loss
            The problem's loss object (``Problem.loss_object``).
        clip : float
            The clipping norm C of each row's gradient (``inf``: none).
        sampling_rate : float
            The probability q in (0, 1] that a row is in the sample.
        seeds : sequence of numpy.random.SeedSequence
            One per chunk, fresh for every step (spawned by the caller); never stored here.

        Returns
        -------
        ndarray, shape of theta
            The sampled rows' clipped gradients, summed per chunk and added in chunk order.
        """
        theta = self._theta(theta)
        seeds = check_seeds(seeds, self.n_chunks)
        parts = self._backend.run(sampled_sum_task, [seeds],
                                  (theta, loss, float(clip), check_rate(sampling_rate)))
        return sum_in_order(parts, theta.shape)

    def poisson_sampler(self, rng, rate):
        """A sampler of clipped gradient sums over Poisson samples drawn on the workers.

        One ``SeedSequence`` is drawn from ``rng`` here (``rng.integers(0, 2**63, size=4)``);
        each call spawns one child per chunk from it and runs
        :meth:`sampled_clipped_gradient_sum` (the streams are never stored elsewhere).

        Parameters
        ----------
        rng : numpy.random.Generator
            The fit's generator.
        rate : float
            q in (0, 1].

        Returns
        -------
        callable
            ``sampler(theta, loss, clip)`` -> ndarray of theta's shape.
        """
        streams = np.random.SeedSequence(rng.integers(0, 2 ** 63, size=4))

        def sampler(theta, loss, clip):
            return self.sampled_clipped_gradient_sum(theta, loss, clip, rate,
                                                     streams.spawn(self.n_chunks))
        return sampler

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
        return np.concatenate(self._backend.run(matvec_task, (), (v,)))

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
        return sum_in_order(self._backend.run(rmatvec_task, [parts]), shape)

    def _gram(self, task, w):
        parts = self._split(w, "w")
        if parts[0].ndim != 1:
            raise ValueError(f"w must have shape ({self.shape[0]},), got {np.shape(w)}")
        p = self.shape[1]
        return sum_in_order(self._backend.run(task, [parts]), (p, p))

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
        return self._gram(weighted_gram_task, w)

    def fixed_order_gram(self, w):
        """``X^T diag(w) X``: each chunk's :func:`dpsolve._ordered_linalg.fixed_order_gram`
        (every entry summed over the chunk's rows in row order) where it lives, added in chunk
        order.

        Parameters
        ----------
        w : ndarray, shape (n,)
            One weight per row.

        Returns
        -------
        ndarray, shape (p, p)
        """
        return self._gram(fixed_order_gram_task, w)

    def row_norms(self):
        """``||x_i||`` of every row (:func:`dpsolve._row_ops.row_norms`, kept on the workers
        once validated, else computed there), concatenated in chunk order.

        Returns
        -------
        ndarray, shape (n,)
        """
        return np.concatenate(self._backend.run(row_norms_task, ()))

    def labels(self):
        """y of every row (the coded labels once validated), concatenated in chunk order: one
        value per row, which the driver may hold.

        Returns
        -------
        ndarray, shape (n,)
        """
        return np.concatenate(self._backend.run(labels_task, ()))

    def map_parts(self, fn, *per_row, **kwargs):
        """:meth:`map` with per-row values cut by the chunks' rows (None stays None).

        Parameters
        ----------
        fn : callable
            ``fn(X_c, y_c, *values_c, **kwargs)``, picklable for a Dask backend.
        *per_row : ndarray or None
            One entry (or row) per row of X.
        **kwargs
            The same for every chunk.

        Returns
        -------
        list
            One result per chunk, in chunk order.
        """
        cut = [[None] * self.n_chunks if values is None else self._split_any(values)
               for values in per_row]
        return self.map(fn, *cut, **kwargs)

    def sum_parts(self, fn, *per_row, shape):
        """``out += fn(X_c, y_c, *values_c)`` from zeros of ``shape``, in chunk order.

        Parameters
        ----------
        fn : callable
            As for :meth:`map_parts`.
        *per_row : ndarray or None
            One entry (or row) per row of X.
        shape : tuple of int
            The shape of each chunk's result.

        Returns
        -------
        ndarray
        """
        return sum_in_order(self.map_parts(fn, *per_row), shape)

    def _split_any(self, values):
        """Values with one entry (or row) per row cut by the chunks' rows, as they are."""
        bounds = np.cumsum((0,) + self.chunk_rows)
        return [values[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
