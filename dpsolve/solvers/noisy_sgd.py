"""Per-sample noisy projected SGD: Algorithm SGD1 of the multi-party SGD notes (after
Bassily-Smith-Thakurta 2014), alone or run by parties that each hold some rows."""
import math

import numpy as np

from .._capabilities import multinomial_solvers
from .._kernels import sgd as _sgd
from .._kernels.stream import Stream
from .._multiparty import sgd1_observer_epsilons, sgd1_protocol
from .._row_ops import kernel_rows
from .._validation import Boolean, InstanceOf, Integer, Options, Real, check_real
from ..bounds import check_bound_arguments, in_form
from ..parties import Parties, check_parties
from ..privacy.accounting import ACCOUNTANTS, UniformSampling, gaussian_event
from ..privacy.calibration import check_finite_lipschitz, gaussian_sigma
from ..problem import reject_multinomial
from ._registry import register
from ._accepts import Accepts
from ._hooks import Hooks
from ._lifecycle import Bound, Plan, Released, SolverSpec, lifecycle

SOURCE = ("Bassily-Smith-Thakurta 2014, 'Private Empirical Risk Minimization: Efficient Algorithms "
          "and Tight Error Bounds', noisy SGD as written up in the multi-party SGD notes "
          "('Multi-party DP write-up 2', Algorithm SGD1, noise (3), step sizes (4))")
# pld cannot account for sampling without replacement, which SGD1's index draws are
CALIBRATIONS = ("paper",) + tuple(a for a in ACCOUNTANTS if a != "pld")
STEP_SIZES = ("lipschitz", "strongly_convex")
# Steps per kernel call: the streams' locks are taken once per call, and Ctrl-C is honoured
# between calls. Chunking does not change the random streams.
_CHUNK = 1 << 20

PARAMETERS = {
    "steps": [None, Integer(1)],
    # every calibration dpsolve knows: the index sampling PLD cannot account for is the plan's
    "calibration": Options(("paper",) + ACCOUNTANTS),
    "sigma": [None, Real(0.0, low_inclusive=True)],  # its upper limit depends on n
    "step_size": Options(STEP_SIZES),
    "parties": [None, InstanceOf(Parties, "dpsolve.Parties")],  # of this Problem: in plan
    "record_transcript": Boolean(),
    "transcript_limit": Integer(0),
}


def noisy_sgd_paper_sigma(n, lipschitz, epsilon, delta):
    """Noise standard deviation of Algorithm SGD1 in the multi-party SGD notes, eq. (3):
    ``sigma = 4 L n ln(1.25 n^2 / delta) / epsilon``.

    The notes state it for ``0 < epsilon < 1`` and ``delta < 1/n^3``. Its privacy proof applies
    the Gaussian mechanism (Lemma 2) to steps of sensitivity ``2 n L``, which would need
    ``sigma >= 4 n L sqrt(2 ln(1.25 n^2/delta) ln(1/delta)) / epsilon``, somewhat more than (3);
    and its composition (Lemma 1 with ``delta' = delta^(1/3)``) gives a total delta near
    ``delta + delta^(1/3)``, not delta (docs/noisy_sgd.md, "Privacy", (a) and (b)). The noise
    is nonetheless (epsilon, delta)-DP with much room to spare, as the RDP accountant certifies
    (``Fit.certified_epsilon``); it is kept as the notes state it so results can be compared.

    Parameters
    ----------
    n : int
        Number of records.
    lipschitz : float
        Lipschitz constant L of the per-sample loss.
    epsilon : float
        Target epsilon (the notes: in (0, 1)).
    delta : float
        Target delta (the notes: below ``1/n^3``).

    Returns
    -------
    float
        ``sigma = 4 L n ln(1.25 n^2 / delta) / epsilon``.
    """
    return 4.0 * lipschitz * n * math.log(1.25 * n * n / delta) / epsilon


