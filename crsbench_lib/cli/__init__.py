"""The ``crsbench`` command: argument parsing and error reporting only.

Each module of this package that defines ``register(subparsers)`` adds its
sub-commands; the work itself lives in the library. A user error
(:class:`~crsbench_lib.errors.CRSBenchError`, or a full disk met anywhere) is
printed as one line on stderr with exit status 2; an interrupt exits with 130
without a traceback, and a closed output pipe (``crsbench agree ... | head``)
ends quietly with the conventional status 141 (128 + SIGPIPE).
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from collections.abc import Sequence
from pathlib import Path

from crsbench_lib.atomic import NO_SPACE_ERRNOS, no_space_error
from crsbench_lib.errors import CRSBenchError

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USER_ERROR, f"crsbench: error: {message}\n")


def positive_int(text: str) -> int:
    """argparse type: a positive integer (``--jobs``, ...)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def add_results_argument(parser: argparse.ArgumentParser) -> None:
    """The positional ``RESULTS`` argument: a results table file (``args.results``).

    Examples
    --------
    >>> parser = argparse.ArgumentParser()
    >>> add_results_argument(parser)
    >>> parser.parse_args(["run/results.parquet"]).results
    'run/results.parquet'
    """
    parser.add_argument("results", metavar="RESULTS", help="results table (.parquet or .csv)")


def add_html_argument(parser: argparse.ArgumentParser) -> None:
    """``--html DIR``: the built book (``args.html``; None means the project's ``_build/html``).

    Examples
    --------
    >>> parser = argparse.ArgumentParser()
    >>> add_html_argument(parser)
    >>> parser.parse_args([]).html is None, parser.parse_args(["--html", "site"]).html.name
    (True, 'site')
    """
    parser.add_argument("--html", metavar="DIR", type=Path, default=None,
                        help="the built book (default: _build/html of the project)")


class _VersionAction(argparse.Action):
    """``--version``: package, default reference standard and git commit, then exit 0.

    Computed only when asked (it reads the standard and asks git), unlike
    argparse's ``version`` action whose text is built with the parser.
    """

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:  # noqa: A002 (argparse's name)
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        from crsbench_lib.report.version import version_info

        print(version_info().text())  # stdout, like argparse's own version action
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    """The full parser, with every sub-command module registered."""
    parser = _Parser(prog="crsbench", description="CRS-Bench: reliability-aware encoder selection.")
    parser.add_argument("--version", action=_VersionAction,
                        help="print the package version, the default reference standard and the git commit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``crsbench`` console script."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)  # inside: --help into a closed pipe ends quietly too
        result = args.handler(args)
        # Flush inside the try, so that a reader which closed the pipe is met here.
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except CRSBenchError as exc:
        print(f"crsbench: error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except OSError as exc:
        # A full disk is the user's to fix, wherever the write was (a library or a worker).
        if exc.errno not in NO_SPACE_ERRNOS:
            raise
        where = Path(str(exc.filename)).parent if exc.filename else None
        message = no_space_error(where) if where is not None else f"no space left on device ({exc.strerror})"
        print(f"crsbench: error: {message}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("crsbench: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return int(result or 0)


def _silence_stdout() -> None:
    """Point stdout at the null device, so the interpreter's final flush cannot fail again.

    This is the recipe of the Python documentation (``signal``, "Note on SIGPIPE").
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a file descriptor (captured in tests)
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
