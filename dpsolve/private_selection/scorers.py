r"""Private scorers: a noisy score of a fitted model on held-out records, epsilon-DP in those
records, for :class:`~dpsolve.private_selection.PrivateGridSearch` (``scoring=``) or standalone
as scikit-learn scorers (``cross_val_score(..., scoring=AccuracyScorer(0.1, accountant=b))``).

A scorer is a subclass of :class:`PrivateScorer` that defines the statistic, its replace-one L1
sensitivity (derived in its docstring, checked against a numerical maximisation in
tests/test_private_selection.py) and the score computed from the noisy statistic; everything
else (the checks, the charge, the noise) is :meth:`PrivateScorer.score`'s. docs/adding_a_scorer.md
adds one.
"""
import inspect
import math
import numbers

import dp_accounting
import numpy as np

from .._deprecation import alias, deprecated_alias
from .._validation import check_real, check_rng
from ..privacy.accounting import NEIGHBOURS
from ..privacy.budget import charge, check_accountant
from ..privacy.calibration import MAX_NOISE_SCALE, check_noise_scale
from ._checks import (check_real_labels, check_rows, final_step, kind_of, labels,
                      model_rows)


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


def check_score_epsilon(epsilon, name):
    """``epsilon`` of a noisy score, checked: a real number with ``1/epsilon`` at most
    ``MAX_NOISE_SCALE`` (the Laplace event's noise multiplier, and the scale of a
    sensitivity-1 score's noise), else a ValueError naming ``name``."""
    epsilon = check_real(epsilon, name, low=0.0)
    if not 1.0 / epsilon <= MAX_NOISE_SCALE:
        raise ValueError(f"{name} must be at least {1.0 / MAX_NOISE_SCALE:g}, got {epsilon!r}: "
                         f"the score's noise would have a scale beyond {MAX_NOISE_SCALE:g}, "
                         "the largest dpsolve computes with")
    return epsilon


#: Default clip of :class:`LogLossScorer`: a per-record loss counts at most ``ln 100`` (a
#: predicted probability of the true class below 1% counts as 1%).
DEFAULT_LOG_LOSS_CLIP = math.log(100.0)


