from types import SimpleNamespace

import pandas as pd

from crsbench_lib.report import page
from crsbench_lib.report.banner import provenance


def _ctx(table, standard, simulated):
    return SimpleNamespace(results=table, standard=standard,
                           provenance=provenance(table, standard, profile="quick", simulated=simulated))


def test_header_shows_the_simulated_banner_first_and_provenance_collapsed(table, standard):
    header = page.chapter_header(_ctx(table, standard, True), {"arm": "frozen", "results_path": "/home/x/run/results.parquet"})
    html = header._repr_html_()
    assert html.startswith(f'<div class="{page.BANNER_CLASS}"')
    assert "<details" in html and "<summary>" in html
    for field in ("standard hash", "results hash", "parameters", "packages", "numpy"):
        assert field in html
    # The build machine's path is reduced to the file name.
    assert "/home/x" not in html and "results_path=results.parquet" in html


def test_header_without_simulation_has_no_banner(table, standard):
    html = page.chapter_header(_ctx(table, standard, False))._repr_html_()
    assert page.BANNER_CLASS not in html and "<details" in html


def test_caption_prefix():
    assert page.caption_prefix(True) == page.SIMULATED_CAPTION
    assert page.caption_prefix(False) != page.caption_prefix(True)


def test_display_value_keeps_plain_values():
    assert page.display_value(3) == "3"
    assert page.display_value("frozen") == "frozen"
    assert page.display_value(None) == "None"


def test_header_warns_when_the_table_lies_outside_its_standard(table, standard):
    from dataclasses import replace

    from crsbench_lib.scoring.fit import FREEZE_HINT

    assert page.chapter_header(_ctx(table, standard, False)).fit == ()  # its own standard fits
    assert page.FIT_CLASS not in page.chapter_header(_ctx(table, standard, False))._repr_html_()
    tight = replace(standard, anchors={**standard.anchors, "C": (1e-9, 0.0)})  # every C beyond the worst anchor
    header = page.chapter_header(_ctx(table, tight, False))
    assert any(line.startswith("axis C: ") for line in header.fit) and FREEZE_HINT in header.fit[-1]
    html = header._repr_html_()
    assert html.startswith(f'<div class="{page.FIT_CLASS}"') and "<li>axis C: " in html
    assert html.index(page.FIT_CLASS) < html.index("<details")
    assert f"**{page.FIT_TITLE}**" in header._repr_markdown_()
    assert page.FIT_ADVICE in html and page.FIT_ADVICE in header._repr_markdown_()
    # The header tells the page's takeaway to state no finding; a fitting page lets it through again.
    from crsbench_lib.report import takeaway

    assert takeaway._MISFIT["lines"] == header.fit
    page.chapter_header(_ctx(table, standard, False))
    assert takeaway._MISFIT["lines"] == ()
