r"""Noise calibration: the sources' formulas, exact Gaussian calibration, and the default-T search.

Every solver and every bound of dpsolve takes its noise from here, so a solver and its bound
always agree on the noise. Three kinds of calibration:

* **The sources' formulas** (``calibration="paper"``), each reproduced as its work states it,
  with the discrepancies recorded in docs/source_mistakes.md: :func:`sgd1_paper_sigma`
  (the multi-party SGD notes' SGD1, after Bassily-Smith-Thakurta 2014), :func:`dpgd_paper_sigma`
  (the DP-GD lecture notes), :func:`sgd2_paper_sigma` (SGD2), :func:`jayaraman_paper_sigma`
  (Jayaraman et al. 2018), :func:`nsgd_paper_sigma` (Huang et al. 2023), the classic Gaussian
  mechanism (Dwork-Roth) for output perturbation, and :func:`objective_perturbation_constants`
  (Chaudhuri-Monteleoni-Sarwate 2011 with Kifer-Smith-Thakurta 2012's constants).
* **Accountants** (``calibration="pld"``, ``"rdp"``, ...): the least noise the accountant
  certifies (:func:`dpsolve.privacy.calibrate`); T Gaussians of one sensitivity compose exactly
  to one Gaussian, in closed form: :func:`exact_gaussian_sigma`.
* **Explicit noise** from the user: the fit claims what the tightest accountant certifies.

The default number of steps of the iterative solvers is :func:`fewest_steps_near_best` over the
solver's bound at the calibrated noise: public constants only, never the data.
"""
import functools
import math
import warnings

import numpy as np

from .._validation import check_choice, check_real
from .accounting import PoissonSampling, PrivacyWarning, UniformSampling, calibrate, epsilon_of
from .mechanisms import gaussian_sigma_analytic, gaussian_sigma_classic

#: Default numbers of steps are searched in [1, MAX_DEFAULT_STEPS] ...
MAX_DEFAULT_STEPS = 10_000
#: ... for the fewest whose bound is within this factor of the least.
DEFAULT_STEPS_SLACK = 1.1
#: Output noise of output and objective perturbation.
OUTPUT_NOISES = ("gamma_norm", "gaussian")
#: Largest noise scale (a Gaussian standard deviation or a gamma-norm scale) a solver is
#: planned with: its square times p, and the steps and iterates it enters, must stay finite in
#: float64 (docs/bad_input.md, "Numerical range"). A larger one means an epsilon too small for
#: the problem's sensitivity, refused by name.
MAX_NOISE_SCALE = 1e100


# -- the numerical range of a noise scale --------------------------------------------------------
def check_noise_scale(solver, scale, epsilon, what="noise scale"):
    """``scale`` if it is finite and at most :data:`MAX_NOISE_SCALE`, else a ValueError naming
    epsilon (the noise scale grows as 1/epsilon).

    Parameters
    ----------
    solver : str
        Named in the message.
    scale : float
        The noise scale planned from ``epsilon``.
    epsilon : float
        The epsilon it was planned for (the parameter named).
    what : str, default "noise scale"
        What ``scale`` is, in the message.

    Returns
    -------
    float
        ``scale``.

    Raises
    ------
    ValueError
        If ``scale`` is NaN, infinite or above ``MAX_NOISE_SCALE``.
    """
    if not scale <= MAX_NOISE_SCALE:
        raise ValueError(
            f"{solver}: epsilon={epsilon:g} is too small for this problem: its {what} would be "
            f"{scale:.3g}, beyond {MAX_NOISE_SCALE:g}, the largest dpsolve computes with "
            "(docs/bad_input.md, \"Numerical range\"); raise epsilon, or rescale the "
            "Problem's bounds (row_norm, radius, label_bound), which set the sensitivity")
    return scale


def _gaussian_unit_sigma(solver, epsilon, delta):
    """The analytic Gaussian mechanism's sigma at sensitivity 1, or a ValueError naming epsilon
    (and delta) where it is not finite."""
    try:
        sigma_1 = gaussian_sigma_analytic(1.0, epsilon, delta)
    except (OverflowError, ZeroDivisionError):
        sigma_1 = math.inf
    if not math.isfinite(sigma_1):
        raise ValueError(f"{solver}: epsilon={epsilon:g}, delta={delta:g} need an infinite "
                         "Gaussian noise in float64; raise epsilon or delta")
    return sigma_1


# -- checks shared by the solvers ----------------------------------------------------------------
def warn_large_delta(delta, n, stacklevel):
    """PrivacyWarning for ``delta >= 1/n``, a guarantee that publishing a random record meets.

    Parameters
    ----------
    delta : float
        The claimed delta.
    n : int
        Number of records.
    stacklevel : int
        Where the warning points, counted from the caller of this function as
        :func:`warnings.warn` counts it (1: the caller itself).

    Warns
    -----
    PrivacyWarning
        If ``delta >= 1/n``.
    """
    if delta >= 1.0 / n:
        warnings.warn(f"delta={delta:.3g} >= 1/n: a mechanism that publishes a random record "
                      "meets such a guarantee", PrivacyWarning, stacklevel=stacklevel + 1)


def check_finite_lipschitz(solver, problem):
    """The Lipschitz constant every sensitivity here rests on; raise when there is none.

    Parameters
    ----------
    solver : str
        Name used in the error message.
    problem : Problem
        The problem whose ``lipschitz`` constant is read.

    Returns
    -------
    float
        ``problem.lipschitz``, finite.

    Raises
    ------
    ValueError
        If it is infinite (the squared loss without a radius).
    """
    L = problem.lipschitz
    if not math.isfinite(L):
        raise ValueError(
            f"{solver} needs a finite Lipschitz constant; the {problem.loss} loss has one only "
            "on a bounded set: give the Problem a radius"
        )
    return L


