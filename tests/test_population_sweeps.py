"""Sweeps on a population source (``source = "sphere"``, docs/experiments.md): validation, the
excess population risk each run records with the bounds beside it, the summaries; the DP-SCO
lower bound and rate (Bassily-Feldman-Talwar-Thakurta 2019); choose_solver on the population
bounds."""
import dataclasses
import hashlib
import math

import numpy as np
import pytest

import dpsolve
from dpsolve import bounds, experiments
from dpsolve.experiments import SweepError, load_sweep, runs
from dpsolve.experiments.sweep import cell_id, data_seed, run_seed
from dpsolve.population import SphereSource, excess_population_risk
from dpsolve.solvers import plan_fit, run_plan

SPHERE = {
    "name": "sphere", "seed": 2, "replicates": 2,
    "data": {"source": "sphere", "n": [200, 800], "p": 3},
    "problem": {"loss": "logistic", "radius": 1.0},
    "solver": [{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6}],
}


def _with(data=None, problem=None, solver=None):
    return {**SPHERE, "data": {**SPHERE["data"], **(data or {})},
            "problem": {**SPHERE["problem"], **(problem or {})},
            "solver": solver or SPHERE["solver"]}


@pytest.mark.parametrize("spec, key", [
    (_with(data={"p": 2}), r"data\.p = 2: p must be an integer >= 3"),
    (_with(data={"p": 3.5}), r"data\.p = 3\.5"),
    (_with(data={"n": 0}), r"data\.n = 0"),
    (_with(data={"link": "probit"}), r"data\.link = 'probit'"),
    (_with(data={"noise": 0.1}), r"data\.noise: only with link"),
    (_with(data={"link": "linear", "noise": -1.0}), r"data\.noise = -1\.0"),
    (_with(data={"theta0_norm": -0.5}), r"data\.theta0_norm = -0\.5"),
    (_with(data={"margin": 0.1}), r"data\.margin: not a key of source 'sphere'"),
    ({**SPHERE, "data": {"source": "sphere", "p": 4}}, r"data\.n: source 'sphere' needs n"),
    (_with(problem={"loss": "squared"}), r"problem\.loss = 'squared': not with data\.link"),
    (_with(data={"link": "linear"}), r"problem\.loss = 'logistic': not with data\.link"),
    (_with(problem={"loss": "multinomial", "n_classes": 3}), r"problem\.n_classes"),
    (_with(problem={"row_norm": 2.0}), r"problem\.row_norm: not with data\.source"),
    (_with(problem={"fit_intercept": True}), r"problem\.fit_intercept"),
    (_with(problem={"radius": "none", "reg": 0.1}), r'problem\.radius = "none"'),
    (_with(problem={"constraint": "l1"}), r"problem\.constraint = 'l1'"),
    (_with(solver=[{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6,
                    "problem": {"row_norm": 2.0}}]), r"solver\[0\]\.problem\.row_norm: not"),
    (_with(solver=[{"name": "joint_sgd", "owners": 2, "epsilon": 1.0, "delta": 1e-6}]),
     r"solver\[0\]\.name = 'joint_sgd': measures its fits"),
    (_with(data={"theta0_norm": "easy"}), r"data\.theta0_norm = 'easy'"),
    (_with(data={"hard_scale": 2.0}), r'data\.hard_scale: only with theta0_norm = "hard"'),
    (_with(data={"theta0_norm": "hard", "hard_scale": 0.0}), r"data\.hard_scale = 0\.0"),
    (_with(data={"theta0_norm": "hard", "link": "linear"}, problem={"loss": "squared"}),
     r'data\.theta0_norm = "hard": only with link = "logistic"'),
    (_with(data={"theta0_norm": "hard"}, solver=[{"name": "clipped_gd", "epsilon": 1.0}]),
     r"solver\[0\]\.delta: give delta > 0"),
    # ||theta0|| = 0.25 at n = 200, p = 3 (||E[y x]|| = 1/sqrt(200)), below 4 R = 4
    (_with(data={"theta0_norm": "hard"}), r"\|\|theta0\|\| = 0\.\d+ is below 4 R = 4"),
    # the private term sqrt(3 ln(1e6)) / (20 * 0.5) = 0.64 is above ||E[y x]|| <= E|a| = 1/2
    (_with(data={"theta0_norm": "hard", "n": 20}, problem={"radius": 0.01},
           solver=[{"name": "clipped_gd", "epsilon": 0.5, "delta": 1e-6}]),
     r"data\.theta0_norm = \"hard\" at n = 20, p = 3, epsilon = 0\.5.*target must be below"),
])
def test_a_bad_sphere_sweep_names_the_key(spec, key):
    with pytest.raises(SweepError, match=key):
        load_sweep(spec)


