"""The private regressor :class:`DPLinearRegression`, on the labels' private mean."""
import math
import numbers
import warnings

import numpy as np

try:
    from sklearn.base import RegressorMixin, _fit_context
    from sklearn.utils._param_validation import Interval, StrOptions
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError as exc:          # pragma: no cover - the extra is not installed
    raise ImportError("dpsolve.estimators needs scikit-learn >= 1.6: pip install "
                      "'dpsolve[estimators]'") from exc

from .._secure import to_grid as _to_grid
from ..privacy.accounting import PrivacyWarning
from ..privacy.quantile import PrivateEstimate
from ..privacy.samplers import laplace_noise
from ._base import (AUTO_PRIOR_SHARE, _DPLinearModel, _FIT_DTYPES, _linear_scores,
                    _refuse_complex)

#: ``prior_share="auto"``: the labels' private mean gets the share of epsilon at which its noise's
#: standard deviation is this fraction of the label bound (docs/adassp.md, "The labels' mean").
LABEL_MEAN_NOISE = 0.03
#: ... but never more than this share: the fit keeps 5% of epsilon.
MAX_LABEL_MEAN_SHARE = 0.95


def label_mean_share(epsilon, n):
    r"""The share of ``epsilon`` that ``prior_share="auto"`` spends on the labels' private mean,
    from public constants only (n, epsilon).

    The mean ``m = (sum y + Z) / n``, Z Laplace of scale ``2 B_y / (s epsilon)``, has noise of
    standard deviation ``2 sqrt(2) B_y / (s epsilon n)``, an error every prediction carries.
    The share makes it ``LABEL_MEAN_NOISE B_y`` (3% of the label bound):

    .. math::

        s = \mathrm{clip}\Big(\frac{2\sqrt{2}}{0.03\,\epsilon\,n},\ 0.1,\ 0.95\Big).

    The share grows as ``epsilon n`` shrinks, where the slopes gain little and the mean's
    noise costs most R^2: 95% at ``epsilon n <= 99``, the classifiers' 10% from
    ``epsilon n >= 943`` on. Measured on the practitioner page's real regression tables
    (docs/adassp.md, "The labels' mean"): at the former fixed 10%, mean test R^2 -3.2 on
    diabetes at epsilon = 0.1, the mean's noise alone.

    Parameters
    ----------
    epsilon : float
        The estimator's epsilon (> 0).
    n : int
        The number of training rows.

    Returns
    -------
    float
        In ``[0.1, 0.95]``.
    """
    wanted = 2.0 * math.sqrt(2.0) / (LABEL_MEAN_NOISE * float(epsilon) * max(int(n), 1))
    return min(max(wanted, AUTO_PRIOR_SHARE), MAX_LABEL_MEAN_SHARE)


