r"""Noise calibration: the sources' formulas, exact Gaussian calibration, and the default-T search.

Every solver and every bound of dpsolve takes its noise from here, so a solver and its bound
always agree on the noise. Three kinds of calibration:

* **The sources' formulas** (``calibration="paper"``), each reproduced as its work states it,
  with the discrepancies recorded in docs/source_mistakes.md, each in its solver's module (its
  ``SolverSpec.hooks.paper_sigma``) and still given here under its name, the same object:
  :func:`~dpsolve.solvers.noisy_sgd.noisy_sgd_paper_sigma` (the multi-party SGD notes' SGD1,
  after Bassily-Smith-Thakurta 2014), :func:`~dpsolve.solvers.clipped_gd.dpgd_paper_sigma` (the
  DP-GD lecture notes; DP-GD's noise under any calibration,
  :func:`~dpsolve.solvers.clipped_gd.dpgd_noise`),
  :func:`~dpsolve.solvers.multiparty_gd.multiparty_gd_paper_sigma` (SGD2),
  :func:`~dpsolve.solvers.multiparty_gd.jayaraman_paper_sigma` (Jayaraman et al. 2018),
  :func:`~dpsolve.solvers.joint_sgd.nsgd_paper_sigma` (Huang et al. 2023); here, the classic
  Gaussian mechanism (Dwork-Roth) for output perturbation and the zCDP inversion
  (:func:`zcdp_inversion_sigma`). Objective perturbation's constants
  (Chaudhuri-Monteleoni-Sarwate 2011 with Kifer-Smith-Thakurta 2012's) are with the method, in
  :mod:`dpsolve.solvers.objective_perturbation.approximate_minima`.
* **Accountants** (``calibration="pld"``, ``"rdp"``, ...): the least noise the accountant
  certifies (:func:`dpsolve.privacy.calibrate`); T Gaussians of one sensitivity compose exactly
  to one Gaussian, in closed form: :func:`exact_gaussian_sigma`.
* **Explicit noise** from the user: the fit claims what the tightest accountant certifies.

The default number of steps of the iterative solvers is :func:`fewest_steps_near_best` over the
solver's bound at the calibrated noise: public constants only, never the data.

Every calibration errs on the private side by construction, down to the last bit: a noise scale
is never below what its claim needs, and an epsilon read from a noise never below the true one.
The exact Gaussian calibration checks a certified upper bound on delta
(:func:`~dpsolve.privacy.gaussian_log_delta`) and rounds sigma up; a product or quotient that
scales a calibrated noise (a sensitivity times a multiplier, ``sqrt(T)`` times a unit sigma,
``Delta / epsilon``) is rounded up, not to nearest. The sources' formulas are reproduced as
stated: their claims are checked by the accountants, not by rounding.
"""
import functools
import math
import warnings
from fractions import Fraction

import numpy as np

from .._moved import moved_names
from .._validation import check_choice, check_real
from .accounting import PoissonSampling, PrivacyWarning, UniformSampling, calibrate, epsilon_of
from .mechanisms import (_LIBM, _dn, _product_up, _quotient_up, _up, gaussian_sigma_analytic,
                         multiplier_onto_grid,
                         gaussian_sigma_classic)

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
        (:func:`dpsolve.privacy.calibrate`, its certified multiplier times ``sensitivity``
        rounded up; for Poisson-sampled releases under ``"pld"``, :func:`poisson_pld_sigma`,
        whose work is bounded), or the user's ``sigma``.
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
    sigma. The multiplier found is rounded up onto the public grid
    (:func:`~dpsolve.privacy.mechanisms.multiplier_onto_grid`: the same sigma on every machine),
    then checked with :func:`dpsolve.privacy.epsilon_of` (``"pld"``, what a fit's report
    certifies) and raised by a growing factor, onto the grid, until that holds: every loop is
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
    # the same multiplier on every machine (the search's answer depends on NumPy's SIMD loops
    # below its tolerance): the grid point at or above it, then grid points further up
    multiplier = multiplier_onto_grid(math.exp(log_m))
    sampling = PoissonSampling(rate)
    for attempt in range(_MAX_ROUNDS):
        sigma = _product_up(sensitivity, multiplier)
        event = gaussian_event(sigma, sensitivity, steps=steps, sampling=sampling)
        if epsilon_of(event, delta, "pld") <= epsilon:
            # the event holds sigma / sensitivity rounded down (gaussian_event), which is the
            # grid multiplier itself: never above the noise returned
            return sigma
        multiplier = multiplier_onto_grid(multiplier * (1.0 + rtol * 2.0 ** attempt))
    raise ValueError(f"no noise certified epsilon={epsilon:g} at delta={delta:g} for {steps} "
                     f"Poisson-sampled Gaussians at rate {rate:g}")


