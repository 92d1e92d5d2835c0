"""Shared machinery of every PyTorch encoder (the neural zoo and the hub adapters).

A :class:`TorchEncoder` holds a ``torch.nn.Module`` in eval mode, turns ``uint8``
images into the module's input with torch operations (:meth:`preprocess`),
and embeds in batches under ``torch.inference_mode``, on a chosen device, with
optional mixed precision (``torch.autocast``). ``forward_features`` works on
preprocessed tensors and keeps gradients; ``features_through`` does the same
through a stand-in for :attr:`module`, so the LoRA arm can train through a
batch-norm-folded copy carrying its adapters. The number of CPU threads is whatever ``torch.set_num_threads``
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
    """``None``/``"auto"`` -> CUDA if available, else CPU; otherwise the named device.

    The one device path of every torch encoder (the zoo, hub adapters, model
    files): a CUDA device that this torch lacks is refused here, in one line.

    Examples
    --------
    >>> resolve_device("cpu").type
    'cpu'
    """
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise EncoderError(f"unknown device {device!r}") from exc
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise EncoderError(f"device {str(device)!r}: this torch ({torch.__version__}) has no CUDA device; "
                           "use device auto (or cpu)")
    return resolved


def fold_batch_norm(module: torch.nn.Module) -> torch.nn.Module:
    """An inference copy of ``module`` with every eval-mode batch norm folded into the convolution before it.

    In eval mode a ``BatchNorm2d`` is a fixed per-channel affine map, so
    ``BN(conv(x)) = conv'(x)`` with ``W' = W * gamma / sqrt(var + eps)`` and
    ``b' = beta + (b - mean) * gamma / sqrt(var + eps)`` (Ioffe and Szegedy,
    2015; the folding of Jacob et al., 2018). Only a ``Conv2d`` immediately
    followed by a ``BatchNorm2d`` inside an ``nn.Sequential`` is folded (the
    batch norm becomes ``nn.Identity``; :func:`batch_norm_pairs` lists them); the result equals the original up to
    float rounding (about 1e-6) and, on one CPU thread, embeds the zoo's large
    CNN about 1.5 times and the small one 1.1-1.2 times as fast
    (``benchmarks/bench_embed.py``). A module without such a pair is returned
    as it is, not copied.

    Parameters
    ----------
    module : torch.nn.Module
        A network in eval mode; it is not modified.

    Returns
    -------
    torch.nn.Module
        The folded copy (eval mode, same memory format), or ``module`` itself.

    Examples
    --------
    >>> net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4)).eval()
    >>> folded = fold_batch_norm(net)
    >>> type(folded[1]).__name__
    'Identity'
    >>> x = torch.randn(2, 3, 8, 8)
    >>> bool(torch.allclose(net(x), folded(x), atol=1e-5))
    True
    """
    import copy

    from torch.nn.utils.fusion import fuse_conv_bn_eval

    pairs = batch_norm_pairs(module)
    if not pairs:
        return module
    folded = copy.deepcopy(module).eval()
    for conv_name, norm_name in pairs:
        conv, norm = folded.get_submodule(conv_name), folded.get_submodule(norm_name)
        fused = fuse_conv_bn_eval(conv, norm)
        if conv.weight.is_contiguous(memory_format=torch.channels_last):
            fused = fused.to(memory_format=torch.channels_last)
        _replace(folded, conv_name, fused)
        _replace(folded, norm_name, torch.nn.Identity())
    return folded


def batch_norm_pairs(module: torch.nn.Module) -> list[tuple[str, str]]:
    """Qualified names ``(conv, batch norm)`` of the pairs :func:`fold_batch_norm` folds.

    A pair is a ``Conv2d`` immediately followed by a ``BatchNorm2d`` (exact
    types, not subclasses) among the children of an ``nn.Sequential``. The LoRA
    arm uses the same pairs to carry an adapter through the folding.

    Examples
    --------
    >>> net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
    ...                           torch.nn.Sequential(torch.nn.Conv2d(4, 4, 1), torch.nn.BatchNorm2d(4)))
    >>> batch_norm_pairs(net)
    [('0', '1'), ('3.0', '3.1')]
    """
    pairs = []
    for name, seq in module.named_modules():
        if not isinstance(seq, torch.nn.Sequential):
            continue
        prefix = f"{name}." if name else ""
        kids = list(seq.named_children())
        for (conv_name, conv), (norm_name, norm) in zip(kids, kids[1:]):
            if type(conv) is torch.nn.Conv2d and type(norm) is torch.nn.BatchNorm2d:
                pairs.append((prefix + conv_name, prefix + norm_name))
    return pairs


def _replace(module: torch.nn.Module, name: str, new: torch.nn.Module) -> None:
    """Put ``new`` in place of ``module``'s submodule with qualified name ``name``."""
    parent_name, _, child = name.rpartition(".")
    setattr(module.get_submodule(parent_name) if parent_name else module, child, new)


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

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        """Embeddings ``(N, D)`` of a preprocessed batch (differentiable): :meth:`features_through` :attr:`module`."""
        return self.features_through(self.module, x)

    def features_through(self, module: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
        """Embeddings ``(N, D)`` of a preprocessed batch, computed by ``module`` in place of :attr:`module`.

        ``module`` is :attr:`module` itself or a stand-in of the same
        architecture: a batch-norm-folded copy (:func:`fold_batch_norm`), a copy
        whose weights carry LoRA adapters. The encoder's input handling (memory
        format, which output is the embedding) applies to it as to
        :attr:`module`. Differentiable. The default is ``module(x)``; a subclass
        whose embedding needs more overrides this method, not
        :meth:`forward_features`.
        """
        return module(x)

    def inference_features(self, x: torch.Tensor) -> torch.Tensor:
        """Embeddings of a preprocessed batch for :meth:`embed` (no gradients needed).

        The same function as :meth:`forward_features`; a subclass may compute it
        through a faster inference copy of the module (see :func:`fold_batch_norm`).
        """
        return self.forward_features(x)

    @property
    def n_blocks(self) -> int | None:
        """Blocks the network can be cut into for adapting its last ones (None: it cannot be cut).

        An encoder that can be cut also defines ``block_prefixes(top)``,
        ``lower_features(module, x, top)`` and ``upper_features(module, h, top)``
        (as :class:`~crsbench_lib.encoders.neural.NeuralEncoder` does), with
        ``upper_features(m, lower_features(m, x, k), k) == features_through(m, x)``
        for every ``1 <= k <= n_blocks``: the LoRA arm then adapts the last
        ``k`` blocks and computes the frozen lower layers once per image.
        """
        return None

    def _check_top(self, top: int) -> int:
        n = self.n_blocks
        if n is None or isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= n:
            raise EncoderError(f"{self.name}: cannot cut the network above its last {top!r} blocks "
                               f"({'it cannot be cut' if n is None else f'it has {n}'})")
        return top

    @property
    def inference_module(self) -> torch.nn.Module:
        """The module :meth:`inference_features` runs (:attr:`module`, or a faster copy of it)."""
        return self.module

    def refresh_inference(self) -> None:
        """Rebuild whatever inference copy :meth:`inference_features` uses, after :attr:`module` changed.

        The LoRA arm calls it once its adapters are merged into the weights.
        """

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
                        z = self.inference_features(x)
                else:
                    z = self.inference_features(x)
                z = z.float().cpu().numpy()
                if z.shape != (len(x), self.embedding_dim):
                    raise EncoderError(f"{self.name}: the network gave embeddings of shape {z.shape}, expected (n, {self.embedding_dim})")
                out[start : start + len(x)] = z
        return out
