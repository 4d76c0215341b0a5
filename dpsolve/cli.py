"""The ``dpsolve`` command line.

Bad input stops a command before any work with ``dpsolve: error: ...`` on stderr and exit status
2 (argparse's convention), never a traceback: the arguments through argparse, then the sweep file
(every setting of every run, :func:`dpsolve.experiments.load_sweep` and
:func:`~dpsolve.experiments.check_runs`), the data file and the output paths. Messages about the
data (a label outside ``--classes``, a cell of a CSV file that is not a number) are shown to the
data holder who runs the command and are never written to an output or a results database.
"""
import argparse
import os
import sys
from pathlib import Path


def _fail(message):
    """Report bad input found after argument parsing, as argparse does: exit status 2."""
    print(f"dpsolve: error: {message}", file=sys.stderr)
    return 2


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


def _unwritable(path):
    """Why ``path`` cannot be written as a new or replaced file, or None (checked before any
    work, so that a result is never computed and then lost)."""
    path = Path(path)
    if path.is_dir():
        return f"{path} is a directory"
    folder = path.parent
    if not folder.is_dir():
        return f"the folder {folder} does not exist"
    if not os.access(folder, os.W_OK):
        return f"the folder {folder} is not writable"
    return None


def main(argv=None):
    """Run the ``dpsolve`` command given by ``argv`` (default: the command line's
    arguments); returns the exit status."""
    parser = _parser()
    args = parser.parse_args(_attach_values(sys.argv[1:] if argv is None else argv))
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "run":
        return _run(parser, args)
    if args.command == "report":
        return _report(parser, args)
    if args.command == "solve":
        return _solve(parser, args)
    if args.command == "demo":
        return _demo(parser, args)
    return 0


def _demo(parser, args):
    """``dpsolve demo``: its options checked (and the figure's path), then the built-in
    sweep."""
    if args.seeds < 2:
        parser.error("--seeds must be at least 2 (the table reports a confidence interval)")
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    # the outputs before the sweep: a figure is written last
    if args.out and (why := _unwritable(args.out)):
        parser.error(f"--out {args.out}: {why}")
    from .demo import run_demo
    from .experiments import StoreError

    try:
        run_demo(seeds=args.seeds, seed=args.seed, out=args.out, db=args.db, jobs=args.jobs,
                 progress=not args.quiet)
    except StoreError as exc:
        return _fail(f"--db: {exc}")
    return 0


def _parser():
    """The command line's parser: the commands demo, run, report and solve."""
    parser = argparse.ArgumentParser(
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
    demo.add_argument("--seeds", type=int, default=5, help="replicates per setting (default 5)")
    demo.add_argument("--seed", type=int, default=0, help="root random seed (default 0)")
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
    solve.add_argument("--epsilon", type=float, required=True)
    solve.add_argument("--delta", type=float, default=None,
                       help="delta (omit for the pure-DP solvers)")
    solve.add_argument("--radius", default="1.0",
                       help="radius of the parameter ball, or 'none' (then --reg > 0)")
    solve.add_argument("--reg", type=float, default=0.0, help="L2 regularisation lambda")
    solve.add_argument("--row-norm", type=float, default=1.0,
                       help="public bound B on the row norms (rows above it are clipped)")
    solve.add_argument("--fit-intercept", action="store_true",
                       help="fit an intercept: a constant feature of value --intercept-scale is "
                            "appended after clipping, and the row bound becomes "
                            "sqrt(B^2 + s^2) (docs/intercepts.md)")
    solve.add_argument("--intercept-scale", type=float, default=None, metavar="S",
                       help="the intercept's constant feature s > 0 (default 1; needs "
                            "--fit-intercept)")
    solve.add_argument("--seed", type=int, default=None, help="random seed (default: fresh)")
    solve.add_argument("--secure", action="store_true",
                       help="noise from the operating system's entropy (no --seed), theta "
                            "rounded to a 2**-32 grid: for releasing a model (docs/secure_noise.md)")
    solve.add_argument("--out", default="-", help="where to write the JSON (default stdout)")


def _add_pool_options(command):
    command.add_argument("--jobs", type=int, default=None,
                         help="worker processes (default: every core this process may run on)")
    command.add_argument("--quiet", action="store_true", help="no progress bar")


def _run(parser, args):
    from .experiments import StoreError, SweepError, load_sweep, run_sweep
    from .experiments.store import check_database

    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.scheduler is not None and args.jobs is not None:
        parser.error("--jobs is for the local pool; a cluster's workers are its own")
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
    import sqlite3

    from .experiments import ResultStore, StoreError, report_text, summarize, to_csv

    # the outputs first, so that nothing is printed before a refusal
    if args.csv and (why := _unwritable(args.csv)):
        parser.error(f"--csv {args.csv}: {why}")
    if args.plots and Path(args.plots).exists() and not Path(args.plots).is_dir():
        parser.error(f"--plots {args.plots}: exists and is not a directory")
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
        to_csv(cells, args.csv)
        print(f"\ncell summaries written to {args.csv}")
    if args.plots:
        from .experiments import plot_sweep

        for path in plot_sweep(cells, args.plots):
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
        return _fail(str(exc))
    except (ArithmeticError, MemoryError) as exc:      # not the input's fault: status 1
        print(f"dpsolve: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    for w in caught:            # shown to the data holder, never written to the output
        print(f"warning: {w.message}", file=sys.stderr)

    text = json.dumps(_solve_report(problem, fit, choice), indent=2, default=_plain)
    return _write_output(args, text)


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
    try:
        radius = None if args.radius.lower() == "none" else float(args.radius)
    except ValueError:
        parser.error(f"--radius must be a number or 'none', got {args.radius!r}")
    if args.intercept_scale is not None and not args.fit_intercept:
        parser.error("--intercept-scale needs --fit-intercept")
    intercept = {"fit_intercept": args.fit_intercept}
    if args.intercept_scale is not None:
        intercept["intercept_scale"] = args.intercept_scale
    if args.out != "-" and (why := _unwritable(args.out)):
        parser.error(f"--out {args.out}: {why}")          # before any work: no fit is lost
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
        try:
            with open(args.out, "w") as fh:
                fh.write(text + "\n")
        except OSError as exc:
            return _fail(f"--out {args.out}: {exc.strerror or exc}")
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
