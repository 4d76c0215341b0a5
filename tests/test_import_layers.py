"""dpsolve's internal import graph, read statically with ``ast``: no import circles
(docs/changelog.md, "Architecture: no import circles").

The graph has one node per module of the ``dpsolve`` package (``pkg/__init__.py`` is the node
``pkg``) and an edge ``a -> b`` whenever ``a`` imports ``b``:

* at module level or inside a function, method or class body (a lazy import still closes a
  circle: whichever module is imported first, the other one needs it);
* with relative imports resolved against the importing module's package;
* ``from pkg import x`` is an edge to ``pkg.x`` when ``x`` is a submodule of ``pkg`` (a ``.py``
  file, a package, or a compiled extension), and to ``pkg`` otherwise;
* imports under ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``) are left out: they never run.

Importing ``a.b.c`` also runs ``a/__init__.py`` and ``a/b/__init__.py``; these implicit edges to
the parent packages are not drawn (as import-linter and grimp do), since every module would then
reach the package root, which imports nearly everything. Imports by ``importlib.import_module``
are not seen.

A circle is a strongly connected component of more than one module (or a module importing
itself). There is none: the target test requires none at all, and the ratchet, at 0, says the
same with the list of the closing edges should one come back.
"""
import ast
import pathlib

PACKAGE = "dpsolve"
ROOT = pathlib.Path(__file__).resolve().parent.parent / PACKAGE

#: Modules in import circles: 20 when this test was written, in three circles -- 16 modules
#: (the solvers package and its ten solvers, _lifecycle, bounds, joint, parties and
#: _remote_parties), experiments.runner <-> experiments.cluster and experiments.runs <->
#: experiments.sweep. (Issue 31 counted "one circle of 22 modules"; by these rules the tree had
#: 34 modules in circles, 30 + 2 + 2, before the first floor fixes.) 13 once the registry moved
#: to solvers._registry (the solver modules no longer import their package): 9 + 2 + 2, the
#: nine being _remote_parties, bounds, joint, parties, solvers._lifecycle, solvers._registry and
#: the three solvers _remote_parties imports. 9 once collaboration_full_dp moved to
#: solvers.joint_sgd (joint no longer imports the solver, but it stays in the circle through
#: parties -> _remote_parties -> solvers.joint_sgd -> joint) and the experiments package's two
#: circles were broken: the one circle of 9 above. 8 once joint_sgd_bound moved from bounds to
#: joint (bounds no longer imports joint): _remote_parties, joint, parties, solvers._lifecycle,
#: solvers._registry and the three solvers _remote_parties imports. 0 once the parties'
#: transport became generic (``Parties.map``/``call``/``reduce``, each protocol's steps in its
#: solver module) and ``RemoteParties`` moved into ``parties`` (``_remote_parties``, the worker
#: side, imports nothing from dpsolve): no circle is left, and test_no_import_cycle_at_all runs
#: as a real test. Never raise it.
MAX_MODULES_IN_CYCLES = 0


# -- the graph ---------------------------------------------------------------------------------
def _module_name(path):
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules():
    """``{dotted name: path}`` of every ``.py`` module in the package."""
    return {_module_name(path): path for path in sorted(ROOT.rglob("*.py"))
            if "__pycache__" not in path.parts}


def _is_submodule(name, modules):
    """Whether ``name`` is a module of the package: Python source, a package, or an extension
    module (built in place, ``joint.cpython-311-x86_64-linux-gnu.so``, or, after a regular
    install, known by its Cython source in the top-level ``_kernels/``)."""
    if name in modules:
        return True
    if name.startswith("dpsolve._kernels.") and (
            ROOT.parent / "_kernels" / (name.rpartition(".")[2] + ".pyx")).is_file():
        return True
    parent, _, leaf = name.rpartition(".")
    directory = ROOT.parent.joinpath(*parent.split("."))
    return any(directory.glob(f"{leaf}.*.so")) or any(directory.glob(f"{leaf}.*.pyd")) or any(
        directory.glob(f"{leaf}.so"))


