"""Private hyperparameter selection for dpsolve's estimators: :class:`PrivateGridSearch`, a grid
of settings, a held-out split and a private scorer, released through
:func:`~dpsolve.private_selection.select` and charged once as one DpEvent."""
import dataclasses
import math
import numbers
from typing import Any, NamedTuple

import dp_accounting
import numpy as np

try:
    from sklearn.base import BaseEstimator, clone
    from sklearn.model_selection import ParameterGrid
    from sklearn.utils import _safe_indexing
except ImportError as exc:          # pragma: no cover - the extra is not installed
    raise ImportError("dpsolve.private_selection.PrivateGridSearch needs scikit-learn >= 1.6: "
                      "pip install 'dpsolve[estimators]'") from exc

from .._validation import check_real
from ..preprocessing._enclosing_pipeline import check_same_budget, upstream_releases
from ..preprocessing.row_bounds import learned_steps, output_row_norm, private_steps
from ..privacy.accounting import NEIGHBOURS, PrivacyReport, PrivacyStep, PureDpEvent, epsilon_of
from ..privacy.budget import charge, check_accountant
from ._checks import (check_real_labels, check_rows, final_step, kind_of, labels,
                      real_finite_rows)
from .repetitions import repetition_event
from .scorers import PrivateScorer, check_score_epsilon, make_private_scorer
from .selection import accounted, select


def _planned_event(model, X, y):
    """The fit's DpEvent from its plan (public constants), without running it: the private
    estimator's :meth:`planned_event` on the rows it reads (through a pipeline's transformers)."""
    if hasattr(model, "steps"):
        # stateless transformers only (_check_estimator): this fit learns nothing
        X = model[:-1].fit_transform(X, y)
    return final_step(model).planned_event(X, y)


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


