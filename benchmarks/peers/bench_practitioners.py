"""What a data scientist measures, at the estimators' defaults: dpsolve's ``DPLogisticRegression``
and ``DPLinearRegression`` against diffprivlib's ``LogisticRegression`` and ``LinearRegression``
and non-private scikit-learn, on held-out data (AUC, balanced accuracy, log-loss; R^2).

This module holds the datasets, the three methods and the metrics that ``docs/practitioners.md``
is generated from (``docs/scripts/practitioners_page.py``), and asv ``track_*`` benchmarks of a
small slice of it: scikit-learn's breast-cancer data, a synthetic problem with 3% positives
(p = 50) and scikit-learn's diabetes data (regression), at epsilon = 1, three seeds.

Every method gets the same public information and nothing else is set (the defaults):

* each feature mapped to [0, 1] by a public range (``Dataset.low``, ``Dataset.high``; values
  outside it are clipped), so a row has norm at most ``B = sqrt(p)``: ``row_norm=B`` for
  dpsolve, ``data_norm=B`` for diffprivlib's logistic regression, ``bounds_X=(0, 1)`` for its
  linear regression;
* binary labels in {0, 1}: ``classes=[0, 1]`` for dpsolve (diffprivlib takes no classes);
* regression labels mapped from a public range to [-1, 1]: ``label_bound=1`` for dpsolve,
  ``bounds_y=(-1, 1)`` for diffprivlib (R^2 does not change under the map);
* each seed draws a 75/25 train/test split (stratified for binary labels) and the noise.

The real datasets also carry their raw tables (``Dataset.columns``, ``raw_frame``), fitted at the
same total epsilon by three pipelines (``RAW_METHODS``, ``run_raw``): dpsolve's
``private_pipeline`` with ``PublicRangeScaler`` on the same public ranges (and
``PublicCategoryEncoder`` for the columns a codebook lists as categories), the row bound taken from
the pipeline; the same with ``PrivateRangeScaler``, given only a coarse outer range per column
(``outer_range``: an order of magnitude) at ``SCALER_SHARE`` of epsilon; and diffprivlib's own
``StandardScaler`` on the public ranges at that share, then its model
(``DiffprivlibPipeline``).

diffprivlib 0.6.6 does not import with scikit-learn >= 1.8; without it its benchmarks are skipped
(``setup`` raises NotImplementedError, asv's skip signal). Run directly
(``python -m benchmarks.peers.bench_practitioners``) to print the slice.
"""
import dataclasses
import math
import re
import time
import warnings

import numpy as np

try:
    import diffprivlib.models
except ImportError:          # the optional peers / practitioners extra is not installed
    diffprivlib = None

METHODS = ("dpsolve", "diffprivlib", "scikit-learn")


@dataclasses.dataclass
class Dataset:
    """A task with its public ranges. ``y`` is 0/1 (``kind="binary"``) or real
    (``kind="regression"``, with the public label range ``y_range``)."""

    name: str
    kind: str
    X: np.ndarray
    y: np.ndarray
    low: np.ndarray
    high: np.ndarray
    source: str
    ranges: str
    y_range: tuple = None
    #: The raw table's column names (the real datasets; None for the synthetic ones).
    columns: tuple = None
    #: ``{column: public category list}`` for the columns the documentation codes as categories.
    categories: dict = None

    @property
    def n(self):
        return self.X.shape[0]

    @property
    def p(self):
        return self.X.shape[1]

    def features(self):
        """Each feature mapped from its public range to [0, 1] (clipped)."""
        return np.clip((self.X - self.low) / (self.high - self.low), 0.0, 1.0)

    def labels(self):
        """0/1 labels, or real labels mapped from the public range to [-1, 1] (clipped)."""
        if self.kind == "binary":
            return self.y.astype(np.int64)
        lo, hi = self.y_range
        return np.clip((2.0 * self.y - lo - hi) / (hi - lo), -1.0, 1.0)


