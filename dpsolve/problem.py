"""The ERM problem every solver, bound and reference minimiser works on.

Conventions (docs/conventions.md): mean-form objective
``F(theta) = (1/n) sum_i loss(<theta, x_i>; y_i) + (reg/2) ||theta||^2`` over the ball
``C = {||theta|| <= radius}`` (no constraint when ``radius is None``), rows bounded by
``row_norm`` (a public bound chosen before seeing the data), replace-one neighbours.

The multinomial (softmax) loss has a matrix parameter ``theta`` of shape (p, K): record i's loss
is ``-log softmax(theta^T x_i)_{y_i}``, norms of theta are Frobenius norms and the ball C is a
Frobenius ball. Everything else (mean form, ``row_norm``, neighbours) is as above.

With ``fit_intercept=True`` the Problem appends a public constant feature of value s
(``intercept_scale``) to every row after clipping the rows to the user's bound B; the parameter
gains a last entry (a last row for multinomial) and ``row_norm`` becomes ``sqrt(B^2 + s^2)``
(docs/intercepts.md). Solvers, bounds and certificates see an ordinary problem with one more
feature.
"""
import math
import warnings

import numpy as np
from scipy import sparse

from . import _ordered_linalg
from ._deprecation import property_alias
from ._row_ops import dual_row_norms, row_norms, scale_rows, scale_rows_onto
from .rows import RowChunks, is_row_chunks, rows_of
from .rows._storage import STORED_DTYPES  # noqa: F401 (a public name of this module)
from .rows._storage import (canonical_csr, frozen, read_only, sparse_canonical_copy,
                            stored_dtype)
from .rows._validation import caught_warnings, chunk_facts, merge_chunk_facts
from ._validation import check_choice, check_real
from .losses import DEFAULT_BINARY_CODINGS  # noqa: F401 (a public name of this module)
from .losses import LOSSES as _LOSS_CLASSES, Loss, Multinomial, check_huber_width, make_loss

LOSSES = tuple(_LOSS_CLASSES)      # the built-in ones (registered ones: dpsolve.losses.LOSSES)
#: The constraint sets: the l2 ball (the default) and the l1 ball, whose rows are bounded in
#: l-inf, the dual norm (docs/conventions.md, "The l1 geometry").
CONSTRAINTS = ("l2", "l1")
#: The binary classification losses (labels coded -1/+1).
CLASSIFICATION_LOSSES = tuple(name for name, cls in _LOSS_CLASSES.items()
                              if cls.classification and not cls.is_multinomial)
def reject_multinomial(problem, what, takers):
    """Raise a ValueError naming ``what`` (a solver or bound) if ``problem`` is multinomial.

    Called by everything written for a parameter vector in R^p before it does any work.

    Parameters
    ----------
    problem : Problem
        The problem to check.
    what : str
        The caller, named in the message.
    takers : sequence of str
        The solvers that take ``loss="multinomial"`` (``SolverSpec.losses`` in the registry),
        named in the message; the caller supplies them, as this module sits below the registry.

    Raises
    ------
    ValueError
        If the problem's loss is multinomial; the message lists ``takers``.
    """
    if problem.loss_object.is_multinomial:
        raise ValueError(
            f"{what} does not support loss='multinomial' (a (p, K) parameter); the solvers "
            f"that do are {', '.join(takers)}"
        )


#: Every positive constant of a Problem (B, R, lambda, B_y, h, s) and every constant derived
#: from them (L, beta, G, the minimiser's norm bound) must lie in this range: their squares and
#: products of a few of them then stay finite and nonzero in float64 (docs/bad_input.md,
#: "Numerical range"). Outside it the bounds, sensitivities, step sizes and noise scales
#: computed from them overflow or underflow.
CONSTANT_RANGE = (1e-150, 1e150)


def _in_range(value):
    low, high = CONSTANT_RANGE
    return low <= value <= high


def _safely(constant):
    """``constant()``, or inf where Python's float arithmetic raises OverflowError (``**``)."""
    try:
        return float(constant())
    except OverflowError:
        return math.inf


def public_classes(loss, classes, n_classes):
    """The public label set of ``loss`` from the ``classes`` / ``n_classes`` arguments, checked
    before any data is read: a tuple, or None for the squared loss.

    Binary losses: ``classes`` (two values) or the default ``(-1, 1)``. Multinomial:
    ``classes`` (K >= 2 values) or ``n_classes`` (``0 .. K-1``), one of them required. The
    rules are the loss's (:meth:`dpsolve.losses.Loss.public_classes`).

    Parameters
    ----------
    loss : str
        The loss's name (one of :data:`LOSSES`).
    classes : sequence or None
        The public labels (numbers or strings, distinct, finite): two for a binary loss
        (negative first), K >= 2 for multinomial; None for the default or with ``n_classes``.
        Must be None for the squared loss.
    n_classes : int or None
        Multinomial only: K >= 2, for the labels ``0 .. K-1``; not together with ``classes``.

    Returns
    -------
    tuple or None
        The label set, in the order given; None for the squared loss.

    Raises
    ------
    TypeError, ValueError
        For a label set that does not fit the loss (see above).
    """
    return _LOSS_CLASSES[check_choice(loss, "loss", tuple(_LOSS_CLASSES))].public_classes(
        classes, n_classes)


