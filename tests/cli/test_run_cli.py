"""``crsbench run``: bad input is one line and exit 2 before any work; a killed run resumes exactly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from crsbench_lib.cli import main

TINY = {
    "name": "tiny",
    "standard": "crs-template",
    "datasets": [
        {"kind": "phantom", "name": "derm", "sizes": {"train": 120, "val": 60, "test": 80}},
        {"kind": "phantom", "name": "cxr", "sizes": {"train": 120, "val": 60, "test": 80, "shift_test": 60}},
    ],
    "encoders": ["pixels", "hog"],
    "seeds": [0, 1, 2, 3],
    "corruptions": {"families": ["gaussian_noise"], "severities": [2], "n_images": 40},
    "probe": {"C": [0.1, 1.0], "max_iter": 50, "calibrators": ["temperature"]},
}


# ``crsbench run`` with a backend that stops after its first ``n`` stored cells and
# waits for a signal: an interrupt test then never races a run that finishes first
# (on a loaded machine the whole grid can end between two polls of the parent).
# It answers SIGINT as Python does in a terminal: a shell that starts the test suite
# in the background (``.ci/run &``) hands its children SIGINT ignored, and Python then
# installs no KeyboardInterrupt handler, so the run would wait for the signal forever.
BLOCKING_RUN = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
from crsbench_lib.cli import main
from crsbench_lib.runner import cell

class BlockAfterCells(cell.RealBackend):
    left = int(sys.argv[1])

    def compute(self, profile, prep, cells):
        for item in super().compute(profile, prep, cells):
            yield item  # the parent stores this cell before asking for the next one
            BlockAfterCells.left -= 1
            if BlockAfterCells.left <= 0:
                # Everything before this line is done: the test may signal now.
                open(sys.argv[2], "w").close()
            while BlockAfterCells.left <= 0:
                signal.pause()

cell.RealBackend = BlockAfterCells
sys.exit(main(sys.argv[3:]))
"""


def blocking_run(config: Path, out_dir: Path, cells: int, cache: Path) -> subprocess.Popen:
    """Start ``crsbench run`` in a subprocess that blocks once ``cells`` cells are stored.

    The subprocess creates ``out_dir.with_suffix(".blocked")`` when it blocks.
    """
    command = [sys.executable, "-c", BLOCKING_RUN, str(cells), str(out_dir.with_suffix(".blocked")), "run",
               "--config", str(config), "--out", str(out_dir), "--no-progress"]
    env = {**os.environ, "CRSBENCH_CACHE": str(cache)}
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def wait_until_blocked(proc: subprocess.Popen, out_dir: Path) -> None:
    """Wait until the blocking run has stored its cells and stopped (so nothing races the caller).

    It waits for the run's own word, not for cell files: a cell's data file appears
    before the runner has finished storing it, and a signal sent then would land in
    the middle. The deadline only catches a run that is stuck.
    """
    blocked = out_dir.with_suffix(".blocked")
    deadline = time.monotonic() + 900
    while not blocked.exists():
        assert proc.poll() is None, f"the run ended early: {proc.stderr.read()[-500:]}"
        assert time.monotonic() < deadline, "the run did not block within 15 minutes"
        time.sleep(0.05)


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("CRSBENCH_CACHE", str(root))
    return root


def write(tmp_path: Path, config: dict, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config))
    return path


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["run", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"datasets": [{"kind": "medmnist", "flag": "dermamnist", "root": "no/such/folder"}]},
         "datasets[0].root has no MedMNIST file for flag 'dermamnist': expected "),
        ({"datasets": [{"kind": "medmnist", "flag": "dermamnist", "root": "no/such/folder"}]},
         "pass --allow-download to crsbench run, or set allow_download: true in the profile"),
        ({"datasets": [{"kind": "medmnist", "flag": "mymnist", "root": "."}]},
         "datasets[0].domain is required: flag 'mymnist' is not a standard MedMNIST flag"),
        ({"embedding": {"device": "nosuchdevice"}}, "embedding.device must be auto, cpu"),
        ({"encoders": ["pixels", "resnet9000"]}, "encoders[1] names unknown encoder 'resnet9000'"),
        ({"seeds": []}, "seeds must not be empty"),
        ({"probe": {"max_iter": 0}}, "probe.max_iter must be a positive integer"),
    ],
)
def test_bad_config_is_one_line_exit_2(tmp_path: Path, cache: Path, capsys, change: dict, message: str) -> None:
    out_dir = tmp_path / "out"
    code, out, err = run_cli(["--config", str(write(tmp_path, {**TINY, **change})), "--out", str(out_dir)], capsys)
    assert code == 2
    assert err.startswith("crsbench: error: ") and message in err and err.count("\n") == 1
    assert out == "" and not out_dir.exists()


