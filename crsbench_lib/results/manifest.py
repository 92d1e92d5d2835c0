"""The run manifest's format, and its one reader.

The runner writes ``manifest.json`` beside ``results.parquet``
(:mod:`crsbench_lib.runner.manifest` builds what it records); the report,
the recompute command and the cohort pages read it back. Both sides meet
here: :func:`manifest_text` is the writer's serialisation and
:func:`read_manifest` the one reader, which validates the keys the readers
use once and returns a :class:`RunManifest`. Every key is optional (a table
copied with a hand-written manifest still reads); a key that is present with
the wrong shape is an error naming the file and the key.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.io import MANIFEST_FILE

#: The manifest's format id, written as its ``format`` key.
MANIFEST_FORMAT = "crsbench-run-manifest/1"
#: Kind of the datasets the phantom generators draw (the embedded cohort).
PHANTOM_KIND = "phantom"


@dataclass(frozen=True)
class RunManifest:
    """A validated run manifest.

    Attributes
    ----------
    path : pathlib.Path
        The file it was read from.
    body : Mapping
        The whole manifest (read-only), for the keys below and any other.
    config : Mapping or None
        The run's validated config; ``None`` if not recorded.
    datasets : tuple of Mapping
        ``config.datasets`` entries, each with ``name`` and ``kind``.
    cells : tuple of Mapping
        Per-cell entries (timings, keys, LoRA reports).
    """

    path: Path
    body: Mapping[str, Any]
    config: Mapping[str, Any] | None
    datasets: tuple[Mapping[str, Any], ...]
    cells: tuple[Mapping[str, Any], ...]

    @property
    def profile(self) -> str:
        """The profile's name ("" if not recorded)."""
        return str(self.body.get("profile", ""))

    @property
    def config_source(self) -> str | None:
        """The profile file the run read (``None`` if not recorded)."""
        return self.body.get("config_source")

    @property
    def config_hash(self) -> str:
        """The run's config hash ("" if not recorded)."""
        return str(self.body.get("config_hash", ""))

    @property
    def standard_path(self) -> str | None:
        """The reference standard's file (``None`` if not recorded)."""
        standard = self.body.get("standard")
        return str(standard["path"]) if isinstance(standard, Mapping) and "path" in standard else None

    @property
    def dataset_domains(self) -> dict[str, str]:
        """Dataset -> imaging domain, as the run resolved them."""
        return dict(self.body.get("dataset_domains") or {})

    @property
    def data_checks(self) -> dict[str, Mapping[str, Any]]:
        """Dataset -> its data checks (split summary, prevalence shift), for the datasets read from files."""
        extra = self.body.get("extra")
        return dict((extra or {}).get("data_checks") or {}) if isinstance(extra, Mapping) else {}

    @property
    def data_warnings(self) -> tuple[str, ...]:
        """The data checks' warnings (one line each), in dataset order."""
        return tuple(data_check_warnings(self.data_checks))

    @property
    def encoder_files(self) -> dict[str, Mapping[str, Any]]:
        """Model-file encoder -> its card (file, format, sha256, width, parameters, side); empty without any."""
        files = self.body.get("encoder_files")
        return {str(k): v for k, v in files.items() if isinstance(v, Mapping)} if isinstance(files, Mapping) else {}

    @property
    def lora_not_adapted(self) -> dict[str, str]:
        """Encoder -> why the run's LoRA arm left it out (empty: no LoRA arm, or a run that did not record it)."""
        reasons = self.body.get("lora_not_adapted")
        return {str(k): str(v) for k, v in reasons.items()} if isinstance(reasons, Mapping) else {}

    @property
    def simulated(self) -> bool | None:
        """Whether every dataset is a phantom (``None``: the manifest records no datasets)."""
        if self.config is None or "datasets" not in self.config:
            return None
        return bool(self.datasets) and all(entry["kind"] == PHANTOM_KIND for entry in self.datasets)


def data_check_warnings(checks: Mapping[str, Any]) -> list[str]:
    """The warnings of a run's data checks (``extra["data_checks"]`` of a preparation or a manifest).

    Examples
    --------
    >>> data_check_warnings({"a": {"warning": None}, "b": {"warning": "dataset b: shift"}})
    ['dataset b: shift']
    """
    return [str(c["warning"]) for c in checks.values() if isinstance(c, Mapping) and c.get("warning")]


def manifest_text(content: Mapping[str, Any], package_version: str) -> str:
    """The manifest file's text: ``format`` and ``package_version`` first-class, key-sorted, indented JSON."""
    body = {"format": MANIFEST_FORMAT, "package_version": package_version, **content}
    return json.dumps(body, sort_keys=True, indent=2, default=str) + "\n"


def _mappings(value: object, path: Path, key: str) -> tuple[Mapping[str, Any], ...]:
    if not isinstance(value, list) or not all(isinstance(item, Mapping) for item in value):
        raise SchemaError(f"{path}: run manifest key '{key}' must be a list of objects")
    return tuple(MappingProxyType(dict(item)) for item in value)


def read_manifest(path: str | os.PathLike[str]) -> RunManifest:
    """Read and validate a run manifest (a file, or a run folder holding ``manifest.json``).

    Raises
    ------
    SchemaError
        One line naming the file: missing, not JSON, or a key of the wrong shape.
    """
    source = Path(path)
    if source.is_dir():
        source = source / MANIFEST_FILE
    try:
        body = json.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SchemaError(f"{source}: no run manifest (is {source.parent} a run folder?)") from None
    except (OSError, ValueError) as exc:
        raise SchemaError(f"{source}: unreadable run manifest ({type(exc).__name__}: {exc})") from None
    if not isinstance(body, dict):
        raise SchemaError(f"{source}: a run manifest must be a JSON object, got {type(body).__name__}")
    config = body.get("config")
    if config is not None and not isinstance(config, dict):
        raise SchemaError(f"{source}: run manifest key 'config' must be an object")
    datasets = _mappings(config.get("datasets", []), source, "config.datasets") if config is not None else ()
    for entry in datasets:
        if "name" not in entry or "kind" not in entry:
            raise SchemaError(f"{source}: run manifest key 'config.datasets' has an entry without 'name' and 'kind'")
    standard = body.get("standard")
    if standard is not None and not isinstance(standard, dict):
        raise SchemaError(f"{source}: run manifest key 'standard' must be an object")
    extra = body.get("extra")
    if extra is not None and (not isinstance(extra, dict) or not isinstance(extra.get("data_checks", {}), dict)):
        raise SchemaError(f"{source}: run manifest key 'extra.data_checks' must be an object")
    if not isinstance(body.get("dataset_domains", {}), (dict, type(None))):
        raise SchemaError(f"{source}: run manifest key 'dataset_domains' must be an object")
    cells = _mappings(body.get("cells", []), source, "cells")
    return RunManifest(path=source, body=MappingProxyType(body), config=config, datasets=datasets, cells=cells)


def manifest_beside(results_path: str | os.PathLike[str]) -> RunManifest | None:
    """The manifest of the run beside a results table; ``None`` when there is none or it is unreadable."""
    try:
        return read_manifest(Path(results_path).parent / MANIFEST_FILE)
    except SchemaError:
        return None


__all__ = ["MANIFEST_FORMAT", "PHANTOM_KIND", "RunManifest", "data_check_warnings", "manifest_beside", "manifest_text",
           "read_manifest"]
