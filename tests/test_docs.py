"""The documentation site builds with warnings as errors, by the command docs/index.md gives, and
the landing page's quick start prints what the page shows."""
import contextlib
import io
import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _block(text, heading, language):
    # the first ```language block after the heading
    section = text[text.index(heading):]
    return re.search(rf"```{language}\n(.*?)```", section, re.S).group(1)


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
    # The command "Building these docs" gives, as written, from the repository root (where
    # `python -m` puts the root's dpsolve/, an unbuilt source tree after a regular install,
    # first on sys.path: docs/conf.py imports the installed one); only the output directory
    # is moved to tmp_path.
    commands = _block((DOCS / "index.md").read_text(encoding="utf-8"), "## Building these docs",
                      "bash").splitlines()
    build = shlex.split(next(line for line in commands if "sphinx" in line))
    assert build[:3] == ["python", "-m", "sphinx"] and build[-2:] == ["docs", "docs/_build"]
    assert "-W" in build
    out = tmp_path / "_build"
    proc = subprocess.run([sys.executable, *build[1:-1], str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr
    assert (out / "index.html").is_file()
    api = (out / "api" / "dpsolve.html").read_text(encoding="utf-8")
    assert 'id="dpsolve.noisy_sgd"' in api and 'id="dpsolve.Problem"' in api
    for page in ["noisy_sgd", "clipped_gd", "minibatch_sgd", "perturbation", "multiparty",
                 "joint_dp", "privacy_audit", "source_mistakes", "reproductions", "user_guide",
                 "peers", "theorems/index", "api/bounds", "api/privacy", "api/joint",
                 "api/datasets", "api/experiments", "auto_examples/index",
                 "auto_examples/plot_raw_table"]:
        assert (out / f"{page}.html").is_file(), page


@pytest.mark.slow
def test_raw_table_example_warns_about_nothing_and_its_ledger_adds_up(capsys, monkeypatch):
    # the gallery's raw-table example (a few seconds) raises no PrivacyWarning and no other
    # warning: every bound is public; its budget's ledger holds the fit, the search, the private
    # scaler and the fit behind it, 1 + 3.3 + 0.3 + 1
    import runpy
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    monkeypatch.setattr(plt, "show", lambda *args, **kwargs: None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scope = runpy.run_path(str(ROOT / "examples" / "plot_raw_table.py"), run_name="__main__")
    plt.close("all")
    out = capsys.readouterr().out
    assert out.count("holds: True") == 3
    budget = scope["budget"]
    assert [charge.labels for charge in budget.ledger] == [
        ("objective_perturbation",), ("private selection",), ("PrivateRangeScaler",),
        ("objective_perturbation",)]
    assert budget.spent()[0] == pytest.approx(1.0 + 3.3 + 0.3 + 1.0, rel=1e-12)
    assert budget.report() in out
    # the released model's ledger: the search's selection, its one part here
    report = scope["best"][-1].privacy_report_
    assert report.summary() in out and len(report.steps) == 1
    assert report.steps[0].name.startswith("private selection (liu_talwar: E[K] = 3 runs")


def test_landing_page_quick_start_prints_what_the_page_shows():
    # the quick start on docs/index.md is run as written (about a second)
    page = (DOCS / "index.md").read_text(encoding="utf-8")
    code, printed = re.search(
        r"## Quick start\n.*?```python\n(.*?)```\n\nprints\n\n```text\n(.*?)```", page, re.S).groups()
    buffer = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(buffer):
        warnings.simplefilter("error")      # the quick start warns about nothing
        exec(compile(code, "docs/index.md", "exec"), {})
    assert buffer.getvalue() == printed


@pytest.mark.slow
def test_readme_use_block_runs(capsys):
    # the README's example prints the output the README shows, and the tour of the API on the
    # parameters page runs as written (a few seconds: SGD1's n^2 steps, theta*)
    import re
    import warnings
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    code, shown = re.search(r"## Example\n\n```python\n(.*?)```\n\n```text\n(.*?)```", readme,
                            re.S).groups()
    tour = re.search(r"## Use\n\n```python\n(.*?)```", (DOCS / "parameters.md").read_text(),
                     re.S).group(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, "README.md", "exec"), {})
        assert capsys.readouterr().out == shown
        exec(compile(tour, "docs/parameters.md", "exec"), {})
