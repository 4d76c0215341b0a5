"""Parties whose rows live on Dask workers (``Parties.on(client)``; docs/multiparty.md, "Parties
on workers").

Each party's rows (its :class:`~dpsolve.parties.Party`) are sent once to a worker and held there
(and by a Dask actor for the protocols that keep state between calls); the protocol's per-party
computations run on that worker, and only the protocol's messages travel: the broadcast to the
parties, each party's noisy message back, or, with secure aggregation, each party's share to
the aggregator's worker and the noisy aggregate to the coordinator. Every noise stream travels
with the computation that draws from it, so a run draws the same numbers as in one process and
releases the same bits.
"""
import numpy as np

from .parties import Parties


class PartyActor:
    """A party on a worker: its rows, and its noise stream for the current run."""

    def __init__(self, party):
        self.party = party
        self.stream = None

    def start(self, stream):
        """This run's noise stream (a numpy Generator, advanced here from now on)."""
        self.stream = stream
        return self.party.n

    def sgd1_message(self, theta, local_row, scale, reg, sigma, noise):
        """The party's SGD1 message for its row ``local_row`` (:meth:`Party.sgd1_message`);
        returns the message and the advanced noise stream."""
        return self.party.sgd1_message(theta, local_row, scale, reg, sigma, noise), noise

    def sgd2_message(self, theta, sigma):
        """The party's SGD2 message at the broadcast ``theta`` (:meth:`Party.sgd2_message`)."""
        return self.party.sgd2_message(theta, sigma, self.stream)

    def joint_start(self, cols, K):
        """A fresh owner side of joint_sgd's protocol (its personalised block at 0)."""
        from .solvers.joint_sgd import JointOwner
        self.joint = JointOwner(self.party, cols, K)
        return self.party.n

    def joint_step(self, t, row, u, sigma, eta, reg, r_x, rng):
        """The owner's step t; returns the message and the advanced noise stream."""
        return self.joint.step(t, row, u, sigma, eta, reg, r_x, rng), rng

    def joint_average(self, steps):
        """The owner's personalised block, averaged over the run."""
        return self.joint.average(steps)


class RemoteParties(Parties):
    """A :class:`~dpsolve.Parties` whose parties run on Dask workers (``Parties.on(client)``).

    Same problem, partition and public attributes as the in-process parties it was made from;
    ``parties[j]`` is still party j's in-process description (its rows stay on the driver too:
    the data were there to be partitioned), but every multi-party solver (``noisy_sgd``,
    ``multiparty_gd``, ``aggregated_output_perturbation``, ``joint_sgd``) sends each per-party
    computation to party j's worker, and secure aggregation's sums to the aggregator's worker.

    Attributes
    ----------
    client : distributed.Client
    workers : tuple of str
        The worker holding each party.
    aggregator : str
        The worker that stands in for secure aggregation (sums the shares, draws its noise).
    data : tuple of distributed.Future
        Each party's rows, held on its worker.
    actors : tuple
        Each party's Dask actor (:class:`PartyActor`).
    """

    remote = True

    def __init__(self, parties, client, workers=None, aggregator=None):
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
        futures = [client.submit(PartyActor, held, workers=[where], actor=True, pure=False,
                                 allow_other_workers=False)
                   for held, where in zip(data, self.workers)]
        self.actors = tuple(f.result() for f in futures)
        self.data = tuple(data)             # each party's rows, held on its worker
        self._futures = futures             # keep the actors alive

    def start(self, streams):
        """Send each party its noise stream for a run."""
        for f in [actor.start(stream) for actor, stream in zip(self.actors, streams)]:
            f.result()

    def sgd1_message(self, j, theta, local_row, scale, reg, sigma, noise):
        """Party j's SGD1 message for its row ``local_row``, computed on its worker; ``noise``
        (a :class:`~dpsolve.privacy.Stream`) travels there and back and is advanced here as
        if the draw had been made here."""
        message, advanced = self.actors[j].sgd1_message(theta, local_row, scale, reg, sigma,
                                                        noise).result()
        noise.state[:] = advanced.state
        return message

    def sgd2_messages(self, theta, sigma):
        """Every party's SGD2 message at ``theta``, computed on the parties' workers at the
        same time; shape (m, p)."""
        calls = [actor.sgd2_message(theta, sigma) for actor in self.actors]
        return np.stack([call.result() for call in calls])

    def secure_sum(self, theta, weights, sigma, rng):
        """Secure aggregation of the parties' gradient shares at ``theta``: each share is
        computed on its party's worker and sent to the aggregator's worker, which adds them
        and one noise draw from ``rng`` (:class:`~dpsolve.solvers.multiparty_gd.
        SecureAggregator`). Only ``(noisy sum, advanced rng)`` comes back."""
        client = self.client
        shares = [client.submit(_share, held, theta, weight, workers=[where], pure=False)
                  for held, weight, where in zip(self.data, weights, self.workers)]
        return client.submit(_secure_sum, sigma, rng, *shares, workers=[self.aggregator],
                             pure=False).result()

    def secure_noisy_average(self, tolerance, plan, secure, noise, scale, rng):
        """Model aggregation: each party's local minimiser on its worker, their average and one
        noise draw from ``rng`` on the aggregator's worker
        (:func:`~dpsolve.solvers.aggregated_output_perturbation.noisy_average`). Only the noisy
        average comes back; ``rng`` is advanced as if the draw had been made here."""
        client = self.client
        local = [client.submit(_local_minimizer, held, tolerance, plan, secure,
                               workers=[where], pure=False)
                 for held, where in zip(self.data, self.workers)]
        noisy, advanced = client.submit(_noisy_average, noise, scale, rng, *local,
                                        workers=[self.aggregator], pure=False).result()
        rng.bit_generator.state = advanced.bit_generator.state
        return noisy

    def joint_start(self, cols, K):
        """Start joint_sgd's owner sides on the workers."""
        for f in [actor.joint_start(cols, K) for actor in self.actors]:
            f.result()

    def joint_step(self, j, t, row, u, sigma, eta, reg, r_x, rng):
        """Owner j's step t on its worker: ``(message, advanced noise stream)``."""
        return self.actors[j].joint_step(t, row, u, sigma, eta, reg, r_x, rng).result()

    def joint_averages(self, steps):
        """Every owner's averaged personalised block, shape (N, k K)."""
        calls = [actor.joint_average(steps) for actor in self.actors]
        return np.stack([call.result() for call in calls])

    def __repr__(self):
        return (f"RemoteParties(m={self.m}, sizes={self.sizes}, workers={self.workers}, "
                f"problem={self.problem!r})")


def _share(party, theta, weight):
    return party.aggregation_share(theta, weight)


def _secure_sum(sigma, rng, *shares):
    from .solvers.multiparty_gd import SecureAggregator
    return SecureAggregator(sigma, rng).aggregate(list(shares)), rng


def _local_minimizer(party, tolerance, plan, secure):
    from ._blas import one_blas_thread
    from .solvers import _inner
    with one_blas_thread():             # the bits of the fit in one process (_blas.py)
        return _inner._inner_minimizer(party.local_problem(), tolerance, plan, secure)


def _noisy_average(noise, scale, rng, *minimizers):
    from .solvers.aggregated_output_perturbation import noisy_average
    return noisy_average(list(minimizers), noise, scale, rng), rng
