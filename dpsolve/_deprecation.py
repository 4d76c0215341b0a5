"""Deprecated aliases: an old public name that warns and calls the function under its new one."""
import functools
import warnings


def deprecated_alias(module, old, new):
    """``new`` under the old name ``old`` of ``module``, emitting a DeprecationWarning.

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
    @functools.wraps(new)
    def alias(*args, **kwargs):
        warnings.warn(f"{module}.{old} is deprecated; use {module}.{new.__name__}, which "
                      "computes the same", DeprecationWarning, stacklevel=2)
        return new(*args, **kwargs)
    alias.__name__ = alias.__qualname__ = old
    body = (new.__doc__ or "").split("\n\n", 1)
    alias.__doc__ = (f"Deprecated alias of :func:`{new.__name__}`, which computes the same."
                     + ("\n\n" + body[1] if len(body) > 1 else ""))
    return alias
