"""The top of every chapter: the simulated-cohort banner and one collapsible provenance block.

A chapter's first output, right under its title, is :func:`chapter_header`:

* for the simulated phantom cohort, a banner saying so (above the fold, where a
  reader cannot miss it);
* when the table lies outside the reference standard it is scored against
  (:func:`crsbench_lib.scoring.fit.fit_warnings`: every encoder at dominance 0,
  or values beyond an anchor), a warning naming the axis and the remedy, since
  every score on the page is then flattened;
* one ``<details>`` block with everything that produced the page: the profile,
  the reference standard (version and content hash), the hash of the results
  table, the configuration hash(es), the chapter's parameters and the versions
  of the packages that computed it.

Paths are never shown as the build machine spells them (a page must not leak
``/home/...`` or make a reader think the path is theirs): a parameter that is a
path shows its file name only.
"""

from __future__ import annotations

import html
import os
import platform
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from crsbench_lib.report.banner import Provenance

# The packages whose versions decide a chapter's numbers (scoring, tables, figures).
PACKAGES: tuple[str, ...] = ("crsbench", "numpy", "pandas", "scipy", "scikit-learn", "matplotlib", "torch")
SIMULATED_TEXT = (
    "SIMULATED COHORT: the images are procedural phantoms and the encoders a small CPU zoo; "
    "the numbers illustrate the method and are not claims about real medical encoders."
)
SIMULATED_CAPTION = "Simulated cohort."
USER_DATA_CAPTION = "Cohort: user data."
UNKNOWN_CAPTION = "Cohort: not recorded."
BANNER_CLASS = "crs-simulated-banner"
# Inline as well as in the book's CSS, so a standalone HTML page of a rerun shows it too.
BANNER_STYLE = "border-left:5px solid #D55E00;background:#FDF1E8;padding:6px 12px;margin:4px 0 8px 0"
PROVENANCE_CLASS = "crs-provenance-details"
FIT_CLASS = "crs-fit-warning"
FIT_TITLE = "The reference standard does not fit this table"
#: What a reader does with a page whose standard does not fit (shown under the problems).
FIT_ADVICE = ("Every score on this page is flattened, so read none of its findings as a result: name no standard in "
              "the profile (the run and the book then freeze one from the run itself), or freeze your own.")


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    """Installed version of each package (``"not installed"`` when absent), plus Python's."""
    versions = {"python": platform.python_version()}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def display_value(value: Any) -> str:
    """A parameter value as a page shows it: paths reduced to their file name.

    Examples
    --------
    >>> display_value("/home/me/runs/default/results.parquet")
    'results.parquet'
    >>> display_value(["derm", "cxr"])
    "['derm', 'cxr']"
    """
    if isinstance(value, os.PathLike) or (isinstance(value, str) and (os.sep in value or value.startswith("~"))):
        return os.path.basename(os.fspath(value).rstrip(os.sep)) or os.fspath(value)
    return repr(value) if not isinstance(value, str) else value


def caption_prefix(simulated: bool | None) -> str:
    """What every figure caption starts with: whether the cohort is simulated."""
    return {True: SIMULATED_CAPTION, False: USER_DATA_CAPTION, None: UNKNOWN_CAPTION}[simulated]


