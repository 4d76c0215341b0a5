"""The worker side of parties on Dask workers (``Parties.on(client)``; docs/multiparty.md,
"Parties on workers"): what runs where a party's rows are held.

This module is the transport only. It knows nothing of the protocols: a party's actor runs
whatever module-level function it is sent (``fn(party, state, *args)``), and a task runs such
a function on a party's rows, or a reduction over the parties' results on the aggregator's
worker. The protocols' per-party steps live in their solver modules; the driver side is
:class:`dpsolve.parties.RemoteParties`. It imports nothing from dpsolve.
"""

#: Each party's state on this worker process, by the key of its rows' Dask future: the dict a
#: party's actor and the tasks run on its rows share (``fn(party, state, ...)``).
_STATES = {}


def party_state(key):
    """The state dict of the party whose rows are held under ``key`` (created empty)."""
    return _STATES.setdefault(key, {})


class PartyActor:
    """A party on a worker: its rows (a :class:`~dpsolve.parties.Party`) and its state dict,
    kept between calls (a protocol's per-party objects, such as a noise stream or an owner's
    personalised block)."""

    def __init__(self, party, key):
        self.party = party
        self.state = party_state(key)

    def run(self, fn, args):
        """``fn(party, state, *args)``, here on the party's worker."""
        return fn(self.party, self.state, *args)


def run_on_party(party, key, fn, args):
    """A task on the party's rows: ``fn(party, state, *args)``; its result stays on the worker
    until the aggregator's task needs it."""
    return fn(party, party_state(key), *args)


def run_on_aggregator(fn, args, *results):
    """A task on the aggregator's worker: ``fn([result_0, ..., result_{m-1}], *args)``."""
    return fn(list(results), *args)