@lifecycle
def noisy_sgd(problem, epsilon=None, delta=None, *, steps=None, calibration="paper", sigma=None,
              step_size="lipschitz", parties=None, record_transcript=False,
              transcript_limit=2 ** 28, secure=False, rng=None, accountant=None):
    r"""Differentially private ERM by per-sample noisy projected SGD (Algorithm SGD1 of the
    multi-party SGD notes, after Bassily-Smith-Thakurta 2014).

    Minimises the mean-form objective of ``problem`` (its sum form ``L = n F``, as in the notes)
    over the ball C. Starting from ``theta_0 = 0``, for ``t = 1 .. T``:

    .. math::

        i_t &\sim \mathrm{Uniform}\{1..n\} \text{ (with replacement)}, \\
        G_t &= n \left(\nabla \ell(\theta_t; x_{i_t}, y_{i_t}) + \lambda \theta_t\right) + z_t,
        \qquad z_t \sim N(0, \sigma^2 I_p), \\
        \theta_{t+1} &= \Pi_C(\theta_t - \eta(t) G_t),

    and ``theta_T`` is returned. Step sizes: ``"lipschitz"`` is the notes' eq. (4),
    ``eta(t) = ||C||_2 / sqrt(t (n^2 G^2 + p sigma^2))`` with ``||C||_2 = 2R`` and
    ``G = L + lambda R`` the per-sample gradient bound; ``"strongly_convex"`` is
    ``eta(t) = 1 / (lambda n t)`` (Theorem 2, case 2, with Delta = lambda).

    Parameters
    ----------
    {{problem}}
    epsilon : float, optional
        Target epsilon. Leave None when passing ``sigma``.
    delta : float
        Target delta. With ``sigma``, the delta at which the certified epsilon is reported.
        A :class:`~dpsolve.privacy.PrivacyWarning` is raised for ``delta >= 1/n``.
    steps : int, optional
        Number of steps T (default ``n**2``, as in the notes).
    calibration : {"paper", "rdp", "zcdp", "strong", "basic"}
        ``"paper"``: the notes' noise (3), see :func:`noisy_sgd_paper_sigma` (needs
        ``0 < epsilon < 1`` and ``delta < 1/n^3``). An accountant name: the least noise that
        accountant certifies for T steps, each a Gaussian of sensitivity ``2 n L`` on one record
        drawn uniformly (:func:`dpsolve.privacy.calibrate`); ``"rdp"`` is the tightest
        (``"pld"`` cannot account for the index sampling). Any ``epsilon > 0``, ``0 < delta < 1/2``.
    sigma : float, optional
        Explicit noise standard deviation (``>= 0``) instead of a calibration; the fit then reports
        the epsilon that the RDP accountant certifies at ``delta`` (``inf`` for ``sigma = 0``).
    step_size : {"lipschitz", "strongly_convex"}
        ``"lipschitz"`` needs a bounded C; ``"strongly_convex"`` needs ``problem.reg > 0``.
    parties : Parties, optional
        Run the notes' multi-party form of SGD1: the rows are held by ``parties`` (built on this
        ``problem``); the coordinator B draws the index sequence, the owner of ``i_t`` computes
        ``G_t`` from its own row and draws its noise, and B broadcasts it, so every party's copy
        of theta is the same. The result is bit-identical to the single-party run with the same
        seed (B draws from the index stream, the parties from the noise stream, in protocol
        order); the fit also reports the epsilon against each observer (``Fit.observers``).
        Parties on Dask workers (``parties.on(client)``) compute each ``G_t`` on the owner's
        worker, with the same bits; each step is then a round trip (milliseconds), so
        ``steps`` must be given (docs/multiparty.md, "Parties on workers").
    record_transcript : bool, default False
        With ``parties``: run the protocol message by message in Python (each party computing
        on its own rows only) and return what B saw as ``Fit.transcript``
        (:class:`~dpsolve._multiparty.NoisySGDTranscript`). Slow (tens of microseconds a step):
        for small runs. Without it the same protocol runs in C, except for parties on workers,
        which always run the protocol (and return the transcript only when asked).
    transcript_limit : int, default 2**28
        Largest transcript, in bytes (``T (p + 2) 8``); a larger one raises ValueError before
        any work (with parties on workers too, whose protocol holds every message).
    rng : None, int, SeedSequence or Generator
        Seeds the two streams the loop draws from: ``Stream.from_generator(rng)`` twice, first
        for the index draws, then for the noise (:class:`dpsolve.privacy.Stream`: SFC64 with a
        ziggurat, inlined in C, about three times cheaper per normal than numpy's Generator).
        ``rng`` itself advances by six 64-bit words. The same seed gives bit-identical results,
        whether the noise is drawn inline or a block ahead on a second core.
    {{secure}}
    {{accountant}}

    Returns
    -------
    Fit
        ``theta = theta_T``, sigma, and its privacy: the report (claim, method, and the epsilon
        the RDP accountant certifies) and the DpEvent, the ``T``-fold self-composition of a
        Gaussian with noise multiplier ``sigma / (2 n L)`` on a sample of one record out of n.
        With ``parties``, ``observers`` maps ``"outsider"``, ``"coordinator"`` and ``"parties"``
        to the epsilon certified against each at ``delta``.

    Notes
    -----
    Privacy. Neighbours differ in one record (replace-one), so each ``G_t`` has L2 sensitivity
    ``2 n L`` (the regulariser term is the same for both datasets). The guarantee covers an
    observer of ``theta_T`` or of the whole transcript ``{G_t}`` who does not know the index
    sequence, which stays inside the solver: amplification by sampling depends on that
    (docs/noisy_sgd.md, "Privacy"). The notes' own proof of (3) has gaps (see
    :func:`noisy_sgd_paper_sigma`); the RDP accountant certifies every fit's noise independently
    (``Fit.privacy``), and a :class:`~dpsolve.privacy.PrivacyWarning` is raised if it certifies
    less than claimed.

    Against whom (docs/multiparty.md, "Privacy against each observer"): ``Fit.privacy`` is the
    guarantee against an outsider. B chose the index sequence, so against B there is no
    amplification: row i's privacy is the composition of the Gaussians at the steps that drew it
    (the worst row is reported, exactly, by PLD). The other parties learn which party computed each
    step, so for party j's rows the sampling rate is ``1/n_j`` over party j's steps (RDP, worst
    party). A PrivacyWarning is raised when either exceeds the claim.

    Utility: Theorem 2 of the notes, see :mod:`dpsolve.bounds`.

    Source: the multi-party SGD notes ("Multi-party DP write-up 2: Stochastic Gradient Descent",
    built on Bassily-Smith-Thakurta 2014; docs/sources.md), Algorithm SGD1, eqs. (3) and (4),
    Theorem 2.
    """


