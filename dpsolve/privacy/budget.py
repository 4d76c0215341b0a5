"""A privacy budget across fits: :class:`BudgetAccountant`, and its parallel groups
(:class:`ParallelGroup`).

After diffprivlib's ``BudgetAccountant`` and Tumult's sessions, with dpsolve's accountants: the
budget composes the DpEvents of what it admitted (PLD or RDP, not a sum of epsilons) and refuses,
before any data is read, a release that would take the composition beyond ``(epsilon, delta)``.

Every release dpsolve makes reaches a budget through one function, :func:`charge`: it needs the
release's neighbour relation and its event, books the private estimates the release depends on,
and admits the lot or nothing. A budget lives in one process: a copy that pickling carries into
another process (joblib, Dask, multiprocessing) refuses every release, since what it admitted
could never reach the original.
"""
import contextlib
import dataclasses
import itertools
import math
import os
import secrets
import threading
import weakref

import dp_accounting

from .._validation import check_choice, check_real
from .accounting import NEIGHBOURS, _RELATIONS, check_event, epsilon_of

#: The relation of dpsolve's private estimates (:func:`~dpsolve.privacy.private_quantile`): n
#: is public, one record replaced.
ESTIMATE_NEIGHBOURS = "replace_one"

#: The budgets and groups alive in this process, by token: an unpickling in the same process
#: gives back the object itself (as copies do); in another process there is none to find.
_LIVE = weakref.WeakValueDictionary()

#: Beyond this many ways of placing the changed record among parallel groups' parts, the
#: groups are composed as if sequential (still a valid bound, a looser one).
MAX_PARALLEL_COMBINATIONS = 4096


class SharedByCopies:
    """A value that copies, deep copies and scikit-learn's clone return as itself: one budget
    (or one released estimate) however many estimators hold it, or each copy would be spent or
    charged on its own."""

    def __sklearn_clone__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self


class BudgetExceededError(ValueError):
    """A release was refused: with it, what the budget has admitted would exceed the budget."""


@dataclasses.dataclass(frozen=True)
class Charge:
    """One entry of a budget's ledger.

    Attributes
    ----------
    events : tuple of dp_accounting.DpEvent
        One event (a release on the whole dataset), or one per part of a parallel group
        (releases on disjoint parts of the records).
    labels : tuple of str
        What each release was (a solver's name, ``"private_quantile"``, ...).
    epsilon : float
        The epsilon of this charge alone at the budget's delta (the largest of a group's parts).
    """

    events: tuple
    labels: tuple
    epsilon: float


