"""dpsolve.BudgetAccountant: composition of what it admits, refusal before the data are read,
parallel composition, and the plumbing through every solver's ``accountant=``."""
import copy
import dataclasses
import math
import pickle

import dp_accounting
import numpy as np
import pytest

import dpsolve
from dpsolve.datasets import make_synthetic
from dpsolve.privacy import (BudgetAccountant, BudgetExceededError, PureDpEvent, epsilon_of,
                             gaussian_event)
from dpsolve.solvers import registry


@pytest.fixture(scope="module")
def problem():
    X, y = make_synthetic(400, 4, rng=0)
    return dpsolve.Problem(X, y, radius=None, reg=1e-2)


def test_pure_budget_adds_epsilons_and_refuses_the_excess():
    budget = BudgetAccountant(1.0)
    budget.spend(PureDpEvent(0.25), neighbours="replace_one")
    budget.spend(PureDpEvent(0.5), neighbours="replace_one")
    assert budget.spent() == (0.75, 0.0)
    assert budget.remaining() == pytest.approx(0.25)
    with pytest.raises(BudgetExceededError, match=r"spent epsilon=0\.75.*needs "
                                                  r"epsilon=0\.3 alone.*did not run"):
        budget.spend(PureDpEvent(0.3), neighbours="replace_one")
    assert len(budget.ledger) == 2            # nothing charged
    budget.spend(PureDpEvent(0.25), neighbours="replace_one")      # exactly the rest is admitted
    with pytest.raises(BudgetExceededError):
        budget.check(PureDpEvent(1e-6), neighbours="replace_one")


def test_pure_budget_refuses_gaussians():
    with pytest.raises(BudgetExceededError, match="epsilon=inf"):
        BudgetAccountant(10.0).spend(gaussian_event(1.0, 1.0), neighbours="replace_one")


def test_gaussian_ledger_is_composed_not_summed():
    # ten Gaussians of multiplier 10 compose to one of multiplier 10/sqrt(10): far below the
    # sum of their epsilons
    budget = BudgetAccountant(2.0, 1e-6, accountant="pld")
    event = gaussian_event(10.0, 1.0)
    for _ in range(10):
        budget.spend(event, neighbours="replace_one")
    alone = epsilon_of(event, 1e-6, "pld")
    composed = epsilon_of(dp_accounting.ComposedDpEvent([event] * 10), 1e-6, "pld")
    assert budget.spent()[0] == pytest.approx(composed)
    assert composed < 10 * alone / 2
    rdp = BudgetAccountant(2.0, 1e-6, accountant="rdp")
    for _ in range(10):
        rdp.spend(event, neighbours="replace_one")
    assert rdp.spent()[0] == pytest.approx(epsilon_of(
        dp_accounting.ComposedDpEvent([event] * 10), 1e-6, "rdp"))


def _spend_parts(group, **epsilons):
    """Spend a pure-DP release of each epsilon in ``group``, labelled "part <name>"."""
    for name, epsilon in epsilons.items():
        group.spend(PureDpEvent(epsilon), label=f"part {name}", neighbours="replace_one")


def test_parallel_group_costs_its_worst_part():
    budget = BudgetAccountant(1.0)
    with budget.parallel() as group:
        _spend_parts(group, a=0.5, b=0.75, c=0.25)
        assert budget.spent()[0] == pytest.approx(0.75)     # counted before the block ends
        assert budget.ledger == ()
    assert budget.spent()[0] == pytest.approx(0.75)
    assert budget.ledger[0].labels == ("part a", "part b", "part c")
    assert budget.ledger[0].epsilon == pytest.approx(0.75)
    # two groups over possibly different partitions: the worst placement of the record
    with budget.parallel() as group:
        group.spend(PureDpEvent(0.1), neighbours="replace_one")
        group.spend(PureDpEvent(0.2), neighbours="replace_one")
    assert budget.spent()[0] == pytest.approx(0.95)
    assert "parallel group of 3: part a, part b, part c" in budget.report()
    with budget.parallel() as group:
        with pytest.raises(BudgetExceededError):
            group.spend(PureDpEvent(0.06), neighbours="replace_one")
        assert group.check(PureDpEvent(0.05), neighbours="replace_one") == pytest.approx(1.0)
    assert len(budget.ledger) == 2            # an empty group charges nothing


