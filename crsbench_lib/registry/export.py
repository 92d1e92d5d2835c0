"""Exporting the registry's entries as CSV or JSON (floats written exactly)."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pandas as pd

from crsbench_lib.atomic import atomic_write_text
from crsbench_lib.errors import RegistryError
from crsbench_lib.registry.chain import stored_registry_json
from crsbench_lib.registry.store import Registry

EXPORT_FORMATS: tuple[str, ...] = ("csv", "json")


def export_table(registry: Registry, *, current_only: bool = False) -> pd.DataFrame:
    """Entries with their standard's content hash and provenance (JSON text).

    Parameters
    ----------
    registry : Registry
    current_only : bool
        Leave out superseded entries (default: every entry, the full history).
    """
    frame = registry.entries(current_only=current_only)
    standards = registry.standards().set_index("version")["content_hash"]
    frame.insert(frame.columns.get_loc("standard_version") + 1, "standard_content_hash",
                 frame["standard_version"].map(standards))
    provenance = {
        int(r[0]): r[1] for r in registry.connection.execute("SELECT id, provenance FROM entries")
    }
    frame["provenance"] = [provenance[int(i)] for i in frame["entry_id"]]
    return frame


def export_text(registry: Registry, fmt: str, *, current_only: bool = False) -> str:
    """The export as text.

    Parameters
    ----------
    registry : Registry
    fmt : {"csv", "json"}
        CSV: one row per entry (floats at full precision). JSON: an object with
        the head hash of the log and the list of entries (provenance parsed).
    current_only : bool
        Leave out superseded entries.

    Raises
    ------
    RegistryError
        On an unknown format.
    """
    if fmt not in EXPORT_FORMATS:
        raise RegistryError(f"unknown export format '{fmt}' (expected one of {', '.join(EXPORT_FORMATS)})")
    frame = export_table(registry, current_only=current_only)
    if fmt == "csv":
        buffer = io.StringIO()
        frame.to_csv(buffer, index=False, float_format=None, lineterminator="\n")
        return buffer.getvalue()
    records = []
    for record in frame.to_dict("records"):
        clean = {}
        for key, value in record.items():
            if value is pd.NA:
                value = None
            elif hasattr(value, "item"):
                value = value.item()
            clean[key] = value
        clean["provenance"] = json.loads(clean["provenance"])
        records.append(clean)
    return stored_registry_json({"registry": str(registry.path), "head_hash": registry.head_hash(), "entries": records}) + "\n"


def export_registry(
    registry: Registry, fmt: str, out: str | os.PathLike[str] | None = None, *, current_only: bool = False
) -> str | Path:
    """Export to a file (atomically) when ``out`` is given, else return the text."""
    text = export_text(registry, fmt, current_only=current_only)
    if out is None:
        return text
    destination = Path(out)
    atomic_write_text(destination, text)
    return destination
