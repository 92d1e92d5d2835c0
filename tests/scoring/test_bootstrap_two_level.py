"""Two-level paired bootstrap from per-image predictions (method section 9, amendment 4)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from crsbench_lib.errors import SchemaError
from crsbench_lib.evaluation.cell import rows_from_predictions
from crsbench_lib.evaluation.metrics import binary_auroc, expected_calibration_error
from crsbench_lib.results.predictions import ConditionPredictions, dataset_arrays
from crsbench_lib.scoring import bootstrap
from crsbench_lib.scoring.axes import AXES, encoder_profiles, raw_axes
from crsbench_lib.scoring.bootstrap import _draw_images, _weighted_auroc, _weighted_ece, two_level_bootstrap
from crsbench_lib.standard import ReferenceStandard

ENCODERS = ("alpha", "beta", "gamma", "delta")
FRACTIONS = (1.0, 0.5, 0.1)
ANCHORS = {"D": (0.5, 1.0), "C": (0.3, 0.0), "L": (0.5, 1.0), "R": (0.3, 0.0)}
WEIGHTS = {"dominance": 0.3, "balance": 0.4, "floor": 0.3}


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


def synthetic_predictions(seed=0, n=80, n_corrupt=50, per_family=False):
    rng = np.random.default_rng(seed)
    out = []
    for dataset, task, k in (("derm", "multiclass", 3), ("cxr", "multilabel", 2)):
        labels = rng.integers(0, k, n) if task == "multiclass" else (rng.random((n, k)) < 0.35).astype(np.uint8)
        shift_labels = (rng.random((n, k)) < 0.35).astype(np.uint8) if task == "multilabel" else None
        for e, encoder in enumerate(ENCODERS):
            strength = 0.8 + 0.6 * e
            for s in (0, 1, 2):
                image = np.arange(n)
                build = lambda meta, idx, y, p: ConditionPredictions.build(meta, idx, y, p, task)  # noqa: E731
                out.append(build(_meta(encoder, dataset, task, s, "clean"), image, labels,
                                 _proba(rng, labels, task, k, strength)))
                for f in FRACTIONS[1:]:
                    out.append(build(_meta(encoder, dataset, task, s, "label_fraction", label_fraction=f,
                                           label_fraction_used=f), image, labels,
                                     _proba(rng, labels, task, k, strength * (0.5 + f))))
                for position, family in enumerate(("noise", "blur")):
                    # per-family layout: each family's block of images, the second one wrapping around
                    block = (position * (n - n_corrupt // 2) + np.arange(n_corrupt)) % n if per_family \
                        else np.arange(n_corrupt)
                    for severity in (1, 3):
                        out.append(build(_meta(encoder, dataset, task, s, "corruption", corruption=family,
                                               severity=severity), image[block], labels[block],
                                         _proba(rng, labels[block], task, k, strength / severity)))
                if shift_labels is not None:
                    out.append(build(_meta(encoder, dataset, task, s, "shift"), image, shift_labels,
                                     _proba(rng, shift_labels, task, k, strength * 0.6)))
    return out


# ---------------------------------------------------------------- slow reference of the AUROC kernel
# The first implementation, kept to prove that the fast kernel computes the same
# numbers: cumulative negative weights over the score order of every draw at once,
# (B, items, n) in memory, read at each positive's tie-group bounds.


@dataclass(frozen=True)
class _AurocPlan:
    """Sorted positions of one class's outcomes for many items (score vectors) on one image set.

    The outcomes (which images are positive) are the same for every item; only
    the order of the scores differs. ``lo``/``hi`` index the cumulative negative
    weights (with a leading zero row) strictly below / at most each positive's
    score, so ties count one half.
    """

    neg_order: np.ndarray  # (items, n_neg) image positions, sorted by score
    pos_order: np.ndarray  # (items, n_pos)
    lo: np.ndarray  # (items, n_pos)
    hi: np.ndarray  # (items, n_pos)
    ties: bool  # whether any positive ties a negative (else lo == hi)


def _auroc_plan(scores: np.ndarray, positive: np.ndarray) -> _AurocPlan:
    """Plan of the weighted AUROC kernel for ``scores`` (items, n) against ``positive`` (n,).

    One sort per item (vectorised over items); ties are found in the sorted
    order, so a positive tied with negatives gets ``lo < hi``.
    """
    items, n = scores.shape
    pos = np.flatnonzero(positive)
    order = np.argsort(scores, axis=1, kind="stable")
    ordered = np.take_along_axis(scores, order, axis=1)
    is_neg = ~positive[order]
    negatives_upto = np.cumsum(is_neg, axis=1)  # negatives at or before each sorted position
    position = np.broadcast_to(np.arange(n), (items, n))
    new_group = np.ones((items, n), dtype=bool)
    new_group[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    start = np.maximum.accumulate(np.where(new_group, position, 0), axis=1)
    last = np.ones((items, n), dtype=bool)
    last[:, :-1] = new_group[:, 1:]
    end = np.minimum.accumulate(np.where(last, position, n - 1)[:, ::-1], axis=1)[:, ::-1]
    rows = np.arange(items)[:, None]
    lo_sorted = negatives_upto[rows, start] - is_neg[rows, start]  # negatives strictly below the tie group
    hi_sorted = negatives_upto[rows, end]  # negatives up to the end of the tie group
    lo = np.empty((items, n), dtype=np.int64)
    hi = np.empty((items, n), dtype=np.int64)
    np.put_along_axis(lo, order, lo_sorted, axis=1)
    np.put_along_axis(hi, order, hi_sorted, axis=1)
    neg_order = order[is_neg].reshape(items, n - pos.size)
    lo, hi = lo[:, pos], hi[:, pos]
    return _AurocPlan(neg_order, np.broadcast_to(pos, (items, pos.size)), lo, hi, bool((lo != hi).any()))


def _reference_kernel(plan: _AurocPlan, weights: np.ndarray) -> np.ndarray:
    """AUROC of every item under every draw's image multiplicities.

    ``AUROC = sum_{i pos} w_i (W_neg(< s_i) + W_neg(= s_i) / 2) / (W_pos W_neg)``,
    the Mann-Whitney statistic of the resampled set (each image counted with its
    multiplicity), in exact integer arithmetic (doubled to keep the halves).

    Parameters
    ----------
    plan : _AurocPlan
    weights : numpy.ndarray
        Integer ``(B, n)``: multiplicity of each image (columns) in each draw (rows).

    Returns
    -------
    numpy.ndarray
        ``(items, B)``; NaN where a draw has no positive or no negative.
    """
    items, n_neg = plan.neg_order.shape
    n_pos = plan.pos_order.shape[1]
    n_draws = weights.shape[0]
    if n_pos == 0 or n_neg == 0:
        return np.full((items, n_draws), np.nan)
    # int32 is exact: a doubled numerator is at most 2 W_pos W_neg <= n^2 / 2. The
    # cumulative sum runs along the last (contiguous) axis.
    cumulative = np.zeros((n_draws, items, n_neg + 1), dtype=np.int32)
    np.cumsum(weights[:, plan.neg_order], axis=2, dtype=np.int32, out=cumulative[:, :, 1:])
    rows = np.arange(items)[:, None]
    below2 = cumulative[:, rows, plan.lo]  # (B, items, n_pos)
    if plan.ties:
        below2 += cumulative[:, rows, plan.hi]
    else:  # no positive ties a negative: both halves are the count below
        below2 *= 2
    w_pos = weights[:, plan.pos_order[0]]  # (B, n_pos): the positives are the same images for every item
    below2 *= w_pos[:, None, :]
    numerator2 = below2.sum(axis=2, dtype=np.int32).T.astype(np.int64)  # (items, B)
    total_pos = w_pos.sum(axis=1, dtype=np.int64)
    total_neg = cumulative[:, :, -1].astype(np.int64).T
    denominator = 2 * total_pos[None, :] * total_neg
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator2 / np.maximum(denominator, 1), np.nan)


def reference_weighted_auroc(scores: np.ndarray, positive: np.ndarray, weights_t: np.ndarray) -> np.ndarray:
    return _reference_kernel(_auroc_plan(scores, positive), weights_t.T)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_auroc_kernel_equals_the_reference(seed):
    rng = np.random.default_rng(seed)
    n = 90
    scores = np.vstack([np.round(rng.random((3, n)), 1), rng.random((2, n))])  # heavy ties and none
    positive = rng.random(n) < 0.2
    weights = _draw_images(rng, n, 25)
    weights[0] = 0
    weights[0, np.flatnonzero(positive)[:2]] = 1  # a draw without negatives: NaN
    weights_t = np.ascontiguousarray(weights.T, dtype=np.int32)
    np.testing.assert_array_equal(_weighted_auroc(scores, positive, weights_t),
                                  reference_weighted_auroc(scores, positive, weights_t))


@pytest.fixture(scope="module")
def predictions():
    return synthetic_predictions()


@pytest.fixture(scope="module")
def table(predictions):
    return rows_from_predictions(predictions)


def standard(panel: dict[str, np.ndarray]) -> ReferenceStandard:
    return ReferenceStandard("test-v1", ANCHORS, WEIGHTS, FRACTIONS, 10, tuple(panel), np.array(list(panel.values())))


def normalised(profile: np.ndarray) -> np.ndarray:
    worst = np.array([ANCHORS[a][0] for a in AXES])
    best = np.array([ANCHORS[a][1] for a in AXES])
    return np.clip((profile - worst) / (best - worst), 0, 1)


@pytest.fixture(scope="module")
def point_profiles(table):
    return encoder_profiles(raw_axes(table, label_fractions=FRACTIONS))


def test_weighted_kernels_equal_the_metrics_on_resampled_images():
    rng = np.random.default_rng(3)
    n = 120
    scores = np.round(rng.random((4, n)), 2)  # ties
    positive = rng.random(n) < 0.3
    weights = _draw_images(rng, n, 6)
    got = _weighted_auroc(scores, positive, weights.T.astype(np.int32))
    for b in range(6):
        idx = np.repeat(np.arange(n), weights[b])
        for t in range(4):
            assert got[t, b] == pytest.approx(binary_auroc(positive[idx], scores[t, idx]), abs=1e-12)
    labels = rng.integers(0, 3, n)
    proba = rng.dirichlet(np.ones(3), size=(2, n))
    ece = _weighted_ece(proba.astype(np.float32), labels, "multiclass", weights, 10)
    for b in range(6):
        idx = np.repeat(np.arange(n), weights[b])
        for t in range(2):
            expected = expected_calibration_error(labels[idx], proba[t, idx].astype(np.float32).astype(float),
                                                  "multiclass", 10)
            assert ece[t, b] == pytest.approx(expected, abs=1e-12)


def test_point_profiles_are_the_table_profiles(predictions, point_profiles):
    panel = {e: normalised(point_profiles.loc[e].to_numpy()) for e in ENCODERS}
    result = two_level_bootstrap(dataset_arrays(predictions), standard(panel), n_draws=20, random_state=1)
    np.testing.assert_allclose(result.point_profiles.loc[list(ENCODERS)].to_numpy(),
                               point_profiles.loc[list(ENCODERS)].to_numpy(), atol=1e-12)
    assert result.crs_draws.shape == (20, 4) and result.auroc_draws.shape == (20, 4)
    assert result.summary["p_rank1"].sum() == pytest.approx(1.0)
    assert result.summary["p_top3"].sum() == pytest.approx(3.0)
    assert result.n_distinct == 20 and 1 <= result.n_distinct_seed_draws <= 20
    assert len(result.pairwise) == 6
    again = two_level_bootstrap(dataset_arrays(predictions), standard(panel), n_draws=20, random_state=1)
    np.testing.assert_array_equal(again.crs_draws, result.crs_draws)


def test_per_family_image_blocks_pair_each_condition_with_its_own_clean_images():
    # Each family corrupts its own block (one wraps around the split): the bootstrap's
    # identity draw must still give the table's robustness axis, whose rows pair every
    # condition with the clean AUROC of its own images (auroc_reference).
    predictions = synthetic_predictions(seed=4, per_family=True)
    arrays = dataset_arrays(predictions)
    assert arrays["derm"].corrupted_images.shape == (4, 50)
    assert not np.array_equal(arrays["derm"].corrupted_images[0], arrays["derm"].corrupted_images[2])
    profiles = encoder_profiles(raw_axes(rows_from_predictions(predictions), label_fractions=FRACTIONS))
    panel = {e: normalised(profiles.loc[e].to_numpy()) for e in ENCODERS}
    result = two_level_bootstrap(arrays, standard(panel), n_draws=5, random_state=0)
    np.testing.assert_allclose(result.point_profiles.loc[list(ENCODERS)].to_numpy(),
                               profiles.loc[list(ENCODERS)].to_numpy(), atol=1e-12)
    shared = encoder_profiles(raw_axes(rows_from_predictions(synthetic_predictions(seed=4)),
                                       label_fractions=FRACTIONS))
    assert not np.allclose(shared["R"].to_numpy(), profiles["R"].to_numpy())  # the blocks did change the pairing


def test_no_draw_compares_an_encoder_with_itself(predictions, point_profiles):
    # Every panel entry sits just below its encoder's point profile, and a perfect
    # member is unbeatable. Scored against its own entry, an encoder would dominate
    # it in most draws; against the others only, it dominates only entries it beats.
    own = {e: np.clip(normalised(point_profiles.loc[e].to_numpy()) - 0.05, 0, 1) for e in ENCODERS}
    with_perfect = {**own, "perfect": np.ones(4)}
    arrays = dataset_arrays(predictions)
    result = two_level_bootstrap(arrays, standard(with_perfect), n_draws=40, random_state=2)
    assert result.encoders == tuple(sorted(ENCODERS))
    for name in ENCODERS:
        e = result.encoders.index(name)
        others = {k: v for k, v in with_perfect.items() if k != name}
        alone = two_level_bootstrap(arrays, standard(others), n_draws=40, random_state=2)
        np.testing.assert_array_equal(result.crs_draws[:, e], alone.crs_draws[:, e])
    # and a self-comparison would have shown: encoders dominate their own entries in many draws
    mine = standard(with_perfect)
    shares = []
    for name in ENCODERS:
        s = np.clip((result.profile_draws[:, result.encoders.index(name)] - mine.worst) / (mine.best - mine.worst), 0, 1)
        shares.append(((s >= own[name]).all(axis=1) & (s > own[name]).any(axis=1)).mean())
    assert max(shares) > 0.1


def test_unpaired_predictions_are_rejected(predictions):
    from crsbench_lib.errors import SchemaError

    broken = [p for p in predictions if not (p.meta["encoder"] == "beta" and p.meta["condition"] == "shift"
                                             and p.meta["seed"] == 1)]
    with pytest.raises(SchemaError, match="not paired"):
        dataset_arrays(broken)


def test_threads_do_not_change_the_draws(predictions, point_profiles):
    panel = standard({e: normalised(point_profiles.loc[e].to_numpy()) for e in ENCODERS})
    arrays = dataset_arrays(predictions)
    one = two_level_bootstrap(arrays, panel, n_draws=15, random_state=4, n_jobs=1)
    two = two_level_bootstrap(arrays, panel, n_draws=15, random_state=4, n_jobs=2)
    np.testing.assert_array_equal(one.crs_draws, two.crs_draws)
    np.testing.assert_array_equal(one.profile_draws, two.profile_draws)


def test_bootstrap_equals_the_reference_kernel_path(predictions, point_profiles, monkeypatch):
    panel = standard({e: normalised(point_profiles.loc[e].to_numpy()) for e in ENCODERS})
    arrays = dataset_arrays(predictions)
    fast = two_level_bootstrap(arrays, panel, n_draws=30, random_state=5)
    monkeypatch.setattr(bootstrap, "_weighted_auroc", reference_weighted_auroc)
    slow = two_level_bootstrap(arrays, panel, n_draws=30, random_state=5)
    np.testing.assert_allclose(fast.profile_draws, slow.profile_draws, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.crs_draws, slow.crs_draws, rtol=0, atol=1e-12)
    pd.testing.assert_frame_equal(fast.summary, slow.summary, check_exact=False, rtol=0, atol=1e-12)


@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel"])
def test_class_auroc_is_the_per_class_auroc_of_the_metric(task):
    from crsbench_lib.evaluation.metrics import macro_auroc
    from crsbench_lib.scoring.bootstrap import class_auroc

    rng = np.random.default_rng(3)
    n, k = 50, 3
    labels = {"binary": rng.integers(0, 2, n), "multiclass": rng.integers(0, k, n),
              "multilabel": (rng.random((n, k)) < 0.4).astype(np.uint8)}[task]
    as_proba = "multiclass" if task == "binary" else task  # binary: two-column probabilities
    items = [_proba(rng, labels, as_proba, 2 if task == "binary" else k, strength) for strength in (0.5, 2.0)]
    items[0][:10] = items[0][0]  # ties count one half
    stored = np.stack([p[:, 1:] if task == "binary" else p for p in items])
    got = class_auroc(stored, labels, task)
    for item, p in enumerate(items):
        expected = macro_auroc(labels, p[:, 1] if task == "binary" else p, task).per_class
        np.testing.assert_allclose(got[item], expected, rtol=0, atol=1e-12)
    with pytest.raises(SchemaError, match="expected probabilities"):
        class_auroc(stored[0], labels, task)
