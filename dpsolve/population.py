r"""Population risk: a data source whose risk is known, and held-out estimates for real data.

The population risk of a linear model is ``L(theta) = E loss(<theta, x>; y)`` over the data's
distribution, and what the theory of private stochastic convex optimisation bounds is the
excess population risk ``L(theta_hat) - min_{||theta|| <= R} L(theta)`` (Bassily, Feldman,
Talwar & Thakurta 2019; Feldman, Koren & Talwar 2020). The regulariser of a ``Problem`` (its
``reg``) is not part of L: L is the expected loss alone.

:class:`SphereSource` is a distribution for which L and its minimiser over the ball are
computed by quadrature, with an error estimate: rows ``x = B u`` with ``u`` uniform on the unit
sphere of ``R^p`` (so ``||x|| <= B``, the public row bound of docs/conventions.md), and labels
from a known link. :func:`excess_population_risk` measures a model against it;
:func:`held_out_risk` estimates L on a held-out sample of real data, with a confidence interval.
The mathematics and what is certified: docs/population_risk.md.
"""
import dataclasses
import functools
import math

import numpy as np
import scipy.optimize
import scipy.special
import scipy.stats

from ._numerics import bounded_minimum
from ._ordered_linalg import fixed_order_norm, fixed_order_sum, matvec
from ._validation import check_int, check_real, check_real_array, check_rng
from .losses import Hinge, HuberHinge, Loss, Squared, make_loss
from .problem import Problem

__all__ = ["RiskEstimate", "SphereSource", "excess_population_risk", "held_out_risk",
           "label_correlation", "signal_for_correlation"]

_EPS = np.finfo(np.float64).eps
#: Gauss-Legendre nodes per piece in a' and Gauss-Jacobi nodes in v of the coarse rule (the
#: fine rule doubles both; their difference is the error estimate).
_NODES = (100, 48)
_LINE_NODES = _NODES[0]


@dataclasses.dataclass(frozen=True)
class RiskEstimate:
    """A risk (or an excess risk) with the size of its error.

    Attributes
    ----------
    value : float
        The estimate.
    error : float
        Half-width of the interval ``[value - error, value + error]``: for
        :func:`excess_population_risk` the quadrature error estimates plus the minimiser's
        certified gap, for :func:`held_out_risk` the half-width of a 95% confidence interval.
    method : str
        How it was computed: ``"closed form"``, ``"quadrature"``, ``"t"`` or ``"hoeffding"``.
    """

    value: float
    error: float
    method: str

    @property
    def interval(self):
        """``(value - error, value + error)``."""
        return (self.value - self.error, self.value + self.error)


def _kinks(loss):
    """The margins ``|y z|`` where the loss's derivative or curvature jumps."""
    if isinstance(loss, HuberHinge):
        return [1.0 - loss.width, 1.0 + loss.width]
    return [1.0] if isinstance(loss, Hinge) else []


# the rules are cached: computing one costs an eigenvalue problem, using it a dot product
@functools.lru_cache(maxsize=64)
def _jacobi_rule(n, alpha, beta):
    """Nodes on [-1, 1] and weights summing to one for the weight ``(1-t)^alpha (1+t)^beta``
    (read-only arrays)."""
    nodes, weights = scipy.special.roots_jacobi(n, alpha, beta)
    return _frozen(nodes), _frozen(weights / fixed_order_sum(weights))


@functools.lru_cache(maxsize=8)
def _legendre_rule(n):
    """Gauss-Legendre nodes and weights on [-1, 1] (read-only arrays)."""
    return tuple(_frozen(a) for a in np.polynomial.legendre.leggauss(n))


def _frozen(array):
    array.setflags(write=False)
    return array


