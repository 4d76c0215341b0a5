"""Summaries of a results database: per grid cell, mean excess risk with a 95% confidence
interval and its ratio to the bound; along an axis, the fitted log-log slope with its interval
next to the slopes of the theorem's bound and of the lower bound over the same grid. The excess
risk is the empirical one, or on a population source (``source = "sphere"``) the excess
population risk, as each run's ``measure`` says."""
import csv
import math

import numpy as np
from scipy import stats

from .store import ResultStore


def _rows(source):
    if isinstance(source, (list, tuple)):
        return list(source)
    with ResultStore(source, read_only=True) as store:     # never creates or converts a file
        return store.rows()


def _flat(spec):
    out = {"sweep": spec["sweep"]}
    for part in ("data", "problem", "solver"):
        for key, value in spec[part].items():
            out[f"{part}.{key}"] = value
    return out


def mean_interval(values, level=0.95):
    """Mean and the half-width of its two-sided t confidence interval (nan for one value).

    Parameters
    ----------
    values : array_like of float
        The sample, at least one value.
    level : float, default 0.95
        Confidence level of the interval, in (0, 1).

    Returns
    -------
    mean : float
        The sample mean.
    half_width : float
        ``t_{(1 + level)/2, k-1} s / sqrt(k)`` for k values of sample standard deviation s; nan
        when ``k < 2``.
    """
    values = np.asarray(values, dtype=float)
    mean = float(values.mean())
    if values.size < 2:
        return mean, math.nan
    half = stats.t.ppf(0.5 + level / 2, values.size - 1) * values.std(ddof=1) / math.sqrt(
        values.size)
    return mean, float(half)


def summarize(source, level=0.95):
    """Summarise the runs grid cell by grid cell.

    Parameters
    ----------
    source : str, Path or list of dict
        A results database, opened read only (never created or written), or its rows
        (``ResultStore.rows()``).
    level : float, default 0.95
        Confidence level of the interval on the mean.

    Returns
    -------
    list of dict
        One per cell, sorted by solver then parameters: the parameters (``data.n``,
        ``solver.epsilon``, ...), ``runs``, ``excess_risk`` (mean) and ``ci_half_width`` (its
        t-interval), ``bound``, ``bound_name``, ``ratio_to_bound``, ``lower_bound``,
        ``certified_epsilon`` (mean), ``sigma``, ``reference_gap`` (largest),
        ``wall_time`` (mean), ``objective`` (the mean of F at the releases, with its
        t-interval ``objective_half_width``) and ``optimum`` (F at the cell's theta*, the
        mean over its runs); ``measure``, ``"empirical"`` or ``"population"`` (the excess
        risk is then the excess population risk, and the cell also has
        ``empirical_excess_risk``, the mean excess empirical risk against the sample's theta*,
        and ``excess_risk_error``, the largest quadrature error of a run's population risk).

    Raises
    ------
    StoreError
        If ``source`` is a path that is missing, empty, a directory, or not a results database.
    """
    cells = {}
    for row in _rows(source):
        cells.setdefault(row["cell_id"], []).append(row)
    out = []
    for cell, rows in cells.items():
        risks = [r["result"]["excess_risk"] for r in rows]
        mean, half = mean_interval(risks, level)
        first = rows[0]["result"]
        bound = first.get("bound")
        out.append({
            **_flat(rows[0]["spec"]), "cell_id": cell, "runs": len(rows),
            "excess_risk": mean, "ci_half_width": half,
            "bound": bound, "bound_name": first.get("bound_name"),
            "ratio_to_bound": mean / bound if bound else None,
            "lower_bound": first.get("lower_bound"),
            "certified_epsilon": float(np.mean([r["result"]["certified_epsilon"] for r in rows])),
            "sigma": first.get("sigma"),
            "reference_gap": max(r["result"]["reference_gap"] for r in rows),
            "wall_time": float(np.mean([r["result"]["wall_time"] for r in rows])),
            **_objective(rows, level),
            "measure": first.get("measure", "empirical"),
            **_population_columns(rows),
        })
    params = sorted(k for k in out[0] if "." in k) if out else []
    out.sort(key=lambda c: [_order(c.get(k)) for k in ["solver.name"] + params])
    return out


def _objective(rows, level):
    """F at the releases (mean, t-interval) and at theta* (mean) of one cell's runs: the
    empirical risk each reaches, comparable between problems on the same loss and rows whose
    constraint sets differ (their excess risks are against different theta*)."""
    objective, half = mean_interval([r["result"]["objective"] for r in rows], level)
    return {"objective": objective, "objective_half_width": half,
            "optimum": float(np.mean([r["result"]["optimum"] for r in rows]))}


def _population_columns(rows):
    """A population cell's mean excess empirical risk and largest quadrature error."""
    if rows[0]["result"].get("measure") != "population":
        return {}
    return {"empirical_excess_risk": float(np.mean(
                [r["result"]["empirical_excess_risk"] for r in rows])),
            "excess_risk_error": max(r["result"]["excess_risk_error"] for r in rows)}


