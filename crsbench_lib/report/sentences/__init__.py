"""The book's interpretation sentences, one module per part or chapter of the book.

Each module writes the sentences its chapters print, from the numbers they
describe, with the words of :mod:`crsbench_lib.report.grammar`:

* :mod:`.cohort` -- the cohort, zoo and four-axes chapters;
* :mod:`.agreement` -- the agreement and sensitivity chapters;
* :mod:`.leading_tier` -- the leading tier and the bootstrap's intervals (its lessons and
  exercises in :mod:`.leading_tier_teaching`);
* :mod:`.insertion` -- the insertion and registry chapters;
* :mod:`.stress` -- the calibration chapter;
* :mod:`.corruption` -- the corruption chapter (within- and between-cell correlations);
* :mod:`.coverage` -- the benchmark's self-audit (``benchmarks/bench_coverage.py``);
* :mod:`.lodo` and :mod:`.transfer` -- beyond the screening benchmark;
* :mod:`.selection_gate` -- the selection gate.

and :mod:`.lessons` holds what every chapter's "Is this real?" section shares: a
lesson of any benchmark of this design or of this build's world (each chapter's
builder lives in the chapter's module and decides from its numbers).
"""
