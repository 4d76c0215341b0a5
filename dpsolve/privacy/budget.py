"""A privacy budget across fits: :class:`BudgetAccountant`, and its parallel groups
(:class:`ParallelGroup`).

After diffprivlib's ``BudgetAccountant`` and Tumult's sessions, with dpsolve's accountants: the
budget composes the DpEvents of what it admitted (PLD or RDP, not a sum of epsilons) and refuses,
before any data is read, a release that would take the composition beyond ``(epsilon, delta)``.
"""
import contextlib
import dataclasses
import itertools
import math
import threading

import dp_accounting

from .._validation import check_choice, check_real
from .accounting import NEIGHBOURS, _RELATIONS, check_event, epsilon_of

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
    (:mod:`dpsolve.private_selection`), or call :meth:`spend` with a DpEvent. Each release is
    checked before it reads any data: if the composition of everything admitted so far and the
    new release would certify an epsilon above ``epsilon`` at ``delta``, a
    :class:`BudgetExceededError` (a ValueError) says the budget, what was spent and what the
    release needs, and nothing is charged.

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
    charged, also a fit that then fails (its data were read). Parallel composition
    (:meth:`parallel`): releases on disjoint parts of the records (a public, data-independent
    partition) together cost what one part's release costs, since a changed record lies in
    one part only; the ledger takes the worst placement of the record across all groups. The
    parts are the releases charged to the group object the block yields, never those charged
    to the budget itself, so a release charged from elsewhere (another thread, say) during the
    block is an ordinary sequential charge.

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

    def __repr__(self):
        return (f"BudgetAccountant(epsilon={self.epsilon:g}, delta={self.delta:g}, "
                f"accountant={self.accountant!r}, neighbours={self.neighbours!r})")

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.RLock()

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

    def _entries(self, group=None, event=None):
        """The ledger as tuples of events: the charges, then each open group's parts; with
        ``event`` added as a part of ``group``, or as a sequential charge if ``group`` is None."""
        ledger = [c.events for c in self._ledger]
        for open_group in self._groups:
            parts = list(open_group._events)
            if open_group is group:
                parts.append(event)
            if parts:
                ledger.append(tuple(parts))
        if group is None and event is not None:
            ledger.append((event,))
        return ledger

    # -- the public interface ------------------------------------------------------------------
    def check(self, event, *, neighbours=None, label="release"):
        """Raise if admitting ``event`` would exceed the budget; charge nothing.

        Parameters
        ----------
        event : dp_accounting.DpEvent or Fit
            What the release will be (a fit's plan, dpsolve's convention; every parameter and
            count in range, :func:`~dpsolve.privacy.accounting.check_event`).
        neighbours : str, optional
            The release's neighbour relation (``"replace_one"``, ``"add_remove"``, or a
            solver's wording such as ``"replace-one record"``); refused if not the budget's.
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
            accountant cannot read it, ``neighbours`` names no relation, or the neighbour
            relations differ.
        """
        event, neighbours, label = _unwrap_fit(event, neighbours, label)
        with self._lock:
            return self._admit(event, neighbours, label, charge=False)

    def spend(self, event, *, neighbours=None, label="release"):
        """Admit and charge ``event`` (or a Fit's ``dp_event``), or raise as :meth:`check`.

        Parameters
        ----------
        event : dp_accounting.DpEvent or Fit
            The release.
        neighbours, label : str, optional
            As in :meth:`check`.

        Returns
        -------
        float
            The epsilon the ledger certifies after the charge.
        """
        event, neighbours, label = _unwrap_fit(event, neighbours, label)
        with self._lock:
            return self._admit(event, neighbours, label, charge=True)

    def _admit(self, event, neighbours, label, charge, group=None):
        """Check ``event`` and compose it with the ledger, as a sequential charge or (``group``
        given) as a new part of that open group; charge it if ``charge``. Called under the
        lock."""
        if not isinstance(event, dp_accounting.DpEvent):
            raise TypeError(f"event must be a dp_accounting DpEvent, got {type(event).__name__}")
        check_event(event)
        if neighbours is not None and _relation(neighbours) != self.neighbours:
            raise ValueError(f"the {label} is private under {neighbours} neighbours, the "
                             f"budget under {self.neighbours}: they do not compose")
        if group is not None and group not in self._groups:
            raise ValueError(f"the parallel group of the {label} is closed: charge a group "
                             "only inside its budget.parallel() block")
        candidate = self._entries(group, event)
        try:
            total = self._ledger_epsilon(candidate, self.delta)
        except ValueError as exc:
            raise ValueError(f"the budget's accountant ({self.accountant}) cannot compose the "
                             f"{label} with the ledger: {exc}") from None
        if not total <= self.epsilon * (1.0 + 1e-9):
            spent = self._ledger_epsilon(self._entries(), self.delta)
            alone = self._epsilon_of(event, self.delta)
            raise BudgetExceededError(
                f"the {label} would exceed the privacy budget: the budget is (epsilon="
                f"{self.epsilon:g}, delta={self.delta:g}); {len(self._ledger)} release(s) "
                f"spent epsilon={spent:.4g}; the {label} needs epsilon={alone:.4g} alone, and "
                f"with what was spent the {self._accountant_name(candidate)} accountant "
                f"certifies epsilon={total:.4g}. Nothing was charged and the release did not run.")
        if charge:
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
            return self.budget._admit(event, neighbours, label, charge=False, group=self)

    def spend(self, event, *, neighbours=None, label="release"):
        """Admit and charge ``event`` (or a Fit's ``dp_event``) as a new part of the group, or
        raise as :meth:`check`.

        Parameters
        ----------
        event : dp_accounting.DpEvent or Fit
            The release on one part.
        neighbours, label : str, optional
            As in :meth:`BudgetAccountant.check`.

        Returns
        -------
        float
            The epsilon the budget's ledger certifies with this group so far.
        """
        event, neighbours, label = _unwrap_fit(event, neighbours, label)
        with self.budget._lock:
            return self.budget._admit(event, neighbours, label, charge=True, group=self)

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


def spend_once(accountant, event, label):
    """Charge ``event`` to ``accountant`` unless its ledger already holds that very object (a
    release, such as a private bound estimate, that several fits use but that happened once).

    Parameters
    ----------
    accountant : BudgetAccountant or ParallelGroup
    event : dp_accounting.DpEvent
    label : str

    Returns
    -------
    bool
        Whether it was charged now.
    """
    if any(e is event for charge in accountant.ledger for e in charge.events):
        return False
    accountant.spend(event, label=label)
    return True


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