class PrivateScorer:
    r"""A noisy score of a fitted model on held-out records, epsilon-DP in those records.

    Each scorer computes a statistic of the records (a vector ``s``, counts or sums), adds
    Laplace noise of scale ``sensitivity / epsilon`` to each coordinate, where
    ``sensitivity`` is the L1 sensitivity of ``s`` under replace-one neighbours (datasets of
    the same public size n differing in one record), and turns the noisy vector into a score
    (post-processing). The event is ``LaplaceDpEvent(1/epsilon)``, epsilon-DP, the same for
    every scorer: :class:`~dpsolve.private_selection.PrivateGridSearch` composes it into each
    run. The model must not have been fitted on these records (or its own privacy composes as
    well); everything the scorer reads of the model (its ``classes``, ``label_bound``,
    predictions) is public once the model is.

    Use a scorer standalone as a scikit-learn scorer, ``scorer(estimator, X, y)``: each call
    is charged to ``accountant`` (before the records are read) and draws its noise from
    ``random_state`` (None: fresh entropy, nothing kept). Or give it to ``PrivateGridSearch``
    (``scoring=``), which charges and draws for it (it must then hold neither).

    A new scorer subclasses this class, sets :attr:`name` and :attr:`kind`, and defines the
    hooks :meth:`sensitivity`, :meth:`statistic` and :meth:`finish` (and, where it needs them,
    :meth:`check_model` and :meth:`check_labels`); its keyword options are ``__init__``'s, each
    stored under its name (docs/adding_a_scorer.md).

    Parameters
    ----------
    epsilon : float
        Per score, at least ``1 / MAX_NOISE_SCALE`` (1e-100): the noise's scale,
        ``sensitivity / epsilon``, must be a number dpsolve computes with (a scale that
        overflows would release NaN or inf); checked again with the sensitivity at each score.
    accountant : BudgetAccountant or ParallelGroup, optional
        Charged with :attr:`dp_event` at each standalone call.
    random_state : None, int or numpy Generator
        The standalone calls' noise: one Generator shared by the calls (an int makes the noise
        reproducible by whoever knows it: research runs). None: fresh entropy at each call.
    """

    #: The name ``PrivateGridSearch(scoring=...)`` knows it by.
    name = None
    #: ``"classifier"`` or ``"regressor"``: the models it scores.
    kind = None

    def __init__(self, epsilon, *, accountant=None, random_state=None):
        self.epsilon = check_score_epsilon(epsilon, "epsilon")
        self.accountant = check_accountant(accountant)
        if random_state is not None and not isinstance(random_state, np.random.Generator) and (
                isinstance(random_state, (bool, np.bool_))
                or not isinstance(random_state, numbers.Integral)):
            raise TypeError(f"random_state must be None, an int or a numpy Generator, got "
                            f"{type(random_state).__name__}")
        self.random_state = random_state
        # the user's own seed or Generator only: with None nothing is kept
        self._stream = None if random_state is None else check_rng(random_state)

    def __repr__(self):
        # the scorer's own options: its __init__'s keywords besides the shared ones
        shared = ("self", "epsilon", "accountant", "random_state")
        options = "".join(f", {key}={getattr(self, key)!r}"
                          for key in inspect.signature(type(self).__init__).parameters
                          if key not in shared)
        extra = "" if self.accountant is None else f", accountant={self.accountant!r}"
        extra += "" if self.random_state is None else ", random_state=<given>"
        return f"{type(self).__name__}(epsilon={self.epsilon!r}{options}{extra})"

    @property
    def dp_event(self):
        """``LaplaceDpEvent(1/epsilon)``: Laplace noise of scale sensitivity/epsilon on a
        statistic of that L1 sensitivity, epsilon-DP."""
        return laplace_event(self.epsilon)

    # -- the hooks a scorer defines ---------------------------------------------------------
    def sensitivity(self, estimator, n):
        """The L1 sensitivity of :meth:`statistic` on ``n`` records under replace-one.

        Parameters
        ----------
        estimator : the private model (a pipeline's last step)
            What the bound may read of it (public constants: its ``label_bound``, ...).
        n : int
            The number of held-out records (public).

        Returns
        -------
        float
        """
        raise NotImplementedError

    def statistic(self, estimator, X, y):
        """The exact statistic of the records; never released (:meth:`score` adds the noise).

        Parameters
        ----------
        estimator : the private model (a pipeline's last step)
        X : the rows as the model reads them (through the pipeline's transformers)
        y : numpy.ndarray
            The labels, checked by :meth:`check_labels`.

        Returns
        -------
        float or array-like of float
        """
        raise NotImplementedError

    def finish(self, noisy, n, estimator):
        """The score from the noisy statistic (post-processing: no record is read).

        Parameters
        ----------
        noisy : numpy.ndarray
            The statistic as a 1-D array, plus Laplace noise.
        n : int
            The number of records.
        estimator : the private model

        Returns
        -------
        float
        """
        raise NotImplementedError

    def check_model(self, estimator):
        """Refuse (ValueError), before any record is read, a model of the right kind that this
        scorer still cannot score (no ``predict_proba``, no public class set, ...).

        Parameters
        ----------
        estimator : the private model (a pipeline's last step)
        """

    def check_labels(self, estimator, y):
        """Refuse (ValueError or TypeError) labels the statistic cannot place, before the
        charge (a message to the data holder).

        Parameters
        ----------
        estimator : the private model
        y : numpy.ndarray
        """

    # -- shared -----------------------------------------------------------------------------
    def check(self, estimator):
        """Refuse (ValueError) a model of the wrong kind or without what the scorer needs,
        before any work.

        Parameters
        ----------
        estimator : model or Pipeline

        Returns
        -------
        object
            The private model (a pipeline's last step).
        """
        final = final_step(estimator)
        kind = kind_of(final)
        if kind != self.kind:
            what = "neither a classifier nor a regressor" if kind is None else f"a {kind}"
            accepted = "" if kind is None else (
                f"; the scorers for a {kind} are {', '.join(map(repr, SCORINGS[kind]))}")
            raise ValueError(f"scoring={self.name!r} scores {self.kind}s, and "
                             f"{type(final).__name__} is {what}{accepted}")
        self.check_model(final)
        return final

    def score(self, estimator, X, y, *, rng=None, accountant=None):
        """The noisy score of ``estimator`` on ``(X, y)``.

        Parameters
        ----------
        estimator : fitted model
        X, y : the held-out records (not modified)
        rng : None, int, SeedSequence or Generator
            The noise's source (not kept).
        accountant : BudgetAccountant or ParallelGroup, optional
            Charged with :attr:`dp_event` after every check has passed (the model fitted and
            of the right kind, the rows finite and of its number of features, the labels, the
            noise's scale) and before the statistic is computed.

        Returns
        -------
        float
        """
        self.check(estimator)
        check_accountant(accountant)
        rng = check_rng(rng)
        y = labels(y)
        check_rows(X, y)
        final, X = model_rows(estimator, X)
        n = len(y)
        scale = check_noise_scale(f"scoring={self.name!r}",
                                  self.sensitivity(final, n) / self.epsilon, self.epsilon)
        self.check_labels(final, y)
        charge(accountant, self.dp_event, neighbours=NEIGHBOURS, label=f"noisy {self.name}")
        statistic = np.atleast_1d(np.asarray(self.statistic(final, X, y), dtype=float))
        noisy = statistic + rng.laplace(0.0, scale, size=statistic.shape)
        return float(self.finish(noisy, n, final))

    def __call__(self, estimator, X, y):
        rng = self._stream if self._stream is not None else np.random.default_rng()
        return self.score(estimator, X, y, rng=rng, accountant=self.accountant)


