"""The axes' seed-level t interval (method section 9, amendment 26; issue 45, item 7).

A simulation on constructed data, cheap enough for CI: a statistic measured by a
few seeds on one shared test set (seeds and images crossed), its two-level
bootstrap drawn exactly as :func:`two_level_bootstrap` draws it. Where the seed
level dominates (label efficiency), the percentile interval of the two-level
draws falls short of 95 %; the seed-level t interval holds.
"""

from __future__ import annotations

import numpy as np
import pytest

from crsbench_lib.errors import ConfigError
from crsbench_lib.scoring.two_level_bootstrap import _draw_images, _draw_seeds, seed_level_interval

N_SEEDS, N_IMAGES, N_DRAWS, N_REPLICATES = 3, 120, 300, 400


def _coverage(seed_sd: float, image_sd: float, interaction_sd: float, random_state: int = 0) -> dict[str, float]:
    """Coverage of the truth 0 by the old percentile interval and the new one, and their mean widths.

    Seed ``s`` on test set ``T`` under image multiplicities ``w`` measures
    ``a_s + sum_i w_i (x_i + e_si) / sum_i w_i``: ``a_s`` the seed's own draw
    (its training set and label subset), ``x_i`` an image's effect shared by
    every seed, ``e_si`` the seed-by-image interaction. The truth (expectation
    over seeds and images) is 0.
    """
    rng = np.random.default_rng(random_state)
    hits = {"percentile": 0, "seed_t": 0}
    widths = {"percentile": 0.0, "seed_t": 0.0}
    for _ in range(N_REPLICATES):
        a = rng.normal(0.0, seed_sd, N_SEEDS)
        per_image = rng.normal(0.0, image_sd, N_IMAGES)[None, :] + rng.normal(0.0, interaction_sd,
                                                                               (N_SEEDS, N_IMAGES))
        counts = _draw_seeds(rng, N_SEEDS, N_DRAWS)  # (B, S), as the two-level bootstrap draws seeds
        weights = _draw_images(rng, N_IMAGES, N_DRAWS).astype(float)  # (B, n), and images
        seed_draws = a[None, :] + weights @ per_image.T / weights.sum(axis=1, keepdims=True)  # (B, S)
        seed_values = a + per_image.mean(axis=1)
        profile_draws = (counts * seed_draws).sum(axis=1) / N_SEEDS  # the two-level draws of the seed mean
        low, high = np.quantile(profile_draws, [0.025, 0.975])
        hits["percentile"] += int(low <= 0.0 <= high)
        widths["percentile"] += (high - low) / N_REPLICATES
        # The bootstrap computes a seed only in the draws that pick it: the rest is not a measurement.
        new = seed_level_interval(seed_values, np.where(counts > 0, seed_draws, np.nan))
        hits["seed_t"] += int(new["low"] <= 0.0 <= new["high"])
        widths["seed_t"] += float(new["high"] - new["low"]) / N_REPLICATES
    return {**{k: v / N_REPLICATES for k, v in hits.items()}, **{f"width_{k}": v for k, v in widths.items()}}


def test_seed_level_dominates_percentile_falls_short_t_holds():
    """Label efficiency's regime: each seed's label subsets move the axis far more than the test images do."""
    out = _coverage(seed_sd=0.02, image_sd=0.03, interaction_sd=0.02)
    # Old: a plug-in seed variance (two thirds of the unbiased one at three seeds) read with normal quantiles.
    assert out["percentile"] < 0.85, out
    # New: at or above nominal - 0.10 (Student's t on n - 1 = 2 df is exact for normal seeds, and Banerjee's
    # combination with the images' normal interval does not fall below it).
    assert out["seed_t"] >= 0.90, out
    assert out["width_seed_t"] > 1.5 * out["width_percentile"]


def test_images_dominate_t_keeps_the_bootstrap_width():
    """Discrimination's regime: no seed spread, the test images carry the noise; the interval stays near the
    bootstrap's (the images' component takes the normal quantile) and holds."""
    out = _coverage(seed_sd=0.0, image_sd=0.05, interaction_sd=0.002)
    assert out["seed_t"] >= 0.90, out
    assert out["width_seed_t"] < 1.3 * out["width_percentile"], out


def test_image_variance_from_incomplete_draws_matches_complete_ones():
    """The pairwise-complete covariances recover the image-bootstrap variance of the seed mean."""
    rng = np.random.default_rng(1)
    draws = rng.normal(size=(4000, 3)) @ np.array([[1.0, 0.5, 0.2], [0.0, 1.0, 0.3], [0.0, 0.0, 1.0]])
    values = np.array([0.1, 0.2, 0.3])
    complete = seed_level_interval(values, draws)
    expected = float(np.var(draws.mean(axis=1), ddof=1))
    assert complete["se_images"] ** 2 == pytest.approx(expected, rel=1e-9)
    counts = _draw_seeds(rng, 3, 4000)
    masked = seed_level_interval(values, np.where(counts > 0, draws, np.nan))
    assert masked["se_images"] ** 2 == pytest.approx(expected, rel=0.1)


def test_mixed_components_hold():
    """Seeds and images alike: where Satterthwaite's estimated df fall short, Banerjee's combination holds."""
    out = _coverage(seed_sd=0.02, image_sd=0.15, interaction_sd=0.02)
    assert out["seed_t"] >= 0.92, out


def test_shapes_shift_and_one_seed():
    values = np.array([[0.7, 0.1], [0.8, 0.2]])  # (S=2, 2 quantities)
    draws = np.repeat(values[None], 10, axis=0)
    out = seed_level_interval(values, draws, shift=np.array([0.01, 0.0]))
    assert out["low"].shape == (2,)
    np.testing.assert_allclose(out["centre"], [0.74, 0.15])
    np.testing.assert_allclose(out["half_width"], 12.706 * np.sqrt(values.var(axis=0, ddof=1) / 2), rtol=1e-4)
    alone = seed_level_interval(values[:1], draws[:, :1])
    assert np.isnan(alone["low"]).all() and np.isnan(alone["se_seed"]).all()
    with pytest.raises(ConfigError):
        seed_level_interval(values, draws[:, :1])
    with pytest.raises(ConfigError):
        seed_level_interval(values, draws, interval=1.0)
