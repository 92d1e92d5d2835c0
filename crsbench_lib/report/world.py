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
- **a second site that tests something** (world v4): on every dataset with a
  second site, at least :data:`MIN_SITE_B_STRONG` candidates above
  :data:`SITE_B_CLEAN` clean AUROC, their median AUROC drop at the second
  site within :data:`SITE_B_DROP` (published frozen-encoder shifts cost
  0.07-0.29), and the candidates' site-B ECE above their clean ECE;
- **the study's population**: at least :data:`MIN_CANDIDATES` pretrained
  candidates in at least :data:`MIN_CANDIDATE_FAMILIES` recipe families, and
  at least :data:`MIN_LORA_RUNS` adapted runs (encoder x dataset x seed).

Two measurements are printed beside them, whatever they show: the per-encoder
cue ablation (:func:`cue_ablation`) and what post-hoc calibrators fitted at
site A keep at site B (:func:`calibration_under_shift`).

AUROCs are means over seeds of the frozen arm's uncalibrated rows at 100 %
labels. The thresholds are the issue's; they are requirements on the world,
not on any agreement between AUROC and CRS.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from crsbench_lib.results.io import RESULTS_FILE
from crsbench_lib.results.manifest import manifest_beside
from crsbench_lib.results.predictions import DatasetPredictions
from crsbench_lib.results.select import clean_rows, same_fraction
from crsbench_lib.report.roles import CLASSICAL_FAMILY, IN_TASK_FAMILY, is_reference_family
from crsbench_lib.metrics.auroc import class_auroc

#: Minimum clean macro-AUROC margin of the best broad encoder over the pixel and PCA probes.
MIN_MARGIN = 0.10
#: The best broad encoder's clean macro-AUROC on every dataset reaches at least this (world v3: the regime
#: real foundation models reach on their tasks, so that discrimination is not every encoder's weakest axis).
MIN_BEST_BROAD = 0.85
#: No encoder may reach this clean macro-AUROC (a solved task ranks nothing).
MAX_AUROC = 0.98
#: Site-B rules apply to the candidates above this clean AUROC (a weak encoder is "robust by weakness").
SITE_B_CLEAN = 0.75
#: World v4: at least this many candidates above SITE_B_CLEAN on each dataset with a second site.
MIN_SITE_B_STRONG = 4
#: World v4: the median AUROC drop of those candidates at the second site lies in this range
#: (published institutional shifts cost frozen encoders 0.07-0.29; a world whose shift costs less than
#: 0.05 cannot test what robustness is for, one that costs more than 0.20 is a different task).
SITE_B_DROP = (0.05, 0.20)
#: Minimum pretrained candidates, their study families (keys of ``encoders/recipes.py`` FAMILIES: objective,
#: pool breadth and augmentation together), and adapted runs (world v4: the study's shape).
MIN_CANDIDATES = 12
MIN_CANDIDATE_FAMILIES = 5
MIN_LORA_RUNS = 90
#: Families of the broad, augmented foundation-like encoders (encoders/recipes.py FAMILIES keys).
BROAD_FAMILIES: frozenset[str] = frozenset({"broad_ssl", "broad_multitask"})
#: Families that are not neural networks (the family key's one home is :mod:`crsbench_lib.report.roles`).
CLASSICAL_FAMILIES: frozenset[str] = frozenset({CLASSICAL_FAMILY})

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


def _condition_frozen(table: pd.DataFrame, condition: str, metric: str = "auroc", calibration: str = "none") -> pd.DataFrame:
    """Mean over seeds of one condition's ``metric``, frozen arm, 100 % labels: encoders x datasets.

    Empty (no rows, no columns) when the table has no ``metric`` column."""
    if metric not in table.columns:
        return pd.DataFrame()
    mask = (
        (table["condition"].to_numpy() == condition)
        & (table["arm"].to_numpy() == "frozen")
        & (table["calibration"].to_numpy() == calibration)
        & same_fraction(table["label_fraction"], 1.0)
    )
    return table[mask].groupby(["encoder", "dataset"])[metric].mean().unstack("dataset")


