"""The solver registry itself: :func:`register`, :func:`registry` and :func:`get`.

It sits below the solver modules, which register their specs at import
(``from ._registry import register``), and below :mod:`dpsolve.solvers`, which re-exports these
names and imports the built-in solvers in their documented order.
"""
from .. import _capabilities
from ._lifecycle import SolverSpec

_REGISTRY = {}


def register(spec):
    """Add ``spec`` to the registry (at import of its module); names are unique.

    Parameters
    ----------
    spec : SolverSpec
        The solver's spec. Registering the same object again is a no-op; another spec under a
        registered name raises ValueError.

    Returns
    -------
    SolverSpec
        ``spec`` itself.
    """
    if not isinstance(spec, SolverSpec):
        raise TypeError(f"spec must be a SolverSpec, got {type(spec).__name__}")
    if spec.name in _REGISTRY:
        if _REGISTRY[spec.name] is not spec:
            raise ValueError(f"a solver named {spec.name!r} is already registered")
        return spec
    _REGISTRY[spec.name] = spec
    # for the messages that name the solvers taking a sparse X, loss='multinomial' or chunks
    _capabilities.record(spec.name, spec.sparse, spec.losses, spec.chunked, spec.constraints)
    return spec


def registry():
    """The registered solvers' specs, in registration order (a tuple).

    Returns
    -------
    tuple of SolverSpec
        One spec per registered solver.
    """
    return tuple(_REGISTRY.values())


def get(name):
    """The spec of the solver called ``name``; ValueError naming the solvers otherwise.

    Parameters
    ----------
    name : str
        The solver's name (``SolverSpec.name``, e.g. ``"noisy_sgd"``).

    Returns
    -------
    SolverSpec
        Its spec.
    """
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown solver {name!r}; the solvers are "
                         f"{', '.join(_REGISTRY)}") from None
