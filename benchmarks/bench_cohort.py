"""Speed of the phantom cohort: generators, corruptions, and the default cohort build.

Prints images per second per generator (and per site for cxr) and per
corruption family, then the wall time to build the default profile's cohort
for one evaluation seed: the clean train/val/test splits of the three
datasets plus cxr's site-B test split, and every corrupted test cell (the
first ``--corrupt-n`` test images x every family x severities 1-5).

Usage: ``python benchmarks/bench_cohort.py [--side 32] [--seeds 1] [--corrupt-n 500]``
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from crsbench_lib.cohort import DEFAULT_SIZES, PHANTOM_DATASETS, build_dataset, corrupt, corruption_families
from crsbench_lib.cohort.datasets import generator_module
from crsbench_lib.results.schema import SEVERITIES


def _rate(n: int, seconds: float) -> str:
    return f"{n / seconds:9.0f} images/s"


def bench_generators(side: int, n: int) -> None:
    print(f"generators ({n} images, {side} px):")
    for name in PHANTOM_DATASETS:
        module = generator_module(name)
        for site in module.SITES:
            rng = np.random.default_rng(0)
            start = time.perf_counter()
            module.generate(rng, n, side, site)
            print(f"  {name:8s} site {site}: {_rate(n, time.perf_counter() - start)}")


def bench_corruptions(side: int, n: int) -> None:
    print(f"corruptions ({n} images, {side} px, mean over severities 1-5):")
    for name in PHANTOM_DATASETS:
        images = build_dataset(name, sizes={"train": 1, "val": 1, "test": n}, image_side=side).split("test").images
        for family in corruption_families(name):
            start = time.perf_counter()
            for severity in SEVERITIES:
                corrupt(images, family, severity)
            print(f"  {name:8s} {family:20s}: {_rate(n * len(SEVERITIES), time.perf_counter() - start)}")


def bench_default_cohort(side: int, seeds: int, corrupt_n: int) -> None:
    total = 0.0
    for seed in range(seeds):
        start = time.perf_counter()
        n_clean = 0
        n_corrupted = 0
        for name in PHANTOM_DATASETS:
            ds = build_dataset(name, seed=seed, sizes=DEFAULT_SIZES, image_side=side)
            for split in ("train", "val", "test"):
                n_clean += len(ds.split(split))
            if ds.shift_site:
                n_clean += len(ds.split("test", ds.shift_site))
            test = ds.split("test").images[:corrupt_n]
            for family in corruption_families(ds.domain):
                for severity in SEVERITIES:
                    corrupt(test, family, severity, seed=seed)
                    n_corrupted += len(test)
        elapsed = time.perf_counter() - start
        total += elapsed
        print(
            f"default cohort, seed {seed}: {n_clean} clean + {n_corrupted} corrupted images "
            f"in {elapsed:.1f} s (target < 60 s)"
        )
    if seeds > 1:
        print(f"default cohort, {seeds} seeds: {total:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=32)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--corrupt-n", type=int, default=500)
    parser.add_argument("--n", type=int, default=1024, help="images per generator/corruption timing")
    args = parser.parse_args()
    print(f"cpu count {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}")
    bench_generators(args.side, args.n)
    bench_corruptions(args.side, min(args.n, 500))
    bench_default_cohort(args.side, args.seeds, args.corrupt_n)


if __name__ == "__main__":
    main()
