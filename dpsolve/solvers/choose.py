"""``choose_solver``: the registered solver with the smallest utility bound, from public
constants only: its bound on the excess empirical risk, or (``risk="population"``) on the
excess population risk.

A solver's plan (:func:`~dpsolve.solvers.plan_fit`, the one every fit goes through) resolves
its defaults and calibrates its noise from public constants (n, p, L, beta, lambda, R, B, the
loss), and its bound (``SolverSpec.bound``) turns the plan into an excess-risk bound. Neither
reads X or y, so the choice they make is as public as the constants: it can be made, reported
and acted on without spending privacy.
"""
import dataclasses
import math
import warnings
from typing import Optional

from .._validation import check_choice, check_real
from ..problem import Problem
from ._lifecycle import _ARITHMETIC as _BOUND_ERRORS, Bound, check_delta_range, plan_fit

#: What :func:`choose_solver` can compare: each solver's bound on the excess empirical risk
#: (``SolverSpec.bound``) or on the excess population risk (``Hooks.population_bound``).
RISKS = ("empirical", "population")


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One solver considered by :func:`choose_solver`.

    Attributes
    ----------
    name : str
        The solver.
    bound : float or None
        Its excess-risk bound (mean form) at its default settings, on the risk the choice was
        made for (empirical or population); None when it has none here.
    bound_name : str or None
        The analysis the bound comes from.
    comparable : bool
        Whether the bound is a number with explicit constants (an ``O(.)`` bound with constant
        1 gives a scaling, not an upper bound, and is not compared).
    reason : str or None
        Why the solver was not a candidate (its plan refused the problem, or it has no bound
        there), or why it was left out unplanned (a lower bound on its bound, from its defaults
        without noise, is above the chosen bound: ``dp_sgd``, whose PLD calibration costs more
        than a choice should), else None.
    """

    name: str
    bound: Optional[float]
    bound_name: Optional[str]
    comparable: bool
    reason: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Choice:
    """What :func:`choose_solver` chose, and everything it considered.

    Attributes
    ----------
    name : str
        The chosen solver's name (``dpsolve.solvers.get(name).function`` runs it).
    bound : float
        Its bound.
    bound_name : str
        The analysis the bound comes from.
    epsilon, delta : float or None
        The target the choice was made for.
    risk : str
        The risk whose bounds were compared: ``"empirical"`` or ``"population"``.
    candidates : tuple of Candidate
        Every single-machine solver that takes the problem's loss, with its bound or the reason
        it was left out.
    """

    name: str
    bound: float
    bound_name: str
    epsilon: float
    delta: Optional[float]
    candidates: tuple
    risk: str = "empirical"

    def fit(self, problem, *, rng=None, secure=False):
        """Run the chosen solver on ``problem`` at the target (its other options at their
        defaults, the ones the bound was computed for)."""
        from . import get
        function = get(self.name).function
        options = {} if self.delta is None else {"delta": self.delta}
        return function(problem, self.epsilon, rng=rng, secure=secure, **options)


def _floor(function, problem):
    """``function(problem)`` as a finite float, or None where it fails or has no floor (the
    solver is then planned, and refuses or has no bound as its plan says)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = function(problem)
    except (ValueError, TypeError, *_BOUND_ERRORS):
        return None
    return None if value is None or math.isnan(value) else float(value)


def _population_bound(spec, problem, plan):
    """``spec``'s population bound at ``plan`` as a :class:`Bound`, or None (the hook gives a
    float, or a Bound with the theorem's name)."""
    found = spec.hooks.population_bound(problem, None, plan)
    if found is None:
        return None
    name = getattr(found, "name", None) or f"{spec.name}: excess population risk bound"
    return Bound(float(getattr(found, "value", found)), name)


