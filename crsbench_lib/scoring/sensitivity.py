"""How much the CRS ranking depends on its design choices (method section 6, items 3-4).

Weight sensitivity
    Weight vectors are drawn from a Dirichlet distribution centred on the
    standard's weights: ``alpha = concentration * w`` (mean ``w``; a weight of 0
    stays 0). With the default concentration of 100 the standard deviation of a
    weight ``w`` is ``sqrt(w (1 - w) / 101)``, about 0.05 for w = 0.4, i.e.
    perturbations of roughly +-0.1 around each default weight. Reported: the mean
    Kendall tau-b of each perturbed ranking to the default ranking, and the share
    of draws whose top-k set differs from the default one.

Reference-panel sensitivity
    Only dominance depends on the panel. Every leave-one-out panel and random
    panels of a fixed size (default: two thirds of the panel, rounded up, drawn
    without replacement) rescore the encoders; reported: how often the top-k set
    changes and the Kendall tau-b to the default ranking.

Anchor sensitivity
    Each axis's worst anchor is moved over a grid (the best anchors are the
    ideal values and stay); for every value the panel is renormalised against
    the new anchors (the panel members' raw profiles must be among the
    profiles) and the encoders rescored. Reported per value: the Kendall tau-b
    between clean AUROC (the raw ``D``) and the CRS, and the top-k set.

Top-k sets break exact ties towards the earlier encoder in the profiles' order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from dataclasses import dataclass

import numpy as np
import pandas as pd

from crsbench_lib.errors import ConfigError, ReferenceStandardError
from crsbench_lib.scoring.rank_statistics import kendall_tau_b, kendall_tau_to_reference
from crsbench_lib.scoring.crs import (
    _profile_array,
    balance_scores,
    dominance_matrix,
    dominance_shares,
    floor_scores,
    normalise_array,
    score_profiles,
)
from crsbench_lib.scoring.freeze import freeze_profiles
from crsbench_lib.scoring.anchors import scale_key
from crsbench_lib.standard import AXES, ReferenceStandard

#: Dirichlet concentration of the weight perturbation (sum of the alphas).
DIRICHLET_CONCENTRATION = 100.0
#: Number of perturbations of each analysis (method section 6).
DEFAULT_DRAWS = 1000
#: Size of a random reference panel, as a share of the full panel (rounded up).
PANEL_SUBSET_SHARE = 2.0 / 3.0
#: Worst anchors tried per axis by :func:`anchor_sweep`, per scale (keys of
#: :func:`crsbench_lib.scoring.anchors.scale_key`; each grid holds the method's default for its
#: scale). D and L on the ratio scale are AUROC-like (worst between chance and a weak encoder);
#: C (either ECE estimator) and R in points are ECE and AUROC losses (worst from a tenth to four tenths). On the chance
#: scales L's worst is a share of the above-chance AUROC kept (none to four tenths) and R's a
#: share lost (four tenths to all of it).
DEFAULT_WORST_SWEEP: dict[str, tuple[float, ...]] = {
    "D": (0.5, 0.55, 0.6, 0.65, 0.7),
    "C": (0.1, 0.15, 0.2, 0.3, 0.4),
    "C:debiased": (0.1, 0.15, 0.2, 0.3, 0.4),
    "L:ratio": (0.5, 0.55, 0.6, 0.65, 0.7),
    "L:chance": (0.0, 0.1, 0.2, 0.3, 0.4),
    "R:points": (0.1, 0.15, 0.2, 0.3, 0.4),
    "R:chance": (0.4, 0.5, 0.6, 0.8, 1.0),
}


def default_worst_sweep(standard: ReferenceStandard) -> dict[str, tuple[float, ...]]:
    """The worst anchors :func:`anchor_sweep` tries for ``standard``'s axis scales, per axis.

    Examples
    --------
    >>> from crsbench_lib.standard import load_template
    >>> default_worst_sweep(load_template())["R"]
    (0.4, 0.5, 0.6, 0.8, 1.0)
    """
    return {axis: DEFAULT_WORST_SWEEP[scale_key(axis, standard)] for axis in AXES}


#: Columns of :func:`anchor_sweep`.
ANCHOR_SWEEP_COLUMNS: tuple[str, ...] = ("axis", "worst", "is_default", "tau_auroc_crs", "top_k", "top_k_changed")


def _top_k_members(scores: np.ndarray, k: int, candidate: np.ndarray | None = None) -> np.ndarray:
    """Boolean membership of the k highest scores per row, among ``candidate`` columns only (all by default)."""
    scores = np.atleast_2d(np.asarray(scores, dtype=float))
    if candidate is not None:
        # A reference is scored but never ranked (bootstrap module docstring): it cannot take a top-k place.
        scores = np.where(candidate[None, :], scores, -np.inf)
    order = np.argsort(-scores, axis=1, kind="stable")
    member = np.zeros(order.shape, dtype=bool)
    np.put_along_axis(member, order[:, :k], True, axis=1)
    return member


def _candidates(encoders: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """Mask of the encoders that may lead (not a reference); unknown reference names are ignored."""
    excluded = {str(name) for name in references}
    return np.array([name not in excluded for name in encoders], dtype=bool)


def _check_k(top_k: int, n: int) -> None:
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or not 1 <= top_k <= n:
        raise ConfigError(f"parameter 'top_k' must be an integer in 1..{n} (the candidates), found {top_k!r}")


def _check_draws(n: int, name: str) -> None:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ConfigError(f"parameter '{name}' must be a positive integer, found {n!r}")


def _names(members: np.ndarray, encoders: list[str]) -> tuple[str, ...]:
    return tuple(e for e, m in zip(encoders, members, strict=True) if m)


@dataclass(frozen=True, eq=False)
class WeightPerturbation:
    """Outcome of :func:`weight_perturbation`.

    Attributes
    ----------
    encoders : tuple of str
        Column order of ``crs_draws``.
    default_crs : numpy.ndarray
        CRS under the standard's weights, shape (E,).
    weights : numpy.ndarray
        Drawn weights (n_draws, 3): dominance, balance, floor.
    crs_draws : numpy.ndarray
        CRS per draw, shape (n_draws, E).
    taus : numpy.ndarray
        Kendall tau-b of each draw's ranking to the default ranking (for plotting).
    top_k_changed : numpy.ndarray
        Per draw, whether the top-k set differs from the default.
    default_top_k : tuple of str
    mean_tau, share_top_k_changed : float
    p_top_k : pandas.Series
        Per encoder, the share of draws that put it in the top k.
    top_k : int
    concentration : float
    """

    encoders: tuple[str, ...]
    default_crs: np.ndarray
    weights: np.ndarray
    crs_draws: np.ndarray
    taus: np.ndarray
    top_k_changed: np.ndarray
    default_top_k: tuple[str, ...]
    mean_tau: float
    share_top_k_changed: float
    p_top_k: pd.Series
    top_k: int
    concentration: float


def dirichlet_weights(
    centre: np.ndarray, n_draws: int, concentration: float = DIRICHLET_CONCENTRATION, random_state: int = 0
) -> np.ndarray:
    """Weight vectors from a Dirichlet with mean ``centre`` and the given concentration.

    Components with zero weight stay zero.

    Returns
    -------
    numpy.ndarray
        Shape (n_draws, len(centre)), rows summing to 1.
    """
    if not (math.isfinite(concentration) and concentration > 0):
        raise ConfigError(f"parameter 'concentration' must be a positive number, found {concentration!r}")
    _check_draws(n_draws, "n_draws")
    centre = np.asarray(centre, dtype=float)
    active = centre > 0
    rng = np.random.default_rng(random_state)
    out = np.zeros((int(n_draws), centre.size))
    out[:, active] = rng.dirichlet(concentration * centre[active], size=int(n_draws))
    return out


def _fixed_components(profiles: pd.DataFrame, standard: ReferenceStandard) -> tuple[np.ndarray, np.ndarray]:
    """Normalised profiles (E, 4) and their (E, k) dominance matrix against the panel (the standard's form)."""
    panel = standard.require_panel()
    s = normalise_array(_profile_array(profiles, "profiles"), standard.worst, standard.best)
    return s, dominance_matrix(s, panel, standard.dominance_noise)


def weight_perturbation(
    profiles: pd.DataFrame,
    standard: ReferenceStandard,
    n_draws: int = DEFAULT_DRAWS,
    concentration: float = DIRICHLET_CONCENTRATION,
    random_state: int = 0,
    top_k: int = 3,
    references: Sequence[str] = (),
) -> WeightPerturbation:
    """Rescore under Dirichlet-perturbed weights and compare with the default ranking.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Raw encoder profiles (index encoder, columns D, C, L, R).
    standard : ReferenceStandard
        Anchors, panel and the default (centre) weights.
    n_draws : int
        Number of weight vectors.
    concentration : float
        Dirichlet concentration (see the module docstring).
    random_state : int
    top_k : int
    references : sequence of str
        Encoders scored but left out of the Kendall taus and never in the
        top k: references such as an encoder pretrained on the evaluation
        labels (every rank comparison ranks candidates only). Their
        ``p_top_k`` is NaN.

    Returns
    -------
    WeightPerturbation
    """
    encoders = [str(e) for e in profiles.index]
    candidate = _candidates(encoders, references)
    _check_k(top_k, int(candidate.sum()))
    s = _fixed_components(profiles, standard)[0]
    shares = dominance_shares(s, standard.require_panel(), standard.dominance_noise)
    components = np.column_stack([shares, balance_scores(s), floor_scores(s)])  # (E, 3)
    w = standard.weight_vector
    # Same expression as the scorer, so the default ranking matches score_profiles bit for bit.
    default = w[0] * components[:, 0] + w[1] * components[:, 1] + w[2] * components[:, 2]
    weights = dirichlet_weights(standard.weight_vector, n_draws, concentration, random_state)
    draws = weights @ components.T  # (B, E)
    # Every rank comparison of the book ranks the candidates only: a reference takes no part in tau either.
    taus = kendall_tau_to_reference(default[candidate], draws[:, candidate])
    default_top = _top_k_members(default, top_k, candidate)[0]
    members = _top_k_members(draws, top_k, candidate)
    changed = (members != default_top[None, :]).any(axis=1)
    share_in_top = np.where(candidate, members.mean(axis=0), np.nan)
    return WeightPerturbation(
        encoders=tuple(encoders),
        default_crs=default,
        weights=weights,
        crs_draws=draws,
        taus=taus,
        top_k_changed=changed,
        default_top_k=_names(default_top, encoders),
        mean_tau=float(np.nanmean(taus)),
        share_top_k_changed=float(changed.mean()),
        p_top_k=pd.Series(share_in_top, index=pd.Index(encoders, name="encoder"), name=f"p_top{top_k}"),
        top_k=int(top_k),
        concentration=float(concentration),
    )


@dataclass(frozen=True, eq=False)
class PanelPerturbation:
    """Outcome of :func:`panel_perturbation`.

    Attributes
    ----------
    encoders : tuple of str
    default_top_k : tuple of str
    leave_one_out : pandas.DataFrame
        Per left-out panel member: left_out, tau, top_k_changed, top_k (names).
    subset_size : int
    subset_taus, subset_top_k_changed : numpy.ndarray
        Per random panel.
    share_changed_leave_one_out, share_changed_subsets : float
    mean_tau_leave_one_out, mean_tau_subsets : float
    top_k : int
    """

    encoders: tuple[str, ...]
    default_top_k: tuple[str, ...]
    leave_one_out: pd.DataFrame
    subset_size: int
    subset_taus: np.ndarray
    subset_top_k_changed: np.ndarray
    share_changed_leave_one_out: float
    share_changed_subsets: float
    mean_tau_leave_one_out: float
    mean_tau_subsets: float
    top_k: int


def panel_perturbation(
    profiles: pd.DataFrame,
    standard: ReferenceStandard,
    n_subsets: int = DEFAULT_DRAWS,
    subset_size: int | None = None,
    random_state: int = 0,
    top_k: int = 3,
    references: Sequence[str] = (),
) -> PanelPerturbation:
    """Rescore against leave-one-out and random sub-panels of the reference panel.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Raw encoder profiles.
    standard : ReferenceStandard
        Needs at least 2 panel members.
    n_subsets : int
        Number of random panels.
    subset_size : int, optional
        Members per random panel; default ``ceil(PANEL_SUBSET_SHARE * k)``
        (at most k - 1).
    random_state : int
    top_k : int
    references : sequence of str
        Encoders scored but left out of the taus and of the top k (see
        :func:`weight_perturbation`).

    Returns
    -------
    PanelPerturbation
    """
    encoders = [str(e) for e in profiles.index]
    candidate = _candidates(encoders, references)
    _check_k(top_k, int(candidate.sum()))
    _check_draws(n_subsets, "n_subsets")
    s, dominated = _fixed_components(profiles, standard)
    k = dominated.shape[1]
    if k < 2:
        raise ReferenceStandardError(f"panel perturbation needs at least 2 panel members, standard '{standard.version}' has {k}")
    size = min(k - 1, math.ceil(PANEL_SUBSET_SHARE * k)) if subset_size is None else int(subset_size)
    if not 1 <= size <= k:
        raise ConfigError(f"parameter 'subset_size' must lie in 1..{k}, found {subset_size!r}")
    w = standard.weight_vector
    fixed = w[1] * balance_scores(s) + w[2] * floor_scores(s)
    dominated_f = np.asarray(dominated, dtype=float)

    def scores(masks: np.ndarray) -> np.ndarray:
        share = masks.astype(float) @ dominated_f.T / masks.sum(axis=1, keepdims=True)
        return w[0] * share + fixed[None, :]

    default = scores(np.ones((1, k), dtype=bool))[0]
    default_top = _top_k_members(default, top_k, candidate)[0]

    loo_masks = ~np.eye(k, dtype=bool)
    loo = scores(loo_masks)
    loo_members = _top_k_members(loo, top_k, candidate)
    loo_changed = (loo_members != default_top[None, :]).any(axis=1)
    loo_taus = kendall_tau_to_reference(default[candidate], loo[:, candidate])

    rng = np.random.default_rng(random_state)
    chosen = np.argsort(rng.random((int(n_subsets), k)), axis=1)[:, :size]
    masks = np.zeros((int(n_subsets), k), dtype=bool)
    np.put_along_axis(masks, chosen, True, axis=1)
    sub = scores(masks)
    sub_changed = (_top_k_members(sub, top_k, candidate) != default_top[None, :]).any(axis=1)
    sub_taus = kendall_tau_to_reference(default[candidate], sub[:, candidate])

    table = pd.DataFrame(
        {
            "left_out": list(standard.panel_names),
            "tau": loo_taus,
            "top_k_changed": loo_changed,
            "top_k": [", ".join(_names(m, encoders)) for m in loo_members],
        }
    )
    return PanelPerturbation(
        encoders=tuple(encoders),
        default_top_k=_names(default_top, encoders),
        leave_one_out=table,
        subset_size=size,
        subset_taus=sub_taus,
        subset_top_k_changed=sub_changed,
        share_changed_leave_one_out=float(loo_changed.mean()),
        share_changed_subsets=float(sub_changed.mean()),
        mean_tau_leave_one_out=float(np.nanmean(loo_taus)),
        mean_tau_subsets=float(np.nanmean(sub_taus)),
        top_k=int(top_k),
    )


def _rescored(profiles: pd.DataFrame, standard: ReferenceStandard) -> pd.DataFrame:
    """Score ``profiles`` against ``standard`` with its panel renormalised from the raw profiles."""
    refrozen = freeze_profiles(
        profiles, standard.version, panel=standard.panel_names, base=standard, arm=standard.arm, created=standard.created
    )
    return score_profiles(profiles, refrozen).set_index("encoder").loc[[str(e) for e in profiles.index]]


def anchor_sweep(
    profiles: pd.DataFrame,
    standard: ReferenceStandard,
    worst_values: Mapping[str, Sequence[float]] | None = None,
    top_k: int = 3,
    references: Sequence[str] = (),
) -> pd.DataFrame:
    """How the AUROC-CRS agreement and the top-k move as each worst anchor varies.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Raw encoder profiles (index encoder, columns D, C, L, R), including
        every member of the standard's panel.
    standard : ReferenceStandard
        The standard whose anchors are varied (one axis at a time).
    worst_values : mapping of axis to sequence of float, optional
        Worst anchors to try per axis (default :func:`default_worst_sweep`).
    top_k : int
    references : sequence of str
        Encoders left out of the agreement and of the top k (see
        :func:`weight_perturbation`).

    Returns
    -------
    pandas.DataFrame
        One row per axis and worst value, columns :data:`ANCHOR_SWEEP_COLUMNS`:
        ``tau_auroc_crs`` is Kendall's tau-b between the raw ``D`` (clean
        AUROC) and the CRS; ``top_k`` the names of the k highest CRS, highest
        first; ``top_k_changed`` whether that set differs from the one at the
        standard's own anchors.

    Raises
    ------
    ReferenceStandardError
        If a panel member is not among the profiles, an axis is unknown, or a
        worst value equals the axis's best anchor.

    Examples
    --------
    >>> from crsbench_lib.scoring.freeze import freeze_profiles
    >>> profiles = pd.DataFrame({"D": [0.9, 0.8, 0.7], "C": [0.1, 0.02, 0.05],
    ...                          "L": [0.9, 0.95, 0.8], "R": [0.05, 0.02, 0.1]}, index=["a", "b", "c"])
    >>> standard = freeze_profiles(profiles, "demo-v1", created="2026-01-01T00:00:00Z")
    >>> sweep = anchor_sweep(profiles, standard, {"C": (0.1, 0.2)}, top_k=1)
    >>> sweep[["axis", "worst", "top_k"]].to_dict("records")
    [{'axis': 'C', 'worst': 0.1, 'top_k': 'b'}, {'axis': 'C', 'worst': 0.2, 'top_k': 'b'}]
    """
    grid = default_worst_sweep(standard) if worst_values is None else worst_values
    missing = [n for n in standard.panel_names if n not in profiles.index]
    if missing:
        raise ReferenceStandardError(f"panel member '{missing[0]}' of '{standard.version}' is not among the profiles")
    candidate = _candidates([str(e) for e in profiles.index], references)
    _check_k(top_k, int(candidate.sum()))

    def leaders(crs: pd.Series) -> pd.Index:
        return crs[candidate].nlargest(top_k, keep="first").index

    default_top = set(leaders(_rescored(profiles, standard)["crs"]))
    rows = []
    for axis, values in grid.items():
        if axis not in standard.anchors:
            raise ReferenceStandardError(f"unknown axis {axis!r} in the anchor sweep (expected one of D, C, L, R)")
        worst_default, best = standard.anchors[axis]
        for worst in values:
            if float(worst) == best:
                raise ReferenceStandardError(f"worst anchor {worst} of axis {axis} equals its best anchor")
            varied = replace(standard, anchors={**standard.anchors, axis: (float(worst), best)})
            scores = _rescored(profiles, varied)
            top = leaders(scores["crs"])
            rows.append({
                "axis": axis,
                "worst": float(worst),
                "is_default": float(worst) == worst_default,
                "tau_auroc_crs": kendall_tau_b(scores["D"].to_numpy(float)[candidate],
                                               scores["crs"].to_numpy(float)[candidate]),
                "top_k": ", ".join(map(str, top)),
                "top_k_changed": set(top) != default_top,
            })
    return pd.DataFrame(rows, columns=list(ANCHOR_SWEEP_COLUMNS))


__all__ = [
    "ANCHOR_SWEEP_COLUMNS",
    "DEFAULT_WORST_SWEEP",
    "default_worst_sweep",
    "anchor_sweep",
    "DEFAULT_DRAWS",
    "DIRICHLET_CONCENTRATION",
    "PANEL_SUBSET_SHARE",
    "PanelPerturbation",
    "WeightPerturbation",
    "dirichlet_weights",
    "panel_perturbation",
    "weight_perturbation",
]


@dataclass(frozen=True)
class SensitivityFacts:
    """What the sensitivity page's action line reads: how often the design choices change the top k.

    Attributes
    ----------
    top_k : tuple of str
        The default ranking's top k.
    n_draws : int
        Weight draws.
    share_weights, share_loo, share_subsets : float
        Shares of weight draws, leave-one-out panels and random sub-panels that change the top k.
    """

    top_k: tuple[str, ...]
    n_draws: int
    share_weights: float
    share_loo: float
    share_subsets: float


def sensitivity_facts(weights: WeightPerturbation, panel: PanelPerturbation) -> SensitivityFacts:
    """The facts of the sensitivity page from its weight and panel perturbations."""
    return SensitivityFacts(tuple(map(str, weights.default_top_k)), len(weights.taus), float(weights.share_top_k_changed),
                            float(panel.share_changed_leave_one_out), float(panel.share_changed_subsets))
