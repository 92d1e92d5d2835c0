"""Every benchmark script runs: each with its smallest arguments (issue 47, item 9).

The speed and memory targets live in ``benchmarks/`` scripts that print
figures, never in timed tests; this smoke test only keeps each script working
(it times nothing). Scripts that need another checkout (``bench_lora``'s
baseline tree) or rebuild the zoo's weights (``bench_pretrain``) are checked
to parse their arguments; every other script runs end to end on small sizes,
the run-reading ones on the quick profile's run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from crsbench_lib.paths import project_root

pytestmark = pytest.mark.slow

BENCHMARKS = project_root() / "benchmarks"

#: script -> arguments; ``{run}`` is the quick run's folder, ``{tmp}`` a fresh folder.
RUNS: dict[str, list[str]] = {
    "bench_bootstrap.py": ["--draws", "20", "--test-images", "200"],
    "bench_cohort.py": ["--n", "16", "--skip-build"],
    "bench_corruption_precision.py": ["{run}", "--draws", "10"],
    "bench_corruption_reference.py": ["--epochs", "1", "--train", "64", "--test", "64", "--datasets", "derm"],
    "bench_coverage.py": ["--profile", "quick", "--preset", "smoke", "--jobs", "1", "--cache", "{tmp}"],
    "bench_dominance_noise.py": ["{run}", "--draws", "20", "--jobs", "1"],
    "bench_embed.py": ["--threads", "1", "--encoders", "pixels", "--n", "32", "--skip-cohort"],
    "bench_probe.py": ["--repeats", "1"],
    "bench_registry.py": ["--entries", "3", "--processes", "1"],
    "bench_scoring.py": [],
    "bench_world.py": ["--epochs", "1", "--train", "64", "--test", "64", "--datasets", "derm"],
    "bench_world_checks.py": ["{run}"],
}
#: Exit statuses that report a finding rather than a fault: the world checks exit 1 when a realism rule fails,
#: which the quick profile's small run does.
FINDING_STATUS: dict[str, set[int]] = {"bench_world_checks.py": {0, 1}}
#: Scripts checked for their argument parsing only (``--help``), with the reason.
PARSE_ONLY: dict[str, str] = {
    "bench_lora.py": "needs a checkout of an earlier commit (--baseline)",
    "bench_pretrain.py": "rebuilds the zoo's shipped weights (an hour)",
    "bench_run.py": "a cold run of a whole profile",
}


def test_every_script_is_listed() -> None:
    scripts = {p.name for p in BENCHMARKS.glob("bench_*.py")}
    assert scripts == set(RUNS) | set(PARSE_ONLY), "a benchmark script is neither run nor parsed by this test"


def _run(script: str, args: list[str], tmp: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCHMARKS / script), *args], capture_output=True, text=True,
                          cwd=tmp, timeout=900)


@pytest.mark.parametrize("script", sorted(PARSE_ONLY))
def test_parse_only_scripts_parse_their_arguments(script: str, tmp_path: Path) -> None:
    done = _run(script, ["--help"], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout


@pytest.mark.parametrize("script", sorted(RUNS))
def test_script_runs_with_its_smallest_arguments(script: str, quick_run, tmp_path: Path) -> None:
    run_dir = Path(quick_run.results_path).parent
    args = [a.replace("{run}", str(run_dir)).replace("{tmp}", str(tmp_path / "cache")) for a in RUNS[script]]
    done = _run(script, args, tmp_path)
    allowed = FINDING_STATUS.get(script, {0})
    assert done.returncode in allowed, f"{script} {' '.join(args)}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.stdout.strip(), f"{script} printed nothing"