def plan(problem, partition, target, options):
    """Noise, steps and step sizes from public constants (SGD1's eqs. (3) and (4))."""
    epsilon, delta = target.epsilon, target.delta
    steps, calibration, sigma = options["steps"], options["calibration"], options["sigma"]
    step_size, parties = options["step_size"], options["parties"]
    record_transcript, transcript_limit = options["record_transcript"], options["transcript_limit"]
    n, p = problem.n, problem.p
    if parties is not None:
        check_parties(problem, parties)
    if record_transcript and parties is None:
        raise ValueError("record_transcript=True needs parties: the transcript is the "
                         "messages between them")
    L = check_finite_lipschitz("noisy_sgd", problem)
    remote = getattr(parties, "remote", False)
    if remote and steps is None:
        raise ValueError(f"steps must be given with parties on workers (Parties.on): each step "
                         f"is a round trip of milliseconds, and the default T = n**2 = "
                         f"{n * n:,} would take that many")
    steps = n * n if steps is None else steps
    # parties on workers always run the protocol, which holds every message
    protocol = record_transcript or remote
    if protocol and steps * (p + 2) * 8 > transcript_limit:
        raise ValueError(f"the transcript of {steps} steps would take {steps * (p + 2) * 8:,} "
                         f"bytes, above transcript_limit={transcript_limit:,}: raise the limit "
                         "or run fewer steps")
    if step_size == "lipschitz" and problem.radius is None:
        raise ValueError('step_size="lipschitz" needs a bounded C: give the Problem a radius, '
                         'or use step_size="strongly_convex" with reg > 0')
    if step_size == "strongly_convex" and problem.reg <= 0.0:
        raise ValueError('step_size="strongly_convex" needs problem.reg > 0')

    sensitivity = 2.0 * n * L              # replace-one sensitivity of each G_t
    sampling = UniformSampling(n, 1)        # one index drawn uniformly per step
    if sigma is None and calibration == "pld":
        raise ValueError('calibration="pld" is not available for noisy_sgd: dp_accounting\'s '
                         'PLD cannot account for its index sampling; use "rdp", the tightest')

    def paper(epsilon, delta):
        epsilon = check_real(epsilon, "epsilon", low=0.0, high=1.0)
        delta = check_real(delta, "delta", low=0.0, high=1.0 / n ** 3)
        return noisy_sgd_paper_sigma(n, L, epsilon, delta)

    sigma, epsilon, delta, calibration = gaussian_sigma(
        "noisy_sgd", n=n, epsilon=epsilon, delta=delta, sigma=sigma, calibration=calibration,
        calibrations=CALIBRATIONS, paper=paper, sensitivity=sensitivity, steps=steps,
        sampling=sampling)
    if step_size == "lipschitz":
        schedule = _sgd.SCHEDULES["inv_sqrt"]
        eta0 = problem.diameter / math.sqrt(n * n * problem.gradient_bound ** 2 + p * sigma ** 2)
    else:
        schedule = _sgd.SCHEDULES["inv"]
        eta0 = 1.0 / (problem.reg * n)
    return Plan(epsilon=epsilon, delta=delta, method=calibration,
                event=gaussian_event(sigma, sensitivity, steps=steps, sampling=sampling),
                sigma=sigma, steps=steps,
                run_inputs={"schedule": schedule, "eta0": eta0, "step_size": step_size,
                       "parties": parties, "record_transcript": record_transcript,
                       "protocol": protocol, "sensitivity": sensitivity})


