"""``crsbench reproduce``: write a reference-run summary, or check a run against one."""

from __future__ import annotations

import argparse
from pathlib import Path

from crsbench_lib.cli import add_results_argument
from crsbench_lib.paths import standards_dir
from crsbench_lib.results.io import read_results
from crsbench_lib.scoring.reproduce import (
    DEFAULT_TOLERANCE,
    compare_to_summary,
    load_summary,
    summarise_run,
    summary_filename,
    write_summary,
)

EXIT_NOT_REPRODUCED = 1


def shipped_summary(profile: str) -> Path:
    """Where the project ships the reference-run summary of a profile (may not exist)."""
    return standards_dir() / summary_filename(profile)


def _write(args: argparse.Namespace) -> int:
    summary = summarise_run(read_results(args.results), args.profile, tolerance=args.tolerance)
    path = write_summary(summary, args.out if args.out is not None else shipped_summary(args.profile))
    n = sum(len(v) for v in summary["axes"].values())
    print(f"wrote {path}: profile {args.profile}, {n} encoder profiles, {summary['results_hash']}, "
          f"tolerance {summary['tolerance']:g}")
    return 0


def _check(args: argparse.Namespace) -> int:
    summary = load_summary(args.summary if args.summary is not None else shipped_summary(args.profile))
    outcome = compare_to_summary(read_results(args.results), summary)
    print(outcome.message())
    return 0 if outcome.reproduces else EXIT_NOT_REPRODUCED


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``crsbench reproduce write`` and ``crsbench reproduce check``."""
    parser = subparsers.add_parser(
        "reproduce",
        help="write a reference-run summary, or check whether a run reproduces one",
        description="A reference-run summary holds a run's config hash, results hash and raw encoder profiles. "
        "'check' says whether another table reproduces it exactly, within its tolerance, or not, and by how much "
        f"(exit 0, or {EXIT_NOT_REPRODUCED} when it does not).",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    actions.required = True
    write = actions.add_parser("write", help="summarise a results table")
    add_results_argument(write)
    write.add_argument("--profile", required=True, metavar="NAME", help="profile the table was run with")
    write.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE,
                       help=f"largest raw-axis difference that counts as a reproduction (default {DEFAULT_TOLERANCE})")
    write.add_argument("--out", type=Path, metavar="FILE",
                       help="where to write (default: the shipped standards/reference-run-<profile>.json)")
    write.set_defaults(handler=_write)
    check = actions.add_parser("check", help="compare a results table with a summary")
    add_results_argument(check)
    which = check.add_mutually_exclusive_group(required=True)
    which.add_argument("--profile", metavar="NAME", help="compare with the shipped summary of this profile")
    which.add_argument("--summary", type=Path, metavar="FILE", help="compare with this summary file")
    check.set_defaults(handler=_check)