def gaussian_sigma(solver, *, n, epsilon, delta, sigma, calibration, calibrations, paper,
                   sensitivity, steps=1, sampling=None):
    """Resolve a Gaussian solver's noise. Returns ``(sigma, epsilon, delta, method)``.

    Parameters
    ----------
    solver : str
        Name used in error messages.
    n : int
        Number of records (a PrivacyWarning is raised for ``delta >= 1/n``).
    epsilon, delta, sigma, calibration
        The user's arguments. ``epsilon`` is None exactly when ``sigma`` is given; then
        ``epsilon`` comes back None (the fit claims what the accountant certifies) and the
        method is ``"explicit"``.
    calibrations : tuple of str
        The accepted values of ``calibration`` (``"paper"`` and accountant names).
    paper : callable(epsilon, delta) -> float
        The source's formula; it validates the ranges it is stated for.
    sensitivity, steps, sampling
        What the accountants calibrate: ``steps`` releases of L2 ``sensitivity`` (replace-one).

    Returns
    -------
    sigma : float
        The noise standard deviation: the paper's formula, the accountant's least noise
        (:func:`dpsolve.privacy.calibrate`; for Poisson-sampled releases under ``"pld"``,
        :func:`poisson_pld_sigma`, whose work is bounded), or the user's ``sigma``.
    epsilon : float or None
        The claimed epsilon (None for an explicit ``sigma``).
    delta : float
        The claimed delta.
    method : str
        ``calibration``, or ``"explicit"`` for an explicit ``sigma``.

    Raises
    ------
    ValueError
        For a ``calibration`` not in ``calibrations`` (also with an explicit ``sigma``, which
        does not use it), an explicit ``sigma`` above :data:`MAX_NOISE_SCALE`, and an epsilon
        whose noise would exceed it (:func:`check_noise_scale`, naming epsilon), checked before
        an accountant searches where the noise without sampling shows it already.
    """
    # checked also when unused (an explicit sigma): a misspelt option is an error, not ignored
    calibration = check_choice(calibration, "calibration", calibrations)
    if sigma is None:
        if epsilon is None or delta is None:
            raise TypeError(f"{solver} needs epsilon and delta (or an explicit sigma and delta)")
        if calibration == "paper":
            sigma = paper(epsilon, delta)
            epsilon, delta = float(epsilon), float(delta)
        else:
            epsilon = check_real(epsilon, "epsilon", low=0.0)
            delta = check_real(delta, "delta", low=0.0, high=1.0)
            # the unsampled exact noise first: an epsilon whose noise is beyond float64 is
            # refused before an accountant searches for it
            unsampled = sensitivity * math.sqrt(steps) * _gaussian_unit_sigma(solver, epsilon,
                                                                               delta)
            # sampling at rate q lowers it by about q at most (a tenth more, to stay below)
            check_noise_scale(solver, 0.1 * _sampling_rate(sampling) * unsampled, epsilon)
            if calibration == "pld" and isinstance(sampling, PoissonSampling) \
                    and sampling.rate < 1.0:
                sigma = poisson_pld_sigma(epsilon, delta, sensitivity=sensitivity, steps=steps,
                                          rate=sampling.rate)
            else:
                sigma = calibrate(epsilon, delta, sensitivity=sensitivity, steps=steps,
                                  sampling=sampling, accountant=calibration)
        check_noise_scale(solver, sigma, epsilon, "noise standard deviation")
    else:
        if epsilon is not None:
            raise ValueError("pass either epsilon (to calibrate the noise) or sigma, not both")
        if delta is None:
            raise TypeError(f"{solver} with an explicit sigma needs delta, the delta at which "
                            "the certified epsilon is reported")
        sigma = check_real(sigma, "sigma", low=0.0, low_inclusive=True)
        if sigma > MAX_NOISE_SCALE:
            raise ValueError(f"sigma must lie in [0, {MAX_NOISE_SCALE:g}] (docs/bad_input.md, "
                             f"\"Numerical range\"), got {sigma:g}")
        delta = check_real(delta, "delta", low=0.0, high=1.0)
        calibration = "explicit"
    warn_large_delta(delta, n, stacklevel=3)
    return sigma, epsilon, delta, calibration


def _sampling_rate(sampling):
    """The rate q of ``sampling`` (1 for None)."""
    if isinstance(sampling, PoissonSampling):
        return sampling.rate
    if isinstance(sampling, UniformSampling):
        return sampling.sample_size / sampling.dataset_size
    return 1.0


# -- Poisson-sampled Gaussians by PLD, with a bounded search -------------------------------------
#: Grid points of the privacy-loss distributions the search of :func:`poisson_pld_sigma`
#: evaluates (each a few hundredths of a second, whatever the noise).
SEARCH_GRID_POINTS = 10_000
#: Rounds of :func:`poisson_pld_sigma`'s bracket and of its final check: each is bounded.
_MAX_ROUNDS = 60


def _search_interval(multiplier):
    """The PLD discretisation of the search at noise multiplier m (sigma / Delta, replace-one).

    dp_accounting's PLD reads the multiplier relative to the per-record bound, ``m' = 2m``
    under replace-one; it truncates the Gaussian at tail mass ``e^-50`` (about 10 standard
    deviations), so the privacy loss spans about ``20/m' + 1/m'^2``. Its default interval 1e-4
    would take ``1e4 (20/m' + 1/m'^2)`` points: millions at the small multipliers of a large
    epsilon or delta, seconds for each evaluation. The span over SEARCH_GRID_POINTS, and never
    finer than 1e-4, bounds the work; dp_accounting rounds pessimistically at any interval, so
    every epsilon read on it is an upper bound.
    """
    m = 2.0 * multiplier
    return max(1e-4, (20.0 / m + 1.0 / (m * m)) / SEARCH_GRID_POINTS)


