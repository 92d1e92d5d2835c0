"""``crsbench encoder check``: the printed facts, and one line with exit 2 for every bad encoder."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from crsbench_lib.cli import main
from tests.encoders.model_files import ReturnsNaN, ThreeD, TinyNet, WidthFollowsBatch, export_pt2, export_torchscript


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse rejects bad option values itself
        code = int(exc.code)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_check_a_zoo_encoder(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["encoder", "check", "pixels", "--batch", "4"], capsys)
    assert code == 0 and err == ""
    for fact in ("encoder: pixels (handcrafted)", "two batches of 4 and 3 RGB images at 32 px", "output width: 432",
                 "dtype: float32", "bit-identical on a second run: yes", "NaN/inf: none", "ms per image:",
                 "peak memory:", "LoRA arm: not adapted"):
        assert fact in out


def test_check_a_file_encoder(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    export_pt2(TinyNet(), tmp_path / "mine.pt2")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["encoder", "check", "file:mine.pt2", "--device", "cpu"], capsys)
    assert code == 0 and err == ""
    assert "encoder: file:mine.pt2 (file)" in out and "output width: 6" in out and "bit-identical on a second run: yes" in out
    assert f"file: {tmp_path / 'mine.pt2'} (torch.export," in out and "parameters: 278" in out
    assert "sha256: " + __import__("hashlib").sha256((tmp_path / "mine.pt2").read_bytes()).hexdigest() in out
    assert "cannot be LoRA-adapted" in out


def _pickle(path: Path) -> None:
    torch.save(TinyNet(), path)


@pytest.mark.parametrize(("make", "name", "message"), [
    (None, "absent.pt2", "absent.pt2: no such model file"),
    (lambda p: p.write_text("not a model"), "notes.pt", "is not a TorchScript file"),
    (lambda p: p.write_text("not a model"), "notes.pt2", "is not a torch.export archive"),
    (_pickle, "pickled.pt", "is a pickle (torch.save of a module), which is never loaded"),
    (lambda p: export_torchscript(ThreeD(), p), "three_d.pt", "output has shape (2, 3, 32) on 2 images"),
    (lambda p: export_torchscript(ReturnsNaN(), p), "nan.pt", "non-finite features (6 NaN"),
    (lambda p: export_torchscript(WidthFollowsBatch(), p, script=True), "width.pt",
     "output width changes between batches (6, then 24 on a batch of 8"),
])
def test_bad_files_are_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], make, name: str,
                                       message: str) -> None:
    path = tmp_path / name
    if make is not None:
        make(path)
    code, out, err = run(["encoder", "check", f"file:{path}", "--device", "cpu"], capsys)
    assert code == 2 and out == ""
    assert err.startswith("crsbench: error: file:") and message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("argv", "message"), [
    (["encoder", "check", "no_such_encoder"], "unknown encoder 'no_such_encoder'"),
    (["encoder", "check", "pixels", "--batch", "1"], "batch must be >= 2"),
    (["encoder", "check", "pixels", "--side", "0"], "expected a positive integer"),
])
def test_other_bad_requests_are_one_line_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                message: str) -> None:
    code, _, err = run(argv, capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
