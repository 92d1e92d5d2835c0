"""``crsbench agree``: how far the CRS ranking departs from the AUROC ranking.

Like every page of the book it ranks the candidates only: the zoo's reference
encoders (:mod:`crsbench_lib.report.roles`) are left out of every statistic, so
that the comparison with the study (in brackets) counts the same population.
"""

from __future__ import annotations

import argparse

from crsbench_lib.cli import add_results_argument
from crsbench_lib.cli.score import add_standard_argument, format_table, resolve_standard
from crsbench_lib.encoders.zoo import zoo_families
from crsbench_lib.report.roles import reference_encoders
from crsbench_lib.results.io import read_results
from crsbench_lib.scoring.agreement import rank_table, score_agreement
from crsbench_lib.scoring.crs import score_results
from crsbench_lib.scoring.published import PUBLISHED


def _run(args: argparse.Namespace) -> int:
    standard = resolve_standard(args.standard, args.results)
    scored = score_results(read_results(args.results), standard, arm=args.arm)
    references = reference_encoders(zoo_families(), present=scored["encoder"].astype(str).tolist())
    scores = scored[~scored["encoder"].astype(str).isin(references)]
    agreement = score_agreement(scores)
    indexed = scores.set_index("encoder")
    print(
        f"aggregate AUROC vs CRS rankings: {agreement.n} candidates, "
        f"standard {standard.version}, arm {args.arm} (published study in brackets)"
    )
    if references:
        print(f"  reference encoders, scored but not ranked: {len(references)} ({', '.join(references)})")
    print(f"  Kendall tau-b             {agreement.tau_b:.3f}  [{PUBLISHED.kendall_tau:.3f}]")
    print(f"  Spearman rho              {agreement.rho:.3f}  [{PUBLISHED.spearman_rho:.3f}]")
    print(
        f"  reversed pairs            {agreement.reversed_pairs} of {agreement.n_pairs}  "
        f"[{PUBLISHED.reversed_pairs} of {PUBLISHED.n_pairs}]"
    )
    print(
        f"  mean |rank displacement|  {agreement.mean_abs_displacement:.2f}  [{PUBLISHED.mean_abs_displacement:.2f}]"
    )
    print(f"  tied pairs                AUROC {agreement.ties['auroc']}, CRS {agreement.ties['crs']}")
    print(format_table(rank_table(indexed["D"], indexed["crs"])))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``crsbench agree``."""
    parser = subparsers.add_parser(
        "agree",
        help="agreement of the AUROC and CRS rankings",
        description="Kendall tau-b, Spearman rho, reversed pairs and mean absolute rank displacement between "
        "the ranking by aggregate AUROC and the ranking by CRS.",
    )
    add_results_argument(parser)
    add_standard_argument(parser)
    parser.set_defaults(handler=_run)
