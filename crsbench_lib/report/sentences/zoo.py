"""The zoo chapter's "Is this real?" lessons, its exercise's computed solution, and the baseline comparison.

Which neural encoders fall below the best classical baseline on clean AUROC
(:func:`describe_below_baseline`: the world checks compare only the best broad
encoder with the pixel and PCA probes); the chapter's lessons sorted into those
of the design (what an aug/noaug pair isolates; on the simulated cohort, that
the world checks are targets its generators were tuned to meet) and those of
this build's world (what augmentation buys here, which encoders trail the
baselines): :func:`zoo_lessons`; and the LoRA exercise's answer, recomputed on
the page (:func:`zoo_exercise_lora_augmentation`). The chapter's other
sentences live in :mod:`crsbench_lib.report.sentences.cohort`.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import and_list, fmt, noise_size_word, value_range
# The families' roles have one home (classical baselines, random controls, the in-task reference).
from crsbench_lib.report.roles import CLASSICAL_FAMILY, CONTROL_FAMILY, IN_TASK_FAMILY
from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, Lesson

if TYPE_CHECKING:
    import pandas as pd

#: A change within this share of another reads "about the same" (:func:`zoo_exercise_lora_augmentation`).
SAME_SHARE = 0.2


def _family_word(family: str | None) -> str:
    if family == CONTROL_FAMILY:
        return "a random-initialisation control"
    if family == IN_TASK_FAMILY:
        return "the in-task reference"
    return "pretrained"


def _split_by_baseline(
    clean: Mapping[str, float], families: Mapping[str, str]
) -> tuple[dict[str, float], dict[str, float], str | None, list[str]]:
    """Classical and neural encoders' clean AUROC, the best classical one, and the neural ones below it, highest first."""
    classical = {e: float(v) for e, v in clean.items() if families.get(e) == CLASSICAL_FAMILY}
    neural = {e: float(v) for e, v in clean.items() if families.get(e) not in (None, CLASSICAL_FAMILY)}
    if not classical or not neural:
        return classical, neural, None, []
    best = max(sorted(classical), key=lambda e: classical[e])
    below = sorted((e for e in neural if neural[e] < classical[best]), key=lambda e: neural[e], reverse=True)
    return classical, neural, best, below


def describe_below_baseline(
    clean: Mapping[str, float],
    families: Mapping[str, str],
    noise: float | None = None,
    digits: int = 3,
) -> str:
    """Which neural encoders fall below the best classical baseline on clean AUROC, with their numbers.

    The world checks compare only the best broad encoder with the pixel and
    PCA probes; this sentence compares every neural encoder with every
    classical one (family ``"classical"``: pixels, PCA, HOG, ...).

    Parameters
    ----------
    clean : mapping of str to float
        Encoder -> clean macro-AUROC (frozen arm, mean over seeds, then datasets).
    families : mapping of str to str
        Encoder -> family (``crsbench_lib.encoders.zoo.zoo_families()``);
        encoders without a family are left out.
    noise : float, optional
        The seed-to-seed standard deviation of an encoder's clean AUROC; the
        gap of a pretrained encoder to the best baseline is then judged
        against it.
    digits : int

    Returns
    -------
    str

    Examples
    --------
    >>> clean = {"pixels": 0.678, "kmeans": 0.739, "mae": 0.648, "cnn_random": 0.696, "simclr": 0.78}
    >>> families = {"pixels": "classical", "kmeans": "classical", "mae": "mim", "cnn_random": "random",
    ...             "simclr": "broad_ssl"}
    >>> print(describe_below_baseline(clean, families, noise=0.005))  # doctest: +NORMALIZE_WHITESPACE
    2 of 3 neural encoders fall below the best classical baseline, kmeans (clean AUROC 0.739): cnn_random (0.696, a
    random-initialisation control, below 1 of the 2 classical baselines) and mae (0.648, pretrained, below 2 of the
    2, pixels at 0.678 among them). mae is pretrained and still trails kmeans by 0.091, large
    beside the seed-to-seed spread of 0.005: its pretraining left it worse than a linear probe on raw pixels.
    """
    classical, neural, best, below = _split_by_baseline(clean, families)
    if best is None:
        return ("This run lacks a classical baseline or a neural encoder of known family, so no neural encoder can "
                "be set beside the baselines.")
    if not below:
        lowest = min(sorted(neural), key=lambda e: neural[e])
        return (f"Every neural encoder beats the best classical baseline, {best} (clean AUROC "
                f"{fmt(classical[best], digits)}): the lowest, {lowest} ({fmt(neural[lowest], digits)}), by "
                f"{fmt(neural[lowest] - classical[best], digits)}.")
    parts, pixels_named = [], False
    for k, name in enumerate(below):
        beaten_by = [b for b in classical if classical[b] > neural[name]]
        of = f"below {len(beaten_by)} of the {len(classical)} classical baselines" if k == 0 else \
            f"below {len(beaten_by)} of the {len(classical)}"
        pixel = ""
        if "pixels" in beaten_by and best != "pixels":
            at = "" if pixels_named else f" at {fmt(classical['pixels'], digits)}"
            pixel = f", pixels{at} among them"
            pixels_named = True
        parts.append(f"{name} ({fmt(neural[name], digits)}, {_family_word(families.get(name))}, {of}{pixel})")
    text = (f"{len(below)} of {len(neural)} neural encoders fall below the best classical baseline, {best} (clean "
            f"AUROC {fmt(classical[best], digits)}): {and_list(parts)}.")
    for name in below:
        if _family_word(families.get(name)) != "pretrained":
            continue
        # The gap of the two printed figures, so that "trails by" agrees with the AUROCs the sentence shows.
        gap = float(fmt(classical[best], digits)) - float(fmt(neural[name], digits))
        judged = (f", {noise_size_word(gap, noise)} beside the seed-to-seed spread of {fmt(noise, digits)}"
                  if noise is not None and noise > 0 else "")
        worse = ("a linear probe on raw pixels" if "pixels" in classical and neural[name] < classical["pixels"]
                 else f"a probe on {best}")
        text += (f" {name} is pretrained and still trails {best} by {fmt(gap, digits)}{judged}: its pretraining left "
                 f"it worse than {worse}.")
    return text


