"""Experiment sweeps: validation, stable ids and seeds, replay, crash-safe resume, summaries, CLI."""
import os
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest
from scipy import stats

import dpsolve
from dpsolve import experiments
from dpsolve.cli import main
from dpsolve.experiments import SweepError, load_sweep

TINY = {
    "name": "tiny", "seed": 3, "replicates": 2,
    "data": {"source": "synthetic", "n": [100, 200], "p": 4},
    "problem": {"loss": "logistic", "radius": 1.0, "reg": 0.05},
    "solver": [{"name": "clipped_gd", "epsilon": [0.5, 2.0], "delta": 1e-6},
               {"name": "output_perturbation", "epsilon": 1.0}],
}


def _with(**changes):
    spec = {k: (dict(v) if isinstance(v, dict) else v) for k, v in TINY.items()}
    for path, value in changes.items():
        table, _, key = path.partition("__")
        if key:
            spec[table][key] = value
        else:
            spec[table] = value
    return spec


# -- validation -------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec,key", [
    (_with(colour="red"), "'colour'"),
    (_with(name=""), "name"),
    (_with(replicates=0), "replicates"),
    (_with(seed=-1), "seed"),
    (_with(data__source="mnist"), "data.source"),
    (_with(data__margin=0.1), "data.margin"),
    (_with(data={"source": "synthetic", "p": 3}), "data.n"),
    (_with(problem__lambda=0.1), "problem.lambda"),
    (_with(data__n=[]), "data.n"),
    (_with(solver=[{"name": "adam", "epsilon": 1.0}]), "solver[0].name"),
    (_with(solver=[{"name": "clipped_gd", "delta": 1e-6}]), "solver[0].epsilon"),
    (_with(solver=[{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6, "clip": 1.0}]),
     "solver[0].clip"),
    (_with(solver=[{"name": "noisy_sgd", "epsilon": 1.0, "delta": 1e-6, "rng": 3}]),
     "solver[0].rng"),
    (_with(solver=[]), "solver"),
    (_with(description=3), "description"),
    (_with(data=[{"source": "synthetic", "n": 100, "p": 4}, {"source": "digits", "n": 5}]),
     "data[1].n"),
    (_with(data=[{"source": "synthetic", "n": [100, 200], "p": 4},
                 {"source": "synthetic", "n": 200, "p": 4}]), "data[1]"),
    (_with(solver=[{"name": "clipped_gd", "epsilon": [0.5, 1.0], "delta": 1e-6},
                   {"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6}]), "solver[1]"),
    (_with(solver=[{"name": "multiparty_gd", "epsilon": 1.0, "delta": 1e-6}]),
     "solver[0].parties"),
    (_with(solver=[{"name": "multiparty_gd", "parties": 1, "epsilon": 1.0, "delta": 1e-6}]),
     "solver[0].parties"),
    (_with(solver=[{"name": "joint_sgd", "owners": [2, 2.5], "epsilon": 1.0, "delta": 1e-6}]),
     "solver[0].owners"),
    (_with(solver=[{"name": "clipped_gd", "parties": 3, "epsilon": 1.0, "delta": 1e-6}]),
     "solver[0].parties"),
    (_with(data__n=[100, 30.5]), "data.n = 30.5"),
    (_with(data__n=True), "data.n = true"),
    (_with(data__noise=-1.0), "data.noise = -1.0"),
    (_with(data={"source": "separable", "n": 100, "p": 3, "margin": 1.0}), "data.margin = 1.0"),
    (_with(data={"source": "file"}), "data.path"),
    (_with(data={"source": "file", "path": 3}), "data.path"),
    (_with(data={"source": "file", "path": "x.npy"}), "data.path x.npy"),
    (_with(problem__loss="bogus"), 'problem.loss = "bogus"'),
    (_with(problem__radius="big"), 'problem.radius = "big"'),
    (_with(problem__radius="none", problem__reg=0.0), 'problem.radius = "none"'),
    (_with(problem__loss=["logistic", "squared"], problem__label_bound=-1),
     "problem.label_bound = -1"),
    (_with(problem__loss="multinomial", problem__n_classes=10 ** 9), "problem.n_classes"),
    (_with(solver=[{"name": "clipped_gd", "epsilon": [1.0, -1.0], "delta": 1e-6}]),
     "solver[0].epsilon = -1.0"),
    (_with(solver=[{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6, "steps": [3, 0]}]),
     "solver[0].steps = 0"),
    (_with(solver=[{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6, "secure": True}]),
     "solver[0].secure"),
    (_with(solver=[{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6, "accountant": 1}]),
     "solver[0].accountant"),
    (_with(problem__classes=5), "problem.classes"),
    (_with(problem__classes=[5]), "problem.classes"),
    (_with(problem__classes=[[5, 7], 9]), "problem.classes"),
    (_with(problem__classes=[5, [7]]), "problem.classes"),
])
def test_bad_sweeps_name_the_key(spec, key):
    with pytest.raises(SweepError, match=key.replace("[", r"\[").replace("]", r"\]")):
        load_sweep(spec)


def test_check_runs_names_the_table_and_the_runs():
    # 50 parties fit the 100 synthetic rows, not the 30 separable ones: found once n is known
    sweep = load_sweep(_with(
        data=[{"source": "synthetic", "n": 100, "p": 4},
              {"source": "separable", "n": 30, "p": 3}],
        solver=[{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6, "steps": 3},
                {"name": "multiparty_gd", "parties": 50, "epsilon": 1.0, "delta": 1e-6,
                 "steps": 3}]))
    with pytest.raises(SweepError, match=r'^solver\[1\]\.parties = 50: parties must be at most '
                                         r'n = 30 .*\(the runs on data n=30, p=3, '
                                         r'source="separable" with problem loss="logistic"'):
        experiments.check_runs(sweep)
    experiments.check_runs(sweep, [r for r in sweep.runs() if r["data"]["source"] == "synthetic"])
    # a file's labels that are not in the public label set: found when the file is loaded
    spec = _with(data={"source": "synthetic", "n": 100, "p": 4},
                 problem={"loss": "multinomial", "n_classes": 3})
    with pytest.raises(SweepError, match=r"^problem: y holds labels outside classes=\(0, 1, 2\)"):
        experiments.check_runs(load_sweep(spec))


def test_bad_toml_and_missing_file(tmp_path):
    with pytest.raises(SweepError, match="not valid TOML"):
        load_sweep("name = \n[data\n")
    with pytest.raises(SweepError, match="cannot read"):
        load_sweep(str(tmp_path / "missing.toml"))


# -- expansion, ids and seeds -------------------------------------------------------------------------
def test_expansion_ids_and_seeds():
    sweep = load_sweep(TINY)
    runs = sweep.runs()
    assert len(runs) == (2 * 2 + 2 * 1) * 2          # (n x eps + n) x replicates
    ids = [experiments.run_id(r) for r in runs]
    assert len(set(ids)) == len(ids)
    assert ids == [experiments.run_id(r) for r in load_sweep(TINY).runs()]   # stable
    cells = {experiments.cell_id(r) for r in runs}
    assert len(cells) == len(runs) // 2
    a, b = runs[0], runs[1]                                  # replicates 0 and 1 of a cell
    sa, sb = experiments.run_seed(a, 3), experiments.run_seed(b, 3)
    assert sa.generate_state(4).tolist() != sb.generate_state(4).tolist()
    assert (experiments.run_seed(a, 3).generate_state(4).tolist()
            == sa.generate_state(4).tolist())


def test_a_run_replays_bit_for_bit():
    spec = load_sweep(TINY).runs()[0]
    first = experiments.execute(spec, 3)
    again = experiments.execute(spec, 3)
    assert first["theta_sha256"] == again["theta_sha256"]
    assert first["excess_risk"] == again["excess_risk"]
    assert first["excess_risk"] >= -first["reference_gap"]
    assert first["bound"] is not None and first["certified_epsilon"] <= 0.5 * (1 + 1e-9)


def test_several_datasets_and_the_page_text():
    spec = _with(data=[{"source": "synthetic", "n": [100, 200], "p": 4},
                       {"source": "separable", "n": 150, "p": 3}],
                 solver=[{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-6}])
    sweep = load_sweep(spec)
    assert [r["data"] for r in sweep.runs()[::2]] == [
        {"source": "synthetic", "n": 100, "p": 4}, {"source": "synthetic", "n": 200, "p": 4},
        {"source": "separable", "n": 150, "p": 3}]
    described = load_sweep({**spec, "title": "T", "description": "D", "discussion": "X"})
    assert described.text == {"title": "T", "description": "D", "discussion": "X"}
    # the page's text is not part of the runs: editing it keeps every result
    assert described.spec == sweep.spec
    assert [experiments.run_id(r) for r in described.runs()] == [
        experiments.run_id(r) for r in sweep.runs()]


@pytest.mark.slow
def test_multiparty_and_joint_runs_measure_against_their_own_optimum():
    base = {"name": "parties", "seed": 1, "replicates": 1,
            "data": {"source": "synthetic", "n": 403, "p": 4},
            "problem": {"loss": "logistic", "radius": 1.0, "reg": 0.05}}
    sweep = load_sweep({**base, "solver": [
        {"name": "multiparty_gd", "parties": 3, "epsilon": 1.0, "delta": 1e-6,
         "noise": ["per_party", "secure_aggregation"]},
        {"name": "aggregated_output_perturbation", "parties": 3, "epsilon": 1.0},
        {"name": "joint_sgd", "owners": 3, "epsilon": 1.0, "delta": 1e-6,
         "personal_columns": ["all", "none"]}]})
    results = {}
    for spec in sweep.runs():
        result = experiments.execute(spec, 1)
        assert result["excess_risk"] >= -result["reference_gap"]
        assert result["certified_epsilon"] <= 1.0 * (1 + 1e-9)
        results[canonical_key(spec)] = result
        assert experiments.execute(spec, 1)["theta_sha256"] == result["theta_sha256"]
    assert "Theorem 4" in results["multiparty_gd/per_party"]["bound_name"]
    assert "gradient perturbation" in results["multiparty_gd/secure_aggregation"]["bound_name"]
    assert results["aggregated_output_perturbation"]["bound"] is None
    for columns in ("all", "none"):
        joint = results[f"joint_sgd/{columns}"]
        assert "Theorem 3.1" in joint["bound_name"] and joint["lower_bound"] is None
    # the joint problem restricted to x_j = 0 is the one without personal columns
    assert (results["joint_sgd/all"]["optimum"] - results["joint_sgd/all"]["reference_gap"]
            <= results["joint_sgd/none"]["optimum"])
    # without personal columns it is the pooled problem with the owners weighted equally: the
    # weights 1/(3 n_j) differ from 1/n by sum_i |w_i - 1/n|, and a loss is at most log(1 + e)
    # (|margin| <= 1), which bounds the difference of the optima, up to the certificates
    sizes = np.array([135, 134, 134])
    weights = np.abs(1 / (3 * sizes) - 1 / 403) @ sizes
    pooled = results["multiparty_gd/per_party"]
    assert abs(results["joint_sgd/none"]["optimum"] - pooled["optimum"]) <= (
        np.log1p(np.e) * weights + results["joint_sgd/none"]["reference_gap"]
        + pooled["reference_gap"])


def canonical_key(spec):
    solver = spec["solver"]
    extra = solver.get("noise") or solver.get("personal_columns")
    return solver["name"] + (f"/{extra}" if extra else "")


def test_file_data(tmp_path):
    from dpsolve.datasets import make_synthetic
    X, y = make_synthetic(60, 3, rng=0)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, y]), delimiter=",")
    for name in ("d.npz", "d.csv"):
        spec = _with(data={"source": "file", "path": str(tmp_path / name)},
                     solver=[{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-4}])
        result = experiments.execute(load_sweep(spec).runs()[0], 0)
        assert result["n"] == 60 and result["p"] == 3


