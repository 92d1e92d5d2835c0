"""The book's palette: Okabe-Ito colours, and grey for every encoder a highlight leaves out."""

from matplotlib.colors import to_hex

from crsbench_lib.report import style


def test_palette_is_okabe_ito_and_highlight_greys_the_rest():
    colours = style.encoder_colours(["a", "b", "c"], highlight=["b"])
    assert to_hex(colours["b"]).upper() == style.OKABE_ITO[0]
    assert to_hex(colours["a"]).upper() == style.MUTED.upper()
    assert len({to_hex(c) for c in style.encoder_colours(["a", "b", "c"]).values()}) == 3
