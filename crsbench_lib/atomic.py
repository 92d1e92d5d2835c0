"""Atomic file writes: write to a temporary file in the same folder, then rename.

A reader never sees a half-written output, and an interrupted writer leaves the
previous file (or none) in place.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from crsbench_lib.errors import OutputError


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` on success.

    Parameters
    ----------
    path : path-like
        The final destination.
    suffix : str, optional
        Suffix of the temporary file (some writers infer the format from it);
        defaults to the destination's suffix.

    Yields
    ------
    pathlib.Path
        Where the caller writes. On an exception it is removed and ``path`` is
        left untouched.
    """
    final = Path(path)
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{final.name}.", suffix=final.suffix if suffix is None else suffix, dir=final.parent
        )
    except OSError as exc:
        raise OutputError(f"{final}: cannot write here ({exc.strerror or type(exc).__name__})") from exc
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        # mkstemp creates owner-only files; give the output the usual umask-based mode.
        os.chmod(tmp, 0o666 & ~_umask())
        try:
            os.replace(tmp, final)
        except OSError as exc:
            raise OutputError(f"{final}: cannot write here ({exc.strerror or type(exc).__name__})") from exc
    finally:
        if tmp.exists():
            tmp.unlink()


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically (UTF-8)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
