"""The sweeps' population source, ``source = "sphere"``: rows uniform on the unit sphere with a
known link (:class:`dpsolve.population.SphereSource`), so that each run is measured by its excess
*population* risk ``L(theta) - min_{||theta|| <= R} L`` (Bassily-Feldman-Talwar-Thakurta 2019),
computed by quadrature to a stated accuracy, next to the solver's population bound
(:attr:`~dpsolve.solvers.Hooks.population_bound`) and the DP-SCO lower bound
(:func:`dpsolve.bounds.dp_sco_lower_bound`).

The data depend on the data table alone (as every source's do): ``link = "logistic"`` (the
default) gives labels in {-1, +1} with ``P(y = 1 | x) = sigmoid(<theta0, x>)``, for the
classification losses; ``link = "linear"`` gives ``y = <theta0, x> + xi`` with ``xi`` uniform on
``[-noise, noise]``, for the squared loss. ``theta0 = theta0_norm e_1``. ``theta0_norm = "hard"``
(logistic link) is the hard instance of the DP-SCO lower bound's construction
(Bassily-Feldman-Talwar-Thakurta 2019), the norm chosen per run from its n, p and its solver's
target (epsilon, delta) so that ``||E[y x]|| = hard_scale B max(1/sqrt(n), sqrt(p ln(1/delta)) /
(n epsilon))`` (:func:`hard_norm`); the data seed stays the data table's. The rows' bound B = 1 and
the squared loss's label bound ``||theta0|| + noise`` are the source's, public, and set on every
problem built on it.
"""
import itertools
import math

from .. import bounds
from ..population import SphereSource, excess_population_risk, signal_for_correlation

#: The keys of a sphere source.
SPHERE_KEYS = {"source", "n", "p", "link", "theta0_norm", "noise", "hard_scale"}
#: The links and the losses each one's labels are for.
LINKS = {"logistic": ("logistic", "hinge", "huber_hinge"), "linear": ("squared",)}
#: The Problem options the source sets itself (the rows' bound, the label bound), or that
#: its labels and measure do not take (a label set, an intercept).
SOURCE_SET = ("row_norm", "label_bound", "classes", "n_classes", "fit_intercept",
              "intercept_scale")
#: The rows' norm B of the sweeps' sphere source (the public row bound of every problem on it).
ROW_NORM = 1.0
#: The hard instance's smallest ratio ||theta0|| / R: over a ball much smaller than ||theta0||
#: the population risk is nearly linear, its minimum on the boundary.
HARD_RATIO = 4.0


def is_hard(data):
    """Whether a data table (or a run's data spec) is the sphere source's hard instance."""
    return is_sphere(data) and data.get("theta0_norm") == "hard"


def target(spec):
    """A run's ``(epsilon, delta)``, its solver's target (the hard instance depends on it);
    ``(None, None)`` for a spec without a solver (its data and problem alone)."""
    solver = spec.get("solver") or {}
    return solver.get("epsilon"), solver.get("delta")


def instance_key(spec):
    """What besides its data and problem tables decides a run's data: ``{"target": [epsilon,
    delta]}`` on the hard instance, else nothing (so the other runs' keys are unchanged)."""
    return {"target": list(target(spec))} if is_hard(spec["data"]) else {}


def hard_norm(data, target):
    """``||theta0||`` of the hard instance for a data spec (its n, p, ``hard_scale`` c) and a
    target ``(epsilon, delta)``: the s with ``||E[y x]|| = c B max(1/sqrt(n),
    sqrt(p ln(1/delta)) / (n epsilon))`` (:func:`dpsolve.population.signal_for_correlation`).
    Raises ValueError where no logistic link reaches that correlation."""
    epsilon, delta = target
    n, p = data["n"], data["p"]
    rate = max(1.0 / math.sqrt(n), math.sqrt(p * math.log(1.0 / delta)) / (n * epsilon))
    return signal_for_correlation(p, data.get("hard_scale", 1.0) * ROW_NORM * rate, ROW_NORM)


def is_sphere(data):
    """Whether a data table (or a run's data spec) is a sphere source."""
    return data.get("source") == "sphere"


