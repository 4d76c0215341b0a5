"""Noise samplers for the mechanisms of docs/conventions.md ("Noise mechanisms"), drawn in C from
the caller's numpy Generator.

Each returns fresh noise of shape ``(dim,)``, or ``(size, dim)`` with ``size`` independent rows, and
advances ``rng`` exactly as the NumPy expression given in its docstring would, so a seeded draw can
be reproduced bit for bit without dpsolve. The solvers use the same code (``_kernels/_noise.pxd``)
inside their loops.

Floating-point samplers are not the idealised continuous distributions: a double has finite
precision, and Mironov (2012) shows that naive Laplace sampling can leak through the low bits of the
output. These samplers are for research and for measuring excess risk; see ``secure`` in the solver
docs for what dpsolve does and does not promise.
"""
import numpy as np

from .._kernels import noise as _noise
from .._kernels.stream import Stream
from .._validation import check_int, check_real, check_rng

__all__ = ["Stream", "gaussian_noise", "laplace_noise", "gamma_norm_noise"]


def _draw(kernel, scale, scale_name, dim, size, rng):
    scale = check_real(scale, scale_name, low=0.0, low_inclusive=True)
    dim = check_int(dim, "dim", low=1)
    rows = 1 if size is None else check_int(size, "size", low=0)
    generator = check_rng(rng)
    out = np.zeros((rows, dim))
    kernel(out, scale, generator)
    return out[0] if size is None else out


def gaussian_noise(sigma, dim, *, size=None, rng=None):
    """Isotropic Gaussian noise ``N(0, sigma^2 I_dim)``.

    Parameters
    ----------
    sigma : float
        Standard deviation of each coordinate, ``>= 0`` (see
        :func:`~dpsolve.privacy.gaussian_sigma_analytic` for a calibrated value).
    dim : int
        Dimension ``p >= 1``.
    size : int, optional
        Number of independent rows; ``None`` returns a single vector.
    rng : None, int, SeedSequence or Generator
        Source of randomness; a Generator's stream advances.

    Returns
    -------
    ndarray of shape ``(dim,)`` or ``(size, dim)``
        Equal, bit for bit, to ``sigma * rng.standard_normal((size, dim))`` (row-major order).
    """
    return _draw(_noise.add_gaussian_noise, sigma, "sigma", dim, size, rng)


def laplace_noise(scale, dim, *, size=None, rng=None):
    """Independent Laplace coordinates, density ``exp(-|z_j| / scale) / (2 scale)``.

    With ``scale = Delta_1 / epsilon`` (:func:`~dpsolve.privacy.laplace_scale`) this is the
    epsilon-DP Laplace mechanism for a query of **L1** sensitivity ``Delta_1``; an L2 bound does not
    suffice (docs/conventions.md, "Noise mechanisms").

    Parameters
    ----------
    scale : float
        Laplace scale ``b >= 0``.
    dim, size, rng
        As in :func:`gaussian_noise`.

    Returns
    -------
    ndarray of shape ``(dim,)`` or ``(size, dim)``
        Equal, bit for bit, to ``rng.laplace(0.0, scale, (size, dim))``.
    """
    return _draw(_noise.add_laplace_noise, scale, "scale", dim, size, rng)


def gamma_norm_noise(scale, dim, *, size=None, rng=None):
    """Gamma-norm ("l2-Laplace", vector mechanism) noise, density proportional to ``exp(-||z||_2 / scale)``.

    With ``scale = Delta_2 / epsilon`` (:func:`~dpsolve.privacy.gamma_norm_scale`) this is the
    epsilon-DP mechanism for a query of L2 sensitivity ``Delta_2`` (Chaudhuri et al. 2011; Song,
    Chaudhuri & Sarwate 2013 and Chen's 2019 slides use it). The norm ``||z||`` follows
    ``Gamma(shape=dim, scale=scale)`` and the direction ``z / ||z||`` is uniform on the sphere,
    independent of the norm.

    Parameters
    ----------
    scale : float
        ``>= 0``; the mean norm is ``dim * scale``.
    dim, size, rng
        As in :func:`gaussian_noise`.

    Returns
    -------
    ndarray of shape ``(dim,)`` or ``(size, dim)``
        Row by row, ``(r / ||g||) * g`` with ``r = scale * rng.standard_gamma(dim)`` drawn first and
        then ``g = rng.standard_normal(dim)``; ``||g||^2`` is summed left to right, so the result
        equals that NumPy expression bit for bit when the norm is computed the same way.
    """
    return _draw(_noise.add_gamma_norm_noise, scale, "scale", dim, size, rng)
