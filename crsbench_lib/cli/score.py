"""``crsbench score``: rank a results table's encoders by CRS against a reference standard.

After the table it lists the axis terms the table cannot measure, and warns (on
stderr) when the table lies outside the standard's panel or anchors, with the
command that freezes a standard fitting the user's own data.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pandas as pd

from crsbench_lib.cli import add_results_argument
from crsbench_lib.atomic import atomic_path
from crsbench_lib.results.io import own_standard_beside, read_results
from crsbench_lib.scoring.axes import standard_axes
from crsbench_lib.scoring.crs import saturation_counts, score_results
from crsbench_lib.scoring.fit import absent_terms, fit_warnings
from crsbench_lib.standard import DEFAULT_FILENAME, ReferenceStandard, default_standard_path, load_standard

FLOAT_FORMAT = "{:.3f}".format


def add_standard_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--standard`` and ``--arm`` options shared by score and agree."""
    parser.add_argument(
        "--standard",
        metavar="FILE",
        help=f"reference standard YAML (default: the standard its run froze beside the table, if any, else "
             f"standards/{DEFAULT_FILENAME})",
    )
    parser.add_argument("--arm", choices=("frozen", "lora"), default="frozen", help="arm to score (default frozen)")


def resolve_standard(path: str | None, results: str | os.PathLike[str] | None = None) -> ReferenceStandard:
    """Load ``--standard``; else the standard the table's run froze from itself, if any; else the shipped default."""
    if path is None and results is not None:
        path = own_standard_beside(results)
    return load_standard(path if path is not None else default_standard_path())


def format_table(table: pd.DataFrame) -> str:
    """A scored table as fixed-width text, floats to 3 decimals."""
    return table.to_string(index=False, float_format=FLOAT_FORMAT)


def _run(args: argparse.Namespace) -> int:
    standard = resolve_standard(args.standard, args.results)
    results = read_results(args.results)
    scores = score_results(results, standard, arm=args.arm)
    print(f"CRS against reference standard {standard.version} ({standard.content_hash[:19]}), arm {args.arm}")
    print(format_table(scores))
    saturation = saturation_counts(scores)
    counts = ", ".join(f"{axis} {row.at_worst}/{row.at_best}" for axis, row in saturation.iterrows())
    print(f"values on an anchor (at worst/at best): {counts}")
    absent = absent_terms(standard_axes(results, standard, arm=args.arm))
    print(f"absent terms: {'; '.join(absent) if absent else 'none'}")
    for line in fit_warnings(scores, standard):
        print(f"crsbench: warning: {line}", file=sys.stderr)
    if args.out is not None:
        destination = Path(args.out)
        with atomic_path(destination, suffix=".csv") as tmp:
            scores.to_csv(tmp, index=False)
        print(f"wrote {destination}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``crsbench score``."""
    parser = subparsers.add_parser(
        "score",
        help="rank encoders by CRS against a reference standard",
        description="Score every encoder of a results table against a fixed reference standard and print "
        "the ranked table (raw axes, normalised axes, components, CRS, rank, standard version).",
    )
    add_results_argument(parser)
    add_standard_argument(parser)
    parser.add_argument("--out", metavar="FILE.csv", help="also write the ranked table as CSV")
    parser.set_defaults(handler=_run)
