"""Per-sample noisy projected SGD: Algorithm SGD1 of the multi-party SGD notes (after
Bassily-Smith-Thakurta 2014)."""
import math
import time
import warnings

import numpy as np

from ._calibration import check_finite_lipschitz, gaussian_sigma
from ._kernels import sgd as _sgd
from ._kernels.stream import Stream
from ._secure import check_secure, generator as secure_generator, release
from ._validation import check_choice, check_int, check_real
from .fit import Fit
from ._multiparty import sgd1_observer_epsilons, sgd1_protocol
from .parties import check_parties
from .privacy.accounting import (ACCOUNTANTS, PrivacyWarning, UniformSampling, certify,
                                 gaussian_event)
from .problem import Problem, reject_multinomial

SOURCE = ("multi-party SGD notes after Bassily-Smith-Thakurta 2014 ('Multi-party DP write-up 2'), "
          "Algorithm SGD1, noise (3), step sizes (4)")
# pld cannot account for sampling without replacement, which SGD1's index draws are
CALIBRATIONS = ("paper",) + tuple(a for a in ACCOUNTANTS if a != "pld")
STEP_SIZES = ("lipschitz", "strongly_convex")
# Steps per kernel call: the streams' locks are taken once per call, and Ctrl-C is honoured
# between calls. Chunking does not change the random streams.
_CHUNK = 1 << 20


def sgd1_paper_sigma(n, lipschitz, epsilon, delta):
    """Noise standard deviation of Algorithm SGD1 in the multi-party SGD notes, eq. (3):
    ``sigma = 4 L n ln(1.25 n^2 / delta) / epsilon``.

    The notes state it for ``0 < epsilon < 1`` and ``delta < 1/n^3``. Its privacy proof applies
    the Gaussian mechanism (Lemma 2) to steps of sensitivity ``2 n L``, which would need
    ``sigma >= 4 n L sqrt(2 ln(1.25 n^2/delta) ln(1/delta)) / epsilon``, somewhat more than (3);
    and its composition (Lemma 1 with ``delta' = delta^(1/3)``) gives a total delta near
    ``delta + delta^(1/3)``, not delta (docs/noisy_sgd.md, "Privacy", (a) and (b)). The noise
    is nonetheless (epsilon, delta)-DP with much room to spare, as the RDP accountant certifies
    (``Fit.certified_epsilon``); it is kept as the notes state it so results can be compared.
    """
    return 4.0 * lipschitz * n * math.log(1.25 * n * n / delta) / epsilon


