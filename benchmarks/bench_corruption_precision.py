"""How precisely a run measures the corruption axis, and what fewer corrupted images would cost.

Reads a finished run's stored per-image predictions (``RUN_DIR/predictions``)
and, per dataset, for every frozen encoder of seed 0 (the clean probe at label
fraction 1, uncalibrated), recomputes the mean over (family, severity) of the
paired AUROC loss ``AUROC_clean(S) - AUROC_corrupted(S)`` on the images ``S``
that the run corrupted, and again on their first half. It prints

- the mean and largest absolute difference between the two (about the
  standard error of the half-size estimate, since the halves share images);
- the spread of the full-size loss between encoders (sd), the signal the
  corruption axis has to rank;
- the correlation of the two estimates across encoders.

A difference close to the spread means the corruption axis ranks encoders
within its sampling noise at half the images: halving ``corruptions.n_images``
would cut the run's largest cost (about a third of the images embedded) at
that price. Usage: ``python benchmarks/bench_corruption_precision.py RUN_DIR``.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from crsbench_lib.evaluation.metrics import macro_auroc
from crsbench_lib.results.predictions import ConditionPredictions
from crsbench_lib.runner.prediction_store import PredictionStore


def _auroc(p: ConditionPredictions, rows: np.ndarray) -> float:
    labels, probabilities = p.metric_input()
    return macro_auroc(labels[rows], probabilities[rows], str(p.meta["task"])).value


def mean_losses(predictions: list[ConditionPredictions]) -> tuple[float, float]:
    """Mean paired corruption AUROC loss on all corrupted images and on their first half."""
    def plain(p: ConditionPredictions) -> bool:
        return p.meta["calibration"] == "none" and float(p.meta["label_fraction"]) == 1.0

    clean = next(p for p in predictions if p.meta["condition"] == "clean" and plain(p))
    position = {int(i): k for k, i in enumerate(clean.image)}
    losses: dict[str, list[float]] = {"all": [], "half": []}
    for p in predictions:
        if p.meta["condition"] != "corruption" or not plain(p):
            continue
        order = np.argsort(p.image, kind="stable")
        for label, rows in (("all", order), ("half", order[: order.size // 2])):
            paired = np.array([position[int(i)] for i in p.image[rows]])
            losses[label].append(_auroc(clean, paired) - _auroc(p, rows))
    return float(np.mean(losses["all"])), float(np.mean(losses["half"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    args = parser.parse_args()
    manifest = json.loads((args.run_dir / "manifest.json").read_text())
    store = PredictionStore(args.run_dir)
    per_dataset: dict[str, dict[str, tuple[float, float]]] = defaultdict(dict)
    for entry in manifest["cells"]:
        encoder, dataset, seed, arm = entry["cell"].split("/")
        if arm == "frozen" and seed == "seed0":
            per_dataset[dataset][encoder] = mean_losses(store.load(entry["key"]))
    n_images = manifest["config"]["corruptions"]["n_images"]
    print(f"# mean corruption AUROC loss, frozen arm, seed 0: {n_images} images per condition vs the first half")
    print(f"{'dataset':8s} {'encoders':>8s} {'mean |diff|':>11s} {'max |diff|':>10s} {'sd between encoders':>20s} {'corr':>6s}")
    for dataset, values in sorted(per_dataset.items()):
        full, half = np.array(list(values.values())).T
        diff = np.abs(full - half)
        print(f"{dataset:8s} {len(full):8d} {diff.mean():11.4f} {diff.max():10.4f} {full.std(ddof=1):20.4f} "
              f"{np.corrcoef(full, half)[0, 1]:6.3f}")


if __name__ == "__main__":
    main()
