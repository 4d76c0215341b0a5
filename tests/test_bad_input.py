"""The bad-input catalogue (docs/bad_input.md), walked case by case.

Every case must raise the stated exception before any work starts, with a message that names the
parameter (the regular expression below). ``test_catalogue_matches_the_docs`` keeps the docs table
and this list the same.
"""
import math
import re
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse

import dpsolve
from dpsolve.chunked import RowChunks
from dpsolve.losses import make_loss

#: A loss object for the reductions' argument checks (its kernel is never reached).
_LOGISTIC = make_loss("logistic")

N, P = 60, 4
_rng = np.random.default_rng(0)
X = _rng.normal(size=(N, P))
X /= np.linalg.norm(X, axis=1, keepdims=True) * 1.01
Y = np.where(X[:, 0] > 0, 1.0, -1.0)


def problem(loss="logistic", **settings):
    settings = {"radius": 1.0, "reg": 0.05, **settings}
    return dpsolve.Problem(X, Y if loss != "squared" else 0.5 * Y, loss, **settings)


def parties(prob):
    return dpsolve.Parties.from_sizes(prob, [30, 30])


def with_parties(solver, *args, **kwargs):
    """``solver(problem, parties, ...)`` with parties built on that very problem."""
    prob = problem()
    return solver(prob, parties(prob), *args, **kwargs)


# Each solver called with the privacy arguments under test, everything else valid and small.
SOLVERS = {
    "noisy_sgd": lambda e=0.5, d=1e-6, **k: dpsolve.noisy_sgd(
        problem(), e, d, **{"steps": 20, **k}),
    "clipped_gd": lambda e=0.5, d=1e-6, **k: dpsolve.clipped_gd(
        problem(), e, d, **{"steps": 3, **k}),
    "minibatch_sgd": lambda e=0.5, **k: dpsolve.minibatch_sgd(problem(), e, **k),
    "output_perturbation": lambda e=0.5, d=1e-6, **k: dpsolve.output_perturbation(
        problem(), e, d, **k),
    "objective_perturbation": lambda e=0.5, d=None, **k: dpsolve.objective_perturbation(
        problem(radius=None), e, d, **k),
    "multiparty_gd": lambda e=0.5, d=1e-6, **k: with_parties(
        dpsolve.multiparty_gd, e, d, **{"steps": 3, **k}),
    "aggregated_output_perturbation": lambda e=0.5, d=1e-6, **k: with_parties(
        dpsolve.aggregated_output_perturbation, e, d, **k),
    "joint_sgd": lambda e=0.5, d=1e-6, **k: with_parties(
        dpsolve.joint_sgd, e, d, **{"steps": 20, **k}),
    "dp_sgd": lambda e=0.5, d=1e-6, **k: dpsolve.dp_sgd(problem(), e, d, **{"steps": 3, **k}),
    "adassp": lambda e=0.5, d=1e-6, **k: dpsolve.adassp(problem("squared", radius=None), e, d,
                                                         **k),
    "phased_erm": lambda e=0.5, d=1e-6, **k: dpsolve.phased_erm(problem(), e, d, **k),
    "sco_sgd": lambda e=0.5, d=1e-6, **k: dpsolve.sco_sgd(problem(reg=0.0), e, d,
                                                           **{"steps": 3, **k}),
    "frank_wolfe": lambda e=0.5, d=1e-6, **k: dpsolve.frank_wolfe(
        problem(constraint="l1"), e, d, **{"steps": 3, **k}),
}
GAUSSIAN = ("noisy_sgd", "clipped_gd", "output_perturbation", "multiparty_gd",
            "aggregated_output_perturbation", "joint_sgd", "dp_sgd", "phased_erm", "sco_sgd")


def case(id, call, error, match, marks=()):
    return pytest.param(call, error, match, id=id, marks=marks)


# cases that need dask.distributed: the slow tier's (the test extra has no dask; CI installs it)
NEEDS_DASK = pytest.mark.slow


CATALOGUE = []
# -- privacy parameters ------------------------------------------------------------------------
for name, solve in SOLVERS.items():
    for label, value, error in (("0", 0.0, ValueError), ("negative", -1.0, ValueError),
                                ("nan", math.nan, ValueError), ("inf", math.inf, ValueError),
                                ("bool", True, TypeError), ("string", "1", TypeError)):
        CATALOGUE.append(case(f"epsilon-{label}-{name}", lambda s=solve, v=value: s(e=v), error,
                              "epsilon"))
for name in GAUSSIAN:
    solve = SOLVERS[name]
    for label, value in (("negative", -1e-6), ("1", 1.0), ("nan", math.nan),
                         ("0-gaussian", 0.0)):
        CATALOGUE.append(case(f"delta-{label}-{name}", lambda s=solve, v=value: s(d=v),
                              ValueError, "delta"))
CATALOGUE += [
    case("delta-with-pure-minibatch_sgd", lambda: dpsolve.minibatch_sgd(problem(), 1.0,
                                                                         delta=1e-6),
         TypeError, "delta"),
    case("delta-with-gamma-norm-output_perturbation", lambda: SOLVERS["output_perturbation"](
        noise="gamma_norm"), ValueError, "delta"),
    case("delta-with-gamma-norm-objective_perturbation",
         lambda: SOLVERS["objective_perturbation"](d=1e-6, noise="gamma_norm",
                                                   objective_noise="gamma_norm"), ValueError,
         "delta"),
    case("gaussian-objective-without-delta-objective_perturbation",
         lambda: SOLVERS["objective_perturbation"](d=None, objective_noise="gaussian"),
         TypeError, "delta"),
    case("unknown-objective-noise-objective_perturbation",
         lambda: SOLVERS["objective_perturbation"](objective_noise="laplace"), ValueError,
         "objective_noise"),
    case("gaussian-without-delta-output_perturbation",
         lambda: SOLVERS["output_perturbation"](d=None, noise="gaussian"), TypeError, "delta"),
    case("classic-gaussian-epsilon-2-output_perturbation",
         lambda: SOLVERS["output_perturbation"](e=2.0, calibration="paper"), ValueError,
         "epsilon"),
    case("classic-gaussian-epsilon-2-clipped_gd",
         lambda: SOLVERS["clipped_gd"](e=2.0, calibration="paper"), ValueError, "epsilon"),
    case("paper-epsilon-2-noisy_sgd", lambda: SOLVERS["noisy_sgd"](e=2.0), ValueError,
         "epsilon"),
    case("calibration-unknown-clipped_gd", lambda: SOLVERS["clipped_gd"](calibration="exact"),
         ValueError, "calibration"),
    case("delta-negative-frank_wolfe", lambda: SOLVERS["frank_wolfe"](d=-1e-6), ValueError,
         "delta"),
    case("delta-1-frank_wolfe", lambda: SOLVERS["frank_wolfe"](d=1.0), ValueError, "delta"),
    case("steps-0-frank_wolfe", lambda: SOLVERS["frank_wolfe"](steps=0), ValueError, "steps"),
    case("steps-float-frank_wolfe", lambda: SOLVERS["frank_wolfe"](steps=2.5), TypeError,
         "steps"),
    case("epsilon-beyond-float64-frank_wolfe", lambda: SOLVERS["frank_wolfe"](e=1e308, d=None),
         ValueError, "epsilon"),
]
# -- solver settings ---------------------------------------------------------------------------
for label, value, error in (("0", 0.0, ValueError), ("negative", -1.0, ValueError),
                            ("nan", math.nan, ValueError), ("inf", math.inf, ValueError),
                            ("bool", True, TypeError)):
    CATALOGUE += [
        case(f"clip_norm-{label}", lambda v=value: SOLVERS["clipped_gd"](clip_norm=v), error,
             "clip_norm"),
        case(f"step_size-{label}-clipped_gd", lambda v=value: SOLVERS["clipped_gd"](step_size=v),
             error, "step_size"),
        case(f"step_size-{label}-minibatch_sgd",
             lambda v=value: SOLVERS["minibatch_sgd"](step_size=v), error, "step_size"),
        case(f"tolerance-{label}-output_perturbation",
             lambda v=value: SOLVERS["output_perturbation"](tolerance=v), error, "tolerance"),
    ]
    if label != "0":                     # sigma = 0 is allowed: explicitly non-private
        CATALOGUE.append(case(f"sigma-{label}-clipped_gd", lambda v=value: dpsolve.clipped_gd(
            problem(), delta=1e-6, sigma=v, steps=3), error, "sigma"))
for label, value, error in (("0", 0, ValueError), ("negative", -1, ValueError),
                            ("float", 2.5, TypeError), ("nan", math.nan, TypeError),
                            ("bool", True, TypeError), ("string", "3", TypeError)):
    CATALOGUE += [
        case(f"steps-{label}-clipped_gd", lambda v=value: SOLVERS["clipped_gd"](steps=v), error,
             "steps"),
        case(f"steps-{label}-noisy_sgd", lambda v=value: SOLVERS["noisy_sgd"](steps=v), error,
             "steps"),
        case(f"batch_size-{label}", lambda v=value: SOLVERS["minibatch_sgd"](batch_size=v), error,
             "batch_size"),
    ]
CATALOGUE += [
    case("sigma-without-delta-clipped_gd",
         lambda: dpsolve.clipped_gd(problem(), sigma=1.0, steps=3), TypeError, "delta"),
    case("sigma-and-epsilon-clipped_gd",
         lambda: dpsolve.clipped_gd(problem(), 0.5, 1e-6, sigma=1.0, steps=3), ValueError,
         "sigma"),
    case("batch_size-above-n", lambda: SOLVERS["minibatch_sgd"](batch_size=N + 1), ValueError,
         "batch_size"),
    case("output-unknown-clipped_gd", lambda: SOLVERS["clipped_gd"](output="best"), ValueError,
         "output"),
    case("problem-not-a-Problem", lambda: dpsolve.clipped_gd(X, 0.5, 1e-6), TypeError,
         "problem"),
    case("minibatch_sgd-without-reg", lambda: dpsolve.minibatch_sgd(problem(reg=0.0), 0.5),
         ValueError, "reg"),
    case("output_perturbation-without-reg",
         lambda: dpsolve.output_perturbation(problem(reg=0.0), 0.5, 1e-6), ValueError, "reg"),
    case("objective_perturbation-with-radius",
         lambda: dpsolve.objective_perturbation(problem(), 0.5), ValueError, "radius"),
    case("objective_perturbation-hinge",
         lambda: dpsolve.objective_perturbation(problem("hinge", radius=None), 0.5),
         ValueError, "loss"),
    case("objective_perturbation-centre-shape",
         lambda: dpsolve.objective_perturbation(problem(radius=None), 0.5, centre=[0.0]),
         ValueError, "centre"),
    case("objective_perturbation-centre-nan",
         lambda: dpsolve.objective_perturbation(problem(radius=None), 0.5,
                                                centre=np.full(problem().p, np.nan)),
         ValueError, "centre"),
    case("objective_perturbation-centre-bound-below-norm",
         lambda: dpsolve.objective_perturbation(problem(radius=None), 0.5,
                                                centre=np.ones(problem().p), centre_bound=0.5),
         ValueError, "centre_bound"),
]
# -- the problem: parameters -------------------------------------------------------------------
for label, value, error in (("negative", -1.0, ValueError), ("nan", math.nan, ValueError),
                            ("inf", math.inf, ValueError), ("bool", True, TypeError),
                            ("string", "1", TypeError)):
    CATALOGUE += [
        case(f"reg-{label}", lambda v=value: problem(reg=v), error, "reg"),
        case(f"radius-{label}", lambda v=value: problem(radius=v), error, "radius"),
        case(f"row_norm-{label}", lambda v=value: problem(row_norm=v), error, "row_norm"),
        case(f"label_bound-{label}", lambda v=value: problem("squared", label_bound=v), error,
             "label_bound"),
        case(f"huber_width-{label}", lambda v=value: problem("huber_hinge", huber_width=v), error,
             "huber_width"),
    ]