def _append_intercept_column(X, scale):
    """``X`` with a last column of the constant ``scale`` appended, as a new matrix.

    Dense input gives a new C-contiguous array (``X`` is not modified); a scipy.sparse matrix
    gives a new CSR matrix built with ``scipy.sparse.hstack`` (never densified). float32 X stays
    float32 when ``scale`` is a float32 number (``np.float32(scale) == scale``), so that the
    column holds s exactly; otherwise the new matrix is float64.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, p)
        The rows.
    scale : float
        The constant s of the new column.

    Returns
    -------
    ndarray or scipy.sparse.csr_array, shape (n, p + 1)
        ``[X, s 1]``; a sparse one canonical (sorted indices) with intp index arrays, as
        ``Problem`` holds X.
    """
    dtype = (np.float32 if X.dtype == np.float32 and float(np.float32(scale)) == scale
             else np.float64)
    if sparse.issparse(X):              # keep it sparse
        column = sparse.csr_array(np.full((X.shape[0], 1), scale, dtype=dtype))
        return canonical_csr(sparse.hstack([X, column], format="csr", dtype=dtype))
    X = np.asarray(X)
    out = np.empty((X.shape[0], X.shape[1] + 1), dtype=dtype)
    out[:, :-1] = X
    out[:, -1] = scale
    return out


def _intercept_row_norm(feature_row_norm, scale, constraint="l2"):
    """The row bound ``sqrt(B^2 + s^2)`` of the augmented rows, from public constants only
    (``max(B, s)``, exact, for ``constraint="l1"``, whose rows are bounded in l-inf).

    It must not depend on the data (it is public metadata: it sets L, the sensitivities and
    the noise), so rounding is not absorbed by nudging it to the rows' computed norms; instead
    :func:`_fit_rows_within` trims the few rows whose computed norm rounds above it.
    """
    if constraint == "l1":
        return max(feature_row_norm, scale)
    # float products overflow to inf (``**`` would raise OverflowError)
    if not math.isfinite(feature_row_norm * feature_row_norm + scale * scale):
        raise ValueError(f"row_norm**2 + intercept_scale**2 must be finite in float64, got "
                         f"row_norm={feature_row_norm:g}, intercept_scale={scale:g}")
    return math.hypot(feature_row_norm, scale)


def _fit_rows_within(X, bound):
    """Scale the features (all but the last, constant, column) of each row of ``X`` whose
    computed norm is above ``bound`` down until it is not, in place.

    Such rows have features of norm within rounding of B: ``||[x, s]||`` computed in float64 can
    exceed ``fl(sqrt(B^2 + s^2))`` by an ulp. Trimming the row (a change of an ulp or so, as the
    clipping itself makes) keeps the public bound exact and data-independent. The factor grows
    at each round so that the loop ends whatever the values. The norms are computed in float64
    from the stored values; for float32 X the factor starts at float32's largest number below
    1, so that each round moves the float32 entries.
    """
    if sparse.issparse(X):
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        features = X.indices != X.shape[1] - 1         # every entry but the constant's
    norms = row_norms(X)
    shrink = _first_shrink(X.dtype)
    while np.any(still := norms > bound):
        if shrink == 0.0:   # unreachable for normal floats: s alone never rounds above B~
            raise RuntimeError("could not fit the augmented rows within the row bound")
        if sparse.issparse(X):
            X.data[still[rows] & features] *= shrink
            norms = row_norms(X)
        else:
            X[still, :-1] *= shrink
            norms[still] = np.linalg.norm(np.asarray(X[still], dtype=np.float64), axis=1)
        shrink *= shrink


def _checked_norms(X, constraint="l2"):
    """:func:`~dpsolve._row_ops.dual_row_norms` of X (dense or CSR), refusing non-finite
    entries: one pass over X by blocks of rows, one float64 per row kept. A NaN or infinite
    entry makes its row's norm NaN or inf; only the rows whose norm is not finite are then
    read again."""
    with np.errstate(invalid="ignore", over="ignore"):
        norms = dual_row_norms(X, constraint)
    suspect = np.flatnonzero(~np.isfinite(norms))
    for start in range(0, suspect.size, 4096):
        rows = X[suspect[start:start + 4096]]
        if not np.all(np.isfinite(rows.data if sparse.issparse(rows) else rows)):
            raise ValueError("X contains NaN or infinite values")
    return norms


def _first_shrink(dtype):
    """The largest number below 1 in X's dtype: the first factor of the nudge loops, the
    smallest change that moves every entry of a row."""
    one = np.dtype(dtype).type(1)
    return np.nextafter(one, one.dtype.type(0))


def _checked_constraint(constraint, radius, loss):
    """``constraint`` checked against the radius and the loss (an object or its class),
    before any data is read."""
    constraint = check_choice(constraint, "constraint", CONSTRAINTS)
    if constraint == "l1" and radius is None:
        raise ValueError("constraint='l1' needs a radius (the l1 ball {||theta||_1 <= R}); "
                         "radius=None (no constraint) is for constraint='l2' only")
    if constraint == "l1" and loss.is_multinomial:
        raise ValueError("constraint='l1' is for a parameter vector; loss='multinomial' "
                         "(a (p, K) parameter) takes constraint='l2' only")
    return constraint


def _validated_chunk(X, y, kwargs):
    """One chunk of rows validated where it lives, as a Problem of its own: its rows and
    labels, and the public facts the driver adds up
    (:func:`dpsolve.rows._validation.chunk_facts`)."""
    with caught_warnings() as caught:
        problem = Problem(X, y, **kwargs)
    return ((problem.X, problem.y),
            chunk_facts(problem, X, y, kwargs.get("classes"), caught))


