"""Multi-party gradient descent with Gaussian gradient noise: Algorithm SGD2 of the multi-party
SGD notes (every party noises its own gradient sum) and Jayaraman et al. 2018's gradient
perturbation (one noise draw inside secure aggregation)."""
import dataclasses
import math

import numpy as np

from .._capabilities import multinomial_solvers
from .._projection import scale_onto_ball
from .._validation import Boolean, Integer, Options, Real, check_choice, check_int, check_real
from ..bounds import (check_bound_arguments, gradient_perturbation_bound, in_form,
                      minimizer_norm_bound)
from ..privacy.accounting import ACCOUNTANTS, gaussian_event
from ..privacy.calibration import (MAX_DEFAULT_STEPS, check_finite_lipschitz,
                                   check_noise_scale, exact_gaussian_sigma,
                                   fewest_steps_near_best, gaussian_sigma, warn_large_delta,
                                   zcdp_inversion_sigma)
from ..privacy.mechanisms import gaussian_sigma_classic
from ..problem import reject_multinomial
from ._hooks import Hooks
from ._registry import register
from ._accepts import Accepts
from ._lifecycle import Bound, Plan, Released, SolverSpec, lifecycle

SGD2_SOURCE = ("Bassily-Smith-Thakurta 2014's noisy gradients across parties, each party adding "
               "its own Gaussian noise to its gradient sum, as written up in the multi-party SGD "
               "notes ('Multi-party DP write-up 2', Algorithm SGD2, Theorems 3 and 4)")
JAYARAMAN_SOURCE = ("Jayaraman et al. 2018, multi-party gradient perturbation with zCDP, as "
                    "presented in Chen's 2019 slides 'Differential Privacy and Distributed "
                    "Learning'")
NOISE_MODES = ("per_party", "secure_aggregation")
WEIGHTINGS = ("party", "pooled")
OUTPUTS = ("last", "average", "weighted_average")
INITIALS = ("zero", "uniform")
STEP_RULES = {"per_party": ("strongly_convex", "lipschitz"), "secure_aggregation": ("smooth",)}
CALIBRATIONS = ("paper",) + ACCOUNTANTS

PARAMETERS = {
    "noise": Options(NOISE_MODES),
    "steps": [None, Integer(1)],
    # a rule (which ones depends on the noise mode: checked in plan), or a constant
    "step_size": [None, Options(sorted({r for rules in STEP_RULES.values() for r in rules})),
                  Real(0.0)],
    "calibration": Options(CALIBRATIONS),
    "sigma": [None, Real(0.0, low_inclusive=True)],  # its upper limit depends on n
    "weighting": [None, Options(WEIGHTINGS)],
    "output": [None, Options(OUTPUTS)],
    "initial": Options(INITIALS),
    "record_transcript": Boolean(),
    "transcript_limit": Integer(0),
}


# -- the coordinator's public computation (shared by the run and the replay) -------------------------
def multiparty_gd_paper_sigma(lipschitz, steps, epsilon, delta):
    """The SGD2 noise of the multi-party SGD notes (Theorem 3's proof): each iteration is
    ``(epsilon / sqrt(T ln(1/delta)), delta / T)``-DP by Lemma 2 (the classic Gaussian mechanism)
    for a message of sensitivity ``2L``, then strong composition (Lemma 1):
    ``sigma = 2L sqrt(2 ln(1.25 T / delta)) sqrt(T ln(1/delta)) / epsilon``.

    Lemma 2 needs the per-iteration epsilon below 1 (a ValueError otherwise). As
    docs/source_mistakes.md records, the composition does not give (epsilon, delta) as written
    (with ``delta' = delta`` it gives about ``sqrt(2) epsilon + epsilon^2/ln(1/delta)`` at total
    delta ``2 delta``); the noise is nonetheless very conservative, as exact accounting of T
    Gaussians shows (``Fit.privacy``).

    Parameters
    ----------
    lipschitz : float
        Lipschitz constant L of the per-sample loss.
    steps : int
        Number of iterations T.
    epsilon : float
        Target epsilon.
    delta : float
        Target delta, in (0, 1).

    Returns
    -------
    float
        The noise standard deviation of each party's message per iteration.
    """
    eps_iteration = epsilon / math.sqrt(steps * math.log(1.0 / delta))
    if eps_iteration >= 1.0:
        raise ValueError(f'calibration="paper" needs the per-iteration epsilon '
                         f"epsilon / sqrt(T ln(1/delta)) = {eps_iteration:.3g} below 1 (Lemma 2 "
                         "of the multi-party SGD notes, the classic Gaussian mechanism); "
                         'use more steps, a smaller epsilon, or calibration="pld"')
    return gaussian_sigma_classic(2.0 * lipschitz, eps_iteration, delta / steps)


