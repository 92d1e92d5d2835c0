"""Benchmark of ``crsbench run``: cold and warm wall time, peak memory, and scaling.

Prints
1. the cold run of a profile (default: ``default``) in a fresh cache: wall time
   and peak resident memory of the whole process tree (the run and its workers),
   sampled every 0.2 s;
2. the warm rerun (every cell cached): wall time;
3. how the cold wall time grows when the number of encoders doubles and when
   the number of images doubles, on a smaller profile derived from ``quick``.

With the cold run it prints where the time went, from the run's manifest: the
CPU-seconds of the cells per arm and per (arm, encoder), the parallel
efficiency, and how many worker processes computed cells (loky replaces a
worker whose memory grew, which repeats its imports and dataset generation).
It also prints the share of CPU time the hypervisor took away during the run
(``steal`` in ``/proc/stat``, Linux only): a "quiet" machine shows about 0 %;
on a virtual machine with busy neighbours every figure here is inflated by
about that share, which says whether a measurement can be compared.

Each run is a real ``crsbench run`` subprocess with its own ``CRSBENCH_CACHE``
(temporary), so nothing is shared with the book's cache.

Usage::

    python benchmarks/bench_run.py                    # everything (the default profile takes a while)
    python benchmarks/bench_run.py --skip-main         # scaling only
    python benchmarks/bench_run.py --profile quick     # cold/warm on quick instead of default
    python benchmarks/bench_run.py --jobs 2
    python benchmarks/bench_run.py --skip-scaling --keep /tmp/default-run   # keep cache and results
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import psutil
import yaml

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_S = 0.2


def tree_rss(proc: psutil.Process) -> int:
    """Resident memory of a process and all its descendants, in bytes."""
    total = 0
    try:
        members = [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    for member in members:
        try:
            total += member.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return total


def timed_run(args: list[str], cache: Path) -> tuple[float, int, str]:
    """Run ``crsbench run ARGS`` with CRSBENCH_CACHE=cache; returns (seconds, peak tree RSS, stdout)."""
    env = {**os.environ, "CRSBENCH_CACHE": str(cache)}
    command = [sys.executable, "-m", "crsbench_lib", "run", *args, "--no-progress"]
    start = time.perf_counter()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    watcher = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss(watcher))
        time.sleep(SAMPLE_S)
    out, err = proc.communicate()
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"crsbench run failed ({proc.returncode}): {err.strip()[-2000:]}")
    return seconds, peak, out.strip()


def cpu_jiffies() -> tuple[int, int] | None:
    """(total, steal) CPU jiffies since boot from ``/proc/stat`` (None where unavailable)."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return None
    values = [int(v) for v in fields]
    return sum(values[:8]), values[7] if len(values) > 7 else 0


def steal_share(before: tuple[int, int] | None, after: tuple[int, int] | None) -> str:
    """The stolen share of CPU time between two :func:`cpu_jiffies` readings, as text."""
    if before is None or after is None or after[0] <= before[0]:
        return "unknown"
    return f"{100.0 * (after[1] - before[1]) / (after[0] - before[0]):.1f} %"


def breakdown(manifest_path: Path) -> None:
    """Print where a run's cell time went (see the module docstring)."""
    manifest = json.loads(manifest_path.read_text())
    by_arm: dict[str, float] = defaultdict(float)
    by_encoder: dict[tuple[str, str], float] = defaultdict(float)
    for entry in manifest["cells"]:
        encoder, _, _, arm = entry["cell"].split("/")
        seconds = float(entry["seconds"] or 0.0)
        by_arm[arm] += seconds
        by_encoder[(arm, encoder)] += seconds
    total = sum(by_arm.values())
    print(f"  cells: {total / 60:.1f} CPU-minutes ("
          + ", ".join(f"{arm} {seconds / 60:.1f}" for arm, seconds in sorted(by_arm.items())) + ")")
    if any(entry["reused"] for entry in manifest["cells"]):
        print("  (the manifest is a rerun's: its wall time is not the computing run's)")
    else:
        wall = float(manifest["wall_seconds"])
        found = re.search(r"(\d+) processes", str(manifest.get("executor", "")))
        jobs = int(found.group(1)) if found else 1
        print(f"  {wall / 60:.1f} min wall; {jobs} workers were busy with cells {total / (jobs * wall):.0%} of it")
    for (arm, encoder), seconds in sorted(by_encoder.items(), key=lambda kv: -kv[1])[:8]:
        print(f"    {arm:6s} {encoder:<24} {seconds:7.0f} s")
    cells_dir = manifest_path.parent / "cells"
    workers = set()
    for sidecar in cells_dir.glob("*.json"):
        try:
            info = json.loads(sidecar.read_text())
        except (OSError, ValueError):
            continue
        workers.add((info.get("info", info)).get("pid"))
    if workers:
        print(f"  worker processes that computed cells: {len(workers - {None})}")


