"""The book built on a user's own MedMNIST files shows those files, not the phantom cohort.

The shipped ``medmnist-cpu`` profile is pointed at two tiny MedMNIST-layout
files written here (``root/{flag}.npz``, 60 images each at 28 px), with a small
grid (the hand-crafted encoders, one seed, one severity, the frozen arm). The
run is scored, a standard is frozen from it, and ``crsbench book --results``
renders the whole book against that standard: every chapter but the one the
run cannot fill (no LoRA arm: the transfer chapter, left out with the reason).
The data-dependent pages (the cohort chapter, the two comparisons with the
study, the intro and the reproduce page) are then read.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from crsbench_lib.cli import main
from crsbench_lib.cohort import PHANTOM_DATASETS
from crsbench_lib.data.medmnist import FLAGS
from crsbench_lib.encoders.zoo import describe_encoders
from crsbench_lib.paths import configs_dir
from crsbench_lib.report.book import toc_pages

pytestmark = pytest.mark.slow

FLAGS_USED = ("dermamnist", "pneumoniamnist")
SIZES = {"train": 30, "val": 15, "test": 15}


def write_medmnist(folder: Path, flag: str, rng: np.random.Generator) -> None:
    """A MedMNIST-layout file whose image brightness carries the label (so probes learn)."""
    info = FLAGS[flag]
    arrays = {}
    for split, n in SIZES.items():
        labels = np.arange(n) % info.n_classes
        shape = (n, 28, 28) if flag == "pneumoniamnist" else (n, 28, 28, 3)
        step = 150 // max(info.n_classes - 1, 1)
        images = rng.integers(0, 100, size=shape) + step * labels.reshape((-1,) + (1,) * (len(shape) - 1))
        arrays[f"{split}_images"] = np.clip(images, 0, 255).astype(np.uint8)
        arrays[f"{split}_labels"] = labels.reshape(-1, 1)
    np.savez(folder / f"{flag}.npz", **arrays)


def own_profile(tmp_path: Path, root: Path) -> Path:
    """The shipped profile on two of its flags at ``root``, with the hand-crafted encoders and a small grid."""
    config = yaml.safe_load((configs_dir() / "medmnist-cpu.yaml").read_text())
    config["datasets"] = [dict(d, root=str(root)) for d in config["datasets"] if d["flag"] in FLAGS_USED]
    handcrafted = {card["name"] for card in describe_encoders() if card["family"] == "handcrafted"}
    config.update(
        name="medmnist-mine",
        encoders=[e for e in config["encoders"] if e in handcrafted],
        seeds=[0],
        arms=["frozen"],
        corruptions={"families": "all", "severities": [3], "n_images": 15, "seed": 0},
        probe={**config["probe"], "C": [1.0], "max_iter": 60},
    )
    path = tmp_path / "medmnist-mine.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def page_text(path: Path) -> str:
    """The visible text of a rendered page's main column (tags and styles stripped)."""
    source = path.read_text(encoding="utf-8")
    main_part = source[source.find("<main"):source.find("</main>")]
    main_part = re.sub(r"<style.*?</style>", " ", main_part, flags=re.S)
    # A line-break opportunity (<wbr>, a zero-width space) is no space a reader sees.
    main_part = re.sub(r"<wbr\s*/?>|\u200b", "", main_part)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", main_part)))


def test_own_medmnist_files_run_score_freeze_and_build_their_own_book(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("CRSBENCH_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "medmnist"
    root.mkdir()
    rng = np.random.default_rng(0)
    for flag in FLAGS_USED:
        write_medmnist(root, flag, rng)
    profile = own_profile(tmp_path, root)

    run = tmp_path / "run"
    assert main(["run", "--config", str(profile), "--out", str(run), "--no-progress"]) == 0
    results = run / "results.parquet"
    assert main(["score", str(results)]) == 0
    assert "absent terms: R: no shift term" in capsys.readouterr().out
    standard = tmp_path / "mine-v1.yaml"
    assert main(["freeze", str(results), "--version", "mine-v1", "--out", str(standard)]) == 0

    capsys.readouterr()
    assert main(["book", "--results", str(results), "--standard", str(standard), "--out", str(tmp_path / "book")]) == 0
    assert "transfer           left out: the run has no LoRA arm" in capsys.readouterr().out
    html_dir = tmp_path / "book" / "_build" / "html"
    for page in toc_pages():
        assert (html_dir / f"{page}.html").is_file() == (page != "notebooks/transfer"), page

    cohort = page_text(html_dir / "notebooks" / "cohort.html")
    # Everything the page says about the data comes before the zoo (whose table lists
    # every zoo encoder, including those pretrained on a phantom).
    data_part = cohort[:cohort.index("The encoder zoo #")]
    for flag in FLAGS_USED:
        assert f"MedMNIST flag {flag} at 28 px" in data_part
        assert f"{flag}_0" in data_part  # its class counts, read from its file
    assert "Cohort: user data." in data_part and "SIMULATED COHORT" not in cohort
    assert "Terms this run cannot measure: R: no shift term" in data_part
    assert "No dataset of this run has a second site" in data_part
    for phantom in PHANTOM_DATASETS:
        assert not re.search(rf"\b{phantom}\b", data_part), phantom
    assert "phantom" not in data_part.lower()
    source = (html_dir / "notebooks" / "cohort.html").read_text(encoding="utf-8")
    assert not re.search(r'id="fig-sheet-(derm|fundus|cxr)"', source)
    assert source.count("<img") >= 3  # the examples, the site slot and the corruption sheet

    intro = page_text(html_dir / "book" / "intro.html")
    assert "This build reads 2 datasets: dermamnist (dermatology" in intro
    # The profile and cohort come from the table's run manifest, not from the default profile.
    assert "profile: medmnist-mine |" in intro and "cohort: user data" in intro
    assert "procedural" not in intro and "phantom" not in intro
    assert "Terms this run cannot measure" in intro
    reproduce = page_text(html_dir / "book" / "reproduce.html")
    assert "crsbench book --config medmnist-mine.yaml" in reproduce
    assert str(tmp_path) not in reproduce  # no path of the machine that built it
    published = page_text(html_dir / "notebooks" / "published.html")
    assert "What is compared. The study's column is what it reported" in published.replace("’", "'")
    assert "dermamnist and pneumoniamnist" in published
    differences = page_text(html_dir / "notebooks" / "differences.html")
    assert "Limits of this run" in differences and "Procedural phantoms" not in differences
    assert "No dataset of this run has a second site" in differences
