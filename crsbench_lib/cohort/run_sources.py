"""The datasets of a run as image sources: one opener, and a finished run reopened for its pictures.

:func:`open_dataset` is the one place that turns a dataset's kind and settings
into an :class:`~crsbench_lib.data.base.ImageDataset` (a phantom is drawn by
the generators, a MedMNIST ``.npz`` or a CSV manifest is read from its files);
the runner's :func:`crsbench_lib.runner.cell.load_dataset` calls it with a
validated profile's options.

The cohort chapter calls :func:`picture_sources`, so that its pictures and
counts show the datasets of the run it describes, whatever they are: it reads
the run manifest (``manifest.json`` beside ``results.parquet``), whose
``config.datasets`` entries are the validated, default-filled entries of the
profile, and resolves their relative paths against the profile's folder, as the
run did. Nothing here needs torch, and nothing is downloaded.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from crsbench_lib.data.base import ImageDataset
from crsbench_lib.errors import DataError, NotebookError, SchemaError
from crsbench_lib.paths import resolve_against
from crsbench_lib.results.io import MANIFEST_FILE
from crsbench_lib.results.manifest import RunManifest, read_manifest


def open_dataset(kind: str, name: str, options: Mapping[str, Any]) -> ImageDataset:
    """The dataset of one profile entry, drawn or read.

    Parameters
    ----------
    kind : {"phantom", "medmnist", "manifest"}
        Where the images come from.
    name : str
        The dataset's name in the results table.
    options : mapping
        The kind's settings, default-filled, paths absolute (see
        :class:`~crsbench_lib.runner.profile.DatasetSpec`): ``sizes``,
        ``image_side``, ``data_seed`` (phantom); ``flag``, ``root``, ``size``,
        ``download``, ``domain``, ``calibration_size`` (MedMNIST); ``csv``,
        ``label_columns``, ``task``, ``image_side``, ``colour``, ``domain``
        (manifest).

    Returns
    -------
    ImageDataset

    Raises
    ------
    DataError
        If the data cannot be read (missing files, malformed arrays).
    """
    # Each kind's reader is imported where it is used, so that a run cell's code
    # fingerprint (runner.cell.cell_modules) holds only its own kind's reader.
    if kind == "phantom":
        from crsbench_lib.cohort.datasets import build_dataset

        return build_dataset(name, seed=options["data_seed"], sizes=options["sizes"],
                             image_side=options["image_side"], shift_parts=options.get("shift_parts"),
                             cues=options.get("cues", True))
    if kind == "medmnist":
        from crsbench_lib.data.medmnist import load_medmnist

        dataset = load_medmnist(options["flag"], Path(options["root"]), size=options["size"],
                                download=options["download"], domain=options["domain"],
                                calibration_size=options["calibration_size"])
        dataset.name = name
        return dataset
    from crsbench_lib.data.manifest import load_manifest

    return load_manifest(Path(options["csv"]), label_columns=options["label_columns"], task=options["task"],
                         image_side=options["image_side"], colour=options["colour"], name=name,
                         domain=options["domain"])


def _read_options(entry: Mapping[str, Any], base: Path) -> dict[str, Any]:
    """A written MedMNIST or manifest entry's options, its path resolved against ``base``, no download."""
    if entry["kind"] == "medmnist":
        return {"flag": entry["flag"], "root": resolve_against(str(entry["root"]), base), "size": int(entry["size"]),
                "download": False, "domain": entry.get("domain"), "calibration_size": entry.get("calibration_size")}
    return {"csv": resolve_against(str(entry["csv"]), base), "label_columns": entry.get("label_columns"),
            "task": entry.get("task"), "image_side": int(entry["image_side"]), "colour": entry["colour"],
            "domain": entry["domain"]}


def picture_source(entry: Mapping[str, Any], base: Path) -> str | ImageDataset:
    """What the cohort figures draw one dataset of a run from.

    Parameters
    ----------
    entry : mapping
        The dataset's entry in the run manifest's ``config.datasets``.
    base : pathlib.Path
        The folder its relative paths resolve against (the profile's).

    Returns
    -------
    str or ImageDataset
        The phantom's name (the figures build their own draw), or the dataset
        read from the run's files (MedMNIST ``.npz`` or CSV manifest).

    Raises
    ------
    DataError
        If the files are no longer readable (moved, deleted), or the entry lacks a key.
    """
    if entry["kind"] == "phantom":
        return str(entry["name"])
    try:
        options = _read_options(entry, base)
    except KeyError as exc:
        raise DataError(f"run manifest: dataset {entry['name']!r} has no key {exc.args[0]!r}") from None
    return open_dataset(str(entry["kind"]), str(entry["name"]), options)


def _run_manifest(run_dir: Path) -> RunManifest:
    path = run_dir / MANIFEST_FILE
    try:
        manifest = read_manifest(path)
    except SchemaError as exc:
        raise DataError(f"{path}: no readable run manifest with a 'config' ({exc})") from None
    if manifest.config is None:
        raise DataError(f"{path}: no readable run manifest with a 'config' (no 'config' key)")
    return manifest


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

    Raises
    ------
    DataError
        If the manifest is unreadable or a dataset's files are.
    """
    from crsbench_lib.cohort.datasets import PHANTOM_DATASETS

    wanted = set(datasets)
    folder = Path(run_dir)
    if not (folder / MANIFEST_FILE).is_file():
        return {name: name for name in PHANTOM_DATASETS if name in wanted}
    manifest = _run_manifest(folder)
    source = manifest.config_source
    base = Path(source).parent if source else folder
    return {str(e["name"]): picture_source(e, base) for e in manifest.datasets if e["name"] in wanted}


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
