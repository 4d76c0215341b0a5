r"""Tail bounds on the smallest eigenvalue of random symmetric matrices, and the moments they
imply: the public constants with which AdaSSP (Wang 2018; :mod:`dpsolve.solvers.adassp`) sets
its ridge and bounds its error.

E is the symmetric noise matrix whose weighted half-vectorisation (off-diagonal entries times
``sqrt(2)``, an isometry for the Frobenius norm) has i.i.d. Gaussian or Laplace entries, or
gamma-norm (l2-Laplace) noise. Each ``*_tail(scale, p, rho)`` returns t with
``P(lambda_min(E) < -t) <= rho``:

* :func:`gaussian_tail`: Tropp 2012, Thm 4.1 (matrix Gaussian series);
* :func:`laplace_tail`: Tropp 2012, Thm 6.2 (subexponential matrix Bernstein);
* :func:`gamma_norm_tail`: the radial and angular parts of the gamma-norm noise bounded apart
  (a quadrature for the radial ratio, Gaussian concentration and Tropp's bound for the angle).

:func:`tail_moments` turns a tail bound into bounds on the first three moments, and
:func:`gamma_norm_moments` bounds ``E||E||^k`` for the gamma-norm noise. Everything here is a
function of public constants (the scale, p and rho): it reads no data.
"""
import functools
import math

from scipy import integrate, optimize, special, stats

__all__ = ["gaussian_tail", "laplace_tail", "gamma_norm_tail", "tail_moments",
           "gamma_norm_moments"]


# -- tail bounds on lambda_min ----------------------------------------------------------------
def gaussian_tail(sigma, p, rho):
    """t with ``P(lambda_min(E) < -t) <= rho`` for the symmetric Gaussian noise E (diagonal
    ``N(0, sigma^2)``, off-diagonal ``N(0, sigma^2 / 2)``): Tropp 2012, Thm 4.1, with variance
    ``||sum A_k^2|| = sigma^2 (p + 1) / 2``, ``t = sigma sqrt((p + 1) ln(p / rho))``.

    Parameters
    ----------
    sigma : float
    p : int
    rho : float

    Returns
    -------
    float
    """
    return sigma * math.sqrt((p + 1.0) * max(math.log(p / rho), 0.0))


def laplace_tail(scale, p, rho):
    """t with ``P(lambda_min(E) < -t) <= rho`` for the symmetric Laplace noise E (diagonal of
    scale b, off-diagonal ``b / sqrt(2)``): the subexponential matrix Bernstein inequality
    (Tropp 2012, Thm 6.2) with ``R = b`` and ``sigma^2 = b^2 (p + 1)``, solved for t:
    ``t = b (L + sqrt(L^2 + 2 (p + 1) L))``, ``L = ln(p / rho)``.

    Parameters
    ----------
    scale : float
    p : int
    rho : float

    Returns
    -------
    float
    """
    L = max(math.log(p / rho), 0.0)
    return scale * (L + math.sqrt(L * L + 2.0 * (p + 1.0) * L))


def _ratio_sf(a, d):
    """``P(R / C > a)`` for independent ``R ~ Gamma(d, 1)`` and ``C ~ chi_d``, by quadrature over
    C (the integrand is smooth; the range left out has probability ``2e-15``, added back). The
    chi density is written with special functions (scipy.stats' per-call overhead made a plan
    take seconds)."""
    lo, hi, log_norm = _chi_range(d)

    def integrand(c):
        return special.gammaincc(d, a * c) * math.exp((d - 1.0) * math.log(c) - 0.5 * c * c
                                                      - log_norm)

    value, _ = integrate.quad(integrand, lo, hi, points=[math.sqrt(d)], epsabs=1e-14,
                              epsrel=1e-10, limit=200)
    return value * (1.0 + 1e-8) + 2e-15 + 1e-14


@functools.lru_cache(maxsize=256)
def _chi_range(d):
    """The chi_d quantiles at 1e-15 and 1 - 1e-15, and the log of its density's normaliser
    ``2^(d/2 - 1) Gamma(d/2)``."""
    return (float(stats.chi.ppf(1e-15, d)), float(stats.chi.isf(1e-15, d)),
            (d / 2.0 - 1.0) * math.log(2.0) + float(special.gammaln(d / 2.0)))


def _goe_quantile(p, rho):
    """x with ``P(lambda_max(G) >= x) <= rho`` for the symmetric G whose half-vector is
    ``N(0, I_q)`` (diagonal N(0, 1), off-diagonal N(0, 1/2)): the smaller of Gaussian
    concentration (``lambda_max`` is 1-Lipschitz in the half-vector, and
    ``E lambda_max(G) <= sqrt(2) E||g_p||`` by Sudakov-Fernique) and Tropp's Gaussian series
    bound ``p exp(-x^2 / (p + 1))``."""
    mean = 2.0 * math.exp(special.gammaln((p + 1.0) / 2.0) - special.gammaln(p / 2.0))
    return min(mean + math.sqrt(2.0 * math.log(1.0 / rho)),
               math.sqrt((p + 1.0) * max(math.log(p / rho), 0.0)))


