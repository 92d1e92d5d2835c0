"""Profiles over real-data readers: a tiny MedMNIST ``.npz`` and a CSV manifest run end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from crsbench_lib.results.io import read_results
from crsbench_lib.runner.config import load_profile
from crsbench_lib.runner.run import run_profile


def _images(rng: np.random.Generator, labels: np.ndarray, side: int) -> np.ndarray:
    """RGB images whose mean brightness carries the label (so probes learn something)."""
    base = rng.integers(0, 120, size=(len(labels), side, side, 3))
    return np.clip(base + 40 * labels.reshape(-1, 1, 1, 1), 0, 255).astype(np.uint8)


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CRSBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_medmnist_and_manifest_datasets_run(tmp_path: Path, cache: Path) -> None:
    rng = np.random.default_rng(0)
    arrays = {}
    for split, n in (("train", 60), ("val", 30), ("test", 40)):
        labels = np.arange(n) % 3
        arrays[f"{split}_images"] = _images(rng, labels, 28)
        arrays[f"{split}_labels"] = labels.reshape(-1, 1)
    folder = tmp_path / "medmnist"
    folder.mkdir()
    np.savez(folder / "dermamnist.npz", **arrays)

    images = tmp_path / "images"
    images.mkdir()
    rows = ["path,split,label"]
    for split, n in (("train", 40), ("val", 20), ("test", 24)):
        labels = np.arange(n) % 2
        for i, img in enumerate(_images(rng, labels, 16)):
            name = f"{split}{i}.png"
            Image.fromarray(img).save(images / name)
            rows.append(f"images/{name},{split},{labels[i]}")
    (tmp_path / "manifest.csv").write_text("\n".join(rows) + "\n")

    config = {
        "name": "realdata",
        "standard": "crs-template",
        "datasets": [
            {"kind": "medmnist", "flag": "dermamnist", "root": "medmnist", "size": 28},
            {"kind": "manifest", "name": "mine", "csv": "manifest.csv", "domain": "dermatology", "image_side": 16},
        ],
        "encoders": ["pixels", "cnn_random"],
        "seeds": [0],
        "corruptions": {"families": ["jpeg"], "severities": [3], "n_images": 20},
        "probe": {"C": [1.0], "max_iter": 50, "calibrators": []},
    }
    path = tmp_path / "real.yaml"
    path.write_text(yaml.safe_dump(config))
    profile = load_profile(path)
    assert profile.datasets[0].options["image_side"] == 32  # 28-px files are read at 32 by the encoders
    outcome = run_profile(profile, out_dir=tmp_path / "out", progress=False)
    table = read_results(outcome.results_path)
    assert set(table["dataset"]) == {"dermamnist", "mine"}
    assert set(table["domain"]) == {"dermatology"}
    assert set(table.loc[table["dataset"] == "mine", "task"]) == {"binary"}
    assert set(table.loc[table["condition"] == "corruption", "n_test"]) == {20}
    clean = table[table["condition"] == "clean"]
    assert (clean["auroc"] > 0.6).all()
