r"""Statistical privacy audits: lower bounds on the epsilon a mechanism really has.

A differentially private mechanism ``M`` satisfies, for neighbouring datasets ``D, D'`` and every
event ``E``, ``P[M(D) in E] <= e^epsilon P[M(D') in E] + delta``. A wrong constant (noise too
small, a sensitivity for the wrong neighbour relation, clipping skipped) leaves a mechanism that
still returns plausible models; only its output distributions give it away. An audit runs the
mechanism many times on ``D`` and on ``D'``, and turns the frequencies of one event into a lower
bound that holds with a stated confidence:

.. math::

    \varepsilon \ge \ln(\mathrm{TPR}_{lb} - \delta) - \ln(\mathrm{FPR}_{ub}),

where ``TPR_lb`` is a Clopper–Pearson lower confidence bound on ``P[M(D) in E]`` and ``FPR_ub``
an upper one on ``P[M(D') in E]`` (Jagielski et al. 2020, "Auditing differentially private
machine learning"; Nasr et al. 2021). Each of the two bounds is taken at ``(1 - confidence)/2``,
so the lower bound holds with probability at least ``confidence`` whatever the mechanism. The
event is a threshold on a scalar statistic, ``{S > t}`` or ``{S <= t}``, in either direction
(``D`` over ``D'`` or ``D'`` over ``D``). It is **chosen on one part of the runs and evaluated on
the other**, so choosing it costs no confidence. The same test gives a lower bound on the
Gaussian-DP parameter (Dong, Roth & Su 2022): a mu-GDP mechanism has ``TPR <= Phi(Phi^{-1}(FPR)
+ mu)`` for every test, so ``mu >= Phi^{-1}(TPR_lb) - Phi^{-1}(FPR_ub)``.

A lower bound above the claimed epsilon proves the claim false (with the stated confidence). A
lower bound below it proves nothing about the claim: the audit's power depends on the neighbours
(use worst-case ones: :func:`canary_neighbours`), the statistic and the number of runs.

The bound must be taken at the claim's delta: at a smaller one (delta = 0 in particular) it can
exceed the epsilon of a correct (epsilon, delta)-DP mechanism. Pass the claim (``claim=``: a
:class:`~dpsolve.Fit`, a DpEvent, a PrivacyReport or an ``(epsilon, delta)`` pair) and the audit
is run at its delta and reports the claimed epsilon (and mu) beside the bounds.

- :func:`audit` runs a mechanism or solver on two neighbouring datasets and audits its outputs.
- :func:`audit_scores` audits scalar statistics that were computed elsewhere.
- :func:`canary_neighbours` builds worst-case neighbouring :class:`~dpsolve.Problem` s for
  linear models: a canary record whose gradient points along a coordinate no other record uses.
- :func:`clopper_pearson` is the exact binomial confidence bound the audits use.
"""
import math
import numbers
from dataclasses import dataclass

import dp_accounting
import numpy as np
from scipy import special, stats

from ._capabilities import sparse_solvers
from ._row_ops import refuse_sparse
from ._validation import check_choice, check_int, check_real, check_rng
from .fit import Fit
from .privacy.accounting import PrivacyReport, epsilon_of
from .problem import Problem

__all__ = ["AuditResult", "audit", "audit_scores", "canary_neighbours", "clopper_pearson",
           "gdp_mu"]

# thresholds tried on the selection runs: ranks spaced geometrically from both tails
_CANDIDATES_PER_TAIL = 400