class SphereSource:
    r"""Rows uniform on the sphere of radius B in ``R^p``, labels from a known link.

    Parameters
    ----------
    p : int
        The dimension, at least 3 (the reduction to two coordinates needs it).
    theta0 : array_like, shape (p,)
        The link's parameter.
    loss : {"logistic", "hinge", "huber_hinge", "squared"} or Loss
        The loss whose population risk is measured (a margin loss; not multinomial).
    row_norm : float, default 1.0
        B, the rows' norm.
    noise : float, optional
        Squared loss only: the targets are ``y = <theta0, x> + xi`` with ``xi`` uniform on
        ``[-noise, noise]`` (default 0.5); the public label bound is ``B ||theta0|| + noise``.
        The classification losses take ``y`` in {-1, +1} with
        ``P(y = 1 | x) = sigmoid(<theta0, x>)`` (a well-specified logistic model) and no noise.
    huber_width : float, default 0.5
        The huber_hinge width, when ``loss`` is given by name.

    Attributes
    ----------
    p : int
        The dimension.
    theta0 : ndarray, shape (p,)
        The link's parameter (a copy).
    loss : Loss
        The loss object.
    row_norm : float
        B.
    noise : float
        The targets' noise half-width (0 for classification).
    label_bound : float
        The public bound on ``|y|``: 1 for classification, ``B ||theta0|| + noise`` for squared.
    """

    def __init__(self, p, theta0, loss="logistic", *, row_norm=1.0, noise=None, huber_width=0.5):
        self.p = check_int(p, "p", low=3)
        self.theta0 = check_real_array(theta0, "theta0", 1).copy()
        if self.theta0.shape != (self.p,):
            raise ValueError(f"theta0 must have shape ({self.p},), got {self.theta0.shape}")
        self.row_norm = check_real(row_norm, "row_norm", low=0.0)
        loss = make_loss(loss, huber_width=huber_width) if isinstance(loss, str) else loss
        if not isinstance(loss, Loss) or loss.is_multinomial:
            raise ValueError(f"loss must be a margin loss (logistic, hinge, huber_hinge, "
                             f"squared), got {loss!r}")
        norm0 = float(fixed_order_norm(self.theta0))
        if loss.classification:
            if noise is not None:
                raise ValueError("noise is for the squared loss; the classification labels "
                                 "come from the logistic link")
            self.noise, self.label_bound = 0.0, 1.0
        else:
            self.noise = check_real(0.5 if noise is None else noise, "noise", low=0.0,
                                    low_inclusive=True)
            self.label_bound = self.row_norm * norm0 + self.noise
            loss = Squared(label_bound=self.label_bound)
        self.loss = loss
        self._norm0 = norm0
        self._e1 = self.theta0 / norm0 if norm0 > 0 else np.eye(self.p)[0]

    # -- sampling -----------------------------------------------------------------------------
    def sample(self, n, rng=None):
        """n records ``(X, y)``, the same bits for the same seed.

        Parameters
        ----------
        n : int
            The number of records.
        rng : None, int, SeedSequence or Generator
            The randomness (``np.random.default_rng(rng)``).

        Returns
        -------
        X : ndarray, shape (n, p)
            Rows of norm B (scaled by ``1 - 8 eps`` so that rounding keeps them within B).
        y : ndarray, shape (n,)
            Labels in {-1, +1}, or real targets for the squared loss.
        """
        n = check_int(n, "n", low=1)
        rng = check_rng(rng)
        g = rng.standard_normal((n, self.p))
        X = g * (self.row_norm * (1.0 - 8 * _EPS) / np.linalg.norm(g, axis=1))[:, None]
        margin = matvec(X, self.theta0)      # fixed order: the same bits on every machine
        if self.loss.classification:
            y = np.where(rng.random(n) < scipy.special.expit(margin), 1.0, -1.0)
        else:
            y = margin + rng.uniform(-self.noise, self.noise, n)
        return X, y

    def problem(self, n, rng=None, **problem_kwargs):
        """A :class:`dpsolve.Problem` on ``n`` fresh records (:meth:`sample`), with the source's
        loss, row bound and label bound; ``problem_kwargs`` go to ``Problem`` (``radius``,
        ``reg``, ...)."""
        X, y = self.sample(n, rng)
        return Problem(X, y, self.loss, row_norm=self.row_norm, **problem_kwargs)

    # -- the risk -----------------------------------------------------------------------------
    def _expected_loss(self, a, z, derivative=False):
        """``E_y loss(z; y)`` (or its derivative in z) given ``<u, e1> = a``."""
        z = np.ascontiguousarray(z, dtype=np.float64).ravel()
        f = self.loss.derivatives if derivative else self.loss.values
        ones = np.ones_like(z)
        up = scipy.special.expit(self.row_norm * self._norm0 * np.ravel(a))
        return up * f(z, ones) + (1.0 - up) * f(z, -ones)

    def _mean(self, theta, n, n_v, derivative=False):
        """``L(theta)`` (or, theta on the line of theta0, its derivative along it) by a product
        rule in the coordinates ``a' = <u, f1>``, ``b' = <u, f2>`` (f1 = theta's direction, f2
        the unit part of e1 orthogonal to it). The margin is ``B ||theta|| a'``; ``a'`` has the
        density ``(1 - a'^2)^((p-3)/2)`` and, given ``a'``, ``v = b' / sqrt(1 - a'^2)`` the
        density ``(1 - v^2)^((p-4)/2)``: ``a' = cos psi`` by composite n-node Gauss-Legendre
        rules in psi (density ``sin(psi)^(p-2)``), split where the loss has a kink, v by an
        n_v-node Gauss-Jacobi rule."""
        norm = float(np.linalg.norm(theta))
        f1 = theta / norm if norm > 0 else self._e1
        c = float(f1 @ self._e1)
        d = math.sqrt(max(0.0, 1.0 - c * c))
        scale = self.row_norm * norm
        kinks = [k / scale for m in _kinks(self.loss) for k in (m, -m) if scale > m]
        edges = np.unique(np.concatenate([[0.0, math.pi], np.arccos(kinks)]))
        x, w = _legendre_rule(n)
        half = np.diff(edges) / 2
        psi = ((edges[:-1] + half)[:, None] + half[:, None] * x).ravel()
        weight = (half[:, None] * w).ravel() * np.sin(psi) ** (self.p - 2)
        weight /= scipy.special.beta(0.5, (self.p - 1) / 2)
        v, v_weight = _jacobi_rule(n_v if d > 0 else 1, (self.p - 4) / 2, (self.p - 4) / 2)
        a_prime = np.cos(psi)[:, None]
        a = c * a_prime + d * np.sqrt(np.maximum(0.0, 1.0 - a_prime ** 2)) * v
        z = np.broadcast_to(scale * a_prime, a.shape)
        values = self._expected_loss(a, z, derivative).reshape(a.shape)
        if derivative:
            values = values * (self.row_norm * a_prime)
        return float(weight @ (values @ v_weight))

    def risk(self, theta):
        """L(theta), the expected loss (no regulariser), with an error estimate.

        Parameters
        ----------
        theta : array_like, shape (p,)
            The model.

        Returns
        -------
        RiskEstimate
            Squared loss: the closed form ``B^2 ||theta - theta0||^2 / (2p) + noise^2 / 6``
            (its error is rounding). Classification: the product rule of quadrature, its error
            estimated as the difference from the rule with half the nodes in each direction.
        """
        theta = self._check_theta(theta)
        if not self.loss.classification:
            value = (self.row_norm ** 2 * float(np.sum((theta - self.theta0) ** 2)) / (2 * self.p)
                     + self.noise ** 2 / 6)
            return RiskEstimate(value, 16 * _EPS * value, "closed form")
        coarse = self._mean(theta, *_NODES)
        fine = self._mean(theta, *(2 * k for k in _NODES))
        return RiskEstimate(fine, abs(fine - coarse), "quadrature")

    def _line(self, t, n, derivative=False):
        """``phi(t) = L(t e1)`` (or ``phi'(t)``) with n nodes per piece."""
        # _mean differentiates along theta's own direction, -e1 for t < 0
        sign = -1.0 if derivative and t < 0 else 1.0
        return sign * self._mean(t * self._e1, n, 1, derivative)

    def minimum(self, radius):
        """The population minimiser over ``{||theta|| <= radius}`` and its risk.

        By the rotations fixing theta0 (which leave the distribution unchanged) and convexity,
        a minimiser lies on the line of theta0: ``theta_pop = t e1`` with t minimising the 1-D
        convex ``phi(t) = L(t e1)`` on ``[-radius, radius]``.

        Parameters
        ----------
        radius : float
            R > 0.

        Returns
        -------
        theta_pop : ndarray, shape (p,)
            The minimiser found.
        minimum : RiskEstimate
            ``L(theta_pop)``; its error is the 1-D quadrature's error estimate plus the convexity
            gap ``phi(t) - min phi <= max_{|s| <= R} phi'(t) (t - s)``.
        """
        radius = check_real(radius, "radius", low=0.0)
        if not self.loss.classification:
            scale = min(1.0, radius / self._norm0) if self._norm0 > 0 else 1.0
            theta_pop = self.theta0 * scale
            return theta_pop, self.risk(theta_pop)
        t = bounded_minimum(lambda u: self._line(u, _LINE_NODES), -radius, radius, 1e-11)
        slope = self._line(t, 2 * _LINE_NODES, derivative=True)
        gap = max(slope * (t + radius), slope * (t - radius), 0.0)
        fine = self._line(t, 2 * _LINE_NODES)
        error = abs(fine - self._line(t, _LINE_NODES)) + gap
        return t * self._e1, RiskEstimate(fine, error, "quadrature")

    def _check_theta(self, theta):
        theta = check_real_array(theta, "theta", 1)
        if theta.shape != (self.p,):
            raise ValueError(f"theta must have shape ({self.p},), got {theta.shape}")
        return theta