# -- datasets ----------------------------------------------------------------------------------
def _descr_ranges(descr, count):
    """The Min and Max columns of a scikit-learn DESCR's "Summary Statistics" table."""
    rows = re.findall(r"^([A-Za-z][A-Za-z0-9 ()/]+?):\s+([0-9.]+)\s+([0-9.]+)\s+[0-9.]+\s+"
                      r"[0-9.]+\s*$", descr, re.M)
    if len(rows) != count:
        raise RuntimeError(f"expected {count} documented feature ranges, found {len(rows)}")
    return np.array([float(r[1]) for r in rows]), np.array([float(r[2]) for r in rows])


def breast_cancer():
    from sklearn.datasets import load_breast_cancer

    import dpsolve
    data = load_breast_cancer()
    X, y = data.data, data.target
    low, high = dpsolve.datasets.breast_cancer_ranges()
    return Dataset("breast cancer", "binary", X, (y == 0).astype(int), low, high,
                   "scikit-learn `load_breast_cancer` (569 × 30); positive = malignant (37%)",
                   "the min and max each feature's documentation lists (DESCR)",
                   columns=tuple(map(str, data.feature_names)))


def wine():
    from sklearn.datasets import load_wine
    data = load_wine()
    low, high = _descr_ranges(data.DESCR, data.data.shape[1])
    return Dataset("wine (class 0 vs rest)", "binary", data.data, (data.target == 0).astype(int),
                   low, high, "scikit-learn `load_wine` (178 × 13); positive = cultivar 0 (33%)",
                   "the min and max each feature's documentation lists (DESCR)",
                   columns=tuple(map(str, data.feature_names)))


def digits():
    from sklearn.datasets import load_digits
    data = load_digits()
    X, y = data.data, data.target
    p = X.shape[1]
    return Dataset("digits (0 vs rest)", "binary", X, (y == 0).astype(int), np.zeros(p),
                   np.full(p, 16.0), "scikit-learn `load_digits` (1,797 × 64); positive = "
                   "the digit 0 (10%)", "[0, 16] for every pixel (the documented pixel range)",
                   columns=tuple(map(str, data.feature_names)))


#: Domain ranges for the diabetes data's raw features (``load_diabetes(scaled=False)``), set
#: from what the measurements can be in adult patients, not from the records.
DIABETES_RANGES = {"age": (18, 90), "sex": (1, 2), "bmi": (15, 50), "bp": (50, 150),
                   "s1 (total cholesterol)": (80, 350), "s2 (LDL)": (30, 260),
                   "s3 (HDL)": (15, 110), "s4 (TC/HDL)": (1, 10), "s5 (log triglycerides)": (3, 7),
                   "s6 (glucose)": (50, 150)}
DIABETES_Y = (0.0, 400.0)


def diabetes():
    from sklearn.datasets import load_diabetes
    data = load_diabetes(scaled=False)
    X, y = data.data, data.target
    low, high = (np.array(v, dtype=float) for v in zip(*DIABETES_RANGES.values()))
    return Dataset("diabetes", "regression", X, y, low, high,
                   "scikit-learn `load_diabetes(scaled=False)` (442 × 10); y = disease "
                   "progression after a year",
                   "domain ranges: " + ", ".join(f"{k} {a}–{b}" for k, (a, b)
                                                 in DIABETES_RANGES.items())
                   + f"; y in [{DIABETES_Y[0]:g}, {DIABETES_Y[1]:g}] (a positive score; "
                   "Efron et al. 2004 report 25–346)", y_range=DIABETES_Y,
                   columns=tuple(map(str, data.feature_names)))


#: statsmodels' ``fair`` data (Fair 1978): the survey's documented codes.
FAIR_RANGES = {"rate_marriage": (1, 5), "age": (17.5, 42), "yrs_married": (0.5, 23),
               "children": (0, 5.5), "religious": (1, 4), "educ": (9, 20),
               "occupation": (1, 6), "occupation_husb": (1, 6)}
#: The two occupations are codes of a list (student, farming or semi-skilled, white collar,
#: teacher or nurse, manager, professional), not a scale: the raw-table variants one-hot them.
FAIR_CATEGORIES = {"occupation": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                   "occupation_husb": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]}


