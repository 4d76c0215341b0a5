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
records (``refit=True``, its cost composed in). Docs: docs/user_guide.md; a new scorer:
docs/adding_a_scorer.md.

Three modules, each name re-exported here: :mod:`~dpsolve.private_selection.selection` (the
mechanism, with the distributions of K in :mod:`~dpsolve.private_selection.repetitions`),
:mod:`~dpsolve.private_selection.scorers` and :mod:`~dpsolve.private_selection.grid_search`
(which needs scikit-learn, imported when ``PrivateGridSearch`` is first used).

What is released is the best run only: K, the other runs and the running time must stay
hidden (K known, the release is a best-of-K, which composes). The wall-clock time of
:func:`select` grows with K, so whoever times the procedure learns K: run it where its timing is
not observed, as for any side channel of research mode (docs/secure_noise.md).
"""
import importlib

# MAX_MEAN and check_score_epsilon: not in __all__, importable from here as before the split
from .repetitions import MAX_MEAN, METHODS, draw_repetitions, repetition_event  # noqa: F401
from .scorers import (DEFAULT_LOG_LOSS_CLIP, SCORERS, SCORINGS, AccuracyScorer,
                      BalancedAccuracyScorer, LogLossScorer, MeanSquaredErrorScorer,
                      PrivateScorer, R2Scorer, accuracy_scorer, balanced_accuracy_scorer,
                      check_score_epsilon, laplace_event, log_loss_scorer,  # noqa: F401
                      make_private_scorer, mean_squared_error_scorer, noisy_accuracy, r2_scorer)
from .selection import Selection, select


def __getattr__(name):
    # the grid search needs scikit-learn, an optional dependency: imported when first used, so
    # that ``import dpsolve`` imports neither
    if name == "PrivateGridSearch":
        return importlib.import_module(f"{__name__}.grid_search").PrivateGridSearch
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"PrivateGridSearch"})


__all__ = ["AccuracyScorer", "BalancedAccuracyScorer", "DEFAULT_LOG_LOSS_CLIP", "LogLossScorer",
           "METHODS", "MeanSquaredErrorScorer", "PrivateGridSearch", "PrivateScorer",
           "R2Scorer", "SCORERS", "SCORINGS", "Selection", "accuracy_scorer",
           "balanced_accuracy_scorer", "draw_repetitions", "laplace_event", "log_loss_scorer",
           "make_private_scorer", "mean_squared_error_scorer", "noisy_accuracy", "r2_scorer",
           "repetition_event", "select"]
