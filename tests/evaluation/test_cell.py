"""evaluate_cell: embeddings of one cell -> validated, deterministic result rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from crsbench_lib.errors import EvaluationError, SchemaError
from crsbench_lib.evaluation.cell import (
    CellEmbeddings,
    ProbeConfig,
    evaluate_cell,
    evaluate_cell_predictions,
    rows_from_predictions,
)
from crsbench_lib.evaluation.fractions import label_fraction_subsets
from crsbench_lib.metrics.calibration import ECE_VARIANTS
from crsbench_lib.results.schema import KEY_COLUMNS, validate_results

FRACTIONS = (1.0, 0.25, 0.10, 0.05, 0.01)
META = {"encoder": "enc", "dataset": "toy", "domain": "synthetic", "arm": "frozen",
        "config_hash": "abc123", "package_version": "0.1.0"}
CONFIG = ProbeConfig(c_grid=(1e-3, 1e-2, 1e-1, 1.0), max_iter=100)


def make_cell(task: str, k: int, seed: int = 0, dim: int = 16, scale: float = 1.0,
              make_clusters=None, make_multilabel=None) -> CellEmbeddings:
    rng = np.random.default_rng(seed)

    def split(n: int, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        if task == "multilabel":
            x, y = make_multilabel(n, dim, k, rng)
            return x + shift, y
        return make_clusters(n, dim, k, rng, separation=0.6, shift=shift)

    train, y_train = split(400)
    val, y_val = split(150)
    test, y_test = split(200)
    shift, y_shift = split(120, shift=0.4)
    calibration, y_cal = split(150)
    corrupted = {(c, s): test[:150] + rng.normal(0, 0.3 * s, (150, dim)).astype(np.float32)
                 for c in ("noise", "blur") for s in (1, 2, 3, 4, 5)}
    return CellEmbeddings(train * scale, y_train, val * scale, y_val, test * scale, y_test,
                          {key: v * scale for key, v in corrupted.items()}, shift * scale, y_shift,
                          calibration * scale, y_cal)


def run(cell: CellEmbeddings, task: str, k: int, **overrides) -> pd.DataFrame:
    kwargs = {"seed": 0, "label_fractions": FRACTIONS, "ece_bins": 15, "probe": CONFIG, "meta": META}
    kwargs.update(overrides)
    return evaluate_cell(cell, task, k, **kwargs)


@pytest.fixture
def cell_for(make_clusters, make_multilabel):
    def build(task: str, k: int, **kwargs) -> CellEmbeddings:
        return make_cell(task, k, make_clusters=make_clusters, make_multilabel=make_multilabel, **kwargs)
    return build


@pytest.mark.parametrize("task, k", [("multiclass", 4), ("binary", 2), ("multilabel", 3)])
def test_rows_are_valid_and_complete(cell_for, task, k):
    rows = run(cell_for(task, k), task, k)
    pd.testing.assert_frame_equal(rows, validate_results(rows))
    counts = rows.groupby(["condition", "calibration"]).size().to_dict()
    assert counts == {("clean", "none"): 1, ("clean", "temperature"): 1, ("clean", "vector"): 1,
                      ("clean", "isotonic"): 1, ("label_fraction", "none"): 4, ("corruption", "none"): 10,
                      ("shift", "none"): 1, ("shift", "temperature"): 1, ("shift", "vector"): 1,
                      ("shift", "isotonic"): 1}
    assert (rows["task"] == task).all()
    assert (rows["ece_variant"] == ECE_VARIANTS[task]).all() and (rows["ece_bins"] == 15).all()
    assert (rows["encoder"] == "enc").all() and (rows["config_hash"] == "abc123").all()
    assert rows.loc[rows["condition"] == "corruption", "n_test"].eq(150).all()
    assert rows.loc[rows["condition"] == "shift", "n_test"].eq(120).all()
    fractions = rows[rows["condition"] == "label_fraction"]
    assert sorted(fractions["label_fraction"]) == [0.01, 0.05, 0.10, 0.25]
    assert (fractions["label_fraction_used"] >= fractions["label_fraction"] - 1e-9).all()
    clean = rows[(rows["condition"] == "clean") & (rows["calibration"] == "none")].iloc[0]
    assert clean["auroc"] > 0.8  # the probe learns the clusters
    assert not rows.duplicated(subset=list(KEY_COLUMNS)).any()


@pytest.mark.parametrize("task, k", [("multiclass", 3), ("multilabel", 2)])
def test_bit_identical_across_calls(cell_for, task, k):
    first = run(cell_for(task, k), task, k)
    second = run(cell_for(task, k), task, k)
    pd.testing.assert_frame_equal(first, second, check_exact=True)
    for column in ("auroc", "ece", "brier", "nll", "accuracy", "label_fraction_used"):
        assert first[column].to_numpy().tobytes() == second[column].to_numpy().tobytes()


def test_label_subsets_identical_across_encoders(cell_for):
    # two encoders (different embeddings, same labels) at one seed use the same labelled examples
    a = cell_for("multiclass", 4)
    b = cell_for("multiclass", 4)
    rng = np.random.default_rng(99)
    b.train = rng.normal(size=(a.train.shape[0], 7)).astype(np.float32)
    b.val = rng.normal(size=(a.val.shape[0], 7)).astype(np.float32)
    b.test = rng.normal(size=(a.test.shape[0], 7)).astype(np.float32)
    b.calibration = rng.normal(size=(a.calibration.shape[0], 7)).astype(np.float32)
    b.corrupted, b.shift_test, b.shift_labels = {}, None, None
    rows_a, rows_b = run(a, "multiclass", 4), run(b, "multiclass", 4)
    used = lambda r: r.loc[r["condition"] == "label_fraction", ["label_fraction", "label_fraction_used"]].to_numpy()
    np.testing.assert_array_equal(used(rows_a), used(rows_b))
    expected = label_fraction_subsets(a.train_labels, (0.01,), 0, "multiclass")[0.01].size / a.train.shape[0]
    assert used(rows_a)[-1, 1] == expected


def test_val_fraction_policy_only_touches_label_fraction_rows(cell_for):
    cell = cell_for("multiclass", 4)
    matched = run(cell, "multiclass", 4)
    full = run(cell, "multiclass", 4, probe=ProbeConfig(c_grid=CONFIG.c_grid, max_iter=100, val_fraction_policy="full"))
    other = matched["condition"] != "label_fraction"
    pd.testing.assert_frame_equal(matched[other], full[other], check_exact=True)


def test_optional_conditions_and_no_calibrators(cell_for):
    cell = cell_for("binary", 2)
    cell.corrupted, cell.shift_test, cell.shift_labels = {}, None, None
    rows = run(cell, "binary", 2, label_fractions=(1.0,), probe=ProbeConfig(calibrators=()))
    assert len(rows) == 1 and rows["condition"].item() == "clean"


def test_calibration_rows_lower_ece_of_an_overconfident_probe(cell_for):
    # weak regularisation on few examples in high dimension: an over-confident probe
    cell = cell_for("binary", 2, dim=64)
    rows = run(cell, "binary", 2, label_fractions=(1.0,), probe=ProbeConfig(c_grid=(100.0,), max_iter=500))
    clean = rows[rows["condition"] == "clean"].set_index("calibration")
    assert clean.loc["temperature", "ece"] < clean.loc["none", "ece"]
    assert clean.loc["temperature", "auroc"] == pytest.approx(clean.loc["none", "auroc"], abs=1e-12)


def test_scale_of_embeddings_does_not_matter(cell_for):
    # standardisation makes the probe invariant to a global rescaling (up to solver tolerance)
    a = run(cell_for("multiclass", 3), "multiclass", 3)
    b = run(cell_for("multiclass", 3, scale=100.0), "multiclass", 3)
    np.testing.assert_allclose(a["auroc"], b["auroc"], atol=2e-3)


def _nan_train(cell):
    cell.train[5, 3] = np.nan


@pytest.mark.parametrize(
    "mutate, message",
    [
        (_nan_train, "train embeddings contains NaN"),
        (lambda c: setattr(c, "test_labels", c.test_labels[:-1]), "test labels has 199 rows"),
        (lambda c: setattr(c, "test_labels", np.zeros_like(c.test_labels)), "clean test: AUROC undefined"),
        (lambda c: (setattr(c, "train", c.train[:3]), setattr(c, "train_labels", c.train_labels[:3])),
         "fewer than the 4 classes"),
        (lambda c: c.corrupted.update({("noise", 6): c.test}), "severity must be one of"),
        (lambda c: c.corrupted.update({("noise", 1): np.vstack([c.test, c.test])}), "more than the 200 test labels"),
        (lambda c: c.corrupted.update({("noise", 1): c.test[:, :5]}), "dimension"),
        (lambda c: c.corrupted_images.update({("noise", 1): np.arange(149)}), r"must be 150 integers"),
        (lambda c: c.corrupted_images.update({("noise", 1): np.arange(150) + 60}), r"must lie in 0\.\.199"),
        (lambda c: c.corrupted_images.update({("noise", 1): np.zeros(150, dtype=int)}), "position is repeated"),
        (lambda c: c.corrupted_images.update({("fog", 1): np.arange(150)}), "no corrupted embeddings"),
        (lambda c: setattr(c, "shift_labels", None), "shift_test is given without shift_labels"),
        (lambda c: setattr(c, "val_labels", c.val_labels + 10), "validation labels must lie in 0..3"),
    ],
)
def test_bad_input_names_the_problem(cell_for, mutate, message):
    cell = cell_for("multiclass", 4)
    mutate(cell)
    with pytest.raises(EvaluationError, match=message):
        run(cell, "multiclass", 4)


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"meta": {"encoder": "e"}}, "meta lacks 'dataset'"),
        ({"meta": {**META, "arm": 3}}, "must be text"),
        ({"label_fractions": (1.0, 0.0)}, r"\(0, 1\]"),
        ({"ece_bins": 0}, "n_bins"),
        ({"probe": "default"}, "ProbeConfig"),
    ],
)
def test_bad_arguments(cell_for, overrides, message):
    with pytest.raises(EvaluationError, match=message):
        run(cell_for("multiclass", 4), "multiclass", 4, **overrides)


def test_class_missing_from_validation_or_training(cell_for):
    cell = cell_for("multiclass", 4)
    keep = cell.val_labels != 1
    cell.val, cell.val_labels = cell.val[keep], cell.val_labels[keep]
    rows = run(cell, "multiclass", 4)
    assert len(rows) == 22 and rows["auroc"].notna().all()
    cell = cell_for("multiclass", 4)
    keep = cell.train_labels != 2
    cell.train, cell.train_labels = cell.train[keep], cell.train_labels[keep]
    rows = run(cell, "multiclass", 4)
    assert len(rows) == 22
    # class 2 is never predicted: its one-vs-rest AUROC is 0.5 (constant score), nothing breaks
    assert (rows["auroc"] < 1).all()


def test_corruption_keys_in_sorted_order(cell_for):
    cell = cell_for("binary", 2)
    cell.corrupted = {("noise", np.int64(2)): cell.test, ("blur", 5): cell.test, ("noise", 1): cell.test}
    rows = run(cell, "binary", 2, label_fractions=(1.0,))
    corr = rows[rows["condition"] == "corruption"]
    assert list(zip(corr["corruption"], corr["severity"])) == [("blur", 5), ("noise", 1), ("noise", 2)]
    # identical embeddings give the clean metrics
    clean = rows[(rows["condition"] == "clean") & (rows["calibration"] == "none")]
    assert (corr["auroc"] == clean["auroc"].item()).all()
    cell.corrupted = {"noise": cell.test}
    with pytest.raises(EvaluationError, match=r"keyed by \(corruption, severity\)"):
        run(cell, "binary", 2)


def test_probe_config_validation():
    with pytest.raises(EvaluationError, match="c_grid"):
        ProbeConfig(c_grid=(0.1, 0.0))
    with pytest.raises(EvaluationError, match="max_iter"):
        ProbeConfig(max_iter=0)
    with pytest.raises(EvaluationError, match="tol"):
        ProbeConfig(tol=-1.0)
    with pytest.raises(EvaluationError, match="val_fraction_policy"):
        ProbeConfig(val_fraction_policy="half")
    with pytest.raises(EvaluationError, match=r"ProbeConfig.calibrators\[0\] must be one of temperature, vector, isotonic, got 'beta'"):
        ProbeConfig(calibrators=("beta",))
    assert ProbeConfig(c_grid=[1, 2]).c_grid == (1.0, 2.0)


def test_probe_config_written_form_is_the_profile_probe_section():
    # The form that enters a run's config hash: the profile's key names, lists for tuples.
    written = ProbeConfig(c_grid=(0.1, 1), max_iter=50, tol=1e-4, calibrators=("temperature",)).written()
    assert written == {"C": [0.1, 1.0], "max_iter": 50, "tol": 1e-4, "val_fraction_policy": "matched",
                       "calibrators": ["temperature"], "c_rule": ProbeConfig().c_rule}


def test_single_outcome_label_is_skipped_and_counted(cell_for):
    cell = cell_for("multilabel", 3)
    cell.test_labels = cell.test_labels.copy()
    cell.test_labels[:, 1] = 0  # label 1 has no positive in the test split
    rows = run(cell, "multilabel", 3, label_fractions=(1.0,))
    site_a = rows[rows["condition"].isin(["clean", "corruption"])]
    assert (site_a["n_skipped"] == 1).all()
    assert rows.loc[rows["condition"] == "shift", "n_skipped"].eq(0).all()


@pytest.mark.parametrize("task, k", [("multiclass", 4), ("multilabel", 3)])
def test_corruption_rows_carry_the_clean_auroc_of_the_same_images(cell_for, task, k):
    from crsbench_lib.metrics.auroc import macro_auroc
    from crsbench_lib.evaluation.probe import fit_probe

    cell = cell_for(task, k)
    rows = run(cell, task, k)
    corrupted = rows[rows["condition"] == "corruption"]
    other = rows[rows["condition"] != "corruption"]
    assert other["auroc_reference"].isna().all()
    # Corrupted cells use the first 150 of 200 test images: the reference is the
    # clean probe's AUROC on exactly those 150, not on the whole test split.
    probe = fit_probe(cell.train, cell.train_labels, cell.val, cell.val_labels, task, k,
                      c_grid=CONFIG.c_grid, max_iter=CONFIG.max_iter, tol=CONFIG.tol, seed=0)
    expected = macro_auroc(cell.test_labels[:150], probe.predict_proba(cell.test[:150]), task).value
    assert corrupted["auroc_reference"].eq(expected).all()
    clean = rows[(rows["condition"] == "clean") & (rows["calibration"] == "none")]["auroc"].item()
    assert expected != clean


def run_predictions(cell: CellEmbeddings, task: str, k: int, **overrides):
    kwargs = {"seed": 0, "label_fractions": FRACTIONS, "ece_bins": 15, "probe": CONFIG, "meta": META}
    kwargs.update(overrides)
    return evaluate_cell_predictions(cell, task, k, **kwargs)


@pytest.mark.parametrize("task, k", [("multiclass", 4), ("binary", 2), ("multilabel", 3)])
def test_rows_are_the_metrics_of_the_stored_predictions(cell_for, task, k):
    from crsbench_lib.metrics.metric_set import evaluate_predictions

    cell = cell_for(task, k)
    predictions = run_predictions(cell, task, k)
    rows = run(cell, task, k)
    assert len(predictions) == len(rows)
    for p, (_, row) in zip(predictions, rows.iterrows()):
        assert p.probabilities.dtype == np.float32
        labels, probabilities = p.metric_input()
        metrics = evaluate_predictions(labels, probabilities, task, 15)
        for name in ("auroc", "ece", "ece_floor", "brier", "nll", "accuracy"):
            assert abs(getattr(metrics, name) - row[name]) <= 1e-12
        assert row["ece_excess"] == pytest.approx(row["ece"] - row["ece_floor"], abs=1e-15)
    pd.testing.assert_frame_equal(rows_from_predictions(predictions), rows, check_exact=True)


def test_corruption_rows_pair_auroc_and_ece_with_the_same_clean_images(cell_for):
    from crsbench_lib.metrics.metric_set import evaluate_predictions

    cell = cell_for("multiclass", 4)
    predictions = run_predictions(cell, "multiclass", 4)
    rows = rows_from_predictions(predictions)
    clean = predictions[0]
    labels, probabilities = clean.metric_input()
    first_150 = evaluate_predictions(labels[:150], probabilities[:150], "multiclass", 15)
    corrupted = rows[rows["condition"] == "corruption"]
    assert (corrupted["auroc_reference"] == first_150.auroc).all()
    assert (corrupted["ece_reference"] == first_150.ece).all()
    assert rows.loc[rows["condition"] != "corruption", "ece_reference"].isna().all()
    # the stable image index of a corrupted image is that of the clean image it was made from
    corrupted_predictions = [p for p in predictions if p.meta["condition"] == "corruption"]
    assert all(np.array_equal(p.image, np.arange(150)) for p in corrupted_predictions)


def test_a_corrupted_block_is_labelled_and_paired_by_its_own_images(cell_for):
    from crsbench_lib.metrics.metric_set import evaluate_predictions

    cell = cell_for("multiclass", 4)
    block = (120 + np.arange(150)) % 200  # images 120..199, then 0..69
    cell.corrupted = {("noise", s): cell.test[block] + 0.1 * s for s in (1, 2)}
    cell.corrupted_images = {key: block for key in cell.corrupted}
    predictions = run_predictions(cell, "multiclass", 4)
    rows = rows_from_predictions(predictions)
    corrupted = [p for p in predictions if p.meta["condition"] == "corruption"]
    assert all(np.array_equal(p.image, block) and np.array_equal(p.labels, cell.test_labels[block])
               for p in corrupted)
    labels, probabilities = predictions[0].metric_input()
    paired = evaluate_predictions(labels[block], probabilities[block], "multiclass", 15)
    assert (rows.loc[rows["condition"] == "corruption", "auroc_reference"] == paired.auroc).all()


def test_calibrators_are_fitted_on_the_calibration_split(cell_for):
    cell = cell_for("binary", 2, dim=64)
    config = ProbeConfig(c_grid=(100.0,), max_iter=500)
    rows = run(cell, "binary", 2, label_fractions=(1.0,), probe=config)
    other = cell_for("binary", 2, dim=64)
    rng = np.random.default_rng(5)
    other.calibration = other.calibration[rng.permutation(len(other.calibration))]  # labels no longer match
    shuffled = run(other, "binary", 2, label_fractions=(1.0,), probe=config)
    calibrated = rows["calibration"] != "none"
    assert not np.allclose(rows.loc[calibrated, "ece"], shuffled.loc[calibrated, "ece"])
    uncalibrated = ~calibrated
    pd.testing.assert_frame_equal(rows[uncalibrated], shuffled[uncalibrated], check_exact=True)
    assert (rows["calibrator_split"] == "calibration").all() and (rows["c_rule"] == "auroc").all()


def test_calibrators_need_a_calibration_split(cell_for):
    cell = cell_for("binary", 2)
    cell.calibration = cell.calibration_labels = None
    with pytest.raises(EvaluationError, match="calibration split"):
        run(cell, "binary", 2)


def test_c_rule_is_recorded_and_changes_the_choice(cell_for):
    cell = cell_for("multiclass", 4, dim=64)
    grid = (1e-4, 1e-2, 1.0, 100.0)
    cell.corrupted, cell.shift_test, cell.shift_labels = {}, None, None
    by_auroc = run(cell, "multiclass", 4, label_fractions=(1.0,), probe=ProbeConfig(c_grid=grid, calibrators=()))
    by_loss = run(cell, "multiclass", 4, label_fractions=(1.0,),
                  probe=ProbeConfig(c_grid=grid, calibrators=(), c_rule="log_loss"))
    assert by_auroc["c_rule"].item() == "auroc" and by_loss["c_rule"].item() == "log_loss"
    assert by_auroc["probe_c"].item() in grid and by_loss["probe_c"].item() in grid
    with pytest.raises(EvaluationError, match="c_rule"):
        ProbeConfig(c_rule="accuracy")


def test_fraction_features_replace_the_shared_embeddings_at_their_fraction(cell_for):
    cell = cell_for("multiclass", 4)
    subsets = label_fraction_subsets(cell.train_labels, (0.25,), 0, "multiclass")[0.25]
    from crsbench_lib.evaluation.fractions import validation_subsets

    vsub = validation_subsets(cell.val_labels, (0.25,), 0, "multiclass")[0.25]
    rng = np.random.default_rng(3)
    noise = lambda a: a + rng.normal(0, 2.0, a.shape).astype(np.float32)
    cell.fraction_features = {0.25: (noise(cell.train[subsets]), noise(cell.val[vsub]), noise(cell.test))}
    lora = {**META, "arm": "lora"}
    base = run(cell.__class__(**{**cell.__dict__, "fraction_features": {}}), "multiclass", 4, meta=lora)
    adapted = run(cell, "multiclass", 4, meta=lora)
    at = lambda r, f: r[(r["condition"] == "label_fraction") & np.isclose(r["label_fraction"], f)]
    assert at(adapted, 0.25)["auroc"].item() != at(base, 0.25)["auroc"].item()
    pd.testing.assert_frame_equal(at(adapted, 0.1), at(base, 0.1), check_exact=True)
    # The protocol column: the fraction's own adapter, else the shared embeddings' kind.
    assert at(adapted, 0.25)["features"].item() == "adapted" and at(adapted, 0.1)["features"].item() == "frozen"
    cell.fraction_feature_kinds = {0.25: "frozen"}  # the arm kept the frozen encoder at this fraction
    assert at(run(cell, "multiclass", 4, meta=lora), 0.25)["features"].item() == "frozen"
    cell.features, cell.fraction_feature_kinds = "adapted", {}
    assert set(run(cell, "multiclass", 4, meta=lora)["features"]) == {"adapted"}
    # An adapted encoder in the frozen arm is a contradiction, and an unknown kind is refused.
    with pytest.raises(SchemaError, match="frozen-arm rows cannot have adapted features, in row"):
        run(cell, "multiclass", 4)
    cell.features = "tuned"
    with pytest.raises(EvaluationError, match="features must be one of frozen, adapted, got 'tuned'"):
        run(cell, "multiclass", 4, meta=lora)
    cell.features = "frozen"
    cell.fraction_features = {0.25: (cell.train, cell.val[vsub], cell.test)}  # wrong length: not the subset
    with pytest.raises(EvaluationError, match="fraction's"):
        run(cell, "multiclass", 4, meta=lora)


def test_calibrators_fitted_at_site_a_are_applied_at_site_b(cell_for):
    rows = run(cell_for("binary", 2), "binary", 2)
    shift = rows[rows["condition"] == "shift"].set_index("calibration")
    assert set(shift.index) == {"none", "temperature", "vector", "isotonic"}
    # A binary temperature keeps the order of the scores: AUROC is unchanged, ECE is not.
    assert shift.loc["temperature", "auroc"] == pytest.approx(shift.loc["none", "auroc"], abs=1e-9)
    assert shift.loc["temperature", "ece"] != shift.loc["none", "ece"]


def test_cue_removed_rows_score_the_clean_probe_on_the_cue_free_test(cell_for):
    import dataclasses

    cell = cell_for("multiclass", 4)
    same = run(dataclasses.replace(cell, cue_removed_test=cell.test.copy()), "multiclass", 4)
    removed = same[same["condition"] == "cue_removed"]
    clean = same[(same["condition"] == "clean") & (same["calibration"] == "none")]
    assert len(removed) == 1
    assert removed["auroc"].item() == clean["auroc"].item()  # the same images give the same row
    other = run(dataclasses.replace(cell, cue_removed_test=cell.test[::-1].copy()), "multiclass", 4)
    assert other.loc[other["condition"] == "cue_removed", "auroc"].item() < clean["auroc"].item()
    with pytest.raises(EvaluationError, match="cue-removed test embeddings must match"):
        run(dataclasses.replace(cell, cue_removed_test=cell.test[:10]), "multiclass", 4)
