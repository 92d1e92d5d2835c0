"""What the book says about the data a build is built on: the run's own datasets, or the phantom cohort.

A book built on a user's run must describe *that* run, not the embedded
phantom cohort: which datasets it read (from the run manifest beside the
results table), whether the reference standard fits its table
(:func:`crsbench_lib.scoring.fit.fit_warnings`), which axis terms it cannot
measure (:func:`crsbench_lib.scoring.fit.absent_terms`), how its figures relate
to the study's, and how to rebuild it. Every sentence is computed here from
those facts; the notebooks and the prose pages only place it.

Paths never appear in the text: a dataset's source is named by its MedMNIST
flag or its manifest's file name, never by the folder of the machine that ran it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from crsbench_lib.report.differences import SIMULATION_LIMITS, simulation_limits
from crsbench_lib.paths import shipped_profiles, standards_dir
from crsbench_lib.report.context import is_build_standard
from crsbench_lib.results.io import run_dir
from crsbench_lib.results.manifest import PHANTOM_KIND, manifest_beside
from crsbench_lib.results.validated import ValidatedResults, as_validated
from crsbench_lib.scoring.axes import standard_axes
from crsbench_lib.scoring.crs import score_results
from crsbench_lib.scoring.fit import absent_terms, fit_warnings, partial_terms
from crsbench_lib.scoring.published import PUBLISHED, PublishedFigures
from crsbench_lib.scoring.reproduce import compare_to_summary, load_summary, summary_filename
from crsbench_lib.standard import ReferenceStandard


PHANTOM_METHOD = (
    "The default build replaces those with an embedded, *simulated* cohort: three procedural datasets in the "
    "same three domains, each with a second site and a shortcut cue, and modality-specific corruptions at five "
    "severities, all generated from seeds. A zoo of hand-crafted extractors and small neural encoders stands in for the "
    "foundation models, so anyone can rebuild the same images and numbers offline."
)
PHANTOM_LIMITS = (
    "The cohort makes every analysis of the study *runnable* by anyone, offline, in minutes, and makes the "
    "pipeline testable end to end. It cannot make the numbers *mean* what the study's mean: the images are "
    "caricatures, the encoders are tiny and the gaps between them are of another kind. Read every later number "
    "as a demonstration of the method on known ground, never as evidence about real medical encoders."
)
PHANTOM_INTRO = (
    "The default build runs on an embedded *phantom* cohort: procedural dermatology, fundus and chest images and "
    "a zoo of small CPU encoders (hand-crafted features and small neural networks), so that the whole pipeline "
    "runs offline on two CPU cores. The images are generated, not acquired; what runs on them is the real "
    "pipeline -- real feature extractors, real probes, real corruptions and a real second-site shift -- but the "
    "numbers describe these simulated encoders on simulated images, not the foundation models of the study. Every "
    "page built on it says so in its banner. The `paper` profile runs the same chapters on real data and real models."
)
# A command or option quoted in a scoring message: 'crsbench freeze ...', '--standard FILE'.
_COMMAND = re.compile(r"'((?:crsbench |--)[^']*)'")
NO_MANIFEST = (
    "No run manifest lies beside the results table, so this build cannot say which datasets produced it."
)


@dataclass(frozen=True)
class RunDataset:
    """One dataset of a run, as the book names it.

    Attributes
    ----------
    name : str
        Its name in the results table.
    kind : str
        ``phantom``, ``medmnist`` or ``manifest``.
    domain : str
        Imaging domain (selects the corruption families).
    source : str
        Where its images come from, without any path (e.g. ``MedMNIST flag
        dermamnist at 28 px``).
    """

    name: str
    kind: str
    domain: str
    source: str

    @property
    def simulated(self) -> bool:
        """Whether the images are drawn by the phantom generators."""
        return self.kind == PHANTOM_KIND


@dataclass(frozen=True)
class RunData:
    """What a run manifest says about the data of a run.

    Attributes
    ----------
    profile : str
        The profile's name.
    config_file : str or None
        File name (no folder) of the profile the run read; ``None`` if not recorded.
    datasets : tuple of RunDataset
        In profile order.
    data_warnings : tuple of str
        The run's data-check warnings (a prevalence shift between development and test), one line each.
    data_checks : Mapping, optional
        Dataset -> its data checks as the manifest keeps them (datasets read from files only).
    """

    profile: str
    config_file: str | None
    datasets: tuple[RunDataset, ...]
    data_warnings: tuple[str, ...] = ()
    data_checks: Mapping[str, Mapping[str, Any]] | None = None

    @property
    def simulated(self) -> bool:
        """True when every dataset is a phantom (the embedded cohort)."""
        return bool(self.datasets) and all(d.simulated for d in self.datasets)


def _source(entry: Mapping[str, Any]) -> str:
    kind = entry.get("kind")
    if kind == PHANTOM_KIND:
        return "procedural phantom"
    if kind == "medmnist":
        return f"MedMNIST flag {entry.get('flag', entry.get('name'))} at {entry.get('size', 28)} px"
    if kind == "manifest":
        return f"CSV manifest {os.path.basename(str(entry.get('csv', '')))}"
    return f"{kind} dataset"


def read_run_data(results_path: str | os.PathLike[str]) -> RunData | None:
    """The datasets of the run beside ``results_path``, from its ``manifest.json``.

    Parameters
    ----------
    results_path : path
        A results table written by ``crsbench run`` (its manifest lies beside it).

    Returns
    -------
    RunData or None
        ``None`` when there is no readable manifest (a table copied elsewhere).

    Examples
    --------
    >>> read_run_data("/nonexistent/results.parquet") is None
    True
    """
    manifest = manifest_beside(results_path)
    if manifest is None or manifest.config is None or "datasets" not in manifest.config:
        return None
    domains = manifest.dataset_domains
    datasets = tuple(
        RunDataset(name=str(e["name"]), kind=str(e["kind"]),
                   domain=str(domains.get(e["name"], e.get("domain") or "unknown")), source=_source(e))
        for e in manifest.datasets
    )
    source = manifest.config_source
    return RunData(profile=manifest.profile, datasets=datasets,
                   config_file=os.path.basename(source) if source else None,
                   data_warnings=manifest.data_warnings, data_checks=manifest.data_checks or None)


def split_table(data: RunData | None) -> pd.DataFrame:
    """The data checks' split summary of every dataset read from files (empty for the phantom cohort).

    Returns
    -------
    pandas.DataFrame
        ``dataset, split, images, image size, channels, prevalence`` (see
        :func:`crsbench_lib.data.checks.split_summary`).
    """
    rows = [{"dataset": name, **row} for name, check in ((data.data_checks or {}) if data else {}).items()
            for row in check.get("splits", [])]
    return pd.DataFrame(rows, columns=["dataset", "split", "images", "image size", "channels", "prevalence"])


def prevalence_markdown(data: RunData | None, page: str) -> str:
    """A warning box for a page whose numbers a prevalence shift between development and test moves ("" if none).

    Parameters
    ----------
    data : RunData or None
        The run's data (:func:`read_run_data`).
    page : {"calibration", "gate", "cohort"}
        Which page shows it: the box says what the shift does to that page's numbers.

    Examples
    --------
    >>> run = RunData("mine", None, (), data_warnings=("dataset x: shift 0.275 > 0.05",))
    >>> prevalence_markdown(run, "gate").splitlines()[0]
    "> **Data check: the test split's class mix differs.**"
    >>> prevalence_markdown(None, "gate")
    ''
    """
    if data is None or not data.data_warnings:
        return ""
    consequence = {
        "calibration": "Calibrators fitted on the calibration split learn its prevalence, the development pool's, "
                       "so they cannot remove this error: the ECE below measures the data's shift as much as the "
                       "encoders.",
        "gate": "A calibration gate (an upper bound on C) then stops encoders for a property of the data, not of "
                "the encoders: compare the gate's verdicts with and without its C bound.",
        "cohort": "It moves every encoder's calibration (C) alike: the calibration and gate pages repeat it.",
    }[page]
    # A quoted block: a cell's Markdown output is rendered as CommonMark, where a MyST directive would show raw.
    lines = "\n".join(f"> - {w}" for w in data.data_warnings)
    return f"> **Data check: the test split's class mix differs.**\n>\n{lines}\n>\n> {consequence}\n"


def _join(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def describe_datasets(data: RunData) -> str:
    """One sentence naming every dataset of a run, its domain and its source.

    Examples
    --------
    >>> run = RunData("mine", "mine.yaml", (RunDataset("breastmnist", "medmnist", "radiology",
    ...                                                 "MedMNIST flag breastmnist at 28 px"),))
    >>> describe_datasets(run)
    'This build reads 1 dataset: `breastmnist` (radiology, MedMNIST flag breastmnist at 28 px).'
    """
    n = len(data.datasets)
    parts = [f"`{d.name}` ({d.domain}, {d.source})" for d in data.datasets]
    return f"This build reads {n} dataset{'s' if n != 1 else ''}: {_join(parts)}."


def _simulated_share(data: RunData) -> str:
    phantoms = [d.name for d in data.datasets if d.simulated]
    if not phantoms:
        return "None of them is simulated: every image of this build is read from these files."
    return (f"{len(phantoms)} of {len(data.datasets)} are simulated phantoms ({_join(phantoms)}); "
            "the others are read from files.")


def cohort_method(data: RunData | None) -> str:
    """The cohort chapter's *method* paragraph for the run's own data (the phantom text on the phantom cohort)."""
    if data is None:
        return NO_MANIFEST
    if data.simulated:
        return PHANTOM_METHOD
    return (f"{describe_datasets(data)} {_simulated_share(data)} The encoders are those the profile "
            f"`{data.profile}` names (the zoo table below marks them); every picture on this page is drawn from "
            "the run's own data.")


def cohort_limits(data: RunData | None) -> str:
    """The cohort chapter's *limits* paragraph."""
    if data is not None and data.simulated:
        return PHANTOM_LIMITS
    return ("The numbers of this book describe these encoders on these datasets, at the size the profile "
            "measured them: evidence about this data, not about the study's foundation models or clinical "
            "benchmarks. Where a chapter sets the study's figures beside this build's, the two come from "
            "different data and models, and are labelled so.")


