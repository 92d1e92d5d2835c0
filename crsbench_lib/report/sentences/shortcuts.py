"""Sentences on shortcut cues and on calibration under the shift, decided from a run's measurements.

The numbers come from :func:`crsbench_lib.report.world.cue_ablation` (site-A
test AUROC with and without the domain's shortcut cue, per encoder) and
:func:`crsbench_lib.report.world.calibration_under_shift` (the candidates' ECE
at site A and at site B, per calibrator fitted at site A). Every verdict
compares an effect with its own noise: a candidate *leans on* the cue when its
mean gain exceeds :data:`LEAN_SE` standard errors over seeds and
:data:`MIN_GAIN` AUROC.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from crsbench_lib.report.grammar import and_list, fmt
from crsbench_lib.report.roles import is_reference_family
from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, Lesson

if TYPE_CHECKING:
    import pandas as pd

#: A gain counts as leaning on the cue beyond this many standard errors over seeds ...
LEAN_SE = 2.0
#: ... and beyond this much AUROC (below it, no decision a team makes would change).
MIN_GAIN = 0.005
#: Families of single-site specialists and of multi-site generalists (``encoders/recipes.py`` FAMILIES keys).
SPECIALIST_FAMILIES: frozenset[str] = frozenset({"narrow"})
GENERALIST_FAMILIES: frozenset[str] = frozenset({"broad_ssl", "broad_multitask", "broad_noaug", "mim"})
#: At most this many names in a sentence; more are counted.
MAX_NAMES = 3


def _candidates(ablation: "pd.DataFrame", families: Mapping[str, str]) -> "pd.DataFrame":
    keep = [not is_reference_family(families.get(str(e))) for e in ablation["encoder"]]
    return ablation[keep]


def leaning(ablation: "pd.DataFrame") -> "pd.Series":
    """Which rows lean on the cue: gain above :data:`MIN_GAIN` and above :data:`LEAN_SE` standard errors.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"cue_gain": [0.03, 0.004, 0.02], "gain_se": [0.005, 0.001, 0.015]})
    >>> leaning(rows).tolist()
    [True, False, False]
    """
    se = ablation["gain_se"].fillna(0.0)
    return (ablation["cue_gain"] > MIN_GAIN) & (ablation["cue_gain"] > LEAN_SE * se)


def describe_cue_ablation(ablation: "pd.DataFrame", families: Mapping[str, str], digits: int = 3) -> str:
    """Per dataset: how much of the candidates' site-A AUROC the cue carries, and who leans on it.

    Parameters
    ----------
    ablation : pandas.DataFrame
        :func:`crsbench_lib.report.world.cue_ablation` output.
    families : mapping of str to str
        Family of each encoder (references are left out).
    digits : int

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> ablation = pd.DataFrame({"encoder": ["a", "b", "px"], "dataset": "derm", "with_cue": 0.8,
    ...                          "without_cue": [0.77, 0.799, 0.7], "cue_gain": [0.03, 0.001, 0.1],
    ...                          "gain_se": [0.004, 0.002, 0.01]})
    >>> print(describe_cue_ablation(ablation, {"a": "narrow", "b": "broad_ssl", "px": "classical"}))
    On derm, the cue carries +0.001 to +0.030 of the candidates' site-A test AUROC (with it minus without it); 1 of 2 leans on it beyond its seed-to-seed noise: a (+0.030).
    """
    if ablation.empty:
        return ("This run has no cue ablation: its data carry no simulated shortcut cue, so a shortcut, if there "
                "is one, is only visible at a site where it does not travel with the label.")
    rows = _candidates(ablation, families)
    sentences = []
    for dataset, group in rows.groupby("dataset", sort=True):
        lean = group[leaning(group)].sort_values("cue_gain", ascending=False)
        low, high = group["cue_gain"].min(), group["cue_gain"].max()
        span = f"{'+' if low >= 0 else ''}{fmt(low, digits)} to {'+' if high >= 0 else ''}{fmt(high, digits)}"
        if lean.empty:
            who = f"none of the {len(group)} leans on it beyond its seed-to-seed noise"
        else:
            named = [f"{e} (+{fmt(g, digits)})" for e, g in zip(lean["encoder"], lean["cue_gain"])]
            shown = and_list(named) if len(named) <= MAX_NAMES else and_list(named[:MAX_NAMES] + ["others"])
            verb = "leans" if len(lean) == 1 else "lean"
            who = f"{len(lean)} of {len(group)} {verb} on it beyond {'its' if len(lean) == 1 else 'their'} seed-to-seed noise: {shown}"
        sentences.append(f"On {dataset}, the cue carries {span} of the candidates' site-A test AUROC (with it minus "
                         f"without it); {who}.")
    return " ".join(sentences)


def specialist_comparison(ablation: "pd.DataFrame", families: Mapping[str, str]) -> tuple[float, float, float]:
    """Median cue gain of the single-site specialists, of the generalists, and the noise of their difference.

    The noise is the root sum of squares of the two groups' median standard
    errors (a rough scale, stated as such in the sentence).

    Examples
    --------
    >>> import pandas as pd
    >>> ablation = pd.DataFrame({"encoder": ["s", "g"], "dataset": "derm", "cue_gain": [0.04, 0.01],
    ...                          "gain_se": [0.003, 0.004]})
    >>> [round(v, 3) for v in specialist_comparison(ablation, {"s": "narrow", "g": "broad_ssl"})]
    [0.04, 0.01, 0.005]
    """
    family = ablation["encoder"].map(lambda e: families.get(str(e)))
    special = ablation[family.isin(SPECIALIST_FAMILIES)]
    general = ablation[family.isin(GENERALIST_FAMILIES)]
    if special.empty or general.empty:
        return float("nan"), float("nan"), float("nan")
    noise = float(np.hypot(special["gain_se"].median(), general["gain_se"].median()))
    return float(special["cue_gain"].median()), float(general["cue_gain"].median()), noise


def shortcut_lessons(ablation: "pd.DataFrame", families: Mapping[str, str], digits: int = 3) -> list[Lesson]:
    """The chapter's lessons on shortcuts: one of the design, one of this world when it can be measured.

    Examples
    --------
    >>> import pandas as pd
    >>> ablation = pd.DataFrame({"encoder": ["s", "g"], "dataset": "derm", "cue_gain": [0.04, 0.01],
    ...                          "gain_se": [0.003, 0.004]})
    >>> [lesson.scope for lesson in shortcut_lessons(ablation, {"s": "narrow", "g": "broad_ssl"})]
    ['design', 'world']
    """
    lessons = [Lesson(DESIGN, "A test set from the training site cannot show a shortcut: the cue travels with the "
                              "label there too, so an encoder that leans on it scores well. Only a test without the "
                              "cue (an ablation) or a site where the cue does not travel with the label shows what "
                              "it costs.")]
    if ablation.empty:
        return lessons
    special, general, noise = specialist_comparison(ablation, families)
    if np.isnan(special):
        return lessons
    difference = special - general
    if abs(difference) <= 2 * noise:
        verdict = (f"the single-site specialists and the multi-site generalists lean on the cue about as much "
                   f"(median gain {fmt(special, digits)} against {fmt(general, digits)}; the difference is within "
                   f"twice its rough noise, {fmt(2 * noise, digits)})")
    else:
        word = "more" if difference > 0 else "less"
        verdict = (f"the single-site specialists lean on the cue {word} than the multi-site generalists (median "
                   f"gain {fmt(special, digits)} against {fmt(general, digits)}, beyond twice its rough noise, "
                   f"{fmt(2 * noise, digits)})")
    lessons.append(Lesson(WORLD, f"Here {verdict}. Where a specialist was pretrained matters because the cue is how "
                                 "that site works; another archive may hold other cues."))
    return lessons


#: An ECE change smaller than this reads as "no measurable change": about twice the bootstrap standard error of
#: one encoder's debiased ECE on 2,000 test images (0.0218 of C's 0.20-wide scale, the template's noise scale),
#: a rough scale for a mean over candidates, stated as such.
ECE_CHANGE_NOISE = 0.009


def _change_word(change: float, digits: int) -> str:
    if abs(change) < ECE_CHANGE_NOISE:
        return f"changes it by {'+' if change >= 0 else ''}{fmt(change, digits)} (within noise)"
    return f"{'lowers' if change < 0 else 'raises'} it by {fmt(abs(change), digits)}"


def describe_calibration_under_shift(kept: "pd.DataFrame", digits: int = 3) -> str:
    """What post-hoc calibrators fitted at site A do at site A and at site B, from the candidates' mean ECE.

    A change within :data:`ECE_CHANGE_NOISE` reads as within noise.

    Parameters
    ----------
    kept : pandas.DataFrame
        :func:`crsbench_lib.report.world.calibration_under_shift` output.
    digits : int

    Examples
    --------
    >>> import pandas as pd
    >>> kept = pd.DataFrame({"dataset": ["cxr", "cxr"], "calibration": ["none", "temperature"],
    ...                      "ece_clean": [0.05, 0.03], "ece_site_b": [0.09, 0.085],
    ...                      "change_clean": [0.0, -0.02], "change_site_b": [0.0, -0.005]})
    >>> print(describe_calibration_under_shift(kept))
    Uncalibrated, the candidates' mean ECE rises from 0.050 at site A to 0.090 at site B (mean over 1 dataset). Fitted at site A, temperature scaling lowers it by 0.020 at site A and changes it by -0.005 (within noise) at site B.
    """
    if kept.empty:
        return ("This run has no calibrated second-site rows, so it cannot say what a calibrator fitted at the first "
                "site does at the second.")
    base = kept[kept["calibration"] == "none"]
    n = base["dataset"].nunique()
    clean, shifted = base["ece_clean"].mean(), base["ece_site_b"].mean()
    text = (f"Uncalibrated, the candidates' mean ECE {'rises' if shifted > clean else 'falls'} from "
            f"{fmt(clean, digits)} at site A to {fmt(shifted, digits)} at site B (mean over {n} "
            f"dataset{'s' if n != 1 else ''}).")
    names = {"temperature": "temperature scaling", "vector": "vector scaling", "isotonic": "isotonic regression"}
    parts = []
    for method, rows in kept[kept["calibration"] != "none"].groupby("calibration", sort=True):
        parts.append(f"{names.get(method, method)} {_change_word(float(rows['change_clean'].mean()), digits)} at "
                     f"site A and {_change_word(float(rows['change_site_b'].mean()), digits)} at site B")
    return text + " Fitted at site A, " + "; ".join(parts) + "."
