"""The datasets of a finished run, as the run's own :class:`~crsbench_lib.runner.profile.DatasetSpec` objects.

The run manifest (``manifest.json`` beside ``results.parquet``) records the
validated config and the profile file it came from. :func:`run_dataset_specs`
turns it back into dataset specs, relative paths resolved against the profile's
folder as the run resolved them. Nothing is downloaded here.

The cohort chapter's pictures do not come through here (the runner reaches
torch): they come from :func:`crsbench_lib.cohort.run_sources.picture_sources`,
which reads the same manifest entries torch-free.
"""

from __future__ import annotations

import os
from pathlib import Path

from crsbench_lib.errors import DataError, SchemaError
from crsbench_lib.results.io import MANIFEST_FILE
from crsbench_lib.results.manifest import read_manifest
from crsbench_lib.runner.config import validate_config
from crsbench_lib.runner.profile import DatasetSpec


def run_dataset_specs(run_dir: str | os.PathLike[str]) -> tuple[DatasetSpec, ...]:
    """The dataset specs of the run in ``run_dir``, read from its manifest.

    Parameters
    ----------
    run_dir : path
        A folder written by ``crsbench run`` (``results.parquet`` and ``manifest.json``).

    Returns
    -------
    tuple of DatasetSpec
        In profile order.

    Raises
    ------
    DataError
        If the manifest is missing or does not hold a valid config (one line naming the file).
    """
    path = Path(run_dir) / MANIFEST_FILE
    try:
        manifest = read_manifest(path)
    except SchemaError as exc:
        raise DataError(f"{path}: no readable run manifest with a 'config' ({exc})") from None
    if manifest.config is None or manifest.standard_path is None:
        raise DataError(f"{path}: no readable run manifest with a 'config' (no 'config' or 'standard.path' key)")
    # The canonical config records the standard's facts, not its file; the
    # manifest records the file, which is all validation needs unread.
    config = {**manifest.config, "standard": manifest.standard_path}
    source = manifest.config_source
    base = Path(source).parent if source else Path(run_dir)
    profile = validate_config(config, source=str(path), base=base, check_files=False, allow_download=False)
    return profile.datasets