def run(problem, partition, plan, rng):
    """T steps in C (or, with a transcript or parties on workers, the protocol message by
    message)."""
    state, steps, sigma = plan.run_inputs, plan.steps, plan.sigma
    parties = state["parties"]
    indices, noise = Stream.from_generator(rng), Stream.from_generator(rng)
    theta = np.zeros(problem.p)
    radius = math.inf if problem.radius is None else problem.radius
    counts = None if parties is None else np.zeros(problem.n, dtype=np.intp)
    transcript = None
    if state["protocol"]:
        t = np.arange(1, steps + 1, dtype=float)
        step_sizes = state["eta0"] / (np.sqrt(t) if state["step_size"] == "lipschitz" else t)
        theta, transcript = sgd1_protocol(problem, parties, steps, sigma, step_sizes, radius,
                                          indices, noise)
        counts = np.bincount(transcript.index, minlength=problem.n)
        if not state["record_transcript"]:
            transcript = None
    else:
        loss = problem.loss_object
        # every step runs, whatever the iterates (no early exit on an iterate)
        for t0 in range(1, steps + 1, _CHUNK):
            _sgd.noisy_sgd_steps(kernel_rows(problem.X), problem.y, loss.kernel_id, loss.kernel_param, theta,
                                 t0, min(t0 + _CHUNK, steps + 1), sigma, state["schedule"],
                                 state["eta0"], problem.reg, radius, indices, noise, counts)
    observers = {}
    if parties is not None:
        observers = {"outsider": plan.report.certified_epsilon,
                     **sgd1_observer_epsilons(parties, counts, sigma, state["sensitivity"],
                                              plan.delta)}
    return Released(theta=theta, transcript=transcript, observers=observers)


def noisy_sgd_lipschitz_bound(problem, epsilon, delta, *, form="mean"):
    r"""Theorem 2, case 1 (eq. 9), of the multi-party SGD notes (after Bassily-Smith-Thakurta
    2014): SGD1 with step sizes (4) on an L-Lipschitz loss.

    .. math:: E[L(\theta_T) - L(\theta^*)] = O\!\left(\frac{G \|C\|_2 \ln^2(1.25 n^2/\delta) \sqrt{p}}{\epsilon}\right)

    in sum form (divided by n for ``form="mean"``), with the O-constant set to 1.
    Infinite without a constraint. Not for multinomial problems (SGD1 does not take them).

    Parameters
    ----------
    problem : Problem
        Gives n, p, ``G = problem.gradient_bound`` and ``||C||_2 = problem.diameter``.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float
        Target delta, in (0, 1).
    form : {"mean", "sum"}, default "mean"
        Normalisation: ``F(theta) - F(theta*)`` (mean form) or ``n`` times it (sum
        form, ``L = n F``).

    Returns
    -------
    float
        The bound (constant 1), ``inf`` without a constraint.
    """
    check_bound_arguments(problem, epsilon, delta, form)
    reject_multinomial(problem, "noisy_sgd_lipschitz_bound (Bassily-Smith-Thakurta 2014)",
                       multinomial_solvers())
    n = problem.n
    value = (problem.gradient_bound * problem.diameter * math.log(1.25 * n * n / delta) ** 2
             * math.sqrt(problem.p) / epsilon)
    return in_form(value, problem, form)


