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
estimators (classifiers and regressors), scored by a private scorer (:class:`PrivateScorer`:
noisy accuracy, balanced accuracy, clipped log-loss, clipped squared error or R^2, each with its
replace-one sensitivity derived in its docstring), optionally refitting the winner on all
records (``refit=True``, its cost composed in). Docs: docs/user_guide.md.

What is released is the best run only: K, the other runs and the running time must stay
hidden (K known, the release is a best-of-K, which composes). The wall-clock time of
:func:`select` grows with K, so whoever times the procedure learns K: run it where its timing is
not observed, as for any side channel of research mode (docs/secure_noise.md).
"""
import dataclasses
import math
import numbers
from typing import Any, NamedTuple, Optional

import dp_accounting
import numpy as np
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as _rdp

from ._validation import check_choice, check_real, check_rng
from .privacy.accounting import (NEIGHBOURS, PrivacyReport, PureDpEvent, check_event,
                                 epsilon_of, tightest_accountant)
from .privacy.budget import charge, check_accountant
from .privacy.calibration import MAX_NOISE_SCALE, check_noise_scale

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
    name, epsilon = _accounted(event, delta)
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


def _accounted(event, delta, what="selection"):
    """The accountant's name and the epsilon of ``event`` at ``delta`` (basic at delta 0, else
    the tightest that reads it), or a ValueError if it is not finite."""
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
        Charged with ``LaplaceDpEvent(1/epsilon)`` after every check has passed (the
        arguments, the model fitted, the rows of its number of features and finite) and
        before the predictions are computed.

    Returns
    -------
    float
        The noisy accuracy (may fall outside [0, 1]).
    """
    return AccuracyScorer(epsilon).score(estimator, X, y, rng=rng, accountant=accountant)


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


def _model_rows(estimator, X):
    """The fitted private model and the rows it will read: ``X`` through a pipeline's
    transformers (fitted, so public with the model), checked to be real, finite and of the
    model's number of features.

    A message to the data holder before any charge, as a fit's refusal of a NaN row is: a
    score must not be charged and then fail on rows it could have refused.
    """
    from sklearn.utils.validation import check_is_fitted
    check_is_fitted(estimator)
    final = _final(estimator)
    if hasattr(estimator, "steps"):
        X = estimator[:-1].transform(X)
    # checked on a converted copy; the model predicts on X as given (feature names kept)
    checked = _real_finite_rows(X)
    expected = getattr(final, "n_features_in_", None)
    if expected is not None and checked.shape[1] != expected:
        raise ValueError(f"X has {checked.shape[1]} features, but {type(final).__name__} was "
                         f"fitted with {expected}")
    return final, X


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


def _real_finite_rows(X):
    """``X`` as a checked array (a copy where it must be converted): real numbers, finite, 2-D,
    else a TypeError or ValueError naming X."""
    from sklearn.utils.validation import check_array
    if hasattr(X, "dtype") and np.issubdtype(X.dtype, np.complexfloating):
        raise TypeError("X must hold real numbers, got complex values")
    return check_array(X, accept_sparse="csr", dtype="numeric", ensure_all_finite=True,
                       input_name="X")


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