def test_releases_charged_to_the_budget_during_a_block_are_sequential():
    budget = BudgetAccountant(2.0)
    with budget.parallel() as group:
        group.spend(PureDpEvent(0.5), label="part a", neighbours="replace_one")
        budget.spend(PureDpEvent(0.25), label="on every record", neighbours="replace_one")
        group.spend(PureDpEvent(0.75), label="part b", neighbours="replace_one")
    assert budget.spent()[0] == pytest.approx(0.25 + 0.75)
    assert [c.labels for c in budget.ledger] == [("on every record",), ("part a", "part b")]


def test_a_release_from_another_thread_during_a_block_is_summed_not_maxed():
    import threading
    budget = BudgetAccountant(2.0)
    opened, charged = threading.Event(), threading.Event()
    errors = []

    def other_thread():
        try:
            assert opened.wait(10.0)
            budget.spend(PureDpEvent(0.5), label="other thread", neighbours="replace_one")
        except Exception as exc:       # reported below, in the main thread
            errors.append(exc)
        finally:
            charged.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with budget.parallel() as group:
        group.spend(PureDpEvent(0.75), label="part a", neighbours="replace_one")
        opened.set()
        assert charged.wait(10.0)
        group.spend(PureDpEvent(0.25), label="part b", neighbours="replace_one")
        # the other thread's release is sequential: 0.5 + max(0.75, 0.25), not max of all three
        assert budget.spent()[0] == pytest.approx(1.25)
    thread.join(10.0)
    assert errors == []
    assert budget.spent()[0] == pytest.approx(1.25)
    assert sorted(c.labels for c in budget.ledger) == [("other thread",),
                                                       ("part a", "part b")]


def test_parallel_groups_do_not_nest_and_close_with_their_block():
    budget = BudgetAccountant(2.0)
    with budget.parallel() as group:
        group.spend(PureDpEvent(0.5), neighbours="replace_one")
        with pytest.raises(ValueError, match=r"parallel"):
            group.parallel()
        # another block inside is a group of its own: the worst part of each, added
        with budget.parallel() as other:
            other.spend(PureDpEvent(0.25), neighbours="replace_one")
            other.spend(PureDpEvent(0.125), neighbours="replace_one")
        assert budget.spent()[0] == pytest.approx(0.75)
    assert budget.spent()[0] == pytest.approx(0.75)
    for call in (group.spend, group.check):
        with pytest.raises(ValueError, match="parallel group .* is closed"):
            call(PureDpEvent(0.1), neighbours="replace_one")
    assert len(budget.ledger) == 2


def test_a_group_is_an_accountant_for_every_release(problem):
    from dpsolve.privacy.budget import ParallelGroup, check_accountant
    budget = BudgetAccountant(3.0)
    halves = [dpsolve.Problem(problem.X[k::2], problem.y[k::2], radius=None, reg=1e-2)
              for k in range(2)]
    with budget.parallel() as group:
        assert isinstance(group, ParallelGroup) and check_accountant(group) is group
        assert copy.deepcopy(group) is group and copy.copy(group) is group
        fits = [dpsolve.output_perturbation(half, 1.0, accountant=group, rng=0)
                for half in halves]
        dpsolve.privacy.private_quantile(np.arange(5.0), 0.5, 0.5, upper=5.0, accountant=group)
    assert budget.ledger[0].labels == ("output_perturbation", "output_perturbation",
                                       "private_quantile")
    assert budget.ledger[0].events[:2] == tuple(fit.dp_event for fit in fits)
    assert budget.spent()[0] == pytest.approx(1.0)


def test_neighbour_relations_must_match():
    budget = BudgetAccountant(1.0, neighbours="add_remove")
    with pytest.raises(ValueError, match="do not compose"):
        budget.spend(PureDpEvent(0.1), neighbours="replace_one")
    with pytest.raises(ValueError, match="do not compose"):
        budget.spend(PureDpEvent(0.1), neighbours="replace-one record")
    budget.spend(PureDpEvent(0.1), neighbours="add-remove record")   # a solver's wording
    assert len(budget.ledger) == 1


@pytest.mark.parametrize("neighbours, error", [
    ("", ValueError), ("   ", ValueError), ("swap", ValueError), (1, TypeError),
    (["replace_one"], TypeError)])
