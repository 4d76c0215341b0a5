"""The measured slopes against a sweep's declared rate (``[rate]``,
dpsolve.experiments.rate and rate_slopes): the comparison of an interval with a theorem's slope,
slopes known by construction found inside or outside the rate's, each regime of the DP-SCO
rate fitted apart, the rate read from the run's public problem, and the table's checks."""
import math

import numpy as np
import pytest
from scipy import stats

from dpsolve import bounds
from dpsolve.experiments import SweepError, load_sweep
from dpsolve.experiments.rate import check_rate, rate_arguments, rate_function
from dpsolve.experiments.rate_slopes import public_problem, rate_slopes, rate_values
from dpsolve.experiments.runs import build_problem
from dpsolve.experiments.summary import compare_slope, fit_slope
from dpsolve.experiments.sweep import cell_id, run_id

N, EPSILON, DELTA = 2000, 0.5, 1e-6
PS = [8, 16, 32, 64, 128, 256]          # p* = n eps^2 / ln(1/delta) = 36.2: three on each side
RESIDUAL = 0.01                          # each cell's two runs at log risk +- this


@pytest.mark.parametrize("low, high, target, expected", [
    (-0.6, -0.4, -0.5, "inside"), (0.4, 0.6, 0.5, "inside"), (-0.1, 0.1, 0.0, "inside"),
    (-0.4, -0.3, -0.5, "flatter"), (-0.8, -0.6, -0.5, "steeper"),     # falling rate
    (0.2, 0.4, 0.5, "flatter"), (-0.3, -0.1, 0.5, "flatter"), (0.6, 0.9, 0.5, "steeper"),
    (0.1, 0.3, 0.0, "steeper"), (-0.3, -0.1, 0.0, "steeper"),          # flat rate
    (-0.5, -0.5, -0.5, "inside"), (math.nan, math.nan, 0.5, None)])
def test_an_interval_against_a_theorem_slope(low, high, target, expected):
    assert compare_slope(low, high, target) == expected


def _rows(exponent):
    """Two runs per p of excess risk ``rate(p) p^exponent exp(+-RESIDUAL)``: in each cell the
    log residuals cancel, so the least-squares slope over the runs is exactly the rate's (over
    the same cells) plus ``exponent``."""
    rows = []
    for p in PS:
        value = bounds.dp_sco_rate(N, p, EPSILON, DELTA).rate * p ** exponent
        for replicate, sign in enumerate((1.0, -1.0)):
            spec = {"sweep": "synthetic", "replicate": replicate,
                    "data": {"source": "sphere", "n": N, "p": p},
                    "problem": {"loss": "logistic", "radius": 1.0},
                    "solver": {"name": "phased_erm", "epsilon": EPSILON, "delta": DELTA}}
            result = {"excess_risk": value * math.exp(sign * RESIDUAL), "n": N, "p": p,
                      "epsilon": EPSILON, "delta": DELTA, "bound": 3.0 * p ** 0.5}
            rows.append({"run_id": run_id(spec), "cell_id": cell_id(spec), "spec": spec,
                         "result": result})
    return rows


def _half_width(ps):
    """The 95% t half-width of the slope over two runs per p at log residuals +-RESIDUAL."""
    x = np.log(np.repeat(ps, 2))
    sxx = ((x - x.mean()) ** 2).sum()
    return stats.t.ppf(0.975, x.size - 2) * math.sqrt(x.size * RESIDUAL ** 2 / (x.size - 2)
                                                      / sxx)


@pytest.mark.parametrize("exponent, verdicts", [
    (0.0, {"all": "inside", "statistical": "inside", "private": "inside"}),
    (0.3, {"all": "steeper", "statistical": "steeper", "private": "steeper"}),
    (-0.3, {"all": "flatter", "statistical": "steeper", "private": "flatter"})])
def test_known_slopes_against_the_dp_sco_rate(exponent, verdicts):
    fits = {f["cells"]: f for f in rate_slopes(_rows(exponent), "data.p",
                                               {"function": "dp_sco_rate", "solvers": None})}
    assert set(fits) == {"all", "statistical", "private"}
    assert (fits["statistical"]["low"], fits["statistical"]["high"]) == (8, 32)
    assert (fits["private"]["low"], fits["private"]["high"]) == (64, 256)
    # the rate's slopes: flat below p*, sqrt(p) above, the least squares of the max over all
    assert fits["statistical"]["rate_slope"] == 0.0
    assert fits["private"]["rate_slope"] == pytest.approx(0.5, abs=1e-12)
    whole = fit_slope(PS, [bounds.dp_sco_rate(N, p, EPSILON, DELTA).rate for p in PS])[0]
    assert fits["all"]["rate_slope"] == pytest.approx(whole, abs=1e-12)
    for name, fit in fits.items():
        ps = [p for p in PS if fit["low"] <= p <= fit["high"]]
        assert fit["slope"] == pytest.approx(fit["rate_slope"] + exponent, abs=1e-9)
        half = fit["ci_high"] - fit["slope"]
        if name != "all":          # a power law on each side: only the +-RESIDUAL scatter
            assert half == pytest.approx(_half_width(ps), rel=1e-6)
        assert half < 0.3          # so a slope 0.3 away lies outside the interval
        assert fit["verdict"] == verdicts[name], name
        assert fit["bound_slope"] == pytest.approx(0.5, abs=1e-12)


