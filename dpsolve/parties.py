"""Who holds which rows: a partition of a Problem's records among m parties and a coordinator B.

The multi-party algorithms dpsolve implements (SGD1 across parties and SGD2 of the multi-party SGD
notes after Bassily-Smith-Thakurta 2014; Jayaraman et al. 2018's model aggregation and gradient
perturbation) are about what crosses between parties. dpsolve simulates
them in one process: each :class:`Party` holds copies of its own rows only and computes only on
them; whatever a solver passes between parties is a message the coordinator B can see.

Party sizes are public, as in those sources: their calibrations use them (``n_(1)``, the smallest).
"""
import math
import numbers

import numpy as np

from ._kernels import gd as _gd
from ._kernels import losses as _losses
from ._capabilities import sparse_solvers
from ._row_ops import refuse_sparse
from ._validation import check_int
from .problem import Problem


def check_parties(problem, parties, name="parties"):
    """Raise unless ``parties`` is a :class:`Parties` built on this very ``problem``.

    Parameters
    ----------
    problem : Problem
        The problem a solver was given.
    parties : object
        What it was given as the partition.
    name : str, default "parties"
        The argument's name in the messages (``"owners"`` for :func:`dpsolve.joint_sgd`).

    Raises
    ------
    TypeError
        If ``parties`` is not a Parties.
    ValueError
        If it partitions another Problem object (``parties.problem is not problem``).
    """
    if not isinstance(parties, Parties):
        raise TypeError(f"{name} must be a dpsolve.Parties, got {type(parties).__name__}")
    if parties.problem is not problem:
        raise ValueError(f"{name} must be a partition of this problem's rows (build it with "
                         f"Parties.from_sizes(problem, ...) or pass {name}.problem)")


class Party:
    """One data holder: its rows of the Problem, as read-only copies.

    Built by :class:`Parties`; not meant to be constructed directly.

    Parameters
    ----------
    index : int
        Position among the parties (0 .. m-1).
    rows : ndarray of int
        The Problem's row indices this party holds, sorted, without repeats.
    problem : Problem
        The whole problem: the party copies its rows and keeps the problem's settings, with no
        reference to the other rows.

    Attributes
    ----------
    index : int
        Position among the parties (0 .. m-1).
    rows : ndarray of int
        The Problem's row indices this party holds, ascending (read-only).
    X, y : ndarray
        Copies of those rows of ``problem.X`` and ``problem.y`` (read-only), labels already mapped;
        X in the Problem's dtype (float32 or float64).
    """

    def __init__(self, index, rows, problem):
        self.index = index
        self.rows = rows
        self.X = problem.X[rows]
        self.y = problem.y[rows]
        self._kind, self._h = problem.loss_object.kernel_id, problem.loss_object.kernel_param
        # the whole problem's settings on this party's rows only: no reference to other rows
        self._local = problem._with_data(self.X, self.y)
        # work arrays for the gradient-sum kernel (public shapes only)
        # in float64 on the exact values (float32 X is storage only)
        self._row_norms = np.linalg.norm(np.asarray(self.X, dtype=np.float64), axis=1)
        self._scratch = np.empty((64, problem.p))
        for a in (self.rows, self.X, self.y, self._row_norms):
            a.flags.writeable = False

    @property
    def n(self):
        """Number of records this party holds."""
        return self.rows.shape[0]

    def sgd1_message(self, theta, local_row, scale, reg, sigma, rng):
        """The SGD1 message (multi-party SGD notes) for one of this party's rows:
        ``G = scale (loss'(<theta, x>, y) x + reg theta) + sigma N(0, I_p)``, with ``scale = n``
        (the whole problem's size), computed in the order of ``_kernels/sgd.pyx`` so the result
        is the same bit for bit. Only this party's own row is read."""
        x = np.asarray(self.X[local_row], dtype=np.float64)
        z = 0.0
        for a, b in zip(x, theta):      # sequential, as the kernel's dot product
            z += float(a) * float(b)
        d = _losses.loss_derivatives(self._kind, np.array([z]), self.y[local_row:local_row + 1],
                                     self._h)[0]
        message = (scale * d) * x + (scale * reg) * theta
        if sigma > 0.0:
            message = message + sigma * rng.standard_normal(theta.shape[0])
        return message

    def _gradient_sum(self, theta):
        """``sum_{i in S_j} loss'(<theta, x_i>; y_i) x_i`` over this party's rows (the C kernel of
        :func:`dpsolve.clipped_gd` without clipping; both cores, bit-identical for any thread
        count). Un-noised: it never leaves the party except inside a noisy message."""
        out = np.empty(theta.shape[0])
        _gd.clipped_gradient_sum(self.X, self.y, self._kind, self._h, theta, self._row_norms,
                                 math.inf, out, self._scratch)
        return out

    def sgd2_message(self, theta, sigma, rng):
        """The SGD2 message (multi-party SGD notes):
        ``G_j = sum_{i in S_j} grad loss(theta; x_i, y_i) + b_j``, ``b_j ~ N(0, sigma^2 I_p)``
        drawn from this party's own Generator ``rng``. Only this party's rows are read. L2
        sensitivity ``2L`` (replace-one)."""
        message = self._gradient_sum(theta)
        if sigma > 0.0:
            message += sigma * rng.standard_normal(theta.shape[0])
        return message

    def aggregation_share(self, theta, weight):
        """This party's input to secure aggregation: ``weight * sum_{i in S_j} grad loss``.
        It is un-noised: secure aggregation reveals only the noisy sum of the shares
        (:class:`dpsolve.solvers.multiparty_gd.SecureAggregator`), never a share."""
        return weight * self._gradient_sum(theta)

    def local_problem(self):
        """This party's own ERM problem: its rows, with the whole Problem's loss, constraint,
        regularisation and public bounds (labels keep the whole problem's mapping, so a party
        may hold a single class)."""
        return self._local

    def __repr__(self):
        return f"Party(index={self.index}, n={self.n})"