def _search_epsilon(multiplier, steps, rate, delta):
    """Epsilon (an upper bound) of ``steps`` Poisson-sampled Gaussians of noise multiplier m,
    replace-one, on the search's grid."""
    import dp_accounting
    from dp_accounting import pld
    accountant = pld.PLDAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE,
        value_discretization_interval=_search_interval(multiplier))
    event = dp_accounting.PoissonSampledDpEvent(
        rate, dp_accounting.GaussianDpEvent(2.0 * multiplier))
    accountant.compose(dp_accounting.SelfComposedDpEvent(event, steps))
    return float(accountant.get_epsilon(delta))


@functools.lru_cache(maxsize=256)
def poisson_pld_sigma(epsilon, delta, *, sensitivity, steps, rate, rtol=1e-3):
    """The least sigma (to about ``1 + rtol``) for which ``steps`` Poisson-sampled Gaussians of
    L2 ``sensitivity`` (replace-one) are (epsilon, delta)-DP by PLD, found with bounded work.

    The search runs on coarse privacy-loss grids (:func:`_search_interval`: about
    SEARCH_GRID_POINTS points each, pessimistic), from the exact noise without sampling (which
    sampling can only make more private) down to a bracket, then by Brent's method in log
    sigma. The result is then checked with :func:`dpsolve.privacy.epsilon_of` (``"pld"``, what
    a fit's report certifies) and raised by a growing factor until that holds: every loop is
    bounded, and the fit's certification reads the cached check. The result is cached on the
    arguments (public constants), so that planning the same DP-SGD again (a choice, then its
    fit; a sweep) does not search again.

    Parameters
    ----------
    epsilon, delta : float
        The target, ``epsilon > 0``, ``0 < delta < 1``.
    sensitivity : float
        L2 sensitivity of each release (replace-one).
    steps : int
        The number of releases T.
    rate : float
        The Poisson sampling rate q, in (0, 1).
    rtol : float, default 1e-3
        Relative precision of the search.

    Returns
    -------
    float
        sigma.

    Raises
    ------
    ValueError
        If no sigma within ``_MAX_ROUNDS`` growing steps is certified (not expected).
    """
    from scipy import optimize

    from .accounting import gaussian_event

    def excess(log_m):
        eps = _search_epsilon(math.exp(log_m), steps, rate, delta)
        return math.log(max(eps, 1e-300)) - math.log(epsilon)

    # without sampling: exact, and at least as much noise as sampling needs
    top = math.log(math.sqrt(steps) * gaussian_sigma_analytic(1.0, epsilon, delta))
    # with it, about q sqrt(T) / m acts like a Gaussian's mu when q is small
    guess = top + math.log(max(rate, 1.0 / math.sqrt(steps)))
    if excess(guess) > 0.0:
        lo, hi, rounds = guess, top, 0
        while excess(hi) > 0.0 and rounds < _MAX_ROUNDS:    # the coarse grid's rounding
            hi, rounds = hi + max(rtol, 0.1 * (hi - lo)), rounds + 1
    else:
        lo, hi, rounds = guess, guess, 0
        while rounds < _MAX_ROUNDS:
            lo, rounds = lo - 1.0, rounds + 1
            if excess(lo) > 0.0:
                break
        else:
            lo = None               # no privacy loss above epsilon down there: keep hi
    log_m = hi if lo is None else optimize.brentq(excess, lo, hi, xtol=rtol / 4.0)
    # the private side of the root, on the search grid (brentq's answer is within xtol)
    rounds = 0
    while excess(log_m) > 0.0 and rounds < _MAX_ROUNDS:
        log_m, rounds = log_m + rtol / 4.0 * 2.0 ** rounds, rounds + 1
    sigma = sensitivity * math.exp(log_m)
    sampling = PoissonSampling(rate)
    for attempt in range(_MAX_ROUNDS):
        event = gaussian_event(sigma, sensitivity, steps=steps, sampling=sampling)
        if epsilon_of(event, delta, "pld") <= epsilon:
            return sigma
        sigma *= 1.0 + rtol * 2.0 ** attempt
    raise ValueError(f"no noise certified epsilon={epsilon:g} at delta={delta:g} for {steps} "
                     f"Poisson-sampled Gaussians at rate {rate:g}")


# -- exact Gaussian calibration ------------------------------------------------------------------
def exact_gaussian_sigma(sensitivity, steps, epsilon, delta):
    """The least sigma for which ``steps`` Gaussians of L2 ``sensitivity`` are (epsilon, delta)-DP:
    they compose exactly to one with ``mu = sqrt(T) Delta / sigma`` (Dong, Roth & Su 2019), so
    ``sigma = sqrt(T) Delta sigma_1`` with ``sigma_1`` the analytic Gaussian mechanism's
    (Balle & Wang 2018) at sensitivity 1. ``steps`` may be an array.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity Delta of each release.
    steps : int or array_like of int
        Number of releases T.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float
        Target delta, in (0, 1).

    Returns
    -------
    float or ndarray
        ``sqrt(T) Delta sigma_1``, of the shape of ``steps``.
    """
    return sensitivity * np.sqrt(np.asarray(steps, dtype=float)) * gaussian_sigma_analytic(
        1.0, epsilon, delta)


def fewest_steps_near_best(grid, values, slack=DEFAULT_STEPS_SLACK):
    """The first entry of ``grid`` whose bound ``values`` is within ``slack`` of the least
    finite one: the default number of steps of the iterative solvers (fewer steps cost less
    time for nearly the same bound). Raises ValueError when no value is finite.

    Parameters
    ----------
    grid : sequence of int
        Candidate numbers of steps, in increasing order.
    values : array_like of float
        The bound at each entry of ``grid`` (``inf`` where the calibration admits no noise).
    slack : float, default DEFAULT_STEPS_SLACK (1.1)
        Factor ``>= 1`` by which the chosen entry's bound may exceed the least.

    Returns
    -------
    int
        The first ``grid[i]`` whose ``values[i]`` is at most ``slack`` times the least finite
        value.
    """
    values = np.asarray(values, dtype=float)
    finite = np.isfinite(values)
    if not finite.any():
        raise ValueError(f"no number of steps in [{grid[0]}, {grid[-1]}] admits this "
                         "calibration; pass steps")
    best = values[finite].min()
    return int(grid[np.argmax(finite & (values <= slack * best))])