def _positive(value, name):
    return check_real(value, name, low=0.0)


class AccuracyScorer(PrivateScorer):
    r"""Noisy accuracy (``scoring="accuracy"``).

    Statistic: the count of correct predictions ``#{i : predict(x_i) = y_i}``. Replace-one
    sensitivity 1 (one record is correct or not). Mechanism: ``count + Laplace(1/epsilon)``,
    divided by the public n. Event: ``LaplaceDpEvent(1/epsilon)``, epsilon-DP. The score may
    fall outside [0, 1].

    Parameters
    ----------
    epsilon, accountant, random_state : as :class:`PrivateScorer`
    """

    name = "accuracy"
    kind = "classifier"

    def sensitivity(self, estimator, n):
        return 1.0

    def statistic(self, estimator, X, y):
        return np.count_nonzero(np.asarray(estimator.predict(X)) == y)

    def finish(self, noisy, n, estimator):
        return noisy[0] / n


def _public_classes(final, given, scorer):
    """The public class set: the scorer's own, else the model's ``classes`` parameter (never
    the labels present in the data)."""
    classes = given if given is not None else getattr(final, "classes", None)
    if classes is None:
        raise ValueError(f"scoring={scorer!r} needs the public class set: give the estimator's "
                         f"classes parameter (or the scorer's classes=); the labels present "
                         f"in the data are not public ({type(final).__name__})")
    classes = np.asarray(classes)
    if classes.ndim != 1 or len(classes) < 2:
        raise ValueError(f"classes must be a 1-D sequence of at least 2 labels, got "
                         f"{classes!r}")
    return classes


