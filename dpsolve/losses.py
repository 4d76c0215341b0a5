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

Everything else that differs between the losses is on the objects too (as scikit-learn's
``_loss`` module keeps each loss's label range on the loss), so that no other module tests a
loss's name: the public label set and the coding of the labels (:meth:`Loss.public_classes`,
:meth:`Loss.code_labels`), the shape of theta (:meth:`Loss.parameter_shape`,
:attr:`Loss.n_outputs`), the Fenchel conjugate and the per-record terms of the duality-gap
certificate (:meth:`Loss.conjugate`, :meth:`Loss.certificate_terms`) and the loss as a cvxpy
expression (:meth:`Loss.cvxpy_objective`).

The compiled kernels keep one C ``switch`` over the margin losses (faster than a call through a
table of functions); ``kernel_id`` is the loss's entry in that switch
(``dpsolve._kernels.losses.LOSS_KINDS``, from the same C enum) and ``kernel_param`` the one
parameter the kernels take (the huber_hinge width; 0 for the others). Multinomial has kernels
of its own and no ``kernel_id``; so has a loss evaluated by its own NumPy methods.

Solvers name the :data:`PROPERTIES` they need (``SolverSpec.needs``) rather than losses: a
loss's :attr:`Loss.properties` decide which solvers take it (docs/adding_a_loss.md).
"""
import dataclasses
import math

import numpy as np
import scipy.optimize
import scipy.special

from ._kernels import losses as _kernels
from ._labels import DEFAULT_BINARY_CODINGS  # noqa: F401 (a public name of this module)
from ._labels import check_distinct, label_codes, label_tuple
from ._validation import check_int, check_real

__all__ = ["Hinge", "HuberHinge", "Logistic", "Loss", "Multinomial", "Squared", "LOSSES",
           "PROPERTIES", "make_loss", "register_loss"]

_EPS = np.finfo(np.float64).eps

#: What a solver's theory or implementation may need of a loss (``SolverSpec.needs``), each with
#: its meaning and its test on a loss object; :attr:`Loss.properties` holds those a loss has.
#: The registry matches a solver's needs against them (a solver takes a loss that has all).
PROPERTIES = {
    "convex": ("convex in its margin(s), so that the ridge makes the objective strongly convex",
               lambda loss: loss.convex),
    "margin": ("a function of one margin <theta, x> (theta in R^p), not of K logits",
               lambda loss: not loss.is_multinomial),
    "smooth": ("twice differentiable almost everywhere with bounded curvature "
               "(sup |loss''| finite)", lambda loss: loss.smooth),
    "unit_derivative": ("|loss'| <= 1 at every margin (Chaudhuri, Monteleoni & Sarwate 2011)",
                        lambda loss: loss.derivative_bound <= 1.0),
    "compiled": ("evaluated by dpsolve's compiled kernels (an entry in their C switch over the "
                 "margin losses, or kernels of its own)", lambda loss: loss.compiled),
    "sufficient_statistics": ("its empirical risk is a function of X^T X, X^T y and y^T y "
                              "(the squared loss; AdaSSP, Wang 2018)",
                              lambda loss: loss.sufficient_statistics),
}


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
    is_multinomial : bool
        Whether the loss is a function of K logits ``theta^T x`` (theta of shape (p, K), norms
        Frobenius) rather than of one margin ``<theta, x>``: no kernel id, no Fenchel dual in
        one variable per record, and the solvers written for theta in R^p refuse it.
    lipschitz_depends_on, smoothness_depends_on : tuple of str
        The Problem parameters, besides the row bound, that :meth:`lipschitz` and
        :meth:`smoothness` depend on (named when a derived constant is out of range).
    convex : bool
        Whether the loss is convex in its margin(s) (every built-in loss).
    sufficient_statistics : bool
        Whether the empirical risk is a function of ``X^T X``, ``X^T y`` and ``y^T y`` (the
        squared loss only).
    keywords : mapping of str to str
        The Problem keywords that set the loss's parameters when it is given by name
        (``{"huber_width": "width"}`` for huber_hinge); a loss with parameters of its own is
        given to a Problem as an object, which carries them.
    """

    name = None
    classification = True
    curvature = math.inf
    derivative_bound = 1.0
    is_multinomial = False
    lipschitz_depends_on = ()
    smoothness_depends_on = ()
    convex = True
    sufficient_statistics = False
    keywords = {}

    # -- constants --------------------------------------------------------------------------
    @property
    def kernel_id(self):
        """The loss's code in the kernels' switch (None for multinomial, and for a loss that
        has no entry there: it is evaluated by its own :meth:`values`, :meth:`derivatives`
        and :meth:`second_derivatives`)."""
        return _kernels.LOSS_KINDS.get(self.name)

    @property
    def compiled(self):
        """Whether dpsolve's compiled kernels evaluate the loss (it has a :attr:`kernel_id`)."""
        return self.kernel_id is not None

    @property
    def properties(self):
        """The names of :data:`PROPERTIES` this loss has (a frozenset)."""
        return frozenset(name for name, (_, test) in PROPERTIES.items() if test(self))

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

    @property
    def binary(self):
        """Whether the labels are two classes, coded -1/+1 (logistic, hinge, huber_hinge)."""
        return self.classification and not self.is_multinomial

    def parameter_shape(self, p):
        """The shape of theta: one column per output of the loss.

        Parameters
        ----------
        p : int
            Number of columns of X.

        Returns
        -------
        tuple of int
            ``(p,)`` for a margin loss, ``(p, K)`` for multinomial (:attr:`n_outputs`).
        """
        return (p,)

    def center(self, theta):
        """The parameter without the directions along which every record's loss is constant.

        The margin losses have none (theta is returned as it is); multinomial removes the
        component that adds one vector to every column (it shifts all K logits equally).

        Parameters
        ----------
        theta : ndarray of shape ``parameter_shape(p)``
            A parameter.

        Returns
        -------
        ndarray
            A parameter with the same losses on every record and a norm no larger.
        """
        return theta

    def describe(self):
        """The loss's parameters that a Problem's description records (beyond its name)."""
        return {}

    def scale_parameters(self):
        """The loss's positive real parameters, by the Problem keyword that sets them.

        Returns
        -------
        dict
            ``{"label_bound": B_y}`` (squared), ``{"huber_width": h}`` (huber_hinge), else
            empty: public scales, held to the range of a Problem's constants like
            ``row_norm``; ``max_value_at_zero`` depends on them.
        """
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

    # -- labels ---------------------------------------------------------------------------
    @classmethod
    def public_classes(cls, classes, n_classes):
        """The public label set from the ``classes`` / ``n_classes`` arguments of a Problem,
        checked before any data is read.

        The binary losses: ``classes`` (two distinct values, the negative class first) or, by
        default, ``(-1, 1)``; ``n_classes`` is for multinomial only.

        Parameters
        ----------
        classes : sequence or None
            The public labels (numbers or strings, distinct, finite), or None.
        n_classes : int or None
            Multinomial only: K >= 2, for the labels ``0 .. K-1``.

        Returns
        -------
        tuple or None
            The label set, in the order given (None for the squared loss).

        Raises
        ------
        TypeError, ValueError
            For a label set that does not fit the loss.
        """
        if n_classes is not None:
            raise ValueError(f"n_classes is for loss='multinomial'; for loss={cls.name!r} pass "
                             "classes=(negative, positive) if the labels are not -1/+1 or 0/1")
        if classes is None:
            return (-1, 1)
        values = label_tuple(classes)
        if len(values) != 2:
            raise ValueError(f"classes must hold exactly two labels (negative, positive) for "
                             f"loss={cls.name!r}, got {len(values)}")
        return check_distinct(values)

    def code_labels(self, y, classes, default_coding=False):
        """Labels coded as the loss reads them: ``y_i = -1`` for ``classes[0]`` and ``+1`` for
        ``classes[1]`` (float64), for the binary losses.

        Parameters
        ----------
        y : ndarray, shape (n,)
            The labels as given (numbers or strings).
        classes : tuple
            The public label set (:meth:`public_classes`).
        default_coding : bool, default False
            No ``classes=`` was given: the labels may then be -1/+1 or 0/1 (0 the negative
            class), but not a mix of the two.

        Returns
        -------
        ndarray, shape (n,)
            The coded labels (a new array).

        Raises
        ------
        TypeError, ValueError
            For labels outside the set, non-finite or of a type that is not a label.
        """
        return np.where(label_codes(y, self.name, classes, default_coding) == 1, 1.0, -1.0)

    # -- Fenchel dual (the certificate of dpsolve.reference) ------------------------------
    def clip_dual(self, alpha, y):
        """``alpha`` mapped into the domain of :meth:`conjugate`.

        For the classification margin losses the domain is ``b = alpha y`` in [0, 1]: b is
        clipped and ``alpha = b y`` returned (y is +-1, so the products are exact). The
        squared loss's domain is all of R.

        Parameters
        ----------
        alpha : ndarray, shape (n,)
            Dual values, one per record.
        y : ndarray, shape (n,)
            Coded labels.

        Returns
        -------
        ndarray, shape (n,)
            The feasible dual values.
        """
        return np.clip(alpha * y, 0.0, 1.0) * y

    def conjugate(self, alpha, y):
        r"""The conjugate term ``loss_i^*(-alpha_i)`` of each record's loss
        ``loss_i(z) = loss(z; y_i)``, for alpha in the domain (:meth:`clip_dual`).

        The Fenchel dual of the mean-form objective is
        ``D(alpha) = -(1/n) sum_i loss_i^*(-alpha_i) - h^*((1/n) X^T alpha)``, h the
        regulariser and the ball's indicator; ``loss(z) + loss^*(-alpha) >= -alpha z``
        (Fenchel-Young), with equality at ``alpha = -loss'(z)``. With ``b = alpha y``:
        logistic ``b log b + (1 - b) log(1 - b)``, hinge ``-b``, huber_hinge
        ``-b - h b (1 - b)``; squared ``alpha^2 / 2 - alpha y``.

        Parameters
        ----------
        alpha : ndarray, shape (n,)
            Dual values in the domain.
        y : ndarray, shape (n,)
            Coded labels.

        Returns
        -------
        ndarray, shape (n,)
            ``loss_i^*(-alpha_i)``.

        Raises
        ------
        NotImplementedError
            For multinomial, whose conjugate is a function of K dual values per record (its
            certificate is the gradient one).
        """
        raise NotImplementedError(f"loss={self.name!r} has no conjugate in one variable per "
                                  "record")

    def certificate_terms(self, z, z_err, alpha, y):
        """The per-record terms of the duality gap, with bounds on their rounding.

        Parameters
        ----------
        z : ndarray, shape (m,)
            Computed margins of a block of records.
        z_err : ndarray, shape (m,)
            Bounds on ``|fl(z_i) - z_i|``.
        alpha : ndarray, shape (m,)
            Dual values in the domain of :meth:`conjugate`.
        y : ndarray, shape (m,)
            Coded labels.

        Returns
        -------
        phi : ndarray
            ``loss(z_i; y_i)``.
        phi_err : ndarray
            Bounds on the error of ``phi`` from the error in z and from evaluating it
            (besides a relative ``eps`` the caller charges).
        conj : ndarray
            ``loss_i^*(-alpha_i)`` (:meth:`conjugate`).
        conj_mag : ndarray
            A bound on ``|conj|`` (relative rounding is charged on it).
        conj_extra : float
            The rounding of the conjugate beyond the relative one, per term.
        """
        raise NotImplementedError(f"loss={self.name!r} has no conjugate in one variable per "
                                  "record")

    def cvxpy_objective(self, z, y, n):
        """The mean loss ``(1/n) sum_i loss(z_i; y_i)`` as a cvxpy expression.

        Parameters
        ----------
        z : cvxpy.Expression, shape (n,) or (n, K)
            The margins (logits) ``X @ theta``.
        y : ndarray, shape (n,)
            Coded labels.
        n : int
            Number of records.

        Returns
        -------
        objective : cvxpy.Expression
            The mean loss, in a form a cone solver takes.
        constraints : list
            Constraints on the auxiliary variables the expression uses.
        margin : cvxpy.Constraint or None
            The constraint whose dual values are ``b_i / n`` (hinge), or None.
        """
        raise NotImplementedError

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

    # -- the Hessian in the margins (Newton's method) ------------------------------------
    def logit_curvature(self, z, y, derivatives=None):
        """Each record's Hessian of the loss in its margin(s), in the compact form
        :meth:`logit_hessian_times` reads.

        Parameters
        ----------
        z : ndarray, shape (n,) or (n, K)
            Margins (logits for multinomial).
        y : ndarray, shape (n,)
            Coded labels.
        derivatives : ndarray, optional
            :meth:`derivatives` at ``(z, y)``, if already computed (not modified).

        Returns
        -------
        ndarray
            ``loss''(z_i; y_i)``, shape (n,) (the generalised second derivative for
            huber_hinge, 0 for hinge); for multinomial the softmax rows ``s_i``, shape (n, K),
            the Hessian being ``diag(s_i) - s_i s_i^T``.
        """
        return self.second_derivatives(z, y)

    def logit_hessian_times(self, curvature, v):
        """Each record's Hessian in the margin(s) times the record's entry of ``v``.

        Parameters
        ----------
        curvature : ndarray
            :meth:`logit_curvature`.
        v : ndarray, shape (n,) or (n, K)
            One margin direction per record (``X @ V`` for a direction V of theta).

        Returns
        -------
        ndarray, of ``v``'s shape
            ``loss''_i v_i``; for multinomial ``(diag(s_i) - s_i s_i^T) v_i``.
        """
        return curvature * v


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

    def conjugate(self, alpha, y):
        """``b log b + (1 - b) log(1 - b)`` with ``b = alpha y`` in [0, 1] (0 log 0 = 0)."""
        b = alpha * y                                     # in [0, 1]
        one_minus_b = 1.0 - b                             # exact for b >= 1/2
        return scipy.special.xlogy(b, b) + scipy.special.xlogy(one_minus_b, one_minus_b)

    def certificate_terms(self, z, z_err, alpha, y):
        u = y * z
        phi = np.logaddexp(0.0, -u)                       # log(1 + e^{-u}), |phi'| <= 1
        conj = self.conjugate(alpha, y)
        # rounding of 1 - b when b < 1/2: |d/d(1-b)| = |log(1-b) + 1| <= 1.7, error <= eps/2
        return phi, z_err, conj, np.abs(conj), _EPS

    def cvxpy_objective(self, z, y, n):
        import cvxpy as cp

        return cp.sum(cp.logistic(-cp.multiply(y, z))) / n, [], None


