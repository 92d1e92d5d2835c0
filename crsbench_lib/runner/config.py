"""Run profiles: YAML files that name everything a benchmark run computes.

A profile names the datasets, encoders, seeds, corruptions, arms, probe grid and
LoRA settings of one run, and the reference standard whose label fractions and
ECE binning the run uses (those two facts live only in the standard file). The
shipped profiles are ``configs/quick.yaml`` (tests), ``configs/default.yaml``
(the book) and ``configs/paper.yaml`` (real data and hub models, GPU).

Every profile is validated when it is loaded: an unknown key, a wrong type or a
bad value raises :class:`~crsbench_lib.errors.ConfigError` with the file and the
key path at fault, e.g. ``configs/x.yaml: datasets[1].sizes.train must be a
positive integer``. Checks that need the file system (the standard file, a
MedMNIST folder, a manifest) also run here, before any work starts.

The *config hash* is the SHA-256 of the canonical JSON (sorted keys, no
whitespace) of the validated, default-filled config, with the standard's label
fractions and ECE bins in place of its path, so that moving a file does not
change the hash while changing a fact does.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from crsbench_lib.errors import ConfigError, CRSBenchError
from crsbench_lib.paths import configs_dir, standards_dir
from crsbench_lib.results.schema import C_RULES, DEFAULT_C_RULE

ARMS: tuple[str, ...] = ("frozen", "lora")
DATASET_KINDS: tuple[str, ...] = ("phantom", "medmnist", "manifest")
HUB_PREFIXES: tuple[str, ...] = ("timm:", "open_clip:", "hf:")
SPLIT_SIZE_KEYS: tuple[str, ...] = ("train", "val", "calibration", "test", "shift_test")
MEDMNIST_SIZES: tuple[int, ...] = (28, 64, 128, 224)
MANIFEST_TASKS: tuple[str, ...] = ("binary", "multiclass", "multilabel")
MANIFEST_COLOURS: tuple[str, ...] = ("auto", "grey", "rgb")
VAL_FRACTION_POLICIES: tuple[str, ...] = ("matched", "full")
CALIBRATORS: tuple[str, ...] = ("temperature", "vector", "isotonic")
SEVERITIES: tuple[int, ...] = (1, 2, 3, 4, 5)
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
        for phantom; ``flag``/``root``/``size`` for MedMNIST; ``csv`` for a manifest).
        Paths are resolved (absolute).
    written : dict
        The entry as written in the file (default-filled, paths as written): the
        part of the config hash and of the cell keys that belongs to this dataset.
    """

    kind: str
    name: str
    options: Mapping[str, Any]
    written: Mapping[str, Any]


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
        The first ``n_images`` test images are corrupted (None: the whole test split).
    seed : int
        Seed of the corruption noise (fixed by the config, never by time).
    """

    families: str | Mapping[str, str | tuple[str, ...]]
    severities: tuple[int, ...]
    n_images: int | None
    seed: int

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


@dataclass(frozen=True)
class ProbeSpec:
    """The linear-probe grid handed to the evaluation engine (``ProbeConfig``)."""

    C: tuple[float, ...]
    max_iter: int
    tol: float
    val_fraction_policy: str
    calibrators: tuple[str, ...]
    c_rule: str = DEFAULT_C_RULE


@dataclass(frozen=True)
class LoraSpec:
    """Settings of the LoRA-adapted arm (crs-method section 6, item 9).

    Attributes
    ----------
    encoders : "neural" or tuple of str
        ``"neural"``: every encoder of the profile that has a torch module;
        otherwise an explicit subset of the profile's encoders.
    rank, alpha, dropout : int, float, float
        LoRA rank ``r``, scaling ``alpha`` (the update is ``alpha / r * B A``) and
        dropout on the adapter input.
    epochs, patience : int
        Maximum epochs and early-stopping patience (epochs without a better
        validation loss).
    lr, weight_decay : float
        AdamW learning rate and weight decay.
    batch_size : int
        Training batch size.
    max_train : int or None
        Train on at most this many train images (None: the whole split).

    The arm measures the same corruption sets as the frozen arm
    (``corruptions.n_images``; crs-method section 9, amendment 8).
    """

    encoders: str | tuple[str, ...]
    rank: int
    alpha: float
    dropout: float
    epochs: int
    patience: int
    lr: float
    weight_decay: float
    batch_size: int
    max_train: int | None


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
    probe : ProbeSpec
    lora : LoraSpec
    embedding_batch_size : int
    config : dict
        The canonical config (default-filled; standard facts in place of its path).
    config_hash : str
        SHA-256 hex digest of ``canonical_json(config)``.
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
    probe: ProbeSpec
    lora: LoraSpec
    embedding_batch_size: int
    config: Mapping[str, Any] = field(repr=False)
    config_hash: str = ""

    def dataset(self, name: str) -> DatasetSpec:
        """The dataset spec called ``name``."""
        for spec in self.datasets:
            if spec.name == name:
                return spec
        raise ConfigError(f"profile {self.name}: no dataset named {name!r}")


# ---------------------------------------------------------------------------
# Canonical JSON and hashing
# ---------------------------------------------------------------------------


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: equal values give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def sha256_of(value: Any) -> str:
    """SHA-256 hex digest of ``canonical_json(value)``."""
    return hashlib.sha256(canonical_json(value).encode("ascii")).hexdigest()


# ---------------------------------------------------------------------------
# Small validators: each names the key path at fault
# ---------------------------------------------------------------------------


class _Checker:
    """Validation helpers bound to a source name (the file) for messages."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, message: str) -> ConfigError:
        return ConfigError(f"{self.source}: {path} {message}")

    def mapping(self, value: Any, path: str, allowed: Sequence[str], required: Sequence[str] = ()) -> dict[str, Any]:
        where = path or "the top level"
        if not isinstance(value, Mapping):
            raise ConfigError(f"{self.source}: {where} must be a mapping, got {type(value).__name__}")
        for key in value:
            if not isinstance(key, str) or key not in allowed:
                prefix = f"{path}." if path else ""
                raise ConfigError(
                    f"{self.source}: unknown key {prefix}{key} (expected one of {', '.join(sorted(allowed))})"
                )
        for key in required:
            if key not in value:
                prefix = f"{path}." if path else ""
                raise ConfigError(f"{self.source}: missing required key {prefix}{key}")
        return dict(value)

    def string(self, value: Any, path: str, choices: Sequence[str] | None = None) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(path, "must be a non-empty string")
        if choices is not None and value not in choices:
            raise self.fail(path, f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    def integer(self, value: Any, path: str, minimum: int | None = None, what: str = "an integer") -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, f"must be {what}")
        if minimum is not None and value < minimum:
            raise self.fail(path, f"must be {what}")
        return int(value)

    def positive_int(self, value: Any, path: str) -> int:
        return self.integer(value, path, minimum=1, what="a positive integer")

    def number(self, value: Any, path: str, positive: bool = False, nonneg: bool = False, below_one: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.fail(path, "must be a finite number")
        if positive and value <= 0:
            raise self.fail(path, "must be a positive number")
        if nonneg and value < 0:
            raise self.fail(path, "must be a non-negative number")
        if below_one and value >= 1:
            raise self.fail(path, "must be below 1")
        return float(value)

    def sequence(self, value: Any, path: str, allow_empty: bool = False) -> list[Any]:
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise self.fail(path, "must be a list")
        if not allow_empty and len(value) == 0:
            raise self.fail(path, "must not be empty")
        return list(value)

    def unique(self, values: Sequence[Any], path: str) -> None:
        seen: set[Any] = set()
        for i, value in enumerate(values):
            if value in seen:
                raise self.fail(f"{path}[{i}]", f"repeats {value!r}")
            seen.add(value)


# ---------------------------------------------------------------------------
# Defaults
# ---------------------------------------------------------------------------

DEFAULT_SEEDS: tuple[int, ...] = (0, 1, 2)
DEFAULT_PHANTOM_SIZES: dict[str, int] = {"train": 2000, "val": 500, "test": 1000}
DEFAULT_IMAGE_SIDE = 32
DEFAULT_PROBE: dict[str, Any] = {
    "C": [0.01, 0.1, 1.0, 10.0],
    "max_iter": 200,
    "tol": 1e-4,
    "val_fraction_policy": "matched",
    "calibrators": list(CALIBRATORS),
    "c_rule": DEFAULT_C_RULE,
}
DEFAULT_LORA: dict[str, Any] = {
    "encoders": "neural",
    "rank": 4,
    "alpha": 8.0,
    "dropout": 0.0,
    "epochs": 4,
    "patience": 1,
    "lr": 1e-3,
    "weight_decay": 0.0,
    "batch_size": 64,
    "max_train": None,
}
DEFAULT_CORRUPTIONS: dict[str, Any] = {"families": ALL, "severities": list(SEVERITIES), "n_images": 500, "seed": 0}
DEFAULT_EMBEDDING: dict[str, Any] = {"batch_size": 256, "device": "cpu", "amp": "none"}
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
)