class DPLinearRegression(RegressorMixin, _DPLinearModel):
    r"""Ridge-regularised least squares, differentially private.

    Minimises ``(1/n) sum_i (<theta, x_i> - y_i)^2 / 2 + (reg/2)||theta||^2`` (over
    ``||theta|| <= radius`` if given) with a registered solver at ``(epsilon, delta)``, the
    labels clipped to ``label_bound``. By default (no radius) that is AdaSSP (Wang 2018:
    the sufficient statistics ``X^T X`` and ``X^T y`` released with noise and an adaptive
    ridge, :func:`dpsolve.adassp`), fitted to the labels minus their private mean (an
    unpenalised offset, ``prior_share``); the gradient and perturbation solvers need a
    radius, since the squared loss's Lipschitz constant over the ball,
    ``B (radius B + label_bound)``, sets their noise.

    Parameters
    ----------
    epsilon, delta, solver, reg, constraint, row_norm, fit_intercept, intercept_scale
        As in :class:`DPLogisticRegression`.
    accountant, secure, random_state, solver_options
        As in :class:`DPLogisticRegression`.
    radius : float or None, default None
        Radius R > 0 of a constraint ball on theta (intercept included); None: none (AdaSSP,
        the only single-machine solver that needs no radius for the squared loss).
    label_bound : float, (low, high), PrivateEstimate or None, default None
        Public bound on ``|y|``, or a public range of y (as diffprivlib's ``bounds_y``);
        labels beyond it are clipped to it (with a warning giving how many). A range is
        centred at its midpoint, which the intercept carries: labels in ``[0, B_y]`` then cost
        the noise of a bound ``B_y / 2`` (without ``fit_intercept``, of ``max(|low|,
        |high|)``). A PrivateEstimate is composed in as for ``row_norm``. None: the data's
        largest ``|y_i|``, with a PrivacyWarning and no guarantee (``epsilon_`` inf).
    prior_share : "auto" or float in [0, 1), default "auto"
        The share of epsilon spent on the labels' private mean ``m`` (their sum with Laplace
        noise for its sensitivity ``2 label_bound``, divided by n): the fit is to
        ``clip(y - m, -label_bound, label_bound)`` and ``m`` is added to the intercept, so the
        ridge shrinks predictions towards the mean, not towards 0. ``"auto"`` with
        ``fit_intercept`` (else 0): :func:`label_mean_share`, the share at which the mean's
        noise has standard deviation 3% of ``label_bound``, ``2 sqrt(2) / (0.03 epsilon n)``,
        within [0.1, 0.95] (0.1 from ``epsilon n = 943`` on; public constants only).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    n_features_in_, epsilon_, delta_, dp_event_, privacy_report_, solver_, row_norm_, reg_
        As in :class:`DPLogisticRegression`.
    n_nonzero_, fit_
        As in :class:`DPLogisticRegression`.
    label_bound_ : float
        The label bound used (a range's half-width).
    """

    _loss = "squared"
    _prior_name = "the labels' mean"
    _parameter_constraints = {
        **_DPLinearModel._parameter_constraints,
        "radius": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "label_bound": [Interval(numbers.Real, 0, None, closed="neither"), PrivateEstimate,
                        tuple, list, None],
        "prior_share": [StrOptions({"auto"}), Interval(numbers.Real, 0, 1, closed="left")],
    }

    def __init__(self, epsilon=1.0, delta=0.0, *, solver="auto", reg="auto", radius=None,
                 constraint="l2", row_norm=None, label_bound=None, fit_intercept=True,
                 intercept_scale=1.0, prior_share="auto", accountant=None, secure=False,
                 random_state=None, solver_options=None):
        super().__init__(epsilon, delta, solver=solver, reg=reg, radius=radius,
                         constraint=constraint, row_norm=row_norm, fit_intercept=fit_intercept,
                         intercept_scale=intercept_scale, accountant=accountant, secure=secure,
                         random_state=random_state, solver_options=solver_options)
        self.label_bound = label_bound
        self.prior_share = prior_share

    def _problem_options(self, bounds):
        return {"label_bound": bounds}

    def _auto_prior_share(self, n):
        """:func:`label_mean_share` of epsilon and n."""
        return label_mean_share(self.epsilon, n)

    def _prior_usable(self, loss, solver):
        """The labels' private mean can be the offset of any fit with an intercept."""
        return self.fit_intercept

    def _apply_prior(self, y, problem, options, epsilon, rng):
        """The labels minus their private mean, ``m = clip((sum y + Z) / n, -B_y, B_y)`` with
        ``Z`` Laplace for the sum's L1 sensitivity ``2 B_y`` under replace-one (the labels are
        clipped to ``[-B_y, B_y]``), clipped again to ``[-B_y, B_y]``: the bound, and with it
        every noise scale, stays a public constant (labels in ``[0, B_y]`` and ``m >= 0``, or
        the symmetric case, lose nothing to this clipping). The fit's problem keeps its rows
        and takes these labels."""
        bound = problem.label_bound
        noisy = float(np.sum(y)) + float(laplace_noise(2.0 * bound / epsilon, 1, rng=rng)[0])
        mean = min(max(noisy / len(y), -bound), bound)
        if self.secure:
            mean = float(_to_grid(mean))
        # same rows, same public bounds: only the labels change (no second copy or check of X)
        shifted = problem._with_data(problem.X, np.clip(problem.y - mean, -bound, bound))
        return shifted, options, mean

    def _derived_bounds(self):
        return super()._derived_bounds() + (["label_bound"] if self.label_bound is None
                                            else [])

    def _label_range(self):
        """``(low, high)`` if ``label_bound`` is a range (checked), else None."""
        if not isinstance(self.label_bound, (tuple, list)):
            return None
        try:
            if len(self.label_bound) != 2 or any(isinstance(v, (bool, np.bool_))
                                                 for v in self.label_bound):
                raise TypeError
            low, high = (float(v) for v in self.label_bound)
        except (TypeError, ValueError):
            raise ValueError(f"label_bound must be a number > 0, a PrivateEstimate or a range "
                             f"(low, high) of two numbers, got {self.label_bound!r}") from None
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise ValueError(f"label_bound=(low, high) needs finite low < high, got "
                             f"{self.label_bound!r}")
        return low, high

    def _labels(self, y):
        """The half-width bound, the labels clipped to it and shifted by the public centre
        (a new array), and that centre: a range ``(low, high)`` is centred at its midpoint
        (with an intercept to carry it), so that labels in ``[0, B_y]`` cost a bound of
        ``B_y / 2``, not ``B_y``."""
        label_range = self._label_range()
        shift = 0.0
        if label_range is not None:
            low, high = label_range
            if self.fit_intercept:
                shift, bound = (low + high) / 2.0, (high - low) / 2.0
            else:
                bound = max(abs(low), abs(high))
            over = int(np.count_nonzero((y < low) | (y > high)))
            if over:
                warnings.warn(f"{over} of {len(y)} labels were outside label_bound="
                              f"({low:g}, {high:g}) and were clipped to it", UserWarning,
                              stacklevel=4)
            return bound, np.clip(y, low, high) - shift, shift
        if isinstance(self.label_bound, PrivateEstimate):
            bound = float(self.label_bound.value)
        elif self.label_bound is not None:
            bound = float(self.label_bound)
        else:
            warnings.warn(
                "DPLinearRegression: label_bound was not given, so the largest |y| is used; "
                "it is read off the data and leaks beyond the fit's guarantee. Pass a public "
                "bound, or one estimated privately (dpsolve.privacy.estimate_label_bound).",
                PrivacyWarning, stacklevel=4)
            bound = float(np.max(np.abs(y)))
            bound = bound if bound > 0.0 else 1.0
        over = int(np.count_nonzero(np.abs(y) > bound))
        if over:
            warnings.warn(f"{over} of {len(y)} labels had |y| above label_bound={bound:g} and "
                          "were clipped to it", UserWarning, stacklevel=4)
        return bound, np.clip(y, -bound, bound), shift

    def _validated(self, X, y):
        """X, the labels clipped to the label bound (and shifted by the centre of a label
        range), the loss, no classes, the bound, and the centre (where a classifier returns its
        label set)."""
        self._check_public(self._loss)
        self._label_range()
        _refuse_complex(X)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=_FIT_DTYPES, order="C",
                             y_numeric=True)
        bound, y, shift = self._labels(y)
        return X, y, self._loss, None, bound, shift

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, rng=None):
        """Fit the model privately.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training rows; rows with norm above ``row_norm`` are clipped to it. Not modified.
        y : array-like of shape (n_samples,)
            Real targets; clipped to ``[-label_bound, label_bound]``.
        rng : numpy Generator, optional
            As in :meth:`DPLogisticRegression.fit`: used instead of ``random_state``, not
            stored.

        Returns
        -------
        self
        """
        X, y, loss, _, bound, shift = self._validated(X, y)
        coef, intercept, mean = self._run(X, y, loss, bounds=bound, rng=rng)
        self.label_bound_ = bound
        self.coef_ = coef
        self.intercept_ = float(intercept) + mean + shift
        return self

    def predict(self, X):
        """Predicted targets, ``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        _refuse_complex(X)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return _linear_scores(X, self.coef_.reshape(1, -1), self.intercept_).reshape(-1)