def clopper_pearson(successes, trials, alpha, side):
    """One-sided Clopper–Pearson (exact binomial) confidence bound on a success probability.

    Parameters
    ----------
    successes, trials : int or array of int
        ``0 <= successes <= trials``, ``trials >= 1``.
    alpha : float
        In (0, 1): the bound fails with probability at most ``alpha``.
    side : {"lower", "upper"}
        ``"lower"``: ``Beta(alpha; k, n - k + 1)`` quantile (0 when ``k = 0``); ``"upper"``:
        ``Beta(1 - alpha; k + 1, n - k)`` quantile (1 when ``k = n``).

    Returns
    -------
    float or ndarray
        The bound, in [0, 1]: a float for scalar inputs, else an array of the broadcast shape of
        ``successes`` and ``trials``.
    """
    alpha = check_real(alpha, "alpha", low=0.0, high=1.0)
    check_choice(side, "side", ("lower", "upper"))
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n) or np.any(k != np.floor(k)):
        raise ValueError("successes and trials must be integers with 0 <= successes <= trials, "
                         "trials >= 1")
    with np.errstate(divide="ignore", invalid="ignore"):
        if side == "lower":
            out = np.where(k > 0, special.betaincinv(k, n - k + 1, alpha), 0.0)
        else:
            out = np.where(k < n, special.betaincinv(k + 1, n - k, 1.0 - alpha), 1.0)
    return out if out.ndim else float(out)


@dataclass(frozen=True)
class AuditResult:
    """What an audit found. ``epsilon`` and ``mu`` are lower bounds that each hold with
    probability at least ``confidence``; 0 means the runs gave no evidence of privacy loss. A
    verdict that looks at both has a false-alarm probability of at most ``2 (1 - confidence)``.

    Attributes
    ----------
    epsilon : float
        Lower bound on epsilon at ``delta``: ``max(0, ln(tpr_lower - delta) - ln(fpr_upper))``.
    mu : float
        Lower bound on the Gaussian-DP parameter mu (its own test, chosen the same way).
    delta : float
        The delta at which ``epsilon`` is bounded: the ``delta`` passed, else the claim's, else 0.
    confidence : float
        As passed.
    runs : int
        Runs per dataset; ``selection_runs`` of them chose the test, the rest evaluated it.
    selection_runs : int
        Runs per dataset that chose the test (the smaller of the two datasets' counts).
    test : str
        The event and direction used for ``epsilon``, e.g. ``"S > 0.731: D over D'"`` (the
        event's frequency on D is the true-positive rate, on D' the false-positive rate).
    threshold : float
        The threshold t of that event.
    tpr_lower : float
        Clopper-Pearson lower confidence bound on the true-positive rate, behind ``epsilon``.
    fpr_upper : float
        Clopper-Pearson upper confidence bound on the false-positive rate, behind ``epsilon``.
    tpr : float
        The true-positive frequency of the test on the evaluation runs.
    fpr : float
        The false-positive frequency of the test on the evaluation runs.
    claimed_epsilon : float or None
        With ``claim=``: the epsilon the claim states at ``delta`` (see :func:`audit_scores`);
        ``epsilon > claimed_epsilon`` refutes the claim with the stated confidence. None without
        a claim.
    claimed_mu : float or None
        With a claim whose DpEvent is a (composition of) unsampled Gaussian release(s): its
        Gaussian-DP mu (:func:`gdp_mu`); ``mu > claimed_mu`` refutes it. None otherwise.
    """
    epsilon: float
    mu: float
    delta: float
    confidence: float
    runs: int
    selection_runs: int
    test: str
    threshold: float
    tpr_lower: float
    fpr_upper: float
    tpr: float
    fpr: float
    claimed_epsilon: float = None
    claimed_mu: float = None

    def __str__(self):
        claim = ""
        if self.claimed_epsilon is not None:
            claim = f"; claimed epsilon {self.claimed_epsilon:.4g}"
            if self.claimed_mu is not None:
                claim += f", mu {self.claimed_mu:.4g}"
        return (f"epsilon >= {self.epsilon:.4g} at delta = {self.delta:g}, mu >= {self.mu:.4g} "
                f"(confidence {self.confidence:g}; {self.runs} runs per dataset; test {self.test}, "
                f"TPR {self.tpr:.4g} >= {self.tpr_lower:.4g}, FPR {self.fpr:.4g} <= "
                f"{self.fpr_upper:.4g}{claim})")


