"""One deprecation mechanism: every DeprecationWarning comes from dpsolve/_deprecation.py, with
the old name's user's line as its location, and every old name returns what the new one does
(the old names themselves are tested beside their new ones: test_bounds.py, test_privacy.py,
test_problem.py, test_source_audit.py)."""
import ast
import pathlib
import warnings

import pytest

import dpsolve
from dpsolve import _deprecation

PACKAGE = pathlib.Path(dpsolve.__file__).parent
WARNINGS = {"DeprecationWarning", "FutureWarning", "PendingDeprecationWarning"}


def _names(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)} | \
        {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}


def test_only_the_deprecation_module_names_a_deprecation_warning():
    """No module but dpsolve/_deprecation.py builds a deprecation by hand."""
    assert WARNINGS & _names(PACKAGE / "_deprecation.py")
    hand_made = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                       if path.name != "_deprecation.py" and WARNINGS & _names(path))
    assert hand_made == []


def _old_name_uses():
    from dpsolve import _multiparty, bounds
    from dpsolve.privacy import composition
    problem = dpsolve.Problem(*dpsolve.datasets.make_synthetic(20, 2, rng=0), radius=1.0)
    return {
        "function": lambda: composition.seed000_lemma1_composition(0.1, 1e-6, 10, 1e-5),
        "same-module function": lambda: bounds.sgd1_lipschitz_bound(problem, 0.5, 1e-6),
        "property": lambda: problem.loss_function,
        "module attribute": lambda: _multiparty.SGD1Transcript,
    }


@pytest.mark.parametrize("kind", ["function", "same-module function", "property",
                                  "module attribute"])
def test_every_kind_of_old_name_warns_at_its_users_line(kind):
    use = _old_name_uses()[kind]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        use()
    (warning,) = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert warning.filename == __file__, warning.filename
    assert "is deprecated" in str(warning.message)


def test_an_alias_keeps_the_new_functions_signature_and_documents_itself():
    import inspect

    def new(a, b=2):
        """Add.

        Parameters
        ----------
        a, b : int
        """
        return a + b

    old = _deprecation.alias(new, "old", "old is deprecated; use new")
    assert old.__name__ == "old" and inspect.signature(old) == inspect.signature(new)
    assert old.__doc__.startswith("Deprecated alias of") and "Parameters" in old.__doc__
    with pytest.warns(DeprecationWarning, match="^old is deprecated; use new$"):
        assert old(1, b=3) == 4


def test_an_unknown_module_attribute_is_still_an_attribute_error():
    from dpsolve import _multiparty
    with pytest.raises(AttributeError, match="no attribute 'SGD3Transcript'"):
        _multiparty.SGD3Transcript
