"""Rows held in consecutive chunks, locally or on the workers of a Dask cluster.

The public home of :class:`RowChunks` (``from dpsolve.chunked import RowChunks``); the code is
the chunked backend of :mod:`dpsolve.rows` (``dpsolve/rows/_chunks.py``, its per-chunk
functions in ``_tasks.py`` and its local and Dask executors in ``_executors.py``).

``dask`` and ``distributed`` are an optional extra (``pip install "dpsolve[dask]"``), imported
only when a Dask backend is asked for.
"""
from .rows import RowChunks, require_distributed

__all__ = ["RowChunks", "require_distributed"]