#: The private scorers by name, for each kind of estimator (``PrivateGridSearch(scoring=...)``).
SCORINGS = {"classifier": ("accuracy", "balanced_accuracy", "neg_log_loss"),
            "regressor": ("neg_mean_squared_error", "r2")}
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
    every scorer: :class:`PrivateGridSearch` composes it into each run as it does the noisy
    accuracy. The model must not have been fitted on these records (or its own privacy
    composes as well); everything the scorer reads of the model (its ``classes``,
    ``label_bound``, predictions) is public once the model is.

    Use a scorer standalone as a scikit-learn scorer, ``scorer(estimator, X, y)``: each call
    is charged to ``accountant`` (before the records are read) and draws its noise from
    ``random_state`` (None: fresh entropy, nothing kept). Or give it to
    :class:`PrivateGridSearch` (``scoring=``), which charges and draws for it (it must then
    hold neither). Build one with :func:`make_private_scorer` or the functions
    :func:`accuracy_scorer`, :func:`balanced_accuracy_scorer`, :func:`log_loss_scorer`,
    :func:`mean_squared_error_scorer`, :func:`r2_scorer`.

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

    name = None
    kind = None             # "classifier" or "regressor"

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

    def _options(self):
        return {}

    def __repr__(self):
        options = "".join(f", {k}={v!r}" for k, v in self._options().items())
        extra = "" if self.accountant is None else f", accountant={self.accountant!r}"
        extra += "" if self.random_state is None else ", random_state=<given>"
        return f"{type(self).__name__}(epsilon={self.epsilon!r}{options}{extra})"

    @property
    def dp_event(self):
        """``LaplaceDpEvent(1/epsilon)``: Laplace noise of scale sensitivity/epsilon on a
        statistic of that L1 sensitivity, epsilon-DP."""
        return laplace_event(self.epsilon)

    # -- what each scorer defines ----------------------------------------------------------
    def _check_final(self, final):
        """Refuse, before any record is read, a model this scorer cannot score."""

    def sensitivity(self, estimator, n):
        """The L1 sensitivity of the statistic on n records, under replace-one."""
        raise NotImplementedError

    def _statistic(self, estimator, X, y):
        """The exact statistic (never released: noise is added by :meth:`score`)."""
        raise NotImplementedError

    def _finish(self, noisy, n, estimator):
        """The score from the noisy statistic (post-processing)."""
        raise NotImplementedError

    def _check_labels(self, estimator, y):
        """Labels the statistic cannot place (a message to the data holder)."""

    # -- shared -----------------------------------------------------------------------------
    def check(self, estimator):
        """Refuse (ValueError) a model of the wrong kind or without what the scorer needs,
        before any work; returns the private model (a pipeline's last step)."""
        final = _final(estimator)
        kind = _kind(final)
        if kind != self.kind:
            what = "neither a classifier nor a regressor" if kind is None else f"a {kind}"
            accepted = "" if kind is None else (
                f"; the scorers for a {kind} are {', '.join(map(repr, SCORINGS[kind]))}")
            raise ValueError(f"scoring={self.name!r} scores {self.kind}s, and "
                             f"{type(final).__name__} is {what}{accepted}")
        self._check_final(final)
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
        y = _labels(y)
        _check_rows(X, y)
        final, X = _model_rows(estimator, X)
        n = len(y)
        scale = check_noise_scale(f"scoring={self.name!r}",
                                  self.sensitivity(final, n) / self.epsilon, self.epsilon)
        self._check_labels(final, y)
        charge(accountant, self.dp_event, neighbours=NEIGHBOURS, label=f"noisy {self.name}")
        statistic = np.atleast_1d(np.asarray(self._statistic(final, X, y), dtype=float))
        noisy = statistic + rng.laplace(0.0, scale, size=statistic.shape)
        return float(self._finish(noisy, n, final))

    def __call__(self, estimator, X, y):
        rng = self._stream if self._stream is not None else np.random.default_rng()
        return self.score(estimator, X, y, rng=rng, accountant=self.accountant)


def _kind(final):
    from sklearn.base import is_classifier, is_regressor
    if is_regressor(final):
        return "regressor"
    if is_classifier(final):
        return "classifier"
    return None


def _positive(value, name):
    return check_real(value, name, low=0.0)


