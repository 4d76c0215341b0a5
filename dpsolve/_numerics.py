"""General numerics that dpsolve's domain modules share: a bounded scalar minimiser and an
accelerated projected gradient method.

* :func:`bounded_minimum`: Brent's bounded minimisation (Brent 1973, ch. 5), SciPy's
  ``minimize_scalar(method="bounded")`` transcribed with Python floats. Why not SciPy's own:
  it gives the same points and result, bit for bit (``tests/test_bounds.py`` compares the two
  on 402 functions), but it runs the loop on NumPy scalars, whose per-operation overhead made
  objective perturbation's settings search 20% slower (51.1 ms per search against 42.5 ms, 69
  minimisations each); and NumPy scalars warn ("invalid value encountered") where the
  search's bound is infinite, which Python floats compute silently. (The tail bound
  :func:`dpsolve.privacy.tail_bounds.gamma_norm_tail`, computed once per plan and cached,
  calls SciPy's.)
* :func:`accelerated_steps`: accelerated projected gradient on a tuple of arrays, with
  constant momentum (V-FISTA: Beck 2017, section 10.7.7) or with FISTA's ``(t - 1)/(t + 2)``
  and adaptive restart (O'Donoghue & Candes 2015); :func:`certified_minimum` runs the second
  until a certificate of the gap reaches a tolerance. The fixed-iteration inner solver
  (:func:`dpsolve._fixed_iteration.minimize`) and the joint-DP references
  (:mod:`dpsolve.joint`) run it, with their own gradients and projections; its steps are the
  operations each of them ran in a loop of its own before, in the same order.

Nothing here knows a loss, a problem or a privacy budget.
"""
# bounded_minimum and _brent_step transcribe SciPy's _minimize_scalar_bounded, whose licence
# asks that its notice be kept with the source:
#
#   Copyright (c) 2001-2002 Enthought, Inc. 2003, SciPy Developers.
#   All rights reserved.
#
#   Redistribution and use in source and binary forms, with or without modification, are
#   permitted provided that the following conditions are met:
#   1. Redistributions of source code must retain the above copyright notice, this list of
#      conditions and the following disclaimer.
#   2. Redistributions in binary form must reproduce the above copyright notice, this list of
#      conditions and the following disclaimer in the documentation and/or other materials
#      provided with the distribution.
#   3. Neither the name of the copyright holder nor the names of its contributors may be used
#      to endorse or promote products derived from this software without specific prior
#      written permission.
#
#   THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY
#   EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF
#   MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE
#   COPYRIGHT OWNER OR CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL,
#   EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF
#   SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION)
#   HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR
#   TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF THIS
#   SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
import math

import numpy as np

__all__ = ["bounded_minimum", "accelerated_steps", "certified_minimum"]


# -- bounded scalar minimisation -----------------------------------------------------------------
def _sign_or_one(x):
    """``np.sign(x) + (x == 0)`` for a float: -1.0 or 1.0 (nan for nan)."""
    if x > 0.0:
        return 1.0
    if x < 0.0:
        return -1.0
    return x if x != x else 1.0


def _brent_step(a, b, xm, best, second, third, e, rat, tol1, tol2, golden_mean):
    """One step proposal of :func:`bounded_minimum`: a parabolic fit through the three best
    points when it is acceptable, else a golden-section step into the larger part of
    ``[a, b]`` (SciPy's operations in SciPy's order).

    Parameters
    ----------
    a, b, xm : float
        The bracket and its midpoint.
    best, second, third : tuple of float
        ``(x, f(x))`` of the best point and of the previous two (SciPy's ``xf``, ``nfc``,
        ``fulc``).
    e, rat : float
        The step before last and the last step.
    tol1, tol2 : float
        The tolerances at the best point.
    golden_mean : float

    Returns
    -------
    e, rat : float
        The new pair (``rat`` the step to take, before its floor at ``tol1``).
    """
    xf, fx = best
    nfc, fnfc = second
    fulc, ffulc = third
    golden = True
    if abs(e) > tol1:               # try a parabolic fit
        golden = False
        r = (xf - nfc) * (fx - ffulc)
        q = (xf - fulc) * (fx - fnfc)
        p = (xf - fulc) * q - (xf - nfc) * r
        q = 2.0 * (q - r)
        if q > 0.0:
            p = -p
        q = abs(q)
        r = e
        e = rat
        if abs(p) < abs(0.5 * q * r) and p > q * (a - xf) and p < q * (b - xf):
            rat = (p + 0.0) / q
            x = xf + rat
            if (x - a) < tol2 or (b - x) < tol2:
                rat = tol1 * _sign_or_one(xm - xf)
        else:
            golden = True
    if golden:                      # a golden-section step
        e = a - xf if xf >= xm else b - xf
        rat = golden_mean * e
    return e, rat