def jayaraman_paper_sigma(sensitivity, steps, epsilon, delta):
    """Jayaraman et al. 2018's noise (as in Chen's 2019 slides):
    ``sigma^2 = 2 Delta^2 T ln(1/delta) / epsilon^2``, which for ``Delta = 2L/(m n_(1))`` is the
    slides' ``8 L^2 T ln(1/delta) / (m^2 n_(1)^2 epsilon^2)``. Through zCDP
    (``rho = T Delta^2 / (2 sigma^2)``) it gives ``(epsilon + epsilon^2 / (4 ln(1/delta)), delta)``,
    slightly more than claimed (docs/source_mistakes.md).

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity Delta of each release.
    steps : int
        Number of releases T.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float
        Target delta, in (0, 1).

    Returns
    -------
    float
        ``sigma = Delta sqrt(2 T ln(1/delta)) / epsilon``.
    """
    return sensitivity * math.sqrt(2.0 * steps * math.log(1.0 / delta)) / epsilon


def _coordinator_step(theta, received, eta, reg_scale, radius):
    """``theta <- Pi(theta - eta (sum of what B received + reg_scale theta))``; the sum is taken
    in party order. ``received`` is (m, p) (each party's message) or (p,) (the aggregate)."""
    total = np.array(received[0] if received.ndim == 2 else received, dtype=float)
    if received.ndim == 2:
        for row in received[1:]:
            total += row
    return scale_onto_ball(theta - eta * (total + reg_scale * theta), radius)


def _output_weights(output, steps):
    """Weights of theta_1 .. theta_T in the released parameters."""
    if output == "last":
        w = np.zeros(steps)
        w[-1] = 1.0
        return w
    if output == "average":
        return np.full(steps, 1.0 / steps)
    k = np.arange(1, steps + 1, dtype=float)       # Lacoste-Julien, Schmidt & Bach 2012
    return 2.0 * k / (steps * (steps + 1.0))


class SecureAggregator:
    """Secure aggregation, simulated: takes the parties' shares and reveals only their sum plus
    one Gaussian draw ``N(0, sigma^2 I)`` from its own Generator. Nobody sees a share.

    Parameters
    ----------
    sigma : float
        Standard deviation of the noise added to the sum.
    rng : numpy.random.Generator
        The aggregator's own source of noise.
    """

    def __init__(self, sigma, rng):
        self.sigma = sigma
        self._rng = rng

    def aggregate(self, shares):
        """The sum of ``shares`` (in order) plus one noise draw: all that is revealed."""
        total = np.array(shares[0], dtype=float)
        for share in shares[1:]:
            total += share
        if self.sigma > 0.0:
            total += self.sigma * self._rng.standard_normal(total.shape[0])
        return total


@dataclasses.dataclass(frozen=True, eq=False)
class GradientTranscript:
    """Everything the coordinator B saw in a :func:`multiparty_gd` run.

    Attributes
    ----------
    noise : {"per_party", "secure_aggregation"}
    theta0 : ndarray, shape (p,)
        The starting point B broadcast (public: zero, or drawn by B independently of the data).
    messages : ndarray
        ``"per_party"``: shape (T, m, p), party j's message ``G_j^(k)`` at iteration k.
        ``"secure_aggregation"``: shape (T, p), the noisy aggregate (B never sees a share).
    step_sizes : ndarray, shape (T,)
    reg_scale : float
        The regulariser's public gradient term B adds: ``n lambda`` (SGD2, sum form) or
        ``lambda`` (mean form).
    radius : float
        Projection radius.
    output : str
        How the released parameters combine the iterates.
    """

    noise: str
    theta0: np.ndarray
    messages: np.ndarray
    step_sizes: np.ndarray
    reg_scale: float
    radius: float
    output: str

    def __post_init__(self):
        for name in ("theta0", "messages", "step_sizes"):
            getattr(self, name).flags.writeable = False

    def iterates(self):
        """theta_0 .. theta_T recomputed from the messages alone, shape (T + 1, p)."""
        thetas = np.empty((self.messages.shape[0] + 1, self.theta0.shape[0]))
        theta = self.theta0.copy()
        thetas[0] = theta
        for k, (eta, received) in enumerate(zip(self.step_sizes, self.messages)):
            theta = _coordinator_step(theta, received, eta, self.reg_scale, self.radius)
            thetas[k + 1] = theta
        return thetas

    def replay(self):
        """The released parameters, recomputed from the messages alone (bit-identical)."""
        thetas = self.iterates()[1:]
        released = np.zeros(thetas.shape[1])
        for weight, theta in zip(_output_weights(self.output, thetas.shape[0]), thetas):
            if weight != 0.0:
                released += weight * theta
        return released


