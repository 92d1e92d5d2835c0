"""Speed and difficulty of the phantom cohort.

Prints images per second per generator and site (at ``--side`` and, with
``--compare-side``, at a second side) and per corruption family, then the wall
time to build the default profile's cohort for one evaluation seed: the clean
train/val/test splits of the three datasets plus cxr's site-B test split, and
every corrupted test cell (the first ``--corrupt-n`` test images x every
family x severities 1-5).

With ``--difficulty`` it also prints, per dataset, the clean macro-AUROC of the
pixel probe (site A, and site B for cxr) and of the attribute probe (the upper
proxy, see :mod:`crsbench_lib.cohort.difficulty`), and the ECE floor: the
mean ECE of a *perfectly calibrated* predictor at the default test size
(labels redrawn from the probe's own probabilities), for the pixel probe's
flat and the attribute probe's sharp probabilities.

Usage: ``python benchmarks/bench_cohort.py [--side 32] [--compare-side 48] [--difficulty]``
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from crsbench_lib.cohort import DEFAULT_SIZES, PHANTOM_DATASETS, build_dataset, corrupt, corruption_families
from crsbench_lib.cohort.datasets import generator_module, pool_attributes, pretraining_pool
from crsbench_lib.cohort.difficulty import AttributeProbe, PixelProbe, attribute_features
from crsbench_lib.metrics.calibration import expected_calibration_error
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


def _simulated_labels(rng: np.random.Generator, probabilities: np.ndarray, task: str) -> np.ndarray:
    """Labels drawn from the probabilities themselves: the predictor is calibrated by construction."""
    if task == "multilabel":
        return (rng.uniform(size=probabilities.shape) < probabilities).astype(np.uint8)
    cumulative = np.cumsum(probabilities, axis=1)
    u = rng.uniform(size=(len(probabilities), 1)) * cumulative[:, -1:]
    return (u > cumulative).sum(axis=1).astype(np.int64)


def ece_floor(probabilities: np.ndarray, task: str, n: int, draws: int = 200) -> tuple[float, float]:
    """Mean and sd of the ECE of a perfectly calibrated predictor on ``n`` images."""
    rng = np.random.default_rng(0)
    values = []
    for _ in range(draws):
        p = probabilities[rng.integers(0, len(probabilities), n)]
        values.append(expected_calibration_error(_simulated_labels(rng, p, task), p, task))
    return float(np.mean(values)), float(np.std(values))


def bench_difficulty(side: int) -> None:
    sizes = {"train": DEFAULT_SIZES["train"], "val": 8, "test": DEFAULT_SIZES["test"]}
    print(f"difficulty (train {sizes['train']}, test {sizes['test']}, {side} px):")
    for name in PHANTOM_DATASETS:
        start = time.perf_counter()
        ds = build_dataset(name, seed=0, sizes=sizes, image_side=side)
        train, test = ds.split("train"), ds.split("test")
        pixel = PixelProbe(ds.task).fit(train.images, train.labels)
        line = f"  {name:8s} pixel probe {pixel.auroc(test.images, test.labels):.3f}"
        if ds.shift_site:
            shift = ds.split("test", ds.shift_site)
            line += f" (site {ds.shift_site}: {pixel.auroc(shift.images, shift.labels):.3f})"
        pool = pretraining_pool(name, sizes["train"] + sizes["test"], seed=0, image_side=side, sites=("A",))
        features = attribute_features(pool.attributes, pool_attributes(name))
        n = sizes["train"]
        attr = AttributeProbe(ds.task).fit(features[:n], pool.labels[:n])
        line += f", attribute probe {attr.auroc(features[n:], pool.labels[n:]):.3f}"
        floors = []
        for probe_name, proba in (("pixel", pixel.scores(test.images)), ("attribute", attr.scores(features[n:]))):
            for n_test in sorted({sizes["test"] // 2, sizes["test"]}):
                mean, sd = ece_floor(proba, ds.task, n_test)
                floors.append(f"{probe_name} n={n_test} {mean:.4f} +- {sd:.4f}")
        print(f"{line}; ECE floor: {', '.join(floors)} ({time.perf_counter() - start:.0f} s)")


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
    parser.add_argument("--compare-side", type=int, default=None, help="also time the generators at this side")
    parser.add_argument("--difficulty", action="store_true", help="pixel/attribute probe AUROC and ECE floor")
    parser.add_argument("--skip-build", action="store_true", help="skip the corruption timing and cohort build")
    args = parser.parse_args()
    print(f"cpu count {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}")
    bench_generators(args.side, args.n)
    if args.compare_side:
        bench_generators(args.compare_side, args.n)
    if args.difficulty:
        bench_difficulty(args.side)
    if args.skip_build:
        return
    bench_corruptions(args.side, min(args.n, 500))
    bench_default_cohort(args.side, args.seeds, args.corrupt_n)


if __name__ == "__main__":
    main()
