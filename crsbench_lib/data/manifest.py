"""Reader of a CSV manifest describing any image folder (HAM10000, APTOS, CheXpert...).

One row per image. Columns:

- ``path``: image file, absolute or relative to the manifest's folder;
- ``split``: ``train``, ``val`` or ``test``;
- label column(s): one column of class labels (integers or names) for a
  binary/multi-class task, or several 0/1 columns for a multi-label task
  (default: every column that is not path/split/site);
- ``site`` (optional): acquisition site; the site of the first training row is
  the training site, other sites are shift sites.

Images are read with Pillow, converted to RGB or grey (``colour="auto"`` takes
the mode of the first image: grey for ``L``/``I``/``F``/``1`` modes, RGB
otherwise), and resized to ``image_side x image_side`` with bilinear
resampling. Every file named by the manifest must exist when it is loaded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image, UnidentifiedImageError

from crsbench_lib.data.base import SPLITS, ImageDataset, ImageSplit, TaskType
from crsbench_lib.errors import DataError

GREY_MODES = frozenset({"L", "I", "I;16", "F", "1", "LA"})
RESERVED = ("path", "split", "site")


def _csv_row(index: int) -> int:
    """Line number in the CSV of a 0-based data row (line 1 is the header)."""
    return index + 2


def read_image(path: Path, image_side: int, grey: bool, where: str = "") -> np.ndarray:
    """Read one image with Pillow: grey ``(side, side)`` or RGB ``(side, side, 3)`` ``uint8``."""
    try:
        with Image.open(path) as img:
            img = img.convert("L" if grey else "RGB")
            if img.size != (image_side, image_side):
                img = img.resize((image_side, image_side), resample=Image.Resampling.BILINEAR)
            return np.asarray(img, dtype=np.uint8)
    except (OSError, UnidentifiedImageError) as exc:
        raise DataError(f"{path}{where}: cannot read image ({exc})") from exc


def load_manifest(
    csv_path: Path,
    label_columns: Sequence[str] | None = None,
    task: TaskType | None = None,
    image_side: int = 32,
    colour: str = "auto",
    name: str | None = None,
    domain: str = "unknown",
    calibration_size: int | None = None,
) -> ImageDataset:
    """Describe an image folder by a CSV manifest as an :class:`ImageDataset`.

    Parameters
    ----------
    csv_path : pathlib.Path
        The manifest.
    label_columns : sequence of str, optional
        Label column(s) (default: all columns except path/split/site).
    task : {"binary", "multiclass", "multilabel"}, optional
        Default: multi-label with several label columns; else binary with two
        distinct labels, multi-class otherwise.
    image_side : int
        Side every image is resized to.
    colour : {"auto", "rgb", "grey"}
        Colour handling (see the module docstring).
    name : str, optional
        Dataset name (default: the manifest's file stem).
    domain : str
        Domain label carried in the results.
    calibration_size : int, optional
        Calibration-split size of every seed's resample (default: the size of
        the manifest's validation split).

    Returns
    -------
    ImageDataset
        Images are read when a split is first requested. Rows marked ``test``
        form the test split of every seed; seed ``s``'s train, validation and
        calibration splits are a stratified resample of the rows marked
        ``train`` and ``val`` (:meth:`ImageDataset.development`).

    Raises
    ------
    DataError
        Unreadable CSV, missing columns, unknown split values, non-0/1
        multi-label values, files that do not exist (naming the CSV line), or
        an unreadable image.
    """
    csv_path = Path(csv_path)
    if not csv_path.exists():
        raise DataError(f"{csv_path}: manifest not found")
    try:
        raw_bytes = csv_path.read_bytes()
        table = pd.read_csv(csv_path, dtype={"path": str, "split": str, "site": str}, keep_default_na=False)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise DataError(f"{csv_path}: cannot read the manifest CSV ({exc})") from exc
    for column in ("path", "split"):
        if column not in table.columns:
            raise DataError(f"{csv_path}: missing column {column!r} (has {', '.join(map(str, table.columns))})")
    if len(table) == 0:
        raise DataError(f"{csv_path}: the manifest has no rows")
    if colour not in ("auto", "rgb", "grey"):
        raise DataError(f"colour must be auto, rgb or grey, got {colour!r}")
    if image_side < 8:
        raise DataError(f"image_side must be >= 8, got {image_side}")
    labels_cols = list(label_columns) if label_columns is not None else [c for c in table.columns if c not in RESERVED]
    if not labels_cols:
        raise DataError(f"{csv_path}: no label column (columns other than {', '.join(RESERVED)})")
    for column in labels_cols:
        if column not in table.columns:
            raise DataError(f"{csv_path}: missing label column {column!r}")
    bad_split = ~table["split"].isin(SPLITS)
    if bad_split.any():
        i = int(np.flatnonzero(bad_split.to_numpy())[0])
        raise DataError(f"{csv_path}: line {_csv_row(i)}: split {table['split'].iloc[i]!r} is not one of {', '.join(SPLITS)}")

    folder = csv_path.parent
    paths = [Path(p) if Path(p).is_absolute() else folder / p for p in table["path"]]
    missing = [i for i, p in enumerate(paths) if not p.is_file()]
    if missing:
        i = missing[0]
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise DataError(f"{csv_path}: line {_csv_row(i)}: image file {paths[i]} does not exist{more}")

    if task is None:
        task = "multilabel" if len(labels_cols) > 1 else ("binary" if table[labels_cols[0]].nunique() <= 2 else "multiclass")
    if task == "multilabel":
        values = table[labels_cols]
        try:
            matrix = values.to_numpy().astype(np.int64)
        except (TypeError, ValueError) as exc:
            raise DataError(f"{csv_path}: multi-label columns must hold 0/1 ({exc})") from exc
        bad = ~np.isin(matrix, (0, 1)).all(axis=1)
        if bad.any():
            raise DataError(f"{csv_path}: line {_csv_row(int(np.flatnonzero(bad)[0]))}: multi-label values must be 0 or 1")
        labels = matrix.astype(np.uint8)
        class_names = tuple(labels_cols)
    else:
        if len(labels_cols) != 1:
            raise DataError(f"{csv_path}: a {task} task takes one label column, got {labels_cols}")
        column = table[labels_cols[0]]
        if pd.api.types.is_integer_dtype(column):
            classes = np.unique(column.to_numpy())
            names = [str(c) for c in classes]
        else:
            classes = np.array(sorted(column.astype(str).unique()))
            names = list(classes)
            column = column.astype(str)
        lookup = {c: k for k, c in enumerate(classes.tolist())}
        labels = np.array([lookup[v] for v in column.tolist()], dtype=np.int64)
        class_names = tuple(names)
        if task == "binary" and len(class_names) > 2:
            raise DataError(f"{csv_path}: binary task but column {labels_cols[0]!r} has {len(class_names)} labels")

    has_site = "site" in table.columns
    sites_col = table["site"].astype(str).to_numpy() if has_site else np.full(len(table), "A")
    train_sites = [s for s, sp in zip(sites_col, table["split"]) if sp == "train"]
    ordered = list(dict.fromkeys(train_sites + list(sites_col)))
    grey = colour == "grey"
    if colour == "auto":
        with Image.open(paths[0]) as first:
            grey = first.mode in GREY_MODES
    splits_col = table["split"].to_numpy()

    digest = hashlib.sha256(raw_bytes)
    digest.update(f"|side={image_side}|grey={grey}|task={task}|labels={labels_cols}|".encode())
    for p in paths:
        digest.update(f"{p.name}:{p.stat().st_size};".encode())

    def loader(split: str, site: str) -> ImageSplit:
        rows = np.flatnonzero((splits_col == split) & (sites_col == site))
        if len(rows) == 0:
            raise DataError(f"{csv_path}: no rows for split {split!r} at site {site!r}")
        images = np.stack([read_image(paths[i], image_side, grey, f" (line {_csv_row(int(i))})") for i in rows])
        return ImageSplit(images=images, labels=labels[rows], split=split, site=site)

    return ImageDataset(
        name=name or csv_path.stem,
        domain=domain,
        task=task,
        class_names=class_names,
        version=digest.hexdigest(),
        loader=loader,
        sites=tuple(ordered),
        calibration_size=calibration_size,
    )