def edition_label(data: RunData | None) -> str:
    """Which edition of the book a reader is on, as the front page's first words.

    Examples
    --------
    >>> edition_label(RunData("mine", "mine.yaml", (RunDataset("a", "medmnist", "ultrasound", "x"),)))
    '**This edition:** real data (profile `mine`), not the simulated default edition.'
    """
    if data is None:
        return "**This edition:** built from a results table whose run is not recorded."
    if data.simulated:
        return f"**This edition:** the simulated default edition (profile `{data.profile}`, the phantom cohort)."
    return f"**This edition:** real data (profile `{data.profile}`), not the simulated default edition."


def intro_text(data: RunData | None) -> str:
    """The front page's paragraph on the data the book is built on, after :func:`edition_label`."""
    return edition_label(data) + " " + _intro_body(data)


def _intro_body(data: RunData | None) -> str:
    if data is not None and data.simulated:
        return PHANTOM_INTRO
    if data is None:
        return NO_MANIFEST
    return (f"{describe_datasets(data)} {_simulated_share(data)} Every chapter is computed from this run's "
            f"results table (profile `{data.profile}`); where the study reported a figure, the chapter quotes it "
            "beside this build's, labelled as the study's, from different data and models.")


def sheets_caption(data: RunData | None) -> str:
    """Caption of the cohort chapter's example-images figure."""
    if data is None or not data.datasets:
        return "Examples of each class (rows) of the datasets of this run."
    kind = "phantom" if data.simulated else "dataset"
    return (f"Examples of each class or finding (rows), one block per {kind}: "
            f"{_join([f'{d.name} ({d.domain})' for d in data.datasets])}, drawn from this run's data.")


