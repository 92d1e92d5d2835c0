import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from crsbench_lib.errors import ReferenceStandardError, SchemaError
from crsbench_lib.scoring.axes import encoder_profiles, standard_axes
from crsbench_lib.scoring.crs import (
    cohort_normalise,
    cohort_renormalised_scores,
    crs_components,
    dominance_shares,
    normalise,
    normalise_array,
    saturation_counts,
    score_profiles,
    score_results,
)
from crsbench_lib.standard import AXES, load_template

unit = st.floats(0.0, 1.0, allow_nan=False)
profiles_strategy = arrays(np.float64, st.tuples(st.integers(1, 12), st.just(4)), elements=unit)
WEIGHTS = {"dominance": 0.3, "balance": 0.4, "floor": 0.3}


def test_normalisation_uses_fixed_anchors_with_direction():
    # The study's scales' anchors (crs-default-v1 to v4): higher-better D and L, lower-better C and R.
    worst, best = np.array([0.5, 0.2, 0.5, 0.2]), np.array([1.0, 0.0, 1.0, 0.0])
    raw = np.array([[0.75, 0.05, 1.2, 0.25], [0.4, 0.0, 0.5, 0.1]])
    s = normalise_array(raw, worst, best)
    np.testing.assert_allclose(s, [[0.5, 0.75, 1.0, 0.0], [0.0, 1.0, 0.0, 0.5]])
    # The template's chance scales: L kept from 0 to 1, R lost from 1 to 0.
    template = load_template()
    np.testing.assert_allclose(normalise_array(raw, template.worst, template.best),
                               [[0.5, 0.75, 1.0, 0.75], [0.0, 1.0, 0.5, 0.9]])


def test_components_by_hand():
    s = np.array([[1.0, 1.0, 1.0, 1.0], [0.5, 0.5, 0.5, 0.5], [0.0, 1.0, 1.0, 1.0]])
    panel = np.array([[0.5, 0.5, 0.5, 0.5], [0.2, 0.9, 0.2, 0.2]])
    table = crs_components(s, panel, WEIGHTS)
    np.testing.assert_allclose(table["dominance"], [1.0, 0.0, 0.0])  # equal profile does not dominate
    np.testing.assert_allclose(table["balance"], [1.0, 0.5, 0.5])
    np.testing.assert_allclose(table["floor"], [1.0, 0.5, 0.0])
    np.testing.assert_allclose(table["crs"], [1.0, 0.35, 0.2])


def test_empty_panel_and_bad_weights():
    with pytest.raises(ReferenceStandardError, match="panel is empty"):
        crs_components(np.ones((1, 4)), np.zeros((0, 4)), WEIGHTS)
    with pytest.raises(ReferenceStandardError, match="weights"):
        crs_components(np.ones((1, 4)), np.ones((1, 4)), {"dominance": 0.5, "balance": 0.5, "floor": 0.5})
    with pytest.raises(SchemaError, match="shape"):
        crs_components(np.ones((1, 3)), np.ones((1, 4)), WEIGHTS)


@settings(max_examples=100, deadline=None)
@given(s=profiles_strategy, panel=profiles_strategy,
       w=st.lists(st.floats(0, 1), min_size=3, max_size=3).filter(lambda v: sum(v) > 0.01))
def test_crs_lies_in_unit_interval(s, panel, w):
    weights = np.array(w) / sum(w)
    weights[2] = 1.0 - weights[0] - weights[1]
    if weights[2] < 0:
        weights[2] = 0.0
        weights /= weights.sum()
    table = crs_components(s, panel, weights)
    assert ((table.to_numpy() >= 0.0) & (table.to_numpy() <= 1.0 + 1e-12)).all()


@settings(max_examples=100, deadline=None)
@given(s=arrays(np.float64, (4,), elements=unit), lift=arrays(np.float64, (4,), elements=unit), panel=profiles_strategy)
def test_dominating_profile_never_scores_lower_on_dominance(s, lift, panel):
    better = np.minimum(1.0, s + lift)  # >= s on every axis
    shares = dominance_shares(np.vstack([s, better]), panel)
    assert shares[1] >= shares[0]


@settings(max_examples=50, deadline=None)
@given(s=profiles_strategy, panel=profiles_strategy)
def test_dominance_matches_naive_loop(s, panel):
    naive = [np.mean([bool((row >= p).all() and (row > p).any()) for p in panel]) for row in s]
    np.testing.assert_array_equal(dominance_shares(s, panel), naive)