def test_a_release_names_a_neighbour_relation(neighbours, error):
    budget = BudgetAccountant(1.0)
    for charge in (budget.check, budget.spend):
        with pytest.raises(error, match="neighbours"):
            charge(PureDpEvent(0.1), neighbours=neighbours)
    with budget.parallel() as group:
        with pytest.raises(error, match="neighbours"):
            group.spend(PureDpEvent(0.1), neighbours=neighbours)
    assert budget.ledger == ()
    with pytest.raises((ValueError, TypeError), match="neighbours"):
        BudgetAccountant(1.0, neighbours=neighbours)


@pytest.mark.parametrize("kwargs, error", [
    ({"epsilon": 0.0}, ValueError), ({"epsilon": 1.0, "delta": 1.0}, ValueError),
    ({"epsilon": 1.0, "accountant": "zcdp"}, ValueError),
    ({"epsilon": "1"}, TypeError)])
def test_bad_budgets(kwargs, error):
    with pytest.raises(error):
        BudgetAccountant(**kwargs)


def test_clones_copies_and_pickles_in_this_process_share_the_budget():
    budget = BudgetAccountant(1.0)
    assert copy.deepcopy(budget) is budget and copy.copy(budget) is budget
    assert pickle.loads(pickle.dumps(budget)) is budget
    with budget.parallel() as group:
        assert pickle.loads(pickle.dumps(group)) is group


# noisy_sgd and dp_sgd: their calibrations, up to two seconds, in the slow tier
@pytest.mark.parametrize("spec", [
    pytest.param(s, marks=pytest.mark.slow) if s.name in ("noisy_sgd", "dp_sgd") else s
    for s in registry() if s.guarantee == "dp"], ids=lambda s: s.name)
def test_every_dp_solver_charges_its_event(spec):
    from test_common_checks import example_problem, run
    budget = BudgetAccountant(1e6, 0.5)
    fit = run(spec, example_problem(spec), rng=0, accountant=budget)
    assert len(budget.ledger) == 1
    assert budget.ledger[0].events == (fit.dp_event,)
    assert budget.ledger[0].labels == (spec.name,)


def test_refused_fit_never_runs(problem, monkeypatch):
    import dpsolve.solvers.output_perturbation as module

    def boom(*args, **kwargs):
        raise AssertionError("the solver ran")
    monkeypatch.setattr(module, "SPEC", dataclasses.replace(module.SPEC, run=boom))
    budget = BudgetAccountant(0.5)
    with pytest.raises(BudgetExceededError, match="output_perturbation"):
        dpsolve.output_perturbation(problem, 1.0, accountant=budget, rng=0)
    assert budget.ledger == ()


def test_joint_dp_is_not_accepted(problem):
    from dpsolve.solvers import _lifecycle, get
    with pytest.raises(ValueError, match="joint_dp"):
        _lifecycle.plan_fit(get("joint_sgd"), problem, None, 1.0, 1e-5,
                            accountant=BudgetAccountant(10.0, 1e-3))


def test_accountant_type_checked(problem):
    with pytest.raises(TypeError, match="BudgetAccountant"):
        dpsolve.output_perturbation(problem, 1.0, accountant="budget")


def test_quantile_charges_before_reading():
    budget = BudgetAccountant(0.15)
    dpsolve.privacy.private_quantile(np.arange(5.0), 0.5, 0.1, upper=5.0, accountant=budget)
    with pytest.raises(BudgetExceededError, match="private_quantile"):
        dpsolve.privacy.private_quantile(np.arange(5.0), 0.5, 0.1, upper=5.0,
                                         accountant=budget)
    assert budget.spent()[0] == pytest.approx(0.1)


@pytest.mark.slow
def test_large_parallel_products_fall_back_to_sequential():
    from dpsolve.privacy import budget as module
    budget = BudgetAccountant(100.0)
    for _ in range(3):
        with budget.parallel() as group:
            for _ in range(17):
                group.spend(PureDpEvent(0.01), neighbours="replace_one")
    # 17**3 > MAX_PARALLEL_COMBINATIONS placements: every event composed (a valid bound)
    assert 17 ** 3 > module.MAX_PARALLEL_COMBINATIONS
    assert budget.spent()[0] == pytest.approx(0.51)
    assert math.isfinite(budget.remaining())
