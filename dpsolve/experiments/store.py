"""Results of a sweep in an embedded SQLite database, one row per run, committed as each run
finishes, so that an interrupted sweep (Ctrl-C, kill -9, power loss) loses nothing it finished.

SQLite in WAL mode with ``synchronous=FULL``: a run's row is written in one transaction, which
either is on disk in full or not at all. Only the process that runs the sweep writes; workers
return their results to it. Readers (``dpsolve report``, the summaries) open it read only and
never create or modify a file.

A row holds the run's spec (its public settings) and its result (the excess risk and the
objective values, which are statistics of the data, the bounds, the certified epsilon, n, p and
the hash of the released parameters); no label value or cell of the data, and no error message.
"""
import json
import os
import sqlite3
import stat
import time
from pathlib import Path

from .._validation import open_input_file
from .sweep import Run, canonical

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id      TEXT PRIMARY KEY,
    cell_id     TEXT NOT NULL,
    sweep       TEXT NOT NULL,
    replicate   INTEGER NOT NULL,
    spec        TEXT NOT NULL,
    result      TEXT NOT NULL,
    finished_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS sweeps (
    name TEXT PRIMARY KEY,
    spec TEXT NOT NULL
);
"""
#: The first 16 bytes of every SQLite 3 database file.
SQLITE_HEADER = b"SQLite format 3\x00"


class StoreError(ValueError):
    """A path that cannot be opened as a results database; the message names the path."""


def check_database(path, *, create=False):
    """Check that ``path`` can be opened as a results database, without opening it.

    Parameters
    ----------
    path : str or Path
        The SQLite file.
    create : bool, default False
        Whether a missing or empty file is accepted (it becomes a new database when a sweep
        writes to it); its folder must exist.

    Returns
    -------
    bool
        Whether the file holds a database already (False: missing or empty).

    Raises
    ------
    StoreError
        If the path is a directory, its folder does not exist, it is not a regular file (a
        named pipe is refused before it is opened, which would block until a writer came), or
        the file is not an SQLite database; without ``create``, also if it is missing or empty.
    """
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except (OSError, ValueError) as exc:        # permission, a name too long, a NUL byte
        reason = getattr(exc, "strerror", None) or exc
        raise StoreError(f"cannot read {path}: {reason}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise StoreError(f"{path} is a directory, not a results database")
    if mode is None:
        if not create:
            raise StoreError(f"no results database at {path}")
        folder = path.parent
        if not folder.is_dir():
            raise StoreError(f"the folder {folder} of {path} does not exist")
        return False
    with open_input_file(path, f"{path} cannot be a results database", StoreError) as fh:
        try:
            head = fh.read(len(SQLITE_HEADER))
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not head:
        if not create:
            raise StoreError(f"{path} is empty, not a results database")
        return False
    if head != SQLITE_HEADER:
        raise StoreError(f"{path} is not an SQLite database (not a results database)")
    return True


class ResultStore:
    """A results database. ``with ResultStore(path) as store: ...``.

    Opening it for writing creates the file and its tables if they do not exist, and switches
    the database to WAL mode with ``synchronous=FULL``. Opened with ``read_only=True`` (what
    :func:`~dpsolve.experiments.summarize` and ``dpsolve report`` do) it never creates, writes
    or converts anything: a missing, empty or non-SQLite file, a directory, or an SQLite file
    without the results tables is refused with a :class:`StoreError`.

    Parameters
    ----------
    path : str or Path
        The SQLite file.
    read_only : bool, default False
        Open an existing results database for reading only.

    Attributes
    ----------
    path : Path
        The SQLite file.
    """

    def __init__(self, path, *, read_only=False):
        self.path = Path(path)
        self.read_only = bool(read_only)
        if self.read_only:
            self._db = _connect_read_only(self.path)
            return
        check_database(self.path, create=True)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, timeout=60.0)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(SCHEMA)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self.path} as a results database: {exc}") from None

    def close(self):
        """Close the database connection."""
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def register(self, sweep):
        """Record the sweep's normalised spec (the same name must keep the same spec)."""
        text = canonical(sweep.spec)
        row = self._db.execute("SELECT spec FROM sweeps WHERE name = ?", (sweep.name,)).fetchone()
        if row is not None and row[0] != text:
            raise StoreError(f"{self.path} already holds a different sweep named "
                             f"{sweep.name!r}: use another database or rename the sweep")
        if row is None:
            self._db.execute("INSERT INTO sweeps (name, spec) VALUES (?, ?)", (sweep.name, text))

    def done(self, sweep_name=None):
        """Ids of the finished runs (of one sweep, or all)."""
        if sweep_name is None:
            rows = self._db.execute("SELECT run_id FROM runs")
        else:
            rows = self._db.execute("SELECT run_id FROM runs WHERE sweep = ?", (sweep_name,))
        return {r[0] for r in rows}

    def add(self, spec, result):
        """Commit one finished run (an already present run is left as it is).

        Parameters
        ----------
        spec : dict or Run
            The run spec (:meth:`~dpsolve.experiments.Sweep.runs`), or its
            :class:`~dpsolve.experiments.sweep.Run`, whose keys were computed when the sweep's
            runs were listed.
        result : dict
            JSON-serialisable (:func:`~dpsolve.experiments.execute`'s).
        """
        run = spec if isinstance(spec, Run) else Run.of(spec, reference=False)
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.execute(
                "INSERT OR IGNORE INTO runs (run_id, cell_id, sweep, replicate, spec, result, "
                "finished_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (run.id, run.cell, run.spec["sweep"], run.spec["replicate"], run.text,
                 json.dumps(result), time.time()))
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def rows(self, sweep_name=None):
        """Every finished run as ``{"run_id", "cell_id", "spec", "result", "finished_at"}``."""
        query = "SELECT run_id, cell_id, spec, result, finished_at FROM runs"
        args = ()
        if sweep_name is not None:
            query += " WHERE sweep = ?"
            args = (sweep_name,)
        return [{"run_id": r[0], "cell_id": r[1], "spec": json.loads(r[2]),
                 "result": json.loads(r[3]), "finished_at": r[4]}
                for r in self._db.execute(query + " ORDER BY finished_at", args)]

    def sweeps(self):
        """The registered sweeps' normalised specs, by name."""
        return {r[0]: json.loads(r[1]) for r in self._db.execute("SELECT name, spec FROM sweeps")}


