"""Where the chunks of a :class:`dpsolve.rows.RowChunks` live and run: in this process
(:class:`Local`), or as futures on the workers of a Dask cluster (:class:`Dask`), each task
pinned to the worker holding its chunk. Both return the per-chunk results in chunk order, and
:func:`sum_in_order` adds them: the one order of the driver's sums.

``dask`` and ``distributed`` are an optional extra (``pip install "dpsolve[dask]"``), imported
only when a Dask backend is asked for.
"""
import numpy as np


def require_distributed(what="Rows on a Dask cluster"):
    """The ``distributed`` module, or an ImportError saying that ``what`` needs it and how to
    install it (the extra is optional)."""
    try:
        import distributed
    except ImportError:      # pragma: no cover - the extra is not installed
        raise ImportError(f"{what}: needs dask.distributed (pip install "
                          "\"dpsolve[dask]\")") from None
    return distributed


def _first(pair):
    return pair[0]


def _second(pair):
    return pair[1]


class Local:
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
        return Local(p[0] for p in pairs), [p[1] for p in pairs]


class Dask:
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
        return Dask(self.client, new, self.homes()), infos


def sum_in_order(parts, shape):
    """``out += part`` from zeros, in chunk order: the one order of the driver's sums."""
    out = np.zeros(shape)
    for part in parts:
        out += part
    return out
