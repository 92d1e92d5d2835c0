"""The neural zoo: small CNN and ViT architectures and their encoders.

Three backbones, each well under one million parameters so that the whole
zoo embeds the default cohort in minutes on two CPU cores:

- :class:`SmallCNN` at two capacities: four ``3x3`` conv-BN-ReLU stages with
  ``2x2`` max-pooling between them, widths 16-32-64-128 (``cnn_s``) or
  24-48-96-192 (``cnn_l``, 2.2 times the parameters); the embedding is the
  global average of the last stage. Fully convolutional, so any
  ``image_side`` works.
- :class:`SmallViT` (``vit_s``): ``4x4`` patches, width 64, 3 pre-norm
  transformer blocks with 4 heads; the embedding is the final class token
  concatenated with the mean patch token (128 values). Position embeddings are
  stored for a 32-px grid and bilinearly resized for other sides.

The encoders of :data:`NEURAL_ZOO` differ in how their weights came about: the
recipes (pool, objective, augmentations, steps) are data in
:mod:`crsbench_lib.encoders.recipes` and the training code is
:mod:`crsbench_lib.runner.pretrain`. Images are read as RGB (grey
replicated), resized to ``image_side`` and normalised with mean 0.5 and std
0.25 per channel.
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from crsbench_lib.encoders.recipes import ARCHITECTURES, CNN_WIDTHS, NEURAL_ZOO, PRETRAIN_SIDE, VIT_S, NeuralSpec
from crsbench_lib.encoders.torch_encoder import TorchEncoder, fold_batch_norm
from crsbench_lib.encoders.weights import load_state, params_hash
from crsbench_lib.errors import EncoderError

NORM_MEAN: tuple[float, float, float] = (0.5, 0.5, 0.5)
NORM_STD: tuple[float, float, float] = (0.25, 0.25, 0.25)
# Bump when an architecture's forward pass changes: part of weights_hash.
# 4: embeddings go through the batch-norm-folded copy (the same function, other rounding).
NEURAL_CODE_VERSION = "4"

__all__ = ["ARCHITECTURES", "NEURAL_ZOO", "NeuralEncoder", "NeuralSpec", "SmallCNN", "SmallViT", "make_backbone"]


class SmallCNN(nn.Module):
    """Four conv-BN-ReLU stages with max-pooling; global-average-pooled output.

    Parameters
    ----------
    widths : tuple of int
        Output channels of each stage.
    """

    def __init__(self, widths: tuple[int, ...] = CNN_WIDTHS["cnn_s"]) -> None:
        super().__init__()
        self.widths = tuple(widths)
        layers: list[nn.Module] = []
        c_in = 3
        for k, c_out in enumerate(self.widths):
            layers += [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True)]
            if k < len(self.widths) - 1:
                layers.append(nn.MaxPool2d(2))
            c_in = c_out
        self.features = nn.Sequential(*layers)
        self.out_dim = self.widths[-1]

    def feature_map(self, x: torch.Tensor) -> torch.Tensor:
        """Last-stage feature map ``(N, widths[-1], side/8, side/8)``."""
        return self.features(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.feature_map(x).mean(dim=(2, 3))

    @property
    def n_blocks(self) -> int:
        """Stages, the blocks :meth:`lower` and :meth:`upper` cut between."""
        return len(self.widths)

    def _block_start(self, top: int) -> int:
        # A stage is conv-BN-ReLU plus, except for the last, a max-pool: stage k starts at 4 k.
        return 4 * (len(self.widths) - top)

    def block_prefixes(self, top: int) -> tuple[str, ...]:
        """Qualified-name prefixes of the layers of the last ``top`` stages."""
        return tuple(f"features.{i}" for i in range(self._block_start(top), len(self.features)))

    def lower(self, x: torch.Tensor, top: int) -> torch.Tensor:
        """The feature map entering the last ``top`` stages (the same layers as :meth:`forward`)."""
        return self.features[: self._block_start(top)](x)

    def upper(self, h: torch.Tensor, top: int) -> torch.Tensor:
        """The embedding from :meth:`lower`'s output: ``upper(lower(x, k), k) == forward(x)``."""
        return self.features[self._block_start(top) :](h).mean(dim=(2, 3))


