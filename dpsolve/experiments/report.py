"""The text report of a results database: per-cell table and log-log slopes, as Markdown."""
from .summary import slopes, summarize

COLUMNS = ["runs", "excess_risk", "ci_half_width", "bound", "ratio_to_bound", "lower_bound",
           "sigma", "certified_epsilon"]


def varying_keys(cells):
    """The parameters (``data.n``, ``solver.epsilon``, ...) that take more than one value."""
    keys = sorted({k for c in cells for k in c if "." in k})
    return [k for k in keys if len({str(c.get(k)) for c in cells}) > 1]


def numeric_axes(cells):
    """Varying parameters whose values are all numbers: the axes a slope can be fitted along."""
    out = []
    for key in varying_keys(cells):
        values = [c[key] for c in cells if key in c]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0
               for v in values):
            out.append(key)
    return out


def _format(value):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def report_text(source, cells=None, columns=None):
    """The report ``dpsolve report`` prints, as Markdown.

    Parameters
    ----------
    source : str, Path or list of dict
        A results database, or its rows.
    cells : list of dict, optional
        ``summarize(source)``, if already computed.
    columns : list of str, optional
        The table's columns (default: the varying parameters, then :data:`COLUMNS`).

    Returns
    -------
    str
        One table row per grid cell and, along each numeric axis, the fitted log-log slope of
        excess risk with its 95% interval next to the bound's slope over the same grid.
    """
    cells = summarize(source) if cells is None else cells
    if not cells:
        return "no runs"
    varying = varying_keys(cells)
    columns = varying + COLUMNS if columns is None else list(columns)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_format(c.get(k)) for k in columns) + " |" for c in cells]
    for axis in numeric_axes(cells):
        fits = slopes(source, axis)
        if not fits:
            continue
        lines.append(f"\nlog-log slope of excess risk along {axis} (95% interval) and the "
                     "bound's over the same grid:")
        for f in fits:
            others = ", ".join(f"{k}={f[k]}" for k in varying if k != axis and k in f) or "all"
            lines.append(f"  {others}: {f['slope']:.3f} [{_format(f['ci_low'])}, "
                         f"{_format(f['ci_high'])}], bound {_format(f['bound_slope'])}")
    return "\n".join(lines)
