"""Deprecations, in one place: every DeprecationWarning dpsolve emits comes from :func:`warn`,
and every old name is built here, as a function alias (:func:`alias`, :func:`deprecated_alias`),
a property alias (:func:`property_alias`) or a module attribute (:func:`module_aliases`).

An old name keeps working, warns with its message, and returns what the new name returns. A
name deprecated in one minor release is removed in the next (docs/changelog.md says which).
"""
import functools
import warnings


def warn(message, stacklevel=1):
    """Emit ``message`` as a DeprecationWarning.

    Parameters
    ----------
    message : str
        Names the old name and the new one.
    stacklevel : int, default 1
        As ``warnings.warn``'s, counted from the caller of this function (1: the caller's own
        line; 2: the line that called the caller, the usual choice for an old name's user).
    """
    warnings.warn(message, DeprecationWarning, stacklevel=stacklevel + 1)


def alias(new, old, message):
    """``new`` under the old name ``old``: calling it warns with ``message``, then returns what
    ``new`` returns. The signature is ``new``'s; the docstring says it is an alias, followed by
    the body of ``new``'s (its parameters and returns).

    Parameters
    ----------
    new : callable
        The function (or class) under its new name.
    old : str
        The old name (the alias's ``__name__``).
    message : str
        The DeprecationWarning's message.

    Returns
    -------
    callable
    """
    # a class (an old factory of its instances): its name and docstring are kept, not its
    # namespace, which is no function's attributes
    @functools.wraps(new, updated=() if isinstance(new, type) else functools.WRAPPER_UPDATES)
    def deprecated(*args, **kwargs):
        warn(message, stacklevel=2)
        return new(*args, **kwargs)
    deprecated.__name__ = deprecated.__qualname__ = old
    body = (new.__doc__ or "").split("\n\n", 1)
    role = "class" if isinstance(new, type) else "func"
    deprecated.__doc__ = (f"Deprecated alias of :{role}:`{new.__module__}.{new.__name__}`, which "
                          "computes the same." + ("\n\n" + body[1] if len(body) > 1 else ""))
    return deprecated


def deprecated_alias(module, old, new):
    """``new`` under the old name ``old`` of ``module`` (both names in the same module), with
    the message ``"<module>.<old> is deprecated; use <module>.<new>, which computes the same"``
    (:func:`alias`).

    Parameters
    ----------
    module : str
        The module both names live in (for the message).
    old : str
        The old name.
    new : callable
        The function that computes the same; its signature and docstring are kept.

    Returns
    -------
    callable
    """
    return alias(new, old, f"{module}.{old} is deprecated; use {module}.{new.__name__}, which "
                           "computes the same")


def property_alias(new, message):
    """A read-only property that warns with ``message`` and returns the attribute ``new`` of
    the instance.

    Parameters
    ----------
    new : str
        The attribute under its new name.
    message : str
        The DeprecationWarning's message.

    Returns
    -------
    property
    """
    def getter(self):
        warn(message, stacklevel=2)
        return getattr(self, new)
    getter.__doc__ = f"Deprecated alias of :attr:`{new}`."
    return property(getter)


def module_aliases(module, names):
    """A module's ``__getattr__`` (PEP 562) for old module attributes: ``names[old]`` is
    ``(new, message)``, the object the old name returns and the DeprecationWarning's message;
    any other unknown attribute raises AttributeError as usual.

    Parameters
    ----------
    module : str
        The module's ``__name__``.
    names : mapping of str to (object, str)
        The old names.

    Returns
    -------
    callable
        To assign to the module's ``__getattr__``.
    """
    def __getattr__(name):
        if name in names:
            new, message = names[name]
            warn(message, stacklevel=2)
            return new
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return __getattr__
