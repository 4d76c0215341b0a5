"""A pipeline whose private estimator takes its row bound from the public preprocessing before
it, so that the user need not work it out."""
from sklearn.base import clone
from sklearn.pipeline import Pipeline, make_pipeline

from .row_bounds import output_row_norm, private_steps


class PrivatePipeline(Pipeline):
    """A ``Pipeline`` of preprocessing, some of it fitted privately, and a private estimator,
    whose fit composes the preprocessing's releases into the estimator's.

    Built by :func:`private_pipeline` when the preprocessing holds a transformer that spends
    epsilon (:class:`PrivateRangeScaler`). ``fit`` is ``Pipeline.fit``: each private step runs
    the estimator's checks of its parameters (and that the step charges the estimator's
    budget), then spends its epsilon, charged to its ``accountant``; the estimator, fitted on
    the transformed table, composes the private steps' releases into its ``epsilon_``,
    ``dp_event_`` and ``privacy_report_``, as the events of private bounds are: the total is
    the sum of the steps' epsilons and the fit's (adaptive composition; basic composition for
    the pure-DP steps). A plain scikit-learn ``Pipeline`` composes them the same way (the
    estimator finds the private steps of the Pipelines fitting it); this one adds the
    refusal of a cache and of fit parameters, and the ledger ``privacy_steps_``.

    Parameters
    ----------
    steps : list of (str, transformer or estimator)
        As in ``Pipeline``; the last is one of dpsolve's estimators.
    memory : None
        Only None: the private steps are fitted once per ``fit``, never from a cache.
    verbose : bool, default=False
        As in ``Pipeline``.

    Attributes
    ----------
    privacy_steps_ : list of (str, float)
        Each private step's place and epsilon, then the estimator's name and its own epsilon
        (the fit's, without the steps'), in the order they were spent; they add up to the
        estimator's ``epsilon_``.
    """

    def __init__(self, steps, *, memory=None, verbose=False):
        super().__init__(steps, memory=memory, verbose=verbose)

    def fit(self, X, y=None, **params):
        """Fit the preprocessing, then the estimator with the private steps' cost composed in.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The raw table.
        y : array-like of shape (n_samples,)
            The labels.
        **params : dict
            Refused (a TypeError): the steps take no fit parameters here.

        Returns
        -------
        self : PrivatePipeline
            The fitted pipeline.
        """
        if params:
            raise TypeError(f"PrivatePipeline.fit takes no fit parameters, got "
                            f"{sorted(params)}")
        if self.memory is not None:
            raise ValueError("memory must be None: a private step is fitted, and spends its "
                             "epsilon, at every fit, never read back from a cache")
        # the steps' own checks run the estimator's before any of them spends
        # (check_before_spending); its fit composes their releases (upstream_releases)
        super().fit(X, y)
        releases = [(where, step.epsilon_) for name, head in self.steps[:-1]
                    for where, step in private_steps(head, f"the pipeline's step {name!r}")]
        own = self._final_estimator.epsilon_ - sum(epsilon for _, epsilon in releases)
        self.privacy_steps_ = releases + [(self.steps[-1][0], own)]
        return self


def private_pipeline(preprocess, estimator):
    """``make_pipeline(preprocess, estimator)`` with the estimator's ``row_norm`` taken from
    the preprocessing's public parameters when not given.

    The bound is :func:`output_row_norm` of ``preprocess``, in the norm the estimator's
    geometry reads ``row_norm`` in: l2, or l-infinity for ``constraint="l1"`` (as in
    Talwar-Thakurta-Zhang 2015's Frank-Wolfe over the l1 ball). No bound is then read off the
    data, and the fit's privacy holds with the public-bound setting of
    Chaudhuri-Monteleoni-Sarwate 2011.

    Parameters
    ----------
    preprocess : transformer
        A transformer of :mod:`dpsolve.preprocessing`, or a ``ColumnTransformer``,
        ``Pipeline`` or ``FeatureUnion`` of them, whose output bound :func:`output_row_norm`
        states.
    estimator : DPLogisticRegression, DPLinearSVC or DPLinearRegression
        The private estimator; left unchanged (a clone is set) when its ``row_norm`` is given.

    Returns
    -------
    pipeline : sklearn.pipeline.Pipeline
        The preprocessing followed by the estimator (a clone of it, with ``row_norm`` set): a
        :class:`PrivatePipeline` when the preprocessing holds a transformer fitted privately
        (:class:`PrivateRangeScaler`), whose fit composes that transformer's cost into the
        estimator's ``epsilon_``, ``dp_event_`` and ``privacy_report_``.

    Raises
    ------
    ValueError
        If ``preprocess`` reports no bound (see :func:`output_row_norm`).
    TypeError
        If ``estimator`` has no ``row_norm`` parameter.

    Examples
    --------
    >>> from dpsolve.estimators import DPLogisticRegression
    >>> from dpsolve.preprocessing import PublicRangeScaler, private_pipeline
    >>> model = private_pipeline(PublicRangeScaler([(0, 10), (0, 5), (1, 2), (0, 1)]),
    ...                          DPLogisticRegression(epsilon=1.0, classes=[0, 1]))
    >>> model[-1].row_norm
    2.0
    """
    params = estimator.get_params(deep=False) if hasattr(estimator, "get_params") else {}
    if "row_norm" not in params:
        raise TypeError(f"estimator must be one of dpsolve's estimators (with a row_norm "
                        f"parameter), got {type(estimator).__name__}")
    estimator = clone(estimator)
    if params["row_norm"] is None:
        norm = "linf" if params.get("constraint") == "l1" else "l2"
        estimator.set_params(row_norm=output_row_norm(preprocess, norm))
    pipeline = make_pipeline(preprocess, estimator)
    if private_steps(preprocess):
        return PrivatePipeline(pipeline.steps)
    return pipeline