def _order(value):
    """Sort numbers numerically, before strings."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, float(value), "")
    return (1, 0.0, str(value))


def fit_slope(x, y, level=0.95):
    """Least-squares slope of ``log y`` on ``log x`` with its two-sided t confidence interval:
    ``(slope, low, high)`` (interval nan with fewer than 3 points).

    Parameters
    ----------
    x, y : array_like of float
        Positive values, at least two points (ValueError otherwise).
    level : float, default 0.95
        Confidence level of the interval, in (0, 1).

    Returns
    -------
    slope : float
        The fitted exponent.
    low, high : float
        The ends of its t-interval (``k - 2`` degrees of freedom for k points); nan with
        fewer than three points.
    """
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    if lx.size < 2:
        raise ValueError("a slope needs at least two points")
    result = stats.linregress(lx, ly)
    if lx.size < 3:
        return float(result.slope), math.nan, math.nan
    half = stats.t.ppf(0.5 + level / 2, lx.size - 2) * result.stderr
    return float(result.slope), float(result.slope - half), float(result.slope + half)


def compare_slope(low, high, target):
    """Where a slope's interval lies against a theorem's slope (a bound's or a rate's).

    Parameters
    ----------
    low, high : float
        The ends of the measured slope's confidence interval (:func:`fit_slope`); nan when the
        fit had too few points.
    target : float
        The theorem's slope over the same grid.

    Returns
    -------
    str or None
        ``"inside"`` if ``low <= target <= high``; ``"flatter"`` if the interval lies on the
        side of ``target`` towards 0 and beyond (the excess risk changes less, in the
        theorem's direction, than the theorem says: below a rising ``target``, above a falling
        one); ``"steeper"`` if it lies on the far side (for a flat ``target = 0``, any
        interval without 0); None if the interval is nan.
    """
    if math.isnan(low) or math.isnan(high):
        return None
    if low <= target <= high:
        return "inside"
    if target == 0.0:
        return "steeper"
    below = high < target
    return "flatter" if below == (target > 0.0) else "steeper"


def slopes(source, axis, level=0.95):
    """Fit the log-log slope of excess risk along one swept parameter.

    Parameters
    ----------
    source : str, Path or list of dict
        A results database, or its rows.
    axis : str
        A numeric parameter, e.g. ``"data.n"``, ``"solver.epsilon"`` or ``"solver.steps"``.
        Runs without it (another dataset's) are left out.
    level : float, default 0.95

    Returns
    -------
    list of dict
        One per group of cells that differ only in ``axis``: the other parameters, ``axis``,
        ``points`` (distinct values), ``slope`` with ``ci_low`` and ``ci_high`` (least squares
        over every run with a positive excess risk, t-interval; nan with fewer than three
        points) and ``bound_slope``, the slope of the bound over the same grid: the exponent
        the theorem predicts there (None if a cell has no bound); ``lower_bound_slope``
        likewise for the lower bound.

    Raises
    ------
    ValueError
        If no run has the parameter ``axis``.
    """
    rows = _rows(source)
    groups = {}
    for row in rows:
        flat = _flat(row["spec"])
        if axis not in flat:
            continue                    # another dataset's run, without this parameter
        key = tuple(sorted((k, str(v)) for k, v in flat.items() if k != axis))
        groups.setdefault(key, []).append((flat[axis], row["result"]))
    if not groups:
        raise ValueError(f"{axis!r} is not a parameter of these runs")
    out = []
    for key, items in groups.items():
        xs = sorted({x for x, _ in items})
        if len(xs) < 2:
            continue
        points = [(x, r["excess_risk"]) for x, r in items if r["excess_risk"] > 0]
        if len({x for x, _ in points}) < 2:
            continue
        slope, low, high = fit_slope([x for x, _ in points], [y for _, y in points], level)
        out.append({**dict(key), "axis": axis, "points": len(xs), "slope": slope,
                    "ci_low": low, "ci_high": high,
                    "bound_slope": _bound_slope(xs, items, "bound"),
                    "lower_bound_slope": _bound_slope(xs, items, "lower_bound")})
    return out


def _bound_slope(xs, items, column):
    """The log-log slope of a bound column over the grid ``xs`` (None if a cell lacks it)."""
    by_x = {x: r.get(column) for x, r in items}
    if not all(by_x[x] for x in xs):
        return None
    return grid_slope(xs, [by_x[x] for x in xs])


def grid_slope(xs, values):
    """The least-squares log-log slope of a theorem's values over the grid points ``xs``:
    exactly 0 where the values are all equal (a term the axis does not enter), which rounding
    in the fit would leave a few ulps off."""
    if len(set(values)) == 1:
        return 0.0
    return fit_slope(xs, values)[0]


def to_csv(cells, path):
    """Write summary cells (or any list of flat dicts) to a CSV file.

    Parameters
    ----------
    cells : list of dict
        The rows, e.g. from :func:`summarize` or :func:`slopes`; the columns are the union of
        their keys, sorted (missing values are left empty).
    path : str or Path
        The file, overwritten.
    """
    keys = sorted({k for c in cells for k in c})
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        writer.writerows(cells)


def to_dataframe(cells):
    """The cells as a pandas DataFrame (needs pandas).

    Parameters
    ----------
    cells : list of dict
        The rows, e.g. from :func:`summarize` or :func:`slopes`.

    Returns
    -------
    pandas.DataFrame
        One row per cell, one column per key.
    """
    import pandas as pd
    return pd.DataFrame(cells)
