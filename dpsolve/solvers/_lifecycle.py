r"""What every solver shares: its spec, and one fit lifecycle.

A solver module declares a :class:`SolverSpec` and three functions (after scikit-learn's
``_parameter_constraints`` / ``_fit_context`` and lightning's one module per algorithm):

* ``plan(problem, partition, target, options) -> Plan``: noise calibration and the settings the
  options leave open, from public constants only (n, p, the Problem's bounds, the
  :class:`Target`, ``options``: every keyword option, the caller's or the public function's
  default), and every check that depends on more than one argument. It must not read the data
  and draws no randomness.
* ``run(problem, partition, plan, rng) -> Released``: the computation (the kernel call).
* ``bound(problem, partition, plan) -> Bound or None``: the excess-risk bound of the theorem
  behind the solver at this plan (its target, resolved options and settings), or None where no
  theorem applies (stated as a condition, not caught as an exception).

Each option's default is written once, in the public function's signature; the function,
decorated with :func:`lifecycle`, binds its arguments to that signature and runs the
lifecycle with its spec.

:func:`run_solver` runs the lifecycle every public solver function goes through, in this order
(:func:`plan_fit`, then :func:`run_plan`): ``secure`` against ``rng`` (and a transcript, and
parties on workers); the budget's type; the Problem and its loss; the partition of the rows;
the declared parameter constraints; delta below :data:`MAX_DELTA`; the epsilon and delta the
spec accepts (:attr:`SolverSpec.accepts`); the random generator's type;
``plan``; the privacy report (and its PrivacyWarning); float64 arithmetic failing in either of
those two (they read public constants only, so the inputs are out of range) is refused by a
ValueError naming them (:func:`out_of_range`); the budget's charge (``accountant=``, refused
before the data are read); ``run``, timed; the non-finite check on the released values only;
the observers' warnings; the :class:`~dpsolve.Fit`; and ``release`` (``secure=True``: the grid,
no timing). Every check that raises does so before the data are touched.
"""
import dataclasses
import functools
import inspect
import numbers
import time
import types
import warnings
from typing import Callable, Mapping, Optional

import numpy as np

from .._ordered_linalg import one_blas_thread
from .._capabilities import (chunked_solvers, constraint_solvers, multinomial_solvers,
                             sparse_solvers)
from .._row_ops import refuse_sparse
from .._secure import check_secure, generator, release
from .._validation import as_constraint, check_parameters, check_rng
from ._accepts import Accepts
from ..fit import Fit
from ..losses import LOSSES, PROPERTIES
from ..parties import check_parties
from ..privacy.accounting import PrivacyWarning, certify
from ..privacy.budget import charge, check_accountant
from ..problem import CONSTRAINTS, Problem, reject_multinomial
from ._hooks import Hooks

#: Parameter documentation shared by every solver; a docstring line holding only ``{{name}}``
#: is replaced by the entry (see :func:`document`).
PARAMETER_DOCS = {
    "problem": """\
problem : Problem
    The data, loss, constraint and public bounds (:class:`dpsolve.Problem`).""",
    "secure": """\
secure : bool, default False
    ``True``: noise from a fresh stream seeded from the operating system's entropy (``rng``
    must then be None), released parameters rounded to the ``2**-32`` grid, and ``wall_time``
    NaN. See docs/secure_noise.md for what this does and does not protect against. The default
    is a reproducible research run.""",
    "accountant": """\
accountant : BudgetAccountant, optional
    A privacy budget (:class:`dpsolve.BudgetAccountant`) to charge this fit's ``dp_event`` to.
    The fit is refused with a :class:`~dpsolve.privacy.budget.BudgetExceededError` (a
    ValueError), before any data is read, if the budget cannot afford it; once admitted it is
    charged, also if it then fails.""",
    "rng": """\
rng : None, int, SeedSequence or Generator
    Source of the noise (``numpy.random.default_rng(rng)``; a Generator is used as it is and
    advances). The same seed gives bit-identical results.""",
}


