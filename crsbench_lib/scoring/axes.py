"""The four raw reliability axes and the encoder profile (method section 3).

Per encoder x dataset x seed of one arm, from rows with ``calibration == "none"``:

* ``D`` (discrimination, higher is better): clean macro-AUROC at 100% labels.
* ``C`` (calibration, lower is better): clean ECE at 100% labels.
* ``L`` (label efficiency, higher is better): mean over the label fractions
  ``f < 1`` of ``AUROC_f / AUROC_1.0``.
* ``R`` (robustness, lower is better): mean of the *available* losses among the
  average corruption loss (mean over (corruption, severity) of
  ``loss(AUROC_c,s)``), the worst corruption loss (max over corruptions of the
  mean over severities) and the shift loss ``loss(AUROC_siteB)``, with
  ``loss(x) = max(0, AUROC_clean - x)``. A standard may weigh these pieces
  (``robustness``, method section 9, amendment 23; :func:`robustness_composite`):
  the worst family lies inside the average, so the study's mean counts it twice.

The encoder profile is the mean of each axis over seeds, then over datasets,
each dataset weighing the same.

Those are the study's scales. A standard may measure ``L`` and ``R`` against
chance instead (method section 9, amendment 14, :class:`~crsbench_lib.standard.AxisScales`):
``L`` becomes the mean retention of above-chance discrimination,
``(AUROC_f - 0.5) / (AUROC_1.0 - 0.5)``, and every loss of ``R`` a share of it,
``loss / (AUROC_clean - 0.5)``. An encoder near chance keeps every point of a
tiny AUROC and so looks efficient and robust on the study's scales; on the
chance scales it retains and loses shares of what it has. Both are per cell
functions of the study's ``D``, ``L`` and ``R`` (:func:`chance_scaled`), so
the raw table and the bootstrap draws share one definition.

Missing pieces are handled as follows (and nowhere silently):

* Every (encoder, dataset, seed) cell that appears in the arm must have exactly
  one clean row at label fraction 1.0; otherwise :class:`SchemaError` names the
  cell. ``D`` and ``C`` are therefore always defined.
* ``L``: a cell with no label-fraction rows at all has ``L = NaN`` (the axis is
  unavailable there); a cell that has some of the requested fractions but not
  all raises :class:`SchemaError` naming the missing fraction, because a partial
  mean would not be comparable. Label fractions of the table that were not
  requested are ignored.
* ``R``: losses that cannot be computed are left out of the mean (a dataset with
  no second site has no shift loss); a cell with neither corruption nor shift
  rows has ``R = NaN``.
* In the profile, a NaN axis of a dataset is left out of that axis' mean over
  datasets (the remaining datasets weigh the same). An encoder whose axis is NaN
  on every dataset raises :class:`SchemaError` naming the encoder and the axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.schema import ARMS
from crsbench_lib.results.validated import ValidatedResults, as_validated
from crsbench_lib.results.select import FRACTION_ATOL, clean_mask, same_fraction
from crsbench_lib.standard import AXES, CHANCE_AUROC, AxisScales, ReferenceStandard, RobustnessComposite

CELL: list[str] = ["encoder", "dataset", "seed"]


def _cell_name(cell: tuple[object, ...]) -> str:
    encoder, dataset, seed = cell
    return f"encoder '{encoder}', dataset '{dataset}', seed {seed}"


def _check_arm(arm: str) -> None:
    if arm not in ARMS:
        raise SchemaError(f"unknown arm {arm!r} (expected one of {', '.join(ARMS)})")


def _calibration_axis(clean: pd.DataFrame, ece_estimator: str, arm: str) -> np.ndarray:
    """The raw ``C`` of each cell's clean row: its ``ece``, or its ``ece_debiased`` (amendment 21)."""
    if ece_estimator == "plugin":
        return clean["ece"].to_numpy(dtype=float)
    if ece_estimator != "debiased":
        raise SchemaError(f"unknown ECE estimator {ece_estimator!r} (expected plugin or debiased)")
    column = clean["ece_debiased"] if "ece_debiased" in clean.columns else pd.Series(np.nan, index=clean.index)
    missing = column.isna().to_numpy()
    if missing.any():
        cell = clean.index[int(np.argmax(missing))]
        raise SchemaError(
            f"results table: column 'ece_debiased' is missing or NaN for {_cell_name(cell)} (arm '{arm}'), which "
            "the standard's debiased calibration axis needs; recompute the table from its predictions "
            "(crsbench recompute RUN) or rerun it with this version"
        )
    return column.to_numpy(dtype=float)