class Attention(nn.Module):
    """Multi-head self-attention with separate ``nn.Linear`` layers (LoRA can target ``qkv``/``proj``)."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, t, d = x.shape
        q, k, v = self.qkv(x).reshape(n, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(q, k, v)  # softmax(q k^T / sqrt(d_head)) v, fused
        return self.proj(out.transpose(1, 2).reshape(n, t, d))


class Block(nn.Module):
    """Pre-norm transformer block: ``x + attn(LN(x))``, then ``x + MLP(LN(x))``."""

    def __init__(self, dim: int, heads: int, mlp: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, mlp)
        self.fc2 = nn.Linear(mlp, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class SmallViT(nn.Module):
    """A small vision transformer (Dosovitskiy et al., 2021) for 32-px images."""

    patch = VIT_S.patch
    dim = VIT_S.dim
    depth = VIT_S.depth
    heads = VIT_S.heads
    mlp = VIT_S.mlp

    def __init__(self) -> None:
        super().__init__()
        grid = PRETRAIN_SIDE // self.patch
        self.patch_embed = nn.Conv2d(3, self.dim, self.patch, stride=self.patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, self.dim))
        self.pos_embed = nn.Parameter(torch.randn(1, grid * grid, self.dim) * 0.02)
        self.blocks = nn.ModuleList([Block(self.dim, self.heads, self.mlp) for _ in range(self.depth)])
        self.norm = nn.LayerNorm(self.dim)
        self.out_dim = 2 * self.dim

    def patch_tokens(self, x: torch.Tensor) -> torch.Tensor:
        """Patch embeddings plus position embeddings, ``(N, L, dim)``."""
        tok = self.patch_embed(x)
        n, d, gh, gw = tok.shape
        pos = self.pos_embed
        grid = PRETRAIN_SIDE // self.patch
        if (gh, gw) != (grid, grid):
            pos = pos.reshape(1, grid, grid, d).permute(0, 3, 1, 2)
            pos = F.interpolate(pos, size=(gh, gw), mode="bilinear", align_corners=False)
            pos = pos.permute(0, 2, 3, 1).reshape(1, gh * gw, d)
        return tok.flatten(2).transpose(1, 2) + pos

    def with_class_token(self, tokens: torch.Tensor) -> torch.Tensor:
        """The class token prepended to the tokens: ``(N, 1 + L, dim)``."""
        return torch.cat([self.cls_token.expand(len(tokens), -1, -1), tokens], dim=1)

    def encode(self, tokens: torch.Tensor) -> torch.Tensor:
        """Prepend the class token, run the blocks, apply the final norm: ``(N, 1 + L, dim)``."""
        x = self.with_class_token(tokens)
        for block in self.blocks:
            x = block(x)
        return self.norm(x)

    @staticmethod
    def pool(h: torch.Tensor) -> torch.Tensor:
        """The embedding of normed tokens: the class token beside the mean patch token."""
        return torch.cat([h[:, 0], h[:, 1:].mean(dim=1)], dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(self.encode(self.patch_tokens(x)))

    n_blocks = depth

    def block_prefixes(self, top: int) -> tuple[str, ...]:
        """Qualified-name prefixes of the last ``top`` transformer blocks (the final norm has no weight LoRA adapts)."""
        return tuple(f"blocks.{i}" for i in range(self.depth - top, self.depth))

    def lower(self, x: torch.Tensor, top: int) -> torch.Tensor:
        """The tokens entering the last ``top`` blocks, ``(N, 1 + L, dim)``."""
        h = self.with_class_token(self.patch_tokens(x))
        for block in self.blocks[: self.depth - top]:
            h = block(h)
        return h

    def upper(self, h: torch.Tensor, top: int) -> torch.Tensor:
        """The embedding from :meth:`lower`'s output: ``upper(lower(x, k), k) == forward(x)``."""
        for block in self.blocks[self.depth - top :]:
            h = block(h)
        return self.pool(self.norm(h))