# -- the sources' formulas -----------------------------------------------------------------------
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


def dpgd_paper_sigma(n, clip_norm, steps, epsilon, delta):
    """The DP-GD lecture notes' noise: ``s = 4 C T sqrt(ln(2T/delta)) / (epsilon n)``.

    The lecture makes each step ``(epsilon/T, delta/T)``-DP with its Gaussian claim
    (``sigma >= 2 Delta sqrt(ln(2/delta)) / epsilon`` for ``epsilon, delta in (0, 1)``) at the
    sensitivity ``Delta = 2C/n`` of the clipped mean gradient, and adds up by basic composition.
    (Its final line writes ``sqrt(log^2(1/delta))``; the expression above is what its own claims
    give.) Valid as stated for ``epsilon, delta in (0, 1)``. Works on arrays of ``steps``.

    Parameters
    ----------
    n : int
        Number of records.
    clip_norm : float
        Clipping norm C of the per-sample gradients.
    steps : int or array_like of int
        Number of steps T.
    epsilon : float
        Target epsilon, in (0, 1).
    delta : float
        Target delta, in (0, 1).

    Returns
    -------
    float or ndarray
        The noise standard deviation s on the clipped mean gradient, of the shape of ``steps``.
    """
    steps = np.asarray(steps, dtype=float)
    return 4.0 * clip_norm * steps * np.sqrt(np.log(2.0 * steps / delta)) / (epsilon * n)


def dpgd_noise(n, clip_norm, steps, epsilon, delta, calibration):
    """DP-GD's noise standard deviation s on the clipped mean gradient for T = ``steps`` (an int,
    or an array for ``"paper"`` and ``"pld"``) under ``calibration``.

    The clipped mean gradient has L2 sensitivity ``2C/n`` (replace-one).

    Parameters
    ----------
    n : int
        Number of records.
    clip_norm : float
        Clipping norm C.
    steps : int or array_like of int
        Number of steps T; an array only for ``"paper"`` and ``"pld"``.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float
        Target delta, in (0, 1).
    calibration : str
        ``"paper"`` (:func:`dpgd_paper_sigma`), ``"pld"`` (exact, in closed form:
        ``(2C/n) sqrt(T) sigma_1``, :func:`exact_gaussian_sigma`), or another accountant's name
        (:func:`dpsolve.privacy.calibrate` for T releases).

    Returns
    -------
    float or ndarray
        The noise standard deviation s, of the shape of ``steps``.
    """
    if calibration == "paper":
        return dpgd_paper_sigma(n, clip_norm, steps, epsilon, delta)
    sensitivity = 2.0 * clip_norm / n
    if calibration == "pld":
        # T Gaussians compose exactly to one with mu = sqrt(T) Delta / s
        sigma_1 = gaussian_sigma_analytic(1.0, epsilon, delta)
        return sensitivity * np.sqrt(np.asarray(steps, dtype=float)) * sigma_1
    return calibrate(epsilon, delta, sensitivity=sensitivity, steps=int(steps),
                     accountant=calibration)


def sgd2_paper_sigma(lipschitz, steps, epsilon, delta):
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
                         f"epsilon / sqrt(T ln(1/delta)) = {eps_iteration:.3g} below 1 (Lemma 2); "
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


def zcdp_inversion_sigma(sensitivity, steps, epsilon, delta):
    """The least sigma for which T Gaussians of sensitivity Delta are (epsilon, delta)-DP through
    zCDP (``rho = T Delta^2/(2 sigma^2)``, ``epsilon = rho + 2 sqrt(rho ln(1/delta))``), in closed
    form: ``sqrt(rho) = sqrt(ln(1/delta) + epsilon) - sqrt(ln(1/delta))``, so
    ``sigma = sqrt(2T) Delta / (2 sqrt(rho))`` (docs/multiparty.md).

    Bun & Steinke (2016)'s rules, as in Chen's 2019 slides
    (:func:`~dpsolve.privacy.gaussian_zcdp`, :func:`~dpsolve.privacy.zcdp_to_dp`).

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
        The least sigma that zCDP certifies.
    """
    log_inv = math.log(1.0 / delta)
    root_rho = math.sqrt(log_inv + epsilon) - math.sqrt(log_inv)
    return math.sqrt(2.0 * steps) * sensitivity / (2.0 * root_rho)


def nsgd_paper_sigma(lipschitz, steps, epsilon, delta, n):
    """Huang et al. 2023's noise (Algorithm 1, line 2, Lemma 3.2 with its universal constants set
    to 1):
    ``sigma = L sqrt(T ln(1/delta)) / (epsilon m N)`` with ``m N = n`` records. Its privacy
    argument amplifies at rate ``1/(N m)`` per record, which the personalised block invalidates
    (docs/joint_dp.md): kept as a labelled reproduction. L is the Lipschitz
    constant of the joint loss in u: :func:`dpsolve.joint_sgd` passes ``L_u`` of
    :func:`dpsolve.joint.joint_gradient_bound`, not ``Problem.lipschitz``.

    Parameters
    ----------
    lipschitz : float
        Lipschitz constant L of the joint loss in the shared parameters u.
    steps : int
        Number of iterations T.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float
        Target delta, in (0, 1).
    n : int
        Number of records ``m N``.

    Returns
    -------
    float
        ``sigma = L sqrt(T ln(1/delta)) / (epsilon n)``.
    """
    return lipschitz * math.sqrt(steps * math.log(1.0 / delta)) / (epsilon * n)


