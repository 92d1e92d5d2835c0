"""EmbeddingStore: cache hits, keys, corruption detection, streaming, corrupted test sets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.data.base import ImageDataset, ImageSplit
from crsbench_lib.embeddings.store import EmbeddingStore, image_block
from crsbench_lib.encoders.registry import build_encoder
from crsbench_lib.errors import DataError


def fake_dataset(version: str = "v1", n: int = 40) -> ImageDataset:
    rng = np.random.default_rng(1)
    images = {s: rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8) for s in ("train", "val", "test")}

    def loader(split: str, site: str) -> ImageSplit:
        return ImageSplit(images[split], rng.integers(0, 2, n).astype(np.int64) * 0, split, site)

    return ImageDataset("fake", "dermatology", "binary", ("a", "b"), version, loader, calibration_size=10)


@pytest.fixture()
def store(tmp_path: Path) -> EmbeddingStore:
    return EmbeddingStore(tmp_path / "emb")


def test_cache_hit_and_equal_to_direct(store: EmbeddingStore) -> None:
    enc, ds = build_encoder("pixels"), fake_dataset()
    z1 = store.embed(enc, ds, "test", batch_size=16)
    z2 = store.embed(enc, ds, "test", batch_size=16)
    assert store.n_computed == 1
    np.testing.assert_array_equal(z1, z2)
    np.testing.assert_array_equal(z1, enc.embed(ds.split("test").images))
    assert z1.dtype == np.float32 and z1.shape == (40, enc.embedding_dim)


def test_key_fields_separate_entries(store: EmbeddingStore) -> None:
    enc = build_encoder("lbp")
    ds = fake_dataset()
    store.embed(enc, ds, "test")
    store.embed(enc, ds, "val")
    store.embed(enc, ds, "test", n_images=10)
    store.embed(enc, fake_dataset(version="v2"), "test")
    store.embed(build_encoder("lbp", image_side=64), ds, "test")
    assert store.n_computed == 5
    assert store.embed(enc, ds, "test", n_images=10).shape == (10, enc.embedding_dim)
    assert store.n_computed == 5
    # development splits are redrawn per evaluation seed; the test split is shared by every seed
    store.embed(enc, ds, "val", seed=1)
    store.embed(enc, ds, "calibration", seed=1)
    assert store.n_computed == 7
    store.embed(enc, ds, "test", seed=1)
    assert store.n_computed == 7


@pytest.mark.parametrize("damage", ["truncate", "flip", "delete_sidecar", "garbage_sidecar"])
def test_damaged_file_is_recomputed(store: EmbeddingStore, damage: str) -> None:
    enc, ds = build_encoder("pixels"), fake_dataset()
    good = store.embed(enc, ds, "test").copy()
    arrays = list(store.root.rglob("*.npy"))
    assert len(arrays) == 1
    array_path = arrays[0]
    sidecar = array_path.with_suffix(".json")
    data = array_path.read_bytes()
    if damage == "truncate":
        array_path.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        array_path.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))
    elif damage == "delete_sidecar":
        sidecar.unlink()
    else:
        sidecar.write_text("{not json")
    again = store.embed(enc, ds, "test")
    assert store.n_computed == 2
    np.testing.assert_array_equal(again, good)


def test_no_temporary_files_left(store: EmbeddingStore) -> None:
    store.embed(build_encoder("pixels"), fake_dataset(), "train", batch_size=7, progress=True)
    names = [p.name for p in store.root.rglob("*") if p.is_file()]
    assert not [n for n in names if n.startswith(".")]


def test_mmap_return(store: EmbeddingStore) -> None:
    enc, ds = build_encoder("pixels"), fake_dataset()
    z = store.embed(enc, ds, "test", mmap=True)
    assert isinstance(z, np.memmap)
    np.testing.assert_array_equal(np.asarray(z), store.embed(enc, ds, "test"))


def test_bad_parameters(store: EmbeddingStore) -> None:
    enc, ds = build_encoder("pixels"), fake_dataset()
    with pytest.raises(DataError, match="n_images"):
        store.embed(enc, ds, "test", n_images=41)
    with pytest.raises(DataError, match="severity"):
        store.embed(enc, ds, "test", severity=2)
    with pytest.raises(DataError, match="severity"):
        store.embed(enc, ds, "test", corruption="gaussian_noise", severity=9)
    with pytest.raises(DataError, match="split"):
        store.embed(enc, ds, "holdout")


def test_corrupted_sets_use_cohort_corrupt(store: EmbeddingStore) -> None:
    cohort = pytest.importorskip("crsbench_lib.cohort")
    family = cohort.corruption_families("dermatology")[0]
    enc, ds = build_encoder("pixels"), fake_dataset()
    clean = store.embed(enc, ds, "test", n_images=20)
    bad = store.embed(enc, ds, "test", corruption=family, severity=5, corruption_seed=3, n_images=20)
    expected = enc.embed(cohort.corrupt(ds.split("test").images[:20], family, 5, seed=3))
    np.testing.assert_array_equal(bad, expected)
    assert not np.array_equal(clean, bad)
    other_seed = store.embed(enc, ds, "test", corruption=family, severity=5, corruption_seed=4, n_images=20)
    assert store.n_computed == 3 and other_seed.shape == bad.shape


def test_corrupted_images_computed_once_per_process(store: EmbeddingStore, monkeypatch: pytest.MonkeyPatch) -> None:
    # Once per process, not per store: a run's worker goes through many tasks, each with its own store.
    cohort = pytest.importorskip("crsbench_lib.cohort")
    from collections import OrderedDict

    from crsbench_lib.embeddings import store as store_module

    calls = []
    real = cohort.corrupt

    def counting(images: np.ndarray, family: str, severity: int, seed: int = 0) -> np.ndarray:
        calls.append((family, severity, seed))
        return real(images, family, severity, seed=seed)

    monkeypatch.setattr(cohort, "corrupt", counting)
    monkeypatch.setattr(store_module, "_CORRUPTED_MEMO", OrderedDict())
    family = cohort.corruption_families("dermatology")[0]
    ds = fake_dataset()
    for name in ("pixels", "lbp"):
        store.embed(build_encoder(name), ds, "test", corruption=family, severity=2, n_images=10)
    another = EmbeddingStore(store.root / "another")
    another.embed(build_encoder("glcm"), ds, "test", corruption=family, severity=2, n_images=10)
    assert calls == [(family, 2, 0)]
    # Another dataset's sets replace the first one's (runs go dataset by dataset).
    store_module.corrupted_images(fake_dataset(version="v2"), "test", None, family, 2, 0, 10)
    assert len(calls) == 2 and {key[1] for key in store_module._CORRUPTED_MEMO} == {"v2"}
    monkeypatch.setattr(store_module, "CORRUPTED_MEMO_BYTES", 0)
    monkeypatch.setattr(store_module, "_CORRUPTED_MEMO", OrderedDict())
    tiny = EmbeddingStore(store.root / "tiny")
    for name in ("pixels", "lbp"):
        tiny.embed(build_encoder(name), ds, "test", corruption=family, severity=2, n_images=10)
    assert len(calls) == 4


def test_files_match_numpy_save(store: EmbeddingStore, tmp_path: Path) -> None:
    enc, ds = build_encoder("pixels"), fake_dataset()
    z = store.embed(enc, ds, "test", batch_size=16)
    np.save(tmp_path / "direct.npy", z)
    (written,) = store.root.rglob("*.npy")
    assert written.read_bytes() == (tmp_path / "direct.npy").read_bytes()


def test_a_full_disk_is_found_before_any_embedding_and_leaves_nothing(
    store: EmbeddingStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import os

    from crsbench_lib.atomic import format_bytes
    from crsbench_lib.errors import OutputError

    enc, ds = build_encoder("pixels"), fake_dataset()
    calls: list[int] = []
    monkeypatch.setattr(enc, "embed", lambda images: calls.append(len(images)) or build_encoder("pixels").embed(images))

    def full(fd: int, offset: int, length: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as patch:
        patch.setattr(os, "posix_fallocate", full)
        with pytest.raises(OutputError) as info:
            store.embed(enc, ds, "test", batch_size=16)
    message = str(info.value)
    assert message.startswith(f"{store.root / 'pixels' / 'fake'}: no space left on device (") and "\n" not in message
    assert calls == [] and not [p for p in store.root.rglob("*") if p.is_file()]
    # Space freed: the same call now succeeds, and the message had named the file's exact size.
    np.testing.assert_array_equal(store.embed(enc, ds, "test", batch_size=16), enc.embed(ds.split("test").images))
    (written,) = store.root.rglob("*.npy")
    assert f"({format_bytes(written.stat().st_size)} needed, " in message


def test_writing_never_goes_through_a_memory_map(store: EmbeddingStore, monkeypatch: pytest.MonkeyPatch) -> None:
    # A memory-mapped write that meets a full disk kills the process with SIGBUS.
    def refuse(*args, **kwargs):
        raise AssertionError("memory-mapped write")

    monkeypatch.setattr(np, "memmap", refuse)
    monkeypatch.setattr(np.lib.format, "open_memmap", refuse)
    enc, ds = build_encoder("pixels"), fake_dataset()
    np.testing.assert_array_equal(store.embed(enc, ds, "train", batch_size=7), enc.embed(ds.split("train").images))


def test_an_array_computed_on_other_torch_threads_is_not_served(store: EmbeddingStore) -> None:
    import torch

    enc, ds = build_encoder("pixels"), fake_dataset()
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        store.embed(enc, ds, "test", batch_size=16)
        store.embed(enc, ds, "test", batch_size=16)
        assert store.n_computed == 1
        torch.set_num_threads(2)
        store.embed(enc, ds, "test", batch_size=16)
        assert store.n_computed == 2, "1 and 2 torch threads round differently, so they are two entries"
    finally:
        torch.set_num_threads(before)


@given(total=st.integers(1, 60), data=st.data())
def test_image_block_is_n_consecutive_images_wrapping_around(total: int, data: st.DataObject) -> None:
    n = data.draw(st.integers(1, total))
    first = data.draw(st.integers(0, total - 1))
    block = image_block(total, n, first)
    assert block.shape == (n,) and np.unique(block).size == n
    assert block[0] == first and ((np.diff(block) == 1) | (np.diff(block) == 1 - total)).all()
    assert block.min() >= 0 and block.max() < total


def test_image_block_errors() -> None:
    with pytest.raises(DataError, match=r"1\.\.10 images, got 11"):
        image_block(10, 11, 0)
    with pytest.raises(DataError, match=r"start at an image in 0\.\.9, got 10"):
        image_block(10, 2, 10)


def test_a_corrupted_block_is_the_corruption_of_those_test_images(store: EmbeddingStore) -> None:
    cohort = pytest.importorskip("crsbench_lib.cohort")
    family = cohort.corruption_families("dermatology")[1]
    enc, ds = build_encoder("pixels"), fake_dataset()
    block = image_block(40, 12, 34)  # wraps: images 34..39, then 0..5
    expected = cohort.corrupt(ds.split("test").images[block], family, 3, seed=0)
    z = store.embed(enc, ds, "test", corruption=family, severity=3, n_images=12, first_image=34)
    np.testing.assert_array_equal(z, enc.embed(expected))
    first = store.embed(enc, ds, "test", corruption=family, severity=3, n_images=12)
    assert store.n_computed == 2 and not np.array_equal(first, z)  # another block, another entry
    with pytest.raises(DataError, match="first_image must be 0 without a corruption"):
        store.embed(enc, ds, "test", first_image=3)
    with pytest.raises(DataError, match=r"first_image must be in 0\.\.39, got 40"):
        store.embed(enc, ds, "test", corruption=family, severity=3, n_images=12, first_image=40)
