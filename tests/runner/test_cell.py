"""The real cell backend: the LoRA arm's image sets match the frozen arm's store exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from crsbench_lib.embeddings.store import EmbeddingStore
from crsbench_lib.errors import ConfigError
from crsbench_lib.runner.cell import (
    ConditionImages,
    RealBackend,
    cell_code_parts,
    cell_embeddings,
    get_encoder,
    load_dataset,
    resolve_families,
)
from crsbench_lib.runner.config import load_profile

CONFIG = {
    "name": "cellt",
    "standard": "crs-template",
    "datasets": [{"kind": "phantom", "name": "cxr", "sizes": {"train": 40, "val": 20, "test": 30, "shift_test": 20}}],
    "encoders": ["pixels", "hog"],
    "seeds": [0],
    "corruptions": {"families": ["gaussian_noise", "jpeg"], "severities": [1, 4], "n_images": 12},
}


@pytest.fixture()
def profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CRSBENCH_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(CONFIG))
    return load_profile(path)


def test_condition_images_match_the_embedding_store(tmp_path: Path, profile) -> None:
    spec = profile.datasets[0]
    dataset = load_dataset(spec)
    encoder = get_encoder("hog", 32, profile)
    families = resolve_families(profile, spec, dataset.domain)
    stored = cell_embeddings(EmbeddingStore(tmp_path / "emb"), encoder, dataset, profile, families)
    direct = ConditionImages(dataset, profile, families).embeddings(encoder, profile.embedding_batch_size)
    for name in ("train", "val", "calibration", "test", "shift_test"):
        assert np.array_equal(getattr(stored, name), getattr(direct, name)), name
    assert stored.corrupted.keys() == direct.corrupted.keys() and len(stored.corrupted) == 4
    for key in stored.corrupted:
        assert stored.corrupted[key].shape[0] == 12
        assert np.array_equal(stored.corrupted[key], direct.corrupted[key]), key


def test_prepare_records_versions_and_neural_encoders(profile) -> None:
    prep = RealBackend().prepare(profile)
    assert prep.dataset_versions["cxr"] == load_dataset(profile.datasets[0]).version
    assert prep.dataset_domains == {"cxr": "radiology"}
    assert prep.corruption_families == {"cxr": ("gaussian_noise", "jpeg")}
    assert set(prep.weights_hashes) == {("pixels", "cxr"), ("hog", "cxr")}
    assert prep.neural_encoders == ()


def test_unknown_family_for_the_domain_is_a_config_error(tmp_path: Path, profile) -> None:
    config = {**CONFIG, "corruptions": {"families": ["black_corner"]}}
    path = tmp_path / "d.yaml"
    path.write_text(yaml.safe_dump(config))
    bad = load_profile(path)
    with pytest.raises(ConfigError, match="'black_corner' is not a corruption family of domain 'radiology'"):
        RealBackend().prepare(bad)


def test_code_parts_follow_what_the_cell_uses() -> None:
    hand = cell_code_parts("phantom", "hog", "frozen")
    assert "encoders/handcrafted.py" in hand and "encoders/hub.py" not in hand and "runner/lora.py" not in hand
    lora = cell_code_parts("phantom", "cnn_random", "lora")
    assert "encoders/neural.py" in lora and "runner/lora.py" in lora
    assert "data/medmnist.py" in cell_code_parts("medmnist", "hf:x/y", "frozen")


def test_seeds_redraw_development_embeddings_and_share_the_test_sets(tmp_path: Path, profile) -> None:
    spec = profile.datasets[0]
    dataset = load_dataset(spec)
    encoder = get_encoder("hog", 32, profile)
    families = resolve_families(profile, spec, dataset.domain)
    store = EmbeddingStore(tmp_path / "emb")
    zero = cell_embeddings(store, encoder, dataset, profile, families, seed=0)
    one = cell_embeddings(store, encoder, dataset, profile, families, seed=1)
    for name in ("train", "val", "calibration"):
        assert not np.array_equal(getattr(zero, name), getattr(one, name)), name
    for name in ("test", "shift_test"):
        assert np.array_equal(getattr(zero, name), getattr(one, name)), name
    assert all(np.array_equal(zero.corrupted[k], one.corrupted[k]) for k in zero.corrupted)


def test_lora_arm_measures_the_frozen_arm_corruption_sets(tmp_path: Path, profile) -> None:
    dataset = load_dataset(profile.datasets[0])
    assert ConditionImages(dataset, profile, ["jpeg"]).corrupted("jpeg", 1).shape[0] == 12
    path = tmp_path / "l.yaml"
    path.write_text(yaml.safe_dump({**CONFIG, "lora": {"corruption_images": 5}}))
    with pytest.raises(ConfigError, match="unknown key lora.corruption_images"):
        load_profile(path)
