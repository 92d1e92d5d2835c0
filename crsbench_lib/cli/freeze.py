"""``crsbench freeze``: create a versioned reference standard from a results table."""

from __future__ import annotations

import argparse

from crsbench_lib.cli import add_results_argument
from crsbench_lib.results.io import read_results
from crsbench_lib.scoring.freeze import freeze_standard
from crsbench_lib.standard import save_standard


def _run(args: argparse.Namespace) -> int:
    results = read_results(args.results)
    standard = freeze_standard(
        results, args.version, panel=args.panel, base=args.base, arm=args.arm, description=args.description
    )
    path = save_standard(standard, args.out)
    print(
        f"froze reference standard {standard.version} ({len(standard.panel_names)} panel members, "
        f"arm {standard.arm}) to {path}; {standard.content_hash}"
    )
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``crsbench freeze``."""
    parser = subparsers.add_parser(
        "freeze",
        help="freeze a reference standard from a results table",
        description="Copy anchors, weights, label fractions and ECE bins from a base standard (default: the "
        "shipped template) and store the panel's normalised profiles, computed from RESULTS.",
    )
    add_results_argument(parser)
    parser.add_argument("--version", required=True, metavar="ID", help="version id of the new standard")
    parser.add_argument("--panel", nargs="+", metavar="NAME", help="panel encoders (default: all of the table)")
    parser.add_argument("--base", metavar="FILE", help="standard to copy settings from (default: the template)")
    parser.add_argument("--arm", choices=("frozen", "lora"), default="frozen", help="arm of the panel (default frozen)")
    parser.add_argument("--description", metavar="TEXT", help="free text stored in the file")
    parser.add_argument("--out", required=True, metavar="FILE", help="where to write the YAML")
    parser.set_defaults(handler=_run)