def document(function):
    """Fill a solver docstring's ``{{name}}`` lines from :data:`PARAMETER_DOCS`, indented as the
    marker is.

    Parameters
    ----------
    function : callable
        The public solver function; its ``__doc__`` is rewritten in place.

    Returns
    -------
    callable
        ``function`` itself, so this works as a decorator.
    """
    lines = []
    for line in (function.__doc__ or "").splitlines():
        marker = line.strip()
        if marker.startswith("{{") and marker.endswith("}}"):
            indent = line[:len(line) - len(line.lstrip())]
            lines.extend(indent + entry for entry in
                         PARAMETER_DOCS[marker[2:-2]].splitlines())
        else:
            lines.append(line)
    function.__doc__ = "\n".join(lines)
    return function


@dataclasses.dataclass(frozen=True)
class Target:
    """The privacy a fit is planned for, and whether it runs in secure mode.

    Attributes
    ----------
    epsilon : float or None
        The target epsilon (None when the noise is given explicitly).
    delta : float or None
        The target delta (None for pure epsilon-DP, or with explicit noise).
    secure : bool, default False
        Secure mode (docs/secure_noise.md): the plan may refuse settings it cannot deliver
        without a data-dependent branch.
    """

    epsilon: Optional[float]
    delta: Optional[float]
    secure: bool = False


@dataclasses.dataclass(frozen=True)
class Plan:
    """What ``plan`` resolved before any data is read.

    A plan holds three kinds of values. The *settings* (``Fit.settings``) and the *noise*
    scales (``Fit.noise``) are released with the fit: public, resolved from public constants,
    and what a reader needs to reproduce the analysis. The *run inputs* are what ``run`` needs
    beyond them (kernel codes, arrays of step sizes, an inner solver's plan): public values too,
    but not released, as they add nothing to the settings.

    Attributes
    ----------
    epsilon : float or None
        The claimed epsilon (None when the user gave the noise explicitly).
    delta : float
        The claimed delta.
    method : str
        How the noise was chosen: ``"paper"``, an accountant's name, or ``"explicit"``.
    event : dp_accounting.DpEvent
        What will be released.
    sigma : float or None, default None
        The Gaussian noise standard deviation, if any.
    steps : int, default 1
        The number of iterations (public).
    noise : mapping, optional
        Every noise scale by name (released: ``Fit.noise``).
    settings : mapping, optional
        The public, resolved settings (released: ``Fit.settings``).
    run_inputs : mapping, optional
        What ``run`` needs beyond the settings and the noise: public values, not released.
    report : PrivacyReport or None, default None
        Set by the lifecycle before ``run`` (observers' epsilons are reported next to it).
    source : str or None
        ``Fit.source`` when the work followed depends on the options (a solver implementing
        two protocols); None: the spec's ``source``.
    target : Target or None
        The target the plan was made for (set by the lifecycle).
    options : mapping, optional
        Every keyword option, checked, the caller's value or the public function's default
        (set by the lifecycle).
    given : frozenset of str
        The options the caller gave (a value equal to the default counts as not given; set by
        the lifecycle): a bound that holds only at a default reads this.
    """

    epsilon: Optional[float]
    delta: float
    method: str
    event: object
    sigma: Optional[float] = None
    steps: int = 1
    noise: Mapping = dataclasses.field(default_factory=dict)
    settings: Mapping = dataclasses.field(default_factory=dict)
    run_inputs: Mapping = dataclasses.field(default_factory=dict)
    report: object = None
    source: Optional[str] = None
    target: Optional[Target] = None
    options: Mapping = dataclasses.field(default_factory=dict)
    given: frozenset = frozenset()