class Parties:
    """A partition of a Problem's rows among m >= 2 parties, plus a coordinator B holding none.

    Build it with :meth:`from_sizes`, :meth:`from_indices` or :meth:`from_data`.

    Parameters
    ----------
    problem : Problem
        The whole problem.
    indices : list of array_like of int
        ``indices[j]``: the rows party j holds, at least one each; at least two parties, which
        together hold every row exactly once (TypeError or ValueError otherwise).

    Attributes
    ----------
    problem : Problem
        The whole problem (the union of the parties' rows); solvers use its constants.
    parties : tuple of Party
        The parties, in the order of ``indices``.
    owner : ndarray of int, shape (n,)
        ``owner[i]`` is the index of the party holding row i (read-only).
    """

    def __init__(self, problem, indices):
        if not isinstance(problem, Problem):
            raise TypeError(f"problem must be a dpsolve.Problem, got {type(problem).__name__}")
        refuse_sparse(problem, "Parties (the multi-party protocols)", sparse_solvers())
        if isinstance(indices, np.ndarray) or not hasattr(indices, "__len__"):
            raise TypeError("indices must be a list of integer arrays, one per party")
        if len(indices) < 2:
            raise ValueError(f"a partition needs at least 2 parties, got {len(indices)}")
        n = problem.n
        owner = np.full(n, -1, dtype=np.intp)
        rows_of = []
        for j, rows in enumerate(indices):
            rows = np.asarray(rows)
            if rows.ndim != 1 or not (rows.size == 0 or np.issubdtype(rows.dtype, np.integer)):
                raise TypeError(f"indices[{j}] must be a 1-D array of integers")
            if rows.size == 0:
                raise ValueError(f"party {j} holds no rows: every party needs at least one")
            if rows.min() < 0 or rows.max() >= n:
                raise ValueError(f"indices[{j}] has row indices outside [0, {n})")
            rows = np.sort(rows.astype(np.intp))
            if np.any(rows[1:] == rows[:-1]):
                raise ValueError(f"indices[{j}] lists a row more than once")
            taken = owner[rows] >= 0
            if np.any(taken):
                i = int(rows[np.argmax(taken)])
                raise ValueError(f"row {i} is given to party {int(owner[i])} and to party {j}: "
                                 "parties must not overlap")
            owner[rows] = j
            rows_of.append(rows)
        missing = np.flatnonzero(owner < 0)
        if missing.size:
            raise ValueError(f"{missing.size} rows belong to no party (the first is row "
                             f"{int(missing[0])}): the parties must cover every row")
        owner.flags.writeable = False
        self.problem = problem
        self.owner = owner
        self.parties = tuple(Party(j, rows, problem) for j, rows in enumerate(rows_of))

    @classmethod
    def from_sizes(cls, problem, sizes):
        """Consecutive blocks of rows: party j holds the next ``sizes[j]`` rows."""
        if not hasattr(sizes, "__len__"):
            raise TypeError("sizes must be a sequence of positive integers")
        sizes = [check_int(s, f"sizes[{j}]", low=1) for j, s in enumerate(sizes)]
        if sum(sizes) != problem.n:
            raise ValueError(f"sizes add up to {sum(sizes)}, but the Problem has n={problem.n} rows")
        edges = np.cumsum([0] + sizes)
        return cls(problem, [np.arange(a, b) for a, b in zip(edges[:-1], edges[1:])])

    @classmethod
    def from_indices(cls, problem, indices):
        """Party j holds the rows ``indices[j]``; together they must cover every row exactly once."""
        return cls(problem, indices)

    @classmethod
    def from_data(cls, datasets, loss="logistic", **problem_options):
        """Each party brings its own ``(X_j, y_j)``; the Problem is built on their concatenation
        (in party order) with ``loss`` and ``problem_options`` (``radius``, ``reg``, ...)."""
        if not hasattr(datasets, "__len__") or len(datasets) < 2:
            raise ValueError("from_data needs a list of at least 2 (X_j, y_j) pairs")
        Xs, ys = [], []
        for j, item in enumerate(datasets):
            if not (isinstance(item, (tuple, list)) and len(item) == 2):
                raise TypeError(f"datasets[{j}] must be a pair (X_j, y_j)")
            X_j, y_j = np.asarray(item[0]), np.asarray(item[1])
            if X_j.ndim != 2 or X_j.shape[0] == 0:
                raise ValueError(f"datasets[{j}]: X_j must be 2-dimensional with at least one "
                                 f"row, got shape {X_j.shape}")
            Xs.append(X_j)
            ys.append(y_j)
        widths = {X.shape[1] for X in Xs}
        if len(widths) != 1:
            raise ValueError(f"the parties' X_j have different numbers of columns: {sorted(widths)}")
        problem = Problem(np.concatenate(Xs), np.concatenate(ys), loss, **problem_options)
        return cls.from_sizes(problem, [X.shape[0] for X in Xs])

    def on(self, client, workers=None, aggregator=None):
        """These parties with each party's rows sent once to a Dask worker, where the
        per-party computations of the protocols that support it then run (docs/multiparty.md,
        "Parties on workers"). Needs ``dask.distributed`` (``pip install "dpsolve[dask]"``).

        Parameters
        ----------
        client : distributed.Client
            The cluster's client.
        workers : sequence of str, optional
            Worker addresses; party j goes to ``workers[j % len(workers)]``. Default: the
            client's workers.
        aggregator : str, optional
            The worker standing in for secure aggregation (it receives the parties' shares,
            never the coordinator); default the first of ``workers``.

        Returns
        -------
        RemoteParties
            A :class:`Parties` of the same problem and partition, whose :meth:`map`,
            :meth:`call` and :meth:`reduce` run on the workers: for ``noisy_sgd`` (SGD1, with
            ``steps`` given), ``multiparty_gd``, ``aggregated_output_perturbation`` and
            ``joint_sgd``.
        """
        return RemoteParties(self, client, workers, aggregator)

    @property
    def m(self):
        """Number of parties."""
        return len(self.parties)

    @property
    def sizes(self):
        """Records per party (public)."""
        return tuple(party.n for party in self.parties)

    @property
    def smallest(self):
        """``n_(1)``, the smallest party's size (Jayaraman et al. 2018's sensitivities use it)."""
        return min(self.sizes)

    # -- the transport: where each party's computations run -----------------------------------
    def _states(self):
        """Each party's state dict (created on first use)."""
        states = self.__dict__.get("_party_states")
        if states is None:
            states = self.__dict__.setdefault("_party_states", tuple({} for _ in self.parties))
        return states

    def map(self, fn, *args, each=None, gather=True):
        """``fn(party, state, *args)`` on every party, where the party computes (here; on its
        worker for parties on workers); the results in party order.

        Parameters
        ----------
        fn : callable
            A module-level function (it is sent to the workers by reference), called as
            ``fn(party, state, *args)``, or ``fn(party, state, each[j], *args)`` for party j
            when ``each`` is given. ``party`` is the :class:`Party`; ``state`` is a dict kept
            for that party between calls (a protocol's per-party objects: a noise stream, an
            owner's personalised block), the same dict in every call on that party.
        *args
            The same arguments for every party (sent to each).
        each : sequence, optional
            One more argument per party (``len(each) == m``).
        gather : bool, default True
            False: the results stay where they were computed (on the parties' workers), to be
            passed to :meth:`reduce` only; nobody else sees them.

        Returns
        -------
        list
            The m results (``gather=True``), or handles to them for :meth:`reduce`.
        """
        if each is not None and len(each) != self.m:
            raise ValueError(f"each must have one item per party ({self.m}), got {len(each)}")
        states = self._states()
        return [fn(party, state, *(() if each is None else (each[j],)), *args)
                for j, (party, state) in enumerate(zip(self.parties, states))]

    def call(self, j, fn, *args):
        """``fn(party_j, state_j, *args)`` on party j alone, where it computes (as :meth:`map`).
        Arguments travel to the party and the result back; an object that ``fn`` changes in
        place (a noise stream) is changed on the party's side only, so a protocol step returns
        what the caller needs back."""
        return fn(self.parties[j], self._states()[j], *args)

    def reduce(self, fn, results, *args):
        """``fn(list_of_results, *args)`` where secure aggregation runs (here; on the
        aggregator's worker for parties on workers), ``results`` from :meth:`map` (with
        ``gather=False``): only ``fn``'s result comes back. ``fn`` must be module-level."""
        return fn(list(results), *args)

    def __len__(self):
        return self.m

    def __getitem__(self, j):
        if not isinstance(j, numbers.Integral):
            raise TypeError("parties are indexed by integers")
        return self.parties[j]

    def __iter__(self):
        return iter(self.parties)

    def __repr__(self):
        return f"Parties(m={self.m}, sizes={self.sizes}, problem={self.problem!r})"


