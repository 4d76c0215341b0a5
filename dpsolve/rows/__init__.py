"""One interface over the rows of a Problem, whatever stores them.

A solver reads X and its coded labels y only through ``problem.rows``, a :class:`Rows`: the
clipped gradient sum (all rows, given rows, or Poisson samples), ``X v``, ``X^T r``, the Gram
blocks ``X^T diag(w) X``, the row norms, the labels, and per-part maps and sums. Two backends
implement it:

* :class:`MemoryRows`: X in this process, a dense float32/float64 array or a canonical CSR
  array (one kernel call on all the rows);
* :class:`RowChunks`: X in consecutive chunks of rows, held in this process or on the workers
  of a Dask cluster (one kernel call per chunk where it lives, the results added on the
  driver in chunk order).

A new storage (a GPU array, Parquet row groups) is one more backend: docs/rows.md says what it
must implement and which bits it must give.
"""
from ._chunks import RowChunks
from ._executors import require_distributed
from ._interface import Rows
from ._memory import MemoryRows

__all__ = ["MemoryRows", "RowChunks", "Rows", "is_row_chunks", "require_distributed",
           "rows_of"]


def is_row_chunks(X):
    """Whether X is rows in chunks: a :class:`RowChunks`, or a Dask array (told by its type's
    module and ``to_delayed``, without importing dask)."""
    if getattr(type(X), "_row_chunks", False) is True:
        return True
    return type(X).__module__.startswith("dask.") and hasattr(X, "to_delayed")


def rows_of(X, y):
    """The :class:`Rows` of a Problem's validated ``X`` and ``y``: X itself when it is a
    backend (a :class:`RowChunks`), else a :class:`MemoryRows` over the array."""
    if isinstance(X, Rows):
        return X
    return MemoryRows(X, y)
