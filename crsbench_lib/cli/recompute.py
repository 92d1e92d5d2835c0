"""``crsbench recompute``: a run's results table from its stored predictions, without re-embedding."""

from __future__ import annotations

import argparse

from crsbench_lib.runner.recompute import RECOMPUTED_FILE, recompute_results


def _run(args: argparse.Namespace) -> int:
    done = recompute_results(args.run_dir, args.out)
    print(f"recomputed {len(done.table)} rows of {done.n_cells} cells from stored predictions: {done.path}")
    if done.max_abs_difference is not None:
        print(f"largest difference from results.parquet: {done.max_abs_difference:.3g}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``crsbench recompute``."""
    parser = subparsers.add_parser(
        "recompute",
        help="recompute a run's results table from its stored predictions",
        description="Recompute every metric of a run folder's results table from the per-image predictions its "
        "cells stored (no embedding, no probe fit), write the table and report the largest difference from the "
        "run's results.parquet.",
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run folder (holds manifest.json and predictions/)")
    parser.add_argument("--out", metavar="FILE", help=f"output Parquet file (default RUN_DIR/{RECOMPUTED_FILE})")
    parser.set_defaults(handler=_run)
