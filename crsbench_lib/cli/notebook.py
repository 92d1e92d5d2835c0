"""``crsbench notebook NAME -p KEY VALUE ...``: rerun one chapter with new parameters.

Writes the executed notebook and a standalone HTML page of it to an output folder
(default ``crsbench-reruns/NAME/`` under the working directory), never over the
book's build unless ``--overwrite-book`` is given.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from crsbench_lib.errors import NotebookError


def parse_value(text: str) -> Any:
    """A parameter value as YAML (numbers, booleans, null, lists, mappings); plain text otherwise."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def _parameters(pairs: list[list[str]] | None) -> dict[str, Any]:
    """The ``-p`` pairs as values; a relative file parameter is read from the working directory, as a shell user means it.

    The notebook's kernel runs in ``notebooks/``, so ``-p results_path
    runs/mine/results.parquet`` would otherwise name a file under the project,
    not the one beside the user.
    """
    from crsbench_lib.report.notebooks import FILE_PARAMETERS

    params: dict[str, Any] = {}
    for key, value in pairs or []:
        if key in params:
            raise NotebookError(f"parameter {key!r} given twice")
        params[key] = parse_value(value)
        if key in FILE_PARAMETERS and isinstance(params[key], str) and not Path(params[key]).is_absolute():
            params[key] = str(Path.cwd() / params[key])
    return params


def _handle(args: argparse.Namespace) -> int:
    from crsbench_lib.report.notebooks import (
        available_notebooks,
        execute_notebook,
        export_html,
        notebook_parameters,
        notebook_path,
        rerun_destination,
    )

    if args.list:
        for name, path in available_notebooks().items():
            print(f"{name}: {', '.join(notebook_parameters(path))}")
        return 0
    if args.name is None:
        raise NotebookError(f"name a notebook; valid notebooks: {', '.join(available_notebooks()) or 'none found'}")
    notebook_path(args.name)  # unknown notebook -> the valid names, before anything runs
    destination = rerun_destination(args.name, args.out, overwrite_book=args.overwrite_book)
    result = execute_notebook(args.name, _parameters(args.parameter), output=destination, use_cache=not args.no_cache)
    state = "reused from the execution cache" if result.cached else f"executed in {result.seconds:.1f} s"
    print(f"{result.output}: {state}", file=sys.stdout)
    if not args.no_html:
        page = export_html(result.output)
        print(f"{page}: open it in a browser (e.g. python -m webbrowser {page})", file=sys.stdout)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``notebook`` sub-command."""
    parser = subparsers.add_parser(
        "notebook",
        help="execute one book notebook with new parameters (papermill) and write it as a notebook and an HTML page",
        description=(
            "Execute one notebook of notebooks/ with papermill, overriding parameters of its "
            "'parameters' cell, and write the executed notebook and a standalone HTML page. "
            "Values are read as YAML: -p n_draws 200 -p highlight '[hog, pixels]'."
        ),
    )
    parser.add_argument("name", nargs="?", metavar="NAME", help="notebook name (file stem in notebooks/)")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", metavar=("KEY", "VALUE"),
                        help="set a parameter (repeatable)")
    parser.add_argument("--out", metavar="PATH", type=Path, default=None,
                        help="output folder, or a .ipynb file (default: crsbench-reruns/NAME/ in the working directory)")
    parser.add_argument("--overwrite-book", action="store_true",
                        help="allow --out to replace the book build's executed copy (_build/notebooks/NAME.ipynb)")
    parser.add_argument("--no-html", action="store_true", help="write the executed notebook only")
    parser.add_argument("--no-cache", action="store_true", help="execute even if an identical run is cached")
    parser.add_argument("--list", action="store_true", help="list the notebooks and their parameters")
    parser.set_defaults(handler=_handle)
