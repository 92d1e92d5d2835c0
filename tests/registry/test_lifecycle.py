"""Saturation counts per standard and the note that suggests a new version."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from crsbench_lib.registry import Registry
from crsbench_lib.registry.lifecycle import SATURATION_MIN_ENTRIES, saturation_notes, saturation_table


@pytest.fixture(scope="module")
def listed(tmp_path_factory: pytest.TempPathFactory, small_results: pd.DataFrame, files: dict[str, Path]) -> pd.DataFrame:
    path = tmp_path_factory.mktemp("lifecycle") / "registry.sqlite"
    encoders = ["enc00", "enc01", "enc02", "enc05", "enc06"]
    with Registry(path, create=True) as reg:
        reg.add(small_results, files["v1"], encoders=encoders)
        reg.add(small_results, files["v2"], encoders=encoders)
        return reg.entries()


def test_counts_match_the_normalised_values(listed: pd.DataFrame) -> None:
    table = saturation_table(listed)
    assert list(table.columns) == ["standard_version", "axis", "at_worst", "at_best", "saturated", "n"]
    for row in table.itertuples():
        values = listed.loc[listed["standard_version"] == row.standard_version, f"norm_{row.axis}"]
        assert row.at_best == int((values == 1.0).sum())
        assert row.at_worst == int((values == 0.0).sum())
        assert row.n == len(values) == 5


def test_tight_anchors_trigger_a_note_and_loose_ones_do_not(listed: pd.DataFrame) -> None:
    table = saturation_table(listed)
    v2 = table[table["standard_version"] == "test-v2"].set_index("axis")
    assert v2.loc["D", "at_best"] + v2.loc["L", "at_best"] >= SATURATION_MIN_ENTRIES  # the fixture's premise
    notes = saturation_notes(table)
    assert notes["test-v1"] == []
    assert notes["test-v2"] and all("new standard version" in line for line in notes["test-v2"])


def test_note_thresholds() -> None:
    table = pd.DataFrame(
        {"standard_version": ["a", "a", "b"], "axis": ["D", "C", "D"], "at_worst": [0, 3, 0],
         "at_best": [1, 0, 2], "saturated": [1, 3, 2], "n": [10, 10, 20]}
    )
    notes = saturation_notes(table, min_entries=2, min_share=0.2)
    # a/D: one entry on an anchor is not "repeated"; a/C: 3 of 10 (>= 2 and >= 20%) is.
    assert len(notes["a"]) == 1 and "3 of 10 entries sit on the worst anchor of axis C" in notes["a"][0]
    # b/D: 2 of 20 is repeated but only 10%: below the share.
    assert notes["b"] == []
    assert saturation_notes(table, min_entries=2, min_share=0.1)["b"]


def test_empty_listing() -> None:
    empty = pd.DataFrame(columns=["standard_version", "norm_D", "norm_C", "norm_L", "norm_R", "superseded_by"])
    table = saturation_table(empty)
    assert table.empty and saturation_notes(table) == {}
