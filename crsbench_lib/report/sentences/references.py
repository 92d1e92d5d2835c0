"""How every page names the reference encoders it leaves unranked.

A page names a few references by name; many (the zoo's classical features and
random networks beside the in-task reference) by their count and families, with
the place where the book lists them (:data:`crsbench_lib.report.roles.ROLE_LIST_PLACE`),
so that a sentence reads the same with one reference or a dozen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from crsbench_lib.report.grammar import and_list
from crsbench_lib.report.roles import REFERENCE_FAMILY_NOUNS, ROLE_LIST_PLACE, reference_family_counts

#: Up to this many references are named one by one; more are named by count and family.
MAX_NAMED = 3


def name_references(references: Sequence[str], families: Mapping[str, str] | None = None) -> str:
    """The references as a noun phrase: their names when few, else their count and families and where they are listed.

    Parameters
    ----------
    references : sequence of str
        The reference encoders of the page (at least one).
    families : mapping of str to str, optional
        Encoder -> study family key (``crsbench_lib.encoders.zoo.zoo_families()``);
        without it many references are named by their count alone.

    Returns
    -------
    str
        e.g. ``"intask_supervised_s"`` or ``"11 reference encoders (8 classical
        feature extractors, 2 random-initialisation networks and 1 in-task
        reference; the zoo table of the cohort chapter lists them)"``; the verb
        that follows agrees with :func:`reference_verb`.

    Examples
    --------
    >>> name_references(["intask_supervised_s"])
    'intask_supervised_s'
    >>> families = {"pixels": "classical", "pca": "classical", "hog": "classical", "cnn_random": "random",
    ...             "intask_supervised_s": "intask"}
    >>> name_references(sorted(families), families)
    '5 reference encoders (3 classical feature extractors, 1 random-initialisation network and 1 in-task reference; the zoo table of the cohort chapter lists them)'
    >>> name_references(sorted(families))
    '5 reference encoders (the zoo table of the cohort chapter lists them)'
    """
    names = [str(name) for name in references]
    if not names:
        raise ValueError("name_references needs at least one reference")
    if len(names) <= MAX_NAMED:
        return and_list(names)
    parts = []
    if families is not None:
        for family, n in reference_family_counts(names, families).items():
            singular, plural = REFERENCE_FAMILY_NOUNS.get(family, ("other reference", "other references"))
            parts.append(f"{n} {singular if n == 1 else plural}")
    where = f"{ROLE_LIST_PLACE} lists them"
    return f"{len(names)} reference encoders ({and_list(parts) + '; ' if parts else ''}{where})"


def reference_verb(references: Sequence[str], singular: str = "is", plural: str = "are") -> str:
    """The verb that agrees with :func:`name_references` of the same references.

    Examples
    --------
    >>> reference_verb(["r"]), reference_verb(["r", "s"]), reference_verb([f"r{k}" for k in range(9)])
    ('is', 'are', 'are')
    """
    return singular if len(references) == 1 else plural


__all__ = ["MAX_NAMED", "name_references", "reference_verb"]
