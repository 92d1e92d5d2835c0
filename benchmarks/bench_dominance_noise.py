"""The noise scale of noise-aware dominance, measured on a finished run (method section 9, amendment 20).

Noise-aware dominance counts each panel member with the probability that the
candidate dominates it, given each normalised axis's standard error
``noise_sd``; a standard carries that scale as a constant, like its anchors.
This script measures it the way the template's value was measured: freeze a
throwaway standard from ``RUN_DIR/results.parquet`` on the base standard's
anchors and scales (default: the template), panel = every encoder of the run
except the in-task references (as the default standards' panels), run the
two-level bootstrap of the stored predictions (``--draws``, seed 0), and take
per axis the median over the panel of each member's bootstrap standard
deviation of its normalised value
(:func:`crsbench_lib.scoring.dominance_noise.dominance_noise_sd`).

Prints the per-axis scale, the spread of the members' standard errors behind
each median, and the YAML line to put under ``dominance`` in the template when
the default protocol changes (the template's comment names the run).

Usage: ``python benchmarks/bench_dominance_noise.py RUN_DIR [--draws 1000] [--base FILE] [--jobs 2]``
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from crsbench_lib.encoders.zoo import zoo_families
from crsbench_lib.report.roles import in_task_references
from crsbench_lib.results.io import RESULTS_FILE
from crsbench_lib.results.predictions import load_prediction_arrays
from crsbench_lib.scoring.dominance_noise import dominance_noise_sd, normalised_axis_se
from crsbench_lib.scoring.freeze import freeze_standard
from crsbench_lib.scoring.two_level_bootstrap import two_level_bootstrap
from crsbench_lib.standard import AXES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--draws", type=int, default=1000, help="bootstrap draws (default 1000)")
    parser.add_argument("--base", default=None, metavar="FILE", help="standard whose anchors and scales apply (default: the template)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes of the bootstrap (default 2)")
    args = parser.parse_args()
    results = pd.read_parquet(args.run_dir / RESULTS_FILE)
    encoders = sorted(results["encoder"].astype(str).unique())
    references = in_task_references(zoo_families(), encoders)
    panel = [name for name in encoders if name not in set(references)]
    standard = freeze_standard(results, "noise-measurement", panel=panel, base=args.base, created="1970-01-01T00:00:00Z")
    start = time.perf_counter()
    result = two_level_bootstrap(load_prediction_arrays(args.run_dir), standard, n_draws=args.draws,
                                 references=references, n_jobs=args.jobs)
    seconds = time.perf_counter() - start
    spread = normalised_axis_se(result, standard).loc[panel]
    sigma = dominance_noise_sd(result, standard)
    print(f"# run {args.run_dir}, {len(panel)} panel members, references {references or 'none'}, "
          f"{args.draws} draws ({seconds:.0f} s)")
    quartiles = spread.quantile([0.25, 0.75])
    for k, axis in enumerate(AXES):
        print(f"{axis}: median SE {sigma[k]:.4f} (quartiles over the panel {quartiles.at[0.25, axis]:.4f}-"
              f"{quartiles.at[0.75, axis]:.4f})")
    values = ", ".join(f"{axis}: {value:.4f}" for axis, value in zip(AXES, np.round(sigma, 4)))
    print(f"template line:  noise_sd: {{{values}}}")


if __name__ == "__main__":
    main()