@dataclasses.dataclass(frozen=True)
class Released:
    """What ``run`` computed: the released parameters, and for multi-party and joint solvers
    the structured model, the transcript and the epsilon certified against each observer.

    Attributes
    ----------
    theta : ndarray
        The released parameters (``Fit.theta``), checked for finiteness by the lifecycle.
    model : object or None, default None
        The structured model (``Fit.model``), for solvers whose output is more than one array.
    transcript : object or None, default None
        What the coordinator or the other owners saw (``Fit.transcript``), when recorded.
    observers : mapping of str to float, optional
        The epsilon certified against each observer (``Fit.observers``); the lifecycle warns
        when one exceeds the claim.
    """

    theta: np.ndarray
    model: object = None
    transcript: object = None
    observers: Mapping = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Bound:
    """An excess-risk bound (mean form) and the theorem it comes from.

    Attributes
    ----------
    value : float
        The bound on ``F(theta) - F(theta*)`` at the fit's settings.
    name : str
        The theorem (or analysis) it comes from.
    """

    value: float
    name: str


@dataclasses.dataclass(frozen=True)
class SolverSpec:
    """Everything dpsolve needs to know about a solver, in one place.

    Attributes
    ----------
    name : str
        The public function's name (``dpsolve.<name>``), ``Fit.solver``, the sweep key.
    function : callable
        The public function.
    works : tuple of str
        The published works it comes from, by authors and year.
    source : str
        ``Fit.source``: the work and the algorithm and equation numbers followed.
    needs : tuple of str
        What its theory and its implementation need of a loss: names of
        :data:`dpsolve.losses.PROPERTIES` (``"convex"``, ``"margin"``, ``"smooth"``,
        ``"unit_derivative"``, ``"compiled"``, ``"sufficient_statistics"``). It takes every
        loss that has them all (:meth:`takes`); :attr:`losses` lists the registered ones.
    partition : str or None
        The name of the argument that splits the rows across parties (``"parties"``,
        ``"owners"``), given positionally after the problem; None for a single data holder.
    neighbours : str
        The neighbour relation of the guarantee, in words.
    guarantee : str
        ``"dp"`` (differential privacy), or ``"joint_dp"`` (joint differential privacy, weaker:
        no DP lower bound applies).
    parameters : mapping of str to Constraint or list
        The keyword options and their declarative checks, constraints only: a Constraint, or a
        list of alternatives (a union; None in it accepts None). The defaults are the public
        function's (:attr:`defaults`). ``epsilon``, ``delta``, ``secure``, ``rng``,
        ``accountant`` and the partition are handled by the lifecycle.
    plan : callable
        Noise calibration and settings from public constants,
        ``plan(problem, partition, target, options)``: returns a :class:`Plan` (see the module
        docstring).
    run : callable
        The computation: returns a :class:`Released`.
    bound : callable or None
        The excess-risk bound at a plan, ``bound(problem, partition, plan)``: returns a
        :class:`Bound` or None.
    page : str
        The docs page describing it.
    nonfinite_hint : str
        Advice in the FloatingPointError raised when the released values are not finite.
    observer_note : str, default ""
        Appended to the PrivacyWarning raised when an observer's epsilon exceeds the claim.
    example : mapping, optional
        Keyword arguments of a small, cheap run (``epsilon``, ``delta``, options), used by the
        common checks and the benchmarks; multi-party solvers get ``parts`` equal parties.
    example_problem : mapping, optional
        ``Problem`` options (``radius``, ``reg``, ...) of the example, for a loss the solver
        takes.
    parts : int, default 2
        Parties in the example (multi-party solvers).
    sparse : bool, default False
        Whether it takes a Problem whose X is sparse (CSR); if not, such a Problem is refused
        with a TypeError naming the solvers that do (docs/sparse.md).
    chunked : bool, default False
        Whether it takes a Problem whose X is in chunks of rows (a Dask array or a
        :class:`~dpsolve.chunked.RowChunks`): its ``run`` then reads the rows only through
        the RowChunks' per-chunk reductions. If not, such a Problem is refused before any work
        with a TypeError naming the solvers that do.
    constraints : tuple of str, default ("l2",)
        The constraint sets it takes (``Problem.constraint``: ``"l2"``, ``"l1"``); a Problem
        with another is refused before any work with a ValueError naming ``constraint`` and
        the solvers that take it (docs/conventions.md, "The l1 geometry").
    transcript_option : str or None
        The option that records every message un-rounded (``"record_transcript"``), refused
        with ``secure=True``; None: the solver records none.
    hooks : Hooks, default Hooks()
        The optional extension points (the ridge for prediction, the choice's floor, the
        source's sigma, the solver's own loss refusal, parties among the options, a plan's
        public randomness, the experiments' measure and sweep options), each None for the
        generic behaviour (:class:`~dpsolve.solvers.Hooks`).
    accepts : Accepts or None
        The epsilon and delta it accepts (:class:`~dpsolve.solvers._accepts.Accepts`:
        whether delta is required, optional or absent, their ranges, the option that gives the
        noise instead of epsilon), checked by the lifecycle before ``plan``. None: ``plan``
        checks the target itself (every built-in solver declares it).
    """

    name: str
    function: Callable
    works: tuple
    source: str
    needs: tuple
    partition: Optional[str]
    neighbours: str
    guarantee: str
    parameters: Mapping
    plan: Callable
    run: Callable
    bound: Optional[Callable]
    page: str
    nonfinite_hint: str
    observer_note: str = ""
    example: Mapping = dataclasses.field(default_factory=dict)
    example_problem: Mapping = dataclasses.field(default_factory=dict)
    parts: int = 2
    sparse: bool = False
    chunked: bool = False
    constraints: tuple = ("l2",)
    transcript_option: Optional[str] = None
    hooks: Hooks = Hooks()
    accepts: Optional[Accepts] = None

    def __post_init__(self):
        unknown = sorted(set(self.needs) - set(PROPERTIES))
        if isinstance(self.needs, str) or unknown:
            raise ValueError(f"needs must name properties of dpsolve.losses.PROPERTIES "
                             f"({', '.join(PROPERTIES)}), got {self.needs!r}")
        object.__setattr__(self, "needs", tuple(self.needs))
        if (isinstance(self.constraints, str) or not self.constraints
                or not set(self.constraints) <= set(CONSTRAINTS)):
            raise ValueError(f"constraints must be a non-empty tuple of {CONSTRAINTS}, got "
                             f"{self.constraints!r}")
        object.__setattr__(self, "constraints", tuple(self.constraints))
        object.__setattr__(self, "parameters", types.MappingProxyType(
            {name: as_constraint(c) for name, c in self.parameters.items()}))
        for name in ("example", "example_problem"):
            object.__setattr__(self, name, types.MappingProxyType(dict(getattr(self, name))))
        # a function decorated with @lifecycle runs the first spec that names it (a copy made
        # by dataclasses.replace, e.g. a test's, does not take it over)
        claim = getattr(self.function, "_claim_spec", None)
        if claim is not None:
            claim(self)

    def takes(self, loss):
        """Whether the solver takes ``loss``: it has every property the solver needs.

        Parameters
        ----------
        loss : dpsolve.losses.Loss
            A loss object (``Problem.loss_object``).

        Returns
        -------
        bool
            True when ``loss.properties`` holds every name of :attr:`needs`.
        """
        return set(self.needs) <= loss.properties

    @property
    def losses(self):
        """The registered losses it takes, by name, in the order of
        :data:`dpsolve.losses.LOSSES` (each with its default parameters; a tuple)."""
        return tuple(name for name, cls in LOSSES.items() if self.takes(cls()))

    @functools.cached_property
    def defaults(self):
        """The keyword options' defaults, read once from the public function's signature (the
        one place they are written)."""
        return types.MappingProxyType(_keyword_defaults(self.function))