class BudgetAccountant(SharedByCopies):
    r"""A privacy budget ``(epsilon, delta)`` that composes the releases it admits.

    Pass it as ``accountant=`` to a solver function (``dpsolve.clipped_gd(problem, 1.0,
    accountant=budget)``), an estimator of :mod:`dpsolve.estimators`, a private quantile
    (:func:`dpsolve.privacy.estimate_row_norm`) or a private selection
    (:mod:`dpsolve.private_selection`), or call :meth:`spend` with a DpEvent and the neighbour
    relation it holds under. Each release is checked after its public checks and before it
    reads any data (:func:`charge`, the one path every release of dpsolve takes): if the
    composition of everything admitted so far and the new release would certify an epsilon
    above ``epsilon`` at ``delta``, a :class:`BudgetExceededError` (a ValueError) says the
    budget, what was spent and what the release needs, and nothing is charged.

    Parameters
    ----------
    epsilon : float
        The total epsilon, ``> 0``.
    delta : float, default 0
        The total delta, in [0, 1). With 0 only pure-DP releases are admitted, composed by
        adding their epsilons (exact at delta = 0).
    accountant : {"auto", "pld", "rdp"}, default "auto"
        How the ledger is composed at ``delta``: ``"pld"`` (privacy loss distributions;
        Gaussian compositions in closed form, (epsilon, delta)-DP parts as Kairouz, Oh &
        Viswanath's worst case), ``"rdp"`` (dp_accounting's Renyi accountant; the only one
        that reads Papernot & Steinke's selections), ``"auto"``: PLD where it reads the whole
        ledger, else RDP. A release the chosen accountant cannot read is refused (ValueError).
    neighbours : {"replace_one", "add_remove"}, default "replace_one"
        The neighbour relation of the budget; releases under another relation are refused.

    Notes
    -----
    Composition is adaptive: a later release may depend on earlier ones. Everything admitted is
    charged, also a fit that then fails (its data were read); a refused release charges
    nothing. A release under another neighbour relation than the budget's is refused: dpsolve's
    releases are private under replace-one neighbours (n public), and under add/remove some
    would reveal n outright.

    One process: copies, deep copies, scikit-learn's ``clone`` and a pickle unpickled in the
    same process are the budget itself; a pickle unpickled in another process (joblib's or
    Dask's workers, ``cross_val_score(..., n_jobs=2)``, a model saved and loaded again) is a
    copy that refuses every release with a ValueError, since what it admitted could never
    reach this budget. Run the releases charged to a budget in its process (``n_jobs=1``), or
    charge a parallel computation's whole event up front and run it with ``accountant=None``.

    Parallel composition (:meth:`parallel`): releases on disjoint parts of the records (a
    public, data-independent partition) together cost what one part's release costs, since a
    changed record lies in one part only; the ledger takes the worst placement of the record
    across all groups. The parts are the releases charged to the group object the block
    yields, never those charged to the budget itself, so a release charged from elsewhere
    (another thread, say) during the block is an ordinary sequential charge. A private
    estimate a part's release uses is charged sequentially (:func:`charge`).

    Examples
    --------
    >>> budget = BudgetAccountant(epsilon=2.0, delta=1e-6)
    >>> fit = dpsolve.output_perturbation(problem, 1.0, accountant=budget)  # doctest: +SKIP
    >>> budget.spent(), budget.remaining()                                 # doctest: +SKIP
    >>> with budget.parallel() as group:                                   # doctest: +SKIP
    ...     for part in parts:       # a partition fixed without looking at the data
    ...         dpsolve.output_perturbation(part, 1.0, accountant=group)
    """

    def __init__(self, epsilon, delta=0.0, accountant="auto", neighbours=NEIGHBOURS):
        self.epsilon = check_real(epsilon, "epsilon", low=0.0)
        self.delta = check_real(delta, "delta", low=0.0, high=1.0, low_inclusive=True)
        self.accountant = check_choice(accountant, "accountant", ("auto", "pld", "rdp"))
        self.neighbours = check_choice(neighbours, "neighbours", tuple(_RELATIONS))
        self._ledger = []
        self._groups = []       # the open parallel groups, in the order their blocks began
        self._lock = threading.RLock()
        self._detached = False  # True for a copy unpickled in another process
        self._token = secrets.token_hex(16)
        _LIVE[self._token] = self

    def __repr__(self):
        return (f"BudgetAccountant(epsilon={self.epsilon:g}, delta={self.delta:g}, "
                f"accountant={self.accountant!r}, neighbours={self.neighbours!r})")

    def __reduce__(self):
        # a pickle names the budget by its token: unpickled in this process it is the budget
        # itself, elsewhere a copy that refuses every release (_restore)
        with self._lock:
            state = {key: value for key, value in self.__dict__.items()
                     if key not in ("_lock", "_groups")}
            state["_ledger"] = list(self._ledger)
        return (_restore_budget, (type(self), self._token, os.getpid(), state))

    # -- composition ---------------------------------------------------------------------------
    def _epsilon_of(self, event, delta):
        """Epsilon of ``event`` at ``delta`` under the budget's accountant."""
        if delta == 0.0:
            return epsilon_of(event, 0.0, "basic", self.neighbours)
        if self.accountant != "auto":
            return epsilon_of(event, delta, self.accountant, self.neighbours)
        return epsilon_of(event, delta, None, self.neighbours)

    def _ledger_epsilon(self, ledger, delta):
        """Epsilon of a ledger (list of tuples of events) at ``delta``: the worst placement of
        the changed record among each parallel group's parts."""
        if not ledger:
            return 0.0
        sizes = [len(events) for events in ledger]
        if math.prod(sizes) > MAX_PARALLEL_COMBINATIONS:
            placements = [tuple(e for events in ledger for e in events)]
        else:
            placements = itertools.product(*ledger)
        return max(self._epsilon_of(dp_accounting.ComposedDpEvent(list(choice)), delta)
                   for choice in placements)

    def _entries(self, additions=()):
        """The ledger as tuples of events: the charges, then each open group's parts; with the
        releases ``additions`` (as in :meth:`_admit`) added as parts of their groups, or as
        sequential charges."""
        ledger = [c.events for c in self._ledger]
        for open_group in self._groups:
            parts = list(open_group._events) + [event for event, _, _, group in additions
                                                if group is open_group]
            if parts:
                ledger.append(tuple(parts))
        ledger.extend((event,) for event, _, _, group in additions if group is None)
        return ledger

    # -- the public interface ------------------------------------------------------------------
    def check(self, event, *, neighbours=None, label="release"):
        """Raise if admitting ``event`` would exceed the budget; charge nothing.

        Parameters
        ----------
        event : dp_accounting.DpEvent or Fit
            What the release will be (a fit's plan, dpsolve's convention; every parameter and
            count in range, :func:`~dpsolve.privacy.accounting.check_event`).
        neighbours : str
            The release's neighbour relation (``"replace_one"``, ``"add_remove"``, or a
            solver's wording such as ``"replace-one record"``); required (a Fit carries its
            own), and refused if not the budget's: an event alone does not say under which
            relation it is private.
        label : str, default "release"
            Named in the error.

        Returns
        -------
        float
            The epsilon the ledger would certify with the release admitted.

        Raises
        ------
        BudgetExceededError
            If that epsilon is above the budget's.
        ValueError
            If the event has a parameter or count out of range (negative, NaN, infinite), the
            accountant cannot read it, ``neighbours`` is missing or names no relation, the
            neighbour relations differ, or this is a copy of a budget unpickled in another
            process.
        """
        event, neighbours, label = _unwrap_fit(event, neighbours, label)
        with self._lock:
            return self._admit([(event, neighbours, label, None)], charge=False)

    def spend(self, event, *, neighbours=None, label="release"):
        """Admit and charge ``event`` (or a Fit's ``dp_event``), or raise as :meth:`check`.

        Parameters
        ----------
        event : dp_accounting.DpEvent or Fit
            The release.
        neighbours : str
            Its neighbour relation, required (a Fit carries its own), as in :meth:`check`.
        label : str, default "release"
            Named in the ledger and in errors.

        Returns
        -------
        float
            The epsilon the ledger certifies after the charge.
        """
        event, neighbours, label = _unwrap_fit(event, neighbours, label)
        with self._lock:
            return self._admit([(event, neighbours, label, None)], charge=True)

    def _admit(self, additions, charge):
        """Check the releases ``additions``, a list of ``(event, neighbours, label, group)``
        (``group`` None: a sequential charge; else a new part of that open group), and compose
        them with the ledger; charge them all if ``charge``, or none. Called under the lock."""
        if self._detached:
            raise ValueError(_DETACHED)
        for event, neighbours, label, group in additions:
            if not isinstance(event, dp_accounting.DpEvent):
                raise TypeError(f"event must be a dp_accounting DpEvent, got "
                                f"{type(event).__name__}")
            check_event(event)
            if neighbours is None:
                raise ValueError(
                    f"neighbours must be given with the {label}: the relation under which it "
                    f"is private, one of {sorted(_RELATIONS)} (the budget's is "
                    f"{self.neighbours!r}); an event alone does not say it")
            if _relation(neighbours) != self.neighbours:
                raise ValueError(f"the {label} is private under {neighbours} neighbours, the "
                                 f"budget under {self.neighbours}: they do not compose")
            if group is not None and group not in self._groups:
                raise ValueError(f"the parallel group of the {label} is closed: charge a group "
                                 "only inside its budget.parallel() block")
        label = " with ".join(dict.fromkeys(label for _, _, label, _ in reversed(additions)))
        candidate = self._entries(additions)
        try:
            total = self._ledger_epsilon(candidate, self.delta)
        except ValueError as exc:
            raise ValueError(f"the budget's accountant ({self.accountant}) cannot compose the "
                             f"{label} with the ledger: {exc}") from None
        if not total <= self.epsilon * (1.0 + 1e-9):
            spent = self._ledger_epsilon(self._entries(), self.delta)
            alone = self._epsilon_of(dp_accounting.ComposedDpEvent(
                [event for event, *_ in additions]), self.delta)
            raise BudgetExceededError(
                f"the {label} would exceed the privacy budget: the budget is (epsilon="
                f"{self.epsilon:g}, delta={self.delta:g}); {len(self._ledger)} release(s) "
                f"spent epsilon={spent:.4g}; the {label} needs epsilon={alone:.4g} alone, and "
                f"with what was spent the {self._accountant_name(candidate)} accountant "
                f"certifies epsilon={total:.4g}. Nothing was charged and the release did not run.")
        if charge:
            for event, _, label, group in additions:
                if group is not None:
                    group._events.append(event)
                    group._labels.append(label)
                else:
                    self._ledger.append(Charge((event,), (label,),
                                               self._epsilon_of(event, self.delta)))
        return total

    def _accountant_name(self, ledger):
        if self.delta == 0.0:
            return "basic"
        if self.accountant != "auto":
            return self.accountant
        from .accounting import tightest_accountant
        events = [e for events in ledger for e in events]
        return tightest_accountant(dp_accounting.ComposedDpEvent(events), self.neighbours)

    def spent(self, delta=None):
        """What the admitted releases certify: ``(epsilon, delta)``.

        Parameters
        ----------
        delta : float, optional
            In [0, 1); default the budget's.

        Returns
        -------
        tuple of float
            The epsilon the budget's accountant certifies for the ledger at ``delta``, and
            ``delta`` (0 for an empty ledger).
        """
        delta = self.delta if delta is None else check_real(delta, "delta", low=0.0, high=1.0,
                                                            low_inclusive=True)
        with self._lock:
            ledger = self._entries()
            return (self._ledger_epsilon(ledger, delta), delta if ledger else 0.0)

    def remaining(self):
        """The epsilon headroom at the budget's delta, ``epsilon - spent()[0]`` (>= 0).

        Composition under PLD or RDP is not additive: a release whose own epsilon is below the
        headroom composes to at most the budget under basic composition, and usually well
        below it; :meth:`check` is the exact test.

        Returns
        -------
        float
        """
        return max(self.epsilon - self.spent()[0], 0.0)

    @contextlib.contextmanager
    def parallel(self):
        """A group of releases on disjoint parts of the records, charged as one.

        ``with budget.parallel() as group:`` yields a :class:`ParallelGroup`; pass ``group``
        (not the budget) as ``accountant=`` to each release on one part, or call its
        :meth:`~ParallelGroup.spend`. Each release charged to the group is one part. The
        caller vouches that the parts are disjoint and that the partition does not depend on
        the data (e.g. fixed row ranges, or one part per party); the group then costs what its
        most expensive part costs, since a changed record lies in one part only. Releases
        charged to the budget itself during the block, from this thread or another, are
        ordinary sequential charges.

        Each part is checked against the budget when it is charged (with the group's other
        parts so far); at the end of the block the group enters the ledger as one
        :class:`Charge`. Groups do not nest (:meth:`ParallelGroup.parallel` raises a
        ValueError); a block opened while another is open (another thread's, say) is a group
        of its own, composed with the first as the worst placement of the record among both
        groups' parts, which is never below what a nested group would cost.

        Yields
        ------
        ParallelGroup
            The group; it refuses charges once the block ends.
        """
        if self._detached:
            raise ValueError(_DETACHED)
        group = ParallelGroup(self)
        with self._lock:
            self._groups.append(group)
        try:
            yield group
        finally:
            with self._lock:
                self._groups.remove(group)
                if group._events:
                    events = tuple(group._events)
                    self._ledger.append(Charge(
                        events, tuple(group._labels),
                        max(self._epsilon_of(e, self.delta) for e in events)))

    @property
    def ledger(self):
        """The charges admitted so far (a tuple of :class:`Charge`), oldest first; a parallel
        group enters when its block ends (:meth:`spent` counts its parts before)."""
        with self._lock:
            return tuple(self._ledger)

    def report(self):
        """A plain-text account: the budget, each charge, what was spent and what remains.

        Returns
        -------
        str
        """
        spent, _ = self.spent()
        lines = [f"privacy budget (epsilon={self.epsilon:g}, delta={self.delta:g}), "
                 f"{self.neighbours} neighbours, accountant={self.accountant}"]
        for k, charge in enumerate(self.ledger, 1):
            what = (charge.labels[0] if len(charge.labels) == 1 else
                    f"parallel group of {len(charge.labels)}: {', '.join(charge.labels)}")
            lines.append(f"  {k:>3}. {what}: epsilon={charge.epsilon:.4g} alone")
        lines.append(f"spent: epsilon={spent:.4g} at delta={self.delta:g} (composed); "
                     f"remaining headroom: {max(self.epsilon - spent, 0.0):.4g}")
        return "\n".join(lines)


