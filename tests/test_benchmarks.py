"""The asv suite is well formed: ``asv check`` imports every benchmark module and checks every
benchmark's signature and parameters, so a benchmark broken by a change fails here, not in a
later ``asv run``. ``asv check`` (asv is the bench extra's) runs in the slow tier; the fast tier
imports the modules and checks the parameters' names against their lists."""
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(path.stem for path in (ROOT / "benchmarks").glob("bench_*.py"))


@pytest.mark.skipif(not MODULES, reason="needs the source tree's benchmarks/")
@pytest.mark.parametrize("name", MODULES)
def test_benchmark_module_imports_and_names_its_parameters(name, monkeypatch):
    import dpsolve  # noqa: F401  (this dpsolve, before the repository root joins sys.path)
    monkeypatch.syspath_prepend(str(ROOT))
    module = importlib.import_module(f"benchmarks.{name}")
    for benchmark in vars(module).values():
        names = getattr(benchmark, "param_names", None)
        if not isinstance(benchmark, type) or names is None:
            continue
        params = benchmark.params
        # asv: one list of values for one name, else one list per name
        assert len(names) == 1 or (len(params) == len(names) and all(
            isinstance(values, (list, tuple)) for values in params)), (benchmark, names)


@pytest.mark.slow
def test_asv_check_passes():
    done = subprocess.run([sys.executable, "-m", "asv", "check", "--python=same"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No problems found" in done.stdout, done.stdout + done.stderr
