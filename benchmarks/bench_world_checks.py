"""The default world's must-show checks, measured on a finished run.

Reads ``RUN_DIR/results.parquet`` (a ``crsbench run --profile default``) and
prints, per dataset, the clean macro-AUROC of every encoder (mean over seeds,
frozen arm), then each check of :mod:`crsbench_lib.report.world`: the margin of
the best broad encoder over the pixel and PCA probes, the highest clean AUROC,
the site-B floor, and the counts of neural encoders and LoRA runs. Exit status
1 when any check fails.

Usage: ``python benchmarks/bench_world_checks.py RUN_DIR``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from crsbench_lib.encoders.zoo import zoo_families
from crsbench_lib.report.world import clean_frozen_auroc, world_checks
from crsbench_lib.results.io import RESULTS_FILE


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    args = parser.parse_args()
    table = pd.read_parquet(args.run_dir / RESULTS_FILE)
    families = zoo_families()
    clean = clean_frozen_auroc(table)
    clean.insert(0, "family", [families.get(e, "?") for e in clean.index])
    with pd.option_context("display.width", 140, "display.max_rows", 100):
        print(clean.sort_values("family").round(3).to_string())
        checks = world_checks(table, families)
        print()
        print(checks.assign(value=checks["value"].round(3)).to_string(index=False))
    return 0 if checks["holds"].all() else 1


if __name__ == "__main__":
    sys.exit(main())
