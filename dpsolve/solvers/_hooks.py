"""A solver's optional extension points: what the code outside its module asks of it.

Every hook is None by default, and None means the generic behaviour, stated with each hook; a
solver sets only the hooks whose generic behaviour does not fit it. The code that needs a
solver-specific answer (the estimators' ridge, :func:`dpsolve.choose_solver`'s floor, the sweeps'
measure, the lifecycle's extra steps) asks the spec's hooks, never the solver's name.
"""
import dataclasses
import types
from typing import Callable, Mapping, Optional


@dataclasses.dataclass(frozen=True)
class Hooks:
    """The optional hooks of a :class:`~dpsolve.solvers.SolverSpec` (``SolverSpec.hooks``).

    Attributes
    ----------
    prediction_reg : callable or None
        ``prediction_reg(problem, epsilon, delta) -> float``: the ridge ``lambda`` that
        minimises the solver's bound on the *unregularised* excess risk of its release at
        ``(epsilon, delta)`` (``delta`` None: pure), from public constants only
        (:mod:`dpsolve.tuning`; :func:`dpsolve.solvers.prediction_constants` gives the shared
        ones). Called for a loss with a finite Lipschitz constant only (otherwise ``1/n``),
        and never taken below ``1/n``. None: the gradient methods' rule,
        ``lambda = (L / R_0) sqrt(p) / (n epsilon)``, whose noise does not shrink with
        ``lambda``.
    prediction_options : mapping, optional
        Options a fit at its prediction ridge takes unless the caller sets them (objective
        perturbation: no ridge of its own on top, ``extra_reg=0``). Default: none.
    bound_floor : callable or None
        ``bound_floor(problem) -> float or None``: a lower bound on ``SolverSpec.bound`` at
        the solver's default settings whatever its noise, without calibrating, for a solver
        whose calibration costs more than :func:`dpsolve.choose_solver` should spend (it then
        plans the solver only when the floor leaves it a chance); None from the hook: no
        bound there. None: the solver is always planned.
    paper_sigma : callable or None
        ``paper_sigma(problem, partition, plan) -> float``: the noise standard deviation the
        solver's source states for the plan's target and settings (its
        ``calibration="paper"``), for a plan from that calibration. None: the source states
        no formula dpsolve follows.
    refuse_loss : callable or None
        ``refuse_loss(problem)``: raises the solver's own ValueError for a Problem whose loss it
        does not take (``loss="multinomial"`` has its own message). None: the generic message.
    option_parties : callable or None
        ``option_parties(options) -> Parties or None``: a :class:`~dpsolve.Parties` held by
        the caller's keyword options (``noisy_sgd``'s ``parties``), whose parties on workers
        secure mode refuses like a partition's. None: the options hold none.
    draw : callable or None
        ``draw(problem, partition, plan, rng) -> Plan``: the plan completed by the public
        randomness its event depends on (``joint_sgd``'s owner schedule), drawn from the fit's
        generator after ``plan`` and before the certification. None: the plan draws nothing.
    measure : callable or None
        How the experiments measure a fit: ``measure(problem, partition, plan, fit)`` returns
        a :class:`~dpsolve.solvers.Measured`. None: the Problem's own objective, against its
        reference minimiser (:func:`dpsolve.reference_minimizer`), which a sweep solves once
        per problem.
    sweep_options : callable or None
        ``sweep_options(options) -> mapping``: a sweep's solver options (TOML values) as the
        public function takes them. None: as they are.
    population_bound : callable or None
        ``population_bound(problem, partition, plan) -> float or None``: the solver's bound on
        the excess *population* risk ``L(theta) - min_C L`` of its release, for rows drawn
        i.i.d. from a distribution (stochastic convex optimisation), read off the plan as
        ``SolverSpec.bound`` is; None from the hook: no theorem applies to the plan. The sweeps
        on a population source compare it with the measured excess population risk. None: the
        solver states no population-risk bound.
    """

    prediction_reg: Optional[Callable] = None
    prediction_options: Mapping = dataclasses.field(default_factory=dict)
    bound_floor: Optional[Callable] = None
    paper_sigma: Optional[Callable] = None
    refuse_loss: Optional[Callable] = None
    option_parties: Optional[Callable] = None
    draw: Optional[Callable] = None
    measure: Optional[Callable] = None
    sweep_options: Optional[Callable] = None
    population_bound: Optional[Callable] = None

    def __post_init__(self):
        object.__setattr__(self, "prediction_options",
                           types.MappingProxyType(dict(self.prediction_options)))
