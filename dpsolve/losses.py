r"""The per-sample losses, as objects carrying their constants.

Each loss is a function of the margin ``z = <theta, x>`` and the label y (the multinomial loss:
of the K logits ``theta^T x``). A loss object knows what the privacy analyses and the bounds need
from it, stated for rows of norm at most B (``row_norm``) and, where it matters, parameters in a
ball of radius R:

- logistic: ``|loss'| <= 1``, ``loss'' <= 1/4``, Lipschitz B, ``max_y loss(0; y) = ln 2``;
- hinge: ``|loss'| <= 1``, not smooth, Lipschitz B, loss at zero 1;
- huber_hinge (width h): ``|loss'| <= 1``, ``loss'' <= 1/(2h)``, Lipschitz B, loss at zero 1,
  or ``(1+h)^2/(4h)`` for ``h >= 1``;
- squared: ``|loss'| <= R B + B_y``, ``loss'' = 1``, Lipschitz ``B (R B + B_y)``, loss at zero
  ``B_y^2 / 2``;
- multinomial (K classes, Frobenius norms): logit gradient ``<= sqrt(2)``, logit Hessian
  ``<= 1/2``, Lipschitz ``sqrt(2) B``, loss at zero ``ln K``.

The smoothness of a per-sample loss in theta is the ``loss''`` bound times B². Formulas and
derivations: docs/conventions.md, "Losses and their constants".

The compiled kernels keep one C ``switch`` over the margin losses (faster than a call through a
table of functions); ``kernel_id`` is the loss's entry in that switch
(``dpsolve._kernels.losses.LOSS_KINDS``, generated from the same C enum) and ``kernel_param``
the one parameter the kernels take (the huber_hinge width; 0 for the others). Multinomial has
kernels of its own and no ``kernel_id``.
"""
import dataclasses
import math

import numpy as np
import scipy.optimize
import scipy.special

from ._kernels import losses as _kernels
from ._validation import check_int, check_real

__all__ = ["Hinge", "HuberHinge", "Logistic", "Loss", "Multinomial", "Squared", "LOSSES",
           "make_loss"]


@dataclasses.dataclass(frozen=True)
class Loss:
    """Base class of the losses: constants, kernel id and evaluation on margins.

    Subclasses set the class attributes below and, where the constant depends on a parameter,
    override the methods.

    Attributes
    ----------
    name : str
        The name ``Problem(loss=...)`` takes.
    classification : bool
        Whether labels are classes (a public label set) rather than real targets.
    curvature : float
        ``sup |loss''(z)|`` over margins (``inf`` for hinge, which is not differentiable at its
        kink); for multinomial the bound on the Hessian in the logits (Frobenius).
    derivative_bound : float
        ``sup |loss'(z)|`` (Frobenius norm of the logit gradient for multinomial); for squared
        it depends on the ball and is given by :meth:`lipschitz` instead (``inf`` here).
    """

    name = None
    classification = True
    curvature = math.inf
    derivative_bound = 1.0

    # -- constants --------------------------------------------------------------------------
    @property
    def kernel_id(self):
        """The loss's code in the kernels' switch (None for multinomial)."""
        return _kernels.LOSS_KINDS[self.name]

    @property
    def kernel_param(self):
        """The parameter the margin kernels take (the huber_hinge width; 0 otherwise)."""
        return 0.0

    @property
    def smooth(self):
        """Whether the loss has a finite smoothness constant (every loss but hinge)."""
        return math.isfinite(self.curvature)

    def lipschitz(self, row_norm, radius):
        """Lipschitz constant in theta of one record's loss, rows of norm <= ``row_norm``,
        ``||theta|| <= radius`` (None: unbounded)."""
        return self.derivative_bound * row_norm

    def smoothness(self, row_norm):
        """Smoothness constant in theta of one record's loss: ``curvature * row_norm**2``."""
        return self.curvature * row_norm ** 2 if self.smooth else math.inf

    def max_value_at_zero(self):
        """``max_y loss(0; y)`` over the labels the loss accepts."""
        raise NotImplementedError

    def derivative_at_zero(self):
        """``max_y |loss'(0; y)|`` (the norm of the logit gradient for multinomial): a record's
        gradient at theta = 0 has norm at most this times ``||x||``."""
        return self.derivative_bound

    @property
    def n_outputs(self):
        """Columns of theta: 1 (a vector), or K for multinomial."""
        return 1

    def describe(self):
        """The loss's parameters that a Problem's description records (beyond its name)."""
        return {}

    def base_margin(self, share):
        """The constant margin b that minimises the risk of a constant predictor when a share
        ``share`` in (0, 1) of the labels is positive: ``share loss(b; +1) + (1 - share)
        loss(b; -1)`` (the binary losses; the estimators centre the intercept there,
        docs/intercepts.md)."""
        share = float(share)

        def risk(b):
            z = np.array([b, b])
            return float(np.array([share, 1.0 - share]) @ self.values(z, np.array([1.0, -1.0])))

        # the hinge-type losses vanish beyond the margin 1 + width: the minimiser is inside
        edge = 2.0 + 2.0 * getattr(self, "width", 0.0)
        return float(scipy.optimize.minimize_scalar(risk, bounds=(-edge, edge),
                                                    method="bounded",
                                                    options={"xatol": 1e-10}).x)

    def base_margin_bound(self, n):
        """The largest ``|base_margin(share)|`` over shares in ``[1/(2n), 1 - 1/(2n)]`` (the
        range of the private shares, :mod:`dpsolve.privacy.counts`): public, from n."""
        return 2.0 + 2.0 * getattr(self, "width", 0.0)

    # -- evaluation (kernels) ---------------------------------------------------------------
    def values(self, z, y):
        """``loss(z_i; y_i)`` for every record."""
        return _kernels.loss_values(self.kernel_id, z, y, self.kernel_param)

    def derivatives(self, z, y):
        """``loss'(z_i; y_i)`` for every record (hinge: the subgradient ``-y 1[yz < 1]``)."""
        return _kernels.loss_derivatives(self.kernel_id, z, y, self.kernel_param)

    def second_derivatives(self, z, y):
        """``loss''(z_i; y_i)`` for every record (0 for hinge)."""
        return _kernels.loss_second_derivatives(self.kernel_id, z, y, self.kernel_param)


