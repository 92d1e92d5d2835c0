"""The sentences of the transfer chapter: what adaptation changes, and how far the adapters trained.

How far the frozen and adapted top-k sets agree (:func:`describe_overlap`),
and how the LoRA arm's adapters trained (:func:`describe_adapter_training`).
Whether adaptation reorders more than the ranking's own noise is read by the
book's one shared sentence for every rank comparison,
:func:`crsbench_lib.report.sentences.noise.describe_tau_against_noise`. The
chapter's key takeaway is text a lecturer edits, ``book/text/transfer.md``,
rendered from :func:`crsbench_lib.scoring.transfer.transfer_facts`
(:mod:`crsbench_lib.report.text`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import and_list, pair_count, percent
from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, Lesson

if TYPE_CHECKING:
    import pandas as pd


def describe_overlap(frozen: Sequence[str], adapted: Sequence[str]) -> str:
    """How far two top-k sets (e.g. frozen and adapted) agree (not the leading tier, which is a confidence set).

    Examples
    --------
    >>> describe_overlap(["a", "b", "c"], ["a", "c", "d"])
    'The top-3 sets share 2 of 3 members (a, c); b leaves and d enters.'
    """
    first, second = list(frozen), list(adapted)
    shared = [x for x in first if x in second]
    left = [x for x in first if x not in second]
    entered = [x for x in second if x not in first]
    k = max(len(first), len(second))
    if not left and not entered:
        return f"The top-{k} sets are the same {k} encoders ({', '.join(first)})."
    text = f"The top-{k} sets share {len(shared)} of {k} members" + (f" ({', '.join(shared)})" if shared else "")
    moves = []
    if left:
        moves.append(f"{', '.join(left)} {'leaves' if len(left) == 1 else 'leave'}")
    if entered:
        moves.append(f"{', '.join(entered)} {'enters' if len(entered) == 1 else 'enter'}")
    return text + "; " + " and ".join(moves) + "."


def describe_adapter_training(training: "pd.DataFrame") -> str:
    """How the LoRA arm's adapters trained: how many ran the whole budget, how many were still improving, how many never moved.

    Parameters
    ----------
    training : pandas.DataFrame
        :func:`crsbench_lib.report.world.adapter_training` output.

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> from crsbench_lib.report.world import ADAPTER_COLUMNS
    >>> rows = [("a", "derm", 0, 1.0, True, 480, 320, 640, False, False, 1.2, 1.1, 1e-3),
    ...         ("a", "derm", 0, 0.25, True, 640, 640, 640, True, True, 1.3, 1.2, 1e-3),
    ...         ("a", "derm", 0, 0.01, False, 0, 0, 640, False, False, float("nan"), float("nan"), 1e-3)]
    >>> describe_adapter_training(pd.DataFrame(rows, columns=list(ADAPTER_COLUMNS)))
    'Of the 3 adapters of 1 LoRA run, 2 were trained and 1 label-fraction adapter was left frozen (too few validation images for early stopping). Of the 1 trained on all labels, 0 (0 %) ran the whole of the budget of 640 steps and 0 (0 %) were still improving at its end; the median one stopped after 480 steps, its best state at step 320. Among all 2 trained, 1 (50 %) were still improving when the budget ran out and 0 (0 %) never beat the frozen probe they started from.'
    """
    if training.empty:
        return ("This run's manifest holds no step-budget adapter reports (its LoRA cells were computed before "
                "the runner recorded them), so how far the adapters trained is not known here.")
    n = len(training)
    runs = len(training[["encoder", "dataset", "seed"]].drop_duplicates())
    trained = training[training["trained"]]
    frozen = n - len(trained)
    budgets = training["max_steps"].unique()
    budget = f"the budget of {int(budgets[0])} steps" if len(budgets) == 1 else "their step budget"

    def count(k: int, total: int) -> str:
        return f"{k} ({percent(k / total)})" if total else str(k)

    text = f"Of the {n} adapters of {runs} LoRA run{'s' if runs != 1 else ''}, {len(trained)} were trained"
    if frozen:
        text += (f" and {frozen} label-fraction adapter{' was' if frozen == 1 else 's were'} left frozen "
                 "(too few validation images for early stopping)")
    text += "."
    full = trained[trained["label_fraction"] >= 1.0]
    if len(full):
        text += (f" Of the {len(full)} trained on all labels, {count(int(full['hit_cap'].sum()), len(full))} ran "
                 f"the whole of {budget} and {count(int(full['improving_at_end'].sum()), len(full))} "
                 f"were still improving at its end; the median one stopped after {int(full['steps_run'].median())} "
                 f"steps, its best state at step {int(full['best_step'].median())}.")
    if len(trained):
        text += (f" Among all {len(trained)} trained, {count(int(trained['improving_at_end'].sum()), len(trained))} "
                 f"were still improving when the budget ran out and "
                 f"{count(int((trained['best_step'] == 0).sum()), len(trained))} never beat the frozen "
                 "probe they started from.")
    return text


def tau_step(n_encoders: int) -> str:
    """How far one swapped pair moves Kendall's τ_b among ``n_encoders`` (no ties): ``2 / C(n, 2)``.

    Examples
    --------
    >>> tau_step(10)
    'With 10 encoders, one swapped pair moves τ_b by 0.044.'
    """
    pairs = n_encoders * (n_encoders - 1) // 2
    if pairs < 1:
        return ""
    return f"With {n_encoders} encoders, one swapped pair moves τ_b by {2 / pairs:.3f}."


# --- "Is this real?" and the exercise --------------------------------------------------------------------

#: A share of capped adapters from which the step budget, not early stopping, is what ends most of them.
MOST = 0.5


def _swapped_pairs(reversed_pairs: int, tau: float, n: int, ties_note: bool = True) -> str:
    """The counted reversed pairs among ``n`` items in words ("1 swapped pair of 36").

    The count is the facts' (:func:`crsbench_lib.scoring.rank_statistics.reversed_pairs`),
    never inferred from τ_b: with tied pairs τ_b lies between the steps of
    ``2 / pairs``, which ``ties_note`` says.

    Examples
    --------
    >>> _swapped_pairs(1, 0.944, 9), _swapped_pairs(1, 0.9, 9)
    ('1 swapped pair of 36', '1 swapped pair of 36 (tied pairs put τ_b between the steps)')
    """
    pairs = pair_count(n)
    count = int(reversed_pairs)
    text = f"{count} swapped pair{'s' if count != 1 else ''} of {pairs}"
    if ties_note and abs((1 - float(tau)) * pairs / 2 - count) >= 0.05:
        text += " (tied pairs put τ_b between the steps)"
    return text


def adapter_counts(training: "pd.DataFrame") -> dict[str, int]:
    """The counts behind the transfer lessons, from :func:`crsbench_lib.report.world.adapter_training`.

    Returns
    -------
    dict
        ``adapters`` (all), ``frozen`` (label fractions left frozen), ``trained``,
        ``kept_probe`` (trained, never beat the frozen probe), ``full`` (trained on
        all labels), ``full_capped`` (of those, ran the whole budget),
        ``full_improving`` (of those, still improving at the end), ``max_steps``
        (the budget when one, else 0) and ``median_steps`` (of the full-label ones).

    Examples
    --------
    >>> import pandas as pd
    >>> from crsbench_lib.report.world import ADAPTER_COLUMNS
    >>> rows = [("a", "derm", 0, 1.0, True, 480, 320, 480, True, False, 1.2, 1.1, 1e-3),
    ...         ("a", "derm", 0, 0.01, False, 0, 0, 480, False, False, float("nan"), float("nan"), 1e-3)]
    >>> adapter_counts(pd.DataFrame(rows, columns=list(ADAPTER_COLUMNS)))["full_capped"]
    1
    """
    if training.empty:
        return dict.fromkeys(("adapters", "frozen", "trained", "kept_probe", "full", "full_capped",
                              "full_improving", "max_steps", "median_steps"), 0)
    trained = training[training["trained"].astype(bool)]
    full = trained[trained["label_fraction"] >= 1.0]
    budgets = training["max_steps"].unique()
    return {
        "adapters": len(training), "frozen": len(training) - len(trained), "trained": len(trained),
        "kept_probe": int((trained["best_step"] == 0).sum()), "full": len(full),
        "full_capped": int(full["hit_cap"].astype(bool).sum()),
        "full_improving": int(full["improving_at_end"].astype(bool).sum()),
        "max_steps": int(budgets[0]) if len(budgets) == 1 else 0,
        "median_steps": int(full["steps_run"].median()) if len(full) else 0,
    }


def transfer_lessons(tau: float, n_encoders: int, noise: "pd.DataFrame", gain: float,
                     gain_interval: tuple[float, float] | None, training: "pd.DataFrame",
                     top_frozen: Sequence[str], top_adapted: Sequence[str], level: float = 0.95,
                     simulated: bool | None = None, *, reversed_pairs: int) -> list[Lesson]:
    """The transfer chapter's "Is this real?" lessons, decided from the page's numbers.

    Parameters
    ----------
    tau : float
        Frozen against adapted τ_b (full panel, rankings averaged over seeds).
    n_encoders : int
        Candidates ranked in both arms.
    noise : pandas.DataFrame
        :func:`crsbench_lib.scoring.retest.noise_baseline_table` of the page (its
        bootstrap-draw and seed-redraw rows are the test-retest τ_b).
    gain : float
        Mean clean AUROC gain of adaptation.
    gain_interval : (float, float) or None
        Its interval over encoder resamples.
    training : pandas.DataFrame
        :func:`crsbench_lib.report.world.adapter_training` of the chapter's runs (may be empty).
    top_frozen, top_adapted : sequence of str
        The two top-k sets.
    reversed_pairs : int
        The pairs the two arms order oppositely (counted by the facts, never
        inferred from τ_b).
    level : float
        Coverage of the intervals.
    simulated : bool or None
        Whether the run is simulated (the world's words; no lesson names it).

    Returns
    -------
    list of Lesson
        Two of the design (τ_b's steps and its noise; kept probes agree by
        construction) and two of the world (the reordering against the noise,
        with the study's figure; the gain and how far the adapters trained).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from crsbench_lib.scoring.retest import noise_baseline_table
    >>> noise = noise_baseline_table({"f vs a": 0.944}, {"frozen": [0.61, 0.72, 0.78]}, {"frozen": np.linspace(0.56, 1, 101)})
    >>> lessons = transfer_lessons(0.944, 9, noise, 0.005, (0.003, 0.008), pd.DataFrame(), ["a", "b"], ["a", "b"],
    ...                            reversed_pairs=1)
    >>> [lesson.scope for lesson in lessons]
    ['design', 'design', 'world', 'world']
    >>> lessons[0].text[:97]
    'Kendall τ_b among 9 candidates moves in steps of 0.056 (one swapped pair of 36), so 0.944 is 1 sw'
    """
    from crsbench_lib.report.grammar import describe_difference, fmt
    from crsbench_lib.report.sentences.noise import draw_ranges
    from crsbench_lib.scoring.retest import tau_against_draws
    from crsbench_lib.scoring.published import PUBLISHED
    from crsbench_lib.scoring.retest import SEED_REDRAW

    n = int(n_encoders)
    value = float(tau)
    lessons = [Lesson(DESIGN, (
        f"Kendall τ_b among {n} candidates moves in steps of {2 / max(pair_count(n), 1):.3f} (one swapped pair of "
        f"{pair_count(n)}), so {fmt(value, 3)} is {_swapped_pairs(reversed_pairs, value, n)}. Whether that is a reordering is read "
        "against the τ_b that two replicates of one ranking reach (two bootstrap draws, two seeds), never from "
        "the τ_b alone."))]
    counts = adapter_counts(training)
    rule = ("An adapter that never beats the frozen probe on validation keeps the probe, and a label fraction "
            "with too few validation images stays frozen: for those the two arms are one model and agree by "
            "construction, which pulls a frozen-against-adapted τ_b towards 1")
    if not counts["adapters"]:
        lessons.append(Lesson(DESIGN, rule + ". This run's manifest has no adapter reports, so how many did is "
                                             "not known here."))
    elif counts["kept_probe"] or counts["frozen"]:
        lessons.append(Lesson(DESIGN, rule + (
            f". Here {counts['kept_probe']} of {counts['trained']} trained adapters "
            f"({percent(counts['kept_probe'] / counts['trained']) if counts['trained'] else '0 %'}) kept the probe "
            f"and {counts['frozen']} of {counts['adapters']} adapters stayed frozen.")))
    else:
        lessons.append(Lesson(DESIGN, rule + ". Here none did: every adapter was trained and moved from the probe, "
                                             "so no pair agrees by construction."))

    where = tau_against_draws(value, noise)
    seeds = [r for r in noise.itertuples(index=False) if r.source == SEED_REDRAW]
    seed_text = ("; two seeds scored one at a time agree at a mean of " + and_list([fmt(float(r.tau), 2) for r in seeds])
                 if seeds else "")
    same_top = set(top_frozen) == set(top_adapted)
    top = (f"the top {len(top_frozen)} is the same in both arms" if same_top else
           f"the top {max(len(top_frozen), len(top_adapted))} differs between the arms")
    draws = (f" Two bootstrap draws of one ranking agree at a median τ_b of {draw_ranges(noise)}{seed_text}."
             if where != "none" else f" This run has no bootstrap draws of either ranking{seed_text}.")
    head = f"Frozen against adapted, τ_b is {fmt(value, 3)} and {top}.{draws} The frozen-against-adapted τ_b lies"
    verdict = {
        "inside": (" inside the draws' central range: adaptation reorders these candidates no more than re-measuring "
                   "one ranking does. Expect a reordering beyond that noise only where adaptation changes the encoders "
                   "more (more trainable layers, larger images, more data)."),
        "below": (" below the draws' central range: adaptation reorders these candidates more than re-measuring one "
                  "ranking does, so here a frozen-probe ranking does not carry over to the adapted encoders."),
        "above": (" above the draws' central range: the arms agree more closely than two draws of one ranking, as they "
                  "do when adaptation changes the encoders little and the arms share seeds, test images and kept probes."),
        "between": (" between the rankings' central ranges (below one, above the other), so the verdict depends on "
                    "which arm's noise it is read against."),
        "none": " beside no draws of an averaged ranking, so there is no like-for-like test-retest range to read it against.",
    }[where]
    study = (f"τ_b {PUBLISHED.lora_frozen_vs_adapted_kendall_tau:.3f} frozen vs adapted over {PUBLISHED.lora_runs} "
             f"LoRA runs, {'the same' if PUBLISHED.lora_same_top3 else 'a different'} top 3; it reports no "
             "test-retest τ_b to read it against.")
    lessons.append(Lesson(WORLD, head + verdict, study=study))

    change = describe_difference(float(gain), "Adaptation", "the mean clean AUROC", better="higher",
                                 interval=gain_interval, level=level)
    if not counts["full"]:
        budget = (" How far the adapters trained is not recorded for the full-label adapters of this run, so "
                  "whether the step budget limited the gain is not known here.")
    else:
        capped = counts["full_capped"] / counts["full"]
        cap = f"the {counts['max_steps']}-step cap" if counts["max_steps"] else "their step cap"
        budget = (f" Of the {counts['full']} adapters trained on all labels, {counts['full_capped']} "
                  f"({percent(capped)}) hit {cap} and {counts['full_improving']} were still improving there; the "
                  f"median one stopped after {counts['median_steps']} steps.")
        budget += (" Most stopped early on validation, before the cap, so the size of the gain is what these "
                   "adapters reach on these data, not a budget cut short: a larger budget would change few of them."
                   if capped < MOST else
                   " Most ran into the cap, so the gain is partly the budget's: a larger budget may gain more, and "
                   "reorder more.")
    lessons.append(Lesson(WORLD, change + budget))
    return lessons


def transfer_exercise_top_k(ranks: "pd.DataFrame", k: int) -> str:
    """The solution of the exercise "compare the top k": the two top-k sets, and every k at which they differ.

    Parameters
    ----------
    ranks : pandas.DataFrame
        :func:`crsbench_lib.scoring.transfer.rank_comparison` (``encoder, crs_frozen, crs_lora``).
    k : int
        The exercise's top-k size.

    Returns
    -------
    str
        Markdown: the overlap at ``k``, the reordered pairs and the sizes at
        which a top-k set changes, and what that says about top-k overlap.

    Examples
    --------
    >>> import pandas as pd
    >>> ranks = pd.DataFrame({"encoder": list("abcde"), "crs_frozen": [5, 4, 3, 2, 1], "crs_lora": [5, 4, 2, 3, 1]})
    >>> print(transfer_exercise_top_k(ranks, 3))  # doctest: +NORMALIZE_WHITESPACE
    In this build, with k = 3: the top-3 sets share 2 of 3 members (a, b); c leaves and d enters.
    Adaptation reorders 1 of 10 pairs of the 5 candidates (c and d), and a top-k set changes only where k cuts
    between the two members of a reordered pair: here at k = 3 and at no other k from 1 to 4. A top-k overlap
    therefore reads the reordering at one cut only, so it can change with a single swap at the boundary or stay
    the same over many swaps away from it; τ_b counts every swapped pair.
    """
    from itertools import combinations

    if not 1 <= int(k) < len(ranks):
        raise ValueError(f"k must lie between 1 and {len(ranks) - 1}, got {k!r}")
    frozen = ranks.sort_values(["crs_frozen", "encoder"], ascending=[False, True])["encoder"].astype(str).tolist()
    adapted = ranks.sort_values(["crs_lora", "encoder"], ascending=[False, True])["encoder"].astype(str).tolist()
    n = len(frozen)
    where = [j for j in range(1, n) if set(frozen[:j]) != set(adapted[:j])]
    position = {name: i for i, name in enumerate(adapted)}
    swapped = [(a, b) for a, b in combinations(frozen, 2) if position[a] > position[b]]
    overlap = describe_overlap(frozen[:k], adapted[:k])
    text = f"In this build, with k = {k}: {overlap[:1].lower()}{overlap[1:]}"
    if not swapped:
        return text + (f" Adaptation reorders none of the {pair_count(n)} pairs of the {n} candidates, so the top-k sets "
                       f"are the same for every k from 1 to {n - 1}: a top-k overlap can only differ where some pair "
                       "is reordered, and τ_b is then 1.")
    pairs = "; ".join(f"{a} and {b}" for a, b in swapped[:4]) + (
        f"; and {len(swapped) - 4} more" if len(swapped) > 4 else "")
    at = ("at every k" if len(where) == n - 1 else f"at k = {and_list([str(j) for j in where])} and at no other k")
    return text + (
        f" Adaptation reorders {len(swapped)} of {pair_count(n)} pairs of the {n} candidates ({pairs}), and a top-k set "
        "changes only where k cuts between the two members of a reordered pair: here "
        f"{at} from 1 to {n - 1}. A top-k overlap therefore reads the reordering at one cut only, so it can "
        "change with a single swap at the boundary or stay the same over many swaps away from it; τ_b counts every "
        "swapped pair.")
