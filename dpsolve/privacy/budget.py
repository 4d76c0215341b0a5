"""A privacy budget across fits: :class:`BudgetAccountant`.

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
from .accounting import NEIGHBOURS, _RELATIONS, epsilon_of

#: Beyond this many ways of placing the changed record among parallel groups' parts, the
#: groups are composed as if sequential (still a valid bound, a looser one).
MAX_PARALLEL_COMBINATIONS = 4096


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


class BudgetAccountant:
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
    one part only; the ledger takes the worst placement of the record across all groups.

    Examples
    --------
    >>> budget = BudgetAccountant(epsilon=2.0, delta=1e-6)
    >>> fit = dpsolve.output_perturbation(problem, 1.0, accountant=budget)  # doctest: +SKIP
    >>> budget.spent(), budget.remaining()                                 # doctest: +SKIP
    """

    def __init__(self, epsilon, delta=0.0, accountant="auto", neighbours=NEIGHBOURS):
        self.epsilon = check_real(epsilon, "epsilon", low=0.0)
        self.delta = check_real(delta, "delta", low=0.0, high=1.0, low_inclusive=True)
        self.accountant = check_choice(accountant, "accountant", ("auto", "pld", "rdp"))
        self.neighbours = check_choice(neighbours, "neighbours", tuple(_RELATIONS))
        self._ledger = []
        self._group = None
        self._lock = threading.RLock()

    def __repr__(self):
        return (f"BudgetAccountant(epsilon={self.epsilon:g}, delta={self.delta:g}, "
                f"accountant={self.accountant!r}, neighbours={self.neighbours!r})")

    # scikit-learn's clone (and copy.deepcopy of an estimator's parameters) must keep one
    # budget shared by every clone, or each clone would spend its own copy
    def __sklearn_clone__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self

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

    def _entries(self):
        ledger = [c.events for c in self._ledger]
        if self._group is not None and self._group["events"]:
            ledger.append(tuple(self._group["events"]))
        return ledger

    # -- the public interface ------------------------------------------------------------------
    def check(self, event, *, neighbours=None, label="release"):
        """Raise if admitting ``event`` would exceed the budget; charge nothing.

        Parameters
        ----------
        event : dp_accounting.DpEvent
            What the release will be (a fit's plan, dpsolve's convention).
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
            If the accountant cannot read the release, or the neighbour relations differ.
        """
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
        if hasattr(event, "dp_event"):
            neighbours = neighbours or getattr(event, "neighbours", None)
            label = getattr(event, "solver", label)
            event = event.dp_event
        with self._lock:
            return self._admit(event, neighbours, label, charge=True)

    def _admit(self, event, neighbours, label, charge):
        if not isinstance(event, dp_accounting.DpEvent):
            raise TypeError(f"event must be a dp_accounting DpEvent, got {type(event).__name__}")
        if neighbours is not None:
            relation = str(neighbours).replace("-", "_").split()[0]
            if relation != self.neighbours:
                raise ValueError(f"the {label} is private under {neighbours} neighbours, the "
                                 f"budget under {self.neighbours}: they do not compose")
        ledger = self._entries()
        if self._group is not None:
            grouped = list(self._group["events"]) + [event]
            candidate = [c.events for c in self._ledger] + [tuple(grouped)]
        else:
            candidate = ledger + [(event,)]
        try:
            total = self._ledger_epsilon(candidate, self.delta)
        except ValueError as exc:
            raise ValueError(f"the budget's accountant ({self.accountant}) cannot compose the "
                             f"{label} with the ledger: {exc}") from None
        if not total <= self.epsilon * (1.0 + 1e-9):
            spent = self._ledger_epsilon(ledger, self.delta)
            alone = self._epsilon_of(event, self.delta)
            raise BudgetExceededError(
                f"the {label} would exceed the privacy budget: the budget is (epsilon="
                f"{self.epsilon:g}, delta={self.delta:g}); {len(self._ledger)} release(s) "
                f"spent epsilon={spent:.4g}; the {label} needs epsilon={alone:.4g} alone, and "
                f"with what was spent the {self._accountant_name(candidate)} accountant "
                f"certifies epsilon={total:.4g}. Nothing was charged and the release did not run.")
        if charge:
            if self._group is not None:
                self._group["events"].append(event)
                self._group["labels"].append(label)
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
        """Releases made inside this block run on disjoint parts of the records.

        The caller vouches that the parts are disjoint and that the partition does not depend
        on the data (e.g. fixed row ranges, or one part per party); the group then costs what
        its most expensive part costs. Blocks do not nest.

        Yields
        ------
        BudgetAccountant
            ``self``.
        """
        with self._lock:
            if self._group is not None:
                raise RuntimeError("parallel() blocks do not nest")
            self._group = {"events": [], "labels": []}
        try:
            yield self
        finally:
            with self._lock:
                group, self._group = self._group, None
                if group["events"]:
                    events = tuple(group["events"])
                    self._ledger.append(Charge(
                        events, tuple(group["labels"]),
                        max(self._epsilon_of(e, self.delta) for e in events)))

    @property
    def ledger(self):
        """The charges admitted so far (a tuple of :class:`Charge`), oldest first."""
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


def check_accountant(accountant):
    """``accountant`` as an argument of a release, checked: None or a
    :class:`BudgetAccountant` (TypeError otherwise).

    Parameters
    ----------
    accountant : object
        What the caller passed.

    Returns
    -------
    BudgetAccountant or None
        ``accountant`` itself.
    """
    if accountant is not None and not isinstance(accountant, BudgetAccountant):
        raise TypeError(f"accountant must be a dpsolve.BudgetAccountant or None, got "
                        f"{type(accountant).__name__}")
    return accountant
