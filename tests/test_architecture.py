"""The registry owns everything about a solver: outside ``dpsolve/solvers/`` no code knows a
solver by its name, read statically with ``ast``.

What a solver does differently (its ridge for prediction, its floor in the choice, its source's
noise, its measure in the sweeps) is asked of its spec's hooks (``SolverSpec.hooks``), so that
a new solver cannot be forgotten by a branch elsewhere. Found here, in any module of the
package outside ``dpsolve/solvers/``:

* a comparison (``==``, ``!=``, ``in``, ``not in``, ``is``, ``is not``) with a registered
  solver's name as a string literal, alone or in a tuple, list or set literal;
* a ``match`` case on such a literal;
* a dict keyed by such a literal (``{"dp_sgd": ...}``, ``dict(dp_sgd=...)``): a dispatch table;
* a tuple, list or set literal of such names bound to a variable: a table compared against
  later.

A solver's name as a value (a default ``--solver``, an example sweep's ``name = "noisy_sgd"``,
a message) is not knowing the solver by it, and is allowed.
"""
import ast
import pathlib

import pytest

from dpsolve.solvers import registry

ROOT = pathlib.Path(__file__).resolve().parent.parent / "dpsolve"
SOLVERS = ROOT / "solvers"
NAMES = frozenset(spec.name for spec in registry())


def _is_name(node, names):
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names


def _holds_name(node, names):
    """A solver name literal, or a tuple/list/set literal (or ``frozenset``/``set``/``tuple``
    of one) holding one."""
    if _is_name(node, names):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_is_name(element, names) for element in node.elts)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("frozenset", "set", "tuple", "list") and node.args):
        return _holds_name(node.args[0], names)
    return False


def _patterns(pattern):
    """Every value pattern of a ``case`` pattern (``a | b`` and nested ones)."""
    for node in ast.walk(pattern):
        if isinstance(node, ast.MatchValue):
            yield node.value


