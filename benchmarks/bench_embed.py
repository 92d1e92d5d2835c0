"""Benchmark of the encoder layer: throughput per encoder, default-cohort embedding.

Prints
- images per second per encoder of the default zoo (1,000 phantom dermatology test images, 32 px);
  for the neural encoders also through the module as trained, unfolded (the batch-norm
  folding of ``encoders.torch_encoder.fold_batch_norm`` is what the embeddings use);
- the time to embed the default cohort with the whole zoo: for each phantom dataset the
  clean train/val/test splits, the site-B test split (cxr), and every corruption family of
  its domain at severities 1-5, each condition on its block of the default profile's
  layout (125 test images; target: under 6 minutes on two cores).

Usage: ``python benchmarks/bench_embed.py [--threads 2] [--skip-cohort]``.
The zoo's pretraining time is benchmarks/bench_pretrain.py.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from crsbench_lib.cohort import DEFAULT_SIZES, PHANTOM_DATASETS, build_dataset, corruption_families
from crsbench_lib.embeddings.store import EmbeddingStore
from crsbench_lib.encoders.registry import DEFAULT_ZOO, build_encoder
from crsbench_lib.encoders.torch_encoder import TorchEncoder
from crsbench_lib.results.schema import SEVERITIES
from crsbench_lib.runner.config import load_profile
from crsbench_lib.runner.pretrain import pretrain_zoo


def _images_per_second(embed: Callable[[np.ndarray], object], images: np.ndarray, repeats: int = 3) -> float:
    """Best of ``repeats`` timed passes after a warm-up (allocations, oneDNN kernels)."""
    embed(images[:64])
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        embed(images)
        best = min(best, time.perf_counter() - t)
    return len(images) / best


def _unfolded(enc: TorchEncoder) -> Callable[[np.ndarray], object]:
    """Embedding through ``enc.forward_features`` (the module as trained, batch norm unfolded)."""

    def embed(images: np.ndarray) -> None:
        with torch.inference_mode():
            for start in range(0, len(images), enc.batch_size):
                enc.forward_features(enc.preprocess(images[start : start + enc.batch_size]))

    return embed


def throughput(threads: int) -> None:
    images = build_dataset("derm", seed=0, sizes=DEFAULT_SIZES).split("test").images
    print(f"# images/s per encoder ({len(images)} derm test images, 32 px, {threads} threads, best of 3)")
    for name in DEFAULT_ZOO:
        enc = build_encoder(name, device="cpu")
        rate = _images_per_second(enc.embed, images)
        line = f"{name:<24} {rate:>9.0f} img/s   dim {enc.embedding_dim}"
        if isinstance(enc, TorchEncoder):
            line += f"   unfolded {_images_per_second(_unfolded(enc), images):>7.0f} img/s"
        print(line, flush=True)


def cohort_embedding() -> None:
    sizes = {**DEFAULT_SIZES, "shift_test": DEFAULT_SIZES["test"]}
    datasets = [build_dataset(name, seed=0, sizes=sizes) for name in PHANTOM_DATASETS]
    t0 = time.perf_counter()
    for ds in datasets:  # generate the images outside the timed embedding loop
        for split in ("train", "val", "test"):
            ds.split(split)
        if ds.shift_site:
            ds.split("test", ds.shift_site)
    print(f"# default cohort generated in {time.perf_counter() - t0:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        store = EmbeddingStore(Path(tmp))
        per_encoder: dict[str, float] = {}
        layout = load_profile("default", check_files=False).corruptions
        n_images = 0
        t_all = time.perf_counter()
        for name in DEFAULT_ZOO:
            enc = build_encoder(name, device="cpu")
            t = time.perf_counter()
            for ds in datasets:
                for split in ("train", "val", "test"):
                    n_images += len(store.embed(enc, ds, split))
                if ds.shift_site:
                    n_images += len(store.embed(enc, ds, "test", site=ds.shift_site))
                n_test = len(ds.split("test"))
                for position, family in enumerate(corruption_families(ds.domain)):
                    for severity in SEVERITIES:
                        n_images += len(store.embed(
                            enc, ds, "test", corruption=family, severity=severity,
                            n_images=layout.images_per_condition(n_test),
                            first_image=layout.first_image(position, severity, n_test),
                        ))
            per_encoder[name] = time.perf_counter() - t
            print(f"{name:<24} {per_encoder[name]:>7.1f} s", flush=True)
        total = time.perf_counter() - t_all
    print(f"# whole zoo on the default cohort: {n_images} image embeddings, {total:.1f} s ({total / 60:.2f} min)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip-cohort", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    throughput(args.threads)
    if not args.skip_cohort:
        cohort_embedding()


if __name__ == "__main__":
    main()
