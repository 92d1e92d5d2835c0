"""The leading-tier sentences: the one definition, every member, and every point outside its own interval."""

import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report.sentences import leading_tier

names = st.lists(st.sampled_from([f"enc{i}" for i in range(8)]), min_size=1, max_size=8, unique=True)


def _comparisons(rows: dict[str, tuple[float, float]]) -> pd.DataFrame:
    return pd.DataFrame({"encoder": list(rows), "low": [lo for lo, _ in rows.values()],
                         "high": [hi for _, hi in rows.values()], "bias": [0.001] * len(rows)})


@given(members=names, references=st.lists(st.sampled_from(["ref_a", "ref_b"]), unique=True))
def test_describe_leading_tier_names_every_member(members, references):
    p_rank1 = {name: 1.0 / len(members) for name in members}
    rows = {name: (-0.05, 0.05) for name in members[1:]}
    if len(members) == 1:
        rows = {"runner": (0.01, 0.04)}
        p_rank1["runner"] = 0.0
    text = leading_tier.describe_leading_tier(members, p_rank1, _comparisons(rows), references=references)
    for name in members:
        assert re.search(rf"\b{name}\b", text)
    if len(members) > 1:
        assert f"The leading tier holds {len(members)} candidates" in text and "winner" in text
        assert text.count("[-0.050, 0.050] (bias 0.001)") == len(members) - 1
    else:
        assert text.startswith(f"{members[0]} alone forms the leading tier") and "excludes zero" in text
    assert "95 % tier interval" in text
    for name in references:
        assert name in text.split("Not ranked:")[1]
    assert ("Not ranked" in text) == bool(references)


def test_describe_leading_tier_refuses_comparisons_that_contradict_the_tier():
    with pytest.raises(ValueError, match="belongs in the tier"):
        leading_tier.describe_leading_tier(["a"], {"a": 0.6, "b": 0.4}, _comparisons({"b": (-0.01, 0.03)}))
    with pytest.raises(ValueError, match="cannot be in the tier"):
        leading_tier.describe_leading_tier(["a", "b"], {"a": 0.6, "b": 0.4}, _comparisons({"b": (0.01, 0.03)}))
    with pytest.raises(ValueError, match="no comparison of a with member 'c'"):
        leading_tier.describe_leading_tier(["a", "c"], {"a": 0.6, "c": 0.4}, _comparisons({"b": (-0.01, 0.03)}))


def test_describe_leading_tier_keeps_the_sign_of_an_interval_end_near_zero():
    text = leading_tier.describe_leading_tier(["a"], {"a": 0.9, "b": 0.1}, _comparisons({"b": (0.0002, 0.0057)}))
    assert "[0.0002, 0.0057]" in text


def test_describe_leading_tier_says_a_reference_is_tied_with_the_leader():
    text = leading_tier.describe_leading_tier(["a", "b"], {"a": 0.6, "b": 0.4}, _comparisons({"b": (-0.01, 0.03)}),
                                              references=["r", "s"], tied_references=["r"])
    assert text.endswith("Not ranked: r and s, shown as references; the draws cannot separate r from a either.")


def _defining_text(path: Path, term: str | None) -> str:
    """A glossary entry's body (``term``) or the whole page, with whitespace collapsed."""
    text = path.read_text(encoding="utf-8")
    if term is not None:
        lines = text.splitlines()
        start = lines.index(term) + 1
        body = []
        for line in lines[start:]:
            if not line.startswith("  "):
                break
            body.append(line.strip())
        text = " ".join(body)
    return " ".join(text.split())


BOOK = Path(__file__).resolve().parents[3] / "book"


def test_the_glossary_and_the_method_page_say_the_tier_in_the_one_wording():
    definition = leading_tier.LEADING_TIER_DEFINITION
    assert _defining_text(BOOK / "glossary.md", "leading tier") == definition
    assert definition[1:] in _defining_text(BOOK / "method.md", None)  # after "is t"
    page = leading_tier.describe_tier_definition(0.95)
    assert page.startswith("The *leading tier* is the confidence set for the best candidate")
    assert definition[1:] in page and page.endswith("On this page the coverage is 95 %.")
    with pytest.raises(ValueError, match="level"):
        leading_tier.describe_tier_definition(1.0)


def test_no_page_defines_the_tier_by_a_rank_probability_or_a_pairwise_interval():
    """The earlier definitions (P(top k) >= threshold; the interval with the leader includes zero) are gone."""
    root = BOOK.parent
    pages = [BOOK / "glossary.md", BOOK / "method.md", root / "notebooks" / "leading_tier.ipynb",
             root / "notebooks" / "selection_gate.ipynb"]
    for path in pages:
        text = " ".join(path.read_text(encoding="utf-8").split())
        for phrase in ("tier_probability", "probability threshold form", "minimum bootstrap P(top",
                       "interval of their paired CRS difference includes zero",
                       "has an interval including zero is named", "statistically stable"):
            assert phrase not in text, (path.name, phrase)


