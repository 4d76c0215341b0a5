"""Argument checks shared by the public API: each names the parameter and the accepted range."""
import numbers
import math

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
class Constraint:
    """A check of one keyword argument; ``None`` passes when ``optional``."""

    optional = False

    def check(self, value, name):
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


class Integer(Constraint):
    """An integer (not a bool) ``>= low``."""

    def __init__(self, low=None, *, optional=False):
        self.low, self.optional = low, optional

    def check(self, value, name):
        return check_int(value, name, low=self.low)


class Options(Constraint):
    """One of a set of strings."""

    def __init__(self, choices, *, optional=False):
        self.choices, self.optional = tuple(choices), optional

    def check(self, value, name):
        return check_choice(value, name, self.choices)


class Boolean(Constraint):
    """A bool (numpy's included)."""

    def check(self, value, name):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
        return bool(value)


class Passthrough(Constraint):
    """Checked by the solver itself (its range depends on other arguments)."""

    def check(self, value, name):
        return value


def check_parameters(constraints, values):
    """``values`` (a dict of keyword arguments) checked against ``constraints`` (a dict of
    :class:`Constraint`), in the order the constraints are declared; returns the checked
    values."""
    unknown = set(values) - set(constraints)
    if unknown:
        raise TypeError(f"unexpected keyword arguments: {', '.join(sorted(unknown))}")
    return {name: constraint(values[name], name) for name, constraint in constraints.items()
            if name in values}
