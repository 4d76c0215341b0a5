"""Experiment sweeps: run solvers over a grid of settings, store every run in SQLite as it
finishes, and summarise excess risk against the theorems' bounds.

- :func:`load_sweep` (a TOML file or a dict; see :mod:`dpsolve.experiments.sweep` for the format)
  and :class:`Sweep`;
- :func:`run_sweep` (parallel, resumable) and :class:`ResultStore` (:class:`StoreError` for a
  path that is not a results database);
- :func:`check_runs` (every run's settings through the solvers' own checks, before any run) and
  :func:`execute` (one run, replayable from its spec);
- :func:`summarize`, :func:`slopes`, :func:`fit_slope`, :func:`compare_slope`, :func:`to_csv`,
  :func:`to_dataframe`;
- :func:`rate_slopes`: the slopes against the theorem's rate a sweep names in its ``[rate]``
  table (:mod:`dpsolve.experiments.rate`), per regime where the rate is a maximum of terms;
- :func:`report_text` (the summary as Markdown), :func:`plot_sweep` and :func:`plot_axis`
  (figures against n, p and epsilon).
"""
from .plots import plot_axis, plot_sweep
from .rate_slopes import rate_slopes
from .report import report_text
from .runner import run_sweep
from .runs import check_runs, execute
from .store import ResultStore, StoreError
from .summary import (compare_slope, fit_slope, mean_interval, slopes, summarize, to_csv,
                      to_dataframe)
from .sweep import Sweep, SweepError, cell_id, load_sweep, run_id, run_seed

__all__ = ["ResultStore", "StoreError", "Sweep", "SweepError", "cell_id", "check_runs",
           "compare_slope", "execute", "fit_slope", "load_sweep", "mean_interval", "plot_axis",
           "plot_sweep", "rate_slopes", "report_text", "run_id", "run_seed", "run_sweep",
           "slopes", "summarize", "to_csv", "to_dataframe"]
