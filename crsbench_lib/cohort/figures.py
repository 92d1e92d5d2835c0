"""Figures of the phantom cohort for the book (matplotlib, no display needed).

- :func:`contact_sheet`: examples per class (multi-class) or per finding (multi-label);
- :func:`site_comparison`: the same findings at site A and site B;
- :func:`corruption_sheet`: one image across every corruption family and severity.

Each function returns a :class:`matplotlib.figure.Figure` and never calls
``plt.show``; the caller saves or displays it.
"""

from __future__ import annotations

import textwrap

import numpy as np
from matplotlib.figure import Figure

from crsbench_lib.cohort.corruptions import corrupt, corruption_families
from crsbench_lib.cohort.datasets import build_dataset
from crsbench_lib.data.base import ImageDataset
from crsbench_lib.errors import DataError
from crsbench_lib.results.schema import SEVERITIES

#: Images drawn to find examples when a figure builds its own dataset.
_SHEET_POOL = 512
_CELL_INCHES = 0.95


def _resolve(dataset: str | ImageDataset, seed: int, image_side: int, split: str) -> ImageDataset:
    if isinstance(dataset, ImageDataset):
        return dataset
    return build_dataset(dataset, seed=seed, sizes={split: _SHEET_POOL}, image_side=image_side)


def _show(ax, image: np.ndarray) -> None:  # noqa: ANN001 (matplotlib Axes)
    if image.ndim == 2:
        ax.imshow(image, cmap="gray", vmin=0, vmax=255, interpolation="nearest")
    else:
        ax.imshow(image, interpolation="nearest")
    ax.set_xticks([])
    ax.set_yticks([])


def _rows(ds: ImageDataset, labels: np.ndarray, n: int) -> list[tuple[str, np.ndarray]]:
    """(row title, indices of examples) per class, or per finding plus 'no finding'."""
    if ds.task == "multilabel":
        rows = [("no finding", np.flatnonzero(labels.sum(axis=1) == 0)[:n])]
        rows += [(name, np.flatnonzero(labels[:, k] == 1)[:n]) for k, name in enumerate(ds.class_names)]
        return rows
    return [(f"{k} {name}", np.flatnonzero(labels == k)[:n]) for k, name in enumerate(ds.class_names)]


def _label_text(ds: ImageDataset, label: np.ndarray) -> str:
    if ds.task == "multilabel":
        found = [ds.class_names[k][:4] for k in np.flatnonzero(label)]
        return "+".join(found) if found else "none"
    return ds.class_names[int(label)][:10]


def contact_sheet(
    dataset: str | ImageDataset,
    n_per_class: int = 10,
    seed: int = 0,
    image_side: int = 32,
    split: str = "train",
    site: str | None = None,
) -> Figure:
    """Examples of each class (or finding) of a dataset, one row per class.

    Parameters
    ----------
    dataset : str or ImageDataset
        A phantom dataset name (built with ``seed`` and ``image_side``) or a
        dataset object.
    n_per_class : int, default 10
        Examples per row.
    seed, image_side : int
        Used when ``dataset`` is a name.
    split : str, default "train"
        Split to draw examples from.
    site : str, optional
        Site (default: the training site).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    DataError
        If ``n_per_class`` is not positive or the dataset is unknown.
    """
    if n_per_class <= 0:
        raise DataError(f"contact_sheet: n_per_class must be positive, got {n_per_class}")
    ds = _resolve(dataset, seed, image_side, split)
    data = ds.split(split, site)
    rows = _rows(ds, data.labels, n_per_class)
    fig = Figure(figsize=(_CELL_INCHES * n_per_class + 1.2, _CELL_INCHES * len(rows) + 0.4))
    axes = fig.subplots(len(rows), n_per_class, squeeze=False)
    for i, (title, idx) in enumerate(rows):
        for j in range(n_per_class):
            ax = axes[i, j]
            if j < len(idx):
                _show(ax, data.images[idx[j]])
            else:
                ax.axis("off")
        axes[i, 0].set_ylabel(textwrap.fill(title, 14), fontsize=9.5)
    # A site is named only where the dataset has more than one (a user's file has one, unnamed).
    where = f", site {data.site}" if len(ds.sites) > 1 else ""
    fig.suptitle(f"{ds.name} ({ds.domain}), {split} split{where}: examples per "
                 f"{'finding' if ds.task == 'multilabel' else 'class'}", fontsize=9)
    fig.tight_layout()
    return fig


def site_comparison(
    dataset: str | ImageDataset = "cxr", n_per_site: int = 10, seed: int = 0, image_side: int = 32
) -> Figure:
    """Test images of the training site beside those of the shift site.

    One row per site; each image is titled with its findings, so that the
    reader sees the same findings through the two acquisition chains.

    Raises
    ------
    DataError
        If the dataset has a single site or ``n_per_site`` is not positive.
    """
    if n_per_site <= 0:
        raise DataError(f"site_comparison: n_per_site must be positive, got {n_per_site}")
    ds = _resolve(dataset, seed, image_side, "test")
    if ds.shift_site is None:
        raise DataError(f"site_comparison: dataset {ds.name} has a single site")
    fig = Figure(figsize=(_CELL_INCHES * n_per_site + 1.2, _CELL_INCHES * 2 + 0.8))
    axes = fig.subplots(2, n_per_site, squeeze=False)
    for i, site in enumerate(ds.sites[:2]):
        data = ds.split("test", site)
        for j in range(n_per_site):
            _show(axes[i, j], data.images[j])
            axes[i, j].set_title(_label_text(ds, data.labels[j]), fontsize=9)
        axes[i, 0].set_ylabel(f"site {site}", fontsize=9)
    fig.suptitle(f"{ds.name}: site {ds.sites[0]} (training) beside site {ds.sites[1]} (shift)", fontsize=9)
    fig.tight_layout()
    return fig


def corruption_sheet(
    dataset: str | ImageDataset,
    index: int = 0,
    seed: int = 0,
    image_side: int = 32,
    corruption_seed: int = 0,
) -> Figure:
    """One test image across every corruption family (rows) and severity (columns).

    The first column is the clean image.

    Raises
    ------
    DataError
        If ``index`` is outside the test split.
    """
    ds = _resolve(dataset, seed, image_side, "test")
    data = ds.split("test")
    if not 0 <= index < len(data):
        raise DataError(f"corruption_sheet: index {index} outside the test split (0..{len(data) - 1})")
    image = data.images[index : index + 1]
    families = corruption_families(ds.domain)
    fig = Figure(figsize=(_CELL_INCHES * (len(SEVERITIES) + 1) + 1.4, _CELL_INCHES * len(families) + 0.6))
    axes = fig.subplots(len(families), len(SEVERITIES) + 1, squeeze=False)
    for i, family in enumerate(families):
        _show(axes[i, 0], image[0])
        for j, severity in enumerate(SEVERITIES, start=1):
            _show(axes[i, j], corrupt(image, family, severity, seed=corruption_seed, domain=ds.domain)[0])
        axes[i, 0].set_ylabel(family, fontsize=7)
    axes[0, 0].set_title("clean", fontsize=8)
    for j, severity in enumerate(SEVERITIES, start=1):
        axes[0, j].set_title(f"sev {severity}", fontsize=8)
    fig.suptitle(f"{ds.name}: one test image ({_label_text(ds, data.labels[index])}) under every corruption",
                 fontsize=9)
    fig.tight_layout()
    return fig
