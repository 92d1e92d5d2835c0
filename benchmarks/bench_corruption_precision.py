"""How precisely a run measures the corruption axis, and what other image layouts would give.

Reads a finished run's stored per-image predictions (``RUN_DIR/predictions``)
and, per dataset, for every frozen encoder of seed 0 (the clean probe at label
fraction 1, uncalibrated), computes the two corruption terms of the robustness
axis from the paired loss ``max(0, AUROC_clean(S_c) - AUROC_corrupted(S_c))``
on the images ``S_c`` of each condition ``c``: the mean over conditions, and the
worst family (the largest over families of the mean over severities). It does
so under four layouts of the run's corrupted images:

- ``as run``: every condition on the images the run corrupted;
- ``half, alt. families``: each condition on one half of its images, families
  alternating between the first and second half (on a ``shared`` run this is
  a per-family layout at half the images);
- ``half, alt. severities``: the same, a family's severities alternating (on
  a ``per_family`` run, a per-condition layout at half the images);
- ``half, shared``: every condition on the first half of its images.

Per layout it prints

- ``noise``: the sd of the mean loss over ``--draws`` bootstrap resamples of
  the test images (one resample for every encoder and condition, as the
  book's bootstrap draws them), averaged over encoders; ``spread``: its sd
  between encoders (the signal to rank);
- ``rank tau``: the mean Kendall tau-b between each draw's ranking of the
  encoders by the mean loss and the full-sample ranking (1: every draw ranks
  them alike), and the same for the worst-family loss;
- ``clip``: the mean over encoders of the full-sample mean loss minus the same
  mean without the clipping at zero: what the clipping adds. For a condition
  whose true loss is near zero this is an upward bias, and it grows as the
  image sets shrink (about 0.4 times the sd of the paired difference);
- ``mean |diff|``: for the half layouts, the mean absolute difference from
  ``as run``.

Usage: ``python benchmarks/bench_corruption_precision.py RUN_DIR [--draws 200]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

from crsbench_lib.metrics.auroc import weighted_macro_auroc
from crsbench_lib.results.predictions import DatasetPredictions, dataset_arrays, load_run_predictions
from crsbench_lib.scoring.two_level_bootstrap import _draw_images

LAYOUTS = ("as run", "half, alt. families", "half, alt. severities", "half, shared")


def _rows(layout: str, family_position: int, severity: int, m: int) -> np.ndarray:
    """Positions, within a condition's ``m`` corrupted images, that a layout keeps."""
    half = m // 2
    if layout == "as run":
        return np.arange(m)
    if (layout == "half, alt. families" and family_position % 2) or (layout == "half, alt. severities" and severity % 2):
        return np.arange(half, 2 * half)
    return np.arange(half)


def mean_losses(data: DatasetPredictions, layout: str, weights: np.ndarray,
                clip: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Mean and worst-family paired corruption AUROC loss (encoders, draws) of seed 0 under ``layout``.

    The worst-family loss is the largest over families of the mean over
    severities, the robustness axis's second corruption term. ``clip=False``
    leaves out the clipping of each condition's loss at zero.
    """
    clean = data.clean[:, 0]
    families = sorted({family for family, _ in data.corruptions})
    losses = []
    for c, (family, severity) in enumerate(data.corruptions):
        rows = _rows(layout, families.index(family), severity, data.corrupted_images.shape[1])
        images = data.corrupted_images[c][rows]
        sub, labels = weights[:, images], data.labels[images]
        reference = weighted_macro_auroc(clean[:, images], labels, data.task, sub)
        corrupted = weighted_macro_auroc(data.corrupted_proba[:, 0, c][:, rows], labels, data.task, sub)
        losses.append(np.maximum(0.0, reference - corrupted) if clip else reference - corrupted)
    stacked = np.stack(losses)
    per_family = [stacked[[c for c, (f, _) in enumerate(data.corruptions) if f == family]].mean(axis=0)
                  for family in families]
    return stacked.mean(axis=0), np.max(per_family, axis=0)


def rank_stability(values: np.ndarray) -> float:
    """Mean Kendall tau-b between each draw's ranking (columns 1..) and the full-sample one (column 0)."""
    return float(np.mean([kendalltau(values[:, 0], values[:, b]).statistic for b in range(1, values.shape[1])]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--draws", type=int, default=200)
    args = parser.parse_args()
    arrays = dataset_arrays(load_run_predictions(args.run_dir), arm="frozen")
    rng = np.random.default_rng(0)
    print(f"# corruption terms of the robustness axis, frozen arm, seed 0, {args.draws} bootstrap resamples "
          "of the test images")
    print(f"{'dataset':8s} {'layout':22s} {'images':>6s} {'noise':>7s} {'spread':>7s} {'rank tau':>8s} "
          f"{'clip':>7s} {'mean |diff|':>11s} {'worst: noise':>12s} {'rank tau':>8s}")
    for name, data in arrays.items():
        n_test = data.labels.shape[0]
        weights = np.vstack([np.ones((1, n_test), dtype=np.int16), _draw_images(rng, n_test, args.draws)])
        full = None
        for layout in LAYOUTS:
            losses, worst = mean_losses(data, layout, weights)
            unclipped, _ = mean_losses(data, layout, weights[:1], clip=False)
            point = losses[:, 0]
            full = point if full is None else full
            m = data.corrupted_images.shape[1] if layout == "as run" else data.corrupted_images.shape[1] // 2
            diff = f"{'':11s}" if layout == "as run" else f"{np.abs(point - full).mean():11.4f}"
            print(f"{name:8s} {layout:22s} {m:6d} {losses[:, 1:].std(axis=1, ddof=1).mean():7.4f} "
                  f"{point.std(ddof=1):7.4f} {rank_stability(losses):8.3f} {(point - unclipped[:, 0]).mean():7.4f} "
                  f"{diff} {worst[:, 1:].std(axis=1, ddof=1).mean():12.4f} {rank_stability(worst):8.3f}")


if __name__ == "__main__":
    main()