class PrivateGridSearch(BaseEstimator):
    """Private hyperparameter selection for dpsolve's estimators over a grid, on a held-out
    split, in one DpEvent.

    ``fit(X, y)`` splits the records once at random (``validation_fraction`` held out; the
    split is drawn from ``random_state``, independent of the data); each run draws a setting
    from the grid, fits a clone of ``estimator`` with it on the training part and scores it on
    the held-out part with the private scorer ``scoring`` at ``score_epsilon``
    (:class:`PrivateScorer`). :func:`select` keeps the best run. One run's event is the fit's
    event composed with the score's (the same for every setting, or one that dominates them
    all: a pure event at the largest epsilon, or their composition); the selection's is
    ``RepeatAndSelectDpEvent(run, mean, shape)``. With ``refit=True`` the winning setting is
    then fitted again on all the records, with fresh noise, and the search's event is the
    selection's composed with the refit's (the event that dominates every setting's fit on all
    records). The events of the :class:`~dpsolve.privacy.PrivateEstimate` bounds the settings
    use are composed in once (released once, not per run), and so are the releases of the
    private preprocessing before the search when a scikit-learn ``Pipeline`` fits it
    (``make_pipeline(PrivateRangeScaler(...), PrivateGridSearch(...))``). The budget, ``accountant``, is
    charged once with the whole search's event before any fit: refused, nothing runs.

    Each run's noise, and the refit's, is drawn from the search's stream and passed to the
    fit (``fit(X, y, rng=...)``); nothing the search returns holds it, so with
    ``random_state=None`` the released model's noise cannot be regenerated.
    ``best_estimator_.get_params()`` are the estimator's as given, with the winning setting
    (and, in a pipeline whose estimator has ``row_norm=None``, the row bound its steps state).

    Parameters
    ----------
    estimator : DPLogisticRegression, DPLinearSVC, DPLinearRegression or a Pipeline ending in one
        Its transformers must be stateless (scikit-learn's ``requires_fit`` tag False, e.g.
        :mod:`dpsolve.preprocessing`'s, ``Normalizer`` or ``FunctionTransformer``), inside a
        ``ColumnTransformer``, ``FeatureUnion`` or nested ``Pipeline`` too: a transformer that
        learns from the records (``StandardScaler``, ...) would release what it learnt, and is
        refused. Its bounds
        (``row_norm``, ``classes``, ``label_bound``) must be public or private estimates: a
        bound read off the data is refused. In a Pipeline, ``row_norm=None`` takes the bound
        the steps before the estimator state (:func:`dpsolve.preprocessing.output_row_norm`),
        as the Pipeline's own fit does. Its ``accountant``, if set, is the budget the
        search charges (once, for the whole search; the runs' fits are not charged one by one).
    param_grid : dict or list of dict
        As scikit-learn's ``ParameterGrid`` (public values; the privacy parameters ``epsilon``
        and ``delta`` may vary too: the run event dominates them all).
    score_epsilon : float, default 0.1
        Epsilon of each noisy score.
    scoring : str or PrivateScorer, optional
        For a classifier ``"accuracy"`` (the default), ``"balanced_accuracy"`` or
        ``"neg_log_loss"`` (models with ``predict_proba``); for a regressor
        ``"neg_mean_squared_error"`` (the default) or ``"r2"``. A :class:`PrivateScorer` (for
        its options, e.g. ``LogLossScorer(0.1, clip=3.0)``) must be built at
        ``score_epsilon`` and hold no accountant and no random_state (the search charges and
        draws for it). A scorer that does not fit the estimator is refused before any work.
    method, mean, shape :
        As in :func:`select` (``mean`` default: the grid's size).
    delta : float, default 0.0
        The delta of the reported epsilon; needed (> 0) for ``"negative_binomial"`` and
        ``"poisson"`` and for runs with Gaussian noise.
    validation_fraction : float, default 0.2
        Share of the records held out for scoring, in (0, 1).
    refit : bool, default False
        Fit the selected setting again on all the records (training and held-out), at its own
        ``epsilon``, and release that model; its cost is composed into the search's event and
        charged with it. Default False: a search's cost stays what it was before the option
        existed (a budget that admitted it still does); docs/user_guide.md ("When selection
        helps") measures what refitting buys at equal total epsilon.
    accountant : BudgetAccountant, optional
        The budget to charge; default the estimator's (it must not be another one).
    random_state : None or int
        Seeds the split, K, the settings drawn and every fit's and score's noise. An int makes
        all of them reproducible by whoever knows it (research runs); a release should leave it
        None.

    Attributes
    ----------
    best_estimator_ : the released model
        With ``refit=False`` the best run's model (trained on the training part); with
        ``refit=True`` the refit on all records. Its ``epsilon_``, ``delta_``, ``dp_event_``
        and ``privacy_report_`` are the whole search's: it is released by the search, not by
        one fit. The report's ledger (``privacy_report_.steps``, printed by its
        ``summary()``) lists the search's parts in the order spent: each private estimate
        the settings use as a bound (named by its parameter, ``row_norm``; at delta 0, its
        pure epsilon), the selection (named with its method, E[K], the number of settings
        and the scorer: one run is the fit that dominates every setting's and the private
        score) and, with ``refit=True``, the refit (the fit that dominates every setting's on
        all the records), the last two at the search's ``delta``, each epsilon certified by
        the tightest accountant that reads that part alone. Their events composed
        (``ComposedDpEvent``) are ``dp_event_``. Their epsilons need not add up to
        ``epsilon_``: the selection and the refit are composed at ``delta`` once (tight
        accounting, RDP or PLD), so at delta > 0 the total is usually below the sum (whose
        guarantee would hold at the sum of the deltas); with ``delta=0`` (pure DP, basic
        composition, exact there) the total is the sum. None if no run took place
        (Poisson: K = 0).
    best_params_ : dict
    best_score_ : float
        The best run's noisy held-out score (with ``refit=True``, of the model fitted on the
        training part, not of the refit).
    scorer_ : PrivateScorer
        The scorer used (at ``score_epsilon``).
    selection_ : Selection
        What :func:`select` released; with ``refit=True`` its ``output`` is None (the run's
        model is not returned).
    epsilon_, delta_ : float
        The search's privacy: the epsilon of the selection (composed with the refit's) at
        ``delta``, plus the estimates' (basic composition).
    dp_event_ : dp_accounting.DpEvent
    """

    def __init__(self, estimator, param_grid, *, score_epsilon=0.1, scoring=None,
                 method="liu_talwar", mean=None, shape=1.0, delta=0.0,
                 validation_fraction=0.2, refit=False, accountant=None, random_state=None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.score_epsilon = score_epsilon
        self.scoring = scoring
        self.method = method
        self.mean = mean
        self.shape = shape
        self.delta = delta
        self.validation_fraction = validation_fraction
        self.refit = refit
        self.accountant = accountant
        self.random_state = random_state

    def _scorer(self, score_epsilon, final):
        """The private scorer at ``score_epsilon``, checked against the estimator."""
        scoring = self.scoring
        if scoring is None:
            scoring = "neg_mean_squared_error" if kind_of(final) == "regressor" else "accuracy"
        if isinstance(scoring, PrivateScorer):
            if scoring.accountant is not None or scoring.random_state is not None:
                raise ValueError("scoring: a scorer given to PrivateGridSearch must hold no "
                                 "accountant and no random_state (the search charges its "
                                 "budget once and draws the scores' noise from its own "
                                 "stream)")
            if scoring.epsilon != score_epsilon:
                raise ValueError(f"score_epsilon={score_epsilon:g} and the scorer's "
                                 f"epsilon={scoring.epsilon:g} differ: build the scorer at "
                                 f"score_epsilon")
            scorer = scoring
        else:
            scorer = make_private_scorer(scoring, score_epsilon)
        scorer.check(self.estimator)
        return scorer

    def fit(self, X, y):
        """Run the search on ``(X, y)``; returns self.

        Every check of the arguments, and the budget's charge, come before any fit.
        """
        budget, own = self._budget()
        final = _check_estimator(_stated_bound(self.estimator))
        fraction, score_epsilon, refit = self._check_options()
        scorer = self._scorer(score_epsilon, final)
        grid, models = self._candidates(scorer)
        # the private steps before the search in a Pipeline fitting it, then the bounds
        named = _named_estimates(models, upstream_releases(self))
        estimates = [estimate for _, estimate in named]
        y = labels(y)
        check_rows(X, y)
        _check_classes(final, y)
        _check_records(self.estimator, scorer, X, y)
        seeds = np.random.SeedSequence(self.random_state).spawn(3)
        split_rng, run_rng, refit_rng = (np.random.default_rng(s) for s in seeds)
        train, val = _hold_out(X, y, fraction, split_rng)
        planned, run_event, delta, selection_event = self._plan(models, scorer, *train)
        # the refit of whichever setting wins, on all n records: an event for every one
        plan_all = self._plan_refit(models, X, y, selection_event, delta) if refit else None
        # one charge for the whole search, with the estimates its settings use, after every
        # check and before any fit
        charge(budget, selection_event if plan_all is None else plan_all.event,
               neighbours=NEIGHBOURS, estimates=estimates,
               label="private selection" + (" and refit" if refit else ""))
        selection = select(_runner(models, planned, scorer, train, val, own), range(len(grid)),
                           run_event, method=self.method, mean=self.mean, shape=self.shape,
                           delta=delta, rng=run_rng)
        event, epsilon, certified_by, ledger = _search_privacy(
            selection, plan_all, named, _selection_name(selection, len(grid), scorer))
        best = selection.output
        if refit:
            best = _refit_winner(models, selection, plan_all.planned, X, y, refit_rng, own)
            selection = dataclasses.replace(selection, output=None)
        if best is not None:
            how = (f"private selection ({selection.method})"
                   + (" and refit" if refit else ""))
            _release_as(final_step(best), event, epsilon, delta, how, certified_by, ledger)
        self.scorer_ = scorer
        self.selection_ = selection
        self.best_estimator_ = best
        self.best_params_ = None if selection.index is None else grid[selection.candidate]
        self.best_score_ = selection.score
        self.epsilon_ = epsilon
        self.delta_ = selection.delta
        self.dp_event_ = event
        return self

    def _check_preceding_step(self, step):
        """The checks a private ``step`` fitted before the search in a ``Pipeline`` runs before
        it spends its epsilon: the search's estimator, options, grid and scorer, and that the
        step charges the search's budget (the search composes the step's release into its
        own)."""
        budget, _ = self._budget()
        final = _check_estimator(_stated_bound(self.estimator))
        _, score_epsilon, _ = self._check_options()
        self._candidates(self._scorer(score_epsilon, final))     # the grid and the scorer
        check_same_budget(step, budget, type(self).__name__)

    def _budget(self):
        """The budget to charge and the estimator's own accountant.

        The budget is the search's ``accountant``, else the estimator's own (None if neither
        has one); two different ones are refused: the search charges one budget, once.
        """
        budget = check_accountant(self.accountant)
        own = getattr(final_step(self.estimator), "accountant", None)
        if own is not None and budget is not None and own is not budget:
            raise ValueError("the estimator's accountant and the search's are different "
                             "budgets: the search charges one budget, once, for the whole "
                             "selection")
        return (budget if budget is not None else own), own

    def _check_options(self):
        """``validation_fraction``, ``score_epsilon`` and ``refit`` checked (and the type of
        ``random_state``); returns the first three."""
        fraction = check_real(self.validation_fraction, "validation_fraction", low=0.0,
                              high=1.0)
        score_epsilon = check_score_epsilon(self.score_epsilon, "score_epsilon")
        if not isinstance(self.refit, (bool, np.bool_)):
            raise TypeError(f"refit must be True or False, got {type(self.refit).__name__}")
        if self.random_state is not None and (isinstance(self.random_state, (bool, np.bool_))
                                              or not isinstance(self.random_state,
                                                                numbers.Integral)):
            raise TypeError(f"random_state must be None or an int, got "
                            f"{type(self.random_state).__name__}")
        return fraction, score_epsilon, bool(self.refit)

    def _candidates(self, scorer):
        """The grid's settings and, for each, an unfitted copy of the estimator set to it,
        checked (as the search's estimator, and against ``scorer``).

        The copies charge no budget of their own: the runs are charged together, as the
        selection, not each fit on its own.
        """
        grid = list(ParameterGrid(self.param_grid))
        if not grid:
            raise ValueError("param_grid is empty")
        accountant = _parameter(self.estimator, "accountant")
        models = [_stated_bound(clone(self.estimator).set_params(**{**params, accountant: None}))
                  for params in grid]
        for model in models:
            _check_estimator(model)
            scorer.check(model)
        return grid, models

    def _plan(self, models, scorer, X_train, y_train):
        """The selection's events, from the fits' plans, checked before anything is charged.

        Parameters
        ----------
        models : list of estimators
            The candidates (:meth:`_candidates`), unfitted.
        scorer : PrivateScorer
        X_train, y_train :
            The training part (its public constants: n, the bounds).

        Returns
        -------
        planned : list of dp_accounting.DpEvent
            Each setting's fit event.
        run_event : dp_accounting.DpEvent
            One run's: the fit that dominates every setting's, then the score.
        delta : float
            ``delta``, checked.
        selection_event : dp_accounting.DpEvent
            The whole selection's, checked to be finite at ``delta``.
        """
        planned = [_planned_event(m, X_train, y_train) for m in models]
        run_event = dp_accounting.ComposedDpEvent([_dominating_event(planned),
                                                   scorer.dp_event])
        # the whole search's event, checked (finite at delta) before anything is charged
        delta = check_real(self.delta, "delta", low=0.0, high=1.0, low_inclusive=True)
        selection_event = repetition_event(run_event, self.method,
                                           float(len(models)) if self.mean is None
                                           else self.mean, self.shape)
        accounted(selection_event, delta)
        return planned, run_event, delta, selection_event

    def _plan_refit(self, models, X, y, selection_event, delta):
        """The refit's plan for every setting, on all the records ``(X, y)``, composed with
        the selection's event and checked to be finite at ``delta``: a :class:`_RefitPlan`."""
        planned = [_planned_event(m, X, y) for m in models]
        refit = _dominating_event(planned)
        event = dp_accounting.ComposedDpEvent([selection_event, refit])
        accountant, epsilon = accounted(event, delta, "search")
        return _RefitPlan(planned, refit, event, accountant, epsilon)


class _RefitPlan(NamedTuple):
    """A search with ``refit=True``, planned before any fit.

    Attributes
    ----------
    planned : list of dp_accounting.DpEvent
        Each setting's refit event (all the records).
    refit : dp_accounting.DpEvent
        The refit of whichever setting wins: one that dominates every setting's.
    event : dp_accounting.DpEvent
        The selection composed with ``refit``.
    accountant : str
        The accountant that certified ``epsilon``.
    epsilon : float
        ``event``'s epsilon at the search's delta.
    """

    planned: list
    refit: Any
    event: Any
    accountant: str
    epsilon: float


def _check_classes(final, y):
    """Refuse labels outside a classifier's public ``classes``.

    A message to the data holder, before the budget is charged (a fit or a score would refuse
    them mid-selection).
    """
    classes = getattr(final, "classes", None)
    if kind_of(final) == "classifier" and classes is not None and not np.all(
            np.isin(y, np.asarray(classes))):
        raise ValueError(f"y holds labels outside classes={np.asarray(classes).tolist()}")


def _check_records(estimator, scorer, X, y):
    """Refuse records that a run would refuse mid-selection, before the budget is charged:
    rows (as the private model reads them, through the pipeline's stateless transformers)
    that are not real and finite, and labels a regression scorer cannot score. The fits
    refuse such a training row themselves; the held-out part is read only by the scores."""
    if hasattr(estimator, "steps"):
        # stateless transformers only (_check_estimator): this fit learns nothing
        X = clone(estimator[:-1]).fit_transform(X, y)
    real_finite_rows(X)
    if scorer.kind == "regressor":
        check_real_labels(y)


def _hold_out(X, y, fraction, rng):
    """Split the records into a training part and a held-out part for scoring.

    Parameters
    ----------
    X, y :
        The records (``y`` an array).
    fraction : float
        The share of the records held out, in (0, 1); both parts must be non-empty.
    rng : numpy.random.Generator
        Draws the split (one permutation of the n records).

    Returns
    -------
    tuple
        ``((X_train, y_train), (X_val, y_val))``.
    """
    n = len(y)
    n_val = int(round(fraction * n))
    if not 1 <= n_val < n:
        raise ValueError(f"validation_fraction={fraction:g} leaves no records to train or "
                         f"to score on with n={n}")
    order = rng.permutation(n)
    val, train = order[:n_val], order[n_val:]
    return (_safe_indexing(X, train), y[train]), (_safe_indexing(X, val), y[val])


def _check_released(model, planned, what):
    """Refuse a fitted ``model`` whose release is not its ``planned`` event: the accounting is
    of the plans, so a fit that released something else is a bug (RuntimeError)."""
    final = final_step(model)
    if final.dp_event_ != final._model_event(planned):
        raise RuntimeError(f"the {what} released {final.dp_event_!r}, not its planned "
                           f"{planned!r}")


def _runner(models, planned, scorer, train, val, own):
    """The selection's run, ``run(k, rng) -> (score, model)``.

    Parameters
    ----------
    models, planned : list
        The candidates (unfitted) and their planned fit events.
    scorer : PrivateScorer
    train, val : tuple
        ``(X, y)`` of the training part (fitted on) and of the held-out part (scored on).
    own : BudgetAccountant or None
        The estimator's accountant as the user set it, put back on the fitted model.
    """
    def run(k, rng):
        model = clone(models[k])
        # the run's noise is passed to fit, never stored in the model
        noise = {} if _secure(model) else {_parameter(model, "rng"): rng.spawn(1)[0]}
        model.fit(*train, **noise)
        _check_released(model, planned[k], "fit")
        model.set_params(**{_parameter(model, "accountant"): own})   # as the user set it
        return scorer.score(model, *val, rng=rng), model

    return run


def _search_privacy(selection, plan_all, named, selection_name):
    """The search's event, epsilon, what certified it, and its ledger.

    The ledger's parts, in the order spent: each private estimate the settings use as a bound
    (released before the search, composed in once; pure, at delta 0), the selection at the
    search's delta and, with a refit (``plan_all``), the refit at that delta, each part's
    epsilon certified by the tightest accountant that reads it (:func:`accounted`). The event
    is the parts' composed. The epsilon is the selection's (with a refit, the selection and
    the refit composed, at delta once), plus the estimates' by basic composition.

    Returns
    -------
    tuple
        ``(event, epsilon, certified_by, steps)``, ``steps`` a tuple of PrivacyStep.
    """
    delta = selection.delta
    steps = [PrivacyStep(name, e.epsilon, 0.0, e.dp_event) for name, e in named]
    steps.append(PrivacyStep(selection_name, selection.epsilon, delta, selection.dp_event))
    if plan_all is not None:
        steps.append(PrivacyStep("refit of the selected setting on all the records",
                                 accounted(plan_all.refit, delta, "refit")[1], delta,
                                 plan_all.refit))
        epsilon, name = plan_all.epsilon, plan_all.accountant
    else:
        epsilon, name = selection.epsilon, selection.accountant
    event = (steps[0].dp_event if len(steps) == 1
             else dp_accounting.ComposedDpEvent([step.dp_event for step in steps]))
    if named:
        epsilon += sum(e.epsilon for _, e in named)
        name = name if name == "basic" else f"{name} and basic composition"
    return event, epsilon, name, tuple(steps)


def _selection_name(selection, settings, scorer):
    """The selection's name in the ledger, from public choices only: the distribution of
    the number of runs and its mean, the number of settings, and what a run releases."""
    shape = (f", shape {selection.dp_event.shape:g}"
             if selection.method == "negative_binomial" else "")
    return (f"private selection ({selection.method}{shape}: E[K] = "
            f"{selection.expected_runs:g} runs over {settings} settings, each a fit and a "
            f"private {scorer.name or type(scorer).__name__} score at epsilon "
            f"{scorer.epsilon:g})")


def _refit_winner(models, selection, planned, X, y, rng, own):
    """The selected setting fitted again on all the records ``(X, y)`` with noise from
    ``rng``, checked against its ``planned`` event; None if no run took place."""
    if selection.index is None:
        return None
    k = selection.candidate
    best = clone(models[k])
    noise = {} if _secure(best) else {_parameter(best, "rng"): rng}
    best.fit(X, y, **noise)
    _check_released(best, planned[k], "refit")
    best.set_params(**{_parameter(best, "accountant"): own})
    return best


def _stated_bound(estimator):
    """``estimator``; or, for a Pipeline whose estimator has ``row_norm=None`` and whose steps
    before it state a row bound (:func:`~dpsolve.preprocessing.output_row_norm`, from their
    public parameters), a clone with that bound as ``row_norm``: the bound the Pipeline's own
    fit would take, set before the runs are planned."""
    final = final_step(estimator)
    if not hasattr(estimator, "steps") or getattr(final, "row_norm", 0.0) is not None:
        return estimator
    try:
        bound = output_row_norm(estimator[:-1], "linf" if final.constraint == "l1" else "l2")
    except ValueError:          # a step states no bound: refused as a bound off the data
        return estimator
    if not bound > 0.0:
        return estimator
    return clone(estimator).set_params(**{_parameter(estimator, "row_norm"): bound})


def _check_estimator(estimator):
    """The search's estimator: one of dpsolve's estimators, alone or at the end of a pipeline
    of stateless transformers, with no bound read off the data. Returns the estimator."""
    if hasattr(estimator, "steps"):
        for name, step in estimator.steps[:-1]:
            for where, private in private_steps(step, f"the pipeline's step {name!r}"):
                raise ValueError(
                    f"estimator: {where} ({type(private).__name__}) is fitted privately, and "
                    "each of the search's runs would refit it and spend its epsilon again; "
                    "put it before the search, make_pipeline(step, PrivateGridSearch(...)), "
                    "which fits it once on the whole table and composes its release once")
            for where, kind in learned_steps(step, f"the pipeline's step {name!r}"):
                raise ValueError(
                    f"estimator: {where} ({kind}) learns from the records when fitted, and "
                    "that fit is not private; PrivateGridSearch takes stateless transformers "
                    "only, in a ColumnTransformer, FeatureUnion or Pipeline too (e.g. "
                    "dpsolve.preprocessing's PublicRangeScaler and PublicCategoryEncoder, "
                    "Normalizer, FunctionTransformer)")
    final = final_step(estimator)
    if not hasattr(final, "planned_event") or kind_of(final) is None:
        raise TypeError(f"estimator must be one of dpsolve's estimators (DPLogisticRegression, "
                        f"DPLinearSVC, DPLinearRegression) or a Pipeline ending in one, got "
                        f"{type(final).__name__}")
    derived = final._derived_bounds()
    if derived:
        raise ValueError(f"estimator: {', '.join(derived)} not given, so each fit would read "
                         f"{'it' if len(derived) == 1 else 'them'} off the data, which the "
                         "search's guarantee does not cover; pass public bounds (or private "
                         "estimates, dpsolve.privacy.estimate_row_norm)")
    return final


def _release_as(estimator, event, epsilon, delta, method, certified_by, steps):
    """Give the released model the privacy attributes of the search that released it, with
    the search's ledger (:func:`_search_privacy`)."""
    fit = estimator.fit_
    report = PrivacyReport(
        epsilon=epsilon, delta=delta, method=method, certified_epsilon=epsilon,
        certified_by=certified_by, neighbours=fit.privacy.neighbours, steps=steps)
    estimator._set_release(dataclasses.replace(fit, dp_event=event, privacy=report))


def _named_estimates(models, upstream=()):
    """The releases the search composes once, in order, each with its name in the ledger: the
    ``upstream`` private preprocessing (``(where, release)``), then the private estimates the
    settings use as bounds, named by the parameter they bound (``row_norm``, ``label_bound``)
    and numbered when settings give that parameter different estimates. A release is taken
    once, by its event (the same release given twice is one release)."""
    seen, counts, out = set(), {}, []
    for name, estimate in upstream:
        seen.add(id(estimate.dp_event))
        out.append((name, estimate))
    for model in models:
        for name, estimate in final_step(model)._named_estimates():
            if id(estimate.dp_event) not in seen:
                seen.add(id(estimate.dp_event))
                counts[name] = counts.get(name, 0) + 1
                out.append((name if counts[name] == 1 else f"{name} ({counts[name]})",
                            estimate))
    return out


def _parameter(model, name):
    """``name`` as ``set_params`` (or a pipeline's ``fit``) addresses the private
    estimator's parameter."""
    return f"{model.steps[-1][0]}__{name}" if hasattr(model, "steps") else name


def _secure(model):
    return bool(getattr(final_step(model), "secure", False))
