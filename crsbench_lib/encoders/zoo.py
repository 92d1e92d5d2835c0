"""The built-in zoo as facts: its names, groups, study families and one-line descriptions.

This module is the one home of the zoo's list. It imports nothing that needs
torch (the recipes are plain dataclasses), so the report side and the notebooks
can name, group and describe the encoders without loading a network; the
registry (:mod:`crsbench_lib.encoders.registry`) builds them, the hand-crafted
module (:mod:`crsbench_lib.encoders.handcrafted`) implements the classical
baselines in the order listed here, and the cards
(:mod:`crsbench_lib.encoders.cards`) add what only the shipped weights know.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

from crsbench_lib.encoders.recipes import NEURAL_ZOO

#: Group of the package entry points through which other packages add encoders.
ENTRY_POINT_GROUP = "crsbench.encoders"

#: Prefix of an exported model file's encoder spec (``file:<path>``; :mod:`crsbench_lib.encoders.file_encoder`).
FILE_PREFIX = "file"
#: Model file suffixes and the format each one names.
MODEL_FILE_FORMATS: dict[str, str] = {".pt2": "torch.export", ".pt": "TorchScript", ".torchscript": "TorchScript",
                                      ".onnx": "ONNX"}

#: Why the LoRA arm leaves a model file out.
FILE_NOT_ADAPTABLE = ("an exported graph (torch.export, TorchScript or ONNX file) cannot be LoRA-adapted: "
                      "it has no layers to attach adapters to")


def file_spec(spec: str) -> str | None:
    """The path text of a ``file:<path>`` spec, None for any other name.

    Examples
    --------
    >>> file_spec("file:models/mine.pt2"), file_spec("hog")
    ('models/mine.pt2', None)
    """
    prefix, sep, rest = spec.partition(":")
    return rest if sep and prefix == FILE_PREFIX else None

#: The classical baselines, in zoo order, with the line that describes each.
HANDCRAFTED_ZOO: dict[str, str] = {
    "pixels": "Raw pixels down-sampled to ``12 x 12`` RGB (432 values in ``[0, 1]``).",
    "pca": "Projection of the RGB pixels at 32 px onto the top 64 principal components.",
    "hog": "Histogram of oriented gradients (Dalal & Triggs, 2005), batched.",
    "lbp": "Local binary patterns (Ojala et al., 2002), rotation-invariant uniform, batched.",
    "gabor": "Gabor filter bank (4 orientations x 3 frequencies), applied by FFT over the batch.",
    "glcm": "Grey-level co-occurrence texture statistics (Haralick et al., 1973), batched.",
    "kmeans": "Single-layer k-means patch features (Coates, Lee & Ng, 2011).",
    "colour_hist": "Colour histograms: 16 bins per RGB channel plus a joint ``4 x 4 x 4`` RGB histogram.",
}

#: The built-in zoo: the classical baselines, then the neural encoders in recipe order.
DEFAULT_ZOO: tuple[str, ...] = (*HANDCRAFTED_ZOO, *NEURAL_ZOO)

#: Named groups of the zoo, in zoo order. ``pretrained`` are the neural encoders
#: with a pretraining pool (the random-initialisation controls have none);
#: ``foundation`` are those that stand for the study's foundation models: every
#: pretrained encoder but the in-task one, whose pretraining already saw the
#: evaluation labels (adapting it on them again measures no model a team could adopt).
ZOO_GROUPS: dict[str, tuple[str, ...]] = {
    "zoo": DEFAULT_ZOO,
    "handcrafted": tuple(HANDCRAFTED_ZOO),
    "neural": tuple(NEURAL_ZOO),
    "pretrained": tuple(name for name, spec in NEURAL_ZOO.items() if spec.pool is not None),
    "foundation": tuple(
        name for name, spec in NEURAL_ZOO.items() if spec.pool is not None and spec.family != "intask"
    ),
}


def zoo_families() -> dict[str, str]:
    """The study family key (:data:`~crsbench_lib.encoders.recipes.FAMILIES`) of every zoo encoder.

    Examples
    --------
    >>> families = zoo_families()
    >>> families["pixels"], families["simclr_broad_aug_s"]
    ('classical', 'broad_ssl')
    """
    return {**{name: "classical" for name in HANDCRAFTED_ZOO}, **{name: spec.family for name, spec in NEURAL_ZOO.items()}}


def entry_point_encoders() -> dict[str, EntryPoint]:
    """Encoders other installed packages declare under :data:`ENTRY_POINT_GROUP`, by name."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def describe_encoders() -> list[dict[str, str]]:
    """One row per available encoder: name, family (``handcrafted``, ``neural`` or
    ``entry point``) and a one-line description; the built-in zoo first, in zoo order.

    Examples
    --------
    >>> rows = describe_encoders()
    >>> rows[0]["name"], rows[0]["family"]
    ('pixels', 'handcrafted')
    """
    rows = [{"name": name, "family": "handcrafted", "description": text} for name, text in HANDCRAFTED_ZOO.items()]
    rows += [{"name": name, "family": "neural", "description": spec.description} for name, spec in NEURAL_ZOO.items()]
    rows += [
        {"name": name, "family": "entry point", "description": ep.value}
        for name, ep in sorted(entry_point_encoders().items())
        if name not in DEFAULT_ZOO
    ]
    return rows
