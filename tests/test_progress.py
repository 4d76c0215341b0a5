"""The sweeps' progress bar: drawn on a terminal, silent in a log file or a pipe."""
import contextlib
import io
from concurrent.futures import ThreadPoolExecutor

from dpsolve import experiments

SWEEP = {
    "name": "progress", "seed": 1, "replicates": 3,
    "data": {"source": "synthetic", "n": 100, "p": 3},
    "problem": {"loss": "logistic", "radius": 1.0, "reg": 0.1},
    "solver": [{"name": "output_perturbation", "epsilon": 1.0}],
}


class Terminal(io.StringIO):
    """A stream that says it is a terminal, as stderr does in an interactive shell."""

    def isatty(self):
        return True


def _stderr_of_a_sweep(stream, db, **options):
    # one thread in this process: no worker pool to start, and sys.stderr is the one patched
    with ThreadPoolExecutor(1) as pool, contextlib.redirect_stderr(stream):
        experiments.run_sweep(SWEEP, db, executor=pool, **options)
    return stream.getvalue()


def test_progress_bar_writes_no_frames_when_stderr_is_not_a_terminal(tmp_path):
    assert _stderr_of_a_sweep(io.StringIO(), tmp_path / "r.db", progress=True) == ""


def test_progress_bar_is_drawn_on_a_terminal_and_can_be_turned_off(tmp_path):
    drawn = _stderr_of_a_sweep(Terminal(), tmp_path / "a.db", progress=True)
    assert "\r" in drawn and "3/3" in drawn
    assert _stderr_of_a_sweep(Terminal(), tmp_path / "b.db", progress=False) == ""