def test_a_rate_for_some_solvers_leaves_the_others_out():
    rows = _rows(0.0)
    other = [{**row, "run_id": row["run_id"] + "x", "cell_id": row["cell_id"] + "x",
              "spec": {**row["spec"], "solver": {**row["spec"]["solver"], "name": "sco_sgd"}}}
             for row in rows]
    fits = rate_slopes(rows + other, "data.p",
                       {"function": "dp_sco_rate", "solvers": ["sco_sgd"]})
    assert {f["solver.name"] for f in fits} == {"sco_sgd"} and len(fits) == 3


def _zipf(constraint, n=60, p=40):
    spec = {"sweep": "l1", "replicate": 0,
            "data": {"source": "zipf", "n": n, "p": p, "words": 5, "support": 3},
            "problem": {"loss": "logistic", "constraint": constraint, "radius": 2.0,
                        "row_norm": 1.0},
            "solver": {"name": "frank_wolfe", "epsilon": 0.5, "delta": 1e-6}}
    return spec, {"n": n, "p": p, "epsilon": 0.5, "delta": 1e-6, "excess_risk": 0.1}


def test_the_rate_reads_the_runs_public_problem():
    spec, result = _zipf("l1")
    public, real = public_problem(spec, result), build_problem(spec, 0)
    assert (public.n, public.p, public.lipschitz, public.diameter) == (
        real.n, real.p, real.lipschitz, real.diameter)
    assert public.X.nnz == 0                        # no row of the data is read
    row = {"run_id": "a", "cell_id": "a", "spec": spec, "result": result}
    value, regime = rate_values([row], {"function": "l1_erm_lower_bound", "solvers": None})["a"]
    assert value == bounds.l1_erm_lower_bound(real, 0.5) == 2.0 * (0.5 * 60) ** (-2 / 3)
    assert regime is None
    # a bound stated for the l1 ball refuses an l2 run, naming the solver and the remedy
    spec, result = _zipf("l2")
    row = {"run_id": "b", "cell_id": "b", "spec": spec, "result": result}
    with pytest.raises(ValueError, match="refuses the runs of 'frank_wolfe'.*rate.solvers"):
        rate_values([row], {"function": "l1_erm_lower_bound", "solvers": None})


SWEEP = {"name": "rated", "replicates": 2,
         "data": {"source": "sphere", "n": [200, 800], "p": 3},
         "problem": {"loss": "logistic", "radius": 1.0},
         "solver": [{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6}]}


@pytest.mark.parametrize("rate, message", [
    ("dp_sco_rate", r"rate: must be a table"),
    ({"function": "dp_sco_rate", "form": "mean"}, r"rate\.form: unknown key"),
    ({}, r"rate\.function must name a function of dpsolve\.bounds, got None"),
    ({"function": "no_such_rate"}, r"got 'no_such_rate'"),
    ({"function": "_max_loss_at_zero"}, r"got '_max_loss_at_zero'"),
    ({"function": "frank_wolfe_bound"}, r"needs 'steps', which a run does not give"),
    ({"function": "dp_sco_rate", "solvers": "clipped_gd"}, r"rate\.solvers: must be a non-empty"),
    ({"function": "dp_sco_rate", "solvers": ["phased_erm"]},
     r"rate\.solvers: 'phased_erm' is not a solver of this sweep")])
def test_a_bad_rate_table_is_refused_naming_the_key(rate, message):
    with pytest.raises(SweepError, match=message):
        load_sweep({**SWEEP, "rate": rate})


def test_the_rate_is_not_part_of_the_runs():
    plain = load_sweep(SWEEP)
    rated = load_sweep({**SWEEP, "rate": {"function": "dp_sco_rate"}})
    assert plain.rate is None and rated.rate == {"function": "dp_sco_rate", "solvers": None}
    assert rated.spec == plain.spec and rated.runs() == plain.runs()
    assert rate_arguments(rate_function("dp_sco_rate")) == (
        "n", "p", "epsilon", "delta", "lipschitz", "diameter")
    assert check_rate({"function": "l1_erm_lower_bound", "solvers": ["a"]}, {"a", "b"}) == {
        "function": "l1_erm_lower_bound", "solvers": ["a"]}
