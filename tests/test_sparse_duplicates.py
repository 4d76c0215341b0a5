"""Sparse X whose entries are stored more than once (COO, or CSR, CSC and BSR built from raw
arrays): the duplicates are summed in float64, as for the float64 copy, whatever X's dtype
(docs/conventions.md, "float32 data").

float32 is a storage format only: a Problem on a float32 sparse X must hold the rows of
``X.astype(np.float64)`` and give its releases' bits. Summing float32 duplicates in float32
rounds the sums; a sum that is not a float32 number makes the Problem hold X in float64.
"""
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

import dpsolve
from dpsolve import Problem
from dpsolve.reference import reference_minimizer

N, P = 120, 5


def _values(seed=0, exact=False):
    """Dense float32 rows of norm below 1 (no clipping at row_norm=1), labels, and the row and
    column of every nonzero; ``exact``: entries on a 2**-6 grid, so that every sum of two
    parts is a float32 number."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, P)) * (rng.random((N, P)) < 0.6)
    X /= 1.5 * np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-3)
    if exact:
        X = np.round(X * 64) / 64
    X32 = X.astype(np.float32)
    y = np.where(X32.astype(np.float64) @ np.linspace(1, -1, P) > 0, 1.0, -1.0)
    return X32, y


def _stored(data, rows, cols, shape, fmt):
    """The entries ``(rows, cols, data)`` as a matrix of format ``fmt`` that keeps their
    duplicates, in their order within each row (column for CSC)."""
    if fmt == "coo":
        return sparse.coo_array((data, (rows, cols)), shape=shape)
    major, minor = (rows, cols) if fmt != "csc" else (cols, rows)
    size = shape[0] if fmt != "csc" else shape[1]
    by = np.argsort(major, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(major, minlength=size))])
    if fmt == "csr":
        return sparse.csr_matrix((data[by], minor[by], indptr), shape=shape)
    if fmt == "csc":
        return sparse.csc_matrix((data[by], minor[by], indptr), shape=shape)
    return sparse.bsr_array((data[by].reshape(-1, 1, 1), minor[by], indptr), shape=shape)


def _with_duplicates(X32, fmt, seed=0):
    """``X32`` stored with every nonzero as three float32 parts in ``fmt``, the parts in a
    random storage order (a CSR/CSC row then holds unsorted duplicate indices)."""
    rng = np.random.default_rng(seed)
    row, col = np.nonzero(X32)
    v = X32[row, col]
    a = (v * np.float32(0.3)).astype(np.float32)
    b = (v * np.float32(0.45)).astype(np.float32)
    c = (v - a - b).astype(np.float32)
    data = np.concatenate([a, b, c])
    order = rng.permutation(data.size)
    return _stored(data[order], np.tile(row, 3)[order], np.tile(col, 3)[order], X32.shape,
                   fmt)


def _same_rows(A, B):
    """Two canonical CSR arrays hold the same entries (values compared in float64)."""
    return (np.array_equal(A.indptr, B.indptr) and np.array_equal(A.indices, B.indices)
            and A.data.astype(np.float64).tobytes() == B.data.astype(np.float64).tobytes())


FORMATS = ["coo", "csr", "csc", "bsr"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_float32_duplicates_give_the_float64_copys_rows_and_bits(fmt):
    X32, y = _values()
    S32 = _with_duplicates(X32, fmt)
    assert S32.dtype == np.float32
    before = [np.array(a, copy=True) for a in (S32.data, getattr(S32, "indices", S32.data))]
    P32 = Problem(S32, y, radius=1.0, reg=0.01)
    P64 = Problem(S32.astype(np.float64), y, radius=1.0, reg=0.01)
    assert _same_rows(P32.X, P64.X)
    # the sums of three float32 parts are not all float32 numbers: X is held in float64
    assert P32.X.dtype == np.float64
    for name in ("clipped_gd", "noisy_sgd"):
        solve = getattr(dpsolve, name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = solve(P32, 0.5, 1e-9, steps=20, rng=3).theta
            b = solve(P64, 0.5, 1e-9, steps=20, rng=3).theta
        assert a.tobytes() == b.tobytes(), name
    r32 = reference_minimizer(P32, cache=False)
    r64 = reference_minimizer(P64, cache=False)
    assert r32.theta.tobytes() == r64.theta.tobytes()
    # the caller's matrix is untouched
    assert np.array_equal(S32.data, before[0]) and S32.dtype == np.float32


@pytest.mark.parametrize("fmt", FORMATS)
def test_clipped_rows_agree_too_when_x_is_held_in_float64(fmt):
    """Rows above row_norm: with the sums held in float64, clipping is the float64 copy's."""
    X32, y = _values(seed=1)
    S32 = _with_duplicates(X32, fmt, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        P32 = Problem(S32, y, radius=1.0, reg=0.01, row_norm=0.3)
        P64 = Problem(S32.astype(np.float64), y, radius=1.0, reg=0.01, row_norm=0.3)
    assert _same_rows(P32.X, P64.X)


@pytest.mark.parametrize("fmt", FORMATS)
def test_duplicates_whose_sums_are_float32_numbers_stay_float32(fmt):
    X32, y = _values(seed=2, exact=True)
    row, col = np.nonzero(X32)
    half = X32[row, col] / np.float32(2)          # exact: the two halves sum back exactly
    S32 = _stored(np.concatenate([half, half]), np.tile(row, 2), np.tile(col, 2), X32.shape,
                  fmt)
    P32 = Problem(S32, y)
    assert P32.X.dtype == np.float32
    np.testing.assert_array_equal(P32.X.toarray(), X32)
    assert _same_rows(P32.X, Problem(S32.astype(np.float64), y).X)


def test_integer_duplicates_are_summed_in_float64_not_in_their_own_type():
    # int8: 100 + 100 wraps around to -56 when summed in int8
    X = sparse.coo_array((np.array([100, 100], np.int8), ([0, 0], [1, 1])), shape=(2, 3))
    P = Problem(X, [1, -1], row_norm=1000.0)
    assert P.X.dtype == np.float64
    np.testing.assert_array_equal(P.X.toarray(), [[0.0, 200.0, 0.0], [0.0, 0.0, 0.0]])


def test_float32_duplicates_summing_beyond_float32_range_are_finite():
    """Two finite float32 entries whose sum exceeds float32's range: X is finite, held in
    float64 (summed in float32 it was inf, and the finite X was refused as infinite)."""
    big = np.float32(3e38)
    X = sparse.coo_array((np.array([big, big]), ([0, 0], [1, 1])), shape=(2, 3))
    P = Problem(X, [1, -1], row_norm=1e39)
    assert P.X.dtype == np.float64
    assert P.X.toarray()[0, 1] == 2.0 * float(big)


def test_a_boolean_sparse_x_is_refused_as_a_dense_one_is():
    X = sparse.csr_array(np.eye(3, dtype=bool))
    with pytest.raises(TypeError, match="X must hold real numbers"):
        Problem(X, [1, -1, 1])
    with pytest.raises(TypeError, match="X must hold real numbers"):
        Problem(np.eye(3, dtype=bool), [1, -1, 1])


def test_the_problem_docstring_states_the_float32_promise_as_the_conventions_do():
    """Both say that a row dpsolve changes (clipped, or trimmed under the intercept's bound)
    is rounded to float32, the one exception to the bit-identity, and that duplicate sparse
    entries are summed in float64."""
    doc = " ".join(Problem.__doc__.split())
    assert "unless a row is changed" in doc
    assert "clipped onto ``row_norm``" in doc and "trimmed" in doc
    assert "Duplicate entries of a sparse X are summed in float64" in doc
    conventions = " ".join((Path(__file__).resolve().parents[1] / "docs"
                            / "conventions.md").read_text().split())
    assert "unless dpsolve changes a row" in conventions
    assert "duplicates are summed in float64" in conventions
