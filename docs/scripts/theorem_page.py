"""Generate a theorem-comparison page of the docs from a sweep file.

    python docs/scripts/theorem_page.py docs/sweeps/dpsgd_lipschitz_excess_risk.toml [--jobs 2]
    python docs/scripts/theorem_page.py --all

Runs the sweep (resumable: results go to ``docs/_results/<sweep file>.db``), then writes the
figure(s) to ``docs/figures/<sweep file>_vs_<axis>.{png,svg}`` and the page to
``docs/theorems/<sweep file>.md``: the sweep's title and description, the sweep file itself,
the figure, one table row per grid cell, the fitted log-log slopes next to the bound's over the
same grid with a verdict for each, the same slopes next to the theorem's rate when the sweep
names one (a ``[rate]`` table: a function of ``dpsolve.bounds``, e.g. ``dp_sco_rate`` or
``l1_erm_lower_bound``, and optionally the solvers it is stated for;
:mod:`dpsolve.experiments.rate`), fitted apart on each side of the rate's crossovers where it
is a maximum of terms, and the sweep's discussion. Every number on the page comes from the
results database: with every run of the sweep already there (``docs/_results``), the page is
regenerated without running any.

A sweep whose solvers run on problems of their own (a ``[solver.problem]`` table: another
constraint set, row bound or radius on the same rows) measures each run against the certified
θ* of its own problem, so excess risks of different sets are not comparable as such: its page
also shows F(θ̂) and F(θ*) in every row, and a table of the solvers side by side on each
dataset (excess risk against its own θ*, and F(θ̂), the empirical risk on the same loss and
rows).
A page may gather several sweeps: the parts ``<sweep file>.<part>.toml`` beside the sweep file
(each its own sweep and database, one section of the page, titled by its own ``title``) follow
it on its page (a part without a ``[rate]`` table is checked against the first sweep's), and
``--all`` does not make pages of them. On a population source (``source = "sphere"``) the page
measures the excess population risk and shows the lower bound's slope beside the bound's.
"""
import argparse
import math
import sys
from pathlib import Path

from dpsolve.experiments import load_sweep, plot_axis, run_sweep, slopes, summarize
from dpsolve.experiments.plots import AXES
from dpsolve.experiments.rate_slopes import rate_slopes
from dpsolve.experiments.report import numeric_axes, varying_keys
from dpsolve.experiments.summary import compare_slope

DOCS = Path(__file__).resolve().parent.parent


def _fmt(value, digits=3):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def _label(key):
    return "solver" if key == "solver.name" else key.split(".", 1)[1]


def verdict(fit):
    """One sentence on a slope fit: does its interval contain the bound's slope? Flatter and
    steeper as :func:`dpsolve.experiments.summary.compare_slope` says them."""
    low, high, bound = fit["ci_low"], fit["ci_high"], fit["bound_slope"]
    if bound is None:
        return "no bound to compare with."
    found = compare_slope(low, high, bound)
    if found is None:
        return f"too few points for an interval; the bound's slope is {bound:.2f}."
    if found == "inside":
        return f"the interval contains the bound's slope {bound:.2f}: the scaling matches."
    if bound == 0.0:
        moves = "rises" if low > 0.0 else "falls"
        return (f"steeper than the bound's slope 0 (outside the interval): the excess risk "
                f"{moves} where the bound is flat over this range.")
    moves = "rises" if bound > 0.0 else "falls"
    pace = "more slowly" if found == "flatter" else "faster"
    return (f"{found} than the bound's slope {bound:.2f} (outside the interval): the excess "
            f"risk {moves} {pace} than the bound over this range.")


def own_problems(sweep):
    """Whether some solver of the sweep runs on problems of its own (``[solver.problem]``)."""
    return any("problem" in table for table in sweep.spec["solver"])


def _solver_label(cell, keys):
    """``frank_wolfe (constraint=l1)``: the solver and its own settings among ``keys``."""
    extra = ", ".join(f"{_label(k)}={_fmt(cell.get(k))}" for k in keys if cell.get(k) is not None)
    return cell["solver.name"] + (f" ({extra})" if extra else "")


def _blank_before(lines, section):
    """``section``, after a blank line if ``lines`` does not end with one (a heading right after
    a table would be read as one of its rows)."""
    return ([""] if lines and lines[-1] else []) + section


