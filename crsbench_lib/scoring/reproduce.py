"""Does a run reproduce the reference run? A shipped summary and a comparison.

A *reference-run summary* is a small JSON file that states what the reference
build of a profile produced: the config hash, the results hash
(:func:`~crsbench_lib.standard.results_hash`), each arm's raw encoder
profiles (D, C, L, R averaged over seeds, then datasets; method section 3)
and the tolerance within which another machine's run counts as a
reproduction. The project ships one per profile it documents
(``standards/reference-run-<profile>.json``); :func:`summarise_run` writes one
from any results table.

:func:`compare_to_summary` then says whether a table reproduces it:

- *exactly*: the results hashes are equal (every schema column, bit for bit);
- *within tolerance*: ``max |x - x_ref|`` over encoders, arms and raw axes is at
  most the summary's tolerance;
- *not*: the largest difference exceeds it, or an encoder or arm is missing;

and by how much (the largest difference, and where it is). A table of another
config is not compared at all: its numbers answer a different question.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from crsbench_lib.atomic import atomic_write_text
from crsbench_lib.errors import SchemaError
from crsbench_lib.results.validated import ValidatedResults, as_validated
from crsbench_lib.scoring.axes import encoder_profiles, raw_axes
from crsbench_lib.standard import AXES

SUMMARY_FORMAT = "crs-reference-run/1"
#: Default tolerance on every raw axis (AUROC, ECE, retention and AUROC-loss
#: units), chosen as a round figure before comparing any two machines.
DEFAULT_TOLERANCE = 0.01
SUMMARY_KEYS: tuple[str, ...] = ("format", "profile", "config_hash", "results_hash", "tolerance", "axes")


def summary_filename(profile: str) -> str:
    """``reference-run-<profile>.json``: the shipped summary of a profile's reference run."""
    return f"reference-run-{profile}.json"


def _config_hash(table: pd.DataFrame) -> str:
    hashes = sorted(set(table["config_hash"].astype(str)))
    if len(hashes) != 1:
        raise SchemaError(f"results table mixes {len(hashes)} config hashes; a summary describes one run")
    return hashes[0]


def run_axes(results: pd.DataFrame | ValidatedResults) -> dict[str, dict[str, dict[str, float]]]:
    """Raw encoder profiles of every arm of a table: ``{arm: {encoder: {axis: value}}}``.

    ``L`` uses every label fraction below 1 found in the table, so the summary
    does not depend on a reference standard.
    """
    table = as_validated(results)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for arm in sorted(set(table.frame["arm"].astype(str))):
        profiles = encoder_profiles(raw_axes(table, arm=arm))
        out[arm] = {str(e): {a: float(profiles.loc[e, a]) for a in AXES} for e in profiles.index}
    return out


def summarise_run(results: pd.DataFrame | ValidatedResults, profile: str, tolerance: float = DEFAULT_TOLERANCE) -> dict[str, Any]:
    """The reference-run summary of a results table.

    Parameters
    ----------
    results : pandas.DataFrame
        A results table of one run (one config hash).
    profile : str
        The profile's name.
    tolerance : float
        Largest raw-axis difference that still counts as a reproduction.

    Returns
    -------
    dict
        Keys :data:`SUMMARY_KEYS`, JSON-serialisable.

    Raises
    ------
    SchemaError
        If the table is malformed, mixes config hashes, or ``tolerance`` is
        negative or not finite.

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> summary = summarise_run(synthetic_results(n_encoders=2, corruptions=("noise",)), "demo")
    >>> sorted(summary["axes"]["frozen"])
    ['enc00', 'enc01']
    """
    if not (isinstance(tolerance, (int, float)) and math.isfinite(tolerance) and tolerance >= 0):
        raise SchemaError(f"tolerance must be a finite non-negative number, got {tolerance!r}")
    table = as_validated(results)
    return {
        "format": SUMMARY_FORMAT,
        "profile": str(profile),
        "config_hash": _config_hash(table.frame),
        "results_hash": table.hash,
        "tolerance": float(tolerance),
        "axes": run_axes(table),
    }