def _resolve_claim(claim, delta):
    """``(delta, claimed_epsilon, claimed_mu)`` from ``claim=`` and ``delta=`` (see
    :func:`audit_scores`)."""
    if claim is None:
        delta = 0.0 if delta is None else delta
        return check_real(delta, "delta", low=0.0, high=1.0, low_inclusive=True), None, None
    event = stated = None               # stated: the claim's own (epsilon, delta)
    if isinstance(claim, Fit):
        event, stated = claim.dp_event, (claim.epsilon, claim.delta)
    elif isinstance(claim, PrivacyReport):
        stated = (claim.epsilon, claim.delta)
    elif isinstance(claim, dp_accounting.DpEvent):
        event = claim
    elif (isinstance(claim, (tuple, list)) and len(claim) == 2
          and all(isinstance(v, numbers.Real) for v in claim)):
        stated = (check_real(claim[0], "claim's epsilon", low=0.0, low_inclusive=True),
                  check_real(claim[1], "claim's delta", low=0.0, high=1.0, low_inclusive=True))
    else:
        raise TypeError("claim must be a dpsolve Fit, a dp_accounting DpEvent, a PrivacyReport "
                        f"or an (epsilon, delta) pair, got {type(claim).__name__}")
    if delta is None:
        if stated is not None:
            delta = stated[1]
        elif math.isfinite(epsilon_of(event, 0.0, "basic")):
            delta = 0.0                 # a pure epsilon-DP event
        else:
            raise ValueError("a DpEvent states no delta and this one is not pure epsilon-DP; "
                             "pass delta= (or claim= the Fit, which states its delta)")
    delta = check_real(delta, "delta", low=0.0, high=1.0, low_inclusive=True)
    if stated is not None and delta == stated[1]:
        claimed_epsilon = stated[0]
    elif event is not None:
        claimed_epsilon = epsilon_of(claim, delta)
    else:
        # (epsilon, d)-DP implies (epsilon, delta)-DP for delta >= d, and nothing below d
        claimed_epsilon = stated[0] if delta >= stated[1] else math.inf
    claimed_mu = None
    if event is not None:
        try:
            claimed_mu = gdp_mu(event)
        except ValueError:
            pass
    return delta, float(claimed_epsilon), claimed_mu


def _check_scores(scores, name):
    scores = np.asarray(scores)
    if scores.dtype == object or not (np.issubdtype(scores.dtype, np.floating)
                                       or np.issubdtype(scores.dtype, np.integer)):
        raise TypeError(f"{name} must hold real numbers, got dtype {scores.dtype}")
    scores = np.asarray(scores, dtype=np.float64).ravel()
    if scores.size < 4:
        raise ValueError(f"{name} needs at least 4 runs, got {scores.size}")
    if not np.all(np.isfinite(scores)):
        raise ValueError(f"{name} contains NaN or inf")
    return scores


def _candidates(a, b):
    """Thresholds to try: order statistics of the pooled scores at ranks spaced geometrically
    from each tail (the informative tests of a tight mechanism sit in the tails)."""
    pooled = np.sort(np.concatenate([a, b]))
    m = pooled.size
    ranks = np.unique(np.geomspace(1, m, _CANDIDATES_PER_TAIL).astype(np.int64) - 1)
    return np.unique(np.concatenate([pooled[ranks], pooled[m - 1 - ranks]]))


def _counts_above(scores, thresholds):
    """Number of scores strictly above each threshold."""
    return scores.size - np.searchsorted(np.sort(scores), thresholds, side="right")


# The four tests of one threshold t: (event, numerator dataset). Row i of the count arrays
# below is the event's count on the numerator's runs ("true positives") and on the other's.
_TESTS = (("S > {t:.6g}", "D over D'"), ("S > {t:.6g}", "D' over D"),
          ("S <= {t:.6g}", "D over D'"), ("S <= {t:.6g}", "D' over D"))