def _candidate(spec, problem, epsilon, delta, risk="empirical"):
    """The Candidate of ``spec``: its plan at ``(epsilon, delta)`` with its defaults, and its
    bound on ``risk`` at that plan, or the reason it has none."""
    if risk == "population" and spec.hooks.population_bound is None:
        return Candidate(spec.name, None, None, False, "states no excess population risk bound")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plan = plan_fit(spec, problem, None, epsilon, delta, certify_plan=False)
    except (ValueError, TypeError) as exc:
        return Candidate(spec.name, None, None, False, str(exc))
    if delta is None and plan.delta not in (None, 0.0):
        return Candidate(spec.name, None, None, False, "not pure epsilon-DP")
    try:
        if risk == "population":
            found = _population_bound(spec, problem, plan)
        else:
            found = None if spec.bound is None else spec.bound(problem, None, plan)
    except (ValueError, *_BOUND_ERRORS) as exc:   # from public constants: no bound here
        return Candidate(spec.name, None, None, False,
                         f"no bound at its default settings ({exc})")
    if found is None or not math.isfinite(found.value):
        return Candidate(spec.name, None, None, False, "no bound at its default settings")
    comparable = "O-constant" not in found.name
    return Candidate(spec.name, float(found.value), found.name, comparable)


def _other_geometry(spec, problem):
    """The Candidate of a solver that does not take the problem's constraint set."""
    return Candidate(spec.name, None, None, False,
                     f"does not take constraint={problem.constraint!r} (it takes "
                     f"{', '.join(repr(c) for c in spec.constraints)})")


def _candidates(eligible, problem, epsilon, delta, risk):
    """Every ``eligible`` solver's Candidate, in their order (:func:`choose_solver`'s rule)."""
    found = {}              # name -> Candidate
    deferred = {}           # name -> its bound's floor, for a solver not planned yet
    for spec in eligible:
        if problem.constraint not in spec.constraints:     # another geometry: not planned
            found[spec.name] = _other_geometry(spec, problem)
            continue
        # a solver whose calibration is a costly search states a floor on its bound
        # (SolverSpec.hooks.bound_floor): planned only if the floor leaves it a chance
        # (a floor on the empirical bound: no use for the population's)
        floor = None if delta is None or spec.hooks.bound_floor is None \
            or risk == "population" else _floor(spec.hooks.bound_floor, problem)
        if floor is not None:
            deferred[spec.name] = floor
        else:
            found[spec.name] = _candidate(spec, problem, epsilon, delta, risk)
    # a solver with a costly calibration is planned only if its floor leaves it a chance: the
    # best bound of the others, exact, against a lower bound on its own (ties go to the
    # earlier solver in registry order, as min() below gives them)
    order = {spec.name: i for i, spec in enumerate(eligible)}
    for spec in eligible:
        if spec.name not in deferred:
            continue
        floor = deferred[spec.name]
        usable = sorted((c for c in found.values() if c.comparable),
                        key=lambda c: (c.bound, order[c.name]))
        best = usable[0] if usable else None
        if best is not None and (floor > best.bound or (floor == best.bound
                                                         and order[best.name] < order[spec.name])):
            found[spec.name] = Candidate(
                spec.name, None, None, False,
                f"cannot be chosen: its bound at its default settings is at least {floor:.4g} "
                f"whatever its noise, above {best.name}'s {best.bound:.4g} (its noise was not "
                "calibrated)")
        else:
            found[spec.name] = _candidate(spec, problem, epsilon, delta, risk)
    return [found[spec.name] for spec in eligible]


