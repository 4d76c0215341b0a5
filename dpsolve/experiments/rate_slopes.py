"""The measured slopes against the theorem's rate a sweep declares (its ``[rate]`` table,
:mod:`dpsolve.experiments.rate`): along a swept parameter, per solver, the least-squares slope
of log excess risk with its t-interval next to the rate's slope over the same grid cells, with a
verdict; where the rate is a maximum of terms, each regime's cells fitted apart too."""
import warnings

import numpy as np
from scipy import sparse

from .rate import call_rate, rate_arguments, rate_function
from .runs import build_problem
from .summary import _bound_slope, _flat, _rows, compare_slope, fit_slope, grid_slope


def public_problem(spec, result):
    """The run's Problem built from its public settings alone: its data table's options (a
    sphere source's row and label bounds) and problem table on ``n`` rows of zeros with the
    run's number of features. Everything a bound reads of a Problem (n, p, the radius, the row
    bound, the loss, the constraint) is public and the same as the run's own.

    Parameters
    ----------
    spec : dict
        A run spec (as stored).
    result : dict
        Its stored result: gives ``n`` and ``p`` (``p`` with the intercept column, if any).

    Returns
    -------
    Problem
    """
    features = result["p"] - bool(spec["problem"].get("fit_intercept"))
    classes = spec["problem"].get("classes")
    label = classes[0] if classes else (0 if spec["problem"].get("loss") == "multinomial" else 1)
    zeros = sparse.csr_matrix((result["n"], features))
    labels = np.full(result["n"], label)
    return build_problem(spec, 0, data=(zeros, labels))


def _given(spec, result, function):
    """The run's values of the rate function's arguments (its public problem built only if
    the function reads it)."""
    given = {"n": result["n"], "p": result["p"], "epsilon": result["epsilon"],
             "delta": result["delta"]}
    if set(rate_arguments(function)) & {"problem", "lipschitz", "diameter"}:
        problem = public_problem(spec, result)
        given.update(problem=problem, lipschitz=problem.lipschitz, diameter=problem.diameter)
    return given


def rate_values(source, rate):
    """The rate at every run of the solvers it is stated for.

    Parameters
    ----------
    source : str, Path or list of dict
        A results database, or its rows.
    rate : dict
        A checked ``[rate]`` table (:func:`dpsolve.experiments.rate.check_rate`;
        :attr:`Sweep.rate`).

    Returns
    -------
    dict
        ``{run_id: (value, regime)}`` (:func:`~dpsolve.experiments.rate.call_rate`), computed
        once per grid cell.

    Raises
    ------
    ValueError
        If the function refuses a run's settings (a bound stated for another geometry, say),
        naming the solver: ``rate.solvers`` then lists the solvers it is stated for.
    """
    function = rate_function(rate["function"])
    named = rate.get("solvers")
    cells, out = {}, {}
    for row in _rows(source):
        solver = row["spec"]["solver"]["name"]
        if named is not None and solver not in named:
            continue
        if row["cell_id"] not in cells:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    cells[row["cell_id"]] = call_rate(
                        function, _given(row["spec"], row["result"], function))
            except (TypeError, ValueError) as exc:
                raise ValueError(
                    f"rate.function = {rate['function']!r} refuses the runs of {solver!r} "
                    f"({exc}); list the solvers it is stated for in rate.solvers") from None
        out[row["run_id"]] = cells[row["cell_id"]]
    return out


def rate_slopes(source, axis, rate, level=0.95):
    """Fit the log-log slope of excess risk along one swept parameter and compare it with the
    rate's.

    Parameters
    ----------
    source : str, Path or list of dict
        A results database, or its rows.
    axis : str
        A numeric parameter (``"data.n"``, ``"data.p"``, ``"solver.epsilon"``, ...).
    rate : dict
        A checked ``[rate]`` table (:attr:`Sweep.rate`).
    level : float, default 0.95
        Confidence level of the slope's interval.

    Returns
    -------
    list of dict
        For each group of cells of the rate's solvers that differ only in ``axis`` (with two
        or more values of it), one row over all its cells (``cells = "all"``) and, where the
        rate's regime changes along the axis, one per regime with two or more values
        (``cells`` the regime's name): the other parameters, ``axis``, ``low`` and ``high``
        (the cells' range along it), ``points`` (its distinct values), ``slope`` with
        ``ci_low`` and ``ci_high`` (least squares over every run with a positive excess risk,
        t-interval), ``rate_slope`` (the least-squares slope of the rate over the same
        values), ``verdict`` (:func:`~dpsolve.experiments.summary.compare_slope`: inside,
        flatter, steeper, or None without an interval) and ``bound_slope``, the slope of the
        solver's bound over the same values (None where a cell has none).
    """
    values = rate_values(source, rate)
    groups = {}
    for row in _rows(source):
        flat = _flat(row["spec"])
        if axis not in flat or row["run_id"] not in values:
            continue
        key = tuple(sorted((k, str(v)) for k, v in flat.items() if k != axis))
        groups.setdefault(key, []).append((flat[axis], row["result"], *values[row["run_id"]]))
    out = []
    for key, items in groups.items():
        for cells, members in _ranges(items):
            fit = _fit(members, level)
            if fit is not None:
                out.append({**dict(key), "axis": axis, "cells": cells, **fit})
    return out


def _ranges(items):
    """``(name, items)``: every cell of a group, then each regime's, when there are several."""
    regimes = {}
    for item in sorted(items, key=lambda item: item[0]):
        regimes.setdefault(item[3], []).append(item)
    return [("all", items)] + ([(str(name), members) for name, members in regimes.items()]
                               if len(regimes) > 1 else [])


def _fit(items, level):
    """The slope row of one range of a group's runs ``(x, result, rate, regime)``; None with
    fewer than two values of the axis."""
    xs = sorted({x for x, *_ in items})
    points = [(x, result["excess_risk"]) for x, result, *_ in items if result["excess_risk"] > 0]
    if len(xs) < 2 or len({x for x, _ in points}) < 2:
        return None
    slope, low, high = fit_slope([x for x, _ in points], [y for _, y in points], level)
    by_x = {x: value for x, _, value, _ in items}
    rate_slope = grid_slope(xs, [by_x[x] for x in xs])
    return {"low": xs[0], "high": xs[-1], "points": len(xs), "slope": slope, "ci_low": low,
            "ci_high": high, "rate_slope": rate_slope,
            "verdict": compare_slope(low, high, rate_slope),
            "bound_slope": _bound_slope(xs, [(x, result) for x, result, *_ in items], "bound")}
