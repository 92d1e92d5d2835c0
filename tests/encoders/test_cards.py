"""Encoder cards: one complete card per zoo encoder, facts read from the module and the manifest."""

from __future__ import annotations

import pandas as pd
import pytest

from crsbench_lib.encoders.cards import CARD_COLUMNS, zoo_cards, zoo_summary
from crsbench_lib.encoders.neural import NEURAL_ZOO
from crsbench_lib.encoders.recipes import FAMILIES
from crsbench_lib.encoders.registry import DEFAULT_ZOO, build_encoder


def test_every_card_is_complete() -> None:
    cards = zoo_cards()
    assert list(cards.columns) == list(CARD_COLUMNS) and list(cards["name"]) == list(DEFAULT_ZOO)
    neural = cards[cards["kind"] == "neural"]
    assert len(neural) >= 10
    required = [c for c in CARD_COLUMNS if c != "sha256"]
    assert not cards[required].isna().any().any(), cards[required].isna().sum()
    assert neural["sha256"].notna().all() and (neural["pretrain_seconds"] >= 0).all()
    assert set(cards["study_family"]) <= set(FAMILIES.values())
    pretrained = neural[neural["steps"] > 0]
    assert (pretrained["pool"] != "none").all() and (pretrained["augmentations"] != "none").all()


def test_parameters_and_dims_come_from_the_modules() -> None:
    cards = zoo_cards().set_index("name")
    for name in NEURAL_ZOO:
        enc = build_encoder(name, device="cpu")
        assert cards.loc[name, "parameters"] == sum(p.numel() for p in enc.module.parameters())
        assert cards.loc[name, "embedding_dim"] == enc.embedding_dim
    for name in DEFAULT_ZOO:
        if name not in NEURAL_ZOO:
            assert cards.loc[name, "embedding_dim"] == build_encoder(name).embedding_dim, name
    assert cards.loc["pixels", "parameters"] == 0 and cards.loc["pca", "parameters"] > 0
    assert cards.loc["simclr_broad_aug_l", "parameters"] > 2 * cards.loc["simclr_broad_aug_s", "parameters"]


def test_the_families_the_issue_asks_for_are_present() -> None:
    cards = zoo_cards().set_index("name")
    fam = {k: v for k, v in FAMILIES.items()}
    by_family = cards.groupby("study_family").size()
    for key in ("classical", "broad_ssl", "broad_multitask", "broad_noaug", "narrow", "mim", "random", "intask"):
        assert by_family.get(fam[key], 0) >= 1, key
    aug = cards[cards["augmentations"].str.contains("gamma")]
    noaug = cards[(cards["kind"] == "neural") & ~cards["augmentations"].str.contains("gamma") & (cards["steps"] > 0)]
    assert {"simclr_broad_aug_s", "multitask_broad_aug_s"} <= set(aug.index)
    assert {"simclr_broad_noaug_s", "multitask_broad_noaug_s"} <= set(noaug.index)
    ssl_noaug = noaug[noaug["recipe"].str.contains("simclr", case=False)]
    assert len(ssl_noaug) and ssl_noaug["augmentations"].str.contains("colour jitter").all(), "colour jitter stays in the unaugmented SSL arm"


def test_summary_is_one_sentence() -> None:
    text = zoo_summary(zoo_cards())
    assert text.startswith("The zoo has") and text.count(". ") == 0 and text.endswith(".")
    assert isinstance(zoo_cards(), pd.DataFrame)


def test_augmentation_pairs_differ_only_by_acquisition_augmentation() -> None:
    from crsbench_lib.encoders.cards import PAIR_COLUMNS, augmentation_pairs
    from crsbench_lib.encoders.recipes import ACQUISITION_AUGMENTATIONS

    pairs = augmentation_pairs(zoo_cards())
    assert list(pairs.columns) == list(PAIR_COLUMNS) and len(pairs) >= 1
    for row in pairs.itertuples():
        aug, plain = NEURAL_ZOO[row.augmented], NEURAL_ZOO[row.plain]
        assert aug.acquisition_augmentation and not plain.acquisition_augmentation
        assert (aug.architecture, aug.method, aug.pool) == (plain.architecture, plain.method, plain.pool)
        assert set(ACQUISITION_AUGMENTATIONS) <= set(aug.augmentations)
    # Every ablation without acquisition augmentation is paired with its augmented twin.
    assert {s.name for s in NEURAL_ZOO.values() if s.family == "broad_noaug"} == set(pairs["plain"])


def test_augmentation_pairs_need_matching_recipe_and_complete_augmentation() -> None:
    from crsbench_lib.encoders.cards import augmentation_pairs

    base = {"kind": "neural", "architecture": "CNN", "recipe": "r", "pool": "p"}
    cards = pd.DataFrame([
        {**base, "name": "a", "augmentations": "crop, gamma, noise, blur"},
        {**base, "name": "b", "augmentations": "crop"},
        {**base, "name": "c", "augmentations": "crop, gamma"},  # partial: pairs with nothing
        {**base, "name": "d", "augmentations": "crop", "pool": "other"},  # other pool
        {**base, "name": "e", "augmentations": "none", "kind": "classical"},
    ])
    pairs = augmentation_pairs(cards)
    assert pairs[["augmented", "plain"]].values.tolist() == [["a", "b"]]
    assert augmentation_pairs(cards[cards["name"] != "b"]).empty
    with pytest.raises(ValueError, match="pool"):
        augmentation_pairs(cards.drop(columns="pool"))


def test_the_shipped_manifest_records_the_shapes_the_modules_have() -> None:
    # The cards read shapes from the manifest (no torch); `zoo pretrain` writes them with shape_facts.
    from crsbench_lib.encoders.registry import shape_facts
    from crsbench_lib.encoders.weights_manifest import SHIPPED_WEIGHTS_DIR, zoo_shapes

    assert zoo_shapes(SHIPPED_WEIGHTS_DIR) == shape_facts(SHIPPED_WEIGHTS_DIR)


def test_a_manifest_without_shapes_gives_cards_without_them(tmp_path) -> None:
    import json
    import shutil

    from crsbench_lib.encoders.weights_manifest import SHIPPED_WEIGHTS_DIR

    folder = tmp_path / "weights"
    shutil.copytree(SHIPPED_WEIGHTS_DIR, folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["encoders"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    cards = zoo_cards(folder)
    assert cards["parameters"].isna().all() and cards["sha256"].notna().sum() >= 10