# ---------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------


def _resolve(path_text: str, base: Path) -> Path:
    path = Path(os.path.expanduser(path_text))
    return path if path.is_absolute() else (base / path).resolve()


def _resolve_standard(text: str, base: Path) -> Path:
    """A bare name (no folder) is looked up in ``standards/``; a path is relative to the config file."""
    if "/" not in text and os.sep not in text:
        name = text if text.endswith((".yaml", ".yml")) else f"{text}.yaml"
        return standards_dir() / name
    return _resolve(text, base)


def _check_encoder_names(names: list[str], check: _Checker) -> None:
    """Encoder names must be registered zoo names or hub ids (``timm:``, ``open_clip:``, ``hf:``)."""
    local = [(i, n) for i, n in enumerate(names) if not n.startswith(HUB_PREFIXES)]
    if not local:
        return
    from crsbench_lib.encoders.registry import available_encoders

    known = set(available_encoders())
    for i, name in local:
        if name not in known:
            raise check.fail(
                f"encoders[{i}]",
                f"names unknown encoder {name!r} (known: {', '.join(sorted(known))}; hub ids start with "
                f"{', '.join(HUB_PREFIXES)})",
            )
    for i, name in enumerate(names):
        if name.startswith(HUB_PREFIXES) and not name.split(":", 1)[1]:
            raise check.fail(f"encoders[{i}]", f"is a hub prefix without a model id: {name!r}")