def test_public_classes_in_a_sweep(tmp_path):
    """[problem] classes: a list is one label set (not an axis), a list of lists an axis; the
    file's labels 5/7 are coded by it, and the run's spec records it."""
    from dpsolve.datasets import make_synthetic
    from dpsolve.experiments.runs import build_problem
    X, y = make_synthetic(60, 3, rng=0)
    np.savez(tmp_path / "d.npz", X=X, y=np.where(y > 0, 7, 5))
    spec = _with(data={"source": "file", "path": str(tmp_path / "d.npz")},
                 problem={"loss": "logistic", "radius": 1.0, "classes": [5, 7]},
                 solver=[{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-4}])
    runs = load_sweep(spec).runs()
    assert len(runs) == 2 and runs[0]["problem"]["classes"] == [5, 7]
    assert experiments.execute(runs[0], 0)["n"] == 60
    assert np.array_equal(build_problem(runs[0], 0).y, y)       # 5 -> -1, 7 -> +1
    axis = _with(problem={"loss": "logistic", "classes": [[5, 7], [7, 5]]})
    tiny_runs = len(load_sweep(TINY).runs())
    both = [tuple(r["problem"]["classes"]) for r in load_sweep(axis).runs()]
    assert len(both) == 2 * tiny_runs and both.count((5, 7)) == both.count((7, 5)) == tiny_runs
    with pytest.raises(ValueError, match="classes"):           # labels 5/7 need classes
        experiments.execute(load_sweep({**spec, "problem": {"loss": "logistic"}}).runs()[0], 0)