def write_summary(summary: Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write a summary as indented JSON with sorted keys (atomic)."""
    destination = Path(path)
    atomic_write_text(destination, json.dumps(summary, indent=1, sort_keys=True) + "\n")
    return destination


def load_summary(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a reference-run summary.

    Raises
    ------
    SchemaError
        Naming the file and the key at fault.
    """
    source = Path(path)
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SchemaError(f"{source}: no such reference-run summary") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SchemaError(f"{source}: not a readable JSON reference-run summary ({exc})") from exc
    if not isinstance(data, dict):
        raise SchemaError(f"{source}: a reference-run summary is a JSON object")
    missing = [k for k in SUMMARY_KEYS if k not in data]
    if missing:
        raise SchemaError(f"{source}: missing key {missing[0]}")
    if data["format"] != SUMMARY_FORMAT:
        raise SchemaError(f"{source}: format must be {SUMMARY_FORMAT!r}, got {data['format']!r}")
    tolerance = data["tolerance"]
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not tolerance >= 0:
        raise SchemaError(f"{source}: tolerance must be a non-negative number")
    axes = data["axes"]
    if not isinstance(axes, dict) or not axes:
        raise SchemaError(f"{source}: axes must map arm -> encoder -> axis values")
    for arm, encoders in axes.items():
        if not isinstance(encoders, dict) or not encoders:
            raise SchemaError(f"{source}: axes.{arm} must map encoder -> axis values")
        for encoder, values in encoders.items():
            if not isinstance(values, dict) or any(
                not isinstance(values.get(a), (int, float)) or isinstance(values.get(a), bool) for a in AXES
            ):
                raise SchemaError(f"{source}: axes.{arm}.{encoder} must hold numbers {', '.join(AXES)}")
    return data


@dataclass(frozen=True)
class Reproduction:
    """How a run compares with a reference-run summary.

    Attributes
    ----------
    comparable : bool
        Same config hash (else nothing else is compared).
    exact : bool
        Same results hash.
    max_difference : float
        Largest ``|x - x_ref|`` over arms, encoders and raw axes (NaN if nothing
        was compared).
    where : str
        ``"<arm> <encoder> <axis>"`` of that difference ("" if none).
    tolerance : float
        The summary's tolerance.
    missing : tuple of str
        ``"<arm> <encoder>"`` of the summary absent from the run.
    n_compared : int
        Values compared.
    """

    comparable: bool
    exact: bool
    max_difference: float
    where: str
    tolerance: float
    missing: tuple[str, ...]
    n_compared: int
    profile: str = ""

    @property
    def reproduces(self) -> bool:
        """Exact, or every value within tolerance and nothing missing."""
        if not self.comparable:
            return False
        return self.exact or (not self.missing and self.n_compared > 0 and self.max_difference <= self.tolerance)

    def message(self) -> str:
        """One line for ``crsbench run`` and the book."""
        what = f"the reference run of profile {self.profile}" if self.profile else "the reference run"
        if not self.comparable:
            return f"not comparable with {what}: its config hash differs (another profile or standard)"
        if self.exact:
            return f"reproduces {what} exactly (same results hash)"
        gap = f"largest raw-axis difference {self.max_difference:.2g} ({self.where})"
        if self.missing:
            return f"does not reproduce {what}: {len(self.missing)} encoder(s) absent ({self.missing[0]}...); {gap}"
        if self.reproduces:
            return f"reproduces {what} within tolerance {self.tolerance:g}: {gap}; results hash differs"
        return f"does not reproduce {what}: {gap} exceeds the tolerance {self.tolerance:g}"


def compare_to_summary(results: pd.DataFrame | ValidatedResults, summary: Mapping[str, Any]) -> Reproduction:
    """Compare a results table with a reference-run summary.

    Parameters
    ----------
    results : pandas.DataFrame
        The run's results table.
    summary : mapping
        From :func:`load_summary` or :func:`summarise_run`.

    Returns
    -------
    Reproduction

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> table = synthetic_results(n_encoders=2, corruptions=("noise",))
    >>> compare_to_summary(table, summarise_run(table, "demo")).message()
    'reproduces the reference run of profile demo exactly (same results hash)'
    """
    table = as_validated(results)
    profile = str(summary.get("profile", ""))
    tolerance = float(summary["tolerance"])
    if _config_hash(table.frame) != summary["config_hash"]:
        return Reproduction(False, False, math.nan, "", tolerance, (), 0, profile)
    exact = table.hash == summary["results_hash"]
    ours = run_axes(table)
    worst, where, n, missing = -1.0, "", 0, []
    for arm, encoders in sorted(summary["axes"].items()):
        for encoder, reference in sorted(encoders.items()):
            values = ours.get(arm, {}).get(encoder)
            if values is None:
                missing.append(f"{arm} {encoder}")
                continue
            for axis in AXES:
                gap = abs(values[axis] - float(reference[axis]))
                n += 1
                if gap > worst:
                    worst, where = gap, f"{arm} {encoder} {axis}"
    return Reproduction(True, exact, worst if n else math.nan, where, tolerance, tuple(missing), n, profile)
