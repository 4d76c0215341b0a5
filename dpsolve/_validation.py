"""Argument checks shared by the public API: each names the parameter and the accepted range."""
import math
import numbers
import os
import reprlib
import stat

import numpy as np


def check_real(value, name, *, low=None, high=None, low_inclusive=False, high_inclusive=False,
               allow_inf=False):
    """Return ``value`` as a float after checking type, finiteness and range.

    ``low``/``high`` bound the accepted interval; inclusiveness is per side.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if math.isnan(value) or (math.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be finite, got {value}")
    lo_ok = low is None or (value >= low if low_inclusive else value > low)
    hi_ok = high is None or (value <= high if high_inclusive else value < high)
    if not (lo_ok and hi_ok):
        left = "(-inf" if low is None else ("[" if low_inclusive else "(") + f"{low:g}"
        right = "inf)" if high is None else f"{high:g}" + ("]" if high_inclusive else ")")
        raise ValueError(f"{name} must lie in {left}, {right}, got {value:g}")
    return value


def check_int(value, name, *, low=None):
    """Return ``value`` as an int after checking it is an integer (not bool) and ``>= low``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if low is not None and value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value}")
    return value


def check_choice(value, name, choices):
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {value!r}")
    return value


def check_real_array(value, name, ndim):
    """``value`` as a float64 array after checking its dimension, its dtype (integers or
    floats) and that every entry is finite; a new array whenever a conversion was needed, and
    never modified here."""
    array = np.asarray(value)
    if array.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {array.shape}")
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise TypeError(f"{name} must hold real numbers, got dtype {array.dtype}")
    array = array.astype(np.float64, copy=False)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite")
    return array


def check_rng(rng):
    """Convert ``rng`` (None, int, SeedSequence or Generator) with ``np.random.default_rng``.

    A Generator is used as it is (its stream advances); anything else starts a new one.
    """
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError("rng must be None, an int, a numpy SeedSequence or a numpy Generator")
    if rng is None or isinstance(rng, (numbers.Integral, np.random.SeedSequence, np.random.Generator)):
        if isinstance(rng, numbers.Integral) and rng < 0:
            raise ValueError(f"rng must be a non-negative int seed, got {rng}")
        return np.random.default_rng(rng)
    raise TypeError(
        "rng must be None, an int, a numpy SeedSequence or a numpy Generator, "
        f"got {type(rng).__name__}"
    )


# -- declarative parameter constraints (after scikit-learn's _parameter_constraints) ----------
def _shown(value):
    """``repr(value)`` shortened for a message (a refused array may be large)."""
    return reprlib.repr(value)


class InvalidParameterError(ValueError, TypeError):
    """A value that none of a parameter's accepted alternatives takes (a ValueError and a
    TypeError both, as scikit-learn's: the value may be of a wrong type or out of range)."""


class Constraint:
    """A check of one keyword argument; ``None`` passes when ``optional``.

    A parameter may also be declared by a list of alternatives (a union, as scikit-learn's
    ``_parameter_constraints``): ``[None, Options({"auto"}), Real(0, 1e-2, high_inclusive=True)]``
    accepts None, ``"auto"`` or a number in (0, 0.01] (:func:`as_constraint`).
    """

    optional = False

    def check(self, value, name):
        raise NotImplementedError

    def describe(self):
        """What the constraint accepts, in words (for the union's message)."""
        raise NotImplementedError

    def __call__(self, value, name):
        if value is None and self.optional:
            return None
        return self.check(value, name)


class Real(Constraint):
    """A finite real number in an interval (:func:`check_real`'s keywords)."""

    def __init__(self, low=None, high=None, *, low_inclusive=False, high_inclusive=False,
                 optional=False):
        self.bounds = dict(low=low, high=high, low_inclusive=low_inclusive,
                           high_inclusive=high_inclusive)
        self.optional = optional

    def check(self, value, name):
        return check_real(value, name, **self.bounds)

    def describe(self):
        b = self.bounds
        if b["low"] is None and b["high"] is None:
            return "a finite real number"
        left = ("(-inf" if b["low"] is None
                else ("[" if b["low_inclusive"] else "(") + f"{b['low']:g}")
        right = "inf)" if b["high"] is None else f"{b['high']:g}" + ("]" if b["high_inclusive"]
                                                                       else ")")
        return f"a number in {left}, {right}"


class Integer(Constraint):
    """An integer (not a bool) ``>= low``."""

    def __init__(self, low=None, *, optional=False):
        self.low, self.optional = low, optional

    def check(self, value, name):
        return check_int(value, name, low=self.low)

    def describe(self):
        return "an integer" + ("" if self.low is None else f" >= {self.low}")


class Options(Constraint):
    """One of a set of strings."""

    def __init__(self, choices, *, optional=False):
        self.choices, self.optional = tuple(choices), optional

    def check(self, value, name):
        return check_choice(value, name, self.choices)

    def describe(self):
        if len(self.choices) == 1:
            return repr(self.choices[0])
        return f"one of {sorted(self.choices)}"


class Boolean(Constraint):
    """A bool (numpy's included)."""

    def check(self, value, name):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
        return bool(value)

    def describe(self):
        return "a bool"


class RealArray(Constraint):
    """An array of finite real numbers (any shape: a shape that depends on the Problem is
    checked by the solver's plan). The value is returned as given, never converted here."""

    def check(self, value, name):
        if isinstance(value, (str, bytes)):
            raise TypeError(f"{name} must be {self.describe()}, got {type(value).__name__}")
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be {self.describe()}, got "
                            f"{type(value).__name__}") from None
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{name} must be {self.describe()}")
        return value

    def describe(self):
        return "an array of finite real numbers"