CATALOGUE += [
    case("radius-0", lambda: problem(radius=0.0), ValueError, "radius"),
    case("radius-None-and-reg-0", lambda: problem(radius=None, reg=0.0), ValueError, "reg"),
    case("loss-unknown", lambda: problem("hinge2"), ValueError, "loss"),
    case("clip_rows-not-bool", lambda: problem(clip_rows="no"), TypeError, "clip_rows"),
    case("fit_intercept-not-bool", lambda: problem(fit_intercept="yes"), TypeError,
         "fit_intercept"),
    case("fit_intercept-int", lambda: problem(fit_intercept=1), TypeError, "fit_intercept"),
    case("intercept_scale-overflow",
         lambda: problem(fit_intercept=True, intercept_scale=1e200), ValueError,
         "intercept_scale"),
]
for label, value, error in (("0", 0.0, ValueError), ("negative", -1.0, ValueError),
                            ("nan", math.nan, ValueError), ("inf", math.inf, ValueError),
                            ("bool", True, TypeError), ("string", "1", TypeError)):
    CATALOGUE.append(case(f"intercept_scale-{label}",
                          lambda v=value: problem(fit_intercept=True, intercept_scale=v), error,
                          "intercept_scale"))


# -- the problem: data -------------------------------------------------------------------------
def _with(array, index, value):
    out = np.array(array, dtype=float)
    out[index] = value
    return out


