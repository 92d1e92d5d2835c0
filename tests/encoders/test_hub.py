"""Hub adapters on tiny random models built from configs (no download)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from crsbench_lib.encoders.hub import offline_unless
from crsbench_lib.encoders.registry import build_encoder
from crsbench_lib.errors import EncoderError


@pytest.fixture(scope="module")
def tiny_vit_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    transformers = pytest.importorskip("transformers")
    folder = tmp_path_factory.mktemp("tiny_vit")
    torch.manual_seed(0)
    config = transformers.ViTConfig(
        image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64
    )
    transformers.ViTModel(config).save_pretrained(folder)
    return folder


def test_hf_adapter_embeds(tiny_vit_dir: Path, rgb_batch: np.ndarray, grey_batch: np.ndarray) -> None:
    enc = build_encoder(f"hf:{tiny_vit_dir}", device="cpu", batch_size=5)
    assert enc.family == "hub" and enc.embedding_dim == 32 and enc.image_side == 32
    z = enc.embed(rgb_batch)
    assert z.shape == (len(rgb_batch), 32) and z.dtype == np.float32 and np.isfinite(z).all()
    np.testing.assert_array_equal(z, enc.embed(rgb_batch))
    assert enc.embed(grey_batch[:, :28, :28]).shape == (len(grey_batch), 32)
    # forward_features keeps gradients (the LoRA arm trains through the module).
    x = enc.preprocess(rgb_batch[:2])
    assert enc.forward_features(x).requires_grad
    assert isinstance(enc.module, torch.nn.Module)


def test_hf_pooling_and_amp(tiny_vit_dir: Path, rgb_batch: np.ndarray) -> None:
    cls = build_encoder(f"hf:{tiny_vit_dir}", device="cpu").embed(rgb_batch)
    mean = build_encoder(f"hf:{tiny_vit_dir}", device="cpu", pooling="mean").embed(rgb_batch)
    assert not np.allclose(cls, mean)
    amp = build_encoder(f"hf:{tiny_vit_dir}", device="cpu", amp="bf16")
    z = amp.embed(rgb_batch)
    assert z.dtype == np.float32
    assert np.corrcoef(z.ravel(), cls.ravel())[0, 1] > 0.95
    assert amp.weights_hash != build_encoder(f"hf:{tiny_vit_dir}", device="cpu").weights_hash
    with pytest.raises(EncoderError, match="amp"):
        build_encoder(f"hf:{tiny_vit_dir}", device="cpu", amp="fp8")
    with pytest.raises(EncoderError, match="pooling"):
        build_encoder(f"hf:{tiny_vit_dir}", pooling="max")


def test_hf_offline_by_default() -> None:
    with pytest.raises(EncoderError, match=r"hf:no-such-org/no-such-model.*--allow-download.*allow_download: true"):
        build_encoder("hf:no-such-org/no-such-model")


def test_offline_context_restores_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with offline_unless(False):
        assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert "HF_HUB_OFFLINE" not in os.environ


def test_timm_adapter(rgb_batch: np.ndarray) -> None:
    pytest.importorskip("timm")
    enc = build_encoder(
        "timm:vit_tiny_patch16_224", device="cpu", pretrained=False, model_kwargs={"img_size": 32, "patch_size": 8}
    )
    z = enc.embed(rgb_batch)
    assert z.shape == (len(rgb_batch), enc.embedding_dim) and np.isfinite(z).all()


def test_open_clip_adapter(rgb_batch: np.ndarray) -> None:
    pytest.importorskip("open_clip")
    enc = build_encoder("open_clip:ViT-B-32", device="cpu", batch_size=4)
    z = enc.embed(rgb_batch[:4])
    assert z.shape == (4, enc.embedding_dim) and np.isfinite(z).all()


def test_missing_optional_extra() -> None:
    try:
        import timm  # noqa: F401
    except ImportError:
        with pytest.raises(EncoderError, match=r"crsbench\[hub\]"):
            build_encoder("timm:resnet18")
    else:
        pytest.skip("timm is installed")
