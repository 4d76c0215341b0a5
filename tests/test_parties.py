"""Partitions of a Problem's rows among parties: construction, isolation, bad partitions."""
import numpy as np
import pytest

import dpsolve
from dpsolve import Parties
from conftest import synthetic_problem


def _problem(n=30, p=3):
    return synthetic_problem(n, p, radius=1.0)


def test_from_sizes_and_from_indices_agree():
    problem = _problem()
    a = Parties.from_sizes(problem, [10, 15, 5])
    b = Parties.from_indices(problem, [np.arange(10), np.arange(10, 25), [29, 28, 27, 26, 25]])
    assert a.m == b.m == 3 and a.sizes == b.sizes == (10, 15, 5) and a.smallest == 5
    assert np.array_equal(a.owner, b.owner)
    assert np.array_equal(a.owner, np.repeat([0, 1, 2], [10, 15, 5]))
    for pa, pb in zip(a, b):
        assert np.array_equal(pa.rows, pb.rows)
        assert np.array_equal(pa.X, problem.X[pa.rows]) and np.array_equal(pa.y, problem.y[pa.rows])


def test_parties_hold_read_only_copies_of_their_own_rows():
    problem = _problem()
    parties = Parties.from_indices(problem, [np.arange(0, 30, 2), np.arange(1, 30, 2)])
    first = parties[0]
    assert not np.shares_memory(first.X, problem.X)
    assert np.array_equal(first.X, problem.X[::2])
    with pytest.raises(ValueError):
        first.X[0, 0] = 1.0
    with pytest.raises(ValueError):
        first.rows[0] = 1


def test_from_data_concatenates_in_party_order():
    X, y = dpsolve.datasets.make_synthetic(40, 4, rng=1)
    parties = Parties.from_data([(X[:25], y[:25]), (X[25:], y[25:])], "hinge", radius=2.0)
    assert parties.problem.loss == "hinge" and parties.problem.radius == 2.0
    assert parties.sizes == (25, 15)
    np.testing.assert_allclose(parties.problem.X, X, rtol=1e-15)   # rows at the bound may be nudged
    with pytest.raises(ValueError, match="columns"):
        Parties.from_data([(X[:5], y[:5]), (X[5:, :3], y[5:])])
    with pytest.raises(ValueError, match="at least 2"):
        Parties.from_data([(X, y)])
    with pytest.raises(TypeError, match="pair"):
        Parties.from_data([(X, y), X])


@pytest.mark.parametrize("indices, error, match", [
    ([np.arange(30)], ValueError, "at least 2"),
    ([np.arange(15), np.arange(15, 30), np.array([], dtype=int)], ValueError, "no rows"),
    ([np.arange(16), np.arange(15, 30)], ValueError, "overlap"),
    ([np.arange(14), np.arange(15, 30)], ValueError, "belong to no party"),
    ([np.arange(15), np.arange(15, 31)], ValueError, "outside"),
    ([np.arange(15), np.r_[np.arange(15, 30), 15]], ValueError, "more than once"),
    ([np.arange(15) * 1.0, np.arange(15, 30)], TypeError, "integers"),
    (np.arange(30), TypeError, "list"),
])
def test_bad_partitions(indices, error, match):
    with pytest.raises(error, match=match):
        Parties.from_indices(_problem(), indices)


def test_bad_sizes():
    problem = _problem()
    with pytest.raises(ValueError, match="add up"):
        Parties.from_sizes(problem, [10, 10])
    with pytest.raises(ValueError, match="sizes"):
        Parties.from_sizes(problem, [30, 0])
    with pytest.raises(TypeError, match="sizes"):
        Parties.from_sizes(problem, [15.0, 15])
    with pytest.raises(TypeError, match="Problem"):
        Parties(problem.X, [np.arange(15), np.arange(15, 30)])


def test_the_transport_runs_each_party_in_order_with_its_own_state():
    """``map``/``call``/``reduce`` of in-process parties: party order, one argument per party
    with ``each``, a state dict per party kept between calls, the reduction over the results."""
    problem = synthetic_problem(n=30, p=3)
    parties = Parties.from_sizes(problem, [10, 12, 8])

    def count(party, state, extra, scale):
        state["calls"] = state.get("calls", 0) + 1
        return (party.index, party.n * scale + extra, state["calls"])

    assert parties.map(count, 2, each=[0, 1, 2]) == [(0, 20, 1), (1, 25, 1), (2, 18, 1)]
    assert parties.call(1, count, 100, 1) == (1, 112, 2)       # party 1's state, not another's
    assert [r[2] for r in parties.map(count, 1, each=[0, 0, 0])] == [2, 3, 2]
    held = parties.map(lambda party, state: party.n, gather=False)
    assert parties.reduce(lambda results, plus: sum(results) + plus, held, 0.5) == 30.5
    with pytest.raises(ValueError, match="one item per party"):
        parties.map(count, 1, each=[0, 1])
