"""Adapters for public model hubs: timm, open_clip and Hugging Face transformers.

Names (through :func:`crsbench_lib.encoders.registry.build_encoder`):

- ``timm:<model name>`` (``pretrained`` weights from timm's sources), or
  ``timm:<folder>`` holding a Hugging Face-style timm export (``config.json``
  plus weights; loaded as ``local-dir:<folder>``); option ``checkpoint_path``
  loads a local weights file into ``<model name>``.
- ``open_clip:<arch>[:<pretrained tag or weights path>]`` (image tower only).
- ``hf:<hub id or local folder>`` for any transformers image model
  (``AutoModel``): CLIP-like models give ``get_image_features``, ViT-like the
  class token of ``last_hidden_state``, CNN-like the spatial mean of the last
  feature map (``pooling`` overrides: ``"cls"``, ``"mean"``, ``"pooler"``).

Every adapter embeds in batches under ``torch.inference_mode``, on a chosen
``device`` (default: CUDA if available), with optional mixed precision
(``amp="bf16"`` or ``"fp16"``). Preprocessing follows the model's own
configuration (input side, mean, std) and is written with torch operations:
resize (bilinear, anti-aliased) to the model's side, then normalise. Grey
images are replicated to three channels.

Nothing is downloaded unless ``allow_download=True``: by default the loaders
run with ``HF_HUB_OFFLINE`` semantics (local files and the local hub cache
only). timm and open_clip are the optional ``[hub]`` extra; transformers is a
core dependency.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from crsbench_lib.encoders.torch_encoder import TorchEncoder, module_hash
from crsbench_lib.encoders.weights import params_hash
from crsbench_lib.errors import EncoderError

IMAGENET_MEAN: tuple[float, float, float] = (0.485, 0.456, 0.406)
IMAGENET_STD: tuple[float, float, float] = (0.229, 0.224, 0.225)
CLIP_MEAN: tuple[float, float, float] = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD: tuple[float, float, float] = (0.26862954, 0.26130258, 0.27577711)
HUB_DEFAULT_BATCH = 64


def _require(module: str, extra: str = "hub") -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise EncoderError(
            f"{module} is not installed; install the optional extra: pip install 'crsbench[{extra}]'"
            " (it pulls torchvision: see docs/platform-notes.md)"
        ) from exc


@contextlib.contextmanager
def offline_unless(allow_download: bool) -> Iterator[None]:
    """Run a hub loader offline (``HF_HUB_OFFLINE=1``) unless downloads are allowed.

    Sets the environment variables and, if huggingface_hub is already imported,
    its module-level constant (read at import time); restores both afterwards.
    """
    if allow_download:
        yield
        return
    saved = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    constants = None
    try:
        constants = importlib.import_module("huggingface_hub.constants")
    except ImportError:
        pass
    old_const = getattr(constants, "HF_HUB_OFFLINE", None)
    if constants is not None:
        constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if constants is not None:
            constants.HF_HUB_OFFLINE = old_const


def _load_error(kind: str, ref: str, allow_download: bool, exc: Exception) -> EncoderError:
    hint = "" if allow_download else (
        " (offline: pass --allow-download to crsbench run, or set allow_download: true in the profile)"
    )
    return EncoderError(f"{kind}:{ref}: cannot load the model{hint}: {type(exc).__name__}: {exc}".splitlines()[0])


class HubEncoder(TorchEncoder):
    """A hub model wrapped as an :class:`Encoder` (see the module docstring).

    Parameters
    ----------
    name : str
        Registry name (``hf:...``, ``timm:...``, ``open_clip:...``).
    module : torch.nn.Module
        The model (moved to ``device``, eval mode).
    features : callable
        ``features(module, x) -> (N, D)`` on preprocessed input.
    input_side : int
        Side the model expects.
    mean, std : sequence of float
        The model's normalisation.
    identity : mapping
        What, beside the weights, determines the embedding (for the hash).
    device, amp, batch_size
        See :class:`~crsbench_lib.encoders.torch_encoder.TorchEncoder`.
    """

    family = "hub"

    def __init__(
        self,
        name: str,
        module: nn.Module,
        features: Any,
        input_side: int,
        mean: Sequence[float],
        std: Sequence[float],
        identity: dict[str, Any],
        device: str | torch.device | None = None,
        amp: str = "none",
        batch_size: int = HUB_DEFAULT_BATCH,
    ) -> None:
        super().__init__(input_side, mean, std, device=device, amp=amp, batch_size=batch_size)
        self.name = name
        self._module = module.to(self.device).eval()
        self._features = features
        self._identity = {**identity, "input_side": int(input_side), "mean": list(mean), "std": list(std)}
        self._weights_hash: str | None = None
        with torch.inference_mode():
            probe = self.forward_features(self.preprocess(np.zeros((1, 8, 8), dtype=np.uint8)).to(self.device))
        if probe.ndim != 2:
            raise EncoderError(f"{name}: features have shape {tuple(probe.shape)}, expected (N, D)")
        self.embedding_dim = int(probe.shape[1])

    @property
    def module(self) -> nn.Module:
        return self._module

    @property
    def weights_hash(self) -> str:
        if self._weights_hash is None:  # hashing a large model's state takes a moment: do it once
            self._weights_hash = params_hash(
                {**self._identity, "state": module_hash(self._module), "amp": self.amp, "device": self.device.type}
            )
        return self._weights_hash

    def features_through(self, module: nn.Module, x: torch.Tensor) -> torch.Tensor:
        return self._features(module, x)


# ---------------------------------------------------------------- transformers


def _hf_preprocessor_config(ref: str, allow_download: bool) -> dict[str, Any]:
    path = Path(ref)
    if path.is_dir():
        file = path / "preprocessor_config.json"
        return json.loads(file.read_text(encoding="utf-8")) if file.exists() else {}
    try:
        from huggingface_hub import hf_hub_download

        with offline_unless(allow_download):
            file = hf_hub_download(ref, "preprocessor_config.json", local_files_only=not allow_download)
        return json.loads(Path(file).read_text(encoding="utf-8"))
    except Exception:  # noqa: BLE001 - a model without a preprocessor config uses the defaults below
        return {}


def _hf_side(pre: dict[str, Any], config: Any) -> int:
    for key in ("crop_size", "size"):
        value = pre.get(key)
        if isinstance(value, int):
            return value
        if isinstance(value, dict):
            for sub in ("height", "shortest_edge", "width"):
                if sub in value:
                    return int(value[sub])
    for cfg in (config, getattr(config, "vision_config", None)):
        side = getattr(cfg, "image_size", None)
        if side is not None:
            return int(side if isinstance(side, int) else side[0])
    return 224


def _hf_features(pooling: str) -> Any:
    def features(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
        if pooling == "auto" and hasattr(model, "get_image_features"):
            out = model.get_image_features(pixel_values=x)
            return out if isinstance(out, torch.Tensor) else out.pooler_output
        out = model(pixel_values=x)
        if pooling == "pooler" or (pooling == "auto" and getattr(out, "last_hidden_state", None) is None):
            pooled = out.pooler_output
            return pooled.flatten(1)
        h = out.last_hidden_state
        if h.ndim == 4:  # CNN-like: (N, C, H, W)
            return h.mean(dim=(2, 3))
        if pooling == "mean":
            return h[:, 1:].mean(dim=1)
        return h[:, 0]

    return features


def build_hf(ref: str, allow_download: bool = False, pooling: str = "auto", **kw: Any) -> HubEncoder:
    """A transformers image model from a local folder or hub id (``hf:<ref>``)."""
    if pooling not in ("auto", "cls", "mean", "pooler"):
        raise EncoderError(f"hf:{ref}: pooling must be auto, cls, mean or pooler, got {pooling!r}")
    transformers = _require("transformers", extra="")
    local = Path(ref).is_dir()
    try:
        with offline_unless(allow_download):
            model = transformers.AutoModel.from_pretrained(ref, local_files_only=not allow_download)
    except Exception as exc:  # noqa: BLE001 - transformers raises many types for a missing model
        raise _load_error("hf", ref, allow_download, exc) from exc
    pre = _hf_preprocessor_config(ref, allow_download)
    side = _hf_side(pre, model.config)
    mean = pre.get("image_mean", (0.5, 0.5, 0.5))
    std = pre.get("image_std", (0.5, 0.5, 0.5))
    identity = {"kind": "hf", "ref": str(Path(ref).resolve()) if local else ref, "pooling": pooling}
    return HubEncoder(f"hf:{ref}", model, _hf_features(pooling), side, mean, std, identity, **kw)


# ---------------------------------------------------------------- timm


def build_timm(
    ref: str,
    allow_download: bool = False,
    pretrained: bool = True,
    checkpoint_path: str | None = None,
    model_kwargs: dict[str, Any] | None = None,
    **kw: Any,
) -> HubEncoder:
    """A timm model as a feature extractor (``num_classes=0``) from a name or local folder."""
    timm = _require("timm")
    model_name = f"local-dir:{ref}" if Path(ref).is_dir() else ref
    try:
        with offline_unless(allow_download):
            model = timm.create_model(
                model_name,
                pretrained=bool(pretrained) and checkpoint_path is None,
                num_classes=0,
                checkpoint_path=checkpoint_path or "",
                **(model_kwargs or {}),
            )
    except Exception as exc:  # noqa: BLE001
        raise _load_error("timm", ref, allow_download, exc) from exc
    cfg = dict(getattr(model, "pretrained_cfg", None) or {})
    input_size = cfg.get("input_size", (3, 224, 224))
    side = int((model_kwargs or {}).get("img_size", input_size[-1]))
    mean = cfg.get("mean", IMAGENET_MEAN)
    std = cfg.get("std", IMAGENET_STD)
    identity = {"kind": "timm", "ref": ref, "pretrained": bool(pretrained), "checkpoint": checkpoint_path, "kwargs": model_kwargs}
    return HubEncoder(f"timm:{ref}", model, lambda m, x: m(x), side, mean, std, identity, **kw)


# ---------------------------------------------------------------- open_clip


def build_open_clip(ref: str, allow_download: bool = False, **kw: Any) -> HubEncoder:
    """The image tower of an open_clip model: ``<arch>[:<pretrained tag or weights path>]``."""
    open_clip = _require("open_clip")
    arch, _, pretrained = ref.partition(":")
    try:
        with offline_unless(allow_download):
            model = open_clip.create_model(arch, pretrained=pretrained or None)
    except Exception as exc:  # noqa: BLE001
        raise _load_error("open_clip", ref, allow_download, exc) from exc
    visual = model.visual
    size = getattr(visual, "image_size", 224)
    side = int(size if isinstance(size, int) else size[0])
    pcfg = getattr(visual, "preprocess_cfg", None) or {}
    mean = pcfg.get("mean", getattr(visual, "image_mean", None) or CLIP_MEAN)
    std = pcfg.get("std", getattr(visual, "image_std", None) or CLIP_STD)
    identity = {"kind": "open_clip", "ref": ref}
    return HubEncoder(f"open_clip:{ref}", model, lambda m, x: m.encode_image(x), side, mean, std, identity, **kw)


_BUILDERS = {"hf": build_hf, "timm": build_timm, "open_clip": build_open_clip}


def build_hub_encoder(prefix: str, ref: str, image_side: int = 32, **options: Any) -> HubEncoder:
    """Build ``<prefix>:<ref>``; ``image_side`` is unused (hub models keep their own input side).

    Options: ``allow_download`` (default False), ``device`` (default: CUDA if
    available), ``amp`` (``none``/``bf16``/``fp16``), ``batch_size`` (default 64),
    plus per-hub options (``pooling`` for hf; ``pretrained``, ``checkpoint_path``,
    ``model_kwargs`` for timm).
    """
    if not ref:
        raise EncoderError(f"hub name {prefix}: needs a model after the colon, e.g. {prefix}:<id or path>")
    options.setdefault("device", None)
    options.setdefault("batch_size", HUB_DEFAULT_BATCH)
    try:
        return _BUILDERS[prefix](ref, **options)
    except TypeError as exc:
        raise EncoderError(f"{prefix}:{ref}: bad options {sorted(options)} ({exc})") from exc
