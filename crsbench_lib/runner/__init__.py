"""The benchmark runner: profiles, the grid, the cell cache, executors and the LoRA arm.

- :func:`crsbench_lib.runner.config.load_profile` reads and validates a profile;
- :func:`crsbench_lib.runner.run.run_profile` computes its results table
  (resumable, serial, joblib or Dask) and writes a run manifest.
"""

from crsbench_lib.runner.config import Profile, load_profile
from crsbench_lib.runner.run import RunOutcome, run_profile

__all__ = ["Profile", "RunOutcome", "load_profile", "run_profile"]
