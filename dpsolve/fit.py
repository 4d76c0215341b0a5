"""The result of a private solver: the released parameters and exactly what privacy they carry."""
import dataclasses

import dp_accounting
import numpy as np

from .privacy import NEIGHBOURS, rdp_epsilon


@dataclasses.dataclass(frozen=True, eq=False)
class Fit:
    """A private fit.

    Attributes
    ----------
    theta : ndarray, shape (p,)
        The released parameters (read-only).
    epsilon, delta : float
        The claimed guarantee: (epsilon, delta)-DP under ``neighbours`` for everything the solver
        released. With ``calibration="explicit"`` epsilon is the value the RDP accountant certifies
        for the noise used.
    sigma : float
        Standard deviation of the Gaussian noise per coordinate and step.
    steps : int
        Number of iterations (data-independent; solvers never stop early on private data).
    calibration : str
        How sigma was chosen: ``"paper"`` (the source's own formula) or ``"explicit"``.
    solver, source : str
        The algorithm and where it comes from (seed file and equations).
    wall_time : float
        Seconds spent in the solver.
    dp_event : dp_accounting.DpEvent
        What was released, for composing this fit with others in dp_accounting's accountants
        (noise multipliers relative to the replace-one sensitivity, see ``dpsolve.privacy``).
    neighbours : str
        Neighbour relation of the guarantee (``"replace_one"``).
    """

    theta: np.ndarray
    epsilon: float
    delta: float
    sigma: float
    steps: int
    calibration: str
    solver: str
    source: str
    wall_time: float
    dp_event: dp_accounting.DpEvent
    neighbours: str = NEIGHBOURS

    def __post_init__(self):
        theta = np.array(self.theta, dtype=np.float64, copy=True)
        theta.flags.writeable = False
        object.__setattr__(self, "theta", theta)

    def certified_epsilon(self, delta=None):
        """Epsilon that dp_accounting's RDP accountant certifies for ``dp_event`` at ``delta``
        (default: the fit's delta)."""
        return rdp_epsilon(self.dp_event, self.delta if delta is None else delta)
