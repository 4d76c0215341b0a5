"""Privacy: noise calibration, composition, and accounting of what dpsolve's solvers release.

Conventions (docs/conventions.md, "Noise mechanisms" and "Composition and accounting"):
replace-one neighbours unless a function says otherwise; a DpEvent built by dpsolve carries
Gaussian noise multipliers ``sigma / Delta`` where Delta is the L2 sensitivity under the stated
neighbour relation (see :mod:`.accounting`).

- mechanisms: ``gaussian_sigma_classic``, ``gaussian_sigma_analytic``, ``gaussian_epsilon``,
  ``laplace_scale``, ``gamma_norm_scale``;
- composition: ``basic_composition``, ``strong_composition`` (KOV), ``drv_composition``,
  ``simplified_strong_composition`` (Lemma 1 of the multi-party SGD notes, a labelled
  reproduction; its old name is a deprecated alias, docs/changelog.md), ``group_privacy``,
  ``gaussian_zcdp``, ``zcdp_to_dp``;
- events: ``gaussian_event``, ``pure_event`` (``PureDpEvent``), ``exponential_event``
  (``BoundedRangeDpEvent``), ``ApproxDpEvent``,
  ``check_event``, ``PoissonSampling``, ``UniformSampling`` (each importable from accounting
  too);
- accounting: ``epsilon_of``, ``delta_of``, ``calibrate``, ``PrivacyReport`` (its ledger of
  ``PrivacyStep``),
  ``PrivacyWarning``;
- budget: ``BudgetAccountant`` (a budget across releases; ``BudgetExceededError``; the
  ``ParallelGroup`` its ``parallel()`` block yields) and ``charge``, the one path by which every
  release reaches a budget;
- quantile: ``private_quantile`` (Smith 2011), ``estimate_row_norm``, ``estimate_label_bound``
  (``PrivateEstimate``): norm bounds chosen privately;
- samplers: ``gaussian_noise``, ``laplace_noise``, ``gamma_norm_noise`` (C, from the caller's Generator),
  and ``Stream``, the faster stream (SFC64 and a ziggurat, inlined) that noisy SGD draws from;
- tail_bounds: ``gaussian_tail``, ``laplace_tail``, ``gamma_norm_tail`` (the smallest
  eigenvalue of a random symmetric noise matrix, which AdaSSP's ridge is set from) and the
  moments they imply;
- discrete: ``discrete_laplace``, ``discrete_gaussian``, ``bernoulli_exp`` (exact integer noise,
  Canonne, Kamath & Steinke 2020) and ``BitSource``, the uniform integers they draw.
"""
from .accounting import (ACCOUNTANTS, NEIGHBOURS, ApproxDpEvent, BoundedRangeDpEvent,
                         PoissonSampling, PrivacyReport, PrivacyStep, PrivacyWarning,
                         PureDpEvent, UniformSampling, calibrate, certify, check_event,
                         delta_of, epsilon_of, exponential_event, gaussian_event, pure_event, tightest_accountant)
from .budget import BudgetAccountant, BudgetExceededError, ParallelGroup, charge
from .composition import (basic_composition, drv_composition, gaussian_zcdp, group_privacy,
                          seed000_lemma1_composition, simplified_strong_composition,
                          strong_composition, zcdp_to_dp)
from .discrete import BitSource, bernoulli_exp, discrete_gaussian, discrete_laplace
from .mechanisms import (gaussian_epsilon, gaussian_log_delta, gaussian_sigma_analytic,
                         gaussian_sigma_classic, gamma_norm_scale, laplace_scale)
from .quantile import (PrivateEstimate, estimate_label_bound, estimate_row_norm,
                       private_quantile)
from .samplers import Stream, gamma_norm_noise, gaussian_noise, laplace_noise

__all__ = [
    "ACCOUNTANTS", "ApproxDpEvent", "basic_composition", "bernoulli_exp", "BitSource",
    "BoundedRangeDpEvent", "exponential_event",
    "BudgetAccountant", "BudgetExceededError", "calibrate", "certify", "charge", "check_event",
    "delta_of", "discrete_gaussian", "discrete_laplace", "drv_composition", "epsilon_of",
    "estimate_label_bound", "estimate_row_norm", "gamma_norm_noise", "gamma_norm_scale",
    "gaussian_epsilon", "gaussian_event", "gaussian_log_delta", "gaussian_noise",
    "gaussian_sigma_analytic", "gaussian_sigma_classic", "gaussian_zcdp", "group_privacy",
    "laplace_noise", "laplace_scale", "NEIGHBOURS", "ParallelGroup", "PoissonSampling",
    "PrivacyReport", "PrivacyStep", "PrivacyWarning", "private_quantile", "PrivateEstimate",
    "pure_event", "PureDpEvent", "simplified_strong_composition", "Stream", "strong_composition",
    "tightest_accountant", "UniformSampling", "zcdp_to_dp",
]
