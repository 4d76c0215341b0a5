"""Composition theorems for (epsilon, delta)-DP and zCDP (docs/conventions.md, "Composition and
accounting").

Each function composes k mechanisms that are each (epsilon, delta)-DP and returns the total
``(epsilon, delta)``. These are the textbook rules that the source documents use; the tight
accountants live in :mod:`dpsolve.privacy.accounting`.
"""
import math

from .._deprecation import alias
from .._validation import check_int, check_real


def _checks(epsilon, delta, k, delta_slack=None):
    check_real(epsilon, "epsilon", low=0.0, low_inclusive=True)
    check_real(delta, "delta", low=0.0, high=1.0, low_inclusive=True)
    check_int(k, "k", low=1)
    if delta_slack is not None:
        check_real(delta_slack, "delta_slack", low=0.0, high=1.0)


def basic_composition(epsilon, delta, k):
    """Basic composition: k-fold (epsilon, delta) gives ``(k epsilon, k delta)``.

    Holds for any (epsilon, delta)-DP mechanisms, even chosen adaptively (Dwork & Roth 2014,
    Thm 3.16 and Section 3.5).

    Parameters
    ----------
    epsilon : float
        Epsilon of each mechanism, ``>= 0``.
    delta : float
        Delta of each mechanism, in [0, 1).
    k : int
        Number of mechanisms composed, ``>= 1``.

    Returns
    -------
    epsilon : float
        ``k epsilon``.
    delta : float
        ``min(1, k delta)``.
    """
    _checks(epsilon, delta, k)
    return k * epsilon, min(1.0, k * delta)


def strong_composition(epsilon, delta, k, delta_slack):
    r"""Kairouz, Oh & Viswanath (2015), Theorem 3.4: k-fold adaptive composition of
    (epsilon, delta)-DP mechanisms is ``(eps_total, 1 - (1 - delta)^k (1 - delta_slack))``-DP with

    .. math::

        \tilde\epsilon = \min\Big\{k\epsilon,\;
        k\epsilon\tanh(\epsilon/2) + \epsilon\sqrt{2k\ln(e + \sqrt{k\epsilon^2}/\tilde\delta)},\;
        k\epsilon\tanh(\epsilon/2) + \epsilon\sqrt{2k\ln(1/\tilde\delta)}\Big\}.

    Valid for every epsilon > 0 (reference [2] of the multi-party SGD notes).

    Parameters
    ----------
    epsilon : float
        Epsilon of each mechanism, ``>= 0``.
    delta : float
        Delta of each mechanism, in [0, 1).
    k : int
        Number of mechanisms composed, ``>= 1``.
    delta_slack : float
        The slack ``delta~`` in (0, 1) added to the total delta in exchange for an epsilon that
        grows as ``sqrt(k)`` rather than ``k``.

    Returns
    -------
    epsilon : float
        The total epsilon ``epsilon~`` above (at most ``k epsilon``).
    delta : float
        The total delta ``1 - (1 - delta)^k (1 - delta_slack)``.

    See Also
    --------
    drv_composition : The earlier, looser bound of Dwork, Rothblum & Vadhan (2010).
    simplified_strong_composition : A looser form with ``k epsilon^2``, for epsilon < 1.
    """
    _checks(epsilon, delta, k, delta_slack)
    base = k * epsilon * math.tanh(epsilon / 2.0)
    eps = min(k * epsilon,
              base + epsilon * math.sqrt(2 * k * math.log(math.e + math.sqrt(k) * epsilon / delta_slack)),
              base + epsilon * math.sqrt(2 * k * math.log(1.0 / delta_slack)))
    return eps, 1.0 - (1.0 - delta) ** k * (1.0 - delta_slack)


def drv_composition(epsilon, delta, k, delta_slack):
    """Strong composition of Dwork, Rothblum & Vadhan (2010): k-fold adaptive composition of
    (epsilon, delta)-DP mechanisms is ``(eps sqrt(2k ln(1/delta')) + k eps (e^eps - 1),
    k delta + delta')``-DP (Dwork & Roth 2014, Thm 3.20).

    Parameters
    ----------
    epsilon : float
        Epsilon of each mechanism, ``>= 0``.
    delta : float
        Delta of each mechanism, in [0, 1).
    k : int
        Number of mechanisms composed, ``>= 1``.
    delta_slack : float
        The slack ``delta'`` in (0, 1) added to the total delta.

    Returns
    -------
    epsilon : float
        ``epsilon sqrt(2k ln(1/delta')) + k epsilon (e^epsilon - 1)`` (not capped at
        ``k epsilon``).
    delta : float
        ``min(1, k delta + delta')``.
    """
    _checks(epsilon, delta, k, delta_slack)
    return (epsilon * math.sqrt(2 * k * math.log(1.0 / delta_slack)) + k * epsilon * math.expm1(epsilon),
            min(1.0, k * delta + delta_slack))


