"""Reference-run summaries: written from a table, read back, and compared with other tables."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.scoring.reproduce import (
    SUMMARY_FORMAT,
    compare_to_summary,
    load_summary,
    summarise_run,
    write_summary,
)
from crsbench_lib.standard import AXES


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return synthetic_results(n_encoders=3, corruptions=("noise",), arms=("frozen", "lora"), random_state=4)


def test_summary_round_trip_and_exact_reproduction(table: pd.DataFrame, tmp_path: Path) -> None:
    summary = summarise_run(table, "demo", tolerance=0.005)
    assert summary["format"] == SUMMARY_FORMAT and summary["tolerance"] == 0.005
    assert set(summary["axes"]) == {"frozen", "lora"} and set(summary["axes"]["frozen"]) == {"enc00", "enc01", "enc02"}
    loaded = load_summary(write_summary(summary, tmp_path / "s.json"))
    assert loaded == summary
    outcome = compare_to_summary(table.sample(frac=1.0, random_state=0), loaded)  # row order is irrelevant
    assert outcome.exact and outcome.reproduces and outcome.max_difference == 0.0
    assert "exactly" in outcome.message()


def test_small_and_large_differences(table: pd.DataFrame) -> None:
    summary = summarise_run(table, "demo", tolerance=0.01)
    nudged = table.copy()
    rows = (nudged["encoder"] == "enc01") & (nudged["arm"] == "frozen")
    nudged.loc[rows, "ece"] = nudged.loc[rows, "ece"] + 0.004
    small = compare_to_summary(nudged, summary)
    assert not small.exact and small.reproduces
    assert small.max_difference == pytest.approx(0.004) and small.where == "frozen enc01 C"
    assert small.message().startswith("reproduces the reference run of profile demo within tolerance 0.01")
    nudged.loc[rows, "ece"] = nudged.loc[rows, "ece"] + 0.02
    large = compare_to_summary(nudged, summary)
    assert not large.reproduces and large.max_difference == pytest.approx(0.024)
    assert "exceeds the tolerance 0.01" in large.message()


def test_missing_encoder_and_other_config(table: pd.DataFrame) -> None:
    summary = summarise_run(table, "demo")
    fewer = compare_to_summary(table[table["encoder"] != "enc02"], summary)
    assert not fewer.reproduces and "frozen enc02" in fewer.missing and "absent" in fewer.message()
    other = compare_to_summary(table.assign(config_hash="another"), summary)
    assert not other.comparable and not other.reproduces and math.isnan(other.max_difference)
    assert other.message().startswith("not comparable")


def test_axes_are_the_encoder_profiles(table: pd.DataFrame) -> None:
    from crsbench_lib.scoring.axes import encoder_profiles, raw_axes

    profiles = encoder_profiles(raw_axes(table, arm="lora"))
    summary = summarise_run(table, "demo")
    for encoder in profiles.index:
        assert [summary["axes"]["lora"][encoder][a] for a in AXES] == profiles.loc[encoder].tolist()


def test_bad_input(table: pd.DataFrame, tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="tolerance"):
        summarise_run(table, "demo", tolerance=-1.0)
    with pytest.raises(SchemaError, match="mixes 2 config hashes"):
        summarise_run(pd.concat([table, table.assign(config_hash="b", seed=table["seed"] + 10)]), "demo")
    with pytest.raises(SchemaError, match="no such reference-run summary"):
        load_summary(tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(SchemaError, match="not a readable JSON"):
        load_summary(bad)
    summary = summarise_run(table, "demo")
    del summary["axes"]["frozen"]["enc00"]["R"]
    bad.write_text(json.dumps(summary))
    with pytest.raises(SchemaError, match=r"axes\.frozen\.enc00 must hold numbers"):
        load_summary(bad)
