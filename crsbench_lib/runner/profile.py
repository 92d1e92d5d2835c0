"""The validated profile: the typed objects a benchmark run is computed from.

:class:`Profile` holds one run's datasets (:class:`DatasetSpec`), encoders,
seeds, corruptions (:class:`CorruptionSpec`), arms, probe grid (the evaluation
engine's :class:`~crsbench_lib.evaluation.cell.ProbeConfig`, validated there),
LoRA settings (:class:`LoraSpec`) and embedding settings
(:class:`EmbeddingSpec`), each with the written form that enters the config
hash; the defaults a profile file may leave out live here too. Reading and
validating a profile file is :mod:`crsbench_lib.runner.config`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from crsbench_lib.errors import ConfigError
from crsbench_lib.evaluation.cell import ProbeConfig
from crsbench_lib.hashing import sha256_of
from crsbench_lib.results.schema import SEVERITIES

DATASET_KINDS: tuple[str, ...] = ("phantom", "medmnist", "manifest")
SPLIT_SIZE_KEYS: tuple[str, ...] = ("train", "val", "calibration", "test", "shift_test")
MANIFEST_COLOURS: tuple[str, ...] = ("auto", "grey", "rgb")
# The word that stands for "every family the cohort defines for this domain".
ALL = "all"


# ---------------------------------------------------------------------------
# Validated profile objects
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DatasetSpec:
    """One dataset of a profile.

    Attributes
    ----------
    kind : {"phantom", "medmnist", "manifest"}
        Where the images come from.
    name : str
        Dataset name in the results table (unique within a profile).
    options : dict
        The kind's settings, default-filled (``sizes``/``image_side``/``data_seed``
        for phantom; ``flag``/``root``/``size``/``domain``/``download`` for
        MedMNIST; ``csv``/``domain`` for a manifest). Paths are resolved
        (absolute); a MedMNIST ``root`` is the folder holding the file.
    written : dict
        The entry as written in the file (default-filled, paths as written): the
        part of the config hash and of the cell keys that belongs to this dataset.
    """

    kind: str
    name: str
    options: Mapping[str, Any]
    written: Mapping[str, Any]


@dataclass(frozen=True)
class EncoderFileSpec:
    """An encoder of a profile that is an exported model file (``file:<path>`` or the mapping form).

    Attributes
    ----------
    name : str
        Encoder name in the results table: ``file:<path>`` as written, or the
        mapping's ``name``.
    path : pathlib.Path
        The model file, resolved (a relative path is relative to the profile's folder).
    image_side : int or None
        The side fed to the model (None: the dataset's working side).
    written : str or dict
        The entry as written in the file (default-filled; the path as written):
        what enters the config hash. The file's bytes enter every cell key
        through the encoder's weights hash (its sha256), not here.
    """

    name: str
    path: Path
    image_side: int | None
    written: str | Mapping[str, Any]

    @property
    def spec(self) -> str:
        """The registry spec that builds it (``file:<absolute path>``)."""
        return f"file:{self.path}"


@dataclass(frozen=True)
class CorruptionSpec:
    """Which corruptions are measured and on how many test images.

    Attributes
    ----------
    families : "all" or dict
        ``"all"`` (every family the cohort defines for a dataset's domain), or a
        mapping domain -> ``"all"`` or a tuple of family names; the key ``"*"``
        applies to domains not listed.
    severities : tuple of int
        Severities in 1..5.
    n_images : int or None
        Test images corrupted per (family, severity) (None: the whole test split).
    seed : int
        Seed of the corruption noise (fixed by the config, never by time).
    layout : {"per_condition", "per_family", "shared"}
        Which test images (see :func:`crsbench_lib.cohort.corruptions.first_image`): ``"per_condition"`` gives
        every (family, severity) its own block of ``n_images`` consecutive test
        images, ``"per_family"`` gives each family one block that its severities
        share, ``"shared"`` corrupts the first ``n_images`` test images for every
        condition (the layout up to method section 9, amendment 11).
    """

    families: str | Mapping[str, str | tuple[str, ...]]
    severities: tuple[int, ...]
    n_images: int | None
    seed: int
    layout: str = "per_condition"

    def families_for(self, domain: str) -> str | tuple[str, ...]:
        """``"all"`` or the tuple of family names requested for ``domain``.

        Raises
        ------
        ConfigError
            If the mapping has neither ``domain`` nor ``"*"``.
        """
        if isinstance(self.families, str):
            return self.families
        if domain in self.families:
            return self.families[domain]
        if "*" in self.families:
            return self.families["*"]
        raise ConfigError(f"corruptions.families has no entry for domain {domain!r} (add it or a '*' entry)")

    def written(self) -> dict[str, Any]:
        """The section as it enters the config hash (lists for tuples)."""
        families = self.families
        return {
            "families": families if isinstance(families, str)
            else {k: v if isinstance(v, str) else list(v) for k, v in families.items()},
            "severities": list(self.severities),
            "n_images": self.n_images,
            "seed": self.seed,
            "layout": self.layout,
        }


@dataclass(frozen=True)
class LoraSpec:
    """Settings of the LoRA-adapted arm (method section 6, item 9; section 9, amendment 12).

    Attributes
    ----------
    encoders : "neural" or tuple of str
        ``"neural"`` (:data:`LORA_NEURAL`): every encoder of the profile that has
        a torch module, hub models included (not the zoo group of that name);
        otherwise a subset of the profile's encoders, written as a list or as
        another zoo group and resolved to names when the profile is loaded.
    rank, alpha, dropout : int, float, float
        LoRA rank ``r``, scaling ``alpha`` (the update is ``alpha / r * B A``) and
        dropout on the adapter input, which must be 0 (not supported; kept so
        that the section keeps its shape).
    blocks : int or "all"
        Adapt the last ``blocks`` blocks of each network (the lower layers stay
        frozen and are computed once per image), or every layer.
    max_steps : int
        The optimisation-step budget of one adapter (the cap).
    patience : int
        Early stopping: epochs in a row without progress on validation.
    min_improvement_se : float
        What counts as progress: an epoch whose validation loss lies below
        the last progress's by more than this many standard errors of the
        paired per-image difference (0: any decrease). The lowest-loss state
        is kept either way.
    lr : float or mapping of str to float
        AdamW's peak learning rate, or a mapping whose keys name encoders,
        zoo families (``broad_ssl``, ...) or architectures (``cnn_s``,
        ``cnn_l``, ``vit_s``), looked up in that order, with ``default`` for
        any other; chosen on validation.
    lr_schedule : {"cosine", "constant"}
        Cosine decay to 0 over ``max_steps``, or a constant rate.
    warmup_steps : int
        Linear warm-up of the rate over the first steps (0: none); the cosine
        then decays over the remaining steps.
    weight_decay : float
        AdamW's decoupled weight decay.
    batch_size : int
        Training batch size.
    max_train : int or None
        Train on at most this many train images (None: the whole split).
    min_val_labels : int
        A label fraction's adapter is trained only when its validation subset
        holds at least this many images; below it the fraction's rows are the
        frozen encoder's (early stopping on a handful of images is noise).

    The arm measures the same corruption sets as the frozen arm
    (``corruptions.n_images``; method section 9, amendment 8).
    """

    encoders: str | tuple[str, ...]
    rank: int
    alpha: float
    dropout: float
    blocks: int | str
    max_steps: int
    patience: int
    min_improvement_se: float
    lr: float | Mapping[str, float]
    lr_schedule: str
    warmup_steps: int
    weight_decay: float
    batch_size: int
    max_train: int | None
    min_val_labels: int

    def written(self) -> dict[str, Any]:
        """The section as it enters the config hash (lists for tuples, a plain dict of rates)."""
        return {**asdict(self), "encoders": self.encoders if isinstance(self.encoders, str) else list(self.encoders),
                "lr": dict(self.lr) if isinstance(self.lr, Mapping) else self.lr}


@dataclass(frozen=True)
class EmbeddingSpec:
    """How images are embedded: batch size, torch device and mixed precision (``none``, ``bf16``, ``fp16``)."""

    batch_size: int
    device: str
    amp: str

    def written(self) -> dict[str, Any]:
        """The section as it enters the config hash."""
        return asdict(self)


@dataclass(frozen=True)
class Profile:
    """A validated run profile.

    Attributes
    ----------
    name : str
        Profile name (default output folder ``cache_dir()/runs/<name>``).
    source : pathlib.Path or None
        The file it was read from.
    standard_path : pathlib.Path
        The reference standard whose label fractions and ECE bins are used.
    standard_version : str
        That standard's version id (recorded in the manifest).
    label_fractions : tuple of float
        Read from the standard (includes 1.0).
    ece_bins : int
        Read from the standard.
    datasets : tuple of DatasetSpec
    encoders : tuple of str
    seeds : tuple of int
    corruptions : CorruptionSpec
    arms : tuple of str
    probe : crsbench_lib.evaluation.cell.ProbeConfig
    lora : LoraSpec
    embedding : EmbeddingSpec
    description : str
    allow_download : bool
        Whether absent MedMNIST files and hub weights may be fetched (not hashed).
    encoder_files : dict
        Encoder name -> :class:`EncoderFileSpec`, for the encoders that are
        exported model files (empty when there are none).
    config_hash : str
        SHA-256 hex digest of ``canonical_json(config)``, set on construction.
    """

    name: str
    source: Path | None
    standard_path: Path
    standard_version: str
    label_fractions: tuple[float, ...]
    ece_bins: int
    datasets: tuple[DatasetSpec, ...]
    encoders: tuple[str, ...]
    seeds: tuple[int, ...]
    corruptions: CorruptionSpec
    arms: tuple[str, ...]
    probe: ProbeConfig
    lora: LoraSpec
    embedding: EmbeddingSpec
    description: str = ""
    allow_download: bool = False
    encoder_files: Mapping[str, EncoderFileSpec] = field(default_factory=dict)
    config_hash: str = field(init=False, default="")

    def __post_init__(self) -> None:
        object.__setattr__(self, "config_hash", sha256_of(self.config))

    def standard_facts(self) -> dict[str, Any]:
        """What the run takes from its reference standard: label fractions and ECE bins."""
        return {"label_fractions": list(self.label_fractions), "ece_bins": self.ece_bins}

    @property
    def config(self) -> dict[str, Any]:
        """The canonical config: every section as written, default-filled, with the
        standard's label fractions and ECE bins in place of its path (so moving the
        file does not change the hash, while changing a fact does)."""
        return {
            "name": self.name,
            "description": self.description,
            "standard": self.standard_facts(),
            "datasets": [dict(d.written) for d in self.datasets],
            # A model file's mapping entry stands as written; every other encoder (file:<path> too) by its name.
            "encoders": [self.encoder_files[e].written if e in self.encoder_files else e for e in self.encoders],
            "seeds": list(self.seeds),
            "corruptions": self.corruptions.written(),
            "arms": list(self.arms),
            "probe": self.probe.written(),
            "lora": self.lora.written(),
            "embedding": self.embedding.written(),
        }

    def dataset(self, name: str) -> DatasetSpec:
        """The dataset spec called ``name``."""
        for spec in self.datasets:
            if spec.name == name:
                return spec
        raise ConfigError(f"profile {self.name}: no dataset named {name!r}")


# ---------------------------------------------------------------------------
# Defaults
# ---------------------------------------------------------------------------

DEFAULT_SEEDS: tuple[int, ...] = (0, 1, 2)
DEFAULT_IMAGE_SIDE = 32
# The probe's defaults are the evaluation engine's (the shipped profiles set every key).
DEFAULT_PROBE: dict[str, Any] = ProbeConfig().written()
#: ``lora.encoders`` value that selects every encoder of the profile with a torch module (hashed as written).
LORA_NEURAL = "neural"
DEFAULT_LORA: dict[str, Any] = {
    "encoders": LORA_NEURAL,
    "rank": 8,
    "alpha": 16.0,
    "dropout": 0.0,
    "blocks": 1,
    "max_steps": 2000,
    "patience": 5,
    "min_improvement_se": 1.0,
    "lr": 1e-3,
    "lr_schedule": "cosine",
    "warmup_steps": 0,
    "weight_decay": 0.0,
    "batch_size": 64,
    "max_train": None,
    "min_val_labels": 100,
}
#: Learning-rate schedules of the LoRA arm.
LR_SCHEDULES: tuple[str, ...] = ("cosine", "constant")
DEFAULT_CORRUPTIONS: dict[str, Any] = {
    "families": ALL, "severities": list(SEVERITIES), "n_images": 125, "seed": 0, "layout": "per_condition",
}
DEFAULT_EMBEDDING: dict[str, Any] = {"batch_size": 256, "device": "auto", "amp": "none"}
AMP_CHOICES: tuple[str, ...] = ("none", "bf16", "fp16")
TOP_KEYS: tuple[str, ...] = (
    "name",
    "description",
    "standard",
    "datasets",
    "encoders",
    "seeds",
    "corruptions",
    "arms",
    "probe",
    "lora",
    "embedding",
    "allow_download",
)
