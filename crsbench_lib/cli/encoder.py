"""``crsbench encoder check SPEC``: load any encoder and check its output contract before a run."""

from __future__ import annotations

import argparse

from crsbench_lib.cli import positive_int


def _check(args: argparse.Namespace) -> int:
    from crsbench_lib.encoders.check import check_encoder
    from crsbench_lib.encoders.registry import build_encoder

    options: dict[str, object] = {}
    if args.device is not None:
        options["device"] = args.device
    if args.amp is not None:
        options["amp"] = args.amp
    if args.allow_download:
        options["allow_download"] = True
    encoder = build_encoder(args.spec, image_side=args.side, **options)
    report = check_encoder(encoder, image_side=args.side, batch=args.batch)
    for line in report.lines():
        print(line)
    card = getattr(encoder, "card", None)
    if callable(card):
        facts = card()
        print(f"file: {facts['file']} ({facts['format']}, {facts['bytes']:,} bytes)")
        print(f"sha256: {facts['sha256']}")
        if facts["parameters"] is not None:
            print(f"parameters: {facts['parameters']:,}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``encoder check``."""
    parser = subparsers.add_parser("encoder", help="check an encoder (zoo name, hub id or file:<model file>) before a run")
    sub = parser.add_subparsers(dest="encoder_command", metavar="ENCODER_COMMAND")
    sub.required = True
    p_check = sub.add_parser(
        "check", help="embed two batches at the working side; print width, dtype, determinism, NaN/inf, speed, memory")
    p_check.add_argument("spec", metavar="SPEC",
                         help="a zoo name (hog), a hub id (timm:resnet18) or file:<path to .pt2, .pt, .torchscript "
                              "or .onnx>")
    p_check.add_argument("--side", type=positive_int, default=32, metavar="PX",
                         help="working image side fed to the encoder (default 32, the zoo's)")
    p_check.add_argument("--batch", type=positive_int, default=8, metavar="N",
                         help="images in the first batch; the second holds one fewer (default 8)")
    p_check.add_argument("--device", default=None, metavar="DEVICE",
                         help="cpu, cuda, cuda:N (torch encoders; default: CUDA if available)")
    p_check.add_argument("--amp", choices=("none", "bf16", "fp16"), default=None,
                         help="mixed precision for torch encoders (default none)")
    p_check.add_argument("--allow-download", action="store_true", help="let a hub encoder fetch its weights")
    p_check.set_defaults(handler=_check)