# -- output and objective perturbation -----------------------------------------------------------
def resolve_output_noise(noise, epsilon, delta, calibration, n, output_share=1.0,
                         calibrations=None):
    """Validate the output-noise choice of output and objective perturbation: returns
    ``(noise, epsilon, delta, calibration)``. ``output_share`` of epsilon goes to the output
    noise (the classic Gaussian mechanism needs that share below 1).

    Parameters
    ----------
    noise : {"gamma_norm", "gaussian"} or None
        The output noise; None: ``"gamma_norm"`` when ``delta`` is None, else ``"gaussian"``.
    epsilon : float
        The solver's epsilon, ``> 0``.
    delta : float or None
        None or 0 for ``"gamma_norm"`` (epsilon-DP); in (0, 1) for ``"gaussian"``.
    calibration : str
        ``"paper"`` (the classic Gaussian mechanism) or an accountant's name; checked for
        either noise (gamma-norm noise does not use it, but a misspelt value is refused).
    n : int
        Number of records (a PrivacyWarning is raised for ``delta >= 1/n``).
    output_share : float, default 1.0
        The share of epsilon spent on the output noise.
    calibrations : tuple of str, optional
        The accepted values of ``calibration``; default ``"paper"`` and every accountant.

    Returns
    -------
    noise : str
        ``"gamma_norm"`` or ``"gaussian"``.
    epsilon : float
        ``epsilon``, checked.
    delta : float
        0 for ``"gamma_norm"``, else ``delta``, checked.
    calibration : str
        ``calibration``, checked.
    """
    from .accounting import ACCOUNTANTS
    calibrations = ("paper",) + ACCOUNTANTS if calibrations is None else calibrations
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    # checked also for gamma-norm noise, which does not use it: a misspelt option is an error
    calibration = check_choice(calibration, "calibration", calibrations)
    if noise is None:
        noise = "gamma_norm" if delta is None else "gaussian"
    noise = check_choice(noise, "noise", OUTPUT_NOISES)
    if noise == "gamma_norm":
        if delta not in (None, 0, 0.0):
            raise ValueError('noise="gamma_norm" is epsilon-DP (delta = 0); pass delta=None, '
                             'or noise="gaussian" for (epsilon, delta)')
        delta = 0.0
    else:
        if delta is None:
            raise TypeError('noise="gaussian" needs delta')
        delta = check_real(delta, "delta", low=0.0, high=1.0)
        if calibration == "paper" and output_share * epsilon >= 1.0:
            raise ValueError('calibration="paper" (the classic Gaussian mechanism) needs '
                             f"epsilon < 1 for the output noise, got {output_share * epsilon:g}; "
                             'use calibration="pld"')
        warn_large_delta(delta, n, stacklevel=3)
    return noise, epsilon, delta, calibration


def output_noise_scale(noise, epsilon, delta, sensitivity, calibration):
    """Scale of one release of L2 ``sensitivity``: the gamma-norm scale ``Delta / epsilon``
    (epsilon-DP), or the Gaussian sigma of the classic mechanism (``"paper"``, Dwork-Roth, as in
    Chen's 2019 slides, for epsilon, delta in (0, 1)) or of an accountant.

    Parameters
    ----------
    noise : {"gamma_norm", "gaussian"}
        The output noise (as :func:`resolve_output_noise` returns it).
    epsilon : float
        The epsilon of this release, ``> 0``.
    delta : float
        Its delta (ignored for ``"gamma_norm"``).
    sensitivity : float
        L2 sensitivity Delta of the release.
    calibration : str
        For ``"gaussian"``: ``"paper"`` or an accountant's name
        (:func:`dpsolve.privacy.calibrate`, one release).

    Returns
    -------
    float
        The gamma-norm scale ``s`` or the Gaussian standard deviation sigma.
    """
    solver = "the output noise"
    if noise == "gamma_norm":
        with np.errstate(over="ignore"):
            return check_noise_scale(solver, float(np.float64(sensitivity) / epsilon), epsilon)
    if calibration == "paper":
        scale = gaussian_sigma_classic(sensitivity, epsilon, delta)
    else:
        check_noise_scale(solver, 0.1 * sensitivity * _gaussian_unit_sigma(solver, epsilon,
                                                                            delta), epsilon)
        scale = calibrate(epsilon, delta, sensitivity=sensitivity, accountant=calibration)
    return check_noise_scale(solver, scale, epsilon, "noise standard deviation")


def objective_jacobian_term(cB2, n, mu):
    """The Jacobian term ``ln(1 + cB^2/(n mu))`` of objective perturbation's privacy loss under
    replace-one neighbours: the most the log-determinant of the perturbed objective's Hessian
    can change when one record is replaced.

    With ``H_0 >= n mu I`` the Hessian (sum form) of everything but the replaced record, the two
    neighbours' Hessians are ``H_0 + a x x^T`` and ``H_0 + a' x' x'^T`` (``0 <= a, a' <= c``,
    ``||x||, ||x'|| <= B``), whose determinants are ``det H_0 (1 + a x^T H_0^{-1} x)``, each in
    ``det H_0 [1, 1 + cB^2/(n mu)]``. CMS 2011 (Thm 9) bound the ratio by the square of that,
    ``ln(1 + 2cB^2/(n mu) + c^2 B^4/(n^2 mu^2))``, through the rank-two difference of the two
    Hessians; the factor it loses is what Redberg, Koskela & Wang (2023) also remove.

    Parameters
    ----------
    cB2 : float
        The loss's curvature bound c times the squared row bound B^2.
    n : int
        Number of records.
    mu : float
        The perturbed objective's regularisation ``lambda + Delta``, ``> 0``.

    Returns
    -------
    float
    """
    return math.log1p(cB2 / (n * mu))


