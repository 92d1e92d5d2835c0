"""Profile loading and validation: every bad key or value names its path."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from crsbench_lib.errors import ConfigError
from crsbench_lib.hashing import sha256_of
from crsbench_lib.cohort.corruptions import first_image, images_per_condition
from crsbench_lib.runner.config import load_profile, validate_config

BASE = {
    "name": "t",
    "standard": "crs-template",
    "datasets": [{"kind": "phantom", "name": "derm", "sizes": {"train": 50, "val": 20, "test": 30}}],
    "encoders": ["pixels", "hog"],
}


def write(tmp_path: Path, config: dict, name: str = "x.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def with_(**changes: object) -> dict:
    config = {**BASE, **changes}
    return config


@pytest.mark.parametrize("name", ["quick", "default"])
def test_shipped_profiles_load(name: str) -> None:
    profile = load_profile(name)
    assert profile.name == name
    assert profile.label_fractions[0] == 1.0 and profile.ece_bins > 0
    assert len(profile.config_hash) == 64


def test_default_profile_meets_the_cohort_floors() -> None:
    profile = load_profile("default")
    from crsbench_lib.encoders.registry import DEFAULT_ZOO

    assert set(profile.encoders) == set(DEFAULT_ZOO)
    assert profile.seeds == (0, 1, 2)
    # every condition its own block of test images (amendment 11)
    assert profile.corruptions.layout == "per_condition" and profile.corruptions.n_images >= 125
    assert profile.corruptions.families == "all"
    assert profile.corruptions.severities == (1, 2, 3, 4, 5)
    assert "lora" in profile.arms and len(profile.lora.encoders) * len(profile.seeds) * len(profile.datasets) >= 90
    for spec in profile.datasets:
        assert spec.options["sizes"]["train"] == 2000 and spec.options["sizes"]["test"] >= 1000
    assert any(d.name == "cxr" for d in profile.datasets)


def test_medmnist_cpu_profile_states_its_layout_and_runs_offline_on_cpu() -> None:
    from crsbench_lib.encoders.registry import DEFAULT_ZOO
    from crsbench_lib.paths import configs_dir

    profile = load_profile("medmnist-cpu", check_files=False)
    assert [(d.kind, d.options["flag"], d.options["size"]) for d in profile.datasets] == [
        ("medmnist", "dermamnist", 28), ("medmnist", "retinamnist", 28), ("medmnist", "pneumoniamnist", 28)]
    # Every zoo encoder except the one pretrained on the phantom tasks' own labels.
    assert set(profile.encoders) == set(DEFAULT_ZOO) - {"intask_supervised_s"} and profile.arms == ("frozen", "lora")
    assert profile.embedding.device == "cpu" and not profile.allow_download
    header = (configs_dir() / "medmnist-cpu.yaml").read_text().split("\nname:")[0]
    for line in ("~/.medmnist/dermamnist.npz", "root/{flag}.npz", "--allow-download"):
        assert line in header


def test_paper_profile_validates_without_files() -> None:
    profile = load_profile("paper", check_files=False)
    assert all(e.startswith(("hf:", "timm:", "open_clip:")) for e in profile.encoders)
    assert {d.kind for d in profile.datasets} == {"medmnist"}


def test_label_fractions_come_from_the_standard(tmp_path: Path) -> None:
    std = yaml.safe_load((Path(load_profile("quick").standard_path)).read_text())
    std["label_fractions"] = [1.0, 0.5]
    std_path = tmp_path / "std.yaml"
    # A changed fact needs a consistent content hash only if the file carries one.
    std.pop("content_hash", None)
    std_path.write_text(yaml.safe_dump(std))
    profile = load_profile(write(tmp_path, with_(standard="./std.yaml")))
    assert profile.label_fractions == (1.0, 0.5)
    base = load_profile(write(tmp_path, BASE, "b.yaml"))
    assert base.config_hash != profile.config_hash


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"colour": 1}, "unknown key colour"),
        ({"datasets": [{"kind": "phantom", "name": "derm", "sizes": {"train": 0, "val": 1, "test": 1}}]},
         "datasets[0].sizes.train must be a positive integer"),
        ({"datasets": [BASE["datasets"][0], {"kind": "phantom", "name": "cxr", "sizes": {"train": 5, "val": 1, "test": -1}}]},
         "datasets[1].sizes.test must be a positive integer"),
        ({"datasets": [{"kind": "phantom", "name": "derm", "size": {}}]}, "unknown key datasets[0].size"),
        ({"datasets": [{"kind": "nifti", "name": "x"}]}, "datasets[0].kind must be one of"),
        ({"datasets": [{"kind": "phantom", "name": "lungs"}]}, "datasets[0].name must be one of"),
        ({"datasets": []}, "datasets must not be empty"),
        ({"encoders": ["pixels", "no_such_encoder"]}, "encoders[1] names unknown encoder 'no_such_encoder'"),
        ({"encoders": ["pixels", "pixels"]}, "encoders[1] repeats 'pixels'"),
        ({"seeds": []}, "seeds must not be empty"),
        ({"seeds": [0, -1]}, "seeds[1] must be a non-negative integer"),
        ({"seeds": "0"}, "seeds must be a list"),
        ({"corruptions": {"severities": [1, 6]}}, "corruptions.severities[1] must be an integer in 1..5"),
        ({"corruptions": {"n_images": 0}}, "corruptions.n_images must be a positive integer"),
        ({"corruptions": {"families": "some"}}, "corruptions.families must be 'all'"),
        ({"corruptions": {"layout": "random"}},
         "corruptions.layout must be one of per_condition, per_family, shared, got 'random'"),
        ({"arms": ["frozen", "finetuned"]}, "arms[1] must be one of frozen, lora"),
        ({"probe": {"C": [1.0, -1.0]}}, "probe.C[1] must be a positive number"),
        ({"probe": {"max_iter": 1.5}}, "probe.max_iter must be a positive integer"),
        ({"probe": {"calibrators": ["platt"]}}, "probe.calibrators[0] must be one of"),
        ({"lora": {"rank": 0}}, "lora.rank must be a positive integer"),
        ({"lora": {"dropout": 0.05}}, "lora.dropout must be 0 (adapter dropout is not supported), got 0.05"),
        ({"lora": {"dropout": "none"}}, "lora.dropout must be a finite number"),
        ({"lora": {"encoders": ["cnn_random"]}}, "lora.encoders[0] names 'cnn_random', which is not among"),
        ({"lora": {"epochs": 3}}, "unknown key lora.epochs"),
        ({"lora": {"max_steps": 0}}, "lora.max_steps must be a positive integer"),
        ({"lora": {"blocks": "some"}}, "lora.blocks must be a positive integer"),
        ({"lora": {"lr": {"cnn_s": -1}}}, "lora.lr.cnn_s must be a positive number"),
        ({"lora": {"lr": {}}}, "lora.lr must be a number or a mapping"),
        ({"lora": {"lr_schedule": "step"}}, "lora.lr_schedule must be one of cosine, constant, got 'step'"),
        ({"lora": {"min_val_labels": 0}}, "lora.min_val_labels must be a positive integer"),
        ({"embedding": {"amp": "int8"}}, "embedding.amp must be one of"),
        ({"name": "a b"}, "name must hold letters"),
        ({"standard": "no-such-standard"}, "standard names a missing reference standard file"),
    ],
)
def test_bad_values_name_the_key(tmp_path: Path, change: dict, message: str) -> None:
    path = write(tmp_path, with_(**change))
    with pytest.raises(ConfigError) as info:
        load_profile(path)
    assert message in str(info.value)
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_required_key(tmp_path: Path) -> None:
    config = dict(BASE)
    del config["encoders"]
    with pytest.raises(ConfigError, match="missing required key encoders"):
        load_profile(write(tmp_path, config))


def test_missing_medmnist_file_and_manifest(tmp_path: Path) -> None:
    medmnist = with_(datasets=[{"kind": "medmnist", "flag": "dermamnist", "root": "no-such-folder"}])
    with pytest.raises(ConfigError) as info:
        load_profile(write(tmp_path, medmnist))
    message = str(info.value)
    assert "datasets[0].root has no MedMNIST file for flag 'dermamnist'" in message
    assert str(tmp_path / "no-such-folder" / "dermamnist.npz") in message
    assert "--allow-download" in message and "allow_download: true" in message and "\n" not in message
    manifest = with_(datasets=[{"kind": "manifest", "name": "mine", "csv": "nope.csv", "domain": "dermatology"}])
    with pytest.raises(ConfigError, match=r"datasets\[0\].csv names a missing manifest file"):
        load_profile(write(tmp_path, manifest))


def test_relative_paths_resolve_against_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "dermamnist.npz").write_bytes(b"")
    config = with_(datasets=[{"kind": "medmnist", "flag": "dermamnist", "root": "data", "size": 28}])
    profile = load_profile(write(tmp_path, config))
    assert profile.datasets[0].options["root"] == (tmp_path / "data").resolve()
    assert profile.datasets[0].name == "dermamnist"


def test_medmnist_root_may_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "dermamnist_64.npz").write_bytes(b"")
    config = with_(datasets=[{"kind": "medmnist", "flag": "dermamnist", "root": "data/dermamnist_64.npz", "size": 64}])
    assert load_profile(write(tmp_path, config)).datasets[0].options["root"] == (tmp_path / "data").resolve()
    wrong = with_(datasets=[{"kind": "medmnist", "flag": "dermamnist", "root": "data/dermamnist_64.npz"}])
    with pytest.raises(ConfigError, match=r"datasets\[0\]\.root .*root names a file.*dermamnist\.npz"):
        load_profile(write(tmp_path, wrong))


def test_allow_download_key_and_override(tmp_path: Path) -> None:
    entry = {"kind": "medmnist", "flag": "dermamnist", "root": "absent"}
    allowed = load_profile(write(tmp_path, with_(datasets=[entry], allow_download=True)))
    assert allowed.allow_download and allowed.datasets[0].options["download"] is True
    denied = with_(datasets=[entry])
    assert load_profile(write(tmp_path, denied), allow_download=True).allow_download
    plain = load_profile(write(tmp_path, BASE, "plain.yaml"))
    same = load_profile(write(tmp_path, with_(allow_download=True), "same.yaml"))
    assert not plain.allow_download and plain.config_hash == same.config_hash
    with pytest.raises(ConfigError, match="allow_download must be true or false"):
        load_profile(write(tmp_path, with_(allow_download="yes")))


def test_domain_key(tmp_path: Path) -> None:
    (tmp_path / "mymnist.npz").write_bytes(b"")
    unknown = with_(datasets=[{"kind": "medmnist", "flag": "mymnist", "root": "."}])
    with pytest.raises(ConfigError, match=r"datasets\[0\]\.domain is required: flag 'mymnist'") as info:
        load_profile(write(tmp_path, unknown))
    assert "\n" not in str(info.value)
    given = with_(datasets=[{"kind": "medmnist", "flag": "mymnist", "root": ".", "domain": "radiology"}])
    spec = load_profile(write(tmp_path, given)).datasets[0]
    assert spec.options["domain"] == "radiology" and spec.written["domain"] == "radiology"
    (tmp_path / "pathmnist.npz").write_bytes(b"")
    pathology = with_(datasets=[{"kind": "medmnist", "flag": "pathmnist", "root": "."}])
    # A standard flag brings its modality's catalogue (pathology has one): no domain key needed.
    assert load_profile(write(tmp_path, pathology)).datasets[0].options.get("domain") in (None, "pathology")
    bad = with_(datasets=[{"kind": "medmnist", "flag": "mymnist", "root": ".", "domain": "cardiology"}])
    with pytest.raises(ConfigError, match=r"datasets\[0\]\.domain must be one of dermatology"):
        load_profile(write(tmp_path, bad))
    manifest = with_(datasets=[{"kind": "manifest", "name": "m", "csv": "m.csv"}])
    with pytest.raises(ConfigError, match=r"datasets\[0\]\.domain is required for a manifest"):
        validate_config(manifest, check_files=False)


def test_device_auto_default_and_missing_cuda(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    assert load_profile(write(tmp_path, BASE)).embedding.device == "auto"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for embedding in ({"device": "cuda"}, {"device": "cuda:1", "amp": "bf16"}):
        with pytest.raises(ConfigError, match=r"embedding\.device is 'cuda.*has no CUDA device; set embedding\.device: auto"):
            load_profile(write(tmp_path, with_(embedding=embedding)))
    with pytest.raises(ConfigError, match=r"embedding\.device must be auto, cpu"):
        load_profile(write(tmp_path, with_(embedding={"device": "gpu0"})))
    assert validate_config(with_(embedding={"device": "cuda"}), check_files=False).embedding.device == "cuda"


def test_unknown_profile_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown profile 'nope'"):
        load_profile("nope")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_profile(bad)
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    with pytest.raises(ConfigError, match="empty"):
        load_profile(empty)
    with pytest.raises(ConfigError, match="no such config file"):
        load_profile(tmp_path / "missing.yaml")


def test_config_hash_is_canonical(tmp_path: Path) -> None:
    a = load_profile(write(tmp_path, BASE, "a.yaml"))
    reordered = {k: BASE[k] for k in reversed(list(BASE))}
    b = load_profile(write(tmp_path, reordered, "b.yaml"))
    assert a.config_hash == b.config_hash == sha256_of(a.config)
    explicit_defaults = with_(seeds=[0, 1, 2], arms=["frozen"])
    c = load_profile(write(tmp_path, explicit_defaults, "c.yaml"))
    assert c.config_hash == a.config_hash
    d = load_profile(write(tmp_path, with_(seeds=[0, 1]), "d.yaml"))
    assert d.config_hash != a.config_hash


def test_families_forms() -> None:
    profile = validate_config(with_(corruptions={"families": {"dermatology": ["jpeg"], "*": "all"}}), check_files=False)
    assert profile.corruptions.families_for("dermatology") == ("jpeg",)
    assert profile.corruptions.families_for("radiology") == "all"
    listed = validate_config(with_(corruptions={"families": ["jpeg"]}), check_files=False)
    assert listed.corruptions.families_for("anything") == ("jpeg",)
    only = validate_config(with_(corruptions={"families": {"dermatology": []}}), check_files=False)
    with pytest.raises(ConfigError, match="no entry for domain 'radiology'"):
        only.corruptions.families_for("radiology")


def test_corruption_layout_enters_the_config_hash_and_places_each_block(tmp_path: Path) -> None:
    per_condition = load_profile(write(tmp_path, with_(corruptions={"n_images": 30})))
    per_family = load_profile(write(tmp_path, with_(corruptions={"n_images": 30, "layout": "per_family"})))
    shared = load_profile(write(tmp_path, with_(corruptions={"n_images": 30, "layout": "shared"})))
    assert per_condition.corruptions.layout == "per_condition"  # the default
    assert len({per_condition.config_hash, per_family.config_hash, shared.config_hash}) == 3
    # block 5k + severity - 1 (per condition) or k (per family), of 30 images, modulo the 100 test images
    def starts(profile, pairs):
        spec = profile.corruptions
        return [first_image(spec.layout, k, s, spec.n_images, 100) for k, s in pairs]

    assert starts(per_condition, ((0, 1), (0, 2), (1, 1))) == [0, 30, 50]
    assert starts(per_family, ((0, 1), (0, 5), (4, 1))) == [0, 0, 20]
    assert set(starts(shared, [(k, 3) for k in range(5)])) == {0}
    assert images_per_condition(per_condition.corruptions.n_images, 20) == 20  # never more than the test split


# ---------------------------------------------------------------------------
# Encoder groups: one resolution for ``encoders`` and ``lora.encoders``
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("group", ["zoo", "handcrafted", "neural", "pretrained", "foundation"])
def test_an_encoder_group_resolves_to_its_names_in_zoo_order(group: str) -> None:
    from crsbench_lib.encoders.zoo import ZOO_GROUPS
    from crsbench_lib.runner.config import encoder_names

    assert encoder_names(group, "encoders") == ZOO_GROUPS[group]
    profile = validate_config(with_(encoders=group), check_files=False)
    assert profile.encoders == ZOO_GROUPS[group]


def test_a_group_and_its_explicit_list_hash_alike(tmp_path: Path) -> None:
    from crsbench_lib.encoders.zoo import ZOO_GROUPS

    group = load_profile(write(tmp_path, with_(encoders="zoo", lora={"encoders": "pretrained"}), "g.yaml"))
    listed = load_profile(write(tmp_path, with_(encoders=list(ZOO_GROUPS["zoo"]),
                                                lora={"encoders": list(ZOO_GROUPS["pretrained"])}), "l.yaml"))
    assert group.encoders == listed.encoders and group.lora.encoders == listed.lora.encoders
    assert group.config_hash == listed.config_hash
    # The group's members in another order are another config.
    shuffled = load_profile(write(tmp_path, with_(encoders=list(reversed(ZOO_GROUPS["zoo"])),
                                                  lora={"encoders": "pretrained"}), "r.yaml"))
    assert shuffled.config_hash != group.config_hash


def test_default_profile_names_the_zoo_by_group() -> None:
    from crsbench_lib.encoders.zoo import ZOO_GROUPS
    from crsbench_lib.paths import configs_dir

    raw = yaml.safe_load((configs_dir() / "default.yaml").read_text())
    assert raw["encoders"] == "zoo" and raw["lora"]["encoders"] == "foundation"
    profile = load_profile("default")
    assert profile.encoders == ZOO_GROUPS["zoo"] and profile.lora.encoders == ZOO_GROUPS["foundation"]


def test_lora_neural_keeps_its_profile_relative_meaning() -> None:
    # ``lora.encoders: neural`` is every torch-backed encoder of the profile (hub ids
    # included), hashed as written, not the zoo group of that name.
    profile = validate_config(with_(encoders=["pixels", "cnn_random"], lora={"encoders": "neural"}),
                              check_files=False)
    assert profile.lora.encoders == "neural" and profile.config["lora"]["encoders"] == "neural"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"encoders": "cnns"}, "encoders names unknown encoder group 'cnns' (expected one of zoo, handcrafted, "
                               "neural, pretrained, foundation, or a list of encoder names)"),
        ({"lora": {"encoders": "everything"}}, "lora.encoders names unknown encoder group 'everything'"),
        ({"encoders": ["pixels", "zoo"]}, "a group is written alone, not in a list: encoders: zoo"),
        ({"lora": {"encoders": "pretrained"}},
         "lora.encoders (group 'pretrained') names 'simclr_broad_aug_s', which is not among the profile's encoders"),
        ({"encoders": []}, "encoders must not be empty"),
    ],
)
def test_bad_encoder_groups_name_the_key(tmp_path: Path, change: dict, message: str) -> None:
    path = write(tmp_path, with_(**change))
    with pytest.raises(ConfigError) as info:
        load_profile(path)
    text = str(info.value)
    assert message in text and str(path) in text and "\n" not in text


# ---------------------------------------------------------------------------
# The probe section: validated by ProbeConfig, reported under the profile's key
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("probe", "message"),
    [
        ({"C": [1.0, -1.0]}, "probe.C[1] must be a positive number, got -1.0"),
        ({"C": [0.1, "1"]}, "probe.C[1] must be a positive number, got '1'"),
        ({"C": [0.1, 0.1]}, "probe.C[1] repeats 0.1"),
        ({"C": "1.0"}, "probe.C must be a list, got '1.0'"),
        ({"C": []}, "probe.C must not be empty"),
        ({"max_iter": 0}, "probe.max_iter must be a positive integer, got 0"),
        ({"tol": float("inf")}, "probe.tol must be a positive number, got inf"),
        ({"tol": True}, "probe.tol must be a positive number, got True"),
        ({"val_fraction_policy": "half"}, "probe.val_fraction_policy must be one of matched, full, got 'half'"),
        ({"calibrators": ["temperature", "platt"]}, "probe.calibrators[1] must be one of temperature, vector, isotonic"),
        ({"calibrators": ["vector", "vector"]}, "probe.calibrators[1] repeats 'vector'"),
        ({"c_rule": "accuracy"}, "probe.c_rule must be one of auroc, log_loss, got 'accuracy'"),
    ],
)
def test_a_bad_probe_value_in_a_profile_file_names_the_file_and_key(tmp_path: Path, probe: dict, message: str) -> None:
    path = write(tmp_path, with_(probe=probe))
    with pytest.raises(ConfigError) as info:
        load_profile(path)
    text = str(info.value)
    assert text == f"{path}: {message}" or (text.startswith(f"{path}: {message}") and "\n" not in text)


def test_the_probe_section_is_the_probe_config(tmp_path: Path) -> None:
    from crsbench_lib.evaluation.cell import ProbeConfig

    profile = load_profile(write(tmp_path, with_(probe={"C": [1, 10], "tol": 1, "calibrators": []})))
    assert profile.probe == ProbeConfig(c_grid=(1.0, 10.0), tol=1.0, calibrators=())
    assert profile.config["probe"]["tol"] == 1.0 and isinstance(profile.config["probe"]["tol"], float)


def test_lora_rates_per_architecture_enter_the_hash(tmp_path: Path) -> None:
    one = load_profile(write(tmp_path, with_(lora={"lr": {"cnn_s": 3e-4, "default": 1e-3}}), "a.yaml"))
    other = load_profile(write(tmp_path, with_(lora={"lr": {"cnn_s": 1e-3, "default": 1e-3}}), "b.yaml"))
    assert one.lora.lr == {"cnn_s": 3e-4, "default": 1e-3} and one.lora.blocks == 1
    assert one.config_hash != other.config_hash
    every = load_profile(write(tmp_path, with_(lora={"blocks": "all"}), "c.yaml"))
    assert every.lora.blocks == "all"
