"""docs/scripts/benchmarks_page.py reads asv's stored results (the format asv 0.6 writes)."""
import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("benchmarks_page",
                                              ROOT / "docs" / "scripts" / "benchmarks_page.py")
benchmarks_page = importlib.util.module_from_spec(spec)
spec.loader.exec_module(benchmarks_page)

COLUMNS = ["result", "params", "version", "started_at", "duration"]
ROWS = "bench_kernels.RowProducts.track_dpsolve_over_numpy"


def _run(folder, commit, started, values):
    """One result file as `asv run` stores it (parameters as reprs, results in product order)."""
    results = {ROWS: [values, [["'X^T r'", "'X theta'"], ["50", "200"]], "v", started, 1.0],
               "bench_kernels.Projection.time_project_l2_ball": [[3.9e-05], [["10"]], "v",
                                                                  started, 1.0]}
    (folder / f"{commit[:8]}-env.json").write_text(json.dumps({
        "commit_hash": commit, "env_name": "env", "date": 1795689931000,
        "params": {"machine": "box", "cpu": "AMD EPYC", "num_cpu": "2"}, "python": "3.11",
        "requirements": {}, "env_vars": {}, "result_columns": COLUMNS, "results": results,
        "durations": {}, "version": 2}))


def test_page_shows_the_newest_stored_asv_run(tmp_path):
    folder = tmp_path / "box"
    folder.mkdir()
    (folder / "machine.json").write_text(json.dumps({"machine": "box", "version": 1}))
    _run(folder, "a" * 40, 1795690000000, [0.43, 1.0, 0.79, 1.17])
    _run(folder, "b" * 40, 1795600000000, [9.0, 9.0, 9.0, 9.0])       # an older run
    values, about = benchmarks_page.newest_asv_run(tmp_path)
    assert values[ROWS] == {("X^T r", "50"): 0.43, ("X^T r", "200"): 1.0,
                            ("X theta", "50"): 0.79, ("X theta", "200"): 1.17}
    assert "commit `aaaaaaaa`" in about and "AMD EPYC, 2 CPUs" in about
    page = benchmarks_page.page(values, about)
    assert "| `X^T r`, p = 50 | 0.43 | 0.9 ms / 2.7 ms |" in page
    assert "θ* against cvxpy" not in page           # not in the run: no empty table


def test_no_stored_run_means_none(tmp_path):
    assert benchmarks_page.newest_asv_run(tmp_path) is None