class Problem:
    """A regularised, constrained ERM problem with a convex loss of a linear model.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix, shape (n, p)
        Feature rows; the caller's array is never modified (nor its flags). float32 values are
        kept in float32 and float64 in float64; every other real dtype is converted to float64.
        float32 is a storage format only: every operation on the entries (norms, margins,
        gradients, Gram matrices, bounds, certificates) runs in float64 on their exact values,
        so every release equals, bit for bit, the one on ``X.astype(np.float64)``, unless a
        row is changed: a row clipped onto ``row_norm``, or with ``fit_intercept`` trimmed to
        fit the augmented bound, is rounded to float32, so it and every release computed from
        it may differ from the float64 copy's in the last bits (docs/conventions.md, "float32
        data"). Duplicate entries of a sparse X are summed in float64, as for its float64
        copy; X stays float32 only when every sum is a float32 number, else it is held in
        float64.
        A C-contiguous float32 or float64 ndarray (an ``np.memmap`` included) that nothing can
        write to (read-only, and so is every array in its ``.base`` chain) is not copied when
        no row needs clipping: ``Problem.X`` is then a read-only view of it. X is copied once,
        in its kept dtype, when it is writable (or a read-only view of a writable array, which
        its owner could still change), not C-contiguous, of another dtype, has rows to clip,
        or with ``fit_intercept``. Checking X reads it once, by blocks of rows (the row norms,
        one float64 per row while it runs). A memory-mapped X must not be changed on disk while a
        Problem uses it. A scipy.sparse matrix or array is copied once to a canonical
        ``scipy.sparse.csr_array`` (CSC, COO and the other formats converted; sorted indices,
        duplicates summed in float64; float32 data kept as above) and never densified; boolean
        entries are refused, as for dense X. The solvers registered with
        ``sparse=True`` take it, the others refuse it (docs/sparse.md).

        X may also be a ``dask.array.Array`` chunked by rows only (y then a Dask array with
        the same row chunks, or a numpy array), or a :class:`dpsolve.chunked.RowChunks` (y
        then None: the chunks carry their labels). Each chunk is validated on the worker that
        holds it, as a Problem of its own with these parameters (clipping, label coding and the
        intercept column are per row; one warning gives the total clipped count), and stays
        there: ``Problem.X`` is the validated RowChunks and ``Problem.y`` the coded labels
        gathered to this process (one value per row). The solvers registered with
        ``chunked=True`` (``clipped_gd``, ``dp_sgd``, ``output_perturbation``,
        ``phased_erm``) take it: each chunk's partial sums (clipped gradients, gradients of the
        inner solves) are computed on its worker by dpsolve's kernels, added here in chunk
        order, and the noise is drawn here; X itself never comes here (docs/cluster.md, "Rows on the workers"). The others, which
        need random access to the rows, refuse it before any work.
        :func:`dpsolve.reference_minimizer` (Newton for the smooth losses) and its certificate
        take it too. A fit is bit-identical to the same chunks held locally
        (``RowChunks.from_arrays``) and, with one chunk, to the plain in-memory Problem
        (except ``dp_sgd``, whose Poisson sample is drawn chunk by chunk).
    y : array_like, shape (n,)
        Labels, each one of the public ``classes`` for the classification losses (see
        ``classes``); for ``"squared"``, real targets with ``|y_i| <= label_bound``.
    loss : {"logistic", "hinge", "squared", "huber_hinge", "multinomial"} or Loss
        Per-sample loss, by name or as an object of :mod:`dpsolve.losses` carrying its
        parameters (``HuberHinge(width)``, ``Squared(label_bound)``, ``Multinomial(K)``, which
        then give ``huber_width``, ``label_bound`` or ``n_classes``; or your own loss,
        docs/adding_a_loss.md). The per-sample loss of the margin ``z = <theta, x>`` (docs/conventions.md, "Losses and their
        constants"). ``"huber_hinge"`` (Chaudhuri-Monteleoni-Sarwate 2011) is the hinge loss
        with its kink replaced by a parabola of width ``huber_width``: with ``m = y z`` it is 0 for
        ``m > 1 + h``, ``(1 + h - m)^2 / (4h)`` for ``|1 - m| <= h`` and ``1 - m`` for
        ``m < 1 - h``. It is differentiable with ``|loss'| <= 1`` and ``loss'' <= 1/(2h)``.
        ``"multinomial"`` is the softmax (cross-entropy) loss for K classes,
        ``-log softmax(theta^T x)_y`` with ``theta`` of shape (p, K); its gradient
        ``x (softmax(theta^T x) - e_y)^T`` has Frobenius norm at most ``sqrt(2) B`` and its
        Hessian in the logits, ``diag(s) - s s^T`` (s the softmax), has norm at most 1/2.
    radius : float or None
        Radius R of the constraint ball ``C = {||theta||_2 <= R}`` (the Frobenius norm for
        multinomial; ``{||theta||_1 <= R}`` with ``constraint="l1"``); ``None`` means no
        constraint, which needs ``reg > 0`` so that a minimiser exists (refused with
        ``constraint="l1"``).
    constraint : {"l2", "l1"}, default "l2"
        The geometry of C. ``"l2"``: the Euclidean ball, rows bounded in l2. ``"l1"``: the l1
        ball ``{||theta||_1 <= R}`` (sparse models; Talwar-Thakurta-Zhang 2015), rows bounded
        in **l-inf** (``row_norm`` bounds ``max_j |x_ij|``, the dual norm), checked and
        clipped in l-inf; the margin bound ``|<theta, x>| <= R B`` then holds by Hoelder, so
        every constant keeps its formula, read in the (l1, l-inf) pair of norms
        (docs/conventions.md, "The l1 geometry"). Needs a radius; not for multinomial. Only
        the solvers registered with it in ``SolverSpec.constraints`` take it.
    reg : float, default 0
        L2 regularisation ``lambda >= 0``; the objective is ``lambda``-strongly convex.
    row_norm : float, default 1
        Public bound B on ``||x_i||_2`` (on ``||x_i||_inf`` with ``constraint="l1"``). It must be chosen without looking at the data: privacy
        guarantees are stated in terms of it.
    label_bound : float, default 1
        Public bound B_y on ``|y_i|`` for the squared loss (ignored otherwise).
    huber_width : float, default 0.5
        Width ``h > 0`` of the quadratic piece of the huber_hinge loss (stored, but ignored by
        the other losses; ``loss=HuberHinge(h)`` sets it too). Smaller ``h`` is closer to the
        hinge loss (``0 <= huber_hinge - hinge <= h/4``) and less smooth (smoothness ``B^2/(2h)``).
    clip_rows : bool, default True
        Rows with ``||x_i|| > row_norm`` (l-inf with ``constraint="l1"``) are scaled onto the
        bound (keeping their direction), with a warning giving the
        count (the count depends on the data: it is shown to the data holder, never stored).
        With ``False`` such rows raise ``ValueError`` instead.
    classes : sequence, optional
        The public label set of a classification loss, chosen without looking at the data (like
        ``row_norm``): for the binary losses exactly two values, ``classes[0]`` the negative
        class (mapped to -1) and ``classes[1]`` the positive one (+1); for ``"multinomial"``
        K >= 2 values, ``y == classes[k]`` mapped to k (column k of theta). The order is the
        one given. Without it, binary labels must be in {-1, +1} or in {0, 1} (0 is read as
        -1) and ``classes`` is ``(-1, 1)``; multinomial needs ``classes`` or ``n_classes``.
        Labels outside the set raise ValueError; a dataset in which only some of the classes
        occur is valid. Not for ``"squared"``.
    n_classes : int, optional
        Multinomial only: K, with the labels ``0 .. K-1`` (the same as
        ``classes=range(K)``).
    fit_intercept : bool, default False
        Fit an intercept: after the rows are checked and clipped to ``row_norm`` (B), a
        constant column of value s (``intercept_scale``) is appended to ``X``, so theta gains a
        last entry (for multinomial a last row: the K intercepts) that sits inside the ball and
        the regulariser like every other. The rows' bound becomes ``sqrt(B^2 + s^2)``
        (``row_norm``; ``feature_row_norm`` keeps B), and every sensitivity follows from it as
        for any other problem. See docs/intercepts.md.
    intercept_scale : float, default 1
        The constant s > 0 of the intercept column (stored, but ignored without
        ``fit_intercept``). The effective offset is ``s theta[-1]``: with ``||theta|| <= R``
        it is at most ``s R`` in magnitude, and a larger s makes it cheaper to move (less
        norm, less regularisation), but raises the row bound, hence L, the sensitivities and
        the noise. A smaller s adds less noise but limits the offset to ``|b| <= s R``.

    Notes
    -----
    Everything a solver releases besides its noisy parameters must be public. A label set read
    off the data is not: mapping labels to -1/+1 by the sorted order of the values present lets
    one replaced record (relabelled to a new value) flip every label, and taking K from the
    values present lets one record change theta's shape; both break any privacy guarantee
    (epsilon = infinity under replace-one). Hence ``classes``.

    Numerical range: ``reg`` (when not 0), ``radius``, ``row_norm``, ``label_bound``,
    ``huber_width``, ``intercept_scale`` and the constants derived from them (L, beta, the
    gradient bound, the minimiser's norm bound) must lie in :data:`CONSTANT_RANGE`,
    ``[1e-150, 1e150]``, so that the squares and products the solvers and bounds take of them
    stay finite and nonzero in float64; outside it a ValueError names the parameters, before
    any data is read. A row whose norm overflows float64 is clipped onto ``row_norm`` like any
    other (its norm is computed after scaling by its largest entry).

    Attributes
    ----------
    X, y : ndarray (X: or scipy.sparse.csr_array)
        The validated data (read-only), labels mapped to -1/+1 (float64) for the binary
        classification losses and to 0 .. K-1 (intp) for multinomial. ``X`` is float32 when
        the X given was (dense, or sparse with every duplicate sum a float32 number), else
        float64; it may be a view of the caller's
        read-only array (see ``X`` above). With ``fit_intercept``, ``X`` is the augmented matrix
        ``[X_clipped, s 1]`` of shape (n, n_features + 1), float32 only when s is a float32
        number (``np.float32(s) == s``), so that the column holds s exactly.
    row_norm : float
        The public bound on the norms of the rows of ``X``: the ``row_norm`` given (B), or
        ``sqrt(B^2 + s^2)`` with ``fit_intercept``. Every constant (``lipschitz``,
        ``smoothness``, ...) and every solver use it.
    feature_row_norm : float
        The ``row_norm`` given, B: the bound on the user's features alone.
    fit_intercept : bool
        Whether ``X`` carries the intercept column.
    intercept_scale : float
        The constant s of the intercept column.
    classes : tuple or None
        The public label set: ``(negative, positive)`` for the binary classification losses
        (``(-1, 1)`` unless given), the K classes for multinomial (``y == k`` means
        ``classes[k]``); None for squared.
    n, p : int
        Number of records, and the number of columns of ``X`` (theta's first dimension): the
        user's features plus one with ``fit_intercept``.
    n_features : int
        The number of the user's features (``p - 1`` with ``fit_intercept``, else ``p``).
    loss_object : dpsolve.losses.Loss
        The loss as an object: its constants (Lipschitz, smoothness, curvature, loss at zero),
        its label coding, conjugate and kernel id (:attr:`loss` is its name, a string).
        ``loss_function`` is a deprecated alias.
    n_classes : int or None
        K for multinomial, 2 for the binary classification losses, None for squared (public:
        ``len(classes)``).
    theta_shape : tuple
        ``(p,)``, or ``(p, K)`` for multinomial; with ``fit_intercept`` the last entry (row) is
        the intercept's (:meth:`split_theta`).
    """

    #: The class's default, for a Problem pickled before constraints existed (an instance
    #: always sets its own).
    constraint = "l2"

    def __init__(self, X, y, loss="logistic", *, radius=1.0, constraint="l2", reg=0.0,
                 row_norm=1.0,
                 label_bound=1.0, huber_width=0.5, clip_rows=True, classes=None,
                 n_classes=None, fit_intercept=False, intercept_scale=1.0):
        loss_object = loss if isinstance(loss, Loss) else None
        if loss_object is not None:
            # the object carries its parameters: they are the Problem's (huber_width, ...)
            given, loss = loss_object.describe(), loss_object.name
            huber_width = given.get("huber_width", huber_width)
            label_bound = given.get("label_bound", label_bound)
            if classes is None and n_classes is None:
                n_classes = given.get("n_classes")
        self.loss = loss if loss_object else check_choice(loss, "loss", tuple(_LOSS_CLASSES))
        self.reg = check_real(reg, "reg", low=0.0, low_inclusive=True)
        self.radius = None if radius is None else check_real(radius, "radius", low=0.0)
        if self.radius is None and self.reg == 0.0:
            raise ValueError("radius=None (no constraint) needs reg > 0 so that a minimiser exists")
        self.constraint = _checked_constraint(constraint, self.radius,
                                              loss_object or _LOSS_CLASSES[self.loss])
        self.feature_row_norm = check_real(row_norm, "row_norm", low=0.0)
        self.label_bound = check_real(label_bound, "label_bound", low=0.0)
        self.huber_width = check_huber_width(huber_width)
        if not isinstance(clip_rows, (bool, np.bool_)):
            raise TypeError(f"clip_rows must be a bool, got {type(clip_rows).__name__}")
        if not isinstance(fit_intercept, (bool, np.bool_)):
            raise TypeError(f"fit_intercept must be a bool, got {type(fit_intercept).__name__}")
        self.fit_intercept = bool(fit_intercept)
        self.intercept_scale = check_real(intercept_scale, "intercept_scale", low=0.0)
        # public constants only: the augmented rows' bound never depends on the data
        self.row_norm = (_intercept_row_norm(self.feature_row_norm, self.intercept_scale,
                                             self.constraint)
                         if self.fit_intercept else self.feature_row_norm)
        self.classes = (loss_object or _LOSS_CLASSES[self.loss]).public_classes(classes, n_classes)
        if isinstance(loss_object, Multinomial) and len(self.classes) != loss_object.n_classes:
            raise ValueError(f"loss=Multinomial({loss_object.n_classes}) does not match the "
                             f"{len(self.classes)} classes given")
        #: The loss as an object carrying its constants and kernel id (dpsolve.losses).
        self.loss_object = loss_object or make_loss(self.loss, huber_width=self.huber_width,
                                                    label_bound=self.label_bound,
                                                    n_classes=self.n_classes)
        self._check_numerical_range()
        if is_row_chunks(X):
            # every chunk validated where it lives, as a Problem of its own with these
            # parameters: clipping, labels and the intercept column are per row
            self.X, self.y = self._validate_chunks(X, y, dict(
                loss=self.loss_object, radius=self.radius, constraint=self.constraint,
                reg=self.reg,
                row_norm=self.feature_row_norm, clip_rows=bool(clip_rows), classes=classes,
                n_classes=n_classes, fit_intercept=self.fit_intercept,
                intercept_scale=self.intercept_scale))
            return
        self.X = self._validate_X(X, bool(clip_rows))
        if self.fit_intercept:
            self.X = _append_intercept_column(self.X, self.intercept_scale)
            if self.constraint == "l2":     # in l-inf, max(B, s) holds the rows exactly
                _fit_rows_within(self.X, self.row_norm)
        self.y = self._validate_y(y, self.X.shape[0], default_coding=classes is None)
        read_only(self.X)
        self.y.flags.writeable = False

    # -- validation ------------------------------------------------------------------------
    def _check_numerical_range(self):
        """Refuse, before any data is read, constants outside :data:`CONSTANT_RANGE`: the
        parameters themselves, then the constants derived from them, each named with the
        parameters it depends on."""
        low, high = CONSTANT_RANGE
        span = (f"[{low:g}, {high:g}], the range of a Problem's constants (their squares and "
                "products must stay finite and nonzero in float64; docs/bad_input.md, "
                "\"Numerical range\")")
        loss = self.loss_object
        given = {"reg": self.reg, "radius": self.radius, "row_norm": self.feature_row_norm}
        given.update(loss.scale_parameters())           # label_bound, huber_width
        if self.fit_intercept:
            given["intercept_scale"] = self.intercept_scale
        for name, value in given.items():
            if value is None or (name == "reg" and value == 0.0):
                continue
            if not _in_range(value):
                zero = "be 0 or " if name == "reg" else ""
                raise ValueError(f"{name} must {zero}lie in {span}, got {value:g}")
        # Each derived constant is a product of two or three parameters, so computing it cannot
        # raise; an inf here is structural (no smoothness for hinge, no L for squared without a
        # radius, no G without a radius) and is skipped.
        rows = ["row_norm"] + (["intercept_scale"] if self.fit_intercept else [])
        lipschitz_of = rows + list(loss.lipschitz_depends_on)
        derived = []
        if self.fit_intercept:
            derived.append(("the row bound sqrt(row_norm^2 + intercept_scale^2)",
                            self.row_norm, rows))
        if math.isfinite(self.lipschitz):
            derived.append(("the Lipschitz constant L", self.lipschitz, lipschitz_of))
            if self.radius is not None:
                derived.append(("the gradient bound G = L + reg radius", self.gradient_bound,
                                lipschitz_of + ["reg", "radius"]))
        if loss.smooth:
            derived.append(("the smoothness beta", _safely(lambda: self.smoothness),
                            rows + list(loss.smoothness_depends_on)))
        if self.radius is None:
            derived.append(("the bound sqrt(2 loss(0) / reg) on the minimiser's norm",
                            _safely(lambda: math.sqrt(2.0 * loss.max_value_at_zero()
                                                      / self.reg)),
                            ["reg"] + list(loss.scale_parameters())))
        for what, value, names in derived:
            if not _in_range(value):
                values = ", ".join(f"{name}={given[name]:g}" for name in dict.fromkeys(names))
                raise ValueError(f"{values} put {what} = {value:.3g} outside {span}; rescale "
                                 "X (and y) and the bounds")

    def _validate_chunks(self, X, y, kwargs):
        """Rows in chunks validated on their workers: the validated RowChunks and the coded
        labels gathered to the driver (one value per row, read-only)."""
        if getattr(type(X), "_row_chunks", False) is True:
            if y is not None:
                raise ValueError(f"y must be None when X is a RowChunks (its chunks carry the "
                                 f"labels), got {type(y).__name__}")
        else:
            X = RowChunks.from_dask(X, y)
        chunks, facts = X.derive(_validated_chunk, kwargs)
        n_clipped = merge_chunk_facts(facts, kwargs["loss"])
        if n_clipped:
            warnings.warn(f"{n_clipped} of {chunks.shape[0]} rows had "
                          f"{self._row_norm_name}norm above "
                          f"row_norm={self.feature_row_norm:g} and were clipped to it",
                          UserWarning, stacklevel=3)
        labels = chunks.labels()
        labels.flags.writeable = False
        return chunks, labels

    def _validate_X(self, X, clip_rows):
        """X checked, held in its stored dtype and clipped: a read-only view of the caller's
        array when nothing can change it and no row needs clipping, else one copy."""
        if sparse.issparse(X):
            X = self._validate_sparse_X(X)
            return self._clip_rows(X, clip_rows, _checked_norms(X, self.constraint))
        if hasattr(X, "toarray") or hasattr(X, "tocsr"):
            raise TypeError(f"X must be a numpy array or a scipy.sparse matrix, got "
                            f"{type(X).__name__}")
        X = np.asarray(X)
        if X.dtype == object or not (np.issubdtype(X.dtype, np.floating)
                                      or np.issubdtype(X.dtype, np.integer)):
            raise TypeError(f"X must hold real numbers, got dtype {X.dtype}")
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional (n, p), got shape {X.shape}")
        if X.shape[0] == 0 or X.shape[1] == 0:
            raise ValueError(f"X must have at least one row and one column, got shape {X.shape}")
        dtype = stored_dtype(X.dtype)
        own = X.dtype != dtype
        if own:                         # other dtypes: the one copy, in float64
            X = np.array(X, dtype=dtype, order="C", copy=True)
        # one pass over X (by blocks of rows): the norms, and the finiteness check with them
        norms = _checked_norms(X, self.constraint)
        if not own:
            if (X.flags.c_contiguous and frozen(X)
                    and not np.any(norms > self.feature_row_norm)):
                X = X.view(np.ndarray)  # shared: a view, so the caller's flags stay as they are
            else:
                X = np.array(X, dtype=dtype, order="C", copy=True)
        return self._clip_rows(X, clip_rows, norms)

    def _clip_rows(self, X, clip_rows, norms):
        """Scale the rows of X (dense or CSR, in place) above the user's bound B onto it
        (``norms``: the rows' norms in the constraint's dual norm, l2 or l-inf)."""
        bound = self.feature_row_norm       # the user's B: the intercept column comes after
        over = norms > bound
        # Rows normalised by the user can exceed the bound by a rounding error: clip those
        # silently; warn about (or refuse) only real excess.
        beyond_rounding = norms > bound * (1.0 + 1e-12)
        if np.any(over):
            if not clip_rows and np.any(beyond_rounding):
                raise ValueError(
                    f"{int(beyond_rounding.sum())} rows of X have {self._row_norm_name}norm "
                    f"above row_norm={bound:g}; "
                    "pass clip_rows=True to clip them or choose a larger public bound"
                )
            # (a row whose norm overflows float64 is scaled first: bound / inf would zero it)
            scale_rows_onto(X, over, bound, norms, self.constraint)
            # Rounding can leave a scaled row an ulp above the bound (its norm computed in
            # float64 from the stored values): nudge it inside. The factor squares at each
            # round, so that the loop ends whatever the values; it starts one ulp below 1 in
            # X's dtype, so that every round moves a float32 row too.
            norms = dual_row_norms(X, self.constraint)
            shrink = _first_shrink(X.dtype)
            while np.any(still := norms > bound):
                if shrink == 0.0:   # unreachable: a row on the sphere is an ulp from it
                    raise RuntimeError("could not clip the rows within row_norm")
                scale_rows(X, np.where(still, shrink, 1.0))
                norms = dual_row_norms(X, self.constraint)
                shrink *= shrink
            if np.any(beyond_rounding):
                warnings.warn(
                    f"{int(beyond_rounding.sum())} of {X.shape[0]} rows had "
                    f"{self._row_norm_name}norm above "
                    f"row_norm={bound:g} and were clipped to it",
                    UserWarning, stacklevel=4,
                )
        return X

    @property
    def _row_norm_name(self):
        """The rows' norm in messages: ``""`` (l2) or ``"l-inf "``."""
        return "l-inf " if self.constraint == "l1" else ""

    def _validate_sparse_X(self, X):
        """A scipy.sparse X as a canonical CSR array with intp indices, copied once (CSC, COO
        and the other formats converted), never densified; duplicates summed in float64,
        float32 data kept when the values are float32 numbers
        (:func:`dpsolve.rows._storage.sparse_canonical_copy`), every other real dtype converted
        to float64. The finiteness check comes with the row norms (:func:`_checked_norms`)."""
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional (n, p), got shape {X.shape}")
        # booleans refused as for dense X (a bool is not a real number)
        if X.dtype.kind not in "iuf":
            raise TypeError(f"X must hold real numbers, got dtype {X.dtype}")
        if X.shape[0] == 0 or X.shape[1] == 0:
            raise ValueError(f"X must have at least one row and one column, got shape {X.shape}")
        return sparse_canonical_copy(X)

    def _validate_y(self, y, n, default_coding):
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != n:
            raise ValueError(f"y must have shape ({n},) to match X, got {y.shape}")
        return self.loss_object.code_labels(y, self.classes, default_coding)

    # -- shape and constants ---------------------------------------------------------------
    # the old name no longer read like ``loss`` (the loss's name)
    loss_function = property_alias(
        "loss_object", "Problem.loss_function is deprecated and will be removed in the next "
                       "release; use Problem.loss_object")

    @property
    def n(self):
        return self.X.shape[0]

    @property
    def p(self):
        return self.X.shape[1]

    @property
    def is_sparse(self):
        """Whether X is held as a sparse (CSR) matrix."""
        return sparse.issparse(self.X)

    @property
    def is_chunked(self):
        """Whether X is held in chunks of rows (a :class:`~dpsolve.chunked.RowChunks`, locally
        or on Dask workers): only the solvers registered with ``chunked=True`` take it."""
        return is_row_chunks(self.X)

    @property
    def rows(self):
        """X and y seen through the reductions solvers need (:class:`dpsolve.rows.Rows`),
        whatever stores them: take it once per pass of a solver (it keeps the row norms the
        clipped sums read)."""
        return rows_of(self.X, self.y)

    @property
    def n_features(self):
        """Number of the user's features: ``p - 1`` with ``fit_intercept`` (the intercept
        column is not one of them), else ``p``."""
        return self.p - 1 if self.fit_intercept else self.p

    @property
    def n_classes(self):
        """Number of classes: K for multinomial, 2 for the binary classification losses, None
        for squared."""
        return None if self.classes is None else len(self.classes)

    @property
    def theta_shape(self):
        """Shape of the parameter: ``(p,)``, or ``(p, K)`` for multinomial."""
        return self.loss_object.parameter_shape(self.p)

    @property
    def lipschitz(self):
        """Lipschitz constant L of each per-sample loss in theta over C (docs/conventions.md),
        in the constraint's norm: it bounds ``||grad loss||_2`` (l2), ``||grad loss||_inf``
        (l1: ``|loss'| ||x||_inf``, with the margin bound ``|<theta, x>| <= R B`` by Hoelder).

        ``B`` for logistic, hinge and huber_hinge (``|loss'| <= 1``); ``B (R B + B_y)`` for
        squared, which is infinite without a constraint; ``sqrt(2) B`` for multinomial in the
        Frobenius norm (``||x (s - e_y)^T||_F = ||x|| ||s - e_y||`` and
        ``||s - e_y||^2 <= 2 (1 - s_y)^2``). Sensitivities use L: the regulariser cancels between
        neighbours.
        """
        return self.loss_object.lipschitz(self.row_norm, self.radius)

    @property
    def gradient_bound(self):
        """Bound ``L + lambda R`` on the norm of a per-sample gradient of the regularised
        objective over C (step sizes use it); infinite without a constraint when ``reg > 0``.
        In l-inf for ``constraint="l1"`` (``||lambda theta||_inf <= lambda ||theta||_1``)."""
        if self.reg == 0.0:
            return self.lipschitz
        return math.inf if self.radius is None else self.lipschitz + self.reg * self.radius

    @property
    def smoothness(self):
        """Smoothness beta of the per-sample loss: ``B^2/4`` logistic, ``B^2`` squared,
        ``B^2/(2h)`` huber_hinge (``h = huber_width``), ``inf`` for hinge (not differentiable),
        ``B^2/2`` multinomial in the Frobenius norm: for a unit v, ``v^T (diag(s) - s s^T) v``
        is the variance of v's entries under the softmax s, at most
        ``(max_k v_k - min_k v_k)^2 / 4 <= 1/2`` (Popoviciu), and a direction V of theta moves
        the logits by ``V^T x``, of norm at most ``B ||V||_F``. For ``constraint="l1"`` the
        same numbers bound the gradient's change in l-inf per unit of l1
        (``|loss'(z) - loss'(z')| ||x||_inf`` with ``|z - z'| <= B ||theta - theta'||_1``)."""
        return self.loss_object.smoothness(self.row_norm)

    @property
    def strong_convexity(self):
        """Strong convexity of the objective: lambda (``reg``), in the l2 norm whatever the
        constraint (the regulariser is ``(lambda/2) ||theta||_2^2``)."""
        return self.reg

    @property
    def diameter(self):
        """Diameter ``||C||_2 = 2R`` of the constraint set (the ``||C||_2`` of
        Bassily-Smith-Thakurta 2014), inf if none; ``2R`` in l1 for ``constraint="l1"``."""
        return math.inf if self.radius is None else 2.0 * self.radius

    # -- objective -------------------------------------------------------------------------
    def _theta(self, theta):
        theta = np.asarray(theta, dtype=np.float64)
        if theta.shape != self.theta_shape:
            last = (" (its last entry is the intercept's: fit_intercept=True)"
                    if self.fit_intercept else "")
            raise ValueError(f"theta must have shape {self.theta_shape} for loss={self.loss!r}"
                             f"{last}, got {theta.shape}")
        if not np.all(np.isfinite(theta)):
            raise ValueError("theta contains NaN or infinite values")
        return np.ascontiguousarray(theta)

    def margins(self, theta):
        """``X @ theta``: shape (n,), or the (n, K) logits for multinomial (by blocks of rows
        on dpsolve's threads: :meth:`dpsolve.rows.Rows.matvec`)."""
        return self.rows.matvec(self._theta(theta))

    def _loss_values(self, z):
        return self.loss_object.values(z, self.y)

    def _loss_derivatives(self, z):
        return self.loss_object.derivatives(z, self.y)

    def objective(self, theta):
        """Mean-form objective ``F(theta) = (1/n) sum_i loss + (reg/2) ||theta||^2``.

        Evaluated anywhere in R^p (or R^{p x K}; the constraint is not checked here).
        """
        theta = self._theta(theta)
        values = self._loss_values(self.rows.matvec(theta))
        flat = theta.reshape(-1)
        # theta . theta in index order (not BLAS's dot, whose order depends on the CPU)
        return float(np.mean(values)
                     + 0.5 * self.reg * _ordered_linalg.fixed_order_dot(flat, flat))

    def gradient(self, theta):
        """Gradient of F, of theta's shape (for hinge, the subgradient with
        ``loss'(z) = -y 1[yz < 1]``; for multinomial ``(1/n) X^T (S - Y) + reg theta``, S the
        softmax rows and Y the one-hot labels)."""
        theta = self._theta(theta)
        rows = self.rows
        d = self._loss_derivatives(rows.matvec(theta))
        return rows.rmatvec(d) / self.n + self.reg * theta

    def loss_derivatives(self, theta):
        """``loss'(<theta, x_i>; y_i)`` for every record (used by certificates and solvers);
        for multinomial the (n, K) array of ``softmax(theta^T x_i) - e_{y_i}``."""
        return self._loss_derivatives(self.margins(theta))

    def loss_second_derivatives(self, theta):
        """``loss''(<theta, x_i>; y_i)`` for every record (0 for hinge; for huber_hinge
        ``1/(2h)`` on the quadratic piece, including its end points, and 0 elsewhere).
        Not defined for multinomial, whose second derivative is a K x K matrix per record."""
        return self.loss_object.second_derivatives(self.margins(theta), self.y)

    def split_theta(self, theta):
        """Split a parameter into the coefficients of the user's features and the intercept.

        With ``fit_intercept`` the last entry of theta (the last row, for multinomial)
        multiplies the constant feature s (``intercept_scale``), so the offset it adds to every
        margin is ``s theta[-1]``: that effective offset is returned, and
        ``X_user @ coef + intercept`` equals ``margins(theta)``. Without ``fit_intercept`` the
        coefficients are all of theta and the intercept is 0.

        Parameters
        ----------
        theta : array_like, shape ``theta_shape``
            A parameter of this problem, e.g. ``fit.theta``.

        Returns
        -------
        coef : ndarray, shape (n_features,) or (n_features, K)
            The coefficients of the user's features (a new array).
        intercept : float or ndarray of shape (K,)
            The effective offset ``s theta[-1]``: a float for the binary and squared losses,
            one per class for multinomial (0 without ``fit_intercept``).

        Raises
        ------
        ValueError
            If theta does not have shape ``theta_shape`` or holds non-finite values.
        """
        theta = self._theta(theta)
        multinomial = self.loss_object.is_multinomial
        if not self.fit_intercept:
            return theta.copy(), (np.zeros(self.n_classes) if multinomial else 0.0)
        coef = theta[:-1].copy()
        intercept = self.intercept_scale * theta[-1]
        return coef, (np.array(intercept) if multinomial else float(intercept))

    def _with_data(self, X, y):
        """The same problem (loss, constraint, regulariser, public bounds, label mapping) on
        already validated rows ``X, y`` (e.g. a subset of this problem's, held by a party); no
        re-validation, so a subset may hold a single class. Read-only views, not copies."""
        sub = object.__new__(type(self))
        sub.__dict__.update(self.__dict__)
        sub.y = y.view()
        if is_row_chunks(X):          # validated chunks: shared as they are
            sub.X = X
        else:
            sub.X = X if sparse.issparse(X) else X.view()
            read_only(sub.X)
        sub.y.flags.writeable = False
        return sub

    def _with_reg(self, reg):
        """The same problem and rows (shared, read-only) with the regulariser ``reg``."""
        reg = check_real(reg, "reg", low=0.0, low_inclusive=True)
        if self.radius is None and reg == 0.0:
            raise ValueError("radius=None (no constraint) needs reg > 0 so that a minimiser exists")
        sub = object.__new__(type(self))
        sub.__dict__.update(self.__dict__)
        sub.reg = reg
        return sub

    def describe(self):
        """Public description of the problem (no data-dependent values beyond n and p).

        ``huber_width`` is included only for huber_hinge, ``n_classes`` only for
        multinomial, and ``fit_intercept``, ``intercept_scale`` and ``feature_row_norm`` (the
        ``row_norm`` given; ``row_norm`` is then the augmented rows' bound) only with
        ``fit_intercept``, and ``constraint`` only when it is not ``"l2"``, so the other
        problems' descriptions (and the reference cache keys
        made from them) are unchanged. ``p`` is the number of columns of ``X``.
        """
        own = self.loss_object.describe()     # huber_width, label_bound or n_classes
        d = {
            "loss": self.loss, "n": self.n, "p": self.p, "radius": self.radius, "reg": self.reg,
            "row_norm": self.row_norm, "label_bound": own.pop("label_bound", None),
        }
        d.update(own)
        if self.constraint != "l2":
            d["constraint"] = self.constraint
        if self.fit_intercept:
            d["fit_intercept"] = True
            d["intercept_scale"] = self.intercept_scale
            d["feature_row_norm"] = self.feature_row_norm
        return d

    def __repr__(self):
        d = self.describe()
        return "Problem(" + ", ".join(f"{k}={v!r}" for k, v in d.items() if v is not None) + ")"
