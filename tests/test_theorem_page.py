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


@pytest.mark.parametrize("low, high, bound, said", [
    (0.17, 0.34, 0.46, "flatter than the bound's slope 0.46 (outside the interval): the excess "
                       "risk rises more slowly than the bound"),
    (-0.62, -0.44, -0.88, "flatter than the bound's slope -0.88 (outside the interval): the "
                          "excess risk falls more slowly than the bound"),
    (-1.2, -1.0, -0.88, "steeper than the bound's slope -0.88 (outside the interval): the "
                        "excess risk falls faster than the bound"),
    (0.1, 0.2, 0.0, "the excess risk rises where the bound is flat"),
    (-0.5, -0.4, -0.45, "the interval contains the bound's slope -0.45")])
def test_the_verdict_says_which_way_the_risk_moves(theorem_page, low, high, bound, said):
    assert said in theorem_page.verdict({"ci_low": low, "ci_high": high, "bound_slope": bound})


L1 = {"name": "l1-rated", "replicates": 3,
      "rate": {"function": "l1_erm_lower_bound", "solvers": ["frank_wolfe"]},
      "data": {"source": "zipf", "n": [200, 400, 800], "p": 50, "words": 10, "support": 3,
               "signal": 2.0},
      "problem": {"loss": "logistic", "constraint": "l1", "radius": 5.0, "row_norm": 1.0},
      "solver": [{"name": "frank_wolfe", "epsilon": 1.0, "delta": 1e-6},
                 {"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6,
                  "problem": {"constraint": "l2", "row_norm": 3.1623}}]}


@pytest.mark.slow          # a sweep of 18 runs and its theta*: about 2 s
def test_an_l1_page_checks_frank_wolfe_against_its_rate(theorem_page, tmp_path):
    sweep = load_sweep(L1)
    db = tmp_path / "l1.db"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_sweep(sweep, db, jobs=1, progress=False)
    text = theorem_page.page(sweep, theorem_page.DOCS / "sweeps" / "a.toml", db, [])
    rated = text.split("## Against the rate", 1)[1].split("## The solvers side by side", 1)[0]
    rows = [line for line in rated.splitlines() if line.startswith("| l1 ")]
    assert len(rows) == 1 and "| frank_wolfe | all: 200–800 |" in rows[0]
    assert "clipped_gd" not in rated.split("|---", 1)[1]     # the rate is for the l1 ball
    # (n eps)^(-2/3): the rate's slope along n is -2/3
    assert rows[0].split(" | ")[6] == "-0.667"