def scaling_configs() -> dict[str, dict]:
    """A base profile derived from ``quick`` and its doubled variants."""
    quick = yaml.safe_load((ROOT / "configs" / "quick.yaml").read_text())
    base = copy.deepcopy(quick)
    base["name"] = "scale-base"
    base["standard"] = "crs-template"
    base["encoders"] = ["pixels", "hog", "cnn_random"]
    base["lora"]["encoders"] = ["cnn_random"]
    encoders = copy.deepcopy(base)
    encoders["name"] = "scale-encoders-x2"
    encoders["encoders"] = ["pixels", "hog", "cnn_random", "lbp", "gabor", "vit_random"]
    images = copy.deepcopy(base)
    images["name"] = "scale-images-x2"
    for spec in images["datasets"]:
        spec["sizes"] = {k: 2 * v for k, v in spec["sizes"].items()}
    images["corruptions"]["n_images"] = 2 * base["corruptions"]["n_images"]
    return {"base": base, "encoders x2": encoders, "images x2": images}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="default", help="profile of the cold/warm measurement")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--skip-main", action="store_true", help="skip the cold/warm run of --profile")
    parser.add_argument("--skip-scaling", action="store_true", help="skip the scaling runs")
    parser.add_argument("--keep", type=Path, help="keep the main run's cache and output under this folder")
    parser.add_argument("--breakdown", type=Path, metavar="RUN_DIR",
                        help="only print where the time of a finished run (its manifest.json) went")
    args = parser.parse_args()
    if args.breakdown is not None:
        breakdown(args.breakdown / "manifest.json")
        return
    print(f"host: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")

    with tempfile.TemporaryDirectory(prefix="crsbench-bench-run-") as tmp:
        tmp_path = Path(tmp)
        if not args.skip_main:
            main_path = args.keep.resolve() if args.keep else tmp_path
            cache = main_path / "cache-main"
            run_args = ["--profile", args.profile, "--out", str(main_path / "out-main"), "--jobs", str(args.jobs)]
            before = cpu_jiffies()
            cold, peak, summary = timed_run(run_args, cache)
            stolen = steal_share(before, cpu_jiffies())
            print(f"cold '{args.profile}' run (--jobs {args.jobs}): {cold:8.1f} s wall, peak RSS {peak / 1024**3:5.2f} GB")
            print(f"  {summary}")
            print(f"  CPU time stolen by the hypervisor during the run: {stolen}")
            breakdown(main_path / "out-main" / "manifest.json")
            warm, warm_peak, summary = timed_run(run_args, cache)
            print(f"warm rerun (all cached):  {warm:8.1f} s wall, peak RSS {warm_peak / 1024**3:5.2f} GB")
            print(f"  {summary}")
            if "0 computed" not in summary:
                print("  (cells were recomputed: the computing code changed between the two runs)")
        if not args.skip_scaling:
            timings: dict[str, float] = {}
            for label, config in scaling_configs().items():
                path = tmp_path / f"{config['name']}.yaml"
                path.write_text(yaml.safe_dump(config))
                seconds, peak, summary = timed_run(
                    ["--config", str(path), "--out", str(tmp_path / f"out-{config['name']}"), "--jobs", str(args.jobs)],
                    tmp_path / f"cache-{config['name']}",
                )
                timings[label] = seconds
                cells = summary.split(" from ")[1].split(" cells")[0] if " from " in summary else "?"
                print(f"scaling {label:12s}: {seconds:7.1f} s wall, {cells} cells, peak RSS {peak / 1024**3:5.2f} GB")
            base = timings["base"]
            for label in ("encoders x2", "images x2"):
                print(f"  {label}: time x{timings[label] / base:.2f} of the base profile")
    print(f"load average {os.getloadavg()[0]:.1f} at end")


if __name__ == "__main__":
    main()