@lifecycle
def multiparty_gd(problem, parties, epsilon=None, delta=None, *, noise="per_party", steps=None,
                  step_size=None, calibration="pld", sigma=None, weighting=None, output=None,
                  initial="zero", record_transcript=False, transcript_limit=2 ** 28,
                  secure=False, rng=None, accountant=None):
    r"""Differentially private ERM by gradient descent across parties, each holding its rows.

    Two protocols, differing in who adds the noise (docs/multiparty.md):

    **SGD2 of the multi-party SGD notes, ``noise="per_party"``.** Sum form. At iteration
    ``k = 1 .. T`` every party j sends B its noisy gradient sum; B adds the regulariser's
    (public) gradient, steps and projects, and broadcasts ``theta_k``:

    .. math::

        G_j^{(k)} &= \sum_{i \in S_j} \nabla \ell(\theta_{k-1}; x_i, y_i) + b_j^{(k)},
        \qquad b_j^{(k)} \sim N(0, \sigma^2 I_p) \text{ drawn by party } j, \\
        \theta_k &= \Pi\!\left(\theta_{k-1} - \eta_k \left(\textstyle\sum_j G_j^{(k)}
        + n\lambda\theta_{k-1}\right)\right).

    Each message has L2 sensitivity ``2L`` (replace-one, L the Problem's Lipschitz constant)
    and a record enters one message per iteration. Step sizes: ``"strongly_convex"`` (default
    when ``reg > 0``) ``eta_k = 2 / (n lambda (k + 1))`` with the weighted average
    ``sum_k 2k theta_k / (T(T+1))`` (Lacoste-Julien, Schmidt & Bach 2012), for which Theorem 4's
    bound holds (:func:`dpsolve.solvers.multiparty_gd.multiparty_gd_bound`); ``"lipschitz"``
    ``eta_k = ||C||_2 / sqrt(k (n^2 G^2 + m p sigma^2))`` with the plain average.

    **Gradient perturbation (Jayaraman et al. 2018), ``noise="secure_aggregation"``.**
    Mean form. The parties' gradients are summed inside secure aggregation, which adds one noise
    draw and reveals only the noisy sum:

    .. math::

        \theta_{k} = \Pi\!\left(\theta_{k-1} - \eta\left(\nabla J(\theta_{k-1}) + \lambda
        \theta_{k-1} + z_k\right)\right), \qquad z_k \sim N(0, \sigma^2 I_p),

    with ``J(theta) = (1/m) sum_j (1/n_j) sum_{i in S_j} loss`` (``weighting="party"``, the
    paper's objective, sensitivity ``2L/(m n_(1))``) or the Problem's own ``(1/n) sum_i loss``
    (``weighting="pooled"``, sensitivity ``2L/n``, never larger; the two agree when the parties
    are of equal size). Step ``eta = 1/(beta + lambda)``; the last iterate is released.

    Parameters
    ----------
    {{problem}}
    parties : Parties
        A partition of ``problem``'s rows (``parties.problem is problem``).
    epsilon, delta : float
        Target privacy (replace-one neighbours). Leave epsilon None when passing ``sigma``.
    noise : {"per_party", "secure_aggregation"}
        Who adds the noise: every party to its own message (SGD2), or secure aggregation to
        the sum (Jayaraman et al.).
    steps : int, optional
        T >= 1. Default: the fewest iterations in [1, 10^4] within 10% of the best value of the
        protocol's bound (:func:`dpsolve.solvers.multiparty_gd.multiparty_gd_bound`, or
        :func:`dpsolve.gradient_perturbation_bound`) at the calibrated noise; public
        constants only. Needs ``reg > 0`` (and a smooth loss for secure aggregation); otherwise
        pass ``steps``.
    step_size : str or float, optional
        ``"per_party"``: ``"strongly_convex"`` or ``"lipschitz"`` (see above), or a constant
        ``eta > 0``. ``"secure_aggregation"``: ``"smooth"`` (``1/(beta + lambda)``, default; needs
        a smooth loss) or a constant ``eta > 0``.
    calibration : {"pld", "rdp", "zcdp", "strong", "basic", "paper"}
        ``"paper"``: :func:`~dpsolve.privacy.calibration.multiparty_gd_paper_sigma` or
        :func:`~dpsolve.privacy.calibration.jayaraman_paper_sigma`. ``"zcdp"`` with secure
        aggregation: the exact zCDP inversion
        :func:`~dpsolve.privacy.calibration.zcdp_inversion_sigma`. Otherwise the least noise the
        accountant certifies for T Gaussian releases of the sensitivity; ``"pld"`` (default) is
        exact.
    sigma : float, optional
        Explicit noise standard deviation (each party's, or the aggregate's); the fit claims
        what the PLD accountant certifies at ``delta``.
    weighting : {"party", "pooled"}, optional
        Secure aggregation only; default ``"party"`` (Jayaraman et al.).
    output : {"last", "average", "weighted_average"}, optional
        Default: ``"weighted_average"`` for the strongly convex SGD2 steps, ``"average"`` for the
        Lipschitz ones, ``"last"`` otherwise (the sources' theta_T).
    initial : {"zero", "uniform"}
        SGD2's theta_0: zero, or drawn by B uniformly from C (the notes' step 1; needs a
        radius). Secure aggregation starts from zero.
    record_transcript : bool, default False
        Return what B saw as ``Fit.transcript`` (:class:`GradientTranscript`); its ``replay()``
        gives back the released parameters bit for bit.
    transcript_limit : int, default 2**28
        Largest transcript in bytes; a larger one raises ValueError before any work.
    rng : None, int, SeedSequence or Generator
        Spawned into one independent Generator per party, and one for B (``initial``) or the
        secure aggregator: no noise is shared or reused.
    {{secure}}
    {{accountant}}

    Returns
    -------
    Fit
        ``sigma`` (each party's, or the aggregate's), ``noise`` (``"gaussian_per_party"`` or
        ``"gaussian"``), ``dp_event`` (T Gaussians of the sensitivity), ``observers`` (outsider,
        coordinator, parties: the same here, since B sees exactly what is released and the
        parties see B's broadcasts), and ``settings``.

    Notes
    -----
    Privacy. Under replace-one neighbours exactly one party's message (or the aggregate) moves,
    by at most the sensitivity, at each iteration; the T iterations compose adaptively, and T
    Gaussians compose exactly to one with ``mu = sqrt(T) Delta / sigma`` (PLD). Nothing else
    leaves a party: the un-noised gradient sums stay inside it (secure aggregation's shares are
    seen by no one). Without a radius the iterates are projected onto the ball of radius
    :func:`dpsolve.minimizer_norm_bound`, which contains the minimiser.

    Source: Algorithm SGD2 and Theorems 3-4 of the multi-party SGD notes (after
    Bassily-Smith-Thakurta 2014); Jayaraman et al. 2018's multi-party gradient perturbation, as
    presented in Chen's 2019 slides (docs/sources.md). The sources' mistakes are in
    docs/source_mistakes.md and in
    :func:`~dpsolve.privacy.calibration.multiparty_gd_paper_sigma` and
    :func:`~dpsolve.privacy.calibration.jayaraman_paper_sigma`.
    """


