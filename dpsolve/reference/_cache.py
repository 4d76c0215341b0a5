"""The on-disk cache of reference solutions: keyed by a hash of the data and the problem,
written atomically, never trusted (a cached theta is re-certified before use).

A file holds theta-hat and how it was found (the solver's status and name, its time), and
nothing per record. The dual point that certifies a hinge solution is not stored: its entries
are ``alpha_i = b_i y_i`` with ``b_i`` in [0, 1], so their signs are the labels of every record
off the margin's far side; it is rebuilt from theta-hat and the data when the file is read. Nor
are ``F(theta_hat)`` and the gap stored: both are recomputed (the certificate) on every read.
"""
import hashlib
import json
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
from scipy import sparse

from .._version import __version__

#: Version of the on-disk cache format. Bump it when the format or the solver changes
#: meaning; old files are then ignored. 3: theta's sums in an order fixed by the shapes
#: (dpsolve/_ordered_linalg.py) and Newton's line search stopping below F's rounding. 4: no
#: per-record array (the hinge loss's dual point, whose signs are the labels) and no value or
#: gap in the file. The key also holds dpsolve's version, so that a release never reads
#: another's theta (equally certified, but not the same bits: a sweep's results would then
#: depend on what a machine had cached).
CACHE_FORMAT_VERSION = 4

#: The arrays a cache file holds (``np.savez`` names), every one a scalar or a string but
#: theta: nothing with one entry per record.
FIELDS = ("version", "key", "theta", "status", "solver", "time")


def directory(cache):
    """The cache directory for ``reference_minimizer(cache=...)``, or None for no cache."""
    if cache is False or cache is None:
        return None
    if cache is True:
        env = os.environ.get("DPSOLVE_CACHE")
        if env:
            return Path(env)
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = Path(xdg) if xdg else Path.home() / ".cache"
        return base / "dpsolve"
    if isinstance(cache, (str, os.PathLike)):
        return Path(cache)
    raise TypeError(f"cache must be a bool, str or path, got {type(cache).__name__}")


def key(problem, tol):
    """sha256 of the data (a sparse X by its CSR arrays, rows in chunks by the digests of
    their chunks, hashed where they live), the problem's description, ``tol``,
    the format version and dpsolve's version."""
    h = hashlib.sha256()
    h.update(f"dpsolve-reference-v{CACHE_FORMAT_VERSION}\ndpsolve {__version__}\n".encode())
    h.update(json.dumps(problem.describe(), sort_keys=True).encode())
    h.update(f"\ntol={float(tol)!r}\nX{problem.X.shape}{problem.X.dtype.str}\n".encode())
    if problem.is_chunked:
        # each chunk's bytes hashed where it lives; their digests, in chunk order, here
        h.update(f"chunks{problem.X.chunk_rows}\n".encode())
        for digest in problem.X.map(_chunk_digest):
            h.update(bytes.fromhex(digest))
    elif sparse.issparse(problem.X):
        for part in (problem.X.indptr, problem.X.indices, problem.X.data):
            h.update(np.ascontiguousarray(part).tobytes())
    else:
        # by blocks of rows: the same digest as the whole array's bytes, without a copy of X
        # (a memory-mapped X may not fit in memory)
        X = np.ascontiguousarray(problem.X)
        for start in range(0, X.shape[0], 4096):
            h.update(X[start:start + 4096])
    h.update(f"\ny{problem.y.shape}{problem.y.dtype.str}\n".encode())
    h.update(np.ascontiguousarray(problem.y).tobytes())
    return h.hexdigest()


def _chunk_digest(X, y):
    """sha256 (hex) of one chunk's X, by blocks of rows (y is hashed on the driver)."""
    h = hashlib.sha256()
    if sparse.issparse(X):
        for part in (X.indptr, X.indices, X.data):
            h.update(np.ascontiguousarray(part).tobytes())
    else:
        X = np.ascontiguousarray(X)
        for start in range(0, X.shape[0], 4096):
            h.update(X[start:start + 4096])
    return h.hexdigest()


def read(path, key):
    """``(theta, status, solver, time)`` from a cache file, or None if it is missing,
    unreadable or from another problem (by its key). Nothing read is trusted: the caller
    re-certifies theta."""
    try:
        with np.load(path, allow_pickle=False) as f:
            if (int(f["version"]) != CACHE_FORMAT_VERSION or str(f["key"]) != key):
                return None
            theta = np.array(f["theta"], dtype=np.float64)
            status, solver, elapsed = str(f["status"]), str(f["solver"]), float(f["time"])
    except Exception:              # noqa: BLE001 - any unreadable file is re-solved
        return None
    return theta, status, solver, elapsed


def store(directory, path, key, solution):
    """Write ``solution``'s theta and how it was found (:data:`FIELDS`) to ``path``
    atomically; warn if it cannot. Nothing per record is written (see the module
    docstring)."""
    tmp = None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".tmp-", suffix=".npz",
                                         delete=False) as fh:
            tmp = fh.name
            np.savez(fh, version=np.int64(CACHE_FORMAT_VERSION), key=np.str_(key),
                     theta=np.asarray(solution.theta, dtype=np.float64),
                     status=np.str_(solution.status), solver=np.str_(solution.solver),
                     time=np.float64(solution.time))
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        warnings.warn(f"could not write the reference cache in {directory}: {exc}",
                      RuntimeWarning, stacklevel=3)
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass

