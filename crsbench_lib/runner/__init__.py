"""The benchmark runner: profiles, the grid, the cell cache, executors and the LoRA arm.

- :func:`crsbench_lib.runner.config.load_profile` reads and validates a profile
  into a :class:`crsbench_lib.runner.profile.Profile`;
- :func:`crsbench_lib.runner.run.run_profile` computes its results table
  (resumable, serial, joblib or Dask) and writes a run manifest.

The package imports none of its modules: a cell's code fingerprint covers what
importing :mod:`crsbench_lib.runner.cell` runs, and the run loop is not part of it.
"""