def _test_counts(a, b, thresholds):
    """``(positives, negatives, sizes)`` for the tests in ``_TESTS``: the counts (each of shape
    (4, len(thresholds))) of the event on the numerator's and on the other dataset's runs, and
    the two run counts they are out of (each of shape (4,))."""
    above_a, above_b = _counts_above(a, thresholds), _counts_above(b, thresholds)
    positives = np.stack([above_a, above_b, a.size - above_a, b.size - above_b])
    negatives = np.stack([above_b, above_a, b.size - above_b, a.size - above_a])
    sizes = (np.array([a.size, b.size, a.size, b.size]), np.array([b.size, a.size, b.size, a.size]))
    return positives, negatives, sizes


def _bounds(positives, negatives, sizes, alpha, delta):
    tpr_lb = clopper_pearson(positives, np.broadcast_to(sizes[0][:, None], positives.shape),
                             alpha / 2, "lower")
    fpr_ub = clopper_pearson(negatives, np.broadcast_to(sizes[1][:, None], negatives.shape),
                             alpha / 2, "upper")
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = np.where(tpr_lb > delta, np.log(np.maximum(tpr_lb - delta, 1e-300))
                       - np.log(fpr_ub), -np.inf)
        mu = stats.norm.ppf(tpr_lb) - stats.norm.ppf(fpr_ub)
    return tpr_lb, fpr_ub, eps, np.where(np.isnan(mu), -np.inf, mu)


def audit_scores(scores, scores_neighbour, *, claim=None, delta=None, confidence=0.95,
                 selection_fraction=0.5):
    r"""Audit scalar statistics of a mechanism's outputs on two neighbouring datasets.

    ``scores[i] = S(M(D))`` and ``scores_neighbour[i] = S(M(D'))`` for independent runs. The
    first ``selection_fraction`` of each array chooses the threshold test that maximises the
    lower bound computed on those runs; the rest evaluate that one test. See the module
    docstring for the bounds.

    Parameters
    ----------
    scores, scores_neighbour : array_like of float
        One finite number per run, at least 4 runs each.
    claim : Fit, dp_accounting.DpEvent, PrivacyReport or (epsilon, delta), optional
        The privacy claim under audit. It sets the default ``delta`` and the result's
        ``claimed_epsilon`` (the epsilon the claim states at the audited delta) and
        ``claimed_mu``:

        - a :class:`~dpsolve.Fit`: its ``(epsilon, delta)``; at another ``delta``, the epsilon
          that dpsolve's tightest accountant certifies for its ``dp_event`` there. ``claimed_mu``
          is :func:`gdp_mu` of its event where that has one.
        - a DpEvent (dpsolve's convention, replace-one): no delta of its own, so ``delta`` must be
          passed unless the event is pure epsilon-DP (then 0); claimed epsilon and mu from the
          event as for a Fit.
        - a :class:`~dpsolve.privacy.PrivacyReport` (``fit.privacy``) or an ``(epsilon, delta)``
          pair: that claim; at a larger ``delta`` the same epsilon, at a smaller one ``inf``
          (the claim says nothing there). No ``claimed_mu``.
    delta : float, optional
        In [0, 1): the delta at which epsilon is bounded. Default: the claim's delta (a Fit's
        ``delta``), or 0 without a claim. Compare the bound only with a claim at the same delta:
        the bound at delta = 0 can exceed the epsilon of a correct (epsilon, delta)-DP mechanism.
    confidence : float, default 0.95
        In (0, 1): the probability with which each returned bound holds.
    selection_fraction : float, default 0.5
        In (0, 1): share of each array's runs (its first ones) used to choose the test.

    Returns
    -------
    AuditResult
    """
    a = _check_scores(scores, "scores")
    b = _check_scores(scores_neighbour, "scores_neighbour")
    return _audit_scores(a, b, _resolve_claim(claim, delta), confidence, selection_fraction)