def zoo_lessons(
    effect: "pd.DataFrame",
    checks: "pd.DataFrame",
    clean: Mapping[str, float],
    families: Mapping[str, str],
    noise: float | None = None,
    simulated: bool | None = None,
    digits: int = 3,
) -> list[Lesson]:
    """The zoo chapter's "Is this real?" lessons, decided from the page's numbers.

    Parameters
    ----------
    effect : pandas.DataFrame
        :func:`crsbench_lib.report.summaries.augmentation_effect` output.
    checks : pandas.DataFrame
        :func:`crsbench_lib.report.world.world_checks` output.
    clean : mapping of str to float
        Encoder -> clean macro-AUROC (frozen arm).
    families : mapping of str to str
        Encoder -> family.
    noise : float, optional
        Seed-to-seed standard deviation of a clean AUROC.
    simulated : bool or None
        Whether the run is the simulated cohort (False: the user's own data):
        on the simulated cohort the world checks are targets its generators
        were tuned to meet (a lesson of the design); on own data they are
        measurements (a lesson of the world).
    digits : int

    Returns
    -------
    list of Lesson

    Examples
    --------
    >>> import pandas as pd
    >>> effect = pd.DataFrame([{"augmented": "a_aug", "plain": "a", "in_results": True, "clean_gain": -0.01,
    ...                         "loss_change": -0.02}])
    >>> checks = pd.DataFrame([("margin over pixels", "x", 0.15, ">= 0.10", True)],
    ...                       columns=["check", "dataset", "value", "rule", "holds"])
    >>> lessons = zoo_lessons(effect, checks, {"pixels": 0.7, "a": 0.8}, {"pixels": "classical", "a": "broad_ssl"},
    ...                       simulated=True)
    >>> [lesson.scope for lesson in lessons]
    ['design', 'world', 'world', 'world']
    >>> print(lessons[2].text)  # doctest: +NORMALIZE_WHITESPACE
    In 1 of 1 pair acquisition augmentation lowers the mean corruption AUROC loss (changes -0.020), and in none of
    the 1 pair does it raise the clean AUROC (changes -0.010): here augmentation buys robustness at some cost in
    clean AUROC. Expect the size of the effect to follow the corruptions a cohort draws: augmentation imitates
    acquisition changes (gamma, noise, blur) and helps most against those.
    >>> print(lessons[3].text)
    Every neural encoder beats the best classical baseline, pixels (clean AUROC 0.700): the lowest, a (0.800), by 0.100.
    """
    lessons: list[Lesson] = []
    present = effect[effect["in_results"].astype(bool)] if len(effect) else effect
    n_pairs = len(present)
    lessons.append(Lesson(DESIGN, (
        f"A pair of encoders that differ in one recipe choice isolates that choice, everything else held fixed: here "
        f"{n_pairs} pair{'s differ' if n_pairs != 1 else ' differs'} only in acquisition augmentation. A pair is one "
        "example of the choice, not a law about it; the study's families are stood for, not reproduced.")))
    holds = checks["holds"].astype(bool)
    failed = checks[~holds]
    missed = "; ".join(f"{row.check}{'' if row.dataset == 'all' else ' on ' + str(row.dataset)}, "
                       f"{row.value if isinstance(row.value, numbers.Integral) else fmt(float(row.value), digits)} "
                       f"against {row.rule}" for row in failed.itertuples(index=False))
    if simulated is False:
        # On a user's data there is no target: say what the margins over the baselines measure.
        margins = checks[checks["check"].isin(("margin over pixels", "margin over pca"))]
        values = [float(v) for v in margins["value"] if v == v]
        if values:
            low, high = min(values), max(values)
            text = (f"On this run's own data the best broad pretrained encoder lies between {fmt(low, digits)} and "
                    f"{fmt(high, digits)} clean AUROC above the pixel and PCA probes across its "
                    f"{margins['dataset'].nunique()} dataset{'s' if margins['dataset'].nunique() != 1 else ''} "
                    "(negative: below): how much room these data leave to pretraining; other data may leave more "
                    "or less.")
        else:
            text = ("On this run's own data no margin of a broad pretrained encoder over the pixel and PCA probes "
                    "could be measured (one side is not in the run).")
        lessons.append(Lesson(WORLD, text))
    else:
        text = ("The world checks are targets the simulated cohort's generators were tuned to meet: that "
                f"{int(holds.sum())} of {len(checks)} hold on this run shows this world meets its specification, not "
                "that pretraining pays on real images. They test only the best broad encoder against the pixel and "
                "PCA probes")
        text += f"; the check{'s' if len(failed) > 1 else ''} missed here: {missed}." if missed else "."
        # How many checks hold is a measurement of this world, not a property of the design.
        lessons.append(Lesson(WORLD, text))
    if n_pairs:
        losses = [float(v) for v in present["loss_change"] if v == v]
        gains = [float(v) for v in present["clean_gain"]]
        lower = sum(1 for v in losses if round(v, digits) < 0)
        higher = sum(1 for v in gains if round(v, digits) > 0)
        noun = "pair" if n_pairs == 1 else "pairs"
        def count(k: int) -> str:
            return f"{k} of {n_pairs} {noun}" if k else f"none of the {n_pairs} {noun}"

        text = (f"In {count(lower)} acquisition augmentation lowers the mean corruption AUROC loss (changes "
                f"{value_range(losses, digits) if losses else 'not measured'}), and in {count(higher)} "
                f"{'does it raise' if higher == 0 else 'it raises'} the clean AUROC (changes {value_range(gains, digits)})")
        if losses and lower == n_pairs and higher == 0:
            text += ": here augmentation buys robustness at some cost in clean AUROC."
        elif losses and lower == n_pairs and higher == n_pairs:
            text += ": here augmentation buys both robustness and clean AUROC."
        elif lower == 0:
            text += ": here augmentation does not buy robustness."
        else:
            text += f": the {noun} disagree, so this run states no rule."
        text += (" Expect the size of the effect to follow the corruptions a cohort draws: augmentation imitates "
                 "acquisition changes (gamma, noise, blur) and helps most against those.")
        lessons.append(Lesson(WORLD, text))
    text = describe_below_baseline(clean, families, noise=noise, digits=digits)
    below = _split_by_baseline(clean, families)[3]
    if any(_family_word(families.get(e)) == "pretrained" for e in below):
        text += (" The checks above do not catch this: they test the best broad encoder only. Whether real "
                 "encoders do the same is not shown here; what the case shows is that pretraining must be checked encoder by "
                 "encoder against a classical baseline, not assumed from its family.")
    lessons.append(Lesson(WORLD, text))
    return lessons


