import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.errors import SchemaError
from crsbench_lib.scoring.bootstrap import paired_seed_bootstrap, tied_with_leader
from crsbench_lib.scoring.selection_gate import (
    DEPLOYMENT_EVIDENCE,
    REFERENCE_DECISION,
    deployment_evidence,
    describe_thresholds,
    selection_gate,
    threshold_failures,
)

PROFILES = pd.DataFrame(
    {
        "encoder": ["a", "b", "c", "d"],
        "D": [0.90, 0.92, 0.80, 0.70],
        "C": [0.05, 0.15, 0.04, 0.03],
        "L": [0.95, 0.97, 0.90, 0.80],
        "R": [0.02, 0.03, 0.01, 0.10],
    }
)
THRESHOLDS = {"D": 0.75, "C": 0.10, "L": 0.85, "R": 0.05}
# A bootstrap summary: the tier is its in_tier column, whatever P(top 3) says ("c" is in the top 3 in 99 %
# of draws yet outside the tier, "b" in 40 % yet inside it: the gate must follow in_tier).
PROBS = pd.DataFrame({"encoder": ["a", "b", "c", "d"], "role": "candidate", "p_top3": [1.0, 0.4, 0.99, 0.0],
                      "in_tier": [True, True, False, False]})


def test_decisions():
    gate = selection_gate(PROFILES, THRESHOLDS, PROBS).set_index("encoder")
    assert gate.loc["a", "decision"] == "advance"
    assert gate.loc["b", "decision"] == "leading tier, fails C"
    assert gate.loc["c", "decision"] == "clears gate, outside leading tier"
    assert gate.loc["d", "decision"] == "fails D, L, R"
    assert list(selection_gate(PROFILES, THRESHOLDS, PROBS)["encoder"]) == ["a", "b", "c", "d"]
    assert gate.loc["a", "pass_C"] and not gate.loc["b", "pass_C"]


def test_boundaries_are_inclusive_and_axes_optional():
    gate = selection_gate(PROFILES.set_index("encoder"), {"C": 0.05}).set_index("encoder")
    assert bool(gate.loc["a", "clears_gate"])  # C == 0.05 passes "C <= 0.05"
    assert "pass_D" not in gate.columns and "leading_tier" not in gate.columns
    assert gate.loc["b", "decision"] == "fails C"


@settings(max_examples=50, deadline=None)
@given(st.floats(0.5, 1.0), st.floats(0.0, 0.3))
def test_stricter_thresholds_never_admit_more(d_low, c_high):
    loose = selection_gate(PROFILES, {"D": d_low, "C": c_high})
    strict = selection_gate(PROFILES, {"D": min(1.0, d_low + 0.05), "C": max(0.0, c_high - 0.05)})
    assert set(strict.loc[strict["clears_gate"], "encoder"]) <= set(loose.loc[loose["clears_gate"], "encoder"])


def test_describe_and_evidence():
    described = describe_thresholds(THRESHOLDS)
    assert list(described["rule"]) == ["D >= 0.75", "C <= 0.1", "L >= 0.85", "R <= 0.05"]
    assert len(deployment_evidence()) == len(DEPLOYMENT_EVIDENCE) > 0


def test_errors():
    with pytest.raises(SchemaError, match="unknown threshold axis 'X'"):
        selection_gate(PROFILES, {"X": 1})
    with pytest.raises(SchemaError, match="must be a number"):
        selection_gate(PROFILES, {"D": "high"})
    with pytest.raises(SchemaError, match="no thresholds"):
        selection_gate(PROFILES, {})
    with pytest.raises(SchemaError, match="missing axis column"):
        selection_gate(PROFILES.drop(columns="R"), THRESHOLDS)
    with pytest.raises(SchemaError, match="no row for encoder 'd'"):
        selection_gate(PROFILES, THRESHOLDS, PROBS.head(3))
    with pytest.raises(SchemaError, match="missing column 'in_tier'"):
        selection_gate(PROFILES, THRESHOLDS, PROBS.drop(columns="in_tier"))
    with pytest.raises(SchemaError, match="'b' is a reference there but not in the gate"):
        selection_gate(PROFILES, THRESHOLDS, PROBS.assign(role=["candidate", "reference", "candidate", "candidate"]))
    with pytest.raises(SchemaError, match="'b' is a candidate there but not in the gate"):
        selection_gate(PROFILES, THRESHOLDS, PROBS, references=["b"])
    bad = PROFILES.copy()
    bad.loc[0, "D"] = float("nan")
    with pytest.raises(SchemaError, match="non-finite"):
        selection_gate(bad, THRESHOLDS)