def _audit_scores(a, b, resolved, confidence, selection_fraction):
    delta, claimed_epsilon, claimed_mu = resolved
    confidence = check_real(confidence, "confidence", low=0.0, high=1.0)
    fraction = check_real(selection_fraction, "selection_fraction", low=0.0, high=1.0)
    alpha = 1.0 - confidence
    sa, sb = int(round(fraction * a.size)), int(round(fraction * b.size))
    if min(sa, sb, a.size - sa, b.size - sb) < 2:
        raise ValueError("selection_fraction leaves fewer than 2 runs to select or to evaluate "
                         "the test on")
    select_a, evaluate_a, select_b, evaluate_b = a[:sa], a[sa:], b[:sb], b[sb:]

    thresholds = _candidates(select_a, select_b)
    _, _, eps_sel, mu_sel = _bounds(*_test_counts(select_a, select_b, thresholds), alpha, delta)

    def evaluate(score):
        test, column = np.unravel_index(np.argmax(score), score.shape)
        t = thresholds[column : column + 1]
        pos, neg, sizes = _test_counts(evaluate_a, evaluate_b, t)
        tpr_lb, fpr_ub, eps, mu = _bounds(pos, neg, sizes, alpha, delta)
        return (test, float(t[0]), float(tpr_lb[test, 0]), float(fpr_ub[test, 0]),
                float(eps[test, 0]), float(mu[test, 0]), pos[test, 0] / sizes[0][test],
                neg[test, 0] / sizes[1][test])

    test, t, tpr_lb, fpr_ub, eps, _, tpr, fpr = evaluate(eps_sel)
    mu = evaluate(mu_sel)[5]
    event, direction = _TESTS[test]
    return AuditResult(epsilon=max(0.0, eps), mu=max(0.0, mu), delta=delta, confidence=confidence,
                       runs=min(a.size, b.size), selection_runs=min(sa, sb),
                       test=f"{event.format(t=t)}: {direction}", threshold=t, tpr_lower=tpr_lb,
                       fpr_upper=fpr_ub, tpr=float(tpr), fpr=float(fpr),
                       claimed_epsilon=claimed_epsilon, claimed_mu=claimed_mu)


def _outputs(mechanism, data, runs, generator, batch):
    """``runs`` outputs of ``mechanism`` on ``data``, as an array of shape (runs, k)."""
    if batch is None:
        out = [np.asarray(mechanism(data, generator), dtype=np.float64).ravel()
               for _ in range(runs)]
        return np.stack(out)
    chunks, done = [], 0
    while done < runs:
        size = min(batch, runs - done)
        out = np.asarray(mechanism(data, generator, size), dtype=np.float64)
        if out.shape[:1] != (size,):
            raise ValueError(f"a vectorised mechanism called with size={size} must return an "
                             f"array with {size} rows, got shape {out.shape}")
        chunks.append(out.reshape(size, -1))
        done += size
    return np.concatenate(chunks)


