"""The benchmark audits itself: coverage of its 95 % intervals against the simulated truth.

Issue 27, item 7 (the benchmark audits itself). In the phantom world the
truth is computable: each audited encoder's true axes are the expectation over
training draws of the default size of its axes on the population (the mean
over ``--truth-draws`` training draws on ``--truth-test`` fresh test images),
its true CRS the shipped standard's CRS of that profile. The benchmark's own
protocol (the default profile's seeds and split sizes, a fresh draw every
replicate) is then repeated ``--replicates`` times, and the package's own
interval machinery (two-level bootstrap, its axis, CRS and CRS-difference
intervals, the AUROC-CRS tau interval, the leading tier) is run on each
replicate. The script prints a header and one line per quantity and interval
method::

    coverage QUANTITY NOMINAL OBSERVED N

(``N``: intervals counted, replicates times items), then the Monte-Carlo
error of each observed share. Runs deterministic and resumes from its cache
(``<cache>/coverage``; embeddings, predictions and scored tables are kept, the
scored tables under a fingerprint of the scoring code, so a change of the
bootstrap rescores from cached predictions).

Default (no arguments): derm, encoders pixels, hog, simclr_broad_aug_s,
multitask_broad_aug_s, simclr_derm_aug_s; corruption families gaussian_blur
and black_corner (5 severities each, so R has its average and worst terms);
see ``--help`` for more replicates or other encoders.

Usage: ``python benchmarks/bench_coverage.py [--replicates 20] [--encoders a,b,...] [--jobs 2]``.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

from crsbench_lib.runner.config import load_profile
from crsbench_lib.runner.coverage import DEFAULT_ENCODERS, DEFAULT_FAMILIES, design_from_profile, run_audit
from crsbench_lib.scoring.coverage import coverage_table, replicate_intervals, scoring_fingerprint, truth_table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="default", help="profile whose protocol is audited")
    parser.add_argument("--dataset", default="derm", help="phantom dataset of the profile")
    parser.add_argument("--encoders", default=",".join(DEFAULT_ENCODERS), help="comma-separated zoo encoders")
    parser.add_argument("--families", default=",".join(DEFAULT_FAMILIES), help="comma-separated corruption families")
    parser.add_argument("--replicates", type=int, default=16, help="replicates of the protocol")
    parser.add_argument("--truth-draws", type=int, default=16, help="training draws averaged into the truth")
    parser.add_argument("--truth-test", type=int, default=20_000, help="test images of the truth")
    parser.add_argument("--truth-corrupted", type=int, default=2_000, help="truth images per corruption condition")
    parser.add_argument("--draws", type=int, default=1000, help="bootstrap draws per replicate (the book's)")
    parser.add_argument("--truth-bootstrap-draws", type=int, default=200,
                        help="bootstrap draws of the truth (its Monte-Carlo error)")
    parser.add_argument("--pool-factor", type=int, default=8,
                        help="the development pool holds this many seeds' train and validation sets")
    parser.add_argument("--jobs", type=int, default=2, help="processes")
    parser.add_argument("--out", type=Path, default=None,
                        help="also write truth.parquet, intervals.parquet and coverage.parquet here (the chapter reads them)")
    parser.add_argument("--cache", type=Path, default=None, help="cache folder (default: <cache_dir>/coverage)")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    design = design_from_profile(
        load_profile(args.profile), dataset=args.dataset, encoders=tuple(args.encoders.split(",")),
        families=tuple(args.families.split(",")), n_replicates=args.replicates, n_truth_draws=args.truth_draws,
        truth_test=args.truth_test, truth_corrupted=args.truth_corrupted, pool_factor=args.pool_factor,
    )

    def progress(line: str) -> None:
        print(f"[{time.perf_counter() - start:7.1f} s] {line}", file=sys.stderr, flush=True)

    truth, intervals = run_audit(
        design,
        functools.partial(truth_table, n_draws=args.truth_bootstrap_draws),
        functools.partial(replicate_intervals, n_draws=args.draws),
        cache=args.cache, scoring_key=scoring_fingerprint(), n_jobs=args.jobs, progress=progress,
    )
    table = coverage_table(truth, intervals)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        for name, frame in (("truth", truth), ("intervals", intervals), ("coverage", table)):
            frame.to_parquet(args.out / f"{name}.parquet", index=False)
    best = truth.loc[truth["quantity"] == "leading_tier"].iloc[0]
    axes = truth[truth["quantity"].str.startswith("axis_")].groupby("quantity")["truth_se"].max()
    print(f"# coverage audit of profile {args.profile!r}: dataset {design.dataset}, encoders {', '.join(design.encoders)}")
    print(f"# {design.n_replicates} replicates of seeds {list(design.seeds)} x train {design.train} / val {design.val} / "
          f"test {design.test}; corruptions {', '.join(design.families)} x severities {list(design.severities)}; "
          f"bootstrap {args.draws} draws")
    print(f"# truth: {design.n_truth_draws} training draws on {design.truth_test} test images "
          f"({design.truth_corrupted} per corruption condition); its largest Monte-Carlo se per axis: "
          + ", ".join(f"{q.removeprefix('axis_')} {v:.4f}" for q, v in axes.items())
          + f"; CRS differences {truth.loc[truth['quantity'] == 'crs_difference', 'truth_se'].max():.4f}")
    print(f"# truly best: {best['item']} (CRS margin {best['truth']:.4f} +/- {best['truth_se']:.4f} over the runner-up)")
    print("# coverage QUANTITY NOMINAL OBSERVED N   (quantity.method; percentile = the interval the book shows)")
    for _, row in table.iterrows():
        print(f"coverage {row['quantity']}.{row['method']} {row['nominal']:.2f} {row['observed']:.3f} {int(row['n'])}")
    print("# Monte-Carlo se of OBSERVED (replicate as unit), mean interval width, mean truth se:")
    for _, row in table.iterrows():
        print(f"#   {row['quantity']}.{row['method']}: se {row['mc_se']:.3f}, width {row['mean_width']:.4f}, "
              f"truth se {row['mean_truth_se']:.4f}"
              + (f", mean tier size {row['mean_set_size']:.2f}" if row["method"] == "set" else ""))
    print(f"# wall time {time.perf_counter() - start:.0f} s (with --jobs {args.jobs})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
