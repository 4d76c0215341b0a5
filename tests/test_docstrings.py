"""numpydoc validation of the public API (as scikit-learn's ``test_docstrings.py``).

Every public function and class of dpsolve's public modules has a docstring that documents
each parameter (``PR01``), documents no parameter it does not take (``PR02``), and has a Returns
section when it returns a value (``RT01``). A class may document its constructor's arguments
under Attributes when they are stored as such (frozen dataclasses such as ``Fit``).
"""
import importlib
import inspect

import pytest

PUBLIC_MODULES = [
    "dpsolve", "dpsolve.audit", "dpsolve.bounds", "dpsolve.datasets", "dpsolve.fit",
    "dpsolve.joint", "dpsolve.losses", "dpsolve.parties", "dpsolve.population", "dpsolve.problem",
    "dpsolve.reference",
    "dpsolve.privacy", "dpsolve.privacy.accounting", "dpsolve.privacy.calibration",
    "dpsolve.privacy.composition", "dpsolve.privacy.mechanisms", "dpsolve.privacy.samplers",
    "dpsolve.solvers", "dpsolve.experiments", "dpsolve.privacy.budget", "dpsolve.privacy.quantile",
    "dpsolve.private_selection", "dpsolve.private_selection.repetitions", "dpsolve.preprocessing",
    "dpsolve.preprocessing.schema",
    "dpsolve.private_selection.selection", "dpsolve.estimators", "dpsolve.experiments.cluster",
    "dpsolve.privacy.events", "dpsolve.privacy.tail_bounds",
    "dpsolve.solvers.objective_perturbation.privacy_constants",
    "dpsolve.solvers.objective_perturbation.approximate_minima",
]
CHECKED = {"GL08", "PR01", "PR02", "RT01"}


def _public_objects():
    found = {}
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        names = getattr(module, "__all__", None)
        if names is None:
            names = [n for n, obj in vars(module).items() if not n.startswith("_")
                     and getattr(obj, "__module__", None) == name]
        for attribute in names:
            obj = getattr(module, attribute)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            home = getattr(obj, "__module__", "")
            if not home.startswith("dpsolve") or any(
                    part.startswith("_") and part != "__init__" for part in home.split(".")[1:]
                    if part not in ("_lifecycle",)):
                continue
            found[f"{home}.{obj.__qualname__}"] = obj
    return found


OBJECTS = _public_objects()


def _attributes(obj):
    from numpydoc.docscrape import ClassDoc   # imported by the test that calls this
    return {name.strip() for item in ClassDoc(obj).get("Attributes", [])
            for name in item.name.split(":")[0].split(",")}


# numpydoc needs Sphinx, the docs extra's: the slow tier's, with the docs build (CI installs it)
@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(OBJECTS))
def test_public_docstring_is_complete(path):
    numpydoc_validate = pytest.importorskip("numpydoc.validate")
    result = numpydoc_validate.validate(path)
    errors = [(code, message) for code, message in result["errors"] if code in CHECKED]
    obj = OBJECTS[path]
    if inspect.isclass(obj) and errors:
        documented = _attributes(obj)
        errors = [(code, message) for code, message in errors
                  if not (code == "PR01" and all(name in documented for name in
                                                 _missing(message)))]
    assert not errors, "\n".join(f"{path}: {code} {message}" for code, message in errors)


def _missing(message):
    """The parameter names of a PR01 message ("Parameters {'a', 'b'} not documented")."""
    inside = message[message.index("{") + 1:message.rindex("}")]
    return [part.strip().strip("'\"*") for part in inside.split(",")]


def test_the_public_api_is_found():
    assert "dpsolve.solvers.noisy_sgd.noisy_sgd" in OBJECTS
    assert "dpsolve.problem.Problem" in OBJECTS
    assert len(OBJECTS) > 80