class ParallelGroup(SharedByCopies):
    """The releases on disjoint parts of the records that one :meth:`BudgetAccountant.parallel`
    block charges as one group.

    Pass it as ``accountant=`` wherever a :class:`BudgetAccountant` is taken (the solvers,
    :func:`~dpsolve.privacy.private_quantile`, :mod:`dpsolve.private_selection`), or call
    :meth:`spend` with a DpEvent: each release charged to it is one part of the partition (two
    releases on the same part must be charged to the budget, or composed into one event). It
    refuses charges once its block ends. Like the budget, scikit-learn's ``clone`` and
    ``copy`` keep the group itself.

    Attributes
    ----------
    budget : BudgetAccountant
        The budget the group is charged to.
    """

    def __init__(self, budget):
        self.budget = budget
        self._events = []
        self._labels = []
        self._token = secrets.token_hex(16)
        _LIVE[self._token] = self

    def __reduce__(self):
        # as the budget's: the group itself in this process, elsewhere a group of the
        # budget's refusing copy
        return (_restore_group, (self.budget, self._token, os.getpid()))

    def __repr__(self):
        return f"<ParallelGroup of {len(self._labels)} part(s) of {self.budget!r}>"

    @property
    def labels(self):
        """What each part charged so far was (a tuple of str)."""
        with self.budget._lock:
            return tuple(self._labels)

    @property
    def ledger(self):
        """The budget's :attr:`~BudgetAccountant.ledger`, then this group's parts so far as one
        :class:`Charge` (if any): what a release may look up to tell whether it was charged."""
        with self.budget._lock:
            ledger = self.budget.ledger
            if not self._events:
                return ledger
            events = tuple(self._events)
            return ledger + (Charge(events, tuple(self._labels), max(
                self.budget._epsilon_of(e, self.budget.delta) for e in events)),)

    def check(self, event, *, neighbours=None, label="release"):
        """Raise if admitting ``event`` as a new part would exceed the budget; charge nothing.

        Parameters, return value and errors are those of :meth:`BudgetAccountant.check`, the
        release composed as one more part of this group; a ValueError also once the block
        has ended.
        """
        event, neighbours, label = _unwrap_fit(event, neighbours, label)
        with self.budget._lock:
            return self.budget._admit([(event, neighbours, label, self)], charge=False)

    def spend(self, event, *, neighbours=None, label="release"):
        """Admit and charge ``event`` (or a Fit's ``dp_event``) as a new part of the group, or
        raise as :meth:`check`.

        Parameters
        ----------
        event : dp_accounting.DpEvent or Fit
            The release on one part.
        neighbours : str
            Its neighbour relation, required (a Fit carries its own).
        label : str, default "release"
            As in :meth:`BudgetAccountant.spend`.

        Returns
        -------
        float
            The epsilon the budget's ledger certifies with this group so far.
        """
        event, neighbours, label = _unwrap_fit(event, neighbours, label)
        with self.budget._lock:
            return self.budget._admit([(event, neighbours, label, self)], charge=True)

    def parallel(self):
        """Refused: parallel groups do not nest.

        Raises
        ------
        ValueError
            Always. For parts split further, charge each sub-part to this group (the group
            costs its most expensive part either way), or open a separate
            ``budget.parallel()`` block.
        """
        raise ValueError("parallel groups do not nest: group.parallel() is not supported; "
                         "charge each sub-part to the group itself, or open another "
                         "budget.parallel() block")


