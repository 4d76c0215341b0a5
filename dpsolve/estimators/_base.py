"""What the estimators share: the parameters' checks, the fit lifecycle over a registered
solver, the privacy attributes, and the helpers of the predictions."""
import dataclasses
import math
import numbers
import warnings

import dp_accounting
import numpy as np
import scipy.sparse

try:
    from sklearn.base import BaseEstimator
    from sklearn.utils._param_validation import Interval, StrOptions
except ImportError as exc:          # pragma: no cover - the extra is not installed
    raise ImportError("dpsolve.estimators needs scikit-learn >= 1.6: pip install "
                      "'dpsolve[estimators]'") from exc
from scipy.special import log_softmax

from .. import solvers as _solvers
from .._row_ops import dual_row_norms
from .._secure import generator as _secure_generator
from ..solvers import plan_fit
from ..privacy.accounting import PrivacyStep, PrivacyWarning, certify, pure_event
from ..privacy.budget import BudgetAccountant, ParallelGroup, charge
from ..privacy.counts import MIN_EPSILON
from ..privacy.quantile import PrivateEstimate
from ..preprocessing._enclosing_pipeline import (check_same_budget, upstream_releases,
                                                  upstream_row_norm)
from ..problem import Problem
from ..solvers.choose import choose_solver
from ..tuning import choice_reg, prediction_options, prediction_reg


def _solver_names(loss):
    return sorted(s.name for s in _solvers.registry() if s.partition is None
                  and loss in s.losses)


def _centred_solvers(loss):
    """The single-machine solvers for ``loss`` that centre their regulariser (``centre``)."""
    return [name for name in _solver_names(loss) if "centre" in _solvers.get(name).parameters]


#: The share of epsilon the private class counts take when ``prior_share="auto"`` uses them.
AUTO_PRIOR_SHARE = 0.1


def _split_rng(rng, secure):
    """Two independent generators (the class counts', the solver's) from ``rng`` (None, an int
    or a Generator), reproducible for a given seed; with ``secure``, operating-system entropy
    for the counts and None for the solver (which draws its own)."""
    if secure:
        return _secure_generator(None, True), None
    top = np.random.default_rng(rng)
    try:
        first, second = top.spawn(2)
    except (TypeError, ValueError):      # a bit generator without a SeedSequence
        first, second = (np.random.default_rng(top.integers(0, 2 ** 63, size=4))
                         for _ in range(2))
    return first, second


#: The parameters that are real numbers: a bool among them is a mistake, not 0 or 1.
_REAL_PARAMETERS = ("epsilon", "delta", "reg", "radius", "row_norm", "intercept_scale",
                    "label_bound", "huber_width")


#: The dtypes fit keeps X in (scikit-learn's convention: float32 input stays float32; any other
#: dtype becomes float64). float32 is storage only: the Problem computes in float64 on its exact
#: values, so a fit on float32 X equals the fit on its float64 copy. Predictions are float64.
_FIT_DTYPES = [np.float64, np.float32]


def _refuse_complex(X):
    """scikit-learn refuses complex dense X but casts a complex sparse matrix to its real part
    with only a ComplexWarning: refuse both, naming X."""
    if scipy.sparse.issparse(X) and np.issubdtype(X.dtype, np.complexfloating):
        raise TypeError("X must hold real numbers, got a complex sparse matrix")


def _linear_scores(X, coef, intercept):
    """``X coef^T + intercept`` for validated X, shape (n, k).

    A row of enormous entries can overflow to ``inf - inf = nan``; such rows are divided by
    their largest entry first, so that their scores come out finite or +-inf with the right
    sign, never NaN."""
    with np.errstate(over="ignore", invalid="ignore"):
        scores = np.asarray(X @ coef.T, dtype=np.float64) + intercept
    bad = ~np.all(np.isfinite(scores), axis=1)
    if np.any(bad):
        rows = X[np.flatnonzero(bad)]
        if scipy.sparse.issparse(rows):
            scale = np.asarray(abs(rows).max(axis=1).todense()).ravel()
            scaled = rows.multiply(1.0 / scale[:, None]).tocsr()
        else:
            scale = np.max(np.abs(rows), axis=1)
            scaled = rows / scale[:, None]
        with np.errstate(over="ignore"):
            scores[bad] = scale[:, None] * np.asarray(scaled @ coef.T) + intercept
    return scores


