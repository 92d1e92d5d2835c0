"""The shared noise sentence: a rank comparison's τ_b read against both noise baselines (issue 27, item 4)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report.sentences.noise import describe_tau_against_noise
from crsbench_lib.scoring.retest import noise_baseline_table


def _noise(tau, boot_low, boot_width, seeds=(0.6, 0.7, 0.8), one_seed=None):
    import numpy as np

    draws = np.linspace(boot_low, min(1.0, boot_low + boot_width), 401)
    return noise_baseline_table({"x against y": tau}, {"the x ranking": list(seeds)}, {"the x ranking": draws},
                                one_seed=None if one_seed is None else {"x against y": list(one_seed)})


@given(tau=st.floats(-1, 0.999), low=st.floats(-1, 0.9), width=st.floats(0.01, 0.5))
def test_noise_verdict_follows_where_the_tau_falls(tau, low, width):
    table = _noise(tau, low, width)
    draws = table[table["source"] == "bootstrap draw"].iloc[0]
    text = describe_tau_against_noise(table)
    assert ("lies below the central 95 %" in text) == (tau < draws["low"])
    assert ("lies above the central 95 %" in text) == (tau > draws["high"])
    assert ("lies inside the central 95 %" in text) == (draws["low"] <= tau <= draws["high"])
    # Whatever the numbers: both baselines are named, and the lesson is placed.
    assert "bootstrap draws" in text and "Two seeds scored one at a time" in text
    assert "any benchmark of this design" in text and "this build's world" in text


def test_noise_sentence_reports_intervals_with_signed_ends_and_the_gap_against_the_noise():
    text = describe_tau_against_noise(_noise(-0.2, -0.05, 0.1))
    assert "[-0.05, 0.05]" in text
    assert "a large gap: 0.20 below the nearest median, beside a half-width of 0.05" in text


@given(one_seed=st.lists(st.floats(-1, 1), min_size=1, max_size=6))
def test_one_seed_comparison_is_judged_against_the_seed_redraws(one_seed):
    text = describe_tau_against_noise(_noise(0.5, 0.4, 0.3, seeds=(0.6, 0.7, 0.8), one_seed=one_seed))
    assert ("every pair below every seed-redraw pair" in text) == (max(one_seed) < 0.6)
    assert ("every pair above every seed-redraw pair" in text) == (min(one_seed) > 0.8)
    assert ("within the seed-redraw range" in text) == (min(one_seed) <= 0.8 and max(one_seed) >= 0.6)


def test_noise_sentence_edge_cases():
    perfect = describe_tau_against_noise(_noise(1.0, 0.8, 0.2))
    assert "keeps the order exactly (τ_b = 1)" in perfect and "cannot tell" not in perfect
    single = describe_tau_against_noise(_noise(0.5, 0.4, 0.3, seeds=()), simulated=True)
    assert "single seed, so no seed-redraw baseline" in single and "this build's simulated world" in single
    no_draws = noise_baseline_table({"x": 0.5}, {"r": [0.6, 0.7]}, {})
    assert "No bootstrap draws were given" in describe_tau_against_noise(no_draws)
    assert "overstate the noise" in describe_tau_against_noise(no_draws)
    with pytest.raises(ValueError, match="no observed"):
        describe_tau_against_noise(no_draws.iloc[1:])


def test_each_comparison_is_judged_against_its_own_rankings_when_told():
    import numpy as np

    table = noise_baseline_table({"a before/after": 0.95, "b before/after": 0.95}, {},
                                 {"ranking a": np.linspace(0.3, 0.8, 101), "ranking b": np.linspace(0.85, 1.0, 101)})
    pooled = describe_tau_against_noise(table)
    assert "A before/after lies inside the central 95 % of the bootstrap draws of ranking b (above those of ranking a)" in pooled
    own = describe_tau_against_noise(table, judged_by={"a before/after": ["ranking a"], "b before/after": ["ranking b"]})
    assert "A before/after lies above the central 95 % of the bootstrap draws of ranking a" in own
    assert "B before/after lies inside the central 95 % of the bootstrap draws of ranking b:" in own


def test_the_gap_word_follows_the_printed_figures():
    # Two comparisons whose gaps differ below the printed precision (0.1104 and 0.1096 against half-widths of
    # 0.2196 and 0.2204) print the same "0.11 ... 0.22" and so must get the same word.
    import numpy as np

    # Uniform draws over [0.5, 0.5 + w]: median 0.5 + w / 2, half-width 0.475 w.
    wa, wb = 0.2196 / 0.475, 0.2204 / 0.475
    table = noise_baseline_table({"a": 0.5 + wa / 2 + 0.1104, "b": 0.5 + wb / 2 + 0.1096}, {},
                                 {"ranking a": np.linspace(0.5, 0.5 + wa, 4001), "ranking b": np.linspace(0.5, 0.5 + wb, 4001)})
    text = describe_tau_against_noise(table, judged_by={"a": ["ranking a"], "b": ["ranking b"]})
    words = [part.split(" gap:")[0].rsplit("(a ", 1)[-1] for part in text.split(". ") if " gap: " in part]
    assert len(words) == 2 and words[0] == words[1], words


# --- the verdict the "Is this real?" lessons read (issue 29) ------------------------------------------------

from crsbench_lib.report.sentences.noise import draw_ranges  # noqa: E402
from crsbench_lib.scoring.retest import tau_against_draws  # noqa: E402


@given(tau=st.floats(-1, 1), low=st.floats(-1, 0.9), width=st.floats(0.01, 0.5))
def test_tau_against_draws_agrees_with_the_printed_sentence(tau, low, width):
    table = _noise(tau, low, width)
    where = tau_against_draws(tau, table)
    text = describe_tau_against_noise(table)
    if tau >= 1:
        return
    assert (where == "below") == ("lies below the central 95 %" in text)
    assert (where == "above") == ("lies above the central 95 %" in text)
    assert (where == "inside") == ("lies inside the central 95 %" in text)


def test_tau_against_draws_between_two_rankings_only_some_and_none():
    import numpy as np

    table = noise_baseline_table({"x": 0.7}, {}, {"a": np.linspace(0.4, 0.6, 101), "b": np.linspace(0.8, 0.9, 101)})
    assert tau_against_draws(0.7, table) == "between"
    assert tau_against_draws(0.7, table, rankings=["a"]) == "above"
    assert tau_against_draws(0.7, table, rankings=["b"]) == "below"
    assert tau_against_draws(0.85, table) == "inside"
    bare = noise_baseline_table({"x": 0.7}, {"a": [0.6, 0.7]}, {})
    assert tau_against_draws(0.7, bare) == "none" and draw_ranges(bare) == "no bootstrap draws"
    assert draw_ranges(table, rankings=["a"]) == "0.50 for a (central range [0.41, 0.59])"


def test_equal_scorings_are_stated_once_and_different_ones_each():
    """Full panel and leave-self-out with the same τ_b: one statement, not verbatim twins (lecturer's item 11)."""
    import numpy as np

    draws = {"the CRS ranking": np.linspace(0.86, 0.98, 401)}
    twins = noise_baseline_table({"AUROC against CRS (full panel)": 0.906, "AUROC against CRS (leave-self-out)": 0.906},
                                 {}, draws)
    text = describe_tau_against_noise(twins)
    assert text.startswith("AUROC against CRS (full panel and leave-self-out): τ_b = 0.906 (rankings averaged")
    assert text.count("lies inside the central 95 %") == 1
    assert "AUROC against CRS (full panel and leave-self-out) lies inside" in text
    # Different values: each scoring keeps its own statement and verdict.
    apart = describe_tau_against_noise(noise_baseline_table(
        {"AUROC against CRS (full panel)": 0.906, "AUROC against CRS (leave-self-out)": 0.80}, {}, draws))
    assert "AUROC against CRS (full panel): τ_b = 0.906; AUROC against CRS (leave-self-out): τ_b = 0.800" in apart
    assert "AUROC against CRS (full panel) lies inside" in apart and "AUROC against CRS (leave-self-out) lies below" in apart


def test_the_closing_lesson_can_be_left_to_the_page():
    """A page printing the sentence for several tables places the lesson once (lecturer's item 11)."""
    from crsbench_lib.report.sentences.noise import NOISE_LESSON

    table = _noise(0.5, 0.4, 0.3)
    assert describe_tau_against_noise(table).endswith(NOISE_LESSON.format(world="this build's world"))
    short = describe_tau_against_noise(table, closing=False)
    assert "any benchmark of this design" not in short and short.endswith(".")


@pytest.mark.parametrize("simulated, world", [(True, "this build's simulated world"), (False, "this run's own data"),
                                              (None, "this build's world")])
def test_the_closing_lesson_names_the_world_of_the_run(simulated, world):
    """On a user's own data there is no simulated world: the lesson names the run's data (issue 30)."""
    from crsbench_lib.report.sentences.lessons import world_name

    text = describe_tau_against_noise(_noise(0.5, 0.4, 0.3), simulated=simulated)
    assert world_name(simulated) == world and text.endswith(f"a finding of {world}.")
    assert ("build's" in text) == (simulated is not False)


def test_a_range_end_that_prints_like_the_tau_gets_a_third_decimal():
    # tau 0.944 "above" a range printed [0.47, 0.94] reads as a contradiction; [0.470, 0.943] does not.
    import numpy as np

    from crsbench_lib.report.sentences.noise import describe_tau_against_noise
    from crsbench_lib.scoring.retest import noise_baseline_table

    table = noise_baseline_table({"before against after": 17 / 18}, {}, {"r": np.linspace(0.47, 0.9556, 101)})
    text = describe_tau_against_noise(table, closing=False)
    assert "lies above the central 95 %" in text and "0.943]" in text, text
    far = describe_tau_against_noise(noise_baseline_table({"x": 0.99}, {}, {"r": np.linspace(0.47, 0.9556, 101)}),
                                     closing=False)
    assert "0.94]" in far
