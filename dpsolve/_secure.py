r"""``secure=True``: noise from the operating system's entropy, outputs rounded to a grid.

Research runs are reproducible: the same ``rng`` seed gives bit-identical output, which is what
tests, sweeps and excess-risk measurements need. A seed is also a secret that regenerates the
noise, and a released floating-point value has low-order bits that the exact mechanism does not
have. ``secure=True`` on a solver changes four things:

1. **No seed.** ``rng`` must be None. The noise comes from a fresh PCG64 stream seeded with 256
   bits from the operating system (``secrets.randbits``). The stream is never returned or
   stored, so no one can replay the noise, including the caller.
2. **Outputs on a grid.** Every released parameter is rounded toward zero to a multiple of
   ``GRID = 2**-32``: theta, and joint_sgd's shared and personal parts. The rounding is exact,
   because the grid spacing is a power of two, and it never increases a coordinate's magnitude,
   so a parameter projected onto a ball stays in it. It removes the bottom bits of each double,
   through which a naive floating-point sampler leaks. Mironov (2012) showed that the set of
   doubles a Laplace mechanism can output depends on the true value. A grid far coarser than the
   doubles' spacing near theta averages each grid cell over about ``2**20`` doubles, which is a
   mitigation. It is **not** Mironov's snapping mechanism, whose proof also clamps the value,
   needs a grid at least as coarse as the noise scale, and costs a small increase in epsilon.
   dpsolve does not claim that its floating-point output is exactly (epsilon, delta)-DP.
3. **No timing.** ``Fit.wall_time`` is NaN. A research run's certified inner solves (output
   and objective perturbation, model aggregation) take a data-dependent time, and a
   data-dependent iteration count must not be released.
4. **Fixed inner solves.** Those three solvers run the fixed-iteration solver
   (:mod:`dpsolve._fixed_iteration`): a public number of V-FISTA steps whose gap is at most
   the tolerance by construction, with no certificate, no data-dependent branch and no
   exception once the data is touched. What cannot be guaranteed that way is refused before
   any work: a loss without smoothness (hinge) and a tolerance below the float64 floor.

Transcripts (``record_transcript=True``) release every message un-rounded, so ``secure=True``
refuses them.
"""
import dataclasses
import math
import secrets

import numpy as np

from ._validation import check_rng

GRID = 2.0 ** -32


def check_secure(secure, rng, record_transcript=False, remote=False):
    """Validate ``secure`` against ``rng`` (and ``record_transcript``, and parties on Dask
    workers) before any work."""
    if not isinstance(secure, (bool, np.bool_)):
        raise TypeError(f"secure must be a bool, got {type(secure).__name__}")
    if secure and rng is not None:
        raise ValueError("rng must be None when secure=True: secure noise comes from the "
                         "operating system's entropy, never from a seed (pass secure=False for a "
                         "reproducible research run)")
    if secure and record_transcript:
        raise ValueError("record_transcript=True releases every message un-rounded; it is not "
                         "available with secure=True")
    if secure and remote:
        raise ValueError("parties on workers (Parties.on) are not available with secure=True: "
                         "every noise stream is seeded in this process, the coordinator's, and "
                         "travels to the workers, and the messages cross the network un-rounded "
                         "(docs/multiparty.md, \"What runs on workers does not hide\")")
    return bool(secure)


def generator(rng, secure):
    """The Generator a solver draws from: ``rng`` converted as usual, or, with ``secure``, a
    fresh stream seeded from 256 bits of operating-system entropy."""
    if not secure:
        return check_rng(rng)
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(secrets.randbits(256))))


def to_grid(values):
    """``values`` rounded toward zero to a multiple of GRID, as a new array (no coordinate
    grows, so no norm does)."""
    return np.trunc(np.asarray(values, dtype=np.float64) / GRID) * GRID


def release(fit, secure):
    """The fit as released: unchanged, or with ``secure`` its parameters on the grid, no wall
    time, and ``settings["secure"] = True``."""
    if not secure:
        return fit
    changes = {"theta": to_grid(fit.theta), "wall_time": math.nan,
               "settings": {**fit.settings, "secure": True}}
    if fit.model is not None:
        model = fit.model
        changes["model"] = dataclasses.replace(model, shared=to_grid(model.shared),
                                               personal=to_grid(model.personal))
    return dataclasses.replace(fit, **changes)
