"""What a fit released, as a ``dp_accounting`` DpEvent, and the epsilon a tight accountant gives it.

Normalisation (shared/REFERENCE.md section 4): dpsolve's neighbour relation is replace-one, and
every Gaussian event carries the noise multiplier ``sigma / (replace-one L2 sensitivity)``, the
convention of dp_accounting's RDP accountant under ``REPLACE_ONE``. Its PLD accountant reads a
``GaussianDpEvent`` differently (it doubles the sensitivity), so events built here are only fed
to the RDP accountant until the accounting module normalises both paths in one place.
"""
import functools
import math

import dp_accounting
from dp_accounting import rdp

NEIGHBOURS = "replace_one"


class PrivacyWarning(UserWarning):
    """A fit's certified privacy is weaker than it claims, or a setting weakens privacy."""


def sampled_gaussian_event(sigma, sensitivity, n, steps, sample_size=1):
    """DpEvent of ``steps`` Gaussian releases, each on ``sample_size`` records drawn from n.

    Parameters
    ----------
    sigma : float
        Standard deviation of the Gaussian noise per coordinate (0: no noise).
    sensitivity : float
        Replace-one L2 sensitivity of each released (un-noised) vector.
    n : int
        Number of records the indices are drawn from.
    steps : int
        Number of releases.
    sample_size : int, default 1
        Records drawn per release. One index drawn uniformly with replacement per step (seed 000's
        SGD1) is the same as drawing a sample of size 1 without replacement, which is what the
        event says: dp_accounting supports that case and not ``SampledWithReplacementDpEvent``.
    """
    if sigma == 0.0:
        return dp_accounting.NonPrivateDpEvent()
    gaussian = dp_accounting.GaussianDpEvent(noise_multiplier=sigma / sensitivity)
    if sample_size < n:
        gaussian = dp_accounting.SampledWithoutReplacementDpEvent(
            source_dataset_size=n, sample_size=sample_size, event=gaussian)
    return dp_accounting.SelfComposedDpEvent(event=gaussian, count=steps)


@functools.lru_cache(maxsize=256)
def rdp_epsilon(event, delta):
    """Epsilon at ``delta`` certified by dp_accounting's RDP accountant (replace-one neighbours).

    ``inf`` for a non-private event.
    """
    if isinstance(event, dp_accounting.NonPrivateDpEvent):
        return math.inf
    accountant = rdp.RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    accountant.compose(event)
    return float(accountant.get_epsilon(delta))
