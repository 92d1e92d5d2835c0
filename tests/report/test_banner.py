import json
from datetime import UTC, datetime

import pytest

from crsbench_lib import __version__
from crsbench_lib.errors import ConfigError
from crsbench_lib.report.banner import Provenance, build_date, provenance, release_lines, release_markdown
from crsbench_lib.standard import results_hash


def test_banner_names_every_field(table, standard):
    prov = provenance(table, standard, profile="quick", simulated=True)
    html = prov._repr_html_()
    for text in ("quick", standard.version, standard.content_hash.split(":")[1][:12], __version__, "synthetic", "Simulated cohort"):
        assert text in html
    assert "SIMULATED" in prov.text()


def test_real_data_has_no_simulation_note(table, standard):
    prov = provenance(table.assign(config_hash="sha256:abcdef0123456789"), standard, profile="paper", simulated=False)
    assert "Simulated" not in prov._repr_html_()
    assert prov.short_config_hash() == "abcdef012345"
    assert provenance(table.assign(config_hash=""), None, "x", False).short_config_hash() == "none recorded"


def test_unknown_cohort_is_said_so(table, standard):
    prov = provenance(table, standard, profile="x", simulated=None)
    assert "not recorded" in prov._repr_html_() and "Simulated" not in prov._repr_html_()


def test_banner_names_results_hash_and_build_date(table, standard):
    prov = provenance(table, standard, profile="quick", simulated=True, built="2026-11-30")
    assert prov.results_hash == results_hash(table)
    fields = prov.as_dict()
    assert fields["results hash"] == results_hash(table).split(":")[1][:12]
    assert fields["built"] == "2026-11-30"
    assert "built" not in provenance(table, standard, profile="quick", simulated=True).as_dict()
    assert provenance(table.iloc[::-1], standard, "quick", True).results_hash == prov.results_hash  # row order
    assert provenance(table.iloc[1:], standard, "quick", True).results_hash != prov.results_hash


def test_release_lines_name_package_standard_results_and_date(table, standard):
    prov = provenance(table, standard, profile="quick", simulated=True, built="2026-11-30")
    lines = dict(release_lines(prov))
    assert lines["Package"] == f"crsbench {__version__}"
    assert lines["Reference standard"] == f"{standard.version} ({standard.content_hash})"
    assert lines["Results"] == prov.results_hash and lines["Built"] == "2026-11-30"
    markdown = release_markdown(prov)
    assert markdown.count("\n- ") == len(lines) - 1 and f"**Package:** crsbench {__version__}" in markdown


def test_provenance_round_trips_through_json(table, standard):
    prov = provenance(table, standard, profile="quick", simulated=None, built="2026-11-30")
    assert Provenance.from_json(json.loads(json.dumps(prov.to_json()))) == prov
    with pytest.raises(ConfigError, match="field 'config_hashes'"):
        Provenance.from_json({**prov.to_json(), "config_hashes": "sha256:x"})
    with pytest.raises(ConfigError, match="field 'profile' is missing"):
        Provenance.from_json({k: v for k, v in prov.to_json().items() if k != "profile"})


def test_build_date_honours_source_date_epoch(monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    assert build_date(datetime(2026, 11, 30, 23, 59, tzinfo=UTC)) == "2026-11-30"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    assert build_date() == "1970-01-01"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(ConfigError, match="SOURCE_DATE_EPOCH"):
        build_date()
