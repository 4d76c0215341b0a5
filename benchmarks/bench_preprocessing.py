"""Raw tables through ``dpsolve.preprocessing`` (docs/preprocessing.md): what the pipeline costs
in time beside the private fit it feeds, on a synthetic table of three amounts (10% missing) and
a plan as strings (one value not in the public list, some missing).

* ``RawTablePipeline``: ``make_pipeline(ColumnTransformer(imputer + PublicRangeScaler,
  PublicCategoryEncoder), DPLogisticRegression)`` fitted on the DataFrame, against the same
  model fitted on the table already mapped (the preprocessing's share of the pipeline's time,
  with the estimator's look for the row bound and private steps of its Pipeline), and against
  scikit-learn's non-private pipeline (``SimpleImputer`` + ``MinMaxScaler``, ``OneHotEncoder``,
  ``LogisticRegression``) for scale.
* ``PrivateSteps``: the private transformers' fits (``PrivateRangeScaler``'s 2p quantiles,
  ``PrivateStandardScaler``'s sums, ``PrivateCategoryEncoder``'s counts) against
  ``PublicRangeScaler``'s ``fit_transform`` of the same columns.

Run directly (``python -m benchmarks.bench_preprocessing``) to print the measurements.
"""
import warnings

import numpy as np

from .common import best_time

PLANS = ["basic", "plus", "premium"]


def _table(n, seed=0):
    import pandas as pd
    rng = np.random.default_rng(seed)
    table = pd.DataFrame({"income": rng.lognormal(10.5, 0.6, n),
                          "age": rng.integers(18, 90, n).astype(float),
                          "balance": rng.gamma(2.0, 1500.0, n),
                          "plan": rng.choice(PLANS + ["legacy", None], n)})
    for column in ("income", "age", "balance"):
        table.loc[rng.random(n) < 0.1, column] = np.nan
    y = (rng.random(n) < 1 / (1 + np.exp(3 - table["age"].fillna(45).to_numpy() / 15)))
    return table, y.astype(int)


def _preprocess():
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from dpsolve.preprocessing import (PublicCategoryEncoder, PublicConstantImputer,
                                       PublicRangeScaler)
    numbers = make_pipeline(PublicConstantImputer(fill_value=[40_000.0, 45.0, 0.0]),
                            PublicRangeScaler([(0.0, 250_000.0), (18.0, 100.0),
                                               (0.0, 20_000.0)]))
    return ColumnTransformer([("numbers", numbers, ["income", "age", "balance"]),
                              ("plan", PublicCategoryEncoder([PLANS]), ["plan"])])


def _model():
    from dpsolve.estimators import DPLogisticRegression
    return DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0)


class RawTablePipeline:
    """The public-range pipeline on a DataFrame against the fit on the mapped table."""

    params = [10_000, 100_000]
    param_names = ["n"]
    timeout = 600

    def setup(self, n):
        self.table, self.y = _table(n)
        self.mapped = _preprocess().fit_transform(self.table)

    def _pipeline_fit(self):
        from sklearn.pipeline import make_pipeline
        make_pipeline(_preprocess(), _model()).fit(self.table, self.y)

    def _mapped_fit(self):
        # the bound the pipeline states, given: the same model (the tests check it)
        _model().set_params(row_norm=2.0).fit(self.mapped, self.y)

    def _sklearn_fit(self):
        from sklearn.compose import ColumnTransformer
        from sklearn.impute import SimpleImputer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import MinMaxScaler, OneHotEncoder
        numbers = make_pipeline(SimpleImputer(strategy="constant", fill_value=0.0),
                                MinMaxScaler())
        plan = make_pipeline(SimpleImputer(strategy="constant", fill_value="missing"),
                             OneHotEncoder(handle_unknown="ignore"))
        make_pipeline(ColumnTransformer([("numbers", numbers, ["income", "age", "balance"]),
                                         ("plan", plan, ["plan"])]),
                      LogisticRegression()).fit(self.table, self.y)

    def time_pipeline_fit(self, n):
        self._pipeline_fit()

    def track_pipeline_over_mapped_fit(self, n):
        return best_time(self._pipeline_fit, repeat=3) / best_time(self._mapped_fit, repeat=3)

    track_pipeline_over_mapped_fit.unit = "ratio (the fit on the mapped table = 1)"

    def track_pipeline_over_sklearn(self, n):
        return best_time(self._pipeline_fit, repeat=3) / best_time(self._sklearn_fit, repeat=3)

    track_pipeline_over_sklearn.unit = "ratio (scikit-learn's non-private pipeline = 1)"


class PrivateSteps:
    """Each private transformer's fit against the public scaler's fit_transform."""

    params = [["PrivateRangeScaler", "PrivateStandardScaler", "PrivateCategoryEncoder"],
              [10_000, 100_000]]
    param_names = ["transformer", "n"]
    timeout = 600

    def setup(self, transformer, n):
        table, _ = _table(n)
        if transformer == "PrivateCategoryEncoder":
            self.X = table[["plan"]].fillna("missing").to_numpy(dtype=object)
        else:
            self.X = table[["income", "age", "balance"]].fillna(0.0).to_numpy()
        self.name = transformer

    def _private_fit(self):
        from dpsolve import preprocessing
        outer = [(0.0, 1e6), (0.0, 150.0), (0.0, 1e6)]
        if self.name == "PrivateRangeScaler":
            step = preprocessing.PrivateRangeScaler(outer, epsilon=0.3, random_state=0)
        elif self.name == "PrivateStandardScaler":
            step = preprocessing.PrivateStandardScaler(outer, epsilon=0.3, random_state=0)
        else:
            step = preprocessing.PrivateCategoryEncoder([PLANS + ["legacy"]], epsilon=0.3,
                                                        random_state=0)
        step.fit_transform(self.X)

    def _public_fit(self):
        from dpsolve import preprocessing
        if self.name == "PrivateCategoryEncoder":
            step = preprocessing.PublicCategoryEncoder([PLANS + ["legacy"]])
        else:
            step = preprocessing.PublicRangeScaler([(0.0, 1e6), (0.0, 150.0), (0.0, 1e6)])
        step.fit_transform(self.X)

    def time_private_fit(self, transformer, n):
        self._private_fit()

    def track_private_over_public(self, transformer, n):
        return best_time(self._private_fit, repeat=3) / best_time(self._public_fit, repeat=3)

    track_private_over_public.unit = "ratio (the public transformer's fit_transform = 1)"


def main():
    warnings.simplefilter("ignore")
    for n in RawTablePipeline.params:
        bench = RawTablePipeline()
        bench.setup(n)
        print(f"n = {n}: pipeline / fit on the mapped table "
              f"{bench.track_pipeline_over_mapped_fit(n):.2f}, pipeline / scikit-learn's "
              f"{bench.track_pipeline_over_sklearn(n):.2f}")
    for transformer in PrivateSteps.params[0]:
        for n in PrivateSteps.params[1]:
            bench = PrivateSteps()
            bench.setup(transformer, n)
            print(f"{transformer}, n = {n}: private fit / public fit_transform "
                  f"{bench.track_private_over_public(transformer, n):.2f}")


if __name__ == "__main__":
    main()