def excess_population_risk(theta, source, radius):
    """``L(theta) - min_{||theta'|| <= radius} L(theta')`` on a source whose risk is known.

    Parameters
    ----------
    theta : array_like, shape (p,)
        The model (a private fit's ``theta``); the regulariser is not part of L.
    source : SphereSource
        The distribution.
    radius : float
        R, the ball over which the minimum is taken (the Problem's ``radius``).

    Returns
    -------
    RiskEstimate
        The excess risk; its error adds the errors of ``L(theta)`` and of the minimum.
    """
    if not isinstance(source, SphereSource):
        raise TypeError(f"source must be a SphereSource, got {type(source).__name__}")
    radius = check_real(radius, "radius", low=0.0)
    theta = source._check_theta(theta)
    risk = source.risk(theta)
    _, minimum = source.minimum(radius)
    return RiskEstimate(risk.value - minimum.value, risk.error + minimum.error, risk.method)


def label_correlation(p, signal, row_norm=1.0):
    r"""``||mu||`` for ``mu = E[y x]`` of the logistic link with ``theta0 = signal e1``.

    ``E[y | x] = tanh(<theta0, x> / 2)``, so ``mu = B E[tanh(B s a / 2) a] e1`` with ``a`` the
    first coordinate of a uniform unit vector (density ``(1 - a^2)^((p-3)/2)``): a Gauss-Jacobi
    rule, its error estimated as the difference from the rule with half the nodes. The
    population gradient of the logistic loss at 0 is ``-mu / 2``.

    Parameters
    ----------
    p : int
        The dimension, at least 3.
    signal : float
        ``s = ||theta0|| >= 0``.
    row_norm : float, default 1.0
        B.

    Returns
    -------
    RiskEstimate
        ``||mu||`` and the quadrature's error estimate.
    """
    p = check_int(p, "p", low=3)
    signal = check_real(signal, "signal", low=0.0, low_inclusive=True)
    row_norm = check_real(row_norm, "row_norm", low=0.0)

    def rule(n):
        a, w = _jacobi_rule(n, (p - 3) / 2, (p - 3) / 2)
        # tanh(x / 2) = 2 expit(x) - 1 by SciPy's scalar loop, and the sum in index order: no
        # NumPy SIMD transcendental and no BLAS dot, so s has the same bits on more machines
        tanh_half = 2.0 * scipy.special.expit(row_norm * signal * a) - 1.0
        return row_norm * fixed_order_sum(w * tanh_half * a)

    fine, coarse = rule(2 * _NODES[0]), rule(_NODES[0])
    return RiskEstimate(fine, abs(fine - coarse), "quadrature")