CATALOGUE += [
    case("X-nan", lambda: dpsolve.Problem(_with(X, (0, 0), math.nan), Y), ValueError, "X"),
    case("X-inf", lambda: dpsolve.Problem(_with(X, (0, 0), math.inf), Y), ValueError, "X"),
    case("X-1-dimensional", lambda: dpsolve.Problem(X[:, 0], Y), ValueError, "X"),
    case("X-3-dimensional", lambda: dpsolve.Problem(X[None], Y), ValueError, "X"),
    case("X-no-rows", lambda: dpsolve.Problem(X[:0], Y[:0]), ValueError, "X"),
    case("X-no-columns", lambda: dpsolve.Problem(X[:, :0], Y), ValueError, "X"),
    case("X-strings", lambda: dpsolve.Problem(X.astype(str), Y), TypeError, "X"),
    case("X-objects", lambda: dpsolve.Problem(X.astype(object), Y), TypeError, "X"),
    case("X-complex", lambda: dpsolve.Problem(X.astype(complex), Y), TypeError, "X"),
    case("X-bool", lambda: dpsolve.Problem(X > 0, Y), TypeError, "X"),
    case("X-sparse-nan", lambda: dpsolve.Problem(
        scipy.sparse.csr_matrix(_with(X, (0, 0), math.nan)), Y), ValueError, "X"),
    case("X-sparse-complex", lambda: dpsolve.Problem(scipy.sparse.csr_matrix(X.astype(complex)),
                                                     Y), TypeError, "X"),
    case("X-sparse-bool", lambda: dpsolve.Problem(scipy.sparse.csr_matrix(X > 0), Y), TypeError,
         "X must hold real numbers"),
    case("X-sparse-for-parties", lambda: dpsolve.Parties.from_sizes(
        dpsolve.Problem(scipy.sparse.csr_matrix(X), Y), [N // 2, N - N // 2]), TypeError,
         "sparse X"),
    case("X-row-above-row_norm-clip_rows-False",
         lambda: dpsolve.Problem(2 * X, Y, clip_rows=False), ValueError, "row_norm"),
    case("y-nan", lambda: dpsolve.Problem(X, _with(Y, 0, math.nan)), ValueError, "y"),
    case("y-inf-squared", lambda: dpsolve.Problem(X, _with(0.5 * Y, 0, math.inf), "squared"),
         ValueError, "y"),
    case("y-2-dimensional", lambda: dpsolve.Problem(X, Y[:, None]), ValueError, "y"),
    case("y-wrong-length", lambda: dpsolve.Problem(X, Y[:-1]), ValueError, "y"),
    case("y-labels-not-a-default-coding", lambda: dpsolve.Problem(X, np.where(Y > 0, 7, 5)),
         ValueError, "classes"),
    case("y-labels-mix-codings", lambda: dpsolve.Problem(X, _with(Y, 0, 0.0)), ValueError,
         "classes"),
    case("y-three-classes-binary-loss", lambda: dpsolve.Problem(X, np.arange(N) % 3),
         ValueError, "classes"),
    case("y-label-outside-classes", lambda: dpsolve.Problem(X, _with(Y, 0, 3.0),
                                                             classes=(-1, 1)),
         ValueError, "classes"),
    case("y-label-outside-classes-multinomial",
         lambda: dpsolve.Problem(X, np.arange(N) % 3, "multinomial", n_classes=2),
         ValueError, "classes"),
    case("y-above-label_bound-squared", lambda: dpsolve.Problem(X, 2 * Y, "squared"),
         ValueError, "label_bound"),
    case("classes-missing-multinomial", lambda: dpsolve.Problem(X, np.zeros(N), "multinomial"),
         ValueError, "classes"),
    case("classes-one-label-binary", lambda: dpsolve.Problem(X, Y, classes=(1,)), ValueError,
         "classes"),
    case("classes-three-labels-binary", lambda: dpsolve.Problem(X, Y, classes=(-1, 0, 1)),
         ValueError, "classes"),
    case("classes-one-label-multinomial",
         lambda: dpsolve.Problem(X, np.zeros(N), "multinomial", classes=(0,)), ValueError,
         "classes"),
    case("classes-repeated", lambda: dpsolve.Problem(X, Y, classes=(1, 1.0)), ValueError,
         "classes"),
    case("classes-nan", lambda: dpsolve.Problem(X, Y, classes=(-1, math.nan)), ValueError,
         "classes"),
    case("classes-scalar", lambda: dpsolve.Problem(X, Y, classes=2), TypeError, "classes"),
    case("classes-string", lambda: dpsolve.Problem(X, Y, classes="ab"), TypeError, "classes"),
    case("classes-squared", lambda: dpsolve.Problem(X, 0.5 * Y, "squared", classes=(-1, 1)),
         ValueError, "classes"),
    case("classes-and-n_classes", lambda: dpsolve.Problem(X, np.zeros(N), "multinomial",
                                                         classes=(0, 1), n_classes=2),
         ValueError, "classes"),
    case("n_classes-1", lambda: dpsolve.Problem(X, np.zeros(N), "multinomial", n_classes=1),
         ValueError, "n_classes"),
    case("n_classes-float", lambda: dpsolve.Problem(X, np.zeros(N), "multinomial",
                                                   n_classes=2.0), TypeError, "n_classes"),
    case("n_classes-binary-loss", lambda: dpsolve.Problem(X, Y, n_classes=2), ValueError,
         "n_classes"),
]
# adassp: delta None or 0 is pure epsilon-DP (Laplace), so no delta-0 case
for label, value in (("negative", -1e-6), ("1", 1.0), ("nan", math.nan)):
    CATALOGUE.append(case(f"delta-{label}-adassp", lambda v=value: SOLVERS["adassp"](d=v),
                          ValueError, "delta"))
CATALOGUE.append(case("range-delta-1-minus-ulp-adassp",
                      lambda: SOLVERS["adassp"](d=1 - 2 ** -53), ValueError,
                      r"delta must lie in \(0, 0.5\)"))
# -- rows in chunks (RowChunks) ---------------------------------------------------------------
class _FrameLike:
    """A stand-in for a pandas DataFrame (pandas is no test dependency): a shape, dtypes per
    column and to_numpy, no dtype."""

    def __init__(self, values):
        self._values, self.shape = values, values.shape
        self.dtypes = [values.dtype] * values.shape[1]

    def to_numpy(self):
        return self._values


def _in_chunk_folder(call):
    """``call(folder)`` with small chunk files in a temporary folder: x.npy and y.npy (X and
    Y), x.npz, objects.npy (pickled objects); gone.npy does not exist."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        np.save(folder / "x.npy", X)
        np.save(folder / "y.npy", Y)
        np.savez(folder / "x.npz", X=X)
        np.save(folder / "objects.npy", np.array([[{}]] * N, dtype=object), allow_pickle=True)
        return call(folder)


def _from_npy(x, y, **kwargs):
    """``RowChunks.from_npy`` on names in the chunk folder (a str names one file, a list a
    list of files)."""
    def call(d):
        def paths(v):
            return [d / p for p in v] if isinstance(v, list) else str(d / v)
        return RowChunks.from_npy(paths(x), paths(y), **kwargs)
    return _in_chunk_folder(call)


def _sampled_sum(rate):
    chunks = RowChunks.from_arrays([X], [Y])
    return chunks.sampled_clipped_gradient_sum(np.zeros(P), _LOGISTIC, 1.0, rate,
                                               [np.random.SeedSequence(0)])


def _dask_array(values):
    import dask.array as da
    return da.from_array(values, chunks=(N // 2, P))


CATALOGUE += [
    case("rowchunks-from_arrays-list-chunk", lambda: RowChunks.from_arrays([X.tolist()], [Y]),
         TypeError, r"X_chunks\[0\] must be a numpy array .* got list; convert it with "
                    r"np\.asarray"),
    case("rowchunks-from_arrays-dataframe-chunk",
         lambda: RowChunks.from_arrays([_FrameLike(X)], [Y]), TypeError,
         r"X_chunks\[0\] must be a numpy array .*convert it with \.to_numpy\(\)"),
    case("rowchunks-from_arrays-one-array", lambda: RowChunks.from_arrays(X, [Y]), TypeError,
         r"X_chunks must be a sequence .* pass \[X_chunk\] for one chunk"),
    case("rowchunks-from_arrays-1-dimensional-chunk",
         lambda: RowChunks.from_arrays([X[0]], [Y[:1]]), ValueError,
         r"X_chunks\[0\]: chunk 0 of X must be 2-D"),
    case("rowchunks-from_arrays-no-columns", lambda: RowChunks.from_arrays([X[:, :0]], [Y]),
         ValueError, r"X_chunks\[0\]: chunk 0 of X has no columns"),
    case("rowchunks-from_arrays-bool-chunk", lambda: RowChunks.from_arrays([X > 0], [Y]),
         TypeError, r"X_chunks\[0\]: chunk 0 of X must hold real numbers"),
    case("rowchunks-from_arrays-strings-chunk",
         lambda: RowChunks.from_arrays([X.astype(str)], [Y]), TypeError,
         r"X_chunks\[0\]: chunk 0 of X must hold real numbers"),
    case("rowchunks-from_arrays-empty", lambda: RowChunks.from_arrays([], []), ValueError,
         r"X_chunks: at least one chunk"),
    case("rowchunks-from_npy-strings", lambda: _from_npy("x.npy", "y.npy"), TypeError,
         r"x_paths must be a sequence .* got the single path .*; pass \[x_path\]"),
    case("rowchunks-from_npy-pathlib-path", lambda: _in_chunk_folder(
        lambda d: RowChunks.from_npy(d / "x.npy", [d / "y.npy"])), TypeError,
         r"x_paths must be a sequence .* got the single path"),
    case("rowchunks-from_npy-npz", lambda: _from_npy(["x.npz"], ["y.npy"]), ValueError,
         r"x_paths\[0\] .*x\.npz' is an \.npz archive"),
    case("rowchunks-from_npy-missing-file", lambda: _from_npy(["gone.npy"], ["y.npy"]),
         ValueError, r"x_paths\[0\] .*gone\.npy': no such file"),
    case("rowchunks-from_npy-directory", lambda: _from_npy([""], ["y.npy"]), ValueError,
         r"x_paths\[0\] .* is a directory"),
    case("rowchunks-from_npy-pickled-objects", lambda: _from_npy(["objects.npy"], ["y.npy"]),
         ValueError, r"x_paths\[0\] .*objects\.npy' is not an \.npy file of numbers"),
    case("rowchunks-from_npy-path-not-a-path", lambda: _in_chunk_folder(
        lambda d: RowChunks.from_npy([d / "x.npy", 3], [d / "y.npy", d / "y.npy"])),
         TypeError, r"x_paths\[1\] must be a path \(a str or os\.PathLike\)"),
    case("rowchunks-from_npy-empty", lambda: RowChunks.from_npy([], []), ValueError,
         r"x_paths and y_paths must name at least one chunk"),
    case("rowchunks-from_dask-client-int",
         lambda: RowChunks.from_dask(_dask_array(X), Y, client=3), TypeError,
         r"client must be a distributed\.Client or None, got int",
         marks=NEEDS_DASK),
    case("rowchunks-from_npy-client-str",
         lambda: _from_npy(["x.npy"], ["y.npy"], client="tcp://127.0.0.1:8786"), TypeError,
         r"client must be a distributed\.Client or None, got str",
         marks=NEEDS_DASK),
    case("rowchunks-from_dask-bool", lambda: RowChunks.from_dask(_dask_array(X > 0), Y),
         TypeError, r"X must hold real numbers",
         marks=NEEDS_DASK),
    case("rowchunks-sampling_rate-string", lambda: _sampled_sum("0.5"), TypeError,
         r"sampling_rate must be a real number in \(0, 1\]"),
]
# (END rows in chunks)
# -- randomness --------------------------------------------------------------------------------
for label, value, error in (("negative", -1, ValueError), ("float", 1.5, TypeError),
                            ("string", "a", TypeError), ("bool", True, TypeError),
                            ("RandomState", np.random.RandomState(0), TypeError)):
    CATALOGUE.append(case(f"rng-{label}", lambda v=value: SOLVERS["clipped_gd"](rng=v), error,
                          "rng"))
for name, solve in SOLVERS.items():
    CATALOGUE.append(case(f"secure-with-seed-{name}", lambda s=solve: s(secure=True, rng=0),
                          ValueError, "rng"))
CATALOGUE += [
    case("secure-not-bool", lambda: SOLVERS["clipped_gd"](secure="yes"), TypeError, "secure"),
    case("secure-with-transcript-multiparty_gd",
         lambda: SOLVERS["multiparty_gd"](secure=True, record_transcript=True), ValueError,
         "record_transcript"),
]
CATALOGUE += [
    case("secure-hinge-output_perturbation",
         lambda: dpsolve.output_perturbation(problem("hinge"), 0.5, 1e-6, secure=True),
         ValueError, "loss"),
    case("secure-hinge-aggregated_output_perturbation",
         lambda: (lambda p: dpsolve.aggregated_output_perturbation(
             p, parties(p), 0.5, 1e-6, secure=True))(problem("hinge")), ValueError, "loss"),
]
for name in ("output_perturbation", "objective_perturbation", "aggregated_output_perturbation"):
    CATALOGUE.append(case(f"secure-tolerance-below-floor-{name}",
                          lambda s=SOLVERS[name]: s(secure=True, tolerance=1e-30),
                          ValueError, "tolerance"))
# -- partitions --------------------------------------------------------------------------------
CATALOGUE += [
    case("parties-sizes-do-not-add-up", lambda: dpsolve.Parties.from_sizes(problem(), [30, 20]),
         ValueError, "sizes"),
    case("parties-overlap", lambda: dpsolve.Parties(problem(), [np.arange(35),
                                                                 np.arange(30, N)]),
         ValueError, "overlap"),
    case("parties-miss-rows", lambda: dpsolve.Parties(problem(), [np.arange(20),
                                                                   np.arange(30, N)]),
         ValueError, "no party"),
    case("parties-empty-party", lambda: dpsolve.Parties(problem(), [np.arange(N), np.arange(0)]),
         ValueError, "no rows"),
    case("parties-index-out-of-range", lambda: dpsolve.Parties(problem(), [np.arange(30),
                                                                            np.arange(30, 61)]),
         ValueError, "indices"),
    case("parties-float-indices", lambda: dpsolve.Parties(problem(), [np.arange(30) * 1.0,
                                                                       np.arange(30, N)]),
         TypeError, "indices"),
    case("parties-one-party", lambda: dpsolve.Parties(problem(), [np.arange(N)]), ValueError,
         "parties"),
    case("parties-of-another-problem",
         lambda: dpsolve.multiparty_gd(problem(reg=0.01), parties(problem()), 0.5, 1e-6,
                                       steps=3),
         ValueError, "parties"),
]

# -- budgets, estimators and selections -----------------------------------------------------
CATALOGUE += [
    case("budget-epsilon-0", lambda: dpsolve.BudgetAccountant(0.0), ValueError, "epsilon"),
    case("budget-delta-1", lambda: dpsolve.BudgetAccountant(1.0, delta=1.0), ValueError, "delta"),
    case("budget-accountant-zcdp", lambda: dpsolve.BudgetAccountant(1.0, accountant="zcdp"), ValueError, "accountant"),
    case("budget-neighbours-unknown", lambda: dpsolve.BudgetAccountant(1.0, neighbours="swap"), ValueError, "neighbours"),
]
for name, solve in SOLVERS.items():
    # joint_sgd takes no budget (joint DP does not compose with DP): its TypeError names it too
    CATALOGUE.append(case(f"accountant-not-a-budget-{name}",
                          lambda s=solve: s(accountant="budget"), TypeError, "accountant"))


def _estimator_fit(**params):
    from dpsolve.estimators import DPLogisticRegression
    options = {"row_norm": 1.0, "classes": [-1, 1], **params}
    return DPLogisticRegression(**options).fit(X, Y)


def _select(**changes):
    from dpsolve.private_selection import select
    arguments = {"run": lambda c, rng: (0.0, c), "candidates": [1, 2],
                 "run_event": dpsolve.privacy.PureDpEvent(0.1), **changes}
    return select(arguments.pop("run"), arguments.pop("candidates"), arguments.pop("run_event"),
                  **arguments)


def _search(**changes):
    from dpsolve.estimators import DPLogisticRegression
    from dpsolve.private_selection import PrivateGridSearch
    return PrivateGridSearch(DPLogisticRegression(row_norm=1.0, classes=[-1, 1]),
                             {"reg": [0.1]}, **changes).fit(X, Y)


CATALOGUE += [
    case("estimator-epsilon-0", lambda: _estimator_fit(epsilon=0.0), ValueError, "epsilon"),
    case("estimator-delta-1", lambda: _estimator_fit(delta=1.0), ValueError, "delta"),
    case("estimator-solver-unknown", lambda: _estimator_fit(solver="newton"), ValueError,
         "solver"),
    case("estimator-solver-for-another-loss",
         lambda: _estimator_fit(classes=[0, 1, 2], solver="objective_perturbation"),
         ValueError, "solver"),
    case("estimator-solver-options-epsilon",
         lambda: _estimator_fit(solver_options={"epsilon": 2.0}), ValueError, "solver_options"),
    case("estimator-classes-one", lambda: _estimator_fit(classes=[1]), ValueError, "classes"),
    case("estimator-accountant-not-a-budget", lambda: _estimator_fit(accountant="budget"),
         TypeError, "accountant"),
    case("estimator-secure-with-seed", lambda: _estimator_fit(secure=True, random_state=0),
         ValueError, "random_state"),
    case("estimator-prior_share-1", lambda: _estimator_fit(prior_share=1.0), ValueError,
         "prior_share"),
    case("estimator-prior_share-unusable-solver",
         lambda: _estimator_fit(prior_share=0.1, solver="clipped_gd", radius=1.0),
         ValueError, "prior_share"),
    case("estimator-prior_share-multinomial",
         lambda: _estimator_fit(prior_share=0.1, classes=[-1, 0, 1]), ValueError,
         "prior_share"),
    case("estimator-prior-epsilon-too-small", lambda: _estimator_fit(epsilon=1e-9), ValueError,
         "prior_share"),
    case("estimator-class_weight-balanced-without-prior",
         lambda: _estimator_fit(class_weight="balanced", prior_share=0.0), ValueError,
         "class_weight"),
    case("estimator-class_weight-unknown-class",
         lambda: _estimator_fit(class_weight={2: 1.0}), ValueError, "class_weight"),
    case("estimator-class_weight-zero", lambda: _estimator_fit(class_weight={1: 0.0}),
         ValueError, "class_weight"),
    case("estimator-class_weight-string", lambda: _estimator_fit(class_weight="equal"),
         ValueError, "class_weight"),
    case("estimator-reg-string", lambda: _estimator_fit(reg="large"), ValueError, "reg"),
    case("estimator-solver-options-centre",
         lambda: _estimator_fit(solver_options={"centre": [0.0]}), ValueError, "centre"),
    case("select-no-candidates", lambda: _select(candidates=[]), ValueError, "candidates"),
    case("select-mean-below-1", lambda: _select(mean=0.5), ValueError, "mean"),
    case("select-method-unknown", lambda: _select(method="exponential"), ValueError, "method"),
    case("select-shape-negative", lambda: _select(method="negative_binomial", shape=-1.0),
         ValueError, "shape"),
    case("select-run-event-not-an-event", lambda: _select(run_event=0.1), TypeError,
         "run_event"),
    case("select-not-private-at-delta-0",
         lambda: _select(run_event=dpsolve.privacy.gaussian_event(1.0, 1.0)), ValueError,
         "delta"),
    case("search-validation-fraction-1", lambda: _search(validation_fraction=1.0), ValueError,
         "validation_fraction"),
    case("search-score-epsilon-0", lambda: _search(score_epsilon=0.0), ValueError,
         "score_epsilon"),
    case("quantile-accountant-not-a-budget",
         lambda: dpsolve.privacy.private_quantile(np.ones(3), 0.5, 0.1, upper=2.0,
                                                  accountant="budget"), TypeError, "accountant"),
]


# -- privacy events and the budget's ledger ---------------------------------------------------
def _events():
    import dp_accounting
    from dp_accounting import dp_event
    return dp_accounting, dp_event


def _spend(make_event, *, epsilon=1.0, delta=1e-6, **kwargs):
    """``BudgetAccountant(epsilon, delta).spend(event)`` for the event ``make_event`` builds
    from ``(dp_accounting, its dp_event module)``."""
    kwargs.setdefault("neighbours", "replace_one")
    return dpsolve.BudgetAccountant(epsilon, delta).spend(make_event(*_events()), **kwargs)


def _epsilon_of(make_event, accountant=None, delta=1e-6):
    return dpsolve.privacy.epsilon_of(make_event(*_events()), delta, accountant)


def _in_parallel(action):
    budget = dpsolve.BudgetAccountant(2.0)
    with budget.parallel() as group:
        if action == "nest":
            group.parallel()
    if action == "after":
        group.spend(dpsolve.privacy.PureDpEvent(0.1), neighbours="replace_one")


CATALOGUE += [
    case("event-laplace-negative", lambda: _spend(lambda d, e: d.LaplaceDpEvent(-1.0),
                                                  delta=0.0),
         ValueError, r"LaplaceDpEvent\.noise_multiplier"),
    case("event-laplace-negative-epsilon_of",
         lambda: _epsilon_of(lambda d, e: d.LaplaceDpEvent(-1.0), "basic", 0.0),
         ValueError, r"LaplaceDpEvent\.noise_multiplier"),
    case("event-laplace-negative-delta_of", lambda: dpsolve.privacy.delta_of(
        _events()[0].LaplaceDpEvent(-1.0), 1.0), ValueError, r"LaplaceDpEvent\.noise_multiplier"),
    case("event-laplace-nan", lambda: _spend(lambda d, e: d.LaplaceDpEvent(math.nan)),
         ValueError, r"LaplaceDpEvent\.noise_multiplier"),
    case("event-laplace-zero", lambda: _spend(lambda d, e: d.LaplaceDpEvent(0.0)),
         dpsolve.privacy.BudgetExceededError, "epsilon=inf"),
    case("event-gaussian-negative", lambda: _spend(lambda d, e: d.GaussianDpEvent(-1.0)),
         ValueError, r"GaussianDpEvent\.noise_multiplier"),
    case("event-gaussian-nan", lambda: _spend(lambda d, e: d.GaussianDpEvent(math.nan)),
         ValueError, r"GaussianDpEvent\.noise_multiplier"),
    case("event-gaussian-nan-epsilon_of",
         lambda: _epsilon_of(lambda d, e: d.GaussianDpEvent(math.nan), "rdp"),
         ValueError, r"GaussianDpEvent\.noise_multiplier"),
    case("event-gaussian-inf", lambda: _spend(lambda d, e: d.GaussianDpEvent(math.inf)),
         ValueError, r"GaussianDpEvent\.noise_multiplier"),
    case("event-gaussian-zero", lambda: _spend(lambda d, e: d.GaussianDpEvent(0.0)),
         dpsolve.privacy.BudgetExceededError, "epsilon=inf"),
    case("event-gaussian-tiny", lambda: _spend(lambda d, e: d.GaussianDpEvent(1e-300)),
         dpsolve.privacy.BudgetExceededError, "epsilon=inf"),
    case("event-selfcomposed-negative-count",
         lambda: _spend(lambda d, e: d.SelfComposedDpEvent(dpsolve.privacy.PureDpEvent(0.1), -3),
                        delta=0.0),
         ValueError, r"SelfComposedDpEvent\.count"),
    case("event-selfcomposed-zero-count",
         lambda: _spend(lambda d, e: d.SelfComposedDpEvent(dpsolve.privacy.PureDpEvent(0.1), 0)),
         ValueError, r"SelfComposedDpEvent\.count"),
    case("event-selfcomposed-float-count",
         lambda: _spend(lambda d, e: d.SelfComposedDpEvent(d.GaussianDpEvent(2.0), 2.5)),
         TypeError, r"SelfComposedDpEvent\.count"),
    case("event-selfcomposed-too-many-releases",
         lambda: _spend(lambda d, e: d.SelfComposedDpEvent(
             d.SelfComposedDpEvent(d.GaussianDpEvent(2.0), 2 ** 30), 2 ** 30)),
         ValueError, r"SelfComposedDpEvent\.count.*releases"),
    case("event-composed-negative-part",
         lambda: _spend(lambda d, e: d.ComposedDpEvent([d.GaussianDpEvent(2.0),
                                                        d.LaplaceDpEvent(-1.0)])),
         ValueError, r"LaplaceDpEvent\.noise_multiplier"),
    case("event-composed-negative-part-after-selection",
         lambda: _epsilon_of(lambda d, e: d.ComposedDpEvent([
             e.RepeatAndSelectDpEvent(d.GaussianDpEvent(2.0), 2.0, 1.0),
             d.LaplaceDpEvent(-1.0)]), "rdp"),
         ValueError, r"LaplaceDpEvent\.noise_multiplier"),
    case("event-composed-not-an-event",
         lambda: _spend(lambda d, e: d.ComposedDpEvent([d.GaussianDpEvent(2.0), 0.5])),
         TypeError, "DpEvent"),
    case("event-nested-too-deep",
         lambda: _spend(lambda d, e: __import__("functools").reduce(
             lambda inner, _: d.ComposedDpEvent([inner]), range(101), d.GaussianDpEvent(2.0))),
         ValueError, "deeper"),
    case("event-poisson-probability-negative",
         lambda: _spend(lambda d, e: d.PoissonSampledDpEvent(-0.5, d.GaussianDpEvent(2.0))),
         ValueError, r"PoissonSampledDpEvent\.sampling_probability"),
    case("event-poisson-probability-zero",
         lambda: _spend(lambda d, e: d.PoissonSampledDpEvent(0.0, d.GaussianDpEvent(2.0))),
         ValueError, r"PoissonSampledDpEvent\.sampling_probability"),
    case("event-poisson-probability-above-1",
         lambda: _spend(lambda d, e: d.PoissonSampledDpEvent(1.5, d.GaussianDpEvent(2.0))),
         ValueError, r"PoissonSampledDpEvent\.sampling_probability"),
    case("event-sampled-without-replacement-sample-above-size",
         lambda: _epsilon_of(lambda d, e: d.SampledWithoutReplacementDpEvent(
             10, 20, d.GaussianDpEvent(2.0)), "rdp"),
         ValueError, r"SampledWithoutReplacementDpEvent\.sample_size"),
    case("event-sampled-without-replacement-size-negative",
         lambda: _epsilon_of(lambda d, e: d.SampledWithoutReplacementDpEvent(
             -10, 1, d.GaussianDpEvent(2.0)), "rdp"),
         ValueError, r"SampledWithoutReplacementDpEvent\.source_dataset_size"),
    case("event-repeat-and-select-mean-below-1",
         lambda: _spend(lambda d, e: e.RepeatAndSelectDpEvent(
             dpsolve.privacy.PureDpEvent(0.1), 0.5, 1.0)),
         ValueError, r"RepeatAndSelectDpEvent\.mean"),
    case("event-repeat-and-select-shape-nan",
         lambda: _spend(lambda d, e: e.RepeatAndSelectDpEvent(
             dpsolve.privacy.PureDpEvent(0.1), 2.0, math.nan)),
         ValueError, r"RepeatAndSelectDpEvent\.shape"),
    case("event-unsupported-kind",
         lambda: _spend(lambda d, e: e.ZCDpEvent(0.1, 0.0)), ValueError, "ZCDpEvent"),
    case("event-not-an-event",
         lambda: dpsolve.BudgetAccountant(1.0).spend(0.5, neighbours="replace_one"), TypeError,
         "DpEvent"),
    case("budget-spend-neighbours-missing",
         lambda: dpsolve.BudgetAccountant(1.0).spend(dpsolve.privacy.PureDpEvent(0.1)),
         ValueError, "neighbours"),
    case("budget-check-neighbours-missing",
         lambda: dpsolve.BudgetAccountant(1.0).check(dpsolve.privacy.PureDpEvent(0.1)),
         ValueError, "neighbours"),
    case("budget-neighbours-empty", lambda: dpsolve.BudgetAccountant(1.0, neighbours=""),
         ValueError, "neighbours"),
    case("budget-spend-neighbours-empty",
         lambda: dpsolve.BudgetAccountant(1.0).spend(dpsolve.privacy.PureDpEvent(0.1),
                                                     neighbours=""),
         ValueError, "neighbours"),
    case("budget-check-neighbours-unknown",
         lambda: dpsolve.BudgetAccountant(1.0).check(dpsolve.privacy.PureDpEvent(0.1),
                                                     neighbours="swap"),
         ValueError, "neighbours"),
    case("budget-spend-neighbours-not-a-string",
         lambda: dpsolve.BudgetAccountant(1.0).spend(dpsolve.privacy.PureDpEvent(0.1),
                                                     neighbours=1),
         TypeError, "neighbours"),
    case("budget-spend-neighbours-other-relation",
         lambda: dpsolve.BudgetAccountant(1.0, neighbours="add_remove").spend(
             dpsolve.privacy.PureDpEvent(0.1), neighbours="replace_one"),
         ValueError, "neighbours"),
    case("budget-parallel-nested", lambda: _in_parallel("nest"), ValueError, "parallel"),
    case("budget-parallel-group-after-its-block", lambda: _in_parallel("after"), ValueError,
         "parallel"),
    case("objective-gaussian-epsilon-below-jacobian",
         lambda: SOLVERS["objective_perturbation"](e=0.01, d=1e-6, objective_noise="gaussian",
                                                   extra_reg=0.0),
         ValueError, "epsilon"),
]
# (END privacy events)
# -- numerical range: values whose derived constants overflow or underflow --------------------
def _range_fit(cls_name="DPLogisticRegression", **params):
    """An estimator fit with a public row bound (and label set or label bound), so that only
    the parameter under test is out of range."""
    from dpsolve import estimators
    options = {"row_norm": 1.0, **params}
    if cls_name == "DPLinearRegression":
        options.setdefault("label_bound", 1.0)
        labels = 0.5 * Y
    else:
        options.setdefault("classes", [0, 1])
        labels = (Y > 0).astype(int)
    return getattr(estimators, cls_name)(**options).fit(X, labels)


CATALOGUE += [
    # the Problem's constants (refused before X is read)
    case("range-reg-1e-300", lambda: problem(reg=1e-300), ValueError, r"reg must be 0 or lie in"),
    case("range-reg-1e200", lambda: problem(reg=1e200), ValueError, "reg"),
    case("range-radius-1e-300", lambda: problem(radius=1e-300), ValueError, "radius must lie in"),
    case("range-row_norm-1e150", lambda: problem(row_norm=1e150), ValueError,
         r"row_norm=1e\+150 put the smoothness"),
    case("range-row_norm-1e-160", lambda: problem(row_norm=1e-160), ValueError,
         "row_norm must lie in"),
    case("range-huber_width-1e300", lambda: problem("huber_hinge", huber_width=1e300),
         ValueError, "huber_width must lie in"),
    case("range-huber_width-1e-300", lambda: problem("huber_hinge", huber_width=1e-300),
         ValueError, "huber_width must lie in"),
    case("range-label_bound-1e300", lambda: problem("squared", label_bound=1e300), ValueError,
         "label_bound must lie in"),
    case("range-lipschitz-squared", lambda: problem("squared", radius=1e100, label_bound=1e100,
                                                    row_norm=1e70),
         ValueError, r"row_norm=1e\+70, radius=1e\+100, label_bound=1e\+100 put the Lipschitz"),
    case("range-gradient_bound-reg-radius", lambda: problem(reg=1e100, radius=1e100),
         ValueError, r"reg=1e\+100, radius=1e\+100 put the gradient bound"),
    case("range-intercept_scale-1e-300",
         lambda: problem(fit_intercept=True, intercept_scale=1e-300), ValueError,
         "intercept_scale must lie in"),
    # the same through the estimators (they used to raise OverflowError or RuntimeError mid-fit)
    case("range-estimator-reg-1e-300", lambda: _range_fit(reg=1e-300), ValueError, "reg"),
    case("range-estimator-radius-1e-300", lambda: _range_fit(radius=1e-300), ValueError,
         "radius"),
    case("range-estimator-row_norm-1e150", lambda: _range_fit(row_norm=1e150), ValueError,
         "row_norm"),
    case("range-estimator-huber_width-1e300",
         lambda: _range_fit("DPLinearSVC", huber_width=1e300), ValueError, "huber_width"),
    case("range-estimator-label_bound-1e300",
         lambda: _range_fit("DPLinearRegression", label_bound=1e300), ValueError,
         "label_bound"),
    # epsilon so small that the noise scale leaves float64 (OverflowError, ZeroDivisionError)
    case("range-epsilon-1e-300", lambda: _range_fit(epsilon=1e-300), ValueError,
         r"epsilon=1e-300"),
    case("range-epsilon-1e-320", lambda: _range_fit(epsilon=1e-320), ValueError, "epsilon"),
    case("range-epsilon-1e-200", lambda: _range_fit(epsilon=1e-200), ValueError,
         r"epsilon=1e-200 is too small"),
    case("range-epsilon-1e-300-minibatch_sgd", lambda: SOLVERS["minibatch_sgd"](e=1e-300),
         ValueError, "epsilon=1e-300 is too small"),
    case("range-epsilon-1e-300-output_perturbation-gamma-norm",
         lambda: dpsolve.output_perturbation(problem(), 1e-300), ValueError,
         "epsilon=1e-300 is too small"),
    case("range-epsilon-1e-320-objective_perturbation",
         lambda: SOLVERS["objective_perturbation"](e=1e-320), ValueError, "epsilon"),
    case("range-epsilon-1e-300-noisy_sgd-paper",
         lambda: SOLVERS["noisy_sgd"](e=1e-300, d=1e-9), ValueError,
         "epsilon=1e-300 is too small"),
    case("range-epsilon-5e-324-clipped_gd", lambda: SOLVERS["clipped_gd"](e=5e-324),
         ValueError, "epsilon"),
    # explicit noise beyond float64's range
    case("range-sigma-1e200-clipped_gd",
         lambda: dpsolve.clipped_gd(problem(), delta=1e-6, sigma=1e200, steps=3), ValueError,
         "sigma must lie in"),
    case("range-noise_scale-1e200-minibatch_sgd",
         lambda: SOLVERS["minibatch_sgd"](e=None, noise_scale=1e200), ValueError,
         "noise_scale"),
    # delta >= 1/2 (1 - 2**-53 used to raise IndexError in objective perturbation's accounting)
    case("range-delta-1-minus-ulp", lambda: _range_fit(delta=1 - 2 ** -53), ValueError,
         r"delta must lie in \(0, 0.5\)"),
    case("range-delta-one-half-choose_solver",
         lambda: dpsolve.choose_solver(problem(), 1.0, 0.5), ValueError, "delta"),
    # options checked even where unused (calibration with gamma-norm noise or explicit sigma)
    case("options-calibration-bogus-estimator",
         lambda: _range_fit(solver_options={"calibration": "bogus"}), ValueError,
         "calibration"),
    case("options-calibration-bogus-gamma-norm-objective_perturbation",
         lambda: SOLVERS["objective_perturbation"](calibration="bogus"), ValueError,
         "calibration"),
    case("options-calibration-bogus-with-sigma-noisy_sgd",
         lambda: dpsolve.noisy_sgd(problem(), delta=1e-6, sigma=1.0, steps=3,
                                   calibration="bogus"), ValueError, "calibration"),
]
for name in GAUSSIAN:
    CATALOGUE.append(case(f"range-delta-1-minus-ulp-{name}",
                          lambda s=SOLVERS[name]: s(d=1 - 2 ** -53), ValueError,
                          r"delta must lie in \(0, 0.5\)"))
CATALOGUE.append(case("range-delta-1-minus-ulp-objective_perturbation",
                      lambda: SOLVERS["objective_perturbation"](d=1 - 2 ** -53), ValueError,
                      r"delta must lie in \(0, 0.5\)"))
# (END numerical range)
# -- estimators, selection and searches --------------------------------------------------------
def _estimator(cls_name, **params):
    from dpsolve import estimators
    return getattr(estimators, cls_name)(**params)


def _search_with(estimator, X_=X, y_=Y, **changes):
    from dpsolve.private_selection import PrivateGridSearch
    return PrivateGridSearch(estimator, {"epsilon": [1.0]}, **changes).fit(X_, y_)


def _pipeline(*steps):
    from sklearn.pipeline import Pipeline
    return Pipeline([(f"s{k}", step) for k, step in enumerate(steps)])


def _scaler():
    from sklearn.preprocessing import StandardScaler
    return StandardScaler()


def _scorer(scoring, epsilon, **options):
    from dpsolve.private_selection import make_private_scorer
    return make_private_scorer(scoring, epsilon, **options)


def _sklearn_fitted(name):
    """A scikit-learn model (no public classes or label bound) fitted on the module's data."""
    from sklearn import linear_model
    target = Y if name == "LogisticRegression" else 0.5 * Y
    return getattr(linear_model, name)().fit(X, target)


def _regressor_fitted():
    return _estimator("DPLinearRegression", row_norm=1.0, label_bound=1.0,
                      random_state=0).fit(X, 0.5 * Y)


def _with_nan(values):
    """A copy of ``values`` with a NaN in its last record (the held-out part of a search, or
    its training part: either is refused before any charge)."""
    values = np.array(values, dtype=float)
    values[-1] = np.nan
    return values


def _public_logistic(**params):
    return _estimator("DPLogisticRegression", **{"row_norm": 1.0, "classes": [-1, 1],
                                                 **params})


CATALOGUE += [
    case("estimator-row_norm-bool", lambda: _estimator_fit(row_norm=True), TypeError,
         "row_norm"),
    case("estimator-epsilon-bool", lambda: _estimator_fit(epsilon=True), TypeError, "epsilon"),
    case("estimator-label_bound-bool", lambda: _estimator(
        "DPLinearRegression", row_norm=1.0, label_bound=True).fit(X, 0.5 * Y), TypeError,
         "label_bound"),
    case("estimator-label_bound-range-reversed", lambda: _estimator(
        "DPLinearRegression", row_norm=1.0, label_bound=(1.0, 0.0)).fit(X, 0.5 * Y),
         ValueError, "label_bound"),
    case("estimator-label_bound-range-nan", lambda: _estimator(
        "DPLinearRegression", row_norm=1.0, label_bound=(0.0, float("nan"))).fit(X, 0.5 * Y),
         ValueError, "label_bound"),
    case("estimator-label_bound-range-three", lambda: _estimator(
        "DPLinearRegression", row_norm=1.0, label_bound=(0.0, 1.0, 2.0)).fit(X, 0.5 * Y),
         ValueError, "label_bound"),
    case("estimator-row_norm-from-data-with-accountant",
         lambda: _estimator_fit(row_norm=None, accountant=dpsolve.BudgetAccountant(5.0)),
         ValueError, "row_norm"),
    case("estimator-classes-from-data-with-accountant",
         lambda: _estimator_fit(classes=None, accountant=dpsolve.BudgetAccountant(5.0)),
         ValueError, "classes"),
    case("estimator-label_bound-from-data-with-accountant", lambda: _estimator(
        "DPLinearRegression", row_norm=1.0, accountant=dpsolve.BudgetAccountant(5.0)).fit(
        X, 0.5 * Y), ValueError, "label_bound"),
    case("estimator-classes-unorderable", lambda: _estimator_fit(classes=[0, None]), TypeError,
         "classes"),
    case("estimator-y-mixed-types", lambda: _public_logistic(classes=None).fit(
        X, np.array([1, "a"] * (N // 2), dtype=object)), ValueError, "y"),
    case("estimator-y-None", lambda: _public_logistic().fit(X, None), ValueError, "y"),
    case("estimator-X-sparse-complex", lambda: _public_logistic().fit(
        scipy.sparse.csr_matrix(X.astype(complex)), Y), TypeError, "X"),
    case("estimator-fit-rng-with-secure", lambda: _public_logistic(secure=True).fit(
        X, Y, rng=np.random.default_rng(0)), ValueError, "rng"),
    case("estimator-fit-rng-int", lambda: _public_logistic().fit(X, Y, rng=3), TypeError,
         "rng"),
    case("search-random_state-bool", lambda: _search(random_state=True), TypeError,
         "random_state"),
    case("search-y-shorter", lambda: _search_with(_public_logistic(), y_=Y[:-1]), ValueError,
         "X and y"),
    case("search-X-shorter", lambda: _search_with(_public_logistic(), X_=X[:-1]), ValueError,
         "X and y"),
    case("search-y-None", lambda: _search_with(_public_logistic(), y_=None), ValueError, "y"),
    case("search-stateful-transformer", lambda: _search_with(
        _pipeline(_scaler(), _public_logistic())), ValueError, "StandardScaler"),
    case("search-pipeline-ends-in-passthrough", lambda: _search_with(
        _pipeline(_public_logistic(), "passthrough")), TypeError, "estimator"),
    case("search-regressor-scored-by-accuracy", lambda: _search_with(_estimator(
        "DPLinearRegression", row_norm=1.0, label_bound=1.0), scoring="accuracy"), ValueError,
         r"scoring='accuracy'.*'neg_mean_squared_error', 'r2'"),
    case("search-classifier-scored-by-r2", lambda: _search_with(_public_logistic(),
                                                                scoring="r2"), ValueError,
         r"scoring='r2'.*'accuracy', 'balanced_accuracy', 'neg_log_loss'"),
    case("search-log-loss-without-predict_proba", lambda: _search_with(_estimator(
        "DPLinearSVC", row_norm=1.0, classes=[-1, 1]), scoring="neg_log_loss"), ValueError,
         r"scoring='neg_log_loss'.*DPLinearSVC"),
    case("search-scoring-unknown", lambda: _search_with(_public_logistic(), scoring="f1"),
         ValueError, "scoring"),
    case("search-refit-not-bool", lambda: _search_with(_public_logistic(), refit="yes"),
         TypeError, "refit"),
    case("search-scorer-epsilon-differs", lambda: _search_with(
        _public_logistic(), scoring=_scorer("neg_log_loss", 0.5)), ValueError,
         "score_epsilon"),
    case("search-scorer-with-random_state", lambda: _search_with(
        _public_logistic(), scoring=_scorer("accuracy", 0.1, random_state=0)), ValueError,
         "random_state"),
    case("search-refit-over-budget", lambda: _search_with(
        _public_logistic(epsilon=1.0), score_epsilon=0.1, refit=True,
        accountant=dpsolve.BudgetAccountant(3.5)), ValueError, "selection and refit"),
    case("scorer-epsilon-0", lambda: _scorer("r2", 0.0), ValueError, "epsilon"),
    case("scorer-log-loss-clip-0", lambda: _scorer("neg_log_loss", 0.1, clip=0.0), ValueError,
         "clip"),
    case("scorer-balanced-accuracy-floor-negative", lambda: _scorer(
        "balanced_accuracy", 0.1, floor=-1.0), ValueError, "floor"),
    case("scorer-balanced-accuracy-without-classes", lambda: _scorer(
        "balanced_accuracy", 0.1)(_sklearn_fitted("LogisticRegression"), X, Y), ValueError,
         "classes"),
    case("scorer-mse-without-label_bound", lambda: _scorer("neg_mean_squared_error", 0.1)(
        _sklearn_fitted("LinearRegression"), X, 0.5 * Y), ValueError, "label_bound"),
    case("search-row_norm-from-data", lambda: _search_with(_public_logistic(row_norm=None)),
         ValueError, "row_norm"),
    case("search-not-a-dpsolve-estimator", lambda: _search_with(_scaler()), TypeError,
         "estimator"),
    case("noisy-accuracy-y-shorter", lambda: __import__(
        "dpsolve.private_selection").private_selection.noisy_accuracy(
        _public_logistic().fit(X, Y), X, Y[:1], 1.0), ValueError, "X and y"),
    case("select-candidates-not-iterable", lambda: _select(candidates=3), TypeError,
         "candidates"),
    case("select-mean-above-max", lambda: _select(mean=1e150), ValueError, "mean"),
    case("scorer-epsilon-tiny", lambda: _scorer("accuracy", 5e-324), ValueError, "epsilon"),
    case("scorer-noise-scale-overflows", lambda: _scorer("r2", 1e-99, label_bound=10.0)(
        _regressor_fitted(), X, 0.5 * Y), ValueError, "epsilon"),
    case("scorer-unfitted", lambda: _scorer("accuracy", 0.5)(_public_logistic(), X, Y),
         ValueError, "not fitted"),
    case("scorer-X-wrong-features", lambda: _scorer("accuracy", 0.5)(
        _public_logistic().fit(X, Y), X[:, :3], Y), ValueError, "features"),
    case("scorer-X-nan", lambda: _scorer("accuracy", 0.5)(
        _public_logistic().fit(X, Y), _with_nan(X), Y), ValueError, "NaN"),
    case("scorer-regression-y-nan", lambda: _scorer("neg_mean_squared_error", 0.5)(
        _regressor_fitted(), X, _with_nan(0.5 * Y)), ValueError, "y must be finite"),
    case("noisy-accuracy-unfitted", lambda: __import__(
        "dpsolve.private_selection").private_selection.noisy_accuracy(
        _public_logistic(), X, Y, 1.0), ValueError, "not fitted"),
    case("search-score-epsilon-tiny", lambda: _search_with(_public_logistic(),
                                                           score_epsilon=5e-324),
         ValueError, "score_epsilon"),
    case("search-X-nan", lambda: _search_with(_public_logistic(), X_=_with_nan(X)),
         ValueError, "NaN"),
    case("search-regressor-y-nan", lambda: _search_with(_estimator(
        "DPLinearRegression", row_norm=1.0, label_bound=1.0), y_=_with_nan(0.5 * Y)),
         ValueError, "y must be finite"),
    case("search-grid-class_weight-unknown-class", lambda: __import__(
        "dpsolve.private_selection").private_selection.PrivateGridSearch(
        _public_logistic(), {"class_weight": [None, {7: 2.0}]}).fit(X, Y), ValueError,
         "class_weight"),
    case("select-run-event-negative", lambda: _select(
        run_event=__import__("dp_accounting").LaplaceDpEvent(-1.0)), ValueError,
         r"run_event.*LaplaceDpEvent\.noise_multiplier"),
    case("select-neighbours-unknown", lambda: _select(neighbours="swap"), ValueError,
         "neighbours"),
    case("estimator-solver-options-unknown-for-auto",
         lambda: _estimator_fit(solver_options={"steps": 5}), ValueError, "solver_options"),
    case("make_synthetic-noise-nan", lambda: dpsolve.datasets.make_synthetic(10, 2,
                                                                            noise=math.nan),
         ValueError, "noise"),
    case("make_synthetic-noise-negative", lambda: dpsolve.datasets.make_synthetic(10, 2,
                                                                                 noise=-1.0),
         ValueError, "noise"),
]
# (END estimators)


def _prep(name, *args, **kwargs):
    from dpsolve import preprocessing
    return getattr(preprocessing, name)(*args, **kwargs)


def _prep_fit(name, *args, X_=X, **kwargs):
    return _prep(name, *args, **kwargs).fit(X_)


def _column_transformer(*parts, **options):
    from sklearn.compose import ColumnTransformer
    return ColumnTransformer(list(parts), **options)


_OBJECTS = np.array([["a", None], ["b", "c"]], dtype=object)
# the public preprocessing (dpsolve.preprocessing): each parameter, before a value is read
CATALOGUE += [
    case("prep-ranges-reversed", lambda: _prep_fit("PublicRangeScaler", [(1, 0)] * P),
         ValueError, r"ranges\[0\] must have low < high"),
    case("prep-ranges-nan", lambda: _prep_fit("PublicRangeScaler", [(0, math.nan)] * P),
         ValueError, r"ranges\[0\] must hold finite numbers"),
    case("prep-ranges-bool", lambda: _prep_fit("PublicRangeScaler", (False, True)),
         TypeError, "ranges.* must hold real numbers"),
    case("prep-ranges-string", lambda: _prep_fit("PublicRangeScaler", "0-1"), TypeError,
         "ranges must be a"),
    case("prep-ranges-three", lambda: _prep_fit("PublicRangeScaler", [(0, 1, 2)] * P),
         ValueError, r"ranges\[0\] must be a \(low, high\) pair"),
    case("prep-ranges-empty", lambda: _prep_fit("PublicRangeScaler", []), ValueError,
         "ranges must give at least one"),
    case("prep-ranges-width-overflows", lambda: _prep_fit("PublicRangeScaler",
                                                         (-1e308, 1e308)),
         ValueError, "ranges.*width overflows"),
    case("prep-ranges-count", lambda: _prep_fit("PublicRangeScaler", [(0, 1)] * (P - 1)),
         ValueError, f"X has {P} columns, but PublicRangeScaler's ranges gives {P - 1}"),
    case("prep-feature_range", lambda: _prep_fit("PublicRangeScaler", (0, 1),
                                                 feature_range=(0, 2)),
         ValueError, r"feature_range must be \(0, 1\) or \(-1, 1\)"),
    case("prep-scaler-X-nan", lambda: _prep_fit("PublicRangeScaler", (0, 1), X_=_with_nan(X)),
         ValueError, "X contains NaN"),
    case("prep-row_norm_bound-unfitted-broadcast", lambda: _prep(
        "PublicRangeScaler", (0, 1)).row_norm_bound(), ValueError, "ranges gives one entry "
         "for every column.*fit it first"),
    case("prep-norm-l1", lambda: _prep("PublicRangeScaler", [(0, 1)]).row_norm_bound("l1"),
         ValueError, r"norm must be one of \['l2', 'linf'\]"),
    case("prep-categories-empty", lambda: _prep_fit("PublicCategoryEncoder", [["a"], []],
                                                    X_=_OBJECTS),
         ValueError, r"categories\[1\] is empty"),
    case("prep-categories-duplicate", lambda: _prep_fit("PublicCategoryEncoder", ["a", "a"],
                                                        X_=_OBJECTS),
         ValueError, "categories lists a category twice"),
    case("prep-categories-none", lambda: _prep_fit("PublicCategoryEncoder", ["a", None],
                                                   X_=_OBJECTS),
         ValueError, "categories must hold categories"),
    case("prep-categories-string", lambda: _prep_fit("PublicCategoryEncoder", "abc",
                                                     X_=_OBJECTS),
         TypeError, "categories must be a list"),
    case("prep-categories-count", lambda: _prep_fit("PublicCategoryEncoder", [["a"]] * 3,
                                                    X_=_OBJECTS),
         ValueError, "X has 2 columns, but PublicCategoryEncoder's categories gives 3"),
    case("prep-unknown", lambda: _prep_fit("PublicCategoryEncoder", ["a"], unknown="ignore",
                                           X_=_OBJECTS),
         ValueError, r"unknown must be one of \['bucket', 'zeros'\]"),
    case("prep-fill_value-nan", lambda: _prep_fit("PublicConstantImputer", math.nan),
         ValueError, "fill_value must be a finite number"),
    case("prep-fill_value-bool", lambda: _prep_fit("PublicConstantImputer", [0.0, True]),
         TypeError, r"fill_value\[1\] must be a number or a string"),
    case("prep-fill_value-count", lambda: _prep_fit("PublicConstantImputer", [0.0] * (P + 1)),
         ValueError, f"X has {P} columns, but PublicConstantImputer's fill_value gives {P + 1}"),
    case("prep-output_row_norm-passthrough", lambda: _prep(
        "output_row_norm", _column_transformer(("s", _prep("PublicRangeScaler", [(0, 1)]), [0]),
                                               remainder="passthrough")),
         ValueError, "'remainder' passes columns through unchanged"),
    case("prep-output_row_norm-no-bound", lambda: _prep(
        "output_row_norm", _column_transformer(("z", _scaler(), [0]))),
         ValueError, r"'z' \(StandardScaler\) reports no row-norm bound"),
    case("prep-output_row_norm-norm", lambda: _prep(
        "output_row_norm", _prep("PublicRangeScaler", [(0, 1)]), norm="max"),
         ValueError, "norm must be one of"),
    case("prep-private_pipeline-estimator", lambda: _prep(
        "private_pipeline", _prep("PublicRangeScaler", [(0, 1)]), _scaler()),
         TypeError, "estimator must be one of dpsolve's estimators"),
    case("search-stateful-transformer-nested", lambda: _search_with(_pipeline(
        _column_transformer(("z", _scaler(), [0, 1, 2, 3])), _public_logistic())),
         ValueError, r"'z' \(StandardScaler\) learns from the records"),
]
# (END preprocessing)
# the private transformers: each parameter, checked before the budget is charged or a value read
def _private(outer=((0, 1),) * P, **params):
    return _prep("PrivateRangeScaler", outer, **{"epsilon": 1.0, **params})


def _private_fit(X_=X, **params):
    return _private(**params).fit(X_)


def _standard_fit(outer=((0, 1),) * P, X_=X, **params):
    return _prep("PrivateStandardScaler", outer, **{"epsilon": 1.0, **params}).fit(X_)


def _private_pipeline_fit(scaler_budget, **fit_params):
    from dpsolve import BudgetAccountant
    model = _prep("private_pipeline", _private(accountant=scaler_budget),
                  _public_logistic(row_norm=None, accountant=BudgetAccountant(5.0)))
    return model.fit(X, Y, **fit_params)


CATALOGUE += [
    case("private-outer_ranges-reversed", lambda: _private_fit(outer=[(1, 0)] * P),
         ValueError, r"outer_ranges\[0\] must have low < high"),
    case("private-outer_ranges-string", lambda: _private_fit(outer="0-1"), TypeError,
         "outer_ranges must be a"),
    case("private-outer_ranges-count", lambda: _private_fit(outer=[(0, 1)] * (P - 1)),
         ValueError, f"X has {P} columns, but PrivateRangeScaler's outer_ranges gives {P - 1}"),
    case("private-epsilon-zero", lambda: _private_fit(epsilon=0.0), ValueError, "epsilon"),
    case("private-epsilon-nan", lambda: _private_fit(epsilon=math.nan), ValueError, "epsilon"),
    case("private-epsilon-bool", lambda: _private_fit(epsilon=True), TypeError, "epsilon"),
    case("private-quantiles-reversed", lambda: _private_fit(quantiles=(0.9, 0.1)), ValueError,
         "quantiles must have q_low < q_high"),
    case("private-quantiles-above-one", lambda: _private_fit(quantiles=(0.0, 1.5)),
         ValueError, "quantiles"),
    case("private-quantiles-single", lambda: _private_fit(quantiles=0.5), ValueError,
         r"quantiles must be a pair"),
    case("private-feature_range", lambda: _private_fit(feature_range=(0, 2)), ValueError,
         r"feature_range must be \(0, 1\) or \(-1, 1\)"),
    case("private-random_state-negative", lambda: _private_fit(random_state=-1), ValueError,
         "random_state must be a non-negative int"),
    case("private-random_state-string", lambda: _private_fit(random_state="seed"), TypeError,
         "random_state must be None, an int or a numpy Generator"),
    case("private-accountant-number", lambda: _private_fit(accountant=1.0), TypeError,
         "accountant"),
    case("private-X-nan", lambda: _private_fit(X_=_with_nan(X)), ValueError,
         "X contains NaN"),
    case("private-transform-unfitted", lambda: _private().transform(X), ValueError,
         "not fitted"),
    case("private-row_norm_estimate-unfitted", lambda: _private().row_norm_estimate(),
         ValueError, "not fitted"),
    case("private-row_norm_bound-unfitted-broadcast", lambda: _private(
        outer=(0, 1)).row_norm_bound(), ValueError, "outer_ranges gives one entry for "
         "every column.*fit it first"),
    case("private-pipeline-accountant", lambda: _private_pipeline_fit(None), ValueError,
         "accountant must be the estimator's budget"),
    case("private-pipeline-fit-params", lambda: _private_pipeline_fit(
        None, dplogisticregression__rng=0), TypeError, "takes no fit parameters"),
    case("standard-ranges-reversed", lambda: _standard_fit(outer=[(1, 0)] * P), ValueError,
         r"ranges\[0\] must have low < high"),
    case("standard-ranges-count", lambda: _standard_fit(outer=[(0, 1)] * (P - 1)), ValueError,
         f"X has {P} columns, but PrivateStandardScaler's ranges gives {P - 1}"),
    case("standard-ranges-overflow", lambda: _standard_fit(outer=(-1e200, 1e200)), ValueError,
         "ranges: a width of .* overflows float64"),
    case("standard-epsilon-negative", lambda: _standard_fit(epsilon=-1.0), ValueError,
         "epsilon"),
    case("standard-clip-zero", lambda: _standard_fit(clip=0.0), ValueError, "clip"),
    case("standard-clip-bool", lambda: _standard_fit(clip=True), TypeError, "clip"),
    case("standard-random_state-float", lambda: _standard_fit(random_state=1.5), TypeError,
         "random_state must be None, an int or a numpy Generator"),
    case("standard-accountant-string", lambda: _standard_fit(accountant="pld"), TypeError,
         "accountant"),
    case("standard-X-nan", lambda: _standard_fit(X_=_with_nan(X)), ValueError,
         "X contains NaN"),
    case("standard-transform-unfitted", lambda: _prep(
        "PrivateStandardScaler", (0, 1), epsilon=1.0).transform(X), ValueError, "not fitted"),
    case("search-private-transformer", lambda: _search_with(_pipeline(
        _private(), _public_logistic())), ValueError, r"'s0' \(PrivateRangeScaler\) is "
         "fitted privately"),
]


def _frequent(candidates=("a", "b", "c"), **params):
    return _prep("PrivateCategoryEncoder", candidates, **{"epsilon": 1.0, **params})


def _frequent_fit(X_=_OBJECTS, **params):
    return _frequent(**params).fit(X_)


CATALOGUE += [
    case("frequent-candidates-string", lambda: _frequent_fit(candidates="abc"), TypeError,
         "candidates must be a list of categories"),
    case("frequent-candidates-empty", lambda: _frequent_fit(candidates=[["a"], []]),
         ValueError, r"candidates\[1\] is empty"),
    case("frequent-candidates-twice", lambda: _frequent_fit(candidates=["a", "a"]),
         ValueError, "candidates lists a category twice"),
    case("frequent-candidates-missing", lambda: _frequent_fit(candidates=["a", None]),
         ValueError, "candidates must hold categories"),
    case("frequent-candidates-count", lambda: _frequent_fit(candidates=[["a"]] * 3),
         ValueError, "X has 2 columns, but PrivateCategoryEncoder's candidates gives 3"),
    case("frequent-epsilon-zero", lambda: _frequent_fit(epsilon=0.0), ValueError, "epsilon"),
    case("frequent-epsilon-bool", lambda: _frequent_fit(epsilon=True), TypeError, "epsilon"),
    case("frequent-min_frequency-negative", lambda: _frequent_fit(min_frequency=-1),
         ValueError, "min_frequency must be an int >= 0"),
    case("frequent-min_frequency-one", lambda: _frequent_fit(min_frequency=1.0), ValueError,
         "min_frequency"),
    case("frequent-min_frequency-bool", lambda: _frequent_fit(min_frequency=True), TypeError,
         "min_frequency must be an int >= 0"),
    case("frequent-unknown", lambda: _frequent_fit(unknown="ignore"), ValueError,
         r"unknown must be one of \['bucket', 'zeros'\]"),
    case("frequent-random_state-negative", lambda: _frequent_fit(random_state=-1), ValueError,
         "random_state must be a non-negative int"),
    case("frequent-accountant-number", lambda: _frequent_fit(accountant=1.0), TypeError,
         "accountant"),
    case("frequent-transform-unfitted", lambda: _frequent().transform(_OBJECTS), ValueError,
         "not fitted"),
    case("frequent-row_norm_estimate-unfitted", lambda: _frequent().row_norm_estimate(),
         ValueError, "not fitted"),
    case("search-private-encoder", lambda: _search_with(_pipeline(
        _frequent(), _public_logistic())), ValueError, r"'s0' \(PrivateCategoryEncoder\) is "
         "fitted privately"),
]
# -- the command line ----------------------------------------------------------------------------
def _cli(*argv):
    """``dpsolve.cli.main(argv)`` in-process, as the console script runs it. It must stop with
    exit status 2 (returned, or argparse's SystemExit) and one ``dpsolve: error: ...`` line on
    stderr (after argparse's usage line, if any), never a traceback (an exception out of main);
    the message comes back as a ValueError for the catalogue's match."""
    import contextlib
    import io

    from dpsolve.cli import main
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(list(argv))
        except SystemExit as exc:
            status = exc.code
        except Exception as exc:            # the console script would print a traceback
            raise AssertionError(f"dpsolve {' '.join(argv)} raised {exc!r}") from exc
    lines = err.getvalue().strip().splitlines()
    assert status == 2, (status, lines)
    assert lines and lines[-1].startswith("dpsolve: error: "), lines
    # argparse's usage, its continuation lines indented
    assert all(line.startswith(("usage: ", " ")) for line in lines[:-1]), lines
    raise ValueError(lines[-1])


def _cli_with(files, *argv, after=None):
    """:func:`_cli` with ``files`` (name: text, array or None for a folder) in a new temporary
    folder, ``{d}`` in the arguments and the texts standing for it; then ``after(folder)``."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for name, content in files.items():
            path = Path(d, name)
            if content is None:
                path.mkdir()
            elif isinstance(content, np.ndarray) and name.endswith(".npy"):
                np.save(path, content)
            elif isinstance(content, np.ndarray):
                np.savetxt(path, content, delimiter=",")
            elif isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content.replace("{d}", d))
        try:
            _cli(*(a.replace("{d}", d) for a in argv))
        finally:
            if after is not None:
                after(Path(d))


_SWEEP = {"data": 'source = "synthetic"\nn = 40\np = 3\n',
          "problem": 'loss = "logistic"\nradius = 1.0\n',
          "solver": 'name = "clipped_gd"\nepsilon = 1.0\ndelta = 1e-6\nsteps = 3\n'}


def _cli_run(out="{d}/r.db", files=(), **tables):
    """``dpsolve run`` of a small sweep with one table replaced; the results database must not
    have been created (the sweep is refused before)."""
    parts = {**_SWEEP, **tables}
    text = ('name = "bad"\nreplicates = 1\n[data]\n' + parts["data"] + "[problem]\n"
            + parts["problem"] + "[[solver]]\n" + parts["solver"])
    def no_database(folder):
        assert not (folder / "r.db").exists(), "the database was created"

    _cli_with({"s.toml": text, **dict(files)}, "run", "{d}/s.toml", "--out", out, "--jobs", "1",
              "--quiet", after=no_database)


def _cli_solve(*argv, files=None):
    """``dpsolve solve`` on a CSV file of valid data (``{d}/d.csv``)."""
    files = {"d.csv": np.column_stack([X, Y]), **(files or {})}
    _cli_with(files, "solve", "--epsilon", "1", "--delta", "1e-5", *argv)


#: A raw table and its public schema, for ``dpsolve solve --schema``.
RAW_CSV = "income,age,plan,churned\n50000,40,basic,1\n,30,legacy,0\n20000,61,,1\n"
SCHEMA_TOML = ('[label]\ncolumn = "churned"\nclasses = [0, 1]\n[columns.income]\n'
               'range = [0, 250000]\nmissing = 40000\n[columns.age]\nrange = [18, 100]\n'
               '[columns.plan]\ncategories = ["basic", "plus"]\n')


def _cli_schema(schema, *argv):
    """``dpsolve solve --data raw.csv --schema s.toml`` with ``schema`` as the schema's text."""
    _cli_solve("--data", "{d}/raw.csv", "--schema", "{d}/s.toml", *argv,
               files={"raw.csv": RAW_CSV, "s.toml": schema})


def _cli_report(*argv, files=None):
    _cli_with(files or {}, "report", *argv)


def _cli_report_foreign():
    """``dpsolve report`` on an SQLite database that is not a results database."""
    import sqlite3
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        con = sqlite3.connect(Path(d, "foreign.db"))
        con.execute("CREATE TABLE other (a)")
        con.commit()
        con.close()
        _cli("report", str(Path(d, "foreign.db")))


def _toml(**fields):
    """A TOML table's lines, ``key = value`` (each value TOML text)."""
    return "".join(f"{key} = {value}\n" for key, value in fields.items())


def _cli_run_synthetic(**fields):
    """``dpsolve run`` on synthetic data of n = 40, p = 3 with ``fields`` (TOML values) replaced
    or added."""
    return lambda: _cli_run(data=_toml(source='"synthetic"', **{"n": "40", "p": "3", **fields}))


CATALOGUE += [
    # dpsolve run: every setting of every run, before any run and before the database exists
    case("cli-run-n-negative", _cli_run_synthetic(n="-5"),
         ValueError, r"data\.n = -5: n must be an integer >= 1"),
    case("cli-run-n-0", _cli_run_synthetic(n="0"), ValueError, r"data\.n = 0: .*>= 1"),
    case("cli-run-n-string", _cli_run_synthetic(n='"many"'),
         ValueError, r"data\.n = \"many\": .*accepted: an integer >= 1"),
    case("cli-run-n-bool", _cli_run_synthetic(n="true"),
         ValueError, r"data\.n = true: n must be an integer, got bool"),
    case("cli-run-n-float", _cli_run_synthetic(n="30.5"),
         ValueError, r"data\.n = 30\.5: n must be an integer, got float"),
    case("cli-run-p-negative", _cli_run_synthetic(p="-1"), ValueError, r"data\.p = -1"),
    case("cli-run-noise-negative", _cli_run_synthetic(noise="-1.0"),
         ValueError, r"data\.noise = -1\.0: noise must lie in \[0, inf\)"),
    case("cli-run-file-without-path", lambda: _cli_run(data=_toml(source='"file"')), ValueError,
         r"data\.path: source 'file' needs path"),
    case("cli-run-file-missing", lambda: _cli_run(data=_toml(source='"file"', path='"nope.csv"')),
         ValueError, r"data\.path nope\.csv: no such file"),
    case("cli-run-file-empty",
         lambda: _cli_run(data=_toml(source='"file"', path='"{d}/e.csv"'), files={"e.csv": ""}),
         ValueError, r"data\.path .*e\.csv: the file holds no rows"),
    case("cli-run-loss-unknown", lambda: _cli_run(problem=_toml(loss='"bogus"')), ValueError,
         r"problem\.loss = \"bogus\": loss must be one of"),
    case("cli-run-radius-string",
         lambda: _cli_run(problem=_toml(loss='"logistic"', radius='"big"')),
         ValueError, r"problem\.radius = \"big\": radius must be a number > 0, or \"none\""),
    case("cli-run-label_bound-negative",
         lambda: _cli_run(problem=_toml(loss='"squared"', label_bound="-1")), ValueError,
         r"problem\.label_bound = -1: label_bound must lie in \(0, inf\)"),
    case("cli-run-n_classes-huge",
         lambda: _cli_run(problem=_toml(loss='"multinomial"', n_classes="1000000000")),
         ValueError,
         r"problem\.n_classes = 1000000000: n_classes must be an integer in \[2, 65536\]"),
    case("cli-run-labels-outside-classes",
         lambda: _cli_run(problem=_toml(loss='"logistic"', classes="[5, 7]")), ValueError,
         r"problem: y holds labels outside classes"),
    case("cli-run-steps-0",
         lambda: _cli_run(solver='name = "clipped_gd"\nepsilon = 1.0\ndelta = 1e-6\nsteps = 0\n'),
         ValueError, r"solver\[0\]\.steps = 0: steps must be an integer >= 1"),
    case("cli-run-epsilon-negative",
         lambda: _cli_run(solver='name = "clipped_gd"\nepsilon = -1.0\ndelta = 1e-6\n'),
         ValueError, r"solver\[0\]\.epsilon = -1\.0: epsilon must lie in \(0, inf\)"),
    case("cli-run-delta-above-paper-range",      # noisy_sgd's noise (3) needs delta < 1/n^3
         lambda: _cli_run(solver='name = "noisy_sgd"\nepsilon = 0.5\ndelta = 1e-3\n'),
         ValueError, r"solver\[0\]\.delta = 0\.001: delta must lie in \(0, 1\.5625e-05\)"),
    case("cli-run-calibration-unknown",
         lambda: _cli_run(solver='name = "noisy_sgd"\nepsilon = 0.5\ndelta = 1e-6\n'
                                 'calibration = "zzz"\n'),
         ValueError, r"solver\[0\]\.calibration = \"zzz\": calibration must be one of"),
    case("cli-run-parties-above-n",
         lambda: _cli_run(solver='name = "multiparty_gd"\nparties = 100\nepsilon = 1.0\n'
                                 'delta = 1e-6\n'),
         ValueError, r"solver\[0\]\.parties = 100: parties must be at most n = 40"),
    case("cli-run-secure",
         lambda: _cli_run(solver='name = "clipped_gd"\nepsilon = 1.0\ndelta = 1e-6\n'
                                 'secure = true\n'),
         ValueError, r"solver\[0\]\.secure: not an option of clipped_gd"),
    case("cli-run-out-missing-folder", lambda: _cli_run(out="{d}/no/r.db"), ValueError,
         r"--out: the folder .* does not exist"),
    case("cli-run-out-not-a-database",
         lambda: _cli_run(out="{d}/x.csv", files={"x.csv": "1,2\n"}), ValueError,
         r"--out: .*x\.csv is not an SQLite database"),
    case("cli-run-sweep-missing", lambda: _cli_with({}, "run", "{d}/s.toml", "--out", "{d}/r.db"),
         ValueError, r"s\.toml: cannot read the sweep file"),
    # dpsolve report: read only, on a results database
    case("cli-report-missing", lambda: _cli_report("{d}/nope.db"), ValueError,
         r"no results database at .*nope\.db"),
    case("cli-report-empty", lambda: _cli_report("{d}/e.db", files={"e.db": ""}), ValueError,
         r"e\.db is empty, not a results database"),
    case("cli-report-not-a-database", lambda: _cli_report("{d}/t.db", files={"t.db": "text\n"}),
         ValueError, r"t\.db is not an SQLite database"),
    case("cli-report-directory", lambda: _cli_report("{d}/folder", files={"folder": None}),
         ValueError, r"folder is a directory"),
    case("cli-report-foreign-sqlite", _cli_report_foreign, ValueError,
         r"foreign\.db is an SQLite database but not a dpsolve results database"),
    case("cli-report-csv-missing-folder",
         lambda: _cli_report("{d}/e.db", "--csv", "{d}/no/c.csv", files={"e.db": ""}),
         ValueError, r"--csv .*: the folder .* does not exist"),
    # dpsolve solve: the outputs and the label set before the data are read
    case("cli-solve-out-missing-folder", lambda: _cli_solve("--data", "{d}/d.csv", "--out",
                                                            "{d}/no/fit.json"),
         ValueError, r"--out .*: the folder .* does not exist"),
    case("cli-solve-out-directory", lambda: _cli_solve("--data", "{d}/d.csv", "--out", "{d}"),
         ValueError, r"--out .*: .* is a directory"),
    case("cli-solve-n-classes-huge",
         lambda: _cli_solve("--data", "{d}/d.csv", "--loss", "multinomial", "--n-classes",
                            "1000000000"),
         ValueError, r"--n-classes must be an integer in \[2, 65536\]"),
    case("cli-solve-classes-one", lambda: _cli_solve("--data", "{d}/d.csv", "--classes", "-1"),
         ValueError, r"--classes / --n-classes: classes must hold exactly two labels"),
    case("cli-solve-data-missing", lambda: _cli_solve("--data", "{d}/nope.csv"), ValueError,
         r"--data .*nope\.csv: no such file"),
    case("cli-solve-data-suffix", lambda: _cli_solve("--data", "{d}/d.txt",
                                                     files={"d.txt": "1,2\n"}),
         ValueError, r"--data .*d\.txt: must be a \.npy, \.npz or \.csv file"),
    case("cli-solve-data-empty-csv", lambda: _cli_solve("--data", "{d}/e.csv",
                                                        files={"e.csv": ""}),
         ValueError, r"--data .*e\.csv: the file holds no rows"),
    case("cli-solve-labels-empty-csv",
         lambda: _cli_solve("--data", "{d}/x.csv", "--labels", "{d}/e.csv",
                            files={"x.csv": X, "e.csv": ""}),
         ValueError, r"--labels .*e\.csv: the file holds no rows"),
    case("cli-solve-csv-one-column", lambda: _cli_solve("--data", "{d}/y.csv",
                                                        files={"y.csv": Y[:, None]}),
         ValueError, r"--data .*y\.csv: a \.csv file without --labels needs at least two columns"),
    case("cli-solve-npy-without-labels", lambda: _cli_solve("--data", "{d}/x.npy",
                                                            files={"x.npy": X}),
         ValueError, r"--data .*x\.npy: an \.npy file of rows needs .*\(--labels\)"),
    case("cli-solve-csv-not-numbers", lambda: _cli_solve("--data", "{d}/h.csv",
                                                         files={"h.csv": "a,b\n1,1\n"}),
         ValueError, r"--data .*h\.csv: cannot be read"),
    case("cli-solve-schema-with-classes", lambda: _cli_schema(SCHEMA_TOML, "--classes", "0,1"),
         ValueError, r"--classes cannot be combined with --schema"),
    case("cli-solve-schema-missing", lambda: _cli_solve("--data", "{d}/raw.csv", "--schema",
                                                        "{d}/nope.toml",
                                                        files={"raw.csv": RAW_CSV}),
         ValueError, r"--schema .*nope\.toml: no such file"),
    case("cli-solve-schema-not-toml", lambda: _cli_schema("a = = b"), ValueError,
         r"--schema: .*s\.toml: not a TOML file"),
    case("cli-solve-schema-column-undescribed",
         lambda: _cli_schema(SCHEMA_TOML.replace("[columns.age]\nrange = [18, 100]\n", "")),
         ValueError, r"column 'age' of the table is not described"),
    case("cli-solve-schema-range-reversed",
         lambda: _cli_schema(SCHEMA_TOML.replace("[18, 100]", "[100, 18]")), ValueError,
         r"\[columns\.age\]\.range: must be \[low, high\]"),
    case("cli-solve-schema-label-not-in-table",
         lambda: _cli_schema(SCHEMA_TOML.replace('"churned"', '"left"')), ValueError,
         r"the label column 'left' is not in the table"),
    case("cli-solve-schema-classes-for-regression",
         lambda: _cli_schema(SCHEMA_TOML, "--loss", "squared"), ValueError,
         r"--loss squared needs the label's range"),
]
def _cli_run_text(text, *argv):
    """``dpsolve run`` of the sweep file ``text`` (str or bytes); the results database must not
    have been created."""
    def no_database(folder):
        assert not (folder / "r.db").exists(), "the database was created"

    _cli_with({"s.toml": text}, "run", "{d}/s.toml", "--out", "{d}/r.db", "--quiet", *argv,
              after=no_database)


_SWEEP_TEXT = ('name = "bad"\nreplicates = 1\n[data]\n' + _SWEEP["data"] + "[problem]\n"
               + _SWEEP["problem"] + "[[solver]]\n" + _SWEEP["solver"])

CATALOGUE += [
    # files the command reads: regular files, UTF-8 sweeps, a bounded number of runs
    case("cli-run-sweep-not-utf8",
         lambda: _cli_run_text(_SWEEP_TEXT.replace('"bad"', '"d\xe9mo"').encode("latin-1")),
         ValueError, r"cannot read the sweep file .*s\.toml: it is not UTF-8 text \(byte 0xe9 "
                     r"at line 1, column 10\); a sweep file is TOML, which must be UTF-8"),
    case("cli-run-sweep-directory",
         lambda: _cli_with({"folder.toml": None}, "run", "{d}/folder.toml", "--out", "{d}/r.db"),
         ValueError, r"cannot read the sweep file .*folder\.toml: is a directory, not a regular "
                     r"file"),
    case("cli-run-replicates-huge",
         lambda: _cli_run_text(_SWEEP_TEXT.replace("replicates = 1", "replicates = 1000000000")),
         ValueError, r"the sweep has 1 grid cells x 1000000000 replicates = 1000000000 runs, "
                     r"more than the 1000000"),
    case("cli-run-jobs-0", lambda: _cli_run_text(_SWEEP_TEXT, "--jobs", "0"),
         ValueError, r"argument --jobs: must be an integer in \[1, \d+\]"),
    case("cli-run-jobs-huge", lambda: _cli_run_text(_SWEEP_TEXT, "--jobs", "100000"),
         ValueError, r"argument --jobs: must be an integer in \[1, \d+\] \(4 worker processes "
                     r"per core"),
    case("cli-run-scheduler-local-huge",
         lambda: _cli_run_text(_SWEEP_TEXT, "--scheduler", "local:100000"),
         ValueError, r"--scheduler local:100000: N must be at most \d+"),
    case("cli-report-plots-missing-folder",
         lambda: _cli_report("{d}/e.db", "--plots", "{d}/no/figs", files={"e.db": ""}),
         ValueError, r"--plots .*figs: the folder .*no does not exist"),
    case("cli-report-plots-a-file",
         lambda: _cli_report("{d}/e.db", "--plots", "{d}/e.db", files={"e.db": ""}),
         ValueError, r"--plots .*e\.db: exists and is not a directory"),
    # dpsolve demo: every option before the sweep
    case("cli-demo-seed-negative", lambda: _cli("demo", "--seed", "-1", "--out", ""),
         ValueError, r"argument --seed: seeds are integers >= 0, got '-1'"),
    case("cli-demo-seeds-1", lambda: _cli("demo", "--seeds", "1", "--out", ""),
         ValueError, r"argument --seeds: must be an integer >= 2"),
    case("cli-demo-seeds-huge", lambda: _cli("demo", "--seeds", "1000000000", "--out", ""),
         ValueError, r"--seeds 1000000000: the sweep has \d+ grid cells x 1000000000 "
                     r"replicates"),
    case("cli-demo-out-format", lambda: _cli_with({}, "demo", "--out", "{d}/fig.xyz"),
         ValueError, r"--out .*fig\.xyz: cannot write a \.xyz figure: Format 'xyz' is not "
                     r"supported"),
    case("cli-demo-out-no-suffix", lambda: _cli_with({}, "demo", "--out", "{d}/fig"),
         ValueError, r"--out .*fig: needs a suffix that names the figure's format"),
    # dpsolve solve: each number by its option, before the data are read
    case("cli-solve-seed-negative", lambda: _cli_solve("--data", "{d}/d.csv", "--seed", "-1"),
         ValueError, r"argument --seed: seeds are integers >= 0, got '-1'"),
    case("cli-solve-epsilon-nan",
         lambda: _cli_with({}, "solve", "--data", "{d}/d.csv", "--epsilon", "nan"),
         ValueError, r"argument --epsilon: epsilon must be a number in \(0, inf\), got 'nan'"),
    case("cli-solve-delta-1", lambda: _cli_solve("--data", "{d}/d.csv", "--delta", "1"),
         ValueError, r"argument --delta: delta must be a number in \(0, 1\), got '1'"),
    case("cli-solve-reg-negative", lambda: _cli_solve("--data", "{d}/d.csv", "--reg", "-1"),
         ValueError, r"argument --reg: reg must be a number in \[0, inf\) or 'auto', got '-1'"),
    case("cli-solve-row-norm-inf", lambda: _cli_solve("--data", "{d}/d.csv", "--row-norm", "inf"),
         ValueError, r"argument --row-norm: row_norm must be a number in \(0, inf\)"),
    case("cli-solve-row-norm-huge",
         lambda: _cli_solve("--data", "{d}/d.csv", "--row-norm", "1e308", "--no-fit-intercept"),
         ValueError, r"--row-norm: row_norm must lie in \[1e-150, 1e\+150\]"),
    case("cli-solve-radius-nan", lambda: _cli_solve("--data", "{d}/d.csv", "--radius", "nan"),
         ValueError, r"argument --radius: radius must be a number in \(0, inf\) or 'none'"),
    case("cli-solve-intercept-scale-0",
         lambda: _cli_solve("--data", "{d}/d.csv", "--fit-intercept", "--intercept-scale", "0"),
         ValueError, r"argument --intercept-scale: intercept_scale must be a number in "
                     r"\(0, inf\)"),
    case("cli-solve-reg-word", lambda: _cli_solve("--data", "{d}/d.csv", "--reg", "often"),
         ValueError, r"argument --reg: reg must be a number in \[0, inf\) or 'auto', got "
                     r"'often'"),
    case("cli-solve-prior-share-1",
         lambda: _cli_solve("--data", "{d}/d.csv", "--prior-share", "1"),
         ValueError, r"argument --prior-share: prior_share must be a number in \[0, 1\) or "
                     r"'auto', got '1'"),
    case("cli-solve-label-bound-empty-range",
         lambda: _cli_solve("--data", "{d}/d.csv", "--loss", "squared", "--label-bound", "5,1"),
         ValueError, r"argument --label-bound: label_bound must be a number in \(0, inf\) or a "
                     r"range LOW,HIGH of finite numbers with LOW < HIGH, got '5,1'"),
    case("cli-solve-label-bound-classification",
         lambda: _cli_solve("--data", "{d}/d.csv", "--label-bound", "2"),
         ValueError, r"--label-bound bounds the labels of --loss squared, not of --loss "
                     r"logistic"),
    case("cli-solve-solver-needs-delta",
         lambda: _cli_with({"d.csv": np.column_stack([X, Y])}, "solve", "--data", "{d}/d.csv",
                           "--epsilon", "1", "--row-norm", "1", "--solver", "clipped_gd"),
         ValueError, r"--solver clipped_gd: clipped_gd needs epsilon and delta .*; give --delta "
                     r"\(well below 1/n\), or leave --solver at auto"),
    case("cli-solve-data-directory",
         lambda: _cli_solve("--data", "{d}/folder.csv", files={"folder.csv": None}),
         ValueError, r"--data .*folder\.csv: is a directory, not a regular file"),
]
# (END command line)


@pytest.mark.parametrize("call,error,match", CATALOGUE)
def test_bad_input_is_rejected_with_a_named_error(call, error, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # e.g. the delta >= 1/n warning on the way
        with pytest.raises(error, match=match):
            call()


def test_every_registered_solver_is_in_the_catalogue():
    from dpsolve.solvers import registry
    assert set(SOLVERS) == {spec.name for spec in registry()}


def test_catalogue_matches_the_docs():
    ids = {c.id for c in CATALOGUE}
    assert len(ids) == len(CATALOGUE), "duplicate case ids"
    text = (Path(__file__).resolve().parents[1] / "docs" / "bad_input.md").read_text()
    documented = set(re.findall(r"^\| `([^`]+)` \|", text, flags=re.M))
    assert documented == ids


@pytest.mark.parametrize("name", [
    # noisy_sgd: about 3 s, an RDP calibration over T = n^2 sampled steps; sco_sgd: about a
    # second, a PLD calibration of its Poisson-sampled steps at this delta
    pytest.param(name, marks=pytest.mark.slow) if name in ("noisy_sgd", "sco_sgd") else name
    for name in GAUSSIAN])
def test_delta_at_least_one_over_n_warns(name):
    # (noisy_sgd's default paper formula needs delta < 1/n^3 and refuses such a delta outright)
    extra = {"calibration": "rdp"} if name == "noisy_sgd" else {}
    with pytest.warns(dpsolve.PrivacyWarning, match="1/n"):
        SOLVERS[name](d=0.02, **extra)             # 1/n = 0.0167
