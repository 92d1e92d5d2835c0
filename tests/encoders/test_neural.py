"""Neural zoo: shapes, inputs, modules for LoRA, determinism in and across processes.

Pretraining itself is tested in tests/runner/test_pretrain.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from crsbench_lib.encoders.neural import ARCHITECTURES, NEURAL_ZOO, count_parameters, make_backbone
from crsbench_lib.encoders.registry import DEFAULT_ZOO, build_encoder
from crsbench_lib.errors import EncoderError

NAMES = sorted(NEURAL_ZOO)


@pytest.mark.parametrize("name", NAMES)
def test_neural_encoder_contract(name: str, rgb_batch: np.ndarray, grey_batch: np.ndarray) -> None:
    enc = build_encoder(name, device="cpu")
    assert enc.family == "neural" and isinstance(enc.module, torch.nn.Module)
    assert sum(p.numel() for p in enc.module.parameters()) < 1_000_000
    assert enc.embedding_dim == enc.module.out_dim
    z = enc.embed(rgb_batch)
    assert z.dtype == np.float32 and z.shape == (len(rgb_batch), enc.embedding_dim) and np.isfinite(z).all()
    assert z.std(axis=0).max() > 0
    np.testing.assert_array_equal(z, enc.embed(rgb_batch))
    assert enc.embed(grey_batch).shape == z.shape
    x = enc.preprocess(rgb_batch[:3])
    assert x.shape == (3, 3, 32, 32) and enc.forward_features(x).requires_grad


@pytest.mark.parametrize("name", ["simclr_broad_aug_l", "mae_broad_vit"])
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


def test_backbones() -> None:
    sizes = {a: count_parameters(a) for a in ARCHITECTURES}
    assert sizes["cnn_l"] > 2 * sizes["cnn_s"]
    assert make_backbone("cnn_s").out_dim == 128 and make_backbone("vit_s").out_dim == 128
    with pytest.raises(EncoderError, match="unknown architecture 'resnet'.*cnn_s"):
        make_backbone("resnet")
