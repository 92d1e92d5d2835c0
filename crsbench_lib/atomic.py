"""Atomic file writes: write to a temporary file in the same folder, then rename.

A reader never sees a half-written output, and an interrupted writer leaves the
previous file (or none) in place. A full disk (``ENOSPC``, ``EDQUOT``) or a
read-only place met anywhere inside the write becomes an
:class:`~crsbench_lib.errors.OutputError` whose one-line message names the
folder and the space free there; the temporary file is removed.
:func:`reserve` allocates a large file's blocks before it is filled, so that a
full disk is found before the work, not in the middle of it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from crsbench_lib.errors import CRSBenchError, OutputError

#: errno values that mean "no room here" (disk full, quota exceeded, file too large).
NO_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
#: errno values of a write that can never succeed here (EACCES is left alone: a reader meets it too).
UNWRITABLE_ERRNOS = frozenset({errno.EROFS})


def format_bytes(n: int) -> str:
    """``n`` bytes in binary units: ``512 B``, ``3.0 MiB``, ``1.2 GiB``.

    Examples
    --------
    >>> format_bytes(3 * 2**20)
    '3.0 MiB'
    """
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def no_space_error(folder: str | os.PathLike[str], needed: int | None = None) -> OutputError:
    """The one-line error for a full disk under ``folder``.

    Parameters
    ----------
    folder : path-like
        Where the write was going.
    needed : int, optional
        Bytes the write needed, when known.

    Returns
    -------
    OutputError
        ``<folder>: no space left on device (<needed> needed, <free> free); free some space and run again``.
    """
    facts = []
    if needed is not None:
        facts.append(f"{format_bytes(needed)} needed")
    try:
        facts.append(f"{format_bytes(shutil.disk_usage(folder).free)} free")
    except OSError:
        pass
    detail = f" ({', '.join(facts)})" if facts else ""
    return OutputError(f"{folder}: no space left on device{detail}; free some space and run again")


def write_error(path: str | os.PathLike[str], exc: OSError) -> OutputError:
    """An OutputError for an OSError met while writing ``path`` (full disk named as such)."""
    if exc.errno in NO_SPACE_ERRNOS:
        return no_space_error(Path(path).parent)
    return OutputError(f"{path}: cannot write here ({exc.strerror or type(exc).__name__})")


def reserve(fd: int, size: int, path: str | os.PathLike[str]) -> None:
    """Allocate ``size`` bytes of disk for the open file ``fd`` (destined for ``path``).

    After this, writing up to ``size`` bytes cannot fail for lack of space
    (on file systems that honour preallocation), so a full disk is reported
    before any work is spent on the content.

    Parameters
    ----------
    fd : int
        File descriptor open for writing.
    size : int
        Bytes the finished file will hold.
    path : path-like
        The destination, for messages.

    Raises
    ------
    OutputError
        If the space is not there (naming the folder and both sizes), or the
        file cannot be extended.
    """
    if size <= 0:
        return
    folder = Path(path).parent
    allocate = getattr(os, "posix_fallocate", None)  # absent on macOS
    if allocate is not None:
        try:
            allocate(fd, 0, size)
            return
        except OSError as exc:
            if exc.errno in NO_SPACE_ERRNOS:
                raise no_space_error(folder, size) from exc
            if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                raise write_error(path, exc) from exc
    # No preallocation here: the free space is the best check there is.
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return
    if free < size:
        raise no_space_error(folder, size)


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
        left untouched; an OSError of a full disk or a read-only place raised
        by the caller's writing becomes an :class:`OutputError`.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> target = Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("done")
    >>> target.read_text()
    'done'
    """
    final = Path(path)
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{final.name}.", suffix=final.suffix if suffix is None else suffix, dir=final.parent
        )
    except OSError as exc:
        raise write_error(final, exc) from exc
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        try:
            yield tmp
        except OSError as exc:
            if isinstance(exc, CRSBenchError) or exc.errno not in NO_SPACE_ERRNOS | UNWRITABLE_ERRNOS:
                raise
            raise write_error(final, exc) from exc
        # mkstemp creates owner-only files; give the output the usual umask-based mode.
        try:
            os.chmod(tmp, 0o666 & ~_umask())
            os.replace(tmp, final)
        except OSError as exc:
            raise write_error(final, exc) from exc
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
    """Write ``data`` to ``path`` atomically, its space reserved first."""
    with atomic_path(path) as tmp:
        with open(tmp, "r+b") as handle:
            reserve(handle.fileno(), len(data), path)
            handle.write(data)