def fair():
    from statsmodels.datasets import fair as _fair
    data = _fair.load_pandas().data
    X = data[list(FAIR_RANGES)].to_numpy(float)
    low, high = (np.array(v, dtype=float) for v in zip(*FAIR_RANGES.values()))
    return Dataset("affairs (statsmodels fair)", "binary", X,
                   (data["affairs"] > 0).to_numpy().astype(int), low, high,
                   "statsmodels `datasets.fair` (6,366 × 8; Fair 1978 survey); positive = any "
                   "time in affairs (32%)",
                   "the survey's documented codes: " + ", ".join(
                       f"{k} {a:g}–{b:g}" for k, (a, b) in FAIR_RANGES.items()),
                   columns=tuple(FAIR_RANGES), categories=FAIR_CATEGORIES)


#: statsmodels' ``anes96`` (1996 American National Election Study): documented scales, and for
#: age and log population domain ranges (18–100 years; 0.1 to 10 million residents, in 1000s).
ANES_RANGES = {"TVnews": (0, 7), "selfLR": (1, 7), "ClinLR": (1, 7), "DoleLR": (1, 7),
               "PID": (0, 6), "age": (18, 100), "educ": (1, 7), "income": (1, 24),
               "logpopul": (math.log(0.1), math.log(10_000))}


def anes96():
    from statsmodels.datasets import anes96 as _anes
    data = _anes.load_pandas().data
    X = data[list(ANES_RANGES)].to_numpy(float)
    low, high = (np.array(v, dtype=float) for v in zip(*ANES_RANGES.values()))
    return Dataset("vote (statsmodels anes96)", "binary", X, data["vote"].to_numpy().astype(int),
                   low, high, "statsmodels `datasets.anes96` (944 × 9; 1996 US election study); "
                   "positive = voted Dole (40%)",
                   "the documented scales (TVnews 0–7 days, the three left-right scales 1–7, PID "
                   "0–6, educ 1–7, income 1–24) and domain ranges for age (18–100) and log "
                   "population (log 0.1 to log 10⁴, in 1000s)", columns=tuple(ANES_RANGES))


#: statsmodels' ``star98`` (California schools, 1998): percentages in [0, 100]; domain ranges
#: for teachers' mean experience (years), mean salary ($1000s), spending per pupil ($1000s) and
#: the pupil-teacher ratio.
STAR98_RANGES = {"LOWINC": (0, 100), "PERASIAN": (0, 100), "PERBLACK": (0, 100),
                 "PERHISP": (0, 100), "PERMINTE": (0, 100), "AVYRSEXP": (0, 40),
                 "AVSALK": (20, 120), "PERSPENK": (0, 20), "PTRATIO": (5, 50), "PCTAF": (0, 100),
                 "PCTCHRT": (0, 100), "PCTYRRND": (0, 100)}


def star98():
    from statsmodels.datasets import star98 as _star
    data = _star.load_pandas().data
    X = data[list(STAR98_RANGES)].to_numpy(float)
    y = (data["NABOVE"] / (data["NABOVE"] + data["NBELOW"])).to_numpy(float)
    low, high = (np.array(v, dtype=float) for v in zip(*STAR98_RANGES.values()))
    return Dataset("maths scores (statsmodels star98)", "regression", X, y, low, high,
                   "statsmodels `datasets.star98` (303 × 12 main effects); y = share of a "
                   "school's pupils above the national median in maths",
                   "percentages 0–100; domain ranges AVYRSEXP 0–40 years, AVSALK 20–120 "
                   "($1000s), PERSPENK 0–20 ($1000s), PTRATIO 5–50; y in [0, 1] (a share)",
                   y_range=(0.0, 1.0), columns=tuple(STAR98_RANGES))


