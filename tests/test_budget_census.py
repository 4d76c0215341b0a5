"""The census of every release path that takes ``accountant=``: each must reach the budget
through the one charging path (:func:`dpsolve.privacy.budget.charge`) with its neighbour
relation, book exactly what it releases, refuse a budget under another relation, a copy of a
budget in another process, and leave the ledger untouched when it refuses.

The paths are found by introspection (every public function and method of dpsolve with an
``accountant`` parameter); each must have a recipe here, or be listed as one whose
``accountant`` names an accountant (a string), so that a new path cannot skip these checks.
"""
import concurrent.futures
import functools
import importlib
import inspect
import multiprocessing
import pickle
import pkgutil
import warnings

import dp_accounting
import numpy as np
import pytest

import dpsolve
from dpsolve.datasets import make_synthetic
from dpsolve.privacy import BudgetAccountant, BudgetExceededError, PureDpEvent, epsilon_of
from dpsolve.solvers import registry

pytest.importorskip("sklearn", minversion="1.6")

#: Parameters named ``accountant`` that name an accountant ("pld", "rdp", ...) or are the
#: charging path itself: not releases.
NOT_RELEASES = {
    "dpsolve.fit.Fit.certified_epsilon", "dpsolve.privacy.accounting.calibrate",
    "dpsolve.privacy.accounting.delta_of", "dpsolve.privacy.accounting.epsilon_of",
    "dpsolve.privacy.budget.BudgetAccountant.__init__",
    "dpsolve.private_selection.selection.Selection.__init__",
    "dpsolve.privacy.source_audit.AuditRow.__init__",
    "dpsolve.privacy.budget.charge", "dpsolve.privacy.budget.check_accountant",
}