# -- plan: defaults and noise from public constants ------------------------------------------------
def plan(problem, parties, target, options):
    """The protocol's settings, T, the noise and the step sizes, from public constants."""
    epsilon, delta = target.epsilon, target.delta
    noise, steps, step_size = options["noise"], options["steps"], options["step_size"]
    calibration, sigma = options["calibration"], options["sigma"]
    weighting, output, initial = options["weighting"], options["output"], options["initial"]
    record_transcript, transcript_limit = options["record_transcript"], options["transcript_limit"]
    aggregated = noise == "secure_aggregation"
    L = check_finite_lipschitz("multiparty_gd", problem)
    n, p, m, lam = problem.n, problem.p, parties.m, problem.reg
    if weighting is None:
        weighting = "party" if aggregated else "pooled"
    if not aggregated and weighting != "pooled":
        raise ValueError('weighting="party" is Jayaraman et al.\'s objective and needs '
                         'noise="secure_aggregation"; noise="per_party" (the multi-party SGD '
                         "notes' protocol) minimises the pooled sum")
    if initial == "uniform" and (aggregated or problem.radius is None):
        raise ValueError('initial="uniform" (step 1 of the multi-party SGD notes\' protocol) '
                         'needs noise="per_party" and '
                         "a Problem with a radius")
    beta = problem.smoothness + lam
    step_rule, eta = _step_rule(problem, noise, step_size, beta)
    if output is None:
        output = {"strongly_convex": "weighted_average", "lipschitz": "average"}.get(step_rule,
                                                                                    "last")
    if aggregated:
        # one record moves J's gradient by 2L/(m n_j) <= 2L/(m n_(1)), or F's by 2L/n
        sensitivity = 2.0 * L / (m * parties.smallest) if weighting == "party" else 2.0 * L / n
    else:
        sensitivity = 2.0 * L
    radius = problem.radius if problem.radius is not None else minimizer_norm_bound(problem)
    if steps is None:
        if sigma is not None or epsilon is None or delta is None:
            raise TypeError("multiparty_gd without a calibration (explicit sigma) needs steps")
        steps = _default_steps(problem, m, noise, step_rule, sensitivity, L, epsilon, delta,
                               calibration, beta)
    size = steps * (m if not aggregated else 1) * p * 8
    if record_transcript and size > transcript_limit:
        raise ValueError(f"the transcript of {steps} iterations would take {size:,} bytes, above "
                         f"transcript_limit={transcript_limit:,}: raise the limit or run fewer "
                         "steps")
    sigma, epsilon, delta, calibration = _noise(problem, noise, steps, sensitivity, L, epsilon,
                                                delta, sigma, calibration)
    step_sizes = _step_sizes(problem, m, step_rule, eta, steps, sigma, L, radius, beta)
    return Plan(epsilon=epsilon, delta=delta, method=calibration,
                event=gaussian_event(sigma, sensitivity, steps=steps), sigma=sigma, steps=steps,
                noise={("gaussian" if aggregated else "gaussian_per_party"): sigma},
                settings={"noise": noise, "weighting": weighting, "step_size": step_rule,
                          "eta": float(step_sizes[0]) if step_rule in ("smooth", "constant")
                          else None,
                          "output": output, "initial": initial, "radius": radius,
                          "sensitivity": sensitivity},
                run_inputs={"step_sizes": step_sizes, "reg_scale": lam if aggregated else n * lam,
                       "record_transcript": record_transcript},
                source=JAYARAMAN_SOURCE if aggregated else SGD2_SOURCE)