def _frozen_rows(table: pd.DataFrame, condition: str, calibration: str = "none") -> pd.DataFrame:
    """One condition's rows of the frozen arm at 100 % labels."""
    mask = (
        (table["condition"].to_numpy() == condition)
        & (table["arm"].to_numpy() == "frozen")
        & (table["calibration"].to_numpy() == calibration)
        & same_fraction(table["label_fraction"], 1.0)
    )
    return table[mask]


def _shift_frozen_auroc(table: pd.DataFrame) -> pd.DataFrame:
    return _condition_frozen(table, "shift")


def cue_ablation(table: pd.DataFrame) -> pd.DataFrame:
    """Per encoder and dataset: site-A test AUROC with the shortcut cue, without it, and the difference.

    The cue-removed test images are the same images but for the cue
    (:mod:`crsbench_lib.cohort.shortcuts`), scored by the same probe, so the
    difference is how much of the encoder's site-A AUROC the cue carries
    (negative: the cue cost it AUROC). Frozen arm, uncalibrated, 100 % labels,
    means over seeds; empty without ``cue_removed`` rows.

    Returns
    -------
    pandas.DataFrame
        Columns ``encoder, dataset, with_cue, without_cue, cue_gain,
        gain_se``: ``gain_se`` is the standard error of the mean gain over
        seeds (the seeds redraw the training data, so it is the probe's
        seed-to-seed noise; NaN with one seed).

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> cue_ablation(synthetic_results(n_encoders=2, corruptions=("noise",), random_state=0)).empty
    True
    """
    columns = ["encoder", "dataset", "with_cue", "without_cue", "cue_gain", "gain_se"]
    keys = ["encoder", "dataset", "seed"]
    removed = _frozen_rows(table, "cue_removed")
    if removed.empty:
        return pd.DataFrame(columns=columns)
    clean = _frozen_rows(table, "clean")
    paired = clean.groupby(keys)["auroc"].mean().to_frame("with_cue").join(
        removed.groupby(keys)["auroc"].mean().rename("without_cue"), how="inner")
    paired["cue_gain"] = paired["with_cue"] - paired["without_cue"]
    grouped = paired.groupby(level=["encoder", "dataset"])
    out = grouped[["with_cue", "without_cue", "cue_gain"]].mean()
    out["gain_se"] = grouped["cue_gain"].std(ddof=1) / np.sqrt(grouped.size())
    return out.reset_index()[columns]


def calibration_under_shift(table: pd.DataFrame, families: Mapping[str, str]) -> pd.DataFrame:
    """What post-hoc calibration fitted at site A keeps at site B: mean ECE of the candidates per calibrator.

    Each calibrator is fitted on site A's calibration split and applied
    unchanged at the second site (as a deployed model would be).
    ``change_clean`` and ``change_site_b`` are the calibrated ECE minus the
    uncalibrated one at each site (negative: the calibrator helps there).
    Differences, not a ratio of them: where a calibrator barely moves site
    A's ECE, a share "kept" at site B would be noise over noise.
    Frozen arm, 100 % labels, means over candidates (reference encoders left
    out) and seeds; empty without calibrated shift rows.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, calibration, ece_clean, ece_site_b, change_clean,
        change_site_b`` (``calibration`` ``none`` first, with zero changes).

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> calibration_under_shift(synthetic_results(n_encoders=2, corruptions=("noise",), random_state=0), {}).empty
    True
    """
    columns = ["dataset", "calibration", "ece_clean", "ece_site_b", "change_clean", "change_site_b"]
    methods = sorted(set(table.loc[table["condition"] == "shift", "calibration"].astype(str)) - {"none"})
    if not methods:
        return pd.DataFrame(columns=columns)
    rows = []
    for method in ["none", *methods]:
        clean = _condition_frozen(table, "clean", "ece", method)
        shift = _condition_frozen(table, "shift", "ece", method)
        keep = [e for e in shift.index if not is_reference_family(families.get(e))]
        for dataset in shift.columns:
            rows.append({"dataset": dataset, "calibration": method,
                         "ece_clean": float(clean.loc[keep, dataset].mean()),
                         "ece_site_b": float(shift.loc[keep, dataset].mean())})
    out = pd.DataFrame(rows, columns=columns[:4])
    base = out[out["calibration"] == "none"].set_index("dataset")
    out["change_clean"] = out["ece_clean"].to_numpy() - base.loc[out["dataset"], "ece_clean"].to_numpy()
    out["change_site_b"] = out["ece_site_b"].to_numpy() - base.loc[out["dataset"], "ece_site_b"].to_numpy()
    return out.sort_values(["dataset", "calibration"], key=lambda c: c.map({"none": ""}).fillna(c), kind="mergesort",
                           ignore_index=True)


