"""Does the phantom world need representation learning? A learned proxy against the pixel probe.

Without the zoo, this trains one small CNN per dataset end to end on the
clean site-A training split (the evaluation labels, with flips and small
shifts as augmentation) and prints its clean test macro-AUROC beside the pixel
probe's, and, for cxr, both at site B. A CNN of this size is a floor on what a
good learned encoder can reach, so the printed gap is a floor on the room
above the pixel probe; its site-B AUROC is a check on the site-B rule (an
encoder with clean AUROC above 0.75 must stay above 0.60 at site B).

Usage: ``python benchmarks/bench_world.py [--epochs 12] [--train 2000] [--test 2000] [--side 32]``
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from crsbench_lib.cohort import PHANTOM_DATASETS, build_dataset
from crsbench_lib.cohort.difficulty import PixelProbe
from crsbench_lib.metrics.auroc import macro_auroc

SEED = 0


def _tensor(images: np.ndarray) -> torch.Tensor:
    x = torch.from_numpy(images.astype(np.float32) / 255.0)
    x = x[:, None] if x.ndim == 3 else x.permute(0, 3, 1, 2)
    return (x - 0.5) / 0.25


def _cnn(channels: int, n_out: int) -> nn.Module:
    def block(i: int, o: int) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU())

    return nn.Sequential(
        block(channels, 24), nn.MaxPool2d(2), block(24, 48), nn.MaxPool2d(2), block(48, 96),
        nn.AdaptiveMaxPool2d(1), nn.Flatten(), nn.Linear(96, n_out),
    )


def _augment(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    flip = torch.rand(len(x), generator=gen) < 0.5
    x = torch.where(flip[:, None, None, None], x.flip(3), x)
    dx, dy = (int(v) for v in torch.randint(-2, 3, (2,), generator=gen))
    return torch.roll(x, shifts=(dy, dx), dims=(2, 3))


def train_cnn(images: np.ndarray, labels: np.ndarray, task: str, n_out: int, epochs: int) -> nn.Module:
    """A small CNN trained end to end (Adam, batch 64, cross-entropy or BCE)."""
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    x = _tensor(images)
    y = torch.from_numpy(labels.astype(np.float32 if task == "multilabel" else np.int64))
    model = _cnn(x.shape[1], n_out)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs * (-(-len(x) // 64)))
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(x), generator=gen)
        for i in range(0, len(x), 64):
            idx = order[i : i + 64]
            out = model(_augment(x[idx], gen))
            loss = F.binary_cross_entropy_with_logits(out, y[idx]) if task == "multilabel" else F.cross_entropy(out, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
    return model.eval()


@torch.no_grad()
def cnn_scores(model: nn.Module, images: np.ndarray, task: str) -> np.ndarray:
    out = torch.cat([model(_tensor(images[i : i + 512])) for i in range(0, len(images), 512)])
    return (torch.sigmoid(out) if task == "multilabel" else torch.softmax(out, 1)).numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--train", type=int, default=2000)
    parser.add_argument("--test", type=int, default=2000)
    parser.add_argument("--side", type=int, default=32)
    parser.add_argument("--datasets", nargs="*", default=list(PHANTOM_DATASETS))
    args = parser.parse_args()
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    print(f"cpu count {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}")
    for name in args.datasets:
        start = time.perf_counter()
        ds = build_dataset(name, seed=0, sizes={"train": args.train, "val": 8, "test": args.test}, image_side=args.side)
        train, test = ds.split("train"), ds.split("test")
        pixel = PixelProbe(ds.task).fit(train.images, train.labels)
        model = train_cnn(train.images, train.labels, ds.task, ds.n_classes, args.epochs)
        line = (
            f"{name:8s} pixel probe {pixel.auroc(test.images, test.labels):.3f}, "
            f"small CNN {macro_auroc(test.labels, cnn_scores(model, test.images, ds.task), ds.task).value:.3f}"
        )
        if ds.shift_site:
            shift = ds.split("test", ds.shift_site)
            line += (
                f"; site {ds.shift_site}: pixel probe {pixel.auroc(shift.images, shift.labels):.3f}, "
                f"small CNN {macro_auroc(shift.labels, cnn_scores(model, shift.images, ds.task), ds.task).value:.3f}"
            )
        print(f"{line} ({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