@dataclasses.dataclass(frozen=True)
class Logistic(Loss):
    """``loss(z; y) = log(1 + exp(-y z))``, y in {-1, +1}."""

    name = "logistic"
    curvature = 0.25

    def max_value_at_zero(self):
        return math.log(2.0)

    def derivative_at_zero(self):
        return 0.5                      # loss'(0) = -y/2

    def base_margin(self, share):
        return float(scipy.special.logit(share))     # the log-odds of the base rate

    def base_margin_bound(self, n):
        return math.log(2.0 * n - 1.0) if n > 1 else 0.0     # logit(1 - 1/(2n))


@dataclasses.dataclass(frozen=True)
class Hinge(Loss):
    """``loss(z; y) = max(0, 1 - y z)``, y in {-1, +1}: Lipschitz, not smooth."""

    name = "hinge"

    def max_value_at_zero(self):
        return 1.0


@dataclasses.dataclass(frozen=True)
class HuberHinge(Loss):
    """The hinge loss with its kink replaced by a parabola of width ``width`` (Chaudhuri,
    Monteleoni & Sarwate 2011): with ``u = 1 - y z``, 0 for ``u < -h``, ``(u + h)^2 / (4h)`` for
    ``|u| <= h`` and u for ``u > h``.

    Parameters
    ----------
    width : float, default 0.5
        h > 0, finite. Smaller is closer to the hinge loss (``0 <= huber_hinge - hinge <=
        h/4``) and less smooth (``loss'' <= 1/(2h)``).
    """

    name = "huber_hinge"
    width: float = 0.5

    def __post_init__(self):
        object.__setattr__(self, "width", check_huber_width(self.width))

    @property
    def curvature(self):
        return 1.0 / (2.0 * self.width)

    @property
    def kernel_param(self):
        return self.width

    def smoothness(self, row_norm):
        return row_norm ** 2 / (2.0 * self.width)

    def max_value_at_zero(self):
        h = self.width
        return 1.0 if h < 1.0 else (1.0 + h) ** 2 / (4.0 * h)

    def derivative_at_zero(self):
        # the margin 0 is on the linear piece for h < 1, else on the quadratic one
        return min(1.0, (1.0 + self.width) / (2.0 * self.width))

    def describe(self):
        return {"huber_width": self.width}


