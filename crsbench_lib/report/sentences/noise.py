"""A rank comparison read against its own noise: the shared sentence of the agreement, transfer, LoDO and insertion pages.

:func:`describe_tau_against_noise` reads
:func:`crsbench_lib.scoring.retest.noise_baseline_table` (method section 9,
amendment 13): a Kendall τ_b between two rankings beside the τ_b of the same
rankings under redrawn seeds and under independent bootstrap draws.
"""

from __future__ import annotations

from collections.abc import Sequence

from crsbench_lib.report.grammar import and_list, fmt, format_interval, noise_size_word
from crsbench_lib.report.sentences.lessons import world_name


def _tau_range(row: object, bootstrap: bool, digits: int = 2) -> str:
    """A baseline row's spread: ``[low, high]`` (a percentile interval) or ``low to high`` (min and max of seed pairs)."""
    low, high = fmt(float(row.low), digits), fmt(float(row.high), digits)
    return format_interval(float(row.low), float(row.high), digits) if bootstrap else (
        f"each {low}" if low == high else f"{low} to {high}")


def range_digits(taus: "Sequence[float]", rows: "Sequence[object]") -> int:
    """Decimals for the ranges beside observed τ_b: 3 when a τ_b and a range end print alike at 2, else 2.

    A τ_b of 0.944 said to lie above a range printed ``[0.47, 0.94]`` reads as a
    contradiction although 0.9444 > 0.9436; one more decimal shows the gap the verdict reads.

    Examples
    --------
    >>> from types import SimpleNamespace as Row
    >>> range_digits([0.944], [Row(low=0.47, high=0.9436)]), range_digits([0.9], [Row(low=0.47, high=0.94)])
    (3, 2)
    """
    ends = {fmt(float(end), 2) for r in rows for end in (r.low, r.high)}
    return 3 if any(fmt(float(t), 2) in ends for t in taus) else 2


def _base(name: str) -> "str | None":
    """The comparison a name scores, without its bracketed scoring (None when it has none)."""
    import re

    found = re.fullmatch(r"(.*) \(([^()]*)\)", str(name))
    return found.group(1) if found else None


def _merged_name(names: "Sequence[str]") -> str:
    """One subject for comparisons that differ only in a bracketed scoring: ``"x (a)", "x (b)"`` -> ``"x (a and b)"``.

    Examples
    --------
    >>> _merged_name(["AUROC against CRS (full panel)", "AUROC against CRS (leave-self-out)"])
    'AUROC against CRS (full panel and leave-self-out)'
    >>> _merged_name(["a", "b"])
    'a and b'
    """
    import re

    parts = [re.fullmatch(r"(.*) \(([^()]*)\)", str(name)) for name in names]
    if len(names) > 1 and all(parts) and len({m.group(1) for m in parts}) == 1:
        return f"{parts[0].group(1)} ({and_list([m.group(2) for m in parts])})"
    return and_list([str(name) for name in names])