class BalancedAccuracyScorer(PrivateScorer):
    r"""Noisy balanced accuracy (``scoring="balanced_accuracy"``): the mean over the K public
    classes of each class's recall, from a noisy confusion histogram.

    Statistic: the histogram of the 2K cells (true class k, prediction correct or not), each
    record in one cell (``classes`` public: the scorer's ``classes``, else the estimator's
    ``classes`` parameter; never read off the data). Replace-one sensitivity 2 in L1: replacing
    a record takes 1 from one cell and adds 1 to another (or to the same). Mechanism: Laplace of
    scale ``2/epsilon`` on every cell; then, as post-processing, ``n_k = correct_k + wrong_k``
    (noisy), ``recall_k = clip(correct_k / max(n_k, floor), 0, 1)`` and the score is the mean
    recall. Event: ``LaplaceDpEvent(1/epsilon)``, epsilon-DP.

    Unlike accuracy, it does not reward predicting the majority class: on imbalanced data every
    candidate that does has balanced accuracy 1/K, and the candidates that find the minority
    class score above it.

    Parameters
    ----------
    epsilon, accountant, random_state : as :class:`PrivateScorer`
    classes : array-like, optional
        The public class set; default the estimator's ``classes`` parameter (refused if None).
    floor : float, optional
        Public floor (> 0) of a class's noisy count in the recall's denominator; default
        ``4/epsilon``, the standard deviation of that count's noise (two Laplace(2/epsilon)):
        a class seen fewer times than the noise's spread has no measurable recall, and its
        noisy ratio is shrunk towards 0 instead of exploding.
    """

    name = "balanced_accuracy"
    kind = "classifier"

    def __init__(self, epsilon, *, classes=None, floor=None, accountant=None,
                 random_state=None):
        super().__init__(epsilon, accountant=accountant, random_state=random_state)
        self.floor = None if floor is None else _positive(floor, "floor")
        self.classes = None if classes is None else list(np.asarray(classes).tolist())
        if self.classes is not None and (np.asarray(classes).ndim != 1 or len(self.classes) < 2
                                         or len(set(self.classes)) != len(self.classes)):
            raise ValueError(f"classes must be a 1-D sequence of at least 2 distinct labels, "
                             f"got {classes!r}")

    def check_model(self, estimator):
        _public_classes(estimator, self.classes, self.name)

    def _classes(self, estimator):
        return _public_classes(final_step(estimator), self.classes, self.name)

    def sensitivity(self, estimator, n):
        return 2.0

    def check_labels(self, estimator, y):
        classes = self._classes(estimator)
        if not np.all(np.isin(y, classes)):
            raise ValueError(f"y holds labels outside classes={classes.tolist()}")

    def statistic(self, estimator, X, y):
        classes = self._classes(estimator)
        correct = np.asarray(estimator.predict(X)) == y
        cells = np.zeros((len(classes), 2))
        for k, label in enumerate(classes.tolist()):
            mine = y == label
            cells[k, 1] = np.count_nonzero(mine & correct)
            cells[k, 0] = np.count_nonzero(mine & ~correct)
        return cells.ravel()

    def finish(self, noisy, n, estimator):
        cells = noisy.reshape(-1, 2)
        floor = self.floor if self.floor is not None else 4.0 / self.epsilon
        counts = np.maximum(cells.sum(axis=1), floor)
        return float(np.mean(np.clip(cells[:, 1] / counts, 0.0, 1.0)))


