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


def test_p_values_never_print_as_zero():
    # The smallest Monte Carlo permutation p-value of 9999 pairings, 1/10000, rounds to 0.000 at 3 decimals.
    frame = pd.DataFrame({"p_value": [1 / 10000, 0.04567, float("nan")], "estimate": [0.88, 0.1, 0.2]})
    html = tables.show_table(frame)._repr_html_()
    assert "&lt; 0.001" in html and "0.046" in html
    assert "0.000" not in html
    assert ">-<" in html  # a missing p-value stays a dash


def test_integers_stay_integers_in_an_object_column():
    frame = pd.DataFrame({"value": pd.Series([0.12345, 108], dtype=object)})
    html = tables.show_table(frame)._repr_html_()
    assert "0.123" in html and ">108<" in html and "108.000" not in html


def test_captions_are_numbered_per_page():
    tables.restart_table_numbers()
    first = tables.show_table(pd.DataFrame({"x": [1]}), caption="first")._repr_html_()
    uncaptioned = tables.show_table(pd.DataFrame({"x": [1]}))._repr_html_()
    second = tables.show_table(pd.DataFrame({"x": [1]}), caption="second")._repr_html_()
    unnumbered = tables.show_table(pd.DataFrame({"x": [1]}), caption="aside", numbered=False)._repr_html_()
    assert "Table 1: first" in first and "Table 2: second" in second
    assert "Table" not in uncaptioned and "Table" not in unnumbered and "aside" in unnumbered
    tables.restart_table_numbers()
    assert "Table 1: again" in tables.show_table(pd.DataFrame({"x": [1]}), caption="again")._repr_html_()


def test_text_cells_may_break_after_underscores_and_are_escaped():
    frame = pd.DataFrame({"encoder": ["simclr_broad_aug_s", "a<b", None], "value": [0.5, 0.25, 1.0]})
    html = tables.show_table(frame)._repr_html_()
    assert "simclr_<wbr>broad_<wbr>aug_<wbr>s" in html
    assert "a&lt;b" in html and "a<b" not in html
    assert "0.500" in html  # numeric columns keep their format
