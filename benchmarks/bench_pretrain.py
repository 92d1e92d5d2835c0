"""Benchmark of ``crsbench zoo pretrain``: total and per-piece time, and bit-identity with the shipped weights.

Rebuilds the zoo's fitted and pretrained state into a temporary folder (all
pieces, or ``--only``) with ``--jobs`` worker processes, then prints

- the seconds each piece took (wall time inside its worker) and the pool draws;
- the total wall time against the 2-hour limit on two cores (world v3 issue, item 4);
- the load average before and after (the figures mean little on a shared machine);
- whether each rebuilt file is bit-identical to the shipped one.

Usage: ``python benchmarks/bench_pretrain.py [--jobs 2] [--only simclr_broad_aug_s ...]``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from crsbench_lib.encoders.weights import SHIPPED_WEIGHTS_DIR, read_manifest
from crsbench_lib.runner.pretrain import PIECES, pretrain_zoo

LIMIT_MINUTES = 120


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (one per core)")
    parser.add_argument("--only", nargs="+", choices=PIECES, metavar="PIECE", help="rebuild only these pieces")
    args = parser.parse_args()
    print(f"# load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        timings = pretrain_zoo(out=Path(tmp), pieces=args.only, jobs=args.jobs)
        wall = time.perf_counter() - t
        rebuilt = read_manifest(Path(tmp))["files"]
    shipped = read_manifest(SHIPPED_WEIGHTS_DIR)["files"]
    print(f"# load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"{'piece':<26} {'seconds':>8}  bit-identical to shipped")
    for piece in args.only or PIECES:
        name = f"{piece}.pt"
        same = name in shipped and shipped[name]["sha256"] == rebuilt[name]["sha256"]
        print(f"{piece:<26} {timings[piece]:>8.1f}  {'yes' if same else 'NO'}")
    print(f"{'pool draws (summed)':<26} {timings['pools']:>8.1f}")
    busy = sum(v for k, v in timings.items() if k not in ("pools", "total"))
    print(f"# total wall time {wall:.0f} s ({wall / 60:.1f} min, limit {LIMIT_MINUTES} min) with {args.jobs} workers;"
          f" piece time summed over workers {busy:.0f} s")


if __name__ == "__main__":
    main()
