"""Which registered solvers take a sparse X and which take ``loss="multinomial"``: the names
that the refusals (:func:`dpsolve._row_ops.refuse_sparse`,
:func:`dpsolve.problem.reject_multinomial`) list.

The modules that refuse (the fit lifecycle, :class:`~dpsolve.Parties`, the theorems' bounds,
:func:`dpsolve.audit.canary_neighbours`) pass these names in; most of them sit below
:mod:`dpsolve.solvers` and may not import it. Instead, :func:`dpsolve.solvers.register` records
here, as it registers a spec, whether it takes each (``SolverSpec.sparse``,
``SolverSpec.losses``): the names are the registry's, in its order, and this module imports
nothing.
"""
_SPARSE = []
_MULTINOMIAL = []
_CHUNKED = []
_CONSTRAINTS = {}


def record(name, sparse, losses, chunked=False, constraints=("l2",)):
    """Note that the solver ``name``, just registered, takes a sparse X if ``sparse``,
    ``loss="multinomial"`` if that is among ``losses``, rows in chunks if ``chunked`` and the
    constraint sets of ``constraints``. Called by :func:`dpsolve.solvers.register` only, once
    per name."""
    for constraint in constraints:
        _CONSTRAINTS.setdefault(constraint, []).append(name)
    if sparse:
        _SPARSE.append(name)
    if chunked:
        _CHUNKED.append(name)
    if "multinomial" in losses:
        _MULTINOMIAL.append(name)


def sparse_solvers():
    """The registered solvers that take a sparse X, in registration order (a tuple)."""
    return tuple(_SPARSE)


def chunked_solvers():
    """The registered solvers that take X in chunks of rows (a Dask array or a
    :class:`~dpsolve.chunked.RowChunks`), in registration order (a tuple)."""
    return tuple(_CHUNKED)


def constraint_solvers(constraint):
    """The registered solvers that take ``constraint`` (``"l2"`` or ``"l1"``:
    ``SolverSpec.constraints``), in registration order (a tuple)."""
    return tuple(_CONSTRAINTS.get(constraint, ()))


def multinomial_solvers():
    """The registered solvers that take ``loss="multinomial"``, in registration order (a
    tuple)."""
    return tuple(_MULTINOMIAL)