def _step_rule(problem, noise, step_size, beta):
    """The step-size rule (``"constant"`` for a number) and the constant step, or None."""
    lam = problem.reg
    if step_size is None:
        step_size = ("smooth" if noise == "secure_aggregation"
                     else "strongly_convex" if lam > 0.0 else "lipschitz")
    if isinstance(step_size, str):
        step_rule, eta = check_choice(step_size, "step_size", STEP_RULES[noise]), None
    else:
        step_rule, eta = "constant", check_real(step_size, "step_size", low=0.0)
    if step_rule == "strongly_convex" and lam <= 0.0:
        raise ValueError('step_size="strongly_convex" needs problem.reg > 0')
    if step_rule == "lipschitz" and problem.radius is None:
        raise ValueError('step_size="lipschitz" needs a Problem with a radius')
    if step_rule == "smooth" and not math.isfinite(beta):
        raise ValueError(f"the {problem.loss} loss is not smooth, so step_size has no default "
                         "for secure aggregation: pass a constant step_size")
    return step_rule, eta


def _noise(problem, noise, steps, sensitivity, L, epsilon, delta, sigma, calibration):
    """``(sigma, epsilon, delta, method)``: the source's formula, an accountant's least noise,
    or the explicit sigma (:func:`~dpsolve.privacy.calibration.gaussian_sigma`)."""
    aggregated = noise == "secure_aggregation"
    if aggregated and sigma is None and calibration == "zcdp":
        # the closed form is the exact zCDP inversion (the accountant's search is within 1e-3)
        epsilon, delta = float(epsilon), float(delta)         # checked (SPEC.accepts)
        sigma = check_noise_scale("multiparty_gd",
                                  zcdp_inversion_sigma(sensitivity, steps, epsilon, delta),
                                  epsilon, "noise standard deviation")
        warn_large_delta(delta, problem.n, stacklevel=5)     # at the caller of multiparty_gd
        return sigma, epsilon, delta, calibration

    def paper(e, d):                    # (e, d) checked (SPEC.accepts)
        e, d = float(e), float(d)
        if aggregated:
            return jayaraman_paper_sigma(sensitivity, steps, e, d)
        return multiparty_gd_paper_sigma(L, steps, e, d)

    return gaussian_sigma("multiparty_gd", n=problem.n, epsilon=epsilon, delta=delta,
                          sigma=sigma, calibration=calibration, calibrations=CALIBRATIONS,
                          paper=paper, sensitivity=sensitivity, steps=steps)


