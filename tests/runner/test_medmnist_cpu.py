"""The shipped ``medmnist-cpu`` profile, pointed at tiny MedMNIST-layout files: run, score, freeze.

The files are written by the test in the layout the profile's header describes
(``root/{flag}.npz``, six arrays each); the profile is the shipped one with its
``root`` pointed at them and its grid made small (fewer encoders, one seed, one
severity), so every dataset, arm and command of the real-data path runs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from crsbench_lib.cli import main
from crsbench_lib.data.medmnist import FLAGS
from crsbench_lib.paths import configs_dir
from crsbench_lib.results.io import read_results
from crsbench_lib.standard import load_standard

pytestmark = pytest.mark.slow

SIZES = {"train": 84, "val": 42, "test": 42}


def write_medmnist(folder: Path, flag: str, rng: np.random.Generator) -> None:
    """A MedMNIST-layout file whose image brightness carries the label (so probes learn)."""
    info = FLAGS[flag]
    rgb = flag != "pneumoniamnist"
    arrays = {}
    for split, n in SIZES.items():
        labels = np.arange(n) % info.n_classes
        shape = (n, 28, 28, 3) if rgb else (n, 28, 28)
        base = rng.integers(0, 100, size=shape)
        scale = 150 // max(info.n_classes - 1, 1)
        arrays[f"{split}_images"] = np.clip(base + scale * labels.reshape((-1,) + (1,) * (len(shape) - 1)), 0, 255
                                            ).astype(np.uint8)
        arrays[f"{split}_labels"] = labels.reshape(-1, 1)
    np.savez(folder / f"{flag}.npz", **arrays)


def derived_profile(tmp_path: Path, root: Path) -> Path:
    """The shipped profile with ``root`` pointed at ``root`` and a small grid."""
    config = yaml.safe_load((configs_dir() / "medmnist-cpu.yaml").read_text())
    for entry in config["datasets"]:
        entry["root"] = str(root)
    config.update(
        name="medmnist-tiny",
        encoders=["pixels", "hog", "cnn_random", "multitask_broad_aug_s"],
        seeds=[0],
        corruptions={"families": "all", "severities": [3], "n_images": 21, "seed": 0},
        probe={**config["probe"], "C": [1.0], "max_iter": 60},
        lora={**config["lora"], "max_steps": 8},
    )
    path = tmp_path / "medmnist-tiny.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_medmnist_cpu_profile_runs_scores_and_freezes(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("CRSBENCH_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "medmnist"
    root.mkdir()
    shipped = yaml.safe_load((configs_dir() / "medmnist-cpu.yaml").read_text())
    flags = [d["flag"] for d in shipped["datasets"]]
    rng = np.random.default_rng(0)
    for flag in flags:
        write_medmnist(root, flag, rng)

    out = tmp_path / "run"
    assert main(["run", "--config", str(derived_profile(tmp_path, root)), "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    results = out / "results.parquet"
    table = read_results(results)
    assert set(table["dataset"]) == set(flags)
    assert set(table["domain"]) == {"dermatology", "ophthalmology", "radiology"}
    assert set(table["arm"]) == {"frozen", "lora"}
    assert not (table["condition"] == "shift").any()

    assert main(["score", str(results)]) == 0
    text = capsys.readouterr().out
    assert "absent terms: R: no shift term (no dataset has a second site)" in text

    standard = tmp_path / "mine-v1.yaml"
    assert main(["freeze", str(results), "--version", "mine-v1", "--out", str(standard)]) == 0
    assert load_standard(standard).panel_names == ("cnn_random", "hog", "multitask_broad_aug_s", "pixels")
    capsys.readouterr()
    assert main(["score", str(results), "--standard", str(standard)]) == 0
    scored = capsys.readouterr()
    assert "mine-v1" in scored.out and "dominance near 0 against the panel" not in scored.err
