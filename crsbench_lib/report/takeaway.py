"""One key takeaway per chapter: the page's answer to its question, in a box above the details.

A chapter's findings open with one short statement, decided from the page's
numbers by the chapter's ``<chapter>_takeaway(...)`` builder (in its sentence
module) and shown in an admonition titled :data:`TAKEAWAY_TITLE`; the longer
findings, figures and tables follow as the details. The chapter glues the text
(:func:`glue_takeaway`) and a markdown cell shows it::

    ````{admonition} Key takeaway
    :class: important

    ```{glue:md} takeaway-agreement
    :format: myst
    ```
    ````

A takeaway is short (at most :data:`MAX_WORDS` words) and states a number of
this build, as every sentence of interpretation does.

A page whose table does not fit its standard states no finding: its chapter
header records the fit problems (:func:`withhold_findings`), the takeaway box
says so, and every longer paragraph that reads the page's scores (findings,
"Is this real?", the exercises' solutions) is shown through :func:`findings`,
which puts one line saying why in its place.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from IPython.display import Markdown

TAKEAWAY_TITLE = "Key takeaway"
#: A takeaway a reader takes in at a glance: two sentences, not a paragraph.
MAX_WORDS = 60
#: What a team does with the finding, under the takeaway in its box: one or two sentences.
MAX_ACTION_WORDS = 50
#: The lead-in of the action line in the takeaway box.
ACTION_LEAD = "What a team does with this:"
_KEY_PREFIX = "takeaway-"
_ACTION_PREFIX = "action-"
_NUMBER = re.compile(r"\d")


def takeaway_key(chapter: str) -> str:
    """The glue key of ``chapter``'s takeaway, e.g. ``takeaway-agreement``."""
    if not chapter or not re.fullmatch(r"[a-z0-9_]+", chapter):
        raise ValueError(f"chapter must be a notebook name such as 'agreement', got {chapter!r}")
    return _KEY_PREFIX + chapter


def action_key(chapter: str) -> str:
    """The glue key of ``chapter``'s action line, e.g. ``action-agreement``."""
    return _ACTION_PREFIX + takeaway_key(chapter).removeprefix(_KEY_PREFIX)


def check_action(text: str) -> str:
    """``text`` stripped, refused when empty or over :data:`MAX_ACTION_WORDS` words.

    Examples
    --------
    >>> check_action(" Take the 3 tier members to deployment evaluation. ")
    'Take the 3 tier members to deployment evaluation.'
    """
    return _short_text(text, "an action line", MAX_ACTION_WORDS)


def _short_text(text: str, what: str, limit: int) -> str:
    """``text`` stripped; ValueError naming ``what`` when it is empty or longer than ``limit`` words."""
    stripped = str(text).strip()
    if not stripped:
        raise ValueError(f"{what} must not be empty")
    words = len(stripped.split())
    if words > limit:
        raise ValueError(f"{what} has at most {limit} words, got {words}: {stripped[:60]!r}...")
    return stripped


def check_takeaway(text: str) -> str:
    """``text`` stripped, refused when it is not a takeaway: empty, over :data:`MAX_WORDS` words, or without a number.

    Examples
    --------
    >>> check_takeaway("  AUROC and CRS order the 9 candidates alike but for 2 of 36 pairs. ")
    'AUROC and CRS order the 9 candidates alike but for 2 of 36 pairs.'
    >>> check_takeaway("The CRS is better.")
    Traceback (most recent call last):
    ...
    ValueError: a takeaway states a number of this build, got 'The CRS is better.'
    """
    stripped = _short_text(text, "a takeaway", MAX_WORDS)
    if not _NUMBER.search(stripped):
        raise ValueError(f"a takeaway states a number of this build, got {stripped!r}")
    return stripped


# The fit problems of the page being executed (set by its chapter header): while any is set, a takeaway
# states no finding, since every score of the page is flattened by a standard that does not fit.
_MISFIT: dict[str, object] = {"standard": "", "lines": ()}


def withhold_findings(standard_version: str, fit_lines: tuple[str, ...]) -> None:
    """Record the fit problems of the page being executed (:func:`~crsbench_lib.report.page.chapter_header` calls it)."""
    _MISFIT["standard"] = standard_version
    _MISFIT["lines"] = tuple(fit_lines)


def withheld_takeaway(standard_version: str, n_problems: int) -> str:
    """The takeaway of a page whose table does not fit its standard: what to do instead of a finding.

    Examples
    --------
    >>> withheld_takeaway("crs-default-v5", 2).split(":")[0]
    'No finding on this page'
    """
    return (f"No finding on this page: this table does not fit standard {standard_version} ({n_problems} "
            f"problem{'s' if n_problems != 1 else ''}, listed at the top), which flattens its scores. Name no "
            "standard in the profile to score against one frozen from the run, or freeze your own.")


def withheld_finding(standard_version: str, n_problems: int) -> str:
    """The one line shown instead of a paragraph of findings on a page whose table does not fit its standard.

    Examples
    --------
    >>> withheld_finding("crs-default-v5", 1).split(":")[0]
    'Finding withheld'
    """
    return (f"Finding withheld: this table does not fit standard {standard_version} ({n_problems} "
            f"problem{'s' if n_problems != 1 else ''}, listed at the top), so its scores are flattened and this "
            "paragraph would read the misfit, not the encoders.")


