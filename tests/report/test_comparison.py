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
    tau_row = f"Kendall tau (AUROC vs CRS, {comparison.FULL_PANEL})"
    rho_row = f"Spearman rho (AUROC vs CRS, {comparison.FULL_PANEL})"
    assert values.loc[tau_row, "study"] == PUBLISHED.kendall_tau
    scores = crs.score_results(table, standard)
    agree = agreement.score_agreement(scores)
    assert values.loc["encoders", "this_build"] == table["encoder"].nunique()
    # The study's tau and rho rank by the published (full-panel) CRS; so do this build's.
    assert values.loc[tau_row, "this_build"] == pytest.approx(agree.tau_b)
    assert values.loc[rho_row, "this_build"] == pytest.approx(agree.rho)
    assert values.loc["top CRS", "this_build"] == pytest.approx(scores["crs"].max())
    # The fixed reference never moves a score.
    assert values.loc["insertion: fixed displacement", "this_build"] == 0.0
    # The table has a LoRA arm, so the transfer row is computed.
    assert math.isfinite(values.loc[f"LoRA: frozen vs adapted tau ({comparison.FULL_PANEL})", "this_build"])


def test_published_comparison_is_deterministic(compared, table, standard):
    again = comparison.published_comparison(table, standard, n_draws=50, random_state=0)
    assert np.array_equal(again["this_build"].to_numpy(dtype=float), compared["this_build"].to_numpy(dtype=float),
                          equal_nan=True)


def test_published_comparison_without_lora_arm(table, standard):
    frozen = table[table["arm"] == "frozen"]
    out = comparison.published_comparison(frozen, standard, n_draws=20)
    assert math.isnan(out.set_index("quantity").loc[f"LoRA: frozen vs adapted tau ({comparison.FULL_PANEL})", "this_build"])


def test_leaders_table_is_long_and_sorted(scores):
    leaders = comparison.leaders_table(scores)
    assert list(leaders.columns) == ["ranking", "position", "study", "this_build"]
    assert set(leaders["ranking"]) == {"AUROC", "CRS"}
    crs_rows = leaders[leaders["ranking"] == "CRS"]
    assert crs_rows["this_build"].iloc[0].startswith(scores.sort_values("crs", ascending=False)["encoder"].iloc[0])
    assert crs_rows["study"].iloc[0].startswith(next(iter(PUBLISHED.aggregate_crs_top3)))
    with pytest.raises(ValueError, match="crs"):
        comparison.leaders_table(scores.drop(columns="crs"))


def test_published_comparison_reports_a_given_bootstrap(table, standard, compared):
    from dataclasses import replace

    from crsbench_lib.scoring import bootstrap

    boot = bootstrap.paired_seed_bootstrap(table, standard, n_draws=20, random_state=3)
    given = replace(boot, summary=boot.summary.assign(p_rank1=0.25))  # the row must read the given summary, not rerun a bootstrap
    out = comparison.published_comparison(table, standard, n_draws=50, random_state=0, boot=given).set_index("quantity")
    assert out.loc["P(rank 1) of the leader", "this_build"] == 0.25
    rest = out.drop(index="P(rank 1) of the leader")["this_build"].to_numpy(dtype=float)
    expected = compared.set_index("quantity").drop(index="P(rank 1) of the leader")["this_build"].to_numpy(dtype=float)
    assert np.array_equal(rest, expected, equal_nan=True)


def test_every_rank_correlation_row_names_its_scoring(compared):
    # tau and rho have two scorings (full panel, leave-self-out); no row may leave it unsaid.
    rows = [q for q in compared["quantity"] if q.startswith(("Kendall", "Spearman"))]
    assert len(rows) == 2
    assert all(comparison.FULL_PANEL in q for q in rows)
    assert all(comparison.FULL_PANEL in q for q in compared["quantity"] if "tau" in q and "weight" not in q)


def test_counts_are_ints_and_the_rest_floats(compared):
    values = compared.set_index("quantity")
    for quantity in comparison.COUNT_QUANTITIES:
        assert isinstance(values.loc[quantity, "study"], int), quantity
        assert isinstance(values.loc[quantity, "this_build"], int), quantity
    assert isinstance(values.loc["top CRS", "this_build"], float)


def test_a_reference_is_never_the_leader_of_the_comparison(table, standard, scores):
    leader = scores.sort_values("crs", ascending=False)["encoder"].iloc[0]
    out = comparison.published_comparison(table, standard, n_draws=50, random_state=0,
                                          references=[leader]).set_index("quantity")["this_build"]
    candidates = scores[scores["encoder"] != leader]
    assert out["top CRS"] == pytest.approx(candidates["crs"].max())
    assert out["encoders"] == table["encoder"].nunique() - 1  # scored, never ranked: not in the agreement
    from crsbench_lib.scoring import agreement

    assert out[f"Kendall tau (AUROC vs CRS, {comparison.FULL_PANEL})"] == pytest.approx(
        agreement.score_agreement(candidates).tau_b)
    from crsbench_lib.scoring import bootstrap

    boot = bootstrap.paired_seed_bootstrap(table, standard, n_draws=50, random_state=0, references=[leader])
    assert out["P(rank 1) of the leader"] == pytest.approx(
        boot.summary.loc[boot.summary["encoder"] != leader, "p_rank1"].max())
    crs_rows = comparison.leaders_table(scores, references=[leader]).query("ranking == 'CRS'")
    assert not crs_rows["this_build"].str.startswith(leader + " ").any()