def noisy_sgd_strongly_convex_bound(problem, epsilon, delta, *, form="mean"):
    r"""Theorem 2, case 2 (eq. 10), of the multi-party SGD notes: SGD1 with
    ``eta(t) = 1/(Delta n t)`` on an L-Lipschitz, Delta-strongly convex loss
    (Delta = ``problem.reg``).

    .. math:: E[L(\theta_T) - L(\theta^*)] = O\!\left(\frac{G^2 \ln^3(1.25 n^2/\delta)\, p}{n \Delta \epsilon^2}\right)

    in sum form (divided by n for ``form="mean"``), with the O-constant set to 1. Needs
    ``reg > 0``; infinite when the gradient bound is (no constraint and ``reg > 0``). Not for
    multinomial problems (SGD1 does not take them).

    Parameters
    ----------
    problem : Problem
        With ``reg > 0`` (Delta); gives n, p and ``G = problem.gradient_bound``.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float
        Target delta, in (0, 1).
    form : {"mean", "sum"}, default "mean"
        Normalisation: ``F(theta) - F(theta*)`` (mean form) or ``n`` times it (sum
        form, ``L = n F``).

    Returns
    -------
    float
        The bound (constant 1).
    """
    check_bound_arguments(problem, epsilon, delta, form)
    reject_multinomial(problem, "noisy_sgd_strongly_convex_bound (Bassily-Smith-Thakurta 2014)",
                       multinomial_solvers())
    if problem.reg <= 0.0:
        raise ValueError("the strongly convex bound needs problem.reg > 0")
    n = problem.n
    value = (problem.gradient_bound ** 2 * math.log(1.25 * n * n / delta) ** 3 * problem.p
             / (n * problem.reg * epsilon ** 2))
    return in_form(value, problem, form)


def bound(problem, partition, plan):
    """Theorem 2 of the multi-party SGD notes (O-constant 1), for the step-size rule used."""
    # the claim: the certified epsilon when the noise was given explicitly
    epsilon = plan.report.epsilon if plan.report is not None else plan.epsilon
    if epsilon is None or not math.isfinite(epsilon):
        return None
    if plan.options["step_size"] == "strongly_convex":
        return Bound(noisy_sgd_strongly_convex_bound(problem, epsilon, plan.delta),
                     "Bassily-Smith-Thakurta 2014 noisy SGD bound (multi-party SGD notes' "
                     "Theorem 2, strongly convex, O-constant 1)")
    return Bound(noisy_sgd_lipschitz_bound(problem, epsilon, plan.delta),
                 "Bassily-Smith-Thakurta 2014 noisy SGD bound (multi-party SGD notes' "
                 "Theorem 2, Lipschitz, O-constant 1)")


def paper_sigma(problem, partition, plan):
    """The notes' noise (3) at the plan's target (``Hooks.paper_sigma``):
    :func:`noisy_sgd_paper_sigma`."""
    return noisy_sgd_paper_sigma(problem.n, problem.lipschitz, plan.epsilon, plan.delta)


SPEC = register(SolverSpec(
    accepts=Accepts(explicit_noise="sigma",
                    narrower={("calibration", "paper"): Real(0.0, 1.0)}),
    name="noisy_sgd", function=noisy_sgd,
    works=("Bassily, Smith & Thakurta 2014", "the multi-party SGD notes (Algorithm SGD1)"),
    # the kernels' switch over the margin losses (theta in R^p)
    source=SOURCE, needs=("margin", "compiled"), partition=None,
    neighbours="replace-one record", guarantee="dp", parameters=PARAMETERS, plan=plan, run=run,
    bound=bound, page="noisy_sgd.md", transcript_option="record_transcript",
    hooks=Hooks(paper_sigma=paper_sigma, option_parties=lambda options: options.get("parties")),
    nonfinite_hint="reduce the step size or give the Problem a radius",
    observer_note=", which holds for an outsider who does not know the index sequence",
    example={"epsilon": 0.5, "delta": 1e-6, "steps": 2000, "calibration": "rdp"},
    example_problem={"radius": 1.0, "reg": 0.1},
    sparse=True))
