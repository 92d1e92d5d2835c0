"""Shipped encoder state: small ``.pt`` files plus a JSON manifest of sha256 hashes.

Every fitted or pretrained piece of the default zoo (PCA basis, k-means
centroids, network weights) is produced by :mod:`crsbench_lib.runner.pretrain`
from a fixed seed and stored under ``crsbench_lib/encoders/weights/`` (or a
folder given by ``$CRSBENCH_WEIGHTS_DIR`` / the ``weights_dir`` option). The
manifest ``manifest.json`` maps each file name to its sha256; a file is read only
after its hash matches (:class:`~crsbench_lib.errors.EncoderError` otherwise),
and only with ``torch.load(weights_only=True)``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from crsbench_lib.atomic import atomic_write_bytes, atomic_write_text
from crsbench_lib.errors import EncoderError

SHIPPED_WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
MANIFEST_NAME = "manifest.json"


def weights_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The folder holding encoder state: ``override``, ``$CRSBENCH_WEIGHTS_DIR`` or the shipped folder."""
    if override is not None:
        return Path(override)
    env = os.environ.get("CRSBENCH_WEIGHTS_DIR")
    return Path(env) if env else SHIPPED_WEIGHTS_DIR


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def params_hash(params: Mapping[str, Any]) -> str:
    """Hex sha256 of a JSON-serialisable parameter mapping (keys sorted)."""
    return sha256_bytes(json.dumps(params, sort_keys=True, default=str).encode("utf-8"))


def read_manifest(folder: Path) -> dict[str, Any]:
    """Read ``manifest.json`` of a weights folder (empty manifest if absent)."""
    path = folder / MANIFEST_NAME
    if not path.exists():
        return {"files": {}}
    rebuild = _rebuild_hint(folder)
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise EncoderError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno}); {rebuild}") from exc
    except (OSError, ValueError) as exc:  # ValueError: bytes that are not UTF-8
        reason = getattr(exc, "strerror", None) or type(exc).__name__
        raise EncoderError(f"{path}: unreadable ({reason}); {rebuild}") from exc
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise EncoderError(f"{path}: expected an object with a 'files' mapping; {rebuild}")
    return manifest


def _rebuild_hint(folder: Path) -> str:
    return f"rebuild with `crsbench zoo pretrain --out {folder}`"


def write_manifest(folder: Path, manifest: Mapping[str, Any]) -> None:
    """Write ``manifest.json`` atomically (sorted keys, stable layout)."""
    atomic_write_text(folder / MANIFEST_NAME, json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def save_state(folder: Path, file_name: str, state: Mapping[str, torch.Tensor], meta: Mapping[str, Any]) -> str:
    """Save a tensor mapping and record its sha256 in the folder's manifest.

    Parameters
    ----------
    folder : pathlib.Path
        Weights folder.
    file_name : str
        File name inside it (``*.pt``).
    state : mapping of str to torch.Tensor
        Tensors only, so that ``torch.load(weights_only=True)`` reads it back.
    meta : mapping
        JSON-serialisable facts stored beside the hash (seed, parameters, seconds).

    Returns
    -------
    str
        The file's sha256.
    """
    buf = io.BytesIO()
    torch.save({k: v.detach().contiguous().clone() for k, v in state.items()}, buf)
    data = buf.getvalue()
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(folder / file_name, data)
    digest = sha256_bytes(data)
    manifest = read_manifest(folder)
    manifest["files"][file_name] = {"sha256": digest, "bytes": len(data), **dict(meta)}
    write_manifest(folder, manifest)
    return digest


def load_state(file_name: str, folder: Path | None = None) -> tuple[dict[str, torch.Tensor], str]:
    """Load a state file after checking its sha256 against the manifest.

    Parameters
    ----------
    file_name : str
        File name inside the weights folder.
    folder : pathlib.Path, optional
        Weights folder (default :func:`weights_dir`).

    Returns
    -------
    state : dict of str to torch.Tensor
    sha256 : str

    Raises
    ------
    EncoderError
        If the file or its manifest entry is missing, or the hash does not match.
    """
    folder = weights_dir(folder)
    path = folder / file_name
    rebuild = _rebuild_hint(folder)
    entry = read_manifest(folder)["files"].get(file_name)
    if not isinstance(entry, dict):
        raise EncoderError(f"{folder / MANIFEST_NAME}: no entry for {file_name}; {rebuild}")
    if not path.exists():
        raise EncoderError(f"{path}: weights file missing; {rebuild}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise EncoderError(f"{path}: unreadable ({exc.strerror or type(exc).__name__}); {rebuild}") from exc
    digest = sha256_bytes(data)
    if digest != entry.get("sha256"):
        raise EncoderError(
            f"{path}: sha256 {digest[:16]}... does not match the manifest ({str(entry.get('sha256'))[:16]}...);"
            f" the file is corrupt or was replaced; {rebuild}"
        )
    try:
        state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is a bad file
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]  # torch's messages span many lines
        raise EncoderError(f"{path}: cannot be read as a weights-only torch file ({first}); {rebuild}") from exc
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise EncoderError(f"{path}: expected a mapping of names to tensors; {rebuild}")
    return state, digest