def label_retention(fraction_rows: pd.DataFrame, clean_auroc: pd.Series) -> np.ndarray:
    """AUROC retention of label-fraction rows: ``AUROC_f / AUROC_1.0`` of the same cell.

    Parameters
    ----------
    fraction_rows : pandas.DataFrame
        Label-fraction rows with columns encoder, dataset, seed and auroc.
    clean_auroc : pandas.Series
        Clean AUROC at 100% labels indexed by (encoder, dataset, seed).

    Returns
    -------
    numpy.ndarray
        One retention per row (NaN where the cell has no clean AUROC).

    Examples
    --------
    >>> rows = pd.DataFrame({"encoder": ["e"], "dataset": ["d"], "seed": [0], "auroc": [0.6]})
    >>> clean = pd.Series([0.8], index=pd.MultiIndex.from_tuples([("e", "d", 0)], names=CELL))
    >>> float(label_retention(rows, clean)[0])
    0.7499999999999999
    """
    full = clean_auroc.reindex(pd.MultiIndex.from_frame(fraction_rows[CELL])).to_numpy(dtype=float)
    return fraction_rows["auroc"].to_numpy(dtype=float) / full


def corruption_losses(clean_auroc: pd.Series, corrupted: pd.DataFrame) -> pd.DataFrame:
    """Average and worst corruption loss per cell.

    Parameters
    ----------
    clean_auroc : pandas.Series
        Clean AUROC indexed by (encoder, dataset, seed).
    corrupted : pandas.DataFrame
        Corruption rows with columns encoder, dataset, seed, corruption,
        severity, auroc, and optionally auroc_reference: the clean AUROC on the
        same test images, used as ``AUROC_clean`` of that row where present
        (a cell may corrupt a subset of its test split), else the cell's
        clean AUROC.

    Returns
    -------
    pandas.DataFrame
        Indexed by (encoder, dataset, seed): ``avg_corruption_loss`` (mean over
        (corruption, severity) of ``max(0, AUROC_clean - AUROC_c,s)``),
        ``worst_corruption_loss`` (max over corruptions of the mean over
        severities of that loss) and ``n_corruption_rows``.
    """
    if corrupted.empty:
        return pd.DataFrame(
            {"avg_corruption_loss": [], "worst_corruption_loss": [], "n_corruption_rows": []},
            index=pd.MultiIndex.from_tuples([], names=CELL),
        )
    frame = corrupted[CELL + ["corruption", "severity", "auroc"]].copy()
    clean = clean_auroc.reindex(pd.MultiIndex.from_frame(frame[CELL])).to_numpy()
    if "auroc_reference" in corrupted.columns:
        reference = corrupted["auroc_reference"].to_numpy(dtype=float)
        clean = np.where(np.isnan(reference), clean, reference)
    frame["loss"] = np.maximum(0.0, clean - frame["auroc"].to_numpy(dtype=float))
    grouped = frame.groupby(CELL, sort=True)["loss"]
    average = grouped.mean()
    worst = frame.groupby(CELL + ["corruption"], sort=True)["loss"].mean().groupby(level=CELL).max()
    return pd.DataFrame(
        {"avg_corruption_loss": average, "worst_corruption_loss": worst, "n_corruption_rows": grouped.size()}
    )


