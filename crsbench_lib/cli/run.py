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
from crsbench_lib.paths import shipped_profiles
from crsbench_lib.cli.reproduce import shipped_summary


def fit_verdict(standard_path: Path, results_path: Path) -> list[str]:
    """The lines a run ends with: the standard it is scored against, whether the table fits it, and the fix.

    A profile that names no standard (``standard: own``, the template) gets a
    standard frozen from its own table, written beside the results
    (:data:`~crsbench_lib.results.io.OWN_STANDARD_FILE`) so that later tables
    can be scored against the same reference.

    Returns
    -------
    list of str
        One line each, prefixed ``fit:``.
    """
    from crsbench_lib.errors import CRSBenchError
    from crsbench_lib.report.context import is_build_standard, resolve_standard
    from crsbench_lib.report.own_data import fit_report
    from crsbench_lib.results.io import OWN_STANDARD_FILE
    from crsbench_lib.results.validated import read_validated
    from crsbench_lib.standard import save_standard

    try:
        table = read_validated(results_path)
        standard = resolve_standard(standard_path, table)
        lines = fit_report(table, standard)
    except CRSBenchError as exc:
        # A table the axes cannot be computed from (a grid without label fractions) still ran.
        return [f"fit: not assessed ({exc})"]
    if is_build_standard(standard):
        saved = save_standard(standard, Path(results_path).parent / OWN_STANDARD_FILE)
        lines.append(f"froze {standard.version} to {saved}: score later tables against it with '--standard {saved}'")
    return [f"fit: {line}" for line in lines]


#: Bootstrap draws of the run's calibration-reach check (a quick look; ``crsbench data-needs`` takes the book's 1,000).
REACH_DRAWS = 200


def calibration_reach_warning(standard_path: Path, results_path: Path, n_draws: int = REACH_DRAWS) -> str:
    """One line when some dataset's test split is too small for the calibration axis to separate any two candidates.

    Reads the run's stored predictions (frozen arm) and runs a small two-level
    bootstrap per dataset (:func:`~crsbench_lib.scoring.data_needs.precision_by_dataset`);
    empty when every dataset's two candidates furthest apart on C are resolved,
    or when the check cannot run (no stored predictions, fewer than two
    candidates or seeds): a run is never failed by its advice.
    """
    from crsbench_lib.encoders.zoo import zoo_families
    from crsbench_lib.errors import CRSBenchError
    from crsbench_lib.report.roles import reference_encoders
    from crsbench_lib.results.io import read_results
    from crsbench_lib.results.predictions import load_prediction_arrays
    from crsbench_lib.scoring.data_needs import precision_by_dataset
    from crsbench_lib.standard import load_standard

    try:
        table = read_results(results_path)
        references = reference_encoders(zoo_families(), present=sorted(set(table["encoder"].astype(str))))
        if len(set(table["encoder"].astype(str)) - set(references)) < 2 or table["seed"].nunique() < 2:
            return ""
        arrays = load_prediction_arrays(Path(results_path).parent, "frozen")
        precision = precision_by_dataset(arrays, table, load_standard(standard_path), references, n_draws=n_draws)
    except (CRSBenchError, ValueError, OSError):
        return ""
    blind = precision[~precision["c_separates"].astype(bool)]
    if blind.empty:
        return ""
    named = ", ".join(f"{row.dataset} ({row.n_test:,} test images: none of {row.c_pairs} pairs, the largest C "
                      f"difference {row.c_spread:.3f} within ±{row.c_half_width:.3f})" for row in blind.itertuples())
    return (f"warning: the calibration axis cannot separate any two candidates on {named}; "
            "`crsbench data-needs RESULTS` says what would")


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
    from crsbench_lib.results.manifest import read_manifest

    # Repeated after the progress bar, which scrolled the first mention away.
    for line in read_manifest(outcome.manifest_path).data_warnings:
        print(f"warning: {line}", file=sys.stdout)
    for line in fit_verdict(profile.standard_path, outcome.results_path):
        print(line, file=sys.stdout)
    line = calibration_reach_warning(profile.standard_path, outcome.results_path)
    if line:
        print(line, file=sys.stdout)
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
    which.add_argument("--profile", metavar="NAME", help=f"a shipped profile: {', '.join(shipped_profiles())}")
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
