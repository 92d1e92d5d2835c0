"""What a standard's anchors mean: one normalised point of each axis in AUROC or ECE points, and why.

The anchors fix the scale of every axis (method section 4): the normalised
value is ``s = clip((x - worst) / (best - worst), 0, 1)``, so one normalised
point (0.01 of ``s``) is ``|best - worst| / 100`` of the raw axis. The anchors
are chosen from what the raw values mean for a clinical team, never from a
cohort's results (which would make a score depend on its neighbours):

- ``D`` (macro-AUROC): worst 0.5 is chance ranking, best 1.0 perfect ranking.
- ``C`` (ECE): worst 0.20 is a predictor whose stated risk is off by 20
  percentage points on average, at which a probability can no longer be read
  as a risk (a stated 60 % is anywhere from 40 % to 80 %); best 0 is perfect
  calibration. A finite test set puts a floor under the measured ECE (the
  ``ece_floor`` column), so ``s_C`` of 1 is out of reach even for a calibrated
  probe.

``L`` and ``R`` have two scales (method section 9, amendment 14; the
standard's ``axis_scales``), each with its own anchors:

- ``L`` on the study's ratio scale (AUROC kept at scarce labels, as a share of
  the full-label AUROC): worst 0.5 keeps at most chance discrimination (half
  of an AUROC of 1 or less), best 1.0 loses nothing. On the chance scale (the
  share of the above-chance discrimination kept, ``(AUROC_f - 0.5) / (AUROC_1.0
  - 0.5)``): worst 0 keeps nothing above chance, the same meaning as the ratio
  scale's 0.5, and best 1 keeps it all; the normalised value is the share kept.
- ``R`` on the study's points scale (AUROC lost under corruption and at a
  second site): worst 0.20 is the loss that takes a good encoder (0.85) to a
  weak one (0.65) under routine acquisition changes; best 0 loses nothing. On
  the chance scale (each loss as a share of the clean above-chance
  discrimination, ``(AUROC_clean - AUROC_x) / (AUROC_clean - 0.5)``): worst 1
  is a model brought down to chance, best 0 loses nothing; the normalised
  value is the share of the above-chance discrimination that survives. The
  points anchor judged a loss the same whatever the encoder had to lose; the
  chance anchor judges it against what the encoder had.
"""

from __future__ import annotations

import pandas as pd

from crsbench_lib.standard import AXES, ReferenceStandard

#: The raw unit of each axis, per scale (D has one scale; C is keyed by the ECE estimator when it is not the
#: plug-in, L and R by the standard's scale names).
AXIS_UNITS: dict[str, str] = {
    "D": "macro-AUROC",
    "C": "ECE",
    "C:debiased": "debiased ECE",
    "L:ratio": "AUROC retention ratio",
    "L:chance": "share of above-chance AUROC kept",
    "R:points": "AUROC loss",
    "R:chance": "share of above-chance AUROC lost",
}
#: Why each axis's anchors sit where they do, per scale (see the module docstring).
ANCHOR_REASONS: dict[str, str] = {
    "D": "worst = chance ranking (AUROC 0.5); best = perfect ranking",
    "C": "worst = stated risk off by 20 percentage points on average, no longer readable as a risk; best = perfectly calibrated",
    "C:debiased": "worst = stated risk off by 20 percentage points on average, no longer readable as a risk; best = perfectly "
                  "calibrated (a calibrated encoder's estimate scatters around 0)",
    "L:ratio": "worst = at most chance discrimination left with scarce labels; best = no loss at scarce labels",
    "L:chance": "worst = nothing above chance left with scarce labels; best = all of it kept (the normalised value is the share kept)",
    "R:points": "worst = a good encoder (0.85) turned weak (0.65) by routine acquisition changes; best = no loss",
    "R:chance": "worst = brought down to chance by routine acquisition changes; best = no loss (the normalised value is the share that survives)",
}
#: Columns of :func:`anchor_table`.
ANCHOR_COLUMNS: tuple[str, ...] = ("axis", "unit", "worst", "best", "per_point", "reason")


def scale_key(axis: str, standard: ReferenceStandard) -> str:
    """The key of ``axis`` in :data:`AXIS_UNITS` and :data:`ANCHOR_REASONS` under ``standard``'s scales and ECE estimator.

    Examples
    --------
    >>> from crsbench_lib.standard import load_template
    >>> [scale_key(axis, load_template()) for axis in AXES]
    ['D', 'C:debiased', 'L:chance', 'R:chance']
    """
    scales = standard.axis_scales
    if axis == "L":
        return f"L:{scales.label_efficiency}"
    if axis == "R":
        return f"R:{scales.robustness}"
    if axis == "C" and standard.ece_estimator != "plugin":
        return f"C:{standard.ece_estimator}"
    return axis


def anchor_table(standard: ReferenceStandard) -> pd.DataFrame:
    """The standard's anchors with what one normalised point means and why they sit there.

    Parameters
    ----------
    standard : ReferenceStandard

    Returns
    -------
    pandas.DataFrame
        One row per axis (order D, C, L, R), columns :data:`ANCHOR_COLUMNS`;
        ``per_point`` is ``|best - worst| / 100``, the raw change that moves
        the normalised value by 0.01.

    Examples
    --------
    >>> from crsbench_lib.standard import load_template
    >>> table = anchor_table(load_template())
    >>> table.set_index("axis").loc["C", ["worst", "best", "per_point"]].tolist()
    [0.2, 0.0, 0.002]
    """
    rows = []
    for axis in AXES:
        worst, best = standard.anchors[axis]
        rows.append({
            "axis": axis,
            "unit": AXIS_UNITS[scale_key(axis, standard)],
            "worst": worst,
            "best": best,
            "per_point": round(abs(best - worst) / 100.0, 12),
            "reason": ANCHOR_REASONS[scale_key(axis, standard)],
        })
    return pd.DataFrame(rows, columns=list(ANCHOR_COLUMNS))


__all__ = ["ANCHOR_COLUMNS", "ANCHOR_REASONS", "AXIS_UNITS", "anchor_table", "scale_key"]
