"""``crsbench registry``: the score registry from the command line.

Sub-commands: ``add``, ``list``, ``history``, ``show``, ``verify``, ``export``
and ``standards``. Argument parsing and printing only; the work is in
:mod:`crsbench_lib.registry`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from crsbench_lib.cli import add_results_argument
from crsbench_lib.errors import ReferenceStandardError
from crsbench_lib.registry import Registry, default_registry_path, verify_registry
from crsbench_lib.registry.entries import NORM_FIELDS, RAW_FIELDS
from crsbench_lib.registry.export import EXPORT_FORMATS, export_registry
from crsbench_lib.registry.lifecycle import saturation_notes, saturation_table
from crsbench_lib.registry.store import select_encoders
from crsbench_lib.results.io import read_results
from crsbench_lib.results.schema import ARMS
from crsbench_lib.standard import load_standard

#: Exit status of ``verify`` when something differs (2 stays "user error").
EXIT_VERIFY_FAILED = 1
_FLOAT = "{:.4f}".format


def _print_table(frame: pd.DataFrame) -> None:
    if frame.empty:
        print("(none)")
        return
    print(frame.to_string(index=False, float_format=_FLOAT, na_rep="-"))


def _open(args: argparse.Namespace, create: bool = False) -> Registry:
    return Registry(args.db, create=create)


def _add(args: argparse.Namespace) -> int:
    # Validate every input before the registry file is opened (or created):
    # a bad table or standard leaves the database exactly as it was.
    results = read_results(args.results)
    select_encoders(results, args.arm, args.encoder or None)
    standard: object = args.standard
    if Path(args.standard).is_file():
        standard = load_standard(args.standard)
        standard.require_panel()  # type: ignore[attr-defined]
        standard = Path(args.standard)  # the registry stores the file's text whole
    elif not Path(args.db or default_registry_path()).exists():
        raise ReferenceStandardError(
            f"{args.standard}: no such reference standard file (and no registry yet that could hold a version of "
            "that name)"
        )
    with _open(args, create=True) as registry:
        report = registry.add(
            results, standard, encoders=args.encoder or None, arm=args.arm, correct=args.correct,
            note=args.note, source=args.results,
        )
        record = report.standard
        if report.standard_registered:
            print(f"registered new standard '{record.version}' ({record.content_hash})")
        else:
            print(f"standard '{record.version}' already registered ({record.content_hash})")
        table = report.table()
        table["supersedes"] = table["supersedes"].astype("Int64")
        _print_table(table)
        counts = table["action"].value_counts()
        print(
            f"{counts.get('added', 0)} added, {counts.get('corrected', 0)} corrected, "
            f"{counts.get('unchanged', 0)} unchanged (identical inputs already registered: no duplicate) "
            f"in {registry.path}"
        )
    return 0


def _list(args: argparse.Namespace) -> int:
    with _open(args) as registry:
        entries = registry.entries(args.standard, current_only=not args.all)
        if entries.empty:
            print(f"{registry.path}: no entries")
            return 0
        saturation = saturation_table(entries)
        notes = saturation_notes(saturation)
        for version, group in entries.groupby("standard_version", sort=False):
            print(f"standard {version}: {int(group['superseded_by'].isna().sum())} current entries")
            shown = group[["rank", "candidate", "crs", "dominance", "balance", "floor", *RAW_FIELDS, "entry_id"]]
            if args.all:
                shown = shown.assign(superseded_by=group["superseded_by"])
            _print_table(shown.rename(columns={f: f[4:] for f in RAW_FIELDS}))
            sat = saturation[saturation["standard_version"] == version]
            cells = ", ".join(f"{r.axis} {int(r.at_worst)}/{int(r.at_best)}" for r in sat.itertuples())
            print(f"saturation (entries at worst/best anchor): {cells}")
            for line in notes.get(str(version), []):
                print(f"note: {line}")
            print()
    return 0


def _history(args: argparse.Namespace) -> int:
    with _open(args) as registry:
        frame = registry.history(args.encoder)
        shown = frame[["entry_id", "created_at", "standard_version", "arm", "crs", "rank", "supersedes",
                       "superseded_by", "rows_hash"]].copy()
        shown["rows_hash"] = shown["rows_hash"].str.slice(0, 12)
        print(f"history of {args.encoder}: {len(frame)} entr{'y' if len(frame) == 1 else 'ies'}")
        _print_table(shown)
    return 0


def _show(args: argparse.Namespace) -> int:
    with _open(args) as registry:
        for detail in registry.show(args.encoder):
            print(f"{detail['candidate']} under standard {detail['standard_version']} "
                  f"({detail['standard_content_hash']})")
            print(f"  entry #{detail['entry_id']}, rank {detail['rank']} of {detail['n_current_under_standard']}, "
                  f"published {detail['created_at']}")
            print(f"  CRS {detail['crs']!r}  (dominance {detail['dominance']!r}, balance {detail['balance']!r}, "
                  f"floor {detail['floor']!r})")
            for raw, norm in zip(RAW_FIELDS, NORM_FIELDS, strict=True):
                print(f"  {raw[4:]}: raw {detail[raw]!r}, normalised {detail[norm]!r}")
            supersedes = detail["supersedes"]
            if supersedes is not pd.NA and supersedes is not None:
                print(f"  supersedes entry #{supersedes}")
            print(f"  computed from {detail['n_rows']} results rows, rows hash {detail['rows_hash']}")
            print(f"  entry digest {detail['digest']}")
            for key, value in sorted(detail["provenance"].items()):
                print(f"  provenance.{key}: {value}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    with _open(args) as registry:
        report = verify_registry(registry, expect_head=args.expect_head)
    for line in report.problems:
        print(f"problem: {line}")
    print(report.summary())
    return 0 if report.ok else EXIT_VERIFY_FAILED


def _export(args: argparse.Namespace) -> int:
    with _open(args) as registry:
        result = export_registry(registry, args.format, args.out, current_only=args.current_only)
    if args.out is None:
        sys.stdout.write(str(result))
    else:
        print(f"wrote {result}", file=sys.stderr)
    return 0


def _standards(args: argparse.Namespace) -> int:
    with _open(args) as registry:
        _print_table(registry.standards())
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``crsbench registry ...`` to the command."""
    parser = subparsers.add_parser(
        "registry",
        help="fixed-reference history of encoder scores (SQLite)",
        description="A registry of CRS entries under versioned reference standards: entries are never "
        "rewritten; corrections supersede; verify recomputes everything and checks the hash-chained log.",
    )
    parser.add_argument(
        "--db", metavar="PATH", default=None,
        help=f"registry file (default: $CRSBENCH_REGISTRY or {default_registry_path()})",
    )
    commands = parser.add_subparsers(dest="registry_command", metavar="SUBCOMMAND", parser_class=type(parser))
    commands.required = True

    add = commands.add_parser("add", help="score encoders of a results table and publish the entries")
    add_results_argument(add)
    add.add_argument("--standard", required=True, metavar="FILE",
                     help="reference standard file (registered if new) or a registered version id")
    add.add_argument("--encoder", action="append", metavar="NAME", help="encoder to add (repeatable; default all)")
    add.add_argument("--arm", choices=ARMS, default="frozen", help="arm to score (default frozen)")
    add.add_argument("--correct", action="store_true",
                     help="publish corrections: an encoder whose rows changed gets a new entry superseding the old")
    add.add_argument("--note", default="", help="free text kept in the provenance (e.g. why a correction)")
    add.set_defaults(handler=_add)

    lst = commands.add_parser("list", help="ranked table per standard, with anchor saturation")
    lst.add_argument("--standard", metavar="VERSION", default=None, help="only this standard version")
    lst.add_argument("--all", action="store_true", help="include superseded entries")
    lst.set_defaults(handler=_list)

    history = commands.add_parser("history", help="every entry of an encoder, oldest first")
    history.add_argument("encoder", metavar="ENCODER")
    history.set_defaults(handler=_history)

    show = commands.add_parser("show", help="the current entries of an encoder in full")
    show.add_argument("encoder", metavar="ENCODER")
    show.set_defaults(handler=_show)

    verify = commands.add_parser(
        "verify", help="recompute every entry bit for bit and check the log's hash chain (exit 1 on any difference)"
    )
    verify.add_argument("--expect-head", metavar="HASH", default=None,
                        help="a log head hash recorded earlier, which must still be in the log")
    verify.set_defaults(handler=_verify)

    export = commands.add_parser("export", help="entries as CSV or JSON")
    export.add_argument("--format", choices=EXPORT_FORMATS, required=True)
    export.add_argument("--out", metavar="FILE", default=None, help="write here (default: standard output)")
    export.add_argument("--current-only", action="store_true", help="leave out superseded entries")
    export.set_defaults(handler=_export)

    standards = commands.add_parser("standards", help="registered standards")
    standards.set_defaults(handler=_standards)
