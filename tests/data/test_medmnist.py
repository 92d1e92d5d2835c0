"""MedMNIST reader: file names, label layouts, task table, bad files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from crsbench_lib.cohort import CORRUPTION_DOMAINS, corrupt, corruption_families
from crsbench_lib.data.medmnist import FLAGS, FlagInfo, load_medmnist, medmnist_filename, medmnist_path
from crsbench_lib.errors import DataError

# Every 2D flag of MedMNIST v2/v3 and the modality whose corruptions suit its images.
MODALITY_OF_FLAG = {
    "pathmnist": "pathology", "chestmnist": "radiology", "dermamnist": "dermatology", "octmnist": "oct",
    "pneumoniamnist": "radiology", "retinamnist": "ophthalmology", "breastmnist": "ultrasound",
    "bloodmnist": "microscopy", "tissuemnist": "microscopy", "organamnist": "ct", "organcmnist": "ct",
    "organsmnist": "ct",
}


def write_npz(path: Path, rgb: bool = True, labels: str = "n1", n: int = 6, side: int = 28, drop: str | None = None) -> None:
    rng = np.random.default_rng(0)
    arrays = {}
    for split in ("train", "val", "test"):
        shape = (n, side, side, 3) if rgb else (n, side, side)
        arrays[f"{split}_images"] = rng.integers(0, 256, shape, dtype=np.uint8)
        if labels == "n1":
            arrays[f"{split}_labels"] = rng.integers(0, 7, (n, 1))
        elif labels == "n":
            arrays[f"{split}_labels"] = rng.integers(0, 7, n)
        else:
            arrays[f"{split}_labels"] = rng.integers(0, 2, (n, 14))
    if drop:
        del arrays[drop]
    np.savez(path, **arrays)


def test_file_names() -> None:
    assert medmnist_filename("dermamnist") == "dermamnist.npz"
    assert medmnist_filename("dermamnist", 64) == "dermamnist_64.npz"
    with pytest.raises(DataError, match="size"):
        medmnist_filename("dermamnist", 32)


@pytest.mark.parametrize("layout", ["n1", "n"])
def test_multiclass_labels_1d_or_2d(tmp_path: Path, layout: str) -> None:
    write_npz(tmp_path / "dermamnist.npz", labels=layout)
    ds = load_medmnist("dermamnist", tmp_path)
    assert (ds.name, ds.domain, ds.task, ds.n_classes) == ("dermamnist", "dermatology", "multiclass", 7)
    split = ds.source_split("train")
    assert split.images.shape == (6, 28, 28, 3) and split.labels.dtype == np.int64 and split.labels.shape == (6,)
    assert len(ds.version) == 64


def test_multilabel_grey_size_64(tmp_path: Path) -> None:
    write_npz(tmp_path / "chestmnist_64.npz", rgb=False, labels="multi", side=64)
    ds = load_medmnist("chestmnist", tmp_path, size=64)
    assert ds.name == "chestmnist_64" and ds.task == "multilabel" and ds.n_classes == 14
    test = ds.split("test")
    assert test.images.shape == (6, 64, 64) and test.labels.shape == (6, 14) and test.labels.dtype == np.uint8


def test_unknown_flag_infers_task_given_a_domain(tmp_path: Path) -> None:
    write_npz(tmp_path / "mymnist.npz", labels="n")
    ds = load_medmnist("mymnist", tmp_path, domain="radiology")
    assert ds.task == "multiclass" and ds.domain == "radiology"


def test_unknown_flag_without_domain_names_the_key(tmp_path: Path) -> None:
    write_npz(tmp_path / "mymnist.npz", labels="n")
    with pytest.raises(DataError, match=r"'mymnist'.*domain key") as info:
        load_medmnist("mymnist", tmp_path)
    assert "\n" not in str(info.value)


def test_domain_key_overrides_a_standard_flag(tmp_path: Path) -> None:
    write_npz(tmp_path / "dermamnist.npz")
    assert load_medmnist("dermamnist", tmp_path, domain="radiology").domain == "radiology"


def test_missing_file_no_download(tmp_path: Path) -> None:
    with pytest.raises(DataError) as info:
        load_medmnist("dermamnist", tmp_path)
    message = str(info.value)
    assert str(tmp_path / "dermamnist.npz") in message and "'dermamnist'" in message
    assert "--allow-download" in message and "allow_download: true" in message
    assert "root/{flag}_{size}.npz" in message


def test_root_may_name_the_file_itself(tmp_path: Path) -> None:
    write_npz(tmp_path / "dermamnist.npz")
    assert load_medmnist("dermamnist", tmp_path / "dermamnist.npz").split("test").images.shape[0] == 6


def test_root_naming_another_file_is_explained(tmp_path: Path) -> None:
    write_npz(tmp_path / "derma.npz")
    with pytest.raises(DataError, match=r"root names a file.*dermamnist\.npz"):
        medmnist_path("dermamnist", tmp_path / "derma.npz")


@pytest.mark.parametrize("content", [b"this is not a zip archive", b"\x80\x04K\x01.", b""])
def test_malformed_file_gives_no_pickle_advice(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "dermamnist.npz").write_bytes(content)
    with pytest.raises(DataError, match=r"dermamnist\.npz.*not a readable NumPy \.npz archive") as info:
        load_medmnist("dermamnist", tmp_path)
    assert "pickle" not in str(info.value).lower()


def test_count_mismatch_names_file_and_split(tmp_path: Path) -> None:
    write_npz(tmp_path / "dermamnist.npz")
    with np.load(tmp_path / "dermamnist.npz") as npz:
        arrays = dict(npz)
    arrays["val_labels"] = arrays["val_labels"][:4]
    np.savez(tmp_path / "dermamnist.npz", **arrays)
    ds = load_medmnist("dermamnist", tmp_path)
    with pytest.raises(DataError, match=r"dermamnist\.npz: split val: val_images holds 6 images but val_labels holds 4"):
        ds.source_split("val")


def test_missing_key(tmp_path: Path) -> None:
    write_npz(tmp_path / "dermamnist.npz", drop="val_labels")
    with pytest.raises(DataError, match="val_labels"):
        load_medmnist("dermamnist", tmp_path)


def test_bad_labels_for_task(tmp_path: Path) -> None:
    write_npz(tmp_path / "chestmnist.npz", labels="n1")
    ds = load_medmnist("chestmnist", tmp_path)
    with pytest.raises(DataError, match="multi-label"):
        ds.source_split("train")


def test_float_images_rejected(tmp_path: Path) -> None:
    arrays = {f"{s}_{k}": (np.zeros((2, 28, 28), np.float32) if k == "images" else np.zeros((2, 1), int))
              for s in ("train", "val", "test") for k in ("images", "labels")}  # fmt: skip
    np.savez(tmp_path / "pneumoniamnist.npz", **arrays)
    with pytest.raises(DataError, match="uint8"):
        load_medmnist("pneumoniamnist", tmp_path).source_split("train")


def test_download_on_request_fetches_the_named_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import urllib.request

    write_npz(tmp_path / "source.npz")
    payload = (tmp_path / "source.npz").read_bytes()
    asked: list[str] = []

    def fake_urlopen(url: str, timeout: float) -> io.BytesIO:
        asked.append(url)
        return io.BytesIO(payload)

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    ds = load_medmnist("dermamnist", tmp_path / "new", size=64, download=True)
    assert asked == ["https://zenodo.org/records/10519652/files/dermamnist_64.npz?download=1"]
    assert (tmp_path / "new" / "dermamnist_64.npz").read_bytes() == payload
    assert ds.source_split("train").images.shape[0] == 6


def test_every_2d_flag_has_its_modality_and_published_class_names() -> None:
    assert {flag: info.domain for flag, info in FLAGS.items()} == MODALITY_OF_FLAG
    for flag, info in FLAGS.items():
        assert info.domain in CORRUPTION_DOMAINS, flag
        assert len(info.labels) == info.n_classes and len(set(info.labels)) == info.n_classes, flag
        assert all(name == name.lower() and name.strip() for name in info.labels), flag
        assert info.n_channels in (1, 3)
    # Spot checks against MedMNIST's INFO (label k at index k).
    assert FLAGS["breastmnist"].labels == ("malignant", "normal or benign")
    assert FLAGS["pneumoniamnist"].labels == ("normal", "pneumonia")
    assert FLAGS["pathmnist"].labels[0] == "adipose" and FLAGS["pathmnist"].labels[-1].startswith("colorectal")
    assert FLAGS["chestmnist"].labels[:2] == ("atelectasis", "cardiomegaly") and FLAGS["chestmnist"].labels[-1] == "hernia"
    assert FLAGS["retinamnist"].labels == tuple(f"dr grade {k}" for k in range(5))
    assert FLAGS["organsmnist"].labels[3] == "heart" and FLAGS["bloodmnist"].labels[-1] == "platelet"
    assert [FLAGS[f].n_channels for f in ("pathmnist", "dermamnist", "retinamnist", "bloodmnist")] == [3, 3, 3, 3]


def test_class_names_must_match_the_class_count() -> None:
    with pytest.raises(ValueError, match="2 class names for 3 classes"):
        FlagInfo("radiology", "multiclass", 3, ("a", "b"), 1)


@pytest.mark.parametrize("flag", list(FLAGS))
@pytest.mark.parametrize("side", [28, 64])
def test_every_family_of_the_flags_catalogue_runs_on_its_images(flag: str, side: int) -> None:
    info = FLAGS[flag]
    shape = (2, side, side, 3) if info.n_channels == 3 else (2, side, side)
    images = np.random.default_rng(side).integers(0, 256, shape, dtype=np.uint8)
    for family in corruption_families(info.domain):
        for severity in (1, 5):
            out = corrupt(images, family, severity, seed=0, domain=info.domain)
            assert out.shape == shape and out.dtype == np.uint8, (flag, family)


@pytest.mark.parametrize("flag", ["breastmnist", "pathmnist"])
def test_standard_flags_name_their_classes(tmp_path: Path, flag: str) -> None:
    write_npz(tmp_path / f"{flag}.npz", rgb=FLAGS[flag].n_channels == 3, labels="n")
    arrays = dict(np.load(tmp_path / f"{flag}.npz"))
    for split in ("train", "val", "test"):
        arrays[f"{split}_labels"] %= FLAGS[flag].n_classes
    np.savez(tmp_path / f"{flag}.npz", **arrays)
    ds = load_medmnist(flag, tmp_path)
    assert ds.class_names == FLAGS[flag].labels and ds.domain == FLAGS[flag].domain


def test_other_flags_keep_numbered_class_names(tmp_path: Path) -> None:
    write_npz(tmp_path / "mymnist.npz", labels="n")
    ds = load_medmnist("mymnist", tmp_path, domain="ultrasound")
    assert ds.class_names == tuple(f"mymnist_{k}" for k in range(ds.n_classes)) and ds.domain == "ultrasound"
