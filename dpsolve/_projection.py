"""Euclidean projection onto the ball ``{||theta|| <= radius}`` for the Python layer.

The compiled kernels project inside their loops with ``_vector.pxd``'s ``scale_onto_ball``,
whose norm is a sequential sum (``dpsolve._kernels.vector.project_l2_ball`` exposes it, for the
Python replays of the kernels' protocols, which must match them bit for bit). Python-level
solvers use this one: the same scaling, with the norm from numpy's ``dot`` (BLAS), which is
faster at large p and is what every seeded result released so far was computed with.
"""
import math


def scale_onto_ball(theta, radius):
    """Project ``theta`` (a C-contiguous float64 array; matrices in the Frobenius norm) onto
    the ball of ``radius``, in place, by scaling it when its norm exceeds the radius.

    Parameters
    ----------
    theta : ndarray
        Modified in place.
    radius : float
        ``> 0``, or ``inf`` for no projection.

    Returns
    -------
    ndarray
        ``theta``.
    """
    flat = theta.reshape(-1)
    norm = math.sqrt(float(flat @ flat))
    if norm > radius:
        theta *= radius / norm
    return theta