def describe_tau_against_noise(table: "object", level: float = 0.95, simulated: bool | None = None,
                               judged_by: "dict[str, Sequence[str]] | None" = None, closing: bool = True) -> str:
    """A rank comparison's τ_b read against the test-retest τ_b of the same rankings (seed redraws, bootstrap draws).

    Reads :func:`crsbench_lib.scoring.retest.noise_baseline_table`. A τ_b between rankings averaged over
    seeds is judged against the bootstrap-draw baseline (two independent replicates of an averaged ranking
    are its like-for-like partner; ``judged_by`` maps a comparison to its own rankings' rows, default all):
    below the central ``level`` of the draw pairs, inside or above; the size of the gap is a
    :func:`noise_size_word` against the baseline's half-width.
    A one-seed τ_b (when given) is judged against the seed-redraw baseline:
    whether the ranges separate (few, overlapping seed pairs: not a test). The
    last sentence places the lesson: any benchmark of this design, or the
    run's world as :func:`~crsbench_lib.report.sentences.lessons.world_name`
    names it (this run's own data, on a user's data); ``closing=False`` leaves it out (a page that prints the
    sentence for several tables places the lesson once). Comparisons whose
    printed τ_b and verdict are the same (a full-panel and a leave-self-out
    scoring that agree) are stated once, not as verbatim twins.

    Examples
    --------
    >>> import numpy as np
    >>> from crsbench_lib.scoring.retest import noise_baseline_table
    >>> table = noise_baseline_table({"Frozen against adapted": 0.62}, {"frozen": [0.66, 0.7, 0.78]},
    ...                              {"frozen": np.linspace(0.72, 0.92, 101)}, one_seed={"Frozen against adapted": [0.4, 0.5]})
    >>> describe_tau_against_noise(table).split(". ")[-3]
    'Frozen against adapted lies below the central 95 % of the bootstrap draws of frozen: the two rankings differ by more than resampling the seeds and test images moves one of them (a large gap: 0.20 below the nearest median, beside a half-width of 0.10)'
    >>> twins = noise_baseline_table({"x (full panel)": 0.9, "x (leave-self-out)": 0.9}, {},
    ...                              {"r": np.linspace(0.8, 1.0, 101)})
    >>> print(describe_tau_against_noise(twins, closing=False).split(". ")[0])
    X (full panel and leave-self-out): τ_b = 0.900 (rankings averaged over seeds)
    """
    from crsbench_lib.scoring.retest import AVERAGED, BOOTSTRAP_DRAW, OBSERVED, ONE_SEED_OTHER, SEED_REDRAW

    rows = list(table.itertuples(index=False))
    averaged = [r for r in rows if r.source == OBSERVED and r.rankings == AVERAGED]
    one_seed = [r for r in rows if r.source == OBSERVED and r.rankings == ONE_SEED_OTHER]
    seeds = [r for r in rows if r.source == SEED_REDRAW]
    boots = [r for r in rows if r.source == BOOTSTRAP_DRAW]
    if not averaged:
        raise ValueError("noise baseline table: no observed τ_b between rankings averaged over seeds")
    share = f"{level * 100:g} %"
    digits = range_digits([float(r.tau) for r in averaged], boots)

    def cap(words: str) -> str:
        return words[:1].upper() + words[1:]

    def verdict(r: object, name: str) -> str:
        """Where one averaged τ_b falls against its bootstrap rows, with ``name`` as the subject."""
        tau = float(r.tau)
        own = [b for b in boots if judged_by is None or b.comparison in judged_by.get(r.comparison, ())] or boots
        below = [b.comparison for b in own if tau < float(b.low)]
        above = [b.comparison for b in own if tau > float(b.high)]
        inside = [b.comparison for b in own if float(b.low) <= tau <= float(b.high)]
        every = "every bootstrap baseline" if len(own) > 1 else f"the bootstrap draws of {own[0].comparison}"
        nearest = min(own, key=lambda b: abs(float(b.tau) - tau))
        half, gap = (float(nearest.high) - float(nearest.low)) / 2, tau - float(nearest.tau)
        where = ("at the nearest median" if fmt(abs(gap), 2) == fmt(0.0, 2) else
                 f"{fmt(abs(gap), 2)} {'below' if gap < 0 else 'above'} the nearest median")
        # The word is read from the two figures the sentence prints (two decimals), so two comparisons
        # printed with the same gap and half-width get the same word.
        shown_gap, shown_half = float(fmt(abs(gap), 2)), float(fmt(half, 2))
        word = noise_size_word(shown_gap, shown_half) if shown_half > 0 else noise_size_word(gap, half) if half else ""
        size = f" (a {word} gap: {where}, beside a half-width of {fmt(half, 2)})" if half else ""
        if tau >= 1:
            return f"{cap(name)} keeps the order exactly (τ_b = 1): no pair is reordered, whatever the noise. "
        if not inside and not above:
            return (f"{cap(name)} lies below the central {share} of {every}: the two rankings differ "
                    f"by more than resampling the seeds and test images moves one of them{size}. ")
        if not inside and not below:
            return (f"{cap(name)} lies above the central {share} of {every}: the two rankings agree "
                    "more closely than two draws of one ranking do, so no reordering beyond the ranking's own "
                    "noise is seen. ")
        beside = (f" (below those of {and_list(below)})" if below else "") + \
            (f" (above those of {and_list(above)})" if above else "")
        return (f"{cap(name)} lies inside the central {share} of the bootstrap draws of "
                f"{and_list(inside)}{beside}: this run cannot tell that reordering apart from the sampling "
                f"noise of {'that ranking' if len(inside) == 1 else 'those rankings'}{size}. ")

    # Comparisons printed with the same τ_b and the same verdict are one statement (no verbatim twins).
    groups: list[tuple[list[str], object, str]] = []
    for r in averaged:
        key = verdict(r, "\0") if boots else ""
        match = next((g for g in groups if fmt(float(g[1].tau), 3) == fmt(float(r.tau), 3) and g[2] == key
                      and _base(g[0][0]) is not None and _base(g[0][0]) == _base(str(r.comparison))), None)
        if match is None:
            groups.append(([str(r.comparison)], r, key))
        else:
            match[0].append(str(r.comparison))
    text = cap("; ".join(f"{_merged_name(names)}: τ_b = {fmt(float(r.tau), 3)}" for names, r, _ in groups)) + \
        " (rankings averaged over seeds). "
    if boots:
        text += "Two independent bootstrap draws of the same ranking (seeds and test images resampled) agree at " + \
            and_list([f"a median τ_b of {fmt(float(r.tau), 2)} for {r.comparison} (central {share} of "
                      f"{int(r.n_pairs)} draw pairs {_tau_range(r, True, digits)})" for r in boots]) + ". "
    if seeds:
        text += "Two seeds scored one at a time agree at " + and_list(
            [f"a mean τ_b of {fmt(float(r.tau), 2)} for {r.comparison} ({_tau_range(r, False)} over "
             f"{int(r.n_pairs)} seed pair{'s' if int(r.n_pairs) != 1 else ''})" for r in seeds]) + ". "
    else:
        text += "This run has a single seed, so no seed-redraw baseline can be measured. "
    if boots:
        for names, r, _ in groups:
            text += verdict(r, _merged_name(names))
    else:
        text += "No bootstrap draws were given, so the averaged τ_b cannot be read against the sampling noise. "
    if seeds:
        s_low, s_high = min(float(r.low) for r in seeds), max(float(r.high) for r in seeds)
        for r in one_seed:
            head = (f"On one-seed rankings of different seeds, {r.comparison} gives a mean τ_b of {fmt(float(r.tau), 2)} "
                    f"({_tau_range(r, False)} over {int(r.n_pairs)} pairs)")
            if float(r.high) < s_low:
                text += f"{head}, every pair below every seed-redraw pair: beyond the noise of re-running. "
            elif float(r.low) > s_high:
                text += f"{head}, every pair above every seed-redraw pair: no sign of a reordering beyond it. "
            else:
                text += f"{head}, within the seed-redraw range: not told apart from the noise of re-running. "
        if not one_seed:
            text += ("The seed-redraw τ_b compare one-seed rankings, noisier than the averaged rankings above, so "
                     "they overstate the noise of the τ_b compared here. ")
    if not closing:
        return text.rstrip()
    return text + NOISE_LESSON.format(world=world_name(simulated))


