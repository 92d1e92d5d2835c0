"""Small networks exported as model files, built in the tests (no file is shipped).

:class:`TinyNet` is a torchvision/timm-style module: it resizes, normalises,
runs a convolution and pools inside, so it keeps the file contract (float32
``N x 3 x S x S`` in ``[0, 1]`` in, ``N x D`` out). The broken modules break
one clause of the contract each.
"""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

WIDTH = 6


class TinyNet(nn.Module):
    """Resize to 16 px, ImageNet-normalise, a 3x3 convolution, mean-pool, a linear head to ``width`` features."""

    def __init__(self, width: int = WIDTH, seed: int = 0) -> None:
        super().__init__()
        torch.manual_seed(seed)
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Linear(8, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.interpolate(x, size=(16, 16), mode="bilinear", align_corners=False)
        x = (x - self.mean) / self.std
        return self.head(F.relu(self.conv(x)).mean(dim=(2, 3)))


class ThreeD(nn.Module):
    """Returns ``N x C x H``: not pooled."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=3)


class ReturnsNaN(nn.Module):
    """Returns NaN features (a log of negative values)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(-1.0 - x.mean(dim=(2, 3)))


class WidthFollowsBatch(nn.Module):
    """Returns ``N x 3N`` features: the width changes with the batch size."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=(2, 3)).repeat(1, x.shape[0])


def sample(n: int = 2, side: int = 32) -> torch.Tensor:
    return torch.rand(n, 3, side, side, generator=torch.Generator().manual_seed(1))


def export_pt2(module: nn.Module, path: Path, side: int = 32) -> Path:
    """``torch.export`` with a dynamic batch dimension, saved with ``torch.export.save``."""
    batch = torch.export.Dim("batch", min=1, max=4096)
    program = torch.export.export(module.eval(), (sample(2, side),), dynamic_shapes={"x": {0: batch}})
    torch.export.save(program, str(path))
    return path


def export_torchscript(module: nn.Module, path: Path, side: int = 32, script: bool = False) -> Path:
    """TorchScript by tracing (or scripting, for shape-dependent code), saved with ``.save``."""
    compiled = torch.jit.script(module.eval()) if script else torch.jit.trace(module.eval(), sample(2, side))
    compiled.save(str(path))
    return path


def onnx_available() -> bool:
    """Whether onnxruntime can run an ONNX file here (the optional ``[onnx]`` extra; the test extra installs it)."""
    return importlib.util.find_spec("onnxruntime") is not None and importlib.util.find_spec("onnx") is not None


def export_onnx(module: nn.Module, path: Path, side: int = 32) -> Path:
    """ONNX with a dynamic batch axis (torch's TorchScript-based exporter, which needs no onnxscript)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module.eval(), (sample(2, side),), str(path), input_names=["images"],
                          output_names=["features"], dynamic_axes={"images": {0: "batch"}, "features": {0: "batch"}},
                          dynamo=False)
    return path
