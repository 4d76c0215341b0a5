"""The coding of a classification loss's labels: the public label set, checked before any data
is read, and each label's index in it, read by blocks of labels.

The loss objects' :meth:`~dpsolve.losses.Loss.public_classes` and
:meth:`~dpsolve.losses.Loss.code_labels` call these.
"""
import math
import numbers

import numpy as np

#: The binary losses' label sets accepted without ``classes``: labels already coded as -1/+1,
#: or as 0/1 with 0 the negative class.
DEFAULT_BINARY_CODINGS = ((-1, 1), (0, 1))


def label_value(value, name):
    """One public label as a plain hashable scalar (numbers, strings, bools)."""
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, (numbers.Number, str)) or isinstance(value, complex):
        raise TypeError(f"{name} must hold real numbers or strings, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name} must hold finite values, got {value}")
    return value


def label_tuple(classes):
    """The ``classes`` argument as a tuple of checked labels (not yet counted)."""
    if isinstance(classes, (str, bytes)) or not hasattr(classes, "__iter__"):
        raise TypeError(f"classes must be a sequence of labels, got {type(classes).__name__}")
    return tuple(label_value(c, "classes") for c in classes)


def check_distinct(values):
    if len(set(values)) != len(values):
        raise ValueError(f"classes must hold distinct labels, got {values}")
    return values


#: Labels per block in :func:`label_codes`: ``np.unique`` sorts a copy of what it is given,
#: with an argsort and an inverse (about five values a label at once); by blocks that is a
#: block's worth, and coding y costs one value a label beyond the result.
_LABEL_BLOCK = 1 << 16


def _python(value):
    return value.item() if isinstance(value, np.generic) else value


def label_codes(y, loss, classes, default_coding):
    """Each label's index in the public ``classes`` (intp), refusing labels outside the set;
    with ``default_coding`` (a binary loss without ``classes=``) the index in (-1, 1) or in
    (0, 1), whichever holds every label, never a mix of the two. Read by blocks of labels."""
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinite values")
    if y.dtype.kind not in "biufUSO":
        raise TypeError(f"y must hold numbers or strings, got dtype {y.dtype}")
    starts = range(0, y.shape[0], _LABEL_BLOCK)
    try:
        present = np.unique(np.concatenate(
            [np.unique(y[s:s + _LABEL_BLOCK]) for s in starts] or [y[:0]]))
    except TypeError as exc:           # an object array of values that cannot be ordered
        raise TypeError(f"y holds labels that cannot be compared: {exc}") from None
    present = [_python(v) for v in present]
    codings = DEFAULT_BINARY_CODINGS if default_coding else (classes,)
    for coding in codings:
        index = {c: k for k, c in enumerate(coding)}
        try:
            codes = [index.get(v) for v in present]
        except TypeError:           # unhashable labels
            codes = [None]
        if None not in codes:
            break
    else:
        if not default_coding:
            outside = [v for v, c in zip(present, codes) if c is None]
            raise ValueError(f"y holds labels outside classes={classes}: "
                             f"{outside[:5]}{' ...' if len(outside) > 5 else ''}")
        raise ValueError(
            f"loss={loss!r} without classes= needs labels in {{-1, +1}} or in {{0, 1}}, got "
            f"{present[:5]}{' ...' if len(present) > 5 else ''}: pass "
            "classes=(negative, positive), the public label set (it must not be read off the "
            "data: see Problem's Notes)")
    out = np.empty(y.shape[0], dtype=np.intp)
    for s in starts:
        block, inverse = np.unique(y[s:s + _LABEL_BLOCK], return_inverse=True)
        out[s:s + inverse.size] = np.asarray([index[_python(v)] for v in block],
                                             dtype=np.intp)[inverse.reshape(-1)]
    return out
