"""Label efficiency and robustness on the study's scales and on the chance scales, side by side.

Method section 9, amendment 14 measures ``L`` and ``R`` against chance: the
share of the above-chance discrimination kept at scarce labels,
``(AUROC_f - 0.5) / (AUROC_1.0 - 0.5)``, and lost under corruption or at a
second site, ``(AUROC_clean - AUROC_x) / (AUROC_clean - 0.5)``
(:func:`crsbench_lib.scoring.axes.chance_scaled`). This module puts both
scales of one results table beside each other, per encoder, so a reader sees
what the amendment changes:

* :func:`scale_comparison`: each encoder's ``L`` and ``R`` on both scales and
  its rank on each (rank 1 = best: highest ``L``, lowest ``R``);
* :func:`scale_correlations`: Spearman's rho of each scale's ``L`` and ``R``
  with clean AUROC ``D`` across encoders. On the study's scales an encoder near
  chance keeps all of a small AUROC and has little to lose, which ties the two
  axes to weak discrimination rather than to the property they name; on the
  chance scales that artefact is gone, and what correlation remains is the
  encoders' (Spearman 1904 for rho).

Examples
--------
>>> from crsbench_lib.results.synthetic import synthetic_results
>>> table = synthetic_results(n_encoders=4, corruptions=("noise",), random_state=0)
>>> both = scale_comparison(table, label_fractions=(1.0, 0.25, 0.1))
>>> list(both.columns)
['encoder', 'D', 'L_study', 'L_chance', 'R_study', 'R_chance', 'rank_L_study', 'rank_L_chance', 'rank_R_study', 'rank_R_chance', 'near_chance']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.validated import ValidatedResults
from crsbench_lib.scoring.rank_statistics import descending_ranks, spearman_rho
from crsbench_lib.scoring.axes import encoder_profiles, raw_axes
from crsbench_lib.standard import AxisScales

#: The scales compared, by column suffix.
SCALES: dict[str, str] = {"study": "the study's scales (L a ratio, R in AUROC points)",
                          "chance": "the chance scales (shares of the above-chance AUROC)"}


def scale_comparison(
    results: pd.DataFrame | ValidatedResults,
    label_fractions: Sequence[float],
    chance_margin: float = 0.05,
    arm: str = "frozen",
) -> pd.DataFrame:
    """Each encoder's ``L`` and ``R`` on both scales, with its rank on each.

    Parameters
    ----------
    results : pandas.DataFrame or ValidatedResults
        A results table.
    label_fractions : sequence of float
        The label fractions of ``L`` (a standard's ``label_fractions``).
    chance_margin : float
        The chance scales' margin (a cell within it of chance gets ``L = 0``,
        ``R = 1``).
    arm : {"frozen", "lora"}

    Returns
    -------
    pandas.DataFrame
        One row per encoder, sorted by ``D`` (descending, then name): ``D``,
        ``L_study``, ``L_chance``, ``R_study``, ``R_chance``, the four ranks
        (1 = best; ties share the lowest rank) and ``near_chance`` (the share of
        the encoder's cells within the margin of chance). Profiles are averaged
        over seeds, then datasets, per scale.
    """
    study = encoder_profiles(raw_axes(results, arm=arm, label_fractions=label_fractions))
    chance_raw = raw_axes(results, arm=arm, label_fractions=label_fractions,
                          scales=AxisScales("chance", "chance", chance_margin))
    chance = encoder_profiles(chance_raw)
    near = chance_raw.groupby("encoder")["near_chance"].mean()
    chance = chance.reindex(study.index)
    out = pd.DataFrame({
        "encoder": study.index.astype(str),
        "D": study["D"].to_numpy(dtype=float),
        "L_study": study["L"].to_numpy(dtype=float),
        "L_chance": chance["L"].to_numpy(dtype=float),
        "R_study": study["R"].to_numpy(dtype=float),
        "R_chance": chance["R"].to_numpy(dtype=float),
    })
    for axis, ascending in (("L", False), ("R", True)):
        for scale in SCALES:
            column = f"{axis}_{scale}"
            values = out[column].to_numpy(dtype=float)
            finite = np.isfinite(values)
            ranks = pd.array([pd.NA] * len(out), dtype="Int64")
            # Rank 1 = best: the highest L, the lowest R; an undefined value takes no rank.
            ranks[finite] = descending_ranks(values[finite] if not ascending else -values[finite], ties="min")
            out[f"rank_{column}"] = ranks
    out["near_chance"] = near.reindex(out["encoder"]).to_numpy(dtype=float)
    return out.sort_values(["D", "encoder"], ascending=[False, True], kind="mergesort").reset_index(drop=True)


def scale_correlations(comparison: pd.DataFrame) -> pd.DataFrame:
    """Spearman's rho of ``L`` and ``R`` with ``D`` across encoders, on each scale.

    Parameters
    ----------
    comparison : pandas.DataFrame
        Output of :func:`scale_comparison`.

    Returns
    -------
    pandas.DataFrame
        Rows ``L`` and ``R``; columns ``rho_study``, ``rho_chance`` (NaN where
        an axis is missing or constant), ``n_encoders`` and
        ``rank_moves`` (the largest change of an encoder's rank between the
        scales).

    Examples
    --------
    >>> table = pd.DataFrame({"D": [0.9, 0.8, 0.6], "L_study": [0.95, 0.97, 0.99], "L_chance": [0.9, 0.85, 0.7],
    ...                       "R_study": [0.03, 0.02, 0.01], "R_chance": [0.075, 0.067, 0.1],
    ...                       "rank_L_study": [3, 2, 1], "rank_L_chance": [1, 2, 3],
    ...                       "rank_R_study": [3, 2, 1], "rank_R_chance": [2, 1, 3]})
    >>> scale_correlations(table)[["rho_study", "rho_chance", "rank_moves"]].round(2).to_dict("list")
    {'rho_study': [-1.0, 1.0], 'rho_chance': [1.0, -0.5], 'rank_moves': [2, 2]}
    """
    needed = ["D"] + [f"{a}_{s}" for a in ("L", "R") for s in SCALES]
    missing = [c for c in needed if c not in comparison.columns]
    if missing:
        raise SchemaError(f"scale comparison lacks column '{missing[0]}' (expected the output of scale_comparison)")
    rows = []
    d = comparison["D"].to_numpy(dtype=float)
    for axis in ("L", "R"):
        row: dict[str, object] = {"axis": axis}
        for scale in SCALES:
            values = comparison[f"{axis}_{scale}"].to_numpy(dtype=float)
            keep = ~(np.isnan(values) | np.isnan(d))
            constant = keep.sum() < 3 or np.ptp(values[keep]) == 0 or np.ptp(d[keep]) == 0
            row[f"rho_{scale}"] = float("nan") if constant else float(spearman_rho(d[keep], values[keep]))
        row["n_encoders"] = int(len(comparison))
        ranks = [f"rank_{axis}_{s}" for s in SCALES]
        if all(c in comparison.columns for c in ranks):
            moved = (comparison[ranks[0]].astype(float) - comparison[ranks[1]].astype(float)).abs()
            row["rank_moves"] = int(moved.max()) if moved.notna().any() else 0
        rows.append(row)
    return pd.DataFrame(rows).set_index("axis")


__all__ = ["SCALES", "scale_comparison", "scale_correlations"]
