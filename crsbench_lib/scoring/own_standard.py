"""A reference standard frozen from a run itself, with anchors that span its data (method section 3).

A run on a user's data scores badly against a standard frozen elsewhere: its
values can lie beyond the anchors (clipped to 0 or 1, so differences there
vanish) and every encoder can sit below the foreign panel (dominance 0 for
all). A profile that names no standard (or ``standard: own``) is therefore
scored against a standard frozen from its own table:

- settings (weights, label fractions, ECE bins, axis scales, dominance noise)
  from the base standard, the shipped template by default;
- anchors from the base unless an encoder's profile lies beyond one: that
  anchor moves outward to the most extreme value, rounded outward to the next
  multiple of :data:`ANCHOR_STEP` (so the anchor stays a round number a reader
  can quote, and the most extreme encoder keeps a normalised value just inside
  the unit interval rather than exactly at its end);
- the panel: every encoder of the arm (the run's own cohort is its reference).

Every choice is returned as a sentence, so that the book can say what was done.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace

import pandas as pd

from crsbench_lib.results.validated import ValidatedResults, as_validated
from crsbench_lib.scoring.axes import encoder_profiles, standard_axes
from crsbench_lib.scoring.freeze import freeze_profiles
from crsbench_lib.standard import AXES, HIGHER_IS_BETTER, ReferenceStandard, as_standard, load_template

#: Anchors move outward to a multiple of this step.
ANCHOR_STEP = 0.05


@dataclass(frozen=True)
class AnchorChange:
    """One anchor moved so that the run's data lie within it."""

    axis: str
    side: str
    old: float
    new: float
    extreme: float

    def message(self) -> str:
        """One sentence: which anchor moved, from where to where, and why."""
        return (f"the {self.side} anchor of {self.axis} moves from {self.old:g} to {self.new:g}, because an encoder's "
                f"{self.axis} of {self.extreme:.3f} lies beyond it")


def _outward(value: float, up: bool, step: float) -> float:
    """``value`` rounded away from the anchor range's inside to a multiple of ``step`` (strictly beyond it)."""
    k = value / step
    edge = (math.floor(k) + 1) if up else (math.ceil(k) - 1)
    return round(edge * step, 10)


def anchors_spanning(
    profiles: pd.DataFrame,
    anchors: Mapping[str, tuple[float, float]],
    step: float = ANCHOR_STEP,
) -> tuple[dict[str, tuple[float, float]], list[AnchorChange]]:
    """The anchors, each moved outward where an encoder's profile lies beyond it.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Raw encoder profiles, columns ``D, C, L, R``
        (:func:`~crsbench_lib.scoring.axes.encoder_profiles`).
    anchors : mapping
        Axis -> ``(worst, best)`` raw values.
    step : float
        Moved anchors are multiples of ``step``.

    Returns
    -------
    (dict, list of AnchorChange)
        The anchors (unchanged where the data lie within them) and the changes.

    Examples
    --------
    >>> import pandas as pd
    >>> profiles = pd.DataFrame({"D": [0.7, 0.9], "C": [0.05, 0.241], "L": [0.5, 0.9], "R": [0.1, 0.2]})
    >>> anchors = {"D": (0.5, 1.0), "C": (0.2, 0.0), "L": (0.0, 1.0), "R": (1.0, 0.0)}
    >>> new, changes = anchors_spanning(profiles, anchors)
    >>> new["C"], [c.message() for c in changes]
    ((0.25, 0.0), ["the worst anchor of C moves from 0.2 to 0.25, because an encoder's C of 0.241 lies beyond it"])
    """
    result: dict[str, tuple[float, float]] = {}
    changes: list[AnchorChange] = []
    for axis in AXES:
        worst, best = (float(v) for v in anchors[axis])
        values = pd.to_numeric(profiles[axis], errors="coerce").dropna()
        if values.empty:
            result[axis] = (worst, best)
            continue
        low, high = float(values.min()), float(values.max())
        if HIGHER_IS_BETTER[axis]:
            new_worst = _outward(low, up=False, step=step) if low < worst else worst
            new_best = _outward(high, up=True, step=step) if high > best else best
            extremes = (low, high)
        else:
            new_worst = _outward(high, up=True, step=step) if high > worst else worst
            new_best = _outward(low, up=False, step=step) if low < best else best
            extremes = (high, low)
        for side, old, new, extreme in (("worst", worst, new_worst, extremes[0]), ("best", best, new_best, extremes[1])):
            if new != old:
                changes.append(AnchorChange(axis, side, old, new, extreme))
        result[axis] = (new_worst, new_best)
    return result, changes


@dataclass(frozen=True)
class OwnStandard:
    """A standard frozen from a run, and the sentences that say how.

    Attributes
    ----------
    standard : ReferenceStandard
    anchor_changes : tuple of AnchorChange
    base_version : str
        The version of the standard its settings come from.
    """

    standard: ReferenceStandard
    anchor_changes: tuple[AnchorChange, ...]
    base_version: str

    def choices(self) -> list[str]:
        """What was chosen, one sentence each (the book shows them)."""
        panel = self.standard.panel_names
        anchors = ("its anchors are the template's, which span every encoder of the run"
                   if not self.anchor_changes else
                   "its anchors are the template's except that " + "; ".join(c.message() for c in self.anchor_changes))
        return [
            f"This run is scored against a reference standard frozen from its own table "
            f"({self.standard.version}), because its profile names none: weights, label fractions, ECE bins and axis scales come from "
            f"{self.base_version}.",
            f"The panel is every encoder of the {self.standard.arm} arm ({len(panel)}), so each encoder is "
            "compared with the run's own cohort.",
            anchors[0].upper() + anchors[1:] + ".",
        ]


def freeze_own_standard(
    results: pd.DataFrame | ValidatedResults,
    version: str,
    base: ReferenceStandard | str | os.PathLike[str] | None = None,
    *,
    created: str | None = None,
) -> OwnStandard:
    """Freeze a standard from a run's own table, with anchors that span its data.

    Parameters
    ----------
    results : pandas.DataFrame or ValidatedResults
        The run's results table.
    version : str
        Version id of the new standard.
    base : ReferenceStandard or path, optional
        Where settings and anchors come from; default the shipped template.
    created : str, optional
        Creation time (ISO 8601); default now.

    Returns
    -------
    OwnStandard

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> own = freeze_own_standard(synthetic_results(n_encoders=3, seeds=(0,)), "mine-own",
    ...                           created="2026-01-01T00:00:00Z")
    >>> own.standard.version, len(own.standard.panel_names)
    ('mine-own', 3)
    """
    base_std = load_template() if base is None else as_standard(base)
    table = as_validated(results)
    profiles = encoder_profiles(standard_axes(table, base_std, arm=base_std.arm))
    anchors, changes = anchors_spanning(profiles, base_std.anchors)
    spanning = replace(base_std, anchors=anchors)
    standard = freeze_profiles(profiles, version, base=spanning, arm=base_std.arm, created=created,
                               source_results_hash=table.hash)
    own = OwnStandard(standard=standard, anchor_changes=tuple(changes), base_version=base_std.version)
    # The file says how it was made, in the sentences the book shows.
    return replace(own, standard=replace(standard, description=" ".join(own.choices())))


__all__ = ["ANCHOR_STEP", "AnchorChange", "OwnStandard", "anchors_spanning", "freeze_own_standard"]
