"""The ``dpsolve`` command line.

Bad input stops a command before any work with ``dpsolve: error: ...`` on stderr and exit status
2 (argparse's convention), never a traceback: the arguments through argparse (every number with
its accepted range), then the sweep file (every setting of every run,
:func:`dpsolve.experiments.load_sweep` and :func:`~dpsolve.experiments.check_runs`), the data file
and the output paths. A file the command reads must be a regular file: a named pipe is refused
from its status before it is opened, which would block until a writer came. An output that cannot
be written after the work (no space left on the device, a folder removed meanwhile) is reported
the same way, naming the option. Messages about the data (a label outside ``--classes``, a cell
of a CSV file that is not a number) are shown to the data holder who runs the command and are
never written to an output or a results database.
"""
import argparse
import math
import os
import sys
from pathlib import Path

from ._cli_files import (_CommandError, _check_output, _check_output_dir, _fail, _write_error,
                         _writing)

#: Worker processes per core that ``--jobs`` and ``--scheduler local:N`` may start. The runs are
#: CPU bound, so workers beyond the cores only share them, each with its own interpreter and
#: memory; a few are allowed (a local Dask cluster of 4 on a two-core laptop, to try a cluster
#: sweep), a number such as 100000, which would start a process for every pending run, is not.
WORKERS_PER_CORE = 4


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors read ``dpsolve: error: ...`` under every command (a
    command's own parser would name itself: ``dpsolve demo: error: ...``)."""

    def error(self, message):
        """Print the usage and ``dpsolve: error: message`` on stderr; exit with status 2."""
        self.print_usage(sys.stderr)
        self.exit(2, f"dpsolve: error: {message}\n")


def _integer(low, high=None, *, subject="must be an integer", note=""):
    """An argparse ``type``: an integer in ``[low, high]``.

    Parameters
    ----------
    low : int
        The least value accepted.
    high : int or callable, optional
        The greatest (none if None; a callable is asked when the option is parsed).
    subject : str, default "must be an integer"
        How the message starts (``"seeds are integers"``).
    note : str, default ""
        Appended to the accepted range in the message: why it ends there.

    Returns
    -------
    callable
        ``text -> int``, raising :class:`argparse.ArgumentTypeError` (argparse adds the option's
        name: ``argument --seed: seeds are integers >= 0, got -1``).
    """
    def parse(text):
        top = high() if callable(high) else high
        accepted = f">= {low}" if top is None else f"in [{low}, {top}]"
        try:
            value = int(text)
        except ValueError:                  # not an integer, or more digits than int() reads
            value = None
        if value is None or value < low or (top is not None and value > top):
            raise argparse.ArgumentTypeError(f"{subject} {accepted}{note}, got {text!r}")
        return value
    return parse


def _real(name, low, high=math.inf, *, low_inclusive=False):
    """An argparse ``type``: a number in ``(low, high)`` (``[low, high)`` with
    ``low_inclusive``); NaN and the infinities are refused.

    Parameters
    ----------
    name : str
        The library's name of the parameter (``row_norm``), which the message starts with;
        argparse puts the option's name before it.
    low, high : float
        The interval's ends.
    low_inclusive : bool, default False
        Whether ``low`` itself is accepted.

    Returns
    -------
    callable
        ``text -> float``, raising :class:`argparse.ArgumentTypeError` with the interval
        (``argument --row-norm: row_norm must be a number in (0, inf), got 'nan'``).
    """
    interval = f"{'[' if low_inclusive else '('}{low:g}, {high:g})"

    def parse(text):
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (low < value < high or (low_inclusive and value == low)):
            raise argparse.ArgumentTypeError(f"{name} must be a number in {interval}, got "
                                             f"{text!r}")
        return value
    return parse


def _radius(text):
    """``--radius``: a number in (0, inf), or ``none`` for no constraint."""
    if text.strip().lower() == "none":
        return None
    try:
        return _real("radius", 0.0)(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"radius must be a number in (0, inf) or 'none' (no "
                                         f"constraint; then --reg > 0), got {text!r}") from None


def _reg(text):
    """``--reg``: a number in [0, inf), or ``auto``."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return _real("reg", 0.0, low_inclusive=True)(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"reg must be a number in [0, inf) or 'auto', got "
                                         f"{text!r}") from None


def _prior_share(text):
    """``--prior-share``: a number in [0, 1), or ``auto``."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return _real("prior_share", 0.0, 1.0, low_inclusive=True)(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"prior_share must be a number in [0, 1) or 'auto', "
                                         f"got {text!r}") from None


