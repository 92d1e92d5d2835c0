"""Encoder cards: what each encoder of the built-in zoo is, how it was made and what it stands for.

A card is one row of :func:`zoo_cards`. Everything on it is read from where
the fact lives: the recipe from :mod:`crsbench_lib.encoders.recipes`, the
pool size, seed, pretraining time, sha256 and the encoder's shape (parameters,
embedding width, counted from the modules when the weights were built) from the
weights manifest written by ``crsbench zoo pretrain``. Nothing here imports
torch, so a chapter can show the cards.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from crsbench_lib.encoders.recipes import ACQUISITION_AUGMENTATIONS, FAMILIES, NEURAL_ZOO, NeuralSpec, architecture_label
from crsbench_lib.encoders.weights_manifest import read_manifest, weights_dir, zoo_shapes
from crsbench_lib.encoders.zoo import DEFAULT_ZOO, HANDCRAFTED_ZOO

#: Columns of :func:`zoo_cards`, in order.
CARD_COLUMNS: tuple[str, ...] = (
    "name",
    "kind",
    "study_family",
    "architecture",
    "recipe",
    "pool",
    "augmentations",
    "parameters",
    "embedding_dim",
    "steps",
    "batch_size",
    "pretrain_seconds",
    "pretrain_load",
    "sha256",
    "description",
)
#: How each pretraining method is described on a card.
METHODS: dict[str, str] = {
    "random": "none: PyTorch default initialisation from the fixed seed",
    "simclr": "SimCLR contrastive self-supervision (NT-Xent, two views per image)",
    "multitask": "supervised multi-task on auxiliary generator attributes (never the evaluation labels)",
    "mae": "masked autoencoder (75 % of patches masked, pixel reconstruction)",
    "intask": "supervised on the evaluation tasks' labels of pool images (in-task; leaks the task)",
}
# Hand-crafted encoders fitted on pool images, and what the fit is.
_FITTED: dict[str, str] = {
    "pca": "randomised PCA of 32-px pool pixels (top 64 axes)",
    "kmeans": "ZCA whitening and k-means (64 centroids) of 6x6 pool patches",
}


def _pool_text(spec: NeuralSpec, entry: dict[str, object]) -> str:
    """The recipe's pool, and the generator version the shipped file was pretrained on (from the manifest)."""
    if spec.pool is None:
        return "none"
    generator = entry.get("generator")
    return spec.pool.describe() + (f" (generator v{generator})" if generator is not None else "")


def _neural_card(spec: NeuralSpec, entry: dict[str, object], shape: dict[str, int]) -> dict[str, object]:
    return {
        "name": spec.name,
        "kind": "neural",
        "study_family": FAMILIES[spec.family],
        "architecture": architecture_label(spec.architecture),
        "recipe": METHODS[spec.method],
        "pool": _pool_text(spec, entry),
        "augmentations": ", ".join(spec.augmentations) or "none",
        "parameters": shape.get("parameters"),
        "embedding_dim": shape.get("embedding_dim"),
        "steps": spec.steps,
        "batch_size": spec.batch_size,
        "pretrain_seconds": entry.get("seconds"),
        "pretrain_load": entry.get("load"),
        "sha256": entry.get("sha256"),
        "description": spec.description,
    }


def _classical_card(name: str, entry: dict[str, object] | None, shape: dict[str, int]) -> dict[str, object]:
    return {
        "name": name,
        "kind": "classical",
        "study_family": FAMILIES["classical"],
        "architecture": "hand-crafted descriptor",
        "recipe": _FITTED.get(name, "none: a fixed descriptor"),
        "pool": f"{int(entry['images']):,} broad-pool images" if entry is not None and "images" in entry else "none",
        "augmentations": "none",
        "parameters": shape.get("parameters"),
        "embedding_dim": shape.get("embedding_dim"),
        "steps": 0,
        "batch_size": 0,
        "pretrain_seconds": entry.get("seconds") if entry is not None else 0.0,
        "pretrain_load": entry.get("load") if entry is not None else 0.0,
        "sha256": entry.get("sha256") if entry is not None else None,
        "description": HANDCRAFTED_ZOO[name],
    }


def zoo_cards(folder: str | Path | None = None) -> pd.DataFrame:
    """One card per encoder of the built-in zoo, in registry order.

    Parameters
    ----------
    folder : path-like, optional
        Weights folder (default: the shipped one, or ``$CRSBENCH_WEIGHTS_DIR``).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`CARD_COLUMNS`. ``parameters`` counts the backbone's
        parameters (neural) or the fitted values (PCA, k-means; 0 for fixed
        descriptors); ``pretrain_seconds`` is the wall time of the last
        ``crsbench zoo pretrain`` that wrote the file and ``pretrain_load`` the
        machine's one-minute load average when it finished, as recorded in the
        manifest; ``sha256`` is the file's hash (None for fixed descriptors).

    Examples
    --------
    >>> cards = zoo_cards()
    >>> cards.set_index("name").loc["simclr_broad_aug_l", "architecture"]
    'CNN 24-48-96-192'
    """
    where = weights_dir(folder)
    files = read_manifest(where)["files"]
    shapes = zoo_shapes(where)
    rows = []
    for name in DEFAULT_ZOO:
        entry = files.get(f"{name}.pt")
        if name in NEURAL_ZOO:
            rows.append(_neural_card(NEURAL_ZOO[name], entry or {}, shapes.get(name, {})))
        else:
            rows.append(_classical_card(name, entry, shapes.get(name, {})))
    return pd.DataFrame(rows, columns=list(CARD_COLUMNS))


