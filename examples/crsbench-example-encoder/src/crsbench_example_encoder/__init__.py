"""A minimal CRS-Bench plug-in encoder: per-channel mean and spread on a grid of cells.

Registered in ``pyproject.toml`` under the entry-point group ``crsbench.encoders``
as ``example_colour_grid``; CRS-Bench calls :func:`build` with the run's working
image side and any options, and uses what it returns like any built-in encoder.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from crsbench_lib.encoders.base import Encoder


class ColourGrid(Encoder):
    """Mean and standard deviation of each RGB channel on a ``grid x grid`` partition of the image.

    Parameters
    ----------
    image_side : int
        Working side of the run (the descriptor does not depend on it).
    grid : int
        Cells per side (4: 16 cells, 96 values).

    Examples
    --------
    >>> encoder = ColourGrid(grid=2)
    >>> encoder.embed(np.full((3, 8, 8, 3), 255, np.uint8))[0].tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    """

    name = "example_colour_grid"
    family = "plugin"

    def __init__(self, image_side: int = 32, grid: int = 4) -> None:
        self.image_side = int(image_side)
        self.grid = int(grid)
        self.embedding_dim = 2 * 3 * self.grid * self.grid

    @property
    def weights_hash(self) -> str:
        # Everything that determines the embedding: the descriptor, its version and its one setting.
        facts = {"encoder": self.name, "version": 1, "grid": self.grid}
        return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()

    def preprocess(self, images: np.ndarray) -> np.ndarray:
        x = np.asarray(images, dtype=np.float32) / 255.0
        return np.repeat(x[..., None], 3, axis=-1) if x.ndim == 3 else x

    def embed(self, images: np.ndarray) -> np.ndarray:
        x = self.preprocess(images)
        n, h, w, _ = x.shape
        rows, cols = np.array_split(np.arange(h), self.grid), np.array_split(np.arange(w), self.grid)
        cells = [x[:, r[0]:r[-1] + 1, c[0]:c[-1] + 1, :].reshape(n, -1, 3) for r in rows for c in cols]
        means = np.concatenate([cell.mean(axis=1) for cell in cells], axis=1)
        spreads = np.concatenate([cell.std(axis=1) for cell in cells], axis=1)
        return np.concatenate([means, spreads], axis=1).astype(np.float32)


def build(image_side: int = 32, **options: object) -> ColourGrid:
    """The entry point: ``factory(image_side, **options) -> Encoder``.

    Options a run passes to torch encoders only (``device``, ``amp``,
    ``batch_size``) are accepted and ignored: this descriptor runs in numpy.
    """
    grid = options.pop("grid", 4)
    return ColourGrid(image_side=image_side, grid=int(grid))  # type: ignore[arg-type]