def robustness_composite(pieces: np.ndarray, composite: RobustnessComposite | None = None) -> np.ndarray:
    """The robustness axis from its pieces (method section 3; section 9, amendment 23).

    For the losses ``x = (average, worst, shift)`` of a cell, NaN where a piece
    is not measured (no corruption rows, no second site):

    * the study's composite (``composite`` ``None`` or without weights):
      ``R = mean of the available x_i``, each piece an equal share;
    * declared weights ``w``: ``R = sum_i w_i x_i / sum_i w_i`` over the
      available pieces, NaN where those all weigh 0.

    The worst family's loss is one of the families the average already
    holds, so the study's mean gives it 1/3 + 1/(3 n_families) of R; a
    standard that weighs it 0 counts every family once.

    Parameters
    ----------
    pieces : numpy.ndarray
        (..., 3) losses in the order of :data:`~crsbench_lib.standard.R_PIECES`.
    composite : RobustnessComposite, optional
        The standard's ``robustness``; ``None``: the study's.

    Returns
    -------
    numpy.ndarray
        (...) the raw ``R`` (NaN where no weighted piece is available).

    Examples
    --------
    >>> pieces = np.array([[0.02, 0.08, 0.05], [0.02, 0.08, np.nan]])
    >>> robustness_composite(pieces).round(6).tolist()
    [0.05, 0.05]
    >>> robustness_composite(pieces, RobustnessComposite((0.5, 0.0, 0.5))).round(6).tolist()
    [0.035, 0.02]
    """
    values = np.asarray(pieces, dtype=float)
    available = ~np.isnan(values)
    if composite is None or composite.is_study:
        # The study's order of operations, kept to the bit: standards v1-v7 score as before.
        counts = available.sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts > 0, np.where(available, values, 0.0).sum(axis=-1) / np.maximum(counts, 1), np.nan)
    weights = np.asarray(composite.weights, dtype=float)
    present = np.where(available, weights, 0.0)
    total = present.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        weighted = np.where(available, values, 0.0) @ weights
        return np.where(total > 0, weighted / np.where(total > 0, total, 1.0), np.nan)


def chance_scaled(values: np.ndarray, scales: AxisScales) -> tuple[np.ndarray, np.ndarray]:
    """Raw axes on the study's scales -> the scales a standard names.

    For a cell with clean AUROC ``D``, study-scale label efficiency ``L``
    (mean of ``AUROC_f / D``) and robustness ``R`` (mean of losses in points):

    * ``L_chance = (D * L - 0.5) / (D - 0.5)``, the mean over fractions of
      ``(AUROC_f - 0.5) / (D - 0.5)``;
    * ``R_chance = R / (D - 0.5)``: every loss (average, worst, shift) over the
      same clean above-chance discrimination, so the mean divides through.

    Where ``D - 0.5`` is below the scales' ``chance_margin`` the ratios are
    noise over a denominator near zero; the cell then gets ``L = 0`` (nothing
    above chance to retain) and ``R = 1`` (nothing above chance kept), the
    worst values the scales name (NaN stays NaN: an axis the cell lacks).

    Parameters
    ----------
    values : numpy.ndarray
        (..., 4) raw axes in the order D, C, L, R, on the study's scales.
    scales : AxisScales

    Returns
    -------
    values : numpy.ndarray
        (..., 4) on the named scales (a copy; D and C unchanged).
    near_chance : numpy.ndarray
        (...) bool: cells within the margin of chance (all False under the
        study's scales).

    Examples
    --------
    >>> cell = np.array([0.8, 0.05, 0.875, 0.03])  # AUROC_f averages 0.7; losses of 0.03 points
    >>> scaled, near = chance_scaled(cell, AxisScales("chance", "chance", 0.05))
    >>> [round(float(v), 6) for v in scaled], bool(near)
    ([0.8, 0.05, 0.666667, 0.1], False)
    >>> scaled, near = chance_scaled(np.array([0.52, 0.05, 0.99, 0.0]), AxisScales("chance", "chance", 0.05))
    >>> scaled.tolist(), bool(near)
    ([0.52, 0.05, 0.0, 1.0], True)
    """
    raw = np.asarray(values, dtype=float)
    out = raw.copy()
    if not scales.uses_chance:
        return out, np.zeros(raw.shape[:-1], dtype=bool)
    above = raw[..., 0] - CHANCE_AUROC
    near = above < float(scales.chance_margin)
    safe = np.where(near, 1.0, above)
    if scales.label_efficiency == "chance":
        scaled = (raw[..., 0] * raw[..., 2] - CHANCE_AUROC) / safe
        out[..., 2] = np.where(near & ~np.isnan(raw[..., 2]), 0.0, scaled)
    if scales.robustness == "chance":
        scaled = raw[..., 3] / safe
        out[..., 3] = np.where(near & ~np.isnan(raw[..., 3]), 1.0, scaled)
    return out, near


