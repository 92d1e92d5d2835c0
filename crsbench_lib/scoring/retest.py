"""Test-retest of a ranking: how far the CRS order moves when only the seed changes (method section 9, amendment 13).

A rank comparison between two arms (frozen against adapted), two panels or two
held-out datasets means something only beside the noise of the ranking
itself. Every seed of a run redraws the train, validation and calibration
splits, the probe's solver seed and (in the LoRA arm) the adapter's training
order, while the test images stay the same, so scoring the table **one seed
at a time** against the same fixed standard gives as many rankings as there
are seeds, each as noisy as a one-seed study. Their agreement (Kendall tau-b
between two seeds' rankings) is the test-retest baseline: what re-running with
a new seed does to the order. The scores are the full-panel CRS (every
encoder against the whole frozen panel, its own entry included), as
:func:`~crsbench_lib.scoring.crs.score_results` gives them.

:func:`seedwise_scores` scores each seed of one arm; :func:`retest_taus`
compares every pair of seeds, within an arm (test-retest) and across two arms
(same seed and different seeds), and :func:`retest_summary` condenses the
pairs. A cross-arm tau on *different* seeds carries each seed's noise, as a
within-arm tau does, and is its like-for-like partner; a cross-arm tau *on the
same seed* shares the split, so it is higher than the others even when the
arm changes nothing (it still carries the adapter's own training noise). With
three seeds there are three pairs per arm, and pairs share seeds: their range
describes this run, it is not a test.

The second baseline, :func:`bootstrap_retest_taus`, is the tau between two
independent draws of the two-level bootstrap (draw ``b`` against draw
``b + B // 2``): the noise of a ranking averaged over seeds, with seeds and
test images resampled, and so the like-for-like partner of a tau between
averaged rankings. :func:`noise_baseline_table` puts a comparison's tau
beside both baselines, the one table every rank comparison of the book shows
(agreement, transfer, LoDO, insertion), and
:func:`crsbench_lib.report.sentences.noise.describe_tau_against_noise` reads it.

Kendall's tau-b from :mod:`crsbench_lib.scoring.rank_statistics`;
between bootstrap draws, vectorised by :func:`crsbench_lib.scoring.rank_statistics.kendall_tau_b_rows`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.validated import ValidatedResults, as_validated
from crsbench_lib.scoring.rank_statistics import kendall_tau_b, kendall_tau_b_rows
from crsbench_lib.scoring.axes import encoder_profiles, standard_axes
from crsbench_lib.scoring.crs import score_profiles
from crsbench_lib.standard import ReferenceStandard, as_standard, check_ece_bins

#: Columns of :func:`retest_taus`, in order.
RETEST_COLUMNS: tuple[str, ...] = ("comparison", "arm_a", "seed_a", "arm_b", "seed_b", "kendall_tau", "n_encoders")
#: The comparisons of :func:`retest_taus`, in display order.
WITHIN_ARM = "within arm, different seeds"
ACROSS_SAME_SEED = "across arms, same seed"
ACROSS_OTHER_SEED = "across arms, different seeds"
#: The comparisons of :func:`measure_retest_taus`, in display order.
WITHIN_MEASURE = "within measure, different seeds"
ACROSS_MEASURES_SAME_SEED = "across measures, same seed"
ACROSS_MEASURES_OTHER_SEED = "across measures, different seeds"
ARM_KINDS = (WITHIN_ARM, ACROSS_SAME_SEED, ACROSS_OTHER_SEED)
MEASURE_KINDS = (WITHIN_MEASURE, ACROSS_MEASURES_SAME_SEED, ACROSS_MEASURES_OTHER_SEED)


def seedwise_scores(
    results: pd.DataFrame | ValidatedResults,
    standard: ReferenceStandard | str | None,
    arm: str = "frozen",
    encoders: Sequence[str] | None = None,
    score: str = "crs",
) -> dict[int, pd.Series]:
    """The CRS (or another column of the scoring) of each encoder, computed from one seed at a time.

    Parameters
    ----------
    results : pandas.DataFrame or ValidatedResults
    standard : ReferenceStandard, path or None
        The fixed standard every seed is scored against (None: the shipped default).
    arm : {"frozen", "lora"}
    encoders : sequence of str, optional
        Keep only these encoders (each must be in the arm).
    score : str
        The column of :func:`~crsbench_lib.scoring.crs.score_profiles` to
        return: ``"crs"``, or a normalised axis (``"D"``: AUROC on the
        standard's anchors, ``"C"``, ``"L"``, ``"R"``).

    Returns
    -------
    dict of int to pandas.Series
        Seed -> ``score`` indexed by encoder (sorted by name).

    Raises
    ------
    SchemaError
        If an asked encoder is absent from the arm, or a seed lacks rows the axes need.
    """
    standard = as_standard(standard)
    standard.require_panel()
    table = as_validated(results)
    check_ece_bins(table.frame, standard, arm)
    raw = standard_axes(table, standard, arm=arm)
    if encoders is not None:
        missing = sorted(set(map(str, encoders)) - set(raw["encoder"].astype(str)))
        if missing:
            raise SchemaError(f"results table: encoder {missing[0]!r} has no {arm} rows")
        raw = raw[raw["encoder"].astype(str).isin([str(e) for e in encoders])]
    out: dict[int, pd.Series] = {}
    for seed in sorted(int(s) for s in raw["seed"].unique()):
        scored = score_profiles(encoder_profiles(raw[raw["seed"] == seed]), standard)
        if score not in scored.columns:
            raise SchemaError(f"seedwise scores: no column {score!r} in the scoring (it has crs, D, C, L, R, ...)")
        out[seed] = pd.Series(scored[score].to_numpy(dtype=float), index=scored["encoder"].astype(str)).sort_index()
    return out


def _tau(a: pd.Series, b: pd.Series) -> tuple[float, int]:
    shared = sorted(set(a.index) & set(b.index))
    if len(shared) < 2:
        return float("nan"), len(shared)
    return kendall_tau_b(a[shared].to_numpy(), b[shared].to_numpy()), len(shared)


def retest_taus(
    results: pd.DataFrame | ValidatedResults,
    standard: ReferenceStandard | str | None,
    arms: Sequence[str] = ("frozen", "lora"),
    encoders: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Kendall tau-b between rankings scored one seed at a time, within and across arms.

    Parameters
    ----------
    results : pandas.DataFrame or ValidatedResults
    standard : ReferenceStandard, path or None
    arms : sequence of str
        One arm (test-retest only) or two (also the cross-arm pairs).
    encoders : sequence of str, optional
        The encoders ranked (default: those present in every arm).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`RETEST_COLUMNS`: one row per pair of distinct seeds
        within each arm (:data:`WITHIN_ARM`), and, with two arms, one row per
        seed pair across them (:data:`ACROSS_SAME_SEED` when the seeds are
        equal, :data:`ACROSS_OTHER_SEED` otherwise).

    Raises
    ------
    SchemaError
        If fewer than two encoders are shared, or an arm has no rows.
    ValueError
        If ``arms`` holds other than one or two distinct arms.

    """
    arms = tuple(dict.fromkeys(arms))
    if len(arms) not in (1, 2):
        raise ValueError(f"arms: expected one or two distinct arms, got {list(arms)}")
    table = as_validated(results)
    if encoders is None:
        present = [set(table.frame.loc[table.frame["arm"] == arm, "encoder"].astype(str)) for arm in arms]
        encoders = sorted(set.intersection(*present))
    if len(encoders) < 2:
        raise SchemaError(f"arms {', '.join(arms)} share {len(encoders)} encoder(s); need at least 2 to compare rankings")
    scores = {arm: seedwise_scores(table, standard, arm, encoders) for arm in arms}
    return pd.DataFrame(_pair_rows(scores, ARM_KINDS), columns=list(RETEST_COLUMNS))


def measure_retest_taus(
    results: pd.DataFrame | ValidatedResults,
    standard: ReferenceStandard | str | None,
    measures: Sequence[str] = ("D", "crs"),
    arm: str = "frozen",
    encoders: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Kendall tau-b between two measures' rankings of one arm, each scored one seed at a time.

    The noise baseline of a comparison between two ways of ranking the same
    encoders (AUROC against CRS, in the agreement chapter): two seeds of one
    measure give its test-retest tau; one measure on seed ``s`` against the
    other on seed ``t != s`` carries each seed's noise as those do, and is
    their like-for-like partner; the same seed is shown beside them (it shares
    the split, so it is higher).

    Parameters
    ----------
    results : pandas.DataFrame or ValidatedResults
    standard : ReferenceStandard, path or None
    measures : sequence of str
        Two columns of the scoring (:func:`seedwise_scores`), e.g. ``("D", "crs")``.
    arm : {"frozen", "lora"}
    encoders : sequence of str, optional
        The encoders ranked (default: every encoder of the arm).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`RETEST_COLUMNS`, with the measure's name in ``arm_a`` and
        ``arm_b`` and the comparisons :data:`MEASURE_KINDS`.
    """
    measures = tuple(dict.fromkeys(measures))
    if len(measures) != 2:
        raise ValueError(f"measures: expected two distinct columns, got {list(measures)}")
    table = as_validated(results)
    if encoders is None:
        encoders = sorted(set(table.frame.loc[table.frame["arm"] == arm, "encoder"].astype(str)))
    if len(encoders) < 2:
        raise SchemaError(f"arm {arm} has {len(encoders)} encoder(s); need at least 2 to compare rankings")
    scores = {m: seedwise_scores(table, standard, arm, encoders, score=m) for m in measures}
    return pd.DataFrame(_pair_rows(scores, MEASURE_KINDS), columns=list(RETEST_COLUMNS))


def _pair_rows(scores: dict[str, dict[int, pd.Series]], kinds: tuple[str, str, str]) -> list[tuple]:
    """Tau of every seed pair within each ranking, and (two rankings) of every seed pair across them.

    ``kinds`` names the comparisons: within, across on the same seed, across on different seeds.
    """
    within, same, other = kinds
    rows = []
    for name, by_seed in scores.items():
        for s, t in itertools.combinations(sorted(by_seed), 2):
            rows.append((within, name, s, name, t, *_tau(by_seed[s], by_seed[t])))
    if len(scores) == 2:
        a, b = scores
        for s in sorted(scores[a]):
            for t in sorted(scores[b]):
                kind = same if s == t else other
                rows.append((kind, a, s, b, t, *_tau(scores[a][s], scores[b][t])))
    return rows


def retest_summary(taus: pd.DataFrame) -> pd.DataFrame:
    """Mean, minimum and maximum tau of each comparison of :func:`retest_taus`.

    Returns
    -------
    pandas.DataFrame
        Columns ``comparison, arms, n_pairs, mean_tau, min_tau, max_tau`` and,
        when ``taus`` has it, ``n_encoders`` (the most encoders a pair ranked):
        one row per arm's test-retest, then across arms on the same seed, then
        on different seeds (comparisons absent from ``taus`` are left out).

    Examples
    --------
    >>> taus = pd.DataFrame({"comparison": [WITHIN_ARM] * 3, "arm_a": "frozen", "arm_b": "frozen",
    ...                      "kendall_tau": [0.6, 0.8, 0.7]})
    >>> retest_summary(taus)[["arms", "n_pairs", "mean_tau", "min_tau"]].to_dict("records")
    [{'arms': 'frozen', 'n_pairs': 3, 'mean_tau': 0.7, 'min_tau': 0.6}]
    """
    frame = taus.assign(arms=np.where(taus["arm_a"] == taus["arm_b"], taus["arm_a"].astype(str),
                                      taus["arm_a"].astype(str) + " vs " + taus["arm_b"].astype(str)))
    rows = []
    for kind in (*ARM_KINDS, *MEASURE_KINDS):
        for arms, group in frame[frame["comparison"] == kind].groupby("arms", sort=False):
            values = group["kendall_tau"].to_numpy(dtype=float)
            values = values[np.isfinite(values)]
            if values.size:
                row = (kind, str(arms), int(values.size), round(float(values.mean()), 12), float(values.min()),
                       float(values.max()))
                if "n_encoders" in group.columns:
                    row += (int(group["n_encoders"].max()),)
                rows.append(row)
    columns = ["comparison", "arms", "n_pairs", "mean_tau", "min_tau", "max_tau"]
    return pd.DataFrame(rows, columns=columns + (["n_encoders"] if "n_encoders" in taus.columns else []))


# --- Bootstrap-draw baseline and the noise table shared by every rank comparison (issue 27, item 4) -------------

#: Columns of :func:`bootstrap_retest_taus`.
BOOTSTRAP_RETEST_COLUMNS: tuple[str, ...] = ("draw_a", "draw_b", "kendall_tau", "n_encoders")
#: Columns of :func:`noise_baseline_table`, in order.
NOISE_BASELINE_COLUMNS: tuple[str, ...] = ("comparison", "source", "rankings", "tau", "low", "high", "n_pairs", "spread")
#: The sources of :func:`noise_baseline_table`, in display order.
OBSERVED = "observed"
SEED_REDRAW = "seed redraw"
BOOTSTRAP_DRAW = "bootstrap draw"
#: The one-dose reference: the point ranking against each bootstrap draw (issue 46, item 3).
ESTIMATE_DRAW = "estimate against draw"
#: What the rankings of each kind of row are.
AVERAGED = "averaged over seeds"
ONE_SEED_EACH = "one seed each"
ONE_SEED_OTHER = "one seed each, different seeds"
RESAMPLED = "averaged over resampled seeds and test images"
POINT_AND_RESAMPLED = "the point ranking against one resampled"


def bootstrap_retest_taus(
    draws: np.ndarray,
    encoders: Sequence[str] | None = None,
    keep: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Kendall tau-b between independent bootstrap draws of the same ranking: the bootstrap-draw baseline.

    The draws of a bootstrap are independent replicates of the whole
    measurement (seeds and test images resampled). Splitting the ``B`` draws
    into halves and pairing draw ``b`` with draw ``b + B // 2`` gives
    ``B // 2`` pairs of independent replicates, no draw used twice; the tau of
    each pair is what measuring the same encoders twice does to their order
    when both measurements carry the sampling noise of the design:

        tau_b(b) = (n_c - n_d) / sqrt((n0 - n1)(n0 - n2)),  n0 = n(n - 1) / 2,

    between rows ``b`` and ``b + B // 2``, with ``n_c`` / ``n_d`` the
    concordant / discordant pairs and ``n1``, ``n2`` the pairs tied in either
    draw (Kendall 1945, "The treatment of ties in ranking problems",
    Biometrika 33: 239-251), computed by
    :func:`~crsbench_lib.scoring.rank_statistics.kendall_tau_b_rows`. A comparison
    of two rankings averaged over seeds (each with its own sampling noise) is
    like-for-like with this baseline; the seed-redraw baseline
    (:func:`retest_taus`) is the partner of one-seed rankings.

    Parameters
    ----------
    draws : numpy.ndarray
        Shape (B, n_encoders): one score per encoder in every draw (e.g.
        ``two_level_bootstrap(...).crs_draws`` or ``.auroc_draws``), higher
        ranked first. ``B`` must be at least 2; an odd last draw is unused.
    encoders : sequence of str, optional
        The column names (needed with ``keep``).
    keep : sequence of str, optional
        Rank only these encoders (columns); default every column.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`BOOTSTRAP_RETEST_COLUMNS`, one row per pair of draws
        (``draw_a = b``, ``draw_b = b + B // 2``); ``kendall_tau`` is NaN where
        a draw is constant.

    Raises
    ------
    SchemaError
        If ``draws`` is not a finite 2-d array with at least 2 draws and 2
        encoders, or ``keep`` names an encoder absent from ``encoders``.

    Examples
    --------
    >>> draws = np.array([[0.1, 0.2, 0.3], [0.1, 0.3, 0.2], [0.1, 0.2, 0.3], [0.3, 0.2, 0.1]])
    >>> bootstrap_retest_taus(draws)["kendall_tau"].round(3).tolist()
    [1.0, -0.333]
    """
    values = np.asarray(draws, dtype=float)
    if values.ndim != 2 or values.shape[0] < 2 or values.shape[1] < 2:
        raise SchemaError(f"bootstrap draws: expected shape (draws >= 2, encoders >= 2), got {values.shape}")
    if keep is not None:
        if encoders is None or len(encoders) != values.shape[1]:
            raise SchemaError("bootstrap draws: keep needs encoders naming every column")
        names = [str(e) for e in encoders]
        missing = sorted(set(map(str, keep)) - set(names))
        if missing:
            raise SchemaError(f"bootstrap draws: encoder {missing[0]!r} is not among the draws' columns")
        values = values[:, [names.index(str(e)) for e in keep]]
        if values.shape[1] < 2:
            raise SchemaError(f"bootstrap draws: keep holds {values.shape[1]} encoder(s); need at least 2")
    if not np.isfinite(values).all():
        raise SchemaError("bootstrap draws: every score must be finite")
    half = values.shape[0] // 2
    first = np.arange(half)
    taus = kendall_tau_b_rows(values[first], values[first + half])
    return pd.DataFrame({"draw_a": first, "draw_b": first + half, "kendall_tau": taus,
                         "n_encoders": values.shape[1]}, columns=list(BOOTSTRAP_RETEST_COLUMNS))


def point_draw_taus(
    point: Sequence[float] | np.ndarray,
    draws: np.ndarray,
    encoders: Sequence[str] | None = None,
    keep: Sequence[str] | None = None,
) -> np.ndarray:
    """Kendall tau-b between the point ranking and each bootstrap draw: the one-dose noise reference.

    By the bootstrap principle a draw ``theta*_b`` stands to the point
    estimate ``theta_hat`` as ``theta_hat`` stands to the truth ``theta``, so

        tau_b(theta_hat, theta*_b),  b = 1..B,

    estimates the distribution of ``tau_b(theta, theta_hat)``: how far one
    measured ranking lies from the ranking it estimates (Efron & Tibshirani
    1993, ch. 6). Two independent draws (:func:`bootstrap_retest_taus`) each
    carry that noise, so their tau carries about twice its dose: the right
    reference for two independent measurements of the same ranking, too wide
    for the question "does this one measured ranking differ from another
    ranking beyond its own noise?".

    Parameters
    ----------
    point : array-like
        (n_encoders,) the point scores, higher ranked first.
    draws : numpy.ndarray
        (B, n_encoders) bootstrap draws of the same scores.
    encoders, keep : sequence of str, optional
        Column names, and the encoders to rank (as :func:`bootstrap_retest_taus`).

    Returns
    -------
    numpy.ndarray
        (B,) tau_b of the point ranking with each draw's (NaN where a draw is constant).

    Raises
    ------
    SchemaError
        As :func:`bootstrap_retest_taus`, or when ``point`` does not match the draws' columns.

    Examples
    --------
    >>> point = np.array([0.1, 0.2, 0.3])
    >>> draws = np.array([[0.1, 0.2, 0.3], [0.1, 0.3, 0.2]])
    >>> point_draw_taus(point, draws).round(3).tolist()
    [1.0, 0.333]
    """
    values = np.asarray(draws, dtype=float)
    centre = np.asarray(point, dtype=float).ravel()
    if values.ndim != 2 or values.shape[0] < 1 or values.shape[1] < 2 or centre.shape != (values.shape[1],):
        raise SchemaError(f"point and draws: expected (encoders,) and (draws, encoders), got {centre.shape} "
                          f"and {values.shape}")
    if keep is not None:
        if encoders is None or len(encoders) != values.shape[1]:
            raise SchemaError("bootstrap draws: keep needs encoders naming every column")
        names = [str(e) for e in encoders]
        missing = sorted(set(map(str, keep)) - set(names))
        if missing:
            raise SchemaError(f"bootstrap draws: encoder {missing[0]!r} is not among the draws' columns")
        columns = [names.index(str(e)) for e in keep]
        values, centre = values[:, columns], centre[columns]
        if values.shape[1] < 2:
            raise SchemaError(f"bootstrap draws: keep holds {values.shape[1]} encoder(s); need at least 2")
    if not (np.isfinite(values).all() and np.isfinite(centre).all()):
        raise SchemaError("bootstrap draws: every score must be finite")
    return kendall_tau_b_rows(np.broadcast_to(centre, values.shape), values)


def reorder_tail_share(tau: float, reference: Sequence[float] | np.ndarray) -> float:
    """Share of the one-dose reference at or below an observed tau: does a ranking reorder beyond its own noise?

    The question the AUROC-CRS comparison can answer. The CRS contains
    discrimination by construction (its floor term is the normalised AUROC
    wherever that is a candidate's lowest axis), so a test of "no association"
    between the two rankings (a permutation p-value) rejects by design and
    says nothing. What can be asked is whether the CRS orders the candidates
    differently from AUROC by more than the CRS ranking's own sampling noise
    moves it: under "the CRS's target ranking is the AUROC ranking",
    ``tau_b(AUROC, CRS_hat)`` is distributed as ``tau_b(theta, theta_hat)``,
    which the one-dose reference ``tau_b(theta_hat, theta*_b)``
    (:func:`point_draw_taus`) estimates by the bootstrap principle (Efron &
    Tibshirani 1993, ch. 6). The share of reference draws at or below the
    observed tau is its bootstrap tail probability (one-sided: only a lower
    tau is a reordering); a small share is a reordering beyond the noise. The
    AUROC ranking is taken as measured, without its own noise, so the share
    errs on the small side.

    Parameters
    ----------
    tau : float
        The observed tau_b between the two rankings.
    reference : array-like
        One-dose reference taus (:func:`point_draw_taus`); NaN entries are dropped.

    Returns
    -------
    float
        ``#{b : tau_b <= tau} / B`` over the finite reference draws (NaN if none).

    Examples
    --------
    >>> reorder_tail_share(0.9, [0.85, 0.9, 0.95, 1.0])
    0.5
    """
    values = _finite(reference)
    if values.size == 0:
        return float("nan")
    return float(np.mean(values <= float(tau) + 1e-12))


def _finite(values: Sequence[float] | np.ndarray | pd.Series) -> np.ndarray:
    array = np.asarray(values, dtype=float).ravel()
    return array[np.isfinite(array)]


def noise_baseline_table(
    observed: Mapping[str, float],
    seed_redraw: Mapping[str, Sequence[float] | np.ndarray | pd.Series],
    bootstrap_draw: Mapping[str, Sequence[float] | np.ndarray | pd.Series],
    one_seed: Mapping[str, Sequence[float] | np.ndarray | pd.Series] | None = None,
    interval: float = 0.95,
    estimate_draw: Mapping[str, Sequence[float] | np.ndarray | pd.Series] | None = None,
) -> pd.DataFrame:
    """A rank comparison's tau beside the test-retest tau of the same rankings: seed redraws and bootstrap draws.

    The one table every rank comparison of the book (agreement, transfer,
    LoDO, insertion) shows beside its tau. Rows, in this order:

    * ``observed``, ``averaged over seeds``: each observed tau (one value);
    * ``observed``, ``one seed each, different seeds``: the comparison made on
      one-seed rankings, when given (mean, minimum and maximum over seed pairs);
    * ``seed redraw``: per ranking, the tau between two seeds scored one at a
      time (:func:`retest_taus`): mean, minimum and maximum over seed pairs;
    * ``bootstrap draw``: per ranking, the tau between two independent
      bootstrap draws (:func:`bootstrap_retest_taus`): median and the central
      ``interval`` percentile range over draw pairs (two doses of noise);
    * ``estimate against draw``: per ranking, the tau between its point
      ranking and each draw (:func:`point_draw_taus`; one dose), when given:
      median and central range. The verdict of a page reads these rows where
      the table has them (:func:`~crsbench_lib.report.sentences.noise.tau_against_draws`).

    With the few, overlapping seed pairs of a run (three pairs from three
    seeds), the seed rows describe this run, not a sampling distribution; the
    bootstrap rows summarise ``B // 2`` independent pairs. Non-finite taus are
    left out; a ranking with none left gets no row.

    Parameters
    ----------
    observed : mapping of str to float
        Comparison label -> its tau between rankings averaged over seeds.
    seed_redraw, bootstrap_draw : mapping of str to array-like
        Ranking label -> the taus of its pairs.
    one_seed : mapping of str to array-like, optional
        Comparison label -> its taus between one-seed rankings on different seeds.
    interval : float
        Coverage of the bootstrap rows' percentile range, in (0, 1).
    estimate_draw : mapping of str to array-like, optional
        Ranking label -> the taus of its point ranking with each draw.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`NOISE_BASELINE_COLUMNS`: ``tau`` (the value, the mean,
        or the median), ``low`` and ``high`` (NaN for a single value),
        ``n_pairs`` and ``spread`` (what ``low`` and ``high`` are).

    Raises
    ------
    ValueError
        If ``interval`` is not in (0, 1).

    Examples
    --------
    >>> table = noise_baseline_table({"frozen vs lora": 0.87}, {"frozen": [0.6, 0.7, 0.8]},
    ...                              {"frozen": np.linspace(0.7, 0.9, 101)})
    >>> table[["source", "tau", "low", "high", "n_pairs"]].round(3).values.tolist()
    [['observed', 0.87, nan, nan, 1], ['seed redraw', 0.7, 0.6, 0.8, 3], ['bootstrap draw', 0.8, 0.705, 0.895, 101]]
    """
    if not 0 < float(interval) < 1:
        raise ValueError(f"interval must lie in (0, 1), got {interval!r}")
    tail = (1 - float(interval)) / 2 * 100
    level = f"{float(interval) * 100:g} %"
    rows: list[tuple] = []
    for label, tau in observed.items():
        rows.append((str(label), OBSERVED, AVERAGED, float(tau), np.nan, np.nan, 1, "value"))
    for label, taus in (one_seed or {}).items():
        values = _finite(taus)
        if values.size:
            rows.append((str(label), OBSERVED, ONE_SEED_OTHER, round(float(values.mean()), 12), float(values.min()),
                         float(values.max()), int(values.size), "mean; min to max"))
    for label, taus in seed_redraw.items():
        values = _finite(taus)
        if values.size:
            rows.append((str(label), SEED_REDRAW, ONE_SEED_EACH, round(float(values.mean()), 12), float(values.min()),
                         float(values.max()), int(values.size), "mean; min to max"))
    for label, taus in bootstrap_draw.items():
        values = _finite(taus)
        if values.size:
            low, mid, high = np.percentile(values, [tail, 50, 100 - tail])
            rows.append((str(label), BOOTSTRAP_DRAW, RESAMPLED, float(mid), float(low), float(high), int(values.size),
                         f"median; central {level}"))
    for label, taus in (estimate_draw or {}).items():
        values = _finite(taus)
        if values.size:
            low, mid, high = np.percentile(values, [tail, 50, 100 - tail])
            rows.append((str(label), ESTIMATE_DRAW, POINT_AND_RESAMPLED, float(mid), float(low), float(high),
                         int(values.size), f"median; central {level}"))
    return pd.DataFrame(rows, columns=list(NOISE_BASELINE_COLUMNS))


def pair_taus(taus: pd.DataFrame, comparison: str, first: str, second: str | None = None) -> np.ndarray:
    """The taus of one comparison of :func:`retest_taus` or :func:`measure_retest_taus`, for :func:`noise_baseline_table`.

    Parameters
    ----------
    taus : pandas.DataFrame
        Columns :data:`RETEST_COLUMNS`.
    comparison : str
        One of :data:`ARM_KINDS` or :data:`MEASURE_KINDS`.
    first, second : str
        The arms (or measures) of the pairs; ``second`` defaults to ``first``.

    Returns
    -------
    numpy.ndarray
        The finite ``kendall_tau`` of the matching rows (empty with a single seed).

    Examples
    --------
    >>> taus = pd.DataFrame({"comparison": [WITHIN_ARM, WITHIN_ARM], "arm_a": ["frozen", "lora"],
    ...                      "arm_b": ["frozen", "lora"], "kendall_tau": [0.7, 0.6]})
    >>> pair_taus(taus, WITHIN_ARM, "lora").tolist()
    [0.6]
    """
    second = first if second is None else second
    rows = taus[(taus["comparison"] == comparison) & (taus["arm_a"].astype(str) == str(first))
                & (taus["arm_b"].astype(str) == str(second))]
    return _finite(rows["kendall_tau"])


def reference_rows(table: pd.DataFrame, rankings: Sequence[str] | None = None) -> list[Any]:
    """The rows a verdict reads: the one-dose ``estimate against draw`` rows where the table has them, else the
    two-dose ``bootstrap draw`` rows (issue 46, item 3: one measured ranking is judged against one dose of noise).

    Examples
    --------
    >>> import numpy as np
    >>> from crsbench_lib.scoring.retest import noise_baseline_table
    >>> table = noise_baseline_table({"x": 0.5}, {}, {"a": np.linspace(0.6, 0.9, 101)},
    ...                              estimate_draw={"a": np.linspace(0.7, 0.95, 101)})
    >>> [r.source for r in reference_rows(table)]
    ['estimate against draw']
    """
    chosen = [r for r in table.itertuples(index=False) if r.source == ESTIMATE_DRAW
              and (rankings is None or r.comparison in rankings)]
    return chosen or [r for r in table.itertuples(index=False) if r.source == BOOTSTRAP_DRAW
                      and (rankings is None or r.comparison in rankings)]


def tau_against_draws(tau: float, table: pd.DataFrame, rankings: Sequence[str] | None = None) -> str:
    """Where a τ_b falls against the bootstrap-draw rows of a noise table: "below", "inside", "above" or "between".

    The one verdict the chapters' "Is this real?" lessons read from
    :func:`crsbench_lib.scoring.retest.noise_baseline_table`, the same as
    :func:`crsbench_lib.report.sentences.noise.describe_tau_against_noise` prints: "inside" when the τ_b lies in the
    central range of at least one ranking's draws (the run cannot tell it from
    that ranking's noise), "below" or "above" when it lies beyond every range,
    "between" when it lies below some and above others. "none" when the table
    has no bootstrap row. The one-dose rows (point ranking against a draw) are
    read where the table has them (:func:`reference_rows`).

    Parameters
    ----------
    tau : float
        The observed τ_b.
    table : pandas.DataFrame
        A noise baseline table.
    rankings : sequence of str, optional
        Only these rankings' bootstrap rows (the ``comparison`` column); default all.

    Returns
    -------
    str

    Examples
    --------
    >>> import numpy as np
    >>> from crsbench_lib.scoring.retest import noise_baseline_table
    >>> table = noise_baseline_table({"x": 0.5}, {}, {"a": np.linspace(0.6, 0.9, 101), "b": np.linspace(0.4, 0.7, 101)})
    >>> tau_against_draws(0.5, table), tau_against_draws(0.5, table, rankings=["a"]), tau_against_draws(0.95, table)
    ('inside', 'below', 'above')
    """
    rows = reference_rows(table, rankings)
    if not rows:
        return "none"
    value = float(tau)
    if any(float(r.low) <= value <= float(r.high) for r in rows):
        return "inside"
    if all(value < float(r.low) for r in rows):
        return "below"
    if all(value > float(r.high) for r in rows):
        return "above"
    return "between"


@dataclass(frozen=True)
class NoiseRange:
    """One ranking's central range of test-retest tau_b, and where an observed tau_b lies against it.

    ``place`` is ``"within"``, ``"below"`` or ``"above"`` the range ``[low, high]``.
    """

    ranking: str
    low: float
    high: float
    place: str


@dataclass(frozen=True)
class NoiseVerdict:
    """An observed tau_b against the noise of one ranking (the facts of the book's noise sentences).

    Attributes
    ----------
    verdict : str
        :func:`tau_against_draws`: ``"inside"``, ``"below"``, ``"above"``,
        ``"between"`` or ``"none"`` (no bootstrap rows).
    one_dose : bool
        Whether the ranges are of one ranking's estimate against its draws
        (one dose of noise) rather than between two draws (two doses).
    level : float
        Coverage of the central ranges.
    groups : tuple of (str, tuple of NoiseRange)
        The ranges grouped by place, in the order within, below, above; empty
        places left out.
    """

    verdict: str
    one_dose: bool
    level: float
    groups: tuple[tuple[str, tuple[NoiseRange, ...]], ...]


def noise_verdict(tau: float, table: pd.DataFrame | None, level: float,
                  rankings: Sequence[str] | None = None) -> NoiseVerdict:
    """Where ``tau`` lies against each ranking's central range of a noise table, grouped for a sentence.

    Examples
    --------
    >>> table = noise_baseline_table({"x": 0.9}, {}, {"a": np.linspace(0.94, 1.0, 101), "b": np.linspace(0.86, 0.98, 101)})
    >>> found = noise_verdict(0.906, table, 0.95)
    >>> found.verdict, [(place, [r.ranking for r in group]) for place, group in found.groups]
    ('inside', [('within', ['b']), ('below', ['a'])])
    """
    if table is None or not len(table):
        return NoiseVerdict("none", False, float(level), ())
    rows = reference_rows(table, rankings)
    verdict = tau_against_draws(tau, table, rankings)
    if not rows:
        return NoiseVerdict(verdict, False, float(level), ())
    value = float(tau)

    def place(row: Any) -> str:
        return "within" if float(row.low) <= value <= float(row.high) else "below" if value < float(row.low) else "above"

    ranges = [NoiseRange(str(r.comparison), float(r.low), float(r.high), place(r)) for r in rows]
    groups = tuple((where, tuple(r for r in ranges if r.place == where)) for where in ("within", "below", "above")
                   if any(r.place == where for r in ranges))
    return NoiseVerdict(verdict, rows[0].source == ESTIMATE_DRAW, float(level), groups)
