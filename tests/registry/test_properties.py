"""Property: no sequence of additions moves a published score, and verify passes.

Random sequences of additions (new encoders, identical re-additions, corrected
rows, another arm, a second standard version) are applied to a fresh registry.
After every addition, every entry ever listed still has its CRS to the last
bit, every (standard, encoder, arm) the addition did not touch lists the same
entry, and every entry equals what the scoring core gives on the whole cohort.
At the end ``verify`` passes.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crsbench_lib.registry import Registry, verify_registry
from crsbench_lib.registry.entries import same_float
from crsbench_lib.scoring.crs import score_results
from crsbench_lib.standard import ReferenceStandard

ENCODERS = ("enc00", "enc02", "enc05", "enc07")
VARIANTS = ("original", "corrected")


def _corrected(results: pd.DataFrame) -> pd.DataFrame:
    """The same table with every clean ECE lowered: a plausible correction of a bug."""
    table = results.copy()
    clean = table["condition"] == "clean"
    table.loc[clean, "ece"] = table.loc[clean, "ece"] * 0.9
    return table


@pytest.fixture(scope="module")
def world(small_results: pd.DataFrame, standard_v1: ReferenceStandard, standard_v2: ReferenceStandard,
          files: dict[str, Path]) -> dict[str, object]:
    tables = {"original": small_results, "corrected": _corrected(small_results)}
    standards = {"test-v1": standard_v1, "test-v2": standard_v2}
    reference = {}
    for variant, table in tables.items():
        for version, std in standards.items():
            for arm in ("frozen", "lora"):
                scored = score_results(table, std, arm=arm).set_index("encoder")["crs"]
                reference[(variant, version, arm)] = scored
    return {"tables": tables, "paths": {"test-v1": files["v1"], "test-v2": files["v2"]}, "reference": reference}


additions = st.lists(
    st.tuples(
        st.sampled_from(("test-v1", "test-v2")),
        st.lists(st.sampled_from(ENCODERS), min_size=1, max_size=2, unique=True),
        st.sampled_from(("frozen", "lora")),
        st.sampled_from(VARIANTS),
    ),
    min_size=1,
    max_size=4,
)


def _check_sequence(world: dict[str, object], sequence: list[tuple[str, list[str], str, str]]) -> None:
    tables, paths, reference = world["tables"], world["paths"], world["reference"]  # type: ignore[index]
    ever: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as folder, Registry(Path(folder) / "r.sqlite", create=True) as reg:
        for version, encoders, arm, variant in sequence:
            listed_before = reg.entries()
            report = reg.add(tables[variant], paths[version], encoders=encoders, arm=arm, correct=True)
            everything = reg.entries(current_only=False)
            by_id = dict(zip(everything["entry_id"].astype(int), everything["crs"], strict=True))
            # 1. Every entry ever listed keeps its CRS bit for bit.
            for entry_id, crs in ever.items():
                assert same_float(by_id[entry_id], crs), (entry_id, crs, by_id[entry_id])
            ever.update(by_id)
            # 2. Untouched (standard, encoder, arm) keys list the very same entry.
            listed_after = reg.entries().set_index(["standard_version", "encoder", "arm"])
            touched = {(version, e, arm) for e in encoders}
            for key, row in listed_before.set_index(["standard_version", "encoder", "arm"]).iterrows():
                if key in touched:
                    continue
                assert listed_after.loc[key, "entry_id"] == row["entry_id"]
                assert same_float(listed_after.loc[key, "crs"], row["crs"])
            # 3. Each new entry is what the scoring core gives on the whole cohort.
            for outcome in report.outcomes:
                expected = reference[(variant, version, arm)][outcome.encoder]
                assert same_float(outcome.crs, float(expected))
            # 4. One current entry per key, the latest one.
            assert not listed_after.index.duplicated().any()
        verified = verify_registry(reg)
        assert verified.ok, verified.problems


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=additions)
def test_additions_never_move_published_scores(world: dict[str, object], sequence: list) -> None:
    _check_sequence(world, sequence)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=additions)
def test_additions_never_move_published_scores_many(world: dict[str, object], sequence: list) -> None:
    _check_sequence(world, sequence)