def name_dispatch(source, names=NAMES, filename="<source>"):
    """``[(line, what)]``: where ``source`` knows a solver by its name (module docstring)."""
    found = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Compare):
            if any(_holds_name(operand, names) for operand in [node.left, *node.comparators]):
                found.append((node.lineno, "comparison with a solver's name"))
        elif isinstance(node, ast.match_case):
            if any(_is_name(value, names) for value in _patterns(node.pattern)):
                found.append((node.pattern.lineno, "match case on a solver's name"))
        elif isinstance(node, ast.Dict):
            if any(key is not None and _is_name(key, names) for key in node.keys):
                found.append((node.lineno, "dict keyed by a solver's name"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "dict"):
            if any(keyword.arg in names for keyword in node.keywords):
                found.append((node.lineno, "dict keyed by a solver's name"))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            if not _is_name(node.value, names) and _holds_name(node.value, names):
                found.append((node.lineno, "a table of solvers' names"))
    return found


def _outside_solvers():
    return [path for path in sorted(ROOT.rglob("*.py"))
            if "__pycache__" not in path.parts and SOLVERS not in path.parents]


def test_the_registry_names_every_solver():
    assert {"noisy_sgd", "objective_perturbation", "dp_sgd", "adassp"} <= NAMES
    assert _outside_solvers() and all(SOLVERS not in p.parents for p in _outside_solvers())


@pytest.mark.parametrize("snippet", [
    'if solver == "adassp": pass',
    'if "adassp" != solver: pass',
    'ok = name in ("objective_perturbation", "output_perturbation")',
    'ok = name not in {"dp_sgd"}',
    'ok = name in frozenset(["dp_sgd"])',
    'ok = solver is "dp_sgd"',
    'match name:\n    case "dp_sgd":\n        pass',
    'match name:\n    case "x" | "joint_sgd":\n        pass',
    'floors = {"dp_sgd": 1.0}',
    'floors = dict(dp_sgd=1.0)',
    'CENTRED = ("objective_perturbation", "output_perturbation")',
])
def test_the_check_finds_a_name_used_for_dispatch(snippet):
    assert name_dispatch(snippet), snippet


@pytest.mark.parametrize("snippet", [
    'default = "clipped_gd"',
    'sweep = [{"name": "noisy_sgd", "epsilon": 1.0}]',
    'spec = get(name)\nif spec.hooks.bound_floor is not None: pass',
    'if loss == "logistic": pass',
    'message = f"{name} is not dp_sgd"',
])
def test_the_check_leaves_names_as_values_alone(snippet):
    assert not name_dispatch(snippet), snippet


def test_no_solver_name_is_compared_outside_the_solvers_package():
    found = [f"{path.relative_to(ROOT.parent)}:{line}: {what}"
             for path in _outside_solvers()
             for line, what in name_dispatch(path.read_text(encoding="utf-8"),
                                             filename=str(path))]
    assert not found, ("solvers known by name outside dpsolve/solvers/ (use a hook of "
                       "SolverSpec.hooks):\n" + "\n".join(found))


# -- one place per solver: what moved to the solvers' modules ------------------------------------
#: Old module -> the names that moved from it to a solver's module (and still resolve there).
MOVED = {
    "dpsolve.bounds": ("noisy_sgd_lipschitz_bound", "noisy_sgd_strongly_convex_bound",
                       "dpgd_last_iterate_applies", "dpgd_optimisation_error",
                       "clipped_gd_bound", "minibatch_sgd_bound", "output_perturbation_bound",
                       "objective_perturbation_bound", "multiparty_gd_bound"),
    "dpsolve.privacy.calibration": ("noisy_sgd_paper_sigma", "dpgd_paper_sigma", "dpgd_noise",
                                    "multiparty_gd_paper_sigma", "jayaraman_paper_sigma",
                                    "nsgd_paper_sigma"),
    "dpsolve.joint": ("joint_sgd_bound",),
}


@pytest.mark.parametrize("module", sorted(MOVED))
def test_a_moved_name_is_the_same_object_in_its_old_module(module):
    import importlib
    old = importlib.import_module(module)
    for name in MOVED[module]:
        new = getattr(old, name)
        assert new.__module__.startswith("dpsolve.solvers."), name
        assert getattr(importlib.import_module(new.__module__), name) is new
        assert new is getattr(old, name) and name in dir(old)
        namespace = {}
        exec(f"from {module} import {name}", namespace)
        assert namespace[name] is new
    with pytest.raises(AttributeError):
        getattr(old, "no_such_name")


def test_nothing_in_dpsolve_reads_a_moved_name_from_its_old_module():
    # the old modules give the moved names for users only: inside the package, a module below
    # the solvers reaching one would be an import from a higher layer
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ()
            if isinstance(node, ast.ImportFrom) and node.module:
                module = node.module if node.level == 0 else node.module.rpartition(".")[2]
                names = [(module, alias.name) for alias in node.names]
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                names = [(node.value.id, node.attr)]
            for module, name in names:
                for old, moved in MOVED.items():
                    if module in (old, old.rpartition(".")[2]) and name in moved:
                        found.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}: "
                                     f"{module}.{name}")
    assert not found, "\n".join(found)


#: Old module -> the module it moved to (the old name is the same module object).
MOVED_MODULES = {
    "dpsolve.approximate_minima": "dpsolve.solvers.objective_perturbation.approximate_minima",
    "dpsolve.objective_privacy": "dpsolve.solvers.objective_perturbation.privacy_constants",
}


@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_a_moved_module_is_its_new_module(old):
    import importlib
    new = importlib.import_module(MOVED_MODULES[old])
    assert importlib.import_module(old) is new
    namespace = {}
    exec(f"import {old} as here", namespace)
    assert namespace["here"] is new


def test_nothing_in_dpsolve_imports_a_moved_module():
    # objective perturbation's calibration is imported from its package inside dpsolve
    from test_import_layers import GRAPH
    found = sorted(f"{module} imports {old}" for module, targets in GRAPH.items()
                   for old in MOVED_MODULES if old in targets)
    assert not found, "\n".join(found)