def signal_for_correlation(p, target, row_norm=1.0):
    """The ``s`` with ``label_correlation(p, s, row_norm).value == target``: a bracketed root
    find (``||mu||`` increases in s, from 0 to its supremum ``B^2 E|a|``). The sweeps' hard
    instance of the DP-SCO lower bound (``theta0_norm = "hard"``) takes ``theta0 = s e1`` with
    the target ``c B max(1/sqrt(n), sqrt(p ln(1/delta))/(n epsilon))``.

    Parameters
    ----------
    p : int
        The dimension, at least 3.
    target : float
        The wanted ``||E[y x]|| > 0``, below ``0.999 B^2 E|a|``.
    row_norm : float, default 1.0
        B > 0.

    Returns
    -------
    float
        ``s``, to a relative tolerance of about ``1e-12`` in the root find (the quadrature's own
        error is :func:`label_correlation`'s).

    Raises
    ------
    ValueError
        If ``target`` is not below the supremum ``B^2 E|a|`` (no logistic link reaches it), or
        an argument is out of its range.
    """
    p = check_int(p, "p", low=3)
    target = check_real(target, "target", low=0.0)
    row_norm = check_real(row_norm, "row_norm", low=0.0)
    top = row_norm ** 2 * math.exp(math.lgamma(p / 2) - math.lgamma((p + 1) / 2)) / math.sqrt(
        math.pi)                                    # B^2 E|a| for a uniform unit vector
    if not target < 0.999 * top:
        raise ValueError(f"target = {target:.4g}: a logistic link's ||E[y x]|| is below "
                         f"B^2 E|a| = {top:.4g} at p = {p}; the target must be below "
                         f"{0.999 * top:.4g}")
    hi = 1.0
    while label_correlation(p, hi, row_norm).value < target:
        hi *= 2.0
    return scipy.optimize.brentq(lambda s: label_correlation(p, s, row_norm).value - target,
                                 0.0, hi, xtol=1e-12, rtol=1e-12)