_point = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def bootstrap_rows(draw):
    crs, low, width = draw(_point), draw(_point), draw(st.floats(0.0, 0.5, allow_nan=False))
    high = low + width
    median = draw(_point)
    bias = median - crs
    return {
        "crs": crs, "crs_median": median, "bias": bias, "bias_se": bias / 0.03, "crs_low": low, "crs_high": high,
        "crs_basic_low": 2 * crs - high, "crs_basic_high": 2 * crs - low, "point_inside": low <= crs <= high,
    }


@given(rows=st.lists(bootstrap_rows(), min_size=1, max_size=6))
def test_a_point_outside_its_own_interval_is_always_said(rows):
    """Fails if an interval that excludes its own point is reported without the prose naming it."""
    summary = pd.DataFrame([{"encoder": f"enc{i}", **row} for i, row in enumerate(rows)])
    text = leading_tier.describe_bootstrap_bias(summary)
    outside = [r["encoder"] for _, r in summary.iterrows() if not r["crs_low"] <= r["crs"] <= r["crs_high"]]
    if outside:
        assert f"For {len(outside)} of {len(summary)} encoders the point CRS lies outside its own" in text
        for name in outside:
            assert re.search(rf"\b{name} \(", text), name
        assert "not a confidence interval around the point" in text
        assert "Every point" not in text
    else:
        assert text.startswith("Every point CRS lies inside its own 95 % percentile interval")


def test_a_bootstrap_whose_points_fall_outside_is_described_as_such(synthetic_table, frozen_standard):
    from crsbench_lib.scoring.bootstrap import paired_seed_bootstrap


    summary = paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=200, random_state=1).summary
    # Force the situation the v2 default build shows: a point above its own percentile interval.
    summary.loc[0, "crs_high"] = summary.loc[0, "crs"] - 0.01
    summary.loc[0, "point_inside"] = False
    text = leading_tier.describe_bootstrap_bias(summary)
    assert f"{summary.loc[0, 'encoder']} (" in text and "lies outside its own" in text


def test_describe_score_orders_names_every_swapped_pair():
    table = pd.DataFrame({"encoder": ["a", "b", "c", "d"], "crs": [0.9, 0.8, 0.7, 0.6],
                          "crs_full_panel": [0.88, 0.79, 0.795, 0.5]})
    text = leading_tier.describe_score_orders(table)
    assert text.startswith("Rows are in order of the point CRS the draws use")
    assert text.endswith("there c ranks above b.")
    same = leading_tier.describe_score_orders(table.assign(crs_full_panel=table["crs"]))
    assert "orders these rows the same way" in same
    assert "there" not in leading_tier.describe_score_orders(table, rows=2)


@given(
    se=st.lists(st.floats(-4, 4, allow_nan=False), min_size=4, max_size=4),
    shift=st.lists(st.floats(-0.05, 0.05, allow_nan=False), min_size=4, max_size=4),
    parts=st.lists(st.floats(-0.1, 0.1, allow_nan=False), min_size=3, max_size=3),
)
def test_describe_bias_sources_follows_the_numbers(se, shift, parts):
    row = {"bias": sum(parts), "from_axes": parts[0], "from_nonsmooth": sum(parts) - parts[0],
           "dominance": parts[0], "balance": parts[1], "floor": parts[2],
           **dict(zip("DCLR", shift, strict=True)), **{f"{a}_se": v for a, v in zip("DCLR", se, strict=True)}}
    text = leading_tier.describe_bias_sources(pd.DataFrame([row], index=["enc"]), "enc")
    largest = ["dominance", "balance", "floor"][max(range(3), key=lambda i: abs(parts[i]))]
    assert f"by component, {largest} carries" in text
    worst = "DCLR"[min(range(4), key=lambda i: se[i])]
    if min(se) < -leading_tier.NEGLIGIBLE_BIAS_SE:
        assert f"furthest behind the point is {worst}:" in text
        assert ("rises" in text) == (row[worst] > 0)
    else:
        assert "No axis's draws are worse" in text
    recentred = leading_tier.describe_bias_sources(pd.DataFrame([row], index=["enc"]), "enc", recentred=True)
    assert recentred.startswith("Scored as drawn") and "recentring each axis's draws on the point removes" in recentred
    assert "it is the bias the bootstrap summary shows" in recentred and "Of the bias of" not in recentred


