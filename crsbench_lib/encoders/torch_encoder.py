"""Shared machinery of every PyTorch encoder (the neural zoo and the hub adapters).

A :class:`TorchEncoder` holds a ``torch.nn.Module`` in eval mode, turns ``uint8``
images into the module's input with torch operations (:meth:`preprocess`),
and embeds in batches under ``torch.inference_mode``, on a chosen device, with
optional mixed precision (``torch.autocast``). ``forward_features`` works on
preprocessed tensors and keeps gradients, so the LoRA arm can train through
:attr:`module`. The number of CPU threads is whatever ``torch.set_num_threads``
says; nothing here changes it.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

import numpy as np
import torch

from crsbench_lib.encoders.base import Encoder
from crsbench_lib.encoders.imaging import check_images, to_tensor
from crsbench_lib.errors import EncoderError

AMP_DTYPES: dict[str, torch.dtype | None] = {"none": None, "bf16": torch.bfloat16, "fp16": torch.float16}


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``None``/``"auto"`` -> CUDA if available, else CPU; otherwise the named device."""
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise EncoderError(f"unknown device {device!r}") from exc


def module_hash(module: torch.nn.Module) -> str:
    """sha256 over a module's state dict (names, dtypes, shapes and bytes, in key order)."""
    import hashlib

    h = hashlib.sha256()
    for key, value in module.state_dict().items():
        t = value.detach().to("cpu").contiguous()
        h.update(f"{key}|{t.dtype}|{tuple(t.shape)}|".encode())
        # reshape(-1): 0-d tensors (batch-norm's num_batches_tracked) cannot be viewed as bytes.
        t = t.reshape(-1)
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


class TorchEncoder(Encoder):
    """Base of the encoders backed by a ``torch.nn.Module``.

    Parameters
    ----------
    image_side : int
        Side the images are resized to before normalisation.
    mean, std : sequence of float
        Per-channel normalisation ``(x - mean) / std`` on ``[0, 1]`` RGB values.
    device : str, optional
        ``"cpu"``, ``"cuda"``, ``"cuda:1"``... (default: CUDA if available).
    amp : {"none", "bf16", "fp16"}
        Mixed precision for inference (``torch.autocast``); outputs are float32.
    batch_size : int
        Images per forward pass in :meth:`embed`.
    """

    def __init__(
        self,
        image_side: int,
        mean: Sequence[float],
        std: Sequence[float],
        device: str | torch.device | None = "cpu",
        amp: str = "none",
        batch_size: int = 256,
    ) -> None:
        if amp not in AMP_DTYPES:
            raise EncoderError(f"amp must be one of {', '.join(AMP_DTYPES)}, got {amp!r}")
        if batch_size < 1:
            raise EncoderError(f"batch_size must be >= 1, got {batch_size}")
        self.image_side = int(image_side)
        self.device = resolve_device(device)
        self.amp = amp
        self.batch_size = int(batch_size)
        self._mean = torch.tensor(list(mean), dtype=torch.float32).view(1, 3, 1, 1)
        self._std = torch.tensor(list(std), dtype=torch.float32).view(1, 3, 1, 1)

    @property
    @abstractmethod
    def module(self) -> torch.nn.Module:
        """The underlying ``torch.nn.Module``."""

    @abstractmethod
    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        """Embeddings ``(N, D)`` of a preprocessed batch (differentiable)."""

    def preprocess(self, images: np.ndarray) -> torch.Tensor:
        """``uint8`` images -> normalised float32 ``(N, 3, side, side)`` tensor (on CPU)."""
        x = to_tensor(images, self.image_side, 3)
        return (x - self._mean) / self._std

    def embed(self, images: np.ndarray) -> np.ndarray:
        images = check_images(images)
        out = np.empty((len(images), self.embedding_dim), dtype=np.float32)
        module = self.module
        module.eval()
        amp_dtype = AMP_DTYPES[self.amp]
        with torch.inference_mode():
            for start in range(0, len(images), self.batch_size):
                x = self.preprocess(images[start : start + self.batch_size]).to(self.device)
                if amp_dtype is not None:
                    with torch.autocast(device_type=self.device.type, dtype=amp_dtype):
                        z = self.forward_features(x)
                else:
                    z = self.forward_features(x)
                z = z.float().cpu().numpy()
                if z.shape != (len(x), self.embedding_dim):
                    raise EncoderError(f"{self.name}: forward_features gave shape {z.shape}, expected (n, {self.embedding_dim})")
                out[start : start + len(x)] = z
        return out