def _step_sizes(problem, m, step_rule, eta, steps, sigma, L, radius, beta):
    """``eta_1 .. eta_T`` (public: they depend on sigma, not on the data)."""
    k = np.arange(1, steps + 1, dtype=float)
    n, p, lam = problem.n, problem.p, problem.reg
    if step_rule == "strongly_convex":
        return 2.0 / (n * lam * (k + 1.0))
    if step_rule == "lipschitz":
        G = L + lam * radius
        return problem.diameter / np.sqrt(k * (n * n * G * G + m * p * sigma * sigma))
    return np.full(steps, 1.0 / beta if step_rule == "smooth" else eta)


def _default_steps(problem, m, noise, step_rule, sensitivity, L, epsilon, delta, calibration,
                   beta):
    """Fewest T in [1, 10^4] within 10% of the best bound at the calibrated noise."""
    if problem.reg <= 0.0:
        raise ValueError("steps has no default without reg > 0 (the default minimises a strongly "
                         "convex bound): pass steps")
    grid, sigma = _steps_grid_noise(noise, sensitivity, L, epsilon, delta, calibration)
    if noise == "per_party":
        if step_rule != "strongly_convex":
            raise ValueError('steps has a default only with step_size="strongly_convex": '
                             "pass steps")
        values = multiparty_gd_bound(problem, m, sigma, grid)
    else:
        if not math.isfinite(beta) or step_rule != "smooth":
            raise ValueError("steps has a default only for a smooth loss with the default step "
                             "size: pass steps")
        values = gradient_perturbation_bound(problem, grid, sigma)
    return fewest_steps_near_best(grid, values)


def _steps_grid_noise(mode, sensitivity, lipschitz, epsilon, delta, calibration):
    """sigma for T = 1 .. MAX_DEFAULT_STEPS under the paper formula (inf where it does not
    apply) or exact accounting (any accountant)."""
    grid = np.arange(1, MAX_DEFAULT_STEPS + 1)
    if calibration != "paper":
        return grid, exact_gaussian_sigma(sensitivity, grid, epsilon, delta)
    # the formulas of multiparty_gd_paper_sigma and jayaraman_paper_sigma over the grid at once,
    # with inf where Lemma 2's per-iteration epsilon is not below 1
    if mode == "secure_aggregation":
        return grid, sensitivity * np.sqrt(2.0 * grid * math.log(1.0 / delta)) / epsilon
    eps_it = epsilon / np.sqrt(grid * math.log(1.0 / delta))
    sigma = np.full(grid.shape, np.inf)
    ok = eps_it < 1.0
    sigma[ok] = (2.0 * lipschitz * np.sqrt(2.0 * np.log(1.25 * grid[ok] / delta)) / eps_it[ok])
    return grid, sigma


# -- run: the protocol -----------------------------------------------------------------------------
def run(problem, parties, plan, rng):
    """T iterations of the protocol: the parties' messages, B's step, the running release."""
    settings, state, steps = plan.settings, plan.run_inputs, plan.steps
    m, p = parties.m, problem.p
    streams = rng.spawn(m + 1)      # one per party, and one for B or the secure aggregator
    theta = _initial_point(settings["initial"], p, settings["radius"], streams[m])
    theta0 = theta.copy()
    receive = _receiver(problem, parties, plan, streams)
    step_sizes, reg_scale, radius = state["step_sizes"], state["reg_scale"], settings["radius"]
    weights = _output_weights(settings["output"], steps)
    released = np.zeros(p)
    log = None
    if state["record_transcript"]:
        log = np.empty((steps, p) if settings["noise"] == "secure_aggregation" else (steps, m, p))
    for t in range(steps):
        received = receive(theta)
        if log is not None:
            log[t] = received
        theta = _coordinator_step(theta, received, step_sizes[t], reg_scale, radius)
        if weights[t] != 0.0:
            released += weights[t] * theta
    if settings["noise"] == "per_party":
        parties.map(_sgd2_end)      # no party keeps a noise stream once the run is over
    transcript = None
    if log is not None:
        transcript = GradientTranscript(noise=settings["noise"], theta0=theta0, messages=log,
                                        step_sizes=step_sizes, reg_scale=reg_scale,
                                        radius=radius, output=settings["output"])
    # B sees exactly what is released, and the parties see B's broadcasts
    certified = plan.report.certified_epsilon
    return Released(theta=released, transcript=transcript,
                    observers={"outsider": certified, "coordinator": certified,
                               "parties": certified})