def site_text(shift_datasets: Sequence[str]) -> str:
    """What the cohort chapter says about the second site, from the datasets that have one.

    Examples
    --------
    >>> site_text([])
    'No dataset of this run has a second site, so the robustness axis R has no shift term.'
    """
    if not shift_datasets:
        return "No dataset of this run has a second site, so the robustness axis R has no shift term."
    return (f"{_join([f'`{n}`' for n in shift_datasets])} {'has' if len(shift_datasets) == 1 else 'have'} a "
            "second site: the same task elsewhere, differing as real sites do in several ways at once: acquisition "
            "(another scanner's response curve, noise texture, resolution and processing), population (another case "
            "mix), labelling (another reader or labeller) and the site's own habits (a marker or a device that "
            "travels with the label at one site and not at the other). Probes trained on the first site are tested on the "
            "second, and calibrators fitted at the first site are applied there unchanged.")


def site_caption(shift_datasets: Sequence[str]) -> str:
    """Caption of the cohort chapter's second-site figure.

    Examples
    --------
    >>> site_caption(["cxr"])
    'cxr: the same task at the first site (top) and at the second (bottom).'
    """
    if not shift_datasets:
        return "No dataset of this run has a second site: there is nothing to compare."
    return f"{shift_datasets[0]}: the same task at the first site (top) and at the second (bottom)."