def test_the_spec_hooks_are_what_the_rest_of_the_code_asks():
    from dpsolve.solvers import Hooks, SolverSpec
    import dataclasses
    fields = {f.name for f in dataclasses.fields(SolverSpec)}
    # the one-solver fields are hooks now
    assert not fields & {"loss_message", "draw", "parties_option", "measure", "sweep_options"}
    # 22, the target every solver declares (accepts) and the constraint sets it takes
    assert len(fields) == 24
    hooks = {f.name for f in dataclasses.fields(Hooks)}
    assert {"prediction_reg", "bound_floor", "paper_sigma", "refuse_loss", "option_parties",
            "draw", "measure", "sweep_options"} <= hooks
    used = {name: [spec.name for spec in registry() if getattr(spec.hooks, name)]
            for name in hooks}
    assert all(used.values()), used     # no hook without a solver that sets it


def _paper_plan(spec):
    """A plan of ``spec`` with ``calibration="paper"`` at a target the sources' formulas take
    (epsilon < 1 and delta < 1/n^3), on its example problem."""
    import warnings
    import numpy as np
    import dpsolve
    X, y = dpsolve.datasets.make_synthetic(40, 3, rng=0)
    problem = dpsolve.Problem(X, y, "logistic", **spec.example_problem)
    parties = None
    if spec.partition is not None:
        parties = dpsolve.Parties.from_sizes(problem, [20, 20])
    options = {k: v for k, v in spec.example.items() if k not in ("epsilon", "delta")}
    options["calibration"] = "paper"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan = dpsolve.solvers.plan_fit(spec, problem, parties, 0.5, 1e-6 / 40 ** 3,
                                        certify_plan=False, **options)
    assert plan.method == "paper" and np.isfinite(plan.sigma)
    return problem, parties, plan


@pytest.mark.parametrize("spec", [s for s in registry() if s.hooks.paper_sigma],
                         ids=lambda s: s.name)
def test_the_paper_sigma_hook_is_the_noise_of_a_paper_plan(spec):
    problem, parties, plan = _paper_plan(spec)
    assert spec.hooks.paper_sigma(problem, parties, plan) == plan.sigma


@pytest.mark.parametrize("spec", [s for s in registry() if s.partition is None],
                         ids=lambda s: s.name)
def test_the_prediction_ridge_is_the_hook_or_the_generic_rule(spec):
    import math
    import dpsolve
    from dpsolve.tuning import prediction_reg
    X, y = dpsolve.datasets.make_synthetic(200, 4, rng=1)
    loss = spec.losses[0]
    problem = dpsolve.Problem(X, y if loss != "squared" else X[:, 0] / 2, loss, radius=None,
                              reg=0.1, n_classes=3 if loss == "multinomial" else None)
    reg = prediction_reg(problem, spec.name, 1.0, 1e-6)
    assert reg >= 1.0 / problem.n
    if spec.hooks.prediction_reg is not None:
        assert reg == max(1.0 / problem.n, spec.hooks.prediction_reg(problem, 1.0, 1e-6))
    elif math.isfinite(problem.lipschitz):
        assert reg == max(1.0 / problem.n, problem.lipschitz * problem.row_norm / 30.0
                          * math.sqrt(math.prod(problem.theta_shape)) / (problem.n * 1.0))


def test_every_solver_page_is_in_the_docs_toctree():
    # a solver's page cannot be forgotten: the spec names it, and the landing page lists it
    import re
    docs = ROOT.parent / "docs"
    index = (docs / "index.md").read_text(encoding="utf-8")
    listed = {line.strip() for block in re.findall(r"```\{toctree\}\n(.*?)```", index, re.S)
              for line in block.splitlines() if line.strip() and not line.startswith(":")}
    for spec in registry():
        assert (docs / spec.page).is_file(), spec.page
        assert spec.page.removesuffix(".md") in listed, (spec.name, spec.page)
