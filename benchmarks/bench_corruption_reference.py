"""Corruption severities against MedMNIST-C: the parameters side by side, and the reference CNN's loss.

MedMNIST-C (Di Salvo, Doerrich & Ledig, 2024; repository
francescodisalvo05/medmnistc-api, ``medmnistc/corruptions/registry.py``)
corrupts MedMNIST+ test images at 224 px and reports, for an end-to-end CNN
trained on the clean images, the balanced-accuracy drop from clean to the mean
over corruptions x 5 severities: 0.08-0.22 across 12 datasets (median 0.16;
``medmnistc/utils/baselines.py``). This script prints, for the families the
two designs share,

1. each severity's parameter here (at the phantoms' 32 px) beside MedMNIST-C's
   (at 224 px) on one scale: additive noise and blur in units of a 32-px
   pixel (MedMNIST-C's noise sd divided by 7, since averaging 7 x 7 pixels of
   224 into one of 32 divides white noise's sd by 7; its blur sigma divided by
   7), brightness and contrast as factors, JPEG as quality, pixelation as the
   kept fraction of the side;
2. the same kind of reference: a small CNN trained end to end on the clean
   training split (``benchmarks/bench_world.py``'s), its clean balanced
   accuracy and its mean balanced-accuracy drop over every family of the
   domain x severities 1-5 (and the mean AUROC drop, the metric the book's
   robustness axis uses), per dataset.

The printed comparison is a measurement, not a target: the severities were set
from physical scales (``crsbench_lib/cohort/corruptions.py``), and this says
where they sit against MedMNIST-C's and why they differ.

Usage: ``python benchmarks/bench_corruption_reference.py [--epochs 12] [--train 2000] [--test 1000]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_world import cnn_scores, train_cnn  # noqa: E402

from crsbench_lib.cohort import PHANTOM_DATASETS, build_dataset, corrupt, corruption_families  # noqa: E402
from crsbench_lib.cohort.corruptions import SEVERITY_TABLE  # noqa: E402
from crsbench_lib.metrics.auroc import macro_auroc  # noqa: E402

#: MedMNIST-C's severity parameters (registry.py) for the datasets nearest each phantom, in its own units.
MEDMNIST_C: dict[str, dict[str, tuple[float, ...]]] = {
    "dermamnist": {
        "gaussian_noise (sd, 224 px)": (0.04, 0.08, 0.12, 0.18, 0.26),
        "brightness_down (factor)": (0.9, 0.8, 0.7, 0.6, 0.5),
        "brightness_up (factor)": (1.1, 1.2, 1.3, 1.4, 1.5),
        "contrast_down (factor)": (0.8, 0.7, 0.6, 0.5, 0.4),
        "jpeg (quality)": (30, 20, 15, 10, 7),
        "pixelate (kept side)": (0.7, 0.5, 0.4, 0.3, 0.25),
    },
    "retinamnist": {
        "gaussian_noise (sd, 224 px)": (0.04, 0.08, 0.12, 0.16, 0.20),
        "brightness_down (factor)": (0.9, 0.8, 0.7, 0.6, 0.5),
        "contrast_down (factor)": (0.9, 0.8, 0.7, 0.6, 0.4),
        "jpeg (quality)": (30, 25, 20, 10, 5),
        "pixelate (kept side)": (0.8, 0.6, 0.5, 0.4, 0.35),
    },
    "chestmnist": {
        "gaussian_noise (sd, 224 px)": (0.04, 0.08, 0.12, 0.18, 0.26),
        # torchvision's default sigma for kernel sizes 3-11: 0.3 * ((k - 1) / 2 - 1) + 0.8
        "gaussian_blur (sigma, 224 px)": (0.8, 1.1, 1.4, 1.7, 2.0),
        "brightness_down (factor)": (0.9, 0.8, 0.7, 0.6, 0.5),
        "contrast_down (factor)": (0.9, 0.8, 0.7, 0.6, 0.4),
        "jpeg (quality)": (50, 30, 15, 10, 7),
        "pixelate (kept side)": (0.3, 0.25, 0.2, 0.15, 0.1),
    },
}
NEAREST = {"derm": "dermamnist", "fundus": "retinamnist", "cxr": "chestmnist"}
#: 224-px pixels per 32-px pixel along a side.
SCALE = 224 / 32
#: MedMNIST-C's reference figures (baselines.py, as quoted in the book's sources): clean -> mean over corruptions.
MEDMNIST_C_DROP = "balanced-accuracy drop 0.08-0.22 over 12 datasets (median 0.16; DermaMNIST 0.60 -> 0.39)"


def ours(domain: str) -> dict[str, tuple[float, ...]]:
    """This project's parameters on the shared scale (see the module docstring)."""
    table = SEVERITY_TABLE[domain]
    noise = table["gaussian_noise"]
    sd = noise["read"] if any(noise["read"]) else noise["shot"]
    out = {
        "gaussian_noise (sd, 32 px)": tuple(sd),
        "brightness_down (factor)": tuple(round(2.0 ** s, 3) for s in table["brightness_down"]["stops"]) if any(
            table["brightness_down"]["stops"]) else tuple(1 + v for v in table["brightness_down"]["level"]),
        "contrast_down (factor)": tuple(table["contrast"]["factor"]),
        "jpeg (quality)": tuple(table["jpeg"]["quality"]),
        "pixelate (kept side)": tuple(table["pixelate"]["fraction"]),
        "gaussian_blur (sigma, 32 px)": tuple(table["gaussian_blur"]["sigma_px"]),
    }
    return out


