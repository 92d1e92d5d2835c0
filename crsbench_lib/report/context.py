"""What every chapter starts from: the results table, the standard, the banner.

A chapter's parameters cell names a results file, a profile, a standard file and
optional filters (datasets, encoders, seeds) and what-if overrides (weights,
anchors). :func:`load_context` turns them into a :class:`BookContext`, checking
every name against the table so that a typo is a clear error, not an empty plot.

Standards. A profile may name no standard, or one whose panel is empty (the
shipped template). Such a standard cannot score, so the chapter freezes a
*build standard* from the results table itself (weights, label fractions and
bins of the named standard; its anchors, moved outward where the run's data lie
beyond them; panel = every encoder of the frozen arm:
:func:`crsbench_lib.scoring.own_standard.freeze_own_standard`), with a version
id that says so (``<template version>+build-<results hash>``); the banner shows
that version and the fit report says every choice.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from crsbench_lib.errors import NotebookError
from crsbench_lib.paths import project_root, standards_dir
from crsbench_lib.report.banner import Provenance, build_date, provenance
from crsbench_lib.results.predictions import DatasetPredictions, load_prediction_arrays, restrict_arrays
from crsbench_lib.results.io import RESULTS_FILE, own_standard_beside, run_dir
from crsbench_lib.results.manifest import manifest_beside
from crsbench_lib.results.validated import ValidatedResults, as_validated, read_validated
from crsbench_lib.scoring.freeze import freeze_standard
from crsbench_lib.scoring.own_standard import freeze_own_standard
from crsbench_lib.standard import (
    DEFAULT_FILENAME,
    TEMPLATE_FILENAME,
    ReferenceStandard,
    default_standard_path,
    load_standard,
    load_template,
)

BUILD_SUFFIX = "+build-"
# A fixed creation stamp keeps a build standard's file identical between builds
# (the content hash already ignores it).
BUILD_CREATED = "1970-01-01T00:00:00Z"


@dataclass(frozen=True)
class BookContext:
    """The inputs of one chapter.

    Attributes
    ----------
    results : pandas.DataFrame
        The (filtered) results table.
    standard : ReferenceStandard
        The standard every score of the chapter uses (with overrides applied).
    provenance : Provenance
        The page banner (display it as a cell's last expression).
    results_path : pathlib.Path
        Where the results were read.
    validated : ValidatedResults
        The same table, validated once (:func:`load_context` passes it; built from
        ``results`` otherwise): hand it to scoring functions, which then neither
        check it again nor recompute its raw axes.
    """

    results: pd.DataFrame
    standard: ReferenceStandard
    provenance: Provenance
    results_path: Path
    validated: ValidatedResults | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.validated is None:
            object.__setattr__(self, "validated", as_validated(self.results))

    @property
    def run_dir(self) -> Path:
        """The run folder: the one holding the results table and its ``predictions/``."""
        return self.results_path.parent


def default_results_path(profile: str) -> Path:
    """Where ``crsbench run --profile NAME`` writes its table by default."""
    return run_dir(profile) / RESULTS_FILE


def resolve_input_path(path: str | os.PathLike[str]) -> Path:
    """A chapter's file parameter as a path on this machine.

    Absolute paths are kept. A relative path is read from the working
    directory when it exists there, else from the project root: the book passes
    paths relative to the project root, so a downloaded notebook runs wherever
    the package is installed, whatever folder its kernel starts in.
    """
    candidate = Path(path).expanduser()
    if candidate.is_absolute() or candidate.exists():
        return candidate
    return project_root() / candidate


def portable_path(path: str | os.PathLike[str] | None, profile: str) -> str | None:
    """How the book writes a file parameter into a notebook: never as the build machine's absolute path.

    ``None`` when ``path`` is the default run of ``profile`` (the notebook finds it
    at run time in whatever cache it has), a path relative to the project root
    when it lies inside it, and the absolute path otherwise (a file the user named
    outside the project: there is nothing portable to write).
    """
    if path is None:
        return None
    resolved = Path(path).expanduser().resolve()
    if resolved == default_results_path(profile).resolve():
        return None
    try:
        return resolved.relative_to(project_root().resolve()).as_posix()
    except ValueError:
        return str(resolved)


def simulated_from_manifest(results_path: str | os.PathLike[str]) -> bool | None:
    """Whether the run beside ``results_path`` used only phantom datasets (``None``: no readable manifest).

    The runner writes ``manifest.json`` next to ``results.parquet``; its
    ``config.datasets`` entries carry each dataset's ``kind``.
    """
    manifest = manifest_beside(results_path)
    return None if manifest is None else manifest.simulated


def _filter(table: pd.DataFrame, column: str, wanted: Sequence[object] | None, parameter: str) -> pd.DataFrame:
    if wanted is None:
        return table
    values = [wanted] if isinstance(wanted, (str, int)) else list(wanted)
    present = sorted({v for v in table[column].tolist()}, key=str)
    unknown = [v for v in values if v not in set(present)]
    if unknown or not values:
        problem = f"unknown value {unknown[0]!r}" if unknown else "empty list"
        raise NotebookError(f"parameter '{parameter}': {problem}; valid: {', '.join(map(str, present))}")
    return table[table[column].isin(values)].reset_index(drop=True)


def resolve_standard(
    standard_path: str | os.PathLike[str] | None,
    results: pd.DataFrame | ValidatedResults,
) -> ReferenceStandard:
    """The standard a chapter scores with.

    Parameters
    ----------
    standard_path : path, optional
        A standard file; ``None`` takes the shipped default standard if it
        exists, else the template.
    results : pandas.DataFrame or ValidatedResults
        The results table, used to freeze a build standard when the chosen
        standard's panel is empty (validated once here if a DataFrame).

    Returns
    -------
    ReferenceStandard
    """
    if standard_path is None:
        # Only a *missing* default falls back to the template: a default that fails
        # validation (edited, hash mismatch) is an error, never silently replaced.
        shipped = standards_dir() / DEFAULT_FILENAME
        standard = load_standard(shipped) if shipped.is_file() else load_template()
    else:
        standard = load_standard(resolve_input_path(standard_path))
    if standard.panel_names:
        return standard
    table = as_validated(results)
    digest = table.hash.split(":", 1)[-1][:8]
    # Anchors moved outward where the run's data lie beyond them: a standard of the run's own fits it.
    return freeze_own_standard(table, version=f"{standard.version}{BUILD_SUFFIX}{digest}", base=standard,
                               created=BUILD_CREATED).standard


def run_standard(results_path: str | os.PathLike[str]) -> Path | None:
    """The standard a run chose for itself, when a chapter names none (``None``: the shipped default).

    The standard the run froze from itself (:data:`~crsbench_lib.results.io.OWN_STANDARD_FILE`
    beside its table) if there is one; else, for a run whose profile named no
    standard (its manifest records the template, whose panel is empty), the
    template, from which :func:`resolve_standard` freezes the same standard.
    """
    beside = own_standard_beside(results_path)
    if beside is not None:
        return beside
    manifest = manifest_beside(results_path)
    recorded = Path(manifest.standard_path) if manifest is not None and manifest.standard_path else None
    if recorded is not None and recorded.name == TEMPLATE_FILENAME and recorded.is_file():
        return recorded
    return None


def is_build_standard(standard: ReferenceStandard) -> bool:
    """Whether a standard was frozen by the book from the table it scores (:func:`resolve_standard`)."""
    return BUILD_SUFFIX in standard.version


def override_standard(
    standard: ReferenceStandard,
    results: pd.DataFrame | ValidatedResults,
    weights: Mapping[str, float] | None = None,
    anchors: Mapping[str, Sequence[float]] | None = None,
) -> ReferenceStandard:
    """A what-if copy of a standard with other weights and/or anchors.

    New anchors change the normalisation of the panel too, so the panel is
    re-frozen from ``results`` (its members must be encoders of the table). The
    version id gains ``+weights`` / ``+anchors`` so no page passes a what-if
    score off as the standard's.

    Raises
    ------
    NotebookError
        If a weight or anchor key is unknown or a value malformed.
    """
    if not weights and not anchors:
        return standard
    new = standard
    tags: list[str] = []
    if weights:
        unknown = sorted(set(weights) - set(standard.weights))
        if unknown:
            raise NotebookError(f"parameter 'weights': unknown key {unknown[0]!r}; valid: {', '.join(standard.weights)}")
        merged = {**standard.weights, **{k: float(v) for k, v in weights.items()}}
        new = replace(new, weights=merged)
        tags.append("weights")
    if anchors:
        unknown = sorted(set(anchors) - set(standard.anchors))
        if unknown:
            raise NotebookError(f"parameter 'anchors': unknown axis {unknown[0]!r}; valid: {', '.join(standard.anchors)}")
        merged_anchors = dict(standard.anchors)
        for axis, pair in anchors.items():
            values = list(pair)
            if len(values) != 2:
                raise NotebookError(f"parameter 'anchors': axis {axis!r} needs [worst, best], got {pair!r}")
            merged_anchors[axis] = (float(values[0]), float(values[1]))
        base = replace(new, anchors=merged_anchors)
        new = freeze_standard(results, version=base.version, panel=list(standard.panel_names), base=base,
                              arm=standard.arm, created=BUILD_CREATED, description=base.description)
        tags.append("anchors")
    return replace(new, version=f"{standard.version}+{'+'.join(tags)}")


def load_context(
    results_path: str | os.PathLike[str] | None,
    profile: str = "default",
    standard_path: str | os.PathLike[str] | None = None,
    simulated: bool | None = None,
    datasets: Sequence[str] | None = None,
    encoders: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None,
    weights: Mapping[str, float] | None = None,
    anchors: Mapping[str, Sequence[float]] | None = None,
) -> BookContext:
    """Read, filter and prepare a chapter's inputs.

    Parameters
    ----------
    results_path : path, optional
        Results table (Parquet or CSV); ``None`` reads the default run folder of
        ``profile``.
    profile : str
        The run profile (shown on the banner).
    standard_path : path, optional
        See :func:`resolve_standard`.
    simulated : bool, optional
        Whether the table comes from the phantom cohort (shown on the banner);
        ``None`` reads it from the run manifest beside the table.
    datasets, encoders, seeds : sequence, optional
        Keep only these (``None``: all).
    weights, anchors : mapping, optional
        What-if overrides, see :func:`override_standard`.

    Raises
    ------
    NotebookError
        If a filter names a value absent from the table.
    SchemaError, ReferenceStandardError
        If the table or the standard is invalid.
    """
    path = resolve_input_path(results_path) if results_path is not None else default_results_path(profile)
    if not path.is_file():
        raise NotebookError(
            f"parameter 'results_path': no results table at {path} (run 'crsbench run --profile {profile}' first)"
        )
    # Validated once; the chapter's filtered table (rows of a valid table) once more, if filtered.
    full = read_validated(path)
    frame = _filter(full.frame, "dataset", datasets, "datasets")
    frame = _filter(frame, "encoder", encoders, "encoders")
    frame = _filter(frame, "seed", seeds, "seeds")
    table = full if frame is full.frame else as_validated(frame, source=str(path))
    # A build standard is frozen from the whole table, so that chapters filtered
    # differently still score against one and the same reference.
    if standard_path is None:
        standard_path = run_standard(path)
    standard = override_standard(resolve_standard(standard_path, full), full, weights=weights, anchors=anchors)
    return BookContext(
        results=table.frame,
        standard=standard,
        # The date a chapter's numbers were computed (SOURCE_DATE_EPOCH pins it for reproducible builds).
        provenance=provenance(table, standard, profile=profile,
                              simulated=simulated if simulated is not None else simulated_from_manifest(path),
                              built=build_date()),
        results_path=path,
        validated=table,
    )


def prediction_arrays(ctx: BookContext, arm: str = "frozen") -> dict[str, DatasetPredictions]:
    """The stored per-image predictions of a chapter's run, restricted to its filters.

    Parameters
    ----------
    ctx : BookContext
        The chapter's context; its datasets, encoders and seeds (after the
        chapter's filters) select the predictions.
    arm : {"frozen", "lora"}

    Returns
    -------
    dict
        Dataset -> :class:`~crsbench_lib.results.predictions.DatasetPredictions`.

    Raises
    ------
    SchemaError
        If the run folder has no stored predictions or lacks a selected name.

    Examples
    --------
    >>> ctx = load_context(None, profile="quick")  # doctest: +SKIP
    >>> sorted(prediction_arrays(ctx))  # doctest: +SKIP
    ['cxr', 'derm', 'fundus', 'histo']
    """
    table = ctx.results[ctx.results["arm"] == arm]
    return restrict_arrays(load_prediction_arrays(ctx.run_dir, arm), datasets=sorted(set(table["dataset"])), encoders=sorted(set(table["encoder"])),
                           seeds=sorted({int(s) for s in table["seed"]}))