def stored_runs(path, sweep):
    """The ids of ``sweep``'s runs that the database at ``path`` holds, read only (none for a
    missing or empty file), after checking that the path can hold the results.

    Parameters
    ----------
    path : str or Path
        The results database a sweep is about to write.
    sweep : Sweep

    Returns
    -------
    set of str

    Raises
    ------
    StoreError
        As :func:`check_database` with ``create=True``, or if the database holds a different
        sweep of the same name.
    """
    if not check_database(path, create=True):
        return set()
    with ResultStore(path, read_only=True) as store:
        held = store.sweeps().get(sweep.name)
        if held is not None and canonical(held) != canonical(sweep.spec):
            raise StoreError(f"{path} already holds a different sweep named {sweep.name!r}: "
                             "use another database or rename the sweep")
        return store.done(sweep.name)


def _connect_read_only(path):
    """A read-only connection to an existing results database (module docstring of
    :class:`ResultStore`)."""
    check_database(path)
    # Without a write-ahead log (no writer has the database open) the file is opened immutable:
    # SQLite then creates no -wal/-shm files beside it. With one, a read-only connection that
    # takes the usual locks and reads the writer's log too.
    live = os.path.exists(f"{path}-wal")
    uri = path.resolve().as_uri() + ("?mode=ro" if live else "?mode=ro&immutable=1")
    try:
        db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=60.0)
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read {path} as a results database: {exc}") from None
    if not {"runs", "sweeps"} <= tables:
        db.close()
        raise StoreError(f"{path} is an SQLite database but not a dpsolve results database "
                         "(it has no runs and sweeps tables)")
    return db
