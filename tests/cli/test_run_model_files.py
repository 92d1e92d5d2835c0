"""``crsbench run`` with a broken model file: one line, exit 2, and nothing written for the run."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import yaml

from crsbench_lib.cli import main
from tests.encoders.model_files import ReturnsNaN, ThreeD, TinyNet, export_torchscript

SMALL = {
    "name": "small",
    "standard": "crs-template",
    "datasets": [{"kind": "phantom", "name": "derm", "sizes": {"train": 40, "val": 20, "test": 20}}],
    "seeds": [0],
    "corruptions": {"families": ["gaussian_noise"], "severities": [2], "n_images": 10},
    "probe": {"C": [1.0], "max_iter": 30, "calibrators": ["temperature"]},
    "embedding": {"device": "cpu"},
}


def _pickle(path: Path) -> None:
    torch.save(TinyNet(), path)


@pytest.mark.parametrize(("name", "make", "message"), [
    ("absent.pt", None, "encoders[1] names a missing model file"),
    ("notes.pt", lambda p: p.write_text("not a model"), "is not a TorchScript file"),
    ("pickled.pt", _pickle, "is a pickle (torch.save of a module), which is never loaded"),
    ("three_d.pt", lambda p: export_torchscript(ThreeD(), p), "output has shape (2, 3, 32) on 2 images"),
    ("nan.pt", lambda p: export_torchscript(ReturnsNaN(), p), "non-finite features (6 NaN"),
])
def test_a_bad_model_file_stops_the_run_before_any_cell(tmp_path: Path, capsys, monkeypatch, name: str, make,
                                                        message: str) -> None:
    monkeypatch.setenv("CRSBENCH_CACHE", str(tmp_path / "cache"))
    if make is not None:
        make(tmp_path / name)
    config = tmp_path / "small.yaml"
    config.write_text(yaml.safe_dump({**SMALL, "encoders": ["pixels", f"file:{name}"]}))
    out_dir = tmp_path / "out"
    code = main(["run", "--config", str(config), "--out", str(out_dir), "--no-progress"])
    captured = capsys.readouterr()
    assert code == 2 and captured.err.startswith("crsbench: error: ") and message in captured.err
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    written = [p for p in out_dir.rglob("*") if p.is_file() and p.suffix in (".parquet", ".json", ".npz")]
    assert written == [], f"half-written run: {written}"
    assert not list((tmp_path / "cache").rglob("*.npy"))
