"""Euclidean projection onto the ball ``{||theta|| <= radius}`` for the Python layer.

The compiled kernels project inside their loops with ``_vector.pxd``'s ``scale_onto_ball``; the
Python-level solvers call the same code (``dpsolve._kernels.vector.project_onto_ball_in_place``):
the squared norm summed in index order, never by BLAS, whose ``dot`` sums in an order that
depends on the CPU's kernels (docs/conventions.md, "Same bits on every machine"). A norm whose
square overflows (an iterate of entries near 1e200) is recomputed with scaling rather than taken
as infinite, which would scale the iterate to 0.
"""
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
