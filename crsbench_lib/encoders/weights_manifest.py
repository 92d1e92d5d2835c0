"""The weights folder and its manifest, torch-free: where the zoo's state lives and what is known of it.

The manifest ``manifest.json`` of a weights folder maps each state file to its
sha256 and the facts of its making (seed, pool, seconds, load), and records,
under ``"encoders"``, the shape of every zoo encoder (parameters, embedding
width: :func:`zoo_shapes`), so that the encoder cards
(:mod:`crsbench_lib.encoders.cards`) describe the zoo without building a
network. Reading and writing the state files themselves, which needs torch, is
:mod:`crsbench_lib.encoders.weights`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from crsbench_lib.atomic import atomic_write_text
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
    rebuild = rebuild_hint(folder)
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


def rebuild_hint(folder: Path) -> str:
    """How to rebuild a weights folder, for error messages."""
    return f"rebuild with `crsbench zoo pretrain --out {folder}`"


def write_manifest(folder: Path, manifest: Mapping[str, Any]) -> None:
    """Write ``manifest.json`` atomically (sorted keys, stable layout)."""
    atomic_write_text(folder / MANIFEST_NAME, json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def zoo_shapes(folder: Path) -> dict[str, dict[str, int]]:
    """The recorded shape of each zoo encoder: ``{name: {"parameters": int, "embedding_dim": int}}``.

    Written by ``crsbench zoo pretrain`` (:func:`crsbench_lib.encoders.registry.shape_facts`);
    empty for a folder whose manifest predates the record.
    """
    shapes = read_manifest(folder).get("encoders", {})
    if not isinstance(shapes, dict):
        raise EncoderError(f"{folder / MANIFEST_NAME}: 'encoders' must be a mapping; {rebuild_hint(folder)}")
    return shapes
