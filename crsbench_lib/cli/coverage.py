"""``crsbench coverage``: the self-audit (issue 27, item 7): do the benchmark's 95 % intervals cover the truth?

In the phantom world the truth is computable (:mod:`crsbench_lib.runner.coverage`
draws it; :mod:`crsbench_lib.scoring.coverage` scores it). The command repeats the
profile's protocol ``--replicates`` times on fresh draws, runs the package's own
interval machinery on each replicate, and prints a header and one line per
quantity and interval method::

    coverage QUANTITY NOMINAL OBSERVED N

(``N``: intervals counted, replicates times items), then the Monte-Carlo error
of each observed share. With ``--out DIR`` it writes ``truth.parquet``,
``intervals.parquet`` and ``coverage.parquet`` there (the book's chapter reads
them). Progress goes to stderr. The audit is deterministic and resumes from its
cache (``<cache>/coverage``): embeddings, predictions and scored tables are
kept, the scored tables under a key of the scoring code, the standard and the
bootstrap draws (a change of any of them rescores the cached predictions).

Sizes come from a preset (``--preset``, default ``benchmark``: five encoders,
16 replicates, a quarter of an hour on two cores); every option overrides it.
``--standard FILE`` scores against another standard than the profile's (e.g. a
copy with noise-aware dominance, method section 9, amendment 20): the cached
predictions are rescored, nothing is redrawn. A profile that names no standard
(``standard: own``) is audited against the shipped default standard: every
replicate must be scored against one fixed reference.
``benchmarks/bench_coverage.py`` is a thin caller of :func:`run_coverage`.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from crsbench_lib.cli import positive_int

if TYPE_CHECKING:
    import pandas as pd

#: Options that take their default from the preset: option dest -> AuditSize field.
PRESET_OPTIONS: dict[str, str] = {
    "encoders": "encoders", "families": "families", "replicates": "replicates", "truth_draws": "truth_draws",
    "truth_test": "truth_test", "truth_corrupted": "truth_corrupted", "pool_factor": "pool_factor",
    "draws": "draws", "truth_bootstrap_draws": "truth_bootstrap_draws",
}
DEFAULT_PRESET = "benchmark"


def _names(text: str) -> tuple[str, ...]:
    """argparse type: a comma-separated list of names (no empty name)."""
    names = tuple(n.strip() for n in text.split(","))
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {text!r}")
    return names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The audit's options (shared by ``crsbench coverage`` and ``benchmarks/bench_coverage.py``).

    Examples
    --------
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> args = parser.parse_args(["--encoders", "pixels,hog", "--replicates", "3"])
    >>> args.encoders, args.replicates, args.truth_draws is None
    (('pixels', 'hog'), 3, True)
    """
    parser.add_argument("--profile", default="default", metavar="NAME", help="profile whose protocol is audited")
    parser.add_argument("--dataset", default="derm", help="phantom dataset of the profile (default: derm)")
    parser.add_argument("--preset", default=DEFAULT_PRESET, metavar="NAME",
                        help="audit size: benchmark (default), chapter, smoke, close_race (three encoders within "
                             "0.03 of each other's CRS), all_families (every corruption family with the site term), "
                             "or book (the chapter's size for the profile); the options below override it")
    parser.add_argument("--encoders", type=_names, default=None, metavar="A,B,...", help="zoo encoders audited")
    parser.add_argument("--families", type=_names, default=None, metavar="A,B,...",
                        help="corruption families entering R (every severity of the profile); 'all': every family "
                             "of the dataset's domain")
    counts = (
        ("--replicates", "replicates of the protocol"),
        ("--truth-draws", "training draws averaged into the truth"),
        ("--truth-test", "test images of the truth"),
        ("--truth-corrupted", "truth images per corruption condition"),
        ("--draws", "bootstrap draws per replicate (the book's chapters: 1000)"),
        ("--truth-bootstrap-draws", "bootstrap draws of the truth (its Monte-Carlo error)"),
        ("--pool-factor", "the development pool holds this many seeds' train and validation sets"),
    )
    for flag, text in counts:
        parser.add_argument(flag, type=positive_int, default=None, metavar="N", help=f"{text}; default: the preset's")
    parser.add_argument("--standard", type=Path, default=None, metavar="FILE",
                        help="reference standard the audit scores against (default: the profile's)")
    parser.add_argument("--jobs", type=positive_int, default=2, metavar="N",
                        help="processes (the numbers do not depend on it; default 2)")
    parser.add_argument("--out", type=Path, default=None, metavar="DIR",
                        help="write truth.parquet, intervals.parquet and coverage.parquet here")
    parser.add_argument("--cache", type=Path, default=None, metavar="DIR",
                        help="cache folder (default: <cache_dir>/coverage)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def audit_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The audit's sizes: the preset's, overridden by every option given.

    Raises
    ------
    ConfigError
        On an unknown preset.
    """
    from crsbench_lib.runner.coverage import audit_preset

    size = audit_preset(args.preset, args.profile)
    return {key: (getattr(size, field) if getattr(args, key) is None else getattr(args, key))
            for key, field in PRESET_OPTIONS.items()}


def report_lines(header: dict[str, Any], truth: pd.DataFrame, table: pd.DataFrame) -> list[str]:
    """The printed report: the design, the truth's precision, one ``coverage`` line per quantity and method.

    Parameters
    ----------
    header : dict
        ``profile``, ``design`` (an :class:`~crsbench_lib.runner.coverage.AuditDesign`) and ``draws``.
    truth, table : pandas.DataFrame
        The truth table and the coverage table.

    Returns
    -------
    list of str
    """
    design = header["design"]
    best = truth.loc[truth["quantity"] == "leading_tier"].iloc[0]
    axes = truth[truth["quantity"].str.startswith("axis_")].groupby("quantity")["truth_se"].max()
    lines = [
        f"# coverage audit of profile {header['profile']!r}: dataset {design.dataset}, "
        f"encoders {', '.join(design.encoders)}",
        f"# {design.n_replicates} replicates of seeds {list(design.seeds)} x train {design.train} / val {design.val} / "
        f"test {design.test}; corruptions {', '.join(design.families)} x severities {list(design.severities)}; "
        f"bootstrap {header['draws']} draws",
        f"# truth: {design.n_truth_draws} training draws on {design.truth_test} test images "
        f"({design.truth_corrupted} per corruption condition); its largest Monte-Carlo se per axis: "
        + ", ".join(f"{q.removeprefix('axis_')} {v:.4f}" for q, v in axes.items())
        + f"; CRS differences {truth.loc[truth['quantity'] == 'crs_difference', 'truth_se'].max():.4f}",
        f"# truly best: {best['item']} (CRS margin {best['truth']:.4f} +/- {best['truth_se']:.4f} over the runner-up)",
        "# coverage QUANTITY NOMINAL OBSERVED N   (quantity.method)",
    ]
    for _, row in table.iterrows():
        lines.append(f"coverage {row['quantity']}.{row['method']} {row['nominal']:.2f} {row['observed']:.3f} "
                     f"{int(row['n'])}")
    lines.append("# Monte-Carlo se of OBSERVED (replicate as unit), mean interval width, mean truth se, "
                 "mean estimate - truth (its se):")
    for _, row in table.iterrows():
        extra = (f", mean tier size {row['mean_set_size']:.2f}" if row["method"] == "set"
                 else f", error {row['mean_error']:+.4f} ({row['error_se']:.4f})")
        lines.append(f"#   {row['quantity']}.{row['method']}: se {row['mc_se']:.3f}, width {row['mean_width']:.4f}, "
                     f"truth se {row['mean_truth_se']:.4f}" + extra)
    return lines


def run_coverage(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the audit the options describe, write its tables, print its report.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by a parser with :func:`add_arguments`.
    out, err : text streams, optional
        The report (default stdout) and the progress lines (default stderr).

    Returns
    -------
    int
        0.

    Raises
    ------
    ConfigError
        On an unknown profile, dataset, encoder, family or preset, or an invalid size.
    """
    from crsbench_lib.hashing import file_sha256
    from crsbench_lib.runner.config import load_profile
    from crsbench_lib.runner.coverage import design_from_profile, run_audit
    from crsbench_lib.scoring.coverage import coverage_table, replicate_intervals, scoring_fingerprint, truth_table

    out = out or sys.stdout
    err = err or sys.stderr
    start = time.perf_counter()
    settings = audit_settings(args)
    profile = load_profile(args.profile)
    from crsbench_lib.standard import default_standard_path, load_standard

    standard = profile.standard_path if args.standard is None else args.standard
    if args.standard is not None:
        load_standard(args.standard).require_panel()  # a bad file fails here, in one line, before any work
    elif not load_standard(standard).panel_names:
        # A profile that names no standard (`standard: own`) is scored against one frozen from its run; every
        # replicate here needs one fixed reference instead, and the shipped default is the one with a panel.
        standard = default_standard_path()
    design = design_from_profile(
        profile, dataset=args.dataset, encoders=settings["encoders"], families=settings["families"],
        n_replicates=settings["replicates"], n_truth_draws=settings["truth_draws"], truth_test=settings["truth_test"],
        truth_corrupted=settings["truth_corrupted"], pool_factor=settings["pool_factor"],
    )

    def progress(line: str) -> None:
        print(f"[{time.perf_counter() - start:7.1f} s] {line}", file=err, flush=True)

    say: Callable[[str], None] | None = None if args.quiet else progress
    # The scored tables are cached under everything that decides them besides the predictions:
    # the scoring code, the standard's content and the bootstrap draws.
    key = "|".join([scoring_fingerprint(), file_sha256(standard), str(settings["draws"]),
                    str(settings["truth_bootstrap_draws"])])
    truth, intervals = run_audit(
        design,
        functools.partial(truth_table, standard=standard, n_draws=settings["truth_bootstrap_draws"]),
        functools.partial(replicate_intervals, standard=standard, n_draws=settings["draws"]),
        cache=args.cache, scoring_key=hashlib.sha256(key.encode()).hexdigest(), n_jobs=args.jobs, progress=say,
    )
    table = coverage_table(truth, intervals)
    if args.out is not None:
        from crsbench_lib.atomic import atomic_path

        args.out.mkdir(parents=True, exist_ok=True)
        for name, frame in (("truth", truth), ("intervals", intervals), ("coverage", table)):
            with atomic_path(args.out / f"{name}.parquet", suffix=".parquet") as tmp:
                frame.to_parquet(tmp, index=False)
    for line in report_lines({"profile": args.profile, "design": design, "draws": settings["draws"]}, truth, table):
        print(line, file=out)
    print(f"# wall time {time.perf_counter() - start:.0f} s (with --jobs {args.jobs})", file=out)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``coverage`` sub-command."""
    parser = subparsers.add_parser(
        "coverage",
        help="the self-audit: coverage of the benchmark's intervals against the simulated truth",
        description=(
            "Repeat the profile's protocol on fresh phantom draws, run the book's interval machinery on every "
            "replicate and count how often its 95 % intervals hold the simulated truth. Resumes from its cache."
        ),
    )
    add_arguments(parser)
    parser.set_defaults(handler=run_coverage)
