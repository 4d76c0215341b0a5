"""Figures of a sweep: excess risk against n, p or epsilon on log-log axes, one panel per solver
and loss, with the replicate spread (95% interval), the theorem's bound and the lower bound."""
from pathlib import Path

from .summary import _order

AXES = {"data.n": "number of records n", "data.p": "dimension p",
        "solver.epsilon": "privacy budget ε"}


def _numeric(values):
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def plot_sweep(cells, out_dir, formats=("png", "svg")):
    """Write one figure per swept axis among n, p and epsilon into ``out_dir``; returns the
    paths written. ``cells`` come from :func:`dpsolve.experiments.summarize`."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for axis, label in AXES.items():
        values = {c.get(axis) for c in cells if axis in c}
        if len(values) < 2 or not _numeric(values):
            continue
        panels = sorted({(c["solver.name"], c.get("problem.loss", "")) for c in cells})
        fig = Figure(figsize=(max(6.5, 5.2 * len(panels)), 5.0), layout="constrained")
        axes = fig.subplots(1, len(panels), squeeze=False)[0]
        for ax, (solver, loss) in zip(axes, panels):
            mine = [c for c in cells if c["solver.name"] == solver
                    and c.get("problem.loss", "") == loss]
            others = sorted(k for k in mine[0] if "." in k and k != axis
                            and len({str(c.get(k)) for c in mine}) > 1)
            groups = {}
            for c in mine:
                groups.setdefault(tuple(c.get(k) for k in others), []).append(c)
            ordered = sorted(groups.items(), key=lambda kv: [_order(v) for v in kv[0]])
            for i, (key, line) in enumerate(ordered):
                line.sort(key=lambda c: c[axis])
                xs = [c[axis] for c in line]
                colour = f"C{i % 10}"
                name = ", ".join(f"{k.split('.')[-1]}={v}" for k, v in zip(others, key)) or solver
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
            ax.set_ylabel("excess risk F(θ) − F(θ*) (mean form)")
            ax.set_title(f"{solver}, {loss} loss" if loss else solver)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7, loc="best", title="measured", title_fontsize=7)
        fig.suptitle(f"sweep {cells[0]['sweep']!r}: mean excess risk, 95% intervals\n"
                     "dashed: the theorem's bound; dotted: the lower bound", fontsize=10)
        for fmt in formats:
            path = out_dir / f"excess_risk_vs_{axis.split('.')[-1]}.{fmt}"
            fig.savefig(path, dpi=120)
            written.append(path)
    return written
