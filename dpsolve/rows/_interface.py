"""The reductions a solver asks of its rows, whatever stores them.

A solver reads X and y only through these: it never asks whether X is dense, CSR or cut into
chunks. Each storage is one backend (:class:`dpsolve.rows.MemoryRows` for a dense or CSR X in
this process, :class:`dpsolve.rows.RowChunks` for chunks held here or on Dask workers), and a
backend fixes the order of every sum it returns by the rows' layout alone (docs/rows.md).
"""


class Rows:
    """The rows of a :class:`~dpsolve.Problem` (X and its coded labels y), seen through the
    reductions solvers need.

    A backend implements every method below. Results are bit-identical for the same rows in
    the same layout: each backend computes a part's result with dpsolve's kernels or ordered
    products (:mod:`dpsolve._ordered_linalg`), and adds the parts' results in row order.

    Attributes
    ----------
    shape : tuple of int
        ``(n, p)``.
    dtype : numpy.dtype
        X's stored dtype (float32 or float64).
    random_access : bool
        Whether every row can be indexed at once in this process (X one array in memory): a
        cone solve, an active-set polish or a protocol that picks rows at random needs it.
    part_rows : tuple of int
        The rows of each part the backend sums separately, in order (one part for X in
        memory, one per chunk for rows in chunks): the public layout that fixes the order of
        the sums.
    """

    random_access = False

    def clipped_gradient_sum(self, theta, loss, clip, rows=None):
        """``sum_i CLIP_clip(grad loss(theta; x_i, y_i))`` and how many rows were clipped.

        Parameters
        ----------
        theta : ndarray, shape (p,) or (p, K)
            The parameter ((p, K) for the multinomial loss).
        loss : Loss
            The problem's loss object (``Problem.loss_object``): its kernel id and parameter,
            or the multinomial kernel.
        clip : float
            The clipping norm C of each row's gradient (``inf``: none, the plain gradient sum).
        rows : ndarray of intp, optional
            Sum over these rows only (read in place), where the backend takes indices.

        Returns
        -------
        total : ndarray, shape of theta
        clipped : int
            The number of clipped rows (private: never released).
        """
        raise NotImplementedError

    def poisson_sampler(self, rng, rate):
        """A source of clipped gradient sums over Poisson samples of the rows.

        Parameters
        ----------
        rng : numpy.random.Generator
            The fit's generator; what the sampler draws from it, and when, is the backend's
            (documented there), fixed by the layout.
        rate : float
            The probability q in (0, 1] that a row is in a sample.

        Returns
        -------
        callable
            ``sampler(theta, loss, clip)``: a fresh sample's clipped gradient sum (the sample,
            its size and the clipped count stay inside).
        """
        raise NotImplementedError

    def matvec(self, v):
        """``X @ v`` (one value, or K, per row), v of shape (p,) or (p, K)."""
        raise NotImplementedError

    def rmatvec(self, r):
        """``X.T @ r`` for r of shape (n,) or (n, K): a weighted sum of the rows."""
        raise NotImplementedError

    def weighted_gram(self, w):
        """``X^T diag(w) X`` (p, p) by fixed blocks of rows, w of shape (n,)."""
        raise NotImplementedError

    def fixed_order_gram(self, w):
        """``X^T diag(w) X`` with every entry summed over the rows in row order."""
        raise NotImplementedError

    def row_norms(self):
        """``||x_i||`` of every row, shape (n,)."""
        raise NotImplementedError

    def labels(self):
        """The coded labels y, shape (n,)."""
        raise NotImplementedError

    def map_parts(self, fn, *per_row, **kwargs):
        """``fn(X_part, y_part, *values_part, **kwargs)`` for every part, in row order.

        Parameters
        ----------
        fn : callable
            Picklable (module level) where parts live on other machines.
        *per_row : ndarray or None
            Values with one entry (or row) per row of X, cut by the parts; None stays None.
        **kwargs
            The same for every part.

        Returns
        -------
        list
            One result per part, in order.
        """
        raise NotImplementedError

    def sum_parts(self, fn, *per_row, shape):
        """The sum of :meth:`map_parts`'s results, in part order.

        Parameters
        ----------
        fn : callable
            As for :meth:`map_parts`.
        *per_row : ndarray or None
            As for :meth:`map_parts`.
        shape : tuple of int
            The shape of each part's result.

        Returns
        -------
        ndarray
            :class:`MemoryRows`: ``fn``'s result itself (one part, nothing to add);
            :class:`RowChunks`: ``out += part`` from zeros, in chunk order (the sums the
            driver has always made).
        """
        raise NotImplementedError
