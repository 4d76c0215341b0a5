r"""Private hyperparameter selection: run a private training-and-scoring procedure a random
number of times and release only the best run (Liu & Talwar 2019; Papernot & Steinke 2022).

Why ``GridSearchCV`` on private data is not private: each candidate's model is fitted on the
data and, worse, the scores that pick the winner are exact statistics of the held-out records;
the chosen hyperparameters (and the reported best score) are then a function of the data that
no fit's guarantee covers. Even with private fits, releasing the best of m runs costs up to m
times a run's epsilon by composition. Random stopping fixes both: each run is private (a
private fit, then a private score on held-out records), the number of runs K is drawn from a
fixed distribution independent of the data, and only the best run is released. Its privacy is
a small multiple of one run's, whatever the number of candidates:

* Liu & Talwar 2019, Thm 3.4: K geometric (``shape=1``), each run epsilon-DP: the best run is
  ``3 epsilon``-DP.
* Papernot & Steinke 2022, Thms 2 and 6: K truncated negative binomial (shape eta >= 0;
  eta = 1 geometric, eta = 0 logarithmic) or Poisson, each run's Renyi DP curve given: a Renyi DP
  bound for the best run (dp_accounting's ``RepeatAndSelectDpEvent``, read by the ``"rdp"``
  accountant).

:func:`select` runs it for any private run; :class:`PrivateGridSearch` for dpsolve's
estimators, scored with a noisy accuracy (:func:`noisy_accuracy`). Docs: docs/user_guide.md.

What is released is the best run only: K, the other runs and the running time must stay
hidden (K known, the release is a best-of-K, which composes). The wall-clock time of
:func:`select` grows with K, so whoever times the procedure learns K: run it where its timing is
not observed, as for any side channel of research mode (docs/secure_noise.md).
"""
import dataclasses
import math
import numbers
from typing import Any, Optional

import dp_accounting
import numpy as np
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as _rdp

from ._validation import check_choice, check_real, check_rng
from .privacy.accounting import PrivacyReport, PureDpEvent, epsilon_of, tightest_accountant
from .privacy.budget import check_accountant, spend_once

METHODS = ("liu_talwar", "negative_binomial", "poisson")
#: Largest E[K]: the selection runs K private fits, K about the mean; its privacy does not grow
#: with the mean, so a huge one would be admitted by the budget and then never end.
MAX_MEAN = 1e6


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


def repetition_event(run_event, method, mean, shape=1.0):
    """The DpEvent of releasing the best of K runs of ``run_event``, K drawn by ``method``.

    Parameters
    ----------
    run_event : dp_accounting.DpEvent
        One run's event (it must hold for every candidate).
    method : {"liu_talwar", "negative_binomial", "poisson"}
        ``"liu_talwar"``: K geometric; ``"negative_binomial"``: K truncated negative binomial
        with ``shape``; ``"poisson"``: K Poisson (possibly 0).
    mean : float
        E[K], in [1, ``MAX_MEAN``] (1e6).
    shape : float, default 1.0
        eta >= 0 of the truncated negative binomial (``"negative_binomial"`` only).

    Returns
    -------
    dp_accounting.RepeatAndSelectDpEvent
        With the exact mean of the distribution the sampler uses (the truncated negative
        binomial's parameter gamma is found by bisection; the mean recorded is that of the gamma
        sampled with).
    """
    method = check_choice(method, "method", METHODS)
    mean = check_real(mean, "mean", low=1.0, high=MAX_MEAN, low_inclusive=True,
                      high_inclusive=True)
    if method == "liu_talwar":
        return dp_event.RepeatAndSelectDpEvent(run_event, mean, 1.0)
    if method == "poisson":
        return dp_event.RepeatAndSelectDpEvent(run_event, mean, math.inf)
    shape = check_real(shape, "shape", low=0.0, low_inclusive=True)
    if mean == 1.0:
        return dp_event.RepeatAndSelectDpEvent(run_event, 1.0, shape)
    gamma = _rdp._gamma_truncated_negative_binomial(shape, mean)
    return dp_event.RepeatAndSelectDpEvent(
        run_event, float(_rdp._truncated_negative_binomial_mean(gamma, shape)), shape)


