"""The zoo's list: one torch-free home that the registry, the hand-crafted module and the cards follow."""

from __future__ import annotations

import subprocess
import sys

from crsbench_lib.encoders.handcrafted import HANDCRAFTED
from crsbench_lib.encoders.recipes import FAMILIES, NEURAL_ZOO
from crsbench_lib.encoders.registry import available_encoders
from crsbench_lib.encoders.zoo import DEFAULT_ZOO, HANDCRAFTED_ZOO, ZOO_GROUPS, describe_encoders, zoo_families


def test_the_zoo_modules_a_notebook_imports_load_no_torch():
    # The report side and its notebooks are torch-free: naming and describing the zoo must not load it.
    code = "import sys, crsbench_lib.encoders.zoo as z; z.describe_encoders(); z.zoo_families(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_handcrafted_follows_the_zoo_list():
    assert tuple(HANDCRAFTED) == tuple(HANDCRAFTED_ZOO)
    assert all(HANDCRAFTED[name].name == name for name in HANDCRAFTED_ZOO)


def test_default_zoo_is_classical_then_neural_and_unique():
    assert DEFAULT_ZOO == (*HANDCRAFTED_ZOO, *NEURAL_ZOO)
    assert len(set(DEFAULT_ZOO)) == len(DEFAULT_ZOO)
    assert list(available_encoders())[: len(DEFAULT_ZOO)] == list(DEFAULT_ZOO)


def test_groups_partition_the_zoo_in_zoo_order():
    assert ZOO_GROUPS["zoo"] == DEFAULT_ZOO
    assert ZOO_GROUPS["handcrafted"] + ZOO_GROUPS["neural"] == DEFAULT_ZOO
    pretrained = ZOO_GROUPS["pretrained"]
    assert set(pretrained) < set(ZOO_GROUPS["neural"])
    assert all(NEURAL_ZOO[name].pool is not None for name in pretrained)
    assert {"cnn_random", "vit_random"} <= set(ZOO_GROUPS["neural"]) - set(pretrained)
    order = {name: i for i, name in enumerate(DEFAULT_ZOO)}
    assert all(order[a] < order[b] for a, b in zip(pretrained, pretrained[1:]))


def test_families_and_descriptions_cover_the_zoo():
    families = zoo_families()
    assert list(families) == list(DEFAULT_ZOO)
    assert set(families.values()) <= set(FAMILIES)
    rows = describe_encoders()
    assert [r["name"] for r in rows[: len(DEFAULT_ZOO)]] == list(DEFAULT_ZOO)
    assert all(r["description"] for r in rows)
    assert {r["family"] for r in rows[: len(HANDCRAFTED_ZOO)]} == {"handcrafted"}


def test_foundation_group_is_the_pretrained_encoders_but_the_in_task_one() -> None:
    from crsbench_lib.encoders.zoo import ZOO_GROUPS, zoo_families

    families = zoo_families()
    foundation = ZOO_GROUPS["foundation"]
    assert set(foundation) < set(ZOO_GROUPS["pretrained"])
    assert {families[name] for name in set(ZOO_GROUPS["pretrained"]) - set(foundation)} == {"intask"}
    assert all(families[name] not in ("classical", "random", "intask") for name in foundation)