class AccuracyScorer(PrivateScorer):
    r"""Noisy accuracy (``scoring="accuracy"``), as :func:`noisy_accuracy`.

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

    def _statistic(self, estimator, X, y):
        return np.count_nonzero(np.asarray(estimator.predict(X)) == y)

    def _finish(self, noisy, n, estimator):
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

    def _options(self):
        return {"classes": self.classes, "floor": self.floor}

    def _check_final(self, final):
        _public_classes(final, self.classes, self.name)

    def _classes(self, estimator):
        return _public_classes(_final(estimator), self.classes, self.name)

    def sensitivity(self, estimator, n):
        return 2.0

    def _check_labels(self, estimator, y):
        classes = self._classes(estimator)
        if not np.all(np.isin(y, classes)):
            raise ValueError(f"y holds labels outside classes={classes.tolist()}")

    def _statistic(self, estimator, X, y):
        classes = self._classes(estimator)
        correct = np.asarray(estimator.predict(X)) == y
        cells = np.zeros((len(classes), 2))
        for k, label in enumerate(classes.tolist()):
            mine = y == label
            cells[k, 1] = np.count_nonzero(mine & correct)
            cells[k, 0] = np.count_nonzero(mine & ~correct)
        return cells.ravel()

    def _finish(self, noisy, n, estimator):
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

    def _options(self):
        return {"clip": self.clip}

    def _check_final(self, final):
        if not hasattr(final, "predict_proba"):
            raise ValueError(f"scoring={self.name!r} needs predicted probabilities, and "
                             f"{type(final).__name__} has no predict_proba; score it with "
                             f"'accuracy' or 'balanced_accuracy'")

    def sensitivity(self, estimator, n):
        return self.clip / n

    def _check_labels(self, estimator, y):
        if not np.all(np.isin(y, estimator.classes_)):
            raise ValueError(f"y holds labels outside classes={list(estimator.classes_)}")

    def _statistic(self, estimator, X, y):
        classes = list(np.asarray(estimator.classes_).tolist())
        column = np.array([classes.index(label) for label in y.tolist()])
        if hasattr(estimator, "predict_log_proba"):
            log_p = np.asarray(estimator.predict_log_proba(X))
        else:
            with np.errstate(divide="ignore"):
                log_p = np.log(np.asarray(estimator.predict_proba(X)))
        losses = -log_p[np.arange(len(y)), column]
        return np.mean(np.minimum(losses, self.clip))

    def _finish(self, noisy, n, estimator):
        return -noisy[0]


def _label_bound(final, given, scorer):
    """The public label bound: the scorer's own, else the model's ``label_bound`` parameter
    (a number, a released PrivateEstimate's value, or the larger end of a range in absolute
    value)."""
    from .privacy import PrivateEstimate
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

    def _check_final(self, final):
        _label_bound(final, self.label_bound, self.name)

    def _bound(self, estimator):
        return _label_bound(_final(estimator), self.label_bound, self.name)

    def _check_labels(self, estimator, y):
        _check_real_labels(y)

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

    def _options(self):
        return {"label_bound": self.label_bound}

    def sensitivity(self, estimator, n):
        return 4.0 * self._bound(estimator) ** 2 / n

    def _statistic(self, estimator, X, y):
        return np.mean(self._squared_errors(estimator, X, y))

    def _finish(self, noisy, n, estimator):
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

    def _options(self):
        return {"label_bound": self.label_bound, "floor": self.floor}

    def sensitivity(self, estimator, n):
        return 8.0 * self._bound(estimator) ** 2

    def _statistic(self, estimator, X, y):
        bound = self._bound(estimator)
        clipped = np.clip(np.asarray(y, dtype=float), -bound, bound)
        return [np.sum(self._squared_errors(estimator, X, y)),
                np.sum((clipped - clipped.mean()) ** 2)]

    def _finish(self, noisy, n, estimator):
        floor = self.floor if self.floor is not None else (
            math.sqrt(2.0) * 8.0 * self._bound(estimator) ** 2 / self.epsilon)
        return 1.0 - max(noisy[0], 0.0) / max(noisy[1], floor)


_SCORERS = {"accuracy": AccuracyScorer, "balanced_accuracy": BalancedAccuracyScorer,
            "neg_log_loss": LogLossScorer, "neg_mean_squared_error": MeanSquaredErrorScorer,
            "r2": R2Scorer}


def make_private_scorer(scoring, epsilon, **options):
    """The private scorer named ``scoring`` at ``epsilon``.

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
    if not isinstance(scoring, str) or scoring not in _SCORERS:
        accepted = ", ".join(repr(name) for kind in SCORINGS.values() for name in kind)
        raise ValueError(f"scoring must be one of {accepted}, got {scoring!r}")
    return _SCORERS[scoring](epsilon, **options)


def accuracy_scorer(epsilon, *, accountant=None, random_state=None):
    """A scikit-learn scorer, ``scorer(estimator, X, y)``, returning the noisy accuracy
    (:class:`AccuracyScorer`, as :func:`noisy_accuracy`): for
    ``cross_val_score(..., scoring=accuracy_scorer(0.1, accountant=budget))``, so that the
    scores of a cross-validation are private and charged to the budget.

    Parameters
    ----------
    epsilon : float
        Per score, > 0.
    accountant : BudgetAccountant, optional
    random_state : None, int or Generator
        Seeds one Generator shared by the scorer's calls (None: fresh entropy per call).

    Returns
    -------
    AccuracyScorer
    """
    return AccuracyScorer(epsilon, accountant=accountant, random_state=random_state)


