"""Neural zoo: shapes, inputs, modules for LoRA, determinism (in and across processes), pretraining."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from crsbench_lib.encoders.neural import NEURAL_ZOO
from crsbench_lib.runner.pretrain import Pools, TrainConfig, pretrain_zoo, train_supervised
from crsbench_lib.encoders.registry import DEFAULT_ZOO, build_encoder
from crsbench_lib.encoders.weights import SHIPPED_WEIGHTS_DIR, read_manifest

NAMES = sorted(NEURAL_ZOO)


@pytest.mark.parametrize("name", NAMES)
def test_neural_encoder_contract(name: str, rgb_batch: np.ndarray, grey_batch: np.ndarray) -> None:
    enc = build_encoder(name, device="cpu")
    assert enc.family == "neural" and isinstance(enc.module, torch.nn.Module)
    assert sum(p.numel() for p in enc.module.parameters()) < 1_000_000
    z = enc.embed(rgb_batch)
    assert z.dtype == np.float32 and z.shape == (len(rgb_batch), enc.embedding_dim) and np.isfinite(z).all()
    assert z.std(axis=0).max() > 0
    np.testing.assert_array_equal(z, enc.embed(rgb_batch))
    assert enc.embed(grey_batch).shape == z.shape
    x = enc.preprocess(rgb_batch[:3])
    assert x.shape == (3, 3, 32, 32) and enc.forward_features(x).requires_grad


@pytest.mark.parametrize("name", ["cnn_generalist", "vit_mae"])
def test_side_64(name: str, rgb_batch: np.ndarray) -> None:
    enc = build_encoder(name, image_side=64, device="cpu")
    big = np.repeat(np.repeat(rgb_batch, 2, axis=1), 2, axis=2)
    assert enc.embed(big).shape == (len(big), enc.embedding_dim)
    assert enc.weights_hash != build_encoder(name, device="cpu").weights_hash


SCRIPT = """
import sys, numpy as np
from crsbench_lib.encoders.registry import DEFAULT_ZOO, build_encoder
rng = np.random.default_rng(7)
x = rng.integers(0, 256, (40, 32, 32, 3), dtype=np.uint8)
np.savez(sys.argv[1], **{n: build_encoder(n, device="cpu").embed(x) for n in DEFAULT_ZOO})
"""


def test_bit_identical_across_processes(tmp_path: Path) -> None:
    outs = []
    for k in range(2):
        out = tmp_path / f"run{k}.npz"
        subprocess.run([sys.executable, "-c", SCRIPT, str(out)], check=True, timeout=300)
        outs.append(np.load(out))
    for name in DEFAULT_ZOO:
        assert outs[0][name].tobytes() == outs[1][name].tobytes(), name


def tiny_pools(n: int = 48) -> Pools:
    rng = np.random.default_rng(0)
    return Pools(
        {
            "derm": rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8),
            "fundus": rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8),
            "cxr": rng.integers(0, 256, (n, 32, 32), dtype=np.uint8),
        },
        {"derm": rng.integers(0, 4, n), "fundus": rng.integers(0, 5, n), "cxr": rng.integers(0, 2, (n, 4)).astype(np.uint8)},
    )


def test_supervised_training_is_deterministic() -> None:
    pools = tiny_pools()
    cfg = TrainConfig(epochs=1, batch_size=16)
    a = train_supervised(pools, ("derm", "cxr"), seed=3, cfg=cfg).state_dict()
    b = train_supervised(pools, ("derm", "cxr"), seed=3, cfg=cfg).state_dict()
    c = train_supervised(pools, ("derm", "cxr"), seed=4, cfg=cfg).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a if a[k].is_floating_point())


def test_pretrain_rebuilds_random_init_exactly(tmp_path: Path) -> None:
    """``zoo pretrain`` reproduces the shipped random-init weights bit for bit, and writes a usable folder."""
    pytest.importorskip("crsbench_lib.cohort")
    pretrain_zoo(out=tmp_path, pieces=["cnn_random", "vit_random"], pool_size=8)
    shipped = read_manifest(SHIPPED_WEIGHTS_DIR)["files"]
    rebuilt = read_manifest(tmp_path)["files"]
    for piece in ("cnn_random.pt", "vit_random.pt"):
        assert rebuilt[piece]["sha256"] == shipped[piece]["sha256"]
    enc = build_encoder("cnn_random", weights_dir=tmp_path, device="cpu")
    assert enc.embed(np.zeros((2, 32, 32), np.uint8)).shape == (2, 128)