def synthetic(positives, p, n=8_000, public=2_000, seed=0):
    """``make_classification`` with the given share of positives (no label noise): n rows to
    learn and test on, and a disjoint ``public`` rows whose per-feature min and max are the
    public ranges (a public sample from the same population)."""
    from sklearn.datasets import make_classification
    informative = min(10, max(5, p // 5))
    X, y = make_classification(n + public, p, n_informative=informative, n_redundant=2,
                               weights=[1.0 - positives], flip_y=0.0, random_state=seed)
    low, high = X[:public].min(axis=0), X[:public].max(axis=0)
    return Dataset(f"synthetic {positives:.0%} positives, p = {p}", "binary", X[public:],
                   y[public:], low, high,
                   f"`make_classification({n + public}, {p}, n_informative={informative}, "
                   f"n_redundant=2, weights=[{1 - positives:g}], flip_y=0, random_state={seed})`, "
                   f"first {public:,} rows dropped",
                   f"the min and max of the {public:,} dropped rows (a disjoint public split)")


SYNTHETIC = [(share, p) for share in (0.01, 0.03, 0.10) for p in (10, 50, 200)]


def synthetic_counts(p=14, n=10_000, public=2_000, seed=0):
    """A count regression: features uniform in [0, 1], y Poisson with a log-linear mean (about
    a hundred on average), n rows to learn and test on, and a disjoint ``public`` rows whose
    feature ranges and largest count (times 1.5) are the public ranges."""
    rng = np.random.default_rng(seed)
    X = rng.random((n + public, p))
    w = rng.normal(0.0, 1.0, p)
    y = rng.poisson(np.exp(4.0 + (X - 0.5) @ w * 0.8)).astype(float)
    low, high = X[:public].min(axis=0), X[:public].max(axis=0)
    top = 1.5 * float(y[:public].max())
    return Dataset(f"synthetic counts, p = {p}", "regression", X[public:], y[public:], low, high,
                   f"features uniform in [0, 1], y ~ Poisson(exp(4 + 0.8 <w, x - 1/2>)), w ~ "
                   f"N(0, I), {n + public:,} rows (numpy seed {seed}), first {public:,} dropped",
                   f"the features' min and max over the {public:,} dropped rows; y in "
                   f"[0, {top:g}] (1.5 times their largest count)", y_range=(0.0, top))


def all_datasets(statsmodels=True):
    """Every dataset of the page, in its order: scikit-learn's bundled data, statsmodels'
    (when installed and ``statsmodels``), the synthetic grid."""
    out = [breast_cancer(), wine(), digits()]
    if statsmodels:
        try:
            out += [fair(), anes96()]
        except ImportError:
            pass
    out += [synthetic(share, p) for share, p in SYNTHETIC]
    out.append(diabetes())
    out.append(synthetic_counts())
    if statsmodels:
        try:
            out.append(star98())
        except ImportError:
            pass
    return out


# -- methods and metrics -----------------------------------------------------------------------
def make_model(method, kind, epsilon, p, seed):
    """The method's estimator at its defaults, given only the public bounds."""
    bound = math.sqrt(p)
    if method == "scikit-learn":
        from sklearn.linear_model import LinearRegression, LogisticRegression
        return LogisticRegression() if kind == "binary" else LinearRegression()
    if method == "dpsolve":
        from dpsolve.estimators import DPLinearRegression, DPLogisticRegression
        if kind == "binary":
            return DPLogisticRegression(epsilon=epsilon, row_norm=bound, classes=[0, 1],
                                        random_state=seed)
        return DPLinearRegression(epsilon=epsilon, row_norm=bound, label_bound=1.0,
                                  random_state=seed)
    if method == "diffprivlib":
        if diffprivlib is None:
            raise ImportError("diffprivlib is not installed")
        if kind == "binary":
            return diffprivlib.models.LogisticRegression(epsilon=epsilon, data_norm=bound,
                                                         random_state=seed)
        return diffprivlib.models.LinearRegression(
            epsilon=epsilon, bounds_X=(np.zeros(p), np.ones(p)), bounds_y=(-1.0, 1.0),
            random_state=seed)
    raise ValueError(method)


def split(dataset, seed):
    """The seed's 75/25 split of the mapped features and labels (stratified if binary)."""
    from sklearn.model_selection import train_test_split
    X, y = dataset.features(), dataset.labels()
    return train_test_split(X, y, test_size=0.25, random_state=seed,
                            stratify=y if dataset.kind == "binary" else None)


def scores(kind, model, X, y):
    """``{metric: value}`` on held-out rows."""
    from sklearn.metrics import balanced_accuracy_score, r2_score, roc_auc_score
    if kind == "regression":
        return {"r2": float(r2_score(y, model.predict(X)))}
    proba = np.asarray(model.predict_proba(X))[:, 1]
    proba = np.where(np.isfinite(proba), proba, 0.5)
    clipped = np.clip(proba, 1e-15, 1 - 1e-15)
    return {"auc": float(roc_auc_score(y, proba)),
            "balanced_accuracy": float(balanced_accuracy_score(y, (proba > 0.5).astype(int))),
            "log_loss": float(-np.mean(y * np.log(clipped) + (1 - y) * np.log1p(-clipped)))}


def run(method, dataset, epsilon, seed, data=None):
    """One fit and its held-out scores, with the fit's time (s)."""
    Xtr, Xte, ytr, yte = split(dataset, seed) if data is None else data
    model = make_model(method, dataset.kind, epsilon, dataset.p, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        model.fit(Xtr, ytr)
        seconds = time.perf_counter() - start
        out = scores(dataset.kind, model, Xte, yte)
    out["seconds"] = seconds
    return out


def mean_scores(method, dataset, epsilon, seeds):
    rows = [run(method, dataset, epsilon, seed) for seed in seeds]
    return {key: float(np.mean([r[key] for r in rows])) for key in rows[0]}


# -- raw tables --------------------------------------------------------------------------------
#: The variants fitted on a dataset's raw table (its columns in their own units, as a DataFrame).
RAW_METHODS = ("public-range transformers", "private ranges", "diffprivlib pipeline")
#: The share of the total epsilon spent on the ranges (``PrivateRangeScaler``) or the means and
#: variances (diffprivlib's ``StandardScaler``); the model gets the rest.
SCALER_SHARE = 0.2


def outer_range(low, high):
    """A coarse public range around a documented one: [0, the power of ten at or above the
    documented maximum] for a non-negative column, else the symmetric power of ten around it
    (an order of magnitude, not a value read off a table)."""
    top = 10.0 ** math.ceil(math.log10(max(abs(low), abs(high))))
    return (0.0, top) if low >= 0 else (-top, top)


def raw_frame(dataset):
    """The dataset's features in their own units, as a DataFrame with its column names."""
    import pandas as pd
    return pd.DataFrame(dataset.X, columns=list(dataset.columns))


def numeric_columns(dataset):
    """The raw table's columns that the documentation does not code as categories, by index."""
    categories = dataset.categories or {}
    return [j for j, c in enumerate(dataset.columns) if c not in categories]


def raw_columns(dataset, scaler, encoder=None):
    """A ColumnTransformer of ``scaler`` on the numeric columns and, for a dataset with
    categorical columns, ``encoder`` on them (by default ``PublicCategoryEncoder`` on the
    codebook's lists)."""
    from sklearn.compose import ColumnTransformer

    from dpsolve.preprocessing import PublicCategoryEncoder
    categories = dataset.categories or {}
    parts = [("numbers", scaler, [dataset.columns[j] for j in numeric_columns(dataset)])]
    if categories:
        if encoder is None:
            encoder = PublicCategoryEncoder(list(categories.values()))
        parts.append(("categories", encoder, list(categories)))
    return ColumnTransformer(parts)


def raw_preprocess(dataset, private_epsilon=None, seed=None):
    """A ColumnTransformer of the public-range transformers: ``PublicRangeScaler`` on the
    documented ranges (or, given ``private_epsilon``, ``PrivateRangeScaler`` on the coarse outer
    ranges at that epsilon) for the numeric columns, ``PublicCategoryEncoder`` on the codebook's
    lists for the categorical ones. The scalers map onto [0, 1], as the page's hand-mapped
    features do (``feature_range=(0, 1)`` given: the scalers' default is (-1, 1))."""
    from dpsolve.preprocessing import PrivateRangeScaler, PublicRangeScaler
    numeric = numeric_columns(dataset)
    if private_epsilon is None:
        scaler = PublicRangeScaler([(dataset.low[j], dataset.high[j]) for j in numeric],
                                   feature_range=(0, 1))
    else:
        scaler = PrivateRangeScaler([outer_range(dataset.low[j], dataset.high[j])
                                     for j in numeric], epsilon=private_epsilon,
                                    feature_range=(0, 1), random_state=seed)
    return raw_columns(dataset, scaler)


class DiffprivlibPipeline:
    """diffprivlib's own pipeline on a raw table: each column clipped to its public range (a
    public map), diffprivlib's ``StandardScaler(bounds=ranges)`` at ``SCALER_SHARE`` of epsilon,
    then its model at the rest, given the bounds the scaled columns obey: the public ranges put
    through the released means and scales (a post-processing of the scaler's release)."""

    def __init__(self, dataset, epsilon, seed):
        self.dataset, self.epsilon, self.seed = dataset, epsilon, seed

    def _scaled(self, X):
        d = self.dataset
        return self.scaler.transform(np.clip(np.asarray(X, dtype=float), d.low, d.high))

    def fit(self, X, y):
        d = self.dataset
        self.scaler = diffprivlib.models.StandardScaler(
            epsilon=SCALER_SHARE * self.epsilon, bounds=(d.low, d.high), random_state=self.seed)
        self.scaler.fit(np.clip(np.asarray(X, dtype=float), d.low, d.high))
        ends = self.scaler.transform(np.vstack([d.low, d.high]))
        rest = (1.0 - SCALER_SHARE) * self.epsilon
        if d.kind == "binary":
            norm = float(np.linalg.norm(np.abs(ends).max(axis=0)))
            self.model = diffprivlib.models.LogisticRegression(epsilon=rest, data_norm=norm,
                                                               random_state=self.seed)
        else:
            self.model = diffprivlib.models.LinearRegression(
                epsilon=rest, bounds_X=(ends.min(axis=0), ends.max(axis=0)),
                bounds_y=(-1.0, 1.0), random_state=self.seed)
        self.model.fit(self._scaled(X), y)
        return self

    def predict(self, X):
        return self.model.predict(self._scaled(X))

    def predict_proba(self, X):
        return self.model.predict_proba(self._scaled(X))


def raw_estimator(dataset, epsilon, seed):
    """dpsolve's estimator at its defaults for a raw-table pipeline, at ``epsilon``: given only
    the labels' public set or bound (the row bound is the pipeline's)."""
    from dpsolve.estimators import DPLinearRegression, DPLogisticRegression
    if dataset.kind == "binary":
        return DPLogisticRegression(epsilon=epsilon, classes=[0, 1], random_state=seed)
    return DPLinearRegression(epsilon=epsilon, label_bound=1.0, random_state=seed)


def make_raw_model(method, dataset, epsilon, seed):
    """The raw-table variant at total epsilon ``epsilon``, given only the public ranges (or, for
    ``"private ranges"``, the coarse outer ranges)."""
    from dpsolve.preprocessing import private_pipeline
    if method == "diffprivlib pipeline":
        if diffprivlib is None:
            raise ImportError("diffprivlib is not installed")
        return DiffprivlibPipeline(dataset, epsilon, seed)
    if method == "public-range transformers":
        preprocess, rest = raw_preprocess(dataset), epsilon
    elif method == "private ranges":
        preprocess = raw_preprocess(dataset, SCALER_SHARE * epsilon, seed)
        rest = (1.0 - SCALER_SHARE) * epsilon
    else:
        raise ValueError(method)
    return private_pipeline(preprocess, raw_estimator(dataset, rest, seed))


def fit_raw(model, dataset, seed, frame=None, epsilon=None):
    """Fit ``model`` on the seed's training rows of the raw table (the rows ``split`` draws) and
    score it on the held-out rows, with the fit's time (s); given ``epsilon``, check that the
    fitted pipeline's total (its estimator's ``epsilon_``) is ``epsilon``."""
    from sklearn.model_selection import train_test_split
    frame = raw_frame(dataset) if frame is None else frame
    y = dataset.labels()
    train, test = train_test_split(np.arange(dataset.n), test_size=0.25, random_state=seed,
                                   stratify=y if dataset.kind == "binary" else None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        model.fit(frame.iloc[train], y[train])
        seconds = time.perf_counter() - start
        out = scores(dataset.kind, model, frame.iloc[test], y[test])
    if epsilon is not None and not math.isclose(model[-1].epsilon_, epsilon, rel_tol=1e-12):
        raise RuntimeError(f"total epsilon {model[-1].epsilon_}, not {epsilon}")
    out["seconds"] = seconds
    return out


def run_raw(method, dataset, epsilon, seed, frame=None):
    """One raw-table fit on the seed's split and its held-out scores; checks that the model's
    total epsilon is ``epsilon``."""
    model = make_raw_model(method, dataset, epsilon, seed)
    return fit_raw(model, dataset, seed, frame,
                   None if method == "diffprivlib pipeline" else epsilon)


# -- asv ---------------------------------------------------------------------------------------
EPSILON = 1.0
SEEDS = (0, 1, 2)
CLASSIFICATION = ["breast cancer", "synthetic 3% positives, p = 50"]


def _classification(name):
    return breast_cancer() if name == "breast cancer" else synthetic(0.03, 50)


class _Classification:
    """Binary tasks at epsilon = 1: mean over three seeds (split and noise)."""

    params = CLASSIFICATION
    param_names = ["dataset"]
    method = None
    timeout = 300

    def setup(self, dataset):
        if self.method == "diffprivlib" and diffprivlib is None:
            raise NotImplementedError("needs diffprivlib: pip install '.[practitioners]'")
        self.results = mean_scores(self.method, _classification(dataset), EPSILON, SEEDS)

    def track_auc(self, dataset):
        return self.results["auc"]

    track_auc.unit = "test AUC, mean of 3 seeds"

    def track_balanced_accuracy(self, dataset):
        return self.results["balanced_accuracy"]

    track_balanced_accuracy.unit = "test balanced accuracy, mean of 3 seeds"

    def track_log_loss(self, dataset):
        return self.results["log_loss"]

    track_log_loss.unit = "test log-loss, mean of 3 seeds"


class _Regression:
    """scikit-learn's diabetes data at epsilon = 1: mean test R^2 over three seeds."""

    method = None
    timeout = 300

    def setup(self):
        if self.method == "diffprivlib" and diffprivlib is None:
            raise NotImplementedError("needs diffprivlib: pip install '.[practitioners]'")
        self.results = mean_scores(self.method, diabetes(), EPSILON, SEEDS)

    def track_r2(self):
        return self.results["r2"]

    track_r2.unit = "test R^2, mean of 3 seeds"


class DpsolveDefaultsClassification(_Classification):
    method = "dpsolve"


class DiffprivlibDefaultsClassification(_Classification):
    method = "diffprivlib"


class DpsolveDefaultsRegression(_Regression):
    method = "dpsolve"


class DiffprivlibDefaultsRegression(_Regression):
    method = "diffprivlib"


class ScikitLearnClassification(_Classification):
    """The non-private baseline the private tracks are read against (same splits)."""
    method = "scikit-learn"


class ScikitLearnRegression(_Regression):
    """The non-private baseline the private tracks are read against (same splits)."""
    method = "scikit-learn"


def main():
    print(f"epsilon = {EPSILON}, seeds {SEEDS}")
    for method in METHODS:
        if method == "diffprivlib" and diffprivlib is None:
            print("diffprivlib: not installed")
            continue
        for name in CLASSIFICATION:
            r = mean_scores(method, _classification(name), EPSILON, SEEDS)
            print(f"{method:12} {name:32} AUC {r['auc']:.3f}  balanced accuracy "
                  f"{r['balanced_accuracy']:.3f}  log-loss {r['log_loss']:.3f}")
        r = mean_scores(method, diabetes(), EPSILON, SEEDS)
        print(f"{method:12} {'diabetes':32} R^2 {r['r2']:.3f}")


if __name__ == "__main__":
    main()
