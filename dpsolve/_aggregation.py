"""Multi-party model aggregation with output perturbation (Jayaraman et al. 2018)."""
import math
import time

import numpy as np

from ._perturbation import (NOISES, _check_common, _inner_minimizer, _inner_plan,
                            _inner_settings, _output_noise, _release, _resolve_noise)
from ._secure import check_secure, generator as secure_generator, release
from ._validation import check_choice, check_real
from .fit import Fit
from .parties import check_parties
from .privacy.accounting import certify, pure_event
from .privacy.samplers import laplace_noise

SOURCE = ("Jayaraman et al. 2018, 'Model aggregation with output perturbation', as presented in "
          "Chen's 2019 slides 'Differential Privacy and Distributed Learning'")
SLIDES_NOISE = "laplace_slides"


def aggregated_output_perturbation(problem, parties, epsilon, delta=None, *, noise=None,
                                   tolerance=1e-10, calibration="pld", project=True,
                                   secure=False, rng=None):
    r"""Differentially private ERM across parties by averaging their local minimisers and
    perturbing the average once (Jayaraman et al. 2018).

    Party j minimises its own objective ``F_j(theta) = (1/n_j) sum_{i in S_j} loss + (lambda/2)
    ||theta||^2`` over C to a gap ``g`` (``tolerance``, fixed before solving); the
    average is perturbed inside secure aggregation, and only the result is released:

    .. math:: \hat\theta = \frac1m \sum_{j=1}^m \hat\theta_j + b, \qquad
              \Delta_2 = \frac1m\left(\frac{2L}{n_{(1)}\lambda} + 2\sqrt{\frac{2g}{\lambda}}\right),

    ``n_(1)`` the smallest party. Replacing one record of party j moves ``theta_j*`` by at most
    ``2L/(n_j lambda)`` (as for :func:`output_perturbation`), and each local minimiser (of gap
    at most g) is within ``sqrt(2g/lambda)`` of its exact one, on both datasets.

    Parameters
    ----------
    problem : Problem
        ``reg > 0``, finite Lipschitz constant; any loss (hinge included).
    parties : Parties
        A partition of ``problem``'s rows.
    epsilon : float
        > 0.
    delta : float, optional
        None for ``"gamma_norm"`` and ``"laplace_slides"`` (pure DP); in (0, 1) for
        ``"gaussian"``.
    noise : {"gamma_norm", "gaussian", "laplace_slides"}, optional
        ``"gamma_norm"``: density proportional to ``exp(-epsilon ||b|| / Delta_2)``, epsilon-DP.
        ``"gaussian"``: ``N(0, sigma^2 I)`` calibrated by ``calibration``, (epsilon, delta)-DP.
        ``"laplace_slides"``: the slides' per-coordinate ``Lap(2L / (m n_(1) lambda epsilon))``,
        a labelled reproduction: that scale is set by an L2 sensitivity while per-coordinate
        Laplace needs the L1 one (up to ``sqrt(p)`` times larger), so it is only about
        ``epsilon sqrt(p)``-DP; the fit reports the true value and warns. Default: gamma-norm
        when ``delta`` is None, else Gaussian.
    tolerance : float, default 1e-10
        Gap g of every local solve, in (0, 1e-2], as in :func:`output_perturbation`: research
        mode certifies it or falls back to the fixed-iteration solver (hinge, which has no
        fallback, still raises RuntimeError if a certificate fails); ``secure=True`` always
        runs the fixed-iteration solver, the same public number of steps in every party, and
        refuses a tolerance below its float64 floor before any work.
    calibration : {"pld", "rdp", "zcdp", "strong", "basic", "paper"}
        Gaussian noise only, as in :func:`output_perturbation`.
    project : bool, default True
        Project the release onto C (post-processing).
    rng : None, int, SeedSequence or Generator
        Source of the one noise draw (the secure aggregator's).
    secure : bool, default False
        ``True``: noise from a fresh stream seeded from the operating system's entropy (``rng``
        must then be None), released parameters rounded to the ``2**-32`` grid, and
        ``wall_time`` NaN; every local solve is the fixed-iteration solver (a smooth loss is
        needed: hinge is refused, use huber_hinge). See docs/secure_noise.md for what this does
        and does not protect against. The default is a reproducible research run.

    Returns
    -------
    Fit
        ``steps = 1``; ``settings`` with the sensitivity, the tolerance, ``inner_solver`` and
        ``inner_steps`` (as in :func:`output_perturbation`); ``observers``: B and the parties
        see only the released average, so each gets the same guarantee as an outsider.

    Notes
    -----
    Never released: a party's local minimiser (it is an input to secure aggregation only), the
    gaps reached. Source: Jayaraman et al. 2018, as presented in Chen's 2019 slides
    ("Model Aggregation with Output Perturbation"; see docs/sources.md). The slides' L1/L2
    mistake and what dpsolve does about it: docs/multiparty.md and docs/source_mistakes.md.
    """
    secure = check_secure(secure, rng)
    L, tolerance = _check_common("aggregated_output_perturbation", problem, tolerance)
    check_parties(problem, parties)
    if noise is not None:
        check_choice(noise, "noise", NOISES + (SLIDES_NOISE,))
    if noise == SLIDES_NOISE:
        epsilon = check_real(epsilon, "epsilon", low=0.0)
        if delta not in (None, 0, 0.0):
            raise ValueError('noise="laplace_slides" is a pure-DP mechanism: pass delta=None')
        delta = 0.0
    else:
        noise, epsilon, delta, calibration = _resolve_noise(noise, epsilon, delta, calibration,
                                                            problem.n)
    if not isinstance(project, (bool, np.bool_)):
        raise TypeError(f"project must be a bool, got {type(project).__name__}")
    # one plan for every party: it depends on public constants only (the floor on the whole n,
    # which bounds every party's size)
    plan = _inner_plan(problem, tolerance, "aggregated_output_perturbation", secure)
    rng = secure_generator(rng, secure)
    m, lam, n1 = parties.m, problem.reg, parties.smallest
    dim = int(np.prod(problem.theta_shape))        # noisy coordinates (p, or p K)
    nominal = 2.0 * L / (m * n1 * lam)                  # the slides' sensitivity
    sensitivity = nominal + 2.0 * math.sqrt(2.0 * tolerance / lam) / m

    start = time.perf_counter()
    total = np.zeros(problem.theta_shape)
    for party in parties:                               # inside secure aggregation
        total += _inner_minimizer(party.local_problem(), tolerance, plan, secure)
    average = total / m
    del total
    if noise == SLIDES_NOISE:
        scale = nominal / epsilon
        b = laplace_noise(scale, dim, rng=rng).reshape(average.shape)
        # per-coordinate Laplace of scale s is (Delta_1 / s)-DP, and Delta_1 <= sqrt(p) Delta_2
        event = pure_event(math.sqrt(dim) * sensitivity / scale)
        noise_scales, sigma, method = {"laplace": scale}, None, "paper"
    else:
        b, event, noise_scales, sigma = _output_noise(noise, delta, epsilon, sensitivity,
                                                      calibration, dim, problem.n, rng)
        b = b.reshape(average.shape)
        method = "paper" if noise == "gamma_norm" else calibration
    theta = _release(problem, average, b, project)
    del average
    wall_time = time.perf_counter() - start
    report = certify(event, epsilon, delta, method)
    certified = report.certified_epsilon
    fit = Fit(theta=theta, sigma=sigma, steps=1, solver="aggregated_output_perturbation",
              source=SOURCE, wall_time=wall_time, dp_event=event, privacy=report,
              noise=noise_scales,
              settings={"noise": noise, "tolerance": tolerance, "sensitivity": sensitivity,
                        "project": bool(project), **_inner_settings(plan, secure)},
              observers={"outsider": certified, "coordinator": certified, "parties": certified})
    return release(fit, secure)