def test_the_sphere_data_are_the_sources_sample_from_the_data_seed():
    data = {"source": "sphere", "n": 50, "p": 4, "theta0_norm": 2.0}
    X, y = runs.load_data(data, 7)
    theta0 = np.array([2.0, 0.0, 0.0, 0.0])
    X2, y2 = SphereSource(4, theta0, "logistic").sample(50, data_seed({"data": data}, 7))
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    linear = {"source": "sphere", "n": 50, "p": 4, "link": "linear", "noise": 0.25}
    spec = {"data": linear, "problem": {"loss": "squared", "radius": 1.0}}
    problem = runs.build_problem(spec, 7)
    # the source's public bounds: rows of norm 1, targets within ||theta0|| + noise
    assert problem.row_norm == 1.0 and problem.label_bound == 1.25
    assert np.all(np.abs(problem.y) <= 1.25)


def _replayed_theta(spec, root):
    """The run's released theta, through the same steps as execute."""
    problem = runs.build_problem(spec, root)
    solver, parties, options, _ = runs._prepare(spec, problem)
    rng = run_seed(spec, root)
    plan = runs._plan(solver, problem, parties, options, rng)
    return problem, run_plan(solver, problem, parties, plan, rng).theta


def test_a_sphere_run_records_its_excess_population_risk_and_the_dp_sco_lower_bound():
    spec = load_sweep(SPHERE).runs()[0]
    result = runs.execute(spec, 2)
    problem, theta = _replayed_theta(spec, 2)
    assert hashlib.sha256(theta.tobytes()).hexdigest() == result["theta_sha256"]
    source = SphereSource(3, [1.0, 0.0, 0.0], "logistic")
    expected = excess_population_risk(theta, source, 1.0)
    assert result["measure"] == "population"
    assert result["excess_risk"] == expected.value
    assert result["excess_risk_error"] == expected.error < 1e-8
    assert result["excess_risk"] >= -result["excess_risk_error"]
    # clipped_gd states no population bound; its empirical bound and risk are kept beside
    assert result["bound"] is None and result["bound_name"] is None
    assert result["empirical_bound"] > 0 and "DP-GD" in result["empirical_bound_name"]
    assert result["empirical_excess_risk"] == pytest.approx(
        problem.objective(theta) - result["optimum"])
    assert result["lower_bound"] == bounds.dp_sco_lower_bound(problem, 1.0)


def test_a_solvers_population_bound_is_the_runs_bound(monkeypatch):
    """A solver whose spec sets Hooks.population_bound has it, at the run's plan, as the
    run's bound."""
    seen = []

    def population_bound(problem, partition, plan):
        seen.append((problem.n, partition, plan.target.epsilon))
        return 0.125

    spec = dpsolve.solvers.get("clipped_gd")
    patched = dataclasses.replace(
        spec, hooks=dataclasses.replace(spec.hooks, population_bound=population_bound))
    monkeypatch.setattr(runs, "solver_spec", lambda name: patched)
    result = runs.execute(load_sweep(SPHERE).runs()[0], 2)
    assert result["bound"] == 0.125 and seen == [(200, None, 1.0)]
    assert result["bound_name"] == "clipped_gd: excess population risk bound"