def balanced_accuracy_scorer(epsilon, *, classes=None, floor=None, accountant=None,
                             random_state=None):
    """A scikit-learn scorer returning the noisy balanced accuracy
    (:class:`BalancedAccuracyScorer`: sensitivity 2 on the confusion histogram).

    Parameters
    ----------
    epsilon : float
        Per score, > 0.
    classes : array-like, optional
        The public classes; default the estimator's ``classes``.
    floor : float, optional
        Public floor (> 0) of each noisy class count (as :class:`BalancedAccuracyScorer`).
    accountant : BudgetAccountant or ParallelGroup, optional
        Charged at each call.
    random_state : None, int or Generator
        Seeds one Generator shared by the scorer's calls (None: fresh entropy per call).

    Returns
    -------
    BalancedAccuracyScorer
    """
    return BalancedAccuracyScorer(epsilon, classes=classes, floor=floor, accountant=accountant,
                                  random_state=random_state)


def log_loss_scorer(epsilon, *, clip=DEFAULT_LOG_LOSS_CLIP, accountant=None,
                    random_state=None):
    """A scikit-learn scorer returning the noisy clipped log-loss, negated
    (:class:`LogLossScorer`: sensitivity clip/n).

    Parameters
    ----------
    epsilon : float
        Per score, > 0.
    clip : float, default ln 100
        Public clip (> 0) of each record's log-loss.
    accountant : BudgetAccountant or ParallelGroup, optional
        Charged at each call.
    random_state : None, int or Generator
        Seeds one Generator shared by the scorer's calls (None: fresh entropy per call).

    Returns
    -------
    LogLossScorer
    """
    return LogLossScorer(epsilon, clip=clip, accountant=accountant, random_state=random_state)


def mean_squared_error_scorer(epsilon, *, label_bound=None, accountant=None,
                              random_state=None):
    """A scikit-learn scorer returning the noisy clipped mean squared error, negated
    (:class:`MeanSquaredErrorScorer`: sensitivity 4 B^2 / n).

    Parameters
    ----------
    epsilon : float
        Per score, > 0.
    label_bound : float, optional
        Public B; default the estimator's ``label_bound``.
    accountant : BudgetAccountant or ParallelGroup, optional
        Charged at each call.
    random_state : None, int or Generator
        Seeds one Generator shared by the scorer's calls (None: fresh entropy per call).

    Returns
    -------
    MeanSquaredErrorScorer
    """
    return MeanSquaredErrorScorer(epsilon, label_bound=label_bound, accountant=accountant,
                                  random_state=random_state)


