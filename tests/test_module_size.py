"""No module of the package over 900 lines (docs/changelog.md, "Architecture, third step"): a
module that long holds more than one idea, and is split along them, its public names staying
importable from the old module."""
import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "dpsolve"
MAX_LINES = 900

def module_lines(root=PACKAGE):
    """``{path relative to root: number of lines}`` of every ``.py`` module under ``root``."""
    return {path.relative_to(root).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
            for path in sorted(root.rglob("*.py")) if "__pycache__" not in path.parts}


def over_the_limit(lines, exempt=frozenset()):
    """The modules of ``lines`` over :data:`MAX_LINES`, with their sizes, but those exempt."""
    return sorted(f"{path}: {count} lines" for path, count in lines.items()
                  if count > MAX_LINES and path not in exempt)


def test_a_long_module_is_found(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_LINES)
    lines = module_lines(tmp_path)
    assert lines == {"pkg/long.py": MAX_LINES + 1, "short.py": MAX_LINES}
    assert over_the_limit(lines) == [f"pkg/long.py: {MAX_LINES + 1} lines"]
    assert over_the_limit(lines, {"pkg/long.py"}) == []


def test_no_module_is_over_900_lines():
    over = over_the_limit(module_lines())
    assert not over, f"modules over {MAX_LINES} lines (split them by idea):\n" + "\n".join(over)


#: The longest function body: what one reader follows at once.
MAX_FUNCTION_LINES = 60


def long_functions(source, limit=MAX_FUNCTION_LINES):
    """``[(name, lines)]`` of the functions in ``source`` longer than ``limit`` lines, counted
    from the ``def`` line to the last line, the docstring left out."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                lines -= first.end_lineno - first.lineno + 1
            if lines > limit:
                found.append((node.name, lines))
    return found


def test_a_long_function_is_found():
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES - 1))
    docstring = '    """A docstring\n    of three lines,\n    left out."""\n'
    assert long_functions("def f():\n" + docstring + body) == []
    assert long_functions("def f():\n" + body + "    return 0\n") == [
        ("f", MAX_FUNCTION_LINES + 1)]


def test_no_function_is_over_60_lines():
    over = [f"{path}: {name}, {lines} lines" for path in module_lines()
            for name, lines in long_functions((PACKAGE / path).read_text(encoding="utf-8"))]
    assert not over, (f"functions over {MAX_FUNCTION_LINES} lines, docstrings left out "
                      "(split them):\n" + "\n".join(over))
