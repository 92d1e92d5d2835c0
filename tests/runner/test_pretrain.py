"""Zoo pretraining: determinism of every objective, worker-count independence, the shipped random inits."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

from crsbench_lib.encoders.neural import NEURAL_ZOO, make_backbone
from crsbench_lib.encoders.recipes import PRETRAIN_THREADS
from crsbench_lib.encoders.registry import build_encoder
from crsbench_lib.encoders.weights import SHIPPED_WEIGHTS_DIR, read_manifest
from crsbench_lib.errors import EncoderError
from crsbench_lib.runner.pools import PoolCache, PoolDraw
from crsbench_lib.runner.pretrain import PIECES, TRAINERS, _split, deterministic, index_stream, nt_xent, pretrain_zoo, target_kind


def fake_draw(dataset: str, n: int, all_sites: bool, seed: int = 0, image_side: int = 32) -> PoolDraw:
    """Seeded noise-and-blob images with attributes and task labels of each domain's shape."""
    rng = np.random.default_rng([seed, len(dataset), n])
    shape = (n, image_side, image_side) if dataset == "cxr" else (n, image_side, image_side, 3)
    images = rng.integers(0, 256, shape, dtype=np.uint8)
    labels = rng.integers(0, 2, (n, 4)).astype(np.uint8) if dataset == "cxr" else rng.integers(0, 4, n)
    attributes = {"size": rng.normal(size=n).astype(np.float32), "kind": rng.integers(0, 3, n), "flags": rng.integers(0, 2, (n, 2)).astype(np.uint8)}
    return PoolDraw(images, attributes, np.zeros(n, np.int64), labels)


def _tiny(name: str) -> dict[str, PoolDraw]:
    spec = NEURAL_ZOO[name]
    pools = PoolCache(draw=fake_draw, datasets=("derm", "fundus", "cxr"))
    assert spec.pool is not None
    return pools.get(dataclasses.replace(spec.pool, n_per_dataset=40))


@pytest.mark.parametrize("name", [n for n, s in NEURAL_ZOO.items() if s.method != "random"])
def test_short_pretraining_is_deterministic(name: str) -> None:
    spec = dataclasses.replace(NEURAL_ZOO[name], steps=2, batch_size=24)
    draws = _tiny(name)
    train = TRAINERS[spec.method]
    a, b, c = (train(draws, spec, seed).state_dict() for seed in (3, 3, 4))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a if a[k].is_floating_point())
    assert set(a) == set(make_backbone(spec.architecture).state_dict()), "the trained module must be the encoder's backbone"


def test_deterministic_restores_torch_state() -> None:
    threads, flag = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    with deterministic(1):
        assert torch.get_num_threads() == PRETRAIN_THREADS and torch.are_deterministic_algorithms_enabled()
    assert torch.get_num_threads() == threads and torch.are_deterministic_algorithms_enabled() == flag


def test_index_stream_covers_each_epoch_once() -> None:
    stream = index_stream(10, 3, torch.Generator().manual_seed(0))
    epoch = torch.cat([next(stream) for _ in range(3)])
    assert len(set(epoch.tolist())) == 9
    with pytest.raises(EncoderError, match="batch of 11 images from a pool of 10"):
        next(index_stream(10, 11, torch.Generator()))


def test_nt_xent_prefers_matching_views() -> None:
    z = torch.randn(8, 16, generator=torch.Generator().manual_seed(0))
    assert nt_xent(z, z) < nt_xent(z, z.roll(1, dims=0))


def test_target_kinds() -> None:
    assert target_kind(np.array([0, 2, 1])) == "class"
    assert target_kind(np.zeros((3, 2), np.uint8)) == "flags"
    assert target_kind(np.zeros((3, 5), np.float32)) == "regress"
    with pytest.raises(EncoderError, match="expected a class vector"):
        target_kind(np.zeros((3, 2, 2), np.float32))


def test_multitask_without_targets_is_refused() -> None:
    spec = dataclasses.replace(NEURAL_ZOO["multitask_broad_aug_s"], steps=1, batch_size=6)
    draws = {d: dataclasses.replace(p, attributes={}) for d, p in _tiny("multitask_broad_aug_s").items()}
    with pytest.raises(EncoderError, match="has no targets"):
        TRAINERS["multitask"](draws, spec)


def test_split_balances_and_keeps_every_piece() -> None:
    groups = _split(PIECES, 2)
    assert sorted(p for g in groups for p in g) == sorted(PIECES) and len(groups) == 2


def test_pretrain_rebuilds_shipped_random_inits_with_any_worker_count(tmp_path: Path) -> None:
    """``zoo pretrain`` reproduces the shipped weights bit for bit (cheap pieces), serially and in workers."""
    pieces = ["cnn_random", "vit_random"]
    pretrain_zoo(out=tmp_path / "serial", pieces=pieces, jobs=1)
    pretrain_zoo(out=tmp_path / "workers", pieces=pieces, jobs=2)
    shipped = read_manifest(SHIPPED_WEIGHTS_DIR)["files"]
    for folder in ("serial", "workers"):
        rebuilt = read_manifest(tmp_path / folder)["files"]
        for piece in pieces:
            assert rebuilt[f"{piece}.pt"]["sha256"] == shipped[f"{piece}.pt"]["sha256"]
    shipped_shapes = read_manifest(SHIPPED_WEIGHTS_DIR)["encoders"]
    for folder in ("serial", "workers"):  # every zoo encoder's shape, whichever pieces were built
        assert read_manifest(tmp_path / folder)["encoders"]["cnn_random"] == shipped_shapes["cnn_random"]
        assert read_manifest(tmp_path / folder)["encoders"]["pca"]["parameters"] == 0  # its file is not there
    enc = build_encoder("cnn_random", weights_dir=tmp_path / "workers", device="cpu")
    assert enc.embed(np.zeros((2, 32, 32), np.uint8)).shape == (2, 128)


def test_unknown_piece_and_bad_jobs(tmp_path: Path) -> None:
    with pytest.raises(EncoderError, match="unknown pretraining piece"):
        pretrain_zoo(out=tmp_path, pieces=["resnet"])
    with pytest.raises(EncoderError, match="jobs must be a positive integer"):
        pretrain_zoo(out=tmp_path, pieces=["cnn_random"], jobs=0)


def test_multitask_pretraining_draws_its_views_from_the_target_view(monkeypatch) -> None:
    import crsbench_lib.runner.pretrain as pretrain

    def refuse(*args, **kwargs):
        raise AssertionError("a supervised recipe must not crop, flip or recolour its inputs")

    monkeypatch.setattr(pretrain, "view", refuse)
    for name in ("multitask_broad_aug_s", "intask_supervised_s"):
        spec = dataclasses.replace(pretrain.NEURAL_ZOO[name], steps=1, batch_size=6)
        pretrain.TRAINERS[spec.method](_tiny(name), spec)