def test_describe_bootstrap_bias_without_spread_prints_no_infinity():
    row = dict(encoder="a", crs=0.6, crs_median=0.5, bias=-0.1, bias_se=float("-inf"), crs_low=0.5, crs_high=0.5,
               crs_basic_low=0.7, crs_basic_high=0.7, point_inside=False)
    text = leading_tier.describe_bootstrap_bias(pd.DataFrame([row]))
    assert "inf" not in text and "every draw equal" in text
    inside = leading_tier.describe_bootstrap_bias(pd.DataFrame([{**row, "crs": 0.5, "bias": 0.0, "bias_se": 0.0,
                                                                 "crs_basic_low": 0.5, "crs_basic_high": 0.5,
                                                                 "point_inside": True}]))
    assert "largest against its standard error" in inside


def test_the_critical_value_is_said_beside_the_one_comparison_value():
    # One-sided (issue 46, item 1): one comparison at 90 % reaches 1.28; each candidate has 4 rivals.
    text = leading_tier.describe_critical_value([2.1, 2.3], 5, level=0.9)
    assert "lies between 2.10 and 2.30 standard errors" in text and "would reach 1.28" in text
    assert "its 4 rivals" in text and "max-t" not in text
    assert "all 10 pairs of amendment 15 would reach 3.50" in leading_tier.describe_critical_value(2.2, 5, 0.9, 3.5)


# --- the key takeaway -------------------------------------------------------------------------------------------


def test_leading_tier_takeaway_tier_not_winner():
    from crsbench_lib.report.takeaway import check_takeaway

    rows = _comparisons({"b": (-0.012, 0.145), "c": (-0.05, 0.2)})
    text = leading_tier.leading_tier_takeaway(["a", "b", "c"], 6, {"a": 0.6, "b": 0.3, "c": 0.1}, rows)
    assert check_takeaway(text) == text
    assert text.startswith("First place is not settled by the data: 3 of 6 candidates (a, b and c)")
    assert "a ranks first in 60 % of draws, yet" in text and "over b, [-0.012, 0.145], includes zero" in text
    # Under half the draws, the rank probability does not seem to settle it: no contrast word.
    rare = leading_tier.leading_tier_takeaway(["a", "b", "c"], 6, {"a": 0.47, "b": 0.3, "c": 0.2}, rows)
    assert "a ranks first in 47 % of draws, and the 95 % tier interval" in rare
    with pytest.raises(ValueError):
        leading_tier.leading_tier_takeaway(["a", "b"], 6, {"a": 0.6}, _comparisons({"b": (0.01, 0.1)}))


def test_leading_tier_takeaway_lone_leader_and_long_tier():
    from crsbench_lib.report.takeaway import check_takeaway

    text = leading_tier.leading_tier_takeaway(["a"], 19, {"a": 0.9995}, _comparisons({"b": (0.004, 0.05)}), level=0.9)
    assert check_takeaway(text) == text
    assert "a alone forms the leading tier of 19 candidates" in text and "90 % tier interval" in text
    assert "runner-up b, [0.004, 0.050], excludes zero" in text and "> 99 % of draws" in text
    with pytest.raises(ValueError):
        leading_tier.leading_tier_takeaway(["a"], 19, {"a": 0.6}, _comparisons({"b": (-0.01, 0.05)}))
    many = [f"encoder_{i}" for i in range(12)]
    long = leading_tier.leading_tier_takeaway(many, 19, {many[0]: 0.2}, _comparisons({many[1]: (-0.1, 0.1)}))
    assert check_takeaway(long) == long and "12 of 19 candidates (encoder_0 and 11 others)" in long
    assert "the only candidate ranked (n = 1)" in leading_tier.leading_tier_takeaway(["a"], 1, {"a": 1.0}, _comparisons({}))


def test_role_columns_read_a_dash_where_they_do_not_apply():
    """Lecturer's item 23: Table 3 printed "no" under "reference not separated from the leader" for tier members."""
    import pandas as pd

    from crsbench_lib.report.sentences.leading_tier import NOT_APPLICABLE, mark_roles

    table = pd.DataFrame({"encoder": ["lead", "member", "other", "ref (reference)", "far (reference)"],
                          "in the leading tier": [True, True, False, False, False],
                          "reference not separated from the leader": [False, False, False, True, False],
                          "bias": [0.0, 0.1, 0.2, 0.3, 0.4]})
    shown = mark_roles(table)
    assert shown["in the leading tier"].tolist() == ["yes", "yes", "no", NOT_APPLICABLE, NOT_APPLICABLE]
    assert shown["reference not separated from the leader"].tolist() == [NOT_APPLICABLE] * 3 + ["yes", "no"]
    assert shown["bias"].tolist() == table["bias"].tolist() and table["in the leading tier"].dtype == bool
    assert mark_roles(table.drop(columns="reference not separated from the leader")).shape == (5, 3)