def held_out_risk(theta, X, y, loss, *, loss_bound=None):
    """The mean loss of ``theta`` on held-out records, with a 95% confidence interval.

    Parameters
    ----------
    theta : array_like, shape (p,)
        The model.
    X : array_like, shape (n, p)
        Held-out rows, not used to fit theta (dense).
    y : array_like, shape (n,)
        Their labels: in {-1, +1} for the classification losses, real targets for squared.
    loss : str or Loss
        The loss.
    loss_bound : float, optional
        A bound on every record's loss at theta. Given, the interval is Hoeffding's
        (``loss_bound sqrt(ln(2/0.05) / (2n))``, valid at every n); otherwise Student's t
        (asymptotic, from the sample's standard deviation).

    Returns
    -------
    RiskEstimate
        The mean loss and the 95% interval's half-width.
    """
    theta = check_real_array(theta, "theta", 1)
    X = check_real_array(X, "X", 2)
    y = check_real_array(y, "y", 1)
    if X.shape != (y.shape[0], theta.shape[0]):
        raise ValueError(f"X must have shape (len(y), len(theta)) = {(len(y), len(theta))}, "
                         f"got {X.shape}")
    if y.shape[0] < 2:
        raise ValueError(f"y must hold at least 2 records, got {y.shape[0]}")
    loss = make_loss(loss)
    if loss.is_multinomial:
        raise ValueError("loss must be a margin loss, got multinomial")
    if loss.classification and not np.all(np.abs(y) == 1.0):
        raise ValueError("y must hold labels in {-1, +1} for a classification loss")
    if loss_bound is not None:
        loss_bound = check_real(loss_bound, "loss_bound", low=0.0)
    values = loss.values(np.ascontiguousarray(matvec(X, theta)), np.ascontiguousarray(y))
    n, mean = len(values), float(values.mean())
    if loss_bound is not None:
        if np.any(values > loss_bound):
            raise ValueError("loss_bound is below a record's loss")
        return RiskEstimate(mean, loss_bound * math.sqrt(math.log(2 / 0.05) / (2 * n)),
                            "hoeffding")
    half = scipy.stats.t.ppf(0.975, n - 1) * float(values.std(ddof=1)) / math.sqrt(n)
    return RiskEstimate(mean, half, "t")
