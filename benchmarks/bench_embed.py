"""Benchmark of the encoder layer: throughput per encoder, default-cohort embedding.

Prints
- images per second per encoder of the default zoo (1,000 phantom dermatology test images, 32 px);
  for the neural encoders also through the module as trained, unfolded (the batch-norm
  folding of ``encoders.torch_encoder.fold_batch_norm`` is what the embeddings use);
- the time to embed the default cohort with the whole zoo: for each phantom dataset one
  seed's train/val/calibration splits, the test split, the site-B and cue-removed test
  splits, and every corruption family of its domain at severities 1-5, each condition on
  its block of the default profile's layout (125 test images; target: under 6 minutes on
  two cores).

Usage: ``python benchmarks/bench_embed.py [--threads 2] [--skip-cohort] [--encoders A B] [--n 1000]``.
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
from crsbench_lib.runner.config import load_profile


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


def throughput(threads: int, encoders: list[str], n: int) -> None:
    images = build_dataset("derm", seed=0, sizes=DEFAULT_SIZES).split("test").images[:n]
    print(f"# images/s per encoder ({len(images)} derm test images, 32 px, {threads} threads, best of 3)")
    for name in encoders:
        enc = build_encoder(name, device="cpu")
        rate = _images_per_second(enc.embed, images)
        line = f"{name:<24} {rate:>9.0f} img/s   dim {enc.embedding_dim}"
        if isinstance(enc, TorchEncoder):
            line += f"   unfolded {_images_per_second(_unfolded(enc), images):>7.0f} img/s"
        print(line, flush=True)


def cohort_embedding(encoders: list[str]) -> None:
    """Embed every image set of the default profile's datasets as its run does (one seed's development splits)."""
    from crsbench_lib.runner.cell import corruption_blocks

    profile = load_profile("default", check_files=False)
    datasets = []
    for spec in profile.datasets:
        options = spec.options
        datasets.append(build_dataset(spec.name, seed=int(options["data_seed"]), sizes=options["sizes"],
                                      image_side=int(options["image_side"]), shift_parts=options["shift_parts"],
                                      cues=bool(options["cues"])))
    t0 = time.perf_counter()
    for ds in datasets:  # generate the images outside the timed embedding loop
        for split in ("train", "val", "calibration", "test"):
            ds.split(split, seed=0)
        for site in (ds.shift_site, *ds.ablation_sites):
            if site:
                ds.split("test", site)
    print(f"# default cohort generated in {time.perf_counter() - t0:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        store = EmbeddingStore(Path(tmp))
        n_images = 0
        t_all = time.perf_counter()
        for name in encoders:
            enc = build_encoder(name, device="cpu")
            t = time.perf_counter()
            for ds in datasets:
                for split in ("train", "val", "calibration", "test"):
                    n_images += len(store.embed(enc, ds, split, seed=0))
                for site in (ds.shift_site, *ds.ablation_sites):
                    if site:
                        n_images += len(store.embed(enc, ds, "test", site=site))
                blocks = corruption_blocks(profile, ds, corruption_families(ds.domain))
                for (family, severity), block in blocks.items():
                    n_images += len(store.embed(enc, ds, "test", corruption=family, severity=severity,
                                                corruption_seed=profile.corruptions.seed, n_images=block.size,
                                                first_image=int(block[0])))
            print(f"{name:<24} {time.perf_counter() - t:>7.1f} s", flush=True)
        total = time.perf_counter() - t_all
    print(f"# {len(encoders)} encoders on the default cohort: {n_images} image embeddings, {total:.1f} s "
          f"({total / 60:.2f} min)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip-cohort", action="store_true")
    parser.add_argument("--encoders", nargs="+", default=list(DEFAULT_ZOO), help="encoders (default: the zoo)")
    parser.add_argument("--n", type=int, default=1000, help="test images of the throughput timing (default 1000)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    throughput(args.threads, args.encoders, args.n)
    if not args.skip_cohort:
        cohort_embedding(args.encoders)


if __name__ == "__main__":
    main()
