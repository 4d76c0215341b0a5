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
import contextlib
import math
import os
import stat
import sys
from pathlib import Path

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


class _CommandError(Exception):
    """Bad input found after argument parsing (a file that cannot be read or written); the
    message names the option. :func:`main` prints it as ``dpsolve: error: ...``, status 2."""


def _fail(message):
    """Report bad input found after argument parsing, as argparse does: exit status 2."""
    print(f"dpsolve: error: {message}", file=sys.stderr)
    return 2


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


def _max_workers():
    """The most worker processes a command may start: :data:`WORKERS_PER_CORE` for each core
    this process may run on."""
    from .experiments._cores import usable_cores
    return WORKERS_PER_CORE * usable_cores()


_workers = _integer(1, _max_workers,
                    note=f" ({WORKERS_PER_CORE} worker processes per core this process may run "
                         "on)")


def _reason(exc):
    """An OSError's reason in words (``No space left on device``)."""
    return getattr(exc, "strerror", None) or str(exc)


def _input_file(path, option):
    """Check, before anything opens it, that ``path`` (given with ``option``) is an existing
    regular file; a named pipe, whose open would block, a directory or a device is refused
    (:func:`dpsolve._validation.check_input_file`). Raises :class:`_CommandError`."""
    from ._validation import check_input_file
    check_input_file(path, f"{option} {path}", _CommandError)


def _check_output(path, option):
    """Check, before any work, that ``path`` (given with ``option``) can be written as a new or
    replaced file, so that a result is never computed and then lost.

    The folder must exist and be writable; an existing path must be a writable regular file or
    a character device (``/dev/null``, a terminal). A named pipe is refused: writing to it
    would block until a reader came. What fails only when written (no space left on the device)
    is reported by :func:`_writing`. Raises :class:`_CommandError`.
    """
    from ._validation import file_kind

    path = Path(path)
    what = f"{option} {path}"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except (OSError, ValueError) as exc:        # permission, a name too long, a NUL byte
        raise _CommandError(f"{what}: {_reason(exc)}") from None
    if mode is not None:
        if stat.S_ISDIR(mode):
            raise _CommandError(f"{what}: {path} is a directory")
        if not (stat.S_ISREG(mode) or stat.S_ISCHR(mode)):
            raise _CommandError(f"{what}: is {file_kind(mode)}, not a regular file")
        if not os.access(path, os.W_OK):
            raise _CommandError(f"{what}: {path} is not writable")
        return
    _check_folder(path.parent, what)


def _check_output_dir(path, option):
    """Check, before any work, that ``path`` (given with ``option``) is a writable folder, or
    can be made one in a folder that exists. Raises :class:`_CommandError`."""
    path = Path(path)
    what = f"{option} {path}"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        _check_folder(path.parent, what)
        return
    except (OSError, ValueError) as exc:
        raise _CommandError(f"{what}: {_reason(exc)}") from None
    if not stat.S_ISDIR(mode):
        raise _CommandError(f"{what}: exists and is not a directory")
    if not os.access(path, os.W_OK | os.X_OK):
        raise _CommandError(f"{what}: the folder is not writable")