#: The zoo page's checks on the simulated cohort: targets of its design.
ZOO_CHECKS_PHANTOM = (
    "A simulated world teaches true lessons only if pretraining can earn its keep in it: the best broad pretrained "
    "encoder should beat a linear probe on raw pixels and on PCA components clearly, no task should be solved "
    "outright, and the second site should be a realistic shift, not a collapse. On the simulated cohort these "
    "thresholds are *targets* its generators were tuned to meet, so a check that holds shows that the world meets "
    "its specification, not a finding about pretraining. The checks test the best broad encoder only; the sentence "
    "after the table sets every neural encoder beside every classical baseline. Both are computed from this run's "
    "results."
)
#: The same section on a user's data: measurements, with nothing to meet.
ZOO_CHECKS_DATA = (
    "On your own data there is nothing to meet: the table measures how much room these data leave to pretraining. "
    "Per dataset, it gives the clean AUROC of the best broad pretrained encoder of the zoo, its margins over a linear "
    "probe on raw pixels and on PCA components, and the highest clean AUROC any encoder reaches (a task near 1 "
    "ranks nothing). The sentence after the table sets every neural encoder beside every classical baseline. Both "
    "are computed from this run's results."
)


def zoo_checks_intro(data: RunData | None) -> str:
    """The zoo page's paragraph before its checks: the simulated world's targets, or measurements on user data."""
    return ZOO_CHECKS_DATA if data is not None and not data.simulated else ZOO_CHECKS_PHANTOM


def describe_measured_checks(measured: pd.DataFrame) -> str:
    """One sentence per dataset on what the data leave to pretraining (:func:`crsbench_lib.report.world.measured_checks`).

    Examples
    --------
    >>> table = pd.DataFrame({"dataset": ["a"], "best broad AUROC": [0.8], "margin over pixels": [0.05],
    ...                       "margin over pca": [-0.01], "highest clean AUROC": [0.83]})
    >>> describe_measured_checks(table)
    'On `a` the best broad pretrained encoder reaches a clean AUROC of 0.800, 0.050 above the pixel probe and 0.010 below the PCA probe; the highest of any encoder is 0.830.'
    """
    parts = []
    for row in measured.itertuples(index=False):
        values = dict(zip(measured.columns, row, strict=True))
        best = values.get("best broad AUROC", float("nan"))
        if pd.isna(best):
            parts.append(f"On `{values['dataset']}` no broad pretrained encoder was run.")
            continue
        margins = []
        for key, name in (("margin over pixels", "pixel"), ("margin over pca", "PCA")):
            margin = values.get(key, float("nan"))
            if not pd.isna(margin):
                margins.append(f"{abs(margin):.3f} {'above' if margin >= 0 else 'below'} the {name} probe")
        top = values.get("highest clean AUROC", float("nan"))
        parts.append(f"On `{values['dataset']}` the best broad pretrained encoder reaches a clean AUROC of {best:.3f}"
                     + (", " + " and ".join(margins) if margins else "")
                     + (f"; the highest of any encoder is {top:.3f}." if not pd.isna(top) else "."))
    return " ".join(parts)


