"""Adaptation transfer: does the frozen ranking survive LoRA? (crs-method 6.9)

The LoRA-adapted arm is scored exactly like the frozen arm (same standard, same
axes). This module compares the two score tables over the encoders present in
both (hand-crafted encoders have no adapted arm):

* Kendall tau-b between the frozen and the adapted CRS (the study: 0.562);
* the overlap of the two top-k sets (the study: the same top 3);
* per encoder (and dataset), the clean AUROC gain ``mean AUROC_lora - mean
  AUROC_frozen`` over seeds (the study: discrimination improves).

Kendall's tau-b: ``(P - Q) / sqrt((P + Q + T_x)(P + Q + T_y))`` with P, Q the
concordant and discordant pairs and T_x, T_y the pairs tied in one ranking only
(Kendall 1945, "The treatment of ties in ranking problems"); computed with
scipy.stats.kendalltau.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.schema import validate_results
from crsbench_lib.results.select import clean_rows


@dataclass(frozen=True)
class TransferSummary:
    """Agreement of the frozen and adapted CRS rankings.

    Attributes
    ----------
    kendall_tau : float
        Kendall tau-b between frozen and adapted CRS over the shared encoders.
    p_value : float
        Two-sided p-value of tau = 0.
    top_k : int
        Size of the compared leading sets.
    top_k_frozen, top_k_lora : tuple of str
        The two top-k sets, best first.
    top_k_overlap : int
        Encoders in both top-k sets.
    n_encoders : int
        Encoders scored in both arms.
    mean_auroc_gain : float
        Mean over shared encoders of the clean AUROC gain (NaN when not given).
    """

    kendall_tau: float
    p_value: float
    top_k: int
    top_k_frozen: tuple[str, ...]
    top_k_lora: tuple[str, ...]
    top_k_overlap: int
    n_encoders: int
    mean_auroc_gain: float


def _scores(table: pd.DataFrame, name: str) -> pd.Series:
    for column in ("encoder", "crs"):
        if column not in table.columns:
            raise SchemaError(f"{name} scores: missing column {column!r}")
    if table["encoder"].duplicated().any():
        raise SchemaError(f"{name} scores: duplicate encoder {table.loc[table['encoder'].duplicated(), 'encoder'].iloc[0]!r}")
    return pd.Series(table["crs"].to_numpy(dtype=float), index=table["encoder"].astype(str).to_numpy(), name=name)


def top_k(scores: pd.Series, k: int) -> tuple[str, ...]:
    """The ``k`` best encoders by score (ties broken by name, so the result is deterministic)."""
    ordered = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return tuple(name for name, _ in ordered[:k])


def rank_comparison(frozen_scores: pd.DataFrame, lora_scores: pd.DataFrame) -> pd.DataFrame:
    """Frozen and adapted CRS and ranks of the encoders scored in both arms.

    Parameters
    ----------
    frozen_scores, lora_scores : pandas.DataFrame
        Score tables with at least ``encoder`` and ``crs`` columns (e.g. the
        output of ``crs.score_results(..., arm=...)``).

    Returns
    -------
    pandas.DataFrame
        Columns ``encoder, crs_frozen, crs_lora, rank_frozen, rank_lora,
        rank_change`` (rank 1 = best, among shared encoders; ``rank_change =
        rank_frozen - rank_lora``, positive when adaptation moves an encoder up),
        sorted by frozen rank.

    Raises
    ------
    SchemaError
        If a table lacks a column, repeats an encoder, or fewer than two
        encoders are shared.
    """
    frozen = _scores(frozen_scores, "frozen")
    lora = _scores(lora_scores, "lora")
    shared = sorted(set(frozen.index) & set(lora.index))
    if len(shared) < 2:
        raise SchemaError(f"frozen and lora scores share {len(shared)} encoder(s); need at least 2 to compare rankings")
    frame = pd.DataFrame({"encoder": shared, "crs_frozen": frozen[shared].to_numpy(), "crs_lora": lora[shared].to_numpy()})
    frame["rank_frozen"] = frame["crs_frozen"].rank(ascending=False, method="min").astype(int)
    frame["rank_lora"] = frame["crs_lora"].rank(ascending=False, method="min").astype(int)
    frame["rank_change"] = frame["rank_frozen"] - frame["rank_lora"]
    return frame.sort_values(["rank_frozen", "encoder"], kind="mergesort").reset_index(drop=True)


def auroc_gain(results: pd.DataFrame, by_dataset: bool = False) -> pd.DataFrame:
    """Clean AUROC gain of the adapted arm over the frozen arm.

    ``gain = mean_seeds(AUROC_lora) - mean_seeds(AUROC_frozen)`` per encoder and
    dataset (clean, 100 % labels, uncalibrated); per encoder it is then the mean
    over datasets (each dataset weighs the same, as in the profile).

    Parameters
    ----------
    results : pandas.DataFrame
        A results table with both arms.
    by_dataset : bool
        Return one row per (encoder, dataset) instead of per encoder.

    Returns
    -------
    pandas.DataFrame
        Columns ``encoder, [dataset,] auroc_frozen, auroc_lora, auroc_gain``.

    Raises
    ------
    SchemaError
        If no encoder has clean rows in both arms.
    """
    table = validate_results(results)
    clean = clean_rows(table, calibration="none")
    clean = clean.astype({"encoder": object, "dataset": object, "arm": object})
    per_cell = clean.groupby(["encoder", "dataset", "arm"], sort=True)["auroc"].mean().unstack("arm")
    if "frozen" not in per_cell.columns or "lora" not in per_cell.columns:
        raise SchemaError("results table: AUROC gain needs clean rows in both the frozen and the lora arm")
    per_cell = per_cell[["frozen", "lora"]].dropna()
    if per_cell.empty:
        raise SchemaError("results table: no (encoder, dataset) has clean rows in both arms")
    per_cell.columns = ["auroc_frozen", "auroc_lora"]
    per_cell["auroc_gain"] = per_cell["auroc_lora"] - per_cell["auroc_frozen"]
    if by_dataset:
        return per_cell.reset_index()
    return per_cell.groupby(level="encoder", sort=True).mean().reset_index()


def transfer_summary(
    frozen_scores: pd.DataFrame,
    lora_scores: pd.DataFrame,
    gains: pd.DataFrame | None = None,
    k: int = 3,
) -> TransferSummary:
    """Kendall tau, top-k overlap and mean AUROC gain between the two arms.

    Parameters
    ----------
    frozen_scores, lora_scores : pandas.DataFrame
        Score tables (``encoder``, ``crs``).
    gains : pandas.DataFrame, optional
        Output of :func:`auroc_gain` (per encoder).
    k : int
        Size of the leading set, at least 1.

    Returns
    -------
    TransferSummary
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    frame = rank_comparison(frozen_scores, lora_scores)
    tau, p_value = stats.kendalltau(frame["crs_frozen"], frame["crs_lora"], variant="b")
    frozen = pd.Series(frame["crs_frozen"].to_numpy(), index=frame["encoder"])
    lora = pd.Series(frame["crs_lora"].to_numpy(), index=frame["encoder"])
    k_eff = min(k, len(frame))
    top_frozen, top_lora = top_k(frozen, k_eff), top_k(lora, k_eff)
    mean_gain = float("nan")
    if gains is not None:
        shared = gains[gains["encoder"].isin(frame["encoder"])]
        mean_gain = float(shared["auroc_gain"].mean()) if not shared.empty else float("nan")
    return TransferSummary(
        kendall_tau=float(tau),
        p_value=float(p_value) if np.isfinite(p_value) else float("nan"),
        top_k=k_eff,
        top_k_frozen=top_frozen,
        top_k_lora=top_lora,
        top_k_overlap=len(set(top_frozen) & set(top_lora)),
        n_encoders=len(frame),
        mean_auroc_gain=mean_gain,
    )
