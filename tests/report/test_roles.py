"""Candidates are the pretrained encoders: reference encoders are scored, drawn and in the panel, never ranked.

The reference families have one home (:mod:`crsbench_lib.report.roles`); every
ranking function of the book takes the references it derives and must never rank
one, whatever subset of the zoo a table holds. Nothing here names an encoder or a
count of this build: the zoo changes, the rule does not.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from crsbench_lib.encoders.recipes import FAMILIES
from crsbench_lib.encoders.zoo import ZOO_GROUPS, zoo_families
from crsbench_lib.report import roles, summaries
from crsbench_lib.report.comparison import leaders_table
from crsbench_lib.scoring import lodo
from crsbench_lib.scoring.axes import encoder_profiles, standard_axes
from crsbench_lib.scoring.bootstrap import paired_seed_bootstrap, tied_with_leader
from crsbench_lib.scoring.crs import score_results
from crsbench_lib.scoring.freeze import freeze_standard
from crsbench_lib.scoring.selection_gate import REFERENCE_DECISION, selection_gate, threshold_failures
from crsbench_lib.scoring.sensitivity import weight_perturbation

#: Encoders of a user's own (no family): candidates by rule.
OWN = ("my_encoder_a", "my_encoder_b")


def test_every_reference_family_is_a_zoo_family():
    assert set(roles.REFERENCE_FAMILIES) <= set(FAMILIES)
    assert set(roles.REFERENCE_FAMILY_NOUNS) == set(roles.REFERENCE_FAMILIES)


def test_the_candidates_of_the_zoo_are_its_pretrained_encoders():
    families = zoo_families()
    candidates = set(roles.candidate_encoders(list(families), families))
    # Pretrained on a pool that is not the evaluation labels: the recipes' pretrained group less the in-task family.
    pretrained = {name for name in ZOO_GROUPS["pretrained"] if families[name] != roles.IN_TASK_FAMILY}
    assert candidates == pretrained
    references = roles.reference_encoders(families)
    assert set(references) | candidates == set(families) and not set(references) & candidates
    assert set(roles.in_task_references(families)) == {n for n, f in families.items() if f == roles.IN_TASK_FAMILY}


def test_an_encoder_without_a_family_is_a_candidate():
    assert roles.candidate_encoders(list(OWN), zoo_families()) == list(OWN)
    assert roles.reference_encoders(zoo_families(), present=list(OWN)) == []


def _zoo_table(synthetic_table: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """The synthetic table with its encoders renamed to ``names`` (a subset of the zoo, perhaps with own encoders)."""
    synthetic = sorted(synthetic_table["encoder"].astype(str).unique())
    return synthetic_table.assign(encoder=synthetic_table["encoder"].astype(str).map(dict(zip(synthetic, names))))


_POOL = sorted(zoo_families()) + list(OWN)


def references_of(names: list[str]) -> list[str]:
    return roles.reference_encoders(zoo_families(), present=names)


@settings(max_examples=12, deadline=None)
@given(names=st.lists(st.sampled_from(_POOL), min_size=8, max_size=8, unique=True), random_state=st.integers(0, 999))
def test_ranking_functions_never_rank_a_reference(synthetic_table, names, random_state):
    table = _zoo_table(synthetic_table, names)
    # Frozen from the renamed table: its panel holds the references, as the default standard's holds the baselines.
    frozen_standard = freeze_standard(table, "roles-v1", created="2026-11-30T00:00:00Z")
    assert set(references_of(names)) <= set(frozen_standard.panel_names)
    references = references_of(names)
    candidates = [name for name in names if name not in references]
    assume(len(candidates) >= 2)

    # The score table's ranks: a reference takes none, the candidates take 1..n among themselves.
    scores = score_results(table, frozen_standard)
    ranks = summaries.candidate_rank_labels(scores, references).set_axis(scores["encoder"].astype(str))
    assert (ranks.loc[references] == "–").all()
    assert sorted(int(r) for r in ranks.loc[candidates]) == sorted(
        scores.set_index("encoder").loc[candidates, "crs"].rank(ascending=False, method="min").astype(int))

    # The bootstrap: ranks, rank probabilities and the leading tier are the candidates'.
    boot = paired_seed_bootstrap(table, frozen_standard, n_draws=30, random_state=random_state, top_k=1,
                                 references=references)
    summary = boot.summary.set_index("encoder")
    assert (summary.loc[references, "role"] == "reference").all()
    assert summary.loc[references, "rank"].isna().all() and summary.loc[references, "p_rank1"].isna().all()
    assert not summary.loc[references, "in_tier"].astype(bool).any()
    assert set(tied_with_leader(boot.summary, boot.pairwise)) <= set(candidates)
    assert summary.loc[candidates, "p_rank1"].sum() == pytest.approx(1.0)

    # The selection gate: a reference is gated, never advanced, and not counted among the candidates.
    raw = standard_axes(table, frozen_standard, "frozen")
    profiles = encoder_profiles(raw)
    gate = selection_gate(profiles, {"D": 0.0}, boot.summary, references=references).set_index("encoder")
    assert (gate.loc[references, "decision"] == REFERENCE_DECISION).all()
    assert not set(gate.index[gate["decision"] == "advance"]) & set(references)
    assert (threshold_failures(gate.reset_index(), {"D": 0.0})["candidates"] == len(candidates)).all()

    # The sensitivity page's top k and the study comparison's leaders.
    weights = weight_perturbation(profiles, frozen_standard, n_draws=20, random_state=random_state, top_k=1,
                                  references=references)
    assert not set(weights.default_top_k) & set(references)
    leaders = leaders_table(scores, k=min(3, len(candidates)), references=references)
    assert not set(leaders.drop(columns="ranking").to_numpy().ravel()) & set(references)

    # Leave one dataset out: every reference stays in the refrozen panel, none is a ranked row.
    predictions = lodo.lodo_predictions(raw, frozen_standard, references=references)
    assert set(predictions["encoder"]) == set(candidates)


@settings(max_examples=25, deadline=None)
@given(names=st.lists(st.sampled_from(_POOL), min_size=1, max_size=20, unique=True))
def test_references_are_named_by_count_and_family_when_many(names):
    from crsbench_lib.report.sentences.references import MAX_NAMED, name_references

    references = roles.reference_encoders(zoo_families(), present=names)
    assume(references)
    text = name_references(references, zoo_families())
    if len(references) <= MAX_NAMED:
        assert all(name in text for name in references)
    else:
        assert text.startswith(f"{len(references)} reference encoders (") and roles.ROLE_LIST_PLACE in text
        assert not any(name in text for name in references)
        counted = [int(part.split()[0]) for part in text.split("(", 1)[1].split(";")[0].replace(" and ", ", ").split(", ")]
        assert sum(counted) == len(references)


def test_zoo_table_marks_each_role():
    from crsbench_lib.encoders.zoo import describe_encoders

    families = zoo_families()
    results = pd.DataFrame({"encoder": list(families), "arm": "frozen"})
    table = summaries.zoo_table(describe_encoders(), results, families).set_index("name")
    expected = np.where([roles.is_reference_family(families[n]) for n in table.index], "reference", "candidate")
    assert table["role"].tolist() == expected.tolist()