def check_cell(cell, where, refuse):
    """The sphere-specific checks of one data cell (after the shared checks of ``n``, ``p``
    and ``noise``): ``p >= 3``, ``theta0_norm >= 0``, a known ``link``, ``noise`` only with
    the linear link. ``refuse(message)`` builds the error."""
    p = cell.get("p")
    if isinstance(p, int) and p < 3:
        raise refuse(f"{where}.p = {p}: p must be an integer >= 3 for source 'sphere' (the "
                     "population risk is computed on its reduction to two coordinates)")
    link = cell.get("link", "logistic")
    if link not in LINKS:
        raise refuse(f"{where}.link = {link!r}: link must be one of {sorted(LINKS)}")
    if "noise" in cell and link != "linear":
        raise refuse(f"{where}.noise: only with link = \"linear\" (the squared loss's targets); "
                     "the logistic link's labels have no noise parameter")
    if cell.get("theta0_norm") == "hard":
        if link != "logistic":
            raise refuse(f'{where}.theta0_norm = "hard": only with link = "logistic" (the '
                         "hard instance is the lower bound's logistic construction)")
    elif "hard_scale" in cell:
        raise refuse(f'{where}.hard_scale: only with theta0_norm = "hard"')
    if "hard_scale" in cell:
        value = cell["hard_scale"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                math.isfinite(value) and value > 0):
            raise refuse(f"{where}.hard_scale = {value!r}: hard_scale must be a real number "
                         "> 0 (the constant c of the hard instance's ||E[y x]||)")
    if "theta0_norm" in cell and cell["theta0_norm"] != "hard":
        value = cell["theta0_norm"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                math.isfinite(value) and value >= 0):
            raise refuse(f"{where}.theta0_norm = {value!r}: theta0_norm must be a real number "
                         '>= 0 (the norm of the link\'s parameter) or "hard"')


def check_runs(tables, cells, solvers, known, refuse):
    """The sphere tables against the problem and solver tables, before any run: ``tables``
    ``[(where, data table)]`` of the sphere sources, ``cells`` ``[(where, cell)]`` every
    solver's problem cells (the ``[problem]`` table's, or merged with a solver's own),
    ``solvers`` the solver tables, ``known`` the specs by name; ``refuse(message)`` builds the
    error. Each problem's loss must be one its link's labels are for, with a radius and the
    l2 constraint (the population minimum is over the l2 ball) and no option the source sets; a solver whose spec
    measures its own fits (:attr:`~dpsolve.solvers.Hooks.measure`) is refused."""
    if not tables:
        return
    where, first = tables[0]
    for at, cell in cells:
        for key in SOURCE_SET:
            if key in cell:
                raise refuse(f"{at}.{key}: not with {where}.source = \"sphere\", whose rows "
                             f"have norm {ROW_NORM:g} (the public row bound) and whose labels "
                             "come from its link; leave it out")
        if cell.get("constraint", "l2") != "l2":
            raise refuse(f"{at}.constraint = {cell['constraint']!r}: not with {where}.source "
                         "= \"sphere\", whose population minimum is over the l2 ball")
        if cell.get("radius") == "none":
            raise refuse(f'{at}.radius = "none": not with {where}.source = "sphere": the '
                         "excess population risk is against the minimum over the ball; give "
                         "a radius")
        loss = cell.get("loss", "logistic")
        for table_where, table in tables:
            links = table.get("link", "logistic")
            for link in links if isinstance(links, list) else [links]:
                if link in LINKS and loss not in LINKS[link]:
                    raise refuse(f"{at}.loss = {loss!r}: not with {table_where}.link = "
                                 f"{link!r}, whose labels are for {', '.join(LINKS[link])}")
    for i, table in enumerate(solvers):
        spec = known.get(table["name"])
        if spec is not None and spec.hooks.measure is not None:
            raise refuse(f"solver[{i}].name = {table['name']!r}: measures its fits on its own "
                         f"objective, not with {where}.source = \"sphere\" (measured by the "
                         "excess population risk)")
    hard = [t for t in tables if "hard" in _values(t[1].get("theta0_norm"))]
    _check_hard(hard, cells, solvers, refuse)