def _unwrap_fit(event, neighbours, label):
    """``(event, neighbours, label)`` of a Fit (its ``dp_event``, relation and solver), or the
    arguments unchanged for a DpEvent."""
    if hasattr(event, "dp_event"):
        if neighbours is None:
            neighbours = getattr(event, "neighbours", None)
        label = getattr(event, "solver", label)
        event = event.dp_event
    return event, neighbours, label


def _relation(neighbours):
    """The relation a release's ``neighbours`` names: ``"replace_one"``, ``"add_remove"`` or a
    solver's wording of one (``"replace-one record"``, ...)."""
    if not isinstance(neighbours, str):
        raise TypeError(f"neighbours must be a string naming a neighbour relation, got "
                        f"{type(neighbours).__name__}")
    words = neighbours.replace("-", "_").split()
    if not words or words[0] not in _RELATIONS:
        raise ValueError(f"neighbours must name a neighbour relation, one of "
                         f"{sorted(_RELATIONS)} (or a solver's wording such as 'replace-one "
                         f"record'), got {neighbours!r}")
    return words[0]


def charge(accountant, event, *, neighbours, label, estimates=()):
    """Charge a release to ``accountant``: the one path by which every release of dpsolve (a
    fit, a score, a selection, a quantile, a base rate, a refit) reaches a budget.

    Call it after every public check has passed and before the data is read. It admits the
    release and the estimates it depends on together, or raises and charges nothing.

    Parameters
    ----------
    accountant : BudgetAccountant, ParallelGroup or None
        None charges nothing (returns None).
    event : dp_accounting.DpEvent
        The release's event (dpsolve's convention), from public constants only.
    neighbours : str
        The relation under which ``event`` is private; refused if not the budget's.
    label : str
        What the release is, for the ledger and errors.
    estimates : iterable of PrivateEstimate, optional
        The released private statistics the release uses (bounds). Each is booked once, as a
        sequential charge to the budget itself, also when ``accountant`` is a parallel group:
        the budget cannot tell which records an estimate read, and one read on all of them
        moves with a changed record in any part, so it is no part of the partition. An
        estimate already charged sequentially (the same object: copies are itself) is not
        charged again; one charged only as a group's part is, once, sequentially.

    Returns
    -------
    float or None
        The epsilon the ledger certifies after the charge.

    Raises
    ------
    BudgetExceededError
        If the composition would exceed the budget (nothing charged).
    ValueError, TypeError
        As :meth:`BudgetAccountant.spend`.
    """
    if accountant is None:
        return None
    accountant = check_accountant(accountant)
    group = accountant if isinstance(accountant, ParallelGroup) else None
    budget = accountant.budget if group is not None else accountant
    with budget._lock:
        booked = {id(e) for c in budget._ledger if len(c.events) == 1
                  for e in _leaves(c.events[0])}
        additions, seen = [], set()
        for estimate in estimates:
            # paid when every event it is made of was charged sequentially (a composed
            # release, such as a private transformer's, booked by its parts)
            if not _paid(estimate.dp_event, booked | seen):
                seen.update(id(e) for e in _leaves(estimate.dp_event))
                seen.add(id(estimate.dp_event))
                additions.append((estimate.dp_event, ESTIMATE_NEIGHBOURS,
                                  "private bound estimate", None))
        additions.append((event, neighbours, label, group))
        return budget._admit(additions, charge=True)


