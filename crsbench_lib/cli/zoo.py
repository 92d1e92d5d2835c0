"""``crsbench zoo``: list the encoders, rebuild the zoo's pretrained weights."""

from __future__ import annotations

import argparse
from pathlib import Path


def _list(args: argparse.Namespace) -> int:
    from crsbench_lib.encoders.registry import describe_encoders

    rows = describe_encoders()
    width = max(len(r["name"]) for r in rows)
    fam = max(len(r["family"]) for r in rows)
    for r in rows:
        print(f"{r['name']:<{width}}  {r['family']:<{fam}}  {r['description']}")
    print("hub names: timm:<id or path>, open_clip:<arch>[:<pretrained>], hf:<id or path>")
    return 0


def _pretrain(args: argparse.Namespace) -> int:
    from crsbench_lib.runner.pretrain import POOL_SIZE, pretrain_zoo

    timings = pretrain_zoo(
        out=Path(args.out) if args.out else None,
        pieces=args.only or None,
        pool_size=args.pool_size or POOL_SIZE,
        log=lambda line: print(line, flush=True),
    )
    print(f"pools: {timings['pools']:.1f} s; total: {timings['total']:.1f} s")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``zoo list`` and ``zoo pretrain``."""
    parser = subparsers.add_parser("zoo", help="list encoders; rebuild the zoo's pretrained weights")
    sub = parser.add_subparsers(dest="zoo_command", metavar="ZOO_COMMAND")
    sub.required = True
    p_list = sub.add_parser("list", help="list the available encoders")
    p_list.set_defaults(handler=_list)
    p_pre = sub.add_parser("pretrain", help="refit PCA/k-means and retrain the neural zoo from the fixed seed")
    p_pre.add_argument("--out", metavar="DIR", help="weights folder to write (default: the shipped folder)")
    p_pre.add_argument("--only", nargs="+", metavar="PIECE", help="rebuild only these pieces (pca, kmeans, cnn_random...)")
    p_pre.add_argument("--pool-size", type=int, metavar="N", help="pool images per phantom dataset")
    p_pre.set_defaults(handler=_pretrain)