#: The public functions' keyword arguments the lifecycle itself takes.
LIFECYCLE_ARGUMENTS = ("secure", "rng", "accountant")


def _keyword_defaults(function):
    """``{name: default}`` of ``function``'s keyword-only options (not the lifecycle's)."""
    return {name: parameter.default
            for name, parameter in inspect.signature(function).parameters.items()
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY
            and name not in LIFECYCLE_ARGUMENTS}


@dataclasses.dataclass(frozen=True)
class Measured:
    """How a fit is measured in the experiments (:attr:`Hooks.measure`).

    Attributes
    ----------
    reference : object
        The reference solution (``value`` and certified ``gap``).
    excess_risk : float
        The objective at the fit minus the reference's value.
    objective : float
        The objective at the fit.
    released : tuple of ndarray
        Every released array, hashed into the run's record.
    """

    reference: object
    excess_risk: float
    objective: float
    released: tuple


#: Largest delta a solver (and :func:`dpsolve.choose_solver`) is planned for: (epsilon,
#: delta)-DP with delta >= 1/2 is met by a mechanism that publishes the whole dataset half the
#: time, and the accountants lose the precision of ``1 - delta`` towards 1
#: (docs/bad_input.md, "Numerical range").
MAX_DELTA = 0.5

#: What float64 arithmetic raises on public constants out of range: ``**`` and ``math.exp``
#: overflow, a division by an underflowed zero, and the math module's domain errors (a
#: ValueError that names nothing).
_ARITHMETIC = (OverflowError, ZeroDivisionError, FloatingPointError)


