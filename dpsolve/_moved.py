"""Names (and modules) that moved to a module of a higher layer, still given by their old module.

A solver's bound and its source's noise formula live in the solver's module
(``dpsolve/solvers/<name>.py``), above :mod:`dpsolve.bounds` and
:mod:`dpsolve.privacy.calibration`, which the solvers import. Those two modules still give the
moved names, as the same objects, resolved on first access (PEP 562's module ``__getattr__``):
importing them never imports a solver, so the layers stay as they are, and nothing inside
dpsolve reads a moved name through its old module (tests/test_architecture.py).
"""
import functools
import importlib
import sys

from ._deprecation import alias, deprecated_alias


def moved_names(module, moved, deprecated=None):
    """The ``__getattr__`` and ``__dir__`` of ``module`` for names that moved away from it.

    Parameters
    ----------
    module : str
        The old module's name (``__name__``).
    moved : mapping of str to str
        ``{name: new module}``: the name is the new module's attribute of the same name.
    deprecated : mapping, optional
        Deprecated aliases, each built once on first access: ``{old name: name}``, of a moved
        name (:func:`dpsolve._deprecation.deprecated_alias`), or ``{old name: (new module,
        name, message)}``, of a function of another module, warning with ``message``
        (:func:`dpsolve._deprecation.alias`).

    Returns
    -------
    tuple of callable
        ``(__getattr__, __dir__)``, to assign in the old module.
    """
    deprecated = dict(deprecated or {})

    @functools.lru_cache(maxsize=None)
    def resolve(name):
        if name in deprecated and isinstance(deprecated[name], tuple):
            home, new, message = deprecated[name]
            return alias(getattr(importlib.import_module(home), new), name, message)
        if name in deprecated:
            return deprecated_alias(module, name, resolve(deprecated[name]))
        return getattr(importlib.import_module(moved[name]), name)

    def __getattr__(name):
        if name in moved or name in deprecated:
            return resolve(name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(vars(importlib.import_module(module))) | set(moved) | set(deprecated))

    return __getattr__, __dir__


def moved_module(module, new):
    """Make the old module ``module`` the module ``new`` it moved to: ``sys.modules`` holds the
    new module under the old name too, so ``import dpsolve.<old>`` and ``from dpsolve.<old>
    import x`` give the same objects (and a patch of one is a patch of the other). Called at
    the bottom of the old module, which holds nothing else; nothing inside dpsolve imports it.

    Parameters
    ----------
    module : str
        The old module's name (``__name__``).
    new : str
        The module it moved to.
    """
    sys.modules[module] = importlib.import_module(new)
