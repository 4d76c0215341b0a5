"""``dpsolve solve``: one private model fitted on a data file, at the estimators' defaults.

The command builds the estimator of its loss
(:class:`~dpsolve.estimators.DPLogisticRegression` for the logistic and multinomial losses,
:class:`~dpsolve.estimators.DPLinearSVC` for the huber hinge,
:class:`~dpsolve.estimators.DPLinearRegression` for the squared loss, the same lifecycle for the
hinge) from its options and fits it, so that an option left out takes the estimator's default
and the command and the estimators cannot drift apart: the solver chosen by
:func:`dpsolve.choose_solver` from public constants, the ridge of ``reg="auto"``
(:mod:`dpsolve.tuning`), no constraint, an intercept centred on the private base rate
(classification) or the labels' private mean (regression, AdaSSP; Wang 2018), pure ε-DP
unless ``--delta`` is given. A bound not given (``--row-norm``, ``--classes``,
``--label-bound``) is read off the data with the estimators' PrivacyWarning, shown on stderr,
and the output then says that no guarantee holds.

The JSON written holds the solver's release (``theta``), the model's coefficients and
intercept, the privacy delivered (the model's: the private base rate's share composed in), the
solver's settings, the choice (with ``--solver auto``), the estimator's settings and the
problem's public description. ``privacy.ledger`` lists each release the model's privacy
composes (its ``privacy_report_.steps``: the fit, each private bound, each private
preprocessing step), with its epsilon, delta and DpEvent. Nothing in it is read off the data
beyond n and p, unless a bound was not given (``privacy.read_off_the_data`` names it).
"""
import json
import sys
import warnings

import numpy as np

from ._cli_files import _check_output, _fail, _input_file, _writing


def solve(parser, args):
    """``dpsolve solve``: the options checked, the data read, the estimator of the loss
    fitted, and its release and privacy report written as JSON; returns the exit status."""
    from .experiments.runs import check_class_memory, load_file

    loss = _check_options(parser, args)
    if args.schema is not None:
        return _solve_table(parser, args, loss)
    label_set = _check_classes(parser, args, loss)
    # regular files only, checked before load_file opens them: a named pipe would block it
    _input_file(args.data, "--data")
    if args.labels is not None:
        _input_file(args.labels, "--labels")

    def fit():
        X, y = load_file(args.data, args.labels, names=("--data", "--labels"))
        if loss.is_multinomial:
            check_class_memory(X.shape[0], X.shape[1] + bool(args.fit_intercept),
                               len(label_set),
                               "--n-classes" if args.n_classes is not None else "--classes")
        estimator = _estimator(args, loss, label_set)
        estimator.fit(X, y)
        return estimator, X, y, {}

    return _fit_and_report(args, fit)


