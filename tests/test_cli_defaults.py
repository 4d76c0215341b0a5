"""``dpsolve solve`` at the estimators' defaults, tried as a user types it on a CSV file of
features mapped to [0, 1]: the model is the estimator's (same bits for the same seed), the JSON
reports the privacy delivered, the solver chosen and the settings, a bound not given is the
estimators' PrivacyWarning and no guarantee, and the explicit form of the solver path keeps its
bits."""
import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dpsolve
from dpsolve.cli import main

pytest.importorskip("sklearn")
from dpsolve.estimators import DPLinearRegression, DPLogisticRegression  # noqa: E402

#: Features in [0, 1]: each row's norm is at most sqrt(P), the public row bound given.
N, P = 200, 4
ROW_NORM = "2"


def _main(*argv):
    """``(status, stdout, stderr)`` of ``main(argv)`` in-process; SystemExit is a status."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main([str(a) for a in argv])
        except SystemExit as exc:
            status = exc.code
    return status, out.getvalue(), err.getvalue()


def _mapped(seed=0):
    """Features in [0, 1] and labels 0/1 from a logistic model."""
    rng = np.random.default_rng(seed)
    X = rng.random((N, P))
    y = (rng.random(N) < 1 / (1 + np.exp(-(X - 0.5) @ np.array([4.0, -3.0, 2.0, 0.0])))
         ).astype(float)
    return X, y


@pytest.fixture
def oj(tmp_path):
    """A mapped CSV file: the features, then the label 0/1 (as ``np.savetxt`` writes it)."""
    X, y = _mapped()
    path = tmp_path / "oj.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",")
    return path


def _fit(*argv):
    status, out, err = _main("solve", *argv)
    assert status == 0, err
    return json.loads(out), err


def test_a_mapped_csv_fits_with_only_epsilon_the_row_bound_and_the_classes(oj):
    report, err = _fit("--data", oj, "--epsilon", "1", "--row-norm", ROW_NORM,
                       "--classes", "0,1", "--seed", "5")
    assert err == ""                            # nothing read off the data: no warning
    privacy, model = report["privacy"], report["model"]
    assert privacy["holds"] and privacy["read_off_the_data"] == []
    assert privacy["epsilon"] == 1.0 and privacy["delta"] == 0.0        # pure, as asked
    assert privacy["certified_epsilon"] <= 1.0
    # the estimators' defaults: the solver chosen, reg auto, the intercept on the base rate
    assert report["solver"] == model["solver_"] and "chosen_by" in report
    assert model["estimator"] == "DPLogisticRegression" and model["reg"] == "auto"
    assert model["prior_share_"] == (dpsolve.estimators._base.AUTO_PRIOR_SHARE
                                     if report["solver"] == "objective_perturbation" else 0.0)
    assert report["problem"]["fit_intercept"] and report["problem"]["radius"] is None
    assert report["problem"]["reg"] == model["reg_"] and report["classes"] == [0, 1]
    # the ledger: one release, the fit (with the class counts its intercept is centred on)
    counts = " and the class counts" if model["prior_share_"] > 0 else ""
    assert privacy["ledger"] == [{"name": report["solver"] + counts, "epsilon": 1.0,
                                  "delta": 0.0, "dp_event": privacy["dp_event"]}]
    # the same code path: the estimator with these settings and seed gives the same model
    X, y = _mapped()
    estimator = DPLogisticRegression(epsilon=1.0, row_norm=2.0, classes=[0, 1],
                                     random_state=5).fit(X, y)
    assert report["coef"] == estimator.coef_.ravel().tolist()
    assert report["intercept"] == float(estimator.intercept_[0])
    assert report["theta"] == estimator.fit_.theta.tolist()
    assert model["reg_"] == estimator.reg_ and report["solver"] == estimator.solver_
    # --reg auto, spelled out, is the default
    spelled, _ = _fit("--data", oj, "--epsilon", "1", "--row-norm", ROW_NORM, "--classes",
                      "0,1", "--seed", "5", "--reg", "auto")
    assert spelled == report


def test_the_defaults_release_the_same_metadata_on_neighbouring_files(tmp_path):
    # one record replaced (its features and its label): everything but the release is equal
    X, y = _mapped()
    reports = []
    for j in range(2):
        if j:
            X[0], y[0] = 1.0, 1.0 - y[0]
        path = tmp_path / f"d{j}.csv"
        np.savetxt(path, np.column_stack([X, y]), delimiter=",")
        reports.append(_fit("--data", path, "--epsilon", "1", "--row-norm", ROW_NORM,
                            "--classes", "0,1", "--seed", "1")[0])
    released = ("theta", "coef", "intercept")
    assert reports[0]["theta"] != reports[1]["theta"]
    assert ({k: v for k, v in reports[0].items() if k not in released}
            == {k: v for k, v in reports[1].items() if k not in released})


def test_regression_fits_with_the_label_bound(tmp_path):
    X, _ = _mapped()
    y = 3.0 + X @ np.array([2.0, -1.0, 0.5, 0.0])        # in [2, 5.5]: the range 0,6
    path = tmp_path / "r.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",")
    report, err = _fit("--data", path, "--loss", "squared", "--epsilon", "1", "--row-norm",
                       ROW_NORM, "--label-bound", "0,6", "--seed", "2")
    assert err == "" and report["privacy"]["holds"]
    assert report["model"]["estimator"] == "DPLinearRegression"
    estimator = DPLinearRegression(epsilon=1.0, row_norm=2.0, label_bound=(0, 6),
                                   random_state=2).fit(X, y)
    assert report["solver"] == estimator.solver_ == "adassp"           # Wang 2018
    assert report["coef"] == estimator.coef_.tolist()
    assert report["intercept"] == estimator.intercept_       # the private mean included
    # a range with a negative end, as --classes -1,1 takes one
    report, _ = _fit("--data", path, "--loss", "squared", "--epsilon", "1", "--row-norm",
                     ROW_NORM, "--label-bound", "-6,6", "--seed", "2")
    assert report["model"]["label_bound_"] == 6.0


def test_the_explicit_solver_path_keeps_its_bits(oj):
    # the settings the command's defaults used to be, given: the solver's own fit, bit for bit
    report, _ = _fit("--data", oj, "--epsilon", "1", "--solver", "clipped_gd", "--delta",
                     "1e-6", "--radius", "1", "--reg", "0", "--row-norm", ROW_NORM,
                     "--no-fit-intercept", "--classes", "0,1", "--seed", "3")
    X, y = _mapped()
    problem = dpsolve.Problem(X, y, "logistic", radius=1.0, reg=0.0, row_norm=2.0,
                              classes=(0, 1))
    fit = dpsolve.clipped_gd(problem, 1.0, delta=1e-6, rng=3)
    assert report["theta"] == fit.theta.tolist() and "coef" not in report
    assert report["privacy"]["dp_event"] == str(fit.dp_event)
    assert report["problem"] == problem.describe() and "chosen_by" not in report


def test_a_bound_not_given_is_the_estimators_warning_and_no_guarantee(oj):
    report, err = _fit("--data", oj, "--epsilon", "1", "--classes", "0,1")
    assert "row_norm was not given, so the largest row norm of X is used" in err
    privacy = report["privacy"]
    assert privacy["read_off_the_data"] == ["row_norm"] and privacy["holds"] is False
    assert privacy["certified_epsilon"] == "inf"
    # the ledger names the fit's release and the bound no guarantee covers ("inf": JSON has
    # no infinity)
    fit, bound = privacy["ledger"]
    assert fit["epsilon"] == 1.0 and fit["name"].startswith(report["solver"])
    assert bound == {"name": "row_norm read off the data", "epsilon": "inf", "delta": 0.0,
                     "dp_event": "NonPrivateDpEvent()"}


@pytest.mark.slow
def test_the_issue_command_through_the_installed_script(oj):
    # exactly as a new user types it, in the folder of the file
    scripts = Path(sys.executable).parent
    script = next(p for p in (scripts / "dpsolve", scripts / "dpsolve.exe") if p.exists())
    done = subprocess.run([str(script), "solve", "--data", oj.name, "--epsilon", "1",
                           "--row-norm", ROW_NORM, "--classes", "0,1"], capture_output=True,
                          text=True, cwd=oj.parent, timeout=300,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    report = json.loads(done.stdout)
    assert report["privacy"]["holds"] and report["model"]["reg"] == "auto"


@pytest.mark.parametrize("loss", ["hinge", "huber_hinge"])
def test_the_margin_losses_fit_at_the_defaults(oj, loss):
    # the hinge's reg="auto" with output perturbation was an infinite ridge, refused
    report, err = _fit("--data", oj, "--loss", loss, "--epsilon", "1", "--row-norm", ROW_NORM,
                       "--classes", "0,1", "--seed", "0")
    assert err == "" and report["privacy"]["holds"] and report["loss"] == loss
    assert 0.0 < report["model"]["reg_"] < float("inf")
