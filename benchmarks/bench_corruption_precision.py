"""How precisely a run measures the corruption axis, and what other image layouts would give.

Reads a finished run's stored per-image predictions (``RUN_DIR/predictions``)
and, per dataset, for every frozen encoder of seed 0 (the clean probe at label
fraction 1, uncalibrated), computes the mean over (family, severity) of the
paired AUROC loss ``max(0, AUROC_clean(S_c) - AUROC_corrupted(S_c))`` on the
images ``S_c`` of each condition ``c``, under three layouts:

- ``as run``: every condition on the images the run corrupted;
- ``half, per family``: each family on one half of its images, families
  alternating between the first and the second half (from a run with the
  ``shared`` layout this is the ``per_family`` layout at half the images, on
  two blocks instead of one per family, so it shares more images than the
  real layout would);
- ``half, per condition``: each condition on one half of its images, a
  family's severities alternating between the halves (images no longer shared
  by the severities of a family);
- ``half, shared``: every condition on the first half of its images (halving
  ``corruptions.n_images`` under the ``shared`` layout).

For each it prints the sampling noise of that estimate, the sd over
``--draws`` bootstrap resamples of the test images (the same resample for
every encoder and condition, as the book's bootstrap draws them), averaged over
encoders, and the spread of the estimate between encoders (sd), the signal the
corruption axis has to rank; then the ratio noise / spread (lower is better)
and, for the half layouts, the mean absolute difference from ``as run``; and
the same ratio for the worst-family loss (the largest over families of the
mean over severities).

Usage: ``python benchmarks/bench_corruption_precision.py RUN_DIR [--draws 200]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from crsbench_lib.results.predictions import DatasetPredictions, dataset_arrays, load_run_predictions
from crsbench_lib.scoring.bootstrap import _draw_images, _macro_auroc

LAYOUTS = ("as run", "half, per family", "half, per condition", "half, shared")


def _rows(layout: str, family_position: int, severity: int, m: int) -> np.ndarray:
    """Positions, within a condition's ``m`` corrupted images, that a layout keeps."""
    half = m // 2
    if layout == "as run":
        return np.arange(m)
    if (layout == "half, per family" and family_position % 2) or (layout == "half, per condition" and severity % 2):
        return np.arange(half, 2 * half)
    return np.arange(half)


def mean_losses(data: DatasetPredictions, layout: str, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and worst-family paired corruption AUROC loss (encoders, draws) of seed 0 under ``layout``.

    The worst-family loss is the largest over families of the mean over
    severities, the robustness axis's second corruption term.
    """
    clean = data.clean[:, 0]
    families = sorted({family for family, _ in data.corruptions})
    losses = []
    for c, (family, severity) in enumerate(data.corruptions):
        rows = _rows(layout, families.index(family), severity, data.corrupted_images.shape[1])
        images = data.corrupted_images[c][rows]
        sub, labels = weights[:, images], data.labels[images]
        reference = _macro_auroc(clean[:, images], labels, data.task, sub)
        corrupted = _macro_auroc(data.corrupted_proba[:, 0, c][:, rows], labels, data.task, sub)
        losses.append(np.maximum(0.0, reference - corrupted))
    stacked = np.stack(losses)
    per_family = [stacked[[c for c, (f, _) in enumerate(data.corruptions) if f == family]].mean(axis=0)
                  for family in families]
    return stacked.mean(axis=0), np.max(per_family, axis=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--draws", type=int, default=200)
    args = parser.parse_args()
    arrays = dataset_arrays(load_run_predictions(args.run_dir), arm="frozen")
    rng = np.random.default_rng(0)
    print(f"# mean corruption AUROC loss, frozen arm, seed 0; noise = bootstrap sd over {args.draws} "
          "resamples of the test images, averaged over encoders")
    print(f"{'dataset':8s} {'layout':19s} {'images':>6s} {'noise':>7s} {'spread':>7s} {'noise/spread':>12s} "
          f"{'mean |diff|':>11s} {'worst-family noise/spread':>26s}")
    for name, data in arrays.items():
        n_test = data.labels.shape[0]
        weights = np.vstack([np.ones((1, n_test), dtype=np.int16), _draw_images(rng, n_test, args.draws)])
        full = None
        for layout in LAYOUTS:
            losses, worst = mean_losses(data, layout, weights)
            point, noise = losses[:, 0], losses[:, 1:].std(axis=1, ddof=1).mean()
            spread = point.std(ddof=1)
            worst_ratio = worst[:, 1:].std(axis=1, ddof=1).mean() / worst[:, 0].std(ddof=1)
            full = point if full is None else full
            m = data.corrupted_images.shape[1] if layout == "as run" else data.corrupted_images.shape[1] // 2
            diff = f"{'':11s}" if layout == "as run" else f"{np.abs(point - full).mean():11.4f}"
            print(f"{name:8s} {layout:19s} {m:6d} {noise:7.4f} {spread:7.4f} {noise / spread:12.3f} {diff} "
                  f"{worst_ratio:26.3f}")


if __name__ == "__main__":
    main()