@dataclasses.dataclass(frozen=True)
class Hinge(Loss):
    """``loss(z; y) = max(0, 1 - y z)``, y in {-1, +1}: Lipschitz, not smooth."""

    name = "hinge"

    def max_value_at_zero(self):
        return 1.0

    def conjugate(self, alpha, y):
        """``-b`` with ``b = alpha y`` in [0, 1]."""
        return -(alpha * y)

    def certificate_terms(self, z, z_err, alpha, y):
        u = y * z
        phi = np.maximum(0.0, 1.0 - u)                    # |phi'| <= 1
        conj = self.conjugate(alpha, y)
        return phi, z_err, conj, np.abs(conj), 0.0

    def cvxpy_objective(self, z, y, n):
        """``(1/n) sum_i xi_i`` with slacks ``xi_i >= 0``, ``xi_i >= 1 - y_i z_i``: explicit, so
        that the margin constraints' duals (the dual point) are exposed."""
        import cvxpy as cp

        xi = cp.Variable(n)
        margin = xi >= 1 - cp.multiply(y, z)
        return cp.sum(xi) / n, [xi >= 0, margin], margin


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
    smoothness_depends_on = ("huber_width",)
    keywords = {"huber_width": "width"}
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

    def scale_parameters(self):
        return {"huber_width": self.width}

    def conjugate(self, alpha, y):
        """``-b - h b (1 - b)`` with ``b = alpha y`` in [0, 1]."""
        b = alpha * y                                     # in [0, 1]
        return -b - self.width * b * (1.0 - b)

    def certificate_terms(self, z, z_err, alpha, y):
        w = self.width
        u = 1.0 - y * z                                   # y z is exact: y = +-1
        # 0 for u < -w, (u + w)^2 / (4w) for |u| <= w, u for u > w; |phi'| <= 1
        phi = np.where(u > w, u, np.where(u < -w, 0.0, (u + w) ** 2 / (4.0 * w)))
        # Beyond the error in z: on the quadratic piece, rounding 1 - yz and u + w moves the
        # argument by at most (|u| + 2w) eps/2 <= 1.5 w eps, at slope <= 1; the other rounding
        # is relative to |phi| (charged by the caller). Charged on every term: 2 w eps.
        phi_err = z_err + 2.0 * _EPS * w
        b = alpha * y
        conj = self.conjugate(alpha, y)
        conj_mag = b + w * b * (1.0 - b)                  # = |conj|: both terms are >= 0
        # rounding of 1 - b when b < 1/2 (error <= eps/2), times w b <= w
        return phi, phi_err, conj, conj_mag, w * _EPS

    def cvxpy_objective(self, z, y, n):
        """With ``w = 1 + h - y z`` the loss is 0 (w < 0), ``w^2 / (4h)`` (0 <= w <= 2h),
        ``w - h`` (w > 2h), which is ``min_a a^2 / (4h) + pos(w - a)`` (attained at
        ``a = clip(w, 0, 2h)``): a QP."""
        import cvxpy as cp

        # (cp.huber(cp.pos(w), 2h) / (4h) is the same function but took Clarabel 6x longer at
        # n = 10^4, p = 50.)
        h = self.width
        a = cp.Variable(n)
        return (cp.sum_squares(a) / (4 * h)
                + cp.sum(cp.pos(1 + h - cp.multiply(y, z) - a))) / n, [], None


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
    lipschitz_depends_on = ("radius", "label_bound")
    sufficient_statistics = True
    keywords = {"label_bound": "label_bound"}
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

    def scale_parameters(self):
        return {"label_bound": self.label_bound}

    @classmethod
    def public_classes(cls, classes, n_classes):
        """None: the targets are real numbers, there is no label set (``classes`` and
        ``n_classes`` must be None)."""
        if classes is not None or n_classes is not None:
            raise ValueError(f"classes and n_classes are for the classification losses, not "
                             f"loss={cls.name!r}")
        return None

    def code_labels(self, y, classes=None, default_coding=False):
        """The real targets as float64 (a new array), checked: finite, ``|y_i| <= B_y``
        (``classes`` and ``default_coding`` are not used)."""
        if not (np.issubdtype(y.dtype, np.floating) or np.issubdtype(y.dtype, np.integer)):
            raise TypeError(f"y must hold real numbers for the squared loss, got dtype {y.dtype}")
        y = np.array(y, dtype=np.float64, copy=True)
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinite values")
        if np.any(np.abs(y) > self.label_bound):
            raise ValueError(
                f"squared loss needs |y_i| <= label_bound={self.label_bound:g}; "
                "rescale y or choose a larger public bound"
            )
        return y

    def clip_dual(self, alpha, y):
        """``alpha`` itself: the conjugate is finite on all of R."""
        return alpha

    def conjugate(self, alpha, y):
        """``alpha^2 / 2 - alpha y``."""
        return 0.5 * alpha * alpha - alpha * y

    def certificate_terms(self, z, z_err, alpha, y):
        r = z - y
        phi = 0.5 * r * r
        phi_err = (np.abs(r) + z_err) * z_err + 0.5 * z_err * z_err
        conj = self.conjugate(alpha, y)
        conj_mag = 0.5 * alpha * alpha + np.abs(alpha * y)
        return phi, phi_err, conj, conj_mag, 0.0

    def cvxpy_objective(self, z, y, n):
        import cvxpy as cp

        return cp.sum_squares(z - y) / (2 * n), [], None


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
    is_multinomial = True
    compiled = True                 # kernels of its own, outside the margin losses' switch
    keywords = {"n_classes": "n_classes"}
    n_classes: int = 2

    def __post_init__(self):
        object.__setattr__(self, "n_classes", check_int(self.n_classes, "n_classes", low=2))

    @property
    def kernel_id(self):
        return None

    @property
    def n_outputs(self):
        return self.n_classes

    def parameter_shape(self, p):
        return (p, self.n_classes)

    def center(self, theta):
        """The parameter with its mean over the K classes subtracted from every row.

        Adding one vector to every column shifts all K logits of a record equally, which
        leaves the loss unchanged; centring removes that component, so the norm (and the
        regulariser) can only fall.
        """
        return theta - theta.mean(axis=1, keepdims=True)

    @classmethod
    def public_classes(cls, classes, n_classes):
        """``classes`` (K >= 2 distinct values, class k is ``classes[k]``) or
        ``tuple(range(n_classes))``: exactly one of them (it must not be read off the data: a
        record of a new class would change theta's shape)."""
        if n_classes is not None:
            if classes is not None:
                raise ValueError("pass classes or n_classes, not both")
            return tuple(range(check_int(n_classes, "n_classes", low=2)))
        if classes is None:
            raise ValueError(
                "loss='multinomial' needs the public label set: pass classes=(c_0, ..., c_K-1) "
                "or n_classes=K for labels 0..K-1 (it must not be read off the data: a record "
                "of a new class would change theta's shape)")
        values = label_tuple(classes)
        if len(values) < 2:
            raise ValueError(f"classes must hold K >= 2 labels for loss='multinomial', got "
                             f"{len(values)}")
        return check_distinct(values)

    def code_labels(self, y, classes, default_coding=False):
        """Labels coded by their index k in ``classes`` (intp, 0 .. K-1), the column of theta
        they pick (``default_coding`` is not used: the label set is always given)."""
        return np.ascontiguousarray(label_codes(y, self.name, classes, False), dtype=np.intp)

    def cvxpy_objective(self, z, y, n):
        """``(1/n) sum_i (log sum_k exp(z_ik) - z_{i y_i})``, the true-class logits picked by
        a one-hot mask."""
        import cvxpy as cp

        onehot = np.zeros((n, self.n_classes))
        onehot[np.arange(n), y] = 1.0
        return (cp.sum(cp.log_sum_exp(z, axis=1)) - cp.sum(cp.multiply(onehot, z))) / n, [], None

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

    def logit_curvature(self, z, y, derivatives=None):
        S = self.derivatives(z, y) if derivatives is None else derivatives.copy()
        S[np.arange(y.shape[0]), y] += 1.0         # softmax - e_y + e_y
        return S

    def logit_hessian_times(self, curvature, v):
        S = curvature
        return S * v - S * np.sum(S * v, axis=1, keepdims=True)

    def second_derivatives(self, z, y):
        raise ValueError(
            "loss_second_derivatives is for the margin losses: the multinomial loss's "
            "second derivative is the K x K matrix diag(s) - s s^T per record "
            "(s = softmax(theta^T x_i)), not one number")