def draw_repetitions(event, rng):
    """Draw K for a :func:`repetition_event` (public randomness, independent of the data).

    Parameters
    ----------
    event : dp_accounting.RepeatAndSelectDpEvent
    rng : numpy.random.Generator

    Returns
    -------
    int
        K >= 1, or >= 0 for Poisson.
    """
    mean, shape = event.mean, event.shape
    if shape == math.inf:
        return int(rng.poisson(mean))
    if mean == 1.0:
        return 1
    gamma = _rdp._gamma_truncated_negative_binomial(shape, mean)
    if shape == 1.0:
        return int(rng.geometric(gamma))
    if shape == 0.0:
        return int(rng.logseries(1.0 - gamma))
    return _truncated_negative_binomial(shape, gamma, rng)


def _truncated_negative_binomial(shape, gamma, rng):
    """K >= 1 with ``P(K = k)`` proportional to ``binom(k + shape - 1, k) (1 - gamma)^k`` by
    inversion of its distribution function (one uniform).

    Rejecting the draws of numpy's negative binomial that are 0 needs ``1 / P(K >= 1) =
    1 / (1 - gamma^shape)`` tries on average, which grows without bound as ``shape -> 0``
    (1e-8: hours). Here the work is the drawn K itself, plus at most the steps until the
    probabilities underflow, whatever the shape."""
    log_gamma = math.log(gamma)
    # P(K = 1): shape gamma^shape (1 - gamma) / (1 - gamma^shape), the last factor by expm1
    p = math.exp(math.log(shape) + shape * log_gamma + math.log1p(-gamma)
                 - math.log(-math.expm1(shape * log_gamma)))
    u = rng.random()
    k, cdf = 1, p
    while cdf < u and p > 0.0:
        p *= (1.0 - gamma) * (k + shape) / (k + 1)
        k += 1
        cdf += p
    return k


def select(run, candidates, run_event, *, method="liu_talwar", mean=None, shape=1.0,
           delta=0.0, rng=None, accountant=None):
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
    check_accountant(accountant)
    mean = float(len(candidates)) if mean is None else mean
    event = repetition_event(run_event, method, mean, shape)
    delta = check_real(delta, "delta", low=0.0, high=1.0, low_inclusive=True)
    name = "basic" if delta == 0.0 else tightest_accountant(event)
    try:
        epsilon = epsilon_of(event, delta, name)
    except ValueError as exc:
        if delta > 0.0:
            raise ValueError(f"the selection's privacy cannot be accounted: {exc}") from None
        epsilon = math.inf
    if not math.isfinite(epsilon):
        raise ValueError(f"the selection is not private at delta={delta:g} (epsilon is "
                         "infinite): pass delta > 0 (a Renyi-DP bound needs one), or use "
                         "method='liu_talwar' with pure-DP runs")
    rng = check_rng(rng)
    if accountant is not None:
        accountant.spend(event, label="private selection")
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


def noisy_accuracy(estimator, X, y, epsilon, *, rng=None, accountant=None):
    r"""The accuracy of ``estimator`` on ``(X, y)`` with Laplace noise, epsilon-DP in the
    records of ``(X, y)``.

    ``(#{i : predict(x_i) = y_i} + Laplace(1/epsilon)) / n``: replacing one record changes the
    count by at most 1 (n public). The estimator must not have been fitted on these records,
    or its own privacy composes as well.

    Parameters
    ----------
    estimator : fitted classifier
    X, y : the held-out records (not modified)
    epsilon : float
        > 0.
    rng : None, int, SeedSequence or Generator
    accountant : BudgetAccountant, optional
        Charged with ``LaplaceDpEvent(1/epsilon)`` before the records are read.

    Returns
    -------
    float
        The noisy accuracy (may fall outside [0, 1]).
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    check_accountant(accountant)
    rng = check_rng(rng)
    y = _labels(y)
    _check_rows(X, y)
    if accountant is not None:
        accountant.spend(laplace_event(epsilon), label="noisy accuracy")
    correct = np.count_nonzero(np.asarray(estimator.predict(X)) == y)
    return float((correct + rng.laplace(0.0, 1.0 / epsilon)) / len(y))


def _labels(y):
    """``y`` as a 1-D array, or a ValueError naming it."""
    if y is None:
        raise ValueError("y must be given: the records' labels, one per row of X")
    y = np.asarray(y)
    if y.ndim != 1 or len(y) == 0:
        raise ValueError(f"y must be a non-empty 1-D array of labels, got shape {y.shape}")
    return y


def _check_rows(X, y):
    """X and y hold the same number of records (a public count: n is not private here)."""
    from sklearn.utils.validation import _num_samples
    try:
        rows = _num_samples(X)
    except TypeError as exc:
        raise TypeError(f"X must be an array-like of records: {exc}") from None
    if rows != len(y):
        raise ValueError(f"X and y must hold the same number of records, got {rows} rows "
                         f"and {len(y)} labels")


def laplace_event(epsilon):
    """DpEvent of a sensitivity-1 count with Laplace noise of scale ``1/epsilon``.

    Parameters
    ----------
    epsilon : float
        > 0.

    Returns
    -------
    dp_accounting.LaplaceDpEvent
        Noise multiplier ``1/epsilon`` (scale over sensitivity), read as epsilon-DP.
    """
    return dp_accounting.LaplaceDpEvent(1.0 / epsilon)


def accuracy_scorer(epsilon, *, accountant=None, random_state=None):
    """A scikit-learn scorer, ``scorer(estimator, X, y)``, returning :func:`noisy_accuracy`:
    for ``cross_val_score(..., scoring=accuracy_scorer(0.1, accountant=budget))``, so that the
    scores of a cross-validation are private and charged to the budget.

    Parameters
    ----------
    epsilon : float
        Per score, > 0.
    accountant : BudgetAccountant, optional
    random_state : None, int or Generator
        Seeds one Generator shared by the scorer's calls.

    Returns
    -------
    callable
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    check_accountant(accountant)
    rng = check_rng(random_state)

    def scorer(estimator, X, y):
        return noisy_accuracy(estimator, X, y, epsilon, rng=rng, accountant=accountant)
    return scorer