class RemoteParties(Parties):
    """A :class:`Parties` whose parties run on Dask workers (``Parties.on(client)``).

    Same problem, partition and public attributes as the in-process parties it was made from;
    ``parties[j]`` is still party j's in-process description (its rows stay on the driver too:
    the data were there to be partitioned), but :meth:`map` and :meth:`call` run on party j's
    worker (through its Dask actor, which keeps the party's state dict), ``map(...,
    gather=False)`` as tasks on the party's rows, and :meth:`reduce` on the aggregator's worker.
    The worker side is :mod:`dpsolve._remote_parties`.

    Parameters
    ----------
    parties : Parties
        The in-process parties to send (not already on workers: TypeError).
    client : distributed.Client
        The cluster's client.
    workers : sequence of str, optional
        Worker addresses; party j goes to ``workers[j % len(workers)]`` (default: the client's
        workers).
    aggregator : str, optional
        The worker standing in for secure aggregation (default: the first of ``workers``).

    Attributes
    ----------
    client : distributed.Client
    workers : tuple of str
        The worker holding each party.
    aggregator : str
        The worker that stands in for secure aggregation (runs :meth:`reduce`).
    data : tuple of distributed.Future
        Each party's rows, held on its worker.
    actors : tuple
        Each party's Dask actor (:class:`dpsolve._remote_parties.PartyActor`).
    """

    remote = True

    def __init__(self, parties, client, workers=None, aggregator=None):
        from ._remote_parties import PartyActor
        if isinstance(parties, RemoteParties):
            raise TypeError("these parties are already on workers")
        available = list(client.scheduler_info(n_workers=-1)["workers"])
        if workers is None:
            workers = available
        workers = list(workers)
        if not workers:
            raise ValueError("the client has no workers to hold the parties")
        unknown = [w for w in workers if w not in available]
        if unknown:
            raise ValueError(f"workers {unknown} are not the client's (its workers are "
                             f"{available})")
        if aggregator is None:
            aggregator = workers[0]
        elif aggregator not in available:
            raise ValueError(f"aggregator {aggregator!r} is not one of the client's workers "
                             f"({available})")
        self.aggregator = aggregator
        self.problem = parties.problem
        self.owner = parties.owner
        self.parties = parties.parties
        self.client = client
        self.workers = tuple(workers[j % len(workers)] for j in range(parties.m))
        # the rows go straight to their worker (scatter), not inside a task's description
        data = [client.scatter(party, workers=[where], hash=False)
                for party, where in zip(parties.parties, self.workers)]
        futures = [client.submit(PartyActor, held, held.key, workers=[where], actor=True,
                                 pure=False, allow_other_workers=False)
                   for held, where in zip(data, self.workers)]
        self.actors = tuple(f.result() for f in futures)
        self.data = tuple(data)             # each party's rows, held on its worker
        self._futures = futures             # keep the actors alive

    def map(self, fn, *args, each=None, gather=True):
        if each is not None and len(each) != self.m:
            raise ValueError(f"each must have one item per party ({self.m}), got {len(each)}")
        arguments = [(() if each is None else (each[j],)) + args for j in range(self.m)]
        if gather:                      # on the actors, at the same time
            calls = [actor.run(fn, a) for actor, a in zip(self.actors, arguments)]
            return [call.result() for call in calls]
        from ._remote_parties import run_on_party
        return [self.client.submit(run_on_party, held, held.key, fn, a, workers=[where],
                                   pure=False)
                for held, a, where in zip(self.data, arguments, self.workers)]

    map.__doc__ = Parties.map.__doc__

    def call(self, j, fn, *args):
        return self.actors[j].run(fn, args).result()

    call.__doc__ = Parties.call.__doc__

    def reduce(self, fn, results, *args):
        from ._remote_parties import run_on_aggregator
        return self.client.submit(run_on_aggregator, fn, args, *results,
                                  workers=[self.aggregator], pure=False).result()

    reduce.__doc__ = Parties.reduce.__doc__

    def __repr__(self):
        return (f"RemoteParties(m={self.m}, sizes={self.sizes}, workers={self.workers}, "
                f"problem={self.problem!r})")
