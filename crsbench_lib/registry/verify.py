"""``registry verify``: recompute every entry and check the log's hash chain.

Checks, each reported with the entry or record at fault:

1. the log's chain (:func:`~crsbench_lib.registry.chain.verify_chain`);
2. every standard: its stored text parses, validates and has the stored
   content hash; its text hash matches; a ``register_standard`` log record
   names it with the same hashes;
3. every entry: its stored rows decode and hash to the stored rows hash; the
   score fields recomputed from those rows under the stored standard equal the
   stored ones bit for bit; its digest matches its fields; exactly one
   ``add_entry`` log record names it with the same digest;
4. the log names no entry or standard that is missing from the tables;
5. the append-only triggers are all in place;
6. at most one current entry per (encoder, arm, standard).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field

import pandas as pd

from crsbench_lib.errors import CRSBenchError
from crsbench_lib.registry import chain
from crsbench_lib.registry.db import APPEND_ONLY_TRIGGERS
from crsbench_lib.registry.entries import (
    SCORE_FIELDS,
    EntryContent,
    recompute,
    recompute_many,
    same_float,
    standard_from_text,
)
from crsbench_lib.registry.rows import decode_text
from crsbench_lib.registry.store import Registry


@dataclass
class VerifyReport:
    """Outcome of :func:`verify_registry`.

    Attributes
    ----------
    n_standards, n_entries, n_log_records : int
        What was checked.
    head_hash : str
        The log's head hash (compare with a copy kept elsewhere).
    problems : list of str
        One line per difference found; empty when everything holds.
    differences : pandas.DataFrame
        Per entry and score field that differs: entry_id, encoder, field,
        stored, recomputed.
    """

    n_standards: int = 0
    n_entries: int = 0
    n_log_records: int = 0
    head_hash: str = chain.GENESIS_HASH
    problems: list[str] = field(default_factory=list)
    differences: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=["entry_id", "encoder", "field", "stored", "recomputed"])
    )

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems

    def summary(self) -> str:
        """A one-paragraph human-readable summary."""
        state = "OK" if self.ok else f"FAILED ({len(self.problems)} problem{'s' * (len(self.problems) != 1)})"
        return (
            f"registry verify: {state}: {self.n_entries} entries recomputed under {self.n_standards} standard{'s' * (self.n_standards != 1)}, "
            f"{self.n_log_records} log records chained; head {self.head_hash}"
        )


def verify_registry(registry: Registry, expect_head: str | None = None) -> VerifyReport:
    """Recompute every entry from its stored inputs and check the log.

    Parameters
    ----------
    registry : Registry
        An open registry.
    expect_head : str, optional
        A head hash recorded earlier; a different head (e.g. a truncated log)
        is reported. Matching also accepts a head that has that hash as an
        earlier record (the log only grew since).

    Returns
    -------
    VerifyReport
    """
    conn = registry.connection
    report = VerifyReport()
    # A read transaction: one consistent snapshot even while others add.
    conn.execute("BEGIN")
    try:
        _verify(conn, report, expect_head)
    finally:
        conn.execute("COMMIT")
    return report


def _verify(conn: sqlite3.Connection, report: VerifyReport, expect_head: str | None) -> None:
    chained = chain.verify_chain(conn)
    report.n_log_records = chained.n_records
    report.head_hash = chained.head_hash
    report.problems.extend(chained.problems)
    if expect_head is not None:
        known = {r[0] for r in conn.execute("SELECT hash FROM log")}
        if expect_head not in known:
            report.problems.append(f"log: expected head hash {expect_head} is not in the log (records removed?)")

    logged_standards: dict[str, list[dict[str, object]]] = {}
    logged_entries: dict[int, list[dict[str, object]]] = {}
    for seq, event, payload in conn.execute("SELECT seq, event, payload FROM log ORDER BY seq"):
        try:
            content = json.loads(payload)
        except ValueError:
            continue  # reported by the chain check
        if event == "register_standard":
            logged_standards.setdefault(str(content.get("version")), []).append(content)
        elif event == "add_entry":
            logged_entries.setdefault(int(content.get("id", -1)), []).append(content)

    triggers = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    for name in APPEND_ONLY_TRIGGERS:
        if name not in triggers:
            report.problems.append(f"schema: append-only trigger '{name}' is missing")

    standards = {}
    for version, content_hash, text_sha256, text in conn.execute(
        "SELECT version, content_hash, text_sha256, yaml_text FROM standards ORDER BY version"
    ):
        report.n_standards += 1
        if chain.sha256_text(text) != text_sha256:
            report.problems.append(f"standard '{version}': stored text does not match its text hash")
        try:
            std = standard_from_text(text, source=f"registry standard '{version}'")
        except CRSBenchError as exc:
            report.problems.append(f"standard '{version}': stored text fails validation ({exc})")
            continue
        if std.version != version or std.content_hash != content_hash:
            report.problems.append(f"standard '{version}': stored text has version '{std.version}' and content hash "
                                   f"{std.content_hash}, the table says {content_hash}")
        logged = logged_standards.pop(version, [])
        if len(logged) != 1 or logged[0].get("content_hash") != content_hash or logged[0].get(
            "text_sha256"
        ) != text_sha256:
            report.problems.append(f"standard '{version}': no matching register_standard log record")
        standards[version] = std
    for version in logged_standards:
        report.problems.append(f"log: registers standard '{version}', which is missing from the standards table")

    rows = []
    jobs: dict[tuple[str, str], list[tuple[int, str, str, bytes, dict[str, float]]]] = {}
    columns = ["id", "encoder", "arm", "standard_version", *SCORE_FIELDS, "rows_hash", "n_rows", "rows_blob",
               "provenance", "created_at", "supersedes", "digest"]
    for values in conn.execute(f"SELECT {', '.join(columns)} FROM entries ORDER BY id"):
        entry = dict(zip(columns, values, strict=True))
        report.n_entries += 1
        entry_id = int(entry["id"])
        where = f"entry #{entry_id} ({entry['encoder']}, {entry['arm']}, {entry['standard_version']})"
        stored_scores = {k: entry[k] for k in SCORE_FIELDS}
        bad_types = [k for k, v in stored_scores.items() if not isinstance(v, float)]
        if bad_types:
            report.problems.append(f"{where}: field '{bad_types[0]}' is not a stored double")
        content = EntryContent(
            id=entry_id, encoder=entry["encoder"], arm=entry["arm"], standard_version=entry["standard_version"],
            scores={k: float(v) if isinstance(v, (int, float)) else float("nan") for k, v in stored_scores.items()},
            rows_hash=entry["rows_hash"], n_rows=entry["n_rows"], provenance=entry["provenance"],
            created_at=entry["created_at"], supersedes=entry["supersedes"],
        )
        digest = content.digest()
        if digest != entry["digest"]:
            report.problems.append(f"{where}: fields do not match the entry's digest (edited after publishing)")
        logged = logged_entries.pop(entry_id, [])
        if len(logged) != 1 or logged[0].get("digest") != entry["digest"] or logged[0].get("digest") != digest:
            report.problems.append(f"{where}: no matching add_entry log record")
        try:
            text = decode_text(entry["rows_blob"])
        except CRSBenchError as exc:
            report.problems.append(f"{where}: {exc}")
            continue
        if chain.sha256_text(text) != entry["rows_hash"]:
            report.problems.append(f"{where}: stored rows do not match the rows hash")
        if entry["standard_version"] not in standards:
            report.problems.append(f"{where}: its standard is missing or unreadable")
            continue
        jobs.setdefault((entry["standard_version"], entry["arm"]), []).append(
            (entry_id, entry["encoder"], where, entry["rows_blob"], content.scores)
        )
    for (version, arm), group in jobs.items():
        std = standards[version]
        try:
            batch = recompute_many({job[0]: job[3] for job in group}, std, arm)
        except CRSBenchError:
            batch = {}  # some entry's rows cannot be scored: each is recomputed (and reported) alone below
        for entry_id, encoder, where, blob, stored in group:
            fresh = batch.get(entry_id)
            if fresh is None or any(not same_float(fresh[n], stored[n]) for n in SCORE_FIELDS):
                # The authoritative path: exactly what `add` ran for this entry.
                try:
                    fresh = recompute(blob, std, arm)
                except CRSBenchError as exc:
                    report.problems.append(f"{where}: cannot recompute ({exc})")
                    continue
            for name in SCORE_FIELDS:
                if not same_float(fresh[name], stored[name]):
                    rows.append((entry_id, encoder, name, stored[name], fresh[name]))
                    report.problems.append(f"{where}: {name} stored {stored[name]!r}, recomputed {fresh[name]!r}")
    for entry_id in logged_entries:
        report.problems.append(f"log: adds entry #{entry_id}, which is missing from the entries table")
    duplicates = conn.execute(
        "SELECT encoder, arm, standard_version, count(*) FROM current_entries "
        "GROUP BY encoder, arm, standard_version HAVING count(*) > 1"
    ).fetchall()
    for encoder, arm, version, count in duplicates:
        report.problems.append(f"entries: encoder '{encoder}' ({arm}) has {count} current entries under '{version}'")
    report.differences = pd.DataFrame(rows, columns=["entry_id", "encoder", "field", "stored", "recomputed"])