#: A findings paragraph longer than this many words is shown as several (:func:`short_paragraphs`).
LONGEST_PARAGRAPH = 120
#: About how many words each of those paragraphs holds.
PARAGRAPH_AIM = 70
# A sentence ends at ., ! or ? followed by a space and a capital letter, a bold marker or a quote: "e.g. the",
# "Fig. 6", "0.5" and the abbreviations below ("et al. Kumar", "vs. AUROC") do not end one.
_SENTENCE_END = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)(?<!\bal\.)(?<!\bFig\.)(?<!\bcf\.)"
                           r"(?<=[.!?])\s+(?=[A-Z*\"“])")


def short_paragraphs(text: str, longest: int = LONGEST_PARAGRAPH, aim: int = PARAGRAPH_AIM) -> str:
    r"""``text`` with every plain paragraph of more than ``longest`` words broken, between sentences, into paragraphs
    of about ``aim`` words; lists, tables, quotes, headings and shorter paragraphs are left as they are.

    A reader takes in a finding of three sentences at a glance, not one of twelve; the words and their order stay
    exactly the same.

    Examples
    --------
    >>> long = " ".join(f"Sentence {k} has exactly six words." for k in range(30))
    >>> parts = short_paragraphs(long).split("\n\n")
    >>> len(parts), max(len(p.split()) for p in parts) <= 72
    (3, True)
    >>> short_paragraphs("One short paragraph. It stays.")
    'One short paragraph. It stays.'
    """
    out = []
    for block in str(text).split("\n\n"):
        # A list item starts with "- ", "* " or "1. "; "**In this build**" opens a paragraph of prose.
        plain = "\n" not in block.strip() and not block.lstrip().startswith(("- ", "* ", ">", "|", "#", "1. ", "`"))
        if not plain or len(block.split()) <= longest:
            out.append(block)
            continue
        sentences = _SENTENCE_END.split(block.strip())
        parts: list[list[str]] = [[]]
        for sentence in sentences:
            if parts[-1] and sum(len(x.split()) for x in parts[-1]) + len(sentence.split()) > aim:
                parts.append([])
            parts[-1].append(sentence)
        out.extend(" ".join(part) for part in parts)
    return "\n\n".join(out)


def finding_text(text: str) -> str:
    """``text``, or :func:`withheld_finding` while the page being executed does not fit its standard.

    Parameters
    ----------
    text : str
        A paragraph that reads the page's scores (markdown).

    Returns
    -------
    str

    Examples
    --------
    >>> withhold_findings("crs-default-v5", ())
    >>> finding_text("The tier holds 3 of 9 candidates.")
    'The tier holds 3 of 9 candidates.'
    >>> withhold_findings("crs-default-v5", ("on axis C every encoder is worse than every panel member",))
    >>> finding_text("The tier holds 3 of 9 candidates.").split(":")[0]
    'Finding withheld'
    >>> withhold_findings("", ())
    """
    lines = tuple(_MISFIT["lines"])  # type: ignore[arg-type]
    return withheld_finding(str(_MISFIT["standard"]), len(lines)) if lines else short_paragraphs(text)


def findings(text: str) -> Markdown:
    """A paragraph of findings as a chapter shows it: :func:`finding_text` as IPython markdown.

    Every interpretation a chapter displays or glues (``display(findings(...))``,
    ``glue(key, findings(...), display=False)``) goes through it, so a page whose
    table does not fit its standard states no finding anywhere, not only in its
    takeaway box; a pure description of the data (sizes, checks, the fit itself)
    is shown as it is.
    """
    from IPython.display import Markdown

    return Markdown(finding_text(text))


def glue_takeaway(chapter: str, text: str) -> str:
    """Glue ``text`` (checked) under :func:`takeaway_key` for the chapter's takeaway box; return it.

    Parameters
    ----------
    chapter : str
        The notebook's name.
    text : str
        The takeaway, from the chapter's builder.

    Returns
    -------
    str
        The checked text; :func:`withheld_takeaway` instead when the page's
        table does not fit its standard (:func:`withhold_findings`).
    """
    from IPython.display import Markdown
    from myst_nb import glue

    lines = tuple(_MISFIT["lines"])  # type: ignore[arg-type]
    checked = check_takeaway(withheld_takeaway(str(_MISFIT["standard"]), len(lines)) if lines else text)
    glue(takeaway_key(chapter), Markdown(checked), display=False)
    return checked


def glue_action(chapter: str, text: str) -> str:
    """Glue what a team does with the page's finding (checked) under :func:`action_key`; return it.

    Shown in the takeaway box under the takeaway, after :data:`ACTION_LEAD`.
    On a page whose table does not fit its standard no action is drawn.
    """
    from IPython.display import Markdown
    from myst_nb import glue

    lines = tuple(_MISFIT["lines"])  # type: ignore[arg-type]
    checked = check_action("None: this page states no finding (see above)." if lines else text)
    glue(action_key(chapter), Markdown(f"**{ACTION_LEAD}** {checked}"), display=False)
    return checked