def standard_axes(
    results: pd.DataFrame | ValidatedResults, standard: ReferenceStandard, arm: str = "frozen"
) -> pd.DataFrame:
    """:func:`raw_axes` with the label fractions and axis scales of a standard.

    The one call every score against a standard should use, so that a
    standard's scales can never be applied to axes of another scale.
    """
    return raw_axes(results, arm=arm, label_fractions=standard.label_fractions, scales=standard.axis_scales,
                    ece_estimator=standard.ece_estimator, robustness=standard.robustness)


def raw_axes(
    results: pd.DataFrame | ValidatedResults,
    arm: str = "frozen",
    label_fractions: Sequence[float] | None = None,
    scales: AxisScales | None = None,
    ece_estimator: str = "plugin",
    robustness: RobustnessComposite | None = None,
) -> pd.DataFrame:
    """Raw D, C, L, R per encoder x dataset x seed of one arm.

    A :class:`~crsbench_lib.results.validated.ValidatedResults` is not checked
    again, and keeps the axes it gave (:meth:`~crsbench_lib.results.validated.ValidatedResults.memo`,
    per arm and label fractions), so the freeze, the fit report, the
    reproduction check and the chapters of one book compute them once; each
    call returns its own copy.

    Parameters
    ----------
    results : pandas.DataFrame or ValidatedResults
        A results table (a DataFrame is validated here).
    arm : {"frozen", "lora"}
        Which arm to score.
    label_fractions : sequence of float, optional
        The label fractions of the reference standard; those below 1 enter
        ``L``. ``None`` takes every fraction below 1 found on the table's
        label-fraction rows of the arm.
    scales : AxisScales, optional
        The scales of ``L`` and ``R`` (:func:`chance_scaled`); ``None``: the
        study's. Pass a standard's ``axis_scales`` (or call
        :func:`standard_axes`).
    ece_estimator : {"plugin", "debiased"}
        ``C`` from the column ``ece`` (the study's plug-in ECE) or
        ``ece_debiased`` (method section 9, amendment 21); a standard's
        ``ece_estimator``.
    robustness : RobustnessComposite, optional
        The weights of ``R``'s pieces (:func:`robustness_composite`); ``None``:
        the study's equal shares. A standard's ``robustness``.

    Returns
    -------
    pandas.DataFrame
        One row per cell, sorted by encoder, dataset, seed, with columns
        ``encoder, dataset, seed, D, C, L, R`` followed by the pieces:
        ``avg_corruption_loss, worst_corruption_loss, shift_loss`` (in AUROC
        points whatever the scale), ``n_label_fractions, n_corruption_rows``
        and ``near_chance`` (the cell's clean AUROC is within the chance
        margin of a chance scale: its ``L`` and ``R`` were set to 0 and 1).

    Raises
    ------
    SchemaError
        If the table breaks the schema, the arm has no rows, a cell lacks its
        clean row (or has several), a cell has only some of the requested label
        fractions, or a requested label fraction lies outside (0, 1].
    """
    _check_arm(arm)
    table = as_validated(results)
    fractions = None if label_fractions is None else tuple(float(f) for f in label_fractions)
    composite = RobustnessComposite() if robustness is None else robustness
    kept = table.memo(("raw_axes", arm, fractions, ece_estimator, composite.weights),
                      lambda: _raw_axes(table.frame, arm, fractions, ece_estimator, composite))
    out = kept.copy()
    scaled, near = chance_scaled(out[list(AXES)].to_numpy(dtype=float), AxisScales() if scales is None else scales)
    out[list(AXES)] = scaled
    out["near_chance"] = near
    return out


