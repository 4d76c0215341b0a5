"""The population risk of :class:`dpsolve.population.SphereSource` against fresh samples, its
minimiser against the well-specified links' known one, and held-out estimates."""
import contextlib
import io
import math
import pathlib
import re
import warnings

import numpy as np
import pytest

import dpsolve
from dpsolve.population import (RiskEstimate, SphereSource, excess_population_risk,
                                held_out_risk)

B = 2.0
LOSSES = ["logistic", "hinge", "huber_hinge", "squared"]


def _theta0(p):
    theta0 = np.zeros(p)
    theta0[:2] = [1.2, -0.9]
    return theta0


def _model(p, norm):
    theta = np.random.default_rng(p).standard_normal(p)
    return theta * (norm / np.linalg.norm(theta))


def _loss_range(source, theta):
    """The loss's values lie in [0, this] for rows of norm B and the source's labels."""
    z = source.row_norm * np.linalg.norm(theta)
    if source.loss.name == "logistic":
        return math.log1p(math.exp(z))
    if source.loss.name == "squared":
        return 0.5 * (z + source.label_bound) ** 2
    return 1.0 + z


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("p", [3, 10, 100])
def test_risk_matches_a_fresh_sample_within_hoeffding(loss, p):
    source = SphereSource(p, _theta0(p), loss, row_norm=B)
    theta = _model(p, 1.3)
    risk = source.risk(theta)
    n = 100_000
    X, y = source.sample(n, rng=p)
    mean = source.loss.values(np.ascontiguousarray(X @ theta), y).mean()
    # Hoeffding at level 1e-6 for the bounded loss, plus the quadrature's own error
    bound = _loss_range(source, theta) * math.sqrt(math.log(2 / 1e-6) / (2 * n)) + risk.error
    assert abs(mean - risk.value) <= bound
    assert risk.error < 1e-8


@pytest.mark.parametrize("loss", ["logistic", "squared"])
@pytest.mark.parametrize("p", [3, 10, 100])
def test_well_specified_minimiser_is_theta0(loss, p):
    source = SphereSource(p, _theta0(p), loss, row_norm=B)
    theta_pop, _ = source.minimum(radius=2.0)
    assert np.linalg.norm(theta_pop - source.theta0) < 1e-6
    excess = excess_population_risk(source.theta0, source, radius=2.0)
    assert 0.0 <= excess.value + excess.error and excess.value <= excess.error < 1e-7


@pytest.mark.parametrize("loss", ["logistic", "hinge", "huber_hinge", "squared"])
def test_minimum_is_certified_against_a_grid_on_the_line(loss):
    source = SphereSource(10, _theta0(10), loss, row_norm=B)
    radius = 1.0                                 # ||theta0|| = 1.5: the ball is active
    theta_pop, minimum = source.minimum(radius)
    assert np.linalg.norm(theta_pop) <= radius * (1 + 1e-12)
    grid = [source.risk(t * source._e1).value for t in np.linspace(-radius, radius, 41)]
    assert minimum.value - minimum.error <= min(grid) + 1e-12
    assert minimum.error < 1e-6
    # and off the line: rotational symmetry puts the minimiser on it
    off = theta_pop + 0.1 * np.eye(10)[5]
    assert source.risk(off * (radius / np.linalg.norm(off))).value >= minimum.value - minimum.error


def test_excess_is_positive_and_agrees_with_risk_minus_minimum():
    source = SphereSource(5, _theta0(5), "hinge", row_norm=B)
    theta = _model(5, 0.8)
    excess = dpsolve.excess_population_risk(theta, source, radius=1.0)
    _, minimum = source.minimum(1.0)
    assert excess.value == pytest.approx(source.risk(theta).value - minimum.value, abs=1e-15)
    assert excess.value > excess.error > 0.0
    assert excess.interval[0] < excess.value < excess.interval[1]


def test_risk_depends_on_theta_through_its_two_coordinates_only():
    source = SphereSource(6, _theta0(6), "logistic", row_norm=B)
    theta = _model(6, 1.0)
    c1 = theta @ source._e1
    c2 = np.linalg.norm(theta - c1 * source._e1)
    rotated = c1 * source._e1 + c2 * np.eye(6)[4]      # e_4 is orthogonal to theta0
    assert source.risk(rotated).value == pytest.approx(source.risk(theta).value, abs=1e-13)


