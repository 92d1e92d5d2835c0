"""Does a run's world teach true lessons? The checks of the default world, from a results table.

A simulated cohort is only useful for teaching reliability-aware selection if
what it shows about encoders is what real encoders and real data show. The
checks below are the measurable part of that (the world issue, "must show"),
computed from a results table and the zoo's family of each encoder:

- **room for representation learning**: on every dataset the best broad
  pretrained encoder (families ``broad_ssl`` and ``broad_multitask``) beats
  both the pixel probe and the PCA probe by at least :data:`MIN_MARGIN` clean
  macro-AUROC;
- **no solved task**: no encoder reaches :data:`MAX_AUROC` on any dataset;
- **a realistic second site**: no encoder whose clean AUROC exceeds
  :data:`SITE_B_CLEAN` falls below :data:`SITE_B_FLOOR` at the second site;
- **a zoo large enough to rank**: at least :data:`MIN_NEURAL` neural encoders,
  and at least :data:`MIN_LORA_RUNS` adapted runs (encoder x dataset x seed).

AUROCs are means over seeds of the frozen arm's uncalibrated rows at 100 %
labels. The thresholds are the issue's; they are requirements on the world,
not on any agreement between AUROC and CRS.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from crsbench_lib.results.io import MANIFEST_FILE
from crsbench_lib.results.select import clean_rows, same_fraction

#: Minimum clean macro-AUROC margin of the best broad encoder over the pixel and PCA probes.
MIN_MARGIN = 0.10
#: No encoder may reach this clean macro-AUROC (a solved task ranks nothing).
MAX_AUROC = 0.98
#: Site-B rule: an encoder above this clean AUROC ...
SITE_B_CLEAN = 0.75
#: ... must stay at or above this AUROC at the second site.
SITE_B_FLOOR = 0.60
#: Minimum neural encoders and adapted runs.
MIN_NEURAL = 10
MIN_LORA_RUNS = 90
#: Families of the broad, augmented foundation-like encoders (encoders/recipes.py FAMILIES keys).
BROAD_FAMILIES: frozenset[str] = frozenset({"broad_ssl", "broad_multitask"})
#: Families that are not neural networks.
CLASSICAL_FAMILIES: frozenset[str] = frozenset({"classical"})

CHECK_COLUMNS: tuple[str, ...] = ("check", "dataset", "value", "rule", "holds")


def clean_frozen_auroc(table: pd.DataFrame) -> pd.DataFrame:
    """Mean clean macro-AUROC over seeds, frozen arm, no calibrator: encoders x datasets.

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> table = synthetic_results(n_encoders=2, corruptions=("noise",), random_state=0)
    >>> clean_frozen_auroc(table).shape[0]
    2
    """
    rows = clean_rows(table, arm="frozen", calibration="none")
    return rows.groupby(["encoder", "dataset"])["auroc"].mean().unstack("dataset").sort_index()


def _shift_frozen_auroc(table: pd.DataFrame) -> pd.DataFrame:
    mask = (
        (table["condition"].to_numpy() == "shift")
        & (table["arm"].to_numpy() == "frozen")
        & (table["calibration"].to_numpy() == "none")
        & same_fraction(table["label_fraction"], 1.0)
    )
    return table[mask].groupby(["encoder", "dataset"])["auroc"].mean().unstack("dataset")


def _row(check: str, dataset: str, value: float | int, rule: str, holds: bool) -> dict[str, object]:
    # Counts (encoders, runs) stay integers, so the table shows 108, not 108.000.
    number = int(value) if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else float(value)
    return {"check": check, "dataset": dataset, "value": number, "rule": rule, "holds": bool(holds)}


def _margin_rows(clean: pd.DataFrame, families: Mapping[str, str], pixel: str, pca: str) -> list[dict[str, object]]:
    broad = [e for e in clean.index if families.get(e) in BROAD_FAMILIES]
    rows = []
    for dataset in clean.columns:
        best = clean.loc[broad, dataset].max() if broad else np.nan
        for baseline in (pixel, pca):
            margin = best - clean.at[baseline, dataset] if baseline in clean.index else np.nan
            rule = f"best broad encoder - {baseline} >= {MIN_MARGIN:.2f}"
            rows.append(_row("margin over " + baseline, dataset, margin, rule, bool(margin >= MIN_MARGIN)))
    return rows


def world_checks(
    table: pd.DataFrame, families: Mapping[str, str], pixel: str = "pixels", pca: str = "pca"
) -> pd.DataFrame:
    """Evaluate the world's must-show checks on a results table.

    Parameters
    ----------
    table : pandas.DataFrame
        A results table (:mod:`crsbench_lib.results.schema`).
    families : mapping of str to str
        Study family of each encoder (the ``family`` of the zoo's cards, keys of
        ``encoders.recipes.FAMILIES``; classical baselines ``"classical"``).
    pixel, pca : str
        Names of the pixel-probe and PCA-probe encoders.

    Returns
    -------
    pandas.DataFrame
        One row per check and dataset (``dataset`` is ``"all"`` for zoo-wide
        checks) with columns :data:`CHECK_COLUMNS`; ``value`` is an object
        column holding floats (AUROCs, margins) and ints (counts of encoders
        and runs); ``holds`` is False where a baseline or a broad encoder is
        missing (the value is then NaN).

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> table = synthetic_results(n_encoders=3, corruptions=("noise",), random_state=0)
    >>> checks = world_checks(table, {})
    >>> sorted(set(checks["check"]))[:2]
    ['LoRA runs', 'highest clean AUROC']
    """
    clean = clean_frozen_auroc(table)
    rows = _margin_rows(clean, families, pixel, pca)
    for dataset in clean.columns:
        top = clean[dataset].max()
        rows.append(_row("highest clean AUROC", dataset, top, f"< {MAX_AUROC:.2f}", bool(top < MAX_AUROC)))
    shift = _shift_frozen_auroc(table)
    for dataset in shift.columns:
        strong = clean.index[clean[dataset] > SITE_B_CLEAN]
        worst = shift[dataset].reindex(strong).min() if len(strong) else np.nan
        rule = f"site B AUROC >= {SITE_B_FLOOR:.2f} where clean > {SITE_B_CLEAN:.2f}"
        rows.append(_row("site-B floor", dataset, worst, rule, bool(len(strong) == 0 or worst >= SITE_B_FLOOR)))
    neural = sum(1 for e in clean.index if families.get(e, "classical") not in CLASSICAL_FAMILIES)
    rows.append(_row("neural encoders", "all", neural, f">= {MIN_NEURAL}", neural >= MIN_NEURAL))
    lora = table[table["arm"].to_numpy() == "lora"]
    runs = len(lora[["encoder", "dataset", "seed"]].drop_duplicates())
    rows.append(_row("LoRA runs", "all", runs, f">= {MIN_LORA_RUNS}", runs >= MIN_LORA_RUNS))
    frame = pd.DataFrame(rows, columns=list(CHECK_COLUMNS))
    # An object column keeps each value's type (a float column would turn 108 runs into 108.0).
    frame["value"] = pd.Series([row["value"] for row in rows], index=frame.index, dtype=object)
    return frame


#: Columns of :func:`calibration_floor` and :func:`run_cost`.
FLOOR_COLUMNS: tuple[str, ...] = ("dataset", "test_images", "ece", "ece_floor", "ece_excess")
COST_COLUMNS: tuple[str, ...] = ("arm", "cells", "cpu_minutes")


def calibration_floor(table: pd.DataFrame) -> pd.DataFrame:
    """Per dataset: test size, mean clean ECE, the ECE floor of its predictions, and the excess.

    The floor is the ECE a perfectly calibrated predictor with the same
    confidences would still measure on that many test images (the
    ``ece_floor`` column); only the excess above it is miscalibration the
    sample size does not explain. Means over encoders and seeds of the frozen
    arm's clean, uncalibrated rows at 100 % labels.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`FLOOR_COLUMNS`, one row per dataset.

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> table = synthetic_results(n_encoders=2, corruptions=("noise",), random_state=0)
    >>> list(calibration_floor(table).columns)
    ['dataset', 'test_images', 'ece', 'ece_floor', 'ece_excess']
    """
    rows = clean_rows(table, arm="frozen", calibration="none")
    grouped = rows.groupby("dataset", sort=True, observed=True)
    out = pd.DataFrame({
        "test_images": grouped["n_test"].max().astype(int),
        "ece": grouped["ece"].mean(),
        "ece_floor": grouped["ece_floor"].mean() if "ece_floor" in rows else np.nan,
        "ece_excess": grouped["ece_excess"].mean() if "ece_excess" in rows else np.nan,
    })
    return out.reset_index()[list(FLOOR_COLUMNS)]


def run_cost(run_dir: str | Path) -> pd.DataFrame:
    """CPU time of a run's cells per arm, from its manifest (empty without one).

    Each cell's seconds are the time its worker spent on it when it was
    computed (kept when a later run reuses it), so the sum is the compute the
    results cost, whatever the number of workers.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COST_COLUMNS`: arm, cells, CPU minutes.

    Examples
    --------
    >>> run_cost("/nonexistent").empty
    True
    """
    path = Path(run_dir) / MANIFEST_FILE
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError):
        return pd.DataFrame(columns=list(COST_COLUMNS))
    frame = pd.DataFrame(
        [(str(c["cell"]).rsplit("/", 1)[-1], float(c.get("seconds") or 0.0)) for c in cells if "cell" in c],
        columns=["arm", "seconds"],
    )
    if frame.empty:
        return pd.DataFrame(columns=list(COST_COLUMNS))
    grouped = frame.groupby("arm", sort=True)
    return pd.DataFrame({
        "arm": list(grouped.groups),
        "cells": grouped.size().to_numpy(),
        "cpu_minutes": (grouped["seconds"].sum() / 60.0).to_numpy(),
    })[list(COST_COLUMNS)]


__all__ = [
    "COST_COLUMNS",
    "FLOOR_COLUMNS",
    "calibration_floor",
    "run_cost",
    "BROAD_FAMILIES",
    "CHECK_COLUMNS",
    "MAX_AUROC",
    "MIN_LORA_RUNS",
    "MIN_MARGIN",
    "MIN_NEURAL",
    "SITE_B_CLEAN",
    "SITE_B_FLOOR",
    "clean_frozen_auroc",
    "world_checks",
]
