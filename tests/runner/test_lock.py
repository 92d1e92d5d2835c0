"""The run lock: one holder per folder, named when refused; a killed holder never blocks the next run."""

from __future__ import annotations

import fcntl
import json
import os
import platform
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from crsbench_lib.runner.lock import LOCK_NAME, RunLock, RunLockedError


def test_a_second_lock_is_refused_naming_the_holder(tmp_path: Path) -> None:
    with RunLock(tmp_path) as first:
        assert first.held and first.took_over is None
        record = json.loads((tmp_path / LOCK_NAME).read_text())
        assert record["pid"] == os.getpid() and record["host"] == platform.node()
        with pytest.raises(RunLockedError) as info:
            RunLock(tmp_path, poll_s=0.01).acquire()
        message = str(info.value)
        assert f"pid {os.getpid()} on {platform.node()}, started {record['started_at']}" in message
        assert "--wait" in message and "\n" not in message
    assert not (tmp_path / LOCK_NAME).exists()
    with RunLock(tmp_path) as again:
        assert again.held and again.took_over is None


def test_a_waiting_lock_gets_the_folder_when_the_holder_lets_go(tmp_path: Path, capsys) -> None:
    first = RunLock(tmp_path).acquire()
    order: list[str] = []

    def second() -> None:
        with RunLock(tmp_path, wait=True, poll_s=0.01):
            order.append("second holds")

    thread = threading.Thread(target=second)
    thread.start()
    deadline = time.monotonic() + 30
    while "waiting for the run holding" not in capsys.readouterr().err and time.monotonic() < deadline:
        time.sleep(0.01)
    order.append("first releases")
    first.release()
    thread.join(timeout=30)
    assert order == ["first releases", "second holds"]


def test_a_folder_made_for_the_lock_is_removed_when_nothing_was_written(tmp_path: Path) -> None:
    with RunLock(tmp_path / "new"):
        pass
    assert not (tmp_path / "new").exists()
    with RunLock(tmp_path / "used"):
        (tmp_path / "used" / "results.parquet").write_bytes(b"x")
    assert (tmp_path / "used" / "results.parquet").exists() and not (tmp_path / "used" / LOCK_NAME).exists()


HOLD = """
import sys, time
from crsbench_lib.runner.lock import RunLock
RunLock(sys.argv[1]).acquire()
print("held", flush=True)
time.sleep(600)
"""


def test_a_sigkilled_holder_releases_the_folder(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        with pytest.raises(RunLockedError, match=f"pid {proc.pid} on"):
            RunLock(tmp_path, poll_s=0.01).acquire()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    with RunLock(tmp_path) as lock:
        assert lock.took_over is not None and lock.took_over["pid"] == proc.pid


def test_a_stale_record_whose_lock_outlived_its_process_is_taken_over(tmp_path: Path) -> None:
    # A forked child of a killed run can keep the OS lock; the record names the dead parent.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    orphan = os.open(tmp_path / LOCK_NAME, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(orphan, fcntl.LOCK_EX | fcntl.LOCK_NB)
        stale = {"pid": dead_pid, "host": platform.node(), "started_at": "2026-01-01T00:00:00Z"}
        os.write(orphan, json.dumps(stale).encode())
        with RunLock(tmp_path, poll_s=0.01) as lock:
            assert lock.took_over == stale
            assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == os.getpid()
    finally:
        os.close(orphan)


def test_a_holder_on_another_host_is_never_judged_stale(tmp_path: Path) -> None:
    other = os.open(tmp_path / LOCK_NAME, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(other, json.dumps({"pid": 999999999, "host": "elsewhere", "started_at": "t"}).encode())
        with pytest.raises(RunLockedError, match="pid 999999999 on elsewhere, started t"):
            RunLock(tmp_path, poll_s=0.01).acquire()
    finally:
        os.close(other)
