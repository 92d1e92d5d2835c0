"""Exported model files as encoders: ``file:<path>``.

A team's own encoder (a checkpoint fine-tuned in-house, a vendor's model)
enters the benchmark as one self-contained file, in one of three formats:

- a ``torch.export`` archive (``.pt2``, written by ``torch.export.save``),
  loaded with ``torch.export.load``;
- a TorchScript file (``.pt`` or ``.torchscript``, written by
  ``torch.jit.script(...).save`` or ``torch.jit.trace(...).save``), loaded
  with ``torch.jit.load``;
- an ONNX file (``.onnx``), run with onnxruntime (the optional ``[onnx]``
  extra).

The contract: the model takes one float32 tensor ``N x 3 x S x S`` with values
in ``[0, 1]`` (RGB; grey images are replicated to three channels) at the side
``S`` it is built for (the run's working side, or the ``image_side`` of the
profile's mapping form), and returns ``N x D`` features, ``D`` fixed. Resizing
and normalisation are the model's own business, inside the file. Nothing is
unpickled beyond what those loaders read safely: a ``torch.save`` pickle of a
module is recognised from its archive layout and refused before any loader
sees it, and the file is never executed as Python.

The encoder's identity (:attr:`FileEncoder.weights_hash`, part of every
embedding's and cell's key) holds the file's sha256, so a changed file is
recomputed and the same file reused. It runs on the CPU or a GPU and embeds in
batches with optional mixed precision, through the same
:class:`~crsbench_lib.encoders.torch_encoder.TorchEncoder` path as the hub
adapters. An exported graph has no layers to attach LoRA adapters to, so the
LoRA arm leaves it out (:attr:`FileEncoder.not_adaptable`).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from crsbench_lib.encoders.imaging import to_tensor
from crsbench_lib.encoders.torch_encoder import TorchEncoder
from crsbench_lib.encoders.weights_manifest import params_hash
from crsbench_lib.encoders.zoo import FILE_NOT_ADAPTABLE, FILE_PREFIX, MODEL_FILE_FORMATS
from crsbench_lib.errors import EncoderError
from crsbench_lib.hashing import file_sha256

#: Images per forward pass unless the caller says otherwise (as for hub models).
FILE_DEFAULT_BATCH = 64
#: Why a ``torch.save`` pickle is refused.
PICKLE_REFUSED = ("is a pickle (torch.save of a module), which is never loaded because unpickling runs arbitrary "
                  "code: export the module with torch.export.save (.pt2) or torch.jit.script/trace(...).save (.pt)")
ONNX_MISSING = "onnxruntime is not installed; install the optional extra: pip install 'crsbench[onnx]'"


def model_format(path: str | Path) -> str:
    """The format a model file's suffix names (``torch.export``, ``TorchScript`` or ``ONNX``).

    Raises
    ------
    EncoderError
        For any other suffix (the message lists the accepted ones).

    Examples
    --------
    >>> model_format("enc.pt2"), model_format("enc.torchscript"), model_format("enc.onnx")
    ('torch.export', 'TorchScript', 'ONNX')
    """
    fmt = MODEL_FILE_FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise EncoderError(f"file:{path}: unknown model file suffix {Path(path).suffix!r} "
                           f"(expected {', '.join(MODEL_FILE_FORMATS)})")
    return fmt


def _members(path: Path) -> set[str] | None:
    """The record names of a zip archive without their top folder, None if it is not a zip archive."""
    if not zipfile.is_zipfile(path):
        return None
    with zipfile.ZipFile(path) as archive:
        return {name.partition("/")[2] for name in archive.namelist()}


def check_model_file(path: str | Path) -> str:
    """Check that a file exists and looks like a model of the format its suffix names; return that format.

    Only the archive's table of contents is read: a ``torch.export`` archive
    holds an ``archive_format`` record, a TorchScript file ``constants.pkl``
    and ``code/``; a ``torch.save`` pickle (``data.pkl`` without code) is
    refused here, before any loader reads it.

    Parameters
    ----------
    path : path-like
        The model file.

    Returns
    -------
    str
        ``torch.export``, ``TorchScript`` or ``ONNX``.

    Raises
    ------
    EncoderError
        One line naming the file: missing, an unknown suffix, a pickle, or not a
        model of its format.
    """
    path = Path(path)
    if not path.is_file():
        raise EncoderError(f"file:{path}: no such model file")
    fmt = model_format(path)
    members = _members(path)
    pickled = members is not None and "data.pkl" in members and not any(m.startswith("code/") for m in members)
    if pickled:
        raise EncoderError(f"file:{path}: {PICKLE_REFUSED}")
    if fmt == "torch.export" and (members is None or "archive_format" not in members):
        raise EncoderError(f"file:{path}: is not a torch.export archive (expected a file written by torch.export.save)")
    if fmt == "TorchScript" and (members is None or "constants.pkl" not in members):
        raise EncoderError(f"file:{path}: is not a TorchScript file (expected a file written by "
                           "torch.jit.script(...).save or torch.jit.trace(...).save)")
    return fmt


@contextlib.contextmanager
def _quiet(logger: str) -> Iterator[None]:
    """Silence a library logger (torch.export logs a traceback before raising its own error)."""
    log = logging.getLogger(logger)
    level = log.level
    log.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        log.setLevel(level)


class ExportedModule(nn.Module):
    """The module of a ``torch.export`` archive, in a shell whose ``eval()`` and ``train()`` leave it as exported.

    An exported program's module refuses ``eval()`` (its mode was fixed when
    it was exported); the shared embedding loop calls it on every module.
    """

    def __init__(self, graph_module: nn.Module) -> None:
        super().__init__()
        self.graph_module = graph_module

    def train(self, mode: bool = True) -> ExportedModule:
        self.training = bool(mode)  # the exported graph's own mode is fixed: not passed on
        return self

    def forward(self, x: torch.Tensor) -> Any:
        return self.graph_module(x)


class OnnxModule(nn.Module):
    """An onnxruntime session behind the ``nn.Module`` call of the other formats (no parameters, no gradients).

    Parameters
    ----------
    session : onnxruntime.InferenceSession
        A session whose model takes one input and returns the features first.
    """

    def __init__(self, session: Any) -> None:
        super().__init__()
        self.session = session
        inputs = session.get_inputs()
        if len(inputs) != 1:
            raise EncoderError(f"the ONNX model takes {len(inputs)} inputs, expected one (the image batch)")
        self.input_name = inputs[0].name

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        array = x.detach().to("cpu", torch.float32).contiguous().numpy()
        return torch.from_numpy(np.asarray(self.session.run(None, {self.input_name: array})[0]))


def _onnx_parameters(path: Path) -> int | None:
    """Values in an ONNX file's initializers, if the ``onnx`` package is there to read them.

    ONNX stores weights and constant tensors (a normalisation's mean and std)
    alike as initializers, so the count includes those constants.
    """
    try:
        onnx = importlib.import_module("onnx")
        model = onnx.load(str(path), load_external_data=False)
    except Exception:  # noqa: BLE001 - a count the format cannot give is left out of the card
        return None
    return int(sum(int(np.prod(t.dims)) for t in model.graph.initializer))


def load_model(path: str | Path, device: torch.device) -> tuple[nn.Module, str, int | None]:
    """Load a model file for inference on ``device``.

    Parameters
    ----------
    path : path-like
        A ``.pt2``, ``.pt``, ``.torchscript`` or ``.onnx`` file.
    device : torch.device
        Where it runs (ONNX: onnxruntime's CUDA provider for a CUDA device).

    Returns
    -------
    module : torch.nn.Module
        Callable on a float32 ``N x 3 x S x S`` tensor (eval mode).
    format : str
        ``torch.export``, ``TorchScript`` or ``ONNX``.
    parameters : int or None
        Values in the model's weights, where the format tells.

    Raises
    ------
    EncoderError
        One line naming the file (see :func:`check_model_file`), or onnxruntime
        missing for an ONNX file.
    """
    path = Path(path)
    fmt = check_model_file(path)
    try:
        if fmt == "torch.export":
            with _quiet("torch.export"):
                module = ExportedModule(torch.export.load(str(path)).module())
            module = module.to(device)
        elif fmt == "TorchScript":
            module = torch.jit.load(str(path), map_location=device)
        else:
            try:
                ort = importlib.import_module("onnxruntime")
            except ImportError:
                raise EncoderError(f"file:{path}: {ONNX_MISSING}") from None
            providers = ["CPUExecutionProvider"]
            if device.type == "cuda":
                providers.insert(0, "CUDAExecutionProvider")
            module = OnnxModule(ort.InferenceSession(str(path), providers=providers))
    except EncoderError:
        raise
    except Exception as exc:  # noqa: BLE001 - each loader raises its own types for a damaged file
        detail = (str(exc).strip().splitlines() or [""])[0][:200]
        raise EncoderError(f"file:{path}: is not a loadable {fmt} model ({type(exc).__name__}: {detail})") from exc
    if fmt == "ONNX":
        parameters = _onnx_parameters(path)
    else:
        parameters = int(sum(p.numel() for p in module.parameters()))
    return module.eval(), fmt, parameters


def model_identity(path: str | Path, fmt: str, image_side: int, amp: str, device: str, sha256: str | None = None) -> str:
    """The identity of a model file's embeddings (a :attr:`FileEncoder.weights_hash`): its bytes and how it is fed.

    The sha256 of the file's bytes, its format, the side fed to it, the mixed
    precision and the device type: the same file gives the same identity
    wherever it lies, and any changed byte another.

    Parameters
    ----------
    path : path-like
        The model file (read unless ``sha256`` is given).
    fmt, image_side, amp, device
        Format, input side, ``amp`` setting and device type.
    sha256 : str, optional
        The file's hash, when already read.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     file = pathlib.Path(folder) / "m.pt2"
    ...     _ = file.write_bytes(b"weights")
    ...     a = model_identity(file, "torch.export", 32, "none", "cpu")
    ...     _ = file.write_bytes(b"weightz")
    ...     a == model_identity(file, "torch.export", 32, "none", "cpu")
    False
    """
    digest = sha256 if sha256 is not None else file_sha256(path)
    return params_hash({"kind": FILE_PREFIX, "format": fmt, "sha256": digest, "input_side": int(image_side),
                        "amp": amp, "device": device})


def probe_images(n: int, side: int) -> np.ndarray:
    """``n`` deterministic ``uint8`` RGB images of ``side`` pixels: gradients of different slopes and colours.

    Examples
    --------
    >>> probe_images(2, 8).shape, probe_images(2, 8).dtype.name
    ((2, 8, 8, 3), 'uint8')
    """
    ramp = np.linspace(0.0, 1.0, side, dtype=np.float64)
    yy, xx = np.meshgrid(ramp, ramp, indexing="ij")
    images = []
    for k in range(n):
        colour = np.array([(k % 3 + 1) / 3, ((k + 1) % 4 + 1) / 4, ((k + 2) % 5 + 1) / 5])
        plane = (xx * (k + 1) + yy) % 1.0
        images.append(np.round(255 * plane[..., None] * colour).astype(np.uint8))
    return np.stack(images)


class FileEncoder(TorchEncoder):
    """An exported model file as an :class:`~crsbench_lib.encoders.base.Encoder` (see the module docstring).

    Parameters
    ----------
    path : path-like
        The model file (``.pt2``, ``.pt``, ``.torchscript``, ``.onnx``).
    image_side : int
        The side ``S`` of the ``N x 3 x S x S`` input it is fed.
    name : str, optional
        Registry name (default ``file:<path>``).
    device, amp, batch_size
        See :class:`~crsbench_lib.encoders.torch_encoder.TorchEncoder` (device
        default: CUDA if available).

    Raises
    ------
    EncoderError
        One line naming the file: missing, not a model, a pickle, onnxruntime
        missing, or a model whose output on two probe images is not a finite
        ``2 x D`` array.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     file = pathlib.Path(folder) / "net.pt"
    ...     torch.jit.trace(net.eval(), torch.rand(2, 3, 16, 16)).save(str(file))
    ...     encoder = FileEncoder(file, image_side=16, name="mine", device="cpu")
    ...     z = encoder.embed(probe_images(3, 24))
    >>> encoder.name, encoder.format, encoder.embedding_dim, encoder.parameters, z.shape
    ('mine', 'TorchScript', 4, 112, (3, 4))
    """

    family = "file"
    not_adaptable = FILE_NOT_ADAPTABLE

    def __init__(
        self,
        path: str | Path,
        image_side: int,
        name: str | None = None,
        device: str | torch.device | None = None,
        amp: str = "none",
        batch_size: int = FILE_DEFAULT_BATCH,
    ) -> None:
        if isinstance(image_side, bool) or not isinstance(image_side, int) or image_side < 1:
            raise EncoderError(f"file:{path}: image_side must be a positive integer, got {image_side!r}")
        super().__init__(image_side, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0), device=device, amp=amp, batch_size=batch_size)
        self.path = Path(path).expanduser().resolve()
        self.name = name or f"{FILE_PREFIX}:{path}"
        self._module, self.format, self.parameters = load_model(self.path, self.device)
        self.sha256 = file_sha256(self.path)
        self.bytes = self.path.stat().st_size
        self.embedding_dim = 0  # set from the probe below: the width is the model's to tell
        with torch.inference_mode():
            probe = self.forward_features(self.preprocess(probe_images(2, self.image_side)).to(self.device))
        self.embedding_dim = int(probe.shape[1])

    @property
    def module(self) -> nn.Module:
        return self._module

    @property
    def weights_hash(self) -> str:
        return model_identity(self.path, self.format, self.image_side, self.amp, self.device.type, self.sha256)

    def preprocess(self, images: np.ndarray) -> torch.Tensor:
        """``uint8`` images -> float32 ``(N, 3, side, side)`` in ``[0, 1]`` (the model normalises itself)."""
        return to_tensor(images, self.image_side, 3)

    def features_through(self, module: nn.Module, x: torch.Tensor) -> torch.Tensor:
        """The model's output on a batch, checked against the contract (one finite ``N x D`` tensor, ``D`` fixed)."""
        try:
            out = module(x)
        except Exception as exc:  # noqa: BLE001 - whatever the graph raises is the model's error, named once
            detail = (str(exc).strip().splitlines() or [""])[0][:200]
            raise EncoderError(f"{self.name}: the model failed on a batch of shape {tuple(x.shape)} "
                               f"({type(exc).__name__}: {detail})") from exc
        if not isinstance(out, torch.Tensor):
            raise EncoderError(f"{self.name}: the model returned {type(out).__name__}, expected one N x D tensor")
        n = int(x.shape[0])
        if out.ndim != 2 or out.shape[0] != n:
            raise EncoderError(f"{self.name}: the model's output has shape {tuple(out.shape)} on {n} images, "
                               f"expected ({n}, D): one feature vector per image (pool inside the model)")
        if self.embedding_dim and out.shape[1] != self.embedding_dim:
            raise EncoderError(f"{self.name}: the output width changes between batches ({self.embedding_dim}, "
                               f"then {out.shape[1]} on a batch of {n} images); the width D must be fixed")
        finite = torch.isfinite(out)
        if not bool(finite.all()):
            n_nan = int(torch.isnan(out).sum())
            raise EncoderError(f"{self.name}: the model returned non-finite features ({n_nan} NaN, "
                               f"{int((~finite).sum()) - n_nan} inf of {out.numel()} values on {n} images)")
        return out

    def card(self) -> dict[str, Any]:
        """The facts of the zoo page's card (:func:`~crsbench_lib.encoders.cards.file_cards`).

        Returns
        -------
        dict
            ``name``, ``file`` (absolute), ``format``, ``sha256``, ``bytes``,
            ``embedding_dim``, ``parameters`` (None where the format does not
            tell) and ``image_side``.
        """
        return {"name": self.name, "file": str(self.path), "format": self.format, "sha256": self.sha256,
                "bytes": int(self.bytes), "embedding_dim": int(self.embedding_dim), "parameters": self.parameters,
                "image_side": int(self.image_side)}


def build_file_encoder(ref: str, image_side: int = 32, **options: Any) -> FileEncoder:
    """Build ``file:<ref>`` (a path, relative to the working folder or absolute).

    Options: ``name`` (default ``file:<ref>``), ``device`` (default: CUDA if
    available), ``amp`` (``none``/``bf16``/``fp16``), ``batch_size`` (default
    64). A profile resolves its relative paths against its own folder before
    they come here.

    Raises
    ------
    EncoderError
        An empty path, bad options, or any error of :class:`FileEncoder`.
    """
    if not ref:
        raise EncoderError(f"{FILE_PREFIX}: needs a path after the colon, e.g. file:models/mine.pt2")
    options.setdefault("batch_size", FILE_DEFAULT_BATCH)
    try:
        return FileEncoder(ref, image_side=image_side, **options)
    except TypeError as exc:
        raise EncoderError(f"file:{ref}: bad options {sorted(options)} ({exc})") from exc