def test_a_reference_is_gated_but_never_advances():
    # "b" would otherwise be in the tier; as a reference it needs no probability and never advances.
    profiles = PROFILES.assign(C=[0.05, 0.05, 0.04, 0.03])
    gate = selection_gate(profiles, THRESHOLDS, PROBS[PROBS["encoder"] != "b"], references=["b"]).set_index("encoder")
    assert gate.loc["b", "decision"] == REFERENCE_DECISION and gate.loc["b", "role"] == "reference"
    assert not gate.loc["b", "leading_tier"] and gate.loc["b", "clears_gate"]
    assert gate.loc["a", "decision"] == "advance" and gate.loc["a", "role"] == "candidate"
    as_reference = PROBS.assign(role=["candidate", "reference", "candidate", "candidate"], in_tier=[True, False, False, False])
    assert list(selection_gate(profiles, THRESHOLDS, as_reference, references=["b"])["encoder"])[-1] == "b"
    with pytest.raises(SchemaError, match="no profile for encoder 'zz'"):
        selection_gate(PROFILES, THRESHOLDS, PROBS, references=["zz"])


@settings(max_examples=40, deadline=None)
@given(d=st.floats(0.6, 1.0), c=st.floats(0.0, 0.2), reference=st.sampled_from([(), ("b",)]))
def test_threshold_failures_count_the_candidates_each_threshold_stops(d, c, reference):
    thresholds = {"D": d, "C": c}
    gate = selection_gate(PROFILES, thresholds, references=reference)
    failures = threshold_failures(gate, thresholds).set_index("axis")
    candidates = PROFILES[~PROFILES["encoder"].isin(reference)]
    fails_d = candidates["D"] < d
    fails_c = candidates["C"] > c
    assert failures.loc["D", "failing"] == fails_d.sum() and failures.loc["C", "failing"] == fails_c.sum()
    assert failures.loc["D", "failing_alone"] == (fails_d & ~fails_c).sum()
    assert failures.loc["D", "binds"] == bool(fails_d.any()) and failures.loc["C", "candidates"] == len(candidates)


def test_the_gate_reads_the_tier_and_not_a_rank_probability():
    gate = selection_gate(PROFILES, THRESHOLDS, PROBS).set_index("encoder")
    assert gate["leading_tier"].to_dict() == {"a": True, "b": True, "c": False, "d": False}
    assert "p_tier" not in gate.columns


@settings(max_examples=8, deadline=None)
@given(random_state=st.integers(0, 10_000), n_draws=st.integers(20, 120), with_reference=st.booleans())
def test_the_gate_tier_is_the_bootstrap_tier(synthetic_table, frozen_standard, random_state, n_draws, with_reference):
    """The tier is the same set on the gate page as on the leading-tier page: one function decides it."""
    references = ["enc02"] if with_reference else []
    boot = paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=n_draws, random_state=random_state,
                                 references=references)
    profiles = boot.summary[["encoder"]].assign(D=1.0)
    gate = selection_gate(profiles, {"D": 0.5}, boot.summary, references=references)
    in_tier = set(boot.summary.loc[boot.summary["in_tier"].astype(bool), "encoder"])
    assert set(gate.loc[gate["leading_tier"], "encoder"]) == in_tier == set(tied_with_leader(boot.summary, boot.pairwise))
    assert set(gate.loc[gate["decision"] == "advance", "encoder"]) == in_tier
