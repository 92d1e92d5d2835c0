"""CSV-manifest reader: a tiny folder of PNGs, labels, sites, bad rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from crsbench_lib.data.manifest import load_manifest
from crsbench_lib.errors import DataError


def make_folder(root: Path, grey: bool = False, rows: list[str] | None = None) -> Path:
    rng = np.random.default_rng(0)
    (root / "img").mkdir(parents=True)
    lines = ["path,label,split,site"]
    for k in range(8):
        shape = (40, 48) if grey else (40, 48, 3)
        Image.fromarray(rng.integers(0, 256, shape, dtype=np.uint8)).save(root / "img" / f"{k}.png")
        split = ("train", "train", "train", "val", "test", "test", "test", "test")[k]
        site = "B" if k == 7 else "A"
        lines.append(f"img/{k}.png,{('nevus', 'melanoma', 'bcc')[k % 3]},{split},{site}")
    lines += rows or []
    csv = root / "manifest.csv"
    csv.write_text("\n".join(lines) + "\n")
    return csv


def test_reads_rgb_folder(tmp_path: Path) -> None:
    ds = load_manifest(make_folder(tmp_path), image_side=32, domain="dermatology")
    assert ds.name == "manifest" and ds.task == "multiclass" and ds.class_names == ("bcc", "melanoma", "nevus")
    assert ds.sites == ("A", "B")
    train = ds.source_split("train")
    assert train.images.shape == (3, 32, 32, 3) and train.images.dtype == np.uint8
    assert train.labels.tolist() == [2, 1, 0]
    assert len(ds.split("test", "B")) == 1


def test_grey_auto_and_multilabel(tmp_path: Path) -> None:
    root = tmp_path / "cxr"
    csv = make_folder(root, grey=True)
    text = csv.read_text().splitlines()
    out = ["path,effusion,nodule,split"] + [f"{ln.split(',')[0]},{k % 2},{(k // 2) % 2},{ln.split(',')[2]}" for k, ln in enumerate(text[1:])]
    csv.write_text("\n".join(out) + "\n")
    ds = load_manifest(csv, image_side=16)
    assert ds.task == "multilabel" and ds.class_names == ("effusion", "nodule")
    val = ds.source_split("val")
    assert val.images.shape == (1, 16, 16) and val.labels.dtype == np.uint8


def test_missing_file_names_row(tmp_path: Path) -> None:
    csv = make_folder(tmp_path, rows=["img/nope.png,nevus,test,A"])
    with pytest.raises(DataError, match=r"line 10: image file .*nope\.png does not exist"):
        load_manifest(csv)


def test_bad_split_and_columns(tmp_path: Path) -> None:
    csv = make_folder(tmp_path, rows=["img/0.png,nevus,holdout,A"])
    with pytest.raises(DataError, match="line 10: split 'holdout'"):
        load_manifest(csv)
    other = tmp_path / "nopath.csv"
    other.write_text("file,label,split\na.png,1,train\n")
    with pytest.raises(DataError, match="missing column 'path'"):
        load_manifest(other)
    with pytest.raises(DataError, match="not found"):
        load_manifest(tmp_path / "absent.csv")


def test_unreadable_image(tmp_path: Path) -> None:
    csv = make_folder(tmp_path)
    (tmp_path / "img" / "4.png").write_bytes(b"not a png")
    ds = load_manifest(csv)
    with pytest.raises(DataError, match=r"4\.png \(line 6\): cannot read image"):
        ds.split("test")
