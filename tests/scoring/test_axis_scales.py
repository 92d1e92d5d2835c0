"""L and R on both scales: hand-computed cells, ranks and correlations with D."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.scoring.axes import encoder_profiles, raw_axes
from crsbench_lib.scoring.axis_scales import scale_comparison, scale_correlations
from crsbench_lib.standard import AxisScales

FRACTIONS = (1.0, 0.25, 0.1)


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return synthetic_results(n_encoders=5, corruptions=("noise",), random_state=3)


def test_both_scales_are_the_axes_module_s_own(table):
    both = scale_comparison(table, FRACTIONS, chance_margin=0.05).set_index("encoder")
    study = encoder_profiles(raw_axes(table, label_fractions=FRACTIONS))
    chance = encoder_profiles(raw_axes(table, label_fractions=FRACTIONS, scales=AxisScales("chance", "chance", 0.05)))
    np.testing.assert_array_equal(both.loc[study.index, "L_study"], study["L"])
    np.testing.assert_array_equal(both.loc[study.index, "R_study"], study["R"])
    np.testing.assert_array_equal(both.loc[chance.index, "L_chance"], chance["L"])
    np.testing.assert_array_equal(both.loc[chance.index, "R_chance"], chance["R"])
    assert list(both["D"]) == sorted(both["D"], reverse=True)


def test_ranks_put_high_l_and_low_r_first(table):
    both = scale_comparison(table, FRACTIONS)
    for scale in ("study", "chance"):
        best_l = both.loc[both[f"rank_L_{scale}"] == 1, f"L_{scale}"].iloc[0]
        best_r = both.loc[both[f"rank_R_{scale}"] == 1, f"R_{scale}"].iloc[0]
        assert best_l == both[f"L_{scale}"].max() and best_r == both[f"R_{scale}"].min()


def test_a_near_chance_encoder_is_robust_on_points_and_worst_on_chance():
    # Hand-made profile table: one encoder barely above chance loses 0.01 AUROC points, a strong one 0.04.
    comparison = pd.DataFrame({
        "encoder": ["strong", "middle", "weak"], "D": [0.9, 0.75, 0.52],
        "L_study": [0.95, 0.9, 0.99], "L_chance": [(0.9 * 0.95 - 0.5) / 0.4, (0.75 * 0.9 - 0.5) / 0.25, 0.0],
        "R_study": [0.04, 0.03, 0.01], "R_chance": [0.04 / 0.4, 0.03 / 0.25, 1.0],
        "rank_L_study": [2, 3, 1], "rank_L_chance": [1, 2, 3], "rank_R_study": [3, 2, 1], "rank_R_chance": [1, 2, 3],
    })
    correlations = scale_correlations(comparison)
    assert correlations.loc["R", "rho_study"] == pytest.approx(1.0)  # bigger losses for stronger encoders
    assert correlations.loc["R", "rho_chance"] == pytest.approx(-1.0)
    assert correlations.loc["R", "rank_moves"] == 2 and correlations.loc["L", "rank_moves"] == 2


def test_correlations_need_the_comparison_columns():
    with pytest.raises(SchemaError, match="lacks column 'D'"):
        scale_correlations(pd.DataFrame({"L_study": [1.0]}))


def test_a_constant_axis_has_no_correlation():
    comparison = pd.DataFrame({"D": [0.9, 0.8, 0.7, 0.6], "L_study": [1.0] * 4, "L_chance": [0.9, 0.8, 0.7, 0.1],
                               "R_study": [0.1, 0.2, 0.3, 0.4], "R_chance": [0.1, 0.2, 0.3, 0.4]})
    correlations = scale_correlations(comparison)
    assert np.isnan(correlations.loc["L", "rho_study"]) and correlations.loc["L", "rho_chance"] == pytest.approx(1.0)