def balanced_accuracy(labels: np.ndarray, scores: np.ndarray, task: str) -> float:
    """Mean recall over classes (multiclass argmax), or the mean over labels at threshold 0.5 (multilabel)."""
    if task == "multilabel":
        values = []
        for k in range(labels.shape[1]):
            y, p = labels[:, k].astype(bool), scores[:, k] >= 0.5
            if y.all() or not y.any():
                continue
            values.append(0.5 * (p[y].mean() + (~p[~y]).mean()))
        return float(np.mean(values))
    predicted = scores.argmax(axis=1)
    return float(np.mean([(predicted[labels == k] == k).mean() for k in np.unique(labels)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--train", type=int, default=2000)
    parser.add_argument("--test", type=int, default=1000)
    parser.add_argument("--datasets", nargs="*", default=list(PHANTOM_DATASETS))
    args = parser.parse_args()
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    print(f"cpu count {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}")
    print(f"MedMNIST-C reference CNN: {MEDMNIST_C_DROP}\n")
    for name in args.datasets:
        ds = build_dataset(name, seed=0, sizes={"train": args.train, "val": 8, "test": args.test})
        print(f"== {name} ({ds.domain}) against {NEAREST[name]}")
        theirs = MEDMNIST_C[NEAREST[name]]
        for key, values in ours(ds.domain).items():
            family = key.split(" ")[0]
            match = next((v for k, v in theirs.items() if k.split(" ")[0] == family), None)
            shown = ""
            if match is not None:
                converted = tuple(round(v / SCALE, 3) for v in match) if "224 px" in next(
                    k for k in theirs if k.split(" ")[0] == family) else match
                shown = f"   MedMNIST-C {converted}"
            print(f"  {key:32s} here {values}{shown}")
        start = time.perf_counter()
        train, test = ds.split("train"), ds.split("test")
        model = train_cnn(train.images, train.labels, ds.task, ds.n_classes, args.epochs)
        clean_scores = cnn_scores(model, test.images, ds.task)
        clean_bacc = balanced_accuracy(test.labels, clean_scores, ds.task)
        clean_auroc = macro_auroc(test.labels, clean_scores, ds.task).value
        bacc_drops, auroc_drops, per_family = [], [], {}
        for family in corruption_families(ds.domain):
            for severity in (1, 2, 3, 4, 5):
                scores = cnn_scores(model, corrupt(test.images, family, severity, seed=0, domain=ds.domain), ds.task)
                drop = clean_bacc - balanced_accuracy(test.labels, scores, ds.task)
                bacc_drops.append(drop)
                auroc_drops.append(clean_auroc - macro_auroc(test.labels, scores, ds.task).value)
                per_family.setdefault(family, []).append(drop)
        worst = max(per_family, key=lambda f: np.mean(per_family[f]))
        print(f"  reference CNN: clean balanced accuracy {clean_bacc:.3f}, mean drop over "
              f"{len(per_family)} families x 5 severities {np.mean(bacc_drops):.3f} (severity 5: "
              f"{np.mean([d[4] for d in per_family.values()]):.3f}); mean AUROC drop {np.mean(auroc_drops):.3f}; "
              f"worst family {worst} ({np.mean(per_family[worst]):.3f}) ({time.perf_counter() - start:.0f} s)\n",
              flush=True)


if __name__ == "__main__":
    main()