def check_delta_range(delta, what):
    """ValueError naming delta when it is a real number in ``[MAX_DELTA, 1)`` (the solvers'
    own checks refuse the rest of what is not in (0, 1), by type and range)."""
    if (isinstance(delta, numbers.Real) and not isinstance(delta, (bool, np.bool_))
            and MAX_DELTA <= delta < 1.0):
        raise ValueError(f"{what}: delta must lie in (0, {MAX_DELTA:g}): (epsilon, delta)-DP "
                         f"with delta >= {MAX_DELTA:g} allows publishing the whole dataset half "
                         f"the time (docs/bad_input.md, \"Numerical range\"); got {delta!r}")


def _arithmetic_error(exc):
    """Whether ``exc`` is float64 arithmetic failing (over- or underflow, a domain error)."""
    return isinstance(exc, _ARITHMETIC) or (isinstance(exc, ValueError)
                                            and str(exc) == "math domain error")


def out_of_range(what, problem, epsilon, delta, exc):
    """The ValueError for a plan (or its certification) that float64 arithmetic failed on:
    from public constants only, so the inputs are outside the range dpsolve computes in. Names
    epsilon, delta and the Problem's constants.

    Parameters
    ----------
    what : str
        The solver, or ``"choose_solver"``.
    problem : Problem
        Its constants are named.
    epsilon, delta : float or None
        The target.
    exc : Exception
        The arithmetic error (its type and message are quoted).

    Returns
    -------
    ValueError
    """
    constants = ", ".join(f"{k}={v!r}" for k, v in problem.describe().items()
                          if k in ("radius", "reg", "row_norm", "label_bound", "huber_width",
                                   "intercept_scale") and v is not None)
    return ValueError(
        f"{what}: epsilon={epsilon!r}, delta={delta!r} and the Problem's constants ({constants}) "
        f"are outside the range in which its noise and settings can be computed in float64 "
        f"({type(exc).__name__}: {exc}); bring epsilon, delta and the constants nearer 1 "
        "(docs/bad_input.md, \"Numerical range\")")


def plan_or_refuse(spec, problem, partition, target, options, rng=None):
    """``spec.plan(problem, partition, target, options)`` (then ``spec.hooks.draw`` from ``rng``,
    if the spec has one), with float64 arithmetic failing on the public constants turned into a
    ValueError naming them (:func:`out_of_range`): a plan reads no data, so nothing has
    started. Used by :func:`plan_fit`."""
    try:
        plan = spec.plan(problem, partition, target, options)
        if spec.hooks.draw is not None:
            plan = spec.hooks.draw(problem, partition, plan, rng)
        return plan
    except Exception as exc:
        if _arithmetic_error(exc):
            raise out_of_range(spec.name, problem, target.epsilon, target.delta, exc) from exc
        raise