def _fit_and_report(args, fit):
    """Run ``fit()`` (which reads the data and returns the fitted estimator, the rows it saw
    and entries to add to the report), then write the JSON report; returns the exit status.
    A library error is the input's (status 2, led by its option) unless arithmetic or memory
    failed (status 1). The warnings
    are shown to the data holder on stderr, each once (the estimator's plan builds its
    Problem more than once), and never written to the output."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            estimator, X, y, extra = fit()
        problem, share, choice = _fitted_problem(estimator, X, y)
    except (OSError, ValueError, TypeError) as exc:
        return _fail(_message(exc, args))
    except (ArithmeticError, MemoryError) as exc:      # not the input's fault: status 1
        print(f"dpsolve: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    for message in dict.fromkeys(str(w.message) for w in caught):
        print(f"warning: {message}", file=sys.stderr)
    report = {**_report(args, estimator, problem, share, choice), **extra}
    return _write_output(args, json.dumps(report, indent=2, default=_plain))


def _solve_table(parser, args, loss):
    """``solve --schema``: a raw CSV table (numbers in their units, categories, missing
    cells) mapped by the preprocessing its public schema defines
    (:class:`dpsolve.preprocessing.schema.Schema`), the row bound taken from it
    (:func:`dpsolve.preprocessing.private_pipeline`), the label set or range from the schema's
    ``[label]``; then as :func:`solve`."""
    schema, label_set = _check_schema(parser, args, loss)
    _input_file(args.data, "--data")
    if schema.label_range is not None:
        args.label_bound = schema.label_range

    def fit():
        from .preprocessing import private_pipeline
        X, y = _read_table(args.data, schema)
        pipeline = private_pipeline(schema.preprocess(), _estimator(args, loss, label_set))
        pipeline.fit(X, y)
        features = [str(f) for f in pipeline[:-1].get_feature_names_out()]
        return pipeline[-1], pipeline[:-1].transform(X), y, {"schema": {
            "path": str(args.schema), "label": schema.label_column, "features": features}}

    return _fit_and_report(args, fit)


def _check_schema(parser, args, loss):
    """``--schema`` read and checked with the options before the table is read: the schema
    gives the label set or range and the row bound, so ``--classes``, ``--n-classes``,
    ``--label-bound``, ``--row-norm`` and ``--labels`` are refused beside it. Returns the
    schema and the public label set (None for regression)."""
    from .preprocessing.schema import Schema

    for option, value in (("--labels", args.labels), ("--classes", args.classes),
                          ("--n-classes", args.n_classes), ("--label-bound", args.label_bound),
                          ("--row-norm", args.row_norm)):
        if value is not None:
            parser.error(f"{option} cannot be combined with --schema: the schema's [label] "
                         "table and column ranges give the label set, the label range and the "
                         "row bound")
    _input_file(args.schema, "--schema")
    try:
        schema = Schema.from_toml(args.schema)
    except (OSError, ValueError) as exc:
        parser.error(f"--schema: {exc}")
    if loss.classification and schema.classes is None:
        parser.error(f"--schema: --loss {args.loss} needs the label's classes ([label].classes "
                     "= [...]), not a range")
    if not loss.classification and schema.label_range is None:
        parser.error(f"--schema: --loss {args.loss} needs the label's range ([label].range = "
                     "[low, high]), not classes")
    if schema.classes is None:
        return schema, None
    try:
        return schema, loss.public_classes(schema.classes, None)
    except (ValueError, TypeError) as exc:
        parser.error(f"--schema: [label].classes: {exc}")


def _read_table(path, schema):
    """The CSV table at ``path`` as ``(features, labels)``: a DataFrame of the schema's columns
    and the label column's values, after checking the header against the schema."""
    try:
        import pandas as pd
    except ModuleNotFoundError:
        raise ValueError("--schema reads the table with pandas: pip install pandas") from None
    table = pd.read_csv(path)
    schema.check_table(table.columns)
    return table[list(schema.columns)], table[schema.label_column].to_numpy()


#: The library's names of ``solve``'s options, which its messages start with.
_OPTIONS = {"epsilon": "--epsilon", "delta": "--delta", "radius": "--radius",
            "reg": "--reg", "row_norm": "--row-norm", "label_bound": "--label-bound",
            "prior_share": "--prior-share", "solver": "--solver",
            "intercept_scale": "--intercept-scale",
            "n_classes": "--n-classes", "classes": "--classes", "rng": "--seed"}


def _message(exc, args):
    """The message of an error raised by the library during ``solve``, led by the option when
    it is about one (``--row-norm: row_norm must lie in [1e-150, 1e+150], ...``): the
    library names its own parameter first, and ranges that depend on the others (the float64
    range of the Problem's constants, a solver's delta) are checked there, not by argparse. A
    named solver that needs a delta none was given for gets the options that fix it."""
    from .experiments.sweep import _leading_name

    message = str(exc)
    # "row_norm**2 + intercept_scale**2 must be ..." is about row_norm too
    option = _OPTIONS.get(_leading_name(message.replace("**", " ")))
    if option is None and args.delta is None and args.solver != "auto" and "delta" in message:
        return (f"--solver {args.solver}: {message}; give --delta (well below 1/n), or leave "
                "--solver at auto, which chooses among the pure epsilon-DP solvers")
    return message if option is None else f"{option}: {message}"


