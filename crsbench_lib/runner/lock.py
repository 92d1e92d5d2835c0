"""One writer per output folder: an OS-level lock held for the whole of a run.

``run_profile`` holds :class:`RunLock` on its output folder, so a second run
started on the same folder (another terminal, a re-submitted cluster job)
cannot compute the same cells again: it either waits for the first to finish
(then reuses its cells) or stops at once with :class:`RunLockedError`, whose
one-line message names the holder (pid, host, start time).

The lock is ``fcntl.flock`` on ``<folder>/.crsbench-run.lock``; the kernel
releases it when the holding process dies, even by SIGKILL, so a killed run
never blocks the next one. The file also holds a JSON record of its holder,
read only to name the holder in messages. One case escapes ``flock`` alone: a
process that inherited the descriptor (a forked child) can keep the lock alive
after its parent was killed. A record whose pid is dead on this host is
therefore *stale*: the lock file is unlinked and a fresh one taken, and the
orphan keeps only the old, nameless inode.

Examples
--------
>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> with RunLock(folder) as lock:
...     lock.held
True
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import Any

from crsbench_lib.errors import CRSBenchError, OutputError

LOCK_NAME = ".crsbench-run.lock"
# Seconds between two attempts while waiting for another run.
POLL_S = 0.2
_UNSEEN = object()


class RunLockedError(CRSBenchError):
    """Another live run holds the output folder."""


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists on this host.

    Parameters
    ----------
    pid : int
        Process id.

    Returns
    -------
    bool
        False only when the OS says there is no such process.
    """
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True


def describe_holder(record: dict[str, Any] | None) -> str:
    """``pid 123 on host, started 2026-01-01T00:00:00Z`` (or ``holder unknown``)."""
    if not record:
        return "holder unknown"
    return f"pid {record.get('pid', '?')} on {record.get('host', '?')}, started {record.get('started_at', '?')}"


class RunLock:
    """Exclusive lock on an output folder, with a record of who holds it.

    Parameters
    ----------
    folder : path-like
        The folder to guard; created if missing (and removed again on release
        if this lock created it and it is still empty).
    wait : bool
        When another live run holds the folder: wait for it (True) or raise
        :class:`RunLockedError` at once (False).
    poll_s : float
        Seconds between attempts while waiting.

    Attributes
    ----------
    path : pathlib.Path
        The lock file.
    took_over : dict or None
        The record of a run that died holding the folder (killed, so it never
        released it), if this lock replaced one: for a message.
    """

    def __init__(self, folder: str | os.PathLike[str], wait: bool = False, poll_s: float = POLL_S) -> None:
        self.folder = Path(folder)
        self.path = self.folder / LOCK_NAME
        self.wait = wait
        self.poll_s = poll_s
        self.took_over: dict[str, Any] | None = None
        self._fd: int | None = None
        self._created_folder = False

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def read_record(self) -> dict[str, Any] | None:
        """The holder record in the lock file (None if absent or unreadable)."""
        try:
            record = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) else None

    def acquire(self) -> RunLock:
        """Take the lock (waiting if asked); returns self.

        Raises
        ------
        RunLockedError
            If another live run holds the folder and ``wait`` is False.
        OutputError
            If the folder or its lock file cannot be created.
        """
        if self._fd is not None:
            return self
        try:
            self._created_folder = not self.folder.exists()
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"{self.folder}: cannot write here ({exc.strerror or type(exc).__name__})") from exc
        announced = False
        first_look: object = _UNSEEN
        while True:
            fd = self._open()
            state = self._try_lock(fd)
            if state == "held":
                self._fd = fd
                # A record left behind means its writer never released the lock: it was killed.
                self.took_over = self.read_record() or self.took_over
                self._write_record()
                return self
            if state == "moved":
                continue  # the file was replaced while we locked it: try the current one
            os.close(fd)
            record = self.read_record()
            # Judge a holder on two looks, one poll apart: a run that has just taken the
            # lock may not have replaced its dead predecessor's record (or any) yet.
            if (record is None or self._is_stale(record)) and record != first_look:
                first_look = record
                time.sleep(self.poll_s)
                continue
            if record is not None and self._is_stale(record):
                self._break(record)
                self.took_over = record
                first_look = _UNSEEN
                continue
            if not self.wait:
                raise RunLockedError(
                    f"{self.folder} is in use by another run ({describe_holder(record)}); "
                    "wait for it with --wait, or choose another --out"
                )
            if not announced:
                print(f"crsbench: waiting for the run holding {self.folder} ({describe_holder(record)})",
                      file=sys.stderr, flush=True)
                announced = True
            time.sleep(self.poll_s)

    def _open(self) -> int:
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise OutputError(f"{self.path}: cannot create the run lock ({reason})") from exc

    def _try_lock(self, fd: int) -> str:
        """``held``, ``busy`` (another holder) or ``moved`` (``fd`` no longer names the lock file; closed)."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return "busy"
            os.close(fd)
            raise OutputError(f"{self.path}: cannot lock ({exc.strerror or type(exc).__name__})") from exc
        # The previous holder unlinks the file on release, possibly between our open and
        # our lock: then we hold a nameless inode and must start over on the current file.
        if not _same_file(fd, self.path):
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            return "moved"
        return "held"

    def _is_stale(self, record: dict[str, Any] | None) -> bool:
        if not record or record.get("host") != platform.node():
            return False  # a holder on another host cannot be checked from here
        pid = record.get("pid")
        return isinstance(pid, int) and pid != os.getpid() and not pid_alive(pid)

    def _break(self, record: dict[str, Any]) -> None:
        """Unlink a stale lock file, if it still holds the dead holder's record."""
        if self.read_record() == record:
            try:
                self.path.unlink()
            except OSError:
                pass

    def _write_record(self) -> None:
        assert self._fd is not None
        record = {
            "pid": os.getpid(),
            "host": platform.node(),
            "started_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "argv": sys.argv,
        }
        data = json.dumps(record, sort_keys=True).encode("utf-8")
        try:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, data, 0)
        except OSError:
            # The record only names the holder in messages; the lock itself is held.
            pass

    def release(self) -> None:
        """Give the lock up and remove the lock file (and the folder, if this lock made it and it is empty)."""
        if self._fd is None:
            return
        try:
            if _same_file(self._fd, self.path):
                self.path.unlink()
        except OSError:
            pass
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None
        if self._created_folder:
            try:
                self.folder.rmdir()
            except OSError:
                pass  # not empty: the run wrote something

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def _same_file(fd: int, path: Path) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)