#: The lesson every rank comparison against its noise carries, placed once per page.
NOISE_LESSON = ("That a rank comparison means something only beside the test-retest τ_b of the rankings it "
                "compares holds for any benchmark of this design; where this τ_b falls against that noise is a "
                "finding of {world}.")


def draw_ranges(table: "object", rankings: "Sequence[str] | None" = None) -> str:
    """The medians and central ranges of a noise table's bootstrap-draw rows, as a list for a sentence.

    Examples
    --------
    >>> import numpy as np
    >>> from crsbench_lib.scoring.retest import noise_baseline_table
    >>> draw_ranges(noise_baseline_table({"x": 0.5}, {}, {"a": np.linspace(0.6, 0.9, 101)}))
    '0.75 for a (central range [0.61, 0.89])'
    """
    from crsbench_lib.scoring.retest import BOOTSTRAP_DRAW

    rows = [r for r in table.itertuples(index=False) if r.source == BOOTSTRAP_DRAW
            and (rankings is None or r.comparison in rankings)]
    return and_list([f"{fmt(float(r.tau), 2)} for {r.comparison} (central range {_tau_range(r, True)})"
                     for r in rows]) if rows else "no bootstrap draws"


__all__ = ["NOISE_LESSON", "describe_tau_against_noise", "draw_ranges"]
