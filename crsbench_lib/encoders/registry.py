"""The encoder registry: names -> encoders.

Three sources of names:

- the built-in zoo, :data:`~crsbench_lib.encoders.zoo.DEFAULT_ZOO` (listed, grouped and
  described without torch in :mod:`crsbench_lib.encoders.zoo`), built by
  :func:`build_encoder`; their cards are :func:`crsbench_lib.encoders.cards.zoo_cards`;
- hub adapters, by prefix: ``timm:<model id or path>``,
  ``open_clip:<arch>[:<pretrained tag or path>]`` and ``hf:<hub id or local path>``
  (:mod:`crsbench_lib.encoders.hub`);
- exported model files, by prefix: ``file:<path>`` to a ``torch.export``
  archive (``.pt2``), a TorchScript file (``.pt``, ``.torchscript``) or an ONNX
  file (``.onnx``) (:mod:`crsbench_lib.encoders.file_encoder`);
- third-party encoders registered under the entry-point group
  ``crsbench.encoders``: each entry point names a callable
  ``factory(image_side: int = 32, **options) -> Encoder``; its name is the
  encoder name.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from crsbench_lib.encoders.base import Encoder
from crsbench_lib.encoders.handcrafted import HANDCRAFTED
from crsbench_lib.encoders.neural import NEURAL_ZOO, NeuralEncoder, count_parameters, make_backbone
from crsbench_lib.encoders.weights import load_state, read_manifest, weights_dir
from crsbench_lib.encoders.zoo import DEFAULT_ZOO, ENTRY_POINT_GROUP, entry_point_encoders, file_spec
from crsbench_lib.errors import EncoderError

HUB_PREFIXES: tuple[str, ...] = ("timm", "open_clip", "hf")
TORCH_ONLY_OPTIONS: tuple[str, ...] = ("device", "amp", "batch_size")


def hub_prefix(name: str) -> str | None:
    """The hub of a hub model id (``timm:resnet18`` -> ``timm``), None for any other name.

    Examples
    --------
    >>> hub_prefix("hf:facebook/dinov2-small"), hub_prefix("hog"), hub_prefix("timm")
    ('hf', None, None)
    """
    prefix, sep, _ = name.partition(":")
    return prefix if sep and prefix in HUB_PREFIXES else None


def available_encoders() -> list[str]:
    """Names :func:`build_encoder` accepts: the built-in zoo, then entry-point encoders.

    Hub encoders (``timm:...``, ``open_clip:...``, ``hf:...``) are accepted too
    but not listed, since their names are open-ended.
    """
    names = list(DEFAULT_ZOO)
    names += sorted(n for n in entry_point_encoders() if n not in names)
    return names


def build_encoder(name: str, image_side: int = 32, **options: Any) -> Encoder:
    """Build an encoder by name.

    Parameters
    ----------
    name : str
        A name of :func:`available_encoders`, a hub name
        (``timm:...``, ``open_clip:...``, ``hf:...``) or a model file
        (``file:<path>``, relative to the working folder or absolute).
    image_side : int
        Working image side in pixels (32 by default; 64 works for the zoo).
    **options
        Passed to the encoder: ``weights_dir`` (zoo encoders with shipped
        state), ``device``, ``amp``, ``batch_size`` (torch encoders),
        ``allow_download`` (hub encoders), ``name`` (a model file's registry
        name), or anything an entry-point factory takes.

    Returns
    -------
    Encoder

    Raises
    ------
    EncoderError
        For an unknown name (the message lists the valid ones), bad options or
        weights that fail their hash check.
    """
    if not isinstance(name, str) or not name:
        raise EncoderError(f"encoder name must be a non-empty string, got {name!r}")
    path_text = file_spec(name)
    if path_text is not None:
        from crsbench_lib.encoders.file_encoder import build_file_encoder

        return build_file_encoder(path_text, image_side=image_side, **options)
    prefix = hub_prefix(name)
    if prefix is not None:
        from crsbench_lib.encoders.hub import build_hub_encoder

        return build_hub_encoder(prefix, name.partition(":")[2], image_side=image_side, **options)
    try:
        if name in HANDCRAFTED:
            cls: Callable[..., Encoder] = HANDCRAFTED[name]
            # Hand-crafted descriptors run on CPU in numpy: torch-only options are
            # accepted (so one call builds any encoder) and ignored.
            kept = {k: v for k, v in options.items() if k not in TORCH_ONLY_OPTIONS}
            return cls(image_side=image_side, **kept)
        if name in NEURAL_ZOO:
            return NeuralEncoder(name, image_side=image_side, **options)
    except TypeError as exc:
        raise EncoderError(f"encoder {name}: bad options {sorted(options)} ({exc})") from exc
    eps = entry_point_encoders()
    if name in eps:
        try:
            factory = eps[name].load()
        except Exception as exc:  # noqa: BLE001 - a broken plug-in is the user's error to see
            raise EncoderError(f"entry point {ENTRY_POINT_GROUP}:{name} failed to load ({exc})") from exc
        encoder = factory(image_side=image_side, **options)
        if not isinstance(encoder, Encoder):
            raise EncoderError(f"entry point {ENTRY_POINT_GROUP}:{name} returned {type(encoder).__name__}, not an Encoder")
        return encoder
    raise EncoderError(
        f"unknown encoder {name!r}; valid names: {', '.join(available_encoders())}"
        f" (or a hub name {', '.join(p + ':<id>' for p in HUB_PREFIXES)}, or file:<model file>)"
    )


def shape_facts(folder: Path | None = None) -> dict[str, dict[str, int]]:
    """Parameters and embedding width of every zoo encoder, counted from the modules and fitted state.

    What ``crsbench zoo pretrain`` records under the weights manifest's
    ``"encoders"`` (:func:`~crsbench_lib.encoders.weights_manifest.zoo_shapes`),
    so the cards need no torch. ``parameters`` counts a backbone's parameters
    (batch-norm statistics excluded) or a fitted descriptor's values (PCA basis,
    k-means centroids and whitening; 0 for a fixed descriptor or a fitted one
    whose file is not in ``folder``).

    Parameters
    ----------
    folder : pathlib.Path, optional
        Weights folder (default :func:`~crsbench_lib.encoders.weights_manifest.weights_dir`).

    Examples
    --------
    >>> shape_facts()["simclr_broad_aug_l"]["embedding_dim"]
    192
    """
    where = weights_dir(folder)
    files = read_manifest(where)["files"]
    facts: dict[str, dict[str, int]] = {}
    for name in DEFAULT_ZOO:
        if name in NEURAL_ZOO:
            architecture = NEURAL_ZOO[name].architecture
            facts[name] = {"parameters": count_parameters(architecture),
                           "embedding_dim": int(make_backbone(architecture).out_dim)}
            continue
        parameters = 0
        if f"{name}.pt" in files:
            state, _ = load_state(f"{name}.pt", where)
            parameters = sum(int(t.numel()) for t in state.values())
        facts[name] = {"parameters": parameters, "embedding_dim": int(HANDCRAFTED[name].embedding_dim)}
    return facts
