"""Real processes: concurrent adders lose nothing; a killed adder leaves all or nothing.

Each process runs the command line (``python -m crsbench_lib registry ...``).
A test hook makes an adder sleep inside its write transaction, just before
COMMIT, so that the others must wait for the lock and a kill can land in the
middle of an add.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from crsbench_lib.registry import Registry, verify_registry
from crsbench_lib.registry.db import ENV_TEST_MARKER, ENV_TEST_PAUSE

STARTUP_TIMEOUT_S = 120.0


def _command(db: Path, files: dict[str, Path], *encoders: str) -> list[str]:
    command = [sys.executable, "-m", "crsbench_lib", "registry", "--db", str(db), "add", str(files["results"]),
               "--standard", str(files["v1"])]
    for encoder in encoders:
        command += ["--encoder", encoder]
    return command


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop(ENV_TEST_PAUSE, None)
    env.pop(ENV_TEST_MARKER, None)
    env.update(extra)
    return env


def _wait_for(path: Path, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not path.exists():
        if process.poll() is not None:
            raise AssertionError(f"adder exited early: {process.communicate()}")
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError("adder never reached its transaction")
        time.sleep(0.02)


def _state(db: Path) -> tuple[list[tuple[int, str, float]], int]:
    with Registry(db) as reg:
        report = verify_registry(reg)
        assert report.ok, report.problems
        entries = reg.entries(current_only=False)
        return [(int(r.entry_id), r.encoder, r.crs) for r in entries.sort_values("entry_id").itertuples()], len(reg.log())


def test_concurrent_adders_lose_nothing(tmp_path: Path, files: dict[str, Path]) -> None:
    db = tmp_path / "shared.sqlite"  # does not exist yet: creation races too
    jobs = [("enc00", "enc01"), ("enc02", "enc03"), ("enc04",), ("enc00", "enc05")]
    # Each holds the write lock for a while, so the others have to queue behind it.
    env = _env(**{ENV_TEST_PAUSE: "0.3"})
    processes = [
        subprocess.Popen(_command(db, files, *job), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for job in jobs
    ]
    outputs = [p.communicate(timeout=300) for p in processes]
    for process, (out, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, (out, err)
    entries, n_log = _state(db)
    encoders = [e for _, e, _ in entries]
    assert sorted(encoders) == ["enc00", "enc01", "enc02", "enc03", "enc04", "enc05"]  # no loss, no duplicate
    assert [i for i, _, _ in entries] == list(range(1, 7))
    assert n_log == 1 + 1 + 6  # create, one standard registration, six entries
    joined = "".join(out for out, _ in outputs)
    assert joined.count("registered new standard") == 1
    # enc00 was added by one job and found identical (an "unchanged" row) by the other.
    assert len(re.findall(r"enc00\s+frozen\s+test-v1\s+unchanged", joined)) == 1
    assert len(re.findall(r"enc00\s+frozen\s+test-v1\s+added", joined)) == 1


def test_killed_adder_leaves_all_or_nothing(tmp_path: Path, files: dict[str, Path], small_results: pd.DataFrame) -> None:
    db = tmp_path / "crash.sqlite"
    with Registry(db, create=True) as reg:
        reg.add(small_results, files["v1"], encoders=["enc00"])
    before = _state(db)

    # Killed inside the transaction, before COMMIT: the add is wholly absent.
    marker = tmp_path / "in-transaction"
    victim = subprocess.Popen(
        _command(db, files, "enc01", "enc02", "enc03"),
        env=_env(**{ENV_TEST_PAUSE: "600", ENV_TEST_MARKER: str(marker)}),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    _wait_for(marker, victim)
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=30)
    assert victim.returncode == -signal.SIGKILL
    assert _state(db) == before

    # The registry is not left locked: the same add now goes through, wholly.
    done = subprocess.run(_command(db, files, "enc01", "enc02", "enc03"), env=_env(), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    entries, n_log = _state(db)
    assert [e for _, e, _ in entries] == ["enc00", "enc01", "enc02", "enc03"]
    assert entries[0] == before[0][0] and n_log == before[1] + 3


@pytest.mark.slow
def test_kills_at_random_moments_leave_all_or_nothing(tmp_path: Path, files: dict[str, Path],
                                                       small_results: pd.DataFrame) -> None:
    db = tmp_path / "crash.sqlite"
    with Registry(db, create=True) as reg:
        reg.add(small_results, files["v1"], encoders=["enc00"])
    seen = set()
    for attempt, delay in enumerate((0.0, 0.02, 0.05, 0.1, 0.2, 0.4)):
        marker = tmp_path / f"marker-{attempt}"
        # The first kill must land inside the transaction whatever the machine's load:
        # that adder holds it until killed. The later ones land wherever they land.
        pause = "600" if delay == 0.0 else "0.1"
        victim = subprocess.Popen(
            _command(db, files, "enc01", "enc02"),
            env=_env(**{ENV_TEST_PAUSE: pause, ENV_TEST_MARKER: str(marker)}),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        _wait_for(marker, victim)
        time.sleep(delay)
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)
        entries, _ = _state(db)
        names = [e for _, e, _ in entries]
        assert names in (["enc00"], ["enc00", "enc01", "enc02"]), names
        seen.add(len(names))
        if len(names) == 3:
            break
    # Early kills leave it absent; a late kill (after COMMIT) leaves it wholly there.
    assert 1 in seen
