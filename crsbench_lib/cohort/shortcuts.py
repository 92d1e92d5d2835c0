"""Shortcut cues and the parts of a site shift: the mechanisms of world v4, as data.

Two mechanisms make real frozen encoders differ under an institutional shift,
and both are drawn here from what the literature documents, never from a
result they should produce.

Shortcut cues
-------------
A *cue* is something in the image that is not the disease but travels with
the label at the training site, because of how that site works:

- chest films: the ``PORTABLE`` stamp of films taken at the bedside, which
  are the films of in-patients, who more often have effusion or
  consolidation (Zech et al., *PLoS Med* 2018: portable films and hospital
  tokens predicted pneumonia; DeGrave et al., *Nat Mach Intell* 2021:
  laterality and text markers chosen over lung signal);
- dermoscopy: a surgical skin-marker ring drawn around lesions scheduled for
  excision, more often melanomas (Winkler et al., *JAMA Dermatol* 2019:
  ink markings raised a CNN's melanoma probability);
- fundus photographs: the field-mask notch of the referral clinic's camera,
  used more for eyes graded referable (moderate or worse).

Each cue has, per site, the probability that an image carries it when the
image is *positive* (the label the cue travels with) and when it is not
(:class:`ShortcutCue`). At the evaluation site ``A`` the two differ (the
cue's *strength*, stated as an odds ratio); at the shift site ``B`` they are
equal or zero (the cue is decorrelated or absent); pretraining pool sites hold
the cue to different degrees, so a specialist pretrained on site ``A`` alone
sees it in every batch and a generalist sees it at some sites only.

Cue draws come from a child stream of the image's generator
(:func:`cue_stream`), so a cue switched off leaves every other draw, and so
every pixel outside the cue, as it was: the *cue-removed* test split is the
same images but for the cue (the per-encoder ablation of the world report).

Site parts
----------
A second site differs in four separable ways (:data:`SHIFT_PARTS`), each with
a switch, so that a chapter or an exercise can show what each does:
``acquisition`` (the scanner: tone curve, noise level and texture, sampling,
processing), ``population`` (prevalence and severity mix, positioning),
``labelling`` (who labelled it: another reader's or labeller's error rates)
and ``cue`` (how the shortcut cue relates to the label there). A part switched
off takes the training site's value: with ``cue`` off, site B carries the cue
at site A's rates, so the cue still travels with the label there and the
shortcut costs nothing at B; with every part off, site B is site A's process
on new patients.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from crsbench_lib.errors import DataError

#: The separable parts of a site shift, in the order they are described.
SHIFT_PARTS: tuple[str, ...] = ("acquisition", "population", "labelling", "cue")


def check_shift_parts(parts: Iterable[str] | None) -> tuple[str, ...]:
    """Validated shift parts in :data:`SHIFT_PARTS` order (None: all of them).

    Raises
    ------
    DataError
        On a part that is not one of :data:`SHIFT_PARTS`.

    Examples
    --------
    >>> check_shift_parts(["labelling", "acquisition"])
    ('acquisition', 'labelling')
    >>> check_shift_parts(None)
    ('acquisition', 'population', 'labelling', 'cue')
    """
    if parts is None:
        return SHIFT_PARTS
    if isinstance(parts, str):
        parts = [parts]
    given = list(parts)
    unknown = [p for p in given if p not in SHIFT_PARTS]
    if unknown:
        raise DataError(f"shift parts: unknown part {unknown[0]!r} (expected some of {', '.join(SHIFT_PARTS)})")
    return tuple(p for p in SHIFT_PARTS if p in given)


@dataclass(frozen=True)
class ShortcutCue:
    """A cue that travels with a label at some sites (see the module docstring).

    Attributes
    ----------
    name : str
        Short name (``portable_token``, ``ink_marking``, ``device_notch``).
    description : str
        What it is and why it travels with the label, in one line.
    positive : str
        Which images count as positive for the cue's rates.
    rates : dict of str to (float, float)
        Per site: probability of the cue in a positive and in a negative image.
    source : str
        Where the mechanism is documented.
    """

    name: str
    description: str
    positive: str
    rates: dict[str, tuple[float, float]]
    source: str

    def probability(self, site: str, positive: np.ndarray) -> np.ndarray:
        """Per-image probability of carrying the cue at ``site`` (0 where the site has no rate)."""
        p_pos, p_neg = self.rates.get(site, (0.0, 0.0))
        return np.where(np.asarray(positive, dtype=bool), p_pos, p_neg)


    def odds_ratio(self, site: str) -> float:
        """Odds of the cue in positive over negative images at ``site`` (1 = decorrelated; nan without the cue).

        Examples
        --------
        >>> cue = ShortcutCue("c", "", "", {"A": (0.5, 0.2), "B": (0.3, 0.3), "C": (0.4, 0.0)}, "")
        >>> round(cue.odds_ratio("A"), 2), cue.odds_ratio("B"), cue.odds_ratio("C")
        (4.0, 1.0, inf)
        """
        p_pos, p_neg = self.rates.get(site, (0.0, 0.0))
        if p_pos == p_neg:
            return float("nan") if p_pos == 0.0 else 1.0
        odds = [p / (1 - p) if p < 1 else float("inf") for p in (p_pos, p_neg)]
        if odds[1] == 0 or odds[0] == float("inf"):
            return float("inf")
        return float(odds[0] / odds[1])


def cue_stream(rng: np.random.Generator) -> np.random.Generator:
    """The child stream of a generator from which an image batch's cue is drawn.

    Spawning does not advance ``rng``, so every other draw of the batch is the
    same whether or not the cue is drawn.
    """
    return rng.spawn(1)[0]


def cue_site(site: str, sites: tuple[str, ...], shift_parts: tuple[str, ...]) -> str:
    """Whose cue rates an image drawn at ``site`` takes: a shift site's own only with its ``cue`` part on.

    ``sites`` are the domain's evaluation sites (the first is the training
    site); pool sites always keep their own rates.

    Examples
    --------
    >>> cue_site("B", ("A", "B"), SHIFT_PARTS), cue_site("B", ("A", "B"), ("acquisition",)), cue_site("P1", ("A", "B"), ())
    ('B', 'A', 'P1')
    """
    return sites[0] if site in sites[1:] and "cue" not in shift_parts else site
