"""Adding entries, idempotence, corrections and the standards lifecycle."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from crsbench_lib.errors import ReferenceStandardError, RegistryError, SchemaError
from crsbench_lib.registry import Registry, verify_registry
from crsbench_lib.registry.entries import SCORE_FIELDS
from crsbench_lib.scoring.crs import score_results
from crsbench_lib.standard import ReferenceStandard, load_template, save_standard


def test_add_publishes_entries_equal_to_the_scoring_core(
    db_path: Path, small_results: pd.DataFrame, standard_v1: ReferenceStandard, files: dict[str, Path]
) -> None:
    with Registry(db_path, create=True) as reg:
        report = reg.add(small_results, files["v1"], encoders=["enc05", "enc02"])
        assert report.standard_registered and report.standard.version == "test-v1"
        assert report.standard.content_hash == standard_v1.content_hash
        assert [o.action for o in report.outcomes] == ["added", "added"]
        listed = reg.entries()
    # Each entry equals, to the last bit, the CRS of the scoring core on the whole table.
    reference = score_results(small_results, standard_v1).set_index("encoder")
    for row in listed.itertuples():
        assert row.crs == reference.loc[row.encoder, "crs"]
        assert row.raw_D == reference.loc[row.encoder, "D"]
        assert row.norm_R == reference.loc[row.encoder, "s_R"]
    assert list(listed["rank"]) == [1, 2]
    assert listed["crs"].is_monotonic_decreasing


def test_identical_inputs_are_idempotent(db_path: Path, small_results: pd.DataFrame, files: dict[str, Path]) -> None:
    with Registry(db_path, create=True) as reg:
        first = reg.add(small_results, files["v1"], encoders=["enc01"])
        n_log = len(reg.log())
        again = reg.add(small_results.sample(frac=1.0, random_state=1), files["v1"], encoders=["enc01"])
        assert again.outcomes[0].action == "unchanged"
        assert again.outcomes[0].entry_id == first.outcomes[0].entry_id
        assert again.n_written == 0 and not again.standard_registered
        assert len(reg.entries(current_only=False)) == 1
        assert len(reg.log()) == n_log  # nothing written, not even to the log


def test_changed_rows_need_an_explicit_correction(
    db_path: Path, small_results: pd.DataFrame, files: dict[str, Path]
) -> None:
    fixed = small_results.copy()
    mask = (fixed["encoder"] == "enc04") & (fixed["condition"] == "clean")
    fixed.loc[mask, "ece"] = fixed.loc[mask, "ece"] * 0.5
    with Registry(db_path, create=True) as reg:
        original = reg.add(small_results, files["v1"], encoders=["enc04", "enc06"]).outcomes[0]
        with pytest.raises(RegistryError, match="pass --correct"):
            reg.add(fixed, files["v1"], encoders=["enc04", "enc07"])
        assert len(reg.entries()) == 2  # enc07 was not added either: all or nothing
        correction = reg.add(fixed, files["v1"], encoders=["enc04"], correct=True, note="ECE bug fixed")
        outcome = correction.outcomes[0]
        assert outcome.action == "corrected" and outcome.supersedes == original.entry_id
        current = reg.entries()
        assert int(current.loc[current["encoder"] == "enc04", "entry_id"].iloc[0]) == outcome.entry_id
        everything = reg.entries(current_only=False)
        old = everything[everything["entry_id"] == original.entry_id].iloc[0]
        assert old["crs"] == original.crs and old["superseded_by"] == outcome.entry_id and pd.isna(old["rank"])
        history = reg.history("enc04")
        assert list(history["entry_id"]) == [original.entry_id, outcome.entry_id]
        assert reg.show("enc04")[0]["provenance"]["note"] == "ECE bug fixed"
        assert verify_registry(reg).ok


def test_unknown_encoder_and_arm_are_refused(db_path: Path, small_results: pd.DataFrame, files: dict[str, Path]) -> None:
    with Registry(db_path, create=True) as reg:
        with pytest.raises(RegistryError, match="encoder 'nope' has no rows"):
            reg.add(small_results, files["v1"], encoders=["enc00", "nope"])
        with pytest.raises(RegistryError, match="unknown arm"):
            reg.add(small_results, files["v1"], arm="finetuned")
        assert reg.entries().empty and reg.standards().empty


def test_arms_are_separate_entries(db_path: Path, small_results: pd.DataFrame, files: dict[str, Path]) -> None:
    with Registry(db_path, create=True) as reg:
        reg.add(small_results, files["v1"], encoders=["enc00"])
        lora = reg.add(small_results, "test-v1", encoders=["enc00"], arm="lora")
        assert lora.outcomes[0].action == "added"
        listed = reg.entries()
        assert set(listed["candidate"]) == {"enc00", "enc00 [lora]"}
        assert len(reg.show("enc00")) == 2


def test_standard_by_registered_version_and_unknown_version(
    db_path: Path, small_results: pd.DataFrame, files: dict[str, Path]
) -> None:
    with Registry(db_path, create=True) as reg:
        with pytest.raises(RegistryError, match="unknown standard 'test-v1'.*none registered yet"):
            reg.add(small_results, "test-v1")
        reg.register_standard(files["v1"])
        report = reg.add(small_results, "test-v1", encoders=["enc03"])
        assert not report.standard_registered and report.outcomes[0].action == "added"
        with pytest.raises(RegistryError, match="registered: test-v1"):
            reg.get_standard("test-v9")


def test_same_version_with_other_content_is_refused(
    db_path: Path, small_results: pd.DataFrame, standard_v1: ReferenceStandard, tmp_path: Path, files: dict[str, Path]
) -> None:
    import dataclasses

    other = dataclasses.replace(standard_v1, weights={"dominance": 0.5, "balance": 0.25, "floor": 0.25})
    path = save_standard(other, tmp_path / "conflict.yaml")
    with Registry(db_path, create=True) as reg:
        reg.add(small_results, files["v1"], encoders=["enc00"])
        with pytest.raises(RegistryError, match="already registered with another content"):
            reg.add(small_results, path, encoders=["enc01"])
        assert len(reg.entries()) == 1


def test_standard_that_cannot_score_is_refused(db_path: Path, small_results: pd.DataFrame, tmp_path: Path) -> None:
    template = save_standard(load_template(), tmp_path / "template.yaml")
    with Registry(db_path, create=True) as reg:
        with pytest.raises(ReferenceStandardError, match="empty panel"):
            reg.add(small_results, template)
        with pytest.raises(ReferenceStandardError, match="empty panel"):
            reg.register_standard(template)
        assert reg.standards().empty


def test_invalid_inputs_leave_the_database_unchanged(
    db_path: Path, small_results: pd.DataFrame, files: dict[str, Path], tmp_path: Path
) -> None:
    with Registry(db_path, create=True) as reg:
        reg.add(small_results, files["v1"], encoders=["enc00"])
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before = (db_path.read_bytes(), db_path.stat().st_mtime_ns)
    broken_standard = tmp_path / "broken.yaml"
    broken_standard.write_text(files["v1"].read_text().replace("floor: 0.3", "floor: 0.9"), encoding="utf-8")
    with Registry(db_path) as reg:
        with pytest.raises(ReferenceStandardError, match="weights"):
            reg.add(small_results, broken_standard)
        with pytest.raises(SchemaError, match="auroc"):
            reg.add(small_results.assign(auroc=np.nan), files["v1"])
        with pytest.raises(SchemaError):
            reg.add(small_results.drop(columns=["ece"]), files["v1"])
        dropped = small_results[~((small_results["encoder"] == "enc05") & (small_results["condition"] == "clean"))]
        with pytest.raises(SchemaError, match="no clean row"):
            reg.add(dropped, files["v1"], encoders=["enc05"])
    assert (db_path.read_bytes(), db_path.stat().st_mtime_ns) == before


def test_new_standard_version_changes_no_older_entry(
    db_path: Path, small_results: pd.DataFrame, files: dict[str, Path]
) -> None:
    with Registry(db_path, create=True) as reg:
        some = ["enc00", "enc03", "enc05"]
        reg.add(small_results, files["v1"], encoders=some)
        frozen_v1 = reg.entries("test-v1")
        report = reg.add(small_results, files["v2"], encoders=some)
        assert report.standard_registered
        pd.testing.assert_frame_equal(reg.entries("test-v1"), frozen_v1, check_exact=True)
        assert reg.standard_versions() == ["test-v1", "test-v2"]
        both = reg.entries()
        assert list(dict.fromkeys(both["standard_version"])) == ["test-v1", "test-v2"]
        # Ranks restart per standard.
        assert (both.groupby("standard_version")["rank"].min() == 1).all()
        assert len(reg.history("enc00")) == 2


def test_reads_of_an_empty_or_unknown_registry(db_path: Path) -> None:
    with Registry(db_path, create=True) as reg:
        assert reg.entries().empty
        with pytest.raises(RegistryError, match="registry is empty"):
            reg.history("enc00")
        with pytest.raises(RegistryError, match="no entry for encoder"):
            reg.show("enc00")
        with pytest.raises(RegistryError, match="unknown standard version"):
            reg.entries("v1")
        with pytest.raises(RegistryError, match="no entry #3"):
            reg.rows(3)


def test_stored_rows_and_profiles(db_path: Path, small_results: pd.DataFrame, files: dict[str, Path]) -> None:
    with Registry(db_path, create=True) as reg:
        outcome = reg.add(small_results, files["v1"], encoders=["enc02"]).outcomes[0]
        rows = reg.rows(outcome.entry_id)
        expected = small_results[(small_results["encoder"] == "enc02") & (small_results["arm"] == "frozen")]
        assert len(rows) == len(expected)
        profiles = reg.profiles("test-v1")
        assert list(profiles.columns) == ["D", "C", "L", "R"] and list(profiles.index) == ["enc02"]
        entry = reg.entries().iloc[0]
        assert all(isinstance(entry[f], float) for f in SCORE_FIELDS)
        assert len(reg.head_hash()) == 64


def test_identical_readdition_is_not_rescored_but_a_stale_check_is(
    db_path: Path, small_results: pd.DataFrame, files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from crsbench_lib.registry import store
    from crsbench_lib.registry.rows import rows_hash

    calls: list[int] = []
    real = store.recompute
    monkeypatch.setattr(store, "recompute", lambda *a: calls.append(1) or real(*a))
    with Registry(db_path, create=True) as reg:
        reg.add(small_results, files["v1"], encoders=["enc00", "enc01"])
        assert len(calls) == 2
        reg.add(small_results, files["v1"], encoders=["enc00", "enc01"])
        assert len(calls) == 2  # identical inputs: looked up, not scored again
        # Another writer could change the registry between the look-up and the lock:
        # an encoder believed published is then scored inside the transaction.
        rows = small_results[(small_results["encoder"] == "enc02") & (small_results["arm"] == "frozen")]
        monkeypatch.setattr(Registry, "_published_hashes", lambda self, std, arm: {"enc02": rows_hash(rows)})
        outcome = reg.add(small_results, files["v1"], encoders=["enc02"]).outcomes[0]
        assert outcome.action == "added" and len(calls) == 3
        reference = score_results(small_results, files["v1"]).set_index("encoder")
        assert outcome.crs == reference.loc["enc02", "crs"]
        assert verify_registry(reg).ok


def test_value_on_a_lower_is_better_worst_anchor_round_trips(
    db_path: Path, small_results: pd.DataFrame, standard_v1: ReferenceStandard, tmp_path: Path
) -> None:
    # (x - worst) / (best - worst) is -0.0 when x == worst and best < worst;
    # SQLite stores -0.0 as 0.0, which must not read as tampering.
    import dataclasses

    from crsbench_lib.scoring.axes import encoder_profiles, raw_axes

    raw_c = float(encoder_profiles(raw_axes(small_results, ece_estimator=standard_v1.ece_estimator)).loc["enc03", "C"])
    anchors = {**standard_v1.anchors, "C": (raw_c, 0.0)}
    edge = dataclasses.replace(standard_v1, version="edge", anchors=anchors,
                               panel_profiles=standard_v1.panel_profiles.clip(0.0, 1.0))
    path = save_standard(edge, tmp_path / "edge.yaml")
    with Registry(db_path, create=True) as reg:
        reg.add(small_results, path, encoders=["enc03"])
        entry = reg.entries().iloc[0]
        assert entry["norm_C"] == 0.0 and np.copysign(1.0, entry["norm_C"]) == 1.0
        report = verify_registry(reg)
        assert report.ok, report.problems


@pytest.mark.parametrize(
    "statement",
    ["UPDATE entries SET crs = 1.0", "DELETE FROM entries", "UPDATE standards SET yaml_text = ''",
     "DELETE FROM standards", "UPDATE log SET event = 'x'", "DELETE FROM log"],
)
def test_published_rows_are_append_only(db_path: Path, small_results: pd.DataFrame, files: dict[str, Path],
                                        statement: str) -> None:
    with Registry(db_path, create=True) as reg:
        reg.add(small_results, files["v1"], encoders=["enc00"])
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            reg.connection.execute(statement)
        assert verify_registry(reg).ok