def _initial_point(initial, p, radius, rng):
    """theta_0: zero, or uniform on the ball of ``radius`` (drawn by B, data-independent)."""
    theta = np.zeros(p)
    if initial == "uniform":
        direction = rng.standard_normal(p)
        theta = direction * (radius * rng.random() ** (1.0 / p)
                             / math.sqrt(float(direction @ direction)))
    return theta


def _receiver(problem, parties, plan, streams):
    """What B receives at an iteration, given the broadcast theta: every party's noisy message
    (shape (m, p)), or the secure aggregate (shape (p,)). Each party computes where it is
    (``parties.map``: here, or on its worker for parties on workers)."""
    sigma = plan.sigma
    if plan.settings["noise"] == "per_party":
        parties.map(_sgd2_start, each=streams[:parties.m])      # the streams travel once
        return lambda theta: np.stack(parties.map(_sgd2_message, theta, sigma))
    party_weighted = plan.settings["weighting"] == "party"
    share_weights = [1.0 / (parties.m * party.n) if party_weighted else 1.0 / problem.n
                     for party in parties]
    # the shares stay with the parties until the aggregator sums them (on its worker, for
    # parties on workers); the aggregator's noise stream travels with each round
    stream = [streams[parties.m]]

    def receive(theta):
        shares = parties.map(_share, theta, each=share_weights, gather=False)
        total, stream[0] = parties.reduce(_secure_sum, shares, sigma, stream[0])
        return total
    return receive


# -- the parties' and the aggregator's steps (module-level: sent to Dask workers) ---------------
def _sgd2_start(party, state, stream):
    """Party's side of an SGD2 run: its own noise stream, kept for the run."""
    state["sgd2_stream"] = stream


def _sgd2_end(party, state):
    """The end of an SGD2 run: the party's noise stream is dropped (nothing left from which
    the noise could be drawn again)."""
    state.pop("sgd2_stream", None)


def _sgd2_message(party, state, theta, sigma):
    """The party's SGD2 message at the broadcast ``theta`` (:meth:`Party.sgd2_message`)."""
    return party.sgd2_message(theta, sigma, state["sgd2_stream"])


def _share(party, state, weight, theta):
    """The party's secure-aggregation share at ``theta`` (:meth:`Party.aggregation_share`)."""
    return party.aggregation_share(theta, weight)


def _secure_sum(shares, sigma, rng):
    """The aggregator's step: the noisy sum of the shares (:class:`SecureAggregator`) and the
    advanced noise stream."""
    return SecureAggregator(sigma, rng).aggregate(shares), rng


# -- bound -----------------------------------------------------------------------------------------
def _projection_radius(problem):
    return problem.radius if problem.radius is not None else minimizer_norm_bound(problem)


