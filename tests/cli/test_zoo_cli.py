"""``crsbench zoo``: the cards listing, and one-line errors for bad pretraining requests."""

from __future__ import annotations

from pathlib import Path

import pytest

from crsbench_lib.cli import main
from crsbench_lib.encoders.zoo import DEFAULT_ZOO


def test_zoo_list_shows_every_card(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["zoo", "list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in DEFAULT_ZOO)
    assert "study_family" in out and "The zoo has" in out and "hub names" in out


def test_zoo_pretrain_rebuilds_one_piece(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["zoo", "pretrain", "--only", "cnn_random", "--out", str(tmp_path), "--jobs", "1"]) == 0
    assert (tmp_path / "cnn_random.pt").is_file() and "cnn_random:" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["zoo", "pretrain", "--only", "resnet"], "unknown pretraining piece"),
        (["zoo", "pretrain", "--jobs", "0"], "expected a positive integer"),
    ],
)
def test_zoo_pretrain_errors_are_one_line(argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main([*argv, "--out", str(tmp_path)])
    except SystemExit as exc:  # argparse rejects bad option values itself
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
