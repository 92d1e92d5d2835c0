"""The book built on a user's own MedMNIST files shows those files, not the phantom cohort.

The shipped ``medmnist-cpu`` profile is pointed at two tiny MedMNIST-layout
files written here (``root/{flag}.npz``, 60 images each at 28 px; the
pneumonia file's test split has another positive prevalence than its training
splits), with a small grid (the hand-crafted encoders, one seed, one severity,
the frozen arm) and no ``standard`` key. The run freezes a standard from
itself and says whether the table fits it; ``crsbench book --results`` renders
the whole book against that standard, beside the run: every chapter but the
one the run cannot fill (no LoRA arm: the transfer chapter, left out with the
reason). Every page is read for the phantom world's wording; the data-dependent
pages (the cohort chapter, the calibration and gate pages, the two comparisons
with the study, the intro and the reproduce page) are read in detail.
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


# The pneumonia file's positive share per split: 0.8 in train and val, 7 of 15 in test (a shift of 0.333).
PNEUMONIA_POSITIVES = {"train": 24, "val": 12, "test": 7}


def write_medmnist(folder: Path, flag: str, rng: np.random.Generator) -> None:
    """A MedMNIST-layout file whose image brightness carries the label (so probes learn)."""
    info = FLAGS[flag]
    arrays = {}
    for split, n in SIZES.items():
        labels = np.arange(n) % info.n_classes
        if flag == "pneumoniamnist":
            labels = rng.permutation((np.arange(n) < PNEUMONIA_POSITIVES[split]).astype(np.int64))
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
    config.pop("standard")  # a user's profile that names no standard: the run freezes one from itself
    handcrafted = {card["name"] for card in describe_encoders() if card["family"] == "handcrafted"}
    # Reference encoders are never ranked (method amendment 22): the ranking pages need candidates, so the
    # run holds the quick profile's five small pretrained ones beside the hand-crafted references.
    candidates = ["simclr_broad_aug_s", "multitask_broad_aug_s", "simclr_derm_aug_s", "simclr_cxr_aug_s", "mae_broad_vit"]
    config.update(
        name="medmnist-mine",
        encoders=[e for e in config["encoders"] if e in handcrafted or e in candidates],
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
    # A collapsed code cell is code, not prose: its parameter names are no wording of the page.
    main_part = re.sub(r'<details class="admonition hide above-input">.*?</details>', " ", main_part, flags=re.S)
    # A line-break opportunity (<wbr>, a zero-width space) is no space a reader sees.
    main_part = re.sub(r"<wbr\s*/?>|\u200b", "", main_part)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", main_part)))


# Wording of the phantom world that no chapter of a book on a user's data may show (the zoo's cards, which say
# on what each encoder was pretrained, and the coverage chapter, which says why its audit needs a simulated
# truth, name the phantom world as what it is). On a user's data there is no build's world either: the lessons
# name this run's data (report.sentences.lessons.world_name).
PHANTOM_WORDING = ("SIMULATED COHORT", "phantom cohort", "phantom domains", "Does this world reward",
                   "world's checks", "world checks", "With three datasets", "On the simulated cohort",
                   "What the simulation cannot represent", "breastmnist_", "pneumoniamnist_", "dermamnist_",
                   "this build's world")


def test_own_medmnist_files_run_score_freeze_and_build_their_own_book(tmp_path: Path, monkeypatch, capsys) -> None:
    from crsbench_lib.report.page import FIT_TITLE

    monkeypatch.setenv("CRSBENCH_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "medmnist"
    root.mkdir()
    rng = np.random.default_rng(0)
    for flag in FLAGS_USED:
        write_medmnist(root, flag, rng)
    profile = own_profile(tmp_path, root)

    run = tmp_path / "run"
    assert main(["run", "--config", str(profile), "--out", str(run), "--no-progress"]) == 0
    out = capsys.readouterr().out
    # The run's data checks and its fit verdict, against the standard it froze from itself.
    assert "warning: dataset pneumoniamnist: the positive prevalence differs" in out
    assert "fit: This run is scored against a reference standard frozen from its own table" in out
    assert "fit: The table fits standard crs-template+build-" in out
    assert (run / "standard.yaml").is_file() and "froze crs-template+build-" in out
    results = run / "results.parquet"
    assert main(["score", str(results)]) == 0
    scored = capsys.readouterr()
    assert "CRS against reference standard crs-template+build-" in scored.out
    assert "absent terms: R: no shift term" in scored.out and "warning" not in scored.err
    standard = tmp_path / "mine-v1.yaml"
    assert main(["freeze", str(results), "--version", "mine-v1", "--out", str(standard)]) == 0

    capsys.readouterr()
    assert main(["book", "--results", str(results)]) == 0
    assert "transfer           left out: the run has no LoRA arm" in capsys.readouterr().out
    html_dir = run / "_build" / "html"  # beside the run, never over the default book
    for page in toc_pages():
        assert (html_dir / f"{page}.html").is_file() == (page != "notebooks/transfer"), page

    texts = {page: page_text(html_dir / f"{page}.html") for page in toc_pages() if page != "notebooks/transfer"}
    for page, text in texts.items():
        assert FIT_TITLE not in text, page  # no standard was named: the run's own fits
        assert ":::{" not in text and "```{" not in text, page  # no directive left unrendered
        if page.startswith("notebooks/"):
            prose = text.replace("\u2019", "'")  # the book sets apostrophes as typographic quotes
            for phrase in PHANTOM_WORDING:
                assert phrase not in prose, (page, phrase)

    cohort = texts["notebooks/cohort"]
    # Everything the page says about the data comes before the zoo (whose table lists
    # every zoo encoder, including those pretrained on a phantom).
    data_part = cohort[:cohort.index("The encoder zoo #")]
    for flag in FLAGS_USED:
        assert f"MedMNIST flag {flag} at 28 px" in data_part
    for name in (*FLAGS["pneumoniamnist"].labels, *FLAGS["dermamnist"].labels):
        assert name in data_part, name  # the classes by their published names
    assert "pneumonia 0.800" in data_part and "pneumonia 0.467" in data_part  # the data checks' prevalences
    assert "Cohort: user data." in data_part and "SIMULATED COHORT" not in cohort
    assert "Terms this run cannot measure: R: no shift term" in data_part
    assert "No dataset of this run has a second site" in data_part
    # One site per dataset: no site column and no site named, in the data table or anywhere else on the data part.
    assert not re.search(r"\bsite [AB]\b", data_part), re.search(r".{80}\bsite [AB]\b.{40}", data_part)
    assert "none has a second site, so robustness has no shift term" in data_part  # the data table's caption
    for phantom in PHANTOM_DATASETS:
        assert not re.search(rf"\b{phantom}\b", data_part), phantom
    assert "phantom" not in data_part.lower()
    source = (html_dir / "notebooks" / "cohort.html").read_text(encoding="utf-8")
    assert not re.search(r'id="fig-sheet-(derm|fundus|cxr)"', source)
    assert source.count("<img") >= 3  # the examples, the site slot and the corruption sheet
    shift = "the positive prevalence differs between the development pool"
    for page in ("notebooks/cohort", "notebooks/calibration", "notebooks/selection_gate"):
        assert shift in texts[page], page
    assert shift not in texts["notebooks/agreement"]

    intro = texts["book/intro"]
    assert "This build reads 2 datasets: dermamnist (dermatology" in intro
    assert "This edition: real data (profile medmnist-mine ), not the simulated default edition." in intro
    # The profile and cohort come from the table's run manifest, not from the default profile.
    assert "profile: medmnist-mine |" in intro and "cohort: user data" in intro
    assert "procedural" not in intro and "phantom" not in intro
    assert "Terms this run cannot measure" in intro
    assert "frozen from its own table" in intro  # the standard's choices, written on the page
    reproduce = texts["book/reproduce"]
    # The run was written with --out: the command names its folder, so its cells are reused.
    assert "crsbench book --config medmnist-mine.yaml --run-out run" in reproduce
    assert str(tmp_path) not in reproduce  # no path of the machine that built it
    published = texts["notebooks/published"]
    assert "What is compared. The study's column is what it reported" in published.replace("’", "'")
    assert "dermamnist and pneumoniamnist" in published
    differences = texts["notebooks/differences"]
    assert "Limits of this run" in differences and "Procedural phantoms" not in differences
    assert "No dataset of this run has a second site" in differences