def objective_perturbation_constants(problem, epsilon, extra_reg=None):
    """Constants of epsilon-DP objective perturbation (CMS 2011 Alg. 2 with the tight Jacobian
    term) for an objective-perturbation budget ``epsilon``: returns
    ``(epsilon_prime, extra_reg)``.

    With ``c`` the bound on ``loss''`` (1/4 logistic, 1/(2h) huber_hinge; the loss's
    ``curvature``), B the row bound and ``mu = lambda + Delta`` the regularisation of the
    perturbed objective, the noise may spend
    ``epsilon' = epsilon - ln(1 + cB^2/(n mu))`` (:func:`objective_jacobian_term`), for any
    ``Delta >= 0`` fixed from public constants that leaves ``epsilon' > 0``.

    ``extra_reg=None`` is CMS 2011's rule as they state it, kept as a labelled reproduction:
    ``epsilon' = epsilon - ln(1 + 2cB^2/(n lambda) + c^2 B^4/(n^2 lambda^2))`` and
    ``Delta = 0`` if that is positive, else ``Delta = cB^2 / (n (e^{epsilon/4} - 1)) - lambda``
    and ``epsilon' = epsilon / 2`` (sound, with the looser Jacobian term). (diffprivlib uses
    ``cB`` for ``cB^2``, which is not conservative for B > 1.)
    :func:`dpsolve.bounds.objective_perturbation_settings` chooses ``Delta`` from the utility
    bound instead.

    Parameters
    ----------
    problem : Problem
        Gives n, lambda (``reg``, ``> 0``), B (``row_norm``) and c (the loss's ``curvature``).
    epsilon : float
        The objective-perturbation budget, ``> 0``.
    extra_reg : float, optional
        Delta ``>= 0``; None for CMS 2011's rule.

    Returns
    -------
    epsilon_prime : float
        The epsilon left for the noise in the objective.
    extra_reg : float
        The extra regularisation Delta.

    Raises
    ------
    ValueError
        If ``extra_reg`` leaves ``epsilon' <= 0``; the message gives the smallest Delta that
        does not.
    """
    c = problem.loss_function.curvature
    n, lam, B2 = problem.n, problem.reg, problem.row_norm ** 2
    if extra_reg is None:
        return cms_objective_constants(c * B2, n, lam, epsilon)
    extra_reg = check_real(extra_reg, "extra_reg", low=0.0, low_inclusive=True)
    eps_prime = epsilon - objective_jacobian_term(c * B2, n, lam + extra_reg)
    if not eps_prime > 0.0:
        _no_objective_budget(c * B2, n, lam, epsilon, extra_reg)
    return eps_prime, extra_reg


def _no_objective_budget(cB2, n, lam, epsilon, extra_reg):
    smallest = max(cB2 / (n * math.expm1(min(epsilon, 700.0))) - lam, 0.0)
    raise ValueError(f"extra_reg={extra_reg:g} leaves no epsilon for the objective noise "
                     f"at epsilon={epsilon:g}: it must exceed {smallest:.6g}")


@functools.lru_cache(maxsize=256)
def gaussian_objective_tail(delta):
    """The z of :func:`gaussian_objective_sigma`: ``P(|<b, x>| + |<b, x'>| > 2 B sigma z) <=
    delta`` for ``b ~ N(0, sigma^2 I)`` and any ``||x||, ||x'|| <= B``.

    The smaller of the union bound ``4 Phi_bar(z) = delta`` and the chi-square bound
    ``exp(-z^2 / 2) = delta`` (both hold: ``|<b, x>| + |<b, x'>| <= 2 B ||P b||`` with P the
    projection on span{x, x'}, and ``||P b||^2 / sigma^2`` is at most chi-square with 2 degrees
    of freedom).
    Cached on delta: the search for objective perturbation's settings asks for the same delta
    thousands of times.

    Parameters
    ----------
    delta : float
        In (0, 1).

    Returns
    -------
    float
        z.
    """
    from scipy import stats
    union = float(stats.norm.isf(delta / 4.0))
    chi2 = math.sqrt(2.0 * -math.log(delta))
    return min(union, chi2)


def _objective_tail(z):
    """``P(|<b, x>| + |<b, x'>| > 2 B sigma z)`` is at most this (see
    :func:`gaussian_objective_tail`): ``min(1, 4 Phi_bar(z), exp(-z^2/2))``."""
    from scipy import special
    return min(1.0, 2.0 * special.erfc(z / math.sqrt(2.0)), math.exp(-0.5 * z * z))


@functools.lru_cache(maxsize=1)
def _tail_crossing():
    """Where ``4 Phi_bar(z) = exp(-z^2/2)`` (about 1.26): the chi-square bound is the smaller
    below it, the union bound above."""
    from scipy import optimize, special
    return optimize.brentq(lambda z: 2.0 * special.erfc(z / math.sqrt(2.0))
                           - math.exp(-0.5 * z * z), 0.5, 3.0, xtol=1e-12)


