"""Inserting candidates into a registry: zero displacement under a fixed reference."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from crsbench_lib.errors import RegistryError
from crsbench_lib.registry import Registry
from crsbench_lib.registry.insertion import (
    displacement_summary,
    displacement_table,
    inserted_table,
    register_then_insert,
    renormalised_displacement,
    strongest_encoders,
)
from crsbench_lib.standard import ReferenceStandard


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory, small_results: pd.DataFrame,
              files: dict[str, Path]) -> tuple[pd.DataFrame, pd.DataFrame]:
    path = tmp_path_factory.mktemp("insertion") / "registry.sqlite"
    with Registry(path, create=True) as reg:
        reg.add(small_results, files["v1"], encoders=["enc00", "enc01", "enc02", "enc03"])
        before = reg.entries("test-v1")
        # Newcomers: held-out encoders and the adapted arm of a published one.
        reg.add(small_results, files["v1"], encoders=["enc05", "enc06", "enc07"])
        reg.add(small_results, files["v1"], encoders=["enc01"], arm="lora")
        return before, reg.entries("test-v1")


def test_fixed_reference_displaces_nothing(snapshots: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    before, after = snapshots
    table = displacement_table(before, after)
    assert len(table) == 4
    assert table["bit_identical"].all()
    assert (table["crs_displacement"] == 0.0).all()
    assert (table["rank_among_published"] == table["rank_before"]).all()
    assert (table["rank_change_among_published"] == 0).all()
    assert (table["rank_after"] >= table["rank_before"]).all()  # newcomers can only step in above


def test_inserted_table_lists_the_newcomers(snapshots: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    before, after = snapshots
    fresh = inserted_table(before, after)
    assert sorted(fresh["candidate"]) == ["enc01 [lora]", "enc05", "enc06", "enc07"]
    assert fresh["rank"].is_monotonic_increasing


def test_cohort_renormalisation_moves_scores(snapshots: tuple[pd.DataFrame, pd.DataFrame],
                                             standard_v1: ReferenceStandard) -> None:
    before, after = snapshots
    moved = renormalised_displacement(before, after, standard_v1)
    assert len(moved) == 4
    assert np.abs(moved["crs_displacement"]).max() > 0.0
    summary = displacement_summary(displacement_table(before, after), moved)
    assert summary.loc["fixed reference", "max_abs_crs_displacement"] == 0.0
    assert summary.loc["fixed reference", "n_scores_moved"] == 0
    assert summary.loc["cohort-renormalised", "n_scores_moved"] > 0


def test_snapshots_must_share_one_standard(snapshots: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    before, after = snapshots
    mixed = pd.concat([after, after.assign(standard_version="other")])
    with pytest.raises(RegistryError, match="one standard"):
        displacement_table(before, mixed)
    with pytest.raises(RegistryError, match="same standard"):
        displacement_table(before, after.assign(standard_version="other"))
    with pytest.raises(RegistryError, match="no longer current"):
        displacement_table(before, after[after["entry_id"] != before["entry_id"].iloc[0]])


def test_strongest_encoders(small_results: pd.DataFrame) -> None:
    from crsbench_lib.scoring.axes import encoder_profiles, raw_axes

    profiles = encoder_profiles(raw_axes(small_results))
    expected = list(profiles["D"].sort_values(ascending=False).index[:3])
    assert strongest_encoders(small_results, 3) == expected
    for bad in (0, 8):
        with pytest.raises(RegistryError, match="parameter 'n'"):
            strongest_encoders(small_results, bad)


def test_register_then_insert(tmp_path: Path, small_results: pd.DataFrame, standard_v1: ReferenceStandard) -> None:
    table = small_results[small_results["encoder"].isin(["enc00", "enc01", "enc02", "enc03", "enc04"])]
    table = table[(table["arm"] == "frozen") | (table["encoder"] == "enc01")]
    with Registry(tmp_path / "r.sqlite", create=True) as reg:
        run = register_then_insert(reg, table, standard_v1, held_out=["enc04"])
        assert run.published == ["enc00", "enc01", "enc02", "enc03"]
        assert sorted(run.newcomers) == ["enc01 [lora]", "enc04"]
        assert run.displacement["bit_identical"].all() and len(run.displacement) == 4
        assert run.summary.loc["fixed reference", "max_abs_crs_displacement"] == 0.0
        assert [r.n_written for r in run.reports] == [4, 1, 1]
        # Again on the same registry: everything is idempotent, nothing moves.
        again = register_then_insert(reg, table, standard_v1, held_out=["enc04"])
        assert sum(r.n_written for r in again.reports) == 0
        with pytest.raises(RegistryError, match="every encoder is held out"):
            register_then_insert(reg, table, standard_v1, held_out=["enc00", "enc01", "enc02", "enc03", "enc04"])
        with pytest.raises(RegistryError, match="no new candidates"):
            register_then_insert(reg, table, standard_v1, held_out=[], lora_candidates=False)
        with pytest.raises(RegistryError, match="encoder 'encXX' has no rows"):
            register_then_insert(reg, table, standard_v1, held_out=["encXX"])


def test_summary_separates_order_changes_from_positional_shifts(
        snapshots: tuple[pd.DataFrame, pd.DataFrame], standard_v1: ReferenceStandard) -> None:
    before, after = snapshots
    fixed = displacement_table(before, after)
    moved = renormalised_displacement(before, after, standard_v1)
    assert list(moved.columns) == [c for c in fixed.columns if c != "bit_identical"]
    summary = displacement_summary(fixed, moved)
    assert summary.loc["fixed reference", "pairwise_order_changes"] == 0
    assert summary.loc["fixed reference", "n_pairs"] == 6
    # Positions in the whole list are a different count: newcomers above push entries down.
    shifted = int((fixed["rank_after"] != fixed["rank_before"]).sum())
    assert summary.loc["fixed reference", "n_positions_shifted"] == shifted
    assert shifted > 0  # the newcomers of the fixture are placed above some published entry
    assert 0 <= summary.loc["cohort-renormalised", "pairwise_order_changes"] <= 6


def test_summary_counts_an_order_change_when_scores_swap() -> None:
    swapped = pd.DataFrame({"crs_before": [0.6, 0.4, 0.2], "crs_after": [0.3, 0.5, 0.2],
                            "crs_displacement": [-0.3, 0.1, 0.0], "bit_identical": [False, False, True],
                            "rank_before": [1, 2, 3], "rank_after": [2, 1, 3]})
    row = displacement_summary(swapped).loc["fixed reference"]
    assert row["pairwise_order_changes"] == 1 and row["n_positions_shifted"] == 2 and row["n_scores_moved"] == 2
