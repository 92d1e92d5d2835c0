"""End to end: the shipped ``quick`` profile through the real pipeline, then scored with the scoring core."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from crsbench_lib.results.io import read_results
from crsbench_lib.runner.config import load_profile
from crsbench_lib.runner.run import run_profile


@pytest.mark.slow
def test_quick_profile_end_to_end_and_scored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from crsbench_lib.scoring.crs import score_results
    from crsbench_lib.scoring.freeze import freeze_standard
    from crsbench_lib.standard import load_standard

    monkeypatch.setenv("CRSBENCH_CACHE", str(tmp_path / "cache"))
    profile = load_profile("quick")
    outcome = run_profile(profile, progress=False)
    assert outcome.out_dir == tmp_path / "cache" / "runs" / "quick"
    table = read_results(outcome.results_path)

    frozen = table[table["arm"] == "frozen"]
    lora = table[table["arm"] == "lora"]
    assert set(frozen["encoder"]) == set(profile.encoders)
    assert set(lora["encoder"]) == set(profile.lora.encoders)
    assert set(table["dataset"]) == {"derm", "fundus", "cxr"} and set(table["seed"]) == set(profile.seeds)
    assert set(table["condition"]) == {"clean", "label_fraction", "corruption", "shift", "cue_removed"}
    # World v4: every dataset has a second site and a cue-removed test split.
    assert set(table.loc[table["condition"] == "shift", "dataset"]) == {"derm", "fundus", "cxr"}
    assert set(table.loc[table["condition"] == "cue_removed", "dataset"]) == {"derm", "fundus", "cxr"}
    assert len(table) == outcome.n_rows and outcome.n_cells == 8 * 3 * 2 + 2 * 3 * 2
    clean = frozen[(frozen["condition"] == "clean") & (frozen["calibration"] == "none")]
    # The v2 phantoms are hard for weak encoders on the quick profile's 200 test images: a single
    # cell may fall just below chance, but every encoder learns something on average.
    assert clean["auroc"].between(0.0, 1.0).all()
    assert (clean.groupby("encoder")["auroc"].mean() > 0.5).all()
    assert clean.groupby("encoder")["auroc"].mean().max() - clean.groupby("encoder")["auroc"].mean().min() > 0.02

    standard = freeze_standard(table, "quick-test", base=load_standard(profile.standard_path),
                               created="2026-01-01T00:00:00Z")
    scores = score_results(table, standard, arm="frozen")
    assert len(scores) == len(profile.encoders)
    assert np.all((scores["crs"] >= 0) & (scores["crs"] <= 1))
    assert sorted(scores["rank"]) == list(range(1, len(profile.encoders) + 1))
    adapted = score_results(table, standard, arm="lora")
    assert set(adapted["encoder"]) == set(profile.lora.encoders)

    manifest = json.loads(outcome.manifest_path.read_text())
    assert manifest["lora_encoders"] == sorted(profile.lora.encoders)
    assert manifest["standard"]["version"] == profile.standard_version

    rerun = run_profile(profile, progress=False)
    assert rerun.n_computed == 0 and rerun.results_path.read_bytes() == outcome.results_path.read_bytes()
