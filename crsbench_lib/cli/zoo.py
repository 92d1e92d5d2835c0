"""``crsbench zoo``: list the encoders, rebuild the zoo's pretrained weights."""

from __future__ import annotations

import argparse
from pathlib import Path

from crsbench_lib.cli import positive_int


#: Card columns ``zoo list`` prints (``--full`` prints every column).
LIST_COLUMNS: tuple[str, ...] = ("name", "kind", "study_family", "architecture", "parameters", "pool", "steps", "pretrain_seconds")


def _list(args: argparse.Namespace) -> int:
    import pandas as pd

    from crsbench_lib.encoders.cards import zoo_cards, zoo_summary
    from crsbench_lib.encoders.zoo import DEFAULT_ZOO, describe_encoders

    cards = zoo_cards()
    shown = cards if args.full else cards[list(LIST_COLUMNS)]
    with pd.option_context("display.max_colwidth", None if args.full else 48, "display.width", 250):
        print(shown.to_string(index=False))
    print(zoo_summary(cards))
    for row in describe_encoders():
        if row["name"] not in DEFAULT_ZOO:
            print(f"entry point: {row['name']}  {row['description']}")
    print("hub names: timm:<id or path>, open_clip:<arch>[:<pretrained>], hf:<id or path>")
    print("model files: file:<path to .pt2, .pt, .torchscript or .onnx> (check one: crsbench encoder check file:<path>)")
    return 0


def _pretrain(args: argparse.Namespace) -> int:
    from crsbench_lib.runner.pretrain import pretrain_zoo

    timings = pretrain_zoo(
        out=Path(args.out) if args.out else None,
        pieces=args.only or None,
        log=lambda line: print(line, flush=True),
        jobs=args.jobs,
    )
    print(f"pools: {timings['pools']:.1f} s; total: {timings['total']:.1f} s")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``zoo list`` and ``zoo pretrain``."""
    parser = subparsers.add_parser("zoo", help="list encoders; rebuild the zoo's pretrained weights")
    sub = parser.add_subparsers(dest="zoo_command", metavar="ZOO_COMMAND")
    sub.required = True
    p_list = sub.add_parser("list", help="the zoo's encoder cards (recipe, pool, parameters, pretraining time)")
    p_list.add_argument("--full", action="store_true", help="every card column, untruncated")
    p_list.set_defaults(handler=_list)
    p_pre = sub.add_parser("pretrain", help="refit PCA/k-means and retrain the neural zoo from the fixed seed, bit for bit")
    p_pre.add_argument("--out", metavar="DIR", help="weights folder to write (default: the shipped folder)")
    p_pre.add_argument("--only", nargs="+", metavar="PIECE", help="rebuild only these pieces (pca, kmeans, cnn_random...)")
    p_pre.add_argument("--jobs", type=positive_int, default=2, metavar="N", help="worker processes, one per core (the files do not depend on it; default 2)")
    p_pre.set_defaults(handler=_pretrain)
