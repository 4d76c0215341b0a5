"""Losses by what solvers need: the properties of the loss objects, the registry's matching of
each solver's needs against them, loss parameters carried by the objects, and
docs/adding_a_loss.md's worked example run as written."""
import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dpsolve
from dpsolve import Problem, losses
from dpsolve.losses import PROPERTIES, HuberHinge, Loss, Logistic
from dpsolve.solvers import SolverSpec, registry

DOCS = Path(__file__).parents[1] / "docs"

#: The losses each solver took when they were listed by name, before the needs replaced the
#: lists (the needs must derive the same sets).
LISTED = {
    "noisy_sgd": {"logistic", "hinge", "squared", "huber_hinge"},
    "clipped_gd": {"logistic", "hinge", "squared", "huber_hinge", "multinomial"},
    "minibatch_sgd": {"logistic", "hinge", "squared", "huber_hinge"},
    "output_perturbation": {"logistic", "hinge", "squared", "huber_hinge", "multinomial"},
    "objective_perturbation": {"logistic", "huber_hinge"},
    "multiparty_gd": {"logistic", "hinge", "squared", "huber_hinge"},
    "aggregated_output_perturbation": {"logistic", "hinge", "squared", "huber_hinge",
                                       "multinomial"},
    "joint_sgd": {"logistic", "hinge", "squared", "huber_hinge", "multinomial"},
    "dp_sgd": {"logistic", "hinge", "squared", "huber_hinge"},
    "adassp": {"squared"},
}


def test_the_needs_derive_the_losses_each_solver_took():
    specs = {spec.name: spec for spec in registry() if spec.name in LISTED}
    assert set(specs) == set(LISTED)
    for name, spec in specs.items():
        assert set(spec.losses) == LISTED[name], name
        # in the registry's order of the losses, each once
        order = list(losses.LOSSES)
        assert list(spec.losses) == sorted(spec.losses, key=order.index)


def test_the_built_in_losses_have_the_properties_their_constants_give():
    have = {name: cls().properties for name, cls in losses.LOSSES.items()}
    assert all("convex" in props for props in have.values())
    assert {n for n, p in have.items() if "smooth" not in p} == {"hinge"}
    assert {n for n, p in have.items() if "margin" not in p} == {"multinomial"}
    assert {n for n, p in have.items() if "unit_derivative" in p} == {
        "logistic", "hinge", "huber_hinge"}
    assert {n for n, p in have.items() if "sufficient_statistics" in p} == {"squared"}
    assert all("compiled" in props for props in have.values())
    assert HuberHinge(1e-3).properties == HuberHinge(40.0).properties


def test_the_guides_table_of_needs_is_the_registrys():
    text = (DOCS / "adding_a_loss.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\w+)` \| ((?:`\w+`(?:, )?)+) \|", text, flags=re.M))
    table = {name: tuple(re.findall(r"`(\w+)`", needs)) for name, needs in rows.items()}
    assert table == {spec.name: spec.needs for spec in registry()}
    named = set(re.findall(r"^\| `(\w+)` \|", text, flags=re.M)) - set(table)
    assert named == set(PROPERTIES)


@dataclasses.dataclass(frozen=True)
class _Uncompiled(Logistic):
    """The logistic loss under another name, so with no entry in the kernels' switch."""

    name = "uncompiled_logistic"


def test_a_registered_loss_is_listed_by_every_solver_its_properties_admit(monkeypatch):
    monkeypatch.setitem(losses.LOSSES, _Uncompiled.name, _Uncompiled)
    loss = _Uncompiled()
    assert loss.kernel_id is None and "compiled" not in loss.properties
    for spec in registry():
        assert (_Uncompiled.name in spec.losses) == spec.takes(loss) == (
            set(spec.needs) <= set(PROPERTIES) - {"compiled", "sufficient_statistics"})
    assert [s.name for s in registry() if s.takes(loss)] == ["objective_perturbation"]


def test_a_solver_refuses_a_loss_it_does_not_take_naming_what_it_lacks():
    X, y = dpsolve.datasets.make_synthetic(40, 3, rng=0)
    problem = Problem(X, y, _Uncompiled())
    assert problem.loss == "uncompiled_logistic"
    with pytest.raises(ValueError, match="clipped_gd does not take loss='uncompiled_logistic'"
                                         r".*lacks the properties compiled"):
        dpsolve.clipped_gd(problem, 1.0, 1e-6, rng=0)


def test_needs_name_known_properties():
    spec = dpsolve.solvers.get("dp_sgd")
    fields = {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec) if f.init}
    with pytest.raises(ValueError, match="needs must name properties"):
        SolverSpec(**dict(fields, needs=("margin", "lipschitzian")))
    with pytest.raises(ValueError, match="needs must name properties"):
        SolverSpec(**dict(fields, needs="margin"))