def test_summaries_and_slopes_of_population_runs():
    sweep = load_sweep(SPHERE)
    rows = [{"cell_id": cell_id(spec), "spec": spec, "result": runs.execute(spec, sweep.seed)}
            for spec in sweep.runs()]
    cells = experiments.summarize(rows)
    assert [c["measure"] for c in cells] == ["population", "population"]
    for c in cells:
        mine = [r["result"] for r in rows if r["cell_id"] == c["cell_id"]]
        assert c["excess_risk"] == pytest.approx(np.mean([r["excess_risk"] for r in mine]))
        assert c["empirical_excess_risk"] == pytest.approx(
            np.mean([r["empirical_excess_risk"] for r in mine]))
        assert c["excess_risk_error"] == max(r["excess_risk_error"] for r in mine)
    (fit,) = experiments.slopes(rows, "data.n")
    # at p = 3, epsilon = 1 the lower bound is its 1/sqrt(n) term on both cells
    assert fit["lower_bound_slope"] == pytest.approx(-0.5) and fit["bound_slope"] is None
    assert "population" in experiments.plots._risk_label(cells)


# -- the bounds -----------------------------------------------------------------------------------
def _problem(n=400, p=9, radius=2.0, row_norm=1.5):
    X, y = dpsolve.datasets.make_synthetic(n, p, rng=0)
    return dpsolve.Problem(X, y, "logistic", radius=radius, reg=0.5, row_norm=row_norm)


def test_dp_sco_lower_bound_is_the_larger_of_its_two_terms():
    P = _problem()
    L, D = 1.5, 4.0                 # the loss's own L (no regulariser in L(theta)), D = 2R
    assert bounds.dp_sco_lower_bound(P, 1.0) == pytest.approx(L * D / 20)           # 1/sqrt(n)
    assert bounds.dp_sco_lower_bound(P, 0.001) == pytest.approx(L * D)          # min(1, .) = 1
    assert bounds.dp_sco_lower_bound(P, 0.05) == pytest.approx(L * D * 3 / 20)  # sqrt(p)/(n eps)
    with pytest.raises(ValueError, match="epsilon"):
        bounds.dp_sco_lower_bound(P, 0.0)
    with pytest.raises(TypeError, match="problem"):
        bounds.dp_sco_lower_bound("P", 1.0)
    assert bounds.dp_sco_lower_bound(_problem(radius=None), 1.0) == math.inf


def test_dp_sco_rate_terms_and_crossover():
    rate = bounds.dp_sco_rate(10_000, 50, 0.5, 1e-6, lipschitz=2.0, diameter=3.0)
    log = math.log(1e6)
    assert rate.statistical == pytest.approx(6.0 / 100)
    assert rate.private == pytest.approx(6.0 * math.sqrt(50 * log) / 5000)
    assert rate.rate == max(rate.statistical, rate.private)
    assert rate.crossover_p == pytest.approx(10_000 * 0.25 / log)
    assert not rate.private_dominates
    # at the crossover the two terms are equal; above it the private one is the larger
    at = bounds.dp_sco_rate(10_000, 1, 0.5, 1e-6)
    assert at.private * math.sqrt(at.crossover_p) == pytest.approx(at.statistical)
    assert bounds.dp_sco_rate(10_000, 200, 0.5, 1e-6).private_dominates
    for kwargs, name in [({"n": 0}, "n"), ({"p": 1.5}, "p"), ({"epsilon": -1}, "epsilon"),
                         ({"delta": 1.0}, "delta"), ({"lipschitz": 0.0}, "lipschitz")]:
        args = {"n": 100, "p": 5, "epsilon": 1.0, "delta": 1e-6, **kwargs}
        with pytest.raises((TypeError, ValueError), match=name):
            bounds.dp_sco_rate(args.pop("n"), args.pop("p"), args.pop("epsilon"),
                               args.pop("delta"), **args)