def gaussian_objective_delta(s, room):
    r"""The delta that Gaussian objective perturbation's privacy-loss bound gives at
    ``s = B / sigma`` when ``room = epsilon - J`` is left beyond the Jacobian term: an upper
    bound on ``E[(1 - e^{epsilon - loss})_+]``, the exact delta of a privacy loss
    (:func:`gaussian_objective_sigma`).

    With ``W = (|<b, x>| + |<b, x'>|) / (2 B sigma)`` the loss is at most
    ``J + 2 s W + 2 s^2``; ``h(w) = (1 - e^{room - 2 s w - 2 s^2})_+`` is increasing, so
    ``E h(W) = h(0) + int_0^inf h'(w) P(W > w) dw`` with ``P(W > w) <= T(w)``, the chi-square
    bound ``e^{-w^2/2}`` below ``w_c`` (:func:`_tail_crossing`) and the union bound
    ``4 Phi_bar(w)`` above (each holds everywhere). With ``a = 2s``,
    ``w_0 = max(0, (room - 2 s^2) / a)`` and ``k = min(1, e^{room - 2 s^2})`` the integral is
    ``k int_{w_0}^inf a e^{-a (w - w_0)} T(w) dw``, in closed form: on the chi-square piece
    ``a sqrt(2 pi) e^{a w_0 + a^2/2} (Phi_bar(w_0 + a) - Phi_bar(w_1 + a))``, on the union piece
    from ``L`` on ``4 (e^{-a (L - w_0)} Phi_bar(L) - e^{a w_0 + a^2/2} Phi_bar(L + a))``
    (by parts, and ``e^{-a w} phi(w) = e^{a^2/2} phi(w + a)``), in logarithms where they would
    overflow.

    Parameters
    ----------
    s : float
        ``B / sigma``, ``> 0``.
    room : float
        ``epsilon - J``, ``> 0``.

    Returns
    -------
    float
        The delta bound.
    """
    # the search for objective perturbation's settings calls this some 10^4 times: scipy's
    # log_ndtr and the crossing looked up once, log Phi_bar(x) = log_ndtr(-x) inline, the
    # arithmetic unchanged (the same operations in the same order)
    log_ndtr, crossing = _delta_constants()
    a = 2.0 * s
    excess = room - 2.0 * s * s
    w0 = max(0.0, excess / a)
    head = -math.expm1(excess) if excess < 0.0 else 0.0
    scale = math.exp(min(0.0, excess))
    total = 0.0
    if w0 < crossing:
        upper, lower = float(log_ndtr(-(w0 + a))), float(log_ndtr(-(crossing + a)))
        log_piece = (a * w0 + 0.5 * a * a + _HALF_LOG_2PI + math.log(a)
                     + upper + math.log1p(-math.exp(lower - upper)))
        total += math.exp(log_piece)
    start = max(w0, crossing)
    first = math.exp(-a * (start - w0) + float(log_ndtr(-start)))
    second = math.exp(a * w0 + 0.5 * a * a + float(log_ndtr(-(start + a))))
    total += 4.0 * max(first - second, 0.0)
    return head + scale * total


#: ``0.5 ln(2 pi)``, as :func:`gaussian_objective_delta` computed it in place.
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


@functools.lru_cache(maxsize=1)
def _delta_constants():
    """``(scipy.special.log_ndtr, _tail_crossing())`` for :func:`gaussian_objective_delta`."""
    from scipy import special
    return special.log_ndtr, _tail_crossing()


def gaussian_objective_sigma(cB2, B, n, mu, epsilon, delta):
    r"""Standard deviation sigma of the Gaussian b (sum form) for which objective perturbation
    is ``(epsilon, delta)``-DP under replace-one neighbours, or inf if the Jacobian term alone
    spends epsilon. dpsolve's analysis, after Kifer, Smith & Thakurta 2012 (Thm 2, the Gaussian
    variant) and with the Jacobian term of Redberg, Koskela & Wang 2023
    (:func:`objective_jacobian_term`); the proof is sketched in docs/perturbation.md.

    The output theta determines the noise, ``b = -grad L(theta; D)`` (L the sum-form perturbed
    objective without b). For the neighbour D', ``b' = b + u`` with ``u = loss'(z) x -
    loss'(z') x'`` (``|loss'| <= 1``, so ``||u|| <= 2B`` and ``|<b, u>| <= |<b, x>| + |<b,
    x'>|``). The privacy loss at theta is
    ``(2 <b, u> + ||u||^2) / (2 sigma^2) + J(theta)`` with ``|J| <= ln(1 + cB^2/(n mu))``, so it
    is at most ``J + 2 s W + 2 s^2`` with ``s = B / sigma`` and W from
    :func:`gaussian_objective_tail`. The exact delta of a privacy loss at epsilon is
    ``E[(1 - e^{epsilon - loss})_+]``; :func:`gaussian_objective_delta` bounds it through W's
    tail, and sigma is the smallest (to a relative 1e-4, rounded up) that brings the bound to
    delta. Tail-only (``P(loss > epsilon) <= delta``, Kifer et al.'s form of the argument) it
    would be 14% larger at epsilon - J = 1, delta = 1e-6, and 28% at 0.1.

    Parameters
    ----------
    cB2 : float
        The loss's curvature bound times the squared row bound.
    B : float
        The row bound.
    n : int
        Number of records.
    mu : float
        ``lambda + Delta``, ``> 0``.
    epsilon : float
        The objective's budget, ``> 0``.
    delta : float
        Its delta, in (0, 1).

    Returns
    -------
    float
        sigma (sum form: the objective gets ``<b, theta> / n`` in mean form), or inf when
        ``epsilon <= J``: no finite noise then makes the objective private. Callers turn inf
        into their own error (:func:`gaussian_objective_constants`' ValueError names epsilon
        and the smallest extra regularisation that leaves room) or skip the setting (the
        search of :func:`dpsolve.bounds.objective_perturbation_settings`).
    """
    s = _objective_s(epsilon - objective_jacobian_term(cB2, n, mu), delta)
    return B / s if s > 0.0 else math.inf


