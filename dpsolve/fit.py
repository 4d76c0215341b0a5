"""The result of a private solver: the released parameters and exactly what privacy they carry."""
import dataclasses
import types

import dp_accounting
import numpy as np

from .privacy.accounting import PrivacyReport, epsilon_of


@dataclasses.dataclass(frozen=True, eq=False)
class Fit:
    """A private fit.

    Attributes
    ----------
    theta : ndarray, shape ``problem.theta_shape``
        The released parameters (read-only): shape (p,), or (p, K) for a multinomial problem
        (one column per class, in the order of ``problem.classes``). For a Problem with
        ``fit_intercept`` p is ``n_features + 1``: the last entry (for multinomial the last
        row, the K intercepts) multiplies the constant feature ``intercept_scale``;
        ``problem.split_theta(fit.theta)`` gives the coefficients and the effective
        intercept.
    sigma : float or None
        Standard deviation of the Gaussian noise per coordinate and step; None when the solver
        adds no Gaussian noise (see ``noise``).
    steps : int
        Number of iterations (data-independent; solvers never stop early on private data).
    solver : str
        The algorithm: the name of the solver function (``"noisy_sgd"``, ...).
    source : str
        Where the algorithm comes from: the published work, and its algorithm and equation
        numbers (see docs/sources.md).
    wall_time : float
        Seconds spent in the solver.
    dp_event : dp_accounting.DpEvent
        What was released, for composing this fit with others: Gaussian noise multipliers are
        ``sigma / Delta`` with Delta the sensitivity under ``neighbours`` (the reading of
        dp_accounting's RDP accountant; see :mod:`dpsolve.privacy.accounting`).
    privacy : PrivacyReport
        The claimed (epsilon, delta), how the noise was chosen, and the epsilon a tight
        accountant certifies for the noise used. ``epsilon``, ``delta``, ``calibration`` and
        ``neighbours`` are read from it.
    noise : mapping of str to float
        Every noise the solver drew, by name, with its scale: ``"gaussian"`` (standard
        deviation), ``"gamma_norm"`` (scale s of the density ``exp(-||z|| / s)``), and
        solver-specific names documented by the solver (read-only).
    settings : mapping of str to object
        The solver's data-independent settings with defaults resolved (step sizes, clipping
        norm, ...), so a run can be repeated exactly (read-only).
    observers : mapping of str to float
        Multi-party runs: the epsilon (at ``delta``) certified against each observer, e.g.
        ``"outsider"``, ``"coordinator"``, ``"parties"`` (read-only; empty otherwise).
    transcript : object or None
        Multi-party runs with ``record_transcript=True``: the messages the coordinator saw.
    model : object or None
        Solvers whose output is more than one parameter array: the structured model
        (:func:`dpsolve.joint_sgd`: a :class:`~dpsolve.joint.JointModel` with the shared and
        the personalised parameters).
    """

    theta: np.ndarray
    sigma: float
    steps: int
    solver: str
    source: str
    wall_time: float
    dp_event: dp_accounting.DpEvent
    privacy: PrivacyReport
    noise: dict = dataclasses.field(default_factory=dict)
    settings: dict = dataclasses.field(default_factory=dict)
    observers: dict = dataclasses.field(default_factory=dict)
    transcript: object = None
    model: object = None

    def __post_init__(self):
        theta = np.array(self.theta, dtype=np.float64, copy=True)
        theta.flags.writeable = False
        object.__setattr__(self, "theta", theta)
        noise = dict(self.noise)
        if not noise and self.sigma is not None:
            noise = {"gaussian": float(self.sigma)}
        object.__setattr__(self, "noise", types.MappingProxyType(noise))
        object.__setattr__(self, "settings", types.MappingProxyType(dict(self.settings)))
        object.__setattr__(self, "observers", types.MappingProxyType(dict(self.observers)))

    def __reduce__(self):
        # the read-only mappings do not pickle: rebuild from plain dicts
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for name in ("noise", "settings", "observers"):
            values[name] = dict(values[name])
        return (_rebuild, (type(self), values))

    @property
    def epsilon(self):
        """Claimed epsilon."""
        return self.privacy.epsilon

    @property
    def delta(self):
        """Claimed delta."""
        return self.privacy.delta

    @property
    def calibration(self):
        """How the noise was chosen: "paper", an accountant name, or "explicit"."""
        return self.privacy.method

    @property
    def neighbours(self):
        """Neighbour relation of the guarantee."""
        return self.privacy.neighbours

    def certified_epsilon(self, delta=None, accountant=None):
        """Epsilon at ``delta`` (default: the fit's) that ``accountant`` (default: the tightest
        that supports the release) certifies for ``dp_event``.

        Parameters
        ----------
        delta : float, optional
            In [0, 1); default the fit's ``delta``.
        accountant : {"pld", "rdp", "zcdp", "strong", "basic"}, optional
            Default: the tightest that supports the release
            (:func:`dpsolve.privacy.epsilon_of`).

        Returns
        -------
        float
            The certified epsilon, under the fit's neighbour relation.
        """
        return epsilon_of(self, self.delta if delta is None else delta, accountant)


def _rebuild(cls, values):
    """Unpickle a Fit (:meth:`Fit.__reduce__`)."""
    return cls(**values)
