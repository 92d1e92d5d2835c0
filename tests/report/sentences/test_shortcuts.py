"""Words on shortcut cues and calibration under the shift follow the numbers (report/sentences/shortcuts.py)."""

from __future__ import annotations

import pandas as pd

from crsbench_lib.report.sentences.shortcuts import (
    describe_calibration_under_shift,
    describe_cue_ablation,
    shortcut_lessons,
)

FAMILIES = {"s1": "narrow", "s2": "narrow", "g1": "broad_ssl", "g2": "broad_multitask", "px": "classical"}


def _ablation(special: float, general: float, se: float = 0.002) -> pd.DataFrame:
    gains = {"s1": special, "s2": special, "g1": general, "g2": general, "px": 0.2}
    return pd.DataFrame({"encoder": list(gains), "dataset": "derm", "with_cue": 0.8,
                         "without_cue": [0.8 - g for g in gains.values()], "cue_gain": list(gains.values()),
                         "gain_se": se})


def test_the_world_lesson_follows_the_specialists_against_the_generalists() -> None:
    more = shortcut_lessons(_ablation(0.04, 0.01), FAMILIES)[-1].text
    less = shortcut_lessons(_ablation(0.01, 0.04), FAMILIES)[-1].text
    same = shortcut_lessons(_ablation(0.011, 0.01), FAMILIES)[-1].text
    assert "lean on the cue more than" in more
    assert "lean on the cue less than" in less
    assert "about as much" in same


def test_references_never_count_and_noise_decides_who_leans() -> None:
    text = describe_cue_ablation(_ablation(0.04, 0.003), FAMILIES)
    assert "px" not in text  # a reference encoder, however much it leans
    assert "2 of 4 lean on it" in text and "s1 (+0.040)" in text
    noisy = describe_cue_ablation(_ablation(0.04, 0.003, se=0.05), FAMILIES)
    assert "none of the 4 leans on it" in noisy


def test_no_cue_and_no_calibrated_shift_rows_say_so() -> None:
    empty = pd.DataFrame(columns=["encoder", "dataset", "with_cue", "without_cue", "cue_gain", "gain_se"])
    assert describe_cue_ablation(empty, FAMILIES).startswith("This run has no cue ablation")
    assert [lesson.scope for lesson in shortcut_lessons(empty, FAMILIES)] == ["design"]
    assert describe_calibration_under_shift(pd.DataFrame()).startswith("This run has no calibrated")


def test_calibration_words_follow_the_direction_of_the_shift_and_its_noise() -> None:
    kept = pd.DataFrame({"dataset": ["cxr", "cxr"], "calibration": ["none", "isotonic"], "ece_clean": [0.05, 0.02],
                         "ece_site_b": [0.04, 0.06], "change_clean": [0.0, -0.03], "change_site_b": [0.0, 0.02]})
    text = describe_calibration_under_shift(kept)
    assert "mean ECE falls from 0.050" in text
    assert "isotonic regression lowers it by 0.030 at site A and raises it by 0.020 at site B" in text
    small = kept.assign(change_site_b=[0.0, 0.004])
    assert "changes it by +0.004 (within noise) at site B" in describe_calibration_under_shift(small)