def _check_folder(folder, what):
    """The folder a new output goes into: it must exist and be writable."""
    if not folder.is_dir():
        raise _CommandError(f"{what}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise _CommandError(f"{what}: the folder {folder} is not writable")


def _write_error(option, path, exc):
    """The message of an OSError raised writing ``path`` (given with ``option``), naming the
    file it was about when that is another (a figure in the ``--plots`` folder)."""
    other = exc.filename is not None and str(exc.filename) != str(path)
    return f"{option} {path}: cannot write{f' {exc.filename}' if other else ''}: {_reason(exc)}"


@contextlib.contextmanager
def _writing(option, path):
    """The block writes the output ``path`` (given with ``option``): an OSError there (no space
    left on the device, a folder removed since it was checked, permission) becomes the
    command's one-line error (:class:`_CommandError`)."""
    try:
        yield
    except OSError as exc:
        raise _CommandError(_write_error(option, path, exc)) from None


def _stdout_gone():
    """After stdout's reader went away (``dpsolve report DB | head -1``): stdout pointed at the
    null device, so that Python's own flush at exit does not report the broken pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):      # not a file descriptor (a test's buffer)
        pass


def _attach_values(argv, option="--classes", command="solve"):
    """``--classes -1,1`` as ``--classes=-1,1``.

    argparse takes an argument that starts with ``-`` for an option unless it is a plain
    negative number (``-1`` or ``-0.5``), so ``-1,1`` is refused with "expected one argument".
    A value that starts with one dash (not ``--``, not ``-h``) following ``--classes``, or a
    prefix of it that argparse accepts, is attached to it with ``=``, which argparse reads as the
    value whatever it looks like.
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
        if (len(arg) >= 3 and option.startswith(arg) and following is not None
                and following.startswith("-") and not following.startswith("--")
                and following != "-h"):
            out.append(f"{arg}={following}")
            i += 2
            continue
        out.append(arg)
        i += 1
    return out


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
        description="Fit one solver on a data file (.csv with the label in the last column, "
                    ".npz with arrays X and y or a scipy.sparse save_npz matrix with y, or .npy "
                    "with --labels) and write the released "
                    "parameters and their privacy report as JSON.")
    solve.add_argument("--data", required=True, help="the data file")
    solve.add_argument("--labels", default=None, help="labels file (.npy or .csv) if separate")
    solve.add_argument("--loss", default="logistic",
                       help="logistic, hinge, huber_hinge, squared or multinomial")
    from .experiments.sweep import MAX_CLASSES
    solve.add_argument("--classes", default=None, metavar="C0,C1,...",
                       help="the public label set, comma-separated: for the binary losses the "
                            "negative then the positive label (default: labels -1/+1 or 0/1), "
                            "for multinomial the K classes in order; chosen without looking at "
                            "the data (negative labels work as they are: --classes -1,1)")
    solve.add_argument("--n-classes", type=int, default=None, metavar="K",
                       help="multinomial: K classes labelled 0..K-1 (instead of --classes), "
                            f"2 <= K <= {MAX_CLASSES}")
    from .solvers import registry
    single = [spec.name for spec in registry() if spec.partition is None]
    solve.add_argument("--solver", default="clipped_gd",
                       help=f"{', '.join(single)} or auto (the smallest utility bound, chosen "
                            "from public constants only; default clipped_gd)")
    solve.add_argument("--epsilon", type=_real("epsilon", 0.0), required=True,
                       help="epsilon > 0")
    solve.add_argument("--delta", type=_real("delta", 0.0, 1.0), default=None,
                       help="delta in (0, 1) (omit for the pure-DP solvers)")
    solve.add_argument("--radius", type=_radius, default="1.0",
                       help="radius of the parameter ball, > 0, or 'none' (then --reg > 0)")
    solve.add_argument("--reg", type=_real("reg", 0.0, low_inclusive=True), default=0.0,
                       help="L2 regularisation lambda >= 0")
    solve.add_argument("--row-norm", type=_real("row_norm", 0.0), default=1.0,
                       help="public bound B > 0 on the row norms (rows above it are clipped)")
    solve.add_argument("--fit-intercept", action="store_true",
                       help="fit an intercept: a constant feature of value --intercept-scale is "
                            "appended after clipping, and the row bound becomes "
                            "sqrt(B^2 + s^2) (docs/intercepts.md)")
    solve.add_argument("--intercept-scale", type=_real("intercept_scale", 0.0), default=None,
                       metavar="S",
                       help="the intercept's constant feature s > 0 (default 1; needs "
                            "--fit-intercept)")
    solve.add_argument("--seed", type=_integer(0, subject="seeds are integers"), default=None,
                       help="random seed, an integer >= 0 (default: fresh)")
    solve.add_argument("--secure", action="store_true",
                       help="noise from the operating system's entropy (no --seed), theta "
                            "rounded to a 2**-32 grid: for releasing a model (docs/secure_noise.md)")
    solve.add_argument("--out", default="-", help="where to write the JSON (default stdout)")


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
    """``dpsolve solve``: the options checked, the data read, one solver fitted, and its
    released parameters and privacy report written as JSON; returns the exit status."""
    import json
    import warnings

    from .experiments.runs import check_class_memory, load_file
    from .solvers import registry

    solvers = {spec.name: spec.function for spec in registry() if spec.partition is None}
    loss, radius, intercept = _solve_options(parser, args, solvers)
    classes, label_set = _solve_classes(parser, args, loss)
    # regular files only, checked before load_file opens them: a named pipe would block it
    _input_file(args.data, "--data")
    if args.labels is not None:
        _input_file(args.labels, "--labels")
    try:
        X, y = load_file(args.data, args.labels, names=("--data", "--labels"))
        if loss.is_multinomial:
            check_class_memory(X.shape[0], X.shape[1] + bool(args.fit_intercept),
                               len(label_set),
                               "--n-classes" if args.n_classes is not None else "--classes")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            problem, fit, choice = _fit(args, solvers, X, y, radius, classes, intercept)
    except (OSError, ValueError, TypeError) as exc:
        return _fail(_solve_message(exc))
    except (ArithmeticError, MemoryError) as exc:      # not the input's fault: status 1
        print(f"dpsolve: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    for w in caught:            # shown to the data holder, never written to the output
        print(f"warning: {w.message}", file=sys.stderr)

    text = json.dumps(_solve_report(problem, fit, choice), indent=2, default=_plain)
    return _write_output(args, text)


#: The library's names of ``solve``'s options, which its messages start with.
_SOLVE_OPTIONS = {"epsilon": "--epsilon", "delta": "--delta", "radius": "--radius",
                  "reg": "--reg", "row_norm": "--row-norm",
                  "intercept_scale": "--intercept-scale",
                  "n_classes": "--n-classes", "classes": "--classes", "rng": "--seed"}


def _solve_message(exc):
    """The message of an error raised by the library during ``solve``, led by the option when
    it is about one (``--row-norm: row_norm must lie in [1e-150, 1e+150], ...``): the
    library names its own parameter first, and ranges that depend on the others (the float64
    range of the Problem's constants, a solver's delta) are checked there, not by argparse."""
    from .experiments.sweep import _leading_name

    message = str(exc)
    option = _SOLVE_OPTIONS.get(_leading_name(message))
    return message if option is None else f"{option}: {message}"


def _solve_options(parser, args, solvers):
    """``solve``'s options checked before any work, but for the label set: the noise's
    source, ``--solver`` (one of ``solvers`` or auto), ``--loss``, ``--radius``, the
    intercept and ``--out``. Returns the loss, the radius (None for 'none') and the
    Problem's intercept options."""
    from .losses import LOSSES

    if args.secure and args.seed is not None:
        parser.error("--seed cannot be combined with --secure: secure noise comes from the "
                     "operating system's entropy, never from a seed")
    if args.solver not in solvers and args.solver != "auto":
        parser.error(f"--solver must be 'auto' or one of {sorted(solvers)}, got "
                     f"{args.solver!r}")
    if args.loss not in LOSSES:
        parser.error(f"--loss must be one of {', '.join(LOSSES)}, got {args.loss!r}")
    loss = LOSSES[args.loss]
    radius = args.radius            # a number > 0, or None for 'none' (_radius)
    if args.intercept_scale is not None and not args.fit_intercept:
        parser.error("--intercept-scale needs --fit-intercept")
    intercept = {"fit_intercept": args.fit_intercept}
    if args.intercept_scale is not None:
        intercept["intercept_scale"] = args.intercept_scale
    if args.out != "-":
        _check_output(args.out, "--out")          # before any work: no fit is lost
    return loss, radius, intercept


def _solve_classes(parser, args, loss):
    """``--classes`` and ``--n-classes`` checked against ``loss`` before the data are read.

    Returns ``(classes, label_set)``: the labels given with ``--classes`` (None without
    it) and the loss's public label set.
    """
    from .experiments.sweep import MAX_CLASSES

    classes = None if args.classes is None else _labels(args.classes)
    # the public label set itself must fit: a K far beyond any dataset is refused before it is
    # built (MAX_CLASSES), the rest against the memory once n and p are known
    if args.n_classes is not None and args.n_classes > MAX_CLASSES:
        parser.error(f"--n-classes must be an integer in [2, {MAX_CLASSES}], got "
                     f"{args.n_classes}")
    if classes is not None and len(classes) > MAX_CLASSES:
        parser.error(f"--classes: at most {MAX_CLASSES} labels, got {len(classes)}")
    try:
        # the label set is checked before the data are read
        label_set = loss.public_classes(classes, args.n_classes)
    except (ValueError, TypeError) as exc:
        parser.error(f"--classes / --n-classes: {exc}")
    return classes, label_set


def _fit(args, solvers, X, y, radius, classes, intercept):
    """The Problem on ``(X, y)`` and the chosen solver's fit on it.

    Parameters
    ----------
    args : argparse.Namespace
        ``solve``'s options.
    solvers : dict
        The single-machine solvers by name.
    X, y :
        The records read from ``--data`` (and ``--labels``).
    radius, classes, intercept :
        As :func:`_solve_options` and :func:`_solve_classes` return them.

    Returns
    -------
    tuple
        ``(problem, fit, choice)``; ``choice`` is the rule's choice with ``--solver auto``
        (made from public constants only, :func:`dpsolve.choose_solver`), else None.
    """
    from .problem import Problem

    problem = Problem(X, y, args.loss, radius=radius, reg=args.reg,
                      row_norm=args.row_norm, classes=classes,
                      n_classes=args.n_classes, **intercept)
    options = {} if args.delta is None else {"delta": args.delta}
    if args.secure:
        options["secure"] = True
    choice = None
    if args.solver == "auto":       # from public constants only (choose_solver)
        from .solvers.choose import choose_solver
        choice = choose_solver(problem, args.epsilon, args.delta)
        fit = choice.fit(problem, rng=args.seed, secure=args.secure)
    else:
        fit = solvers[args.solver](problem, args.epsilon, rng=args.seed, **options)
    return problem, fit, choice


def _plain(v):
    """``v`` as the JSON report holds it: a non-finite float as its repr (JSON has no inf
    or nan), a value that is not a str, number, bool or None as its str."""
    import math

    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    return v if isinstance(v, (str, int, float, bool, type(None))) else str(v)


def _solve_report(problem, fit, choice):
    """The JSON report of a ``solve``: the released parameters, their privacy, the noise,
    the settings, the rule that chose the solver (if ``choice``) and the problem's public
    description."""
    report = {
        "solver": fit.solver, "source": fit.source, "loss": problem.loss,
        "classes": None if problem.classes is None else list(problem.classes),    # public
        "theta": fit.theta.tolist(),
        **_split(problem, fit.theta),
        "privacy": {"epsilon": fit.epsilon, "delta": fit.delta, "calibration": fit.calibration,
                    "neighbours": fit.neighbours,
                    "certified_epsilon": fit.privacy.certified_epsilon,
                    "certified_by": fit.privacy.certified_by, "dp_event": str(fit.dp_event)},
        "noise": dict(fit.noise), "steps": fit.steps,
        "settings": {k: _plain(v) for k, v in fit.settings.items()},
        **({} if choice is None else {"chosen_by": {
            "rule": "smallest bound from public constants (dpsolve.choose_solver)",
            "bound": choice.bound, "bound_name": choice.bound_name}}),
        "problem": {k: _plain(v) for k, v in problem.describe().items()},
    }
    return report


def _write_output(args, text):
    """Write ``text`` to ``--out`` (stdout for ``-``); returns the exit status."""
    if args.out == "-":
        print(text)
    else:
        with _writing("--out", args.out), open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        print(f"theta and its privacy report written to {args.out}", file=sys.stderr)
    return 0


def _split(problem, theta):
    """``{"coef", "intercept"}`` of the JSON report with an intercept (the effective offset,
    ``problem.split_theta``), else nothing."""
    if not problem.fit_intercept:
        return {}
    coef, intercept = problem.split_theta(theta)
    return {"coef": coef.tolist(),
            "intercept": intercept.tolist() if hasattr(intercept, "tolist") else intercept}


def _labels(text):
    """``--classes`` as label values: each comma-separated item an int, else a float, else the
    string itself (labels read from a CSV file are floats, and 5 == 5.0)."""
    values = []
    for item in text.split(","):
        item = item.strip()
        for convert in (int, float, str):
            try:
                values.append(convert(item))
                break
            except ValueError:
                continue
    return values


if __name__ == "__main__":
    sys.exit(main())
