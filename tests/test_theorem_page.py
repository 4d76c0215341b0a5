"""docs/scripts/theorem_page.py on a sweep whose solvers run on problems of their own: F(θ̂) and
F(θ*) in the table, and the solvers side by side on each dataset."""
import importlib.util
import warnings
from pathlib import Path

import pytest

from dpsolve.experiments import load_sweep, run_sweep, summarize

SCRIPT = Path(__file__).resolve().parents[1] / "docs" / "scripts" / "theorem_page.py"


@pytest.fixture(scope="module")
def theorem_page():
    spec = importlib.util.spec_from_file_location("theorem_page", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SWEEP = {"name": "two-sets", "replicates": 2,
         "data": {"source": "zipf", "n": 80, "p": [30, 60], "words": 5, "support": 3},
         "problem": {"loss": "logistic", "radius": 1.0, "row_norm": 1.0},
         "solver": [{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6, "steps": 5},
                    {"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6, "steps": 5,
                     "problem": {"radius": 3.0, "row_norm": 2.3}}]}


@pytest.mark.slow          # a sweep of 8 runs and its theta*: about 2 s
def test_page_shows_each_solver_against_its_own_optimum(theorem_page, tmp_path):
    sweep = load_sweep(SWEEP)
    db = tmp_path / "two.db"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_sweep(sweep, db, jobs=1, progress=False)
    cells = summarize(db)
    assert theorem_page.own_problems(sweep)
    sweep_file = theorem_page.DOCS / "sweeps" / "clipped_gd_excess_risk.toml"   # a path in docs
    text = theorem_page.page(sweep, sweep_file, db, [])
    assert "| F(θ̂) | F(θ*) |" in text and "## The solvers side by side" in text
    side = text.split("## The solvers side by side", 1)[1].split("## Discussion", 1)[0]
    rows = [line for line in side.splitlines() if line.startswith("| 30 ") or
            line.startswith("| 60 ")]
    assert len(rows) == 4                 # two solvers' problems on each of the two datasets
    for p in (30, 60):
        mine = [c for c in cells if c["data.p"] == p]
        best = min(mine, key=lambda c: c["objective"])
        label = theorem_page._solver_label(best, ["problem.radius", "problem.row_norm"])
        first = next(r for r in rows if r.startswith(f"| {p} "))
        assert first.rstrip(" |").endswith(label)      # the lowest F(θ̂) is named
        for c in mine:                                   # each against its own theta*
            assert c["objective"] - c["optimum"] == pytest.approx(c["excess_risk"], rel=1e-9)
    assert len({c["optimum"] for c in cells}) == 4


def test_pages_of_one_problem_are_unchanged(theorem_page):
    sweep = load_sweep({**SWEEP, "solver": SWEEP["solver"][:1]})
    assert not theorem_page.own_problems(sweep)
