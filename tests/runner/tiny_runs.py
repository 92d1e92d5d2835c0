"""A finished run's folder, for tests that reopen a run's datasets from its manifest."""

from __future__ import annotations

import json

import numpy as np
import yaml

from crsbench_lib.results.io import MANIFEST_FILE
from crsbench_lib.runner.config import load_profile


def tiny_run(tmp_path):
    """A profile with one MedMNIST file under a relative root, and the manifest a run of it writes."""
    data = tmp_path / "profiles" / "data"
    data.mkdir(parents=True)
    arrays = {}
    for split, n in (("train", 8), ("val", 4), ("test", 4)):
        arrays[f"{split}_images"] = np.zeros((n, 28, 28), np.uint8)
        arrays[f"{split}_labels"] = (np.arange(n) % 2).reshape(-1, 1)
    np.savez(data / "pneumoniamnist.npz", **arrays)
    config = tmp_path / "profiles" / "mine.yaml"
    config.write_text(yaml.safe_dump({
        "name": "mine", "standard": "crs-default-v1", "encoders": ["pixels"], "seeds": [0],
        "datasets": [{"kind": "medmnist", "flag": "pneumoniamnist", "root": "data"},
                     {"kind": "phantom", "name": "derm"}],
    }))
    profile = load_profile(config)
    run = tmp_path / "run"
    run.mkdir()
    (run / MANIFEST_FILE).write_text(json.dumps({
        "config": profile.config, "config_source": str(config), "standard": {"path": str(profile.standard_path)},
    }))
    return run