def _equal(value, default):
    """Whether ``value`` is the default: the same object, or ``value == default`` true (an
    array against a scalar default is not equal)."""
    if value is default:
        return True
    try:
        return bool(value == default)
    except (TypeError, ValueError):       # an array against a scalar default
        return False


def refuse_constraint(spec, problem):
    """A ValueError naming ``constraint`` and the solvers that take the Problem's, unless
    ``spec`` takes it (``SolverSpec.constraints``)."""
    if problem.constraint not in spec.constraints:
        takers = constraint_solvers(problem.constraint)
        raise ValueError(
            f"{spec.name} does not take constraint={problem.constraint!r} (it takes "
            f"{', '.join(repr(c) for c in spec.constraints)}); the solvers that do are "
            f"{', '.join(takers) if takers else 'none registered'}")


def check_problem(spec, problem):
    """The Problem's type and loss, before anything else."""
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    refuse_constraint(spec, problem)
    if not spec.takes(problem.loss_object):
        if problem.loss_object.is_multinomial:
            reject_multinomial(problem, spec.name, multinomial_solvers())
        if spec.hooks.refuse_loss is not None:
            spec.hooks.refuse_loss(problem)
        lacks = [need for need in spec.needs if need not in problem.loss_object.properties]
        raise ValueError(f"{spec.name} does not take loss={problem.loss!r}; it takes "
                         f"{', '.join(spec.losses)} (the loss lacks the properties "
                         f"{', '.join(lacks)}: docs/adding_a_loss.md)")
    if problem.is_sparse and not spec.sparse:
        refuse_sparse(problem, spec.name, sparse_solvers())
    if not problem.rows.random_access and not spec.chunked:
        raise TypeError(
            f"{spec.name} does not take X in chunks of rows (a Dask array or a RowChunks): it "
            f"needs random access to the rows; the solvers that do are "
            f"{', '.join(chunked_solvers())}")


