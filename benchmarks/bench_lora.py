"""Benchmark of the LoRA arm: its CPU time under this tree's protocol against a baseline tree's, on the same cells.

Issue: the LoRA arm that adapts (amendment 12) must not cost more CPU than the
protocol it replaced. This script runs the LoRA arm alone (``arms: [lora]``)
on the same cells twice, each a real ``crsbench run`` subprocess on one worker
with its own fresh ``CRSBENCH_CACHE`` (so nothing is reused, and whatever
frozen embeddings an arm needs are computed inside it): once with this tree's
code and profile, once with a baseline tree's (a checkout of an earlier commit,
e.g. ``git worktree add /tmp/base <commit>``), each reading its own
``configs/<profile>.yaml`` narrowed to the chosen encoders, datasets and seeds.
It prints the CPU seconds of each (user + system of the whole process tree,
from ``getrusage``), their ratio new / old, and the share of CPU the
hypervisor took away meanwhile (``steal``), which says whether the machine was
quiet. The two runs alternate ``--repeats`` times and the median is reported.

Usage::

    git worktree add /tmp/base 3e49eef
    python benchmarks/bench_lora.py --baseline /tmp/base
    python benchmarks/bench_lora.py --baseline /tmp/base --encoders simclr_broad_aug_s mae_broad_vit --datasets derm cxr
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parents[1]
#: One pretrained encoder per zoo architecture (cnn_s, cnn_l, vit_s).
DEFAULT_ENCODERS = ("simclr_broad_aug_s", "simclr_broad_aug_l", "mae_broad_vit")


def steal_jiffies() -> int | None:
    """The machine's cumulative CPU steal time (``/proc/stat``), or None off Linux."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
        return int(fields[8])
    except (OSError, IndexError, ValueError):
        return None


def narrowed_profile(tree: Path, profile: str, encoders, datasets, seeds, out: Path) -> Path:
    """``tree``'s profile with only the given encoders, datasets and seeds, and the LoRA arm alone."""
    config = yaml.safe_load((tree / "configs" / f"{profile}.yaml").read_text())
    config["name"] = f"{profile}-lora-bench"
    config["encoders"] = list(encoders)
    config["datasets"] = [d for d in config["datasets"] if d["name"] in datasets]
    config["seeds"] = list(seeds)
    config["arms"] = ["lora"]
    config["lora"]["encoders"] = list(encoders)
    standard = config.get("standard")
    if isinstance(standard, str) and not standard.endswith((".yaml", ".yml")):
        config["standard"] = str(tree / "standards" / f"{standard}.yaml")
    out.write_text(yaml.safe_dump(config, sort_keys=False))
    return out


def cpu_seconds_of_run(tree: Path, config: Path, work: Path) -> float:
    """User + system CPU seconds of one ``crsbench run`` of ``config`` with ``tree``'s code, fresh cache."""
    env = {**os.environ, "PYTHONPATH": str(tree), "CRSBENCH_CACHE": str(work / "cache"),
           "OMP_NUM_THREADS": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "crsbench_lib", "run", "--config", str(config), "--out",
                           str(work / "run"), "--jobs", "1", "--no-progress"], cwd=tree, env=env,
                          capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"bench_lora: the run in {tree} failed: {done.stderr.strip().splitlines()[-1:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="a checkout of the earlier protocol's commit")
    parser.add_argument("--profile", default="default")
    parser.add_argument("--encoders", nargs="+", default=list(DEFAULT_ENCODERS))
    parser.add_argument("--datasets", nargs="+", default=["derm"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    trees = {"new": HERE, "old": args.baseline.resolve()}
    seconds: dict[str, list[float]] = {"new": [], "old": []}
    steal0, ticks = steal_jiffies(), os.sysconf("SC_CLK_TCK")
    import time

    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-lora-") as tmp:
        for repeat in range(args.repeats):
            for label in ("old", "new"):
                work = Path(tmp) / f"{label}-{repeat}"
                work.mkdir()
                config = narrowed_profile(trees[label], args.profile, args.encoders, args.datasets, args.seeds,
                                          work / "profile.yaml")
                seconds[label].append(cpu_seconds_of_run(trees[label], config, work))
                print(f"{label} ({trees[label]}): {seconds[label][-1]:.1f} CPU s", flush=True)
    wall = time.monotonic() - t0
    n_cells = len(args.encoders) * len(args.datasets) * len(args.seeds)
    old, new = statistics.median(seconds["old"]), statistics.median(seconds["new"])
    print(f"LoRA arm on {n_cells} cells ({', '.join(args.encoders)} x {', '.join(args.datasets)} x seeds "
          f"{', '.join(map(str, args.seeds))}), one worker, fresh caches:")
    print(f"  old protocol: {old:.1f} CPU s; new protocol: {new:.1f} CPU s; ratio new / old = {new / old:.2f}")
    steal1 = steal_jiffies()
    if steal0 is not None and steal1 is not None and wall > 0:
        share = (steal1 - steal0) / ticks / (wall * (os.cpu_count() or 1))
        print(f"  hypervisor steal during the benchmark: {share:.1%} of the machine's CPU time")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