class IndexArray(Constraint):
    """A 1-D sequence of integers (indices; their range against the Problem is the plan's).
    The value is returned as given."""

    def check(self, value, name):
        array = None if isinstance(value, (str, bytes)) else np.asarray(value)
        if array is None or array.ndim != 1 or not (
                array.size == 0 or np.issubdtype(array.dtype, np.integer)):
            raise TypeError(f"{name} must be {self.describe()}, got {_shown(value)}")
        return value

    def describe(self):
        return "a 1-D array of integers"


class InstanceOf(Constraint):
    """An instance of a class."""

    def __init__(self, kind, label=None):
        self.kind, self.label = kind, label or kind.__name__

    def check(self, value, name):
        if not isinstance(value, self.kind):
            raise TypeError(f"{name} must be {self.describe()}, got {type(value).__name__}")
        return value

    def describe(self):
        return f"a {self.label}"


class Passthrough(Constraint):
    """Checked by the solver itself: only for a check that spans several arguments."""

    def check(self, value, name):
        return value

    def describe(self):
        return "checked with the other arguments"


class AnyOf(Constraint):
    """A union: the value is checked against each alternative in turn and the first that
    accepts it gives the checked value; ``None`` among the alternatives accepts None.

    With a single alternative besides None that alternative's own error is raised (its
    wording); otherwise an :class:`InvalidParameterError` names the parameter and every
    accepted alternative.
    """

    def __init__(self, alternatives):
        alternatives = list(alternatives)
        self.optional = any(a is None for a in alternatives)
        self.alternatives = tuple(as_constraint(a) for a in alternatives if a is not None)
        if not self.alternatives:
            raise ValueError("a union needs an alternative besides None")

    def check(self, value, name):
        if len(self.alternatives) == 1:
            return self.alternatives[0](value, name)
        for alternative in self.alternatives:
            try:
                return alternative(value, name)
            except (TypeError, ValueError):
                continue
        raise InvalidParameterError(f"{name} must be {self.describe()}, got {_shown(value)}")

    def describe(self):
        words = [a.describe() for a in self.alternatives] + (["None"] if self.optional else [])
        return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def as_constraint(declaration):
    """A :class:`Constraint` from a parameter's declaration: a Constraint, or a list of
    alternatives (a union, :class:`AnyOf`)."""
    if isinstance(declaration, Constraint):
        return declaration
    if isinstance(declaration, (list, tuple)):
        return AnyOf(declaration)
    raise TypeError(f"a parameter is declared by a Constraint or a list of alternatives, got "
                    f"{type(declaration).__name__}")


def check_parameters(constraints, values):
    """``values`` (a dict of keyword arguments) checked against ``constraints`` (a dict of
    :class:`Constraint` or lists of alternatives), in the order the constraints are declared;
    returns the checked values."""
    unknown = set(values) - set(constraints)
    if unknown:
        raise TypeError(f"unexpected keyword arguments: {', '.join(sorted(unknown))}")
    return {name: as_constraint(constraint)(values[name], name)
            for name, constraint in constraints.items() if name in values}


# -- files ------------------------------------------------------------------------------------
def file_kind(mode):
    """What a path that is not a regular file is, from its ``st_mode``, for the messages."""
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return "not a regular file"


def check_input_file(path, what, error=ValueError):
    """Check that ``path`` is an existing regular file, without opening it.

    Opening a named pipe (FIFO) for reading blocks until some other process opens it for
    writing, and a directory, a socket or a device is not a file of settings or data: each is
    refused from :func:`os.stat`, before anything opens it.

    Parameters
    ----------
    path : str or Path
        The file.
    what : str
        How the file is named in the messages, which start with it (``"--data d.csv"``,
        ``"cannot read the sweep file s.toml"``).
    error : type, default ValueError
        The exception raised (a sweep's, a store's or the command line's).

    Returns
    -------
    os.stat_result
        The file's status.

    Raises
    ------
    error
        ``what: no such file``, ``what: is a named pipe (FIFO), not a regular file`` (or a
        directory, a socket, a device), or the operating system's reason it cannot be looked up
        (permission, a name too long, a symbolic link loop).
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise error(f"{what}: no such file") from None
    except (OSError, ValueError) as exc:       # ValueError: a NUL byte in the name
        raise error(f"{what}: {getattr(exc, 'strerror', None) or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise error(f"{what}: is {file_kind(info.st_mode)}, not a regular file")
    return info


def open_input_file(path, what, error=ValueError):
    """Open an existing regular file for reading, in binary mode, after
    :func:`check_input_file`; the one way dpsolve opens a file it reads settings or results from.

    Parameters
    ----------
    path : str or Path
        The file.
    what : str
        How the file is named in the messages (:func:`check_input_file`).
    error : type, default ValueError
        The exception raised.

    Returns
    -------
    file object
        Open for reading bytes; the caller closes it (``with open_input_file(...) as fh``).

    Raises
    ------
    error
        As :func:`check_input_file`, or if the file cannot be opened (permission).
    """
    check_input_file(path, what, error)
    # O_NONBLOCK: a named pipe put in the file's place after the check still cannot block the
    # open (the status of what was opened is checked again); it has no effect on a regular file
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise error(f"{what}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise error(f"{what}: is {file_kind(mode)}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
