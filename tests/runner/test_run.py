"""The runner's machinery with a fake cell backend: grid, cell cache, resume, invalidation, manifest."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd
import pytest
import yaml

from crsbench_lib.errors import ConfigError
from crsbench_lib.results.io import read_results
from crsbench_lib.runner.config import Profile, load_profile
from crsbench_lib.runner.grid import Cell, Preparation, build_cells, cell_key
from crsbench_lib.runner.run import run_profile

CONFIG = {
    "name": "fake",
    "standard": "crs-template",
    "datasets": [
        {"kind": "phantom", "name": "derm", "sizes": {"train": 50, "val": 20, "test": 30}},
        {"kind": "phantom", "name": "cxr", "sizes": {"train": 50, "val": 20, "test": 30}},
    ],
    "encoders": ["pixels", "hog", "cnn_random"],
    "seeds": [0, 1],
    "arms": ["frozen", "lora"],
}


def _unit(*parts: object) -> float:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:6], "big") / 2**48


@dataclass
class FakeBackend:
    """Deterministic rows from the cell's identity; counts computed cells; can interrupt."""

    weights: dict[str, str] = field(default_factory=dict)
    code: str = "code-1"
    interrupt_after: int | None = None
    computed: list[Cell] = field(default_factory=list)

    def prepare(self, profile: Profile) -> Preparation:
        return Preparation(
            dataset_versions={d.name: f"v-{d.name}" for d in profile.datasets},
            dataset_domains={d.name: "dermatology" for d in profile.datasets},
            corruption_families={d.name: ("jpeg",) for d in profile.datasets},
            weights_hashes={(e, d.name): self.weights.get(e, f"w-{e}") for e in profile.encoders for d in profile.datasets},
            neural_encoders=tuple(e for e in profile.encoders if e.startswith("cnn")),
            code_versions={"frozen": self.code, "lora": self.code + "-lora"},
        )

    def compute(self, profile: Profile, prep: Preparation, cells: Sequence[Cell]) -> Iterator[tuple[Cell, pd.DataFrame]]:
        for cell in cells:
            if self.interrupt_after is not None and len(self.computed) >= self.interrupt_after:
                raise KeyboardInterrupt
            self.computed.append(cell)
            base = {"encoder": cell.encoder, "dataset": cell.dataset, "domain": "dermatology", "seed": cell.seed,
                    "arm": cell.arm, "label_fraction": 1.0, "calibration": "none", "n_test": 30,
                    "config_hash": profile.config_hash}
            auroc = 0.6 + 0.3 * _unit(cell, prep.weights_hashes[(cell.encoder, cell.dataset)])
            rows = [
                {**base, "condition": "clean", "corruption": "none", "severity": 0, "auroc": auroc,
                 "ece": 0.1 * _unit(cell, "e"), "brier": 0.2, "nll": 0.7, "accuracy": 0.6},
                {**base, "condition": "corruption", "corruption": "jpeg", "severity": 3, "auroc": auroc - 0.05,
                 "ece": 0.12, "brier": 0.25, "nll": 0.8, "accuracy": 0.55},
            ]
            yield cell, pd.DataFrame(rows)


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("CRSBENCH_CACHE", str(root))
    return root


def profile_from(tmp_path: Path, config: dict, name: str = "p.yaml") -> Profile:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config))
    return load_profile(path)


def test_grid_excludes_handcrafted_encoders_from_lora(tmp_path: Path, cache: Path) -> None:
    profile = profile_from(tmp_path, CONFIG)
    prep = FakeBackend().prepare(profile)
    cells = build_cells(profile, prep)
    assert len([c for c in cells if c.arm == "frozen"]) == 3 * 2 * 2
    assert {c.encoder for c in cells if c.arm == "lora"} == {"cnn_random"}
    assert len(cells) == 12 + 4


def test_run_writes_table_cells_and_manifest(tmp_path: Path, cache: Path) -> None:
    profile = profile_from(tmp_path, CONFIG)
    backend = FakeBackend()
    outcome = run_profile(profile, out_dir=tmp_path / "out", progress=False, backend=backend)
    assert outcome.n_cells == 16 and outcome.n_computed == 16 and outcome.n_reused == 0
    table = read_results(outcome.results_path)
    assert len(table) == 32 == outcome.n_rows
    assert set(table["config_hash"]) == {profile.config_hash}
    assert len(list((outcome.out_dir / "cells").glob("*.parquet"))) == 16
    manifest = json.loads(outcome.manifest_path.read_text())
    assert manifest["config_hash"] == profile.config_hash
    assert manifest["config"]["encoders"] == ["pixels", "hog", "cnn_random"]
    assert "numpy" in manifest["library_versions"] and manifest["host"]["cpu_count"] >= 1
    assert len(manifest["cells"]) == 16 and all(c["seconds"] is not None for c in manifest["cells"])
    assert manifest["weights_hashes"]["pixels@derm"] == "w-pixels"
    assert manifest["dataset_versions"] == {"derm": "v-derm", "cxr": "v-cxr"}


def test_default_out_dir_is_under_the_cache(tmp_path: Path, cache: Path) -> None:
    profile = profile_from(tmp_path, CONFIG)
    outcome = run_profile(profile, progress=False, backend=FakeBackend())
    assert outcome.out_dir == cache / "runs" / "fake"


def test_rerun_reuses_every_cell_and_writes_the_same_bytes(tmp_path: Path, cache: Path) -> None:
    profile = profile_from(tmp_path, CONFIG)
    first = run_profile(profile, out_dir=tmp_path / "out", progress=False, backend=FakeBackend())
    before = first.results_path.read_bytes()
    backend = FakeBackend()
    second = run_profile(profile, out_dir=tmp_path / "out", progress=False, backend=backend)
    assert backend.computed == [] and second.n_reused == 16
    assert second.results_path.read_bytes() == before