def choose_solver(problem, epsilon, delta=None, risk="empirical"):
    r"""The single-machine solver with the smallest excess-risk bound for this problem and
    target, chosen from public constants only.

    ``risk="empirical"`` (the default) compares the bounds on the excess empirical risk
    ``F(theta) - F(theta*)`` of the sample (``SolverSpec.bound``); ``risk="population"`` the
    bounds on the excess population risk ``L(theta) - min_C L`` for rows drawn i.i.d. from a
    distribution (``SolverSpec.hooks.population_bound``: stochastic convex optimisation,
    Bassily-Feldman-Talwar-Thakurta 2019, Feldman-Koren-Talwar 2020), where a solver that
    states none is listed with that reason.

    For every registered solver without parties that takes ``problem.loss`` (and sparse X, if
    X is sparse) and ``problem.constraint`` (``SolverSpec.constraints``; the others are listed
    among the candidates with that reason): its plan is resolved at ``(epsilon, delta)`` with its default settings —
    defaults and noise from n, p, L, beta, lambda, R, B and the loss alone — and its bound
    evaluated at that plan. The smallest bound with explicit constants wins. Pure epsilon
    (``delta=None``) admits only the pure-DP solvers.

    A solver whose calibration is a costly search (``dp_sgd``: PLD accounting of its T
    Poisson-sampled Gaussians, 0.1 s to over 1 s) is planned only when a lower bound on its
    bound — its bound at its default settings with zero noise, which no calibration can go
    below — is under the best bound of the others; otherwise it cannot win, and it is listed
    with that as its reason and no bound. The choice is the one planning every solver gives;
    it costs the plans of the others (milliseconds once their caches are warm).

    Parameters
    ----------
    problem : Problem
        The problem; only its public constants are read (never X or y).
    epsilon : float
        Target epsilon ``> 0``.
    delta : float, optional
        Target delta in (0, 1/2) (``dpsolve.solvers._lifecycle.MAX_DELTA``: a larger delta
        allows publishing the data), or None for pure epsilon-DP.
    risk : {"empirical", "population"}, default "empirical"
        The risk whose bounds are compared.

    Returns
    -------
    Choice
        The chosen solver, its bound, and every candidate with its bound or why it was left
        out; ``Choice.fit(problem, rng=...)`` runs it.

    Raises
    ------
    TypeError
        If ``problem`` is not a Problem.
    ValueError
        If ``epsilon``, ``delta`` or ``risk`` is out of range, or no solver has a bound for the
        problem (the message gives each solver's reason, which names the parameter to change).

    Notes
    -----
    Where the rule is wrong. The bounds are worst-case upper bounds of different tightness:
    one solver's may be loose by a factor another's is not, so the smallest bound need not be
    the smallest risk on a given dataset (docs/choose_solver.md gives measured cases). Bounds
    stated as ``O(.)`` with constant 1 (SGD1's Theorem 2) are not upper bounds and are left out
    of the comparison. Solvers without a bound at their defaults (``clipped_gd`` with clipping
    below L, ``minibatch_sgd`` with a non-smooth loss) cannot be chosen. The choice never looks
    at the data, which is what keeps it free: choosing by risks measured on the data would be a
    private selection and must be paid for.
    """
    from . import registry
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    if delta is not None:
        delta = check_real(delta, "delta", low=0.0, high=1.0)
        check_delta_range(delta, "choose_solver")
    check_choice(risk, "risk", RISKS)
    eligible = [spec for spec in registry()
                if spec.partition is None and spec.takes(problem.loss_object)
                and not (problem.is_sparse and not spec.sparse)]
    candidates = _candidates(eligible, problem, epsilon, delta, risk)
    usable = [c for c in candidates if c.comparable]
    if not usable:
        reasons = "; ".join(f"{c.name}: {c.reason or 'its bound is O(.) with constant 1'}"
                            for c in candidates)
        if all(c.bound is None for c in candidates):
            # every solver refused (or had no bound at) this target: lead with it
            raise ValueError(f"choose_solver: no solver has a bound at epsilon={epsilon:g}, "
                             f"delta={delta} on the {risk} risk for {problem!r}; each "
                             f"solver's reason names the parameter to change: {reasons}")
        raise ValueError(f"no solver has a bound with explicit constants for {problem!r} at "
                         f"epsilon={epsilon:g}, delta={delta} ({reasons})")
    best = min(usable, key=lambda c: c.bound)
    return Choice(name=best.name, bound=best.bound, bound_name=best.bound_name,
                  epsilon=epsilon, delta=delta, candidates=tuple(candidates), risk=risk)
