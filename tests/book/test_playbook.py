"""The playbook's commands run as written, in order, on a small manifest of the test's own (issue 49, item 1).

The page (``book/playbook.md``) is read for its ``bash`` blocks and its profile
(the ``yaml`` block); the test writes a tiny dermatology manifest at the path
the page names (``data/manifest.csv``: PNG images whose brightness carries the
label, a second clinic's test rows for the shift test), the profile at
``mine.yaml``, and runs every ``crsbench`` line through the command-line entry
point exactly as the page prints it, the gate and the tier included. Each must
exit 0 and leave what the next step reads.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from crsbench_lib.cli import main
from crsbench_lib.paths import project_root

pytestmark = pytest.mark.slow

PAGE = project_root() / "book" / "playbook.md"
#: Images per split and site of the test's manifest; three classes, so every split holds every class.
SIZES = {("train", "clinic_a"): 90, ("val", "clinic_a"): 45, ("test", "clinic_a"): 60, ("test", "clinic_b"): 60}
CLASSES = ("bcc", "melanoma", "nevus")


def blocks(language: str) -> list[str]:
    """The page's fenced blocks of one language, in order."""
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(), flags=re.S)


def commands() -> list[str]:
    """Every ``crsbench`` line of the page's bash blocks, in order."""
    return [line.strip() for block in blocks("bash") for line in block.splitlines() if line.startswith("crsbench ")]


def write_manifest(folder: Path, rng: np.random.Generator) -> None:
    """``data/manifest.csv`` and its images: the label sets the brightness, clinic B is darker (a shift)."""
    images = folder / "data" / "img"
    images.mkdir(parents=True)
    rows = ["path,split,site,diagnosis"]
    k = 0
    for (split, site), n in SIZES.items():
        for i in range(n):
            label = i % len(CLASSES)
            base = rng.integers(0, 110, size=(32, 32, 3)) + 45 * label - (25 if site == "clinic_b" else 0)
            name = f"{k:04d}.png"
            Image.fromarray(np.clip(base, 0, 255).astype(np.uint8)).save(images / name)
            rows.append(f"img/{name},{split},{site},{CLASSES[label]}")
            k += 1
    (folder / "data" / "manifest.csv").write_text("\n".join(rows) + "\n")


def test_the_page_has_ten_steps_each_with_its_chapter() -> None:
    text = PAGE.read_text()
    steps = re.findall(r"^## (\d+)\. ", text, flags=re.M)
    assert steps == [str(i) for i in range(1, 11)]
    for name in ("selection_gate", "leading_tier", "insertion", "agreement"):
        assert f"notebooks/{name}" in text
    assert len(blocks("yaml")) == 1 and len(commands()) >= 7


def test_the_playbooks_commands_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CRSBENCH_CACHE", str(tmp_path / "cache"))
    write_manifest(tmp_path, np.random.default_rng(7))
    profile = yaml.safe_load(blocks("yaml")[0])
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(profile))
    (tmp_path / "standards").mkdir()
    for command in commands():
        status = main(shlex.split(command)[1:])
        out, err = capsys.readouterr()
        assert status == 0, f"{command}\n{out[-2000:]}\n{err[-2000:]}"
        if command.startswith("crsbench run "):
            assert "fit: " in out
        if command.startswith("crsbench data-needs "):
            assert "closest call: " in out
    assert (tmp_path / "runs" / "mine" / "results.parquet").is_file()
    assert (tmp_path / "standards" / "mine-v1.yaml").is_file()
    for report in ("gate", "tier"):
        assert list((tmp_path / "reports" / report).glob("*.ipynb")), f"the {report} page was not written"