def test_a_loss_object_carries_its_parameter_as_the_keyword_did():
    X, y = dpsolve.datasets.make_synthetic(60, 3, rng=1)
    by_keyword = Problem(X, y, "huber_hinge", huber_width=0.3)
    by_object = Problem(X, y, HuberHinge(width=0.3))
    assert by_object.loss_object == by_keyword.loss_object == HuberHinge(0.3)
    assert by_object.huber_width == by_keyword.huber_width == 0.3
    assert by_object.describe() == by_keyword.describe()
    a = dpsolve.clipped_gd(by_keyword, 1.0, 1e-6, rng=3).theta
    b = dpsolve.clipped_gd(by_object, 1.0, 1e-6, rng=3).theta
    assert np.array_equal(a, b)
    assert not np.array_equal(a, dpsolve.clipped_gd(Problem(X, y, HuberHinge(0.5)), 1.0, 1e-6,
                                                    rng=3).theta)


def test_register_loss_refuses_what_is_not_a_new_loss(monkeypatch):
    monkeypatch.setattr(losses, "LOSSES", dict(losses.LOSSES))
    with pytest.raises(TypeError, match="subclass"):
        losses.register_loss(object)
    with pytest.raises(ValueError, match="already registered"):
        losses.register_loss(type("Other", (Logistic,), {"name": "hinge"}))
    with pytest.raises(ValueError, match="name of its own"):
        losses.register_loss(type("Nameless", (Loss,), {}))
    assert losses.register_loss(Logistic) is Logistic           # the same class: a no-op


@pytest.mark.slow
def test_the_guides_worked_example_is_a_complete_loss(tmp_path):
    """docs/adding_a_loss.md's loss in Python runs as written: importing it registers it, the
    solvers its properties admit list it, the others refuse it before any work, and
    objective_perturbation fits it (research and secure mode) near the minimiser (run in a
    fresh interpreter, so the registry of this one is untouched)."""
    text = (DOCS / "adding_a_loss.md").read_text(encoding="utf-8")
    module = text.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "softplus_hinge.py").write_text(module)
    script = """
import numpy as np, pytest, scipy.optimize, dpsolve
from dpsolve import Problem
from softplus_hinge import SoftplusHinge
loss = SoftplusHinge(0.25)
assert dpsolve.losses.LOSSES["softplus_hinge"] is SoftplusHinge
assert sorted(loss.properties) == ["convex", "margin", "smooth", "unit_derivative"]
# its constants hold on a grid of margins, and its derivatives are its values'
z, y = np.linspace(-30.0, 30.0, 6001), np.ones(6001)
d, h = loss.derivatives(z, y), loss.second_derivatives(z, y)
assert np.all(np.abs(d) <= loss.derivative_bound) and np.all(h <= loss.curvature * (1 + 1e-12))
assert np.allclose(np.gradient(loss.values(z, y), z), d, atol=1e-3)
assert np.isclose(loss.values(np.zeros(2), np.array([-1.0, 1.0])).max(), loss.max_value_at_zero())
assert [s.name for s in dpsolve.solvers.registry() if "softplus_hinge" in s.losses] == [
    "objective_perturbation"]
X, y = dpsolve.datasets.make_synthetic(400, 3, rng=0)
P = Problem(X, y, loss, radius=None, reg=0.1)
assert Problem(X, y, "softplus_hinge", radius=None, reg=0.1).loss_object == SoftplusHinge()
with pytest.raises(ValueError, match="lacks the properties compiled"):
    dpsolve.clipped_gd(Problem(X, y, loss), 1.0, 1e-6)
a = dpsolve.objective_perturbation(P, 1.0, 1e-6, rng=0)
assert np.array_equal(a.theta, dpsolve.objective_perturbation(P, 1.0, 1e-6, rng=0).theta)
assert a.privacy.certified_epsilon <= 1.0 * (1 + 1e-9)
best = scipy.optimize.minimize(P.objective, np.zeros(3), jac=P.gradient, tol=1e-12).x
# nearly no noise and no extra ridge: the release is the minimiser, to the tolerance
near = dpsolve.objective_perturbation(P, 1e5, 1e-6, extra_reg=0.0, rng=0)
assert np.linalg.norm(near.theta - best) < 1e-2, (near.theta, best)
s = dpsolve.objective_perturbation(P, 1.0, 1e-6, secure=True)
assert s.settings["inner_solver"] == "fixed" and np.all(np.isfinite(s.theta))
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr
