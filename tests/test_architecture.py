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