def test_interrupted_run_resumes_to_the_same_bytes(tmp_path: Path, cache: Path) -> None:
    profile = profile_from(tmp_path, CONFIG)
    reference = run_profile(profile, out_dir=tmp_path / "ref", progress=False, backend=FakeBackend())
    with pytest.raises(KeyboardInterrupt):
        run_profile(profile, out_dir=tmp_path / "out", progress=False, backend=FakeBackend(interrupt_after=5))
    assert len(list((tmp_path / "out" / "cells").glob("*.parquet"))) == 5
    assert not (tmp_path / "out" / "results.parquet").exists()
    backend = FakeBackend()
    resumed = run_profile(profile, out_dir=tmp_path / "out", progress=False, backend=backend)
    assert len(backend.computed) == 11 and resumed.n_reused == 5
    assert resumed.results_path.read_bytes() == reference.results_path.read_bytes()


def test_changes_invalidate_exactly_the_cells_they_affect(tmp_path: Path, cache: Path) -> None:
    profile = profile_from(tmp_path, CONFIG)
    out = tmp_path / "out"
    run_profile(profile, out_dir=out, progress=False, backend=FakeBackend())

    # New weights for one encoder: only its cells (both arms) are recomputed.
    backend = FakeBackend(weights={"cnn_random": "w-new"})
    run_profile(profile, out_dir=out, progress=False, backend=backend)
    assert {c.encoder for c in backend.computed} == {"cnn_random"} and len(backend.computed) == 8

    # One more seed: only the new seed's cells; other config parts untouched.
    more_seeds = profile_from(tmp_path, {**CONFIG, "seeds": [0, 1, 2]}, "q.yaml")
    backend = FakeBackend(weights={"cnn_random": "w-new"})
    outcome = run_profile(more_seeds, out_dir=out, progress=False, backend=backend)
    assert {c.seed for c in backend.computed} == {2} and len(backend.computed) == 8
    # Reused rows carry the new run's config hash.
    assert set(read_results(outcome.results_path)["config_hash"]) == {more_seeds.config_hash}

    # A LoRA setting touches only LoRA cells; a probe setting touches all.
    lora_change = profile_from(tmp_path, {**CONFIG, "lora": {"rank": 8}}, "r.yaml")
    backend = FakeBackend(weights={"cnn_random": "w-new"})
    run_profile(lora_change, out_dir=out, progress=False, backend=backend)
    assert {c.arm for c in backend.computed} == {"lora"} and len(backend.computed) == 4

    # A new code version of the computing code: every cell.
    backend = FakeBackend(weights={"cnn_random": "w-new"}, code="code-2")
    run_profile(lora_change, out_dir=out, progress=False, backend=backend)
    assert len(backend.computed) == 16


def test_keys_differ_per_cell_and_ignore_the_profile_name(tmp_path: Path, cache: Path) -> None:
    profile = profile_from(tmp_path, CONFIG)
    prep = FakeBackend().prepare(profile)
    cells = build_cells(profile, prep)
    keys = [cell_key(profile, prep, c) for c in cells]
    assert len(set(keys)) == len(keys)
    renamed = profile_from(tmp_path, {**CONFIG, "name": "other", "description": "x"}, "n.yaml")
    assert [cell_key(renamed, prep, c) for c in cells] == keys


def test_a_corrupt_cell_file_is_recomputed(tmp_path: Path, cache: Path) -> None:
    profile = profile_from(tmp_path, CONFIG)
    first = run_profile(profile, out_dir=tmp_path / "out", progress=False, backend=FakeBackend())
    victim = sorted((tmp_path / "out" / "cells").glob("*.parquet"))[0]
    victim.write_bytes(victim.read_bytes()[:50])
    (tmp_path / "out" / "cells" / ".leftover.parquet").write_bytes(b"partial")
    backend = FakeBackend()
    second = run_profile(profile, out_dir=tmp_path / "out", progress=False, backend=backend)
    assert len(backend.computed) == 1
    assert second.results_path.read_bytes() == first.results_path.read_bytes()
    assert not (tmp_path / "out" / "cells" / ".leftover.parquet").exists()


def test_bad_jobs_and_empty_grid(tmp_path: Path, cache: Path) -> None:
    profile = profile_from(tmp_path, CONFIG)
    with pytest.raises(ConfigError, match="--jobs must be a positive integer"):
        run_profile(profile, out_dir=tmp_path / "o", jobs=0, progress=False, backend=FakeBackend())
    lora_only = replace(profile, arms=("lora",), encoders=("pixels",))
    with pytest.raises(ConfigError, match="grid is empty"):
        run_profile(lora_only, out_dir=tmp_path / "o", progress=False, backend=FakeBackend())


def test_unreachable_scheduler_fails_fast_before_any_work(tmp_path: Path, cache: Path, monkeypatch) -> None:
    # "Fast" is the 1 s connect timeout below, not a wall-clock assertion (those flake on a loaded machine).
    monkeypatch.setattr("crsbench_lib.runner.executors.SCHEDULER_CONNECT_TIMEOUT_S", 1.0)
    profile = profile_from(tmp_path, CONFIG)
    backend = FakeBackend()
    with pytest.raises(ConfigError, match="no Dask scheduler reachable within 1 s"):
        run_profile(profile, out_dir=tmp_path / "o", scheduler="tcp://127.0.0.1:9", progress=False, backend=backend)
    assert backend.computed == [] and not (tmp_path / "o").exists()