@dataclass(frozen=True)
class ChapterHeader:
    """The banner and provenance block of one chapter (renders as HTML in a notebook).

    Attributes
    ----------
    provenance : Provenance
        Profile, standard, hashes, cohort.
    results_hash : str
        Content hash of the results table the chapter read.
    parameters : mapping
        The chapter's parameters (values as run).
    versions : mapping
        Package versions (:func:`package_versions`).
    fit : tuple of str
        :func:`~crsbench_lib.scoring.fit.fit_warnings` of the chapter's table
        against its standard (empty: it fits, and no warning is shown).
    """

    provenance: Provenance
    results_hash: str
    parameters: Mapping[str, Any]
    versions: Mapping[str, str]
    fit: tuple[str, ...] = ()

    def fields(self) -> list[tuple[str, str]]:
        """Every line of the provenance block, as (label, text)."""
        rows = list(self.provenance.as_dict().items())
        rows.append(("standard hash", self.provenance.standard_hash or "none"))
        rows.append(("results hash", self.results_hash))
        rows.append(("parameters", ", ".join(f"{k}={display_value(v)}" for k, v in self.parameters.items()) or "none"))
        rows.append(("packages", ", ".join(f"{k} {v}" for k, v in self.versions.items())))
        return rows

    def _repr_html_(self) -> str:
        banner = (f'<div class="{BANNER_CLASS}" role="note" style="{BANNER_STYLE}"><strong>{html.escape(SIMULATED_TEXT.split(":", 1)[0])}</strong>:'
                  f"{html.escape(SIMULATED_TEXT.split(':', 1)[1])}</div>" if self.provenance.simulated is True else "")
        if self.fit:
            items = "".join(f"<li>{html.escape(line)}</li>" for line in self.fit)
            banner += (f'<div class="{FIT_CLASS}" role="note" style="{BANNER_STYLE}"><strong>{html.escape(FIT_TITLE)}'
                       f"</strong><ul>{items}</ul><p>{html.escape(FIT_ADVICE)}</p></div>")
        summary = f"Provenance: profile {self.provenance.profile}, standard {self.provenance.standard_version}"
        rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in self.fields())
        return (f"{banner}<details class=\"{PROVENANCE_CLASS}\"><summary>{html.escape(summary)}</summary>"
                f"<table>{rows}</table></details>")

    def _repr_markdown_(self) -> str:
        lines = [SIMULATED_TEXT, ""] if self.provenance.simulated is True else []
        if self.fit:
            lines += [f"**{FIT_TITLE}**", "", *(f"- {line}" for line in self.fit), "", FIT_ADVICE, ""]
        lines += [f"- {k}: {v}" for k, v in self.fields()]
        return "\n".join(lines)


def chapter_header(ctx: Any, parameters: Mapping[str, Any] | None = None) -> ChapterHeader:
    """The header of a chapter from its :class:`~crsbench_lib.report.context.BookContext`.

    Parameters
    ----------
    ctx : BookContext
        The chapter's inputs (results, standard, provenance); the results are
        scored against the standard to check that they fit it.
    parameters : mapping, optional
        The chapter's parameters as run.

    Returns
    -------
    ChapterHeader
        Display it as a cell's last expression.
    """
    from crsbench_lib.report.tables import restart_table_numbers
    from crsbench_lib.report.takeaway import withhold_findings
    from crsbench_lib.scoring.crs import score_results
    from crsbench_lib.scoring.fit import fit_warnings
    from crsbench_lib.standard import results_hash

    # The header opens a page: its tables are numbered from 1.
    restart_table_numbers()
    table = getattr(ctx, "validated", None) or ctx.results
    scores = score_results(table, ctx.standard, arm=ctx.standard.arm)
    fit = tuple(fit_warnings(scores, ctx.standard))
    # A page whose table does not fit its standard states no finding in its takeaway.
    withhold_findings(ctx.standard.version, fit)
    return ChapterHeader(
        provenance=ctx.provenance,
        results_hash=results_hash(table),
        parameters=dict(parameters or {}),
        versions=package_versions(),
        fit=fit,
    )


COHORT_NOTE = "cohort_note"  # the glue key every figure caption starts with


def glue_cohort(ctx: Any) -> str:
    """Glue the caption prefix (simulated or not) under :data:`COHORT_NOTE`; return it.

    Figure captions start with ``{glue:md}`cohort_note``` so that every figure
    built on the simulated cohort says so in its caption.
    """
    from IPython.display import Markdown
    from myst_nb import glue

    note = caption_prefix(ctx.provenance.simulated)
    glue(COHORT_NOTE, Markdown(f"**{note}**"), display=False)
    return note