def noisy_sgd(problem, epsilon=None, delta=None, *, steps=None, calibration="paper", sigma=None,
              step_size="lipschitz", parties=None, record_transcript=False,
              transcript_limit=2 ** 28, secure=False, rng=None):
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
    problem : Problem
    epsilon : float, optional
        Target epsilon. Leave None when passing ``sigma``.
    delta : float
        Target delta. With ``sigma``, the delta at which the certified epsilon is reported.
        A :class:`~dpsolve.privacy.PrivacyWarning` is raised for ``delta >= 1/n``.
    steps : int, optional
        Number of steps T (default ``n**2``, as in the notes).
    calibration : {"paper", "rdp", "zcdp", "strong", "basic"}
        ``"paper"``: the notes' noise (3), see :func:`sgd1_paper_sigma` (needs
        ``0 < epsilon < 1`` and ``delta < 1/n^3``). An accountant name: the least noise that
        accountant certifies for T steps, each a Gaussian of sensitivity ``2 n L`` on one record
        drawn uniformly (:func:`dpsolve.privacy.calibrate`); ``"rdp"`` is the tightest
        (``"pld"`` cannot account for the index sampling). Any ``epsilon > 0``, ``0 < delta < 1``.
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
    record_transcript : bool, default False
        With ``parties``: run the protocol message by message in Python (each party computing
        on its own rows only) and return what B saw as ``Fit.transcript``
        (:class:`~dpsolve._multiparty.SGD1Transcript`). Slow (tens of microseconds a step):
        for small runs. Without it the same protocol runs in C.
    transcript_limit : int, default 2**28
        Largest transcript, in bytes (``T (p + 2) 8``); a larger one raises ValueError before
        any work.
    rng : None, int, SeedSequence or Generator
        Seeds the two streams the loop draws from: ``Stream.from_generator(rng)`` twice, first
        for the index draws, then for the noise (:class:`dpsolve.privacy.Stream`: SFC64 with a
        ziggurat, inlined in C, about three times cheaper per normal than numpy's Generator).
        ``rng`` itself advances by six 64-bit words. The same seed gives bit-identical results,
        whether the noise is drawn inline or a block ahead on a second core.
    secure : bool, default False
        ``True``: noise from a fresh stream seeded from the operating system's entropy (``rng``
        must then be None), released parameters rounded to the ``2**-32`` grid, and
        ``wall_time`` NaN. See docs/secure_noise.md for what this does and does not protect
        against. The default is a reproducible research run.

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
    :func:`sgd1_paper_sigma`); the RDP accountant certifies every fit's noise independently
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
    secure = check_secure(secure, rng, record_transcript)
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    reject_multinomial(problem, "noisy_sgd")
    n, p = problem.n, problem.p
    if parties is not None:
        check_parties(problem, parties)
    if not isinstance(record_transcript, (bool, np.bool_)):
        raise TypeError(f"record_transcript must be a bool, got {type(record_transcript).__name__}")
    if record_transcript and parties is None:
        raise ValueError("record_transcript=True needs parties: the transcript is the "
                         "messages between them")
    transcript_limit = check_int(transcript_limit, "transcript_limit", low=0)
    L = check_finite_lipschitz("noisy_sgd", problem)
    steps = n * n if steps is None else check_int(steps, "steps", low=1)
    if record_transcript and steps * (p + 2) * 8 > transcript_limit:
        raise ValueError(f"the transcript of {steps} steps would take {steps * (p + 2) * 8:,} "
                         f"bytes, above transcript_limit={transcript_limit:,}: raise the limit "
                         "or run fewer steps")
    step_size = check_choice(step_size, "step_size", STEP_SIZES)
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
        return sgd1_paper_sigma(n, L, epsilon, delta)

    sigma, epsilon, delta, calibration = gaussian_sigma(
        "noisy_sgd", n=n, epsilon=epsilon, delta=delta, sigma=sigma, calibration=calibration,
        calibrations=CALIBRATIONS, paper=paper, sensitivity=sensitivity, steps=steps,
        sampling=sampling)
    rng = secure_generator(rng, secure)
    indices, noise = Stream.from_generator(rng), Stream.from_generator(rng)

    if step_size == "lipschitz":
        schedule = _sgd.SCHEDULES["inv_sqrt"]
        eta0 = problem.diameter / math.sqrt(n * n * problem.gradient_bound ** 2 + p * sigma ** 2)
    else:
        schedule = _sgd.SCHEDULES["inv"]
        eta0 = 1.0 / (problem.reg * n)
    event = gaussian_event(sigma, sensitivity, steps=steps, sampling=sampling)
    report = certify(event, epsilon, delta, calibration)

    theta = np.zeros(p)
    radius = math.inf if problem.radius is None else problem.radius
    counts = None if parties is None else np.zeros(n, dtype=np.intp)
    transcript = None
    start = time.perf_counter()
    if record_transcript:
        t = np.arange(1, steps + 1, dtype=float)
        step_sizes = eta0 / (np.sqrt(t) if step_size == "lipschitz" else t)
        theta, transcript = sgd1_protocol(problem, parties, steps, sigma, step_sizes, radius,
                                          indices, noise)
        counts = np.bincount(transcript.index, minlength=n)
    else:
        # every step runs, whatever the iterates (no early exit on an iterate)
        for t0 in range(1, steps + 1, _CHUNK):
            _sgd.noisy_sgd_steps(problem.X, problem.y, problem._kind, problem._h, theta, t0,
                                 min(t0 + _CHUNK, steps + 1), sigma, schedule, eta0, problem.reg,
                                 radius, indices, noise, counts)
    # checked on the released theta only: a function of what is released, it reveals nothing more
    if not np.all(np.isfinite(theta)):
        raise FloatingPointError("noisy_sgd produced non-finite parameters; reduce the "
                                 "step size or give the Problem a radius")
    wall_time = time.perf_counter() - start
    observers = {}
    if parties is not None:
        observers = {"outsider": report.certified_epsilon,
                     **sgd1_observer_epsilons(parties, counts, sigma, sensitivity, delta)}
        for who, eps in observers.items():
            if eps > report.epsilon * (1.0 + 1e-9):
                warnings.warn(f"against {who} the certified epsilon is {eps:.4g} at delta="
                              f"{delta:.3g}, above the claimed {report.epsilon:.4g}, which holds "
                              "for an outsider who does not know the index sequence",
                              PrivacyWarning, stacklevel=2)
    fit = Fit(theta=theta, sigma=sigma, steps=steps, solver="noisy_sgd", source=SOURCE,
              wall_time=wall_time, dp_event=event, privacy=report, observers=observers,
              transcript=transcript)
    return release(fit, secure)