def multiparty_gd_bound(problem, parties, sigma, steps, *, form="mean"):
    r"""Theorem 4 (eq. 11) of the multi-party SGD notes, SGD2 on a Delta-strongly convex
    objective, explicit constants:

    .. math:: E[L(\theta) - L(\theta^*)] \le \frac{8 m p (\sigma^2 + n^2 G^2)}{n \lambda T}

    in sum form (divided by n for ``form="mean"``), with m parties each adding ``N(0, sigma^2
    I_p)``, ``Delta = lambda`` (``problem.reg``) and ``G = L + lambda R`` the per-sample gradient
    bound over the projection ball (R the radius, or :func:`minimizer_norm_bound`).

    The notes only sketch the proof ("pick eta appropriately"). It holds for
    :func:`dpsolve.multiparty_gd`'s default SGD2 steps ``eta_k = 2/(n lambda (k+1))`` with the
    weighted average: for projected SGD with unbiased gradients of second moment at most
    ``Gt^2 = n^2 G^2 + m p sigma^2`` on an ``n lambda``-strongly convex sum, Lacoste-Julien, Schmidt
    & Bach (2012) give ``2 Gt^2 / (n lambda (T + 1))``, and ``m p (sigma^2 + n^2 G^2) >= Gt^2``.
    ``parties`` is the number of parties m (or a Parties); numpy arrays broadcast over ``sigma``
    and ``steps``.

    Parameters
    ----------
    problem : Problem
        With ``reg > 0`` (lambda); not multinomial.
    parties : int or Parties
        The number of parties m (``>= 1``), or a Parties (its ``m``).
    sigma : float or array_like of float
        Standard deviation of each party's noise per coordinate.
    steps : int or array_like of int
        Number of iterations T.
    form : {"mean", "sum"}, default "mean"
        Normalisation: ``F(theta) - F(theta*)`` (mean form) or ``n`` times it (sum
        form, ``L = n F``).

    Returns
    -------
    float or ndarray
        The bound (explicit constants), broadcast over ``sigma`` and ``steps``.
    """
    check_bound_arguments(problem, 1.0, None, form)
    reject_multinomial(problem, "multiparty_gd_bound (the multi-party SGD notes' Theorem 4)",
                       multinomial_solvers())
    if problem.reg <= 0.0:
        raise ValueError("multiparty_gd_bound (the multi-party SGD notes' Theorem 4) needs a "
                         "strongly convex objective: problem.reg > 0")
    m = parties.m if hasattr(parties, "m") else check_int(parties, "parties", low=1)
    n, p, lam = problem.n, problem.p, problem.reg
    G = problem.lipschitz + lam * _projection_radius(problem)
    sigma = np.asarray(sigma, dtype=float)
    steps = np.asarray(steps, dtype=float)
    value = 8.0 * m * p * (sigma ** 2 + (n * G) ** 2) / (n * lam * steps)
    value = in_form(value, problem, form)
    return float(value) if np.ndim(value) == 0 else value


def bound(problem, parties, plan):
    """Theorem 4 of the multi-party SGD notes for SGD2's strongly convex steps with an average;
    the gradient-perturbation bound for secure aggregation at step ``1/beta``; None otherwise."""
    settings = plan.settings
    if settings["noise"] == "per_party":
        # Theorem 4 is for the strongly convex steps (so reg > 0) and an average of the iterates
        if settings["step_size"] != "strongly_convex" or settings["output"] == "last":
            return None
        return Bound(multiparty_gd_bound(problem, parties, plan.sigma, plan.steps),
                     "multi-party noisy gradient descent bound (multi-party SGD notes' "
                     "Theorem 4, after Bassily-Smith-Thakurta 2014; explicit constants)")
    # the contraction needs step 1/beta (a smooth loss) and a strongly convex objective
    if settings["step_size"] != "smooth" or problem.reg <= 0.0:
        return None
    return Bound(gradient_perturbation_bound(problem, plan.steps, plan.sigma),
                 "gradient perturbation at step 1/beta (Jayaraman et al. 2018)")


def paper_sigma(problem, parties, plan):
    """The source's noise at the plan's target, T and mode (``Hooks.paper_sigma``):
    :func:`jayaraman_paper_sigma` with secure aggregation, else
    :func:`multiparty_gd_paper_sigma`."""
    settings = plan.settings
    if settings["noise"] == "secure_aggregation":
        return jayaraman_paper_sigma(settings["sensitivity"], plan.steps, plan.epsilon,
                                     plan.delta)
    return multiparty_gd_paper_sigma(problem.lipschitz, plan.steps, plan.epsilon, plan.delta)


SPEC = register(SolverSpec(
    accepts=Accepts(explicit_noise="sigma"),
    name="multiparty_gd", function=multiparty_gd,
    works=("the multi-party SGD notes (Algorithm SGD2), after Bassily, Smith & Thakurta 2014",
           "Jayaraman et al. 2018"),
    # the kernels' switch over the margin losses (theta in R^p)
    source=SGD2_SOURCE, needs=("margin", "compiled"),
    partition="parties", neighbours="replace-one record", guarantee="dp",
    parameters=PARAMETERS, plan=plan, run=run, bound=bound, page="multiparty.md",
    transcript_option="record_transcript",
    nonfinite_hint="reduce step_size",
    example={"epsilon": 1.0, "delta": 1e-6, "steps": 50},
    example_problem={"radius": 1.0, "reg": 0.1}, parts=2, hooks=Hooks(paper_sigma=paper_sigma)))
