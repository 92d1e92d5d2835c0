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

Downloads happen only when asked: the top-level key ``allow_download: true``
(or ``crsbench run --allow-download``) lets MedMNIST files and hub encoder
weights that are absent be fetched. It is not part of the config hash, since
a fetched file is checked by its content hash wherever it came from. Likewise
``embedding.device: auto`` (the default) picks CUDA where torch has it; a
device that this torch lacks is refused when the profile is loaded.

Encoders are a list of names or the name of a zoo group
(:data:`~crsbench_lib.encoders.zoo.ZOO_GROUPS`: ``zoo``, ``handcrafted``,
``neural``, ``pretrained``), for the top-level ``encoders`` key and for
``lora.encoders`` alike (:func:`encoder_names`). A group stands for its names in
zoo order and the config hash is taken over the resolved names, so
``encoders: zoo`` and the zoo's twenty names listed in zoo order hash alike. One
word keeps its older meaning under ``lora.encoders``: ``neural`` (the default)
there selects every encoder *of the profile* that has a torch module, hub
models included, and is hashed as written.

The *config hash* is the SHA-256 of the canonical JSON (sorted keys, no
whitespace) of the validated, default-filled config, with the standard's label
fractions and ECE bins in place of its path, so that moving a file does not
change the hash while changing a fact does.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from crsbench_lib.cohort.corruptions import CORRUPTION_LAYOUTS
from crsbench_lib.cohort.datasets import DEFAULT_SIZES as DEFAULT_PHANTOM_SIZES
from crsbench_lib.data.medmnist import DOWNLOAD_HINT, NAMING_RULE, medmnist_path
from crsbench_lib.data.medmnist import FLAGS as MEDMNIST_FLAGS
from crsbench_lib.data.medmnist import SIZES as MEDMNIST_SIZES
from crsbench_lib.encoders.zoo import DEFAULT_ZOO, FILE_NOT_ADAPTABLE, FILE_PREFIX, MODEL_FILE_FORMATS, ZOO_GROUPS, file_spec
from crsbench_lib.errors import ConfigError, CRSBenchError, ProbeSettingError
from crsbench_lib.evaluation.cell import ProbeConfig
from crsbench_lib.paths import configs_dir, resolve_against, shipped_profiles, standards_dir
from crsbench_lib.results.schema import ARMS, SEVERITIES, TASKS
from crsbench_lib.runner.profile import (
    ALL,
    AMP_CHOICES,
    DATASET_KINDS,
    DEFAULT_CORRUPTIONS,
    DEFAULT_EMBEDDING,
    DEFAULT_IMAGE_SIDE,
    DEFAULT_LORA,
    LR_SCHEDULES,
    DEFAULT_PROBE,
    DEFAULT_SEEDS,
    LORA_NEURAL,
    MANIFEST_COLOURS,
    SPLIT_SIZE_KEYS,
    TOP_KEYS,
    CorruptionSpec,
    DatasetSpec,
    EmbeddingSpec,
    EncoderFileSpec,
    LoraSpec,
    Profile,
)
from crsbench_lib.standard import load_standard, template_standard_path


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

    def number(self, value: Any, path: str, positive: bool = False, nonneg: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.fail(path, "must be a finite number")
        if positive and value <= 0:
            raise self.fail(path, "must be a positive number")
        if nonneg and value < 0:
            raise self.fail(path, "must be a non-negative number")
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
# Loading
# ---------------------------------------------------------------------------


def _resolve(path_text: str, base: Path) -> Path:
    return resolve_against(path_text, base)


#: The ``standard`` value (and the default) that scores a run against a standard frozen from itself.
OWN_STANDARD = "own"


def _resolve_standard(text: str, base: Path) -> Path:
    """A bare name (no folder) is looked up in ``standards/``; a path is relative to the config file."""
    if "/" not in text and os.sep not in text:
        name = text if text.endswith((".yaml", ".yml")) else f"{text}.yaml"
        return standards_dir() / name
    return _resolve(text, base)


def _check_encoder_names(names: list[str], check: _Checker, files: Mapping[str, EncoderFileSpec] | None = None) -> None:
    """Encoder names must be registered zoo names or hub ids (``timm:``, ``open_clip:``, ``hf:``), or model files."""
    from crsbench_lib.encoders.registry import HUB_PREFIXES, available_encoders, hub_prefix

    files = files or {}
    local = [(i, n) for i, n in enumerate(names) if hub_prefix(n) is None and n not in files]
    known = set(available_encoders())
    for i, name in local:
        if name not in known:
            hint = f"; a group is written alone, not in a list: encoders: {name}" if name in ZOO_GROUPS else ""
            raise check.fail(
                f"encoders[{i}]",
                f"names unknown encoder {name!r} (known: {', '.join(sorted(known))}; hub ids start with "
                f"{', '.join(p + ':' for p in HUB_PREFIXES)}; model files with {FILE_PREFIX}:{hint})",
            )
    for i, name in enumerate(names):
        if hub_prefix(name) is not None and not name.partition(":")[2]:
            raise check.fail(f"encoders[{i}]", f"is a hub prefix without a model id: {name!r}")


def _calibration_size(raw: Mapping[str, Any], path: str, check: _Checker) -> int | None:
    """A real dataset's calibration-split size (None: as large as its source validation split)."""
    value = raw.get("calibration_size")
    return None if value is None else check.positive_int(value, f"{path}.calibration_size")


def _corruption_domain(value: Any, path: str, check: _Checker) -> str:
    """A ``domain`` key: one of the domains that have a corruption catalogue."""
    from crsbench_lib.cohort import CORRUPTION_DOMAINS

    return check.string(value, path, CORRUPTION_DOMAINS)


def _check_flag_domain(flag: str, path: str, check: _Checker) -> None:
    """Without a ``domain`` key, the flag must be a standard one of a domain with corruptions."""
    from crsbench_lib.cohort import CORRUPTION_DOMAINS

    info = MEDMNIST_FLAGS.get(flag)
    if info is None:
        why = f"flag {flag!r} is not a standard MedMNIST flag"
    elif info.domain not in CORRUPTION_DOMAINS:
        why = f"flag {flag!r} is {info.domain}, which has no corruption catalogue"
    else:
        return
    raise check.fail(
        f"{path}.domain",
        f"is required: {why}; set it to {', '.join(CORRUPTION_DOMAINS)} (it selects the corruption families)",
    )


def _medmnist_file(flag: str, root: Path, size: int, path: str, check: _Checker, allow_download: bool) -> Path:
    """The file a MedMNIST entry reads, checked before any work (unless it may be downloaded)."""
    try:
        file = medmnist_path(flag, root, size)
    except CRSBenchError as exc:
        raise check.fail(f"{path}.root", str(exc)) from exc
    if not file.is_file() and not allow_download:
        raise check.fail(
            f"{path}.root",
            f"has no MedMNIST file for flag {flag!r}: expected {file} ({NAMING_RULE}); {DOWNLOAD_HINT}",
        )
    return file


def _dataset_spec(
    entry: Any, i: int, base: Path, check: _Checker, check_files: bool, allow_download: bool = False
) -> DatasetSpec:
    path = f"datasets[{i}]"
    if not isinstance(entry, Mapping):
        raise check.fail(path, "must be a mapping with a 'kind'")
    kind = check.string(entry.get("kind"), f"{path}.kind", DATASET_KINDS)
    if kind == "phantom":
        from crsbench_lib.cohort import PHANTOM_DATASETS

        raw = check.mapping(entry, path, ("kind", "name", "sizes", "image_side", "data_seed", "shift_parts", "cues"),
                            ("name",))
        name = check.string(raw["name"], f"{path}.name", tuple(PHANTOM_DATASETS))
        sizes_raw = check.mapping(raw.get("sizes", dict(DEFAULT_PHANTOM_SIZES)), f"{path}.sizes", SPLIT_SIZE_KEYS,
                                  ("train", "val", "test"))
        sizes = {k: check.positive_int(v, f"{path}.sizes.{k}") for k, v in sizes_raw.items()}
        # The calibration split is as large as the validation split unless the profile says otherwise.
        sizes.setdefault("calibration", sizes["val"])
        image_side = check.positive_int(raw.get("image_side", DEFAULT_IMAGE_SIDE), f"{path}.image_side")
        data_seed = check.integer(raw.get("data_seed", 0), f"{path}.data_seed", 0, "a non-negative integer")
        written = {"kind": kind, "name": name, "sizes": sizes, "image_side": image_side, "data_seed": data_seed}
        # World v4's switches (crsbench_lib.cohort.shortcuts): which parts of site B's difference apply and
        # whether the shortcut cue is drawn. Written into the config only when they differ from the world's.
        from crsbench_lib.cohort.shortcuts import SHIFT_PARTS, check_shift_parts
        from crsbench_lib.errors import DataError

        parts_raw = raw.get("shift_parts", list(SHIFT_PARTS))
        if isinstance(parts_raw, str) or not isinstance(parts_raw, (list, tuple)):
            raise check.fail(f"{path}.shift_parts", f"must be a list of some of {', '.join(SHIFT_PARTS)}, got {parts_raw!r}")
        try:
            shift_parts = list(check_shift_parts(parts_raw))
        except DataError as exc:
            raise check.fail(f"{path}.shift_parts", str(exc).removeprefix("shift parts: ")) from None
        cues = raw.get("cues", True)
        if not isinstance(cues, bool):
            raise check.fail(f"{path}.cues", f"must be true or false, got {cues!r}")
        options = {**written, "shift_parts": shift_parts, "cues": cues}
        if tuple(shift_parts) != SHIFT_PARTS:
            written["shift_parts"] = shift_parts
        if not cues:
            written["cues"] = False
        return DatasetSpec(kind, name, options, written)
    if kind == "medmnist":
        raw = check.mapping(entry, path, ("kind", "name", "flag", "root", "size", "image_side", "domain",
                                          "calibration_size"),
                            ("flag", "root"))
        flag = check.string(raw["flag"], f"{path}.flag")
        domain = None if raw.get("domain") is None else _corruption_domain(raw["domain"], f"{path}.domain", check)
        if domain is None:
            _check_flag_domain(flag, path, check)
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
        if check_files:
            root = _medmnist_file(flag, root, size, path, check, allow_download).parent
        calibration = _calibration_size(raw, path, check)
        written = {"kind": kind, "name": name, "flag": flag, "root": root_text, "size": size, "image_side": side,
                   "calibration_size": calibration}
        if domain is not None:  # written only when set, so profiles without it keep their hash
            written["domain"] = domain
        options = {"flag": flag, "root": root, "size": size, "image_side": side, "domain": domain,
                   "download": allow_download, "calibration_size": calibration}
        return DatasetSpec(kind, name, options, written)
    raw = check.mapping(entry, path, ("kind", "name", "csv", "domain", "task", "label_columns", "image_side", "colour",
                                      "calibration_size"), ("csv", "name"))
    csv_text = check.string(raw["csv"], f"{path}.csv")
    name = check.string(raw["name"], f"{path}.name")
    if raw.get("domain") is None:
        from crsbench_lib.cohort import CORRUPTION_DOMAINS

        raise check.fail(
            f"{path}.domain",
            f"is required for a manifest: set it to {', '.join(CORRUPTION_DOMAINS)} (it selects the corruption families)",
        )
    domain = _corruption_domain(raw["domain"], f"{path}.domain", check)
    task = None if raw.get("task") is None else check.string(raw["task"], f"{path}.task", TASKS)
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


def _standard_section(
    top: Mapping[str, Any], base: Path, check: _Checker, check_files: bool
) -> tuple[Path, tuple[float, ...], int, str]:
    """The standard's path, and (when files are checked) its label fractions, ECE bins and version.

    No ``standard`` key, or ``standard: own``, takes the shipped template: the
    run uses its label fractions and ECE bins, and the book and ``crsbench run``
    score against a standard frozen from the run itself
    (:func:`crsbench_lib.scoring.own_standard.freeze_own_standard`).
    """
    named = check.string(top.get("standard", OWN_STANDARD), "standard")
    standard_path = template_standard_path() if named == OWN_STANDARD else _resolve_standard(named, base)
    if not check_files:
        return standard_path, (), 0, ""
    if not standard_path.is_file():
        raise check.fail("standard", f"names a missing reference standard file: {standard_path}")
    try:
        standard = load_standard(standard_path)
    except CRSBenchError as exc:
        raise check.fail("standard", f"is not a valid reference standard ({exc})") from exc
    fractions = tuple(float(f) for f in standard.label_fractions)
    return standard_path, fractions, int(standard.ece_bins), str(standard.version)


def encoder_names(value: Any, key: str, source: str = "config") -> tuple[str, ...]:
    """The encoder names an ``encoders`` key stands for: a list of names, or a zoo group.

    A string is the name of a group of :data:`~crsbench_lib.encoders.zoo.ZOO_GROUPS`
    and stands for its names in zoo order; a list is encoder names, taken as
    written (a group name inside a list is not expanded: write a group alone).
    Names are checked against the registry by the caller, which knows whether
    entry points and hub ids may be looked up.

    Parameters
    ----------
    value : str or list of str
        The key's value as parsed from the profile file.
    key : str
        The key path, for messages (``encoders``, ``lora.encoders``).
    source : str
        The file, for messages.

    Returns
    -------
    tuple of str
        Unique, non-empty names, in the list's or the zoo's order.

    Raises
    ------
    ConfigError
        On an unknown group, an empty or non-list value, a non-string or a repeated name.

    Examples
    --------
    >>> encoder_names("handcrafted", "encoders")[:3]
    ('pixels', 'pca', 'hog')
    >>> encoder_names(["hog", "pixels"], "encoders")
    ('hog', 'pixels')
    """
    return _encoder_names(value, key, _Checker(source))


def _encoder_names(value: Any, key: str, check: _Checker) -> tuple[str, ...]:
    if isinstance(value, str):
        if value not in ZOO_GROUPS:
            raise check.fail(key, f"names unknown encoder group {value!r} (expected one of {', '.join(ZOO_GROUPS)}, "
                                  "or a list of encoder names)")
        return ZOO_GROUPS[value]
    items = check.sequence(value, key)
    names = tuple(check.string(e, f"{key}[{i}]") for i, e in enumerate(items))
    check.unique(names, key)
    return names


#: Keys of the mapping form of a model-file encoder entry.
FILE_ENTRY_KEYS: tuple[str, ...] = ("name", "file", "image_side")


def _model_file(text: str, where: str, base: Path, check: _Checker, check_files: bool) -> Path:
    """A model file's path as written: a known suffix, resolved against the profile's folder, present when checked."""
    if Path(text).suffix.lower() not in MODEL_FILE_FORMATS:
        raise check.fail(where, f"must name a model file ending in {', '.join(MODEL_FILE_FORMATS)}, got {text!r}")
    path = _resolve(text, base)
    if check_files and not path.is_file():
        raise check.fail(where, f"names a missing model file: {path}")
    return path


def _file_entry(entry: Any, i: int, base: Path, check: _Checker, check_files: bool) -> EncoderFileSpec | None:
    """A model-file encoder (``file:<path>`` or ``{name, file, image_side}``), None for a name of another kind."""
    where = f"encoders[{i}]"
    if isinstance(entry, Mapping):
        raw = check.mapping(entry, where, FILE_ENTRY_KEYS, ("name", "file"))
        name = check.string(raw["name"], f"{where}.name")
        if ":" in name or name in DEFAULT_ZOO:
            raise check.fail(f"{where}.name", f"must be a new name without ':' (not a zoo name or a hub id), got {name!r}")
        text = check.string(raw["file"], f"{where}.file")
        side = raw.get("image_side")
        side = None if side is None else check.positive_int(side, f"{where}.image_side")
        path = _model_file(text, f"{where}.file", base, check, check_files)
        return EncoderFileSpec(name, path, side, {"name": name, "file": text, "image_side": side})
    name = check.string(entry, where)
    text = file_spec(name)
    if text is None:
        return None
    if not text:
        raise check.fail(where, f"is {FILE_PREFIX}: without a path, e.g. {FILE_PREFIX}:models/mine.pt2")
    return EncoderFileSpec(name, _model_file(text, where, base, check, check_files), None, name)


def _encoders_section(
    value: Any, check: _Checker, check_files: bool, base: Path
) -> tuple[tuple[str, ...], dict[str, EncoderFileSpec]]:
    """The profile's encoder names, and the model-file encoders among them by name."""
    if isinstance(value, str):
        return _encoder_names(value, "encoders", check), {}
    items = check.sequence(value, "encoders")
    files: dict[str, EncoderFileSpec] = {}
    names: list[str] = []
    for i, entry in enumerate(items):
        spec = _file_entry(entry, i, base, check, check_files)
        names.append(entry if spec is None else spec.name)
        if spec is not None:
            files.setdefault(spec.name, spec)
    check.unique(names, "encoders")
    encoders = tuple(names)
    if check_files:
        _check_encoder_names(list(encoders), check, files)
    return encoders, files


def _seeds_section(value: Any, check: _Checker) -> tuple[int, ...]:
    items = check.sequence(value, "seeds")
    seeds = tuple(check.integer(s, f"seeds[{i}]", 0, "a non-negative integer") for i, s in enumerate(items))
    check.unique(seeds, "seeds")
    return seeds


def _corruptions_section(value: Any, check: _Checker) -> CorruptionSpec:
    corr = {**DEFAULT_CORRUPTIONS, **check.mapping(value, "corruptions", tuple(DEFAULT_CORRUPTIONS))}
    families = _families(corr["families"], "corruptions.families", check)
    sev_raw = check.sequence(corr["severities"], "corruptions.severities")
    severities = tuple(check.integer(s, f"corruptions.severities[{i}]", 1, "an integer in 1..5")
                       for i, s in enumerate(sev_raw))
    for i, s in enumerate(severities):
        if s not in SEVERITIES:
            raise check.fail(f"corruptions.severities[{i}]", "must be an integer in 1..5")
    check.unique(severities, "corruptions.severities")
    n_images = None if corr["n_images"] is None else check.positive_int(corr["n_images"], "corruptions.n_images")
    seed = check.integer(corr["seed"], "corruptions.seed", 0, "a non-negative integer")
    layout = check.string(corr["layout"], "corruptions.layout", CORRUPTION_LAYOUTS)
    return CorruptionSpec(families, tuple(sorted(severities)), n_images, seed, layout)


def _arms_section(value: Any, check: _Checker) -> tuple[str, ...]:
    items = check.sequence(value, "arms")
    arms = tuple(check.string(a, f"arms[{i}]", ARMS) for i, a in enumerate(items))
    check.unique(arms, "arms")
    return arms


def _probe_section(value: Any, check: _Checker) -> ProbeConfig:
    """The probe settings, validated by :class:`ProbeConfig` (the one place), reported under the profile's key."""
    raw = {**DEFAULT_PROBE, **check.mapping(value, "probe", tuple(DEFAULT_PROBE))}
    try:
        return ProbeConfig.from_written(raw)
    except ProbeSettingError as exc:
        key = ProbeConfig.WRITTEN_KEYS.get(exc.field, exc.field)
        where = f"probe.{key}" if exc.index is None else f"probe.{key}[{exc.index}]"
        raise check.fail(where, exc.problem) from None


def _lora_section(
    value: Any, encoders: Sequence[str], check: _Checker, files: Mapping[str, EncoderFileSpec] | None = None
) -> LoraSpec:
    raw = {**DEFAULT_LORA, **check.mapping(value, "lora", tuple(DEFAULT_LORA))}
    lora_encoders: str | tuple[str, ...]
    if raw["encoders"] == LORA_NEURAL:
        # Not the zoo group: every encoder of the profile with a torch module, resolved by the grid.
        lora_encoders = LORA_NEURAL
    else:
        group = raw["encoders"] if isinstance(raw["encoders"], str) else None
        lora_encoders = _encoder_names(raw["encoders"], "lora.encoders", check)
        for i, e in enumerate(lora_encoders):
            if e not in encoders:
                where = f"lora.encoders[{i}]" if group is None else f"lora.encoders (group {group!r})"
                raise check.fail(where, f"names {e!r}, which is not among the profile's encoders")
            if files and e in files:
                raise check.fail(f"lora.encoders[{i}]", f"names {e!r}, a model file: {FILE_NOT_ADAPTABLE}; leave it out "
                                 f"of lora.encoders (the default, {LORA_NEURAL}, adapts only encoders that can be)")

    def optional_count(key: str) -> int | None:
        return None if raw[key] is None else check.positive_int(raw[key], f"lora.{key}")

    return LoraSpec(
        encoders=lora_encoders,
        rank=check.positive_int(raw["rank"], "lora.rank"),
        alpha=check.number(raw["alpha"], "lora.alpha", positive=True),
        dropout=_lora_dropout(raw["dropout"], check),
        blocks=_lora_blocks(raw["blocks"], check),
        max_steps=check.positive_int(raw["max_steps"], "lora.max_steps"),
        patience=check.positive_int(raw["patience"], "lora.patience"),
        min_improvement_se=check.number(raw["min_improvement_se"], "lora.min_improvement_se", nonneg=True),
        lr=_lora_rates(raw["lr"], check),
        lr_schedule=check.string(raw["lr_schedule"], "lora.lr_schedule", LR_SCHEDULES),
        warmup_steps=_warmup_steps(raw, check),
        weight_decay=check.number(raw["weight_decay"], "lora.weight_decay", nonneg=True),
        batch_size=check.positive_int(raw["batch_size"], "lora.batch_size"),
        max_train=optional_count("max_train"),
        min_val_labels=check.positive_int(raw["min_val_labels"], "lora.min_val_labels"),
    )


def _warmup_steps(raw: Mapping[str, Any], check: _Checker) -> int:
    """Warm-up steps: a non-negative integer below ``max_steps`` (the cosine needs steps left to decay over)."""
    value = raw["warmup_steps"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise check.fail("lora.warmup_steps", f"must be a non-negative integer, got {value!r}")
    if isinstance(raw["max_steps"], int) and value >= raw["max_steps"]:
        raise check.fail("lora.warmup_steps", f"must be below lora.max_steps ({raw['max_steps']}), got {value}")
    return value


def _lora_blocks(value: Any, check: _Checker) -> int | str:
    if value == "all":
        return "all"
    return check.positive_int(value, "lora.blocks")


def _lora_rates(value: Any, check: _Checker) -> float | dict[str, float]:
    """One learning rate, or one per encoder, zoo family or architecture name (``default``: any other)."""
    if not isinstance(value, dict):
        return check.number(value, "lora.lr", positive=True)
    if not value:
        raise check.fail("lora.lr", "must be a number or a mapping of encoder, family or architecture names to numbers, got {}")
    return {check.string(k, "lora.lr"): check.number(v, f"lora.lr.{k}", positive=True) for k, v in value.items()}


def _lora_dropout(value: Any, check: _Checker) -> float:
    # The encoder trains in eval mode, where an input dropout would be inactive
    # (it was, under peft), and the adapters are weight parametrizations, which
    # have no per-input dropout: only 0 is meaningful.
    dropout = check.number(value, "lora.dropout")
    if dropout != 0:
        raise check.fail("lora.dropout", f"must be 0 (adapter dropout is not supported), got {value}")
    return dropout


def _embedding_section(value: Any, check: _Checker, check_device: bool) -> EmbeddingSpec:
    raw = {**DEFAULT_EMBEDDING, **check.mapping(value, "embedding", tuple(DEFAULT_EMBEDDING))}
    spec = EmbeddingSpec(
        batch_size=check.positive_int(raw["batch_size"], "embedding.batch_size"),
        device=check.string(raw["device"], "embedding.device"),
        amp=check.string(raw["amp"], "embedding.amp", AMP_CHOICES),
    )
    if check_device:
        _check_device(spec, check)
    return spec


def _check_device(spec: EmbeddingSpec, check: _Checker) -> None:
    """Refuse a device this machine's torch lacks, before any work starts.

    ``cpu`` and ``auto`` (CUDA if torch has it, else CPU) always exist, so torch
    is imported only for other devices.
    """
    if spec.device in ("cpu", "auto"):
        return
    import torch

    kind = spec.device.split(":", 1)[0]
    try:
        torch.device(spec.device)
    except (RuntimeError, TypeError):
        raise check.fail("embedding.device", f"must be auto, cpu, cuda, cuda:N or mps, got {spec.device!r}") from None
    available = {"cuda": torch.cuda.is_available(), "mps": torch.backends.mps.is_available()}.get(kind, True)
    if not available:
        amp = f" (with embedding.amp: {spec.amp})" if spec.amp != "none" else ""
        raise check.fail(
            "embedding.device",
            f"is {spec.device!r}{amp}, but this torch ({torch.__version__}) has no {kind.upper()} device; "
            "set embedding.device: auto (or cpu) to run on what this machine has",
        )


def validate_config(
    raw: Any,
    source: str = "config",
    base: Path | None = None,
    check_files: bool = True,
    allow_download: bool | None = None,
) -> Profile:
    """Validate a parsed config mapping and return the :class:`Profile`.

    Each section is checked by its own function, in file order, so the first
    error met is the one reported.

    Parameters
    ----------
    raw : mapping
        The parsed YAML document.
    source : str
        Name used in error messages (the file path).
    base : pathlib.Path, optional
        Folder against which relative paths resolve (the config file's folder).
    check_files : bool
        Whether to check that the standard, MedMNIST files and manifests exist
        (and read the standard), and that the embedding device exists. Always
        true for runs.
    allow_download : bool, optional
        Overrides the file's ``allow_download`` key (``crsbench run
        --allow-download``); a MedMNIST file that may be downloaded need not exist.

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
    top = check.mapping(raw, "", TOP_KEYS, ("name", "datasets", "encoders"))
    name = check.string(top["name"], "name")
    if not name.replace("-", "").replace("_", "").isalnum():
        raise check.fail("name", f"must hold letters, digits, '-' and '_' only, got {name!r}")
    description = top.get("description", "")
    if not isinstance(description, str):
        raise check.fail("description", "must be a string")
    if allow_download is None:
        allow_download = top.get("allow_download", False)
        if not isinstance(allow_download, bool):
            raise check.fail("allow_download", "must be true or false")
    standard_path, label_fractions, ece_bins, standard_version = _standard_section(top, base, check, check_files)
    entries = check.sequence(top["datasets"], "datasets")
    datasets = tuple(_dataset_spec(e, i, base, check, check_files, allow_download) for i, e in enumerate(entries))
    check.unique([d.name for d in datasets], "datasets")  # message names the position of the repeat
    encoders, encoder_files = _encoders_section(top["encoders"], check, check_files, base)
    return Profile(
        name=name,
        source=None,
        standard_path=standard_path,
        standard_version=standard_version,
        label_fractions=label_fractions,
        ece_bins=ece_bins,
        datasets=datasets,
        encoders=encoders,
        seeds=_seeds_section(top.get("seeds", list(DEFAULT_SEEDS)), check),
        corruptions=_corruptions_section(top.get("corruptions", {}), check),
        arms=_arms_section(top.get("arms", ["frozen"]), check),
        probe=_probe_section(top.get("probe", {}), check),
        lora=_lora_section(top.get("lora", {}), encoders, check, encoder_files),
        embedding=_embedding_section(top.get("embedding", {}), check, check_files),
        description=description,
        allow_download=allow_download,
        encoder_files=encoder_files,
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
        raise ConfigError(f"unknown profile {text!r} (shipped profiles: {', '.join(shipped_profiles()) or 'none'})")
    return shipped


def load_profile(
    name_or_path: str | os.PathLike[str], check_files: bool = True, allow_download: bool | None = None
) -> Profile:
    """Load and validate a profile by shipped name (``quick``) or file path.

    Parameters
    ----------
    name_or_path : str or path-like
        ``quick``, ``default``, ``paper`` or a path to a ``.yaml`` file.
    check_files : bool
        Check that files the profile names exist (see :func:`validate_config`).
    allow_download : bool, optional
        Overrides the profile's ``allow_download`` key.

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
    profile = validate_config(raw, source=str(path), base=path.resolve().parent, check_files=check_files,
                              allow_download=allow_download)
    return _with_source(profile, path.resolve())


def _with_source(profile: Profile, source: Path) -> Profile:
    return replace(profile, source=source)
