"""The provenance banner every page of the book shows.

A reader of any chapter must be able to tell which run produced it: the
profile, the reference standard (version and content hash), the configuration
hash recorded in the results table, the package version, and, for the embedded
phantom cohort, that the cohort is simulated.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from crsbench_lib import __version__

HASH_CHARS = 12  # enough to tell runs apart on a page; the full hashes are in the run manifest


@dataclass(frozen=True)
class Provenance:
    """What produced a page.

    Attributes
    ----------
    profile : str
        Run profile name (``quick``, ``default``, ``paper`` or a config path).
    standard_version : str
        Version id of the reference standard.
    standard_hash : str
        Content hash of the standard (``sha256:...``), "" if unknown.
    config_hashes : tuple of str
        Distinct ``config_hash`` values of the results table.
    package_version : str
        crsbench version that rendered the page.
    results_package_versions : tuple of str
        crsbench versions recorded in the results table.
    simulated : bool or None
        Whether the cohort is the embedded phantom (simulated) cohort; ``None``
        when no run manifest says.
    """

    profile: str
    standard_version: str
    standard_hash: str
    config_hashes: tuple[str, ...]
    package_version: str
    results_package_versions: tuple[str, ...]
    simulated: bool | None

    def short_config_hash(self) -> str:
        """The config hash(es), shortened, comma-separated ("none recorded" when absent)."""
        values = [h.split(":", 1)[-1][:HASH_CHARS] for h in self.config_hashes if h]
        return ", ".join(values) if values else "none recorded"

    def as_dict(self) -> dict[str, str]:
        """The banner's fields as text (for tables and substitutions)."""
        return {
            "profile": self.profile,
            "standard": self.standard_version + (f" ({self.standard_hash.split(':', 1)[-1][:HASH_CHARS]})" if self.standard_hash else ""),
            "config hash": self.short_config_hash(),
            "package": f"crsbench {self.package_version}",
            "cohort": {True: "simulated phantom cohort", False: "user data", None: "not recorded (no run manifest)"}[self.simulated],
        }

    def text(self) -> str:
        """One line of plain text."""
        line = " | ".join(f"{k}: {v}" for k, v in self.as_dict().items())
        return line + (" -- SIMULATED COHORT: numbers illustrate the method, not real encoders." if self.simulated is True else "")

    def _repr_html_(self) -> str:
        fields = "".join(
            f'<span class="crs-prov-field"><b>{html.escape(k)}</b> {html.escape(v)}</span> ' for k, v in self.as_dict().items()
        )
        note = (
            '<div class="crs-prov-sim">Simulated cohort: the images are procedural phantoms and the encoders a small '
            "CPU zoo; the numbers illustrate the method and are not claims about real medical encoders.</div>"
            if self.simulated is True
            else ""
        )
        return (
            '<div class="crs-provenance" style="border-left:4px solid #0072B2;padding:4px 10px;margin:4px 0 12px 0;'
            'font-size:0.85em;background:#F4F8FB">'
            f"{fields}{note}</div>"
        )

    def _repr_markdown_(self) -> str:
        return self.text()


def _distinct(values: Iterable[object]) -> tuple[str, ...]:
    return tuple(sorted({str(v) for v in values if isinstance(v, str) and v}))


def provenance(
    results: pd.DataFrame,
    standard: object | None,
    profile: str,
    simulated: bool | None,
) -> Provenance:
    """Collect the provenance of a page from its results table and standard.

    Parameters
    ----------
    results : pandas.DataFrame
        The results table the page was computed from.
    standard : ReferenceStandard, optional
        The standard used to score (``version`` and ``content_hash`` are read).
    profile : str
        The run profile's name.
    simulated : bool or None
        Whether the results come from the phantom cohort (``None``: unknown).
    """
    version = str(getattr(standard, "version", "")) if standard is not None else "none"
    content = getattr(standard, "content_hash", "") if standard is not None else ""
    content = content() if callable(content) else content
    return Provenance(
        profile=str(profile),
        standard_version=version or "unversioned",
        standard_hash=str(content or ""),
        config_hashes=_distinct(results["config_hash"]) if "config_hash" in results.columns else (),
        package_version=__version__,
        results_package_versions=_distinct(results["package_version"]) if "package_version" in results.columns else (),
        simulated=None if simulated is None else bool(simulated),
    )
