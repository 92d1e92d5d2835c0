"""``crsbench data-needs``: what a run's test sets and seeds resolve, and what its closest call would need.

Like every page of the book it compares candidates only: the zoo's reference
encoders (:mod:`crsbench_lib.report.roles`) are left out of the pair and of the
calibration axis's reach (method section 9, amendment 31).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from crsbench_lib.cli import add_results_argument
from crsbench_lib.cli.score import resolve_standard
from crsbench_lib.errors import ConfigError


def _run(args: argparse.Namespace) -> int:
    from crsbench_lib.encoders.zoo import zoo_families
    from crsbench_lib.report.roles import reference_encoders
    from crsbench_lib.report.sentences.data_needs import data_needs_lines
    from crsbench_lib.results.io import read_results
    from crsbench_lib.results.predictions import load_prediction_arrays
    from crsbench_lib.scoring.data_needs import data_needs

    standard = resolve_standard(args.standard, args.results)
    results = read_results(args.results)
    arrays = load_prediction_arrays(Path(args.results).parent, "frozen")
    references = reference_encoders(zoo_families(), present=sorted(set(results["encoder"].astype(str))))
    try:
        needs = data_needs(arrays, results, standard, references=references,
                           pair=tuple(args.pair) if args.pair else None, n_draws=args.n_draws,
                           random_state=args.random_state)
    except ValueError as exc:
        raise ConfigError(f"{args.results}: {exc}") from None
    print(f"data needs of {args.results} (standard {standard.version}, frozen arm, {args.n_draws} draws)")
    for line in data_needs_lines(needs):
        print(line)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``crsbench data-needs``."""
    parser = subparsers.add_parser(
        "data-needs",
        help="what a run's test sets resolve, and the data its closest call would need",
        description="Per dataset: the ECE floor, the standard errors of AUROC and C, and whether C can separate "
                    "any two candidates. For the leader and its closest rival (or --pair): per axis, the "
                    "difference, its seed and test-image noise, and the test images or seeds that would resolve "
                    "it. Reads the run's stored predictions beside RESULTS.",
    )
    add_results_argument(parser)
    parser.add_argument("--standard", metavar="FILE",
                        help="reference standard YAML (default: the run's, else the shipped default)")
    parser.add_argument("--pair", nargs=2, metavar=("A", "B"), help="the two candidates to project")
    parser.add_argument("--n-draws", type=int, default=1000, help="bootstrap draws (default 1000, as the book)")
    parser.add_argument("--random-state", type=int, default=0, help="seed of the bootstrap (default 0)")
    parser.set_defaults(handler=_run)
