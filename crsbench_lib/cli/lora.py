"""``crsbench lora rates``: choose the LoRA arm's learning rate per encoder family on validation."""

from __future__ import annotations

import argparse
from pathlib import Path


def _rates(args: argparse.Namespace) -> int:
    from crsbench_lib.runner.config import load_profile
    from crsbench_lib.runner.lora_rates import learning_rate_trials

    profile = load_profile(args.config if args.config is not None else args.profile)
    table = learning_rate_trials(profile, args.dataset, args.seed, grid=args.grid, encoders=args.encoders,
                                 log=lambda line: print(line, flush=True))
    chosen = table[table["chosen"]]
    print("chosen (write under lora.lr): " + ", ".join(f"{a}: {r:g}" for a, r in zip(chosen["family"], chosen["lr"])))
    if args.out is not None:
        from crsbench_lib.atomic import atomic_write_text

        atomic_write_text(Path(args.out), table.to_csv(index=False))
    return 0


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``lora rates``."""
    from crsbench_lib.runner.lora_rates import DEFAULT_RATE_GRID

    parser = subparsers.add_parser("lora", help="the LoRA arm's settings: choose its learning rates")
    sub = parser.add_subparsers(dest="lora_command", metavar="LORA_COMMAND")
    sub.required = True
    p = sub.add_parser("rates", help="adapt one encoder per family at each rate of a grid; lowest validation loss wins")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--profile", metavar="NAME", help="a shipped profile")
    which.add_argument("--config", metavar="FILE", type=Path, help="a profile YAML file")
    p.add_argument("--dataset", required=True, help="the dataset of the trials (one of the profile's)")
    p.add_argument("--seed", type=int, default=0, help="the evaluation seed of the trials (default 0)")
    p.add_argument("--grid", type=_rate, nargs="+", default=list(DEFAULT_RATE_GRID), metavar="LR",
                   help=f"candidate rates (default {' '.join(f'{r:g}' for r in DEFAULT_RATE_GRID)})")
    p.add_argument("--encoders", nargs="+", default=None, metavar="NAME",
                   help="encoders to try (default: the first LoRA encoder of each zoo family)")
    p.add_argument("--out", metavar="CSV", default=None, help="also write the trials table here")
    p.set_defaults(handler=_rates)
