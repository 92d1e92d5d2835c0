"""Speed of the two-level paired bootstrap on a default-sized predictions store.

Workload (synthetic predictions of the default profile's shape, method
section 9, amendment 4): 15 encoders (the default zoo's names, so the shipped
standard's panel applies and every encoder is scored without its own entry),
3 datasets x 3 seeds x 2,000 test images; per (encoder, dataset, seed) the
clean predictions, 4 label fractions, every corruption family of the domain at
5 severities, each condition on its own block of 125 test images (the
per-condition layout), and a 2,000-image site-B test on the
radiology dataset. Classes: 4 (derm), 5 (fundus), 4 labels (cxr, multi-label).

Prints the seconds of ``two_level_bootstrap`` for ``--draws`` draws (target: at
most 30 s for 1,000 draws on 2 cores).

Usage: ``python benchmarks/bench_bootstrap.py [--draws 1000] [--test-images 2000]``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from crsbench_lib.results.predictions import DatasetPredictions
from crsbench_lib.scoring.two_level_bootstrap import two_level_bootstrap
from crsbench_lib.standard import as_standard

DOMAINS = {  # dataset: (task, classes, corruption families)
    "derm": ("multiclass", 4, 9),
    "fundus": ("multiclass", 5, 9),
    "cxr": ("multilabel", 4, 10),
}
FRACTIONS = (0.25, 0.1, 0.05, 0.01)
SEVERITIES = (1, 2, 3, 4, 5)
CORRUPTED = 125  # test images per corruption condition, each its own block


def _labels(rng: np.random.Generator, task: str, k: int, n: int) -> np.ndarray:
    if task == "multilabel":
        return (rng.random((n, k)) < 0.2).astype(np.uint8)
    return rng.integers(0, k, n)


def _proba(rng: np.random.Generator, labels: np.ndarray, task: str, k: int, strength: np.ndarray) -> np.ndarray:
    """float32 (E, S, n, k) probabilities whose informativeness grows with ``strength`` (E,)."""
    n = labels.shape[0]
    target = labels.astype(np.float64) if task == "multilabel" else np.eye(k)[labels]
    logits = strength[:, None, None, None] * target[None, None] + rng.normal(size=(strength.size, 3, n, k))
    if task == "multilabel":
        return (1.0 / (1.0 + np.exp(-(logits - 1.5)))).astype(np.float32)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


def synthetic_predictions(encoders: tuple[str, ...], n_test: int, seed: int = 0) -> dict[str, DatasetPredictions]:
    rng = np.random.default_rng(seed)
    strength = np.linspace(0.5, 2.5, len(encoders))
    out = {}
    for name, (task, k, n_families) in DOMAINS.items():
        labels = _labels(rng, task, k, n_test)
        corruptions = tuple((f"family{f}", s) for f in range(n_families) for s in SEVERITIES)
        blocks = np.stack([np.sort((c * CORRUPTED + np.arange(CORRUPTED)) % n_test)
                           for c in range(len(corruptions))]).astype(np.int32)
        corrupted = np.stack([_proba(rng, labels[block], task, k, strength * (1 - 0.08 * s))
                              for block, (_, s) in zip(blocks, corruptions)], axis=2)
        shift_labels = _labels(rng, task, k, n_test) if name == "cxr" else None
        out[name] = DatasetPredictions(
            dataset=name,
            task=task,
            encoders=encoders,
            seeds=(0, 1, 2),
            labels=labels,
            clean=_proba(rng, labels, task, k, strength),
            fractions=FRACTIONS,
            fraction_proba=np.stack([_proba(rng, labels, task, k, strength * (1 - f)) for f in (0.1, 0.2, 0.3, 0.5)],
                                    axis=2),
            corruptions=corruptions,
            corrupted_images=blocks,
            corrupted_proba=corrupted,
            shift_labels=shift_labels,
            shift_proba=None if shift_labels is None else _proba(rng, shift_labels, task, k, strength * 0.7),
            ece_bins=15,
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--test-images", type=int, default=2000)
    args = parser.parse_args()
    standard = as_standard(None)
    predictions = synthetic_predictions(tuple(sorted(standard.panel_names)), args.test_images)
    start = time.perf_counter()
    result = two_level_bootstrap(predictions, standard, n_draws=args.draws, random_state=0)
    seconds = time.perf_counter() - start
    print(f"two_level_bootstrap: {args.draws} draws, {len(result.encoders)} encoders, 3 datasets x 3 seeds x "
          f"{args.test_images} test images: {seconds:.1f} s ({os.cpu_count()} cores visible); "
          f"distinct resamples {result.n_distinct}")


if __name__ == "__main__":
    main()