def make_backbone(architecture: str) -> nn.Module:
    """A fresh (randomly initialised) backbone of the named architecture.

    Parameters
    ----------
    architecture : {"cnn_s", "cnn_l", "vit_s"}

    Returns
    -------
    torch.nn.Module
        With an ``out_dim`` attribute (embedding width).

    Examples
    --------
    >>> make_backbone("cnn_l").out_dim
    192
    """
    if architecture in CNN_WIDTHS:
        return SmallCNN(CNN_WIDTHS[architecture])
    if architecture == "vit_s":
        return SmallViT()
    raise EncoderError(f"unknown architecture {architecture!r} (expected one of {', '.join(ARCHITECTURES)})")


def count_parameters(architecture: str) -> int:
    """Parameters of a backbone, counted from the module (buffers such as BN statistics excluded)."""
    return sum(p.numel() for p in make_backbone(architecture).parameters())


class NeuralEncoder(TorchEncoder):
    """An encoder of the neural zoo: a backbone with shipped, hash-checked weights.

    Parameters
    ----------
    name : str
        A key of :data:`NEURAL_ZOO`.
    image_side : int
        Working side (32 by default; 64 works: CNNs are fully convolutional and
        the ViT resizes its position grid).
    weights_dir : path-like, optional
        Folder of weight files and ``manifest.json`` (default: the shipped one).
    device, amp, batch_size
        See :class:`~crsbench_lib.encoders.torch_encoder.TorchEncoder`.
    """

    family = "neural"

    def __init__(
        self,
        name: str,
        image_side: int = 32,
        weights_dir: str | Path | None = None,
        device: str | torch.device | None = "cpu",
        amp: str = "none",
        batch_size: int = 256,
    ) -> None:
        if name not in NEURAL_ZOO:
            raise EncoderError(f"unknown neural encoder {name!r} (valid: {', '.join(NEURAL_ZOO)})")
        if image_side < 16 or image_side % 8:
            raise EncoderError(f"{name}: image_side must be a multiple of 8 and >= 16, got {image_side}")
        super().__init__(image_side, NORM_MEAN, NORM_STD, device=device, amp=amp, batch_size=batch_size)
        self.spec = NEURAL_ZOO[name]
        self.name = name
        net = make_backbone(self.spec.architecture)
        state, self._weights_hash = load_state(self.spec.state_file, None if weights_dir is None else Path(weights_dir))
        state = {k: v.to(torch.float32) if v.is_floating_point() else v for k, v in state.items()}
        try:
            net.load_state_dict(state, strict=True)
        except RuntimeError as exc:
            raise EncoderError(f"{self.spec.state_file}: does not fit the {self.spec.architecture} backbone ({exc})") from exc
        # channels-last convolutions run about twice as fast on CPU (oneDNN).
        self._channels_last = self.spec.architecture in CNN_WIDTHS
        if self._channels_last:
            net = net.to(memory_format=torch.channels_last)
        self._module = net.to(self.device).eval()
        self._inference = fold_batch_norm(self._module)
        self.embedding_dim = int(net.out_dim)

    @property
    def module(self) -> nn.Module:
        return self._module

    @property
    def weights_hash(self) -> str:
        # The file hash plus what else changes the numbers: side, precision, device kind.
        return params_hash(
            {
                "file_sha256": self._weights_hash,
                "code": NEURAL_CODE_VERSION,
                "image_side": self.image_side,
                "amp": self.amp,
                "device": self.device.type,
            }
        )

    def features_through(self, module: nn.Module, x: torch.Tensor) -> torch.Tensor:
        if self._channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        return module(x)

    def inference_features(self, x: torch.Tensor) -> torch.Tensor:
        # Batch norm folded into the convolutions: the same function, faster (fold_batch_norm).
        return self.features_through(self._inference, x)

    @property
    def n_blocks(self) -> int:
        return int(self._module.n_blocks)

    def block_prefixes(self, top: int) -> tuple[str, ...]:
        return self._module.block_prefixes(self._check_top(top))

    def lower_features(self, module: nn.Module, x: torch.Tensor, top: int) -> torch.Tensor:
        if self._channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        return module.lower(x, self._check_top(top))

    def upper_features(self, module: nn.Module, h: torch.Tensor, top: int) -> torch.Tensor:
        return module.upper(h, self._check_top(top))

    @property
    def inference_module(self) -> nn.Module:
        return self._inference

    def refresh_inference(self) -> None:
        self._inference = fold_batch_norm(self._module)