def audit(mechanism, data, neighbour, *, runs, claim=None, statistic=None, delta=None,
          confidence=0.95, selection_fraction=0.5, batch=None, rng=None):
    r"""Run ``mechanism`` ``runs`` times on each of two neighbouring datasets and audit it.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(data, rng)`` returns one output (a number or an array) computed with the
        numpy Generator ``rng``. With ``batch`` set it is called as ``mechanism(data, rng,
        size)`` and returns ``size`` independent outputs stacked along the first axis. A solver
        is audited end to end with e.g. ``lambda problem, rng: dpsolve.clipped_gd(problem, 1.0,
        1e-5, rng=rng).theta``.
    data, neighbour : object
        The two neighbouring datasets (anything ``mechanism`` accepts, e.g. the two problems of
        :func:`canary_neighbours`).
    runs : int
        Runs per dataset, at least 4.
    claim : Fit, dp_accounting.DpEvent, PrivacyReport or (epsilon, delta), optional
        The privacy claim under audit, typically a fit of the solver with the settings audited
        (``claim=dpsolve.clipped_gd(D, 1.0, 1e-5, rng=0)``). Sets the default ``delta`` and the
        result's ``claimed_epsilon`` and ``claimed_mu``; see :func:`audit_scores`.
    statistic : callable, optional
        Maps the array of outputs, shape (runs, k) (each output flattened), to one score per run.
        Default: the outputs themselves when they are numbers; otherwise the projection on the
        difference of the two datasets' mean outputs, estimated on the selection runs only (for
        Gaussian noise around two fixed points this is the likelihood-ratio statistic).
    delta : float, optional
        The delta at which epsilon is bounded. Default: the claim's delta (a Fit's ``delta``),
        or 0 without a claim; see :func:`audit_scores`.
    confidence, selection_fraction
        As in :func:`audit_scores`.
    batch : int, optional
        Vectorised mode: outputs are requested ``batch`` at a time.
    rng : None, int, SeedSequence or Generator
        Seeds the runs: one child stream for ``data``'s runs, one for ``neighbour``'s.

    Returns
    -------
    AuditResult

    Notes
    -----
    The runs are independent, so the first runs of each dataset may select the test and the
    rest evaluate it. The default statistic's direction comes from the selection runs alone,
    which keeps the evaluation runs untouched.
    """
    if not callable(mechanism):
        raise TypeError(f"mechanism must be callable, got {type(mechanism).__name__}")
    if statistic is not None and not callable(statistic):
        raise TypeError(f"statistic must be callable or None, got {type(statistic).__name__}")
    runs = check_int(runs, "runs", low=4)
    if batch is not None:
        batch = check_int(batch, "batch", low=1)
    fraction = check_real(selection_fraction, "selection_fraction", low=0.0, high=1.0)
    resolved = _resolve_claim(claim, delta)                          # before any run
    check_real(confidence, "confidence", low=0.0, high=1.0)
    generator_a, generator_b = check_rng(rng).spawn(2)
    out_a = _outputs(mechanism, data, runs, generator_a, batch)
    out_b = _outputs(mechanism, neighbour, runs, generator_b, batch)
    if out_a.shape != out_b.shape:
        raise ValueError(f"the mechanism's outputs differ in shape between the datasets: "
                         f"{out_a.shape[1:]} and {out_b.shape[1:]}")
    if statistic is not None:
        scores_a, scores_b = (np.asarray(statistic(o), dtype=np.float64) for o in (out_a, out_b))
        if scores_a.shape != (runs,) or scores_b.shape != (runs,):
            raise ValueError(f"statistic must return one number per run, shape ({runs},), got "
                             f"{scores_a.shape} and {scores_b.shape}")
    elif out_a.shape[1] == 1:
        scores_a, scores_b = out_a[:, 0], out_b[:, 0]
    else:
        s = int(round(fraction * runs))
        direction = out_a[:s].mean(axis=0) - out_b[:s].mean(axis=0)
        scores_a, scores_b = out_a @ direction, out_b @ direction
    return _audit_scores(_check_scores(scores_a, "scores"),
                         _check_scores(scores_b, "scores_neighbour"), resolved, confidence,
                         fraction)


