"""Does a results table fit the reference standard it is scored against?

A standard's anchors and panel were frozen from one cohort. Scored against a
standard frozen elsewhere (the shipped one comes from the phantom cohort), a
user's table can fall outside it in two ways that silently flatten the CRS
(method section 4):

- a raw axis value lies beyond an anchor, so its normalised value is clipped
  to 0 or 1 and differences there vanish;
- no encoder Pareto-dominates any panel member (dominance 0 for all) because,
  on some axis, every encoder is worse than every panel member: the
  dominance weight then separates nobody. (Dominance 0 for all is not by
  itself a misfit: scored against its own panel, a small cohort of mutually
  incomparable encoders has it too.)

Each is reported with the axis at fault and the remedy: freeze a standard from
one's own reference panel (``crsbench freeze``). A table can also lack whole
terms of an axis (no second site: ``R`` has no shift term); those are listed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from crsbench_lib.standard import AXES, HIGHER_IS_BETTER, ReferenceStandard, RobustnessComposite

#: How a user freezes a standard that fits their own data.
FREEZE_HINT = (
    "freeze a standard from your own reference panel with 'crsbench freeze RESULTS --version my-v1 "
    "[--panel ENCODER ...] --out standards/my-v1.yaml' and score with '--standard standards/my-v1.yaml'"
)
#: Why a freeze alone does not cure values beyond an anchor, and what does.
ANCHOR_HINT = (
    "a freeze copies the anchors of its base standard, so for values beyond an anchor freeze with "
    "'--base FILE', a copy of standards/crs-template.yaml whose anchors span your data"
)
# raw_axes piece column -> the term it stands for.
_TERMS: dict[str, str] = {
    "avg_corruption_loss": "R: no corruption term (no corruption rows)",
    "shift_loss": "R: no shift term (no dataset has a second site)",
}


@dataclass(frozen=True)
class AnchorExcess:
    """How many encoders lie beyond one anchor of one axis."""

    axis: str
    side: str
    anchor: float
    n: int
    of: int
    extreme: float

    def message(self) -> str:
        """One line naming the axis, the anchor and the most extreme value."""
        return (
            f"axis {self.axis}: {self.n} of {self.of} encoders lie beyond the {self.side} anchor "
            f"({self.anchor:.4g}; most extreme {self.extreme:.4g}), so their s_{self.axis} is clipped to "
            f"{0 if self.side == 'worst' else 1}"
        )


def anchor_excess(scores: pd.DataFrame, standard: ReferenceStandard) -> list[AnchorExcess]:
    """Axis values beyond the standard's anchors, per axis and side.

    Parameters
    ----------
    scores : pandas.DataFrame
        A scored table (columns ``D, C, L, R`` raw), e.g. from
        :func:`~crsbench_lib.scoring.crs.score_results`.
    standard : ReferenceStandard
        The standard the table was scored against.

    Returns
    -------
    list of AnchorExcess
        One entry per (axis, side) with at least one value strictly beyond the
        anchor in the axis' direction, in axis order, worst side first.

    Examples
    --------
    >>> from crsbench_lib.standard import load_template
    >>> std = load_template()
    >>> worst_c = std.anchors["C"][0]
    >>> table = pd.DataFrame({"D": [0.8], "C": [worst_c + 0.1], "L": [0.9], "R": [0.05]})
    >>> [e.axis for e in anchor_excess(table, std) if e.side == "worst"]
    ['C']
    """
    out: list[AnchorExcess] = []
    for axis in AXES:
        values = scores[axis].to_numpy(dtype=float)
        worst, best = (float(v) for v in standard.anchors[axis])
        sign = 1.0 if HIGHER_IS_BETTER[axis] else -1.0
        for side, anchor, beyond in (
            ("worst", worst, sign * (values - worst) < 0),
            ("best", best, sign * (values - best) > 0),
        ):
            if axis == "C" and side == "best" and standard.ece_estimator == "debiased":
                # The debiased ECE estimates a non-negative error without bias, so a
                # well-calibrated encoder's estimate scatters below 0 by sampling noise
                # alone: that is no value beyond the scale, and normalising clips it to 1.
                continue
            if beyond.any():
                picked = values[beyond]
                extreme = picked.min() if (side == "worst") == HIGHER_IS_BETTER[axis] else picked.max()
                out.append(AnchorExcess(axis, side, anchor, int(beyond.sum()), len(values), float(extreme)))
    return out


def axes_below_panel(scores: pd.DataFrame, standard: ReferenceStandard) -> list[str]:
    """Axes on which every encoder's normalised value is below every panel member's.

    Parameters
    ----------
    scores : pandas.DataFrame
        A scored table (columns ``s_D ... s_R``).
    standard : ReferenceStandard
        With a non-empty panel.

    Returns
    -------
    list of str
        The axes, in axis order.
    """
    panel = standard.require_panel()
    normalised = scores[[f"s_{a}" for a in AXES]].to_numpy(dtype=float)
    if normalised.shape[0] == 0:
        return []
    below = normalised.max(axis=0) < panel.min(axis=0)
    return [a for a, b in zip(AXES, below, strict=True) if b]


def fit_warnings(scores: pd.DataFrame, standard: ReferenceStandard) -> list[str]:
    """Warnings when a scored table lies outside the standard's panel or anchors.

    Parameters
    ----------
    scores : pandas.DataFrame
        A table scored against ``standard`` (:func:`~crsbench_lib.scoring.crs.score_results`).
    standard : ReferenceStandard

    Returns
    -------
    list of str
        One line per problem (dominance 0 for every encoder with an axis on
        which all lie below the panel, :func:`axes_below_panel`; each axis and
        side with values beyond an anchor), then one line with the remedy
        (:data:`FREEZE_HINT`, and :data:`ANCHOR_HINT` when an anchor is
        passed); empty when the table fits.

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> from crsbench_lib.scoring.crs import score_results
    >>> from crsbench_lib.scoring.freeze import freeze_standard
    >>> table = synthetic_results(n_encoders=4, corruptions=("noise",))
    >>> own = freeze_standard(table, "mine-v1")
    >>> fit_warnings(score_results(table, own), own)
    []
    """
    lines: list[str] = []
    dominance = scores["dominance"].to_numpy(dtype=float)
    below = axes_below_panel(scores, standard)
    # Under noise-aware dominance a candidate far below the panel still counts a vanishing
    # probability; "none" is less than half a panel member's worth.
    members = max(1, len(standard.panel_names))
    if len(dominance) and np.all(dominance * members < 0.5) and below:
        weight = float(standard.weights["dominance"])
        lines.append(
            f"every encoder has dominance near 0 against the panel of standard {standard.version}: on axis "
            f"{', '.join(below)} every encoder is worse than every panel member, so the dominance weight "
            f"({weight:g}) separates nobody"
        )
    excess = anchor_excess(scores, standard)
    lines.extend(e.message() for e in excess)
    if lines:
        lines.append(f"this table lies outside standard {standard.version}; {FREEZE_HINT}"
                     + (f"; {ANCHOR_HINT}" if excess else ""))
    return lines


def absent_terms(raw: pd.DataFrame) -> list[str]:
    """Axis terms that no cell of a table can measure.

    Parameters
    ----------
    raw : pandas.DataFrame
        Output of :func:`~crsbench_lib.scoring.axes.raw_axes`.

    Returns
    -------
    list of str
        E.g. ``"R: no shift term (no dataset has a second site)"``; ``L`` when
        no label-fraction rows exist. Empty when every term is measured.

    Examples
    --------
    >>> raw = pd.DataFrame({"avg_corruption_loss": [0.1], "shift_loss": [np.nan], "n_label_fractions": [2]})
    >>> absent_terms(raw)
    ['R: no shift term (no dataset has a second site)']
    """
    out = [text for column, text in _TERMS.items() if raw[column].isna().all()]
    if (raw["n_label_fractions"].to_numpy() == 0).all():
        out.insert(0, "L: no label-fraction rows")
    return out


#: The pieces R averages (method section 4), in the order of the raw-axes columns.
_R_PIECES: tuple[str, ...] = ("avg_corruption_loss", "worst_corruption_loss", "shift_loss")


def partial_terms(raw: pd.DataFrame, robustness: RobustnessComposite | None = None) -> list[str]:
    """Axis terms that some datasets of a table measure and others do not, with the weight they end up with.

    R is the (weighted) mean of the pieces a cell has
    (:func:`~crsbench_lib.scoring.axes.robustness_composite`), so a term
    measured on some datasets only (the site shift, where only some datasets
    have a second site) carries less of the profile's R than its share of the
    pieces.

    Parameters
    ----------
    raw : pandas.DataFrame
        Output of :func:`~crsbench_lib.scoring.axes.raw_axes`.
    robustness : RobustnessComposite, optional
        The standard's weights of R's pieces; ``None``: the study's equal shares.

    Returns
    -------
    list of str
        One line per such term; empty when each term is measured on every
        dataset or on none (:func:`absent_terms` names the latter).

    Examples
    --------
    >>> raw = pd.DataFrame({"dataset": ["a", "b", "c"], "avg_corruption_loss": [0.1, 0.1, 0.1],
    ...                     "worst_corruption_loss": [0.2, 0.2, 0.2], "shift_loss": [0.3, np.nan, np.nan]})
    >>> partial_terms(raw)
    ['R: the shift term is measured on a only (not on b, c), so it carries 11 % of the profile R (an equal share of its three pieces would be 33 %)']
    >>> partial_terms(raw, RobustnessComposite((0.5, 0.0, 0.5)))
    ['R: the shift term is measured on a only (not on b, c), so it carries 17 % of the profile R (its declared weight is 50 %)']
    """
    present = raw[list(_R_PIECES)].notna()
    study = robustness is None or robustness.is_study
    weights = np.ones(len(_R_PIECES)) if study else np.asarray(robustness.weights, dtype=float)
    # Each cell's R gives each of its pieces w_i / (sum of the weights it has); the profile averages cells
    # within, then across datasets.
    weighted = present.astype(float).mul(weights, axis=1)
    share = weighted.div(weighted.sum(axis=1).replace(0, np.nan), axis=0).fillna(0.0)
    out = []
    for column, term in (("avg_corruption_loss", "corruption"), ("shift_loss", "shift")):
        measured = present[column].groupby(raw["dataset"].to_numpy()).any()
        if measured.all() or not measured.any():
            continue
        weight = float(share[column].groupby(raw["dataset"].to_numpy()).mean().mean())
        if term == "corruption":  # two pieces: the mean and the worst corruption loss
            weight += float(share["worst_corruption_loss"].groupby(raw["dataset"].to_numpy()).mean().mean())
        here, missing = measured[measured].index, measured[~measured].index
        if study:
            equal = (2 if term == "corruption" else 1) / len(_R_PIECES)
            reference = f"an equal share of its three pieces would be {equal:.0%}"
        else:
            declared = weights[0] + weights[1] if term == "corruption" else weights[2]
            reference = f"its declared weight is {declared:.0%}"
        out.append(f"R: the {term} term is measured on {', '.join(map(str, here))} only (not on "
                   f"{', '.join(map(str, missing))}), so it carries {weight:.0%} of the profile R "
                   f"({reference})".replace("%", " %"))
    return out