def simplified_strong_composition(epsilon, delta, k, delta_slack):
    """Strong composition in the simplified form the multi-party SGD notes state as their Lemma 1
    (after Bassily-Smith-Thakurta 2014), a labelled reproduction: k-fold adaptive composition of
    (epsilon, delta)-DP mechanisms is ``(min{k eps, k eps^2 + eps sqrt(2k ln(1/delta'))},
    1 - (1 - delta)^k (1 - delta'))``-DP, stated for 0 < epsilon < 1.

    Since ``tanh(eps/2) <= eps``, this is a valid, looser form of KOV's bound
    (:func:`strong_composition`, third term).

    Parameters
    ----------
    epsilon : float
        Epsilon of each mechanism, in [0, 1): the lemma is stated for epsilon < 1 (ValueError
        otherwise).
    delta : float
        Delta of each mechanism, in [0, 1).
    k : int
        Number of mechanisms composed, ``>= 1``.
    delta_slack : float
        The slack ``delta'`` in (0, 1) added to the total delta.

    Returns
    -------
    epsilon : float
        ``min{k epsilon, k epsilon^2 + epsilon sqrt(2k ln(1/delta'))}``.
    delta : float
        ``1 - (1 - delta)^k (1 - delta')``.
    """
    _checks(epsilon, delta, k, delta_slack)
    if not epsilon < 1.0:
        raise ValueError(f"Lemma 1 of the multi-party SGD notes is stated for epsilon < 1, "
                         f"got {epsilon:g}")
    eps = min(k * epsilon, k * epsilon ** 2 + epsilon * math.sqrt(2 * k * math.log(1.0 / delta_slack)))
    return eps, 1.0 - (1.0 - delta) ** k * (1.0 - delta_slack)


# the old name cited the project's internal file numbering (docs/changelog.md, "Unreleased")
seed000_lemma1_composition = alias(
    simplified_strong_composition, "seed000_lemma1_composition",
    "seed000_lemma1_composition is deprecated; use "
    "dpsolve.privacy.simplified_strong_composition, which computes the same")


def group_privacy(epsilon, delta, k):
    """Group privacy: an (epsilon, delta)-DP mechanism is ``(k epsilon, k e^{(k-1) epsilon}
    delta)``-DP for datasets that differ in k records (Dwork & Roth 2014, Thm 2.2 and its
    (epsilon, delta) form; for users of k records in Huang et al. 2023's setting, see
    docs/joint_dp.md).

    Parameters
    ----------
    epsilon : float
        Epsilon of the mechanism for datasets differing in one record, ``>= 0``.
    delta : float
        Its delta, in [0, 1).
    k : int
        Number of records in which the two datasets differ, ``>= 1``.

    Returns
    -------
    epsilon : float
        ``k epsilon``.
    delta : float
        ``min(1, k e^((k-1) epsilon) delta)``.
    """
    _checks(epsilon, delta, k)
    return k * epsilon, min(1.0, k * math.exp((k - 1) * epsilon) * delta)


def gaussian_zcdp(sigma, sensitivity):
    """zCDP of the Gaussian mechanism: ``rho = Delta^2 / (2 sigma^2)`` (Bun & Steinke 2016, as in
    Chen's 2019 slides). rho's add up under composition.

    Parameters
    ----------
    sigma : float
        Standard deviation of the Gaussian noise per coordinate, ``> 0``.
    sensitivity : float
        L2 sensitivity Delta of the query, ``>= 0``.

    Returns
    -------
    float
        ``rho = Delta^2 / (2 sigma^2)``.
    """
    check_real(sigma, "sigma", low=0.0)
    check_real(sensitivity, "sensitivity", low=0.0, low_inclusive=True)
    return sensitivity ** 2 / (2.0 * sigma ** 2)


def zcdp_to_dp(rho, delta):
    """rho-zCDP implies ``(rho + 2 sqrt(rho ln(1/delta)), delta)``-DP (Bun & Steinke 2016,
    Prop. 1.3, as in Chen's 2019 slides).

    Parameters
    ----------
    rho : float
        The zCDP parameter, ``>= 0`` (``inf`` allowed: then epsilon is ``inf``).
    delta : float
        Target delta, in (0, 1).

    Returns
    -------
    float
        ``epsilon = rho + 2 sqrt(rho ln(1/delta))``.
    """
    check_real(rho, "rho", low=0.0, low_inclusive=True, allow_inf=True)
    check_real(delta, "delta", low=0.0, high=1.0)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