def _check_options(parser, args):
    """``solve``'s options checked before any work, but for the label set: the noise's
    source, ``--solver`` (a single-machine solver or auto), ``--loss``, the intercept,
    ``--label-bound`` and ``--out``. Returns the loss (a :class:`~dpsolve.losses.Loss`)."""
    from .losses import LOSSES
    from .solvers import registry

    solvers = sorted(spec.name for spec in registry() if spec.partition is None)
    if args.secure and args.seed is not None:
        parser.error("--seed cannot be combined with --secure: secure noise comes from the "
                     "operating system's entropy, never from a seed")
    if args.solver not in solvers and args.solver != "auto":
        parser.error(f"--solver must be 'auto' or one of {solvers}, got {args.solver!r}")
    if args.loss not in LOSSES:
        parser.error(f"--loss must be one of {', '.join(LOSSES)}, got {args.loss!r}")
    loss = LOSSES[args.loss]
    if args.intercept_scale is not None and not args.fit_intercept:
        parser.error("--intercept-scale is the intercept's constant feature: it needs "
                     "--fit-intercept (the default), not --no-fit-intercept")
    if args.label_bound is not None and loss.classification:
        parser.error(f"--label-bound bounds the labels of --loss squared, not of --loss "
                     f"{args.loss} (whose labels are --classes)")
    if args.out != "-":
        _check_output(args.out, "--out")          # before any work: no fit is lost
    return loss


def _check_classes(parser, args, loss):
    """``--classes`` and ``--n-classes`` checked against ``loss`` before the data are read.

    Returns the public label set (a tuple; None for the squared loss, and for a binary loss
    without ``--classes``: the estimator then takes the labels present, with its
    PrivacyWarning).
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
    if classes is None and args.n_classes is None:
        return None
    return label_set


def _estimator_class(loss):
    """The estimator that fits ``loss``: the one whose loss it is, or that takes it as its
    multinomial form."""
    from .estimators import DPLinearRegression, DPLinearSVC, DPLogisticRegression
    from .estimators.classifiers import _DPHingeClassifier

    for cls in (DPLogisticRegression, DPLinearSVC, DPLinearRegression, _DPHingeClassifier):
        if cls._loss == loss.name or (loss.is_multinomial and getattr(cls, "_multinomial",
                                                                      False)):
            return cls
    raise ValueError(f"loss={loss.name!r} has no estimator")      # pragma: no cover


def _estimator(args, loss, label_set):
    """The estimator of ``loss`` with ``solve``'s options; an option not given keeps the
    estimator's default."""
    cls = _estimator_class(loss)
    params = {"epsilon": args.epsilon, "delta": 0.0 if args.delta is None else args.delta,
              "solver": args.solver, "reg": args.reg, "radius": args.radius,
              "row_norm": args.row_norm, "fit_intercept": args.fit_intercept,
              "prior_share": args.prior_share, "secure": args.secure,
              "random_state": args.seed}
    if args.intercept_scale is not None:
        params["intercept_scale"] = args.intercept_scale
    accepted = cls().get_params()
    if "classes" in accepted and label_set is not None:
        params["classes"] = list(label_set)
    if "label_bound" in accepted:
        params["label_bound"] = args.label_bound
    return cls(**params)