# -- the store: resume after SIGKILL --------------------------------------------------------------------
SLOW = """
name = "slow"
seed = 0
replicates = 8

[data]
source = "synthetic"
n = 60
p = 3

[problem]
loss = "logistic"
radius = 1.0

[[solver]]
name = "noisy_sgd"
epsilon = 0.5
delta = 1e-7
calibration = "rdp"
steps = 4000000
"""


def _rows(db):
    with sqlite3.connect(db) as con:
        return dict(con.execute("SELECT run_id, finished_at FROM runs").fetchall())


@pytest.mark.slow
@pytest.mark.parametrize("where", [["--jobs", "2"], ["--scheduler", "local:2"]],
                         ids=["local_pool", "dask"])
def test_resume_after_sigkill_loses_and_repeats_nothing(tmp_path, where):
    if where[0] == "--scheduler":
        distributed = pytest.importorskip("distributed")
    sweep_file = tmp_path / "slow.toml"
    sweep_file.write_text(SLOW)
    db = tmp_path / "results.db"
    # the package this test imports (installed, or the built source tree), outside the
    # repository root, where `python -m` would otherwise find an unbuilt dpsolve/
    here = os.path.dirname(os.path.dirname(os.path.abspath(dpsolve.__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([here] + [p for p in sys.path if p])}
    proc = subprocess.Popen([sys.executable, "-m", "dpsolve.cli", "run", str(sweep_file),
                             "--out", str(db), *where, "--quiet"],
                            env=env, cwd=tmp_path, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    before = {}
    while time.monotonic() < deadline:
        if db.exists():
            try:
                before = _rows(db)
            except sqlite3.OperationalError:
                before = {}
        if len(before) >= 2:
            break
        if proc.poll() is not None:
            pytest.fail("the sweep ended before it could be killed: "
                        + proc.stderr.read().decode())
        time.sleep(0.05)
    # the driver, and its workers (or its LocalCluster's scheduler and workers), mid-sweep
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = _rows(db)                               # what had been committed at the kill
    assert 2 <= len(before) < 8
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    if where[0] == "--jobs":
        resume = {"jobs": 2}
    else:
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                           dashboard_address=None)
        resume = {"client": distributed.Client(cluster)}
    try:
        counts = experiments.run_sweep(str(sweep_file), db, progress=False, **resume)
        assert counts == {"total": 8, "skipped": len(before), "ran": 8 - len(before)}
        after = _rows(db)
        assert len(after) == 8
        assert all(after[k] == v for k, v in before.items())     # not recomputed, not lost
        again = experiments.run_sweep(str(sweep_file), db, progress=False, **resume)
        assert again == {"total": 8, "skipped": 8, "ran": 0}
    finally:
        if "client" in resume:
            resume["client"].close()
            cluster.close()


WRITER = """
import sys
from dpsolve.experiments.store import ResultStore
payload = [float(i) for i in range(20000)]          # ~0.4 MB of JSON: each commit takes a while
from dpsolve.experiments.sweep import run_id
with ResultStore(sys.argv[1]) as store:
    done = store.done()
    print("ready", flush=True)
    for i in range(int(sys.argv[2])):
        spec = {"sweep": "w", "replicate": i, "solver": "x"}
        if run_id(spec) not in done:
            store.add(spec, {"i": i, "payload": payload})
"""


@pytest.mark.slow
def test_store_survives_sigkill_mid_write(tmp_path):
    """A writer committing large rows back to back (about 8 ms each here) is killed at random
    moments, mostly in the middle of a commit; it never runs out of rows to write, so each kill
    lands mid-sweep. After each kill the database is intact, every row is whole and none is
    lost; a last writer then resumes, and in the end each run is there exactly once."""
    from dpsolve.experiments.store import ResultStore
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    db = tmp_path / "store.db"
    here = os.path.dirname(os.path.dirname(os.path.abspath(dpsolve.__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([here] + [p for p in sys.path if p])}
    rng, counts = np.random.default_rng(0), []
    for _ in range(8):
        proc = subprocess.Popen([sys.executable, str(script), str(db), str(10 ** 6)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout.readline() == b"ready\n", proc.stderr.read().decode()
        time.sleep(rng.uniform(0.02, 0.15))                 # into the writes
        proc.send_signal(signal.SIGKILL)
        assert proc.wait() == -signal.SIGKILL
        with sqlite3.connect(db) as con:
            assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        with ResultStore(db) as store:
            rows = store.rows("w")
        assert all(row["result"]["payload"][-1] == 19999.0 for row in rows)    # whole rows
        assert sorted(row["result"]["i"] for row in rows) == list(range(len(rows)))
        counts.append(len(rows))
    assert counts == sorted(counts) and counts[-1] > 0, counts       # nothing committed lost
    total = counts[-1] + 20
    subprocess.run([sys.executable, str(script), str(db), str(total)], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    with ResultStore(db) as store:
        rows = store.rows("w")
    assert sorted(row["result"]["i"] for row in rows) == list(range(total))


def test_a_setting_a_run_would_refuse_stops_the_sweep_before_any_run(tmp_path):
    db = tmp_path / "r.db"
    spec = _with(problem={"loss": "logistic", "radius": 1.0},     # reg = 0: output_perturbation fails
                 solver=[{"name": "output_perturbation", "epsilon": 1.0}], replicates=1)
    with pytest.raises(SweepError, match=r"solver\[0\]: output_perturbation needs a strongly "
                                         r"convex.* \(the runs on data n=100, p=4"):
        experiments.run_sweep(spec, db, jobs=1, progress=False)
    assert not db.exists()                  # refused before the database was created


@pytest.mark.slow
def test_a_failing_run_is_named_and_the_finished_ones_are_kept(tmp_path, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from dpsolve.experiments import runner
    db = tmp_path / "r.db"
    sweep = load_sweep(_with(replicates=1, solver=[
        {"name": "clipped_gd", "epsilon": [0.5, 2.0], "delta": 1e-6, "steps": 3}]))
    runs = sweep.runs()
    bad = experiments.run_id(runs[-1])
    real = runner.execute

    def execute(spec, root, reference=None):
        if experiments.run_id(spec) == bad:
            time.sleep(0.5)             # the others (one thread, in order) are committed first
            raise FloatingPointError("non-finite parameters")
        return real(spec, root, reference)

    monkeypatch.setattr(runner, "execute", execute)
    with ThreadPoolExecutor(1) as pool, pytest.raises(
            RuntimeError, match=f"run {bad} failed .*FloatingPointError: non-finite parameters; "
                                "the finished runs are kept"):
        experiments.run_sweep(sweep, db, executor=pool, progress=False)
    with experiments.ResultStore(db, read_only=True) as store:
        assert store.done(sweep.name) == {experiments.run_id(r) for r in runs[:-1]}


# -- one pass: load -> check and plan every run -> run -> store -----------------------------------
def test_each_run_is_listed_keyed_checked_run_and_stored_once(tmp_path, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from dpsolve.experiments import runner
    from dpsolve.experiments import sweep as sweep_module
    spec = _with(solver=[{"name": "clipped_gd", "epsilon": [0.5, 2.0], "delta": 1e-6},
                         {"name": "joint_sgd", "owners": 2, "epsilon": 1.0, "delta": 1e-6}])
    # the keys the pass computes once per run are the public ones
    for run, plain in zip(load_sweep(spec).listing, load_sweep(spec).runs(), strict=True):
        assert run.spec == plain and run.id == experiments.run_id(plain)
        assert run.cell == experiments.cell_id(plain)
        assert run.text == sweep_module.canonical(plain)
        problem = sweep_module.canonical({"data": plain["data"], "problem": plain["problem"]})
        # joint_sgd is measured against its joint optimum, not the problem's theta*
        assert run.reference == (None if plain["solver"]["name"] == "joint_sgd" else problem)
    calls = {"runs": 0, "check": [], "references": [], "execute": []}
    listed, check = sweep_module.Sweep.runs, runner.check_runs

    def runs(self):
        calls["runs"] += 1
        return listed(self)

    def execute(spec, root, reference=None):
        calls["execute"].append(experiments.run_id(spec))
        return {"order": len(calls["execute"])}
    monkeypatch.setattr(sweep_module.Sweep, "runs", runs)
    monkeypatch.setattr(runner, "check_runs",
                        lambda s, specs=None: calls["check"].append(len(specs)) or check(s, specs))
    monkeypatch.setattr(runner, "solve_reference",
                        lambda spec, root: calls["references"].append(spec["data"]["n"]))
    monkeypatch.setattr(runner, "execute", execute)
    sweep, db = load_sweep(spec), tmp_path / "r.db"
    with ThreadPoolExecutor(1) as pool:
        counts = experiments.run_sweep(sweep, db, executor=pool, progress=False)
    total = 2 * 3 * 2                           # n x (2 epsilons + joint_sgd) x replicates
    assert counts == {"total": total, "skipped": 0, "ran": total}
    assert calls["runs"] == 1 and calls["check"] == [total]
    assert sorted(calls["references"]) == [100, 200]        # once per problem
    assert sorted(calls["execute"]) == sorted(run.id for run in sweep.listing)
    # the rows are what ResultStore.add gives for the plain specs (the store's format)
    with experiments.ResultStore(db, read_only=True) as store:
        rows = store.rows()
    with experiments.ResultStore(tmp_path / "plain.db") as plain:
        plain.register(sweep)
        for row in rows:
            plain.add(row["spec"], row["result"])
    columns = "SELECT run_id, cell_id, sweep, replicate, spec, result FROM runs ORDER BY run_id"
    tables = "SELECT name, spec FROM sweeps"
    ours, theirs = sqlite3.connect(db), sqlite3.connect(tmp_path / "plain.db")
    assert ours.execute(columns).fetchall() == theirs.execute(columns).fetchall()
    assert ours.execute(tables).fetchall() == theirs.execute(tables).fetchall()
    ours.close()
    theirs.close()
    # started again: nothing checked, solved or run
    assert experiments.run_sweep(sweep, db, executor=None, progress=False)["skipped"] == total
    assert calls["check"] == [total, 0] and len(calls["references"]) == 2
    assert len(calls["execute"]) == total


@pytest.mark.slow
def test_store_refuses_a_different_sweep_under_the_same_name(tmp_path):
    db = tmp_path / "r.db"
    experiments.run_sweep(_with(solver=[{"name": "output_perturbation", "epsilon": 1.0}],
                                problem={"loss": "logistic", "radius": 1.0, "reg": 0.1},
                                replicates=1), db, jobs=1, progress=False)
    with pytest.raises(ValueError, match="different sweep"):
        experiments.run_sweep(_with(replicates=3), db, jobs=1, progress=False)


# -- summaries ------------------------------------------------------------------------------------------
def test_mean_interval_is_the_t_interval():
    values = [1.0, 2.0, 4.0, 3.5]
    mean, half = experiments.mean_interval(values)
    lo, hi = stats.t.interval(0.95, 3, loc=np.mean(values), scale=stats.sem(values))
    assert mean == pytest.approx(np.mean(values)) and half == pytest.approx((hi - lo) / 2)


def test_slope_fit_recovers_known_exponents():
    x = np.geomspace(10, 1e4, 25)
    slope, low, high = experiments.fit_slope(x, 3.0 * x ** -0.5)
    assert slope == pytest.approx(-0.5, abs=1e-12)
    rng = np.random.default_rng(0)
    covered = 0
    for _ in range(200):
        y = 2.0 * x ** -1.0 * np.exp(0.1 * rng.standard_normal(x.size))
        slope, low, high = experiments.fit_slope(x, y)
        covered += low <= -1.0 <= high
    # a 95% interval covers the true exponent in about 95% of 200 trials (binomial 1e-4 band)
    assert stats.binom.ppf(1e-4, 200, 0.95) <= covered <= 200


@pytest.mark.slow
def test_summaries_and_slopes_from_a_run(tmp_path):
    db = tmp_path / "r.db"
    experiments.run_sweep(TINY, db, jobs=2, progress=False)
    cells = experiments.summarize(db)
    assert len(cells) == 6 and all(c["runs"] == 2 for c in cells)
    gd = [c for c in cells if c["solver.name"] == "clipped_gd"]
    assert all(c["ratio_to_bound"] == pytest.approx(c["excess_risk"] / c["bound"]) for c in gd)
    fits = experiments.slopes(db, "data.n")
    assert fits and all(f["bound_slope"] is not None for f in fits if "solver.epsilon" in f)
    experiments.to_csv(cells, tmp_path / "cells.csv")
    assert (tmp_path / "cells.csv").read_text().count("\n") == 7
    # the same results give byte-identical figures (the docs' figures are regenerated)
    first = experiments.plot_axis(cells, "data.n", [tmp_path / "a.svg", tmp_path / "a.png"])
    again = experiments.plot_axis(cells, "data.n", [tmp_path / "b.svg", tmp_path / "b.png"])
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in again]


# -- the command line ---------------------------------------------------------------------------------------
@pytest.mark.slow
def test_cli_run_and_report(tmp_path, capsys):
    sweep = tmp_path / "tiny.toml"
    sweep.write_text('name = "cli"\nreplicates = 2\n[data]\nsource = "synthetic"\n'
                     'n = [100, 300]\np = 3\n[problem]\nloss = "logistic"\nradius = 1.0\n'
                     '[[solver]]\nname = "clipped_gd"\nepsilon = 1.0\ndelta = 1e-5\n')
    db = tmp_path / "r.db"
    assert main(["run", str(sweep), "--out", str(db), "--jobs", "1", "--quiet"]) == 0
    assert "4 runs done" in capsys.readouterr().out
    assert main(["report", str(db), "--csv", str(tmp_path / "c.csv"),
                 "--plots", str(tmp_path / "figs")]) == 0
    out = capsys.readouterr().out
    assert "| data.n |" in out and "slope of excess risk along data.n" in out
    assert (tmp_path / "c.csv").exists()
    png = (tmp_path / "figs" / "excess_risk_vs_n.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    assert (tmp_path / "figs" / "excess_risk_vs_n.svg").exists()
    bad = tmp_path / "bad.toml"
    bad.write_text(sweep.read_text().replace("delta = 1e-5", "delta = 1e-5\nclip = 2"))
    assert main(["run", str(bad), "--out", str(db)]) == 2
    assert "solver[0].clip" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["report", str(tmp_path / "none.db")])


def test_cli_solve_takes_the_public_label_set(tmp_path, capsys):
    """dpsolve solve --classes / --n-classes: the JSON's classes are the public label set, the
    same for neighbouring datasets (here the one record labelled 5 relabelled 7), never the
    labels present; without it, the labels present, with the estimators' PrivacyWarning and
    no guarantee in the JSON."""
    import json

    from dpsolve.datasets import make_synthetic
    X, y = make_synthetic(200, 3, rng=1)
    labels = np.where(y > 0, 7.0, 5.0)
    labels[0] = 5.0
    neighbour = labels.copy()
    neighbour[0] = 7.0
    reports = []
    for j, ys in enumerate((labels, neighbour)):
        np.savetxt(tmp_path / f"d{j}.csv", np.column_stack([X, ys]), delimiter=",")
        out = tmp_path / f"fit{j}.json"
        assert main(["solve", "--data", str(tmp_path / f"d{j}.csv"), "--epsilon", "1",
                     "--delta", "1e-5", "--classes", "5,7", "--seed", "4",
                     "--out", str(out)]) == 0
        reports.append(json.loads(out.read_text()))
    assert reports[0]["classes"] == reports[1]["classes"] == [5, 7]
    released = ("theta", "coef", "intercept")       # the release, and the model read off it
    assert {k: v for k, v in reports[0].items() if k not in released} == \
        {k: v for k, v in reports[1].items() if k not in released}
    capsys.readouterr()
    assert main(["solve", "--data", str(tmp_path / "d0.csv"), "--epsilon", "1",
                 "--delta", "1e-5", "--row-norm", "1"]) == 0
    out, err = capsys.readouterr()
    assert "classes was not given, so the labels present in y are used" in err
    privacy = json.loads(out)["privacy"]
    assert privacy["read_off_the_data"] == ["classes"] and privacy["holds"] is False
    with pytest.raises(SystemExit):       # refused before the data are read
        main(["solve", "--data", str(tmp_path / "missing.csv"), "--epsilon", "1",
              "--delta", "1e-5", "--classes", "5"])
    assert "--classes" in capsys.readouterr().err
    K = np.argmax(X @ np.random.default_rng(2).standard_normal((3, 3)), axis=1)
    np.savetxt(tmp_path / "k.csv", np.column_stack([X, K]), delimiter=",")
    out = tmp_path / "k.json"
    assert main(["solve", "--data", str(tmp_path / "k.csv"), "--epsilon", "1", "--delta",
                 "1e-5", "--loss", "multinomial", "--n-classes", "4", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    # 3 features and the intercept (on by default), 4 classes
    assert report["classes"] == [0, 1, 2, 3] and np.array(report["theta"]).shape == (4, 4)


def test_cli_solve_writes_theta_and_its_privacy(tmp_path, capsys):
    import json

    from dpsolve.datasets import make_synthetic
    X, y = make_synthetic(200, 3, rng=1)
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, y]), delimiter=",")
    out = tmp_path / "fit.json"
    public = ["--row-norm", "1", "--classes", "-1,1"]
    assert main(["solve", "--data", str(tmp_path / "d.csv"), "--epsilon", "1", "--delta", "1e-5",
                 "--seed", "4", *public, "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    # the estimators' defaults: an intercept, the solver chosen from public constants
    assert len(report["theta"]) == 4 and report["privacy"]["certified_epsilon"] <= 1.0
    assert report["privacy"]["holds"] and report["classes"] == [-1, 1]
    assert report["solver"] == report["model"]["solver_"] and "chosen_by" in report
    again = tmp_path / "again.json"
    main(["solve", "--data", str(tmp_path / "d.csv"), "--epsilon", "1", "--delta", "1e-5",
          "--seed", "4", *public, "--out", str(again)])
    assert json.loads(again.read_text())["theta"] == report["theta"]      # same seed, same fit
    assert main(["solve", "--data", str(tmp_path / "d.csv"), "--epsilon", "-1",
                 "--delta", "1e-5"]) == 2
    assert "epsilon" in capsys.readouterr().err
    assert main(["solve", "--data", str(tmp_path / "missing.csv"), "--epsilon", "1",
                 "--delta", "1e-5"]) == 2
    with pytest.raises(SystemExit):
        main(["solve", "--data", str(tmp_path / "d.csv"), "--epsilon", "1", "--solver", "adam"])
    secure = tmp_path / "secure.json"
    assert main(["solve", "--data", str(tmp_path / "d.csv"), "--epsilon", "1", "--delta", "1e-5",
                 "--secure", "--out", str(secure)]) == 0
    released = json.loads(secure.read_text())
    assert released["settings"]["secure"] is True
    assert all((t * 2 ** 32).is_integer() for t in released["theta"])
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["solve", "--data", str(tmp_path / "d.csv"), "--epsilon", "1", "--delta", "1e-5",
              "--secure", "--seed", "4"])
    assert "--seed cannot be combined with --secure" in capsys.readouterr().err


def test_sparse_file_data_runs_sparse_and_matches_the_dense_data(tmp_path, monkeypatch):
    """A [data] file written by scipy.sparse.save_npz (with y beside the matrix) runs the
    sweep on a sparse Problem, fit intercept included, with the results of the same data held
    densely (the same run, with the loader densifying X)."""
    import scipy.sparse

    from dpsolve.datasets import make_synthetic
    from dpsolve.experiments import runs as runs_module
    X, y = make_synthetic(60, 3, rng=0)
    X[np.abs(X) < 0.3] = 0.0                        # some zeros to leave out
    scipy.sparse.save_npz(tmp_path / "m.npz", scipy.sparse.csr_matrix(X))
    with np.load(tmp_path / "m.npz") as f:
        np.savez(tmp_path / "s.npz", y=y, **dict(f))
    spec = _with(data={"source": "file", "path": str(tmp_path / "s.npz")},
                 problem={"loss": "logistic", "radius": 1.0, "fit_intercept": True},
                 solver=[{"name": "clipped_gd", "epsilon": 1.0, "delta": 1e-4}])
    run = load_sweep(spec).runs()[0]
    assert runs_module.build_problem(run, 0).is_sparse
    sparse_result = experiments.execute(run, 0)
    load_file = runs_module.load_file
    monkeypatch.setattr(runs_module, "load_file",
                        lambda path, labels=None, **names: (
                            load_file(path, labels, **names)[0].toarray(),
                            load_file(path, labels, **names)[1]))
    assert not runs_module.build_problem(run, 0).is_sparse
    dense_result = experiments.execute(run, 0)
    assert sparse_result["p"] == dense_result["p"] == 4          # three features + intercept
    assert sparse_result["objective"] == dense_result["objective"]  # the kernel: same bits
    for key in ("excess_risk", "optimum"):                       # two certified solves
        assert sparse_result[key] == pytest.approx(dense_result[key], abs=2e-9), key


def test_solver_auto_in_a_sweep():
    """[[solver]] name = "auto": each run runs dpsolve.choose_solver's choice for its problem
    and target (public constants only), and records it; only the target is an option."""
    from dpsolve.experiments.runs import build_problem
    spec = _with(problem={"loss": "logistic", "radius": "none", "reg": 0.01},
                 solver=[{"name": "auto", "epsilon": [0.5, 2.0], "delta": 1e-6}])
    runs = load_sweep(spec).runs()
    for run in runs[:2]:
        result = experiments.execute(run, 0)
        problem = build_problem(run, 0)
        choice = dpsolve.choose_solver(problem, run["solver"]["epsilon"], 1e-6)
        assert result["chosen_solver"] == choice.name
        assert result["bound"] == pytest.approx(choice.bound, rel=1e-9)
    with pytest.raises(SweepError, match=r"solver\[0\]\.steps: not an option of auto"):
        load_sweep(_with(solver=[{"name": "auto", "epsilon": 1.0, "steps": 10}]))


def test_a_data_file_that_is_a_named_pipe_is_named_so(tmp_path):
    # a named pipe is not "no such file": the message says what it is, without opening it
    # (an open for reading would block until a writer came)
    import os

    from dpsolve.experiments._datafiles import _npy_header, check_data_file
    pipe = tmp_path / "rows.npy"
    os.mkfifo(pipe)
    with pytest.raises(ValueError, match=r"path .*rows\.npy: is a named pipe \(FIFO\)"):
        check_data_file(pipe, pipe)
    with pytest.raises(ValueError, match=r"rows\[0\] .*rows\.npy: is a named pipe \(FIFO\)"):
        _npy_header(pipe, "rows[0]", 2)