def canary_neighbours(problem, *, neighbour="flip"):
    r"""Worst-case neighbouring datasets for auditing a solver on a linear model.

    Both datasets hold ``problem``'s records with one extra coordinate, zero for all of them, plus
    a canary record ``x_c = B e_{p+1}`` (B = ``problem.row_norm``) whose gradient therefore
    points along that coordinate alone. They differ only in the canary (replace-one):

    - ``"flip"``: label +1 in the first dataset and -1 in the second, so the canary's gradient
      ``loss'(y z) y x_c`` changes sign. At margin 0 (where a solver starts) this is the
      largest change one record can make, ``2 |loss'(0)| B``; for the hinge loss it stays
      ``2B`` while the canary's margin is below 1.
    - ``"zero"``: the second dataset's canary is the zero vector (label +1): the change of an
      add/remove neighbour, half of the above.

    The canary's coordinate of the solver's output, ``theta[p]``, is the natural statistic
    (returned as the third element): no other record moves it.

    With ``problem.fit_intercept`` the datasets are built from the user's features (B =
    ``problem.feature_row_norm``) with the same intercept: the canary coordinate comes after
    the features and before the intercept column, which every record, the canary included,
    carries. The canary row ``[B e, s]`` then has the largest norm, ``problem.row_norm``, and
    the statistic reads ``theta[problem.n_features]``.

    Parameters
    ----------
    problem : Problem
        A binary classification problem (logistic, hinge or huber_hinge loss); its other
        settings (radius, reg, row_norm, ...) are kept.
    neighbour : {"flip", "zero"}

    Returns
    -------
    (Problem, Problem, callable)
        ``D``, ``D'`` and ``statistic(outputs) -> outputs[:, p]`` for :func:`audit`.
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
    if not problem.loss_object.binary:
        raise ValueError(f"canary_neighbours needs a binary classification loss (logistic, hinge "
                         f"or huber_hinge), got {problem.loss!r}")
    check_choice(neighbour, "neighbour", ("flip", "zero"))
    refuse_sparse(problem, "canary_neighbours", sparse_solvers())
    # the user's features (without the intercept column, which the new Problem appends again)
    n, p = problem.n, problem.n_features
    X = np.zeros((n + 1, p + 1))
    X[:n, :p] = problem.X[:, :p]
    X[n, p] = problem.feature_row_norm
    y = np.append(np.asarray(problem.y, dtype=np.float64), 1.0)
    settings = dict(loss=problem.loss_object, radius=problem.radius, reg=problem.reg,
                    row_norm=problem.feature_row_norm, constraint=problem.constraint)
    if problem.fit_intercept:
        settings.update(fit_intercept=True, intercept_scale=problem.intercept_scale)
    first = Problem(X, y, **settings)
    X2, y2 = X.copy(), y.copy()
    if neighbour == "flip":
        y2[n] = -1.0
    else:
        X2[n, p] = 0.0
    second = Problem(X2, y2, **settings)

    def statistic(outputs):
        return np.asarray(outputs)[:, p]

    return first, second, statistic


def gdp_mu(event):
    r"""The Gaussian-DP parameter mu that a composition of Gaussian releases claims.

    A Gaussian release with noise multiplier ``m = sigma / Delta`` (``Delta`` its L2 sensitivity
    under the event's neighbour relation, as dpsolve's events carry it) is exactly
    ``(1/m)``-GDP, and GDP composes as ``mu = sqrt(sum_i mu_i^2)`` (Dong, Roth & Su 2022, Cor. 3.3
    and Prop. 3.5). Compare it with :attr:`AuditResult.mu`.

    Parameters
    ----------
    event : dp_accounting.DpEvent or Fit
        Gaussian, self-composed and composed events, and no-ops. Sampled events are not
        GDP with a closed-form mu: ValueError.

    Returns
    -------
    float
        ``mu = sqrt(sum_i 1 / m_i^2)`` over the event's Gaussian releases (0 for no-ops only).
    """
    import dp_accounting
    event = getattr(event, "dp_event", event)

    def squared(e):
        if isinstance(e, dp_accounting.NoOpDpEvent):
            return 0.0
        if isinstance(e, dp_accounting.GaussianDpEvent):
            return 1.0 / e.noise_multiplier ** 2
        if isinstance(e, dp_accounting.SelfComposedDpEvent):
            return e.count * squared(e.event)
        if isinstance(e, dp_accounting.ComposedDpEvent):
            return sum(squared(part) for part in e.events)
        raise ValueError(f"gdp_mu needs Gaussian, composed or no-op events, got "
                         f"{type(e).__name__}")

    if not isinstance(event, dp_accounting.DpEvent):
        raise TypeError(f"event must be a dp_accounting.DpEvent or a Fit, got "
                        f"{type(event).__name__}")
    return float(np.sqrt(squared(event)))