def _is_type_checking(test):
    return ((isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
            or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _imports(tree):
    """The Import and ImportFrom nodes of ``tree`` at any depth, except those under
    ``if TYPE_CHECKING:`` (the ``else`` branch of such an ``if`` does run, and is kept)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _resolve(module, is_package, node):
    """The absolute module an ImportFrom's ``from`` part names (None outside the package)."""
    if node.level == 0:
        return node.module
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if node.level > 1:
        base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph():
    """``{module: {imported module: [line numbers]}}`` over dpsolve's own modules."""
    modules = _modules()
    graph = {}
    for module, path in modules.items():
        edges = graph.setdefault(module, {})
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                source = _resolve(module, path.name == "__init__.py", node)
                if not source:
                    continue
                targets = [f"{source}.{alias.name}"
                           if _is_submodule(f"{source}.{alias.name}", modules) else source
                           for alias in node.names]
            for target in targets:
                if target == PACKAGE or target.startswith(PACKAGE + "."):
                    # ``import a.b.c`` of an extension or a name we cannot see: the longest
                    # known module that prefixes it
                    while target not in modules and not _is_submodule(target, modules):
                        target = target.rpartition(".")[0]
                    edges.setdefault(target, []).append(node.lineno)
    return graph


def strongly_connected_components(graph):
    """Tarjan's algorithm (iterative): the components of ``{node: iterable of successors}``."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(graph.get(succ, ()))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def import_cycles(graph=None):
    """The circles of the import graph: components of more than one module, or a module that
    imports itself, largest first."""
    graph = import_graph() if graph is None else graph
    return sorted((c for c in strongly_connected_components(graph)
                   if len(c) > 1 or c[0] in graph.get(c[0], ())), key=lambda c: (-len(c), c))


def describe(cycles, graph):
    """One paragraph per circle: its modules, each with the imports that keep it inside."""
    lines = []
    for cycle in cycles:
        members = set(cycle)
        lines.append(f"circle of {len(cycle)} modules:")
        for module in cycle:
            inside = sorted(t for t in graph[module] if t in members)
            where = ", ".join(f"{t} (line {', '.join(map(str, sorted(set(graph[module][t]))))})"
                              for t in inside)
            lines.append(f"  {module} -> {where}")
    return "\n".join(lines)


# -- the tests ---------------------------------------------------------------------------------
GRAPH = import_graph()


def test_the_graph_sees_lazy_relative_and_submodule_imports():
    # module level, relative, ``from .. import submodule``
    assert "dpsolve.bounds" in GRAPH["dpsolve.solvers.objective_perturbation"]
    assert "dpsolve.joint" in GRAPH["dpsolve.solvers.joint_sgd"]
    assert "dpsolve.solvers._registry" in GRAPH["dpsolve.solvers.joint_sgd"]
    # ``from . import get`` (lazy, in solvers.choose): a name of the package, not a submodule
    assert "dpsolve.solvers" in GRAPH["dpsolve.solvers.choose"]
    assert "dpsolve.solvers.get" not in GRAPH["dpsolve.solvers.choose"]
    # a lazy import inside a function (cli's ``from .demo import`` in its commands)
    assert "dpsolve.demo" in GRAPH["dpsolve.cli"]


def test_the_tarjan_components_are_right():
    graph = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": ["e"], "e": ["d"], "f": ["f"],
             "g": []}
    assert import_cycles(graph) == [["a", "b", "c"], ["d", "e"], ["f"]]
    # a chain longer than Python's recursion limit: iterative, no RecursionError
    chain = {i: [i + 1] for i in range(5000)}
    chain[5000] = [0]
    assert [len(c) for c in import_cycles(chain)] == [5001]


def test_type_checking_imports_are_left_out():
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a\n"
                     "else:\n    import b\ndef f():\n    import c\n")
    names = [alias.name for node in _imports(tree) for alias in node.names]
    assert sorted(names) == ["TYPE_CHECKING", "b", "c"]


def test_no_import_cycle_grows():
    """The ratchet: no new circle, and no circle grows (see MAX_MODULES_IN_CYCLES)."""
    cycles = import_cycles(GRAPH)
    in_cycles = sum(len(c) for c in cycles)
    assert in_cycles <= MAX_MODULES_IN_CYCLES, (
        f"{in_cycles} modules are in import circles, more than the {MAX_MODULES_IN_CYCLES} "
        f"allowed (lazy imports count):\n{describe(cycles, GRAPH)}")


def test_no_import_cycle_at_all():
    """No import circle at all, lazy imports included."""
    cycles = import_cycles(GRAPH)
    assert not cycles, describe(cycles, GRAPH)


def test_the_worker_side_of_the_transport_imports_nothing_from_dpsolve():
    """``_remote_parties`` runs whatever step it is sent: it knows no protocol, no solver."""
    assert f"{PACKAGE}._remote_parties" in _modules()
    assert not GRAPH.get(f"{PACKAGE}._remote_parties")


# -- the floors ---------------------------------------------------------------------------------
#: dpsolve's layers, lowest first: a module may import its own layer and those below, never one
#: above. A module belongs to the layer of its longest matching prefix (a prefix names a module
#: or a package and everything in it); the package root, which re-exports the public API, is
#: on top.
LAYERS = (
    ("kernels and validation", ("dpsolve._kernels", "dpsolve._validation", "dpsolve._version",
                                "dpsolve._capabilities", "dpsolve._deprecation", "dpsolve._moved",
                                "dpsolve._labels",
                                "dpsolve._ordered_linalg", "dpsolve._row_ops",
                                "dpsolve._projection", "dpsolve._secure", "dpsolve._numerics")),
    ("losses, privacy and rows", ("dpsolve.losses", "dpsolve.privacy", "dpsolve.rows",
                                  "dpsolve.chunked")),
    ("problem and fit", ("dpsolve.problem", "dpsolve.fit", "dpsolve._fixed_iteration")),
    ("parties, reference and joint", ("dpsolve.parties", "dpsolve._remote_parties",
                                      "dpsolve._multiparty", "dpsolve.reference",
                                      "dpsolve.population",
                                      "dpsolve.joint")),
    ("bounds", ("dpsolve.approximate_minima", "dpsolve.objective_privacy", "dpsolve.bounds")),
    ("solvers", ("dpsolve.solvers",)),
    # the audit of the sources' calibrations reads the sources' formulas in the solvers' modules
    ("estimators, selection, audit and experiments", ("dpsolve.estimators", "dpsolve.tuning",
                                                      "dpsolve.privacy.source_audit",
                                                      "dpsolve.private_selection",
                                                      "dpsolve.preprocessing",
                                                      "dpsolve.audit", "dpsolve.experiments",
                                                      "dpsolve.datasets")),
    ("cli and demo", ("dpsolve.cli", "dpsolve._cli_files", "dpsolve._solve_command",
                      "dpsolve.demo", "dpsolve")),
)


def layer_of(module):
    """The index in :data:`LAYERS` of ``module``'s layer (its longest matching prefix), or None."""
    best, length = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = index, len(prefix)
    return best


def test_every_module_has_a_layer():
    # the root's prefix covers everything, so this checks that the table and the package agree
    # on what is left on top: only the modules named there
    top = len(LAYERS) - 1
    stray = sorted(m for m in GRAPH if layer_of(m) == top and m not in LAYERS[top][1])
    assert not stray, f"modules with no layer of their own (add them to LAYERS): {stray}"


def test_the_layer_rule_is_checked():
    assert layer_of("dpsolve.solvers.noisy_sgd") == 5
    assert layer_of("dpsolve.privacy.budget") == 1
    assert layer_of("dpsolve") == len(LAYERS) - 1
    assert layer_of("dpsolve._kernels.gd") == 0


def upward_imports(graph):
    """Every import of a module from a higher layer, described."""
    return sorted(f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
                  for a, targets in graph.items() for b in targets
                  if layer_of(b) > layer_of(a))


def test_an_upward_import_is_found():
    planted = {name: set(targets) for name, targets in GRAPH.items()}
    planted["dpsolve.problem"].add("dpsolve.solvers._registry")
    assert upward_imports(planted) == [
        "dpsolve.problem (problem and fit) imports dpsolve.solvers._registry (solvers)"]


def test_no_module_imports_one_above_it():
    upward = upward_imports(GRAPH)
    assert not upward, "imports from a higher layer:\n" + "\n".join(upward)
