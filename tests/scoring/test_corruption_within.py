"""Within-cell correlations and the image-level bootstrap of the corruption cells."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.errors import SchemaError
from crsbench_lib.evaluation.cell import rows_from_predictions
from crsbench_lib.metrics.auroc import macro_auroc
from crsbench_lib.metrics.calibration import expected_calibration_error
from crsbench_lib.results.predictions import ConditionPredictions, dataset_arrays
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.scoring.corruption_cells import (
    cell_correlation,
    cell_correlation_bootstrap,
    corruption_cells,
    weighted_pearson,
)
from crsbench_lib.scoring.corruption_within import (
    corruption_bootstrap,
    encoder_cell_means,
    image_atoms,
    summarise_within,
    within_cell_correlations,
)
from crsbench_lib.scoring.resampling import multiplicities

# ------------------------------------------------------------------ tables with designed losses


def designed(loss: dict, increase: dict, n_encoders: int = 4) -> pd.DataFrame:
    """A results table whose corrupted rows have the given AUROC loss and ECE increase per (cell, encoder index).

    ``loss[(dataset, corruption)]`` is a list with one value per encoder (the same for every seed and severity).
    """
    datasets = sorted({d for d, _ in loss})
    known = {"derm": ("derm", "dermatology", "multiclass"), "fundus": ("fundus", "ophthalmology", "multiclass"),
             "cxr": ("cxr", "radiology", "multilabel")}
    families = tuple(sorted({c for _, c in loss}))
    table = synthetic_results(n_encoders=n_encoders, seeds=(0, 1), datasets=tuple(known[d] for d in datasets),
                              corruptions=families, severities=(1, 3), shift_dataset=None)
    corrupted = table["condition"] == "corruption"
    encoders = sorted(table["encoder"].unique())
    for i in table.index[corrupted]:
        key = (table.at[i, "dataset"], table.at[i, "corruption"])
        e = encoders.index(table.at[i, "encoder"])
        table.at[i, "auroc_reference"] = 0.9
        table.at[i, "auroc"] = 0.9 - loss[key][e]
        table.at[i, "ece_reference"] = 0.05
        table.at[i, "ece"] = 0.05 + increase[key][e]
    return table


def test_within_cell_r_by_hand():
    loss = {("derm", "blur"): [0.1, 0.2, 0.3, 0.4], ("derm", "noise"): [0.05, 0.05, 0.15, 0.25]}
    increase = {("derm", "blur"): [0.01, 0.03, 0.02, 0.04], ("derm", "noise"): [0.04, 0.03, 0.02, 0.01]}
    cells = within_cell_correlations(designed(loss, increase))
    assert list(cells.columns) == ["dataset", "corruption", "n_encoders", "within_r", "mean_auroc_loss",
                                   "mean_ece_increase"]
    blur = cells.set_index("corruption").loc["blur"]
    # x - mean = (-0.15, -0.05, 0.05, 0.15), y - mean = (-0.015, 0.005, -0.005, 0.015):
    # sum dx dy = 0.004, sum dx^2 = 0.05, sum dy^2 = 0.0005, r = 0.004 / sqrt(0.000025) = 0.8
    assert blur["within_r"] == pytest.approx(0.8, abs=1e-9)
    assert blur["n_encoders"] == 4 and blur["mean_auroc_loss"] == pytest.approx(0.25)
    # noise: dx = (-0.075, -0.075, 0.025, 0.125), dy = (0.015, 0.005, -0.005, -0.015)
    # sum dx dy = -0.0035, sum dx^2 = 0.0275, sum dy^2 = 0.0005 -> r = -0.0035 / sqrt(0.00001375)
    assert cells.set_index("corruption").loc["noise", "within_r"] == pytest.approx(-0.0035 / np.sqrt(0.00001375))
    means = encoder_cell_means(designed(loss, increase))
    assert (means["n"] == 2 * 2).all()  # two seeds, two severities


def test_within_zero_by_construction_while_between_is_one():
    """Cells shift both losses together (between r = 1), encoders vary them independently (within r = 0)."""
    a = np.array([-1.0, 0.0, 1.0, 0.0]) * 0.01
    b = np.array([0.0, 1.0, 0.0, -1.0]) * 0.01  # orthogonal to a: r = 0
    strength = {("derm", "blur"): 0.05, ("derm", "noise"): 0.10, ("fundus", "blur"): 0.15, ("fundus", "noise"): 0.20}
    loss = {k: list(s + a) for k, s in strength.items()}
    increase = {k: list(s / 2 + b) for k, s in strength.items()}
    table = designed(loss, increase)
    within = within_cell_correlations(table)
    assert np.allclose(within["within_r"], 0.0, atol=1e-9)
    assert summarise_within(within).mean_r == pytest.approx(0.0, abs=1e-9)
    assert cell_correlation(corruption_cells(table)).r == pytest.approx(1.0)


def test_summary_over_cells():
    cells = pd.DataFrame({"within_r": [0.1, 0.25, 0.5, 0.9, np.nan], "n_encoders": [5, 5, 5, 6, 5]})
    s = summarise_within(cells)
    assert s.mean_r == pytest.approx(0.4375) and s.median_r == pytest.approx(0.375)
    assert (s.n_below, s.share_below, s.n_cells, s.n_undefined, s.n_encoders) == (2, 0.5, 4, 1, 6)
    assert summarise_within(cells, threshold=0.1).n_below == 0  # strictly below


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.floats(-1, 1), st.floats(-1, 1), st.integers(0, 3)), min_size=3, max_size=12))
def test_weighted_pearson_is_pearson_of_the_repeated_points(points):
    x, y, w = (np.array(v, dtype=float) for v in zip(*points, strict=True))
    r = weighted_pearson(x[None], y[None], w[None])[0]
    rx, ry = np.repeat(x, w.astype(int)), np.repeat(y, w.astype(int))
    if rx.size < 2 or np.ptp(rx) < 1e-9 or np.ptp(ry) < 1e-9:
        return
    assert r == pytest.approx(np.corrcoef(rx, ry)[0, 1], abs=1e-7)


def test_within_errors():
    two = {("derm", "blur"): [0.1, 0.2], ("derm", "noise"): [0.1, 0.3]}
    with pytest.raises(ValueError, match="needs at least 3"):
        within_cell_correlations(designed(two, two, n_encoders=2))
    with pytest.raises(ValueError, match="lacks column 'within_r'"):
        summarise_within(pd.DataFrame({"n_encoders": [3]}))
    with pytest.raises(ValueError, match="no cell has a defined"):
        summarise_within(pd.DataFrame({"within_r": [np.nan], "n_encoders": [3]}))
    with pytest.raises(ValueError, match="threshold"):
        summarise_within(pd.DataFrame({"within_r": [0.2], "n_encoders": [3]}), threshold=2)
    table = synthetic_results(n_encoders=4, corruptions=("noise",))
    with pytest.raises(SchemaError, match="no corruption rows"):
        within_cell_correlations(table[table["condition"] != "corruption"])


# ------------------------------------------------------------------ stored predictions, per-condition blocks

ENCODERS = ("alpha", "beta", "gamma", "delta")
N_IMAGES, BLOCK = 64, 16
CONDITIONS = (("blur", 1), ("blur", 3), ("noise", 1), ("noise", 3))


def _meta(encoder, dataset, task, seed, condition, **extra):
    meta = {"encoder": encoder, "dataset": dataset, "domain": "x", "task": task, "seed": seed, "arm": "frozen",
            "condition": condition, "label_fraction": 1.0, "label_fraction_used": 1.0, "corruption": "none",
            "severity": 0, "calibration": "none", "ece_bins": 10, "c_rule": "auroc", "probe_c": 1.0,
            "calibrator_split": "calibration", "config_hash": "", "package_version": ""}
    meta.update(extra)
    return meta


def _proba(rng, labels, task, k, strength):
    target = labels.astype(float) if task == "multilabel" else np.eye(k)[labels]
    logits = strength * target + rng.normal(size=target.shape)
    if task == "multilabel":
        return 1 / (1 + np.exp(-(logits - 1)))
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def block_predictions(seed=0):
    """Two datasets; every corrupted condition on its own block of 16 of 64 test images (per-condition layout)."""
    rng = np.random.default_rng(seed)
    out = []
    for dataset, task, k in (("derm", "multiclass", 3), ("cxr", "multilabel", 2)):
        labels = (rng.integers(0, k, N_IMAGES) if task == "multiclass"
                  else (rng.random((N_IMAGES, k)) < 0.4).astype(np.uint8))
        image = np.arange(N_IMAGES)
        for e, encoder in enumerate(ENCODERS):
            strength = 1.0 + 0.7 * e
            for s in (0, 1):
                out.append(ConditionPredictions.build(_meta(encoder, dataset, task, s, "clean"), image, labels,
                                                      _proba(rng, labels, task, k, strength), task))
                for position, (family, severity) in enumerate(CONDITIONS):
                    block = np.arange(position * BLOCK, (position + 1) * BLOCK)
                    weaker = strength / (severity * (1.5 if family == "noise" else 1.0))
                    out.append(ConditionPredictions.build(
                        _meta(encoder, dataset, task, s, "corruption", corruption=family, severity=severity),
                        image[block], labels[block], _proba(rng, labels[block], task, k, weaker), task))
    return out


@pytest.fixture(scope="module")
def predictions():
    return block_predictions()


@pytest.fixture(scope="module")
def arrays(predictions):
    return dataset_arrays(predictions)


@pytest.fixture(scope="module")
def table(predictions):
    return rows_from_predictions(predictions)


def test_image_atoms_split_overlapping_blocks():
    atoms = image_atoms(np.array([[0, 1, 2, 3], [2, 3, 4, 5], [6, 7, 8, 9], [0, 1, 2, 3]]))
    assert [a.tolist() for a in atoms] == [[0, 1], [2, 3], [4, 5], [6, 7, 8, 9]]


def test_point_estimates_are_the_tables(arrays, table):
    result = corruption_bootstrap(arrays, n_draws=5)
    within = within_cell_correlations(table)
    merged = result.cells.merge(within, on=["dataset", "corruption"], suffixes=("", "_table"))
    assert len(merged) == 4
    np.testing.assert_allclose(merged["within_r"], merged["within_r_table"], atol=1e-9)
    assert (result.cells["n_images"] == 2 * BLOCK).all() and (result.cells["n_encoders"] == 4).all()
    assert result.within.estimate == pytest.approx(summarise_within(within).mean_r, abs=1e-9)
    assert result.between.estimate == pytest.approx(cell_correlation(corruption_cells(table)).r, abs=1e-9)
    assert result.within.estimate == result.within_without_images.estimate


def test_without_images_the_draws_are_the_cluster_bootstraps(arrays, table):
    result = corruption_bootstrap(arrays, n_draws=200, random_state=3)
    clustered = cell_correlation_bootstrap(table, n_draws=200, random_state=3)
    fixed = result.between_without_images
    assert (fixed.ci_low, fixed.ci_high) == pytest.approx((clustered.ci_low, clustered.ci_high), abs=1e-9)
    assert fixed.n_draws == clustered.n_draws


def test_deterministic_under_a_random_state(arrays):
    one = corruption_bootstrap(arrays, n_draws=40, random_state=7)
    two = corruption_bootstrap(arrays, n_draws=40, random_state=7)
    pd.testing.assert_frame_equal(one.summary, two.summary)
    pd.testing.assert_frame_equal(one.cells, two.cells)
    other = corruption_bootstrap(arrays, n_draws=40, random_state=8)
    assert not other.summary[["ci_low", "ci_high"]].equals(one.summary[["ci_low", "ci_high"]])
    assert list(one.summary["statistic"]) == ["between-cell r", "between-cell r", "mean within-cell r",
                                              "mean within-cell r"]


def _metrics(labels, proba, task, bins):
    p = proba[:, 0] if task == "binary" else proba
    return macro_auroc(labels, p, task).value, expected_calibration_error(labels, p, task, bins)


@pytest.mark.parametrize("seed", [0, 5])
def test_one_draw_equals_the_statistics_on_the_paired_resampled_data(arrays, seed):
    """With one draw the interval is that draw: rebuild it by repeating encoders, datasets and images.

    Every encoder, seed, condition and clean reference takes the same image multiplicities, so
    the rebuilt data set repeats the same test images for all of them (the bootstrap is paired).
    """
    result = corruption_bootstrap(arrays, n_draws=1, random_state=seed)
    rng = np.random.default_rng(seed)
    enc_counts = multiplicities(len(ENCODERS), 1, rng)[0]
    names = sorted(arrays)
    ds_counts = multiplicities(len(names), 1, rng)[0]
    image_counts = {}
    for name in names:
        counts = np.zeros(N_IMAGES, dtype=int)
        for atom in image_atoms(arrays[name].corrupted_images):
            counts[atom] = multiplicities(atom.size, 1, rng)[0].astype(int)
        image_counts[name] = counts
    rows = []
    encoders = sorted(ENCODERS)
    for name in names:
        data = arrays[name]
        for c, (family, _) in enumerate(data.corruptions):
            images = data.corrupted_images[c]
            take = np.repeat(np.arange(images.size), image_counts[name][images])  # the same for every encoder
            labels = data.labels[images][take]
            for e, encoder in enumerate(data.encoders):
                for s in range(len(data.seeds)):
                    ref = _metrics(labels, data.clean[e, s][images][take].astype(float), data.task, data.ece_bins)
                    cor = _metrics(labels, data.corrupted_proba[e, s, c][take].astype(float), data.task,
                                   data.ece_bins)
                    for _ in range(int(enc_counts[encoders.index(encoder)])):
                        rows.append((name, family, encoder, ref[0] - cor[0], cor[1] - ref[1]))
    frame = pd.DataFrame(rows, columns=["dataset", "corruption", "encoder", "loss", "increase"])
    per_encoder = frame.groupby(["dataset", "corruption", "encoder"])[["loss", "increase"]].mean()
    within = {}
    for cell, group in per_encoder.groupby(level=[0, 1]):
        copies = [int(enc_counts[encoders.index(i[2])]) for i in group.index]
        repeated = group.loc[np.repeat(group.index.to_numpy(), copies)]
        within[cell] = np.corrcoef(repeated["loss"], repeated["increase"])[0, 1]
    cells = frame.groupby(["dataset", "corruption"])[["loss", "increase"]].mean()
    weights = np.array([ds_counts[names.index(d)] for d, _ in cells.index])
    repeated = cells.loc[np.repeat(cells.index.to_numpy(), weights.astype(int))]
    between = np.corrcoef(repeated["loss"], repeated["increase"])[0, 1]
    mean_within = np.average([within[k] for k in cells.index], weights=weights)
    assert result.between.ci_low == pytest.approx(between, abs=1e-9)
    assert result.within.ci_low == pytest.approx(mean_within, abs=1e-9)
    for _, row in result.cells.iterrows():
        assert row["ci_low"] == pytest.approx(within[(row["dataset"], row["corruption"])], abs=1e-9)


def test_images_alone(arrays):
    """Resampling only the images (encoders and datasets fixed) still moves r: the image level is real noise."""
    result = corruption_bootstrap(arrays, clusters=(), n_draws=60, random_state=2)
    images = result.summary.set_index(["statistic", "images"])
    assert images.loc[("mean within-cell r", "fixed"), "ci_low"] == pytest.approx(result.within.estimate)
    assert images.loc[("mean within-cell r", "resampled"), "ci_high"] > images.loc[
        ("mean within-cell r", "resampled"), "ci_low"]
    assert np.isfinite(result.summary["bias"]).all() and (result.summary["mc_se"] >= 0).all()


def test_bootstrap_errors(arrays, predictions):
    with pytest.raises(ValueError, match="clusters must name"):
        corruption_bootstrap(arrays, clusters=("site",))
    with pytest.raises(ValueError, match="interval"):
        corruption_bootstrap(arrays, interval=1.5)
    with pytest.raises(ValueError, match="n_draws"):
        corruption_bootstrap(arrays, n_draws=0)
    with pytest.raises(SchemaError, match="no predictions"):
        corruption_bootstrap({})
    few = dataset_arrays([p for p in predictions if p.meta["encoder"] in ENCODERS[:2]])
    with pytest.raises(ValueError, match="needs at least 3"):
        corruption_bootstrap(few)
    one = dataset_arrays([p for p in predictions if p.meta["dataset"] == "derm"])
    with pytest.raises(ValueError, match="at least 4 cells"):
        corruption_bootstrap(one)
    bare = dataset_arrays([p for p in predictions if p.meta["condition"] == "clean"])
    with pytest.raises(SchemaError, match="no corrupted conditions"):
        corruption_bootstrap(bare)


@settings(max_examples=10, deadline=None)
@given(st.lists(st.floats(-0.03, 0.3), min_size=4, max_size=4),
       st.lists(st.floats(0.0, 0.3), min_size=4, max_size=4))
def test_within_r_ignores_how_strong_each_corruption_is(loss_shift, ece_shift):
    """Adding a constant per cell (a stronger or weaker corruption) moves cell means, never the within-cell r."""
    rng = np.random.default_rng(0)
    keys = [("derm", "blur"), ("derm", "noise"), ("fundus", "blur"), ("fundus", "noise")]
    loss = {k: list(rng.normal(0, 0.02, 4)) for k in keys}
    increase = {k: list(rng.normal(0, 0.01, 4)) for k in keys}
    base = within_cell_correlations(designed(loss, increase))
    shifted = within_cell_correlations(designed(
        {k: [v + loss_shift[i] for v in loss[k]] for i, k in enumerate(keys)},
        {k: [v + ece_shift[i] for v in increase[k]] for i, k in enumerate(keys)}))
    np.testing.assert_allclose(shifted["within_r"], base["within_r"], atol=1e-6)


def test_identical_encoders_get_identical_losses_in_every_draw(predictions):
    """The same image indices for every encoder: a copy of an encoder's predictions moves with it in every draw."""
    from crsbench_lib.scoring.corruption_within import _dataset_metrics, _image_draws

    copied = [ConditionPredictions(dict(p.meta, encoder="alpha_copy"), p.image, p.labels, p.probabilities)
              for p in predictions if p.meta["encoder"] == "alpha"]
    data = dataset_arrays(predictions + copied)["derm"]
    weights = _image_draws(data, 25, np.random.default_rng(1))
    assert (weights[1:].sum(axis=1) == N_IMAGES).all()  # every block keeps its 16 images
    for atom in image_atoms(data.corrupted_images):
        assert (weights[1:, atom].sum(axis=1) == atom.size).all()
    loss, increase = _dataset_metrics(data, weights, clip=False)
    rows = len(data.seeds) * len(data.corruptions)
    first, copy = data.encoders.index("alpha"), data.encoders.index("alpha_copy")
    np.testing.assert_array_equal(loss[first * rows:(first + 1) * rows], loss[copy * rows:(copy + 1) * rows])
    np.testing.assert_array_equal(increase[first * rows:(first + 1) * rows], increase[copy * rows:(copy + 1) * rows])
    assert np.ptp(loss[first * rows], axis=0) > 0  # the images do move the losses between draws
