"""Noisy SGD (Bassily-Smith-Thakurta 2014; SGD1 of the multi-party SGD notes) run as its
multi-party protocol, message by message, and what each observer learns (docs/multiparty.md,
"Privacy against each observer")."""
import dataclasses
import math

import numpy as np

from ._deprecation import module_aliases
from ._kernels.vector import project_l2_ball   # the kernels' sequential projection
from .privacy.accounting import UniformSampling, epsilon_of, gaussian_event


@dataclasses.dataclass(frozen=True, eq=False)
class NoisySGDTranscript:
    """Everything the coordinator B saw in a multi-party noisy SGD run.

    Attributes
    ----------
    index : ndarray of int, shape (T,)
        B's index draws (random, known to B; not shown to the parties).
    sender : ndarray of int, shape (T,)
        The party that computed each step's message (B and every party learn it).
    messages : ndarray, shape (T, p)
        The messages ``G_t``, which B broadcasts. The notes' privacy analysis covers their release.
    step_sizes : ndarray, shape (T,)
        ``eta(t)``, public.
    radius : float
        Projection radius (inf: none).
    """

    index: np.ndarray
    sender: np.ndarray
    messages: np.ndarray
    step_sizes: np.ndarray
    radius: float

    def __post_init__(self):
        for name in ("index", "sender", "messages", "step_sizes"):
            getattr(self, name).flags.writeable = False

    def replay(self):
        """theta_T recomputed from the broadcast messages alone: what any party holds."""
        theta = np.zeros(self.messages.shape[1])
        for eta, message in zip(self.step_sizes, self.messages):
            theta = project_l2_ball(theta - eta * message, self.radius)
        return theta


def _sgd1_step(party, state, theta, local_row, scale, reg, sigma, noise):
    """The owner's SGD1 step (module-level: sent to Dask workers): its message for its row
    ``local_row`` (:meth:`~dpsolve.parties.Party.sgd1_message`) and the advanced stream."""
    return party.sgd1_message(theta, local_row, scale, reg, sigma, noise), noise


def sgd1_protocol(problem, parties, steps, sigma, step_sizes, radius, indices, noise):
    """Run SGD1 as the protocol: B draws i_t from ``indices``, the owner of row i_t computes G_t
    from its own row and draws its noise from ``noise``, B broadcasts G_t, every copy of theta
    takes the same step. Bit-identical to the one-process kernel given the same two Streams, with
    parties on workers too (each step's message computed on its owner's worker, ``noise``
    travelling with it). Returns (theta_T, transcript)."""
    n, p = problem.n, problem.p
    owner = parties.owner
    local = np.empty(n, dtype=np.intp)
    for party in parties:
        local[party.rows] = np.arange(party.n)
    index = np.empty(steps, dtype=np.intp)
    messages = np.empty((steps, p))
    theta = np.zeros(p)
    for t in range(steps):
        i = indices.integers(n)             # B's draw
        index[t] = i
        # computed by the row's owner (on its worker, for parties on workers)
        message, advanced = parties.call(int(owner[i]), _sgd1_step, theta, int(local[i]),
                                         float(n), problem.reg, sigma, noise)
        if advanced is not noise:       # it travelled: advance it here as if drawn here
            noise.state[:] = advanced.state
        messages[t] = message
        theta = project_l2_ball(theta - step_sizes[t] * message, radius)
    transcript = NoisySGDTranscript(index=index, sender=owner[index].copy(), messages=messages,
                                step_sizes=np.array(step_sizes, dtype=float), radius=radius)
    return theta, transcript


def sgd1_observer_epsilons(parties, counts, sigma, sensitivity, delta):
    """Epsilon at ``delta`` against each observer, from the per-row draw counts.

    * ``"coordinator"``: B knows the index sequence, so there is no amplification: row i's
      privacy is the composition of the ``counts[i]`` Gaussians that used it (exact, PLD); the
      worst row is reported.
    * ``"parties"``: a party sees the broadcasts and who sent each; for party j's rows the
      ``S_j`` steps that party j computed are a uniform draw among its ``n_j`` rows (RDP); the
      worst party is reported.
    """
    if sigma == 0.0:
        return {"coordinator": math.inf, "parties": math.inf}
    worst_row = int(counts.max())
    coordinator = 0.0 if worst_row == 0 else epsilon_of(
        gaussian_event(sigma, sensitivity, steps=worst_row), delta, "pld")
    worst = 0.0
    for party in parties:
        steps_j = int(counts[party.rows].sum())
        if steps_j == 0:
            continue
        sampling = UniformSampling(party.n, 1) if party.n > 1 else None
        event = gaussian_event(sigma, sensitivity, steps=steps_j, sampling=sampling)
        worst = max(worst, epsilon_of(event, delta, "rdp" if sampling else "pld"))
    return {"coordinator": coordinator, "parties": worst}


# the class's name in a release that cited the notes' algorithm number
__getattr__ = module_aliases(__name__, {"SGD1Transcript": (
    NoisySGDTranscript, "dpsolve._multiparty.SGD1Transcript is deprecated; use "
                        "NoisySGDTranscript, the same class")})
