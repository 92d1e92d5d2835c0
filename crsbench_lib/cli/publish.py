"""``crsbench publish``: push the built book to a ``gh-pages`` branch (ghp-import)."""

from __future__ import annotations

import argparse
from pathlib import Path

from crsbench_lib.cli import add_html_argument


def _handle(args: argparse.Namespace) -> int:
    from crsbench_lib.report.publish import publish_site

    commit = publish_site(args.html, remote=args.remote, branch=args.branch, repository=args.repository,
                          push=not args.no_push)
    where = f"pushed to {args.remote}" if not args.no_push else "not pushed"
    print(f"crsbench publish: branch '{args.branch}' at {commit[:12]} ({where})")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``publish`` sub-command."""
    from crsbench_lib.report.publish import DEFAULT_BRANCH, DEFAULT_REMOTE

    parser = subparsers.add_parser(
        "publish",
        help="push the built book (_build/html) to a gh-pages branch with ghp-import",
        description=(
            "Commit the built book as the only content of a branch of this repository (with .nojekyll) "
            "and force-push it, as Jupyter Book's 'ghp-import -n -p -f _build/html'. Build it first "
            "with 'make book'."
        ),
    )
    add_html_argument(parser)
    parser.add_argument("--remote", metavar="REMOTE", default=DEFAULT_REMOTE,
                        help=f"remote name, URL or path to push to (default: {DEFAULT_REMOTE})")
    parser.add_argument("--branch", metavar="NAME", default=DEFAULT_BRANCH,
                        help=f"branch that receives the site (default: {DEFAULT_BRANCH})")
    parser.add_argument("--repository", metavar="DIR", type=Path, default=None,
                        help="the git repository whose branch is written (default: the project root)")
    parser.add_argument("--no-push", action="store_true", help="write the branch locally only")
    parser.set_defaults(handler=_handle)