class LogLossScorer(PrivateScorer):
    r"""Noisy clipped log-loss, negated (``scoring="neg_log_loss"``, higher is better).

    Statistic: ``(1/n) sum_i min(-log p(y_i | x_i), clip)`` with the model's
    ``predict_log_proba`` (or ``predict_proba``), n public. Each term lies in ``[0, clip]``, so
    replace-one sensitivity ``clip / n``. Mechanism: ``statistic + Laplace(clip / (n
    epsilon))``, negated. Event: ``LaplaceDpEvent(1/epsilon)``, epsilon-DP.

    Needs predicted probabilities: a model without ``predict_proba`` (``DPLinearSVC``) is
    refused. The label's column is its place in the model's ``classes_`` (public with the
    model).

    Parameters
    ----------
    epsilon, accountant, random_state : as :class:`PrivateScorer`
    clip : float, default ``ln 100`` (about 4.6)
        Public cap (> 0) on a record's loss. The noise grows linearly with it, and it binds
        only on records whose true class got a probability below ``exp(-clip)`` (1% by
        default), which any candidate worth selecting rarely does: ``ln 100`` keeps the noise
        two thirds of ``ln 1000``'s while still separating a confident mistake (4.6) from a
        hedge (``ln 2`` = 0.69 for a coin flip).
    """

    name = "neg_log_loss"
    kind = "classifier"

    def __init__(self, epsilon, *, clip=DEFAULT_LOG_LOSS_CLIP, accountant=None,
                 random_state=None):
        super().__init__(epsilon, accountant=accountant, random_state=random_state)
        self.clip = _positive(clip, "clip")

    def check_model(self, estimator):
        if not hasattr(estimator, "predict_proba"):
            raise ValueError(f"scoring={self.name!r} needs predicted probabilities, and "
                             f"{type(estimator).__name__} has no predict_proba; score it with "
                             f"'accuracy' or 'balanced_accuracy'")

    def sensitivity(self, estimator, n):
        return self.clip / n

    def check_labels(self, estimator, y):
        if not np.all(np.isin(y, estimator.classes_)):
            raise ValueError(f"y holds labels outside classes={list(estimator.classes_)}")

    def statistic(self, estimator, X, y):
        classes = list(np.asarray(estimator.classes_).tolist())
        column = np.array([classes.index(label) for label in y.tolist()])
        if hasattr(estimator, "predict_log_proba"):
            log_p = np.asarray(estimator.predict_log_proba(X))
        else:
            with np.errstate(divide="ignore"):
                log_p = np.log(np.asarray(estimator.predict_proba(X)))
        losses = -log_p[np.arange(len(y)), column]
        return np.mean(np.minimum(losses, self.clip))

    def finish(self, noisy, n, estimator):
        return -noisy[0]


def _label_bound(final, given, scorer):
    """The public label bound: the scorer's own, else the model's ``label_bound`` parameter
    (a number, a released PrivateEstimate's value, or the larger end of a range in absolute
    value)."""
    from ..privacy import PrivateEstimate
    bound = given if given is not None else getattr(final, "label_bound", None)
    if isinstance(bound, PrivateEstimate):
        bound = bound.value
    elif isinstance(bound, (tuple, list, np.ndarray)) and len(bound) == 2:
        # a label range [low, high] (DPLinearRegression's): |y| <= max(|low|, |high|)
        bound = max(abs(float(bound[0])), abs(float(bound[1])))
    if bound is None:
        raise ValueError(f"scoring={scorer!r} needs a public label_bound (the estimator's "
                         f"label_bound parameter, or the scorer's label_bound=) to clip the "
                         f"labels and predictions; {type(final).__name__} has none")
    return _positive(bound, "label_bound")


class _RegressionScorer(PrivateScorer):
    kind = "regressor"

    def __init__(self, epsilon, *, label_bound=None, accountant=None, random_state=None):
        super().__init__(epsilon, accountant=accountant, random_state=random_state)
        self.label_bound = None if label_bound is None else _positive(label_bound,
                                                                      "label_bound")

    def check_model(self, estimator):
        _label_bound(estimator, self.label_bound, self.name)

    def _bound(self, estimator):
        return _label_bound(final_step(estimator), self.label_bound, self.name)

    def check_labels(self, estimator, y):
        check_real_labels(y)

    def _squared_errors(self, estimator, X, y):
        bound = self._bound(estimator)
        prediction = np.clip(np.asarray(estimator.predict(X), dtype=float), -bound, bound)
        return (prediction - np.clip(np.asarray(y, dtype=float), -bound, bound)) ** 2


