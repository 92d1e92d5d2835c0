"""Exporting entries as CSV and JSON."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from crsbench_lib.errors import RegistryError
from crsbench_lib.registry import Registry
from crsbench_lib.registry.entries import SCORE_FIELDS
from crsbench_lib.registry.export import export_registry, export_text


@pytest.fixture(scope="module")
def registry_path(tmp_path_factory: pytest.TempPathFactory, small_results: pd.DataFrame,
                  files: dict[str, Path]) -> Path:
    path = tmp_path_factory.mktemp("export") / "registry.sqlite"
    corrected = small_results.assign(ece=small_results["ece"] * 0.99, ece_debiased=small_results["ece_debiased"] * 0.99)
    with Registry(path, create=True) as reg:
        reg.add(small_results, files["v1"], encoders=["enc00", "enc01"])
        reg.add(corrected, files["v1"], encoders=["enc01"], correct=True)
    return path


def test_csv_is_exact_and_holds_the_history(registry_path: Path) -> None:
    with Registry(registry_path) as reg:
        text = export_text(reg, "csv")
        entries = reg.entries(current_only=False)
    frame = pd.read_csv(io.StringIO(text), float_precision="round_trip")
    assert len(frame) == 3 and set(frame["entry_id"]) == {1, 2, 3}
    merged = frame.set_index("entry_id").loc[entries["entry_id"]]
    for name in SCORE_FIELDS:
        assert (merged[name].to_numpy() == entries[name].to_numpy()).all()
    assert frame["standard_content_hash"].str.startswith("sha256:").all()
    assert json.loads(frame["provenance"].iloc[0])["registered_by"].startswith("crsbench")


def test_json_has_head_and_parsed_provenance(registry_path: Path) -> None:
    with Registry(registry_path) as reg:
        content = json.loads(export_text(reg, "json", current_only=True))
        assert content["head_hash"] == reg.head_hash()
    assert len(content["entries"]) == 2
    assert {e["encoder"] for e in content["entries"]} == {"enc00", "enc01"}
    assert all(isinstance(e["provenance"], dict) for e in content["entries"])
    corrected = next(e for e in content["entries"] if e["encoder"] == "enc01")
    assert corrected["supersedes"] == 2 and corrected["superseded_by"] is None


def test_export_to_file_and_bad_format(registry_path: Path, tmp_path: Path) -> None:
    with Registry(registry_path) as reg:
        out = export_registry(reg, "json", tmp_path / "sub" / "export.json")
        assert json.loads(Path(out).read_text())["entries"]
        with pytest.raises(RegistryError, match="unknown export format 'xml'"):
            export_text(reg, "xml")