def side_by_side(cells, varying, level="##"):
    """The solvers side by side on each dataset (and epsilon): each one's excess risk against
    its own θ* and its F(θ̂), and which is lowest by each (``level``: the heading's)."""
    group_keys = [k for k in varying if k.startswith("data.") or k == "solver.epsilon"]
    own_keys = [k for k in varying if k not in group_keys and k != "solver.name"]
    groups = {}
    for c in cells:
        groups.setdefault(tuple(str(c.get(k)) for k in group_keys), []).append(c)
    lines = [f"{level} The solvers side by side", "",
             "Each solver's mean excess risk against the θ* of its own problem (its constraint "
             "set), and the mean empirical risk F(θ̂) it reaches, on the same loss and the same "
             "rows: the excess risks say how close each gets to the best model of its own set; "
             "F(θ̂) compares the models themselves.", ""]
    head = [_label(k) for k in group_keys] + ["solver", "excess risk", "F(θ̂)", "F(θ*)",
                                              "lowest excess risk", "lowest F(θ̂)"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, members in groups.items():
        best_risk = min(members, key=lambda c: c["excess_risk"])
        best_value = min(members, key=lambda c: c["objective"])
        for i, c in enumerate(members):
            lines.append("| " + " | ".join(
                [_fmt(c.get(k)) for k in group_keys]
                + [_solver_label(c, own_keys), _fmt(c["excess_risk"]), _fmt(c["objective"], 4),
                   _fmt(c["optimum"], 4),
                   _solver_label(best_risk, own_keys) if i == 0 else "",
                   _solver_label(best_value, own_keys) if i == 0 else ""]) + " |")
    return lines + [""]


def _population(cells):
    return any(c.get("measure") == "population" for c in cells)


def _measurements(cells, varying, level="##", own=False):
    """The per-cell table (the excess population risk's columns on a population source; with
    ``own``, solvers on problems of their own, F(θ̂) and F(θ*) too)."""
    if _population(cells):
        lines = [f"{level} Measurements", "",
                 "Mean excess population risk L(θ) − min L over the runs with its 95% t-interval "
                 "(L by quadrature: error at most the largest shown, over the runs); the "
                 "solver's population bound and the DP-SCO lower bound as drawn; the mean "
                 "excess empirical risk F(θ) − F(θ*) on the sample beside it; certified ε: what "
                 "the tight accountant certifies for the noise used (mean over runs).", ""]
        columns = [_label(k) for k in varying] + [
            "excess population risk", "± 95%", "bound", "risk / bound", "lower bound",
            "empirical excess risk", "certified ε", "quadrature error"]
        rows = [[_fmt(c.get(k)) for k in varying] + [
            _fmt(c["excess_risk"]), _fmt(c["ci_half_width"], 2), _fmt(c["bound"]),
            _fmt(c["ratio_to_bound"]), _fmt(c["lower_bound"]),
            _fmt(c["empirical_excess_risk"]), _fmt(c["certified_epsilon"]),
            _fmt(c["excess_risk_error"], 1)] for c in cells]
    else:
        lines = [f"{level} Measurements", "",
                 "Mean excess risk F(θ) − F(θ*) (mean form) over the runs with its 95% "
                 "t-interval; the bound and the lower bound as drawn; certified ε: what the "
                 "tight accountant certifies for the noise used (mean over runs); gap: the "
                 "reference minimiser's certified gap (largest over runs).", ""]
        columns = [_label(k) for k in varying] + ["excess risk", "± 95%", "bound",
                                                  "risk / bound", "lower bound", "certified ε",
                                                  "gap"]
        rows = [[_fmt(c.get(k)) for k in varying] + [
            _fmt(c["excess_risk"]), _fmt(c["ci_half_width"], 2), _fmt(c["bound"]),
            _fmt(c["ratio_to_bound"]), _fmt(c["lower_bound"]), _fmt(c["certified_epsilon"]),
            _fmt(c["reference_gap"], 1)] + ([_fmt(c["objective"], 4), _fmt(c["optimum"], 4)]
                                            if own else []) for c in cells]
        columns += ["F(θ̂)", "F(θ*)"] if own else []
    lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(values) + " |" for values in rows]
    names = {c["bound_name"] for c in cells if c.get("bound_name")}
    if names:
        lines += ["", "Bound: " + "; ".join(sorted(names)) + "."]
    return lines