@functools.lru_cache(maxsize=256)
def _gamma_norm_unit_tail(p, rho):
    q = p * (p + 1) // 2
    # the Frobenius bound: -lambda_min(E) <= ||E||_F = R ~ Gamma(q, 1)
    best = float(stats.gamma.isf(rho, q)) * (1.0 + 1e-12)

    def split(f):
        rho_ratio, rho_goe = f * rho, (1.0 - f) * rho
        a = optimize.brentq(lambda a: _ratio_sf(a, q) - rho_ratio * (1.0 - 1e-6),
                            1e-6, 1e6, xtol=1e-13, rtol=1e-12)
        return a * (1.0 + 1e-9) * _goe_quantile(p, rho_goe)

    if p > 1:
        found = optimize.minimize_scalar(split, bounds=(0.02, 0.98), method="bounded",
                                         options={"xatol": 1e-3})
        best = min(best, split(float(found.x)))     # re-evaluated: the bound at that split
    return best


def gamma_norm_tail(scale, p, rho):
    """t with ``P(lambda_min(E) < -t) <= rho`` for the symmetric E whose weighted
    half-vectorisation has gamma-norm noise of this scale (density ``exp(-||v|| / scale)`` in
    ``q = p (p + 1) / 2`` dimensions).

    ``v = R U`` with ``R ~ Gamma(q, scale)`` independent of the direction U, uniform on the
    sphere; ``U = G / ||G||_F`` for the symmetric Gaussian G of half-vector ``N(0, I_q)``, whose
    norm ``C = ||G||_F ~ chi_q`` is independent of its direction. So ``-lambda_min(E) = (R / C)
    lambda_max(-G)`` with R independent of G, and for any split ``rho_1 + rho_2 = rho``
    (union bound) ``t = scale a x``, a the ``1 - rho_1`` quantile of ``R / C`` (by quadrature)
    and x the ``1 - rho_2`` quantile bound of :func:`_goe_quantile`. The split minimising t is
    taken (numerically, over public constants), and the Frobenius bound ``-lambda_min(E) <=
    ||E||_F = R`` (t the Gamma quantile) when it is smaller (p = 1, 2).

    Parameters
    ----------
    scale : float
    p : int
    rho : float

    Returns
    -------
    float
    """
    return scale * _gamma_norm_unit_tail(int(p), float(rho))


# -- the moments they imply ----------------------------------------------------------------
def tail_moments(tail, scale):
    """Upper bounds on ``E X, E X^2, E X^3`` for X >= 0 with ``P(X >= scale s) <= tail(s)``:
    ``E X^k = int_0^inf k x^(k-1) P(X >= x) dx``, with the probability capped at 1.

    Parameters
    ----------
    tail : callable
        ``tail(s) -> float``, non-increasing, a bound on ``P(X >= scale s)``.
    scale : float
        The scale of X.

    Returns
    -------
    list of float
        The bounds on ``E X``, ``E X^2`` and ``E X^3``.
    """
    s0 = 0.0
    hi = 1.0
    while tail(hi) >= 1.0:
        hi *= 2.0
    lo = 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if tail(mid) >= 1.0 else (lo, mid)
    s0 = hi
    moments = []
    for k in (1, 2, 3):
        rest, _ = integrate.quad(lambda s: k * s ** (k - 1) * min(1.0, tail(s)), s0, math.inf,
                                 epsabs=0.0, epsrel=1e-10, limit=200)
        # quad's error on a smooth, decreasing, positive integrand: a relative allowance
        moments.append((s0 ** k + rest * (1.0 + 1e-6)) * scale ** k)
    return moments


def gamma_norm_moments(p, scale):
    """Upper bounds on ``E||E||^k``, k = 1, 2, 3, for the gamma-norm matrix noise of this scale:
    ``E = R U`` with R ~ Gamma(q, scale) independent of U, and ``G = C U`` (C = ||G||_F ~ chi_q
    independent of U) for the Gaussian G of :func:`gamma_norm_tail`, so ``E||E||^k = E R^k
    E||G||^k / E C^k``; ``E||G||^k`` is integrated from the two-sided tail
    ``min(2p exp(-x^2 / (p + 1)), 2 exp(-(x - m)^2 / 2))`` (Tropp; Gaussian concentration about
    the bound m on ``E lambda_max``).

    Parameters
    ----------
    p : int
        The matrix's dimension.
    scale : float
        The gamma-norm noise's scale.

    Returns
    -------
    list of float
        The bounds on ``E||E||``, ``E||E||^2`` and ``E||E||^3``.
    """
    q = p * (p + 1) // 2
    mean = 2.0 * math.exp(special.gammaln((p + 1.0) / 2.0) - special.gammaln(p / 2.0))

    def tail(x):
        conc = 1.0 if x <= mean else 2.0 * math.exp(-(x - mean) ** 2 / 2.0)
        return min(2.0 * p * math.exp(-x * x / (p + 1.0)), conc)

    goe = tail_moments(tail, 1.0)
    out = []
    for k, g in zip((1, 2, 3), goe):
        gamma_k = math.exp(special.gammaln(q + k) - special.gammaln(q))
        chi_k = 2.0 ** (k / 2.0) * math.exp(special.gammaln((q + k) / 2.0)
                                             - special.gammaln(q / 2.0))
        # never above the Frobenius bound ||E|| <= R
        out.append(scale ** k * gamma_k * min(g / chi_k, 1.0))
    return out