def _raw_axes(table: pd.DataFrame, arm: str, label_fractions: tuple[float, ...] | None,
              ece_estimator: str = "plugin", robustness: RobustnessComposite | None = None) -> pd.DataFrame:
    """:func:`raw_axes` of a validated table."""
    rows = table[(table["arm"] == arm) & (table["calibration"] == "none")]
    if rows.empty:
        raise SchemaError(f"results table has no rows for arm '{arm}' (with calibration 'none')")
    rows = rows.assign(encoder=rows["encoder"].astype(str), dataset=rows["dataset"].astype(str))
    condition = rows["condition"].astype(str)
    full = same_fraction(rows["label_fraction"], 1.0)

    cells = rows[CELL].drop_duplicates().sort_values(CELL, kind="mergesort")
    index = pd.MultiIndex.from_frame(cells)

    clean = rows[clean_mask(rows)]
    duplicated = clean.duplicated(subset=CELL, keep=False)
    if duplicated.any():
        cell = tuple(clean.loc[duplicated, CELL].iloc[0])
        raise SchemaError(f"results table has several clean rows (label fraction 1.0) for {_cell_name(cell)}")
    clean = clean.set_index(CELL)
    missing = index.difference(clean.index)
    if len(missing):
        more = f" (and {len(missing) - 1} more cells)" if len(missing) > 1 else ""
        raise SchemaError(
            f"results table has no clean row (arm '{arm}', label fraction 1.0, calibration 'none') "
            f"for {_cell_name(missing[0])}{more}"
        )
    clean = clean.reindex(index)
    clean_auroc = clean["auroc"].astype(float)

    out = pd.DataFrame(index=index)
    out["D"] = clean_auroc.to_numpy()
    out["C"] = _calibration_axis(clean, ece_estimator, arm)

    # Label efficiency.
    lf_rows = rows[(condition == "label_fraction").to_numpy()]
    if label_fractions is None:
        fractions = sorted({float(f) for f in lf_rows["label_fraction"] if f < 1.0 - FRACTION_ATOL}, reverse=True)
    else:
        fractions = [float(f) for f in label_fractions]
        bad = [f for f in fractions if not (0.0 < f <= 1.0)]
        if bad:
            raise SchemaError(f"label fraction {bad[0]!r} outside (0, 1]")
        fractions = [f for f in fractions if f < 1.0 - FRACTION_ATOL]
    ratios = pd.DataFrame(index=index)
    for fraction in fractions:
        at = lf_rows[same_fraction(lf_rows["label_fraction"], fraction)]
        retained = pd.Series(label_retention(at, clean_auroc), index=pd.MultiIndex.from_frame(at[CELL]))
        ratios[fraction] = retained.groupby(level=CELL, sort=True).mean().reindex(index).to_numpy()  # one row per cell
    if fractions:
        present = ratios.notna()
        partial = present.any(axis=1) & ~present.all(axis=1)
        if partial.any():
            cell = partial[partial].index[0]
            absent = [f for f in fractions if not present.loc[cell, f]]
            raise SchemaError(
                f"results table lacks label fraction {absent[0]!r} for {_cell_name(cell)} "
                f"(it has other label fractions; L needs all of {', '.join(repr(f) for f in fractions)})"
            )
        out["L"] = ratios.mean(axis=1, skipna=False).to_numpy()
        out["n_label_fractions"] = present.sum(axis=1).to_numpy()
    else:
        out["L"] = np.nan
        out["n_label_fractions"] = 0

    # Robustness.
    corrupted = rows[(condition == "corruption").to_numpy()]
    losses = corruption_losses(clean_auroc, corrupted).reindex(index)
    shift_rows = rows[(condition == "shift").to_numpy() & full]
    repeated = shift_rows.duplicated(subset=CELL, keep=False)
    if repeated.any():
        cell = tuple(shift_rows.loc[repeated, CELL].iloc[0])
        raise SchemaError(f"results table has several shift rows (label fraction 1.0) for {_cell_name(cell)}")
    shift = shift_rows.set_index(CELL)["auroc"].astype(float)
    shift_loss = np.maximum(0.0, clean_auroc - shift.reindex(index))
    pieces = np.column_stack(
        [losses["avg_corruption_loss"].to_numpy(dtype=float), losses["worst_corruption_loss"].to_numpy(dtype=float),
         shift_loss.to_numpy(dtype=float)]
    )
    out["R"] = robustness_composite(pieces, robustness)
    out["avg_corruption_loss"] = pieces[:, 0]
    out["worst_corruption_loss"] = pieces[:, 1]
    out["shift_loss"] = pieces[:, 2]
    out["n_corruption_rows"] = losses["n_corruption_rows"].fillna(0).astype("int64").to_numpy()
    out = out.reset_index()
    out["encoder"] = out["encoder"].astype(str)
    out["dataset"] = out["dataset"].astype(str)
    out["seed"] = out["seed"].astype("int64")
    columns = CELL + list(AXES) + [
        "avg_corruption_loss", "worst_corruption_loss", "shift_loss", "n_label_fractions", "n_corruption_rows",
    ]
    return out[columns]