def _row(check: str, dataset: str, value: float | int, rule: str, holds: bool) -> dict[str, object]:
    # Counts (encoders, runs) stay integers, so the table shows 108, not 108.000.
    number = int(value) if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else float(value)
    return {"check": check, "dataset": dataset, "value": number, "rule": rule, "holds": bool(holds)}


def _margin_rows(clean: pd.DataFrame, families: Mapping[str, str], pixel: str, pca: str) -> list[dict[str, object]]:
    broad = [e for e in clean.index if families.get(e) in BROAD_FAMILIES]
    rows = []
    for dataset in clean.columns:
        best = clean.loc[broad, dataset].max() if broad else np.nan
        rows.append(_row("best broad AUROC", dataset, best, f">= {MIN_BEST_BROAD:.2f}", bool(best >= MIN_BEST_BROAD)))
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
    ['LoRA runs', 'best broad AUROC']
    """
    clean = clean_frozen_auroc(table)
    rows = _margin_rows(clean, families, pixel, pca)
    for dataset in clean.columns:
        top = clean[dataset].max()
        rows.append(_row("highest clean AUROC", dataset, top, f"< {MAX_AUROC:.2f}", bool(top < MAX_AUROC)))
    shift = _shift_frozen_auroc(table)
    shift_ece = _condition_frozen(table, "shift", "ece")
    clean_ece = _condition_frozen(table, "clean", "ece")
    candidates = [e for e in clean.index if not is_reference_family(families.get(e))]
    for dataset in shift.columns:
        strong = [e for e in candidates if clean.at[e, dataset] > SITE_B_CLEAN]
        rows.append(_row("site-B strong candidates", dataset, len(strong), f">= {MIN_SITE_B_STRONG} candidates with "
                         f"clean > {SITE_B_CLEAN:.2f}", len(strong) >= MIN_SITE_B_STRONG))
        drop = float(np.median(clean.loc[strong, dataset] - shift[dataset].reindex(strong))) if strong else np.nan
        low, high = SITE_B_DROP
        rows.append(_row("site-B median drop", dataset, drop, f"in [{low:.2f}, {high:.2f}] over those candidates",
                         bool(low <= drop <= high)))
        excess = (float(shift_ece[dataset].reindex(candidates).mean() - clean_ece[dataset].reindex(candidates).mean())
                  if dataset in shift_ece.columns and dataset in clean_ece.columns else np.nan)
        rows.append(_row("site-B ECE minus clean ECE", dataset, excess, "> 0 (mean over candidates)", bool(excess > 0)))
    n_candidates = len(candidates)
    rows.append(_row("pretrained candidates", "all", n_candidates, f">= {MIN_CANDIDATES}", n_candidates >= MIN_CANDIDATES))
    n_families = len({families.get(e) for e in candidates if families.get(e) is not None})
    rows.append(_row("candidate families", "all", n_families, f">= {MIN_CANDIDATE_FAMILIES}",
                     n_families >= MIN_CANDIDATE_FAMILIES))
    lora = table[table["arm"].to_numpy() == "lora"]
    runs = len(lora[["encoder", "dataset", "seed"]].drop_duplicates())
    rows.append(_row("LoRA runs", "all", runs, f">= {MIN_LORA_RUNS}", runs >= MIN_LORA_RUNS))
    frame = pd.DataFrame(rows, columns=list(CHECK_COLUMNS))
    # An object column keeps each value's type (a float column would turn 108 runs into 108.0).
    frame["value"] = pd.Series([row["value"] for row in rows], index=frame.index, dtype=object)
    return frame


#: The checks that are measurements on any data (the others are requirements on the simulated world's design).
MEASURED_CHECKS: tuple[str, ...] = ("best broad AUROC", "margin over pixels", "margin over pca", "highest clean AUROC")


def measured_checks(checks: pd.DataFrame) -> pd.DataFrame:
    """What a user's data say about the zoo: the checks that measure something on any data, without targets.

    On the simulated cohort the checks of :func:`world_checks` are targets its
    generators were built to meet; on a user's data there is no target, and the
    rows about the world's design (a second site's floor, the size of the zoo,
    the number of adapted runs) say nothing. This keeps the best broad
    encoder's clean AUROC, its margins over the pixel and PCA probes and the
    highest clean AUROC, per dataset, as measured values.

    Parameters
    ----------
    checks : pandas.DataFrame
        :func:`world_checks` output.

    Returns
    -------
    pandas.DataFrame
        One row per dataset: ``dataset`` and one column per measured check.

    Examples
    --------
    >>> checks = pd.DataFrame({"check": ["best broad AUROC", "margin over pixels", "LoRA runs"],
    ...                        "dataset": ["a", "a", "all"], "value": [0.8, 0.1, 0], "rule": "", "holds": True})
    >>> measured_checks(checks).columns.tolist()
    ['dataset', 'best broad AUROC', 'margin over pixels']
    """
    rows = checks[checks["check"].isin(MEASURED_CHECKS)]
    table = rows.pivot(index="dataset", columns="check", values="value")
    ordered = [c for c in MEASURED_CHECKS if c in table.columns]
    return table[ordered].astype(float).reset_index().rename_axis(columns=None)


#: Columns of :func:`class_margins`.
CLASS_MARGIN_COLUMNS: tuple[str, ...] = (
    "dataset", "class", "best_broad", "broad", "pixels", "pca", "margin", "reference", "reference_auroc",
)


def _class_label(names: Sequence[str] | None, task: str, k: int, width: int) -> str:
    if names is not None and task == "binary" and len(names) == 2:
        return str(names[1])  # binary predictions keep the positive class only
    if names is not None and len(names) == width:
        return str(names[k])
    return f"{'label' if task == 'multilabel' else 'class'} {k}"


def class_margins(
    arrays: Mapping[str, DatasetPredictions],
    families: Mapping[str, str],
    pixel: str = "pixels",
    pca: str = "pca",
    class_names: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """Where the margin of :func:`world_checks` comes from: clean AUROC per class (label).

    The macro-AUROC is the mean of the per-class AUROCs, so the margin of the
    best broad encoder over a baseline is the mean of its per-class margins:
    this table shows which classes carry it and which hold it back, beside the
    in-task reference (family :data:`crsbench_lib.report.roles.IN_TASK_FAMILY`,
    pretrained on the evaluation labels; the other reference encoders, classical
    features and random networks, are the baselines or absent here), which shows how much of a class this zoo's backbones
    can learn when they are taught it.

    AUROCs are means over seeds of the stored clean, uncalibrated test
    predictions at 100 % labels (frozen arm's arrays, as the results table's).

    Parameters
    ----------
    arrays : mapping of str to DatasetPredictions
        :func:`crsbench_lib.report.context.prediction_arrays` output.
    families : mapping of str to str
        Study family of each encoder (see :func:`world_checks`).
    pixel, pca : str
        Names of the pixel-probe and PCA-probe encoders.
    class_names : mapping of str to sequence of str, optional
        Class (label) names per dataset; ``"class k"`` (``"label k"``) otherwise.

    Returns
    -------
    pandas.DataFrame
        One row per dataset and class, columns :data:`CLASS_MARGIN_COLUMNS`:
        the best broad encoder by clean macro-AUROC (``best_broad``) and its
        AUROC on the class (``broad``), the baselines' (NaN if absent),
        ``margin`` (broad minus the better baseline on that class), the
        reference's name and AUROC (empty and NaN without one). Datasets
        without a broad encoder are left out.

    Examples
    --------
    >>> from crsbench_lib.encoders.zoo import zoo_families
    >>> from crsbench_lib.results.predictions import load_prediction_arrays
    >>> arrays = load_prediction_arrays("runs/default")  # doctest: +SKIP
    >>> class_margins(arrays, zoo_families())[["dataset", "class", "margin"]].head(2)  # doctest: +SKIP
      dataset         class  margin
    0     cxr  cardiomegaly   0.137
    1     cxr      effusion   0.050
    """
    rows = []
    for dataset, data in sorted(arrays.items()):
        encoders = list(data.encoders)
        e, s, n, w = data.clean.shape
        per_class = class_auroc(data.clean.reshape(e * s, n, w), data.labels, data.task).reshape(e, s, -1).mean(axis=1)
        broad = [k for k, name in enumerate(encoders) if families.get(name) in BROAD_FAMILIES]
        if not broad:
            continue
        # A class with a single outcome in the test split has no AUROC: the macro mean skips it.
        best = broad[int(np.argmax(np.nanmean(per_class[broad], axis=1)))]
        reference = next((k for k, name in enumerate(encoders) if families.get(name) == IN_TASK_FAMILY), None)

        def auroc_of(name: str | None, k: int) -> float:
            return float(per_class[encoders.index(name), k]) if name in encoders else float("nan")

        names = None if class_names is None else class_names.get(dataset)
        for k in range(per_class.shape[1]):
            baselines = [auroc_of(pixel, k), auroc_of(pca, k)]
            stronger = max((b for b in baselines if not np.isnan(b)), default=float("nan"))
            rows.append({
                "dataset": dataset,
                "class": _class_label(names, data.task, k, per_class.shape[1]),
                "best_broad": encoders[best],
                "broad": float(per_class[best, k]),
                "pixels": baselines[0],
                "pca": baselines[1],
                "margin": float(per_class[best, k]) - stronger,
                "reference": "" if reference is None else encoders[reference],
                "reference_auroc": float("nan") if reference is None else float(per_class[reference, k]),
            })
    return pd.DataFrame(rows, columns=list(CLASS_MARGIN_COLUMNS))


#: Columns of :func:`calibration_floor` and :func:`run_cost`.
FLOOR_COLUMNS: tuple[str, ...] = ("dataset", "test_images", "ece", "ece_floor", "ece_excess", "ece_debiased")
COST_COLUMNS: tuple[str, ...] = ("arm", "cells", "cpu_minutes")


def calibration_floor(table: pd.DataFrame) -> pd.DataFrame:
    """Per dataset: test size, mean clean ECE, the ECE floor of its predictions, the excess and the debiased ECE.

    The floor is the ECE a perfectly calibrated predictor with the same
    confidences would still measure on that many test images (the
    ``ece_floor`` column): it bounds the plug-in ECE's finite-sample bias
    from above. ``ece_debiased`` (the axis C of a debiased standard) removes
    the bias itself (NaN when the table has no such column). Means over encoders and seeds of the frozen
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
    ['dataset', 'test_images', 'ece', 'ece_floor', 'ece_excess', 'ece_debiased']
    """
    rows = clean_rows(table, arm="frozen", calibration="none")
    grouped = rows.groupby("dataset", sort=True, observed=True)
    out = pd.DataFrame({
        "test_images": grouped["n_test"].max().astype(int),
        "ece": grouped["ece"].mean(),
        "ece_floor": grouped["ece_floor"].mean() if "ece_floor" in rows else np.nan,
        "ece_excess": grouped["ece_excess"].mean() if "ece_excess" in rows else np.nan,
        "ece_debiased": grouped["ece_debiased"].mean() if "ece_debiased" in rows else np.nan,
    })
    return out.reset_index()[list(FLOOR_COLUMNS)]


def _manifest_cells(run_dir: str | Path) -> tuple[Mapping[str, Any], ...]:
    """The cell entries of a run's manifest; empty when it is missing or unreadable (a table without a run)."""
    manifest = manifest_beside(Path(run_dir) / RESULTS_FILE)
    return manifest.cells if manifest is not None else ()


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
    cells = _manifest_cells(run_dir)
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