def class_names_of(data: RunData | None) -> dict[str, tuple[str, ...]]:
    """Dataset -> its class names as the data checks read them (datasets read from files only)."""
    checks = (data.data_checks or {}) if data is not None else {}
    return {name: tuple(check.get("class_names", ())) for name, check in checks.items() if check.get("class_names")}


def fit_report(results: pd.DataFrame | ValidatedResults, standard: ReferenceStandard, arm: str | None = None) -> list[str]:
    """Whether the standard fits a table, and the terms it cannot measure, as sentences.

    Parameters
    ----------
    results : pandas.DataFrame
        A results table.
    standard : ReferenceStandard
        The standard the book scores with.
    arm : str, optional
        The arm scored (default: the standard's).

    Returns
    -------
    list of str
        The lines of :func:`~crsbench_lib.scoring.fit.fit_warnings` (or one line
        saying the table fits), then one line on absent terms.

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> from crsbench_lib.scoring.freeze import freeze_standard
    >>> table = synthetic_results(n_encoders=4, corruptions=("noise",))
    >>> fit_report(table, freeze_standard(table, "mine-v1"))[0]
    'The table fits standard mine-v1: no axis value lies beyond an anchor, and no axis puts every encoder below the whole panel.'
    """
    arm = arm or standard.arm
    table = as_validated(results)
    scores = score_results(table, standard, arm=arm)
    # A standard frozen from this very table says how (its description holds the choices).
    lines = [standard.description] if is_build_standard(standard) and standard.description else []
    misfit = fit_warnings(scores, standard)
    lines += misfit
    if not misfit:
        lines += [f"The table fits standard {standard.version}: no axis value lies beyond an anchor, and no axis "
                 "puts every encoder below the whole panel."]
    raw = standard_axes(table, standard, arm=arm)
    absent, partial = absent_terms(raw), partial_terms(raw, standard.robustness)
    if absent:
        lines.append("Terms this run cannot measure: " + "; ".join(absent) + ".")
    lines.extend(line + "." for line in partial)
    if not absent and not partial:
        lines.append("Every term of every axis is measured on every dataset.")
    return lines


def fit_markdown(results: pd.DataFrame | ValidatedResults, standard: ReferenceStandard, arm: str | None = None) -> str:
    """:func:`fit_report` as a Markdown list, quoted commands as code (so ``--`` is never typeset as a dash)."""
    return "\n".join("- " + _COMMAND.sub(r"`\1`", line) for line in fit_report(results, standard, arm))


def study_label(data: RunData | None, figures: PublishedFigures = PUBLISHED) -> str:
    """The label of every comparison with the study: what the two columns come from."""
    study = (f"The study's column is what it reported for {figures.n_encoders} foundation models on "
             f"{_join(list(figures.domains))} benchmarks")
    if data is None:
        return f"{study}; the other column is computed from this build's results table."
    what = "the simulated phantom cohort" if data.simulated else _join([f"`{d.name}`" for d in data.datasets])
    return (f"{study}; the other column is computed now from this run (profile `{data.profile}`, {what}). "
            "Different data and models: the comparison shows that each quantity is computable by the same "
            "definition, not that either reproduces the other.")


def rebuild_markdown(data: RunData | None, profile: str, results_path: str | os.PathLike[str] | None = None) -> str:
    """How to rebuild this book, as a sentence and a command that reuses the run's finished cells.

    Parameters
    ----------
    data : RunData or None
        The run (:func:`read_run_data`).
    profile : str
        The profile the book shows.
    results_path : path, optional
        The table the book was built from. When its folder is not the
        profile's default run folder (a run made with ``crsbench run --out``),
        the command names that folder with ``--run-out`` (by its name only:
        no path of the building machine appears), so that nothing is recomputed.

    Examples
    --------
    >>> "crsbench book --profile quick`" in rebuild_markdown(None, "quick")
    True
    >>> "--run-out runs-june" in rebuild_markdown(None, "quick", "/data/runs-june/results.parquet")
    True
    """
    if data is not None and data.config_file and profile not in shipped_profiles():
        command = f"crsbench book --config {data.config_file}"
        where = f"the profile file `{data.config_file}` (profile `{profile}`)"
    else:
        command = f"crsbench book --profile {profile}"
        where = f"the shipped profile `{profile}`"
    folder = ""
    if results_path is not None and Path(results_path).resolve().parent != run_dir(profile).resolve():
        name = Path(results_path).resolve().parent.name
        command += f" --run-out {name}"
        folder = (f" `{name}` stands for the folder the run wrote (`crsbench run --out`), which holds the results "
                  "table and its `manifest.json`: give its path as it is on your machine.")
    return (f"This book was built from {where}. From the folder holding that file, rebuild it with "
            f"`{command}` (finished cells are reused; add `--standard FILE` for another reference standard).{folder}")


