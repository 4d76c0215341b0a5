"""What a solver accepts as its privacy target, declared on its spec (:attr:`SolverSpec.accepts
<dpsolve.solvers.SolverSpec>`) and checked once, by the lifecycle, before ``plan`` and before the
data are read: whether delta is required, optional or absent, the ranges of epsilon and delta,
and the option that gives the noise instead of a target epsilon.

A solver's ``plan`` then gets a target it can use as it is. What remains for it to check is what
depends on more than the target and one option: a source's formula checks the range it is
stated for where that depends on n (``noisy_sgd``'s ``delta < 1/n^3``), and the output noises
check delta against the noise kind (:func:`dpsolve.privacy.calibration.resolve_output_noise`,
which the bounds share).
"""
import dataclasses
import numbers
import types
from typing import Mapping, Optional

import numpy as np

from .._validation import Real

#: How a solver takes delta.
DELTA_KINDS = ("required", "optional", "none")


@dataclasses.dataclass(frozen=True)
class Accepts:
    """The epsilon and delta a solver accepts.

    Attributes
    ----------
    delta : {"required", "optional", "none"}, default "required"
        ``"required"``: (epsilon, delta)-DP, delta a number in ``delta_range``. ``"optional"``:
        None (pure epsilon-DP) or a number in ``delta_range``. ``"none"``: pure epsilon-DP
        only; the public function has no delta (a delta planned with by another caller, such
        as :func:`dpsolve.choose_solver`'s target, is not checked: pure DP meets it).
    epsilon_range : Real, default ``Real(0.0)``
        The target epsilons accepted, ``(0, inf)`` by default.
    delta_range : Real, default ``Real(0.0, 1.0)``
        The deltas accepted, ``(0, 1)`` by default (the lifecycle refuses ``[1/2, 1)`` before:
        :func:`~dpsolve.solvers._lifecycle.check_delta_range`).
    zero_delta_is_pure : bool, default False
        ``delta=0`` is accepted as pure epsilon-DP, as None is (the noise options decide
        whether they take it).
    explicit_noise : str or None, default None
        The option that gives the noise instead of a target epsilon (``"sigma"``,
        ``"noise_scale"``): when it is given, epsilon must be None (the fit claims what the
        accountant certifies) and a required delta is still required; when it is not, epsilon
        is. None: epsilon is always required.
    narrower : mapping, optional
        ``{(option, value): Real}``: a narrower range of epsilon when an option has that value
        (``{("calibration", "paper"): Real(0.0, 1.0)}``: a source's formula stated for
        epsilon < 1).
    """

    delta: str = "required"
    epsilon_range: Real = Real(0.0)
    delta_range: Real = Real(0.0, 1.0)
    zero_delta_is_pure: bool = False
    explicit_noise: Optional[str] = None
    narrower: Mapping = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        if self.delta not in DELTA_KINDS:
            raise ValueError(f"Accepts.delta must be one of {DELTA_KINDS}, got {self.delta!r}")
        object.__setattr__(self, "narrower", types.MappingProxyType(dict(self.narrower)))

    def check(self, solver, epsilon, delta, options):
        """Refuse a target the solver does not accept (TypeError or ValueError naming epsilon,
        delta or the explicit-noise option); the values themselves are left as given.

        Parameters
        ----------
        solver : str
            The solver's name, for the messages.
        epsilon, delta : float or None
            The target as the caller gave it.
        options : mapping
            Every keyword option, resolved (the explicit noise and the narrower ranges' options
            are read from it).
        """
        noise = self.explicit_noise
        explicit = noise is not None and options[noise] is not None
        required = self.delta == "required"
        if explicit:
            if epsilon is not None:
                raise ValueError(f"pass either epsilon (to calibrate the noise) or {noise}, "
                                 "not both")
            if required and delta is None:
                raise TypeError(f"{solver} with an explicit {noise} needs delta, the delta at "
                                "which the certified epsilon is reported")
        elif noise is not None and (epsilon is None or (required and delta is None)):
            both = " and delta" if required else ""
            raise TypeError(f"{solver} needs epsilon{both} (or an explicit {noise}{both})")
        elif required and delta is None:
            raise TypeError(f"{solver} needs epsilon and delta (delta in (0, 1))")
        if not explicit:
            self._epsilon_range(options).check(epsilon, "epsilon")
        # "none": the public function takes no delta; a delta another caller plans with
        # (choose_solver's target) is met by pure epsilon-DP, and the plan ignores it
        if (delta is None and not required) or self.delta == "none":
            return
        if not (self.zero_delta_is_pure and _is_zero(delta)):
            self.delta_range.check(delta, "delta")

    def _epsilon_range(self, options):
        """The narrowest range of epsilon that the options select."""
        for (option, value), narrower in self.narrower.items():
            if isinstance(options.get(option), str) and options[option] == value:
                return narrower
        return self.epsilon_range


def _is_zero(delta):
    """Whether ``delta`` is the number 0 (not a bool)."""
    return (isinstance(delta, numbers.Real) and not isinstance(delta, (bool, np.bool_))
            and delta == 0)
