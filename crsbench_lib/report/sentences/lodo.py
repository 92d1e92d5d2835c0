"""The sentences of the leave-one-dataset-out chapter: which profile predicts a held-out ranking, against its noise.

:func:`describe_predictors` says whether the CRS or AUROC ranks encoders closer
to a held-out target, and claims a winner only where the interval of the
difference allows one. For the encoders to which the held-out domain is new
(:mod:`crsbench_lib.scoring.lodo_new_domain`), :func:`describe_new_domain_encoders`
says who they are and whether there are enough of them for a rank statistic,
:func:`describe_new_domain_findings` reads the new-domain tables in two
sentences, and :func:`describe_held_out_noise` the held-out rankings' noise
baseline (:func:`held_out_noise_summary`) in one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import (
    CLOSE_CORRELATION,
    NO_DIRECTION,
    and_list,
    describe_interval,
    fmt,
    format_interval,
    interval_excludes_zero,
    pair_count,
    value_range,
)
from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, Lesson, world_name

if TYPE_CHECKING:
    import pandas as pd


def describe_predictors(crs_tau: float, auroc_tau: float, target: str = "the held-out AUROC ranking",
                        tolerance: float = CLOSE_CORRELATION, where: str | None = None,
                        interval: tuple[float, float] | None = None, level: float = 0.95,
                        statistic: str = "mean τ_b") -> str:
    """Which of two predictors (CRS, AUROC) ranks encoders closer to a target, or that the data cannot tell.

    Parameters
    ----------
    crs_tau, auroc_tau : float
        Each predictor's (mean) Kendall tau-b with the target.
    target : str
        What is predicted, in words.
    tolerance : float
        Without an interval: taus closer than this are "about equally well".
    where : str, optional
        A place or condition that opens the sentence ("On the second site").
    interval : (float, float), optional
        An interval of ``crs_tau - auroc_tau`` (e.g.
        :func:`crsbench_lib.scoring.lodo.tau_difference`). When given, it
        decides the claim: a winner only when the interval excludes zero on the
        side of the point difference, and no claim when it contains zero, lies
        on the other side of zero from the point, or is undefined (NaN).
    level : float
        The interval's coverage.
    statistic : str
        The name of the taus ("mean τ_b" over several held-out datasets, "τ_b"
        for one).

    Examples
    --------
    >>> describe_predictors(0.4, 0.6)
    'AUROC predicts the held-out AUROC ranking better than the CRS (mean τ_b 0.600 against 0.400).'
    >>> describe_predictors(0.5, 0.5, interval=(0.0, 0.0), statistic="τ_b")
    'The CRS and AUROC predict the held-out AUROC ranking equally well (τ_b 0.500 for both; the difference is exactly 0 across the central 95 % of resamples).'
    >>> describe_predictors(0.84, 0.91, interval=(-0.15, 0.02), statistic="τ_b")
    'The data cannot tell whether the CRS or AUROC predicts the held-out AUROC ranking better (τ_b 0.840 for the CRS and 0.910 for AUROC; the difference (CRS minus AUROC) is -0.070, its 95 % interval [-0.150, 0.020] includes zero).'
    """
    c, a = float(crs_tau), float(auroc_tau)
    if not (math.isfinite(c) and math.isfinite(a)):
        undefined = [name for name, value in (("the CRS", c), ("AUROC", a)) if not math.isfinite(value)]
        text = (f"whether the CRS or AUROC predicts {target} better cannot be said: the {statistic} of "
                f"{and_list(undefined)} is undefined (the predictor or the target is constant on every block).")
    elif interval is not None and not all(math.isfinite(float(end)) for end in interval):
        text = (f"the data cannot tell whether the CRS or AUROC predicts {target} better ({statistic} {fmt(c, 3)} "
                f"for the CRS and {fmt(a, 3)} for AUROC; no resample defines both taus, so there is no interval).")
    elif interval is not None and float(interval[0]) == 0.0 == float(interval[1]) and c == a:
        # The central resamples all tie: no difference to test, and "cannot tell" would mislead.
        text = (f"the CRS and AUROC predict {target} equally well ({statistic} {fmt(c, 3)} for both; the difference "
                f"is exactly 0 across the central {level * 100:g} % of resamples).")
    elif interval is not None:
        low, high = interval
        # The sentence itself says when the data cannot tell; the interval need not repeat it.
        span = describe_interval(low, high, level=level).removesuffix(NO_DIRECTION)
        difference = f"the difference (CRS minus AUROC) is {fmt(c - a, 3)}, {span}"
        against_point = (low > 0 and c - a <= 0) or (high < 0 and c - a >= 0)
        if interval_excludes_zero(low, high) and against_point:
            # A biased resampling can put the interval on the other side of the point: claim nothing.
            text = (f"the data cannot tell whether the CRS or AUROC predicts {target} better ({statistic} "
                    f"{fmt(c, 3)} for the CRS and {fmt(a, 3)} for AUROC; {difference}, on the other side of "
                    f"zero from the point, so the resampling is biased here).")
        elif interval_excludes_zero(low, high):
            winner, loser = ("the CRS", "AUROC") if low > 0 else ("AUROC", "the CRS")
            text = (f"{winner} predicts {target} better than {loser} ({statistic} {fmt(c, 3)} for the CRS and "
                    f"{fmt(a, 3)} for AUROC; {difference}).")
        else:
            text = (f"the data cannot tell whether the CRS or AUROC predicts {target} better ({statistic} "
                    f"{fmt(c, 3)} for the CRS and {fmt(a, 3)} for AUROC; {difference}).")
    elif abs(c - a) < tolerance:
        text = f"the CRS and AUROC predict {target} about equally well ({statistic} {fmt(c, 3)} and {fmt(a, 3)})."
    else:
        winner, loser = ("the CRS", "AUROC") if c > a else ("AUROC", "the CRS")
        hi, lo = max(c, a), min(c, a)
        text = f"{winner} predicts {target} better than {loser} ({statistic} {fmt(hi, 3)} against {fmt(lo, 3)})."
    if where:
        return f"{where}, {text}"
    return text[:1].upper() + text[1:]


#: A τ_b is read as a ranking statistic only when one swapped pair moves it by at most this much
#: (7 or more untied encoders; 4 encoders give steps of 0.333, 5 of 0.2). A design choice, stated on the page.
MAX_TAU_STEP = 0.1
#: How each target of the new-domain analysis is named in a sentence.
NEW_DOMAIN_TARGETS: dict[str, str] = {"crs": "the held-out CRS", "auroc": "the held-out AUROC"}
_PREDICTOR_NAMES: dict[str, str] = {"crs": "the CRS on the other datasets", "auroc": "AUROC on the other datasets"}


def _step(n_encoders: int) -> float:
    pairs = int(n_encoders) * (int(n_encoders) - 1) // 2
    return 2.0 / pairs if pairs >= 1 else float("nan")


def describe_new_domain_encoders(membership: "pd.DataFrame", families: Mapping[str, str] | None = None) -> str:
    """Which encoders each held-out domain is new to, how many, and what one swapped pair is worth among them.

    Parameters
    ----------
    membership : pandas.DataFrame
        :func:`crsbench_lib.scoring.lodo_new_domain.new_domain_membership`.
    families : mapping of str to str, optional
        Encoder -> a family word ("classical", "random", "narrow"): the
        sentence then counts the new-domain encoders by family.

    Returns
    -------
    str
        One sentence per held-out dataset; a count too small for τ_b
        (one swapped pair moving it by more than :data:`MAX_TAU_STEP`) is said
        to be too small, with the number.

    Examples
    --------
    >>> import pandas as pd
    >>> m = pd.DataFrame({"held_out": "derm", "domain": "dermatology", "encoder": list("abcd"),
    ...                   "seen": ["dermatology", "none", "none", "radiology"], "new": [False, True, True, True]})
    >>> describe_new_domain_encoders(m)
    'Held out derm (dermatology), 3 of 4 encoders never saw its domain (b, c and d); the other 1 was pretrained or fitted on images of it. Among 3 encoders one swapped pair moves τ_b by 0.667: too few for τ_b to mean much as a ranking statistic (it needs a step of at most 0.1, 7 or more encoders).'
    """
    sentences = []
    for (held_out, domain), rows in membership.groupby(["held_out", "domain"], sort=True):
        new = sorted(rows.loc[rows["new"].astype(bool), "encoder"].astype(str))
        n, k = len(rows), len(new)
        other = n - k
        text = (f"Held out {held_out} ({domain}), {k} of {n} encoders never saw its domain"
                + (f" ({and_list(new)})" if new else "")
                + (f"; the other {other} {'was' if other == 1 else 'were'} pretrained or fitted on images of it."
                   if other else "."))
        step = _step(k)
        if not math.isfinite(step):
            text += f" With {k} encoder{'s' if k != 1 else ''} there is no pair to rank, so no τ_b."
        elif step > MAX_TAU_STEP:
            text += (f" Among {k} encoders one swapped pair moves τ_b by {step:.3f}: too few for τ_b to mean much as "
                     f"a ranking statistic (it needs a step of at most {MAX_TAU_STEP:g}, 7 or more encoders).")
        else:
            text += f" Among {k} encoders one swapped pair moves τ_b by {step:.3f}."
        sentences.append(text)
    if families:
        new_any = sorted(set(membership.loc[membership["new"].astype(bool), "encoder"].astype(str)))
        counts: dict[str, int] = {}
        for name in new_any:
            counts[families.get(name, "unknown")] = counts.get(families.get(name, "unknown"), 0) + 1
        by_family = and_list([f"{v} of the {k} family" for k, v in sorted(counts.items())])
        sentences.append(f"Over all held-out datasets, {len(new_any)} distinct encoder{'s are' if len(new_any) != 1 else ' is'} "
                         f"new to some held-out domain: {by_family}.")
    return " ".join(sentences)


def _difference_verdict(diff: object) -> str:
    """A paired interval of CRS minus AUROC, in a few words: which predictor it favours, or that it cannot tell."""
    low, high, point = float(diff.ci_low), float(diff.ci_high), float(diff.estimate)
    if not all(math.isfinite(v) for v in (low, high, point)):
        return "undefined"
    if not interval_excludes_zero(low, high):
        return "includes zero"
    if (point > 0) != (low > 0):
        return "lies on the other side of zero from the point"
    return "favours the CRS" if low > 0 else "favours AUROC"


def describe_new_domain_findings(summary: "pd.DataFrame", diffs: "Mapping[str, object]", level: float = 0.95,
                                 n_draws: int | None = None) -> str:
    """The new-domain finding in two sentences read from its two tables and the paired differences.

    The first counts the comparisons (held-out dataset, target, predictor) whose
    one-seed prediction pairs all fall below the target's test-retest pairs,
    and names the others; the second gives, per target, the mean difference
    CRS minus AUROC with its paired interval and what the interval says.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`crsbench_lib.scoring.lodo_new_domain.new_domain_summary`.
    diffs : mapping of str to TauDifference
        Target -> :func:`crsbench_lib.scoring.lodo.tau_difference` over the held-out datasets.
    level : float
        Coverage of the intervals.
    n_draws : int, optional
        Paired encoder resamples behind them (named when given).

    Examples
    --------
    >>> import pandas as pd
    >>> from crsbench_lib.scoring.lodo import TauDifference
    >>> summary = pd.DataFrame({"held_out": ["a", "a", "b", "b"], "target": "crs", "predictor": ["crs", "auroc"] * 2,
    ...     "retest_min": [0.83, 0.83, 0.67, 0.67], "retest_max": [0.94, 0.94, 0.83, 0.83], "retest_pairs": 3,
    ...     "one_seed_min": [0.67, 0.44, 0.28, 0.39], "one_seed_max": [0.83, 0.67, 0.5, 0.61], "one_seed_pairs": 6})
    >>> diff = TauDifference("crs", "auroc", 0.478, 0.433, 0.044, -0.118, 0.225, 0.95, 1000, 9, 2)
    >>> print(describe_new_domain_findings(summary, {"crs": diff}, n_draws=1000))  # doctest: +NORMALIZE_WHITESPACE
    In 3 of 4 comparisons (held-out dataset, target, predictor) every one-seed prediction pair falls below every
    test-retest pair of the target, so the change of dataset costs the prediction more than a new seed; the exception
    is a: the held-out CRS predicted by the CRS (the ranges overlap). Over 2 held-out datasets the difference of mean τ_b
    (CRS minus AUROC) is 0.044 for the held-out CRS (95 % interval [-0.118, 0.225]): it includes zero, so the data
    cannot tell which predictor ranks the encoders new to a domain better (1000 paired encoder resamples).
    """
    measured = summary[(summary["retest_pairs"] > 0) & (summary["one_seed_pairs"] > 0)]
    names = {"crs": "the CRS", "auroc": "AUROC"}
    if measured.empty:
        first = "No comparison has a test-retest baseline (a single seed), so no prediction is read against its target's noise."
    else:
        below = measured["one_seed_max"] < measured["retest_min"]
        above = measured["one_seed_min"] > measured["retest_max"]

        def which(rows: "pd.DataFrame") -> str:
            return "; ".join(f"{r.held_out}: {NEW_DOMAIN_TARGETS.get(r.target, r.target)} predicted by "
                             f"{names.get(r.predictor, r.predictor)}" for r in rows.itertuples(index=False))

        n, k = len(measured), int(below.sum())
        head = ("In all" if k == n else f"In {k} of") + f" {n} comparisons (held-out dataset, target, predictor)"
        if k == 0:
            first = (f"In none of the {n} comparisons (held-out dataset, target, predictor) does every one-seed "
                     "prediction pair fall below every test-retest pair of the target: this run cannot tell a "
                     "prediction's error from its target's seed noise.")
        else:
            first = (f"{head} every one-seed prediction pair falls below every test-retest pair of the target, so "
                     "the change of dataset costs the prediction more than a new seed")
            overlap, over = measured[~below & ~above], measured[above]
            rest = ([f"{which(overlap)} (the ranges overlap)"] if len(overlap) else []) + \
                ([f"{which(over)} (every prediction pair above every test-retest pair: chance)"] if len(over) else [])
            if rest:
                first += f"; the exception{'s are' if n - k > 1 else ' is'} " + "; ".join(rest)
            first += "."
    # A difference without a finite estimate or interval (too few encoders new to a domain for the resamples to
    # vary) is no evidence either way: say so instead of formatting NaN.
    usable = {t: d for t, d in diffs.items()
              if all(math.isfinite(float(v)) for v in (d.estimate, d.ci_low, d.ci_high))}
    if diffs and not usable:
        return first + (" Too few encoders are new to a held-out domain for a paired interval of the CRS minus "
                        "AUROC difference, so this run cannot compare the two predictors on new domains.")
    diffs = usable
    if not diffs:
        return first
    verdicts = {target: _difference_verdict(diff) for target, diff in diffs.items()}
    undecided = set(verdicts.values()) == {"includes zero"}
    clauses = [f"{fmt(float(diff.estimate), 3)} for {NEW_DOMAIN_TARGETS.get(target, target)} ({level * 100:g} % "
               f"interval {format_interval(float(diff.ci_low), float(diff.ci_high))})"
               + ("" if undecided else f", which {verdicts[target]}") for target, diff in diffs.items()]
    blocks = max(int(diff.n_blocks) for diff in diffs.values())
    draws = f" ({int(n_draws)} paired encoder resamples)" if n_draws else ""
    second = f" Over {blocks} held-out datasets the difference of mean τ_b (CRS minus AUROC) is {and_list(clauses)}"
    if undecided:
        it = "it includes" if len(diffs) == 1 else "every interval includes"
        second += f": {it} zero, so the data cannot tell which predictor ranks the encoders new to a domain better{draws}."
    else:
        second += (f"{draws}: a predictor is better only where its interval favours it, excluding zero on the side "
                   "of the point.")
    return first + second


def _median_range(medians: list[float]) -> str:
    """The bootstrap medians as a range, or one value when they agree at the shown precision.

    Examples
    --------
    >>> _median_range([0.941, 0.944]), _median_range([0.91, 0.95])
    ('median 0.94 on every dataset', 'medians 0.91 to 0.95')
    """
    low, high = fmt(min(medians), 2), fmt(max(medians), 2)
    return f"median {low} on every dataset" if low == high else f"medians {low} to {high}"


def _held_out_places(noise: "pd.DataFrame") -> tuple[list[str], list[float], list[float]]:
    """Where each held-out τ_b (rankings averaged over seeds) falls against its held-out ranking's bootstrap draws.

    Parameters
    ----------
    noise : pandas.DataFrame
        :func:`crsbench_lib.scoring.lodo_new_domain.held_out_noise_table` (one block per held-out dataset).

    Returns
    -------
    (list of str, list of float, list of float)
        Per observed τ_b its place (:func:`crsbench_lib.scoring.retest.tau_against_draws`:
        "below", "inside", "above", "between" or "none"); the bootstrap-draw medians; the observed τ_b.

    Examples
    --------
    >>> import numpy as np
    >>> from crsbench_lib.scoring.retest import noise_baseline_table
    >>> block = noise_baseline_table({"x": 0.3, "y": 0.9}, {}, {"r": np.linspace(0.8, 1, 101)}).assign(held_out="d")
    >>> _held_out_places(block)[0]
    ['below', 'inside']
    """
    from crsbench_lib.scoring.retest import tau_against_draws
    from crsbench_lib.scoring.retest import AVERAGED, BOOTSTRAP_DRAW, OBSERVED

    places: list[str] = []
    medians: list[float] = []
    observed: list[float] = []
    if noise.empty or "held_out" not in noise.columns:
        return places, medians, observed
    for _, block in noise.groupby("held_out", sort=True):
        medians += [float(v) for v in block.loc[block["source"] == BOOTSTRAP_DRAW, "tau"]]
        for row in block[(block["source"] == OBSERVED) & (block["rankings"] == AVERAGED)].itertuples(index=False):
            observed.append(float(row.tau))
            places.append(tau_against_draws(float(row.tau), block))
    return places, medians, observed


def held_out_noise_summary(noise: "pd.DataFrame") -> "pd.DataFrame":
    """One row per held-out τ_b beside its held-out ranking's noise: the page's table of the noise baseline.

    ``tau`` (rankings averaged over seeds) against ``draw_low``, ``draw_high``
    (the central range of two bootstrap draws of the held-out ranking) and
    ``gap`` (``tau`` less their median); ``one_seed_max`` (the best pair of a
    one-seed prediction against the held-out ranking on another seed) against
    ``redraw_min`` (the worst pair of the held-out ranking on two seeds). NaN
    where the table has no such row.

    Examples
    --------
    >>> import numpy as np
    >>> from crsbench_lib.scoring.retest import noise_baseline_table
    >>> block = noise_baseline_table({"CRS without d against AUROC on d": 0.6}, {"r": [0.9, 0.95]},
    ...     {"r": np.linspace(0.9, 1.0, 101)}, one_seed={"CRS without d against AUROC on d": [0.5, 0.7]}).assign(held_out="d")
    >>> held_out_noise_summary(block).round(3).values.tolist()
    [['d', 'CRS', 0.6, 0.903, 0.998, -0.35, 0.7, 0.9]]
    """
    import pandas as pd

    from crsbench_lib.scoring.retest import AVERAGED, BOOTSTRAP_DRAW, OBSERVED, ONE_SEED_OTHER, SEED_REDRAW

    columns = ["held_out", "predictor", "tau", "draw_low", "draw_high", "gap", "one_seed_max", "redraw_min"]
    rows = []
    for held_out, block in (noise.groupby("held_out", sort=True) if len(noise) else []):
        boot = block[block["source"] == BOOTSTRAP_DRAW]
        redraw = block[block["source"] == SEED_REDRAW]
        for r in block[(block["source"] == OBSERVED) & (block["rankings"] == AVERAGED)].itertuples(index=False):
            one = block[(block["source"] == OBSERVED) & (block["rankings"] == ONE_SEED_OTHER)
                        & (block["comparison"] == r.comparison)]
            rows.append({"held_out": held_out, "predictor": str(r.comparison).split(" without ")[0],
                         "tau": float(r.tau),
                         "draw_low": float(boot["low"].min()) if len(boot) else math.nan,
                         "draw_high": float(boot["high"].max()) if len(boot) else math.nan,
                         "gap": float(r.tau) - float(boot["tau"].iloc[0]) if len(boot) else math.nan,
                         "one_seed_max": float(one["high"].max()) if len(one) else math.nan,
                         "redraw_min": float(redraw["low"].min()) if len(redraw) else math.nan})
    return pd.DataFrame(rows, columns=columns)


def describe_held_out_noise(noise: "pd.DataFrame", level: float = 0.95, simulated: bool | None = None) -> str:
    """The noise baseline of the held-out rankings in one sentence, read from :func:`held_out_noise_summary`.

    Followed by the lesson every rank comparison against its noise carries
    (:data:`crsbench_lib.report.sentences.noise.NOISE_LESSON`), once on the page.

    Examples
    --------
    >>> import numpy as np
    >>> from crsbench_lib.scoring.retest import noise_baseline_table
    >>> block = noise_baseline_table({"CRS without d against AUROC on d": 0.6, "AUROC without d against AUROC on d": 0.7},
    ...     {"r": [0.9, 0.95]}, {"r": np.linspace(0.9, 1.0, 101)},
    ...     one_seed={"CRS without d against AUROC on d": [0.5, 0.6], "AUROC without d against AUROC on d": [0.6, 0.8]}
    ...     ).assign(held_out="d")
    >>> print(describe_held_out_noise(block).split(" That")[0])  # doctest: +NORMALIZE_WHITESPACE
    Both held-out τ_b (each predictor on each held-out dataset, 0.600 to 0.700) lie below the central 95 % of two
    bootstrap draws of their held-out AUROC ranking, 0.25 to 0.35 below its median, and for both every one-seed
    prediction pair lies below every seed-redraw pair: a change of dataset costs either predictor more than
    re-measuring the held-out dataset does.
    """
    from crsbench_lib.report.sentences.noise import NOISE_LESSON

    table = held_out_noise_summary(noise)
    lesson = " " + NOISE_LESSON.format(world=world_name(simulated))
    if table.empty:
        return "This run has no noise baseline of the held-out rankings." + lesson
    n = len(table)
    taus = f"each predictor on each held-out dataset, {value_range(list(table['tau']), 3)}"
    if table["draw_low"].isna().all():
        return f"The {n} held-out τ_b ({taus}) have no bootstrap draws of their held-out ranking to be read against." + lesson
    below = table["tau"] < table["draw_low"]
    above = table["tau"] > table["draw_high"]
    k = int(below.sum())
    gaps = [abs(g) for g in table.loc[below, "gap"]]
    if k == n:
        where = (f"{'Both' if n == 2 else f'All {n}'} held-out τ_b ({taus}) lie below the central {level * 100:g} % of two bootstrap draws of "
                 f"their held-out AUROC ranking, {value_range(gaps, 2)} below its median")
    else:
        rest = [f"{n - k - int(above.sum())} inside"] + ([f"{int(above.sum())} above"] if above.any() else [])
        where = (f"Of the {n} held-out τ_b ({taus}), {k} {'lies' if k == 1 else 'lie'} below the central {level * 100:g} % of two bootstrap "
                 f"draws of their held-out AUROC ranking and {and_list(rest)}")
    seeded = table.dropna(subset=["one_seed_max", "redraw_min"])
    j = int((seeded["one_seed_max"] < seeded["redraw_min"]).sum())
    if seeded.empty:
        seeds = ", with no seed-redraw baseline (a single seed)"
    else:
        count = ("both" if len(seeded) == 2 else f"all {len(seeded)}") if j == len(seeded) else f"{j} of {len(seeded)}"
        seeds = (f", and for {count} every one-seed prediction pair "
                 "lies below every seed-redraw pair")
    if k == n:
        end = ": a change of dataset costs either predictor more than re-measuring the held-out dataset does."
    elif k == 0:
        end = ": neither prediction falls short of the held-out ranking's own noise here."
    else:
        end = ": where a τ_b lies below, the change of dataset costs more than that noise; inside, it cannot be told from it."
    return where + seeds + end + lesson


def _noise_takeaway(noise: "pd.DataFrame | None") -> str:
    """How many held-out τ_b fall below, inside or above their held-out ranking's bootstrap noise ("" without draws).

    Examples
    --------
    >>> import numpy as np
    >>> from crsbench_lib.scoring.retest import noise_baseline_table
    >>> block = noise_baseline_table({"x": 0.3, "y": 0.9}, {}, {"r": np.linspace(0.8, 1, 101)}).assign(held_out="d")
    >>> _noise_takeaway(block)
    ' Of the 2 held-out τ_b, 1 falls below the agreement of two bootstrap draws of the held-out ranking, 1 within it.'
    """
    places = [p for p in _held_out_places(noise)[0] if p != "none"] if noise is not None else []
    if not places:
        return ""
    total = len(places)
    below, inside, above = (places.count(p) for p in ("below", "inside", "above"))
    reach = "the agreement of two bootstrap draws of the held-out ranking"
    if below == total:
        return f" All {total} held-out τ_b fall below {reach}: a new dataset costs more than re-measuring."
    if below == 0:
        return f" None of the {total} held-out τ_b falls below {reach}: a new dataset costs no more than re-measuring."
    rest = [f"{inside} within it"] + ([f"{above} above"] if above else [])
    return (f" Of the {total} held-out τ_b, {below} {'falls' if below == 1 else 'fall'} below {reach}, "
            f"{and_list(rest)}.")


def lodo_takeaway(crs_tau: float, auroc_tau: float, interval: tuple[float, float], n_blocks: int,
                  noise: "pd.DataFrame | None" = None, level: float = 0.95) -> str:
    """The leave-one-dataset-out chapter's key takeaway: which predictor of a new dataset's ranking, against noise.

    The verdict is :func:`describe_predictors`'s: a better predictor only when
    the paired interval of the difference excludes zero on the side of the
    point difference.

    Parameters
    ----------
    crs_tau, auroc_tau : float
        Mean held-out τ_b of the CRS and of AUROC on the other datasets.
    interval : (float, float)
        The paired encoder-bootstrap interval of their difference (CRS minus AUROC).
    n_blocks : int
        Held-out datasets.
    noise : pandas.DataFrame, optional
        :func:`crsbench_lib.scoring.lodo_new_domain.held_out_noise_table`: each held-out τ_b is
        placed against two bootstrap draws of its held-out ranking.
    level : float
        Coverage of the interval.

    Returns
    -------
    str
        One or two sentences for :func:`crsbench_lib.report.takeaway.glue_takeaway`.

    Examples
    --------
    >>> lodo_takeaway(0.467, 0.467, (-0.444, 0.364), 3)
    "Over 3 held-out datasets, the CRS and AUROC on the other datasets predict a new dataset's AUROC ranking indistinguishably: mean τ_b 0.467 against 0.467, difference 0.000 (95 % interval [-0.444, 0.364])."
    >>> lodo_takeaway(0.5, 0.7, (-0.3, -0.1), 3)
    "Over 3 held-out datasets, AUROC on the other datasets predicts a new dataset's AUROC ranking better than the CRS: mean τ_b 0.700 against 0.500, difference -0.200 (95 % interval [-0.300, -0.100])."
    """
    c, a = float(crs_tau), float(auroc_tau)
    low, high = (float(v) for v in interval)
    where = f"Over {int(n_blocks)} held-out datasets,"
    task = "a new dataset's AUROC ranking"
    baseline = "AUROC on the other datasets"
    if not all(math.isfinite(v) for v in (c, a, low, high)):
        return (f"{where} whether the CRS or {baseline} predicts {task} better cannot be said: a mean τ_b or "
                "the interval of their difference is undefined." + _noise_takeaway(noise))
    span = f"{level * 100:g} % interval {format_interval(low, high)}"
    if interval_excludes_zero(low, high) and (c - a) * low > 0:
        winner, loser = ("the CRS", baseline) if low > 0 else (baseline, "the CRS")
        hi, lo = (c, a) if low > 0 else (a, c)
        text = (f"{where} {winner} predicts {task} better than {loser}: mean τ_b {fmt(hi, 3)} against {fmt(lo, 3)}, "
                f"difference {fmt(c - a, 3)} ({span}).")
    elif interval_excludes_zero(low, high):
        text = (f"{where} the CRS and {baseline} predict {task} indistinguishably: the difference's {span} excludes "
                f"its own point {fmt(c - a, 3)} (a biased resampling).")
    else:
        text = (f"{where} the CRS and {baseline} predict {task} indistinguishably: mean τ_b "
                f"{fmt(c, 3)} against {fmt(a, 3)}, difference {fmt(c - a, 3)} ({span}).")
    return text + _noise_takeaway(noise)


# --- "Is this real?" and the exercise --------------------------------------------------------------------


def lodo_lessons(crs_tau: float, auroc_tau: float, interval: tuple[float, float], n_blocks: int, n_encoders: int,
                 membership: "pd.DataFrame", noise: "pd.DataFrame", level: float = 0.95,
                 simulated: bool | None = None) -> list[Lesson]:
    """The leave-one-dataset-out chapter's "Is this real?" lessons, decided from the page's numbers.

    Parameters
    ----------
    crs_tau, auroc_tau : float
        Mean held-out τ_b of the CRS and of AUROC on the other datasets.
    interval : (float, float)
        The paired encoder-bootstrap interval of their difference (CRS minus AUROC).
    n_blocks, n_encoders : int
        Held-out datasets and ranked candidates.
    membership : pandas.DataFrame
        :func:`crsbench_lib.scoring.lodo_new_domain.new_domain_membership` (``held_out, encoder, new``).
    noise : pandas.DataFrame
        :func:`crsbench_lib.scoring.lodo_new_domain.held_out_noise_table` (one block per held-out dataset).
    level : float
        Coverage of the intervals.
    simulated : bool or None
        Whether the run is simulated (no lesson of the world names it).

    Returns
    -------
    list of Lesson
        Two of the design (what holding a dataset out can test when encoders
        were pretrained on its domain; what the paired interval measures) and
        two of the world (which predictor, with the interval; the held-out
        τ_b against the held-out ranking's own noise).

    Examples
    --------
    >>> import pandas as pd
    >>> m = pd.DataFrame({"held_out": ["a"] * 3 + ["b"] * 3, "encoder": list("xyz") * 2,
    ...                   "new": [False, False, True, False, False, True]})
    >>> lessons = lodo_lessons(0.65, 0.70, (-0.13, 0.04), 2, 3, m, pd.DataFrame(columns=["held_out", "source"]))
    >>> [lesson.scope for lesson in lessons]
    ['design', 'design', 'world', 'world', 'world']
    >>> lessons[-1].text.split(". ")[0]
    'Here 2 of 3 candidates were pretrained or fitted on pools that draw from every held-out domain, so for them each held-out dataset is a new task in a domain they have seen, and leave-one-dataset-out tests transfer to a new task, not to a new domain'
    """
    lessons: list[Lesson] = []
    counts: Lesson | None = None  # which encoders each held-out domain is new to: this run's, listed last
    head = ("Holding a dataset out takes its labels out of the score and out of the panel, not its images out of the "
            "encoders' pretraining.")
    if membership.empty:
        lessons.append(Lesson(DESIGN, head + " Which encoders saw which domain is not known for this run, so whether "
                                             "a held-out dataset is a new domain or only a new task cannot be said."))
    else:
        new = membership.assign(new=membership["new"].astype(bool))
        every = new.groupby("encoder")["new"].any()
        n, seen_all = len(every), int((~every).sum())
        per = new.groupby("held_out")["new"].sum().astype(int)
        low, high = int(per.min()), int(per.max())
        count = f"{low}" if low == high else f"{low} to {high}"
        steps = [_step(k) for k in (low, high)]
        if seen_all == n:
            text = (f"Here all {n} candidates were pretrained or fitted on pools that draw from every held-out domain, "
                    "so no held-out dataset is a new domain to any of them: this run's leave-one-dataset-out tests "
                    "prediction to a new task in a seen domain only.")
        else:
            share = (f"Here {seen_all} of {n} candidates were pretrained or fitted on pools that draw from every "
                     "held-out domain, so for them each held-out dataset is a new task in a domain they have seen, "
                     "and leave-one-dataset-out tests transfer to a new task, not to a new domain. "
                     if seen_all else
                     f"Here none of the {n} candidates saw every held-out domain in pretraining. ")
            if not all(math.isfinite(s) for s in steps):
                grain = "too few to rank at least once"
            else:
                grain = (f"where one swapped pair moves τ_b by {max(steps):.3f}" if low == high else
                         f"where one swapped pair moves τ_b by {min(steps):.3f} to {max(steps):.3f}")
                if max(steps) > MAX_TAU_STEP:
                    grain += ", too coarse for τ_b to mean much"
            text = (f"{share}A new domain is tested only among the encoders new to it, {count} per held-out "
                    f"dataset here, {grain}.")
        # The rule is the design's; how many encoders each held-out domain is new to is this run's zoo.
        lessons.append(Lesson(DESIGN, head + " Whether a held-out dataset is a new domain or only a new task depends "
                                             "on what each encoder was pretrained on, so a new domain can be tested "
                                             "only among the encoders to which it is new."))
        counts = Lesson(WORLD, text)

    n = int(n_encoders)
    lessons.append(Lesson(DESIGN, (
        f"The interval of the difference (CRS minus AUROC) resamples the {n} candidates, the same draws for both "
        f"predictors and all {int(n_blocks)} held-out datasets (a paired bootstrap); among {n} candidates one swapped "
        f"pair moves a τ_b by {_step(n):.3f}. It measures how sure the comparison is for encoders like these on these "
        f"{int(n_blocks)} datasets, not how a further dataset would go: each mean rests on {int(n_blocks)} τ_b "
        f"value{'s' if int(n_blocks) != 1 else ''}.")))

    c, a = float(crs_tau), float(auroc_tau)
    low, high = (float(v) for v in interval)
    sentence = describe_predictors(c, a, where=f"Over {int(n_blocks)} held-out datasets", interval=(low, high),
                                   level=level)
    if all(math.isfinite(v) for v in (c, a, low, high)) and interval_excludes_zero(low, high) and (c - a) * low > 0:
        consequence = (" The axes besides discrimination carry information about how encoders rank on a new dataset "
                       "here; whether they do on another cohort depends on whether its axes move with AUROC as these do."
                       if low > 0 else
                       " The axes besides discrimination (calibration, label efficiency, robustness) add to the CRS "
                       "what a held-out AUROC ranking does not reward: to predict AUROC, AUROC on the other datasets "
                       "does better; the CRS answers a broader question.")
    elif all(math.isfinite(v) for v in (c, a, low, high)) and not interval_excludes_zero(low, high):
        consequence = (" The CRS is a summary of reliability on the datasets it saw, not a better predictor of a new "
                       "dataset's AUROC ranking, nor a worse one detectably here.")
    else:
        consequence = ""
    lessons.append(Lesson(WORLD, sentence + consequence))

    if noise.empty or "held_out" not in noise.columns:
        lessons.append(Lesson(WORLD, "This run has no noise baseline of the held-out rankings, so the held-out τ_b "
                                     "cannot be read against the held-out ranking's own noise."))
        return lessons + ([counts] if counts is not None else [])
    places, medians, observed = _held_out_places(noise)
    measured = [p for p in places if p != "none"]
    if not measured:
        lessons.append(Lesson(WORLD, "The held-out rankings have no bootstrap draws here, so the held-out τ_b cannot "
                                     "be read against their own noise."))
        return lessons + ([counts] if counts is not None else [])
    below, inside, above = (measured.count(p) for p in ("below", "inside", "above"))
    total = len(measured)
    text = (f"Of the {total} held-out τ_b (each predictor on each held-out dataset, {fmt(min(observed), 3)} to "
            f"{fmt(max(observed), 3)}), {below} lie below the central {level * 100:g} % of two bootstrap draws of "
            f"their held-out AUROC ranking ({_median_range(medians)}), {inside} inside and {above} above.")
    if below == total:
        text += (" A change of dataset costs either predictor more than re-measuring the held-out dataset does: both "
                 "predictions fall short of the agreement the held-out ranking's own noise allows, so there is room "
                 "for a better predictor than either.")
    elif below == 0:
        text += (" Neither prediction falls short of the held-out ranking's own noise: on these datasets the change "
                 "of dataset costs no more than re-measuring does.")
    else:
        text += (" Where a τ_b lies inside, the prediction cannot be told from the held-out ranking's own noise; "
                 "where it lies below, the change of dataset costs more than that noise.")
    lessons.append(Lesson(WORLD, text))
    return lessons + ([counts] if counts is not None else [])


def lodo_exercise_arm(frozen_same: object, adapted: object | None, n_frozen: int, arm: str = "lora") -> str:
    """The solution of the exercise "repeat the analysis for the LoRA arm", computed on the page.

    Parameters
    ----------
    frozen_same : TauDifference
        :func:`crsbench_lib.scoring.lodo.tau_difference` of the frozen arm, on the
        encoders that have an adapted arm (the like-for-like baseline), scored
        with the page's panel (so with every candidate adapted it is the page's).
    adapted : TauDifference or None
        The same on the adapted arm (None: the run has no such arm).
    n_frozen : int
        Candidates of the frozen page (every candidate).
    arm : str
        The other arm's name.

    Returns
    -------
    str

    Examples
    --------
    >>> from crsbench_lib.scoring.lodo import TauDifference
    >>> f = TauDifference("crs", "auroc", 0.70, 0.72, -0.02, -0.2, 0.15, 0.95, 1000, 9, 3)
    >>> a = TauDifference("crs", "auroc", 0.67, 0.72, -0.05, -0.22, 0.16, 0.95, 1000, 9, 3)
    >>> lodo_exercise_arm(f, a, 19).split(". ")[0]
    'In this build the LoRA arm ranks 9 candidates (those with an adapted arm), not 19, so it is compared here with the frozen arm of the same 9'
    """
    if adapted is None:
        return (f"This run has no {arm} arm, so the exercise cannot be answered here: rerunning with `arm` {arm} "
                "would find no adapted rows. On a run with adapters, compare the adapted arm with the frozen arm of "
                "the same encoders, not with this page's whole zoo, so that only the arm changes.")
    n = int(adapted.n_encoders)
    step = _step(n)
    name = "LoRA" if arm == "lora" else arm
    moves = []
    for who, before, after in (("the CRS's", frozen_same.tau_first, adapted.tau_first),
                               ("AUROC's", frozen_same.tau_second, adapted.tau_second)):
        delta = float(after) - float(before)
        moves.append(f"{who} mean τ_b by {'+' if round(delta, 3) > 0 else ''}{fmt(delta, 3)} "
                     f"({abs(delta) / step:.1f} swapped pairs per held-out ranking, on average)")

    def lower(text: str) -> str:
        return text[:1].lower() + text[1:]

    def verdict(diff: object) -> str:
        low, high, point = float(diff.ci_low), float(diff.ci_high), float(diff.estimate)
        if not all(math.isfinite(v) for v in (low, high, point)):
            return "none"
        return "crs" if low > 0 and point > 0 else "auroc" if high < 0 and point < 0 else "none"

    if n == int(n_frozen):
        opening = (f"In this build the {name} arm ranks the same {n} candidates as this page, so the frozen numbers "
                   "below are the page's. Frozen, ")
    else:
        opening = (f"In this build the {name} arm ranks {n} candidates (those with an adapted arm), not {int(n_frozen)}, "
                   f"so it is compared here with the frozen arm of the same {n}. Frozen, ")
    text = (opening
            + lower(describe_predictors(frozen_same.tau_first, frozen_same.tau_second,
                                        interval=(frozen_same.ci_low, frozen_same.ci_high)))
            + " Adapted, " + lower(describe_predictors(adapted.tau_first, adapted.tau_second,
                                                        interval=(adapted.ci_low, adapted.ci_high)))
            + f" Adaptation moves {and_list(moves)}; among {n} candidates one swapped pair moves a τ_b by {step:.3f}. ")
    before, after = verdict(frozen_same), verdict(adapted)
    words = {"crs": "the CRS predicts better", "auroc": "AUROC predicts better", "none": "the data cannot tell"}
    text += (f"The verdict is the same in both arms ({words[after]}): adapting these encoders does not change which "
             "predictor to trust for a new dataset." if before == after else
             f"The verdict changes with the arm (frozen: {words[before]}; adapted: {words[after]}): read it beside "
             "the two intervals, which are wide with so few candidates and datasets.")
    if n == int(n_frozen):
        return text + f" Rerunning the page with `arm` {arm} gives the adapted numbers above."
    return text + (f" Rerunning the page with `arm` {arm} gives the adapted numbers above; set them beside the "
                   f"same-encoder frozen numbers here, not beside this page's {int(n_frozen)} candidates, a different "
                   "set.")
