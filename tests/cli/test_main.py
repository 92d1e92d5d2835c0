"""The command's edges: a reader that closes the pipe early ends the command quietly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from crsbench_lib.cli import EXIT_BROKEN_PIPE
from crsbench_lib.results.io import write_results
from crsbench_lib.results.synthetic import synthetic_results


def test_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    results = tmp_path / "results.parquet"
    write_results(synthetic_results(n_encoders=5, corruptions=("noise",), random_state=1), results)
    standard = tmp_path / "std.yaml"
    freeze = [sys.executable, "-m", "crsbench_lib", "freeze", str(results), "--version", "v", "--out", str(standard)]
    subprocess.run(freeze, check=True, capture_output=True)
    # The reading end is closed before the command starts, so its first write
    # meets a closed pipe (as `crsbench agree ... | head -0` would), every time.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        command = [sys.executable, "-m", "crsbench_lib", "agree", str(results), "--standard", str(standard)]
        done = subprocess.run(command, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert done.returncode == EXIT_BROKEN_PIPE
    assert done.stderr == ""


def test_help_into_a_closed_pipe_ends_quietly() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        command = [sys.executable, "-m", "crsbench_lib", "run", "--help"]
        done = subprocess.run(command, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert done.returncode in (0, EXIT_BROKEN_PIPE) and done.stderr == ""
