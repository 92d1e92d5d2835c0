"""The datasets of a finished run, reopened for the pages that show its images.

The run manifest (``manifest.json`` beside ``results.parquet``) records the
validated config and the profile file it came from. :func:`run_dataset_specs`
turns it back into :class:`~crsbench_lib.runner.profile.DatasetSpec` objects,
relative paths resolved against the profile's folder as the run resolved them;
:func:`picture_source` then gives what the cohort figures draw from: a phantom
dataset's name (the figures draw their own images from the generators) or the
run's own dataset read from its files. Nothing is downloaded here.

The cohort chapter calls :func:`picture_sources`, so that its pictures and
counts show the datasets of the run it describes, whatever they are.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from crsbench_lib.cohort import PHANTOM_DATASETS
from crsbench_lib.data.base import ImageDataset
from crsbench_lib.errors import DataError, NotebookError, SchemaError
from crsbench_lib.results.io import MANIFEST_FILE
from crsbench_lib.results.manifest import read_manifest
from crsbench_lib.runner.cell import load_dataset
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


def picture_source(spec: DatasetSpec) -> str | ImageDataset:
    """What the cohort figures draw a dataset's pictures from.

    Parameters
    ----------
    spec : DatasetSpec
        One dataset of a run.

    Returns
    -------
    str or ImageDataset
        The phantom's name (the figures build their own draw), or the dataset
        read from the run's files (MedMNIST ``.npz`` or CSV manifest).

    Raises
    ------
    DataError
        If the files are no longer readable (moved, deleted).
    """
    if spec.kind == "phantom":
        return spec.name
    return load_dataset(spec)


def picture_sources(run_dir: str | os.PathLike[str], datasets: Sequence[str]) -> dict[str, str | ImageDataset]:
    """What the cohort figures draw each dataset of a table from (:func:`picture_source`).

    Parameters
    ----------
    run_dir : path
        The run folder of the table.
    datasets : sequence of str
        The table's datasets (after a chapter's filters).

    Returns
    -------
    dict
        Dataset -> phantom name or :class:`ImageDataset`, in the profile's
        order. Without a run manifest (a table copied elsewhere) only the
        phantom datasets, which need no files, have pictures.
    """
    wanted = set(datasets)
    if not (Path(run_dir) / MANIFEST_FILE).is_file():
        return {name: name for name in PHANTOM_DATASETS if name in wanted}
    return {spec.name: picture_source(spec) for spec in run_dataset_specs(run_dir) if spec.name in wanted}


def pick_source(sources: Mapping[str, str | ImageDataset], name: str | None, parameter: str) -> str | ImageDataset | None:
    """The source a chapter parameter names, or the first one when it is ``None`` (``None`` if there is none).

    Raises
    ------
    NotebookError
        If ``name`` is not a dataset with pictures (the message lists the valid ones).

    Examples
    --------
    >>> pick_source({"derm": "derm", "cxr": "cxr"}, None, "corruption_dataset")
    'derm'
    """
    if name is None:
        return next(iter(sources.values()), None)
    if name not in sources:
        raise NotebookError(f"parameter '{parameter}': unknown dataset {name!r}; valid: {', '.join(sources) or 'none'}")
    return sources[name]
