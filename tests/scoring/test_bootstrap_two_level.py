"""Two-level paired bootstrap from per-image predictions (method section 9, amendment 4)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.errors import ConfigError, SchemaError
from crsbench_lib.evaluation.cell import rows_from_predictions
from crsbench_lib.results.predictions import ConditionPredictions, dataset_arrays
from crsbench_lib.metrics import auroc
from crsbench_lib.scoring.axes import AXES, encoder_profiles, raw_axes
from crsbench_lib.scoring.two_level_bootstrap import bias_decomposition, resampling_shift, two_level_bootstrap
from crsbench_lib.standard import ReferenceStandard
from tests.metrics.test_auroc import _proba, reference_weighted_auroc

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
    from crsbench_lib.errors import ConfigError, SchemaError

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
    monkeypatch.setattr(auroc, "weighted_auroc", reference_weighted_auroc)
    slow = two_level_bootstrap(arrays, panel, n_draws=30, random_state=5)
    np.testing.assert_allclose(fast.profile_draws, slow.profile_draws, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.crs_draws, slow.crs_draws, rtol=0, atol=1e-12)
    pd.testing.assert_frame_equal(fast.summary, slow.summary, check_exact=False, rtol=0, atol=1e-12)


def _point_profiles(synthetic_table):
    return encoder_profiles(raw_axes(synthetic_table))[list(AXES)]


def test_bias_decomposition_of_a_pure_shift_is_all_from_the_axes(synthetic_table, frozen_standard):
    point = _point_profiles(synthetic_table)
    draws = np.repeat(point.to_numpy()[None], 6, axis=0)
    draws[:, :, AXES.index("C")] += 0.02  # every draw's ECE worse by 0.02, no noise
    out = bias_decomposition(draws, point, frozen_standard)
    np.testing.assert_allclose(out["from_nonsmooth"], 0.0, atol=1e-12)
    np.testing.assert_allclose(out["from_axes"], out["bias"], atol=1e-12)
    np.testing.assert_allclose(out["C"], 0.02, atol=1e-12)
    np.testing.assert_allclose(out[["dominance", "balance", "floor"]].sum(axis=1), out["bias"], atol=1e-12)
    assert (out["bias"] <= 1e-12).all() and (out["bias"] < 0).any()  # a worse ECE never raises the CRS


def test_bias_decomposition_of_symmetric_noise_is_all_non_smooth(synthetic_table, frozen_standard):
    point = _point_profiles(synthetic_table)
    noise = np.zeros((2, *point.shape))
    noise[0, :, AXES.index("D")], noise[1, :, AXES.index("D")] = 0.03, -0.03  # each encoder's D +-0.03
    out = bias_decomposition(point.to_numpy()[None] + noise, point, frozen_standard)
    np.testing.assert_allclose(out["D"], 0.0, atol=1e-12)
    np.testing.assert_allclose(out["from_axes"], 0.0, atol=1e-12)
    np.testing.assert_allclose(out["from_nonsmooth"], out["bias"], atol=1e-12)
    # Hand-computed for every encoder: the draws' mean CRS less the point, scored without the own entry.
    from crsbench_lib.scoring.bootstrap import _leave_self_out_crs

    names = list(point.index)
    crs = _leave_self_out_crs(point.to_numpy()[None] + noise, names, frozen_standard)
    at_point = _leave_self_out_crs(point.to_numpy()[None], names, frozen_standard)[0]
    np.testing.assert_allclose(out["bias"], crs.mean(axis=0) - at_point, atol=1e-12)
    with pytest.raises(ConfigError, match="expected profile draws"):
        bias_decomposition(noise[:, :2], point, frozen_standard)


def test_recentred_draws_are_scored_on_profiles_centred_on_the_point(predictions, point_profiles):
    # Method amendment 15: the axes' resampling bias (the second dose) is removed
    # before scoring; recentre=False scores the draws as they fell (v2).
    from crsbench_lib.scoring.bootstrap import _leave_self_out_crs

    panel = standard({e: normalised(point_profiles.loc[e].to_numpy()) for e in ENCODERS})
    arrays = dataset_arrays(predictions)
    centred = two_level_bootstrap(arrays, panel, n_draws=40, random_state=6)
    drawn = two_level_bootstrap(arrays, panel, n_draws=40, random_state=6, recentre=False)
    names = list(centred.encoders)
    shift = centred.profile_draws.mean(axis=0) - centred.point_profiles.loc[names].to_numpy()
    np.testing.assert_allclose(centred.axis_shift.loc[names].to_numpy(), shift, atol=1e-15)
    assert centred.axis_shift.loc[:, "C"].abs().max() > 0  # binned ECE does move under resampling
    np.testing.assert_array_equal(centred.crs_draws, _leave_self_out_crs(centred.profile_draws - shift, names, panel))
    np.testing.assert_array_equal(drawn.crs_draws, _leave_self_out_crs(drawn.profile_draws, names, panel))
    np.testing.assert_array_equal(centred.profile_draws, drawn.profile_draws)
    assert centred.recentred and not drawn.recentred
    assert "in_tier" in centred.summary.columns and "separated" in centred.pairwise.columns


def test_chance_scales_give_the_table_profiles_on_the_same_scales(predictions, table):
    from crsbench_lib.scoring.axes import standard_axes
    from crsbench_lib.standard import AxisScales

    scales = AxisScales("chance", "chance", 0.05)
    anchors = {**ANCHORS, "L": (0.0, 1.0), "R": (1.0, 0.0)}
    plain = standard({e: np.full(4, 0.5) for e in ENCODERS})
    chance = ReferenceStandard("chance-v1", anchors, WEIGHTS, FRACTIONS, 10, plain.panel_names, plain.panel_profiles,
                               axis_scales=scales)
    expected = encoder_profiles(standard_axes(table, chance))
    result = two_level_bootstrap(dataset_arrays(predictions), chance, n_draws=10, random_state=0)
    np.testing.assert_allclose(result.point_profiles.loc[list(ENCODERS)].to_numpy(),
                               expected.loc[list(ENCODERS)].to_numpy(), atol=1e-12)
    ratio = encoder_profiles(raw_axes(table, label_fractions=FRACTIONS))
    assert not np.allclose(expected["L"], ratio["L"])


def test_the_debiased_calibration_axis_is_the_tables_on_both_routes(predictions, table):
    # The results table's ece_debiased (point route) and the weighted kernel (bootstrap route) agree.
    from dataclasses import replace

    from crsbench_lib.scoring.axes import standard_axes

    plain = standard({e: np.full(4, 0.5) for e in ENCODERS})
    debiased = replace(plain, version="debiased-v1", ece_estimator="debiased")
    expected = encoder_profiles(standard_axes(table, debiased))
    result = two_level_bootstrap(dataset_arrays(predictions), debiased, n_draws=10, random_state=0)
    np.testing.assert_allclose(result.point_profiles.loc[list(ENCODERS)].to_numpy(),
                               expected.loc[list(ENCODERS)].to_numpy(), atol=1e-12)
    plugin = encoder_profiles(standard_axes(table, plain))
    assert (expected["C"] < plugin["C"]).all()
    pd.testing.assert_frame_equal(expected.drop(columns="C"), plugin.drop(columns="C"))


def test_a_declared_robustness_composite_is_the_tables_on_both_routes(predictions, table):
    # The results table's pieces (point route) and the weighted kernels (bootstrap route) combine alike.
    from dataclasses import replace

    from crsbench_lib.scoring.axes import standard_axes
    from crsbench_lib.standard import RobustnessComposite

    plain = standard({e: np.full(4, 0.5) for e in ENCODERS})
    declared = replace(plain, version="composite-v1", robustness=RobustnessComposite((0.5, 0.0, 0.5)))
    expected = encoder_profiles(standard_axes(table, declared))
    result = two_level_bootstrap(dataset_arrays(predictions), declared, n_draws=10, random_state=0)
    np.testing.assert_allclose(result.point_profiles.loc[list(ENCODERS)].to_numpy(),
                               expected.loc[list(ENCODERS)].to_numpy(), atol=1e-12)
    study = encoder_profiles(standard_axes(table, plain))
    assert not np.allclose(expected["R"], study["R"])  # the worst family no longer counts twice
    pd.testing.assert_frame_equal(expected.drop(columns="R"), study.drop(columns="R"))


def _binormal_predictions(rng, n, separation):
    """One dataset, two fixed scorers (identical over seeds), binary labels; population AUROC Phi(sep / sqrt 2)."""
    labels = rng.integers(0, 2, n)
    out = []
    for encoder, shift in (("alpha", separation), ("beta", separation / 2)):
        for s in (0, 1, 2):
            score = shift * labels + rng.normal(size=n) if s == 0 else score  # noqa: F821 - the same scorer each seed
            p1 = 1.0 / (1.0 + np.exp(-score))
            proba = np.column_stack([1 - p1, p1])
            build = lambda meta, y, p: ConditionPredictions.build(meta, np.arange(n), y, p, "multiclass")  # noqa: E731
            out.append(build(_meta(encoder, "toy", "multiclass", s, "clean"), labels, proba))
            out.append(build(_meta(encoder, "toy", "multiclass", s, "label_fraction", label_fraction=0.5,
                                   label_fraction_used=0.5), labels, proba))
            out.append(build(_meta(encoder, "toy", "multiclass", s, "corruption", corruption="noise", severity=1),
                             labels, proba))
    return out


def test_the_discrimination_interval_covers_the_known_truth_at_the_nominal_rate():
    # A synthetic world where the truth is known: a scorer whose score is
    # separation * label + N(0, 1) has population AUROC Phi(separation / sqrt 2). Over
    # independent test sets of 200 images, the bootstrap's 95 % interval of D must cover
    # it at 95 %, up to three Monte-Carlo standard errors.
    from scipy.stats import norm

    from crsbench_lib.scoring.bootstrap import interval_summary

    separation, replicates, covered = 1.2, 120, 0
    truth = norm.cdf(separation / np.sqrt(2))
    rng = np.random.default_rng(11)
    panel = ReferenceStandard("toy-v1", ANCHORS, WEIGHTS, (1.0, 0.5), 10, ("alpha", "beta"), np.full((2, 4), 0.5))
    for r in range(replicates):
        arrays = dataset_arrays(_binormal_predictions(rng, 200, separation))
        result = two_level_bootstrap(arrays, panel, n_draws=200, random_state=r, n_jobs=1, top_k=1)
        column = result.encoders.index("alpha")
        row = interval_summary(result.auroc_draws[:, [column]], result.point_profiles.loc[["alpha"], "D"].to_numpy(),
                               0.95).iloc[0]
        covered += bool(row["low"] <= truth <= row["high"])
    assert covered / replicates >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / replicates)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(0.0, 1.0), min_size=2, max_size=12),
    st.floats(0.0, 1.0),
    st.integers(0, 11),
)
def test_resampling_shift_is_the_mean_over_finite_draws(values: list[float], point: float, broken: int) -> None:
    draws = np.array(values)[:, None, None]
    expected = np.mean(values) - point
    assert resampling_shift(draws, np.array([[point]]))[0, 0] == pytest.approx(expected, abs=1e-12)
    # An infinite draw (a ratio over a resampled clean AUROC of 0) is left out of the mean, not spread to every draw.
    if broken < len(values) and len(values) > 1:
        with_inf = draws.copy()
        with_inf[broken] = np.inf
        kept = [v for i, v in enumerate(values) if i != broken]
        shift = resampling_shift(with_inf, np.array([[point]]))[0, 0]
        assert np.isfinite(shift) and shift == pytest.approx(np.mean(kept) - point, abs=1e-12)


def test_resampling_shift_is_zero_without_a_finite_draw() -> None:
    draws = np.full((3, 1, 2), np.inf)
    draws[:, 0, 1] = [0.2, 0.4, 0.6]
    assert resampling_shift(draws, np.array([[0.5, 0.5]])).round(12).tolist() == [[0.0, -0.1]]


def test_form_comparison_rescores_the_same_draws(predictions, point_profiles):
    from dataclasses import replace

    from crsbench_lib.scoring.dominance_noise import dominance_noise_sd, form_comparison, with_noise_aware_dominance

    panel = standard({e: normalised(point_profiles.loc[e].to_numpy()) for e in ENCODERS})
    arrays = dataset_arrays(predictions)
    pareto = two_level_bootstrap(arrays, panel, n_draws=60, random_state=7)
    forms = form_comparison(pareto, panel)
    # The Pareto columns are the bootstrap's own summary; the order is the bootstrap's.
    summary = pareto.summary.set_index("encoder")
    assert list(forms.index) == list(summary.index)
    np.testing.assert_allclose(forms["crs_pareto"], summary["crs"], atol=1e-15)
    np.testing.assert_allclose(forms["bias_pareto"], summary["bias"], atol=1e-15)
    # The noise-aware columns equal a bootstrap run on a noise-aware standard with the same draws.
    sigma = dominance_noise_sd(pareto, panel)
    noisy = two_level_bootstrap(arrays, with_noise_aware_dominance(panel, sigma), n_draws=60, random_state=7)
    noisy_summary = noisy.summary.set_index("encoder").loc[forms.index]
    np.testing.assert_allclose(forms["crs_noise_aware"], noisy_summary["crs"], atol=1e-15)
    np.testing.assert_allclose(forms["bias_noise_aware"], noisy_summary["bias"], atol=1e-15)
    # A noise-aware standard's own scale is used unless another is given.
    again = form_comparison(noisy, with_noise_aware_dominance(panel, sigma))
    np.testing.assert_allclose(again.loc[forms.index, "crs_noise_aware"], forms["crs_noise_aware"], atol=1e-15)
    wider = form_comparison(pareto, replace(panel), noise_sd=2 * sigma)
    assert not np.allclose(wider["crs_noise_aware"], forms["crs_noise_aware"])


def test_seed_profiles_and_axis_intervals(predictions, point_profiles):
    """The per-seed profiles average to the point profiles; a draw that picks one seed only is that seed's
    profile; the axis intervals (amendment 26) hold their centre and are at least the t interval of the seeds."""
    from crsbench_lib.scoring.two_level_bootstrap import axis_intervals

    names = list(ENCODERS)
    panel = standard({e: normalised(point_profiles.loc[e].to_numpy()) for e in ENCODERS})
    result = two_level_bootstrap(dataset_arrays(predictions), panel, n_draws=40, random_state=3, n_jobs=1)
    np.testing.assert_allclose(result.seed_profiles.mean(axis=0),
                               result.point_profiles.loc[list(result.encoders)].to_numpy(), atol=1e-12)
    picked = np.isfinite(result.seed_profile_draws[:, :, 0, 0])  # (B, S)
    assert picked.any(axis=1).all()
    alone = np.flatnonzero(picked.sum(axis=1) == 1)
    for b in alone:
        s = int(np.flatnonzero(picked[b])[0])
        np.testing.assert_allclose(result.profile_draws[b], result.seed_profile_draws[b, s], atol=1e-12)
    frame = axis_intervals(result)
    assert len(frame) == 4 * len(names) and list(frame["axis"].iloc[:4]) == list(AXES)
    assert ((frame["low"] <= frame["centre"]) & (frame["centre"] <= frame["high"])).all()
    assert (frame["half_width"] >= 4.30 * frame["se_seed"] - 1e-12).all()
    np.testing.assert_allclose(frame["centre"], frame["estimate"])  # centred on the point, as amendment 15
    corrected = axis_intervals(result, bias_correct=True)
    shift = result.axis_shift.loc[list(result.encoders), list(AXES)].to_numpy().ravel()
    np.testing.assert_allclose(corrected["centre"], corrected["estimate"] - shift)