@one_blas_thread()     # NumPy's sums in the same order for any thread count (_ordered_linalg.py)
def plan_fit(spec, problem, partition=None, epsilon=None, delta=None, *, secure=False, rng=None,
             accountant=None, certify_plan=True, stacklevel=4, **options):
    """Everything a fit does before it charges the budget and reads the data, in its order:
    ``secure`` against ``rng`` (and the spec's transcript option and parties on workers), the
    budget's type, the Problem and its loss, the partition, the declared parameters (the
    options not given take the public function's defaults), delta's range, the target the
    spec accepts (:class:`~dpsolve.solvers._accepts.Accepts`), the generator's type, ``plan``
    and its privacy report (float64 failing on public constants refused by
    :func:`out_of_range`).

    The one way to plan a fit: shared by :func:`run_solver`, :func:`dpsolve.choose_solver`,
    the estimators' planned events and the sweeps' check of every run before any starts
    (:func:`dpsolve.experiments.check_runs`), so that they cannot drift apart.

    Parameters
    ----------
    spec : SolverSpec
        The solver.
    problem : Problem
        Its loss must be one the spec takes (``spec.takes``); only public constants are read.
    partition : Parties or None
        The rows' partition when ``spec.partition`` names one; else None.
    epsilon, delta : float or None
        The target (:class:`Target`).
    secure : bool, default False
        Secure mode; ``rng`` must then be None.
    rng : None, int, SeedSequence or Generator
        Checked here; ``plan`` draws nothing, and a spec with a ``draw`` draws its plan's public
        randomness from it (spawned streams).
    accountant : BudgetAccountant or None
        Only checked here (:func:`run_plan` charges it).
    certify_plan : bool, default True
        Certify the plan's event (``Plan.report``); False leaves the report None (a plan read
        for its event or its bound only).
    stacklevel : int
        Of the certification's PrivacyWarning.
    **options
        The solver's keyword options (TypeError for an unknown one).

    Returns
    -------
    Plan
        With its ``target``, resolved ``options``, the ``given`` ones and its ``report``.
    """
    parties = partition if partition is not None or spec.hooks.option_parties is None \
        else spec.hooks.option_parties(options)
    recording = False if spec.transcript_option is None \
        else options.get(spec.transcript_option, spec.defaults[spec.transcript_option])
    secure = check_secure(secure, rng, recording, remote=getattr(parties, "remote", False))
    check_accountant(accountant)
    if accountant is not None and spec.guarantee != "dp":
        raise ValueError(f"{spec.name}'s guarantee is {spec.guarantee}, which a "
                         "BudgetAccountant (differential privacy) cannot compose")
    check_problem(spec, problem)
    if spec.partition is not None:
        check_parties(problem, partition, spec.partition)
    defaults = spec.defaults
    checked = check_parameters(spec.parameters, options)        # TypeError for an unknown one
    checked.update(check_parameters(spec.parameters, {
        name: defaults[name] for name in spec.parameters if name not in options}))
    resolved = {name: checked[name] for name in spec.parameters}
    check_delta_range(delta, spec.name)
    if spec.accepts is not None:
        spec.accepts.check(spec.name, epsilon, delta, resolved)
    # the generator's type; a spec that draws public randomness for its plan draws from it
    # (spawned streams, independent of what ``run`` draws)
    draws = generator(rng, secure) if spec.hooks.draw is not None else None
    if not secure:
        check_rng(rng)
    target = Target(epsilon, delta, secure)
    resolved = types.MappingProxyType(resolved)
    plan = plan_or_refuse(spec, problem, partition, target, resolved, draws)
    report = None
    if certify_plan:
        try:
            report = certify(plan.event, plan.epsilon, plan.delta, plan.method,
                             stacklevel=stacklevel)
        except Exception as exc:
            if _arithmetic_error(exc):
                raise out_of_range(spec.name, problem, epsilon, delta, exc) from exc
            raise
    return dataclasses.replace(
        plan, report=report, target=target, options=resolved,
        given=frozenset(name for name in options if not _equal(options[name], defaults[name])))


def lifecycle(function):
    """Make ``function``, a solver's public signature and docstring, run the fit lifecycle.

    The decorated function's body, its docstring, does nothing: a call binds its arguments to
    the signature (Python's own TypeError for a missing or unknown one), fills the defaults,
    and runs :func:`run_solver` with the :class:`SolverSpec` whose ``function`` it is (the
    first spec built on it). The docstring's ``{{name}}`` lines are filled by
    :func:`document`. The signature, ``help()`` and the docstring stay the function's own.

    Parameters
    ----------
    function : callable
        The public function: ``problem``, the partition, ``epsilon`` and ``delta`` first, then
        the keyword options with their defaults and ``secure``, ``rng`` and ``accountant``.

    Returns
    -------
    callable
        The public solver function.
    """
    signature = inspect.signature(document(function))
    owner = []

    @functools.wraps(function)
    def solver(*args, **kwargs):
        if not owner:
            raise TypeError(f"{function.__name__} has no SolverSpec: build one with "
                            f"function={function.__name__}")
        try:
            arguments = signature.bind(*args, **kwargs)
        except TypeError:
            function(*args, **kwargs)   # Python's own message, naming the function; its body
            raise                       # is the docstring, so a call that binds does nothing
        arguments.apply_defaults()
        return run_solver(owner[0], arguments.arguments)

    def claim(spec):
        if not owner:
            owner.append(spec)
    solver._claim_spec = claim
    return solver