#: The losses by name (the names ``Problem(loss=...)`` takes), in registration order: the
#: built-in ones, then those added by :func:`register_loss`.
LOSSES = {cls.name: cls for cls in (Logistic, Hinge, Squared, HuberHinge, Multinomial)}

def register_loss(loss_class):
    """Add a loss class to :data:`LOSSES` under its ``name`` (usable as a class decorator).

    A registered loss is taken by name (with its default parameters) and listed in the
    ``losses`` of every solver whose needs it meets (docs/adding_a_loss.md).

    Parameters
    ----------
    loss_class : type
        A subclass of :class:`Loss` with a ``name`` of its own, constructible without
        arguments (its default parameters). Registering the same class again is a no-op.

    Returns
    -------
    type
        ``loss_class`` itself.

    Raises
    ------
    TypeError
        If ``loss_class`` is not a subclass of :class:`Loss`.
    ValueError
        If its name is not a string or is taken by another class.
    """
    if not (isinstance(loss_class, type) and issubclass(loss_class, Loss)):
        raise TypeError(f"loss_class must be a subclass of dpsolve.losses.Loss, got "
                        f"{loss_class!r}")
    if not isinstance(loss_class.name, str) or not loss_class.name:
        raise ValueError(f"a loss needs a name of its own (a string), got {loss_class.name!r}")
    if LOSSES.get(loss_class.name, loss_class) is not loss_class:
        raise ValueError(f"a loss named {loss_class.name!r} is already registered")
    LOSSES[loss_class.name] = loss_class
    return loss_class


def check_huber_width(width, name="huber_width"):
    """The one check of a huber_hinge width: finite and > 0 (the loss divides by it)."""
    return check_real(width, name, low=0.0)


def make_loss(loss, *, huber_width=0.5, label_bound=1.0, n_classes=None):
    """A loss object from a name (with its parameter from the keyword) or a loss object.

    Parameters
    ----------
    loss : {"logistic", "hinge", "squared", "huber_hinge", "multinomial"} or Loss
        A name of :data:`LOSSES` (a registered loss), or a loss object (returned as it is).
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
        given = {"huber_width": huber_width, "label_bound": label_bound,
                 "n_classes": 2 if n_classes is None else n_classes}
        cls = LOSSES[loss]
        return cls(**{field: given[keyword] for keyword, field in cls.keywords.items()})
    raise ValueError(f"loss must be one of {sorted(LOSSES)} or a dpsolve.losses.Loss, "
                     f"got {loss!r}")