def sequential_mean(values: pd.Series | np.ndarray) -> float:
    """Mean of the non-NaN values, summed left to right (NaN if there are none).

    The profile and the paired-seed bootstrap both average in this fixed order,
    so a bootstrap draw that picks every seed once reproduces the profile to the
    last bit (and cannot spuriously Pareto-dominate its own panel entry).
    """
    total, count = 0.0, 0
    for value in np.asarray(values, dtype=float):
        if not np.isnan(value):
            total += float(value)
            count += 1
    return total / count if count else float("nan")


def encoder_profiles(raw: pd.DataFrame) -> pd.DataFrame:
    """Encoder profiles: each axis averaged over seeds, then over datasets.

    Parameters
    ----------
    raw : pandas.DataFrame
        Output of :func:`raw_axes` (columns encoder, dataset, seed and the axes).

    Returns
    -------
    pandas.DataFrame
        Index ``encoder`` (sorted), columns ``D, C, L, R``. A dataset whose axis
        is NaN is left out of that axis' mean over datasets.

    Raises
    ------
    SchemaError
        If a column is missing, or an encoder's axis is unavailable on every
        dataset (no label-fraction rows, or no corruption and shift rows).
    """
    missing = [c for c in CELL + list(AXES) if c not in raw.columns]
    if missing:
        raise SchemaError(f"raw axes table lacks column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    if raw.empty:
        raise SchemaError("raw axes table is empty")
    ordered = raw.sort_values(CELL, kind="mergesort")
    per_dataset = ordered.groupby(["encoder", "dataset"], sort=True)[list(AXES)].agg(sequential_mean)
    profiles = per_dataset.groupby(level="encoder", sort=True).agg(sequential_mean)
    profiles.index = profiles.index.astype(str)
    profiles.index.name = "encoder"
    profiles.columns.name = None
    if profiles.isna().to_numpy().any():
        encoder, axis = next((e, a) for e in profiles.index for a in AXES if np.isnan(profiles.loc[e, a]))
        why = "label-fraction rows" if axis == "L" else "corruption or shift rows"
        raise SchemaError(f"encoder '{encoder}' has axis {axis} unavailable on every dataset (no {why})")
    return profiles[list(AXES)].astype(float)


def per_seed_axes(raw: pd.DataFrame) -> tuple[list[str], list[str], list[int], np.ndarray]:
    """The raw axes as a dense (encoder, dataset, seed, axis) array.

    Used by the paired-seed bootstrap, which needs the same seeds for every
    encoder and dataset.

    Returns
    -------
    encoders, datasets, seeds : list
        The sorted labels of the first three array dimensions.
    values : numpy.ndarray
        Shape (n_encoders, n_datasets, n_seeds, 4); NaN where an axis is
        unavailable for a dataset.

    Raises
    ------
    SchemaError
        If some (encoder, dataset) lacks a seed that others have, or an axis is
        available for some seeds of an (encoder, dataset) but not others.
    """
    encoders = sorted(raw["encoder"].astype(str).unique())
    datasets = sorted(raw["dataset"].astype(str).unique())
    seeds = sorted(int(s) for s in raw["seed"].unique())
    full = pd.MultiIndex.from_product([encoders, datasets, seeds], names=CELL)
    indexed = raw.assign(seed=raw["seed"].astype("int64")).set_index(CELL)[list(AXES)]
    absent = full.difference(indexed.index)
    if len(absent):
        raise SchemaError(
            f"paired-seed analysis needs every encoder on every dataset and seed; missing {_cell_name(absent[0])}"
        )
    values = indexed.reindex(full).to_numpy(dtype=float).reshape(len(encoders), len(datasets), len(seeds), len(AXES))
    nan = np.isnan(values)
    uneven = nan.any(axis=2) & ~nan.all(axis=2)
    if uneven.any():
        e, d, a = (int(i[0]) for i in np.nonzero(uneven))
        raise SchemaError(
            f"axis {AXES[a]} of encoder '{encoders[e]}' on dataset '{datasets[d]}' is available for some seeds only"
        )
    return encoders, datasets, seeds, values


@dataclass(frozen=True)
class AxisLeaderFacts:
    """Which candidate leads each axis (the four-axes page's action line).

    Attributes
    ----------
    n_candidates : int
        Candidates compared (references left out).
    leaders : dict of str to str
        Axis (``D``, ``C``, ``L``, ``R``) -> the candidate that leads it.
    """

    n_candidates: int
    leaders: dict[str, str]