def _calibration_size(raw: Mapping[str, Any], path: str, check: _Checker) -> int | None:
    """A real dataset's calibration-split size (None: as large as its source validation split)."""
    value = raw.get("calibration_size")
    return None if value is None else check.positive_int(value, f"{path}.calibration_size")


def _dataset_spec(entry: Any, i: int, base: Path, check: _Checker, check_files: bool) -> DatasetSpec:
    path = f"datasets[{i}]"
    if not isinstance(entry, Mapping):
        raise check.fail(path, "must be a mapping with a 'kind'")
    kind = check.string(entry.get("kind"), f"{path}.kind", DATASET_KINDS)
    if kind == "phantom":
        from crsbench_lib.cohort import PHANTOM_DATASETS

        raw = check.mapping(entry, path, ("kind", "name", "sizes", "image_side", "data_seed"), ("name",))
        name = check.string(raw["name"], f"{path}.name", tuple(PHANTOM_DATASETS))
        sizes_raw = check.mapping(raw.get("sizes", DEFAULT_PHANTOM_SIZES), f"{path}.sizes", SPLIT_SIZE_KEYS,
                                  ("train", "val", "test"))
        sizes = {k: check.positive_int(v, f"{path}.sizes.{k}") for k, v in sizes_raw.items()}
        # The calibration split is as large as the validation split unless the profile says otherwise.
        sizes.setdefault("calibration", sizes["val"])
        image_side = check.positive_int(raw.get("image_side", DEFAULT_IMAGE_SIDE), f"{path}.image_side")
        data_seed = check.integer(raw.get("data_seed", 0), f"{path}.data_seed", 0, "a non-negative integer")
        written = {"kind": kind, "name": name, "sizes": sizes, "image_side": image_side, "data_seed": data_seed}
        return DatasetSpec(kind, name, dict(written), written)
    if kind == "medmnist":
        raw = check.mapping(entry, path, ("kind", "name", "flag", "root", "size", "image_side", "calibration_size"),
                            ("flag", "root"))
        flag = check.string(raw["flag"], f"{path}.flag")
        root_text = check.string(raw["root"], f"{path}.root")
        size = check.positive_int(raw.get("size", 28), f"{path}.size")
        if size not in MEDMNIST_SIZES:
            raise check.fail(f"{path}.size", f"must be one of {', '.join(map(str, MEDMNIST_SIZES))}, got {size}")
        # The encoders' working side: the file's side, except 28 px, which the
        # zoo's networks (sides in multiples of 8) read resized to 32.
        side = check.positive_int(raw.get("image_side", DEFAULT_IMAGE_SIDE if size == 28 else size),
                                  f"{path}.image_side")
        name = check.string(raw.get("name", flag), f"{path}.name")
        root = _resolve(root_text, base)
        if check_files and not root.is_dir():
            raise check.fail(f"{path}.root", f"names a missing dataset folder: {root}")
        calibration = _calibration_size(raw, path, check)
        written = {"kind": kind, "name": name, "flag": flag, "root": root_text, "size": size, "image_side": side,
                   "calibration_size": calibration}
        return DatasetSpec(kind, name, {"flag": flag, "root": root, "size": size, "image_side": side,
                                        "calibration_size": calibration}, written)
    raw = check.mapping(entry, path, ("kind", "name", "csv", "domain", "task", "label_columns", "image_side", "colour",
                                      "calibration_size"), ("csv", "name"))
    csv_text = check.string(raw["csv"], f"{path}.csv")
    name = check.string(raw["name"], f"{path}.name")
    domain = check.string(raw.get("domain", "unknown"), f"{path}.domain")
    task = None if raw.get("task") is None else check.string(raw["task"], f"{path}.task", MANIFEST_TASKS)
    label_columns = None
    if raw.get("label_columns") is not None:
        items = check.sequence(raw["label_columns"], f"{path}.label_columns")
        label_columns = [check.string(c, f"{path}.label_columns[{j}]") for j, c in enumerate(items)]
    side = check.positive_int(raw.get("image_side", DEFAULT_IMAGE_SIDE), f"{path}.image_side")
    colour = check.string(raw.get("colour", "auto"), f"{path}.colour", MANIFEST_COLOURS)
    csv = _resolve(csv_text, base)
    if check_files and not csv.is_file():
        raise check.fail(f"{path}.csv", f"names a missing manifest file: {csv}")
    calibration = _calibration_size(raw, path, check)
    written = {"kind": kind, "name": name, "csv": csv_text, "domain": domain, "task": task,
               "label_columns": label_columns, "image_side": side, "colour": colour, "calibration_size": calibration}
    options = {"csv": csv, "domain": domain, "task": task, "label_columns": label_columns, "image_side": side,
               "colour": colour, "calibration_size": calibration}
    return DatasetSpec(kind, name, options, written)