class MeanSquaredErrorScorer(_RegressionScorer):
    r"""Noisy mean squared error, negated (``scoring="neg_mean_squared_error"``).

    Statistic: ``(1/n) sum_i (clip(yhat_i) - clip(y_i))^2``, labels and predictions clipped to
    ``[-B, B]`` with B the public label bound (the estimator's ``label_bound``, a number or a
    PrivateEstimate, or the scorer's). Each term lies in ``[0, 4 B^2]``: replace-one
    sensitivity ``4 B^2 / n``. Mechanism: ``statistic + Laplace(4 B^2 / (n epsilon))``,
    negated. Event: ``LaplaceDpEvent(1/epsilon)``, epsilon-DP.

    Parameters
    ----------
    epsilon, accountant, random_state : as :class:`PrivateScorer`
    label_bound : float, optional
        Public B; default the estimator's ``label_bound``.
    """

    name = "neg_mean_squared_error"

    def sensitivity(self, estimator, n):
        return 4.0 * self._bound(estimator) ** 2 / n

    def statistic(self, estimator, X, y):
        return np.mean(self._squared_errors(estimator, X, y))

    def finish(self, noisy, n, estimator):
        return -noisy[0]


class R2Scorer(_RegressionScorer):
    r"""Noisy coefficient of determination (``scoring="r2"``), ``1 - SSE / SST``.

    Statistic: the pair ``(SSE, SST)``, ``SSE = sum_i (clip(yhat_i) - clip(y_i))^2`` and
    ``SST = sum_i (clip(y_i) - mean(clip(y)))^2``, clipped to ``[-B, B]`` as in
    :class:`MeanSquaredErrorScorer`. Replace-one sensitivities: SSE ``4 B^2`` (one term in
    ``[0, 4 B^2]``); SST ``4 B^2`` too (``SST = min_c sum (y_i - c)^2``: with c the other
    dataset's mean, in [-B, B], one changed term moves it by at most ``(2B)^2``; the bound is
    reached up to a factor (n-1)/n). L1 sensitivity of the pair: ``8 B^2``. Mechanism: Laplace
    of scale ``8 B^2 / epsilon`` on each (both released in one epsilon-DP step, the same as
    epsilon/2 on each); then ``1 - max(SSE, 0) / max(SST, floor)``. Event:
    ``LaplaceDpEvent(1/epsilon)``, epsilon-DP.

    The design: SST is released with each score, not once per search, so that every score is
    one epsilon-DP event like the others and the scorer works standalone (a fold of
    ``cross_val_score`` has its own SST). For *choosing* among candidates on one held-out set,
    SST is the same for all of them and ``"neg_mean_squared_error"`` ranks them alike with half
    the noise; use ``"r2"`` where the reported score should be an R^2.

    Parameters
    ----------
    epsilon, accountant, random_state : as :class:`PrivateScorer`
    label_bound : float, optional
        Public B; default the estimator's ``label_bound``.
    floor : float, optional
        Public floor (> 0) of the noisy SST; default ``sqrt(2) 8 B^2 / epsilon``, its noise's
        standard deviation (below it the ratio is noise).
    """

    name = "r2"

    def __init__(self, epsilon, *, label_bound=None, floor=None, accountant=None,
                 random_state=None):
        super().__init__(epsilon, label_bound=label_bound, accountant=accountant,
                         random_state=random_state)
        self.floor = None if floor is None else _positive(floor, "floor")

    def sensitivity(self, estimator, n):
        return 8.0 * self._bound(estimator) ** 2

    def statistic(self, estimator, X, y):
        bound = self._bound(estimator)
        clipped = np.clip(np.asarray(y, dtype=float), -bound, bound)
        return [np.sum(self._squared_errors(estimator, X, y)),
                np.sum((clipped - clipped.mean()) ** 2)]

    def finish(self, noisy, n, estimator):
        floor = self.floor if self.floor is not None else (
            math.sqrt(2.0) * 8.0 * self._bound(estimator) ** 2 / self.epsilon)
        return 1.0 - max(noisy[0], 0.0) / max(noisy[1], floor)