# -- choose_solver on the population bounds ---------------------------------------------------------
def test_choose_solver_compares_population_bounds(monkeypatch):
    P = _problem()
    with pytest.raises(ValueError, match="risk must be one of"):
        dpsolve.choose_solver(P, 1.0, 1e-6, risk="true")
    specs = dpsolve.solvers.registry()
    # stand-ins for the SCO solvers' bounds; noisy_sgd's plan refuses epsilon = 1
    with_bound = {"clipped_gd": 0.3, "output_perturbation": 0.2, "noisy_sgd": 0.01}

    def hooked(spec):
        if spec.name not in with_bound:
            return spec
        value = with_bound[spec.name]
        return dataclasses.replace(spec, hooks=dataclasses.replace(
            spec.hooks, population_bound=lambda problem, partition, plan: value))
    if not any(spec.hooks.population_bound for spec in specs):
        with pytest.raises(ValueError, match="no solver has a bound at epsilon=1, delta=1e-06 on the population risk"):
            dpsolve.choose_solver(P, 1.0, 1e-6, risk="population")
    monkeypatch.setattr(dpsolve.solvers, "registry", lambda: tuple(hooked(s) for s in specs
                                                                   if s.hooks.population_bound
                                                                   is None))
    choice = dpsolve.choose_solver(P, 1.0, 1e-6, risk="population")
    assert (choice.name, choice.bound, choice.risk) == ("output_perturbation", 0.2,
                                                         "population")
    reasons = {c.name: c.reason for c in choice.candidates}
    assert reasons["dp_sgd"] == "states no excess population risk bound"
    assert reasons["clipped_gd"] is None and "epsilon" in reasons["noisy_sgd"]
    assert dpsolve.choose_solver(P, 1.0, 1e-6).risk == "empirical"
    # a sweep's auto on a population source chooses by the population bounds
    sweep = load_sweep(_with(solver=[{"name": "auto", "epsilon": 1.0, "delta": 1e-6}]))
    assert runs.execute(sweep.runs()[0], 2)["chosen_solver"] == "clipped_gd"
    with_bound["clipped_gd"] = None         # now no solver has a population bound there
    with pytest.raises(ValueError, match="on the population risk"):
        runs.execute(sweep.runs()[0], 2)


# -- the theorem page of several sweeps -------------------------------------------------------------
def _stored(sweep, path):
    from dpsolve.experiments.store import ResultStore
    from dpsolve.experiments.sweep import Run
    with ResultStore(path) as store:
        store.register(sweep)
        for spec in sweep.runs():
            store.add(Run.of(spec), runs.execute(spec, sweep.seed))
    return path


