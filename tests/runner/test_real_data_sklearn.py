"""A real-data run reproduces an independent scikit-learn pixel probe, AUROC for AUROC.

A PneumoniaMNIST-layout file is written by the test (grey 28-px images whose
brightness carries the label, with noise, so that the probe is good but not
perfect); the run's frozen, clean, full-label AUROC of the ``pixels`` encoder
must equal what scikit-learn gives from the same pieces: the file's train and
val splits pooled and split by the documented seed rule
(:func:`crsbench_lib.data.resample.development_split`), the pixel features,
a ``StandardScaler`` and a ``LogisticRegression`` at the profile's single 1/λ,
and ``roc_auc_score`` on the file's test split.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler

from crsbench_lib.data.resample import development_split
from crsbench_lib.encoders.registry import build_encoder
from crsbench_lib.results.io import read_results
from crsbench_lib.runner.config import load_profile
from crsbench_lib.runner.run import run_profile

SIZES = {"train": 240, "val": 80, "test": 160}
PENALTY = 0.1  # the profile's only 1/λ (scikit-learn's C)


def _write_file(folder: Path, rng: np.random.Generator) -> dict[str, np.ndarray]:
    arrays = {}
    for split, n in SIZES.items():
        labels = (rng.random(n) < 0.6).astype(np.int64)
        base = rng.normal(110, 35, size=(n, 28, 28))
        signal = 2.5 * labels.reshape(-1, 1, 1) * np.exp(-((np.arange(28) - 14) ** 2) / 60)[None, :, None]
        arrays[f"{split}_images"] = np.clip(base + signal, 0, 255).astype(np.uint8)
        arrays[f"{split}_labels"] = labels.reshape(-1, 1)
    np.savez(folder / "pneumoniamnist.npz", **arrays)
    return arrays


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CRSBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_pixel_probe_auroc_of_a_real_data_run_is_scikit_learns(tmp_path: Path, cache: Path) -> None:
    folder = tmp_path / "medmnist"
    folder.mkdir()
    arrays = _write_file(folder, np.random.default_rng(7))
    config = {
        "name": "pixel-check",
        "datasets": [{"kind": "medmnist", "flag": "pneumoniamnist", "root": "medmnist", "size": 28}],
        "encoders": ["pixels"],
        "seeds": [0],
        "corruptions": {"families": ["gaussian_noise"], "severities": [1], "n_images": 20},
        "probe": {"C": [PENALTY], "max_iter": 2000, "calibrators": []},
    }
    path = tmp_path / "pixel-check.yaml"
    path.write_text(yaml.safe_dump(config))
    outcome = run_profile(load_profile(path), out_dir=tmp_path / "out", progress=False)
    table = read_results(outcome.results_path)
    row = table[(table["encoder"] == "pixels") & (table["condition"] == "clean") & (table["arm"] == "frozen")
                & (table["label_fraction"] == 1.0)]
    assert len(row) == 1

    # The same pieces, put together by scikit-learn.
    pool_images = np.concatenate([arrays["train_images"], arrays["val_images"]])
    pool_labels = np.concatenate([arrays["train_labels"], arrays["val_labels"]]).ravel()
    n_val = SIZES["val"]
    index = development_split(pool_labels, 0, n_val, n_val)  # calibration split: the source val split's size
    encoder = build_encoder("pixels", image_side=32)
    features = {name: encoder.embed(pool_images[idx]) for name, idx in index.items()}
    scaler = StandardScaler().fit(features["train"])
    probe = LogisticRegression(C=PENALTY, tol=1e-10, max_iter=10_000).fit(
        scaler.transform(features["train"]), pool_labels[index["train"]])
    test = scaler.transform(encoder.embed(arrays["test_images"]))
    expected = roc_auc_score(arrays["test_labels"].ravel(), probe.predict_proba(test)[:, 1])

    assert 0.6 < expected < 0.99, "the file should give a probe that is good but not perfect"
    # The run's solver stops at tolerance 1e-4: its AUROC may differ in the fourth decimal, no more.
    assert float(row["auroc"].iloc[0]) == pytest.approx(expected, abs=2e-3)
    assert int(row["n_test"].iloc[0]) == SIZES["test"]
