"""The runner's machinery with a fake cell backend: grid, cell cache, resume, invalidation, manifest."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd
import pytest
import yaml

from crsbench_lib.errors import ConfigError
from crsbench_lib.results.io import read_results
from crsbench_lib.runner.config import load_profile
from crsbench_lib.runner.profile import Profile
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
    lora_change = profile_from(tmp_path, {**CONFIG, "lora": {"rank": 16}}, "r.yaml")
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


# ---------------------------------------------------------------------------
# Faults: damaged cells, a full disk, two runs on one folder
# ---------------------------------------------------------------------------


def _flip(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position % len(data)] ^= 0x01
    path.write_bytes(bytes(data))


def test_flipped_bytes_recompute_exactly_the_damaged_cells(tmp_path: Path, cache: Path, capsys) -> None:
    profile = profile_from(tmp_path, CONFIG)
    out = tmp_path / "out"
    first = run_profile(profile, out_dir=out, progress=False, backend=FakeBackend())
    before = first.results_path.read_bytes()
    prep = FakeBackend().prepare(profile)
    keys = {c: cell_key(profile, prep, c) for c in build_cells(profile, prep)}
    cells = sorted(keys)
    damaged = {cells[0]: ".parquet", cells[3]: ".parquet", cells[7]: ".json", cells[12]: ".json"}
    for number, (cell, suffix) in enumerate(damaged.items()):
        _flip(out / "cells" / f"{keys[cell]}{suffix}", 97 * number + 41)
    capsys.readouterr()
    backend = FakeBackend()
    second = run_profile(profile, out_dir=out, progress=False, backend=backend)
    warnings = [line for line in capsys.readouterr().err.splitlines() if "is damaged, recomputing it" in line]
    assert sorted(backend.computed) == sorted(damaged) and second.n_reused == 16 - len(damaged)
    assert len(warnings) == len(damaged)
    assert all(any(keys[cell] in line and cell.label in line for line in warnings) for cell in damaged)
    assert second.results_path.read_bytes() == before


def test_cells_from_an_older_version_are_recomputed_with_one_line(tmp_path: Path, cache: Path, capsys) -> None:
    profile = profile_from(tmp_path, CONFIG)
    out = tmp_path / "out"
    before = run_profile(profile, out_dir=out, progress=False, backend=FakeBackend()).results_path.read_bytes()
    for sidecar in (out / "cells").glob("*.json"):
        info = json.loads(sidecar.read_text())
        sidecar.write_text(json.dumps({k: info[k] for k in ("cell", "seconds", "finished_at", "host", "pid")}))
    capsys.readouterr()
    backend = FakeBackend()
    again = run_profile(profile, out_dir=out, progress=False, backend=backend)
    err = capsys.readouterr().err
    assert len(backend.computed) == 16 and err.count("without checksums") == 1 and "damaged" not in err
    assert again.results_path.read_bytes() == before


def _full_after(allowed: int):
    """A posix_fallocate that succeeds ``allowed`` times, then finds the disk full."""
    import errno

    calls = {"n": 0}
    real = os.posix_fallocate

    def fallocate(fd: int, offset: int, length: int) -> None:
        calls["n"] += 1
        if calls["n"] > allowed:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd, offset, length)

    return fallocate


def test_a_full_disk_is_one_line_exit_2_and_the_run_resumes(tmp_path: Path, cache: Path, capsys, monkeypatch) -> None:
    from crsbench_lib.cli import main

    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    reference = run_profile(load_profile(config), out_dir=tmp_path / "ref", progress=False, backend=FakeBackend())
    backend = FakeBackend()
    monkeypatch.setattr("crsbench_lib.runner.run._default_backend", lambda: backend)
    out = tmp_path / "out"
    with monkeypatch.context() as full:
        full.setattr(os, "posix_fallocate", _full_after(5))
        code = main(["run", "--config", str(config), "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"crsbench: error: {out / 'cells'}: no space left on device (") and " needed, " in err
    stored = [p for p in (out / "cells").iterdir()]
    assert len([p for p in stored if p.suffix == ".parquet"]) == 5
    assert not [p for p in stored if p.name.startswith(".")] and not (out / "results.parquet").exists()

    backend.computed.clear()
    assert main(["run", "--config", str(config), "--out", str(out), "--no-progress"]) == 0
    assert len(backend.computed) == 11 and "damaged" not in capsys.readouterr().err
    assert (out / "results.parquet").read_bytes() == reference.results_path.read_bytes()


RUN_WITH_A_GATE = """
import sys, time
from pathlib import Path
import importlib.util

spec = importlib.util.spec_from_file_location("fake_run", sys.argv[1])
fake = sys.modules["fake_run"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fake)
log, gate = Path(sys.argv[4]), Path(sys.argv[5])


