"""Noise-aware dominance (method section 9, amendment 20): the form, its limits and the scale it is measured at."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.stats import norm

from crsbench_lib.errors import ReferenceStandardError
from crsbench_lib.scoring.crs import dominance_matrix, dominance_probability, dominance_shares, score_profiles
from crsbench_lib.scoring.dominance_noise import dominance_noise_sd, normalised_axis_se, with_noise_aware_dominance
from crsbench_lib.scoring.two_level_bootstrap import bias_decomposition
from crsbench_lib.standard import AXES, Dominance

unit = st.floats(0.0, 1.0, allow_nan=False)
rows = arrays(np.float64, st.tuples(st.integers(1, 10), st.just(4)), elements=unit)
SIGMA = np.array([0.01, 0.02, 0.015, 0.02])


def test_probability_by_hand():
    member = np.array([0.5, 0.5, 0.5, 0.5])
    # Equal on every axis: 1/2 per axis.
    assert dominance_probability(member[None], member, SIGMA)[0] == pytest.approx(0.5**4)
    # Far above on D only: D is certain, the other three are coin flips.
    above = np.array([[0.9, 0.5, 0.5, 0.5]])
    assert dominance_probability(above, member, SIGMA)[0] == pytest.approx(0.5**3)
    # One standard error of the difference above on every axis.
    lift = member + np.sqrt(2.0) * SIGMA
    assert dominance_probability(lift[None], member, SIGMA)[0] == pytest.approx(norm.cdf(1.0) ** 4)


@settings(max_examples=80, deadline=None)
@given(s=rows, panel=rows)
def test_noise_aware_tends_to_pareto_away_from_ties(s, panel):
    # Profiles that differ from every member by at least 0.01 on every axis: at sigma 1e-5
    # (1000 standard errors) the probability is the Pareto indicator to within 1e-12.
    far = (np.abs(s[:, None, :] - panel[None, :, :]) > 0.01).all(axis=(1, 2))
    s = s[far]
    if len(s) == 0:
        return
    hard = dominance_shares(s, panel)
    soft = dominance_shares(s, panel, np.full(4, 1e-5))
    np.testing.assert_allclose(soft, hard, atol=1e-12)


@settings(max_examples=80, deadline=None)
@given(s=rows, panel=rows, lift=st.floats(0.0, 0.3), axis=st.integers(0, 3))
def test_noise_aware_is_monotone_and_bounded(s, panel, lift, axis):
    better = s.copy()
    better[:, axis] = better[:, axis] + lift
    before = dominance_shares(s, panel, SIGMA)
    after = dominance_shares(better, panel, SIGMA)
    assert ((before >= 0) & (before <= 1)).all()
    assert (after >= before - 1e-15).all()


@settings(max_examples=50, deadline=None)
@given(s=rows, panel=rows)
def test_each_row_scores_alone(s, panel):
    # Row-wise to the last bit: scoring rows together or one at a time gives the same share.
    together = dominance_shares(s, panel, SIGMA)
    alone = np.concatenate([dominance_shares(s[i : i + 1], panel, SIGMA) for i in range(len(s))])
    assert together.tobytes() == alone.tobytes()
    np.testing.assert_allclose(dominance_matrix(s, panel, SIGMA).mean(axis=1), together, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(dominance_matrix(s, panel).mean(axis=1), dominance_shares(s, panel))


def test_standard_scores_with_its_form(synthetic_table, frozen_standard):
    from crsbench_lib.scoring.axes import encoder_profiles, standard_axes

    profiles = encoder_profiles(standard_axes(synthetic_table, frozen_standard))
    pareto = replace(frozen_standard, dominance=Dominance())
    noisy = with_noise_aware_dominance(frozen_standard, SIGMA)
    hard = score_profiles(profiles, pareto).set_index("encoder")
    soft = score_profiles(profiles, noisy).set_index("encoder")
    # Only the dominance term differs; balance and floor are the same numbers.
    np.testing.assert_array_equal(hard.loc[soft.index, "balance"], soft["balance"])
    np.testing.assert_array_equal(hard.loc[soft.index, "floor"], soft["floor"])
    s = soft[[f"s_{a}" for a in AXES]].to_numpy()
    expected = dominance_shares(s, noisy.require_panel(), SIGMA)
    np.testing.assert_array_equal(soft["dominance"].to_numpy(), expected)


def _close_pair_standard(frozen_standard):
    """A candidate 0.2 standard errors above its one panel member on every axis."""
    import pandas as pd

    from crsbench_lib.scoring.freeze import freeze_profiles

    member = pd.DataFrame({"D": [0.80], "C": [0.05], "L": [0.7], "R": [0.3]}, index=["member"])
    base = replace(frozen_standard, dominance=Dominance())
    std = freeze_profiles(member, "close-v1", base=base, created="2026-12-03T00:00:00Z")
    raw_step = 0.2 * SIGMA * np.abs(base.best - base.worst)  # 0.2 sigma in raw units, in each axis' direction
    sign = np.where(base.best > base.worst, 1.0, -1.0)
    candidate = member.to_numpy()[0] + sign * raw_step
    point = pd.DataFrame([candidate], index=pd.Index(["cand"], name="encoder"), columns=list(AXES))
    rng = np.random.default_rng(0)
    draws = point.to_numpy()[None] + rng.normal(0, 1, (4000, 1, 4)) * SIGMA * np.abs(base.best - base.worst)
    return std, point, draws


def test_noise_aware_dominance_removes_the_step_bias(frozen_standard):
    # Pareto: the point dominates (share 1) but only about Phi(0.2)^4 = 0.18 of the draws do,
    # a bias of about -0.8 of the dominance weight; noise-aware: almost none.
    std, point, draws = _close_pair_standard(frozen_standard)
    hard = bias_decomposition(draws, point, std)["dominance"].iloc[0]
    soft = bias_decomposition(draws, point, with_noise_aware_dominance(std, SIGMA))["dominance"].iloc[0]
    weight = std.weights["dominance"]
    assert hard < -0.6 * weight
    assert abs(soft) < 0.05 * weight


class _Result:
    """The fields of a TwoLevelBootstrapResult that the noise scale reads."""

    def __init__(self, draws, encoders, shift=None):
        import pandas as pd

        self.profile_draws = draws
        self.encoders = tuple(encoders)
        self.recentred = shift is not None
        self.axis_shift = pd.DataFrame(np.zeros(draws.shape[1:]) if shift is None else shift,
                                       index=list(encoders), columns=list(AXES))


def test_noise_scale_is_the_median_se_of_the_panel(frozen_standard):
    std = frozen_standard
    span = np.abs(std.best - std.worst)
    rng = np.random.default_rng(1)
    names = list(std.panel_names)
    scales = np.linspace(0.5, 1.5, len(names))  # member i's noise is scales[i] * SIGMA (normalised)
    centre = (std.worst + std.best) / 2
    draws = centre[None, None] + rng.normal(0, 1, (20000, len(names), 4)) * scales[None, :, None] * SIGMA * span
    result = _Result(draws, names, shift=np.zeros((len(names), 4)))
    se = normalised_axis_se(result, std)
    np.testing.assert_allclose(se.to_numpy(), scales[:, None] * SIGMA[None], rtol=0.03)
    np.testing.assert_allclose(dominance_noise_sd(result, std), np.median(scales) * SIGMA, rtol=0.03)
    # A member that is not in the bootstrap is named; an axis without spread has no scale.
    with pytest.raises(ReferenceStandardError, match="'nobody' is not an encoder"):
        dominance_noise_sd(result, std, members=["nobody"])
    flat = draws.copy()
    flat[:, :, 1] = centre[1]
    with pytest.raises(ReferenceStandardError, match="axis C does not vary"):
        dominance_noise_sd(_Result(flat, names), std)
