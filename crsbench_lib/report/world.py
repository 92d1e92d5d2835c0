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

from collections.abc import Mapping

import numpy as np
import pandas as pd

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


def _row(check: str, dataset: str, value: float, rule: str, holds: bool) -> dict[str, object]:
    return {"check": check, "dataset": dataset, "value": float(value), "rule": rule, "holds": bool(holds)}


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
        checks) with columns :data:`CHECK_COLUMNS`; ``holds`` is False where a
        baseline or a broad encoder is missing (the value is then NaN).

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
    return pd.DataFrame(rows, columns=list(CHECK_COLUMNS))


__all__ = [
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
