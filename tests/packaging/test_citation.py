"""LICENSE, CITATION.cff, CHANGELOG.md and the "How to cite" page agree with pyproject.toml."""

import re
import tomllib

import jsonschema
import pytest
import yaml

from crsbench_lib.paths import project_root

# The parts of the Citation File Format 1.2.0 schema (citation-file-format/schema.json) that
# apply to this file: the required keys, and the shape of persons/entities and references.
_PERSON_OR_ENTITY = {
    "type": "object",
    "anyOf": [{"required": ["name"]}, {"required": ["family-names"]}, {"required": ["given-names"]}],
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "family-names": {"type": "string", "minLength": 1},
        "given-names": {"type": "string", "minLength": 1},
        "orcid": {"type": "string", "pattern": r"^https://orcid\.org/[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{3}[0-9X]{1}$"},
        "email": {"type": "string", "pattern": r"^[\S]+@[\S]+\.[\S]{2,}$"},
    },
}
CFF_SCHEMA = {
    "type": "object",
    "required": ["cff-version", "message", "title", "authors"],
    "properties": {
        "cff-version": {"type": "string", "pattern": r"^1\.2\.0$"},
        "message": {"type": "string", "minLength": 1},
        "title": {"type": "string", "minLength": 1},
        "authors": {"type": "array", "minItems": 1, "items": _PERSON_OR_ENTITY},
        "type": {"enum": ["dataset", "software"]},
        "version": {"type": ["string", "number"], "minLength": 1},
        "license": {"type": "string"},
        "abstract": {"type": "string", "minLength": 1},
        "keywords": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
        "doi": {"type": "string", "pattern": r"^10\.\d{4,9}(\.\d+)?/[A-Za-z0-9:/_;\-\.\(\)\[\]\\\\]+$"},
        "date-released": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
        "references": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["type", "title", "authors"],
                "properties": {
                    "type": {"type": "string"},
                    "title": {"type": "string", "minLength": 1},
                    "authors": {"type": "array", "minItems": 1, "items": _PERSON_OR_ENTITY},
                },
            },
        },
    },
}


def _pyproject() -> dict:
    return tomllib.loads((project_root() / "pyproject.toml").read_text())["project"]


def _citation() -> dict:
    return yaml.safe_load((project_root() / "CITATION.cff").read_text(encoding="utf-8"))


def test_citation_cff_is_valid_and_names_this_version():
    citation = _citation()
    jsonschema.validate(citation, CFF_SCHEMA)
    project = _pyproject()
    assert citation["version"] == project["version"]
    assert citation["license"] == project["license"]
    assert "doi" not in citation  # none has been minted: never invent one


def test_the_schema_rejects_what_cff_forbids():
    citation = _citation()
    for broken in ({k: v for k, v in citation.items() if k != "authors"},
                   {**citation, "cff-version": "1.1.0"},
                   {**citation, "authors": [{"affiliation": "nobody named"}]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, CFF_SCHEMA)


def test_license_is_the_one_pyproject_names():
    text = (project_root() / "LICENSE").read_text(encoding="utf-8")
    assert _pyproject()["license"] == "MIT"
    assert text.startswith("MIT License") and "Copyright (c) 2026 The CRS-Bench developers" in text


def test_changelog_follows_keep_a_changelog_and_leads_with_this_version():
    text = (project_root() / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (Unreleased|\d{4}-\d{2}-\d{2})$", text, flags=re.MULTILINE)
    assert releases, "no '## [X.Y.Z] - YYYY-MM-DD' (or '- Unreleased') heading"
    assert releases[0][0] == _pyproject()["version"], "the project's version must be the CHANGELOG's latest"
    versions = [tuple(map(int, v.split("."))) for v, _ in releases]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    assert all(date != "Unreleased" for _, date in releases[1:]), "only the latest entry may be unreleased"
    # Every release says what it did to the results.
    sections = re.split(r"^## \[", text, flags=re.MULTILINE)[1:]
    assert all("### Results" in section for section in sections)


def test_how_to_cite_page_cites_the_package_and_the_study():
    page = (project_root() / "book" / "cite.md").read_text(encoding="utf-8")
    toc = (project_root() / "book" / "_toc.yml").read_text(encoding="utf-8")
    assert "book/cite" in toc
    assert f"version = {{{_pyproject()['version']}}}" in page
    assert "When AUROC Agrees and the Decision Still Changes" in page and "@software{crsbench" in page