@functools.lru_cache(maxsize=16384)
def _objective_s(room, delta):
    """The largest ``s = B / sigma`` (to 1e-4 relative, rounded down) whose
    :func:`gaussian_objective_delta` is at most ``delta``; 0 when ``room <= 0``.

    A bisection: from the tail-only s (feasible), doubling to an infeasible s, then halving the
    bracket ``[low, high]`` until ``high - low <= 1e-4 low``; ``low`` is returned. The bound
    increases with s, so a midpoint at or below an s already found feasible is feasible, and
    one at or above an s found infeasible is not: the bisection is decided there without
    evaluating the bound. Secant steps (in ``(ln s, ln delta)``, with Illinois' modification)
    narrow that bracket of evaluated points, so most midpoints are decided without an
    evaluation (about 9 evaluations instead of 17), and the result is the plain bisection's.
    A midpoint is decided that way only when the bound at the point that decides it is beyond
    ``delta`` by a relative 1e-10 (far above the closed form's rounding), or at that point
    itself. Cached: the settings search asks for a few thousand (room, delta) pairs, many
    more than once."""
    if not room > 0.0:
        return 0.0
    # the tail-only solution is feasible (the integral is at most T(w_0) = delta there)
    z = gaussian_objective_tail(delta)
    low = room / (z + math.sqrt(z * z + 2.0 * room))
    target = delta * (1.0 - 1e-9)           # room for the closed form's rounding (~1e-12)
    f_low = gaussian_objective_delta(low, room)
    if f_low > target:
        return low                          # numerically at the edge: keep the tail-only s
    high, f_high = low, f_low
    while f_high <= target:
        low, f_low, high = high, f_high, 2.0 * high
        if high > 1e6:
            return low
        f_high = gaussian_objective_delta(high, room)
    # a (bound fa <= target) and b (fb > target): the closest evaluated points to the root
    a, fa, b, fb = low, f_low, high, f_high
    surely_below, surely_above = target * (1.0 - 1e-10), target * (1.0 + 1e-10)
    la = math.log(fa / target) if fa > 0.0 else -math.inf
    lb = math.log(fb / target)
    side = 0                                # which end the last evaluation moved
    while high - low > 1e-4 * low:
        mid = 0.5 * (low + high)
        if mid <= a and (mid == a or fa <= surely_below):
            low = mid
            continue
        if mid >= b and (mid == b or fb > surely_above):
            high = mid
            continue
        x = mid
        if math.isfinite(la):
            log_a, log_b = math.log(a), math.log(b)
            guess = math.exp(log_a + (log_b - log_a) * (-la) / (lb - la))
            if a < guess < b:
                x = guess
        fx = gaussian_objective_delta(x, room)
        if fx <= target:
            a, fa = x, fx
            la = math.log(fx / target) if fx > 0.0 else -math.inf
            if side == -1:
                lb *= 0.5
            side = -1
        else:
            b, fb = x, fx
            lb = math.log(fx / target)
            if side == 1:
                la *= 0.5
            side = 1
        if x == mid:
            if fx <= target:
                low = mid
            else:
                high = mid
    return low


def gaussian_objective_constants(problem, epsilon, delta, extra_reg):
    """``(sigma, extra_reg)`` of Gaussian objective perturbation at the budget
    ``(epsilon, delta)`` and a fixed ``Delta = extra_reg`` (:func:`gaussian_objective_sigma`).

    Parameters
    ----------
    problem : Problem
        Gives n, lambda, B and c.
    epsilon : float
        The objective's budget, ``> 0``.
    delta : float
        Its delta, in (0, 1).
    extra_reg : float
        Delta ``>= 0``.

    Returns
    -------
    sigma : float
        The noise's standard deviation (sum form).
    extra_reg : float
        Delta, checked.

    Raises
    ------
    ValueError
        If ``extra_reg`` leaves no epsilon beyond the Jacobian term (the message gives the
        smallest Delta that does).
    """
    c = problem.loss_function.curvature
    n, lam, B = problem.n, problem.reg, problem.row_norm
    extra_reg = check_real(extra_reg, "extra_reg", low=0.0, low_inclusive=True)
    sigma = gaussian_objective_sigma(c * B * B, B, n, lam + extra_reg, epsilon, delta)
    if not math.isfinite(sigma):
        _no_objective_budget(c * B * B, n, lam, epsilon, extra_reg)
    return sigma, extra_reg


def resolve_objective_noise(objective_noise, noise, delta):
    """The split of delta between objective perturbation's two noises: returns
    ``(output noise, objective delta, delta passed on for the output noise)``.

    Gaussian objective noise takes all of delta when the output noise is gamma-norm (its
    default then) and half when the output noise is Gaussian too; gamma-norm objective noise
    leaves delta to the output noise (Gaussian by default when delta is given).

    Parameters
    ----------
    objective_noise : {"gamma_norm", "gaussian"}
        The objective noise.
    noise : {"gamma_norm", "gaussian"} or None
        The output noise as the user gave it.
    delta : float or None
        The solver's delta.

    Returns
    -------
    noise : str or None
        The output noise (None: :func:`resolve_output_noise`'s default for the delta passed on).
    delta_objective : float
        The objective noise's delta (0 for gamma-norm).
    delta_output : float or None
        What to pass to :func:`resolve_output_noise` as its delta.

    Raises
    ------
    TypeError
        For Gaussian objective noise without delta.
    """
    objective_noise = check_choice(objective_noise, "objective_noise", OUTPUT_NOISES)
    if objective_noise == "gamma_norm":
        return noise, 0.0, delta
    if delta is None:
        raise TypeError('objective_noise="gaussian" needs delta')
    delta = check_real(delta, "delta", low=0.0, high=1.0)
    if noise is None:
        noise = "gamma_norm"
    noise = check_choice(noise, "noise", OUTPUT_NOISES)
    if noise == "gamma_norm":
        return noise, delta, None
    return noise, delta / 2.0, delta / 2.0


def cms_objective_constants(cB2, n, lam, epsilon):
    """CMS 2011's two-branch rule for ``(epsilon', Delta)`` from ``c B^2``, n, lambda and the
    objective budget epsilon (see :func:`objective_perturbation_constants`).

    Parameters
    ----------
    cB2 : float
        The loss's curvature bound times the squared row bound.
    n : int
        Number of records.
    lam : float
        The regularisation lambda, ``> 0``.
    epsilon : float
        The objective-perturbation budget, ``> 0``.

    Returns
    -------
    epsilon_prime, extra_reg : float
        ``(epsilon - ln(1 + 2a + a^2), 0)`` with ``a = cB^2/(n lambda)`` when that is positive,
        else ``(epsilon / 2, cB^2 / (n (e^{epsilon/4} - 1)) - lambda)``.
    """
    eps_prime = epsilon - math.log1p(2.0 * cB2 / (n * lam) + (cB2 / (n * lam)) ** 2)
    if eps_prime > 0.0:
        return eps_prime, 0.0
    return epsilon / 2.0, cB2 / (n * math.expm1(epsilon / 4.0)) - lam
