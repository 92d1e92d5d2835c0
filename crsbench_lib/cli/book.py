"""``crsbench book [--profile NAME]``: run a profile (cached), execute every notebook, render HTML."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from crsbench_lib.cli import positive_int
from crsbench_lib.paths import shipped_profiles

if TYPE_CHECKING:
    from crsbench_lib.runner.profile import Profile


DEFAULT_PROFILE = "default"


def book_identity(profile: Profile, explicit: bool, results_path: Path | None) -> tuple[str, bool | None]:
    """The profile name and cohort flag the book shows for a table.

    A table the profile's run produced is described by the profile. A table
    given with ``--results`` is described by the run manifest beside it (its
    profile and whether its datasets are phantoms), unless a profile was named
    explicitly; without a manifest or an explicit profile the cohort is "not
    recorded" rather than the default profile's phantom cohort.

    Parameters
    ----------
    profile : Profile
        The loaded profile (``--profile``/``--config``, or the default).
    explicit : bool
        Whether ``--profile`` or ``--config`` was given.
    results_path : path, optional
        The ``--results`` table, ``None`` when the profile is run.

    Returns
    -------
    (str, bool or None)
        Profile name and ``simulated`` for :func:`~crsbench_lib.report.book.render_book`.
    """
    from crsbench_lib.report.context import simulated_from_manifest
    from crsbench_lib.report.own_data import read_run_data

    own = all(spec.kind == "phantom" for spec in profile.datasets)
    if results_path is None:
        return profile.name, own
    run = read_run_data(results_path)
    recorded = simulated_from_manifest(results_path)
    name = run.profile if run is not None and run.profile and not explicit else profile.name
    if recorded is not None:
        return name, recorded
    return name, own if explicit else None


def default_output_root(name: str, simulated: bool | None, results_path: Path) -> Path | None:
    """Where a book goes without ``--out``.

    Only the default edition (the ``default`` profile on the phantom cohort)
    goes to the project root (``_build/html``, what ``make book`` publishes).
    Every other book, and above all one on a user's data, goes beside the run
    it describes (``<run folder>/_build/html``), so that it never overwrites
    the default book and two runs' books never overwrite each other.

    Returns
    -------
    pathlib.Path or None
        ``None`` for the project root.

    Examples
    --------
    >>> default_output_root("default", True, Path("runs/default/results.parquet")) is None
    True
    >>> default_output_root("medmnist-cpu", False, Path("runs/medmnist-cpu/results.parquet")).as_posix()
    'runs/medmnist-cpu'
    """
    if name == DEFAULT_PROFILE and simulated is True:
        return None
    return Path(results_path).parent


def _handle(args: argparse.Namespace) -> int:
    from crsbench_lib.report.book import render_book
    from crsbench_lib.results.io import own_standard_beside
    from crsbench_lib.runner.config import load_profile

    start = time.perf_counter()
    explicit = args.config is not None or args.profile is not None
    profile = load_profile(args.config if args.config is not None else args.profile or DEFAULT_PROFILE)
    if args.results is not None:
        results_path = args.results
    else:
        from crsbench_lib.runner.run import run_profile

        print(f"crsbench book: running profile '{profile.name}' (finished cells are reused)", flush=True)
        outcome = run_profile(profile, out_dir=args.run_out, jobs=args.jobs, progress=not args.no_progress)
        results_path = outcome.results_path
        print(f"  results: {results_path} ({outcome.n_computed} cells computed, {outcome.n_reused} reused, "
              f"{outcome.seconds:.1f} s)", flush=True)
    name, simulated = book_identity(profile, explicit, args.results)
    standard = args.standard
    if standard is None:
        # A table's own run may have frozen a standard from itself (a profile that names none).
        beside = own_standard_beside(results_path) if args.results is not None and not explicit else None
        standard = beside if beside is not None else profile.standard_path
    print("crsbench book: executing notebooks", flush=True)
    output_root = args.out if args.out is not None else default_output_root(name, simulated, Path(results_path))
    html = render_book(results_path, name, standard_path=standard, simulated=simulated,
                       output_root=output_root, use_cache=not args.no_cache, progress=True)
    print(f"crsbench book: {html / 'index.html'} ({time.perf_counter() - start:.0f} s)", file=sys.stdout)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``book`` sub-command."""
    parser = subparsers.add_parser(
        "book",
        help="run a profile (cached), execute every notebook and render the HTML book",
        description=(
            "Run the profile through the runner (finished cells are reused), execute every notebook "
            "with papermill (cached by notebook, parameters, results, standard and code version) and "
            "render the book with Jupyter Book into <out>/_build/html."
        ),
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--profile", metavar="NAME", default=None,
                       help=f"a shipped profile: {', '.join(shipped_profiles())} (default: {DEFAULT_PROFILE}; with "
                            "--results, the run manifest's)")
    which.add_argument("--config", metavar="FILE", type=Path, help="a profile YAML file")
    parser.add_argument("--results", metavar="FILE", type=Path, default=None,
                        help="use this results table instead of running the profile")
    parser.add_argument("--standard", metavar="FILE", type=Path, default=None,
                        help="reference standard (default: the profile's)")
    parser.add_argument("--out", metavar="DIR", type=Path, default=None,
                        help="folder that receives _build/ (default: the project root for the default profile's "
                             "phantom book, the run's folder for every other book)")
    parser.add_argument("--run-out", metavar="DIR", type=Path, default=None,
                        help="the run's output folder, as 'crsbench run --out' (default: <cache>/runs/<profile>): "
                             "its finished cells are reused")
    parser.add_argument("--jobs", metavar="N", type=positive_int, default=1, help="runner worker processes")
    parser.add_argument("--no-cache", action="store_true", help="re-execute every notebook")
    parser.add_argument("--no-progress", action="store_true", help="no runner progress bar")
    parser.set_defaults(handler=_handle)
