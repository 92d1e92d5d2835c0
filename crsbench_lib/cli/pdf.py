"""``crsbench pdf``: print the built book to one PDF with headless Chromium."""

from __future__ import annotations

import argparse
from pathlib import Path

from crsbench_lib.cli import add_html_argument


def _handle(args: argparse.Namespace) -> int:
    from crsbench_lib.report.pdf import build_pdf
    from crsbench_lib.report.publish import default_html_dir

    pdf = build_pdf(args.html if args.html is not None else default_html_dir(), out=args.out)
    print(f"crsbench pdf: {pdf}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``pdf`` sub-command."""
    parser = subparsers.add_parser(
        "pdf",
        help="print the built book (_build/html) to one PDF with headless Chromium",
        description=(
            "Print every page of the built book with the system's Chromium (set CRSBENCH_CHROMIUM to choose "
            "one) and join them behind a first page naming the package version, reference standard, results "
            "hash and build date. Build the book first with 'make book'."
        ),
    )
    add_html_argument(parser)
    parser.add_argument("--out", metavar="FILE", type=Path, default=None,
                        help="the PDF (default: _build/pdf/crsbench-book.pdf)")
    parser.set_defaults(handler=_handle)