def _label_bound(text):
    """``--label-bound``: a number in (0, inf), or a range ``LOW,HIGH`` of finite numbers with
    LOW < HIGH."""
    parts = text.split(",")
    if len(parts) == 1:
        return _real("label_bound", 0.0)(text)
    try:
        low, high = (float(part) for part in parts)
    except ValueError:
        low = high = math.nan
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise argparse.ArgumentTypeError(f"label_bound must be a number in (0, inf) or a range "
                                         f"LOW,HIGH of finite numbers with LOW < HIGH, got "
                                         f"{text!r}")
    return (low, high)


def _max_workers():
    """The most worker processes a command may start: :data:`WORKERS_PER_CORE` for each core
    this process may run on."""
    from .experiments._cores import usable_cores
    return WORKERS_PER_CORE * usable_cores()


_workers = _integer(1, _max_workers,
                    note=f" ({WORKERS_PER_CORE} worker processes per core this process may run "
                         "on)")


def _stdout_gone():
    """After stdout's reader went away (``dpsolve report DB | head -1``): stdout pointed at the
    null device, so that Python's own flush at exit does not report the broken pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):      # not a file descriptor (a test's buffer)
        pass


def _attach_values(argv, options=("--classes", "--label-bound"), command="solve"):
    """``--classes -1,1`` as ``--classes=-1,1`` (and ``--label-bound -5,5`` likewise).

    argparse takes an argument that starts with ``-`` for an option unless it is a plain
    negative number (``-1`` or ``-0.5``), so ``-1,1`` is refused with "expected one argument".
    A value that starts with one dash (not ``--``, not ``-h``) following one of ``options``, or
    a prefix of it that argparse accepts, is attached to it with ``=``, which argparse reads as
    the value whatever it looks like.
    """
    argv = list(argv)
    if not argv or argv[0] != command:
        return argv
    out, i = [argv[0]], 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":                 # everything after it is positional
            out.extend(argv[i:])
            break
        following = argv[i + 1] if i + 1 < len(argv) else None
        if (len(arg) >= 3 and _prefix_of_one(arg, options) and following is not None
                and following.startswith("-") and not following.startswith("--")
                and following != "-h"):
            out.append(f"{arg}={following}")
            i += 2
            continue
        out.append(arg)
        i += 1
    return out


def _prefix_of_one(arg, options):
    """Whether ``arg`` is one of ``options`` or a prefix argparse reads as it (of no other of
    ``options``: ``--cla`` is ``--classes``)."""
    return sum(option.startswith(arg) for option in options) == 1


def main(argv=None):
    """Run the ``dpsolve`` command given by ``argv`` (default: the command line's
    arguments); returns the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(_attach_values(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        # argparse's refusals (status 2, a number out of its range among them) and --help (0),
        # already printed: returned like every other status
        return exc.code
    if args.command is None:
        parser.print_help()
        return 2
    command = {"run": _run, "report": _report, "solve": _solve, "demo": _demo}[args.command]
    try:
        status = command(parser, args)
        sys.stdout.flush()      # a reader of stdout that went away is found here, not at exit
    except _CommandError as exc:
        return _fail(str(exc))
    except BrokenPipeError:
        # stdout's reader stopped reading (`| head`): stop quietly, as a command that SIGPIPE
        # ended would, instead of a traceback (Python ignores SIGPIPE)
        _stdout_gone()
        return 1
    return status


def _demo(parser, args):
    """``dpsolve demo``: its options checked (the figure's path and format, the database, the
    sweep's size), then the built-in sweep."""
    from .demo import demo_sweep, run_demo
    from .experiments import StoreError, SweepError
    from .experiments.store import check_database

    # the outputs before the sweep: a figure is written last
    if args.out:
        _check_output(args.out, "--out")
        _check_figure_format(args.out, "--out")
    try:
        if args.db:
            check_database(args.db, create=True)
    except StoreError as exc:
        return _fail(f"--db: {exc}")
    try:
        demo_sweep(args.seeds, args.seed)      # the sweep's own checks: at most MAX_RUNS runs
    except SweepError as exc:
        return _fail(f"--seeds {args.seeds}: {exc}")
    try:
        run_demo(seeds=args.seeds, seed=args.seed, out=args.out, db=args.db, jobs=args.jobs,
                 progress=not args.quiet)
    except StoreError as exc:
        return _fail(f"--db: {exc}")
    except OSError as exc:
        # the figure (plot_axis names the file it could not write); any other OSError is not
        # about the options and keeps its traceback
        if not args.out or exc.filename is None or str(exc.filename) != str(args.out):
            raise
        return _fail(_write_error("--out", args.out, exc))
    return 0


def _check_figure_format(path, option):
    """Refuse, before the sweep, a figure ``path`` (given with ``option``) whose format, from
    its suffix, matplotlib cannot write here: the figure is drawn after every run, and a
    format found unwritable then would cost the whole sweep. A small figure with text is
    drawn to memory in that format (some formats need more than matplotlib: pgf needs LaTeX)."""
    import io

    from matplotlib.figure import Figure

    suffix = Path(path).suffix.lower()[1:]
    if not suffix:
        # matplotlib would write PATH.png, not the path checked and reported
        raise _CommandError(f"{option} {path}: needs a suffix that names the figure's format "
                            "(.png, .svg, .pdf, ...)")
    figure = Figure(figsize=(1, 1))
    figure.text(0.5, 0.5, "ε 1")
    try:
        figure.savefig(io.BytesIO(), format=suffix)
    except Exception as exc:      # noqa: BLE001 -- whatever stops the format, reported now
        raise _CommandError(f"{option} {path}: cannot write a .{suffix} figure: {exc}") from None


def _parser():
    """The command line's parser: the commands demo, run, report and solve."""
    parser = _Parser(
        prog="dpsolve",
        description="Differentially private ERM solvers, measured against exact minimisers.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_demo(commands)
    _add_run(commands)
    _add_report(commands)
    _add_solve(commands)
    return parser


def _add_demo(commands):
    """The ``demo`` command and its options."""
    demo = commands.add_parser(
        "demo", help="run private SGD on built-in data and compare with its excess-risk bound",
        description="A small built-in sweep: noisy_sgd (Bassily-Smith-Thakurta "
                    "2014) on a synthetic problem and, if scikit-learn is installed, the "
                    "breast-cancer data; prints excess risk against the theorem's bound and "
                    "writes a figure.")
    demo.add_argument("--seeds", type=_integer(2, note=" (the table reports a confidence "
                                                     "interval)"),
                      default=5, help="replicates per setting, >= 2 (default 5)")
    demo.add_argument("--seed", type=_integer(0, subject="seeds are integers"), default=0,
                      help="root random seed, an integer >= 0 (default 0)")
    demo.add_argument("--out", default="dpsolve-demo.png",
                      help="where to write the figure (default dpsolve-demo.png; the format "
                           "from the suffix; '' for none)")
    demo.add_argument("--db", default=None,
                      help="keep the results database here (default: a temporary one)")
    _add_pool_options(demo)


def _add_run(commands):
    """The ``run`` command and its options."""
    run = commands.add_parser(
        "run", help="run a sweep (TOML) into a results database; resumable",
        description="Run every run of a sweep file that the results database does not hold "
                    "yet, in parallel, committing each run as it finishes: a sweep that is "
                    "interrupted and started again skips what is done and loses nothing.")
    run.add_argument("sweep", help="the sweep file (TOML; see dpsolve.experiments.sweep)")
    run.add_argument("--out", required=True, help="the SQLite results database")
    run.add_argument("--scheduler", default=None,
                     help="run on a Dask cluster: a scheduler address (tcp://host:8786), or "
                          "local:N for a LocalCluster of N worker processes (needs "
                          "'dpsolve[dask]'; docs/cluster.md)")
    _add_pool_options(run)


def _add_report(commands):
    """The ``report`` command and its options."""
    report = commands.add_parser(
        "report", help="summarise a results database",
        description="Print, per grid cell, the mean excess risk with its 95%% confidence "
                    "interval, the theorem's bound and their ratio; and the fitted log-log "
                    "slopes along each swept axis next to the bound's.")
    report.add_argument("database", help="the SQLite results database")
    report.add_argument("--csv", default=None, help="also write the cell summaries to this CSV")
    report.add_argument("--plots", default=None, metavar="DIR",
                        help="also write figures (PNG and SVG) of excess risk against n, p, "
                             "epsilon and the number of steps into DIR")


def _add_solve(commands):
    """The ``solve`` command and its options."""
    solve = commands.add_parser(
        "solve", help="fit one private model on a CSV/NPY/NPZ file and write it as JSON",
        description="Fit one private model on a data file (.csv of numbers with the label "
                    "in the last column, .npz with arrays X and y or a scipy.sparse save_npz "
                    "matrix with y, or .npy with --labels) and write the released parameters "
                    "and their privacy report as JSON. The model is the estimator's of the "
                    "loss (DPLogisticRegression, DPLinearSVC, DPLinearRegression), and an "
                    "option left out takes its default: the solver chosen from public "
                    "constants, reg auto, an intercept centred on the private base rate (the "
                    "labels' private mean for regression, fitted by AdaSSP), pure epsilon-DP. "
                    "Give the public bounds (--row-norm, and --classes or --label-bound): "
                    "without them the bounds are read off the data and no guarantee holds.")
    solve.add_argument("--data", required=True, help="the data file")
    solve.add_argument("--labels", default=None, help="labels file (.npy or .csv) if separate")
    solve.add_argument("--schema", default=None, metavar="FILE",
                       help="a raw CSV table (with a header; numbers in their units, "
                            "categories, missing cells) and its public schema, a TOML file: "
                            "each column's public range or category list, the label's column "
                            "and classes or range (docs/preprocessing.md); the row bound and "
                            "the labels come from it, nothing is read off the data")
    solve.add_argument("--loss", default="logistic",
                       help="logistic, hinge, huber_hinge, squared or multinomial")
    from .experiments.sweep import MAX_CLASSES
    solve.add_argument("--classes", default=None, metavar="C0,C1,...",
                       help="the public label set, comma-separated: for the binary losses the "
                            "negative then the positive label, for multinomial the K classes in "
                            "order; chosen without looking at the data (negative labels work "
                            "as they are: --classes -1,1). Without it the labels present are "
                            "used, with a PrivacyWarning, and the output holds no guarantee")
    solve.add_argument("--n-classes", type=int, default=None, metavar="K",
                       help="multinomial: K classes labelled 0..K-1 (instead of --classes), "
                            f"2 <= K <= {MAX_CLASSES}")
    _add_solve_settings(solve)
    solve.add_argument("--seed", type=_integer(0, subject="seeds are integers"), default=None,
                       help="random seed, an integer >= 0 (default: fresh)")
    solve.add_argument("--secure", action="store_true",
                       help="noise from the operating system's entropy (no --seed), theta "
                            "rounded to a 2**-32 grid: for releasing a model (docs/secure_noise.md)")
    solve.add_argument("--out", default="-", help="where to write the JSON (default stdout)")


def _add_solve_settings(solve):
    """``solve``'s privacy and model settings, each defaulting to the estimators' default."""
    from .solvers import registry
    single = [spec.name for spec in registry() if spec.partition is None]
    solve.add_argument("--solver", default="auto",
                       help=f"auto (default: the smallest utility bound, chosen from public "
                            f"constants only, as the estimators choose) or one of "
                            f"{', '.join(single)}")
    solve.add_argument("--epsilon", type=_real("epsilon", 0.0), required=True,
                       help="epsilon > 0: the whole model's, the private base rate's share "
                            "included")
    solve.add_argument("--delta", type=_real("delta", 0.0, 1.0), default=None,
                       help="delta in (0, 1), well below 1/n (default: none, pure epsilon-DP; "
                            "the solvers that need one then say so)")
    solve.add_argument("--radius", type=_radius, default="none",
                       help="radius of the parameter ball, > 0, or 'none' (default: no "
                            "constraint; then --reg > 0 or auto)")
    solve.add_argument("--reg", type=_reg, default="auto",
                       help="L2 regularisation lambda >= 0, or auto (default: the ridge that "
                            "minimises the chosen solver's excess-risk bound for prediction, "
                            "from public constants only; dpsolve.tuning)")
    solve.add_argument("--row-norm", type=_real("row_norm", 0.0), default=None,
                       help="public bound B > 0 on the row norms (rows above it are clipped); "
                            "without it the largest row norm is read off the data, with a "
                            "PrivacyWarning, and the output holds no guarantee")
    solve.add_argument("--label-bound", type=_label_bound, default=None, metavar="B|LOW,HIGH",
                       help="--loss squared: public bound B > 0 on |y|, or the labels' public "
                            "range LOW,HIGH (labels beyond it are clipped); without it the "
                            "largest |y| is read off the data, with a PrivacyWarning")
    solve.add_argument("--prior-share", type=_prior_share, default="auto",
                       help="the share of epsilon in [0, 1) spent on the private base rate "
                            "(classification) or the labels' private mean (regression), which "
                            "centre the intercept, or auto (default; as the estimators)")
    solve.add_argument("--fit-intercept", action=argparse.BooleanOptionalAction, default=True,
                       help="fit an intercept (default; --no-fit-intercept for none): a "
                            "constant feature of value --intercept-scale is appended after "
                            "clipping, and the row bound becomes sqrt(B^2 + s^2) "
                            "(docs/intercepts.md)")
    solve.add_argument("--intercept-scale", type=_real("intercept_scale", 0.0), default=None,
                       metavar="S",
                       help="the intercept's constant feature s > 0 (default 1)")


def _add_pool_options(command):
    """``--jobs`` and ``--quiet``, of ``run`` and ``demo``."""
    command.add_argument("--jobs", type=_workers, default=None,
                         help="worker processes (default: every core this process may run on; "
                              f"at most {WORKERS_PER_CORE} per core)")
    command.add_argument("--quiet", action="store_true", help="no progress bar")


def _run(parser, args):
    """``dpsolve run``: the options, the results database and the sweep checked, then the
    runs not yet in the database; returns the exit status."""
    import sqlite3

    from .experiments import StoreError, SweepError, load_sweep, run_sweep
    from .experiments.store import check_database

    if args.scheduler is not None and args.jobs is not None:
        parser.error("--jobs is for the local pool; a cluster's workers are its own")
    if args.scheduler is not None and args.scheduler.startswith("local:"):
        # a LocalCluster's workers are processes on this machine, bounded as --jobs' are (the
        # other values of N, connect refuses)
        try:
            count = int(args.scheduler[len("local:"):])
        except ValueError:              # not an integer: connect says what N must be
            count = None
        if count is not None and count > _max_workers():
            return _fail(f"--scheduler {args.scheduler}: N must be at most {_max_workers()} "
                         f"({WORKERS_PER_CORE} worker processes per core this process may run "
                         f"on), got {count}")
    try:
        check_database(args.out, create=True)
    except StoreError as exc:
        return _fail(f"--out: {exc}")
    try:
        # every setting that needs no data, before a cluster is started (the rest: run_sweep)
        sweep = load_sweep(Path(args.sweep))
    except SweepError as exc:
        return _fail(f"{args.sweep}: {exc}")
    client = cluster = None
    try:
        if args.scheduler is not None:
            from .experiments.cluster import connect
            try:
                client, cluster = connect(args.scheduler)
            except (ValueError, ImportError, OSError) as exc:
                return _fail(f"--scheduler {args.scheduler}: {exc}")
        counts = run_sweep(sweep, args.out, jobs=args.jobs, client=client,
                           progress=not args.quiet)
    except SweepError as exc:
        return _fail(f"{args.sweep}: {exc}")
    except StoreError as exc:
        return _fail(f"--out: {exc}")
    except sqlite3.Error as exc:
        # a run's row could not be committed (no space left on the device): what was
        # committed before stays, and a new start resumes from it
        return _fail(f"--out {args.out}: cannot write: {exc}; the runs committed before are "
                     "kept")
    except RuntimeError as exc:
        print(f"dpsolve: error: {exc}", file=sys.stderr)
        return 1
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    print(f"{counts['ran']} runs done, {counts['skipped']} already in {args.out}, "
          f"{counts['total']} in the sweep")
    return 0


def _report(parser, args):
    """``dpsolve report``: the outputs checked, the database read (read only), the report
    printed and the CSV and figures written; returns the exit status."""
    import sqlite3

    from .experiments import ResultStore, StoreError, report_text, summarize, to_csv

    # the outputs first, so that nothing is printed before a refusal
    if args.csv:
        _check_output(args.csv, "--csv")
    if args.plots:
        _check_output_dir(args.plots, "--plots")
    try:
        # read only: never creates, converts or writes the file (a mistyped name stays missing)
        with ResultStore(args.database, read_only=True) as store:
            rows = store.rows()
    except StoreError as exc:
        parser.error(str(exc))
    except (sqlite3.Error, ValueError) as exc:
        parser.error(f"{args.database} cannot be read as a results database: {exc}")
    cells = summarize(rows)
    if not cells:
        print(f"{args.database} holds no runs")
        return 0
    print(report_text(rows, cells))
    if args.csv:
        with _writing("--csv", args.csv):
            to_csv(cells, args.csv)
        print(f"\ncell summaries written to {args.csv}")
    if args.plots:
        from .experiments import plot_sweep

        with _writing("--plots", args.plots):
            paths = plot_sweep(cells, args.plots)
        for path in paths:
            print(f"figure written to {path}")
    return 0


def _solve(parser, args):
    """``dpsolve solve`` (:mod:`dpsolve._solve_command`): the estimator of the loss fitted on
    a data file at the estimators' defaults; returns the exit status."""
    from ._solve_command import solve
    return solve(parser, args)


if __name__ == "__main__":
    sys.exit(main())
