"""The private classifiers: :class:`DPLogisticRegression` (binary and multinomial) and
:class:`DPLinearSVC` (the huber hinge), on the private base rate."""
import math
import numbers
import warnings

import numpy as np

try:
    from sklearn.base import _fit_context
    from sklearn.linear_model._base import LinearClassifierMixin
    from sklearn.utils._param_validation import Interval, StrOptions
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError as exc:          # pragma: no cover - the extra is not installed
    raise ImportError("dpsolve.estimators needs scikit-learn >= 1.6: pip install "
                      "'dpsolve[estimators]'") from exc
from scipy.special import log_expit

from ..losses import LOSSES
from ..privacy.accounting import PrivacyWarning
from ..privacy.counts import private_class_shares
from ._base import (_DPLinearModel, _FIT_DTYPES, _linear_scores, _log_softmax, _refuse_complex)


class _DPClassifier(LinearClassifierMixin, _DPLinearModel):
    """Binary (the estimator's loss) and, where the estimator allows it, multinomial."""

    _parameter_constraints = {**_DPLinearModel._parameter_constraints,
                              "classes": ["array-like", None],
                              "prior_share": [StrOptions({"auto"}),
                                              Interval(numbers.Real, 0, 1, closed="left")]}
    _multinomial = False

    def _derived_bounds(self):
        return super()._derived_bounds() + (["classes"] if self.classes is None else [])

    def _classes(self, y):
        """The public label set, or the labels present with a PrivacyWarning."""
        if self.classes is not None:
            classes = np.asarray(self.classes)
            try:
                distinct = len(np.unique(classes))
            except TypeError:
                raise TypeError(f"classes must be labels of one orderable type (numbers or "
                                f"strings), got {self.classes!r}") from None
            if classes.ndim != 1 or distinct != len(classes):
                raise ValueError(f"classes must be a 1-D sequence of distinct labels, got "
                                 f"{self.classes!r}")
            if len(classes) < 2:
                raise ValueError(f"classes must hold at least 2 labels, got {len(classes)}")
            if len(classes) > 2 and not self._multiclass():
                raise ValueError(f"{type(self).__name__}{self._binary_why()} is binary: classes "
                                 f"must hold exactly 2 labels, got {len(classes)}")
            return classes
        try:
            classes = np.unique(y)
        except TypeError:
            raise TypeError("y must hold labels of one orderable type (numbers or strings)"
                            ) from None
        warnings.warn(
            f"{type(self).__name__}: classes was not given, so the labels present in y are "
            "used; the label set is read off the data and leaks beyond the fit's guarantee (a "
            "record of a new class changes the model's shape). Pass the public classes.",
            PrivacyWarning, stacklevel=3)
        if len(classes) < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes in "
                             f"the data, got {len(classes)} class: {classes.tolist()}")
        if len(classes) > 2 and not self._multiclass():
            raise ValueError(f"Only binary classification is supported: {type(self).__name__}"
                             f"{self._binary_why()} is binary, but y holds {len(classes)} "
                             "classes; pass classes=(negative, positive)")
        return classes

    def _multiclass(self):
        """Whether more than two classes are taken: a multinomial estimator on the l2 ball
        (the l1 ball is for a parameter vector, the binary model's)."""
        return self._multinomial and self.constraint == "l2"

    def _binary_why(self):
        return " with constraint='l1'" if self._multinomial and not self._multiclass() else ""

    def _apply_prior(self, y, problem, options, epsilon, rng):
        shares = private_class_shares(y.astype(np.intp), 2, epsilon, rng)
        base_margin = problem.loss_object.base_margin(shares.shares[1])
        centre = np.zeros(problem.theta_shape)
        centre[-1] = base_margin / self.intercept_scale
        return problem, {**options, "centre": centre}, base_margin

    def _prior_options(self, problem):
        """The solver options the prior sets before the counts are drawn: a public bound on
        the centre, ``|base_margin| / s``, from n alone (rounded up by a relative 1e-9, for
        the rounding of the logit), so that the plan, its event and the fit's settings never
        depend on the private base rate."""
        bound = problem.loss_object.base_margin_bound(problem.n) / self.intercept_scale
        return {"centre_bound": bound * (1.0 + 1e-9)}

    def _prior_correction(self, classes):
        """What ``class_weight`` adds to the intercept(s), checked before any work: the prior
        correction of King & Zeng (2001), ``log(w_1 / w_0)`` for two classes (``log w_k`` for
        each of K), the exact shift of a well-specified logistic model's intercept when class
        k's records are weighted by ``w_k``; "balanced" (weights ``1 / (K share_k)`` with the
        private shares) is returned as is: for two classes its shift is ``-base_margin``, which
        moves the threshold to the base rate."""
        weights = getattr(self, "class_weight", None)
        if weights is None or isinstance(weights, str):
            return weights
        for label, weight in weights.items():
            if label not in classes.tolist():
                raise ValueError(f"class_weight names {label!r}, which is not one of the "
                                 f"classes {classes.tolist()}")
            if (isinstance(weight, (bool, np.bool_)) or not isinstance(weight, numbers.Real)
                    or not (0.0 < weight < math.inf)):
                raise ValueError(f"class_weight's weights must be finite numbers > 0, got "
                                 f"{weight!r} for class {label!r}")
        logs = np.log([float(weights.get(c, 1.0)) for c in classes.tolist()])
        return logs[1] - logs[0] if len(classes) == 2 else logs

    def _validated(self, X, y):
        """X, the labels coded 0..K-1, the loss, the coding's classes for the Problem, no
        bound, and the label set."""
        self._check_public(self._loss)
        _refuse_complex(X)
        # float32 kept (scikit-learn's convention; dpsolve computes in float64 on its values)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=_FIT_DTYPES, order="C")
        try:
            check_classification_targets(y)
        except ValueError as exc:
            raise ValueError(f"y must hold class labels of one type: {exc}") from None
        classes = self._classes(y)
        loss = "multinomial" if len(classes) > 2 else self._loss
        if loss != self._loss:
            self._check_public(loss)
        try:
            present, inverse = np.unique(y, return_inverse=True)
        except TypeError:
            raise TypeError("y must hold labels of one orderable type (numbers or strings)"
                            ) from None
        if not np.all(np.isin(y, classes)):
            raise ValueError(f"y holds labels outside classes={classes.tolist()}")
        # class_weight against the label set here, so that a plan (PrivateGridSearch's, made
        # before its charge) refuses it as the fit does
        self._prior_correction(classes)
        # the Problem gets codes: scikit-learn's label types (strings, ...) index classes
        index = {c: k for k, c in enumerate(classes.tolist())}
        codes = np.array([index[v] for v in present.tolist()], dtype=np.intp)[inverse]
        return X, codes, loss, tuple(range(len(classes))), None, classes

    def decision_function(self, X):
        """Confidence scores, ``X @ coef_.T + intercept_`` (never NaN: a row of enormous
        entries gets scores of +-inf).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) (binary) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        _refuse_complex(X)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        scores = _linear_scores(X, self.coef_, self.intercept_)
        return scores.ravel() if scores.shape[1] == 1 else scores

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, rng=None):
        """Fit the model privately.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training rows; rows with norm above ``row_norm`` are clipped to it. Not modified.
        y : array-like of shape (n_samples,)
            Labels, each one of ``classes``.
        rng : numpy Generator, optional
            The source of this fit's noise instead of ``random_state``, for a caller that
            draws it from its own stream (as :class:`~dpsolve.private_selection.PrivateGridSearch`
            does). It is used, not stored: the fitted estimator cannot regenerate its noise.

        Returns
        -------
        self
        """
        X, codes, loss, coding, _, classes = self._validated(X, y)
        correction = self._prior_correction(classes)
        coef, intercept, base_margin = self._run(X, codes, loss, classes=coding, rng=rng)
        if correction is not None:
            intercept = intercept + (-base_margin if isinstance(correction, str) else correction)
        self.classes_ = classes
        if LOSSES[loss].is_multinomial:
            self.coef_ = np.ascontiguousarray(coef.T)
            self.intercept_ = np.asarray(intercept, dtype=np.float64).reshape(-1)
        else:
            self.coef_ = coef.reshape(1, -1)
            self.intercept_ = np.array([intercept], dtype=np.float64)
        return self


class DPLogisticRegression(_DPClassifier):
    r"""Logistic regression, differentially private: binary, or multinomial (softmax) for
    more than two classes.

    Minimises ``(1/n) sum_i loss_i(theta) + (reg/2)||theta||^2`` (over ``||theta|| <= radius``
    if given) with a registered solver at ``(epsilon, delta)``: the logistic loss
    ``log(1 + exp(-y <theta, x>))`` for two classes, ``-log softmax(Theta^T x)_y`` for K > 2
    (a (p, K) parameter; the solvers that take it: ``clipped_gd``, ``output_perturbation``).
    ``solver="auto"`` is :func:`dpsolve.choose_solver`'s choice from public constants (for
    binary problems usually ``objective_perturbation``, Chaudhuri, Monteleoni & Sarwate 2011
    with Kifer, Smith & Thakurta 2012's constants).

    Parameters
    ----------
    epsilon : float, default 1.0
        Privacy epsilon > 0 of the fit.
    delta : float, default 0.0
        Privacy delta in [0, 1); 0 is pure epsilon-DP. Take it well below 1/n.
    solver : str, default "auto"
        A registered single-machine solver that takes the loss (``dpsolve.solvers.registry()``),
        or ``"auto"``.
    reg : "auto" or float, default "auto"
        L2 regularisation lambda >= 0 of the mean-form objective (``1 / (n C)`` for
        scikit-learn's C). The perturbation solvers need it > 0. ``"auto"``: the lambda that
        minimises a bound on the *unregularised* excess risk of the chosen solver's release,
        from public constants only (n, p, the row bound, epsilon, delta, the loss), never below
        scikit-learn's ``1/n`` (:func:`dpsolve.tuning.prediction_reg`); with
        ``objective_perturbation`` no extra regulariser Delta is then added (unless
        ``solver_options`` sets ``extra_reg``). The value used is ``reg_``.
    radius : float or None, default None
        Radius of the constraint ball on theta (intercept included); None: no constraint (needs
        ``reg > 0``; refused with ``constraint="l1"``).
    constraint : {"l2", "l1"}, default "l2"
        The ball of ``radius``: ``"l2"``, ``||theta||_2 <= radius``; ``"l1"``,
        ``||theta||_1 <= radius``, a sparse model (few non-zero coefficients, ``n_nonzero_``)
        fitted by the solvers that take the l1 geometry (``solver="auto"``:
        :func:`dpsolve.choose_solver`'s choice among them, the private Frank-Wolfe of
        Talwar, Thakurta & Zhang 2015), whose error grows with log p, not with p (docs/sparse.md);
        binary only (the l1 ball holds a parameter vector). The ridge ``reg`` is added in both.
    row_norm : float, PrivateEstimate or None, default None
        Public bound B on the rows' norms in the dual norm of the constraint's: the L2 norm
        (``constraint="l2"``) or the L-inf norm, the largest ``|x_ij|`` (``"l1"``); rows above
        it are scaled onto it. A PrivateEstimate's
        epsilon is composed into the fit's (and charged to ``accountant`` unless it already
        was). None: in a scikit-learn ``Pipeline``, the bound the public preprocessing before
        the estimator states (:func:`dpsolve.preprocessing.output_row_norm` of those steps);
        else the data's largest row norm, with a PrivacyWarning, and the fit then has no
        guarantee (``epsilon_`` inf) and ``accountant`` must be None.
    fit_intercept : bool, default True
        Fit an intercept, as the coefficient of a public constant feature of value
        ``intercept_scale`` (docs/intercepts.md).
    intercept_scale : float, default 1.0
        That constant s > 0.
    classes : array-like or None, default None
        The public label set (two labels for binary, negative first, or K > 2). None: the
        labels present in y, with a PrivacyWarning and no guarantee, as for ``row_norm``.
    class_weight : "balanced", dict or None, default None
        Weights of the classes, applied by prior correction (King & Zeng 2001): the
        coefficients of the unweighted fit, the intercept moved by ``log(w_1 / w_0)`` (binary;
        by ``log w_k`` for each class of a multinomial fit) — the exact effect of weighting a
        well-specified logistic model's records by class. A dict ``{label: weight > 0}`` (the
        labels not named weigh 1) costs no privacy. ``"balanced"`` weighs class k by
        ``1 / (K share_k)`` with the private shares of the base rate (below): the threshold
        moves to the base rate, so the rare class is predicted wherever it is more likely than
        its base rate; binary fits with the base rate only.
    prior_share : "auto" or float in [0, 1), default "auto"
        The share of epsilon spent on the private base rate: the count of positives with
        discrete Laplace noise (:func:`dpsolve.privacy.counts.private_class_shares`), whose
        log-odds centre the intercept's penalty, so that the intercept absorbs the class
        imbalance instead of the coefficients (docs/intercepts.md). ``"auto"``: 0.1 for a
        binary fit with ``fit_intercept`` whose solver centres its regulariser
        (``objective_perturbation``), else 0. The model's epsilon is still ``epsilon``: the
        count and the fit share it (basic composition).
    accountant : BudgetAccountant or None, default None
        A budget to charge the fit to; the fit is refused before it reads the data if the
        budget cannot afford it.
    secure : bool, default False
        Fresh operating-system entropy and rounded outputs (docs/secure_noise.md);
        ``random_state`` must be None.
    random_state : None, int, numpy Generator or RandomState, default None
        Source of the noise. None draws fresh entropy that nothing keeps. An int gives
        bit-identical fits, and so makes the noise reproducible by whoever knows it: for
        research runs; a model to release should leave it None (or use ``secure=True``).
    solver_options : dict or None, default None
        Keyword options of the solver (e.g. ``{"steps": 200}`` for ``clipped_gd``).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    epsilon_, delta_ : float
        The privacy of the model: the solver's claim plus the epsilon of any PrivateEstimate
        used as a bound; inf if a bound was read off the data.
    dp_event_ : dp_accounting.DpEvent
        What the fit released (the estimates composed in; ``NonPrivateDpEvent`` if a bound was
        read off the data), to compose with other releases.
    privacy_report_ : dpsolve.privacy.PrivacyReport
        The claim and the epsilon a tight accountant certifies for it (inf, and ``holds``
        False, if a bound was read off the data).
    solver_ : str
        The solver that ran.
    row_norm_ : float
        The row bound used.
    reg_ : float
        The regularisation used (``reg``, or the one ``reg="auto"`` chose).
    n_nonzero_ : int
        The number of non-zero entries of ``coef_`` (the intercept left out): the model's
        size, read off the released coefficients.
    fit_ : dpsolve.Fit
        Everything the solver released and its settings, with the model's ``dp_event`` and
        ``privacy`` as above.
    """

    _loss = "logistic"
    _multinomial = True

    _parameter_constraints = {**_DPClassifier._parameter_constraints,
                              "class_weight": [StrOptions({"balanced"}), dict, None]}

    def __init__(self, epsilon=1.0, delta=0.0, *, solver="auto", reg="auto", radius=None,
                 constraint="l2", row_norm=None, fit_intercept=True, intercept_scale=1.0,
                 classes=None, class_weight=None, prior_share="auto", accountant=None,
                 secure=False, random_state=None, solver_options=None):
        super().__init__(epsilon, delta, solver=solver, reg=reg, radius=radius,
                         constraint=constraint, row_norm=row_norm, fit_intercept=fit_intercept,
                         intercept_scale=intercept_scale, accountant=accountant, secure=secure,
                         random_state=random_state, solver_options=solver_options)
        self.classes = classes
        self.class_weight = class_weight
        self.prior_share = prior_share

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = self._multiclass()
        return tags

    def predict_proba(self, X):
        """Class probabilities: the logistic function of the margin (binary) or the softmax
        of the K margins.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        return np.exp(self.predict_log_proba(X))

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`, computed in the log domain (finite where the
        probability underflows).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return np.column_stack([log_expit(-scores), log_expit(scores)])
        return _log_softmax(scores)


class DPLinearSVC(_DPClassifier):
    r"""A linear support-vector classifier, differentially private, with the huber hinge loss
    (the hinge loss with its kink smoothed over a width h; Chaudhuri, Monteleoni & Sarwate
    2011), binary.

    Minimises ``(1/n) sum_i huber_hinge(y_i <theta, x_i>) + (reg/2)||theta||^2`` with a
    registered solver at ``(epsilon, delta)``; ``solver="auto"`` is
    :func:`dpsolve.choose_solver`'s choice.

    Parameters
    ----------
    epsilon, delta, solver, reg, radius, constraint, row_norm, fit_intercept, intercept_scale
        As in :class:`DPLogisticRegression`.
    classes : array-like or None, default None
        The two public labels, negative first; None: those present in y, with a PrivacyWarning.
    accountant, secure, random_state, solver_options
        As in :class:`DPLogisticRegression`.
    huber_width : float, default 0.5
        Width h > 0 of the quadratic piece: smaller is closer to the hinge loss, less smooth.
    prior_share : "auto" or float in [0, 1), default "auto"
        As in :class:`DPLogisticRegression`; the intercept is centred on the constant margin
        that minimises the huber hinge risk at the private base rate.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    classes_, n_features_in_, epsilon_, delta_, dp_event_, privacy_report_
        As in :class:`DPLogisticRegression`.
    solver_, row_norm_, reg_, n_nonzero_, fit_
        As in :class:`DPLogisticRegression`.
    """

    _loss = "huber_hinge"
    _multinomial = False
    _parameter_constraints = {**_DPClassifier._parameter_constraints,
                              "huber_width": [Interval(numbers.Real, 0, None,
                                                       closed="neither")]}

    def __init__(self, epsilon=1.0, delta=0.0, *, solver="auto", reg="auto", radius=None,
                 constraint="l2", row_norm=None, fit_intercept=True, intercept_scale=1.0,
                 classes=None, huber_width=0.5, prior_share="auto", accountant=None,
                 secure=False, random_state=None, solver_options=None):
        super().__init__(epsilon, delta, solver=solver, reg=reg, radius=radius,
                         constraint=constraint, row_norm=row_norm, fit_intercept=fit_intercept,
                         intercept_scale=intercept_scale, accountant=accountant, secure=secure,
                         random_state=random_state, solver_options=solver_options)
        self.classes = classes
        self.huber_width = huber_width
        self.prior_share = prior_share

    def _problem_options(self, bounds):
        return {"huber_width": self.huber_width}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


class _DPHingeClassifier(_DPClassifier):
    """The hinge loss ``max(0, 1 - y <theta, x>)`` (binary), with the estimators' lifecycle
    and defaults: what ``dpsolve solve --loss hinge`` fits. Not public: the hinge's kink
    leaves it to the gradient solvers (:class:`DPLinearSVC`, its huber-smoothed form, takes
    the perturbation solvers too).

    Parameters
    ----------
    epsilon, delta, solver, reg, radius, constraint, row_norm, fit_intercept, intercept_scale
        As in :class:`DPLogisticRegression`.
    classes, prior_share, accountant, secure, random_state, solver_options
        As in :class:`DPLinearSVC`.
    """

    _loss = "hinge"
    _multinomial = False

    def __init__(self, epsilon=1.0, delta=0.0, *, solver="auto", reg="auto", radius=None,
                 constraint="l2", row_norm=None, fit_intercept=True, intercept_scale=1.0,
                 classes=None, prior_share="auto", accountant=None, secure=False,
                 random_state=None, solver_options=None):
        super().__init__(epsilon, delta, solver=solver, reg=reg, radius=radius,
                         constraint=constraint, row_norm=row_norm, fit_intercept=fit_intercept,
                         intercept_scale=intercept_scale, accountant=accountant, secure=secure,
                         random_state=random_state, solver_options=solver_options)
        self.classes = classes
        self.prior_share = prior_share
