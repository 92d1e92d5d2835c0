"""The provenance banner every page of the book shows.

A reader of any chapter must be able to tell which run produced it: the
profile, the reference standard (version and content hash), the configuration
hash recorded in the results table, the content hash of the results table, the
package version, the build date and, for the embedded phantom cohort, that the
cohort is simulated.
"""

from __future__ import annotations

import dataclasses
import html
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from crsbench_lib import __version__
from crsbench_lib.errors import ConfigError
from crsbench_lib.results.validated import ValidatedResults, as_validated

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
    results_hash : str
        Content hash of the results table (``sha256:...``, see
        :func:`crsbench_lib.standard.results_hash`), "" if unknown.
    build_date : str
        ISO date (UTC) the page was built, "" when not a book build.
    """

    profile: str
    standard_version: str
    standard_hash: str
    config_hashes: tuple[str, ...]
    package_version: str
    results_package_versions: tuple[str, ...]
    simulated: bool | None
    results_hash: str = ""
    build_date: str = ""

    def short_config_hash(self) -> str:
        """The config hash(es), shortened, comma-separated ("none recorded" when absent)."""
        values = [h.split(":", 1)[-1][:HASH_CHARS] for h in self.config_hashes if h]
        return ", ".join(values) if values else "none recorded"

    def short_results_hash(self) -> str:
        """The results table's content hash, shortened ("not recorded" when absent)."""
        return _short(self.results_hash) if self.results_hash else "not recorded"

    def as_dict(self) -> dict[str, str]:
        """The banner's fields as text (for tables and substitutions)."""
        fields = {
            "profile": self.profile,
            "standard": self.standard_version + (f" ({_short(self.standard_hash)})" if self.standard_hash else ""),
            "config hash": self.short_config_hash(),
            "results hash": self.short_results_hash(),
            "package": f"crsbench {self.package_version}",
            "cohort": {True: "simulated phantom cohort", False: "user data", None: "not recorded (no run manifest)"}[self.simulated],
        }
        if self.build_date:
            fields["built"] = self.build_date
        return fields

    def to_json(self) -> dict[str, Any]:
        """Every field as JSON-ready values (inverse: :meth:`from_json`)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str = "provenance") -> Provenance:
        """Read :meth:`to_json`'s mapping back.

        Raises
        ------
        ConfigError
            If a field is missing or of the wrong kind (naming it and ``source``).
        """
        values: dict[str, Any] = {}
        for field in dataclasses.fields(cls):
            if field.name not in data:
                if field.default is dataclasses.MISSING:
                    raise ConfigError(f"{source}: field '{field.name}' is missing")
                continue
            value = data[field.name]
            if field.name in ("config_hashes", "results_package_versions"):
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise ConfigError(f"{source}: field '{field.name}' must be a list of strings")
                value = tuple(value)
            elif field.name == "simulated":
                if value is not None and not isinstance(value, bool):
                    raise ConfigError(f"{source}: field 'simulated' must be true, false or null")
            elif not isinstance(value, str):
                raise ConfigError(f"{source}: field '{field.name}' must be a string")
            values[field.name] = value
        return cls(**values)

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


def _short(digest: str) -> str:
    return digest.split(":", 1)[-1][:HASH_CHARS]


def release_lines(prov: Provenance) -> list[tuple[str, str]]:
    """What identifies a build of the book, as (label, value) pairs.

    The package version, the reference standard (version and full content
    hash), the results table's content hash and the build date: the fields a
    front page or a PDF's first page must show so that a reader can match the
    book to the package release, the standard and the results it shows.

    Examples
    --------
    >>> prov = Provenance("quick", "crs-v1", "sha256:ab", (), "0.2.0", (), True, "sha256:cd", "2026-11-30")
    >>> release_lines(prov)[0]
    ('Package', 'crsbench 0.2.0')
    """
    return [
        ("Package", f"crsbench {prov.package_version}"),
        ("Reference standard", prov.standard_version + (f" ({prov.standard_hash})" if prov.standard_hash else "")),
        ("Results", prov.results_hash or "not recorded"),
        ("Profile", prov.profile),
        ("Built", prov.build_date or "not a book build"),
    ]


def release_markdown(prov: Provenance) -> str:
    """:func:`release_lines` as a Markdown list (the book's front page).

    Examples
    --------
    >>> prov = Provenance("quick", "crs-v1", "", (), "0.2.0", (), None)
    >>> print(release_markdown(prov).splitlines()[0])
    - **Package:** crsbench 0.2.0
    """
    return "\n".join(f"- **{label}:** {value}" for label, value in release_lines(prov))


def build_date(now: datetime | None = None) -> str:
    """Today's date (UTC, ISO 8601), or that of ``$SOURCE_DATE_EPOCH`` if set.

    ``SOURCE_DATE_EPOCH`` (seconds since 1970, the reproducible-builds
    convention) lets two builds of one commit render identical pages.

    Raises
    ------
    ConfigError
        If ``SOURCE_DATE_EPOCH`` is not an integer.
    """
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is not None:
        try:
            now = datetime.fromtimestamp(int(epoch), tz=UTC)
        except ValueError:
            raise ConfigError(f"SOURCE_DATE_EPOCH must be whole seconds since 1970, got {epoch!r}") from None
    return (now or datetime.now(tz=UTC)).date().isoformat()


def _distinct(values: Iterable[object]) -> tuple[str, ...]:
    return tuple(sorted({str(v) for v in values if isinstance(v, str) and v}))


def provenance(
    results: pd.DataFrame | ValidatedResults,
    standard: object | None,
    profile: str,
    simulated: bool | None,
    built: str = "",
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
    built : str
        The build date (:func:`build_date`); "" for a page outside a book build.

    Returns
    -------
    Provenance
        With the content hash of ``results`` (:func:`crsbench_lib.standard.results_hash`).
    """
    table = as_validated(results)
    frame = table.frame
    version = str(getattr(standard, "version", "")) if standard is not None else "none"
    content = getattr(standard, "content_hash", "") if standard is not None else ""
    content = content() if callable(content) else content
    return Provenance(
        profile=str(profile),
        standard_version=version or "unversioned",
        standard_hash=str(content or ""),
        config_hashes=_distinct(frame["config_hash"]) if "config_hash" in frame.columns else (),
        package_version=__version__,
        results_package_versions=_distinct(frame["package_version"]) if "package_version" in frame.columns else (),
        simulated=None if simulated is None else bool(simulated),
        results_hash=table.hash,
        build_date=built,
    )
