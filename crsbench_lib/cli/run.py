"""``crsbench run``: compute a profile's results table (thin wrapper of the runner).

When the project ships a reference-run summary of the profile
(``standards/reference-run-<profile>.json``), the run ends with one line saying
whether it reproduces that reference run, exactly or within its tolerance, and
by how much it differs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from crsbench_lib.cli import positive_int
from crsbench_lib.cli.reproduce import shipped_summary


def _handle(args: argparse.Namespace) -> int:
    from crsbench_lib.runner.config import load_profile
    from crsbench_lib.runner.run import run_profile

    profile = load_profile(
        args.config if args.config is not None else args.profile,
        allow_download=True if args.allow_download else None,
    )
    outcome = run_profile(
        profile,
        out_dir=args.out,
        jobs=args.jobs,
        scheduler=args.scheduler,
        progress=not args.no_progress,
        wait=args.wait,
    )
    print(
        f"{outcome.results_path}: {outcome.n_rows} rows from {outcome.n_cells} cells "
        f"({outcome.n_computed} computed, {outcome.n_reused} reused) in {outcome.seconds:.1f} s; "
        f"config {outcome.config_hash[:12]}; manifest {outcome.manifest_path}",
        file=sys.stdout,
    )
    summary = shipped_summary(profile.name)
    if summary.is_file():
        from crsbench_lib.results.io import read_results
        from crsbench_lib.scoring.reproduce import compare_to_summary, load_summary

        reproduction = compare_to_summary(read_results(outcome.results_path), load_summary(summary))
        print(f"{summary.name}: {reproduction.message()}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``run`` sub-command."""
    parser = subparsers.add_parser(
        "run",
        help="compute every (encoder, dataset, seed, arm) cell of a profile",
        description=(
            "Compute the results table of a profile (resumable: finished cells under the output "
            "folder are reused). Writes results.parquet and manifest.json."
        ),
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--profile", metavar="NAME", help="a shipped profile: quick, default or paper")
    which.add_argument("--config", metavar="FILE", type=Path, help="a profile YAML file")
    parser.add_argument("--out", metavar="DIR", type=Path, default=None,
                        help="output folder (default: <cache>/runs/<profile name>)")
    parser.add_argument("--jobs", metavar="N", type=positive_int, default=1,
                        help="local worker processes (default 1)")
    parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                        help="run on a Dask distributed scheduler, e.g. tcp://host:8786")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--allow-download", action="store_true",
                        help="fetch absent MedMNIST files and hub encoder weights (same as the profile key "
                        "allow_download: true); without it nothing is downloaded")
    parser.add_argument("--wait", action="store_true",
                        help="if another run is using the output folder, wait for it to finish "
                             "(default: stop at once, naming it)")
    parser.set_defaults(handler=_handle)
