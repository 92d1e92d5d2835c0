"""The sentence on the dominance form: how much of the bootstrap's bias is Pareto dominance's step (method section 9, amendment 20).

:func:`describe_dominance_forms` reads
:func:`~crsbench_lib.scoring.dominance_noise.form_comparison` (the same draws
scored with the Pareto count and with noise-aware dominance) and says, for the
best candidates, how large the bias is under each form, against the size of one
Pareto step and the draws' own standard error, and where the lesson belongs;
:func:`dominance_lessons` gives the leading-tier chapter's "Is this real?"
lesson on whether the form moves the leader.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING


from crsbench_lib.report.grammar import correlation_word, fmt
from crsbench_lib.scoring.rank_statistics import kendall_tau_b
from crsbench_lib.report.sentences.lessons import WORLD, Lesson, world_name

if TYPE_CHECKING:
    import pandas as pd

_FORM_WORDS = {"pareto": "the Pareto count (a panel member counts 1 or 0)",
               "noise_aware": "noise-aware dominance (a panel member counts the probability of being dominated)"}
_NEEDED = ("role", "crs_pareto", "bias_pareto", "se_pareto", "crs_noise_aware", "bias_noise_aware", "se_noise_aware")


def describe_dominance_forms(
    comparison: "pd.DataFrame",
    form: str,
    noise_sd: Sequence[float],
    step: float,
    top: int = 5,
    digits: int = 3,
) -> str:
    """The bootstrap bias of the best candidates under both dominance forms, in words.

    Parameters
    ----------
    comparison : pandas.DataFrame
        :func:`~crsbench_lib.scoring.dominance_noise.form_comparison` (index encoder).
    form : {"pareto", "noise_aware"}
        The standard's own form (the one every other number on the page uses).
    noise_sd : sequence of float
        The noise-aware form's scale (D, C, L, R), in normalised units.
    step : float
        What one panel member is worth under the Pareto count: the dominance
        weight over the panel size (less one, for a panel member scored
        without its own entry).
    top : int
        How many of the best candidates (by the standard's form) are read.
    digits : int
        Decimals shown.

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"role": ["candidate", "candidate"], "crs_pareto": [0.60, 0.47],
    ...     "bias_pareto": [-0.033, 0.001], "se_pareto": [0.034, 0.025], "crs_noise_aware": [0.563, 0.472],
    ...     "bias_noise_aware": [-0.003, -0.001], "se_noise_aware": [0.027, 0.016]}, index=["a", "b"])
    >>> text = describe_dominance_forms(table, "pareto", [0.0085, 0.019, 0.011, 0.020], step=0.3 / 18, top=2)
    >>> text[: text.index(";")]
    'Among the 2 best candidates, the largest bootstrap bias under the Pareto count (a panel member counts 1 or 0) is -0.033 (a, 2.0 steps of 0.017, one panel member each)'
    """
    missing = [c for c in _NEEDED if c not in comparison.columns]
    if missing:
        raise ValueError(f"describe_dominance_forms: the comparison lacks column {missing[0]!r}")
    if form not in _FORM_WORDS:
        raise ValueError(f"describe_dominance_forms: form must be one of {', '.join(_FORM_WORDS)}, found {form!r}")
    candidates = comparison[comparison["role"] == "candidate"]
    if candidates.empty:
        raise ValueError("describe_dominance_forms: no candidate to describe")
    best = candidates.sort_values(f"crs_{form}", ascending=False, kind="stable").head(int(top))
    worst = {f: str(best[f"bias_{f}"].abs().idxmax()) for f in ("pareto", "noise_aware")}
    hard_name, soft_name = worst["pareto"], worst["noise_aware"]
    hard, soft = float(best.loc[hard_name, "bias_pareto"]), float(best.loc[soft_name, "bias_noise_aware"])
    soft_se = float(best.loc[soft_name, "se_noise_aware"])
    sigma = ", ".join(f"{a} {v:.4f}" for a, v in zip("DCLR", noise_sd, strict=True))
    text = (
        f"Among the {len(best)} best candidates, the largest bootstrap bias under {_FORM_WORDS['pareto']} is "
        f"{fmt(hard, digits)} ({hard_name}, {abs(hard) / step:.1f} steps of {fmt(step, digits)}, one panel member "
        f"each); under {_FORM_WORDS['noise_aware']}, with the noise of each normalised axis set to {sigma}, it is "
        f"{fmt(soft, digits)} ({soft_name}, {abs(soft) / soft_se:.1f} of its draws' standard errors)."
    )
    ranked = candidates[["crs_pareto", "crs_noise_aware"]].to_numpy(dtype=float)
    if len(candidates) >= 3:
        tau = kendall_tau_b(ranked[:, 0], ranked[:, 1])
        text += f" The two forms rank the {len(candidates)} candidates with Kendall's τ_b {tau:.2f}."
    firsts = {f: str(candidates[f"crs_{f}"].astype(float).idxmax()) for f in ("pareto", "noise_aware")}
    if firsts["pareto"] != firsts["noise_aware"]:
        text += (f" The two forms put different candidates first: {firsts['pareto']} under the Pareto count, "
                 f"{firsts['noise_aware']} under noise-aware dominance.")
    leader = str(best.index[0])
    moved = float(best.loc[leader, "crs_noise_aware"] - best.loc[leader, "crs_pareto"])
    if abs(moved) >= 0.5 * 10 ** (-digits):
        text += (f" The leader's point CRS moves from {fmt(float(best.loc[leader, 'crs_pareto']), digits)} to "
                 f"{fmt(float(best.loc[leader, 'crs_noise_aware']), digits)}: a profile within its own noise of a "
                 "panel member counts about half of it, where the Pareto count gives all or nothing.")
    own = "This page scores with " + _FORM_WORDS[form].split(" (")[0] + ", its standard's form."
    lesson = (" That Pareto dominance is biased under resampling whenever profiles sit within their noise of a panel "
              "member belongs to any benchmark of this design; the sizes belong to this build's profiles.")
    return text + " " + own + lesson


def pareto_step(weight: float, panel_size: int, leave_self_out: bool = True) -> float:
    """What one panel member is worth in the CRS under the Pareto count.

    Examples
    --------
    >>> round(pareto_step(0.3, 19), 4)
    0.0167
    """
    members = int(panel_size) - (1 if leave_self_out else 0)
    return float(weight) / max(1, members)


def dominance_lessons(comparison: "pd.DataFrame", form: str, simulated: bool | None = None) -> list[Lesson]:
    """Whether the dominance form moves the leader on this build: a lesson of its world.

    That Pareto dominance jumps by whole panel members is a property of the
    design; whether the two forms put the same candidate first depends on how
    close this build's profiles sit to each other beside their noise.

    Parameters
    ----------
    comparison : pandas.DataFrame
        :func:`~crsbench_lib.scoring.dominance_noise.form_comparison` (index
        encoder; role, crs_pareto, crs_noise_aware).
    form : {"pareto", "noise_aware"}
        The standard's own form.
    simulated : bool, optional
        Names the world.

    Returns
    -------
    list of Lesson
        One lesson of this build's world.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"role": "candidate", "crs_pareto": [0.71, 0.69, 0.5],
    ...                       "crs_noise_aware": [0.694, 0.696, 0.5]}, index=["a", "b", "c"])
    >>> dominance_lessons(table, "noise_aware", simulated=True)[0].text[:114]
    "In this build's simulated world the dominance form decides which candidate is first: the Pareto count puts a first"
    """
    for column in ("role", "crs_pareto", "crs_noise_aware"):
        if column not in comparison.columns:
            raise ValueError(f"dominance_lessons: the comparison lacks column {column!r}")
    if form not in _FORM_WORDS:
        raise ValueError(f"dominance_lessons: form must be one of {', '.join(_FORM_WORDS)}, found {form!r}")
    candidates = comparison[comparison["role"] == "candidate"]
    if candidates.empty:
        raise ValueError("dominance_lessons: no candidate")
    firsts = {f: str(candidates[f"crs_{f}"].astype(float).idxmax()) for f in ("pareto", "noise_aware")}
    tau = ""
    if len(candidates) >= 3:
        value = kendall_tau_b(candidates["crs_pareto"].to_numpy(float), candidates["crs_noise_aware"].to_numpy(float))
        tau = (f", though the two orders of the {len(candidates)} candidates agree closely otherwise (τ_b {value:.2f}, "
               f"{correlation_word(value)})" if firsts["pareto"] != firsts["noise_aware"]
               else f" and order the {len(candidates)} candidates with τ_b {value:.2f}")
    world = world_name(simulated)
    own = "noise-aware dominance" if form == "noise_aware" else "the Pareto count"
    if firsts["pareto"] != firsts["noise_aware"]:
        text = (f"In {world} the dominance form decides which candidate is first: the Pareto count puts "
                f"{firsts['pareto']} first, noise-aware dominance {firsts['noise_aware']}{tau}. The leaders' profiles "
                "sit close enough to panel members, beside their noise, that counting a member 1 or 0 and counting the "
                "probability of dominating it differ; the page "
                f"scores with {own}, and the tier, not the first place, is what to report. On a cohort whose leaders "
                "sit further apart than their noise, the two forms would agree.")
    else:
        text = (f"In {world} both dominance forms put {firsts['pareto']} first{tau}: the choice of form does not "
                "move the leader here. On a cohort whose leaders sit within their noise of panel members, the Pareto "
                "count could put another candidate first.")
    return [Lesson(WORLD, text)]


__all__ = ["describe_dominance_forms", "dominance_lessons", "pareto_step"]