@dataclasses.dataclass(frozen=True)
class Squared(Loss):
    """``loss(z; y) = (z - y)^2 / 2`` for real targets ``|y| <= label_bound``.

    Parameters
    ----------
    label_bound : float, default 1
        Public bound B_y > 0 on ``|y|``. The loss is Lipschitz in theta only on a ball:
        ``B (R B + B_y)``.
    """

    name = "squared"
    classification = False
    curvature = 1.0
    derivative_bound = math.inf
    label_bound: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "label_bound",
                           check_real(self.label_bound, "label_bound", low=0.0))

    def lipschitz(self, row_norm, radius):
        if radius is None:
            return math.inf
        return row_norm * (radius * row_norm + self.label_bound)

    def max_value_at_zero(self):
        return 0.5 * self.label_bound ** 2

    def derivative_at_zero(self):
        return self.label_bound         # loss'(0) = -y

    def describe(self):
        return {"label_bound": self.label_bound}


@dataclasses.dataclass(frozen=True)
class Multinomial(Loss):
    r"""The softmax (cross-entropy) loss for K classes, ``-log softmax(theta^T x)_y`` with
    theta of shape (p, K).

    Its logit gradient ``softmax - e_y`` has norm at most √2 and its logit Hessian
    ``diag(s) - s s^T`` norm at most 1/2 (Popoviciu), so in the Frobenius norm of theta it is
    ``√2 B``-Lipschitz and ``B^2/2``-smooth.

    Parameters
    ----------
    n_classes : int
        K >= 2 (public).
    """

    name = "multinomial"
    curvature = 0.5
    derivative_bound = math.sqrt(2.0)
    n_classes: int = 2

    def __post_init__(self):
        object.__setattr__(self, "n_classes", check_int(self.n_classes, "n_classes", low=2))

    @property
    def kernel_id(self):
        return None

    @property
    def n_outputs(self):
        return self.n_classes

    def max_value_at_zero(self):
        return math.log(self.n_classes)

    def derivative_at_zero(self):
        K = self.n_classes               # ||softmax(0) - e_y|| = sqrt((K - 1)/K)
        return math.sqrt((K - 1) / K)

    def describe(self):
        return {"n_classes": self.n_classes}

    def values(self, z, y):
        return _kernels.multinomial_values(z, y)

    def derivatives(self, z, y):
        return _kernels.multinomial_derivatives(z, y)

    def second_derivatives(self, z, y):
        raise ValueError(
            "loss_second_derivatives is for the margin losses: the multinomial loss's "
            "second derivative is the K x K matrix diag(s) - s s^T per record "
            "(s = softmax(theta^T x_i)), not one number")


#: The losses by name (the names ``Problem(loss=...)`` takes).
LOSSES = {cls.name: cls for cls in (Logistic, Hinge, Squared, HuberHinge, Multinomial)}


def check_huber_width(width, name="huber_width"):
    """The one check of a huber_hinge width: finite and > 0 (the loss divides by it)."""
    return check_real(width, name, low=0.0)


def make_loss(loss, *, huber_width=0.5, label_bound=1.0, n_classes=None):
    """A loss object from a name (with its parameter from the keyword) or a loss object.

    Parameters
    ----------
    loss : {"logistic", "hinge", "squared", "huber_hinge", "multinomial"} or Loss
        A name of :data:`LOSSES`, or a loss object (returned as it is).
    huber_width : float, default 0.5
        Width h of :class:`HuberHinge` (used for ``"huber_hinge"`` only).
    label_bound : float, default 1.0
        Bound ``B_y`` of :class:`Squared` (used for ``"squared"`` only).
    n_classes : int, optional
        K of :class:`Multinomial` (used for ``"multinomial"`` only); default 2.

    Returns
    -------
    Loss
        The loss object.

    Raises
    ------
    ValueError
        For a name that is not a loss.
    """
    if isinstance(loss, Loss):
        return loss
    if isinstance(loss, str) and loss in LOSSES:
        if loss == "huber_hinge":
            return HuberHinge(huber_width)
        if loss == "squared":
            return Squared(label_bound)
        if loss == "multinomial":
            return Multinomial(2 if n_classes is None else n_classes)
        return LOSSES[loss]()
    raise ValueError(f"loss must be one of {sorted(LOSSES)} or a dpsolve.losses.Loss, "
                     f"got {loss!r}")
