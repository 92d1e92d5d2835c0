"""The score registry: a fixed-reference history of encoder scores.

Standards are stored whole (YAML text, by version id and content hash); each
entry is one encoder (in one arm) scored under one standard, with the rows it
was computed from; every change is also a record of the hash-chained log.
Nothing published is ever rewritten: a correction is a new entry that names
the entry it supersedes, and a new standard version leaves the entries under
older versions as they are.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from crsbench_lib import __version__
from crsbench_lib.errors import ReferenceStandardError, RegistryError
from crsbench_lib.hashing import file_sha256
from crsbench_lib.registry import chain
from crsbench_lib.registry.db import connect, resolve_path, utc_now, write_transaction
from crsbench_lib.registry.entries import (
    NORM_FIELDS,
    RAW_FIELDS,
    SCORE_FIELDS,
    EntryContent,
    candidate_labels,
    recompute,
    standard_from_text,
)
from crsbench_lib.registry.rows import decode_rows, encode_rows
from crsbench_lib.results.schema import ARMS, validate_results
from crsbench_lib.scoring.rank_statistics import descending_ranks
from crsbench_lib.standard import AXES, ReferenceStandard, dump_standard, load_standard

#: Actions an addition can take per encoder.
ADDED, UNCHANGED, CORRECTED = "added", "unchanged", "corrected"


@dataclass(frozen=True)
class StandardRecord:
    """A standard as stored in the registry.

    Attributes
    ----------
    version, content_hash : str
        Version id and the standard's own content hash.
    text_sha256 : str
        SHA-256 of the stored YAML text.
    registered_at : str
        UTC time of registration.
    """

    version: str
    content_hash: str
    text_sha256: str
    registered_at: str


@dataclass(frozen=True)
class AddOutcome:
    """What one addition did for one encoder.

    Attributes
    ----------
    encoder, arm, standard_version : str
        The entry's identity.
    action : {"added", "unchanged", "corrected"}
        ``added``: a first entry; ``unchanged``: an entry with identical inputs
        (same rows hash, same standard) exists, nothing written; ``corrected``:
        a new entry superseding the previous one.
    entry_id : int
        The new entry, or the existing one when unchanged.
    supersedes : int or None
        The entry a correction replaces.
    crs : float
        The entry's CRS.
    """

    encoder: str
    arm: str
    standard_version: str
    action: str
    entry_id: int
    supersedes: int | None
    crs: float


@dataclass
class AddReport:
    """Outcome of :meth:`Registry.add`.

    Attributes
    ----------
    standard : StandardRecord
        The standard the entries were scored under.
    standard_registered : bool
        True when this addition registered the standard (it was unknown).
    outcomes : list of AddOutcome
        One per encoder, in encoder order.
    """

    standard: StandardRecord
    standard_registered: bool
    outcomes: list[AddOutcome] = field(default_factory=list)

    def table(self) -> pd.DataFrame:
        """The outcomes as a DataFrame."""
        columns = ["encoder", "arm", "standard_version", "action", "entry_id", "supersedes", "crs"]
        return pd.DataFrame([o.__dict__ for o in self.outcomes], columns=columns)

    @property
    def n_written(self) -> int:
        """Number of entries written (added or corrected)."""
        return sum(o.action != UNCHANGED for o in self.outcomes)


@dataclass
class _Prepared:
    encoder: str
    blob: bytes
    rows_hash: str
    n_rows: int
    scores: dict[str, float] | None  # None until needed (identical re-additions are never scored)
    provenance: str


def select_encoders(results: pd.DataFrame, arm: str, encoders: Iterable[str] | None = None) -> list[str]:
    """The encoders an addition takes from a results table, sorted.

    Parameters
    ----------
    results : pandas.DataFrame
        A validated results table.
    arm : str
        The arm scored.
    encoders : iterable of str, optional
        Names asked for; default every encoder of the arm.

    Raises
    ------
    RegistryError
        If the arm is unknown or has no rows, or a name has no rows in the arm
        (the message lists those that do).
    """
    if arm not in ARMS:
        raise RegistryError(f"unknown arm '{arm}' (expected one of {', '.join(ARMS)})")
    available = sorted(set(results.loc[results["arm"] == arm, "encoder"].astype(str)))
    if not available:
        raise RegistryError(f"the results table has no rows in arm '{arm}'")
    if encoders is None:
        return available
    chosen = sorted(dict.fromkeys(str(e) for e in encoders))
    unknown = [e for e in chosen if e not in available]
    if unknown:
        raise RegistryError(
            f"encoder '{unknown[0]}' has no rows in arm '{arm}' of the results table (found: {', '.join(available)})"
        )
    return chosen


class Registry:
    """An open score registry.

    Parameters
    ----------
    path : path-like, optional
        The SQLite file; default :func:`~crsbench_lib.registry.db.default_registry_path`.
    create : bool
        Create it when missing (``add`` does; read commands do not).
    timeout_s : float
        How long to wait for another process's write lock.

    Raises
    ------
    RegistryError
        If the file is missing (without ``create``), unreadable, foreign, or
        of a newer schema; the file is left untouched.

    Examples
    --------
    >>> with Registry("scores.sqlite", create=True) as reg:          # doctest: +SKIP
    ...     reg.add(results, "standards/crs-default-v4.yaml")
    ...     reg.entries()
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        create: bool = False,
        timeout_s: float | None = None,
    ) -> None:
        self.path = resolve_path(path)
        kwargs = {} if timeout_s is None else {"timeout_s": timeout_s}
        self._conn = connect(self.path, create=create, **kwargs)
        self._conn.row_factory = sqlite3.Row

    # -- lifecycle -----------------------------------------------------------------
    @property
    def connection(self) -> sqlite3.Connection:
        """The underlying SQLite connection (read it; write through the methods)."""
        return self._conn

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> Registry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _query(self, sql: str, params: Sequence[object] = ()) -> list[sqlite3.Row]:
        try:
            return list(self._conn.execute(sql, params))
        except sqlite3.DatabaseError as exc:
            raise RegistryError(f"{self.path}: registry database error ({exc})") from exc

    # -- standards -----------------------------------------------------------------
    def standards(self) -> pd.DataFrame:
        """Registered standards: version, content hash, registration time, entry counts."""
        rows = self._query(
            "SELECT s.version, s.content_hash, s.registered_at, "
            "(SELECT count(*) FROM entries e WHERE e.standard_version = s.version) AS n_entries, "
            "(SELECT count(*) FROM current_entries e WHERE e.standard_version = s.version) AS n_current "
            "FROM standards s ORDER BY s.registered_at, s.version"
        )
        columns = ["version", "content_hash", "registered_at", "n_entries", "n_current"]
        return pd.DataFrame([tuple(r) for r in rows], columns=columns)

    def standard_versions(self) -> list[str]:
        """Registered version ids, in registration order."""
        return list(self.standards()["version"])

    def get_standard(self, version: str) -> ReferenceStandard:
        """A registered standard, parsed from its stored text.

        Raises
        ------
        RegistryError
            If the version is not registered (the message lists those that are).
        """
        row = self._query("SELECT yaml_text FROM standards WHERE version = ?", (version,))
        if not row:
            known = ", ".join(self.standard_versions()) or "none"
            raise RegistryError(f"unknown standard version '{version}' (registered: {known})")
        return standard_from_text(row[0]["yaml_text"], source=f"registry standard '{version}'")

    def standard_text(self, version: str) -> str:
        """The stored YAML text of a registered standard."""
        row = self._query("SELECT yaml_text FROM standards WHERE version = ?", (version,))
        if not row:
            raise RegistryError(f"unknown standard version '{version}'")
        return str(row[0]["yaml_text"])

    def _resolve_standard(
        self, standard: ReferenceStandard | str | os.PathLike[str]
    ) -> tuple[ReferenceStandard, str, str]:
        """(standard, YAML text, where it came from) from an object, a file or a registered version."""
        if isinstance(standard, ReferenceStandard):
            return standard, dump_standard(standard), f"standard object '{standard.version}'"
        path = Path(standard)
        if path.is_file():
            std = load_standard(path)  # validates; raises ReferenceStandardError naming the field
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ReferenceStandardError(f"{path}: cannot read the standard file ({exc})") from exc
            return std, text, str(path)
        if isinstance(standard, str) and self._query("SELECT 1 FROM standards WHERE version = ?", (standard,)):
            return self.get_standard(standard), self.standard_text(standard), f"registered version '{standard}'"
        known = ", ".join(self.standard_versions()) or "none registered yet"
        raise RegistryError(
            f"unknown standard '{standard}': neither a standard file nor a registered version (registered: {known})"
        )

    def _ensure_standard(self, std: ReferenceStandard, text: str, now: str) -> tuple[StandardRecord, bool]:
        """Inside a write transaction: the stored record, registering the standard if new."""
        row = self._conn.execute(
            "SELECT version, content_hash, text_sha256, registered_at FROM standards WHERE version = ?",
            (std.version,),
        ).fetchone()
        if row is not None:
            if row["content_hash"] != std.content_hash:
                raise RegistryError(
                    f"standard version '{std.version}' is already registered with another content "
                    f"({row['content_hash']}, this file has {std.content_hash}); a changed standard needs a new "
                    "version id (crsbench freeze --version ...)"
                )
            return StandardRecord(*tuple(row)), False
        record = StandardRecord(std.version, std.content_hash, chain.sha256_text(text), now)
        self._conn.execute(
            "INSERT INTO standards (version, content_hash, text_sha256, yaml_text, registered_at) VALUES (?, ?, ?, ?, ?)",
            (record.version, record.content_hash, record.text_sha256, text, now),
        )
        chain.append(
            self._conn,
            "register_standard",
            {"version": record.version, "content_hash": record.content_hash, "text_sha256": record.text_sha256},
            now,
        )
        return record, True

    def register_standard(self, standard: ReferenceStandard | str | os.PathLike[str]) -> tuple[StandardRecord, bool]:
        """Register a standard (idempotent); returns (record, newly_registered).

        Raises
        ------
        ReferenceStandardError
            If the file fails validation, or its panel is empty (it cannot score).
        RegistryError
            If its version is registered with a different content hash.
        """
        std, text, _ = self._resolve_standard(standard)
        std.require_panel()
        with write_transaction(self._conn):
            return self._ensure_standard(std, text, utc_now())

    # -- adding --------------------------------------------------------------------
    def add(
        self,
        results: pd.DataFrame,
        standard: ReferenceStandard | str | os.PathLike[str],
        encoders: Iterable[str] | None = None,
        *,
        arm: str = "frozen",
        correct: bool = False,
        note: str = "",
        source: str | os.PathLike[str] | None = None,
    ) -> AddReport:
        """Score encoders of a results table under a standard and publish the entries.

        All encoders are written in one transaction: either every entry of the
        call is published or none is.

        Parameters
        ----------
        results : pandas.DataFrame
            A results table (validated here).
        standard : ReferenceStandard, path or str
            A standard file (registered if its version is unknown), a
            ReferenceStandard, or the version id of a registered standard.
        encoders : iterable of str, optional
            Encoders to add; default every encoder of the arm.
        arm : {"frozen", "lora"}
            The arm scored (part of an entry's identity).
        correct : bool
            Allow corrections: an encoder that already has an entry under this
            standard and arm, computed from *different* rows, gets a new entry
            that supersedes it. Without it such an addition is refused.
        note : str
            Free text kept in the entry's provenance (why a correction, say).
        source : path-like, optional
            The results file, recorded with its SHA-256 in the provenance.

        Returns
        -------
        AddReport

        Raises
        ------
        SchemaError
            If the results table fails validation or lacks rows an axis needs.
        ReferenceStandardError
            If the standard file fails validation or cannot score (empty panel,
            other ECE binning).
        RegistryError
            If an encoder is not in the table, the arm is unknown, the
            standard's version is registered with another content, or an
            encoder has a different entry and ``correct`` is false. Nothing is
            written in any of these cases.
        """
        if arm not in ARMS:
            raise RegistryError(f"unknown arm '{arm}' (expected one of {', '.join(ARMS)})")
        std, text, _ = self._resolve_standard(standard)
        std.require_panel()
        table = validate_results(results, source=str(source) if source is not None else "results table")
        chosen = select_encoders(table, arm, encoders)
        in_arm = table[table["arm"] == arm]
        origin = self._origin(source)
        prepared = []
        encoder_column = in_arm["encoder"].astype(str)
        published = self._published_hashes(std, arm)
        for encoder in chosen:
            rows = in_arm[encoder_column == encoder]
            blob, digest, n_rows = encode_rows(rows)
            item = _Prepared(encoder, blob, digest, n_rows, None, self._provenance(rows, origin, note))
            if published.get(encoder) != digest:
                # Score outside the write lock, from the rows as they come back from
                # the blob: the path verify confirms every entry with.
                item.scores = recompute(blob, std, arm)
            prepared.append(item)

        try:
            with write_transaction(self._conn):
                now = utc_now()
                record, registered = self._ensure_standard(std, text, now)
                report = AddReport(standard=record, standard_registered=registered)
                for item in prepared:
                    outcome = self._add_one(item, record.version, arm, correct, now, std)
                    report.outcomes.append(outcome)
        except sqlite3.DatabaseError as exc:
            raise RegistryError(f"{self.path}: registry database error ({exc})") from exc
        return report

    def _published_hashes(self, std: ReferenceStandard, arm: str) -> dict[str, str]:
        """Rows hash of each current entry under this very standard (same content), by encoder."""
        rows = self._query(
            "SELECT e.encoder, e.rows_hash FROM current_entries e JOIN standards s ON s.version = e.standard_version "
            "WHERE s.version = ? AND s.content_hash = ? AND e.arm = ?",
            (std.version, std.content_hash, arm),
        )
        return {str(r["encoder"]): str(r["rows_hash"]) for r in rows}

    @staticmethod
    def _origin(source: str | os.PathLike[str] | None) -> dict[str, str]:
        """Where the rows came from: the results file and its SHA-256 (when given)."""
        if source is None:
            return {}
        path = Path(source)
        return {"source": str(path), "source_sha256": file_sha256(path) if path.is_file() else ""}

    @staticmethod
    def _provenance(rows: pd.DataFrame, origin: dict[str, str], note: str) -> str:
        """An entry's provenance (canonical JSON): who registered it, what produced its rows, why."""
        info: dict[str, object] = {
            "registered_by": f"crsbench {__version__}",
            "config_hashes": sorted(set(rows["config_hash"].astype(str)) - {""}),
            "package_versions": sorted(set(rows["package_version"].astype(str)) - {""}),
            "note": str(note),
            **origin,
        }
        return chain.stored_registry_json(info)

    def _add_one(
        self, item: _Prepared, version: str, arm: str, correct: bool, now: str, std: ReferenceStandard
    ) -> AddOutcome:
        current = self._conn.execute(
            "SELECT id, rows_hash, crs FROM current_entries WHERE encoder = ? AND arm = ? AND standard_version = ?",
            (item.encoder, arm, version),
        ).fetchall()
        if len(current) > 1:
            raise RegistryError(
                f"registry inconsistent: encoder '{item.encoder}' ({arm}) has {len(current)} current entries "
                f"under '{version}' (run `crsbench registry verify`)"
            )
        supersedes: int | None = None
        if current:
            existing = current[0]
            if existing["rows_hash"] == item.rows_hash:
                return AddOutcome(item.encoder, arm, version, UNCHANGED, int(existing["id"]), None, float(existing["crs"]))
            if not correct:
                raise RegistryError(
                    f"encoder '{item.encoder}' ({arm}) already has entry #{existing['id']} under standard "
                    f"'{version}' computed from different results rows; published entries are never replaced: "
                    "pass --correct to publish a correction that supersedes it"
                )
            supersedes = int(existing["id"])
        if item.scores is None:
            # Identical when checked before the lock, changed since by another writer.
            item.scores = recompute(item.blob, std, arm)
        scores = item.scores
        entry_id = int(self._conn.execute("SELECT coalesce(max(id), 0) + 1 FROM entries").fetchone()[0])
        content = EntryContent(
            id=entry_id,
            encoder=item.encoder,
            arm=arm,
            standard_version=version,
            scores=scores,
            rows_hash=item.rows_hash,
            n_rows=item.n_rows,
            provenance=item.provenance,
            created_at=now,
            supersedes=supersedes,
        )
        digest = content.digest()
        columns = ("id", "encoder", "arm", "standard_version", *SCORE_FIELDS, "rows_hash", "n_rows", "rows_blob",
                   "provenance", "created_at", "supersedes", "digest")
        values = (entry_id, item.encoder, arm, version, *(scores[k] for k in SCORE_FIELDS), item.rows_hash,
                  item.n_rows, item.blob, item.provenance, now, supersedes, digest)
        self._conn.execute(
            f"INSERT INTO entries ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", values
        )
        chain.append(
            self._conn,
            "add_entry",
            {"id": entry_id, "encoder": item.encoder, "arm": arm, "standard_version": version,
             "rows_hash": item.rows_hash, "supersedes": supersedes, "digest": digest},
            now,
        )
        return AddOutcome(item.encoder, arm, version, CORRECTED if supersedes else ADDED, entry_id, supersedes,
                          scores["crs"])

    # -- reading -------------------------------------------------------------------
    _ENTRY_COLUMNS = ("id", "encoder", "arm", "standard_version", *SCORE_FIELDS, "rows_hash", "n_rows",
                      "provenance", "created_at", "supersedes", "digest")

    def _entries_frame(self, where: str = "", params: Sequence[object] = (), view: str = "entries") -> pd.DataFrame:
        rows = self._query(f"SELECT {', '.join(self._ENTRY_COLUMNS)} FROM {view} {where} ORDER BY id", params)
        frame = pd.DataFrame([tuple(r) for r in rows], columns=list(self._ENTRY_COLUMNS))
        frame = frame.rename(columns={"id": "entry_id"})
        frame["supersedes"] = frame["supersedes"].astype("Int64")
        for name in SCORE_FIELDS:
            frame[name] = frame[name].astype(float)
        return frame

    def entries(self, standard: str | None = None, *, current_only: bool = True) -> pd.DataFrame:
        """Entries, ranked by CRS within each standard.

        Parameters
        ----------
        standard : str, optional
            Only this standard version (must be registered).
        current_only : bool
            Leave out entries superseded by a correction (default).

        Returns
        -------
        pandas.DataFrame
            Columns ``standard_version, rank, encoder, arm, crs, dominance,
            balance, floor, raw_D..raw_R, norm_D..norm_R, entry_id, created_at,
            supersedes, superseded_by, rows_hash, n_rows``; ``rank`` is 1 for the
            highest CRS among the current entries of the standard (ties share
            the lower rank), sorted by standard (registration order) then rank.
        """
        if standard is not None and standard not in self.standard_versions():
            known = ", ".join(self.standard_versions()) or "none"
            raise RegistryError(f"unknown standard version '{standard}' (registered: {known})")
        where, params = ("WHERE standard_version = ?", (standard,)) if standard is not None else ("", ())
        frame = self._entries_frame(where, params, "current_entries" if current_only else "entries")
        successors = self._query("SELECT supersedes, id FROM entries WHERE supersedes IS NOT NULL")
        by = {int(r["supersedes"]): int(r["id"]) for r in successors}
        frame["superseded_by"] = pd.array([by.get(int(i)) for i in frame["entry_id"]], dtype="Int64")
        current = frame["superseded_by"].isna()
        frame["rank"] = pd.array([pd.NA] * len(frame), dtype="Int64")
        if current.any():
            ranks = frame[current].groupby("standard_version")["crs"].transform(
                lambda crs: descending_ranks(crs.to_numpy(float), ties="min"))
            frame.loc[current, "rank"] = ranks.astype("int64").to_numpy()
        order = {v: i for i, v in enumerate(self.standard_versions())}
        frame["_std_order"] = frame["standard_version"].map(order)
        frame["_rank_sort"] = frame["rank"].fillna(len(frame) + 1).astype("int64")
        frame = frame.sort_values(["_std_order", "_rank_sort", "encoder", "arm", "entry_id"], kind="mergesort")
        frame["candidate"] = candidate_labels(frame) if len(frame) else pd.Series(dtype=str)
        columns = ["standard_version", "rank", "candidate", "encoder", "arm", "crs", "dominance", "balance", "floor",
                   *RAW_FIELDS, *NORM_FIELDS, "entry_id", "created_at", "supersedes", "superseded_by",
                   "rows_hash", "n_rows"]
        return frame[columns].reset_index(drop=True)

    def history(self, encoder: str) -> pd.DataFrame:
        """Every entry of an encoder (all arms, all standards, superseded ones too), oldest first.

        Raises
        ------
        RegistryError
            If the registry has no entry for the encoder.
        """
        frame = self.entries(current_only=False)
        frame = frame[frame["encoder"] == encoder].sort_values("entry_id", kind="mergesort").reset_index(drop=True)
        if frame.empty:
            raise RegistryError(f"no entry for encoder '{encoder}' in {self.path}{self._known_encoders_hint()}")
        return frame

    def show(self, encoder: str) -> list[dict[str, object]]:
        """The current entries of an encoder in full (one dict per standard and arm).

        Each dict holds the ranked-table fields plus the standard's content
        hash and the provenance (parsed).

        Raises
        ------
        RegistryError
            If the registry has no entry for the encoder.
        """
        frame = self.entries()
        frame = frame[frame["encoder"] == encoder]
        if frame.empty:
            raise RegistryError(f"no entry for encoder '{encoder}' in {self.path}{self._known_encoders_hint()}")
        standards = self.standards().set_index("version")
        details = []
        for record in frame.to_dict("records"):
            row = self._query("SELECT provenance, digest FROM entries WHERE id = ?", (int(record["entry_id"]),))[0]
            record["standard_content_hash"] = standards.loc[record["standard_version"], "content_hash"]
            record["n_current_under_standard"] = int(standards.loc[record["standard_version"], "n_current"])
            record["provenance"] = json.loads(row["provenance"])
            record["digest"] = row["digest"]
            details.append(record)
        return details

    def _known_encoders_hint(self) -> str:
        names = [r[0] for r in self._query("SELECT DISTINCT encoder FROM entries ORDER BY encoder")]
        if not names:
            return " (the registry is empty)"
        shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
        return f" (encoders: {shown})"

    def rows(self, entry_id: int) -> pd.DataFrame:
        """The results rows an entry was computed from (decoded from its blob)."""
        row = self._query("SELECT rows_blob FROM entries WHERE id = ?", (int(entry_id),))
        if not row:
            raise RegistryError(f"no entry #{entry_id} in {self.path}")
        return decode_rows(row[0]["rows_blob"])

    def log(self) -> pd.DataFrame:
        """The append-only log: seq, recorded_at, event, payload, prev_hash, hash."""
        rows = self._query("SELECT seq, recorded_at, event, payload, prev_hash, hash FROM log ORDER BY seq")
        return pd.DataFrame([tuple(r) for r in rows], columns=["seq", "recorded_at", "event", "payload",
                                                              "prev_hash", "hash"])

    def head_hash(self) -> str:
        """The hash of the log's last record (record it elsewhere to detect truncation)."""
        return chain.head(self._conn)[1]

    def profiles(self, standard: str | None = None) -> pd.DataFrame:
        """Raw profiles of the current entries of one standard.

        Index ``encoder`` (the candidate label: the encoder, with ``[arm]``
        appended unless frozen), columns D, C, L, R.
        """
        frame = self.entries(standard)
        if standard is None and frame["standard_version"].nunique() > 1:
            raise RegistryError("profiles of several standards: name one with standard=")
        out = frame.set_index("candidate")[list(RAW_FIELDS)]
        out.columns = list(AXES)
        out.index.name = "encoder"
        return out