def _fitted_problem(estimator, X, y):
    """The Problem the fit ran on, the private prior's share of epsilon and the solver's
    choice (None for a named solver): the estimator's own plan again, from public constants
    only (no noise drawn, nothing released; its warnings were shown by the fit)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        validated = estimator._validated(X, y)
        problem, _, _, share, choice = estimator._prepare_with_choice(*validated[:5])
    return problem, share, choice


def _plain(v):
    """``v`` as the JSON report holds it: a non-finite float as its repr (JSON has no inf
    or nan), a value that is not a str, number, bool or None as its str."""
    import math

    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    return v if isinstance(v, (str, int, float, bool, type(None))) else str(v)


def _report(args, estimator, problem, share, choice):
    """The JSON report of a ``solve``: the solver's release, the model's coefficients, the
    privacy delivered, the noise, the settings, the rule that chose the solver (if
    ``choice``), the estimator's settings and the problem's public description."""
    fit = estimator.fit_
    classes = getattr(estimator, "classes_", None)
    report = {
        "solver": fit.solver, "source": fit.source, "loss": problem.loss,
        "classes": None if classes is None else classes.tolist(),
        "theta": fit.theta.tolist(),
        **_coefficients(estimator, problem),
        "privacy": {"epsilon": fit.epsilon, "delta": fit.delta, "calibration": fit.calibration,
                    "neighbours": fit.neighbours, "holds": fit.privacy.holds,
                    # "inf" where a bound was read off the data (JSON has no inf)
                    "certified_epsilon": _plain(fit.privacy.certified_epsilon),
                    "certified_by": fit.privacy.certified_by, "dp_event": str(fit.dp_event),
                    "read_off_the_data": estimator._derived_bounds(),
                    "ledger": _ledger(estimator.privacy_report_)},
        "noise": dict(fit.noise), "steps": fit.steps,
        "settings": {k: _plain(v) for k, v in fit.settings.items()},
        **({} if choice is None else {"chosen_by": {
            "rule": "smallest bound from public constants (dpsolve.choose_solver)"
                    + (", at the ridge of dpsolve.tuning.choice_reg" if args.reg == "auto"
                       else ""),
            "bound": choice.bound, "bound_name": choice.bound_name}}),
        "model": _model(estimator, share),
        "problem": {k: _plain(v) for k, v in problem.describe().items()},
    }
    return report


def _ledger(report):
    """The report's ledger as the JSON holds it: each release the model's privacy composes
    (the fit, each private bound, each private preprocessing step), with its epsilon
    (``"inf"`` for a bound read off the data), delta and DpEvent."""
    return [{"name": step.name, "epsilon": _plain(step.epsilon), "delta": step.delta,
             "dp_event": str(step.dp_event)} for step in report.steps]


def _model(estimator, share):
    """The estimator's settings as the fit resolved them: the ridge ``reg="auto"`` chose, the
    row bound, the prior's share of epsilon."""
    model = {"estimator": type(estimator).__name__, "solver_": estimator.solver_,
             "reg": _plain(estimator.reg), "reg_": estimator.reg_,
             "row_norm_": estimator.row_norm_, "prior_share": _plain(estimator.prior_share),
             "prior_share_": share, "fit_intercept": estimator.fit_intercept,
             "intercept_scale": estimator.intercept_scale,
             "epsilon_": _plain(estimator.epsilon_), "delta_": estimator.delta_}
    if hasattr(estimator, "label_bound_"):
        model["label_bound_"] = estimator.label_bound_
    return model


def _coefficients(estimator, problem):
    """``{"coef", "intercept"}`` of the JSON report with an intercept: the model's
    ``coef_`` (shape (p,), or (p, K) as ``theta``) and ``intercept_`` (for regression, the
    labels' private mean and the label range's centre included), else nothing."""
    if not problem.fit_intercept:
        return {}
    coef = estimator.coef_
    coef = coef.reshape(-1) if coef.ndim == 1 or coef.shape[0] == 1 else coef.T
    intercept = [float(v) for v in np.reshape(estimator.intercept_, -1)]
    intercept = intercept[0] if len(intercept) == 1 and coef.ndim == 1 else intercept
    return {"coef": coef.tolist(), "intercept": intercept}


def _write_output(args, text):
    """Write ``text`` to ``--out`` (stdout for ``-``); returns the exit status."""
    if args.out == "-":
        print(text)
    else:
        with _writing("--out", args.out), open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        print(f"theta and its privacy report written to {args.out}", file=sys.stderr)
    return 0


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