class Logged(fake.FakeBackend):
    def compute(self, profile, prep, cells):
        while not gate.exists():  # hold the folder until the test lets go
            time.sleep(0.01)
        for cell, rows in super().compute(profile, prep, cells):
            with open(log, "a") as handle:
                handle.write(cell.label + "\\n")
            yield cell, rows


import crsbench_lib.runner.run as run
from crsbench_lib.cli import main

run._default_backend = Logged
sys.exit(main(["run", "--config", sys.argv[2], "--out", sys.argv[3], "--no-progress", *sys.argv[6:]]))
"""


def test_two_runs_on_one_folder_never_compute_a_cell_twice(tmp_path: Path, cache: Path, capsys) -> None:
    from crsbench_lib.cli import main

    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    out, log, gate = tmp_path / "out", tmp_path / "computed.log", tmp_path / "go"
    command = [sys.executable, "-c", RUN_WITH_A_GATE, __file__, str(config), str(out), str(log), str(gate)]
    env = {**os.environ, "CRSBENCH_CACHE": str(cache)}
    first = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lock = out / ".crsbench-run.lock"
    deadline = time.monotonic() + 240  # generous: a loaded machine starts Python slowly
    while not (lock.is_file() and lock.read_text()) and time.monotonic() < deadline and first.poll() is None:
        time.sleep(0.01)
    assert first.poll() is None, first.communicate()[1][-2000:]
    # A third run without --wait stops at once, naming the holder.
    assert main(["run", "--config", str(config), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"is in use by another run (pid {first.pid} on " in err and err.count("\n") == 1
    second = subprocess.Popen([*command, "--wait"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert second.stderr is not None
    for line in second.stderr:  # blocks until the second run says it waits
        if "crsbench: waiting for the run holding" in line:
            break
    else:
        raise AssertionError("the second run ended without waiting")
    gate.touch()
    first_out, first_err = first.communicate(timeout=300)
    second_out, second_err = second.communicate(timeout=300)
    assert first.returncode == 0 and second.returncode == 0, first_err + second_err
    assert "(16 computed, 0 reused)" in first_out and "(0 computed, 16 reused)" in second_out
    computed = log.read_text().splitlines()
    assert len(computed) == len(set(computed)) == 16


@dataclass
class ThreadsBackend(FakeBackend):
    """Records in each row the torch thread count the cell ran with."""

    def compute(self, profile: Profile, prep: Preparation, cells: Sequence[Cell]) -> Iterator[tuple[Cell, pd.DataFrame]]:
        import torch

        for cell, rows in super().compute(profile, prep, cells):
            yield cell, rows.assign(nll=float(torch.get_num_threads()))


@pytest.mark.parametrize("jobs", [1, 2])
def test_every_cell_runs_on_the_same_torch_threads_whatever_the_jobs(tmp_path: Path, cache: Path, jobs: int) -> None:
    # 1 vs 2 torch threads change a ViT's or k-means' embeddings in their last bits, and
    # with them the table; so the count must not follow --jobs or the machine's cores.
    import torch

    from crsbench_lib.runner.executors import TORCH_THREADS

    before = torch.get_num_threads()
    profile = profile_from(tmp_path, {**CONFIG, "seeds": [0]})
    outcome = run_profile(profile, out_dir=tmp_path / "out", jobs=jobs, progress=False, backend=ThreadsBackend())
    assert set(read_results(outcome.results_path)["nll"]) == {float(TORCH_THREADS)}
    torch.set_num_threads(before)


@dataclass
class FactsBackend(FakeBackend):
    """A fake backend whose LoRA cells also yield manifest facts."""

    def compute(self, profile: Profile, prep: Preparation, cells: Sequence[Cell]) -> Iterator[tuple]:
        for cell, rows in super().compute(profile, prep, cells):
            facts = {"lora": {"max_steps": 3, "adapters": [{"best_step": cell.seed + 1}]}} if cell.arm == "lora" else None
            yield (cell, rows, None, facts) if facts else (cell, rows)


def test_cell_facts_reach_the_manifest_and_survive_reuse(tmp_path: Path, cache: Path) -> None:
    profile = profile_from(tmp_path, CONFIG)
    for attempt in range(2):  # the second run reuses every cell and its stored facts
        result = run_profile(profile, out_dir=tmp_path / "out", backend=FactsBackend(), progress=False)
        entries = json.loads(result.manifest_path.read_text())["cells"]
        lora = [e for e in entries if e["cell"].endswith("/lora")]
        assert lora and all(e["reused"] is bool(attempt) for e in entries)
        assert all(e["lora"]["adapters"][0]["best_step"] == int(e["cell"].split("/seed")[1].split("/")[0]) + 1
                   for e in lora)
        assert not any("lora" in e for e in entries if not e["cell"].endswith("/lora"))