def _dominating_event(events):
    """One event that every candidate's run satisfies: theirs if they are equal; a PureDpEvent
    at the largest epsilon if all are pure; else their composition (valid: a run is one of
    them, and each is dominated by all together)."""
    first = events[0]
    if all(repr(e) == repr(first) for e in events):
        return first
    pure = [epsilon_of(e, 0.0, "basic") for e in events]
    if all(math.isfinite(e) for e in pure):
        return PureDpEvent(max(pure))
    return dp_accounting.ComposedDpEvent(list(events))


class PrivateGridSearch:
    """Private hyperparameter selection for dpsolve's estimators over a grid, on a held-out
    split, in one DpEvent.

    ``fit(X, y)`` splits the records once at random (``validation_fraction`` held out; the
    split is drawn from ``random_state``, independent of the data); each run draws a setting
    from the grid, fits a clone of ``estimator`` with it on the training part and scores it on
    the held-out part with :func:`noisy_accuracy` at ``score_epsilon``. :func:`select` keeps
    the best run. One run's event is the fit's event composed with the score's (the same for
    every setting, or one that dominates them all: a pure event at the largest epsilon, or
    their composition); the search's is ``RepeatAndSelectDpEvent(run, mean, shape)``, composed
    with the events of the :class:`~dpsolve.privacy.PrivateEstimate` bounds the settings use
    (released once, not per run), and charged to ``accountant`` before any fit.

    Each run's noise is drawn from the search's stream and passed to the fit
    (``fit(X, y, rng=...)``); nothing the search returns holds it, so with
    ``random_state=None`` the released model's noise cannot be regenerated.
    ``best_estimator_.get_params()`` are the estimator's as given, with the winning setting.

    Parameters
    ----------
    estimator : DPLogisticRegression, DPLinearSVC or a Pipeline ending in one
        Its transformers must be stateless (scikit-learn's ``requires_fit`` tag False, e.g.
        ``Normalizer`` or ``FunctionTransformer``): a transformer that learns from the records
        (``StandardScaler``, ...) would release what it learnt, and is refused. Its bounds
        (``row_norm``, ``classes``) must be public or private estimates: a bound read off the
        data is refused. Its ``accountant``, if set, is the budget the search charges (once,
        for the whole selection; the runs' fits are not charged one by one).
    param_grid : dict or list of dict
        As scikit-learn's ``ParameterGrid`` (public values; the privacy parameters ``epsilon``
        and ``delta`` may vary too: the run event dominates them all).
    score_epsilon : float, default 0.1
        Epsilon of each noisy accuracy.
    method, mean, shape :
        As in :func:`select` (``mean`` default: the grid's size).
    delta : float, default 0.0
        The delta of the reported epsilon; needed (> 0) for ``"negative_binomial"`` and
        ``"poisson"`` and for runs with Gaussian noise.
    validation_fraction : float, default 0.2
        Share of the records held out for scoring, in (0, 1).
    accountant : BudgetAccountant, optional
        The budget to charge; default the estimator's (it must not be another one).
    random_state : None or int
        Seeds the split, K, the settings drawn and every fit's noise. An int makes all of them
        reproducible by whoever knows it (research runs); a release should leave it None.

    Attributes
    ----------
    best_estimator_ : the fitted estimator of the best run (trained on the training part)
        Its ``epsilon_``, ``delta_``, ``dp_event_`` and ``privacy_report_`` are the search's:
        it is released by the selection, not by one fit.
    best_params_ : dict
    best_score_ : float
        Its noisy held-out accuracy.
    selection_ : Selection
    epsilon_, delta_ : float
        The search's privacy: the selection's epsilon plus the estimates' (basic
        composition).
    dp_event_ : dp_accounting.DpEvent
    """

    def __init__(self, estimator, param_grid, *, score_epsilon=0.1, method="liu_talwar",
                 mean=None, shape=1.0, delta=0.0, validation_fraction=0.2, accountant=None,
                 random_state=None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.score_epsilon = score_epsilon
        self.method = method
        self.mean = mean
        self.shape = shape
        self.delta = delta
        self.validation_fraction = validation_fraction
        self.accountant = accountant
        self.random_state = random_state

    def _planned_event(self, estimator, X, y):
        """The fit's DpEvent from its plan (public constants), without running it."""
        if hasattr(estimator, "steps"):
            # stateless transformers only (_check_estimator): this fit learns nothing
            X = estimator[:-1].fit_transform(X, y)
        return _final(estimator)._planned_event(X, y)

    def fit(self, X, y):
        """Run the search on ``(X, y)``; returns self.

        Every check of the arguments, and the budget's charge, come before any fit.
        """
        from sklearn.base import clone
        from sklearn.model_selection import ParameterGrid
        from sklearn.utils import _safe_indexing

        budget = check_accountant(self.accountant)
        own = getattr(_final(self.estimator), "accountant", None)
        if own is not None and budget is not None and own is not budget:
            raise ValueError("the estimator's accountant and the search's are different "
                             "budgets: the search charges one budget, once, for the whole "
                             "selection")
        budget = budget if budget is not None else own
        _check_estimator(self.estimator)
        fraction = check_real(self.validation_fraction, "validation_fraction", low=0.0,
                              high=1.0)
        score_epsilon = check_real(self.score_epsilon, "score_epsilon", low=0.0)
        if self.random_state is not None and (isinstance(self.random_state, (bool, np.bool_))
                                              or not isinstance(self.random_state,
                                                                numbers.Integral)):
            raise TypeError(f"random_state must be None or an int, got "
                            f"{type(self.random_state).__name__}")
        grid = list(ParameterGrid(self.param_grid))
        if not grid:
            raise ValueError("param_grid is empty")
        # the runs are charged together, as the selection: not each fit on its own
        accountant = _parameter(self.estimator, "accountant")
        models = [clone(self.estimator).set_params(**{**params, accountant: None})
                  for params in grid]
        for model in models:
            _check_estimator(model)
        estimates = _unique(e for model in models for e in _final(model)._estimates())
        y = _labels(y)
        _check_rows(X, y)
        seeds = np.random.SeedSequence(self.random_state).spawn(2)
        split_rng, run_rng = (np.random.default_rng(s) for s in seeds)
        n = len(y)
        n_val = int(round(fraction * n))
        if not 1 <= n_val < n:
            raise ValueError(f"validation_fraction={fraction:g} leaves no records to train or "
                             f"to score on with n={n}")
        order = split_rng.permutation(n)
        val, train = order[:n_val], order[n_val:]
        X_train, y_train = _safe_indexing(X, train), y[train]
        X_val, y_val = _safe_indexing(X, val), y[val]
        # every setting's fit event, from its plan (public constants of the training part)
        planned = [self._planned_event(m, X_train, y_train) for m in models]
        run_event = dp_accounting.ComposedDpEvent([_dominating_event(planned),
                                                   laplace_event(score_epsilon)])
        if budget is not None:
            # the estimates are released already: charge each once, whether or not this runs
            for estimate in estimates:
                spend_once(budget, estimate.dp_event, "private bound estimate")

        def run(k, rng):
            model = clone(models[k])
            # the run's noise is passed to fit, never stored in the model
            noise = {} if _secure(model) else {_parameter(model, "rng"): rng.spawn(1)[0]}
            model.fit(X_train, y_train, **noise)
            final = _final(model)
            if repr(final.dp_event_) != repr(final._model_event(planned[k])):
                # the accounting is of the plans: a fit that released something else is a bug
                raise RuntimeError(f"the fit released {final.dp_event_!r}, not its planned "
                                   f"{planned[k]!r}")
            model.set_params(**{accountant: own})       # the parameters as the user set them
            return noisy_accuracy(model, X_val, y_val, score_epsilon, rng=rng), model

        selection = select(run, range(len(grid)), run_event, method=self.method,
                           mean=self.mean, shape=self.shape, delta=self.delta, rng=run_rng,
                           accountant=budget)
        event, epsilon = selection.dp_event, selection.epsilon
        if estimates:
            event = dp_accounting.ComposedDpEvent([event] + [e.dp_event for e in estimates])
            epsilon += sum(e.epsilon for e in estimates)
        if selection.output is not None:
            _release_as(_final(selection.output), event, epsilon, selection)
        self.selection_ = selection
        self.best_estimator_ = selection.output
        self.best_params_ = None if selection.index is None else grid[selection.candidate]
        self.best_score_ = selection.score
        self.epsilon_ = epsilon
        self.delta_ = selection.delta
        self.dp_event_ = event
        return self


def _check_estimator(estimator):
    """The search's estimator: a dpsolve classifier, alone or at the end of a pipeline of
    stateless transformers, with no bound read off the data. Returns the classifier."""
    if hasattr(estimator, "steps"):
        for name, step in estimator.steps[:-1]:
            if step is None or (isinstance(step, str) and step == "passthrough"):
                continue
            if not hasattr(step, "__sklearn_tags__") or step.__sklearn_tags__().requires_fit:
                raise ValueError(
                    f"estimator: the pipeline's step {name!r} ({type(step).__name__}) learns "
                    "from the records when fitted, and that fit is not private; "
                    "PrivateGridSearch takes stateless transformers only (e.g. Normalizer, "
                    "FunctionTransformer)")
    final = _final(estimator)
    if not hasattr(final, "_planned_event"):
        raise TypeError(f"estimator must be one of dpsolve's classifiers (DPLogisticRegression, "
                        f"DPLinearSVC) or a Pipeline ending in one, got "
                        f"{type(final).__name__}")
    from sklearn.base import is_classifier
    if not is_classifier(final):
        raise TypeError(f"estimator must be a classifier: PrivateGridSearch scores by noisy "
                        f"accuracy, which does not measure a regressor "
                        f"({type(final).__name__})")
    derived = final._derived_bounds()
    if derived:
        raise ValueError(f"estimator: {', '.join(derived)} not given, so each fit would read "
                         f"{'it' if len(derived) == 1 else 'them'} off the data, which the "
                         "search's guarantee does not cover; pass public bounds (or private "
                         "estimates, dpsolve.privacy.estimate_row_norm)")
    return final


def _release_as(estimator, event, epsilon, selection):
    """Give the selected model the privacy attributes of the search that released it."""
    fit = estimator.fit_
    report = PrivacyReport(
        epsilon=epsilon, delta=selection.delta, method=f"private selection ({selection.method})",
        certified_epsilon=epsilon,
        # the estimates' pure epsilons, if any, are added to the selection's by basic composition
        certified_by=(selection.accountant if event is selection.dp_event
                      else f"{selection.accountant} and basic composition"),
        neighbours=fit.privacy.neighbours)
    estimator._set_release(dataclasses.replace(fit, dp_event=event, privacy=report))


def _unique(items):
    """The items in order, each object once (by identity)."""
    seen, out = set(), []
    for item in items:
        if id(item) not in seen:
            seen.add(id(item))
            out.append(item)
    return out


def _final(model):
    """The private estimator: the model itself, or a pipeline's last step."""
    if hasattr(model, "steps"):
        step = model.steps[-1][1]
        if step is None or isinstance(step, str):
            raise TypeError(f"estimator: the pipeline must end in one of dpsolve's "
                            f"classifiers, got {step!r}")
        return step
    return model


def _parameter(model, name):
    """``name`` as ``set_params`` (or a pipeline's ``fit``) addresses the private
    estimator's parameter."""
    return f"{model.steps[-1][0]}__{name}" if hasattr(model, "steps") else name


def _secure(model):
    return bool(getattr(_final(model), "secure", False))


__all__ = ["METHODS", "PrivateGridSearch", "Selection", "accuracy_scorer", "draw_repetitions",
           "laplace_event", "noisy_accuracy", "repetition_event", "select"]
