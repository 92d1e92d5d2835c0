"""Shipped encoder state: small ``.pt`` files plus a JSON manifest of sha256 hashes.

Every fitted or pretrained piece of the default zoo (PCA basis, k-means
centroids, network weights) is produced by :mod:`crsbench_lib.runner.pretrain`
from a fixed seed and stored under ``crsbench_lib/encoders/weights/`` (or a
folder given by ``$CRSBENCH_WEIGHTS_DIR`` / the ``weights_dir`` option). The
manifest ``manifest.json`` maps each file name to its sha256; a file is read only
after its hash matches (:class:`~crsbench_lib.errors.EncoderError` otherwise),
and only with ``torch.load(weights_only=True)``. The folder and its manifest,
which need no torch, are :mod:`crsbench_lib.encoders.weights_manifest`.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from crsbench_lib.atomic import atomic_write_bytes
from crsbench_lib.encoders.weights_manifest import (
    MANIFEST_NAME,
    SHIPPED_WEIGHTS_DIR,
    params_hash,
    read_manifest,
    rebuild_hint,
    sha256_bytes,
    weights_dir,
    write_manifest,
)
from crsbench_lib.errors import EncoderError

# The folder and manifest names are re-exported: the state's readers and writers import them from here.
__all__ = ["MANIFEST_NAME", "SHIPPED_WEIGHTS_DIR", "load_state", "params_hash", "read_manifest", "save_state",
           "sha256_bytes", "weights_dir", "write_manifest"]


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
    rebuild = rebuild_hint(folder)
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
