"""Executors give the same table: serial, joblib processes and a Dask LocalCluster (real pipeline)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from crsbench_lib.runner.config import load_profile
from crsbench_lib.runner.run import run_profile

TINY = {
    "name": "tiny",
    "standard": "crs-template",
    "datasets": [
        {"kind": "phantom", "name": "derm", "sizes": {"train": 120, "val": 60, "test": 80}},
        {"kind": "phantom", "name": "cxr", "sizes": {"train": 120, "val": 60, "test": 80, "shift_test": 60}},
    ],
    "encoders": ["pixels", "hog"],
    "seeds": [0, 1],
    "corruptions": {"families": ["gaussian_noise"], "severities": [2], "n_images": 40},
    "probe": {"C": [0.1, 1.0], "max_iter": 50, "calibrators": ["temperature"]},
}


@pytest.fixture()
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CRSBENCH_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(TINY))
    return load_profile(path)


@pytest.mark.slow
def test_serial_joblib_and_dask_give_identical_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from distributed import LocalCluster

    # A neural encoder on both arms too: torch threads differ between executors
    # (2 serial, 1 per worker), and the table must not.
    monkeypatch.setenv("CRSBENCH_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump({**TINY, "encoders": ["pixels", "cnn_random"], "arms": ["frozen", "lora"],
                                    "lora": {"max_steps": 8, "batch_size": 32}}))
    tiny = load_profile(path)
    serial = run_profile(tiny, out_dir=tmp_path / "serial", progress=False)
    # Fresh embedding caches for each executor, so each one computes everything itself.
    monkeypatch.setenv("CRSBENCH_CACHE", str(tmp_path / "cache-joblib"))
    joblib = run_profile(tiny, out_dir=tmp_path / "joblib", jobs=2, progress=False)
    monkeypatch.setenv("CRSBENCH_CACHE", str(tmp_path / "cache-dask"))
    with LocalCluster(processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
        dask = run_profile(tiny, out_dir=tmp_path / "dask", scheduler=cluster.scheduler_address, progress=False)
    reference = serial.results_path.read_bytes()
    assert serial.n_computed == joblib.n_computed == dask.n_computed == 12
    assert joblib.results_path.read_bytes() == reference
    assert dask.results_path.read_bytes() == reference
    assert (tmp_path / "cache-dask" / "embeddings").is_dir()  # workers used the run's cache


def test_real_backend_rows_cover_every_condition(tmp_path: Path, tiny) -> None:
    from crsbench_lib.results.io import read_results

    outcome = run_profile(tiny, out_dir=tmp_path / "out", progress=False)
    table = read_results(outcome.results_path)
    assert set(table["encoder"]) == {"pixels", "hog"} and set(table["seed"]) == {0, 1}
    # Every phantom dataset of world v4 has a second site and a cue-removed test split.
    assert set(table["condition"]) == {"clean", "label_fraction", "corruption", "shift", "cue_removed"}
    assert set(table.loc[table["condition"] == "shift", "dataset"]) == set(table["dataset"])
    corr = table[table["condition"] == "corruption"]
    assert set(corr["corruption"]) == {"gaussian_noise"} and set(corr["severity"]) == {2}
    assert set(corr["n_test"]) == {40}
    assert sorted(set(table["label_fraction"])) == sorted(tiny.label_fractions)
    assert set(table["ece_bins"]) == {tiny.ece_bins}
    assert set(table["calibration"]) == {"none", "temperature"}
