"""What a Problem learns from validating rows in chunks: each chunk is validated where it lives
(:meth:`dpsolve.rows.RowChunks.derive`, with a function of :mod:`dpsolve.problem`), and only
public facts come back: how many rows were clipped, which default label codings the labels
fit, and the warnings raised. The driver adds them up here.
"""
import contextlib
import threading
import warnings

import numpy as np

from .._row_ops import dual_row_norms
from ..losses import DEFAULT_BINARY_CODINGS

_WARNINGS_LOCK = threading.Lock()


@contextlib.contextmanager
def caught_warnings():
    """Every warning raised inside, recorded (a list) rather than shown: one per chunk would
    tell the driver each chunk's count. ``catch_warnings`` swaps process-wide state, so
    workers sharing a process (threads) take turns."""
    with _WARNINGS_LOCK, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def _is_clip_warning(record):
    return issubclass(record.category, UserWarning) and "clipped" in str(record.message)


def chunk_facts(problem, X, y, classes, caught):
    """The public facts of one chunk validated as ``problem`` from its rows ``X, y``: the
    clipped-row count (the count Problem's warning gives: rows beyond the bound by more than
    rounding), the default binary codings its labels fit (None unless a binary loss without
    ``classes``), and the other warnings, as (category, message)."""
    clipped = 0
    others = []
    for record in caught:
        if _is_clip_warning(record):
            bound = problem.feature_row_norm
            clipped = int(np.count_nonzero(dual_row_norms(X, problem.constraint)
                                            > bound * (1.0 + 1e-12)))
        else:
            others.append((record.category, str(record.message)))
    fits = None
    loss = problem.loss_object
    if classes is None and loss.classification and not loss.is_multinomial:
        labels = np.unique(np.asarray(y))
        fits = tuple(bool(np.all(np.isin(labels, coding))) for coding in DEFAULT_BINARY_CODINGS)
    return {"clipped": clipped, "codings": fits, "warnings": others}


def merge_chunk_facts(facts, loss):
    """The clipped-row count over all chunks, after refusing labels that fit different default
    codings in different chunks (a ValueError naming ``loss``) and showing each other warning
    once."""
    codings = [f["codings"] for f in facts if f["codings"] is not None]
    # each chunk's labels fit one coding; all of them together must fit the same one
    if codings and not np.any(np.logical_and.reduce(codings)):
        raise ValueError(
            f"loss={getattr(loss, 'name', loss)!r} without classes= needs labels in "
            "{-1, +1} or in {0, 1} across all chunks, got a mix: pass "
            "classes=(negative, positive), the public label set")
    seen = set()
    for f in facts:
        for category, message in f["warnings"]:
            if (category, message) not in seen:
                seen.add((category, message))
                warnings.warn(message, category, stacklevel=4)
    return sum(f["clipped"] for f in facts)