def r2_scorer(epsilon, *, label_bound=None, floor=None, accountant=None, random_state=None):
    """A scikit-learn scorer returning the noisy R^2 (:class:`R2Scorer`: SSE and SST, L1
    sensitivity 8 B^2).

    Parameters
    ----------
    epsilon : float
        Per score, > 0.
    label_bound : float, optional
        Public B; default the estimator's ``label_bound``.
    floor : float, optional
        Public floor (> 0) of the noisy SST (as :class:`R2Scorer`).
    accountant : BudgetAccountant or ParallelGroup, optional
        Charged at each call.
    random_state : None, int or Generator
        Seeds one Generator shared by the scorer's calls (None: fresh entropy per call).

    Returns
    -------
    R2Scorer
    """
    return R2Scorer(epsilon, label_bound=label_bound, floor=floor, accountant=accountant,
                    random_state=random_state)


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
    the held-out part with the private scorer ``scoring`` at ``score_epsilon``
    (:class:`PrivateScorer`). :func:`select` keeps the best run. One run's event is the fit's
    event composed with the score's (the same for every setting, or one that dominates them
    all: a pure event at the largest epsilon, or their composition); the selection's is
    ``RepeatAndSelectDpEvent(run, mean, shape)``. With ``refit=True`` the winning setting is
    then fitted again on all the records, with fresh noise, and the search's event is the
    selection's composed with the refit's (the event that dominates every setting's fit on all
    records). The events of the :class:`~dpsolve.privacy.PrivateEstimate` bounds the settings
    use are composed in once (released once, not per run). The budget, ``accountant``, is
    charged once with the whole search's event before any fit: refused, nothing runs.

    Each run's noise, and the refit's, is drawn from the search's stream and passed to the
    fit (``fit(X, y, rng=...)``); nothing the search returns holds it, so with
    ``random_state=None`` the released model's noise cannot be regenerated.
    ``best_estimator_.get_params()`` are the estimator's as given, with the winning setting.

    Parameters
    ----------
    estimator : DPLogisticRegression, DPLinearSVC, DPLinearRegression or a Pipeline ending in one
        Its transformers must be stateless (scikit-learn's ``requires_fit`` tag False, e.g.
        ``Normalizer`` or ``FunctionTransformer``): a transformer that learns from the records
        (``StandardScaler``, ...) would release what it learnt, and is refused. Its bounds
        (``row_norm``, ``classes``, ``label_bound``) must be public or private estimates: a
        bound read off the data is refused. Its ``accountant``, if set, is the budget the
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
        its options, e.g. ``log_loss_scorer(0.1, clip=3.0)``) must be built at
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
        one fit. None if no run took place (Poisson: K = 0).
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
        The search's privacy: the selection's (and the refit's) epsilon plus the estimates'
        (basic composition).
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

    def _planned_event(self, estimator, X, y):
        """The fit's DpEvent from its plan (public constants), without running it."""
        if hasattr(estimator, "steps"):
            # stateless transformers only (_check_estimator): this fit learns nothing
            X = estimator[:-1].fit_transform(X, y)
        return _final(estimator)._planned_event(X, y)

    def _scorer(self, score_epsilon, final):
        """The private scorer at ``score_epsilon``, checked against the estimator."""
        scoring = self.scoring
        if scoring is None:
            scoring = "neg_mean_squared_error" if _kind(final) == "regressor" else "accuracy"
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
        final = _check_estimator(self.estimator)
        fraction, score_epsilon, refit = self._check_options()
        scorer = self._scorer(score_epsilon, final)
        grid, models = self._candidates(scorer)
        estimates = _unique(e for model in models for e in _final(model)._estimates())
        y = _labels(y)
        _check_rows(X, y)
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
        event, epsilon, certified_by = _search_privacy(selection, plan_all, estimates)
        best = selection.output
        if refit:
            best = _refit_winner(models, selection, plan_all.planned, X, y, refit_rng, own)
            selection = dataclasses.replace(selection, output=None)
        if best is not None:
            how = (f"private selection ({selection.method})"
                   + (" and refit" if refit else ""))
            _release_as(_final(best), event, epsilon, delta, how, certified_by)
        self.scorer_ = scorer
        self.selection_ = selection
        self.best_estimator_ = best
        self.best_params_ = None if selection.index is None else grid[selection.candidate]
        self.best_score_ = selection.score
        self.epsilon_ = epsilon
        self.delta_ = selection.delta
        self.dp_event_ = event
        return self

    def _budget(self):
        """The budget to charge and the estimator's own accountant.

        The budget is the search's ``accountant``, else the estimator's own (None if neither
        has one); two different ones are refused: the search charges one budget, once.
        """
        budget = check_accountant(self.accountant)
        own = getattr(_final(self.estimator), "accountant", None)
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
        from sklearn.base import clone
        from sklearn.model_selection import ParameterGrid

        grid = list(ParameterGrid(self.param_grid))
        if not grid:
            raise ValueError("param_grid is empty")
        accountant = _parameter(self.estimator, "accountant")
        models = [clone(self.estimator).set_params(**{**params, accountant: None})
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
        planned = [self._planned_event(m, X_train, y_train) for m in models]
        run_event = dp_accounting.ComposedDpEvent([_dominating_event(planned),
                                                   scorer.dp_event])
        # the whole search's event, checked (finite at delta) before anything is charged
        delta = check_real(self.delta, "delta", low=0.0, high=1.0, low_inclusive=True)
        selection_event = repetition_event(run_event, self.method,
                                           float(len(models)) if self.mean is None
                                           else self.mean, self.shape)
        _accounted(selection_event, delta)
        return planned, run_event, delta, selection_event

    def _plan_refit(self, models, X, y, selection_event, delta):
        """The refit's plan for every setting, on all the records ``(X, y)``, composed with
        the selection's event and checked to be finite at ``delta``: a :class:`_RefitPlan`."""
        planned = [self._planned_event(m, X, y) for m in models]
        event = dp_accounting.ComposedDpEvent([selection_event, _dominating_event(planned)])
        accountant, epsilon = _accounted(event, delta, "search")
        return _RefitPlan(planned, event, accountant, epsilon)


class _RefitPlan(NamedTuple):
    """A search with ``refit=True``, planned before any fit.

    Attributes
    ----------
    planned : list of dp_accounting.DpEvent
        Each setting's refit event (all the records).
    event : dp_accounting.DpEvent
        The selection composed with the refit of whichever setting wins.
    accountant : str
        The accountant that certified ``epsilon``.
    epsilon : float
        ``event``'s epsilon at the search's delta.
    """

    planned: list
    event: Any
    accountant: str
    epsilon: float


def _check_classes(final, y):
    """Refuse labels outside a classifier's public ``classes``.

    A message to the data holder, before the budget is charged (a fit or a score would refuse
    them mid-selection).
    """
    classes = getattr(final, "classes", None)
    if _kind(final) == "classifier" and classes is not None and not np.all(
            np.isin(y, np.asarray(classes))):
        raise ValueError(f"y holds labels outside classes={np.asarray(classes).tolist()}")


def _check_records(estimator, scorer, X, y):
    """Refuse records that a run would refuse mid-selection, before the budget is charged:
    rows (as the private model reads them, through the pipeline's stateless transformers)
    that are not real and finite, and labels a regression scorer cannot score. The fits
    refuse such a training row themselves; the held-out part is read only by the scores."""
    from sklearn.base import clone

    if hasattr(estimator, "steps"):
        # stateless transformers only (_check_estimator): this fit learns nothing
        X = clone(estimator[:-1]).fit_transform(X, y)
    _real_finite_rows(X)
    if scorer.kind == "regressor":
        _check_real_labels(y)


def _check_real_labels(y):
    """A regressor's labels (an array) are real and finite, or a TypeError/ValueError naming
    y (a NaN label would make every noisy score NaN)."""
    if not (np.issubdtype(y.dtype, np.floating) or np.issubdtype(y.dtype, np.integer)):
        raise TypeError(f"y must hold real numbers, got dtype {y.dtype}")
    if not np.all(np.isfinite(y)):
        raise ValueError("y must be finite")


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
    from sklearn.utils import _safe_indexing

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
    final = _final(model)
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
    from sklearn.base import clone

    def run(k, rng):
        model = clone(models[k])
        # the run's noise is passed to fit, never stored in the model
        noise = {} if _secure(model) else {_parameter(model, "rng"): rng.spawn(1)[0]}
        model.fit(*train, **noise)
        _check_released(model, planned[k], "fit")
        model.set_params(**{_parameter(model, "accountant"): own})   # as the user set it
        return scorer.score(model, *val, rng=rng), model

    return run


def _search_privacy(selection, plan_all, estimates):
    """The search's event, epsilon and what certified it.

    The selection's (with a refit, ``plan_all``'s: the selection and the refit), composed
    with the private estimates by basic composition. Returns ``(event, epsilon,
    certified_by)``.
    """
    if plan_all is not None:
        event, epsilon, name = plan_all.event, plan_all.epsilon, plan_all.accountant
    else:
        event, epsilon, name = selection.dp_event, selection.epsilon, selection.accountant
    if estimates:
        event = dp_accounting.ComposedDpEvent([event] + [e.dp_event for e in estimates])
        epsilon += sum(e.epsilon for e in estimates)
        name = f"{name} and basic composition"
    return event, epsilon, name


def _refit_winner(models, selection, planned, X, y, rng, own):
    """The selected setting fitted again on all the records ``(X, y)`` with noise from
    ``rng``, checked against its ``planned`` event; None if no run took place."""
    from sklearn.base import clone

    if selection.index is None:
        return None
    k = selection.candidate
    best = clone(models[k])
    noise = {} if _secure(best) else {_parameter(best, "rng"): rng}
    best.fit(X, y, **noise)
    _check_released(best, planned[k], "refit")
    best.set_params(**{_parameter(best, "accountant"): own})
    return best


def _check_estimator(estimator):
    """The search's estimator: one of dpsolve's estimators, alone or at the end of a pipeline
    of stateless transformers, with no bound read off the data. Returns the estimator."""
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
    if not hasattr(final, "_planned_event") or _kind(final) is None:
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


def _release_as(estimator, event, epsilon, delta, method, certified_by):
    """Give the released model the privacy attributes of the search that released it."""
    fit = estimator.fit_
    report = PrivacyReport(
        epsilon=epsilon, delta=delta, method=method, certified_epsilon=epsilon,
        certified_by=certified_by, neighbours=fit.privacy.neighbours)
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


__all__ = ["AccuracyScorer", "BalancedAccuracyScorer", "DEFAULT_LOG_LOSS_CLIP", "LogLossScorer",
           "METHODS", "MeanSquaredErrorScorer", "PrivateGridSearch", "PrivateScorer",
           "R2Scorer", "SCORINGS", "Selection", "accuracy_scorer", "balanced_accuracy_scorer",
           "draw_repetitions", "laplace_event", "log_loss_scorer", "make_private_scorer",
           "mean_squared_error_scorer", "noisy_accuracy", "r2_scorer", "repetition_event",
           "select"]
