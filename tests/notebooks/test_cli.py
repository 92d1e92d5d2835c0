"""``crsbench notebook``: bad names are clear errors listing the valid ones."""

import pytest

from crsbench_lib.cli import main
from crsbench_lib.cli.notebook import parse_value


def test_unknown_notebook_lists_valid_names(capsys):
    assert main(["notebook", "agreemnt"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("crsbench: error: unknown notebook 'agreemnt'; valid notebooks: ")
    assert "agreement" in err and "leading_tier" in err and len(err.strip().splitlines()) == 1


def test_unknown_parameter_lists_valid_parameters(capsys):
    assert main(["notebook", "leading_tier", "-p", "n_draw", "10"]) == 2
    err = capsys.readouterr().err
    assert "notebook 'leading_tier' has no parameter 'n_draw'; valid parameters: " in err
    assert "n_draws" in err and "results_path" in err


def test_repeated_parameter_and_missing_name(capsys):
    assert main(["notebook", "agreement", "-p", "arm", "frozen", "-p", "arm", "lora"]) == 2
    assert "given twice" in capsys.readouterr().err
    assert main(["notebook"]) == 2
    assert "valid notebooks:" in capsys.readouterr().err


def test_list(capsys):
    assert main(["notebook", "--list"]) == 0
    out = capsys.readouterr().out
    assert "selection_gate: " in out and "thresholds" in out


@pytest.mark.parametrize(("text", "value"), [("200", 200), ("0.5", 0.5), ("null", None), ("true", True),
                                             ("[hog, pixels]", ["hog", "pixels"]), ("{D: 0.8}", {"D": 0.8}),
                                             ("frozen", "frozen"), ("a: b: c", "a: b: c")])
def test_values_are_yaml(text, value):
    assert parse_value(text) == value


@pytest.mark.slow
def test_rerun_one_notebook_with_new_parameters(book_inputs, tmp_path, capsys):
    out = tmp_path / "tier.ipynb"
    args = ["notebook", "leading_tier", "-p", "results_path", book_inputs["results_path"], "-p", "n_draws", "50",
            "-p", "top_k", "2", "--out", str(out)]
    assert main(args) == 0
    assert "executed in" in capsys.readouterr().out
    text = out.read_text()
    assert "n_draws = 50" in text and "50 times" in text
    page = out.with_suffix(".html")
    assert page.is_file() and "50 times" in page.read_text()
    assert main(args) == 0
    assert "reused from the execution cache" in capsys.readouterr().out


def test_the_book_build_is_never_overwritten_unless_asked(capsys, tmp_path):
    from crsbench_lib.report.notebooks import default_build_dir, rerun_destination

    book_copy = default_build_dir() / "notebooks" / "leading_tier.ipynb"
    assert main(["notebook", "leading_tier", "--out", str(book_copy)]) == 2
    assert "--overwrite-book" in capsys.readouterr().err
    assert rerun_destination("leading_tier", book_copy, overwrite_book=True) == book_copy
    assert rerun_destination("leading_tier", tmp_path) == tmp_path / "leading_tier.ipynb"
    assert rerun_destination("leading_tier", None).parts[-3:] == ("crsbench-reruns", "leading_tier", "leading_tier.ipynb")