def zoo_summary(cards: pd.DataFrame) -> str:
    """One sentence on the zoo: how many encoders of each kind and family, their sizes and build time.

    Examples
    --------
    >>> zoo_summary(zoo_cards()).startswith("The zoo has")
    True
    """
    neural = cards[cards["kind"] == "neural"]
    n_classical = int((cards["kind"] == "classical").sum())
    families = neural["study_family"].str.split(" \\(").str[0].value_counts(sort=False)
    parts = ", ".join(f"{n} {fam}" for fam, n in families.items())
    minutes = pd.to_numeric(cards["pretrain_seconds"], errors="coerce").sum() / 60
    load = pd.to_numeric(neural["pretrain_load"], errors="coerce").median()
    return (
        f"The zoo has {len(cards)} encoders: {n_classical} classical baselines and {len(neural)} neural encoders"
        f" ({parts}), with {int(neural['parameters'].min()):,} to {int(neural['parameters'].max()):,} parameters;"
        f" its shipped state took {minutes:.0f} minutes of single-threaded pretraining, summed over pieces,"
        f" at a median load average of {load:.0f}."
    )


#: Columns of :func:`file_cards`, in order.
FILE_CARD_COLUMNS: tuple[str, ...] = ("name", "file", "format", "sha256", "embedding_dim", "parameters", "image_side")


def file_cards(entries: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """One card per encoder of a run that is an exported model file (a team's own encoder).

    Everything on it was read from the file when the run loaded it and recorded
    in the run manifest (:attr:`crsbench_lib.results.manifest.RunManifest.encoder_files`):
    the format, the file's sha256 (which keys every cell of the encoder), the
    feature width and, where the format tells, the number of weight values.

    Parameters
    ----------
    entries : mapping
        Encoder name -> its recorded facts (:meth:`crsbench_lib.encoders.file_encoder.FileEncoder.card`).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`FILE_CARD_COLUMNS`, in the mapping's order; ``file`` is
        the file's name (its folder is the run's machine's), ``sha256`` the
        whole hex digest; empty when the run has no model files.

    Examples
    --------
    >>> card = {"file": "/models/mine.pt2", "format": "torch.export", "sha256": "ab" * 32,
    ...         "embedding_dim": 64, "parameters": 1200, "image_side": 32}
    >>> file_cards({"mine": card})[["name", "file", "format"]].to_dict("records")
    [{'name': 'mine', 'file': 'mine.pt2', 'format': 'torch.export'}]
    """
    rows = [{"name": str(name), "file": Path(str(card.get("file", ""))).name, "format": card.get("format"),
             "sha256": card.get("sha256"), "embedding_dim": card.get("embedding_dim"),
             "parameters": card.get("parameters"), "image_side": card.get("image_side")}
            for name, card in entries.items()]
    return pd.DataFrame(rows, columns=list(FILE_CARD_COLUMNS))


#: Columns of :func:`augmentation_pairs`, in order.
PAIR_COLUMNS: tuple[str, ...] = ("augmented", "plain", "architecture", "recipe", "pool")


def _has_acquisition(augmentations: str) -> bool | None:
    """True if a card's augmentations list every acquisition augmentation, False if none, None if some."""
    listed = {a.strip() for a in str(augmentations).split(",")}
    present = [a in listed for a in ACQUISITION_AUGMENTATIONS]
    return True if all(present) else (False if not any(present) else None)


def augmentation_pairs(cards: pd.DataFrame) -> pd.DataFrame:
    """Pairs of neural encoders that differ only by acquisition augmentation.

    Two neural cards form a pair when their architecture, recipe and pool are
    the same and one lists every augmentation of
    :data:`~crsbench_lib.encoders.recipes.ACQUISITION_AUGMENTATIONS` while the
    other lists none of them: the ``aug`` and ``noaug`` variants of a recipe.

    Parameters
    ----------
    cards : pandas.DataFrame
        Cards as returned by :func:`zoo_cards`.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`PAIR_COLUMNS`, one row per pair in card order of the
        augmented encoder; empty when no pair exists.

    Raises
    ------
    ValueError
        If a required card column is missing.

    Examples
    --------
    >>> pairs = augmentation_pairs(zoo_cards())
    >>> pairs.set_index("augmented").loc["simclr_broad_aug_s", "plain"]
    'simclr_broad_noaug_s'
    """
    needed = ("name", "kind", "architecture", "recipe", "pool", "augmentations")
    missing = [c for c in needed if c not in cards.columns]
    if missing:
        raise ValueError(f"augmentation_pairs: cards lack column(s) {', '.join(missing)}")
    neural = cards[cards["kind"] == "neural"]
    acquisition = neural["augmentations"].map(_has_acquisition)
    key = ["architecture", "recipe", "pool"]
    augmented = neural[acquisition == True]  # noqa: E712 (None marks partial lists, which pair with nothing)
    plain = neural[acquisition == False]  # noqa: E712
    rows = augmented[["name"] + key].merge(plain[["name"] + key], on=key, suffixes=("_aug", "_plain"))
    rows = rows.rename(columns={"name_aug": "augmented", "name_plain": "plain"})
    return rows[list(PAIR_COLUMNS)].reset_index(drop=True)