def zoo_exercise_lora_augmentation(frozen: "pd.DataFrame", lora: "pd.DataFrame", digits: int = 3) -> str:
    """The LoRA-arm exercise's solution: what acquisition augmentation buys in each arm, side by side.

    Parameters
    ----------
    frozen, lora : pandas.DataFrame
        :func:`crsbench_lib.report.summaries.augmentation_effect` of the
        frozen and of the LoRA arm (same pairs).
    digits : int

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> row = {"augmented": "a_aug", "plain": "a", "in_results": True, "clean_gain": -0.017, "loss_change": -0.015,
    ...        "corruption_loss_plain": 0.045}
    >>> frozen = pd.DataFrame([row])
    >>> lora = pd.DataFrame([{**row, "clean_gain": -0.022, "loss_change": -0.013, "corruption_loss_plain": 0.044}])
    >>> print(zoo_exercise_lora_augmentation(frozen, lora))  # doctest: +NORMALIZE_WHITESPACE
    **In this build**, in the LoRA arm acquisition augmentation (a_aug against a) changes the mean corruption AUROC
    loss by -0.013 (frozen arm: -0.015) and the clean AUROC by -0.022 (frozen arm: -0.017). In 1 of 1 pair the
    robustness it buys is about the same in both arms, and the plain encoders' own corruption loss moves from 0.045 to
    0.044 under adaptation: the adapters do not recover the robustness a recipe without augmentation lacks, so what
    augmentation buys is set in pretraining.
    """
    merged = frozen.merge(lora, on=["augmented", "plain"], suffixes=("_frozen", "_lora"))
    both = merged[merged["in_results_frozen"].astype(bool) & merged["in_results_lora"].astype(bool)]
    if both.empty:
        return ("**In this build** no augmentation pair has both arms, so the LoRA arm cannot be set beside the "
                "frozen one.")
    parts, same, shrink, grow = [], 0, 0, 0
    for row in both.itertuples(index=False):
        parts.append(f"({row.augmented} against {row.plain}) changes the mean corruption AUROC loss by "
                     f"{fmt(row.loss_change_lora, digits)} (frozen arm: {fmt(row.loss_change_frozen, digits)}) and "
                     f"the clean AUROC by {fmt(row.clean_gain_lora, digits)} (frozen arm: "
                     f"{fmt(row.clean_gain_frozen, digits)})")
        a, b = abs(float(row.loss_change_frozen)), abs(float(row.loss_change_lora))
        if a == 0 or abs(b - a) <= SAME_SHARE * a:
            same += 1
        elif b < a:
            shrink += 1
        else:
            grow += 1
    n = len(both)
    noun = "pair" if n == 1 else "pairs"
    text = "**In this build**, in the LoRA arm acquisition augmentation " + "; ".join(parts) + "."
    if same == n:
        text += f" In {n} of {n} {noun} the robustness it buys is about the same in both arms."
    else:
        counts = [f"about the same in both arms in {same} of {n} {noun}" if same else "",
                  f"smaller under adaptation in {shrink}" if shrink else "", f"larger in {grow}" if grow else ""]
        text += " The robustness it buys is " + and_list([c for c in counts if c]) + (
            f" of {n} {noun}." if not same else ".")
    if "corruption_loss_plain_frozen" in both:
        before = [float(v) for v in both["corruption_loss_plain_frozen"]]
        after = [float(v) for v in both["corruption_loss_plain_lora"]]
        text = text.rstrip(".")
        moves = [f"from {fmt(a, digits)} to {fmt(b, digits)}" + (f" ({name})" if n > 1 else "")
                 for a, b, name in zip(before, after, both["plain"])]
        text += f", and the plain encoders' own corruption loss moves {and_list(moves)} under adaptation"
        recovered = sum(b - a for a, b in zip(before, after)) / len(before)
        unchanged = all(fmt(a, digits) == fmt(b, digits) for a, b in zip(before, after))
        if unchanged:
            # Judged on the printed figures: "recovers part" beside "from 0.039 to 0.039" would contradict them.
            text += (f": at {digits} decimals adaptation leaves the plain encoders' corruption loss where it was, so "
                     "what augmentation buys is set in pretraining.")
        elif same == n and abs(recovered) < SAME_SHARE * (sum(before) / len(before)):
            text += (": the adapters do not recover the robustness a recipe without augmentation lacks, so what "
                     "augmentation buys is set in pretraining.")
        elif recovered < 0:
            text += ": adaptation recovers part of the robustness the plain recipe lacks, so the gap can shrink."
        else:
            text += ": adaptation does not make the plain encoders more robust."
    return text


