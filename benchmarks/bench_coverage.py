"""The benchmark audits itself: coverage of its 95 % intervals against the simulated truth.

Issue 27, item 7 (the benchmark audits itself). A thin caller of
``crsbench coverage`` (:func:`crsbench_lib.cli.coverage.run_coverage`: the
options, the audit and the printed report live there, in the installed
package). In the phantom world the truth is computable: each audited encoder's
true axes are the expectation over training draws of the default size of its
axes on the population (the mean over ``--truth-draws`` training draws on
``--truth-test`` fresh test images), its true CRS the profile's standard's CRS
of that profile. The benchmark's own protocol is then repeated
``--replicates`` times, and the package's own interval machinery is run on
each replicate. The script prints a header and one line per quantity and
interval method::

    coverage QUANTITY NOMINAL OBSERVED N

then the Monte-Carlo error of each observed share. Deterministic; resumes from
its cache (``<cache>/coverage``).

Default (no arguments): the ``benchmark`` preset (derm; encoders pixels, hog,
simclr_broad_aug_s, multitask_broad_aug_s, simclr_derm_aug_s; corruption
families gaussian_blur and black_corner; 16 replicates).

Usage: ``python benchmarks/bench_coverage.py [--replicates 20] [--encoders a,b,...] [--jobs 2]``
(the same options as ``crsbench coverage``).
"""

from __future__ import annotations

import sys

from crsbench_lib.cli import main as crsbench


def main(argv: list[str] | None = None) -> int:
    """``crsbench coverage ARGV``: the same options, report, errors (one line, exit status 2) and exit status."""
    return crsbench(["coverage", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    raise SystemExit(main())