def test_score_results_ranked_table(synthetic_table, frozen_standard):
    table = score_results(synthetic_table, frozen_standard)
    assert list(table.columns) == [
        "encoder", "D", "C", "L", "R", "s_D", "s_C", "s_L", "s_R",
        "dominance", "balance", "floor", "crs", "rank", "standard_version",
    ]
    assert table["rank"].tolist() == list(range(1, 9))
    assert (np.diff(table["crs"]) <= 0).all()
    assert set(table["standard_version"]) == {"test-v1"}
    profiles = encoder_profiles(standard_axes(synthetic_table, frozen_standard))
    np.testing.assert_array_equal(
        table.set_index("encoder").loc[profiles.index, ["s_D", "s_C", "s_L", "s_R"]].to_numpy(),
        normalise(profiles, frozen_standard).to_numpy(),
    )


def test_score_results_rejects_template(synthetic_table):
    with pytest.raises(ReferenceStandardError, match="empty panel"):
        score_results(synthetic_table, load_template())


def test_scores_are_deterministic(synthetic_table, frozen_standard):
    pd.testing.assert_frame_equal(score_results(synthetic_table, frozen_standard),
                                  score_results(synthetic_table, frozen_standard))


def test_ties_share_the_best_rank(frozen_standard):
    profiles = pd.DataFrame([[0.8, 0.05, 0.9, 0.02]] * 2 + [[0.6, 0.1, 0.8, 0.05]], columns=list(AXES),
                            index=["b", "a", "c"])
    table = score_profiles(profiles, frozen_standard)
    assert table["encoder"].tolist() == ["a", "b", "c"]
    assert table["rank"].tolist() == [1, 1, 3]


def test_saturation_counts():
    s = pd.DataFrame([[0.0, 1.0, 0.5, 1.0], [0.0, 0.2, 1.0, 0.3]], columns=list(AXES))
    counts = saturation_counts(s)
    assert counts.loc["D", "at_worst"] == 2 and counts.loc["C", "at_best"] == 1
    assert counts.loc["R", "saturated"] == 1 and (counts["n"] == 2).all()


def test_cohort_renormalisation_spans_the_cohort():
    profiles = pd.DataFrame([[0.9, 0.10, 0.8, 0.05], [0.7, 0.02, 0.9, 0.01], [0.8, 0.06, 0.85, 0.03]],
                            columns=list(AXES), index=["a", "b", "c"])
    s = cohort_normalise(profiles)
    np.testing.assert_allclose(s, [[1, 0, 0, 0], [0, 1, 1, 1], [0.5, 0.5, 0.5, 0.5]])
    scores = cohort_renormalised_scores(profiles, WEIGHTS)
    assert set(scores["standard_version"]) == {"cohort-renormalised"}
    flat = cohort_normalise(profiles.assign(D=0.8))
    assert (flat[:, 0] == 1.0).all()


def test_ten_thousand_candidates_score_at_once(frozen_standard):
    # The speed figure is benchmarks/bench_scoring.py's; a timed test would flake on a loaded machine.
    rng = np.random.default_rng(0)
    candidates = pd.DataFrame(rng.uniform([0.5, 0, 0.5, 0], [1, 0.2, 1, 0.2], (10_000, 4)), columns=list(AXES),
                              index=[f"c{i}" for i in range(10_000)])
    table = score_profiles(candidates, frozen_standard)
    assert len(table) == 10_000 and table["crs"].between(0.0, 1.0).all()


def test_score_results_accepts_a_path(tmp_path, synthetic_table, frozen_standard):
    from crsbench_lib.standard import save_standard

    path = save_standard(frozen_standard, tmp_path / "s.yaml")
    pd.testing.assert_frame_equal(score_results(synthetic_table, path), score_results(synthetic_table, frozen_standard))


def test_repeated_encoder_names_rejected(frozen_standard):
    profiles = pd.DataFrame([[0.8, 0.05, 0.9, 0.02]] * 2, columns=list(AXES), index=["a", "a"])
    with pytest.raises(SchemaError, match="encoder 'a' twice"):
        score_profiles(profiles, frozen_standard)
    with pytest.raises(SchemaError, match="encoder 'a' twice"):
        cohort_renormalised_scores(profiles, WEIGHTS)


def test_score_results_takes_a_validated_table_and_scores_it_alike(synthetic_table, frozen_standard, monkeypatch):
    import crsbench_lib.results.validated as validated
    from crsbench_lib.results.validated import as_validated

    expected = score_results(synthetic_table, frozen_standard)
    table = as_validated(synthetic_table)
    monkeypatch.setattr(validated, "validate_results", lambda *a, **k: pytest.fail("validated twice"))
    pd.testing.assert_frame_equal(score_results(table, frozen_standard), expected)
    pd.testing.assert_frame_equal(score_results(table, frozen_standard), expected)