LIMITS_COLUMNS: tuple[str, str] = ("aspect", "what this build cannot represent")


def build_limits(data: RunData | None, results: pd.DataFrame, figures: PublishedFigures = PUBLISHED) -> pd.DataFrame:
    """What this build cannot represent, beside the study: the simulation's limits, or the run's own.

    Parameters
    ----------
    data : RunData or None
        The run (:func:`read_run_data`); on the phantom cohort the table is
        :data:`~crsbench_lib.report.differences.SIMULATION_LIMITS`.
    results : pandas.DataFrame
        The results table (seeds, test sizes and second sites are read from it).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`LIMITS_COLUMNS`.
    """
    if data is not None and data.simulated:
        return simulation_limits().set_axis(list(LIMITS_COLUMNS), axis=1)
    clean = results[results["condition"] == "clean"]
    sizes = clean.groupby("dataset", observed=True)["n_test"].max()
    shifted = sorted(map(str, results.loc[results["condition"] == "shift", "dataset"].unique()))
    n_datasets, n_seeds = results["dataset"].nunique(), results["seed"].nunique()
    span = f"{int(sizes.min())}" if sizes.min() == sizes.max() else f"{int(sizes.min())} to {int(sizes.max())}"
    corruptions = dict(SIMULATION_LIMITS)["corruptions"]
    rows = [
        ("datasets", f"{n_datasets} dataset{'s' if n_datasets != 1 else ''}, not the study's benchmarks in "
                     f"{_join(list(figures.domains))}: the numbers speak for these tasks only."),
        ("encoders", f"{results['encoder'].nunique()} encoders, not the study's {figures.n_encoders} foundation "
                     "models."),
        ("shift", site_text(shifted)),
        ("corruptions", corruptions),
        ("scale", f"{n_seeds} seed{'s' if n_seeds != 1 else ''} and {span} test images per dataset."),
    ]
    return pd.DataFrame(rows, columns=list(LIMITS_COLUMNS))


def limits_caption(data: RunData | None) -> str:
    """Caption of :func:`build_limits`' table."""
    return "Limits of the simulated cohort" if data is not None and data.simulated else "Limits of this run"


def reproduction_markdown(results: pd.DataFrame | ValidatedResults, profile: str, folder: str | os.PathLike[str] | None = None) -> str:
    """Whether this build reproduces the project's reference run of its profile, and by how much it differs.

    Parameters
    ----------
    results : pandas.DataFrame
        The build's results table.
    profile : str
        The profile that produced it.
    folder : path-like, optional
        Where reference-run summaries live (default: the shipped ``standards/``).

    Returns
    -------
    str
        One paragraph: the comparison's verdict and the summary file, or that
        the project ships no summary for this profile.

    Examples
    --------
    >>> import pandas as pd
    >>> reproduction_markdown(pd.DataFrame(), "no-such-profile", folder="/nonexistent")
    'The project ships no reference-run summary for profile `no-such-profile`, so this build cannot say whether it reproduces one.'
    """
    path = Path(folder if folder is not None else standards_dir()) / summary_filename(profile)
    if not path.is_file():
        return (f"The project ships no reference-run summary for profile `{profile}`, so this build cannot say "
                "whether it reproduces one.")
    reproduction = compare_to_summary(results, load_summary(path))
    return (f"This build {reproduction.message()} (`standards/{path.name}`, tolerance {reproduction.tolerance:g} "
            "on every raw axis of every encoder).")