def _paid(event, booked):
    """Whether ``event`` (or every event it is composed of) is among the ``booked`` ids."""
    return id(event) in booked or all(id(e) in booked for e in _leaves(event))


def _leaves(event):
    """The events a composition is made of, the event itself otherwise (depth first)."""
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return [leaf for inner in event.events for leaf in _leaves(inner)]
    return [event]


#: Why a budget's copy in another process refuses (:func:`_restore_budget`).
_DETACHED = (
    "this BudgetAccountant is a copy unpickled in another process (joblib's or Dask's "
    "workers, multiprocessing, or a model saved and loaded again): what it admitted could "
    "never reach the original budget, so it refuses every release. Run the releases that "
    "charge a budget in the budget's own process (n_jobs=1 for scikit-learn's "
    "cross-validation and searches), or charge the whole parallel computation to the budget "
    "up front (budget.spend(event, neighbours=...)) and run it with accountant=None")


def _restore_budget(cls, token, pid, state):
    """Unpickle a budget: the budget itself if it is alive in this process, else a copy that
    refuses every release (its ledger readable)."""
    if pid == os.getpid():
        live = _LIVE.get(token)
        if live is not None:
            return live
    copy = cls.__new__(cls)
    copy.__dict__.update(state)
    copy._lock = threading.RLock()
    copy._groups = []
    copy._detached = True
    return copy


def _restore_group(budget, token, pid):
    """Unpickle a parallel group: the group itself if it is alive in this process, else a
    closed group of the (refusing) budget."""
    if pid == os.getpid():
        live = _LIVE.get(token)
        if live is not None:
            return live
    group = ParallelGroup.__new__(ParallelGroup)
    group.budget, group._events, group._labels, group._token = budget, [], [], token
    return group


def check_accountant(accountant):
    """``accountant`` as an argument of a release, checked: None, a :class:`BudgetAccountant`
    or a :class:`ParallelGroup` (TypeError otherwise).

    Parameters
    ----------
    accountant : object
        What the caller passed.

    Returns
    -------
    BudgetAccountant, ParallelGroup or None
        ``accountant`` itself.
    """
    if accountant is not None and not isinstance(accountant, (BudgetAccountant, ParallelGroup)):
        raise TypeError(f"accountant must be a dpsolve.BudgetAccountant, a ParallelGroup of one "
                        f"(BudgetAccountant.parallel()) or None, got {type(accountant).__name__}")
    return accountant
