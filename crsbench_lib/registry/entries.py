"""Computing an entry: one encoder's stored rows scored under one stored standard.

This is the one code path that both ``add`` and ``verify`` run, so that an
entry recomputed from its stored inputs is bit-identical to the entry as it was
published. An entry depends only on the encoder's own rows and the standard
(fixed anchors and panel, method section 5), never on other entries.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd
import yaml

from crsbench_lib.errors import ReferenceStandardError, RegistryError
from crsbench_lib.registry.chain import sha256_text, stored_registry_json
from crsbench_lib.registry.rows import decode_rows
from crsbench_lib.scoring import crs
from crsbench_lib.standard import AXES, ReferenceStandard, standard_from_dict

#: The score fields of an entry, in their column order in the database.
RAW_FIELDS: tuple[str, ...] = tuple(f"raw_{a}" for a in AXES)
NORM_FIELDS: tuple[str, ...] = tuple(f"norm_{a}" for a in AXES)
COMPONENT_FIELDS: tuple[str, ...] = ("dominance", "balance", "floor")
SCORE_FIELDS: tuple[str, ...] = RAW_FIELDS + NORM_FIELDS + COMPONENT_FIELDS + ("crs",)


def standard_from_text(text: str, source: str) -> ReferenceStandard:
    """Parse and validate a standard from its stored YAML text.

    Raises
    ------
    ReferenceStandardError
        If the text is not YAML or a field is invalid.
    """
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ReferenceStandardError(f"{source}: not a readable YAML text ({type(exc).__name__})") from exc
    return standard_from_dict(data, source=source)


def score_rows(rows: pd.DataFrame, standard: ReferenceStandard, arm: str) -> dict[str, float]:
    """The score fields of one encoder's rows under a standard.

    Parameters
    ----------
    rows : pandas.DataFrame
        Result rows of exactly one encoder (the stored rows of an entry).
    standard : ReferenceStandard
        A standard with a non-empty panel.
    arm : {"frozen", "lora"}
        The arm scored.

    Returns
    -------
    dict
        ``raw_D..raw_R``, ``norm_D..norm_R``, ``dominance``, ``balance``,
        ``floor``, ``crs`` as Python floats (a negative zero as 0.0).

    Raises
    ------
    SchemaError, ReferenceStandardError
        From the scoring core (rows lacking what an axis needs, ECE binning or
        label fractions that do not match the standard, an empty panel).
    """
    encoders = sorted(set(rows["encoder"].astype(str)))
    if len(encoders) != 1:
        raise RegistryError(f"an entry is computed from one encoder's rows, found {len(encoders)}")
    scored = crs.score_results(rows, standard, arm=arm)
    return _fields(scored.iloc[0])


def _fields(record: pd.Series) -> dict[str, float]:
    """The score fields of one row of the scoring core's ranked table."""
    out: dict[str, float] = {}
    for axis, normalised in zip(AXES, crs.NORMALISED_COLUMNS, strict=True):
        out[f"raw_{axis}"] = float(record[axis])
        out[f"norm_{axis}"] = float(record[normalised])
    for name in COMPONENT_FIELDS + ("crs",):
        out[name] = float(record[name])
    # SQLite stores -0.0 as 0.0; adding +0.0 maps -0.0 to 0.0 and leaves every other
    # double as it is, so a stored entry compares bit for bit with its recomputation.
    # (-0.0 arises when a raw value sits exactly on a lower-is-better worst anchor.)
    return {name: value + 0.0 for name, value in out.items()}


def recompute(blob: bytes, standard: ReferenceStandard, arm: str) -> dict[str, float]:
    """Score fields recomputed from a stored rows blob (what verify compares)."""
    # score_results validates the rows itself.
    return score_rows(decode_rows(blob, validate=False), standard, arm)


def recompute_many(blobs: Mapping[int, bytes], standard: ReferenceStandard, arm: str) -> dict[int, dict[str, float]]:
    """Score fields of many stored entries in one call of the scoring core.

    The entries' rows are stacked, each under a name of its own (two entries
    may share an encoder), and scored together. Every step of the scorer is
    per encoder (method section 5), so this equals :func:`recompute` entry
    by entry; ``verify`` still confirms any difference with :func:`recompute`,
    the path ``add`` ran.

    Parameters
    ----------
    blobs : mapping
        ``{entry_id: rows blob}``, all scored under ``standard`` in ``arm``.

    Returns
    -------
    dict
        ``{entry_id: score fields}``.
    """
    frames = []
    for entry_id, blob in blobs.items():
        rows = decode_rows(blob, validate=False)
        frames.append(rows.assign(encoder=pd.Series([f"entry-{entry_id}"] * len(rows), dtype="string").to_numpy()))
    scored = crs.score_results(pd.concat(frames, ignore_index=True), standard, arm=arm).set_index("encoder")
    return {entry_id: _fields(scored.loc[f"entry-{entry_id}"]) for entry_id in blobs}


@dataclass(frozen=True)
class EntryContent:
    """Everything an entry's digest covers (all but the stored rows themselves)."""

    id: int
    encoder: str
    arm: str
    standard_version: str
    scores: Mapping[str, float]
    rows_hash: str
    n_rows: int
    provenance: str
    created_at: str
    supersedes: int | None

    def digest(self) -> str:
        """SHA-256 of the canonical JSON of every field (floats exact)."""
        return sha256_text(
            stored_registry_json(
                {
                    "id": int(self.id),
                    "encoder": self.encoder,
                    "arm": self.arm,
                    "standard_version": self.standard_version,
                    "scores": {k: float(self.scores[k]) for k in SCORE_FIELDS},
                    "rows_hash": self.rows_hash,
                    "n_rows": int(self.n_rows),
                    "provenance": self.provenance,
                    "created_at": self.created_at,
                    "supersedes": None if self.supersedes is None else int(self.supersedes),
                }
            )
        )


def same_float(a: float, b: float) -> bool:
    """Bit-for-bit equality of two doubles (NaN equals NaN; 0.0 differs from -0.0)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return float(a).hex() == float(b).hex()


def candidate_labels(entries: pd.DataFrame) -> pd.Series:
    """A display name per entry: the encoder, with the arm appended unless it is frozen."""
    return pd.Series(
        [e if a == "frozen" else f"{e} [{a}]" for e, a in zip(entries["encoder"], entries["arm"], strict=True)],
        index=entries.index,
        name="candidate",
    )
