"""The documentation site builds with warnings as errors (``python -m sphinx -W -b html docs ...``)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import dpsolve

pytestmark = pytest.mark.slow

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_docs_build_without_warnings(tmp_path):
    out = tmp_path / "html"
    # Run outside the repository root and import the dpsolve under test: after a regular
    # `pip install .` the root's dpsolve/ is an unbuilt source tree.
    package_root = str(Path(dpsolve.__file__).resolve().parents[1])
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-q",
         "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (out / "index.html").is_file()
    api = (out / "api" / "dpsolve.html").read_text(encoding="utf-8")
    assert 'id="dpsolve.noisy_sgd"' in api and 'id="dpsolve.Problem"' in api
    for page in ["noisy_sgd", "clipped_gd", "minibatch_sgd", "perturbation", "multiparty",
                 "joint_dp", "privacy_audit", "source_mistakes", "reproductions",
                 "theorems/index", "api/bounds", "api/privacy", "api/joint", "api/datasets",
                 "api/experiments"]:
        assert (out / f"{page}.html").is_file(), page


@pytest.mark.slow
def test_readme_use_block_runs():
    # the README's example is run as written (a few seconds: SGD1's n^2 steps, theta*)
    import re
    import warnings
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    code = re.search(r"## Use\n\n```python\n(.*?)```", text, re.S).group(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, "README.md", "exec"), {})