def _public_modules():
    for info in pkgutil.walk_packages(dpsolve.__path__, "dpsolve."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            yield importlib.import_module(info.name)


def accountant_paths():
    """The qualified names of dpsolve's public functions and methods (of public classes in
    public modules, ``__init__`` and ``__call__`` included) with an ``accountant`` parameter,
    each function once (by where it is defined)."""
    found = set()
    for module in _public_modules():
        for name, obj in vars(module).items():
            if name.startswith("_") or not getattr(obj, "__module__", "").startswith("dpsolve"):
                continue
            functions = [obj] if inspect.isfunction(obj) else []
            if inspect.isclass(obj):
                functions = [member for attr, member in inspect.getmembers(obj)
                             if inspect.isfunction(member)
                             and (not attr.startswith("_") or attr in ("__init__", "__call__"))]
            for function in functions:
                try:
                    parameters = inspect.signature(function).parameters
                except (TypeError, ValueError):
                    continue
                if "accountant" in parameters:
                    found.add(f"{function.__module__}.{function.__qualname__}")
    return found


# -- the recipes: each runs one release path charged to ``accountant`` and returns the events
# of what it released ------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _data():
    X, y = make_synthetic(200, 3, rng=0)
    labels = np.clip(X @ np.array([0.5, -0.3, 0.2]), -1.0, 1.0)
    return X, y, labels


def _classifier(**changes):
    from dpsolve.estimators import DPLogisticRegression
    return DPLogisticRegression(**{"epsilon": 1.0, "row_norm": 1.0, "classes": [-1, 1],
                                   "random_state": 0, **changes})


@functools.lru_cache(maxsize=None)
def _fitted():
    """Models fitted without a budget, to be scored (their own release is not the census')."""
    from dpsolve.estimators import DPLinearRegression
    X, y, labels = _data()
    regressor = DPLinearRegression(1.0, row_norm=1.0, label_bound=1.0, random_state=0)
    return _classifier().fit(X, y), regressor.fit(X, labels)


def _solver(name, accountant):
    from test_common_checks import example_problem, run
    spec = dpsolve.solvers.get(name)
    return [run(spec, example_problem(spec), rng=0, accountant=accountant).dp_event]


def _estimator(kind, accountant, estimate=False):
    from dpsolve.estimators import DPLinearRegression, DPLinearSVC
    X, y, labels = _data()
    bound = dpsolve.privacy.estimate_row_norm(X, 0.2, upper=3.0, rng=1) if estimate else 1.0
    if kind == "regression":
        model = DPLinearRegression(1.0, row_norm=bound, label_bound=1.0, accountant=accountant,
                                   random_state=0).fit(X, labels)
    elif kind == "svc":
        model = DPLinearSVC(1.0, row_norm=bound, classes=[-1, 1], accountant=accountant,
                            random_state=0).fit(X, y)
    else:
        model = _classifier(row_norm=bound, accountant=accountant).fit(X, y) \
            if estimate else _classifier(accountant=accountant).fit(X, y)
    return [model.dp_event_]


def _quantile(which, accountant):
    X, _, labels = _data()
    quantile = dpsolve.privacy.quantile
    if which == "private_quantile":
        estimate = quantile.private_quantile(np.abs(labels), 0.5, 0.3, upper=2.0, rng=0,
                                             accountant=accountant)
    elif which == "estimate_row_norm":
        estimate = quantile.estimate_row_norm(X, 0.3, upper=3.0, rng=0, accountant=accountant)
    else:
        estimate = quantile.estimate_label_bound(labels, 0.3, upper=2.0, rng=0,
                                                 accountant=accountant)
    return [estimate.dp_event]


def _select(accountant):
    from dpsolve.private_selection import select
    selection = select(lambda candidate, rng: (float(candidate), candidate), [1, 2, 3],
                       PureDpEvent(0.1), rng=0, accountant=accountant)
    return [selection.dp_event]


def _noisy_accuracy(accountant):
    from dpsolve.private_selection import laplace_event, noisy_accuracy
    X, y, _ = _data()
    noisy_accuracy(_fitted()[0], X, y, 0.2, rng=0, accountant=accountant)
    return [laplace_event(0.2)]


def _scorer(name, accountant, standalone=True):
    from dpsolve.private_selection import SCORINGS, make_private_scorer
    X, y, labels = _data()
    classifier, regressor = _fitted()
    model, target = (regressor, labels) if name in SCORINGS["regressor"] else (classifier, y)
    if standalone:
        scorer = make_private_scorer(name, 0.2, accountant=accountant, random_state=0)
        scorer(model, X, target)
    else:
        scorer = make_private_scorer(name, 0.2)
        scorer.score(model, X, target, rng=0, accountant=accountant)
    return [scorer.dp_event]


def _scorer_function(function, accountant):
    import dpsolve.private_selection as selection
    X, y, labels = _data()
    classifier, regressor = _fitted()
    model, target = (regressor, labels) if function in ("mean_squared_error_scorer",
                                                        "r2_scorer") else (classifier, y)
    scorer = getattr(selection, function)(0.2, accountant=accountant, random_state=0)
    scorer(model, X, target)
    return [scorer.dp_event]


def _search(accountant, refit=False, estimate=False):
    from dpsolve.private_selection import PrivateGridSearch
    X, y, _ = _data()
    bound = dpsolve.privacy.estimate_row_norm(X, 0.2, upper=3.0, rng=1) if estimate else 1.0
    search = PrivateGridSearch(_classifier(row_norm=bound), {"reg": [0.05, 0.5]}, refit=refit,
                               accountant=accountant, random_state=0, delta=1e-6)
    return [search.fit(X, y).dp_event_]


def _private_ranges(accountant):
    from dpsolve.preprocessing import PrivateRangeScaler
    X, _, _ = _data()
    scaler = PrivateRangeScaler((-5.0, 5.0), epsilon=0.3, random_state=0, accountant=accountant)
    return [scaler.fit(X).dp_event_]


def _private_moments(accountant):
    from dpsolve.preprocessing import PrivateStandardScaler
    X, _, _ = _data()
    scaler = PrivateStandardScaler((-5.0, 5.0), epsilon=0.3, random_state=0,
                                   accountant=accountant)
    return [scaler.fit(X).dp_event_]


def _private_frequencies(accountant):
    from dpsolve.preprocessing import PrivateCategoryEncoder
    table = np.array([["a"], ["b"], ["a"], [None]] * 10, dtype=object)
    encoder = PrivateCategoryEncoder(["a", "b"], epsilon=0.3, random_state=0,
                                     accountant=accountant)
    return [encoder.fit(table).dp_event_]


_SOLVERS = [spec.name for spec in registry() if spec.guarantee == "dp"]
#: every scorer dpsolve ships, and where each defines its constructor (a census path)
_SCORERS = [scorer.name for scorer in dpsolve.private_selection.SCORERS]
_SCORER_INITS = {f"{cls.__init__.__module__}.{cls.__init__.__qualname__}"
                 for cls in dpsolve.private_selection.SCORERS}
_SCORER_FUNCTIONS = ["accuracy_scorer", "balanced_accuracy_scorer", "log_loss_scorer",
                     "mean_squared_error_scorer", "r2_scorer"]

#: recipe name -> (the census paths it covers, the recipe)
RECIPES = {
    # every solver runs plan_fit (which checks the budget) and run_plan (which charges it)
    **{f"solver-{name}": ({f"dpsolve.solvers.{name}.{name}", "dpsolve.solvers._lifecycle.plan_fit",
                           "dpsolve.solvers._lifecycle.run_plan"},
                          functools.partial(_solver, name)) for name in _SOLVERS},
    "logistic": ({"dpsolve.estimators.classifiers.DPLogisticRegression.__init__"},
                 functools.partial(_estimator, "logistic")),
    "logistic-estimate": (set(), functools.partial(_estimator, "logistic", estimate=True)),
    "svc": ({"dpsolve.estimators.classifiers.DPLinearSVC.__init__"}, functools.partial(_estimator, "svc")),
    "regression": ({"dpsolve.estimators.regression.DPLinearRegression.__init__"},
                   functools.partial(_estimator, "regression")),
    "regression-estimate": (set(), functools.partial(_estimator, "regression", estimate=True)),
    **{which: ({f"dpsolve.privacy.quantile.{which}"}, functools.partial(_quantile, which))
       for which in ("private_quantile", "estimate_row_norm", "estimate_label_bound")},
    "select": ({"dpsolve.private_selection.selection.select"}, _select),
    "noisy_accuracy": ({"dpsolve.private_selection.scorers.noisy_accuracy"}, _noisy_accuracy),
    **{f"scorer-{name}": (_SCORER_INITS, functools.partial(_scorer, name))
       for name in _SCORERS},
    **{f"score-{name}": ({"dpsolve.private_selection.scorers.PrivateScorer.score"},
                         functools.partial(_scorer, name, standalone=False))
       for name in _SCORERS},
    **{function: ({f"dpsolve.private_selection.scorers.{function}"},
                  functools.partial(_scorer_function, function))
       for function in _SCORER_FUNCTIONS},
    "search": ({"dpsolve.private_selection.grid_search.PrivateGridSearch.__init__"}, _search),
    "search-refit": (set(), functools.partial(_search, refit=True)),
    "search-estimate": (set(), functools.partial(_search, estimate=True)),
    "private-ranges": ({"dpsolve.preprocessing.private_range_scaler.PrivateRangeScaler.__init__"},
                       _private_ranges),
    "private-moments": (
        {"dpsolve.preprocessing.private_standard_scaler.PrivateStandardScaler.__init__"},
        _private_moments),
    "private-frequencies": (
        {"dpsolve.preprocessing.private_category_encoder.PrivateCategoryEncoder.__init__"},
        _private_frequencies),
}
# solver-noisy_sgd and solver-dp_sgd: their calibrations, up to a second and a half, paid by the
# first test that runs them: the slow tier's in every test over the recipes
RECIPE_PARAMS = [pytest.param(name, marks=pytest.mark.slow)
                 if name in ("solver-noisy_sgd", "solver-dp_sgd") else name for name in RECIPES]


def _leaves(events):
    """The events a list of releases is composed of, as sorted reprs (a multiset)."""
    out = []
    for event in events:
        if isinstance(event, dp_accounting.ComposedDpEvent):
            out.extend(_leaves(event.events))
        else:
            out.append(repr(event))
    return sorted(out)


def _ledger_leaves(budget):
    return _leaves([event for charge in budget.ledger for event in charge.events])


def _quietly(recipe, accountant):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return recipe(accountant)


def test_every_accountant_path_has_a_recipe():
    covered = set().union(*(paths for paths, _ in RECIPES.values()))
    found = accountant_paths()
    assert found - NOT_RELEASES == covered, (
        "a public function or method takes accountant= without a census recipe (or a recipe "
        "names a path that no longer exists)")
    assert NOT_RELEASES <= found


@pytest.mark.parametrize("name", RECIPE_PARAMS)
def test_the_ledger_is_what_was_released(name):
    budget = BudgetAccountant(1e6, 1e-6)
    released = _quietly(RECIPES[name][1], budget)
    assert _ledger_leaves(budget) == _leaves(released)
    composed = dp_accounting.ComposedDpEvent(list(released))
    assert budget.spent()[0] == pytest.approx(epsilon_of(composed, 1e-6, budget.accountant
                                                         if budget.accountant != "auto"
                                                         else None), rel=1e-9)


@pytest.mark.parametrize("name", RECIPE_PARAMS)
def test_in_a_parallel_group_estimates_are_sequential(name):
    budget = BudgetAccountant(1e6, 1e-6)
    with budget.parallel() as group:
        released = _quietly(RECIPES[name][1], group)
    assert _ledger_leaves(budget) == _leaves(released)
    # a release alone in its group costs what it costs alone
    assert budget.spent()[0] == pytest.approx(
        epsilon_of(dp_accounting.ComposedDpEvent(list(released)), 1e-6), rel=1e-9)


@pytest.mark.parametrize("name", RECIPE_PARAMS)
def test_an_add_remove_budget_refuses_replace_one_releases(name):
    budget = BudgetAccountant(1e6, 0.5, neighbours="add_remove")
    with pytest.raises(ValueError, match="do not compose"):
        _quietly(RECIPES[name][1], budget)
    assert budget.ledger == ()


@pytest.mark.parametrize("name", RECIPE_PARAMS)
def test_a_refusal_leaves_the_ledger_untouched(name):
    budget = BudgetAccountant(1e-3, 1e-9)
    budget.spend(PureDpEvent(5e-4), neighbours="replace_one", label="before")
    before = budget.ledger
    # refused as beyond the budget, or as a release the budget's accountant cannot compose
    # with the ledger (noisy_sgd's sampled Gaussians after a pure release under RDP)
    with pytest.raises(ValueError, match="budget"):
        _quietly(RECIPES[name][1], budget)
    assert budget.ledger == before


def _run_in_this_process(pickled, names):
    """In a child process: each recipe charged to the unpickled budget (or group); what it
    raised, and the copy's ledger length."""
    accountant = pickle.loads(pickled)
    outcomes = {}
    for name in names:
        try:
            _quietly(RECIPES[name][1], accountant)
            outcomes[name] = "admitted"
        except Exception as exc:        # the outcome is the assertion
            outcomes[name] = f"{type(exc).__name__}: {exc}"
    budget = getattr(accountant, "budget", accountant)
    return outcomes, len(budget.ledger), budget.spent()


@pytest.mark.slow
def test_a_budget_in_another_process_refuses_every_release():
    budget = BudgetAccountant(1e6, 1e-6)
    budget.spend(PureDpEvent(0.25), neighbours="replace_one", label="before")
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        outcomes, copied, spent = pool.submit(_run_in_this_process, pickle.dumps(budget),
                                              list(RECIPES)).result(timeout=600)
        with budget.parallel() as group:
            in_group, _, _ = pool.submit(_run_in_this_process, pickle.dumps(group),
                                         ["logistic-estimate"]).result(timeout=600)
    for name, outcome in {**outcomes, **{"group": in_group["logistic-estimate"]}}.items():
        assert outcome.startswith("ValueError") and "another process" in outcome, name
    # the copy's ledger is readable (what the budget held when it was pickled), and the
    # budget itself holds only what it held before
    assert copied == 1 and spent == budget.spent()
    assert [charge.labels for charge in budget.ledger] == [("before",)]


def test_an_estimate_used_in_a_group_is_charged_once_and_sequentially():
    # a record of part 0 moves the estimate (released on every record) and part 0's fit
    X, y, _ = _data()
    budget = BudgetAccountant(1.0)
    estimate = dpsolve.privacy.estimate_row_norm(X, 0.5, upper=3.0, rng=1)
    with budget.parallel() as group:
        for part in (slice(0, 100), slice(100, 200)):
            _quietly(lambda g: _classifier(epsilon=0.5, row_norm=estimate,
                                           accountant=g).fit(X[part], y[part]), group)
    assert [charge.labels for charge in budget.ledger] == [
        ("private bound estimate",), ("objective_perturbation",) * 2]
    assert budget.spent()[0] == pytest.approx(1.0)
    with pytest.raises(BudgetExceededError):
        budget.spend(PureDpEvent(1e-6), neighbours="replace_one")


def test_a_fitted_model_pickled_in_this_process_keeps_its_budget():
    budget = BudgetAccountant(10.0)
    X, y, _ = _data()
    model = _quietly(lambda b: _classifier(accountant=b).fit(X, y), budget)
    back = pickle.loads(pickle.dumps(model))
    assert back.accountant is budget
    _quietly(lambda b: back.fit(X, y), None)
    assert len(budget.ledger) == 2


@pytest.mark.slow
def test_cross_validation_in_worker_processes_is_refused():
    from sklearn.model_selection import KFold, cross_val_score

    from dpsolve.private_selection import AccuracyScorer
    X, y, _ = _data()
    budget = BudgetAccountant(10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="another process"):
            cross_val_score(_classifier(accountant=budget), X, y, n_jobs=2,
                            cv=KFold(5, shuffle=True, random_state=0),
                            scoring=AccuracyScorer(0.1, accountant=budget, random_state=0),
                            error_score="raise")
        with pytest.raises(ValueError, match="another process"):
            # the default error_score: every fit failed, and scikit-learn says why
            cross_val_score(_classifier(accountant=budget), X, y, n_jobs=2,
                            cv=KFold(5, shuffle=True, random_state=0))
    assert budget.ledger == ()
