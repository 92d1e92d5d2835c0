"""Hashes the package keys things by: canonical JSON and file digests.

One text form of a JSON value (:func:`canonical_json`) keys run configs, cached
cells and reference standards, so that equal values always give equal hashes.
The score registry keeps its own text form
(:func:`crsbench_lib.registry.chain.stored_registry_json`): registries already on
disk were hashed with it, and a different form would break their verification.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

# Files are hashed in blocks of this many bytes, so a large file is never read whole.
_BLOCK = 1 << 20


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no whitespace, ASCII only and no NaN: equal values give equal text.

    Parameters
    ----------
    value : object
        A JSON-serialisable value.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If the value holds NaN or infinity (they have no JSON form).

    Examples
    --------
    >>> canonical_json({"b": 1, "a": [1.0, "é"]})
    '{"a":[1.0,"\\\\u00e9"],"b":1}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def sha256_of(value: Any) -> str:
    """SHA-256 hex digest of ``canonical_json(value)``.

    Examples
    --------
    >>> sha256_of({"b": 2, "a": 1}) == sha256_of({"a": 1, "b": 2})
    True
    """
    return hashlib.sha256(canonical_json(value).encode("ascii")).hexdigest()


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 hex digest of a file's bytes, read in 1 MiB blocks.

    Raises
    ------
    OSError
        If the file cannot be read.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = pathlib.Path(d) / "x"
    ...     _ = p.write_bytes(b"abc")
    ...     file_sha256(p)[:12]
    'ba7816bf8f01'
    """
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


__all__ = ["canonical_json", "file_sha256", "sha256_of"]
