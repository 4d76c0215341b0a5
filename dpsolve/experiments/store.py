"""Results of a sweep in an embedded SQLite database, one row per run, committed as each run
finishes, so that an interrupted sweep (Ctrl-C, kill -9, power loss) loses nothing it finished.

SQLite in WAL mode with ``synchronous=FULL``: a run's row is written in one transaction, which
either is on disk in full or not at all. Only the process that runs the sweep writes; workers
return their results to it.
"""
import json
import sqlite3
import time
from pathlib import Path

from .sweep import canonical, cell_id, run_id

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


class ResultStore:
    """A results database. ``with ResultStore(path) as store: ...``.

    Opening it creates the file and its tables if they do not exist, and switches the database
    to WAL mode with ``synchronous=FULL``.

    Parameters
    ----------
    path : str or Path
        The SQLite file.

    Attributes
    ----------
    path : Path
        The SQLite file.
    """

    def __init__(self, path):
        self.path = Path(path)
        self._db = sqlite3.connect(self.path, isolation_level=None, timeout=60.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(SCHEMA)

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
            raise ValueError(f"{self.path} already holds a different sweep named "
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
        """Commit one finished run (an already present run is left as it is)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.execute(
                "INSERT OR IGNORE INTO runs (run_id, cell_id, sweep, replicate, spec, result, "
                "finished_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (run_id(spec), cell_id(spec), spec["sweep"], spec["replicate"], canonical(spec),
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
