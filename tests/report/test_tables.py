import pandas as pd

from crsbench_lib.report import tables


def test_show_table_rounds_hides_index_and_scrolls_in_its_own_box():
    frame = pd.DataFrame({"long_column_name": [0.123456, 1.0], "flag": [True, False]})
    html = tables.show_table(frame, caption="A caption", precision=2)._repr_html_()
    assert html.startswith(f'<div class="{tables.SCROLL_CLASS}"') and "overflow-x:auto" in html
    assert "0.12" in html and "0.123456" not in html
    assert "yes" in html and "no" in html and "A caption" in html
    assert "long_\u200bcolumn_\u200bname" in html
    assert 'class="row_heading' not in html  # the index is hidden


def test_show_table_keeps_a_named_index():
    frame = pd.DataFrame({"x": [1]}, index=pd.Index(["a"], name="held_out"))
    assert "held_out" in tables.show_table(frame)._repr_html_()
