"""The selection mechanism: run a private procedure a random number of times K, drawn
independently of the data, and release only the best run (Liu & Talwar 2019; Papernot &
Steinke 2022). The distributions of K are in :mod:`dpsolve.private_selection.repetitions`."""
import dataclasses
import math
from typing import Any, Optional

import dp_accounting

from .._validation import check_choice, check_real, check_rng
from ..privacy.accounting import NEIGHBOURS, check_event, epsilon_of, tightest_accountant
from ..privacy.budget import charge, check_accountant
from .repetitions import draw_repetitions, repetition_event


@dataclasses.dataclass(frozen=True)
class Selection:
    """What :func:`select` released.

    Attributes
    ----------
    index : int or None
        The index of the best run's candidate; None if no run took place (Poisson: K = 0).
    candidate : object
        That candidate (None if no run).
    score : float
        Its private score (``-inf`` if no run).
    output : object
        What its run returned besides the score (e.g. the fitted model).
    epsilon : float
        Epsilon of the whole procedure at ``delta``.
    delta : float
    accountant : str
        The accountant that certified ``epsilon``.
    dp_event : dp_accounting.DpEvent
        ``RepeatAndSelectDpEvent(run_event, mean, shape)``: composes with other releases.
    method : str
    expected_runs : float
        E[K], public (K itself is not released).
    """

    index: Optional[int]
    candidate: Any
    score: float
    output: Any
    epsilon: float
    delta: float
    accountant: str
    dp_event: dp_accounting.DpEvent
    method: str
    expected_runs: float


def select(run, candidates, run_event, *, method="liu_talwar", mean=None, shape=1.0,
           delta=0.0, neighbours=NEIGHBOURS, rng=None, accountant=None):
    r"""Private selection: run a random candidate K times (K drawn independently of the
    data), release the best run.

    Each run draws a candidate uniformly at random and calls ``run(candidate, rng)``, which
    must be private with the DpEvent ``run_event`` whatever the candidate (a private fit and a
    private score, say) and return ``(score, output)``. The run with the highest score is
    released: its candidate, score and output.

    Parameters
    ----------
    run : callable
        ``run(candidate, rng) -> (score, output)``; ``rng`` is a numpy Generator.
    candidates : sequence
        The candidate settings (public), at least one.
    run_event : dp_accounting.DpEvent
        One run's privacy, for every candidate (dpsolve's convention).
    method : {"liu_talwar", "negative_binomial", "poisson"}, default "liu_talwar"
        The distribution of K: geometric (Liu & Talwar 2019; with a pure-DP run, the release is
        pure ``3 epsilon_run``-DP), truncated negative binomial with ``shape`` (Papernot &
        Steinke 2022, Thm 2; shape 1 is geometric), or Poisson (Thm 6; K = 0, and then no
        release, has probability ``e^{-mean}``).
    mean : float, optional
        E[K] >= 1; default the number of candidates.
    shape : float, default 1.0
        eta >= 0 for ``"negative_binomial"``: smaller eta, a heavier tail and a cheaper
        selection (Papernot & Steinke recommend eta in [0, 1]).
    delta : float, default 0.0
        The delta at which ``epsilon`` is reported; 0 only for a pure-DP geometric selection.
    neighbours : {"replace_one", "add_remove"}, default "replace_one"
        The relation under which ``run_event`` holds for every run (dpsolve's fits and
        scores: replace-one, n public); the selection holds under the same one, and a budget
        under another refuses it.
    rng : None, int, SeedSequence or Generator
        Source of K, of the candidates drawn and of each run's randomness. Nothing returned
        holds it: with None, the noise of the released run cannot be regenerated (unless
        ``run`` stores the generator it is given in its output: it must not).
    accountant : BudgetAccountant, optional
        Charged with the whole selection's event before the first run (refused: no run).

    Returns
    -------
    Selection
        A score that is NaN counts as ``-inf`` (it never beats a number; raising instead would
        reveal, mid-selection, something of the data).

    Raises
    ------
    ValueError
        For bad arguments, or if the selection's privacy is not finite at ``delta``.
    """
    try:
        candidates = list(candidates)
    except TypeError:
        raise TypeError(f"candidates must be a sequence of candidate settings, got "
                        f"{type(candidates).__name__}") from None
    if not candidates:
        raise ValueError("candidates must hold at least one candidate")
    if not callable(run):
        raise TypeError(f"run must be callable, got {type(run).__name__}")
    if not isinstance(run_event, dp_accounting.DpEvent):
        raise TypeError(f"run_event must be a dp_accounting DpEvent, got "
                        f"{type(run_event).__name__}")
    try:
        check_event(run_event)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"run_event: {exc}") from None
    neighbours = check_choice(neighbours, "neighbours", ("replace_one", "add_remove"))
    check_accountant(accountant)
    mean = float(len(candidates)) if mean is None else mean
    event = repetition_event(run_event, method, mean, shape)
    delta = check_real(delta, "delta", low=0.0, high=1.0, low_inclusive=True)
    name, epsilon = accounted(event, delta)
    rng = check_rng(rng)
    charge(accountant, event, neighbours=neighbours, label="private selection")
    k = draw_repetitions(event, rng)
    best = (-math.inf, None, None)
    for _ in range(k):
        index = int(rng.integers(len(candidates)))
        score, output = run(candidates[index], rng)
        score = float(score)
        if math.isnan(score):
            score = -math.inf
        if score > best[0] or best[1] is None:
            best = (score, index, output)
    score, index, output = best
    return Selection(index=index, candidate=None if index is None else candidates[index],
                     score=score, output=output, epsilon=epsilon, delta=delta,
                     accountant=name, dp_event=event, method=method,
                     expected_runs=event.mean)


def accounted(event, delta, what="selection"):
    """The accountant that certifies ``event`` at ``delta`` and the epsilon it certifies.

    Parameters
    ----------
    event : dp_accounting.DpEvent
    delta : float
        At 0 the basic accountant (pure DP), else the tightest that reads ``event``.
    what : str, default "selection"
        What ``event`` is, for the messages.

    Returns
    -------
    tuple of (str, float)
        The accountant's name and epsilon.

    Raises
    ------
    ValueError
        If the epsilon is not finite.
    """
    name = "basic" if delta == 0.0 else tightest_accountant(event)
    try:
        epsilon = epsilon_of(event, delta, name)
    except ValueError as exc:
        if delta > 0.0:
            raise ValueError(f"the {what}'s privacy cannot be accounted: {exc}") from None
        epsilon = math.inf
    if not math.isfinite(epsilon):
        raise ValueError(f"the {what} is not private at delta={delta:g} (epsilon is "
                         "infinite): pass delta > 0 (a Renyi-DP bound needs one), or use "
                         "method='liu_talwar' with pure-DP runs")
    return name, epsilon