def bounded_minimum(func, x1, x2, xatol, maxfun=500):
    """The ``x`` of ``scipy.optimize.minimize_scalar(func, bounds=(x1, x2), method="bounded",
    options={"xatol": xatol, "maxiter": maxfun})``: Brent's bounded minimisation, transcribed
    step for step from SciPy's ``_minimize_scalar_bounded`` (1.17) with Python floats instead
    of NumPy scalars (module docstring: why it is not SciPy's own).

    Parameters
    ----------
    func : callable
        ``func(x) -> float``; may return inf (read as SciPy reads it, without a warning).
    x1, x2 : float
        The bracket, ``x1 < x2``.
    xatol : float
        The absolute tolerance on x.
    maxfun : int, default 500
        The most evaluations of ``func``.

    Returns
    -------
    float
        The point found, bit for bit SciPy's.
    """
    sqrt_eps = math.sqrt(2.2e-16)
    golden_mean = 0.5 * (3.0 - math.sqrt(5.0))
    a, b = x1, x2
    fulc = a + golden_mean * (b - a)
    nfc, xf = fulc, fulc
    rat = e = 0.0
    x = xf
    fx = func(x)
    num = 1
    ffulc = fnfc = fx
    xm = 0.5 * (a + b)
    tol1 = sqrt_eps * abs(xf) + xatol / 3.0
    tol2 = 2.0 * tol1
    while abs(xf - xm) > (tol2 - 0.5 * (b - a)):
        e, rat = _brent_step(a, b, xm, (xf, fx), (nfc, fnfc), (fulc, ffulc), e, rat, tol1,
                             tol2, golden_mean)
        step = abs(rat)
        if not step >= tol1:            # np.maximum(|rat|, tol1), nan propagated
            step = step if step != step else tol1
        x = xf + _sign_or_one(rat) * step
        fu = func(x)
        num += 1
        if fu <= fx:
            if x >= xf:
                a = xf
            else:
                b = xf
            fulc, ffulc = nfc, fnfc
            nfc, fnfc = xf, fx
            xf, fx = x, fu
        else:
            if x < xf:
                a = x
            else:
                b = x
            if fu <= fnfc or nfc == xf:
                fulc, ffulc = nfc, fnfc
                nfc, fnfc = x, fu
            elif fu <= ffulc or fulc == xf or fulc == nfc:
                fulc, ffulc = x, fu
        xm = 0.5 * (a + b)
        tol1 = sqrt_eps * abs(xf) + xatol / 3.0
        tol2 = 2.0 * tol1
        if num >= maxfun:
            break
    return xf


# -- accelerated projected gradient --------------------------------------------------------------
def accelerated_steps(start, gradient, project, step, momentum=None):
    """Accelerated projected gradient on a tuple of arrays: a generator of the iterates
    ``x_1, x_2, ...`` from ``x_0 = start``.

    Each step is ``x_{k+1} = project(y_k - step * gradient(y_k))`` and
    ``y_{k+1} = x_{k+1} + beta_k (x_{k+1} - x_k)``, from ``y_0 = x_0``, block by block.

    Parameters
    ----------
    start : tuple of ndarray
        ``x_0``; not modified.
    gradient : callable
        ``gradient(y) -> tuple of ndarray``, the blocks of the gradient at y.
    project : callable
        ``project(x) -> tuple of ndarray``, onto the feasible set; may modify the (fresh)
        arrays of x in place.
    step : float
        The step size, ``1 / L``.
    momentum : float or None, default None
        A constant ``beta`` (V-FISTA); None for FISTA's ``beta = (t - 1) / (t + 2)``, t
        counting the steps since the last restart, restarted (``t = 1``) whenever a step goes
        uphill, ``<grad f(y_k), x_{k+1} - x_k> > 0`` (O'Donoghue & Candes 2015's gradient
        scheme).

    Yields
    ------
    tuple of ndarray
        ``x_{k+1}``, before ``y_{k+1}`` is formed from it.
    """
    point, ahead, t = start, start, 1.0
    while True:
        grads = gradient(ahead)
        previous, point = point, project(tuple(a - step * g for a, g in zip(ahead, grads)))
        if momentum is None:
            descent = sum(float(np.sum(g * (a - b))) for g, a, b in zip(grads, point, previous))
            t = 1.0 if descent > 0.0 else t + 1.0
            beta = (t - 1.0) / (t + 2.0)
        else:
            beta = momentum
        yield point
        ahead = tuple(a + beta * (a - b) for a, b in zip(point, previous))


def certified_minimum(start, gradient, project, certificate, step, tol, max_iter, what):
    """Run :func:`accelerated_steps` (FISTA with adaptive restart) until ``certificate(x)``,
    a bound on ``f(x) - min f`` read every 25 steps, is at most ``tol``.

    Parameters
    ----------
    start : tuple of ndarray
        ``x_0``.
    gradient, project : callable
        As :func:`accelerated_steps`.
    certificate : callable
        ``certificate(x) -> float``, a bound on the gap at x.
    step : float
        The step size.
    tol : float
        The gap to certify.
    max_iter : int
        Steps before RuntimeError.
    what : str
        The caller's name, for the error.

    Returns
    -------
    point : tuple of ndarray
        The certified point.
    gap : float
        Its certificate, ``<= tol``.

    Raises
    ------
    RuntimeError
        If ``max_iter`` steps do not reach ``tol``.
    """
    steps = accelerated_steps(start, gradient, project, step)
    point, gap = start, math.inf
    for it in range(max_iter):
        if it % 25 == 0:
            gap = certificate(point)
            if gap <= tol:
                return point, gap
        point = next(steps)
    raise RuntimeError(f"{what} reached a gap of {gap:.3g} after {max_iter} iterations, above "
                       f"tol={tol:g}")