# -- exact Gaussian calibration ------------------------------------------------------------------
def exact_gaussian_sigma(sensitivity, steps, epsilon, delta):
    """The least sigma for which ``steps`` Gaussians of L2 ``sensitivity`` are (epsilon, delta)-DP:
    they compose exactly to one with ``mu = sqrt(T) Delta / sigma`` (Dong, Roth & Su 2019), so
    ``sigma = sqrt(T) Delta sigma_1`` with ``sigma_1`` the analytic Gaussian mechanism's
    (Balle & Wang 2018) at sensitivity 1. ``steps`` may be an array.

    ``sigma_1`` is rounded up (:func:`~dpsolve.privacy.gaussian_sigma_analytic`), and so is the
    product: for one T, to the least float at or above the exact ``sqrt(T) Delta sigma_1``; for
    an array, by four ulps of the product as computed, which cover its three roundings (the
    square root and two products, each within half an ulp, and an ulp is more than 2^-53 of the
    value) without an exact check per entry.

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
        ``sqrt(T) Delta sigma_1``, rounded up, of the shape of ``steps``.
    """
    sigma_1 = gaussian_sigma_analytic(1.0, epsilon, delta)
    steps = np.asarray(steps, dtype=float)
    if steps.ndim == 0:
        return _root_times_up(float(steps), _product_up(sensitivity, sigma_1))
    with np.errstate(over="ignore"):
        sigma = sensitivity * np.sqrt(steps) * sigma_1
        for _ in range(4):
            sigma = np.nextafter(sigma, np.inf)
    return sigma


def _root_times_up(steps, scale):
    """The least float at or above the exact ``sqrt(steps) scale`` (``steps, scale >= 0``): the
    nearest float to the computed product, moved to the least one whose square is at least
    ``steps scale^2``, checked exactly."""
    sigma = math.sqrt(steps) * scale
    if not math.isfinite(sigma):
        return sigma
    square = Fraction(steps) * Fraction(scale) ** 2
    while Fraction(sigma) ** 2 < square:
        sigma = math.nextafter(sigma, math.inf)
    while sigma > 0.0 and Fraction(math.nextafter(sigma, 0.0)) ** 2 >= square:
        sigma = math.nextafter(sigma, 0.0)
    return sigma


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


# -- the zCDP inversion ------------------------------------------------------------------------
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
        The least sigma that zCDP certifies, rounded up: ``sqrt(rho)`` is taken as
        ``epsilon / (sqrt(ln(1/delta) + epsilon) + sqrt(ln(1/delta)))``, which subtracts no close
        numbers (the difference of square roots loses ``ln(1/delta) / epsilon`` ulps, either way),
        with ``ln(1/delta)`` bounded above (``sqrt(rho)`` decreases in it) and every rounding
        charged towards more noise: a few ulps above the exact value.
    """
    # ln(1/delta) = -ln delta, one libm call; the rest counted in roundoffs (mechanisms._up)
    log_inv = _up(-math.log(delta), _LIBM)
    # sqrt(log_inv + epsilon): the sum's roundoff halves under the root, plus the root's own
    denominator = _up(_up(math.sqrt(log_inv + epsilon), 2) + _up(math.sqrt(log_inv), 1), 1)
    root_rho = _dn(epsilon / denominator, 1)
    # sqrt(2T) Delta / (2 sqrt(rho)): the root, the product and the quotient
    return _up(math.sqrt(2.0 * steps) * sensitivity / (2.0 * root_rho), 3)


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
    rounded up (epsilon-DP), or the Gaussian sigma of the classic mechanism (``"paper"``,
    Dwork-Roth, as in Chen's 2019 slides, for epsilon, delta in (0, 1)) or of an accountant (its
    certified multiplier times ``Delta``, rounded up).

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
        # rounded up: the privacy loss Delta / s is then at most epsilon
        return check_noise_scale(solver, _quotient_up(sensitivity, epsilon), epsilon)
    if calibration == "paper":
        scale = gaussian_sigma_classic(sensitivity, epsilon, delta)
    else:
        check_noise_scale(solver, 0.1 * sensitivity * _gaussian_unit_sigma(solver, epsilon,
                                                                            delta), epsilon)
        scale = calibrate(epsilon, delta, sensitivity=sensitivity, accountant=calibration)
    return check_noise_scale(solver, scale, epsilon, "noise standard deviation")


# The sources' formulas moved to their solvers' modules, and stay here under their names (the
# same objects); the names of a release that cited the notes' algorithm numbers are deprecated.
__getattr__, __dir__ = moved_names(
    __name__, {"noisy_sgd_paper_sigma": "dpsolve.solvers.noisy_sgd",
               "dpgd_paper_sigma": "dpsolve.solvers.clipped_gd",
               "dpgd_noise": "dpsolve.solvers.clipped_gd",
               "multiparty_gd_paper_sigma": "dpsolve.solvers.multiparty_gd",
               "jayaraman_paper_sigma": "dpsolve.solvers.multiparty_gd",
               "nsgd_paper_sigma": "dpsolve.solvers.joint_sgd"},
    deprecated={"sgd1_paper_sigma": "noisy_sgd_paper_sigma",
                "sgd2_paper_sigma": "multiparty_gd_paper_sigma"})