def _augmentation_takeaway(effect: "pd.DataFrame", n_zoo: int, noise: float | None, digits: int) -> str:
    """What acquisition augmentation buys in the run's complete aug/noaug pairs, in one sentence."""
    if not len(effect):
        return f"None of the zoo's {n_zoo} encoders form a pair that differs only in acquisition augmentation."
    present = effect[effect["in_results"].astype(bool)]
    if present.empty:
        return (f"This run holds no complete aug/noaug pair (the zoo has {len(effect)}), so it cannot say what "
                "acquisition augmentation buys.")
    n = len(present)
    noun = "pair" if n == 1 else "pairs"
    losses = [float(v) for v in present["loss_change"] if v == v]
    gains = [float(v) for v in present["clean_gain"]]
    clean = f"changes the clean AUROC by {value_range(gains, digits)}"
    if not losses:
        return f"In the {n} aug/noaug {noun} of this run acquisition augmentation {clean}; no corruption rows measure its robustness."
    lower = sum(1 for v in losses if round(v, digits) < 0)
    largest = max(losses, key=abs)
    noisy = noise is not None and noise > 0
    if len(losses) == 1:
        changes = f"change {fmt(largest, digits)}" + (
            f", {noise_size_word(largest, noise)} beside the seed-to-seed spread of {fmt(noise, digits)}" if noisy else "")
    else:
        changes = f"changes {value_range(losses, digits)}" + (
            f", the largest is {noise_size_word(largest, noise)} beside the seed-to-seed spread of {fmt(noise, digits)}"
            if noisy else "")
    lowers = f"lowers the mean corruption AUROC loss in {lower} of {n} {noun}" if lower else \
        f"lowers the mean corruption AUROC loss in none of the {n} {noun}"
    return f"Acquisition augmentation {lowers} ({changes}) and {clean}."