def run_solver(spec, arguments):
    """Run ``spec``'s solver through the shared lifecycle (module docstring) and return the
    released :class:`~dpsolve.Fit`: :func:`plan_fit`, then :func:`run_plan`. A function
    decorated with :func:`lifecycle` calls it with its bound arguments; a solver written as
    ``return run_solver(SPEC, locals())`` calls it directly, to the same effect.

    Parameters
    ----------
    spec : SolverSpec
        The solver.
    arguments : mapping
        The public function's arguments by name (its ``locals()``): ``problem``, the partition
        (``spec.partition``), ``epsilon``, ``delta``, ``secure``, ``rng``, ``accountant`` and
        the keyword options (checked against ``spec.parameters``).

    Returns
    -------
    Fit
        The released fit, with its privacy report.

    Raises
    ------
    ValueError
        For a delta in ``[MAX_DELTA, 1)``, and where float64 arithmetic fails in the plan or
        its certification (public constants out of range; :func:`out_of_range`), before any
        work; and whatever the plan refuses.
    FloatingPointError
        If the released parameters are not finite.

    Warns
    -----
    PrivacyWarning
        If the certified epsilon, overall or against an observer, exceeds the claim.
    """
    options = dict(arguments)
    problem = options.pop("problem")
    partition = options.pop(spec.partition) if spec.partition is not None else None
    epsilon, delta = options.pop("epsilon", None), options.pop("delta", None)
    secure, rng, accountant = (options.pop("secure", False), options.pop("rng", None),
                               options.pop("accountant", None))
    plan = plan_fit(spec, problem, partition, epsilon, delta, secure=secure, rng=rng,
                    accountant=accountant, stacklevel=5, **options)
    return run_plan(spec, problem, partition, plan, rng, accountant, stacklevel=4)


def run_plan(spec, problem, partition, plan, rng=None, accountant=None, *, stacklevel=2):
    """Run a certified plan (:func:`plan_fit`): charge the budget, ``run``, check and
    release the :class:`~dpsolve.Fit`.

    Parameters
    ----------
    spec : SolverSpec
        The solver the plan was made for.
    problem, partition
        As given to :func:`plan_fit`.
    plan : Plan
        From :func:`plan_fit`, with its report.
    rng : None, int, SeedSequence or Generator
        Source of the noise when the plan is not secure (then it must be None).
    accountant : BudgetAccountant or None
        The budget charged with the plan's event before ``run`` (refused: nothing is read).
    stacklevel : int
        Of the observers' PrivacyWarning.

    Returns
    -------
    Fit
    """
    if plan.report is None or plan.target is None:
        raise ValueError("run_plan needs a plan from plan_fit with its privacy report "
                         "(certify_plan=True)")
    secure = check_secure(plan.target.secure, rng)
    accountant = check_accountant(accountant)
    rng = generator(rng, secure)
    report = plan.report
    charge(accountant, plan.event, neighbours=report.neighbours, label=spec.name)

    start = time.perf_counter()
    # no overflow warnings mid-run either: the only signal is the check on the release below
    with np.errstate(over="ignore", invalid="ignore"):
        out = spec.run(problem, partition, plan, rng)
    # checked on the released parameters only: a function of what is released, it reveals
    # nothing more
    if not np.all(np.isfinite(out.theta)):
        raise FloatingPointError(f"{spec.name} produced non-finite parameters; "
                                 f"{spec.nonfinite_hint}")
    wall_time = time.perf_counter() - start

    for who, eps in out.observers.items():
        # an observer who learns no more than an outsider: certify has already warned
        if eps > report.epsilon * (1.0 + 1e-9) and eps > report.certified_epsilon:
            warnings.warn(f"against {who} the certified epsilon is {eps:.4g} at delta="
                          f"{plan.delta:.3g}, above the claimed {report.epsilon:.4g}"
                          f"{spec.observer_note}", PrivacyWarning, stacklevel=stacklevel)
    result = Fit(theta=out.theta, sigma=plan.sigma, steps=plan.steps, solver=spec.name,
                 source=plan.source or spec.source, wall_time=wall_time, dp_event=plan.event,
                 privacy=report, noise=plan.noise, settings=plan.settings,
                 observers=out.observers, transcript=out.transcript, model=out.model)
    return release(result, secure)