def test_cuda_without_cuda_is_one_line_exit_2(tmp_path: Path, cache: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    out_dir = tmp_path / "out"
    config = write(tmp_path, {**TINY, "embedding": {"device": "cuda", "amp": "bf16"}})
    code, out, err = run_cli(["--config", str(config), "--out", str(out_dir)], capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "embedding.device is 'cuda' (with embedding.amp: bf16)" in err and "set embedding.device: auto" in err
    assert out == "" and not out_dir.exists()


def test_garbage_npz_is_one_line_exit_2(tmp_path: Path, cache: Path, capsys) -> None:
    (tmp_path / "dermamnist.npz").write_bytes(b"\x80\x04\x95garbage, not an archive")
    config = write(tmp_path, {**TINY, "datasets": [{"kind": "medmnist", "flag": "dermamnist", "root": "."}]})
    code, out, err = run_cli(["--config", str(config), "--out", str(tmp_path / "out"), "--no-progress"], capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"{tmp_path / 'dermamnist.npz'}: the file is not a readable NumPy .npz archive" in err
    assert "pickle" not in err.lower()
    assert not (tmp_path / "out" / "results.parquet").exists()


def test_unreachable_scheduler_is_one_line_exit_2(tmp_path: Path, cache: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr("crsbench_lib.runner.executors.SCHEDULER_CONNECT_TIMEOUT_S", 1.0)
    out_dir = tmp_path / "out"
    args = ["--config", str(write(tmp_path, TINY)), "--out", str(out_dir), "--scheduler", "tcp://127.0.0.1:9"]
    code, _, err = run_cli(args, capsys)
    assert code == 2 and "no Dask scheduler reachable" in err and err.count("\n") == 1
    assert not out_dir.exists()


def test_usage_errors(tmp_path: Path, cache: Path, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run"])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["run", "--profile", "quick", "--jobs", "0"])
    assert info.value.code == 2
    assert "positive integer" in capsys.readouterr().err
    code, _, err = run_cli(["--profile", "no-such-profile"], capsys)
    assert code == 2 and "unknown profile 'no-such-profile'" in err


def test_run_prints_a_summary(tmp_path: Path, cache: Path, capsys, monkeypatch) -> None:
    config = {**TINY, "encoders": ["pixels"], "seeds": [0], "datasets": TINY["datasets"][:1]}
    code, out, _ = run_cli(["--config", str(write(tmp_path, config)), "--out", str(tmp_path / "o"), "--no-progress"],
                           capsys)
    assert code == 0 and "results.parquet" in out and "1 cells (1 computed, 0 reused)" in out
    assert (tmp_path / "o" / "manifest.json").is_file()
    assert "reference-run" not in out  # no summary is shipped for this profile

    # With a shipped reference-run summary of the profile, the run says whether it reproduces it.
    summary = tmp_path / "reference-run-tiny.json"
    assert main(["reproduce", "write", str(tmp_path / "o" / "results.parquet"), "--profile", "tiny",
                 "--out", str(summary)]) == 0
    monkeypatch.setattr("crsbench_lib.cli.run.shipped_summary", lambda name: tmp_path / f"reference-run-{name}.json")
    capsys.readouterr()
    code, out, _ = run_cli(["--config", str(write(tmp_path, config)), "--out", str(tmp_path / "o2"), "--no-progress"],
                           capsys)
    assert code == 0 and "reference-run-tiny.json: reproduces the reference run of profile tiny exactly" in out


@pytest.mark.slow
def test_sigkilled_run_resumes_to_the_uninterrupted_table(tmp_path: Path, cache: Path) -> None:
    from crsbench_lib.runner.run import run_profile

    config = write(tmp_path, TINY)
    killed = tmp_path / "killed"
    proc = blocking_run(config, killed, 2, cache)
    cells = killed / "cells"
    wait_until_blocked(proc, killed)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL
    assert len(_finished_cells(cells)) == 2 and not (killed / "results.parquet").exists()

    command = [sys.executable, "-m", "crsbench_lib", "run", "--config", str(config), "--out", str(killed),
               "--no-progress"]
    env = {**os.environ, "CRSBENCH_CACHE": str(cache)}
    resumed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-1000:]
    assert "(14 computed, 2 reused)" in resumed.stdout

    reference = run_profile(config, out_dir=tmp_path / "uninterrupted", progress=False)
    assert reference.n_computed == 16
    assert (killed / "results.parquet").read_bytes() == reference.results_path.read_bytes()


def _finished_cells(cells: Path) -> list[Path]:
    # pathlib's "*" also matches the atomic writer's hidden temporary files (".<name>.<rand>.parquet").
    return [p for p in cells.glob("*.parquet") if not p.name.startswith(".")]


@pytest.mark.slow
def test_ctrl_c_keeps_finished_cells_and_exits_130(tmp_path: Path, cache: Path) -> None:
    config = write(tmp_path, TINY)
    out_dir = tmp_path / "interrupted"
    proc = blocking_run(config, out_dir, 1, cache)
    cells = out_dir / "cells"
    wait_until_blocked(proc, out_dir)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-1000:]
    assert "Traceback" not in err and "1 of 16 cells are stored" in err and "run the same command again to resume" in err
    assert len(_finished_cells(cells)) == 1 and not (out_dir / "results.parquet").exists()
    assert not [p for p in cells.iterdir() if p.name.startswith(".")]


def test_a_damaged_weights_file_stops_the_run_in_one_line(tmp_path: Path, cache: Path, monkeypatch, capsys) -> None:
    import shutil

    from crsbench_lib.encoders.weights import SHIPPED_WEIGHTS_DIR

    folder = tmp_path / "w"
    shutil.copytree(SHIPPED_WEIGHTS_DIR, folder)
    data = bytearray((folder / "pca.pt").read_bytes())
    data[len(data) // 2] ^= 0x10
    (folder / "pca.pt").write_bytes(bytes(data))
    monkeypatch.setenv("CRSBENCH_WEIGHTS_DIR", str(folder))
    config = write(tmp_path, {**TINY, "encoders": ["pca"], "seeds": [0], "datasets": TINY["datasets"][:1]})
    out_dir = tmp_path / "out"
    code, out, err = run_cli(["--config", str(config), "--out", str(out_dir), "--no-progress"], capsys)
    assert code == 2 and err.count("\n") == 1 and out == "" and not out_dir.exists()
    assert f"{folder / 'pca.pt'}: sha256 " in err and f"rebuild with `crsbench zoo pretrain --out {folder}`" in err
    (folder / "manifest.json").write_text("{truncated")
    code, _, err = run_cli(["--config", str(config), "--out", str(out_dir), "--no-progress"], capsys)
    assert code == 2 and err.count("\n") == 1 and "manifest.json: not valid JSON" in err


def test_flipped_cell_and_embedding_files_are_recomputed_to_the_same_table(tmp_path: Path, cache: Path, capsys) -> None:
    config = write(tmp_path, {**TINY, "encoders": ["pixels"], "seeds": [0, 1], "datasets": TINY["datasets"][:1]})
    out_dir = tmp_path / "o"
    args = ["--config", str(config), "--out", str(out_dir), "--no-progress"]
    assert run_cli(args, capsys)[0] == 0
    table = (out_dir / "results.parquet").read_bytes()
    embeddings = {p: p.read_bytes() for p in (cache / "embeddings").rglob("*.npy")}
    cell = sorted((out_dir / "cells").glob("*.parquet"))[0]
    for victim in (cell, *embeddings):
        data = bytearray(victim.read_bytes())
        data[len(data) // 2] ^= 0x01
        victim.write_bytes(bytes(data))
    code, out, err = run_cli(args, capsys)
    assert code == 0 and "2 cells (1 computed, 1 reused)" in out
    assert err.count("is damaged, recomputing it") == 1 and str(cell) in err
    assert (out_dir / "results.parquet").read_bytes() == table
    # The recomputed cell read its embeddings again (the shared test sets and its own seed's
    # train/val/calibration splits), so those damaged ones were replaced by the same bytes.
    import json

    label = json.loads(cell.with_suffix(".json").read_text())["cell"]
    seed = int(label.split("/seed")[1].split("/")[0])
    used = [p for p in embeddings if json.loads(p.with_suffix(".json").read_text())["key"]["seed"] in (None, seed)]
    assert used and {p: p.read_bytes() for p in used} == {p: embeddings[p] for p in used}


def test_a_full_disk_on_the_real_pipeline_is_one_line_then_resumes(
    tmp_path: Path, cache: Path, capsys, monkeypatch
) -> None:
    import errno

    config = write(tmp_path, {**TINY, "encoders": ["pixels"], "seeds": [0], "datasets": TINY["datasets"][:1]})
    out_dir = tmp_path / "o"
    args = ["--config", str(config), "--out", str(out_dir), "--no-progress"]

    def full(fd: int, offset: int, length: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as patch:
        patch.setattr(os, "posix_fallocate", full)
        code, out, err = run_cli(args, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"crsbench: error: {cache / 'embeddings'}") and "no space left on device (" in err
    assert not [p for p in cache.rglob("*.npy")] and not [p for p in tmp_path.rglob(".*") if p.is_file()]
    assert run_cli(args, capsys)[0] == 0
    monkeypatch.setenv("CRSBENCH_CACHE", str(tmp_path / "fresh-cache"))
    reference = tmp_path / "reference"
    assert run_cli(["--config", str(config), "--out", str(reference), "--no-progress"], capsys)[0] == 0
    assert (out_dir / "results.parquet").read_bytes() == (reference / "results.parquet").read_bytes()