def test_sample_is_reproducible_and_bounded():
    source = SphereSource(4, _theta0(4), "logistic", row_norm=B)
    X, y = source.sample(500, rng=7)
    X2, y2 = source.sample(500, rng=np.random.default_rng(7))
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    assert np.all(np.linalg.norm(X, axis=1) <= B) and set(np.unique(y)) <= {-1.0, 1.0}
    assert not np.array_equal(X, source.sample(500, rng=8)[0])
    squared = SphereSource(4, _theta0(4), "squared", row_norm=B, noise=0.25)
    _, t = squared.sample(500, rng=1)
    assert np.all(np.abs(t) <= squared.label_bound) and squared.label_bound == B * 1.5 + 0.25


def test_problem_is_built_without_clipping():
    source = SphereSource(4, _theta0(4), "squared", row_norm=B)
    problem = source.problem(50, rng=0, radius=1.5)
    assert problem.n == 50 and problem.radius == 1.5


def test_bad_input_names_the_parameter():
    theta0 = _theta0(4)
    for kwargs, name in [({"p": 2, "theta0": theta0[:2]}, "p"),
                         ({"p": 4, "theta0": theta0[:3]}, "theta0"),
                         ({"p": 4, "theta0": theta0, "row_norm": 0.0}, "row_norm"),
                         ({"p": 4, "theta0": theta0, "noise": 0.1}, "noise"),
                         ({"p": 4, "theta0": theta0, "loss": "multinomial"}, "loss")]:
        with pytest.raises(ValueError, match=name):
            SphereSource(**kwargs)
    source = SphereSource(4, theta0)
    with pytest.raises(ValueError, match="theta"):
        source.risk(np.zeros(3))
    with pytest.raises(ValueError, match="radius"):
        excess_population_risk(np.zeros(4), source, radius=-1.0)
    with pytest.raises(TypeError, match="source"):
        excess_population_risk(np.zeros(4), "sphere", radius=1.0)
    with pytest.raises(ValueError, match="n"):
        source.sample(0)


def test_held_out_risk_covers_the_population_risk():
    source = SphereSource(10, _theta0(10), "logistic", row_norm=B)
    theta = _model(10, 1.0)
    truth = source.risk(theta).value
    X, y = source.sample(4000, rng=3)
    t = held_out_risk(theta, X, y, "logistic")
    bound = math.log1p(math.exp(B * 1.0))
    h = held_out_risk(theta, X, y, "logistic", loss_bound=bound)
    assert isinstance(t, RiskEstimate) and t.method == "t" and h.method == "hoeffding"
    assert t.value == h.value and t.error < h.error
    assert abs(t.value - truth) <= h.error
    with pytest.raises(ValueError, match="loss_bound"):
        held_out_risk(theta, X, y, "logistic", loss_bound=0.01)
    with pytest.raises(ValueError, match="X"):
        held_out_risk(theta, X[:, :3], y, "logistic")
    with pytest.raises(ValueError, match="y"):
        held_out_risk(theta, X, 2 * y, "logistic")


@pytest.mark.parametrize("p", [3, 4, 10, 100])
def test_the_rule_integrates_the_spheres_moments(p):
    # with the loss replaced by a polynomial in a = <u, e1> and the margin z = B <u, theta>, the
    # rule must give the sphere's moments: E a^2 = 1/p, E a^4 = 3/(p(p+2)), E a^2 a'^2 =
    # 1/(p(p+2)) for a' = <u, f> with f a unit vector orthogonal to e1
    source = SphereSource(p, _theta0(p), "logistic", row_norm=B)
    orthogonal = np.zeros(p)
    orthogonal[2] = 0.7
    quartic = 3 / (p * (p + 2))
    moments = [(lambda a, z: a ** 2, 1 / p, 1 / p),                  # (integrand, exact at
               (lambda a, z: a ** 4, quartic, quartic),              # theta orthogonal to e1,
               (lambda a, z: a ** 2 * z ** 2,                        # exact at theta0)
                (B * 0.7) ** 2 / (p * (p + 2)), (B * 1.5) ** 2 * quartic)]
    for integrand, at_orthogonal, at_theta0 in moments:
        source._expected_loss = lambda a, z, derivative=False, f=integrand: np.ravel(f(a, z))
        assert source.risk(orthogonal).value == pytest.approx(at_orthogonal, rel=1e-12)
        assert source.risk(source.theta0).value == pytest.approx(at_theta0, rel=1e-12)


def test_the_docs_example_prints_what_the_page_shows():
    page = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "population_risk.md").read_text(
        encoding="utf-8")
    code, printed = re.search(r"## Example\n\n```python\n(.*?)```\n\nprints\n\n```text\n(.*?)```",
                              page, re.S).groups()
    buffer = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(buffer):
        warnings.simplefilter("error")
        exec(compile(code, "docs/population_risk.md", "exec"), {})
    assert buffer.getvalue() == printed
