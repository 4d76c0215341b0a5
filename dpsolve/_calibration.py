"""The noise a solver adds for a target (epsilon, delta): one place for every solver's checks.

A solver either calibrates (``epsilon`` and ``delta`` given; ``calibration`` is ``"paper"``, the
source's own formula, or the name of an accountant that finds the least noise) or takes an
explicit noise level from the user (``sigma`` or ``scale``), in which case it claims what the
tightest accountant certifies.
"""
import math
import warnings

from ._validation import check_choice, check_real
from .privacy.accounting import PrivacyWarning, calibrate


def warn_large_delta(delta, n, stacklevel):
    if delta >= 1.0 / n:
        warnings.warn(f"delta={delta:.3g} >= 1/n: a mechanism that publishes a random record "
                      "meets such a guarantee", PrivacyWarning, stacklevel=stacklevel + 1)


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
    """
    if sigma is None:
        calibration = check_choice(calibration, "calibration", calibrations)
        if epsilon is None or delta is None:
            raise TypeError(f"{solver} needs epsilon and delta (or an explicit sigma and delta)")
        if calibration == "paper":
            sigma = paper(epsilon, delta)
            epsilon, delta = float(epsilon), float(delta)
        else:
            epsilon = check_real(epsilon, "epsilon", low=0.0)
            delta = check_real(delta, "delta", low=0.0, high=1.0)
            sigma = calibrate(epsilon, delta, sensitivity=sensitivity, steps=steps,
                              sampling=sampling, accountant=calibration)
    else:
        if epsilon is not None:
            raise ValueError("pass either epsilon (to calibrate the noise) or sigma, not both")
        if delta is None:
            raise TypeError(f"{solver} with an explicit sigma needs delta, the delta at which "
                            "the certified epsilon is reported")
        sigma = check_real(sigma, "sigma", low=0.0, low_inclusive=True)
        delta = check_real(delta, "delta", low=0.0, high=1.0)
        calibration = "explicit"
    warn_large_delta(delta, n, stacklevel=3)
    return sigma, epsilon, delta, calibration


def check_finite_lipschitz(solver, problem):
    """The Lipschitz constant every sensitivity here rests on; raise when there is none."""
    L = problem.lipschitz
    if not math.isfinite(L):
        raise ValueError(
            f"{solver} needs a finite Lipschitz constant; the {problem.loss} loss has one only "
            "on a bounded set: give the Problem a radius"
        )
    return L