def _values(value):
    return value if isinstance(value, list) else [value]


def _check_hard(tables, cells, solvers, refuse):
    """The hard instance on its whole grid: every solver states its delta (> 0), every n, p,
    epsilon, delta has an instance (:func:`hard_norm`), with ``||theta0|| >= HARD_RATIO R``
    for every radius R."""
    if not tables:
        return
    radii = [cell["radius"] for _, cell in cells if isinstance(cell.get("radius"), (int, float))]
    for i, table in enumerate(solvers):
        delta = table.get("delta")
        if delta is None or 0.0 in _values(delta):
            raise refuse(f"solver[{i}].delta: give delta > 0 with theta0_norm = \"hard\" (the "
                         "hard instance depends on the run's epsilon and delta)")
    for where, table in tables:
        for n, p, c, solver in itertools.product(_values(table["n"]), _values(table["p"]),
                                                 _values(table.get("hard_scale", 1.0)),
                                                 solvers):
            for target in itertools.product(_values(solver["epsilon"]),
                                            _values(solver["delta"])):
                data = {"n": n, "p": p, "hard_scale": c}
                try:
                    norm = hard_norm(data, target)
                except ValueError as exc:
                    raise refuse(f'{where}.theta0_norm = "hard" at n = {n}, p = {p}, epsilon '
                                 f"= {target[0]:g}, delta = {target[1]:g}: {exc}") from None
                if radii and norm < HARD_RATIO * max(radii):
                    raise refuse(
                        f'{where}.theta0_norm = "hard" at n = {n}, p = {p}, epsilon = '
                        f"{target[0]:g}, delta = {target[1]:g}: ||theta0|| = {norm:.3g} is "
                        f"below {HARD_RATIO:g} R = {HARD_RATIO * max(radii):g}; the excess "
                        "risk follows the rate only on a ball much smaller than ||theta0||: "
                        "take a smaller radius")


def source(data, loss=None, target=None):
    """The :class:`~dpsolve.population.SphereSource` of a data spec: with the link's loss
    (``loss=None``, to draw the data) or the problem's loss object (to measure a fit);
    ``target`` the run's ``(epsilon, delta)``, which the hard instance needs."""
    p = data["p"]
    theta0 = [0.0] * p
    theta0[0] = hard_norm(data, target) if is_hard(data) else float(data.get("theta0_norm", 1.0))
    linear = data.get("link", "logistic") == "linear"
    if loss is None:
        loss = "squared" if linear else "logistic"
    noise = data.get("noise", 0.5) if linear else None
    return SphereSource(p, theta0, loss, row_norm=ROW_NORM, noise=noise)


def load(data, rng, target=None):
    """``(X, y)``: ``n`` records of the data spec's source (at the run's target ``(epsilon,
    delta)`` for the hard instance), drawn from ``rng``."""
    return source(data, target=target).sample(data["n"], rng)


def problem_options(data, target=None):
    """The Problem options the source sets: its row bound, and the squared loss's label
    bound ``||theta0|| + noise``."""
    return {"row_norm": ROW_NORM, "label_bound": source(data, target=target).label_bound}


def measure(data, problem, solver, parties, plan, theta, target=None):
    """The population part of a run's result: the excess population risk of ``theta`` with
    its error, the solver's population bound at the plan (None where it states none) and the
    DP-SCO lower bound (None for a solver whose guarantee is not DP)."""
    estimate = excess_population_risk(theta, source(data, problem.loss_object, target),
                                      problem.radius)
    bound, name = None, None
    if solver.hooks.population_bound is not None:
        found = solver.hooks.population_bound(problem, parties, plan)
        if found is not None:
            # the hook gives a float (or a Bound with the theorem's name)
            bound = float(getattr(found, "value", found))
            name = getattr(found, "name", None) or f"{solver.name}: excess population risk bound"
    lower = None
    if solver.guarantee == "dp":
        lower = bounds.dp_sco_lower_bound(problem, plan.target.epsilon)
    return {"measure": "population", "excess_risk": float(estimate.value),
            "excess_risk_error": float(estimate.error), "bound": bound, "bound_name": name,
            "lower_bound": lower}