def _log_softmax(scores):
    """Row-wise log-softmax that stays a probability where a score is infinite: the mass goes
    to the largest scores (the limit), never NaN."""
    top = np.max(scores, axis=1, keepdims=True)
    finite = np.isfinite(top).ravel()
    out = np.empty_like(scores)
    out[finite] = log_softmax(scores[finite], axis=1)
    if not np.all(finite):
        ties = scores[~finite] == top[~finite]
        out[~finite] = np.where(ties, -np.log(ties.sum(axis=1, keepdims=True)), -np.inf)
    return out


def _rng(random_state):
    """dpsolve's ``rng`` from scikit-learn's ``random_state``: None, an int (used as the seed, so
    the same int gives bit-identical fits), a numpy Generator, or a RandomState (a seed drawn
    from it)."""
    if random_state is None or isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    raise TypeError(f"random_state must be None, an int, a numpy Generator or RandomState, "
                    f"got {type(random_state).__name__}")


class _DPLinearModel(BaseEstimator):
    """What the three estimators share: the parameters, one fit lifecycle, the attributes."""

    _loss = None            # set by each estimator (the binary or squared loss)
    _prior_name = "the class counts"    # the private statistic the prior releases

    _parameter_constraints = {
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "delta": [Interval(numbers.Real, 0, 1, closed="left")],
        "solver": [str],
        "reg": [Interval(numbers.Real, 0, None, closed="left"), StrOptions({"auto"})],
        "radius": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "constraint": [StrOptions({"l2", "l1"})],
        "row_norm": [Interval(numbers.Real, 0, None, closed="neither"), PrivateEstimate, None],
        "fit_intercept": ["boolean"],
        "intercept_scale": [Interval(numbers.Real, 0, None, closed="neither")],
        "accountant": [BudgetAccountant, ParallelGroup, None],
        "secure": ["boolean"],
        "random_state": ["random_state", np.random.Generator],
        "solver_options": [dict, None],
    }

    def __init__(self, epsilon, delta, *, solver, reg, radius, constraint, row_norm,
                 fit_intercept, intercept_scale, accountant, secure, random_state,
                 solver_options):
        self.epsilon = epsilon
        self.delta = delta
        self.solver = solver
        self.reg = reg
        self.radius = radius
        self.constraint = constraint
        self.row_norm = row_norm
        self.fit_intercept = fit_intercept
        self.intercept_scale = intercept_scale
        self.accountant = accountant
        self.secure = secure
        self.random_state = random_state
        self.solver_options = solver_options

    # -- the fit lifecycle ---------------------------------------------------------------------
    def _derived_bounds(self):
        """The names of the bounds this fit would read off the data (not given, not estimated
        privately): no guarantee covers them."""
        stated = self._pipeline_row_norm() if self.row_norm is None else self.row_norm
        return ["row_norm"] if stated is None else []

    def _pipeline_row_norm(self):
        """The row bound the public preprocessing before this estimator states, when a
        ``Pipeline`` is fitting it (:func:`~dpsolve.preprocessing.output_row_norm` of the steps
        before it, in the norm ``row_norm`` is read in), else None."""
        return upstream_row_norm(self, "linf" if self.constraint == "l1" else "l2")

    def _estimates(self):
        """The PrivateEstimates the fit uses as bounds (each composed into its release), and
        the releases of the private preprocessing its rows come from when a scikit-learn
        ``Pipeline`` is fitting it (the private steps before it)."""
        return [estimate for _, estimate in self._named_estimates()]

    def _named_estimates(self):
        """:meth:`_estimates`, each with its name in the privacy report's ledger: the
        parameter it bounds, or the preprocessing step's place in the pipeline."""
        bounds = [(name, getattr(self, name, None)) for name in ("row_norm", "label_bound")]
        return [(name, value) for name, value in bounds if isinstance(value, PrivateEstimate)
                ] + upstream_releases(self)

    def _check_preceding_step(self, step):
        """The checks a private ``step`` fitted before this estimator in a ``Pipeline`` runs
        before it spends its epsilon: this estimator's parameters alone, and that the step
        charges this estimator's budget."""
        self._validate_params()
        self._check_public(self._loss)
        check_same_budget(step, self.accountant, type(self).__name__)

    def _check_public(self, loss):
        """Every check of the parameters alone, before any data is read: bools where reals are
        expected, the solver's name against the registry, the budget against data-derived
        bounds."""
        for name in _REAL_PARAMETERS:
            if isinstance(getattr(self, name, None), (bool, np.bool_)):
                raise TypeError(f"{name} must be a real number, got a bool")
        if self.constraint == "l1" and self.radius is None:
            raise ValueError("radius must be a number > 0 with constraint='l1': the l1 ball "
                             "{||theta||_1 <= radius} is the model's only constraint, got None")
        names = _solver_names(loss)
        if self.solver != "auto" and self.solver not in names:
            raise ValueError(f"solver must be 'auto' or one of {names} (the single-machine "
                             f"solvers that take loss={loss!r}), got {self.solver!r}")
        for reserved in ("epsilon", "delta", "rng", "secure", "accountant"):
            if reserved in (self.solver_options or {}):
                raise ValueError(f"solver_options must not set {reserved!r}: it is one of "
                                 f"{type(self).__name__}'s parameters")
        if self.secure and self.random_state is not None:
            raise ValueError("secure=True draws its noise from the operating system: "
                             "random_state must be None")
        derived = self._derived_bounds()
        if self.accountant is not None and derived:
            raise ValueError(
                f"{', '.join(derived)} not given: {type(self).__name__} would read "
                f"{'it' if len(derived) == 1 else 'them'} off the data, which no privacy "
                "budget can account for; pass public bounds (or private estimates, "
                "dpsolve.privacy.estimate_row_norm / estimate_label_bound) to fit with "
                "accountant=")

    def _noise_rng(self, rng):
        """The noise's source: ``fit``'s ``rng`` (the caller's stream, not stored), else
        ``random_state``."""
        if rng is None:
            return _rng(self.random_state)
        if self.secure:
            raise ValueError("secure=True draws its noise from the operating system: fit's rng "
                             "must be None")
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"fit's rng must be None or a numpy Generator, got "
                            f"{type(rng).__name__}")
        return rng

    def _row_norm(self, X):
        """The public row bound: given, or stated by the preprocessing before the estimator in
        a Pipeline (:meth:`_pipeline_row_norm`); else the data's largest row norm with a
        PrivacyWarning (in the dual norm of the constraint's: l2 for ``"l2"``, the largest
        ``|x_ij|`` for ``"l1"``)."""
        if isinstance(self.row_norm, PrivateEstimate):
            return float(self.row_norm.value)
        if self.row_norm is not None:
            return float(self.row_norm)
        stated = self._pipeline_row_norm()
        if isinstance(stated, float):
            return stated
        which = "l-inf norm (largest |entry|)" if self.constraint == "l1" else "norm"
        warnings.warn(
            f"{type(self).__name__}: row_norm was not given, so the largest row {which} of X "
            "is used; it is read off the data and leaks beyond the fit's guarantee. Pass a "
            "public bound, or one estimated privately (dpsolve.privacy.estimate_row_norm).",
            PrivacyWarning, stacklevel=3)
        largest = float(np.max(dual_row_norms(X, self.constraint))) if X.shape[0] else 0.0
        return largest if largest > 0.0 else 1.0

    def _problem_options(self, bounds):
        return {}

    def _prior_usable(self, loss, solver):
        """Whether the private base rate can centre this fit's intercept: a binary problem
        (``loss``, a :class:`~dpsolve.losses.Loss`) with an intercept, and a solver that
        centres its regulariser."""
        return (self.fit_intercept and loss.binary
                and solver in _centred_solvers(loss.name))

    def _auto_prior_share(self, n):
        """The share ``prior_share="auto"`` spends on the prior where it is usable, from
        public constants: the class counts' ``AUTO_PRIOR_SHARE`` (the regressor's depends on n
        and epsilon)."""
        return AUTO_PRIOR_SHARE

    def _prior_share(self, loss, solver, n):
        """The share of epsilon spent on the private class counts (0: none), from public
        settings only: ``prior_share``, or with "auto" :meth:`_auto_prior_share` (0.1 for the
        classifiers) when a binary fit with an intercept runs a solver that takes a centre
        (``loss``: the Problem's loss object; ``n``: the number of rows, public)."""
        share = getattr(self, "prior_share", 0.0)
        usable = self._prior_usable(loss, solver)
        if isinstance(share, str):
            share = self._auto_prior_share(n) if usable else 0.0
        elif share > 0.0 and not usable:
            why = ("fit_intercept=False" if not self.fit_intercept else
                   "the problem is not binary" if loss.is_multinomial else
                   f"solver {solver!r} does not centre its regulariser")
            raise ValueError(f"prior_share={share!r}: the private base rate centres the "
                             f"intercept, which needs fit_intercept=True, a binary problem and "
                             f"one of the solvers {_centred_solvers(loss.name)}; here {why}. Use "
                             "prior_share=0 (or 'auto')")
        if isinstance(getattr(self, "class_weight", None), str) and share == 0.0:
            raise ValueError("class_weight='balanced' moves the threshold to the private base "
                             "rate, which needs the class counts: a binary problem with "
                             f"fit_intercept=True, one of the solvers "
                             f"{_centred_solvers(loss.name)} "
                             "and prior_share > 0 (or 'auto')")
        if share > 0.0 and share * self.epsilon < MIN_EPSILON:
            raise ValueError(f"prior_share * epsilon = {share * self.epsilon:g} is below "
                             f"{MIN_EPSILON:g}: a count at that epsilon is all noise; use "
                             "prior_share=0")
        return float(share)

    def _prepare(self, X, y, loss, classes=None, bounds=None):
        """The Problem (its ``reg`` resolved), the solver's spec, its options and the prior's
        share of epsilon, from public constants only (no noise drawn, nothing released)."""
        return self._prepare_with_choice(X, y, loss, classes, bounds)[:4]

    def _prepare_with_choice(self, X, y, loss, classes=None, bounds=None):
        """:meth:`_prepare`'s four values and :func:`dpsolve.choose_solver`'s choice (None for
        a named solver), which the command line reports."""
        row_norm = self._row_norm(X)
        auto_reg = isinstance(self.reg, str)
        problem = Problem(X, y, loss, radius=self.radius, constraint=self.constraint,
                          reg=1.0 / max(X.shape[0], 1) if auto_reg else self.reg,
                          row_norm=row_norm, classes=classes, fit_intercept=self.fit_intercept,
                          intercept_scale=self.intercept_scale,
                          **self._problem_options(bounds))
        delta = float(self.delta)
        target_delta = delta if delta > 0.0 else None
        choice = None
        if self.solver == "auto":
            reg = choice_reg(problem, self.epsilon, target_delta) if auto_reg else None
            if reg is not None:
                # choose at the ridge the likely winner would use
                problem = problem._with_reg(reg)
            choice = choose_solver(problem, self.epsilon, target_delta)
            name = choice.name
        else:
            name = self.solver
        spec = _solvers.get(name)
        options = dict(self.solver_options or {})
        unknown = sorted(set(options) - set(spec.parameters))
        if unknown:
            how = "chosen for" if self.solver == "auto" else "given by"
            raise ValueError(f"solver_options: {name} (the solver {how} solver="
                             f"{self.solver!r}) takes no option "
                             f"{', '.join(map(repr, unknown))}; its options are "
                             f"{sorted(spec.parameters)}")
        for reserved in ("centre", "centre_bound"):
            if reserved in options:
                raise ValueError(f"solver_options must not set {reserved!r}: the estimator centres "
                                 "the intercept on the private base rate itself (prior_share)")
        share = self._prior_share(problem.loss_object, name, problem.n)
        if share:
            options.update(self._prior_options(problem))
        epsilon = self.epsilon * (1.0 - share)
        if auto_reg:
            # 1% below the fit's epsilon: the solver's own split leaves it a little less
            problem = problem._with_reg(prediction_reg(problem, name, 0.99 * epsilon,
                                                       target_delta))
            for option, value in prediction_options(name).items():
                options.setdefault(option, value)
        if delta > 0.0:
            options["delta"] = delta
        return problem, spec, options, share, choice

    def _solver_event(self, problem, spec, options, epsilon):
        """The event the solver's plan would release (public constants only): its plan by
        :func:`dpsolve.solvers.plan_fit`, the one the fit itself goes through, certified as the
        fit's is, so that whatever the fit's plan would refuse (a certification out of float64's
        range among it) is refused before the budget is charged."""
        options = dict(options)
        delta = options.pop("delta", None)
        with warnings.catch_warnings():
            # the fit itself reports its certification; the plan is only read here
            warnings.simplefilter("ignore", PrivacyWarning)
            return plan_fit(spec, problem, None, epsilon, delta, secure=bool(self.secure),
                            **options).event

    def planned_event(self, X, y):
        """The DpEvent that ``fit(X, y)`` would release, without running it.

        Read from the solver's plan (public constants: n, p, the bounds, the options) and the
        class counts' share of epsilon; no noise is drawn, nothing is charged or released.
        :class:`~dpsolve.private_selection.PrivateGridSearch` plans a search from it before
        any fit. The bounds' private estimates are not in it (they are released once, however
        many fits use them): the fitted ``dp_event_`` composes them in.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows the fit would read (their number and shape are what the plan uses).
        y : array-like of shape (n_samples,)
            The labels.

        Returns
        -------
        dp_accounting.DpEvent
            The event of the solver's release, composed with the class counts' where the fit
            releases them; ``NonPrivateDpEvent`` where a bound (``row_norm``, ``classes``,
            ``label_bound``) is not given and would be read off the data, as ``dp_event_``.

        Raises
        ------
        ValueError, TypeError
            For the parameters or data a fit would refuse, as ``fit`` raises them.
        """
        self._validate_params()
        validated = self._validated(X, y)
        if self._derived_bounds():
            # a bound read off the data: no guarantee, as the fit's dp_event_ says; the plan
            # (and so its event) would depend on the data
            return dp_accounting.NonPrivateDpEvent()
        problem, spec, options, share = self._prepare(*validated[:5])
        epsilon, prior_event = self._split_epsilon(share)
        event = self._solver_event(problem, spec, options, epsilon)
        if prior_event is not None:
            return dp_accounting.ComposedDpEvent([event, prior_event])
        return event

    def _split_epsilon(self, share):
        """The solver's epsilon and the class counts' event (None without them): epsilon
        minus the counts' share, so that the two add up to epsilon."""
        if not share:
            return self.epsilon, None
        prior = pure_event(self.epsilon * share)
        return self.epsilon - prior.epsilon, prior

    def _run(self, X, y, loss, classes=None, bounds=None, rng=None):
        """Build the Problem, release the class counts (if the prior is used), run the
        solver, set the fitted attributes. Returns the coefficients, the intercept and the
        base margin the intercept was centred on (0 without a prior)."""
        rng = self._noise_rng(rng)
        problem, spec, options, share = self._prepare(X, y, loss, classes, bounds)
        epsilon, prior_event = self._split_epsilon(share)
        planned = None
        if self.accountant is not None:
            # one charge, before any noise is drawn: the solver's planned event (public
            # constants only) with the class counts', and the estimates the bounds came from;
            # the solver itself then charges nothing
            planned = self._solver_event(problem, spec, options, epsilon)
            event = planned if prior_event is None else dp_accounting.ComposedDpEvent(
                [planned, prior_event])
            charge(self.accountant, event, neighbours=spec.neighbours, label=spec.name,
                   estimates=self._estimates())
        offset = 0.0
        if prior_event is not None:
            prior_rng, rng = _split_rng(rng, self.secure)
            problem, options, offset = self._apply_prior(y, problem, options,
                                                         prior_event.epsilon, prior_rng)
        fit = spec.function(problem, epsilon, rng=rng, secure=self.secure, **options)
        if planned is not None and fit.dp_event != planned:
            raise RuntimeError(f"{spec.name} released {fit.dp_event!r}, not the planned "
                               f"{planned!r} charged to the budget")
        coef, intercept = problem.split_theta(fit.theta)
        # the coefficients set to 0 (sparse models: the l1 ball's vertices); post-processing
        self.n_nonzero_ = int(np.count_nonzero(coef))
        self._set_release(self._release(fit, prior_event, spec.name))
        self.solver_ = spec.name
        self.row_norm_ = problem.feature_row_norm
        self.reg_ = problem.reg
        return coef, intercept, offset

    def _prior_options(self, problem):
        """Solver options the prior fixes from public constants before any noise (none)."""
        return {}

    def _apply_prior(self, y, problem, options, epsilon, rng):
        """Release the private statistic the prior needs at ``epsilon`` and apply it: the
        classifiers centre the intercept on the private base rate (returning its margin), the
        regressor shifts the labels by their private mean (returning it)."""
        raise NotImplementedError

    def _model_event(self, event, prior_event=None):
        """The event of the model whose solver released ``event``: first the class counts'
        event composed in (as :meth:`planned_event` composes them), then the bounds' private
        estimates; ``NonPrivateDpEvent`` if a bound was read off the data."""
        if self._derived_bounds():
            return dp_accounting.NonPrivateDpEvent()
        if prior_event is not None:
            event = dp_accounting.ComposedDpEvent([event, prior_event])
        estimates = [e.dp_event for e in self._estimates()]
        if not estimates:
            return event
        return dp_accounting.ComposedDpEvent([event] + estimates)

    def _release(self, fit, prior_event=None, solver="fit"):
        """The Fit with the privacy of everything the model depends on (:meth:`_model_event`):
        the class counts' and the estimates' pure epsilons added to the fit's claim (basic
        composition); no guarantee at all (certified epsilon inf) if a bound was read off the
        data. Its report's ledger lists the fit (named ``solver``), then each estimate."""
        event = self._model_event(fit.dp_event, prior_event)
        # the user's epsilon when the counts took their share of it (the two add up to it)
        epsilon = self.epsilon if prior_event is not None else fit.epsilon
        own = (fit.dp_event if prior_event is None
               else dp_accounting.ComposedDpEvent([fit.dp_event, prior_event]))
        name = solver if prior_event is None else f"{solver} and {self._prior_name}"
        steps = [PrivacyStep(name, epsilon, fit.delta, own)]
        if event is fit.dp_event:
            report = dataclasses.replace(fit.privacy, steps=tuple(steps))
            return dataclasses.replace(fit, privacy=report)
        if self._derived_bounds():
            steps += [PrivacyStep(f"{bound} read off the data", math.inf, 0.0,
                                  dp_accounting.NonPrivateDpEvent())
                      for bound in self._derived_bounds()]
            report = dataclasses.replace(fit.privacy, epsilon=epsilon,
                                         certified_epsilon=math.inf, steps=tuple(steps))
            return dataclasses.replace(fit, dp_event=event, privacy=report)
        named = self._named_estimates()
        steps += [PrivacyStep(where, e.epsilon, 0.0, e.dp_event) for where, e in named]
        epsilon += sum(e.epsilon for _, e in named)
        report = certify(event, epsilon, fit.delta, fit.privacy.method, fit.privacy.neighbours,
                         steps=steps)
        return dataclasses.replace(fit, dp_event=event, privacy=report)

    def _set_release(self, fit):
        """The privacy attributes, all read from one Fit."""
        self.fit_ = fit
        # the claim where it holds (up to the report's rounding allowance), else what is
        # certified (inf: a bound off the data)
        self.epsilon_ = (fit.epsilon if fit.privacy.holds
                         else max(fit.epsilon, fit.privacy.certified_epsilon))
        self.delta_ = fit.delta
        self.dp_event_ = fit.dp_event
        self.privacy_report_ = fit.privacy

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