def _families(value: Any, path: str, check: _Checker) -> str | dict[str, str | tuple[str, ...]]:
    def one(v: Any, p: str) -> str | tuple[str, ...]:
        if v == ALL:
            return ALL
        items = check.sequence(v, p, allow_empty=True)
        names = tuple(check.string(x, f"{p}[{j}]") for j, x in enumerate(items))
        check.unique(names, p)
        return names

    if isinstance(value, Mapping):
        out: dict[str, str | tuple[str, ...]] = {}
        for domain, v in value.items():
            if not isinstance(domain, str) or not domain:
                raise check.fail(path, "keys must be domain names (or '*')")
            out[domain] = one(v, f"{path}.{domain}")
        if not out:
            raise check.fail(path, "must not be an empty mapping (use [] for no corruptions)")
        return out
    if isinstance(value, str) and value != ALL:
        raise check.fail(path, f"must be 'all', a list of family names or a mapping domain -> families, got {value!r}")
    families = one(value, path)
    return families if families == ALL else {"*": families}


def validate_config(raw: Any, source: str = "config", base: Path | None = None, check_files: bool = True) -> Profile:
    """Validate a parsed config mapping and return the :class:`Profile`.

    Parameters
    ----------
    raw : mapping
        The parsed YAML document.
    source : str
        Name used in error messages (the file path).
    base : pathlib.Path, optional
        Folder against which relative paths resolve (the config file's folder).
    check_files : bool
        Whether to check that the standard, MedMNIST folders and manifests exist
        (and read the standard). Always true for runs.

    Returns
    -------
    Profile

    Raises
    ------
    ConfigError
        Naming the file and key path at fault.
    """
    check = _Checker(source)
    base = Path.cwd() if base is None else base
    top = check.mapping(raw, "", TOP_KEYS, ("name", "standard", "datasets", "encoders"))
    name = check.string(top["name"], "name")
    if not name.replace("-", "").replace("_", "").isalnum():
        raise check.fail("name", f"must hold letters, digits, '-' and '_' only, got {name!r}")
    description = top.get("description", "")
    if not isinstance(description, str):
        raise check.fail("description", "must be a string")

    standard_text = check.string(top["standard"], "standard")
    standard_path = _resolve_standard(standard_text, base)
    label_fractions: tuple[float, ...] = ()
    ece_bins = 0
    standard_version = ""
    if check_files:
        if not standard_path.is_file():
            raise check.fail("standard", f"names a missing reference standard file: {standard_path}")
        from crsbench_lib.scoring.standard import load_standard

        try:
            standard = load_standard(standard_path)
        except CRSBenchError as exc:
            raise check.fail("standard", f"is not a valid reference standard ({exc})") from exc
        label_fractions = tuple(float(f) for f in standard.label_fractions)
        ece_bins = int(standard.ece_bins)
        standard_version = str(standard.version)

    entries = check.sequence(top["datasets"], "datasets")
    datasets = tuple(_dataset_spec(e, i, base, check, check_files) for i, e in enumerate(entries))
    check.unique([d.name for d in datasets], "datasets")  # message names the position of the repeat

    encoders_raw = check.sequence(top["encoders"], "encoders")
    encoders = tuple(check.string(e, f"encoders[{i}]") for i, e in enumerate(encoders_raw))
    check.unique(encoders, "encoders")
    if check_files:
        _check_encoder_names(list(encoders), check)

    seeds_raw = check.sequence(top.get("seeds", list(DEFAULT_SEEDS)), "seeds")
    seeds = tuple(check.integer(s, f"seeds[{i}]", 0, "a non-negative integer") for i, s in enumerate(seeds_raw))
    check.unique(seeds, "seeds")

    corr = {**DEFAULT_CORRUPTIONS, **check.mapping(top.get("corruptions", {}), "corruptions",
                                                   tuple(DEFAULT_CORRUPTIONS))}
    families = _families(corr["families"], "corruptions.families", check)
    sev_raw = check.sequence(corr["severities"], "corruptions.severities")
    severities = tuple(check.integer(s, f"corruptions.severities[{i}]", 1, "an integer in 1..5")
                       for i, s in enumerate(sev_raw))
    for i, s in enumerate(severities):
        if s not in SEVERITIES:
            raise check.fail(f"corruptions.severities[{i}]", "must be an integer in 1..5")
    check.unique(severities, "corruptions.severities")
    n_images = None if corr["n_images"] is None else check.positive_int(corr["n_images"], "corruptions.n_images")
    corruption_seed = check.integer(corr["seed"], "corruptions.seed", 0, "a non-negative integer")
    corruptions = CorruptionSpec(families, tuple(sorted(severities)), n_images, corruption_seed)

    arms_raw = check.sequence(top.get("arms", ["frozen"]), "arms")
    arms = tuple(check.string(a, f"arms[{i}]", ARMS) for i, a in enumerate(arms_raw))
    check.unique(arms, "arms")

    probe_raw = {**DEFAULT_PROBE, **check.mapping(top.get("probe", {}), "probe", tuple(DEFAULT_PROBE))}
    c_raw = check.sequence(probe_raw["C"], "probe.C")
    c_grid = tuple(check.number(c, f"probe.C[{i}]", positive=True) for i, c in enumerate(c_raw))
    check.unique(c_grid, "probe.C")
    cal_raw = check.sequence(probe_raw["calibrators"], "probe.calibrators", allow_empty=True)
    calibrators = tuple(check.string(c, f"probe.calibrators[{i}]", CALIBRATORS) for i, c in enumerate(cal_raw))
    check.unique(calibrators, "probe.calibrators")
    probe = ProbeSpec(
        C=c_grid,
        max_iter=check.positive_int(probe_raw["max_iter"], "probe.max_iter"),
        tol=check.number(probe_raw["tol"], "probe.tol", positive=True),
        val_fraction_policy=check.string(probe_raw["val_fraction_policy"], "probe.val_fraction_policy",
                                         VAL_FRACTION_POLICIES),
        calibrators=calibrators,
        c_rule=check.string(probe_raw["c_rule"], "probe.c_rule", C_RULES),
    )

    lora_raw = {**DEFAULT_LORA, **check.mapping(top.get("lora", {}), "lora", tuple(DEFAULT_LORA))}
    lora_encoders: str | tuple[str, ...]
    if lora_raw["encoders"] == "neural":
        lora_encoders = "neural"
    else:
        items = check.sequence(lora_raw["encoders"], "lora.encoders")
        lora_encoders = tuple(check.string(e, f"lora.encoders[{i}]") for i, e in enumerate(items))
        check.unique(lora_encoders, "lora.encoders")
        for i, e in enumerate(lora_encoders):
            if e not in encoders:
                raise check.fail(f"lora.encoders[{i}]", f"names {e!r}, which is not among the profile's encoders")
    lora = LoraSpec(
        encoders=lora_encoders,
        rank=check.positive_int(lora_raw["rank"], "lora.rank"),
        alpha=check.number(lora_raw["alpha"], "lora.alpha", positive=True),
        dropout=check.number(lora_raw["dropout"], "lora.dropout", nonneg=True, below_one=True),
        epochs=check.positive_int(lora_raw["epochs"], "lora.epochs"),
        patience=check.positive_int(lora_raw["patience"], "lora.patience"),
        lr=check.number(lora_raw["lr"], "lora.lr", positive=True),
        weight_decay=check.number(lora_raw["weight_decay"], "lora.weight_decay", nonneg=True),
        batch_size=check.positive_int(lora_raw["batch_size"], "lora.batch_size"),
        max_train=None if lora_raw["max_train"] is None else check.positive_int(lora_raw["max_train"], "lora.max_train"),
    )

    emb_raw = {**DEFAULT_EMBEDDING, **check.mapping(top.get("embedding", {}), "embedding", tuple(DEFAULT_EMBEDDING))}
    embedding_batch_size = check.positive_int(emb_raw["batch_size"], "embedding.batch_size")
    device = check.string(emb_raw["device"], "embedding.device")
    amp = check.string(emb_raw["amp"], "embedding.amp", AMP_CHOICES)

    config: dict[str, Any] = {
        "name": name,
        "description": description,
        "standard": {"label_fractions": list(label_fractions), "ece_bins": ece_bins},
        "datasets": [dict(d.written) for d in datasets],
        "encoders": list(encoders),
        "seeds": list(seeds),
        "corruptions": {
            "families": families if isinstance(families, str) else {k: v if isinstance(v, str) else list(v)
                                                                     for k, v in families.items()},
            "severities": list(corruptions.severities),
            "n_images": n_images,
            "seed": corruption_seed,
        },
        "arms": list(arms),
        "probe": {
            "C": list(c_grid),
            "max_iter": probe.max_iter,
            "tol": probe.tol,
            "val_fraction_policy": probe.val_fraction_policy,
            "calibrators": list(calibrators),
            "c_rule": probe.c_rule,
        },
        "lora": {**{k: getattr(lora, k) for k in DEFAULT_LORA},
                 "encoders": lora_encoders if isinstance(lora_encoders, str) else list(lora_encoders)},
        "embedding": {"batch_size": embedding_batch_size, "device": device, "amp": amp},
    }
    return Profile(
        name=name,
        source=None,
        standard_path=standard_path,
        standard_version=standard_version,
        label_fractions=label_fractions,
        ece_bins=ece_bins,
        datasets=datasets,
        encoders=encoders,
        seeds=seeds,
        corruptions=corruptions,
        arms=arms,
        probe=probe,
        lora=lora,
        embedding_batch_size=embedding_batch_size,
        config=config,
        config_hash=sha256_of(config),
    )


