"""The theorem's rate a sweep declares (its ``[rate]`` table): the table checked when the sweep
is loaded, and the function it names in :mod:`dpsolve.bounds` called at one run's settings.

A sweep file may name the rate its theorem page checks the measured slopes against::

    [rate]
    function = "dp_sco_rate"        # a function of dpsolve.bounds
    solvers = ["phased_erm"]        # optional: the solvers it is stated for (default: all)

The function is called at each grid cell with the arguments its signature names among
:data:`RATE_ARGUMENTS`: ``n``, ``p``, ``epsilon`` and ``delta`` (the run's), ``problem`` (the
run's Problem built from its public settings alone, on rows of zeros: what a bound reads of it,
n, p, the radius, the row bound, the loss and the constraint, are all public), ``lipschitz``
and ``diameter`` (that problem's L and D). Its other parameters must have defaults. It returns
a number, or an object with a ``rate`` attribute (:class:`dpsolve.bounds.DpScoRate`) and, if
the rate is a maximum of terms, a ``regime`` naming the one that dominates: the page then fits
each regime's cells apart too. The table is not part of the runs: editing it keeps the results.
"""
import inspect

from .. import bounds

#: The arguments a rate function may take, each given from the run.
RATE_ARGUMENTS = ("n", "p", "epsilon", "delta", "problem", "lipschitz", "diameter")
#: The keys of a ``[rate]`` table.
RATE_KEYS = ("function", "solvers")


def rate_function(name):
    """The function of :mod:`dpsolve.bounds` called ``name``.

    Parameters
    ----------
    name : str
        A public function of :mod:`dpsolve.bounds` (``"dp_sco_rate"``,
        ``"l1_erm_lower_bound"``, ``"dp_sco_lower_bound"``, ...).

    Returns
    -------
    callable

    Raises
    ------
    ValueError
        If ``dpsolve.bounds`` has no public function of that name.
    """
    found = getattr(bounds, name, None) if isinstance(name, str) and name[:1] != "_" else None
    if not inspect.isfunction(found):
        raise ValueError(f"rate.function must name a function of dpsolve.bounds, got {name!r}")
    return found


def rate_arguments(function):
    """The arguments of ``function`` that a run gives (:data:`RATE_ARGUMENTS`), in order.

    Parameters
    ----------
    function : callable
        A rate function (:func:`rate_function`).

    Returns
    -------
    tuple of str

    Raises
    ------
    ValueError
        If it has a parameter without a default that is not one of :data:`RATE_ARGUMENTS`, or
        takes none of them.
    """
    name = function.__name__
    taken = []
    for parameter in inspect.signature(function).parameters.values():
        if parameter.name in RATE_ARGUMENTS:
            taken.append(parameter.name)
        elif (parameter.default is inspect.Parameter.empty
              and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)):
            raise ValueError(f"rate.function = {name!r} needs {parameter.name!r}, which a run "
                             f"does not give: a rate takes only {', '.join(RATE_ARGUMENTS)}")
    if not taken:
        raise ValueError(f"rate.function = {name!r} takes none of {', '.join(RATE_ARGUMENTS)}")
    return tuple(taken)


def check_rate(table, solvers, error=ValueError):
    """Check a sweep's ``[rate]`` table, before any run.

    Parameters
    ----------
    table : dict
        The table: ``function`` (required), the name of a function of :mod:`dpsolve.bounds`
        whose required parameters are among :data:`RATE_ARGUMENTS`; ``solvers`` (optional), a
        non-empty list of the names of the sweep's solvers it is stated for.
    solvers : collection of str
        The names of the sweep's solvers.
    error : type, default ValueError
        The exception raised (the sweep's :class:`~dpsolve.experiments.SweepError`).

    Returns
    -------
    dict
        ``{"function": name, "solvers": list of names or None (every solver)}``.

    Raises
    ------
    error
        Naming the key: an unknown key, a missing or unknown function, a function that needs
        an argument a run does not give, or a solver the sweep does not run.
    """
    if not isinstance(table, dict):
        raise error(f"rate: must be a table (function = ..., solvers = [...]), got {table!r}")
    unknown = sorted(set(table) - set(RATE_KEYS))
    if unknown:
        raise error(f"rate.{unknown[0]}: unknown key; accepted: {', '.join(RATE_KEYS)}")
    try:
        rate_arguments(rate_function(table.get("function")))
    except ValueError as exc:
        raise error(str(exc)) from None
    named = table.get("solvers")
    if named is not None:
        if not isinstance(named, list) or not named or not all(
                isinstance(s, str) for s in named):
            raise error(f"rate.solvers: must be a non-empty list of solver names, got {named!r}")
        missing = sorted(set(named) - set(solvers))
        if missing:
            raise error(f"rate.solvers: {missing[0]!r} is not a solver of this sweep "
                        f"({', '.join(sorted(set(solvers)))})")
    return {"function": table["function"], "solvers": None if named is None else list(named)}


def call_rate(function, given):
    """The rate at one run: ``(value, regime)``.

    Parameters
    ----------
    function : callable
        A rate function (:func:`rate_function`).
    given : dict
        The run's values of :data:`RATE_ARGUMENTS` (at least those the function takes).

    Returns
    -------
    value : float
        The number the function returns, or its ``rate`` attribute.
    regime : str or None
        Its ``regime`` attribute (which term of a maximum dominates), else None.
    """
    found = function(**{name: given[name] for name in rate_arguments(function)})
    return float(getattr(found, "rate", found)), getattr(found, "regime", None)
