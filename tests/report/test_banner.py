from crsbench_lib import __version__
from crsbench_lib.report.banner import provenance


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
