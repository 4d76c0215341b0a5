"""How a private estimator and the private preprocessing before it find each other inside a
plain scikit-learn ``Pipeline``: by the Pipelines whose ``fit`` is running in this thread.

``Pipeline.fit`` fits each transformer, then calls the last step's ``fit`` on the transformed
table; nothing of the transformers reaches that call. A model fitted on the output of a
transformer that spent epsilon (:class:`PrivateRangeScaler`) depends on that release too, so
its guarantee is the composition of both: reporting the fit's epsilon alone would claim a
guarantee the model does not have. So the estimator's ``fit`` looks for the Pipelines whose
``fit`` is calling it (the frames of a ``Pipeline``'s ``fit`` on the thread's stack whose last
step is the estimator, or a Pipeline ending in it) and composes the releases of their fitted private
steps into its own; and a private step, before it spends, runs the checks of the estimator at
the end of the Pipeline fitting it, so that a refusal there comes before the step's charge.
"""
import sys

from sklearn.pipeline import Pipeline

from ._tables import WidthUnknown
from .row_bounds import output_row_norm, private_steps

#: What :func:`upstream_row_norm` returns while a step still needs its fit to state its bound.
NOT_YET_KNOWN = "not yet known"

def _fitting_pipelines():
    """The Pipelines whose ``fit`` is running in this thread, innermost first: the frames of a
    method named ``fit`` whose ``self`` is a ``Pipeline`` (scikit-learn's, or a subclass's own
    ``fit``, such as imbalanced-learn's)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "fit":
            owner = frame.f_locals.get("self")
            if isinstance(owner, Pipeline):
                yield owner
        frame = frame.f_back


def _last_step(pipeline):
    """The estimator at the end of ``pipeline``, through Pipelines nested as last steps."""
    final = pipeline._final_estimator
    while isinstance(final, Pipeline):
        final = final._final_estimator
    return final


def upstream_releases(estimator):
    """The releases of the private steps fitted before ``estimator`` by the Pipelines whose
    ``fit`` is fitting it (``estimator`` their last step, or the last step of a Pipeline that
    is), outermost first: each ``(where, release)``, ``release`` the step's
    :meth:`~dpsolve.preprocessing.PrivateRangeScaler.row_norm_estimate` (its value unused,
    its ``epsilon`` and ``dp_event`` the step's).

    Empty when ``estimator`` is not being fitted by a Pipeline (fitted directly on a table,
    whatever made it: its guarantee is then about that table) or the Pipeline holds no
    private step.

    Parameters
    ----------
    estimator : estimator
        The estimator whose ``fit`` is running.

    Returns
    -------
    list of (str, PrivateEstimate)
    """
    target, found = estimator, []
    for pipeline in _fitting_pipelines():
        if pipeline._final_estimator is not target:
            continue
        name = "the pipeline" if target is estimator else "the outer pipeline"
        found = [(where, step.row_norm_estimate())
                 for step_name, head in pipeline.steps[:-1]
                 for where, step in private_steps(head, f"{name}'s step {step_name!r}")
                 ] + found
        target = pipeline
    return found


def upstream_row_norm(estimator, norm):
    """The bound the preprocessing before ``estimator`` states for its output rows, in the
    Pipelines fitting it: :func:`output_row_norm` of the steps before it in the innermost
    Pipeline that has some (an outer one's when ``estimator`` is alone in its Pipeline), from
    their public parameters.

    Parameters
    ----------
    estimator : estimator
        The estimator being fitted, or checked before a step before it spends.
    norm : {"l2", "linf"}
        The norm its ``row_norm`` bounds.

    Returns
    -------
    float, None or NOT_YET_KNOWN
        The bound; None when no Pipeline is fitting ``estimator`` or a step states no bound
        (or 0, every column dropped);
        :data:`NOT_YET_KNOWN` when a step needs its fit to state it (a range given once for
        every column, checked before that step is fitted).
    """
    target = estimator
    for pipeline in _fitting_pipelines():
        if pipeline._final_estimator is not target:
            continue
        head = pipeline[:-1]
        if any(not (step is None or step == "passthrough") for _, step in head.steps):
            try:
                bound = output_row_norm(head, norm)
            except WidthUnknown:
                return NOT_YET_KNOWN
            except ValueError:
                return None
            return bound if bound > 0.0 else None
        target = pipeline
    return None


def check_before_spending(step):
    """Run, before the private ``step`` spends its epsilon, the checks of what its output feeds
    in the Pipeline being fitted: the ``_check_preceding_step(step)`` of the innermost
    Pipeline's last step (through nested Pipelines) that has one (dpsolve's estimators and
    :class:`~dpsolve.private_selection.PrivateGridSearch`), so that a refusal of its
    parameters comes before the step's charge, not after it.

    A transformer fitted in another thread or process (a ``ColumnTransformer`` with
    ``n_jobs``) has no Pipeline on its stack: these early checks are then skipped, and the
    estimator composes the step's release all the same (:func:`upstream_releases` runs in
    the estimator's own ``fit``).
    """
    for pipeline in _fitting_pipelines():
        check = getattr(_last_step(pipeline), "_check_preceding_step", None)
        if check is not None:
            check(step)
            return


def check_same_budget(step, budget, name):
    """Refuse a private ``step`` that does not charge ``budget``, the budget of ``name`` after
    it (None: nothing to check), which composes the step's release into its own: a budget that
    records the model must record the step, once, and before the step reads the table."""
    if budget is not None and step.accountant is not budget:
        raise ValueError(
            f"{type(step).__name__}: its accountant must be the estimator's budget (the "
            f"{name} after it in the pipeline composes the step's release into its own), so "
            "that the budget is charged with the step's epsilon before the table is read "
            "(and once); set the same BudgetAccountant on both")