#: The scorers dpsolve ships; :data:`SCORINGS` and :func:`make_private_scorer` are read off them.
SCORERS = (AccuracyScorer, BalancedAccuracyScorer, LogLossScorer, MeanSquaredErrorScorer,
           R2Scorer)
#: The private scorers by name, for each kind of estimator (``PrivateGridSearch(scoring=...)``).
SCORINGS = {kind: tuple(scorer.name for scorer in SCORERS if scorer.kind == kind)
            for kind in ("classifier", "regressor")}


def make_private_scorer(scoring, epsilon, **options):
    """The private scorer named ``scoring`` at ``epsilon``: the class of :data:`SCORERS` of
    that :attr:`~PrivateScorer.name`, built with ``epsilon`` and ``options``.

    Parameters
    ----------
    scoring : {"accuracy", "balanced_accuracy", "neg_log_loss", "neg_mean_squared_error", "r2"}
    epsilon : float
        > 0.
    **options
        The scorer's: ``accountant``, ``random_state``, and ``classes``/``floor``
        (balanced accuracy), ``clip`` (log-loss), ``label_bound`` (regression), ``floor`` (r2).

    Returns
    -------
    PrivateScorer
    """
    by_name = {scorer.name: scorer for scorer in SCORERS}
    if not isinstance(scoring, str) or scoring not in by_name:
        accepted = ", ".join(repr(name) for kind in SCORINGS.values() for name in kind)
        raise ValueError(f"scoring must be one of {accepted}, got {scoring!r}")
    return by_name[scoring](epsilon, **options)


def _noisy_accuracy(estimator, X, y, epsilon, *, rng=None, accountant=None):
    r"""The accuracy of ``estimator`` on ``(X, y)`` with Laplace noise, epsilon-DP in the
    records of ``(X, y)``: ``AccuracyScorer(epsilon).score(estimator, X, y, rng=rng,
    accountant=accountant)``.

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
        Charged with ``LaplaceDpEvent(1/epsilon)`` after every check has passed (the
        arguments, the model fitted, the rows of its number of features and finite) and
        before the predictions are computed.

    Returns
    -------
    float
        The noisy accuracy (may fall outside [0, 1]).
    """
    return AccuracyScorer(epsilon).score(estimator, X, y, rng=rng, accountant=accountant)


_MODULE = "dpsolve.private_selection"
_INSTEAD = "AccuracyScorer(epsilon).score(estimator, X, y, rng=rng, accountant=accountant)"
noisy_accuracy = alias(_noisy_accuracy, "noisy_accuracy",
                       f"{_MODULE}.noisy_accuracy is deprecated; use {_MODULE}.{_INSTEAD}, "
                       "which computes the same")
noisy_accuracy.__doc__ = (f"Deprecated: ``{_INSTEAD}`` computes the same.\n\n"
                          + _noisy_accuracy.__doc__.split("\n\n", 1)[1])
# the one-line factories: each is its class, called with the same arguments
accuracy_scorer = deprecated_alias(_MODULE, "accuracy_scorer", AccuracyScorer)
balanced_accuracy_scorer = deprecated_alias(_MODULE, "balanced_accuracy_scorer",
                                            BalancedAccuracyScorer)
log_loss_scorer = deprecated_alias(_MODULE, "log_loss_scorer", LogLossScorer)
mean_squared_error_scorer = deprecated_alias(_MODULE, "mean_squared_error_scorer",
                                             MeanSquaredErrorScorer)
r2_scorer = deprecated_alias(_MODULE, "r2_scorer", R2Scorer)
