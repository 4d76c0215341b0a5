"""Figures of a sweep: excess risk against n, p, epsilon or T on log-log axes, one panel per solver
and loss, with the replicate spread (95% interval), the theorem's bound and the lower bound."""
from pathlib import Path

from .summary import _order

AXES = {"data.n": "number of records n", "data.p": "dimension p",
        "solver.epsilon": "privacy budget ε", "solver.steps": "number of iterations T"}


def _numeric(values):
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _line_label(values):
    """``synthetic, n=1000, p=10, calibration=rdp``: the data source bare, then the others."""
    parts = [str(values["data.source"])] if values.get("data.source") is not None else []
    parts += [f"{k.split('.')[-1]}={v}" for k, v in values.items()
              if k != "data.source" and v is not None]
    return ", ".join(parts)


def plot_sweep(cells, out_dir, formats=("png", "svg")):
    """Write one figure per swept axis among n, p, epsilon and steps.

    Parameters
    ----------
    cells : list of dict
        From :func:`dpsolve.experiments.summarize`.
    out_dir : str or Path
        Created if needed; the figures are ``excess_risk_vs_n.png`` and so on.
    formats : sequence of str, default ("png", "svg")

    Returns
    -------
    list of Path
        The files written.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for axis in AXES:
        values = {c.get(axis) for c in cells if axis in c}
        if len(values) < 2 or not _numeric(values):
            continue
        stem = out_dir / f"excess_risk_vs_{axis.split('.')[-1]}"
        written += plot_axis(cells, axis, [stem.with_suffix(f".{fmt}") for fmt in formats])
    return written


def plot_axis(cells, axis, paths, title=None):
    """Draw mean excess risk against one parameter, on log-log axes.

    One panel per solver and loss, one line per setting of the other varying parameters, with
    the 95% intervals, the theorem's bound (dashed) and the lower bound (dotted).

    Parameters
    ----------
    cells : list of dict
        From :func:`dpsolve.experiments.summarize`; cells without ``axis`` are left out.
    axis : str
        The parameter on the x axis, e.g. ``"data.n"``.
    paths : sequence of str or Path
        Where to save the figure; the format comes from each suffix.
    title : str, optional
        First line of the figure's title (default: the sweep's name).

    Returns
    -------
    list
        ``paths``.

    Raises
    ------
    ValueError
        If no cell has the parameter ``axis``.
    OSError
        If a figure cannot be written; its ``filename`` is the path.
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter

    cells = [c for c in cells if axis in c]
    if not cells:
        raise ValueError(f"no cell has the parameter {axis!r}")
    label = AXES.get(axis, axis)
    panels = sorted({(c["solver.name"], c.get("problem.loss", "")) for c in cells})
    fig = Figure(figsize=(max(6.5, 5.2 * len(panels)), 5.0), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (solver, loss) in zip(axes, panels):
        mine = [c for c in cells if c["solver.name"] == solver
                and c.get("problem.loss", "") == loss]
        others = sorted({k for c in mine for k in c if "." in k and k != axis
                         and len({str(x.get(k)) for x in mine}) > 1})
        groups = {}
        for c in mine:
            groups.setdefault(tuple(c.get(k) for k in others), []).append(c)
        ordered = sorted(groups.items(), key=lambda kv: [_order(v) for v in kv[0]])
        for i, (key, line) in enumerate(ordered):
            line.sort(key=lambda c: c[axis])
            xs = [c[axis] for c in line]
            colour = f"C{i % 10}"
            name = _line_label(dict(zip(others, key))) or solver
            ax.errorbar(xs, [c["excess_risk"] for c in line],
                        yerr=[c["ci_half_width"] if c["ci_half_width"] == c["ci_half_width"]
                              else 0.0 for c in line],
                        marker="o", capsize=3, color=colour, label=name)
            if all(c.get("bound") for c in line):
                ax.plot(xs, [c["bound"] for c in line], "--", color=colour)
            if all(c.get("lower_bound") for c in line):
                ax.plot(xs, [c["lower_bound"] for c in line], ":", color=colour)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ticks = sorted({c[axis] for c in mine})
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(label)
        ax.set_ylabel(_risk_label(mine))
        ax.set_title(f"{solver}, {loss} loss" if loss else solver)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="best", title="measured", title_fontsize=7)
    heading = title or f"sweep {cells[0]['sweep']!r}: mean excess risk, 95% intervals"
    fig.suptitle(f"{heading}\ndashed: the theorem's bound; dotted: the lower bound",
                 fontsize=10)
    _save(fig, paths)
    return list(paths)


def _risk_label(cells):
    """The y axis: the excess empirical risk, or the excess population risk of the cells of a
    population source (``measure = "population"``)."""
    if any(c.get("measure") == "population" for c in cells):
        return "excess population risk L(θ) − min L"
    return "excess risk F(θ) − F(θ*) (mean form)"


def _save(fig, paths):
    """Write ``fig`` to each path, byte-identical for the same results; an OSError names the
    path it failed on."""
    import matplotlib

    # no date and fixed element ids, so the same results give byte-identical files
    with matplotlib.rc_context({"svg.hashsalt": "dpsolve"}):
        for path in paths:
            metadata = {"Date": None} if str(path).lower().endswith((".svg", ".pdf")) else {}
            try:
                fig.savefig(path, dpi=120, metadata=metadata)
            except OSError as exc:
                if exc.filename is not None:
                    raise
                # a failure at the write or the close (no space left on the device) names no
                # file: name the figure, so that a caller can tell which output failed
                raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
