"""What the private transformers share: the charge of their release, and the release handed to
an estimator downstream as a private bound."""
import dp_accounting
import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..privacy.budget import ESTIMATE_NEIGHBOURS, charge
from ..privacy.quantile import PrivateEstimate
from ._enclosing_pipeline import check_before_spending
from ._tables import input_names


class SpendsPrivacy:
    """Mixin of a transformer whose ``fit`` is a private release: ``epsilon_`` and
    ``dp_event_`` once fitted, and ``row_norm_bound(norm)`` a public bound on its output rows.

    A private estimator fitted after such a step by a scikit-learn ``Pipeline`` (or
    :class:`~dpsolve.preprocessing.PrivatePipeline`) finds it by ``spends_privacy`` and composes
    its cost into the estimator's.
    """

    spends_privacy = True

    def _charged(self, events):
        """The ``ComposedDpEvent`` of ``events``, charged once to ``self.accountant`` (under
        replace-one neighbours, as every private estimate is), before any value is read; first
        the checks of the estimator this step feeds in the Pipeline being fitted, if any."""
        check_before_spending(self)
        event = dp_accounting.ComposedDpEvent(list(events))
        charge(self.accountant, event, neighbours=ESTIMATE_NEIGHBOURS,
               label=type(self).__name__)
        return event

    def row_norm_estimate(self, norm="l2"):
        """The fitted release as a bound for an estimator downstream: a
        :class:`~dpsolve.privacy.PrivateEstimate` whose value is ``row_norm_bound(norm)`` and
        whose cost is the fit's (``epsilon_``, ``dp_event_``).

        Given as an estimator's ``row_norm`` on the transformed table (also inside
        :class:`~dpsolve.private_selection.PrivateGridSearch`), the transformer's cost is
        composed into the model's ``epsilon_`` and ``dp_event_``, once, as a private bound's
        is.

        Parameters
        ----------
        norm : {"l2", "linf"}, default="l2"
            As in ``row_norm_bound``.

        Returns
        -------
        PrivateEstimate
            The bound, ``epsilon_`` and ``dp_event_``.
        """
        check_is_fitted(self, "dp_event_")
        return PrivateEstimate(value=self.row_norm_bound(norm), epsilon=self.epsilon_,
                               dp_event=self.dp_event_)


class KeepsColumnNames:
    """Mixin of a fitted transformer whose output columns are its input columns."""

    def get_feature_names_out(self, input_features=None):
        """The output columns' names: the input columns' names.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            The input columns' names; by default the fitted ``feature_names_in_``.

        Returns
        -------
        feature_names_out : ndarray of str
            One name per output column.
        """
        check_is_fitted(self, "dp_event_")
        return np.asarray(input_names(self, input_features, self.n_features_in_), dtype=object)
