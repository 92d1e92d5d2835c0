"""Model-file encoders in a profile: ``file:<path>`` and the mapping form, their checks, LoRA and the device."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import yaml

from crsbench_lib.errors import ConfigError
from crsbench_lib.runner.config import load_profile, validate_config
from crsbench_lib.runner.grid import Preparation, lora_encoders, not_adapted

BASE = {
    "name": "mine",
    "standard": "crs-template",
    "datasets": [{"kind": "phantom", "name": "derm", "sizes": {"train": 50, "val": 20, "test": 30}}],
}


def write(folder: Path, config: dict) -> Path:
    path = folder / "mine.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.fixture()
def profiles(tmp_path: Path) -> Path:
    """A profile folder with a models/ folder holding (empty) model files: the config reads no bytes."""
    (tmp_path / "models").mkdir()
    for name in ("a.pt2", "b.pt", "c.onnx"):
        (tmp_path / "models" / name).write_bytes(b"")
    return tmp_path


def test_file_entries_resolve_against_the_profile(profiles: Path) -> None:
    encoders = ["pixels", "file:models/a.pt2", {"name": "vendor", "file": "models/c.onnx", "image_side": 224},
                {"name": "script", "file": str(profiles / "models" / "b.pt")}]
    profile = load_profile(write(profiles, {**BASE, "encoders": encoders}))
    assert profile.encoders == ("pixels", "file:models/a.pt2", "vendor", "script")
    files = profile.encoder_files
    assert set(files) == {"file:models/a.pt2", "vendor", "script"}
    assert files["file:models/a.pt2"].path == profiles / "models" / "a.pt2" and files["file:models/a.pt2"].image_side is None
    assert files["vendor"].image_side == 224 and files["vendor"].spec == f"file:{profiles / 'models' / 'c.onnx'}"
    # The config holds each entry as written (paths as written): moving the folder keeps the hash.
    assert profile.config["encoders"] == ["pixels", "file:models/a.pt2",
                                          {"name": "vendor", "file": "models/c.onnx", "image_side": 224},
                                          {"name": "script", "file": str(profiles / "models" / "b.pt"),
                                           "image_side": None}]
    # What a manifest records validates again (the report reopens runs from it).
    again = validate_config({**profile.config, "standard": "crs-template"}, base=profiles, check_files=False)
    assert again.encoders == profile.encoders and again.encoder_files["vendor"].image_side == 224


def test_profiles_without_files_keep_their_hash() -> None:
    plain = validate_config({**BASE, "encoders": ["pixels", "hog"]}, check_files=False)
    assert plain.encoder_files == {} and plain.config["encoders"] == ["pixels", "hog"]


def test_moving_the_profile_folder_keeps_the_config_hash(profiles: Path, tmp_path_factory) -> None:
    config = {**BASE, "encoders": ["file:models/a.pt2", {"name": "v", "file": "models/c.onnx"}]}
    first = load_profile(write(profiles, config))
    moved = tmp_path_factory.mktemp("moved")
    (moved / "models").mkdir()
    for f in (profiles / "models").iterdir():
        (moved / "models" / f.name).write_bytes(f.read_bytes())
    assert load_profile(write(moved, config)).config_hash == first.config_hash


@pytest.mark.parametrize(("entry", "message"), [
    ("file:models/absent.pt2", r"encoders\[1\] names a missing model file: .*models/absent\.pt2"),
    ({"name": "v", "file": "models/absent.onnx"}, r"encoders\[1\]\.file names a missing model file"),
    ("file:models/weights.bin", r"encoders\[1\] must name a model file ending in \.pt2, \.pt, \.torchscript, \.onnx"),
    ("file:", r"encoders\[1\] is file: without a path"),
    ({"name": "hog", "file": "models/a.pt2"}, r"encoders\[1\]\.name must be a new name .* got 'hog'"),
    ({"name": "timm:x", "file": "models/a.pt2"}, r"encoders\[1\]\.name must be a new name"),
    ({"file": "models/a.pt2"}, r"missing required key encoders\[1\]\.name"),
    ({"name": "v", "file": "models/a.pt2", "side": 3}, r"unknown key encoders\[1\]\.side"),
    ({"name": "v", "file": "models/a.pt2", "image_side": 0}, r"encoders\[1\]\.image_side must be a positive integer"),
])
def test_bad_file_entries_name_the_key(profiles: Path, entry, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as exc:
        load_profile(write(profiles, {**BASE, "encoders": ["pixels", entry]}))
    assert "\n" not in str(exc.value) and str(exc.value).startswith(str(profiles / "mine.yaml"))


def test_the_same_file_twice_under_one_name_is_a_repeat(profiles: Path) -> None:
    with pytest.raises(ConfigError, match=r"encoders\[1\] repeats 'file:models/a.pt2'"):
        load_profile(write(profiles, {**BASE, "encoders": ["file:models/a.pt2", "file:models/a.pt2"]}))


def test_a_file_encoder_under_lora_encoders_stops_at_load(profiles: Path) -> None:
    config = {**BASE, "encoders": ["cnn_random", {"name": "vendor", "file": "models/a.pt2"}], "arms": ["frozen", "lora"],
              "lora": {"encoders": ["cnn_random", "vendor"]}}
    with pytest.raises(ConfigError) as exc:
        load_profile(write(profiles, config))
    message = str(exc.value)
    assert "\n" not in message
    assert "lora.encoders[1] names 'vendor', a model file: an exported graph" in message
    assert "cannot be LoRA-adapted" in message and "leave it out of lora.encoders" in message


def test_the_default_lora_encoders_leave_file_encoders_out(profiles: Path) -> None:
    config = {**BASE, "encoders": ["pixels", "cnn_random", "file:models/a.pt2"], "arms": ["frozen", "lora"]}
    profile = load_profile(write(profiles, config))
    assert profile.lora.encoders == "neural"
    # As RealBackend.prepare finds them: the file encoder has a module but is not adaptable.
    prep = Preparation({}, {}, {}, {}, neural_encoders=("cnn_random",), code_versions={},
                       not_adaptable={"pixels": "no network to adapt (a hand-crafted descriptor)",
                                      "file:models/a.pt2": "an exported graph cannot be LoRA-adapted"})
    assert lora_encoders(profile, prep) == ("cnn_random",)
    assert not_adapted(profile, prep) == {"pixels": "no network to adapt (a hand-crafted descriptor)",
                                          "file:models/a.pt2": "an exported graph cannot be LoRA-adapted"}
    frozen_only = validate_config({**config, "arms": ["frozen"]}, base=profiles)
    assert not_adapted(frozen_only, prep) == {}


def test_cuda_for_a_file_encoder_is_the_existing_one_line_error(profiles: Path, monkeypatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    config = {**BASE, "encoders": ["file:models/a.pt2"], "embedding": {"device": "cuda"}}
    with pytest.raises(ConfigError, match=r"embedding\.device is 'cuda', but this torch .* has no CUDA device"):
        load_profile(write(profiles, config))
