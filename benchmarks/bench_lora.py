"""Benchmark of the LoRA arm: its CPU time under this tree's protocol against a baseline tree's, on the same cells.

Issue: the LoRA arm that adapts (amendment 12) must not cost more CPU than the
protocol it replaced. For each of two trees, this tree's code and
profile and a baseline tree's (a checkout of an earlier commit, e.g. ``git
worktree add /tmp/base <commit>``), each reading its own
``configs/<profile>.yaml`` narrowed to the chosen encoders, datasets and seeds,
it runs ``crsbench run`` on one worker with a fresh ``CRSBENCH_CACHE`` (so
nothing is reused) twice: the frozen arm alone, and both arms. The LoRA arm's
cost is the difference, its *marginal* CPU time: what adding the arm to a run
costs, whatever work the two arms share through the embedding store (the new
protocol's LoRA cells read the frozen embeddings of the train, validation and
test splits, which the frozen arm computes anyway). With ``--lora-only`` it
runs the LoRA arm alone instead, charging it everything it needs. CPU seconds
are user + system of the whole process tree (``getrusage``); it prints both
figures, their ratio new / old, and the share of CPU the hypervisor took away
meanwhile (``steal``), which says whether the machine was quiet.

Usage::

    git worktree add /tmp/base 3e49eef
    python benchmarks/bench_lora.py --baseline /tmp/base        # the 10 pretrained encoders, derm, seed 0
    python benchmarks/bench_lora.py --baseline /tmp/base --encoders arch --seeds 0 1 2
    python benchmarks/bench_lora.py --baseline /tmp/base --encoders simclr_broad_aug_s mae_broad_vit --datasets derm cxr
    python benchmarks/bench_lora.py --baseline /tmp/base --repeat 3          # median and range of the ratio
    python benchmarks/bench_lora.py --baseline /tmp/base --same-probe        # the protocol alone, same C grid

One seed is the conservative choice: the new protocol computes the test sets'
lower-layer activations once for all seeds of an encoder and dataset, so its
cost per seed falls with more seeds, while the old protocol's does not.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parents[1]
#: One pretrained encoder per zoo architecture (cnn_s, cnn_l, vit_s): the quick choice (``--encoders arch``).
ARCHITECTURE_ENCODERS = ("simclr_broad_aug_s", "simclr_broad_aug_l", "mae_broad_vit")


def steal_jiffies() -> int | None:
    """The machine's cumulative CPU steal time (``/proc/stat``), or None off Linux."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
        return int(fields[8])
    except (OSError, IndexError, ValueError):
        return None


def narrowed_profile(tree: Path, profile: str, encoders, datasets, seeds, arms, out: Path,
                     probe: dict | None = None) -> Path:
    """``tree``'s profile with only the given encoders, datasets, seeds and arms (and ``probe``'s settings if given)."""
    config = yaml.safe_load((tree / "configs" / f"{profile}.yaml").read_text())
    if probe is not None:
        config["probe"] = dict(probe)
    config["name"] = f"{profile}-lora-bench"
    config["encoders"] = list(encoders)
    config["datasets"] = [d for d in config["datasets"] if d["name"] in datasets]
    config["seeds"] = list(seeds)
    config["arms"] = list(arms)
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
    parser.add_argument("--encoders", nargs="+", default=None,
                        help="encoders to adapt (default: every pretrained neural encoder of the zoo, the default "
                             "profile's LoRA group, so the figure weighs the encoders as the profile does; "
                             "'arch': one per architecture)")
    parser.add_argument("--datasets", nargs="+", default=["derm"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--lora-only", action="store_true", help="run the LoRA arm alone (no frozen arm)")
    parser.add_argument("--same-probe", action="store_true",
                        help="give the baseline tree this tree's `probe` settings (C grid, calibrators), so the two "
                             "runs evaluate alike and the figure isolates the LoRA protocol (the C grid of amendment "
                             "16 made every probe fit of both arms about 1.5 times dearer)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="measure each tree this many times, the trees alternating, and report the median and the "
                             "range of the ratio (the machine's speed drifts between runs)")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat must be a positive integer, got {args.repeat}")
    if args.encoders is None:
        from crsbench_lib.encoders.zoo import ZOO_GROUPS

        args.encoders = list(ZOO_GROUPS["pretrained"])
    elif args.encoders == ["arch"]:
        args.encoders = list(ARCHITECTURE_ENCODERS)
    trees = {"new": HERE, "old": args.baseline.resolve()}
    plans = {"lora": ("lora",)} if args.lora_only else {"frozen": ("frozen",), "both": ("frozen", "lora")}
    seconds: dict[tuple[int, str, str], float] = {}
    steal0, ticks = steal_jiffies(), os.sysconf("SC_CLK_TCK")
    import time

    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-lora-") as tmp:
        for rep in range(args.repeat):
            for label in ("old", "new"):
                for plan, arms in plans.items():
                    work = Path(tmp) / f"{rep}-{label}-{plan}"
                    work.mkdir()
                    probe = None
                    if args.same_probe and label == "old":
                        probe = yaml.safe_load((HERE / "configs" / f"{args.profile}.yaml").read_text())["probe"]
                    config = narrowed_profile(trees[label], args.profile, args.encoders, args.datasets, args.seeds,
                                              arms, work / "profile.yaml", probe=probe)
                    seconds[(rep, label, plan)] = cpu_seconds_of_run(trees[label], config, work)
                    print(f"[{rep + 1}/{args.repeat}] {label} ({trees[label]}), arms {', '.join(arms)}: "
                          f"{seconds[(rep, label, plan)]:.1f} CPU s", flush=True)
    wall = time.monotonic() - t0
    n_cells = len(args.encoders) * len(args.datasets) * len(args.seeds)

    def arm_cost(rep: int, label: str) -> float:
        if args.lora_only:
            return seconds[(rep, label, "lora")]
        return seconds[(rep, label, "both")] - seconds[(rep, label, "frozen")]

    olds = [arm_cost(rep, "old") for rep in range(args.repeat)]
    news = [arm_cost(rep, "new") for rep in range(args.repeat)]
    ratios = sorted(n / o for n, o in zip(news, olds))
    what = "alone" if args.lora_only else "marginal (both arms minus the frozen arm)"
    if args.same_probe:
        what += ", the baseline evaluated with this tree's probe settings"
    print(f"LoRA arm, {what}, on {n_cells} cells ({', '.join(args.encoders)} x {', '.join(args.datasets)} x "
          f"seeds {', '.join(map(str, args.seeds))}), one worker, fresh caches:")
    if args.repeat == 1:
        print(f"  old protocol: {olds[0]:.1f} CPU s; new protocol: {news[0]:.1f} CPU s; ratio new / old = {ratios[0]:.2f}")
    else:
        import statistics

        print(f"  old protocol: median {statistics.median(olds):.1f} CPU s ({min(olds):.1f} to {max(olds):.1f}); "
              f"new protocol: median {statistics.median(news):.1f} CPU s ({min(news):.1f} to {max(news):.1f})")
        print(f"  ratio new / old, paired by repetition: median {statistics.median(ratios):.2f} "
              f"({ratios[0]:.2f} to {ratios[-1]:.2f} over {args.repeat} repetitions)")
    steal1 = steal_jiffies()
    if steal0 is not None and steal1 is not None and wall > 0:
        share = (steal1 - steal0) / ticks / (wall * (os.cpu_count() or 1))
        print(f"  hypervisor steal during the benchmark: {share:.1%} of the machine's CPU time")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
