""""Is this real?": each chapter's lessons, sorted into those of any benchmark of this design and those of this build's world.

A lesson of the *design* holds by construction for any benchmark that scores
encoders the way this one does (fixed anchors, a floor term, a paired
bootstrap, a tier instead of a winner): it would hold on other encoders and
other data. A lesson of the *world* is a measurement of this build's encoders
on this build's data (how much the adapters gain, which axis is lowest, which
family leads): another cohort may reverse it. The chapters' builders (in the
chapter's own sentence module) decide from the page's numbers which lessons
hold and where each belongs; this module holds the shared vocabulary and
writes the section.

Examples
--------
>>> lessons = [Lesson(DESIGN, "A tier, not a winner: the leaders whose difference from the first is within noise "
...                   "are reported together."),
...            Lesson(WORLD, "Here the tier holds 4 of 19 candidates.", study="The study's tier held 2 of 15.")]
>>> print(describe_lessons(lessons, simulated=True))
**Any benchmark of this design.**
<BLANKLINE>
- A tier, not a winner: the leaders whose difference from the first is within noise are reported together.
<BLANKLINE>
**This build's simulated world** (phantom images and small encoders; another cohort may differ).
<BLANKLINE>
- Here the tier holds 4 of 19 candidates. *The study:* The study's tier held 2 of 15.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: The scope of a lesson that holds by construction, for any benchmark scored this way.
DESIGN = "design"
#: The scope of a lesson that is a measurement of this build's encoders and data.
WORLD = "world"
SCOPES = (DESIGN, WORLD)


@dataclass(frozen=True)
class Lesson:
    """One lesson of a chapter and where it belongs.

    Parameters
    ----------
    scope : str
        :data:`DESIGN` (holds for any benchmark of this design) or :data:`WORLD`
        (a measurement of this build's world).
    text : str
        The lesson in one or two sentences, with this build's number where it
        has one.
    study : str, optional
        The study's result beside it (a sentence), or empty.
    """

    scope: str
    text: str
    study: str = ""

    def __post_init__(self) -> None:
        if self.scope not in SCOPES:
            raise ValueError(f"lesson scope must be one of {SCOPES}, got {self.scope!r}")
        if not self.text.strip():
            raise ValueError("a lesson needs a text")


def world_name(simulated: bool | None) -> str:
    """What the world lessons are measurements of: the simulated world, or the user's own data.

    The one place that names it: every sentence that places a finding in this
    run's world (the lessons, the shared noise sentence, the insertion, scale
    and grid-edge sentences) reads it here, so a user's data never shows the
    phantom world's name.

    Examples
    --------
    >>> world_name(True), world_name(False)
    ("this build's simulated world", "this run's own data")
    """
    if simulated is False:
        return "this run's own data"
    return "this build's simulated world" if simulated else "this build's world"


def _world_heading(simulated: bool | None) -> str:
    if simulated is False:
        return "**This run's own data** (these encoders on these images; other data may differ)."
    if simulated:
        return "**This build's simulated world** (phantom images and small encoders; another cohort may differ)."
    return "**This build's world** (these encoders on this cohort; another cohort may differ)."


def describe_lessons(lessons: Sequence[Lesson], simulated: bool | None = None) -> str:
    """The body of a chapter's "Is this real?" section: the design's lessons, then the world's.

    Parameters
    ----------
    lessons : sequence of Lesson
        The chapter's lessons, in the order to print within each scope.
    simulated : bool or None
        Whether the run is on the simulated cohort (True), the user's own data
        (False) or unknown (None); names the world.

    Returns
    -------
    str
        Markdown: a bold lead and a bullet list per scope that has lessons.

    Raises
    ------
    ValueError
        If there is no lesson.
    """
    if not lessons:
        raise ValueError("a chapter's 'Is this real?' section needs at least one lesson")
    parts = []
    for scope, heading in ((DESIGN, "**Any benchmark of this design.**"), (WORLD, _world_heading(simulated))):
        items = [lesson for lesson in lessons if lesson.scope == scope]
        if items:
            bullets = "\n".join(f"- {item.text}" + (f" *The study:* {item.study}" if item.study else "")
                                for item in items)
            parts.append(f"{heading}\n\n{bullets}")
    return "\n\n".join(parts)