def test_a_theorem_page_gathers_its_parts_with_the_rate(tmp_path):
    import importlib.util
    from pathlib import Path
    script = Path(__file__).resolve().parents[1] / "docs" / "scripts" / "theorem_page.py"
    loader = importlib.util.spec_from_file_location("theorem_page", script)
    theorem_page = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(theorem_page)
    main = load_sweep({**SPHERE, "title": "DP-SCO", "discussion": "As measured.",
                       "rate": {"function": "dp_sco_rate"}})
    part = load_sweep({**SPHERE, "name": "sphere-p", "title": "Against p",
                       "data": {"source": "sphere", "n": 200, "p": [3, 6, 12, 24]}})
    sweeps = theorem_page.DOCS / "sweeps"
    text = theorem_page.page(main, sweeps / "a.toml", _stored(main, tmp_path / "a.db"), [],
                             parts=[(part, sweeps / "a.p.toml", _stored(part, tmp_path / "b.db"),
                                     [])])
    assert text.startswith("# DP-SCO\n") and "runs the 2 sweeps below (12 runs" in text
    assert "## DP-SCO" in text and "## Against p" in text and text.count("### Scaling") == 2
    assert "| n | excess population risk | ± 95% |" in text
    # the part has no [rate] of its own: the page's; p* = n eps^2 / ln(1/delta) = 14.5 at
    # n = 200, so p = 3..12 are on the statistical side (a flat rate) and 24 alone above it
    assert text.count("### Against the rate") == 2 and "`dpsolve.bounds.dp_sco_rate`" in text
    part_rate = text.split("## Against p", 1)[1].split("### Against the rate", 1)[1]
    assert "| all: 3–24 |" in part_rate and "| statistical: 3–12 |" in part_rate
    assert "private:" not in part_rate               # one value of p: no slope
    row = next(line for line in part_rate.splitlines() if "statistical: 3–12" in line)
    assert row.split(" | ")[3] == "0"                 # the rate's slope there
    assert text.count("| – |") >= 2                  # clipped_gd states no population bound
    assert text.rstrip().endswith("As measured.")
    (tmp_path / "x.toml").write_text("")
    (tmp_path / "x.b.toml").write_text("")
    (tmp_path / "x.a.toml").write_text("")
    assert [p.name for p in theorem_page.parts_of(tmp_path / "x.toml")] == ["x.a.toml",
                                                                           "x.b.toml"]


@pytest.mark.parametrize("p, target", [(3, 0.05), (16, 0.0224), (64, 0.0297), (128, 0.042)])
def test_the_hard_signal_gives_the_target_correlation(p, target):
    s = dpsolve.population.signal_for_correlation(p, target)
    found = dpsolve.population.label_correlation(p, s)
    assert abs(found.value - target) <= found.error + 1e-12 * target
    # against a Monte Carlo E[y x] of the source's sample (4 standard errors, 1/sqrt(p m) each)
    X, y = SphereSource(p, np.r_[s, np.zeros(p - 1)]).sample(40000, rng=0)
    mean = (y[:, None] * X).mean(axis=0)
    assert abs(mean[0] - target) <= 4 / math.sqrt(p * 40000)


def test_the_hard_instance_follows_the_runs_target_and_keeps_the_data_seed():
    spec = load_sweep(_with(data={"theta0_norm": "hard", "n": 2000, "p": 64},
                            problem={"radius": 0.05},
                            solver=[{"name": name, "epsilon": [0.5, 1.0], "delta": 1e-6}
                                    for name in ("clipped_gd", "noisy_sgd")]))
    by = {}
    for run in spec.runs():
        if run["replicate"] == 0:
            by[(run["solver"]["name"], run["solver"]["epsilon"])] = run
    norms = {key: experiments.sphere.hard_norm(run["data"], experiments.sphere.target(run))
             for key, run in by.items()}
    # the same instance for every solver of a cell; the private term
    # sqrt(64 ln(1e6)) / (2000 * 0.5) = 0.0297 decides it at epsilon = 0.5, 1/sqrt(n) at 1
    assert norms[("clipped_gd", 0.5)] == norms[("noisy_sgd", 0.5)]
    rate = math.sqrt(64 * math.log(1e6)) / 1000
    assert norms[("clipped_gd", 0.5)] == dpsolve.population.signal_for_correlation(64, rate)
    assert norms[("clipped_gd", 1.0)] == dpsolve.population.signal_for_correlation(
        64, 1 / math.sqrt(2000))
    # one data seed, two instances: the labels differ, the rows (drawn first) do not
    low, high = by[("clipped_gd", 0.5)], by[("clipped_gd", 1.0)]
    assert data_seed(low, 2).spawn_key == data_seed(high, 2).spawn_key
    (X0, y0), (X1, y1) = (runs.load_data(r["data"], 2, target=experiments.sphere.target(r))
                          for r in (low, high))
    assert np.array_equal(X0, X1) and not np.array_equal(y0, y1)
    keys = {experiments.sweep.Run.of(run).reference for run in spec.runs()}
    assert len(keys) == 2               # one theta* per instance, shared by the solvers
