from dataclasses import replace

import numpy as np
import pytest

from crsbench_lib.errors import ConfigError, ReferenceStandardError, SchemaError
from crsbench_lib.scoring.axes import encoder_profiles, per_seed_axes, raw_axes
from crsbench_lib.scoring.bootstrap import paired_seed_bootstrap, resampled_profiles, seed_multiplicities
from crsbench_lib.scoring.crs import score_profiles
from crsbench_lib.standard import AXES, load_template


@pytest.fixture(scope="module")
def boot(synthetic_table, frozen_standard):
    return paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=300, random_state=7)


def test_shapes_and_probabilities(boot):
    assert boot.crs_draws.shape == (300, 8)
    assert boot.summary["p_rank1"].sum() == pytest.approx(1.0)
    assert boot.summary["p_top3"].sum() == pytest.approx(3.0)
    assert ((boot.summary["crs_low"] <= boot.summary["crs_mean"]) & (boot.summary["crs_mean"] <= boot.summary["crs_high"])).all()
    assert len(boot.pairwise) == 8 * 7 // 2
    assert (boot.pairwise["diff_low"] <= boot.pairwise["diff_high"]).all()
    assert boot.summary["encoder"].tolist() == boot.point["encoder"].tolist()


def test_deterministic(synthetic_table, frozen_standard, boot):
    again = paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=300, random_state=7)
    np.testing.assert_array_equal(again.crs_draws, boot.crs_draws)
    other = paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=300, random_state=8)
    assert not np.array_equal(other.crs_draws, boot.crs_draws)


def test_identity_draw_reproduces_the_profiles(synthetic_table):
    raw = raw_axes(synthetic_table)
    encoders, _, seeds, values = per_seed_axes(raw)
    profiles = resampled_profiles(values, np.ones((1, len(seeds))))[0]
    np.testing.assert_array_equal(profiles, encoder_profiles(raw).loc[encoders, list(AXES)].to_numpy())


def test_vectorised_draws_match_a_naive_loop(synthetic_table, frozen_standard):
    result = paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=5, random_state=11)
    rng = np.random.default_rng(11)
    picks = rng.integers(0, 3, size=(5, 3))
    raw = raw_axes(synthetic_table)
    for b in range(5):
        # Relabel each resampled seed as its own pseudo-seed, then score the usual way.
        parts = []
        for position, seed in enumerate(sorted(picks[b])):
            part = raw[raw["seed"] == seed].copy()
            part["seed"] = position
            parts.append(part)
        import pandas as pd

        profiles = encoder_profiles(pd.concat(parts))
        for e, name in enumerate(result.encoders):
            # each encoder is scored against the panel without its own entry
            keep = [i for i, other in enumerate(frozen_standard.panel_names) if other != name]
            without = replace(frozen_standard, panel_names=tuple(frozen_standard.panel_names[i] for i in keep),
                              panel_profiles=frozen_standard.panel_profiles[keep])
            scored = score_profiles(profiles, without).set_index("encoder")
            assert result.crs_draws[b, e] == pytest.approx(scored.loc[name, "crs"], abs=1e-12)


def test_multiplicities_sum_to_seed_count():
    counts = seed_multiplicities(3, 50, 0)
    assert counts.shape == (50, 3) and (counts.sum(axis=1) == 3).all()


def test_errors(synthetic_table, frozen_standard):
    with pytest.raises(ReferenceStandardError, match="empty panel"):
        paired_seed_bootstrap(synthetic_table, load_template())
    unpaired = synthetic_table[~((synthetic_table["encoder"] == "enc01") & (synthetic_table["seed"] == 2))]
    with pytest.raises(SchemaError, match="every encoder on every dataset and seed"):
        paired_seed_bootstrap(unpaired, frozen_standard)
    with pytest.raises(ConfigError, match="n_draws"):
        paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=0)
    with pytest.raises(ConfigError, match="top_k"):
        paired_seed_bootstrap(synthetic_table, frozen_standard, top_k=9)
    with pytest.raises(ConfigError, match="interval"):
        paired_seed_bootstrap(synthetic_table, frozen_standard, interval=1.0)
