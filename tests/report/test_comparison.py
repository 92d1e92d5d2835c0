import math

import numpy as np
import pytest

from crsbench_lib.report import comparison
from crsbench_lib.scoring import agreement, crs
from crsbench_lib.scoring.published import PUBLISHED


@pytest.fixture(scope="module")
def compared(table, standard):
    return comparison.published_comparison(table, standard, n_draws=50, random_state=0)


def test_published_comparison_rows_are_the_studys_and_the_builds(compared, table, standard):
    assert tuple(compared.columns) == comparison.COMPARISON_COLUMNS
    values = compared.set_index("quantity")
    assert values.loc["Kendall tau (AUROC vs CRS)", "study"] == PUBLISHED.kendall_tau
    scores = crs.score_results(table, standard)
    agree = agreement.score_agreement(scores)
    assert values.loc["encoders", "this_build"] == table["encoder"].nunique()
    assert values.loc["Kendall tau (AUROC vs CRS)", "this_build"] == pytest.approx(agree.tau_b)
    assert values.loc["top CRS", "this_build"] == pytest.approx(scores["crs"].max())
    # The fixed reference never moves a score.
    assert values.loc["insertion: fixed displacement", "this_build"] == 0.0
    # The table has a LoRA arm, so the transfer row is computed.
    assert math.isfinite(values.loc["LoRA: frozen vs adapted tau", "this_build"])


def test_published_comparison_is_deterministic(compared, table, standard):
    again = comparison.published_comparison(table, standard, n_draws=50, random_state=0)
    assert np.array_equal(again["this_build"].to_numpy(), compared["this_build"].to_numpy(), equal_nan=True)


def test_published_comparison_without_lora_arm(table, standard):
    frozen = table[table["arm"] == "frozen"]
    out = comparison.published_comparison(frozen, standard, n_draws=20)
    assert math.isnan(out.set_index("quantity").loc["LoRA: frozen vs adapted tau", "this_build"])


def test_leaders_table_is_long_and_sorted(scores):
    leaders = comparison.leaders_table(scores)
    assert list(leaders.columns) == ["ranking", "position", "study", "this_build"]
    assert set(leaders["ranking"]) == {"AUROC", "CRS"}
    crs_rows = leaders[leaders["ranking"] == "CRS"]
    assert crs_rows["this_build"].iloc[0].startswith(scores.sort_values("crs", ascending=False)["encoder"].iloc[0])
    assert crs_rows["study"].iloc[0].startswith(next(iter(PUBLISHED.aggregate_crs_top3)))
    with pytest.raises(ValueError, match="crs"):
        comparison.leaders_table(scores.drop(columns="crs"))