#: Columns of :func:`adapter_training`.
ADAPTER_COLUMNS: tuple[str, ...] = (
    "encoder", "dataset", "seed", "label_fraction", "trained", "steps_run", "best_step", "max_steps", "hit_cap",
    "improving_at_end", "start_val_loss", "best_val_loss", "lr",
)


def adapter_training(run_dir: str | Path) -> pd.DataFrame:
    """How each LoRA adapter of a run trained, from its manifest (empty without reports).

    Every LoRA cell trains one adapter on its whole train split and one per
    label fraction below 1 (method section 9, amendment 12), each within a
    budget of ``max_steps`` optimisation steps, with early stopping on the
    validation loss. ``hit_cap`` marks an adapter that ran the whole budget
    without early stopping (under the cosine schedule, the schedule's planned
    end); ``improving_at_end`` one of those whose kept state is its final
    evaluation's, so it was still improving when the budget ran out;
    ``best_step == 0`` one that never beat the frozen probe it started from;
    ``trained`` is false for a label fraction left frozen by the scarce-label rule.

    Returns
    -------
    pandas.DataFrame
        One row per adapter, columns :data:`ADAPTER_COLUMNS` (losses NaN where
        not trained). Cells computed before the runner recorded step-budget
        reports (an earlier protocol) contribute no rows.

    Examples
    --------
    >>> adapter_training("/nonexistent").empty
    True
    """
    def loss(value: object) -> float:
        return float("nan") if value is None else float(value)  # type: ignore[arg-type]

    cells = _manifest_cells(run_dir)
    rows = [
        (c["encoder"], c["dataset"], int(c["seed"]), float(a["label_fraction"]), bool(a["trained"]),
         int(a["steps_run"]), int(a["best_step"]), int(c["lora"]["max_steps"]), bool(a["hit_cap"]),
         bool(a["hit_cap"]) and int(a["best_step"]) == int(a["steps_run"]), loss(a["start_val_loss"]), loss(a["best_val_loss"]), float(a["lr"]))
        for c in cells if isinstance(c.get("lora"), dict) and "encoder" in c and "max_steps" in c["lora"]
        for a in c["lora"].get("adapters", [])
    ]
    return pd.DataFrame(rows, columns=list(ADAPTER_COLUMNS))


__all__ = [
    "ADAPTER_COLUMNS",
    "CLASS_MARGIN_COLUMNS",
    "COST_COLUMNS",
    "FLOOR_COLUMNS",
    "adapter_training",
    "calibration_floor",
    "class_margins",
    "run_cost",
    "BROAD_FAMILIES",
    "CHECK_COLUMNS",
    "MAX_AUROC",
    "MIN_LORA_RUNS",
    "MIN_BEST_BROAD",
    "MIN_MARGIN",
    "MIN_SITE_B_STRONG",
    "MIN_CANDIDATES",
    "MIN_CANDIDATE_FAMILIES",
    "SITE_B_CLEAN",
    "SITE_B_DROP",
    "calibration_under_shift",
    "clean_frozen_auroc",
    "cue_ablation",
    "world_checks",
]