def _baseline_takeaway(clean: Mapping[str, float], families: Mapping[str, str], digits: int) -> str:
    """How many neural encoders fall below the best classical baseline, and whether a pretrained one does."""
    classical, neural, best, below = _split_by_baseline(clean, families)
    if best is None:
        return ""
    at = f"the best classical baseline, {best} (clean AUROC {fmt(classical[best], digits)})"
    if not below:
        return f"Every one of the {len(neural)} neural encoders beats {at}."
    pretrained = [e for e in below if _family_word(families.get(e)) == "pretrained"]
    verb = "falls" if len(below) == 1 else "fall"
    text = f"{len(below)} of {len(neural)} neural encoders {verb} below {at}"
    if not pretrained:
        return text + (", none of them pretrained." if len(below) > 1 else ", and it is not pretrained.")
    if len(pretrained) > 2:  # the takeaway box stays short: the count, and where the names are
        return text + f", {len(pretrained)} of them pretrained (see the table)."
    return text + f", {len(pretrained)} of them pretrained ({and_list(pretrained)})."


def zoo_takeaway(
    effect: "pd.DataFrame",
    clean: Mapping[str, float],
    families: Mapping[str, str],
    noise: float | None = None,
    digits: int = 3,
) -> str:
    """The zoo chapter's key takeaway: what acquisition augmentation buys here, and who falls below the baselines.

    Parameters
    ----------
    effect : pandas.DataFrame
        :func:`crsbench_lib.report.summaries.augmentation_effect` output
        (``in_results, clean_gain, loss_change``).
    clean : mapping of str to float
        Encoder -> clean macro-AUROC (frozen arm, mean over seeds, then datasets).
    families : mapping of str to str
        Encoder -> family (the whole zoo).
    noise : float, optional
        The seed-to-seed standard deviation of a clean AUROC; the largest
        change of the corruption loss is judged against it.
    digits : int

    Returns
    -------
    str
        One sentence on the augmentation pairs of this run (or that it holds
        none), one on the neural encoders below the best classical baseline.

    Examples
    --------
    >>> import pandas as pd
    >>> effect = pd.DataFrame({"augmented": ["a_aug"], "plain": ["a"], "in_results": [True],
    ...                        "clean_gain": [-0.01], "loss_change": [-0.02]})
    >>> families = {"pixels": "classical", "a": "broad_ssl", "a_aug": "broad_ssl", "r": "random"}
    >>> print(zoo_takeaway(effect, {"pixels": 0.7, "a": 0.8, "a_aug": 0.79, "r": 0.6}, families, noise=0.005))
    ... # doctest: +NORMALIZE_WHITESPACE
    Acquisition augmentation lowers the mean corruption AUROC loss in 1 of 1 pair (change -0.020, large beside the
    seed-to-seed spread of 0.005) and changes the clean AUROC by -0.010. 1 of 3 neural encoders falls below the best
    classical baseline, pixels (clean AUROC 0.700), and it is not pretrained.
    """
    first = _augmentation_takeaway(effect, len(families), noise, digits)
    second = _baseline_takeaway(clean, families, digits)
    return f"{first} {second}".strip()


__all__ = ["describe_below_baseline", "zoo_exercise_lora_augmentation", "zoo_lessons", "zoo_takeaway"]
