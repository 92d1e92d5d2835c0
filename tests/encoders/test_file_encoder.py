"""Exported model files as encoders (crsbench_lib.encoders.file_encoder): each format, identity, and one-line errors."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.encoders.base import why_not_adaptable
from crsbench_lib.encoders.file_encoder import FileEncoder, check_model_file, model_identity
from crsbench_lib.encoders.imaging import to_tensor
from crsbench_lib.encoders.registry import build_encoder
from crsbench_lib.encoders.zoo import FILE_NOT_ADAPTABLE
from crsbench_lib.errors import EncoderError
from tests.encoders.model_files import (
    WIDTH,
    ReturnsNaN,
    ThreeD,
    TinyNet,
    WidthFollowsBatch,
    export_onnx,
    export_pt2,
    export_torchscript,
    onnx_available,
)

FORMATS = ["pt2", "pt", "torchscript", "onnx"]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """TinyNet in every format (ONNX only where onnxruntime is installed)."""
    folder = tmp_path_factory.mktemp("models")
    net = TinyNet()
    out = {"pt2": export_pt2(net, folder / "net.pt2"), "pt": export_torchscript(net, folder / "net.pt"),
           "torchscript": export_torchscript(net, folder / "net.torchscript", script=True)}
    if onnx_available():
        out["onnx"] = export_onnx(net, folder / "net.onnx")
    return out


def model_file(files: dict[str, Path], kind: str) -> Path:
    if kind not in files:
        pytest.skip("onnxruntime is not installed (the [onnx] extra)")
    return files[kind]


def direct(path: Path, x: torch.Tensor) -> np.ndarray:
    """The model file called directly, without the encoder."""
    if path.suffix == ".pt2":
        return torch.export.load(str(path)).module()(x).detach().numpy()
    if path.suffix == ".onnx":
        import onnxruntime

        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        return session.run(None, {"images": x.numpy()})[0]
    return torch.jit.load(str(path))(x).detach().numpy()


@pytest.mark.parametrize("kind", FORMATS)
def test_each_format_embeds_as_the_file_called_directly(files, kind: str, rgb_batch: np.ndarray) -> None:
    path = model_file(files, kind)
    encoder = FileEncoder(path, image_side=32, device="cpu", batch_size=len(rgb_batch))
    z = encoder.embed(rgb_batch)
    assert z.shape == (len(rgb_batch), WIDTH) and z.dtype == np.float32
    x = to_tensor(rgb_batch, 32, 3)
    np.testing.assert_array_equal(z, direct(path, x))  # bit for bit: the contract's input, nothing added
    np.testing.assert_allclose(z, TinyNet()(x).detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(z, encoder.embed(rgb_batch))
    assert encoder.family == "file" and encoder.embedding_dim == WIDTH and encoder.module is not None


@pytest.mark.parametrize("kind", FORMATS)
def test_card_tells_the_file_hash_width_and_parameters(files, kind: str) -> None:
    path = model_file(files, kind)
    card = FileEncoder(path, image_side=32, name="mine", device="cpu").card()
    assert card["name"] == "mine" and card["file"] == str(path.resolve()) and card["embedding_dim"] == WIDTH
    assert card["sha256"] == __import__("hashlib").sha256(path.read_bytes()).hexdigest()
    # 3*8*9 + 8 (conv) + 8*6 + 6 (head); torch formats tell parameters from buffers (mean, std), ONNX stores
    # both as initializers.
    weights = 3 * 8 * 9 + 8 + 8 * WIDTH + WIDTH
    assert card["parameters"] == (weights + 6 if kind == "onnx" else weights)
    assert card["format"] == {"pt2": "torch.export", "onnx": "ONNX"}.get(kind, "TorchScript")


def test_grey_and_other_sides_are_resized_to_the_contract(files, grey_batch: np.ndarray) -> None:
    encoder = FileEncoder(files["pt"], image_side=24, device="cpu")
    assert encoder.image_side == 24 and encoder.preprocess(grey_batch).shape == (len(grey_batch), 3, 24, 24)
    x = encoder.preprocess(grey_batch)
    assert float(x.min()) >= 0.0 and float(x.max()) <= 1.0
    np.testing.assert_array_equal(encoder.embed(grey_batch), direct(files["pt"], x))


def test_identity_follows_the_bytes_not_the_path(files, tmp_path: Path) -> None:
    copy = shutil.copy(files["pt2"], tmp_path / "elsewhere.pt2")
    first = FileEncoder(files["pt2"], image_side=32, device="cpu")
    assert FileEncoder(copy, image_side=32, device="cpu").weights_hash == first.weights_hash
    other = export_pt2(TinyNet(seed=1), tmp_path / "retrained.pt2")
    assert FileEncoder(other, image_side=32, device="cpu").weights_hash != first.weights_hash
    # The side fed to it and the precision change the embedding, so they change the identity too.
    traced = FileEncoder(files["pt"], image_side=32, device="cpu")
    assert FileEncoder(files["pt"], image_side=24, device="cpu").weights_hash != traced.weights_hash
    assert FileEncoder(files["pt2"], image_side=32, device="cpu", amp="bf16").weights_hash != first.weights_hash
    assert first.weights_hash == model_identity(files["pt2"], "torch.export", 32, "none", "cpu")


@settings(max_examples=30, deadline=None)
@given(data=st.binary(min_size=1, max_size=2048), position=st.integers(min_value=0), flip=st.integers(1, 255))
def test_same_bytes_same_key_and_any_byte_change_another(tmp_path_factory, data: bytes, position: int,
                                                         flip: int) -> None:
    folder = tmp_path_factory.mktemp("bytes")
    path = folder / "m.pt2"
    path.write_bytes(data)
    key = model_identity(path, "torch.export", 32, "none", "cpu")
    path.write_bytes(data)
    assert model_identity(path, "torch.export", 32, "none", "cpu") == key
    changed = bytearray(data)
    changed[position % len(data)] ^= flip
    path.write_bytes(bytes(changed))
    assert model_identity(path, "torch.export", 32, "none", "cpu") != key


def test_amp_keeps_float32_output(files, rgb_batch: np.ndarray) -> None:
    plain = FileEncoder(files["pt"], image_side=32, device="cpu").embed(rgb_batch)
    z = FileEncoder(files["pt"], image_side=32, device="cpu", amp="bf16").embed(rgb_batch)
    assert z.dtype == np.float32 and np.corrcoef(z.ravel(), plain.ravel())[0, 1] > 0.99


def test_registry_builds_a_relative_file_from_the_working_folder(files, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(files["pt"].parent)
    encoder = build_encoder("file:net.pt", image_side=32, device="cpu")
    assert encoder.name == "file:net.pt" and encoder.path == files["pt"].resolve()
    with pytest.raises(EncoderError, match="needs a path after the colon"):
        build_encoder("file:")


def test_a_file_encoder_is_never_adapted(files) -> None:
    encoder = FileEncoder(files["pt"], image_side=32, device="cpu")
    assert why_not_adaptable(encoder) == FILE_NOT_ADAPTABLE and "cannot be LoRA-adapted" in FILE_NOT_ADAPTABLE
    from crsbench_lib.runner.lora import AdaptationSession
    from crsbench_lib.runner.profile import DEFAULT_LORA, LoraSpec

    spec = LoraSpec(**{**DEFAULT_LORA, "encoders": ("x",)})
    with pytest.raises(EncoderError, match=r"file:.*net\.pt: an exported graph .* cannot be LoRA-adapted"):
        AdaptationSession(encoder, spec, batch_size=8)


def test_cuda_without_cuda_is_the_shared_one_line_error(files, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(EncoderError, match=r"^device 'cuda': this torch .* has no CUDA device; use device auto"):
        FileEncoder(files["pt"], image_side=32, device="cuda")
    # The same path as every torch encoder of the zoo and the hub adapters.
    with pytest.raises(EncoderError, match="has no CUDA device"):
        build_encoder("cnn_random", device="cuda")


# ---------------------------------------------------------------------------------------------- one-line errors


def one_line(exc: pytest.ExceptionInfo[EncoderError]) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("suffix", [".pt2", ".pt", ".onnx"])
def test_missing_file(tmp_path: Path, suffix: str) -> None:
    with pytest.raises(EncoderError) as exc:
        FileEncoder(tmp_path / f"absent{suffix}", image_side=32, device="cpu")
    assert one_line(exc).endswith(f"absent{suffix}: no such model file")


def test_unknown_suffix(tmp_path: Path) -> None:
    (tmp_path / "weights.bin").write_bytes(b"x")
    with pytest.raises(EncoderError, match=r"unknown model file suffix '\.bin' \(expected \.pt2, \.pt, "):
        check_model_file(tmp_path / "weights.bin")


@pytest.mark.parametrize(("suffix", "message"), [
    (".pt2", "is not a torch.export archive"),
    (".pt", "is not a TorchScript file"),
    (".torchscript", "is not a TorchScript file"),
])
def test_not_a_model(tmp_path: Path, suffix: str, message: str) -> None:
    path = tmp_path / f"notes{suffix}"
    path.write_text("these are not weights\n")
    with pytest.raises(EncoderError) as exc:
        FileEncoder(path, image_side=32, device="cpu")
    assert message in one_line(exc)


def test_not_an_onnx_model(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    path = tmp_path / "notes.onnx"
    path.write_text("these are not weights\n")
    with pytest.raises(EncoderError) as exc:
        FileEncoder(path, image_side=32, device="cpu")
    assert "is not a loadable ONNX model" in one_line(exc)


@pytest.mark.parametrize("suffix", [".pt", ".pt2", ".torchscript", ".onnx"])
def test_a_pickled_module_is_refused_unread(tmp_path: Path, suffix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / f"pickled{suffix}"
    torch.save(TinyNet(), path)

    def never(*args, **kwargs):
        raise AssertionError("a loader was called on a pickle")

    monkeypatch.setattr(torch.jit, "load", never)
    monkeypatch.setattr(torch.export, "load", never)
    monkeypatch.setattr(torch, "load", never)
    with pytest.raises(EncoderError) as exc:
        FileEncoder(path, image_side=32, device="cpu")
    assert "is a pickle (torch.save of a module), which is never loaded" in one_line(exc)


@pytest.mark.parametrize(("module", "message"), [
    (ThreeD(), r"output has shape \(2, 3, 32\) on 2 images, expected \(2, D\)"),
    (ReturnsNaN(), r"non-finite features \(6 NaN, 0 inf of 6 values on 2 images\)"),
])
def test_a_module_that_breaks_the_contract_fails_at_load(tmp_path: Path, module, message: str) -> None:
    path = export_torchscript(module, tmp_path / "bad.pt")
    with pytest.raises(EncoderError, match=message) as exc:
        FileEncoder(path, image_side=32, device="cpu")
    one_line(exc)


def test_a_width_that_changes_between_batches(tmp_path: Path, rgb_batch: np.ndarray) -> None:
    path = export_torchscript(WidthFollowsBatch(), tmp_path / "width.pt", script=True)
    encoder = FileEncoder(path, image_side=32, device="cpu", batch_size=5)
    assert encoder.embedding_dim == 6  # 3 x the probe's 2 images
    with pytest.raises(EncoderError, match=r"output width changes between batches \(6, then 15 on a batch of 5"):
        encoder.embed(rgb_batch)


def test_onnx_without_onnxruntime_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "model.onnx"
    path.write_bytes(b"\x08\x07")  # any bytes: the runtime is looked for before the file is parsed
    real = importlib.import_module

    def without_onnxruntime(name: str, *args, **kwargs):
        if name == "onnxruntime":
            raise ImportError("No module named 'onnxruntime'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", without_onnxruntime)
    with pytest.raises(EncoderError) as exc:
        FileEncoder(path, image_side=32, device="cpu")
    assert one_line(exc).endswith("onnxruntime is not installed; install the optional extra: pip install 'crsbench[onnx]'")