def profile_path(name_or_path: str | os.PathLike[str]) -> Path:
    """The file of a shipped profile name (``quick``) or the given path.

    Raises
    ------
    ConfigError
        If no such profile or file exists.
    """
    text = os.fspath(name_or_path)
    candidate = Path(text)
    looks_like_path = candidate.suffix in (".yaml", ".yml") or "/" in text or os.sep in text
    if looks_like_path:
        if not candidate.is_file():
            raise ConfigError(f"{text}: no such config file")
        return candidate
    shipped = configs_dir() / f"{text}.yaml"
    if not shipped.is_file():
        names = sorted(p.stem for p in configs_dir().glob("*.yaml"))
        raise ConfigError(f"unknown profile {text!r} (shipped profiles: {', '.join(names) or 'none'})")
    return shipped


def load_profile(name_or_path: str | os.PathLike[str], check_files: bool = True) -> Profile:
    """Load and validate a profile by shipped name (``quick``) or file path.

    Parameters
    ----------
    name_or_path : str or path-like
        ``quick``, ``default``, ``paper`` or a path to a ``.yaml`` file.
    check_files : bool
        Check that files the profile names exist (see :func:`validate_config`).

    Returns
    -------
    Profile

    Raises
    ------
    ConfigError
        If the file is missing, is not YAML, or any key is unknown or invalid;
        the message names the file and the key path.
    """
    path = profile_path(name_or_path)
    try:
        text = path.read_text(encoding="utf-8")
        raw = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config ({exc})") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}: not valid YAML{where}") from exc
    if raw is None:
        raise ConfigError(f"{path}: the config file is empty")
    profile = validate_config(raw, source=str(path), base=path.resolve().parent, check_files=check_files)
    return _with_source(profile, path.resolve())


def _with_source(profile: Profile, source: Path) -> Profile:
    from dataclasses import replace

    return replace(profile, source=source)
