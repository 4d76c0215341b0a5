"""The theta* cache holds nothing per record (docs/reference_minimizer.md, "Cache").

The hinge loss's certifying dual point has entries ``b_i y_i`` with ``b_i`` in [0, 1]: their
signs are the labels. It is not written to the cache; a cached hinge theta is re-certified with
a dual point rebuilt from theta and the data.
"""
import numpy as np
import pytest

from dpsolve import Problem
from dpsolve.reference import _cache, reference_minimizer
from test_reference import make_problem


def _problem(loss, seed=0, radius=10.0, reg=0.0, dtype=np.float64):
    # noisy labels: many records on and inside the hinge's margin
    return make_problem(loss, radius=radius, reg=reg, seed=seed, dtype=dtype)


def _entry(folder):
    (path,) = folder.glob("reference-*.npz")
    with np.load(path, allow_pickle=False) as f:
        return {name: np.array(f[name]) for name in f.files}


@pytest.mark.parametrize("loss", ["hinge", "logistic", "squared", "huber_hinge",
                                  "multinomial"])
def test_a_cache_entry_holds_no_per_record_array(loss, tmp_path):
    if loss == "multinomial":
        rng = np.random.default_rng(1)
        X = rng.standard_normal((300, 4))
        X /= np.linalg.norm(X, axis=1).max()
        P = Problem(X, rng.integers(0, 3, 300), loss, radius=10.0, n_classes=3)
    else:
        P = _problem(loss)
    fresh = reference_minimizer(P, cache=tmp_path)
    entry = _entry(tmp_path)
    assert not [name for name, value in entry.items() if value.size >= P.n]
    for name, value in entry.items():
        if name == "theta":
            np.testing.assert_array_equal(value, fresh.theta)
        else:               # scalars and strings only
            assert value.shape == (), name
    assert set(entry) == set(_cache.FIELDS)


@pytest.mark.parametrize("radius, reg, dtype", [
    (10.0, 0.0, np.float64),        # the ball inactive: many records on the margin
    (0.5, 0.0, np.float64),         # the ball active
    (None, 0.01, np.float64),       # no constraint
    (10.0, 0.0, np.float32),
], ids=["interior", "on the ball", "unconstrained", "float32"])
def test_a_cached_hinge_theta_is_recertified_without_a_stored_dual_point(radius, reg, dtype,
                                                                         tmp_path):
    """The subgradient dual point at a hinge minimiser does not certify it to tol (it is
    checked here, so that the rebuilt dual point is what makes the hit); the one rebuilt from
    theta does, to the fresh solve's gap."""
    from dpsolve.reference import certificate
    P = _problem("hinge", seed=3, radius=radius, reg=reg, dtype=dtype)
    fresh = reference_minimizer(P, cache=tmp_path)
    assert fresh.cached is False and fresh.gap <= 1e-9
    if radius != 0.5:
        assert certificate(P, fresh.theta) > 1e-9
    again = reference_minimizer(P, cache=tmp_path)
    assert again.cached is True
    assert again.theta.tobytes() == fresh.theta.tobytes()
    assert again.gap <= 1e-9
    assert again.gap == pytest.approx(fresh.gap, rel=0.5)
    assert (again.status, again.solver, again.time) == (fresh.status, fresh.solver, fresh.time)


def test_a_file_with_a_stored_dual_point_is_not_read(tmp_path):
    """A file of the previous format (version 3, with ``alpha``) under the current name is
    ignored and rewritten without it."""
    P = _problem("hinge", seed=4)
    reference_minimizer(P, cache=tmp_path)
    (path,) = tmp_path.glob("reference-*.npz")
    entry = _entry(tmp_path)
    entry["version"] = np.int64(3)
    entry["alpha"] = np.asarray(P.y, dtype=np.float64)
    with open(path, "wb") as fh:
        np.savez(fh, **entry)
    assert reference_minimizer(P, cache=tmp_path).cached is False
    assert "alpha" not in _entry(tmp_path)
