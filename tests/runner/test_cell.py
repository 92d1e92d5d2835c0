"""The real cell backend: the LoRA arm's image sets match the frozen arm's store exactly."""

from __future__ import annotations

import json
import os
import pickle
from dataclasses import replace
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from crsbench_lib.embeddings.store import EmbeddingStore
from crsbench_lib.errors import ConfigError
from crsbench_lib.imports import package_modules
from crsbench_lib.runner.cell import (
    DATASET_LOADERS,
    ENCODER_LOADERS,
    LORA_MODULE,
    ConditionImages,
    RealBackend,
    cell_embeddings,
    cell_modules,
    corruption_blocks,
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
    from crsbench_lib.embeddings.batch import embed_images

    keys = []

    def embed(key, images):
        keys.append(key)
        return embed_images(encoder, images, profile.embedding.batch_size)

    direct = ConditionImages(dataset, profile, families).embeddings(embed, seed=0)
    # One key per image set: the seed's own splits carry the seed; test sets and corruptions do not.
    assert len(set(keys)) == len(keys)
    assert {k for k in keys if len(k) == 3 and k[0] != "corruption"} == {
        ("train", None, 0), ("val", None, 0), ("calibration", None, 0)}
    assert ("test", None) in keys and ("test", dataset.shift_site) in keys
    for name in ("train", "val", "calibration", "test", "shift_test"):
        assert np.array_equal(getattr(stored, name), getattr(direct, name)), name
    assert stored.corrupted.keys() == direct.corrupted.keys() and len(stored.corrupted) == 4
    for key in stored.corrupted:
        assert stored.corrupted[key].shape[0] == 12
        assert np.array_equal(stored.corrupted[key], direct.corrupted[key]), key
        assert np.array_equal(stored.corrupted_images[key], direct.corrupted_images[key]), key


def test_each_condition_corrupts_its_own_block_wherever_it_is_requested(profile) -> None:
    from crsbench_lib.cohort import corrupt, corruption_families

    spec = profile.datasets[0]
    dataset = load_dataset(spec)
    catalogue = corruption_families(dataset.domain)
    blocks = corruption_blocks(profile, dataset, resolve_families(profile, spec, dataset.domain))
    assert set(blocks) == {(f, s) for f in ("gaussian_noise", "jpeg") for s in (1, 4)}
    for (family, severity), block in blocks.items():  # 12 images from block 5k + s - 1, wrapping at 30
        start = (5 * catalogue.index(family) + severity - 1) * 12
        assert block.tolist() == [(start + j) % 30 for j in range(12)], (family, severity)
    assert np.array_equal(corruption_blocks(profile, dataset, ["jpeg"])[("jpeg", 4)], blocks[("jpeg", 4)])
    expected = corrupt(dataset.split("test").images[blocks[("jpeg", 4)]], "jpeg", 4, seed=0)
    assert np.array_equal(ConditionImages(dataset, profile, ["jpeg"]).corrupted("jpeg", 4), expected)
    # per family: a family's severities share its block
    shared = corruption_blocks(replace(profile, corruptions=replace(profile.corruptions, layout="per_family")),
                               dataset, ["jpeg"])
    assert np.array_equal(shared[("jpeg", 1)], shared[("jpeg", 4)])


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


def test_cell_modules_follow_what_the_cell_uses() -> None:
    hand = cell_modules("phantom", "hog", "frozen")
    assert {"crsbench_lib.runner.cell", "crsbench_lib.encoders.handcrafted", "crsbench_lib.cohort.derm"} <= hand
    # Reached only through imports inside runner.cell's functions.
    assert {"crsbench_lib.evaluation.probe", "crsbench_lib.embeddings.store"} <= hand
    assert "crsbench_lib.encoders.hub" not in hand and LORA_MODULE not in hand
    assert not any(m.startswith(("crsbench_lib.scoring", "crsbench_lib.report", "crsbench_lib.cli")) for m in hand)
    assert LORA_MODULE in cell_modules("phantom", "cnn_random", "lora")
    hub = cell_modules("manifest", "hf:x/y", "frozen")
    assert {"crsbench_lib.data.manifest", "crsbench_lib.encoders.hub"} <= hub


def test_cell_loaders_are_modules_of_the_package() -> None:
    # A loader that moved would otherwise drop out of every fingerprint.
    modules = package_modules()
    for name in [*DATASET_LOADERS.values(), *ENCODER_LOADERS.values(), LORA_MODULE]:
        assert name is None or name in modules, name


RUN_ONE_CELL = """
import json, pickle, sys
from crsbench_lib.runner.cell import RealBackend
from crsbench_lib.runner.grid import build_cells

# The profile comes pickled: loading a profile file is the run's work, not the cell's.
with open(sys.argv[1], "rb") as file:
    profile = pickle.load(file)
backend = RealBackend()
prep = backend.prepare(profile)
cells = build_cells(profile, prep)
assert len(list(backend.compute(profile, prep, cells))) == len(cells)
print(json.dumps(sorted(m for m in sys.modules if m == "crsbench_lib" or m.startswith("crsbench_lib."))))
"""


def test_a_cell_imports_only_modules_its_fingerprint_covers(tmp_path: Path) -> None:
    # What a real cell imports, in a fresh process, against the statically found set.
    path = tmp_path / "one.yaml"
    path.write_text(yaml.safe_dump({**CONFIG, "encoders": ["hog"]}))
    pickled = tmp_path / "one.pickle"
    pickled.write_bytes(pickle.dumps(load_profile(path)))
    env = {**os.environ, "CRSBENCH_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", RUN_ONE_CELL, str(pickled)], env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = set(json.loads(done.stdout.strip().splitlines()[-1]))
    outside = imported - cell_modules("phantom", "hog", "frozen")
    assert not outside, f"modules a cell imports but its code fingerprint does not cover: {sorted(outside)}"


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
