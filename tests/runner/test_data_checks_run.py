"""A run on files whose test split has another prevalence warns, in its output, its manifest and the book's pages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from crsbench_lib.cli import main
from crsbench_lib.paths import configs_dir
from crsbench_lib.report.own_data import prevalence_markdown, read_run_data, split_table
from crsbench_lib.results.manifest import read_manifest

pytestmark = pytest.mark.slow


def write_pneumonia(folder: Path, positives: dict[str, float], rng: np.random.Generator) -> None:
    """A PneumoniaMNIST-layout file (grey 28 px) with the given positive share per split."""
    arrays = {}
    for split, n in {"train": 120, "val": 40, "test": 64}.items():
        labels = rng.permutation((np.arange(n) < round(positives[split] * n)).astype(np.uint8))
        images = rng.integers(0, 120, size=(n, 28, 28)) + 100 * labels[:, None, None]
        arrays[f"{split}_images"] = np.clip(images, 0, 255).astype(np.uint8)
        arrays[f"{split}_labels"] = labels.reshape(-1, 1)
    np.savez(folder / "pneumoniamnist.npz", **arrays)


def _profile(tmp_path: Path, root: Path) -> Path:
    config = yaml.safe_load((configs_dir() / "medmnist-cpu.yaml").read_text())
    config.update(
        name="prevalence-check",
        datasets=[{"kind": "medmnist", "flag": "pneumoniamnist", "root": str(root), "size": 28}],
        encoders=["pixels"],
        seeds=[0],
        arms=["frozen"],
        corruptions={"families": ["gaussian_blur"], "severities": [3], "n_images": 64, "seed": 0, "layout": "shared"},
        probe={**config["probe"], "C": [1.0], "max_iter": 60},
    )
    path = tmp_path / "prevalence-check.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize("test_share, warns", [(0.625, True), (0.9, False)])
def test_a_prevalence_shift_is_reported_by_run_manifest_and_pages(tmp_path: Path, monkeypatch, capsys,
                                                                  test_share: float, warns: bool) -> None:
    monkeypatch.setenv("CRSBENCH_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "data"
    root.mkdir()
    write_pneumonia(root, {"train": 0.9, "val": 0.9, "test": test_share}, np.random.default_rng(0))
    out = tmp_path / "run"
    assert main(["run", "--config", str(_profile(tmp_path, root)), "--out", str(out), "--no-progress"]) == 0
    captured = capsys.readouterr()

    manifest = read_manifest(out)
    check = manifest.data_checks["pneumoniamnist"]
    assert check["prevalence_shift"] == pytest.approx(abs(0.9 - round(test_share * 64) / 64), abs=1e-6)
    assert [row["images"] for row in check["splits"]] == [120, 40, 64]
    run = read_run_data(out / "results.parquet")
    assert split_table(run)["prevalence"].tolist()[0] == "pneumonia 0.900"
    shift_line = "dataset pneumoniamnist: the positive prevalence differs"
    if warns:
        # Once before the cells (stderr), once after the progress bar (stdout), and on the pages.
        assert shift_line in captured.err and f"warning: {shift_line}" in captured.out
        assert manifest.data_warnings and "0.275 > 0.05" in manifest.data_warnings[0]
        for page in ("calibration", "gate", "cohort"):
            assert shift_line in prevalence_markdown(run, page)
    else:
        assert shift_line not in captured.err + captured.out
        assert manifest.data_warnings == ()
        assert prevalence_markdown(run, "calibration") == ""
