"""Euclidean projections onto the constraint sets for the Python layer: the l2 ball
``{||theta|| <= radius}`` (:func:`scale_onto_ball`) and the l1 ball ``{||theta||_1 <= radius}``
(:func:`project_l1_ball`).

The compiled kernels project inside their loops with ``_vector.pxd``'s ``scale_onto_ball``; the
Python-level solvers call the same code (``dpsolve._kernels.vector.project_onto_ball_in_place``):
the squared norm summed in index order, never by BLAS, whose ``dot`` sums in an order that
depends on the CPU's kernels (docs/conventions.md, "Same bits on every machine"). A norm whose
square overflows (an iterate of entries near 1e200) is recomputed with scaling rather than taken
as infinite, which would scale the iterate to 0.
"""
import math

import numpy as np


def scale_onto_ball(theta, radius):
    """Project ``theta`` (a C-contiguous float64 array; matrices in the Frobenius norm) onto
    the ball of ``radius``, in place, by scaling it when its norm exceeds the radius.

    Parameters
    ----------
    theta : ndarray
        C-contiguous float64; modified in place.
    radius : float
        ``> 0``, or ``inf`` for no projection.

    Returns
    -------
    ndarray
        ``theta``.
    """
    from ._kernels.vector import project_onto_ball_in_place
    if not (theta.dtype == np.float64 and theta.flags.c_contiguous):
        raise TypeError("scale_onto_ball projects a C-contiguous float64 array in place")
    project_onto_ball_in_place(theta.reshape(-1), float(radius))
    return theta


def _l1_norm(theta):
    """``||theta||_1`` added in index order (no BLAS, no SIMD-dependent pairwise sum)."""
    from ._ordered_linalg import fixed_order_sum
    return fixed_order_sum(np.abs(theta))


def _candidates(magnitudes, radius):
    """The magnitudes that can lie above the threshold tau, found without sorting (Michelot
    1986's filter): tau is at least ``(sum of any k of them - R) / k`` and at least
    ``max - R``, so the entries below those bounds are 0 in the projection and their order
    does not matter. A margin of 1e-9 relative keeps every entry the rounding of the bounds
    could misplace, so the sort below sees the same top entries, and gives the same tau, as a
    sort of all of them."""
    kept = magnitudes[magnitudes > magnitudes.max() - radius]
    for _ in range(4):
        low = (float(np.sum(kept)) - radius) / kept.size
        slack = 1e-9 * abs(low) + 1e-300
        keep = kept > low - slack
        if keep.all():
            break
        kept = kept[keep]
    return kept


def _l1_threshold(magnitudes, radius):
    """The threshold tau of the projection of a vector with entries of magnitudes
    ``magnitudes`` (``||.||_1 > radius``) onto the l1 ball: ``sum_j max(|v_j| - tau, 0) =
    radius``, from the magnitudes sorted in decreasing order (Duchi-Shalev-Shwartz-Singer-
    Chandra 2008, Figure 1). The cumulative sums are added in order (``np.cumsum`` is
    sequential)."""
    u = np.sort(_candidates(magnitudes, radius))[::-1]
    excess = np.cumsum(u) - radius            # sum of the j largest, minus R
    j = np.arange(1, u.size + 1)
    # the support is the largest j with u_j > (cumsum_j - R) / j; it holds for j = 1
    rho = int(np.flatnonzero(u * j > excess)[-1])
    return max(excess[rho] / (rho + 1), 0.0)


def project_l1_ball(theta, radius):
    """The Euclidean projection of ``theta`` onto the l1 ball ``{||w||_1 <= radius}``, exact.

    ``argmin_{||w||_1 <= R} ||w - theta||_2`` is ``sign(theta) max(|theta| - tau, 0)``, tau
    the threshold with ``sum_j max(|theta_j| - tau, 0) = R`` (0 inside the ball), found by
    sorting the magnitudes (Duchi-Shalev-Shwartz-Singer-Chandra 2008; Condat 2016). Sorting and
    the cumulative sums run in a fixed order, without BLAS, so the result has the same bits on
    every machine. Rounding can leave ``||w||_1`` an ulp or so above R: w is then scaled by
    one ulp below 1 until it is not, so the result always lies in the ball.

    Parameters
    ----------
    theta : array_like
        Any shape (matrices: entrywise l1); finite. Not modified.
    radius : float
        R > 0.

    Returns
    -------
    ndarray
        The projection, float64, of theta's shape (a new array; theta's values copied when
        ``||theta||_1 <= R``).

    Raises
    ------
    ValueError
        If ``radius`` is not a finite number > 0 or theta has non-finite entries.
    """
    radius = float(radius)
    if not (math.isfinite(radius) and radius > 0.0):
        raise ValueError(f"radius must be a finite number > 0, got {radius!r}")
    theta = np.array(theta, dtype=np.float64, order="C", copy=True)
    if not np.all(np.isfinite(theta)):
        raise ValueError("theta contains NaN or infinite values")
    flat = theta.reshape(-1)
    magnitudes = np.abs(flat)
    if _l1_norm(magnitudes) <= radius:
        return theta
    tau = _l1_threshold(magnitudes, radius)
    out = np.sign(flat) * np.maximum(magnitudes - tau, 0.0)
    shrink = np.nextafter(1.0, 0.0)
    while _l1_norm(out) > radius:           # an ulp or so of rounding: nudged inside
        out *= shrink
        shrink *= shrink
    return out.reshape(theta.shape)
