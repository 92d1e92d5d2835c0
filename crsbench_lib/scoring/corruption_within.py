"""Corruption cells within: does an encoder that loses more AUROC also lose more calibration?

The between-cell correlation of :mod:`crsbench_lib.scoring.corruption_cells`
correlates cell *means* (over encoders, seeds and severities) across (dataset,
corruption family) cells, so it measures how strongly each corruption hurts
both quantities at once. The study's question is per model: within one cell,
does an encoder that loses more discrimination also lose more calibration? That
is the *within-cell* correlation. In cell ``c`` with encoders ``e = 1..E``,

* ``L_ce`` and ``I_ce``: encoder ``e``'s mean AUROC loss and mean ECE increase
  over its seeds and severities in the cell (the rows of
  :func:`~crsbench_lib.scoring.corruption_cells.corrupted_pairs`: paired on the
  same test images, not clipped unless asked);
* ``r_c = sum_e (L_ce - L_c)(I_ce - I_c) / sqrt(sum_e (L_ce - L_c)^2 sum_e
  (I_ce - I_c)^2)`` (Pearson 1896), with ``L_c``, ``I_c`` the means over encoders.

The summary over cells is the mean, the median and the share of cells with
``r_c`` below a threshold (0.3 by default, where a "weak" correlation ends in
the book's words).

Intervals (:func:`corruption_bootstrap`) resample what the cells share: the
encoders and datasets (the crossed "pigeonhole" bootstrap of
:func:`~crsbench_lib.scoring.corruption_cells.cell_correlation_bootstrap`; Owen
2007, Ann. Appl. Stat. 1(2)) *and* the test images. Every corrupted condition
is evaluated on a block of test images (125 in the default profile) that every
encoder and seed shares, and its clean reference is the same probe on the same
images. A draw resamples the images of each block with replacement, with the
same indices for every encoder, seed and condition on that block, and for the
clean reference (a paired, stratified bootstrap: each block keeps its size, as
in the design; where blocks overlap, each set of images with the same block
membership is resampled on its own so that an image has one multiplicity). The
corrupted and reference AUROC and ECE are recomputed on the drawn images by the
package's weighted metrics (:func:`~crsbench_lib.metrics.auroc.weighted_macro_auroc`,
:func:`~crsbench_lib.metrics.calibration.weighted_ece`), and both correlations
follow. The same encoder and dataset draws with every image kept once give the
intervals without the image level, so the two can be set side by side.

The study's analysis is method section 6, item 7; its pairing on the same
images, method section 9, amendment 9; the blocks of test images, method
section 9, amendment 11.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse, stats

from crsbench_lib.errors import SchemaError
from crsbench_lib.metrics.auroc import weighted_macro_auroc
from crsbench_lib.metrics.calibration import weighted_ece
from crsbench_lib.results.predictions import DatasetPredictions
from crsbench_lib.scoring.agreement import CorrelationUncertainty
from crsbench_lib.scoring.corruption_cells import (
    CELL_FACTORS,
    CELL_KEYS,
    DEFAULT_CLUSTERS,
    MIN_CELLS_FOR_CI,
    ROW_FACTORS,
    corrupted_pairs,
    weighted_pearson,
)
from crsbench_lib.scoring.resampling import (
    check_count,
    check_interval,
    crossed_weights,
    factor_codes,
    multiplicities,
    percentile_interval,
)

#: Within-cell r below this counts as "weak" in the summary (the book's band for a weak correlation ends here).
WEAK_WITHIN = 0.3
#: Fewest encoders for a within-cell correlation (two points always lie on a line).
MIN_ENCODERS = 3
ENCODER_KEYS: tuple[str, ...] = (*CELL_KEYS, "encoder")


@dataclass(frozen=True)
class WithinCellSummary:
    """Within-cell correlations summarised over cells.

    Attributes
    ----------
    mean_r, median_r : float
        Mean and median of the within-cell r over the cells where it is defined.
    share_below : float
        Share of those cells with r below ``threshold``.
    n_below : int
        Their number.
    threshold : float
    n_cells : int
        Cells with a defined r.
    n_undefined : int
        Cells where r is undefined (a quantity constant across encoders).
    n_encoders : int
        Encoders in the largest cell.
    """

    mean_r: float
    median_r: float
    share_below: float
    n_below: int
    threshold: float
    n_cells: int
    n_undefined: int
    n_encoders: int


def encoder_cell_means(results: pd.DataFrame, arm: str = "frozen", clip: bool = False) -> pd.DataFrame:
    """Each encoder's mean AUROC loss and mean ECE increase in each corruption cell.

    Parameters
    ----------
    results : pandas.DataFrame
        A results table with corruption rows.
    arm : {"frozen", "lora"}
        Which arm to read.
    clip : bool
        Clip both differences at zero (see
        :func:`~crsbench_lib.scoring.corruption_cells.corrupted_pairs`).

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, corruption, encoder, n, auroc_loss, ece_increase``
        (``n``: evaluations averaged, seeds times severities), sorted.

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> table = synthetic_results(n_encoders=3, seeds=(0, 1), corruptions=("noise",), severities=(1, 3))
    >>> encoder_cell_means(table)["n"].unique().tolist()
    [4]
    """
    pairs = corrupted_pairs(results, arm=arm, clip=clip)
    means = pairs.groupby(list(ENCODER_KEYS), sort=True).agg(
        n=("auroc_loss", "size"), auroc_loss=("auroc_loss", "mean"), ece_increase=("ece_increase", "mean")
    )
    return means.reset_index()


def within_cell_correlations(results: pd.DataFrame, arm: str = "frozen", clip: bool = False) -> pd.DataFrame:
    """Pearson r across encoders of AUROC loss and ECE increase, in each corruption cell.

    ``r_c = cov_e(L_ce, I_ce) / (sd_e(L_ce) sd_e(I_ce))`` over the encoders of
    cell ``c``, where ``L_ce`` and ``I_ce`` are encoder ``e``'s means over
    seeds and severities (:func:`encoder_cell_means`); Pearson (1896).

    Parameters
    ----------
    results : pandas.DataFrame
        A results table with corruption rows.
    arm : {"frozen", "lora"}
        Which arm to read.
    clip : bool
        See :func:`encoder_cell_means`.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, corruption, n_encoders, within_r, mean_auroc_loss,
        mean_ece_increase`` (the last two: means over the cell's encoders),
        sorted by dataset and corruption; ``within_r`` is NaN where a quantity
        is constant across the cell's encoders.

    Raises
    ------
    SchemaError
        As :func:`~crsbench_lib.scoring.corruption_cells.corrupted_pairs`.
    ValueError
        If a cell has fewer than 3 encoders.

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> table = synthetic_results(n_encoders=4, corruptions=("noise", "blur"), severities=(1, 3))
    >>> cells = within_cell_correlations(table)
    >>> len(cells), int(cells["n_encoders"].min()), bool(cells["within_r"].between(-1, 1).all())
    (6, 4, True)
    """
    means = encoder_cell_means(results, arm=arm, clip=clip)
    rows = []
    for (dataset, corruption), group in means.groupby(list(CELL_KEYS), sort=True):
        if len(group) < MIN_ENCODERS:
            raise ValueError(
                f"cell {dataset}/{corruption} has {len(group)} encoders; a within-cell r needs at least {MIN_ENCODERS}"
            )
        loss = group["auroc_loss"].to_numpy(dtype=float)
        increase = group["ece_increase"].to_numpy(dtype=float)
        r = weighted_pearson(loss[None, :], increase[None, :], np.ones((1, loss.size)))[0]
        rows.append((dataset, corruption, len(group), float(r), float(loss.mean()), float(increase.mean())))
    columns = [*CELL_KEYS, "n_encoders", "within_r", "mean_auroc_loss", "mean_ece_increase"]
    return pd.DataFrame(rows, columns=columns)


def summarise_within(cells: pd.DataFrame, threshold: float = WEAK_WITHIN) -> WithinCellSummary:
    """Mean, median and share below ``threshold`` of the within-cell correlations.

    Parameters
    ----------
    cells : pandas.DataFrame
        Output of :func:`within_cell_correlations` (columns ``within_r`` and ``n_encoders``).
    threshold : float
        A cell counts as "below" when its r is strictly less than this.

    Returns
    -------
    WithinCellSummary

    Raises
    ------
    ValueError
        If a column is missing, the threshold is not in [-1, 1], or no cell has a defined r.

    Examples
    --------
    >>> s = summarise_within(pd.DataFrame({"within_r": [0.1, 0.5, 0.9], "n_encoders": [5, 5, 5]}))
    >>> round(s.mean_r, 3), s.median_r, s.n_below, s.n_cells
    (0.5, 0.5, 1, 3)
    """
    missing = [c for c in ("within_r", "n_encoders") if c not in cells.columns]
    if missing:
        raise ValueError(f"within-cell table lacks column {missing[0]!r}")
    if not -1.0 <= float(threshold) <= 1.0:
        raise ValueError(f"threshold must lie in [-1, 1], got {threshold!r}")
    r = cells["within_r"].to_numpy(dtype=float)
    defined = r[np.isfinite(r)]
    if defined.size == 0:
        raise ValueError("no cell has a defined within-cell r")
    below = int(np.count_nonzero(defined < threshold))
    return WithinCellSummary(
        mean_r=float(defined.mean()),
        median_r=float(np.median(defined)),
        share_below=below / defined.size,
        n_below=below,
        threshold=float(threshold),
        n_cells=int(defined.size),
        n_undefined=int(r.size - defined.size),
        n_encoders=int(cells["n_encoders"].max()),
    )


# --------------------------------------------------------------------------- image-level bootstrap


@dataclass(frozen=True, eq=False)
class CorruptionBootstrap:
    """Outcome of :func:`corruption_bootstrap`.

    Attributes
    ----------
    between, between_without_images : CorrelationUncertainty
        Between-cell Pearson r with its interval, with and without the image
        level (the same encoder and dataset draws in both).
    within, within_without_images : CorrelationUncertainty
        Mean within-cell r (``statistic="mean_within_pearson_r"``; ``n``:
        cells), with and without the image level.
    cells : pandas.DataFrame
        Per cell: ``dataset, corruption, n_encoders, n_images, within_r,
        ci_low, ci_high`` (the interval with images and encoders resampled;
        datasets do not move a cell's own r).
    summary : pandas.DataFrame
        One row per statistic and level: ``statistic`` ("between-cell r",
        "mean within-cell r"), ``images`` ("resampled", "fixed"),
        ``estimate, ci_low, ci_high``, ``bias`` (mean of the draws less the
        estimate: Efron and Tibshirani 1993, ch. 10), ``mc_se`` (Monte-Carlo
        standard error of that mean, ``sd / sqrt(B)``) and ``n_draws``.
    clusters : tuple of str
        The resampled factors besides the images.
    n_draws, random_state : int
        The parameters.
    """

    between: CorrelationUncertainty
    between_without_images: CorrelationUncertainty
    within: CorrelationUncertainty
    within_without_images: CorrelationUncertainty
    cells: pd.DataFrame
    summary: pd.DataFrame
    clusters: tuple[str, ...]
    n_draws: int
    random_state: int


def image_atoms(blocks: np.ndarray) -> list[np.ndarray]:
    """The sets of images that belong to the same blocks (the strata of the image draw).

    Parameters
    ----------
    blocks : numpy.ndarray
        ``(C, M)`` integer image indices, one row per corrupted condition.

    Returns
    -------
    list of numpy.ndarray
        Sorted image indices per atom, atoms ordered by their first image.
        Disjoint blocks are their own atoms; overlapping ones split into
        their intersections and differences.

    Examples
    --------
    >>> [a.tolist() for a in image_atoms(np.array([[0, 1, 2], [2, 3, 4], [0, 1, 2]]))]
    [[0, 1], [2], [3, 4]]
    """
    distinct = sorted({row.tobytes(): row for row in np.asarray(blocks)}.items())
    signature: dict[int, list[int]] = {}
    for b, (_, row) in enumerate(distinct):
        for image in np.unique(row):
            signature.setdefault(int(image), []).append(b)
    atoms: dict[tuple[int, ...], list[int]] = {}
    for image in sorted(signature):
        atoms.setdefault(tuple(signature[image]), []).append(image)
    return sorted((np.array(a, dtype=np.intp) for a in atoms.values()), key=lambda a: int(a[0]))


def _image_draws(data: DatasetPredictions, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """Multiplicities ``(1 + B, N)`` of the test images (row 0: every image once), stratified by atom."""
    n_images = data.labels.shape[0]
    counts = np.ones((1 + n_draws, n_images), dtype=np.int32)
    for atom in image_atoms(data.corrupted_images):
        counts[1:, atom] = multiplicities(atom.size, n_draws, rng).astype(np.int32)
    return counts


def _dataset_frame(data: DatasetPredictions) -> pd.DataFrame:
    """The rows (encoder, seed, condition) of one dataset, in the order of :func:`_dataset_metrics`."""
    e, s, c = np.meshgrid(np.arange(len(data.encoders)), np.arange(len(data.seeds)), np.arange(len(data.corruptions)),
                          indexing="ij")
    return pd.DataFrame({
        "encoder": np.array(data.encoders, dtype=object)[e.ravel()],
        "dataset": data.dataset,
        "seed": np.array(data.seeds)[s.ravel()],
        "corruption": np.array([f for f, _ in data.corruptions], dtype=object)[c.ravel()],
        "severity": np.array([v for _, v in data.corruptions])[c.ravel()],
    })


def _dataset_metrics(data: DatasetPredictions, weights: np.ndarray, clip: bool) -> tuple[np.ndarray, np.ndarray]:
    """AUROC loss and ECE increase (rows, B) of one dataset's corrupted evaluations under image multiplicities (B, N).

    Each condition is paired with the clean predictions of the same probe on its own images
    under the same multiplicities; conditions on the same block of images are scored together.
    """
    items = len(data.encoders) * len(data.seeds)
    n_cond = len(data.corruptions)
    clean = data.clean.reshape(items, *data.clean.shape[2:])
    loss = np.empty((items, n_cond, weights.shape[0]))
    increase = np.empty_like(loss)
    blocks: dict[bytes, list[int]] = {}
    for c in range(n_cond):
        blocks.setdefault(data.corrupted_images[c].tobytes(), []).append(c)
    for members in blocks.values():
        images = data.corrupted_images[members[0]]
        sub, labels = weights[:, images], data.labels[images]
        reference = clean[:, images]
        auroc_ref = weighted_macro_auroc(reference, labels, data.task, sub)
        ece_ref = weighted_ece(reference, labels, data.task, sub, data.ece_bins)
        block = data.corrupted_proba[:, :, members]
        stacked = block.reshape(items * len(members), *block.shape[3:])
        shape = (items, len(members), weights.shape[0])
        auroc = weighted_macro_auroc(stacked, labels, data.task, sub).reshape(shape)
        ece = weighted_ece(stacked, labels, data.task, sub, data.ece_bins).reshape(shape)
        loss[:, members] = auroc_ref[:, None, :] - auroc
        increase[:, members] = ece - ece_ref[:, None, :]
    if clip:
        loss, increase = np.maximum(loss, 0.0), np.maximum(increase, 0.0)
    return loss.reshape(items * n_cond, -1), increase.reshape(items * n_cond, -1)


def _cell_images(data: DatasetPredictions, family: str) -> int:
    """Distinct test images behind one cell (its conditions' blocks together)."""
    rows = [i for i, (f, _) in enumerate(data.corruptions) if f == family]
    return int(np.unique(data.corrupted_images[rows]).size)


def _membership(keys: pd.DataFrame, columns: list[str]) -> tuple[sparse.csr_matrix, pd.DataFrame]:
    """Sparse 0/1 (rows, groups) matrix of the rows' groups, and the groups (sorted)."""
    groups = keys[columns].drop_duplicates().sort_values(columns, kind="mergesort").reset_index(drop=True)
    index = pd.MultiIndex.from_frame(groups).get_indexer(pd.MultiIndex.from_frame(keys[columns]))
    matrix = sparse.csr_matrix((np.ones(len(keys)), (np.arange(len(keys)), index)), shape=(len(keys), len(groups)))
    return matrix, groups


def _group_means(weights: np.ndarray, values: np.ndarray, member: sparse.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """Weighted means (B, G) of ``values`` (N, B) or (N, 1) per group under row weights (B, N), and the groups' weights."""
    count = np.asarray((member.T @ weights.T).T)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.asarray((member.T @ (weights * values.T).T).T) / count
    return np.where(count > 0, mean, 0.0), count


def _uncertainty(statistic: str, draws: np.ndarray, n: int, coverage: float) -> CorrelationUncertainty:
    low, high, n_valid = percentile_interval(draws[1:], coverage)
    return CorrelationUncertainty(statistic=statistic, estimate=float(draws[0]), ci_low=low, ci_high=high,
                                  interval=coverage, interval_method="cluster_bootstrap", n_draws=n_valid,
                                  p_value=float("nan"), p_method="none", n_permutations=0, n=n)


def _bias(draws: np.ndarray) -> dict[str, float]:
    """Bootstrap bias (mean of the finite draws less the point, ``draws[0]``) and its Monte-Carlo standard error."""
    values = draws[1:][np.isfinite(draws[1:])]
    if values.size < 2:
        return {"bias": float("nan"), "mc_se": float("nan")}
    return {"bias": float(values.mean() - draws[0]), "mc_se": float(values.std(ddof=1) / np.sqrt(values.size))}


def _correlations(loss: np.ndarray, increase: np.ndarray, row_w: np.ndarray,
                  cell_w: np.ndarray, cell_member: sparse.csr_matrix, encoder_member: sparse.csr_matrix,
                  encoder_groups: pd.DataFrame, cells: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Between-cell r (B,), within-cell r (B, cells) and mean within-cell r (B,) of every draw."""
    mean_loss, count = _group_means(row_w, loss, cell_member)
    mean_increase, _ = _group_means(row_w, increase, cell_member)
    v = np.where(count > 0, cell_w, 0.0)
    between = weighted_pearson(mean_loss, mean_increase, v)
    enc_loss, enc_count = _group_means(row_w, loss, encoder_member)
    enc_increase, _ = _group_means(row_w, increase, encoder_member)
    encoders = sorted(encoder_groups["encoder"].unique())
    cell_of = pd.MultiIndex.from_frame(cells[list(CELL_KEYS)]).get_indexer(
        pd.MultiIndex.from_frame(encoder_groups[list(CELL_KEYS)]))
    enc_of = np.searchsorted(encoders, encoder_groups["encoder"].to_numpy())
    shape = (row_w.shape[0], len(cells), len(encoders))

    def grid(values: np.ndarray) -> np.ndarray:
        out = np.zeros(shape)
        out[:, cell_of, enc_of] = values
        return out

    b = row_w.shape[0] * len(cells)
    within = weighted_pearson(grid(enc_loss).reshape(b, -1), grid(enc_increase).reshape(b, -1),
                              grid(enc_count).reshape(b, -1)).reshape(shape[:2])
    # The mean over cells weighs each cell by its datasets' multiplicity; cells with r undefined drop out.
    usable = np.isfinite(within) & (v > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_within = np.where(usable, within * v, 0.0).sum(axis=1) / np.where(usable, v, 0.0).sum(axis=1)
    return between, within, mean_within


def corruption_bootstrap(
    predictions: Mapping[str, DatasetPredictions],
    clip: bool = False,
    clusters: tuple[str, ...] = DEFAULT_CLUSTERS,
    n_draws: int = 300,
    interval: float = 0.95,
    random_state: int = 0,
) -> CorruptionBootstrap:
    """Between- and within-cell correlations with intervals that also resample the shared test images.

    Draw ``b`` (i) resamples the ``clusters`` factors as
    :func:`~crsbench_lib.scoring.corruption_cells.cell_correlation_bootstrap`
    does (the same generator calls, so the same ``random_state`` and
    ``n_draws`` give the same encoder and dataset draws), then (ii) per dataset
    (sorted), the test images of every corrupted block, stratified by block
    (:func:`image_atoms`), with the same multiplicities for every encoder, seed,
    condition and clean reference on them. Each corrupted evaluation's AUROC
    loss and ECE increase are recomputed under those multiplicities; then the
    between-cell r is the cell-weighted Pearson r of the weighted cell means,
    each cell's within-cell r the Pearson r across encoders (weighted by their
    multiplicities) of the encoders' weighted means, and the mean within-cell r
    their mean weighted by the cells' dataset multiplicities. Without the image
    level, (ii) is skipped. Intervals are percentile intervals over the draws
    in which a statistic is defined; point estimates use every image, encoder
    and dataset once.

    Parameters
    ----------
    predictions : mapping
        Dataset -> :class:`~crsbench_lib.results.predictions.DatasetPredictions`
        of one arm (:func:`~crsbench_lib.results.predictions.load_prediction_arrays`).
    clip : bool
        Clip both differences at zero.
    clusters : tuple of str
        Factors resampled besides the images, among ``encoder, seed, dataset,
        corruption`` (empty: the images alone).
    n_draws : int
        Bootstrap draws.
    interval : float
        Coverage of the percentile intervals.
    random_state : int
        Seed of the draws.

    Returns
    -------
    CorruptionBootstrap

    Raises
    ------
    SchemaError
        If there are no predictions or a dataset has no corrupted conditions.
    ValueError
        If a cluster factor is unknown, there are fewer than 4 cells or a cell
        has fewer than 3 encoders, or a parameter is invalid.

    Examples
    --------
    >>> from crsbench_lib.results.predictions import load_prediction_arrays
    >>> arrays = load_prediction_arrays(".crsbench-cache/runs/default")  # doctest: +SKIP
    >>> result = corruption_bootstrap(arrays, n_draws=300)  # doctest: +SKIP
    >>> result.within.estimate, (result.between.ci_low, result.between.ci_high)  # doctest: +SKIP
    """
    allowed = ROW_FACTORS + CELL_FACTORS
    unknown = [c for c in clusters if c not in allowed]
    if unknown:
        raise ValueError(f"clusters must name some of {', '.join(allowed)}, got {list(clusters)}")
    coverage = check_interval(interval)
    n_draws = check_count(n_draws, "n_draws")
    if not predictions:
        raise SchemaError("corruption_bootstrap: no predictions")
    bare = [name for name in sorted(predictions) if not predictions[name].corruptions]
    if bare:
        raise SchemaError(f"corruption_bootstrap: dataset {bare[0]!r} has no corrupted conditions")
    rng = np.random.default_rng(random_state)  # one stream: row factors, cell factors, then images
    names = sorted(predictions)
    frame = pd.concat([_dataset_frame(predictions[name]) for name in names], ignore_index=True)
    cell_member, cells = _membership(frame, list(CELL_KEYS))
    encoder_member, encoder_groups = _membership(frame, list(ENCODER_KEYS))
    if len(cells) < MIN_CELLS_FOR_CI:
        raise ValueError(f"need at least {MIN_CELLS_FOR_CI} cells for a correlation interval, got {len(cells)}")
    n_encoders = encoder_groups.groupby(list(CELL_KEYS), sort=True).size().reindex(
        pd.MultiIndex.from_frame(cells)).to_numpy()
    if n_encoders.min() < MIN_ENCODERS:
        first = cells.iloc[int(np.argmin(n_encoders))]
        raise ValueError(f"cell {first['dataset']}/{first['corruption']} has {int(n_encoders.min())} encoders; "
                         f"a within-cell r needs at least {MIN_ENCODERS}")
    row_w = crossed_weights(factor_codes(frame, list(ROW_FACTORS)), n_draws, random_state=rng,
                            factors=[c for c in clusters if c in ROW_FACTORS])
    cell_w = crossed_weights(factor_codes(cells, list(CELL_FACTORS)), n_draws, random_state=rng,
                             factors=[c for c in clusters if c in CELL_FACTORS])
    row_w = np.vstack([np.ones((1, row_w.shape[1])), row_w])
    cell_w = np.vstack([np.ones((1, cell_w.shape[1])), cell_w])
    image_weights = {name: _image_draws(predictions[name], n_draws, rng) for name in names}
    metrics = [_dataset_metrics(predictions[name], image_weights[name], clip) for name in names]
    loss = np.vstack([m[0] for m in metrics])  # (rows, 1 + B): column 0 every image once
    increase = np.vstack([m[1] for m in metrics])
    fixed = loss[:, :1], increase[:, :1]  # every image once in every draw (broadcast over the draws)
    common = (row_w, cell_w, cell_member, encoder_member, encoder_groups, cells)
    between, within, mean_within = _correlations(loss, increase, *common)
    between_fixed, _, mean_fixed = _correlations(*fixed, *common)
    if not np.isfinite(between[0]):
        raise ValueError("a cell column is constant across cells: the between-cell r is undefined")
    table = cells.copy()
    table["n_encoders"] = n_encoders.astype(int)
    table["n_images"] = [_cell_images(predictions[d], c) for d, c in zip(cells["dataset"], cells["corruption"])]
    table["within_r"] = within[0]
    bounds = [percentile_interval(within[1:, c], coverage)[:2] for c in range(len(cells))]
    table["ci_low"] = [low for low, _ in bounds]
    table["ci_high"] = [high for _, high in bounds]
    n_cells = len(cells)
    draws = {("between-cell r", "resampled"): between, ("between-cell r", "fixed"): between_fixed,
             ("mean within-cell r", "resampled"): mean_within, ("mean within-cell r", "fixed"): mean_fixed}
    uncertainty = {key: _uncertainty("pearson_r" if key[0].startswith("between") else "mean_within_pearson_r",
                                     values, n_cells, coverage) for key, values in draws.items()}
    summary = pd.DataFrame([
        {"statistic": key[0], "images": key[1], "estimate": u.estimate, "ci_low": u.ci_low, "ci_high": u.ci_high,
         **_bias(draws[key]), "n_draws": u.n_draws}
        for key, u in uncertainty.items()
    ])
    return CorruptionBootstrap(
        between=uncertainty[("between-cell r", "resampled")],
        between_without_images=uncertainty[("between-cell r", "fixed")],
        within=uncertainty[("mean within-cell r", "resampled")],
        within_without_images=uncertainty[("mean within-cell r", "fixed")],
        cells=table,
        summary=summary,
        clusters=tuple(clusters),
        n_draws=n_draws,
        random_state=int(random_state),
    )