def _scaling(db, cells, varying, level="##"):
    """The fitted slopes along each numeric axis, next to the bound's (and, on a population
    source, the lower bound's)."""
    population = _population(cells)
    lines = ["", f"{level} Scaling", "",
             "Least-squares slope of log excess risk on log of the swept parameter, over every "
             "run (95% t-interval), next to the slope of the bound over the same grid"
             + (" and the lower bound's." if population else "."), ""]
    for axis in numeric_axes(cells):
        fits = slopes(db, axis)
        if not fits:        # no two cells differ in it alone (a row bound set with the solver)
            continue
        others = [k for k in varying if k != axis]
        head = [_label(k) for k in others] + [f"slope along {_label(axis)}", "95% interval",
                                              "bound's slope"]
        head += ["lower bound's slope"] if population else []
        head += ["verdict"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for f in fits:
            lower = [_fmt(f["lower_bound_slope"])] if population else []
            lines.append("| " + " | ".join(
                [_fmt(f.get(k)) for k in others]
                + [f"{f['slope']:.2f}", f"[{_fmt(f['ci_low'])}, {_fmt(f['ci_high'])}]",
                   _fmt(f["bound_slope"])] + lower + [verdict(f)]) + " |")
        lines.append("")
    return lines


def _against_rate(db, cells, varying, rate, level="##"):
    """Along each numeric axis, per solver the rate is stated for: the measured slope with its
    interval next to the rate's over the same cells, with a verdict; each regime's cells
    apart where the rate has several (``[rate]``, :func:`rate_slopes`)."""
    if rate is None:
        return []
    solvers = rate.get("solvers")
    lines = [f"{level} Against the rate", "",
             f"The rate: `dpsolve.bounds.{rate['function']}` at each cell's settings"
             + (f", for {', '.join(f'`{s}`' for s in solvers)}" if solvers else "") + ". "
             "Least-squares slope of log excess risk on log of the swept parameter over every "
             "run (95% t-interval), next to the least-squares slope of the rate over the same "
             "cells, with a verdict: *inside* (the interval contains the rate's slope), "
             "*flatter* (the interval lies on the side of the rate's slope towards 0 and "
             "beyond: the excess risk changes less, in the rate's direction, than the rate), "
             "*steeper* (on the far side; for a flat rate, an interval without 0). Where the "
             "rate is a maximum of terms, the cells where each term is the larger (its regime) "
             "are fitted apart too. The solver's bound's slope over the same cells is beside "
             "it.", ""]
    for axis in numeric_axes(cells):
        fits = rate_slopes(db, axis, rate)
        if not fits:
            continue
        others = [k for k in varying if k != axis]
        head = [_label(k) for k in others] + ["cells", f"slope along {_label(axis)}",
                                              "95% interval", "rate's slope", "verdict",
                                              "bound's slope"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for f in fits:
            lines.append("| " + " | ".join(
                [_fmt(f.get(k)) for k in others]
                + [f"{f['cells']}: {_fmt(f['low'])}–{_fmt(f['high'])}", f"{f['slope']:.2f}",
                   f"[{_fmt(f['ci_low'])}, {_fmt(f['ci_high'])}]", _fmt(f["rate_slope"]),
                   f["verdict"] or "too few points", _fmt(f["bound_slope"])]) + " |")
        lines.append("")
    return lines


def _figures(figures):
    lines = []
    for axis, path in figures:
        lines += [f"![excess risk against {AXES.get(axis, axis)}]"
                  f"(../figures/{path.name})", ""]
    return lines


def _discussion(sweep, cells, varying):
    names = {c["bound_name"] for c in cells if c.get("bound_name")}
    above = [c for c in cells if c["ratio_to_bound"] is not None and c["ratio_to_bound"] > 1]
    lines = ["## Discussion", ""]
    if names:
        lines.append(
            f"The measured mean excess risk is above the bound in {len(above)} of "
            f"{len(cells)} cells" + (" (" + "; ".join(
                ", ".join(f"{_label(k)} = {c.get(k)}" for k in varying) for c in above)
                + ")" if above else "") + ".")
        lines.append("")
    if sweep.text.get("discussion"):
        lines += [sweep.text["discussion"].strip(), ""]
    return lines


def _source(sweep_file):
    rel = Path(sweep_file).resolve().relative_to(DOCS)
    return rel, [f"```{{literalinclude}} ../{rel.as_posix()}", ":language: toml", "```", ""]


def page(sweep, sweep_file, db, figures, parts=()):
    """The page's Markdown: one sweep, or (``parts``: ``(sweep, file, db, figures)`` of each
    part) one section per sweep."""
    if parts:
        return _gathered(sweep, sweep_file, db, figures, parts)
    cells = summarize(db)
    varying = varying_keys(cells)
    rel, include = _source(sweep_file)
    lines = [f"# {sweep.text.get('title', sweep.name)}", "",
             sweep.text.get("description", "").strip(), "",
             f"Generated by `python docs/scripts/theorem_page.py docs/{rel.as_posix()}` "
             f"({len(cells)} grid cells, {cells[0]['runs']} runs each; every number below was "
             "measured in that run). The sweep:", "", *include]
    own = own_problems(sweep)
    lines += _figures(figures)
    lines += _measurements(cells, varying, own=own)
    lines += _scaling(db, cells, varying)
    lines += _against_rate(db, cells, varying, sweep.rate)
    lines += _blank_before(lines, side_by_side(cells, varying)) if own else []
    lines += _discussion(sweep, cells, varying)
    return "\n".join(lines)


def _gathered(sweep, sweep_file, db, figures, parts):
    """A page of several sweeps: the first one's title, description and discussion, and a
    section for each."""
    rel, _ = _source(sweep_file)
    sections = [(sweep, sweep_file, db, figures), *parts]
    runs = sum(len(summarize(d)) * summarize(d)[0]["runs"] for _, _, d, _ in sections)
    lines = [f"# {sweep.text.get('title', sweep.name)}", "",
             sweep.text.get("description", "").strip(), "",
             f"Generated by `python docs/scripts/theorem_page.py docs/{rel.as_posix()}`, which "
             f"runs the {len(sections)} sweeps below ({runs} runs; every number below was "
             "measured in them).", ""]
    every = []
    for part, part_file, part_db, part_figures in sections:
        cells = summarize(part_db)
        varying = varying_keys(cells)
        every += cells
        lines += [f"## {part.text.get('title', part.name)}", "",
                  f"{len(cells)} grid cells, {cells[0]['runs']} runs each. The sweep:", "",
                  *_source(part_file)[1]]
        own = own_problems(part)
        lines += _figures(part_figures)
        lines += _measurements(cells, varying, "###", own)
        lines += _scaling(part_db, cells, varying, "###")
        # a part states its own rate, or checks the page's
        lines += _against_rate(part_db, cells, varying, part.rate or sweep.rate, "###")
        lines += _blank_before(lines, side_by_side(cells, varying, "###")) if own else []
    lines += _discussion(sweep, every, varying_keys(every))
    return "\n".join(lines)


def _run(sweep_file, jobs, progress):
    """Run one sweep file (resumable) and draw its figures: ``(sweep, file, db, figures)``."""
    sweep_file = Path(sweep_file)
    stem = sweep_file.stem
    db = DOCS / "_results" / f"{stem}.db"
    db.parent.mkdir(exist_ok=True)
    sweep = load_sweep(sweep_file)
    run_sweep(sweep, db, jobs=jobs, progress=progress)
    cells = summarize(db)
    figures = []
    for axis in numeric_axes(cells):
        if axis not in AXES:
            continue
        # a part's stem has a dot, which with_suffix would take for a suffix
        base = DOCS / "figures" / f"{stem.replace('.', '_')}_vs_{_label(axis)}"
        paths = [base.with_suffix(".png"), base.with_suffix(".svg")]
        plot_axis(cells, axis, paths, title=sweep.text.get("title"))
        figures.append((axis, paths[1]))
    return sweep, sweep_file, db, figures


def parts_of(sweep_file):
    """The part files ``<stem>.<part>.toml`` gathered on ``sweep_file``'s page, by name."""
    sweep_file = Path(sweep_file)
    return sorted(sweep_file.parent.glob(f"{sweep_file.stem}.*.toml"))


def generate(sweep_file, jobs=None, progress=True):
    main = _run(sweep_file, jobs, progress)
    parts = [_run(part, jobs, progress) for part in parts_of(sweep_file)]
    out = DOCS / "theorems" / f"{Path(sweep_file).stem}.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(page(*main, parts=parts))
    print(f"wrote {out.relative_to(DOCS.parent)}", file=sys.stderr)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sweeps", nargs="*", help="sweep files (TOML)")
    parser.add_argument("--all", action="store_true",
                        help="every sweep in docs/sweeps that has a title")
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args(argv)
    files = list(args.sweeps)
    if args.all:
        # a part (<stem>.<part>.toml) is on its sweep's page
        files += [str(p) for p in sorted((DOCS / "sweeps").glob("*.toml"))
                  if "." not in p.stem and load_sweep(p).text.get("title")]
    if not files:
        parser.error("name a sweep file, or --all")
    for f in files:
        generate(f, jobs=args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
