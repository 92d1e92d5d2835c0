"""Who is ranked: candidates, and the reference encoders that are scored, drawn and never ranked.

The study ranks foundation models, every one a candidate a team might adopt. The
zoo also holds encoders no team would invest in: classical features (family
``"classical"``: pixels, PCA, HOG, ...), random-initialisation networks
(``"random"``) and the in-task reference (``"intask"``, pretrained on the
evaluation labels). They stay in the results, in the figures and in the frozen
reference panel (the dominance term needs weak members), and the zoo chapter
still asks "does pretraining pay?" against them; but every rank, leading tier,
selection gate, pair count, agreement statistic and comparison with the study
counts the candidates only, so that each answers the study's question about its
population. An encoder of any other family, or of none (a user's own encoder),
is a candidate.

Why this module is the one home of the fact: the family keys are the zoo's
(:data:`crsbench_lib.encoders.recipes.FAMILIES`), but the encoders layer imports
nothing of the package and the report layer must not import the encoders
(``docs/architecture.md``, ``tests/test_architecture.py``). Ranking is the
report's decision (the scoring layer takes explicit reference masks and holds no
policy), so the rule lives here, and the chapters pass
``crsbench_lib.encoders.zoo.zoo_families()`` in. The module imports nothing, not
even pandas, so that the sentences (:mod:`crsbench_lib.report.sentences`) can
read it as well as the tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

#: Family of the classical feature extractors (no learning, or a pool-fitted linear or cluster model).
CLASSICAL_FAMILY = "classical"
#: Family of the random-initialisation networks (a control: the architecture without pretraining).
CONTROL_FAMILY = "random"
#: Family of the in-task reference: pretrained on the evaluation labels, so it shows what the task allows.
IN_TASK_FAMILY = "intask"

#: Study family keys of the reference encoders, in the order the words name them.
REFERENCE_FAMILIES: tuple[str, ...] = (CLASSICAL_FAMILY, CONTROL_FAMILY, IN_TASK_FAMILY)

#: Singular and plural noun of each reference family, for the sentences.
REFERENCE_FAMILY_NOUNS: dict[str, tuple[str, str]] = {
    CLASSICAL_FAMILY: ("classical feature extractor", "classical feature extractors"),
    CONTROL_FAMILY: ("random-initialisation network", "random-initialisation networks"),
    IN_TASK_FAMILY: ("in-task reference", "in-task references"),
}

#: Where the book lists every encoder with its family and role (the sentences point there instead of naming many).
ROLE_LIST_PLACE = "the zoo table of the cohort chapter"


def is_reference_family(family: str | None) -> bool:
    """Whether an encoder of ``family`` is a reference encoder (never ranked); no family is a candidate.

    Examples
    --------
    >>> is_reference_family("classical"), is_reference_family("broad_ssl"), is_reference_family(None)
    (True, False, False)
    """
    return family in REFERENCE_FAMILIES


def reference_encoders(families: Mapping[str, str], present: Sequence[str] | None = None) -> list[str]:
    """The encoders to show as references, not as candidates.

    Parameters
    ----------
    families : mapping of str to str
        Encoder -> study family key (``crsbench_lib.encoders.zoo.zoo_families()``,
        which the chapter passes in: the report layer does not import the
        encoders).
    present : sequence of str, optional
        The encoders of the chapter's table; references absent from it are
        dropped, so a table of the user's own encoders has none.

    Returns
    -------
    list of str
        Sorted names whose family is one of :data:`REFERENCE_FAMILIES`.

    Examples
    --------
    >>> families = {"intask_supervised_s": "intask", "mae_broad_vit": "mim", "hog": "classical", "cnn_random": "random"}
    >>> reference_encoders(families)
    ['cnn_random', 'hog', 'intask_supervised_s']
    >>> reference_encoders(families, present=["mae_broad_vit", "hog"])
    ['hog']
    """
    names = sorted(str(name) for name, family in families.items() if is_reference_family(family))
    if present is None:
        return names
    keep = {str(name) for name in present}
    return [name for name in names if name in keep]


def candidate_encoders(encoders: Sequence[str], families: Mapping[str, str]) -> list[str]:
    """The candidates among ``encoders``, in their order: every encoder not of a reference family.

    Examples
    --------
    >>> candidate_encoders(["pixels", "mine", "mae_broad_vit"], {"pixels": "classical", "mae_broad_vit": "mim"})
    ['mine', 'mae_broad_vit']
    """
    return [str(name) for name in encoders if not is_reference_family(families.get(str(name)))]


def in_task_references(families: Mapping[str, str], present: Sequence[str] | None = None) -> list[str]:
    """The references pretrained on the evaluation labels (family :data:`IN_TASK_FAMILY`): a ceiling to test.

    Examples
    --------
    >>> in_task_references({"intask_supervised_s": "intask", "hog": "classical"})
    ['intask_supervised_s']
    """
    return [name for name in reference_encoders(families, present) if families.get(name) == IN_TASK_FAMILY]


def reference_family_counts(references: Sequence[str], families: Mapping[str, str]) -> dict[str, int]:
    """How many of ``references`` each reference family holds, in :data:`REFERENCE_FAMILIES` order, zeros left out.

    A name without a reference family (a reference named by hand) is counted
    under ``""``.

    Examples
    --------
    >>> reference_family_counts(["hog", "pixels", "intask_supervised_s"],
    ...                         {"hog": "classical", "pixels": "classical", "intask_supervised_s": "intask"})
    {'classical': 2, 'intask': 1}
    """
    counts = {family: 0 for family in (*REFERENCE_FAMILIES, "")}
    for name in references:
        family = families.get(str(name), "")
        counts[family if family in REFERENCE_FAMILIES else ""] += 1
    return {family: n for family, n in counts.items() if n}


__all__ = [
    "CLASSICAL_FAMILY",
    "CONTROL_FAMILY",
    "IN_TASK_FAMILY",
    "REFERENCE_FAMILIES",
    "REFERENCE_FAMILY_NOUNS",
    "ROLE_LIST_PLACE",
    "candidate_encoders",
    "in_task_references",
    "is_reference_family",
    "reference_encoders",
    "reference_family_counts",
]
