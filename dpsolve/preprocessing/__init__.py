"""Preprocessing from public parameters, which learns nothing from the data: the way from a raw
table (a pandas DataFrame of numbers in their units, categories as strings, missing cells) to
the bounded rows a private estimator needs.

- :class:`PublicRangeScaler` maps each numeric column from a public range onto [-1, 1] (or
  [0, 1]), clipping what falls outside;
- :class:`PublicCategoryEncoder` one-hot encodes categorical columns from public category lists,
  an unknown value going to a declared bucket;
- :class:`PublicConstantImputer` fills missing cells with public constants;
- :func:`output_row_norm` states the row bound a ``ColumnTransformer``, ``Pipeline`` or
  ``FeatureUnion`` of them guarantees, the ``row_norm`` of the estimator downstream;
- :func:`private_pipeline` builds the pipeline with that bound set as the estimator's
  ``row_norm``;
- :class:`Schema` reads a table's public schema from a TOML file and builds its preprocessing
  (``dpsolve solve --schema``).

The public transformers are stateless in scikit-learn's sense (``requires_fit`` False; ``fit`` records only the
table's column count and names), so a pipeline of them followed by a dpsolve estimator is
private end to end and :class:`~dpsolve.private_selection.PrivateGridSearch` accepts it; see
docs/preprocessing.md. Needs scikit-learn >= 1.6 (``pip install "dpsolve[estimators]"``);
pandas is optional.

For a column with no public range, :class:`PrivateRangeScaler` releases one privately (two
quantiles inside a coarse public outer range) at a declared epsilon; :func:`private_pipeline`
then composes its cost into the estimator's (:class:`PrivatePipeline`);
:class:`PrivateStandardScaler` releases noisy means and standard deviations instead.
:class:`PrivateCategoryEncoder` keeps the public candidate categories whose private frequency
clears a public threshold, sending the rare ones to the unknown bucket.
"""
from .category_encoder import PublicCategoryEncoder
from .imputer import PublicConstantImputer
from .pipeline import PrivatePipeline, private_pipeline
from .private_category_encoder import PrivateCategoryEncoder
from .private_range_scaler import PrivateRangeScaler
from .private_standard_scaler import PrivateStandardScaler
from .range_scaler import PublicRangeScaler
from .row_bounds import output_row_norm
from .schema import Schema

__all__ = ["PrivateCategoryEncoder", "PrivatePipeline", "PrivateRangeScaler",
           "PrivateStandardScaler", "PublicCategoryEncoder", "PublicConstantImputer",
           "PublicRangeScaler", "Schema", "output_row_norm", "private_pipeline"]
