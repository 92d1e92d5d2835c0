"""Speed of the scoring layer (issue 2 targets, one core).

Prints:
1. 1000 paired-seed bootstrap draws plus 1000 weight perturbations on a
   15-encoder x 3-dataset x 3-seed synthetic table (target: under 2 s);
2. scoring 10,000 candidate profiles against a 15-member panel (target: under 1 s).

Each figure is the best of a few repeats (wall clock, ``time.perf_counter``).
Run: ``python benchmarks/bench_scoring.py`` (set OMP_NUM_THREADS=1 for one core).
"""

from __future__ import annotations

import os

# One core, as the targets are stated for one core (set before numpy loads).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import time  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from crsbench_lib.results.synthetic import synthetic_results  # noqa: E402
from crsbench_lib.scoring.axes import encoder_profiles, raw_axes  # noqa: E402
from crsbench_lib.scoring.bootstrap import paired_seed_bootstrap  # noqa: E402
from crsbench_lib.scoring.crs import score_profiles  # noqa: E402
from crsbench_lib.scoring.freeze import freeze_standard  # noqa: E402
from crsbench_lib.scoring.sensitivity import weight_perturbation  # noqa: E402
from crsbench_lib.standard import AXES  # noqa: E402

REPEATS = 3
TARGET_ANALYSES_S = 2.0
TARGET_CANDIDATES_S = 1.0


def best_of(func, repeats: int = REPEATS) -> float:
    """Shortest wall-clock time of ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    table = synthetic_results(n_encoders=15, seeds=(0, 1, 2))
    standard = freeze_standard(table, "bench", created="2026-11-30T00:00:00Z")
    profiles = encoder_profiles(raw_axes(table, label_fractions=standard.label_fractions))

    def analyses() -> None:
        paired_seed_bootstrap(table, standard, n_draws=1000, random_state=0)
        weight_perturbation(profiles, standard, n_draws=1000, random_state=0)

    rng = np.random.default_rng(0)
    low, high = np.array([0.5, 0.0, 0.5, 0.0]), np.array([1.0, 0.2, 1.0, 0.2])
    candidates = pd.DataFrame(
        rng.uniform(low, high, (10_000, 4)), columns=list(AXES), index=[f"cand{i:05d}" for i in range(10_000)]
    )

    boot = best_of(lambda: paired_seed_bootstrap(table, standard, n_draws=1000, random_state=0))
    weights = best_of(lambda: weight_perturbation(profiles, standard, n_draws=1000, random_state=0))
    both = best_of(analyses)
    score = best_of(lambda: score_profiles(candidates, standard))
    print(f"table: {len(table)} rows, 15 encoders x 3 datasets x 3 seeds; panel of {len(standard.panel_names)}")
    print(f"1000 bootstrap draws (from the results table):  {boot:.3f} s")
    print(f"1000 weight perturbations:                      {weights:.3f} s")
    print(f"both together:                                   {both:.3f} s  (target < {TARGET_ANALYSES_S:.0f} s)")
    print(f"10,000 candidates vs 15-member panel:            {score:.3f} s  (target < {TARGET_CANDIDATES_S:.0f} s)")


if __name__ == "__main__":
    main()
