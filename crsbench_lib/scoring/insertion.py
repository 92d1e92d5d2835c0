"""Insertion test (method section 6, item 5).

Score the existing encoders, add candidates, score again. Under a fixed
reference standard every existing score is unchanged to the last bit
(displacement exactly 0), because a CRS depends only on the encoder's own
profile and the standard. Under cohort renormalisation the anchors (cohort
min/max) and the panel (the cohort) change with the cohort, so existing
scores move.

Ranks need two measures, because an incumbent's *position* can change for two
different reasons:

* **pairwise order changes** (:func:`~crsbench_lib.scoring.rank_statistics.order_changes`): pairs of incumbents that
  the two scorings order differently. This is what the fixed-reference claim is
  about: with every incumbent's score unchanged, their relative order cannot
  change, so the count is 0 under a fixed reference, always;
* **positional shifts**: incumbents whose rank in the whole list changed. A
  newcomer placed above an incumbent pushes it down one place without any
  incumbent pair changing order, so positions shift under a fixed reference
  too; that is arithmetic, not a rewritten history.

A reordering means something only beside the noise of the ranking itself
(method section 9, amendment 13): :func:`insertion_retest` scores the existing
encoders one seed at a time under each scheme and compares every pair of seeds
(Kendall tau-b and order changes), and :func:`rank_noise_table` puts that
test-retest baseline beside the insertion's own tau. The bootstrap-draw
baseline (:func:`scheme_draws`: the existing encoders' profiles in every draw
of the two-level bootstrap, scored under each scheme) joins both in
:func:`insertion_noise_table`, the shared noise table of every rank comparison.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from crsbench_lib.errors import SchemaError
from crsbench_lib.scoring.axes import CELL, encoder_profiles
from crsbench_lib.scoring.crs import cohort_renormalised_scores, score_profiles
from crsbench_lib.scoring.rank_statistics import kendall_tau_b, order_changes
from crsbench_lib.scoring.retest import WITHIN_ARM, bootstrap_retest_taus, noise_baseline_table, retest_summary
from crsbench_lib.standard import AXES, ReferenceStandard

#: The two scoring schemes of the chapter, in display order (the row names of :func:`rank_change_table`).
FIXED = "fixed reference"
COHORT = "cohort-renormalised"
SCHEMES: tuple[str, str] = (FIXED, COHORT)


@dataclass(frozen=True, eq=False)
class InsertionResult:
    """Outcome of :func:`insertion_test`.

    Attributes
    ----------
    existing : pandas.DataFrame
        Per existing encoder: crs_fixed_before, crs_fixed_after,
        fixed_displacement, rank_fixed_before, rank_fixed_after,
        crs_cohort_before, crs_cohort_after, cohort_displacement,
        rank_cohort_before, rank_cohort_after (ranks "after" are positions in
        the whole list, newcomers included).
    candidates : pandas.DataFrame
        The candidates' fixed-reference scores (as :func:`score_profiles`).
    max_abs_fixed_displacement, max_abs_cohort_displacement : float
        Largest absolute change of an existing encoder's CRS.
    fixed_order_changes, cohort_order_changes : int
        Pairs of existing encoders whose relative order changed
        (:func:`~crsbench_lib.scoring.rank_statistics.order_changes`); 0 under the fixed reference.
    fixed_positions_shifted, cohort_positions_shifted : int
        Existing encoders whose rank in the whole list (newcomers included)
        differs from their rank before the insertion.
    n_pairs : int
        Pairs of existing encoders, ``n (n - 1) / 2``.
    fixed_tau, cohort_tau : float
        Kendall's tau-b between the existing encoders' scores before and after
        (:func:`rank_tau`); 1 under the fixed reference (NaN with fewer than
        two existing encoders, or a constant score vector).
    """

    existing: pd.DataFrame
    candidates: pd.DataFrame
    max_abs_fixed_displacement: float
    max_abs_cohort_displacement: float
    fixed_order_changes: int
    cohort_order_changes: int
    fixed_positions_shifted: int
    cohort_positions_shifted: int
    n_pairs: int
    fixed_tau: float
    cohort_tau: float


def insertion_test(existing: pd.DataFrame, candidates: pd.DataFrame, standard: ReferenceStandard) -> InsertionResult:
    """Compare fixed-reference and cohort-renormalised scores before and after inserting candidates.

    Parameters
    ----------
    existing : pandas.DataFrame
        Raw profiles of the encoders already scored (index encoder, columns D, C, L, R).
    candidates : pandas.DataFrame
        Raw profiles of the newcomers (names must not repeat existing ones).
    standard : ReferenceStandard
        The fixed standard; its weights also weigh the cohort-renormalised CRS.

    Returns
    -------
    InsertionResult

    Raises
    ------
    SchemaError
        If a candidate repeats an existing name, or profiles lack an axis or hold NaN.
    ReferenceStandardError
        If the standard's panel is empty.
    """
    clash = sorted(set(map(str, existing.index)) & set(map(str, candidates.index)))
    if clash:
        raise SchemaError(f"candidate '{clash[0]}' is already an existing encoder")
    if existing.index.has_duplicates or candidates.index.has_duplicates:
        raise SchemaError("profiles name an encoder twice")
    cohort = pd.concat([existing, candidates])
    names = [str(e) for e in existing.index]

    def by_name(table: pd.DataFrame) -> pd.DataFrame:
        return table.set_index("encoder").loc[names]

    fixed_before = by_name(score_profiles(existing, standard))
    fixed_after_all = score_profiles(cohort, standard)
    fixed_after = by_name(fixed_after_all)
    cohort_before = by_name(cohort_renormalised_scores(existing, standard))
    cohort_after = by_name(cohort_renormalised_scores(cohort, standard))

    table = pd.DataFrame(
        {
            "encoder": names,
            "crs_fixed_before": fixed_before["crs"].to_numpy(),
            "crs_fixed_after": fixed_after["crs"].to_numpy(),
            "rank_fixed_before": fixed_before["rank"].to_numpy(),
            "rank_fixed_after": fixed_after["rank"].to_numpy(),
            "crs_cohort_before": cohort_before["crs"].to_numpy(),
            "crs_cohort_after": cohort_after["crs"].to_numpy(),
            "rank_cohort_before": cohort_before["rank"].to_numpy(),
            "rank_cohort_after": cohort_after["rank"].to_numpy(),
        }
    )
    table["fixed_displacement"] = table["crs_fixed_after"] - table["crs_fixed_before"]
    table["cohort_displacement"] = table["crs_cohort_after"] - table["crs_cohort_before"]
    candidate_names = {str(c) for c in candidates.index}
    return InsertionResult(
        existing=table,
        candidates=fixed_after_all[fixed_after_all["encoder"].isin(candidate_names)].reset_index(drop=True),
        max_abs_fixed_displacement=float(np.abs(table["fixed_displacement"]).max()),
        max_abs_cohort_displacement=float(np.abs(table["cohort_displacement"]).max()),
        fixed_order_changes=order_changes(table["crs_fixed_before"], table["crs_fixed_after"]),
        cohort_order_changes=order_changes(table["crs_cohort_before"], table["crs_cohort_after"]),
        fixed_positions_shifted=int((table["rank_fixed_before"] != table["rank_fixed_after"]).sum()),
        cohort_positions_shifted=int((table["rank_cohort_before"] != table["rank_cohort_after"]).sum()),
        n_pairs=len(names) * (len(names) - 1) // 2,
        fixed_tau=kendall_tau_b(table["crs_fixed_before"], table["crs_fixed_after"]),
        cohort_tau=kendall_tau_b(table["crs_cohort_before"], table["crs_cohort_after"]),
    )


#: Columns of :func:`rank_change_table`.
RANK_CHANGE_COLUMNS: tuple[str, ...] = (
    "scheme", "max_abs_crs_displacement", "pairwise_order_changes", "n_pairs", "positions_shifted", "n_existing",
)


def rank_change_table(result: InsertionResult) -> pd.DataFrame:
    """One row per scoring scheme: score displacement, pairwise order changes and positional shifts.

    Parameters
    ----------
    result : InsertionResult
        :func:`insertion_test` output.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`RANK_CHANGE_COLUMNS`, rows "fixed reference" and
        "cohort-renormalised".

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> from crsbench_lib.scoring import freeze_standard
    >>> from crsbench_lib.scoring.axes import encoder_profiles, standard_axes
    >>> table = synthetic_results(n_encoders=5, corruptions=("noise",), random_state=0)
    >>> std = freeze_standard(table, "doc-v1", created="2026-01-01T00:00:00Z")
    >>> profiles = encoder_profiles(standard_axes(table, std))
    >>> out = rank_change_table(insertion_test(profiles.iloc[:3], profiles.iloc[3:], std))
    >>> int(out.set_index("scheme").at["fixed reference", "pairwise_order_changes"])
    0
    """
    n_existing = len(result.existing)
    rows = [
        ("fixed reference", result.max_abs_fixed_displacement, result.fixed_order_changes, result.n_pairs,
         result.fixed_positions_shifted, n_existing),
        ("cohort-renormalised", result.max_abs_cohort_displacement, result.cohort_order_changes, result.n_pairs,
         result.cohort_positions_shifted, n_existing),
    ]
    return pd.DataFrame(rows, columns=list(RANK_CHANGE_COLUMNS))


#: Columns of :func:`insertion_retest`.
INSERTION_RETEST_COLUMNS: tuple[str, ...] = (
    "scheme", "seed_a", "seed_b", "kendall_tau", "order_changes", "n_pairs", "n_encoders",
)


def seedwise_existing_scores(
    raw: pd.DataFrame, existing: Sequence[str], standard: ReferenceStandard
) -> dict[str, dict[int, pd.Series]]:
    """The existing encoders' CRS under each scheme, scored from one seed at a time.

    The rankings the insertion compares, each as noisy as a one-seed study:
    per seed, the profiles of that seed alone (:func:`encoder_profiles` on its
    rows of ``raw``), scored against the fixed standard
    (:func:`~crsbench_lib.scoring.crs.score_profiles`, what
    :func:`crsbench_lib.scoring.retest.seedwise_scores` gives) and renormalised
    on the existing cohort (:func:`~crsbench_lib.scoring.crs.cohort_renormalised_scores`).

    Parameters
    ----------
    raw : pandas.DataFrame
        Raw axes per encoder x dataset x seed (:func:`~crsbench_lib.scoring.axes.raw_axes`),
        the table the insertion's profiles were averaged from.
    existing : sequence of str
        The existing encoders (each must be in ``raw``).
    standard : ReferenceStandard

    Returns
    -------
    dict
        Scheme (:data:`SCHEMES`) -> seed -> CRS indexed by encoder (sorted).

    Raises
    ------
    SchemaError
        If ``raw`` lacks a column, names no seed, or lacks an existing encoder.

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> from crsbench_lib.scoring import freeze_standard
    >>> from crsbench_lib.scoring.axes import standard_axes
    >>> table = synthetic_results(n_encoders=4, corruptions=("noise",), random_state=0)
    >>> std = freeze_standard(table, "doc-v1", created="2026-01-01T00:00:00Z")
    >>> scores = seedwise_existing_scores(standard_axes(table, std), ["enc00", "enc01", "enc02"], std)
    >>> sorted(scores), sorted(scores[FIXED]), list(scores[COHORT][0].index)
    (['cohort-renormalised', 'fixed reference'], [0, 1, 2], ['enc00', 'enc01', 'enc02'])
    """
    missing = [c for c in CELL + list(AXES) if c not in raw.columns]
    if missing:
        raise SchemaError(f"raw axes table lacks column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    names = sorted(str(e) for e in existing)
    absent = sorted(set(names) - set(raw["encoder"].astype(str)))
    if absent:
        raise SchemaError(f"raw axes table: existing encoder {absent[0]!r} has no rows")
    rows = raw[raw["encoder"].astype(str).isin(names)]
    if rows.empty:
        raise SchemaError("raw axes table: no rows of the existing encoders")
    out: dict[str, dict[int, pd.Series]] = {FIXED: {}, COHORT: {}}
    for seed in sorted(int(s) for s in rows["seed"].unique()):
        profiles = encoder_profiles(rows[rows["seed"] == seed])
        for scheme, scored in ((FIXED, score_profiles(profiles, standard)),
                               (COHORT, cohort_renormalised_scores(profiles, standard))):
            out[scheme][seed] = pd.Series(scored["crs"].to_numpy(dtype=float),
                                          index=scored["encoder"].astype(str)).sort_index()
    return out


def insertion_retest(raw: pd.DataFrame, existing: Sequence[str], standard: ReferenceStandard) -> pd.DataFrame:
    """Test-retest of the existing encoders' ranking under each scheme: every pair of seeds compared.

    The noise baseline of the insertion's rank comparison (method section 9,
    amendment 13): two seeds of a run redraw the train, validation and
    calibration splits and the probe's seed while the test images stay, so
    the tau between two one-seed rankings (:func:`seedwise_existing_scores`)
    is what re-running with a new seed does to the order. With three seeds
    there are three pairs, and pairs share seeds: their range describes this
    run, it is not a test.

    Parameters
    ----------
    raw : pandas.DataFrame
    existing : sequence of str
    standard : ReferenceStandard

    Returns
    -------
    pandas.DataFrame
        Columns :data:`INSERTION_RETEST_COLUMNS`, one row per scheme and pair
        of distinct seeds (none with a single seed): tau-b (:func:`rank_tau`)
        and pairwise order changes (:func:`~crsbench_lib.scoring.rank_statistics.order_changes`) between the two
        seeds' scores of the same encoders.

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> from crsbench_lib.scoring import freeze_standard
    >>> from crsbench_lib.scoring.axes import standard_axes
    >>> table = synthetic_results(n_encoders=5, corruptions=("noise",), random_state=0)
    >>> std = freeze_standard(table, "doc-v1", created="2026-01-01T00:00:00Z")
    >>> pairs = insertion_retest(standard_axes(table, std), ["enc00", "enc01", "enc02", "enc03"], std)
    >>> pairs.groupby("scheme", sort=False).size().to_dict()
    {'fixed reference': 3, 'cohort-renormalised': 3}
    """
    scores = seedwise_existing_scores(raw, existing, standard)
    rows = []
    for scheme in SCHEMES:
        by_seed = scores[scheme]
        for s, t in itertools.combinations(sorted(by_seed), 2):
            a, b = by_seed[s], by_seed[t].loc[by_seed[s].index]
            n = len(a)
            rows.append((scheme, s, t, kendall_tau_b(a, b), order_changes(a, b), n * (n - 1) // 2, n))
    return pd.DataFrame(rows, columns=list(INSERTION_RETEST_COLUMNS))


#: Columns of :func:`rank_noise_table`.
RANK_NOISE_COLUMNS: tuple[str, ...] = (
    "scheme", "insertion_tau", "insertion_order_changes", "n_pairs", "retest_seed_pairs", "retest_mean_tau",
    "retest_min_tau", "retest_max_tau", "retest_min_order_changes", "retest_max_order_changes",
)


def rank_noise_table(result: InsertionResult, retest: pd.DataFrame) -> pd.DataFrame:
    """Per scheme, the insertion's rank comparison beside the test-retest of the same ranking.

    Parameters
    ----------
    result : InsertionResult
        :func:`insertion_test` output.
    retest : pandas.DataFrame
        :func:`insertion_retest` output for the same existing encoders.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`RANK_NOISE_COLUMNS`, rows :data:`SCHEMES`: the
        insertion's tau-b and order changes (before against after, on the
        profiles averaged over seeds), and the mean, minimum and maximum tau-b
        (:func:`crsbench_lib.scoring.retest.retest_summary`) and the range of
        order changes between two seeds (NaN where the run has one seed).

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> from crsbench_lib.scoring import freeze_standard
    >>> from crsbench_lib.scoring.axes import encoder_profiles, standard_axes
    >>> table = synthetic_results(n_encoders=5, corruptions=("noise",), random_state=0)
    >>> std = freeze_standard(table, "doc-v1", created="2026-01-01T00:00:00Z")
    >>> raw = standard_axes(table, std)
    >>> profiles = encoder_profiles(raw)
    >>> result = insertion_test(profiles.iloc[:4], profiles.iloc[4:], std)
    >>> out = rank_noise_table(result, insertion_retest(raw, list(profiles.index[:4]), std))
    >>> float(out.set_index("scheme").at["fixed reference", "insertion_tau"])
    1.0
    """
    summary = pd.DataFrame(columns=["arms", "n_pairs", "mean_tau", "min_tau", "max_tau"])
    if len(retest):
        summary = retest_summary(retest.assign(comparison=WITHIN_ARM, arm_a=retest["scheme"], arm_b=retest["scheme"]))
    summary = summary.set_index("arms")
    changes = retest.groupby("scheme")["order_changes"].agg(["min", "max"]) if len(retest) else pd.DataFrame()
    rows = []
    for scheme, tau, moved in ((FIXED, result.fixed_tau, result.fixed_order_changes),
                               (COHORT, result.cohort_tau, result.cohort_order_changes)):
        has = scheme in summary.index
        row = summary.loc[scheme] if has else None
        rows.append((
            scheme, tau, moved, result.n_pairs,
            int(row["n_pairs"]) if has else 0,
            float(row["mean_tau"]) if has else np.nan,
            float(row["min_tau"]) if has else np.nan,
            float(row["max_tau"]) if has else np.nan,
            float(changes.at[scheme, "min"]) if has else np.nan,
            float(changes.at[scheme, "max"]) if has else np.nan,
        ))
    return pd.DataFrame(rows, columns=list(RANK_NOISE_COLUMNS))


def scheme_draws(
    profile_draws: np.ndarray, encoders: Sequence[str], existing: Sequence[str], standard: ReferenceStandard
) -> dict[str, np.ndarray]:
    """The existing encoders' CRS under each scheme in every bootstrap draw of their profiles.

    The input of the bootstrap-draw baseline of the insertion's rank
    comparison (:func:`crsbench_lib.scoring.retest.bootstrap_retest_taus`):
    each draw's raw profiles (seeds and test images resampled, e.g.
    ``two_level_bootstrap(...).profile_draws``) are scored as the insertion
    scores the existing encoders, against the fixed standard
    (:func:`~crsbench_lib.scoring.crs.score_profiles`) and renormalised on the
    existing cohort (:func:`~crsbench_lib.scoring.crs.cohort_renormalised_scores`).

    Parameters
    ----------
    profile_draws : numpy.ndarray
        Shape (B, n_encoders, 4): raw D, C, L, R per draw and encoder.
    encoders : sequence of str
        The encoders of the second axis, in order.
    existing : sequence of str
        The existing encoders (each among ``encoders``).
    standard : ReferenceStandard

    Returns
    -------
    dict
        Scheme (:data:`SCHEMES`) -> array (B, n_existing), columns in sorted encoder order.

    Raises
    ------
    SchemaError
        If the draws' shape does not match ``encoders``, or an existing encoder is absent.

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> from crsbench_lib.scoring import freeze_standard
    >>> from crsbench_lib.scoring.axes import standard_axes
    >>> table = synthetic_results(n_encoders=4, corruptions=("noise",), random_state=0)
    >>> std = freeze_standard(table, "doc-v1", created="2026-01-01T00:00:00Z")
    >>> point = encoder_profiles(standard_axes(table, std))[list(AXES)].to_numpy()
    >>> draws = scheme_draws(np.stack([point, point]), ["enc00", "enc01", "enc02", "enc03"], ["enc00", "enc01", "enc02"], std)
    >>> draws[FIXED].shape, draws[COHORT].shape
    ((2, 3), (2, 3))
    """
    values = np.asarray(profile_draws, dtype=float)
    names = [str(e) for e in encoders]
    if values.ndim != 3 or values.shape[1:] != (len(names), len(AXES)):
        raise SchemaError(f"profile draws: expected shape (draws, {len(names)}, {len(AXES)}), got {values.shape}")
    keep = sorted(str(e) for e in existing)
    absent = sorted(set(keep) - set(names))
    if absent:
        raise SchemaError(f"profile draws: existing encoder {absent[0]!r} is not among the draws' encoders")
    columns = [names.index(e) for e in keep]
    out = {scheme: np.empty((values.shape[0], len(keep))) for scheme in SCHEMES}
    for b in range(values.shape[0]):
        profiles = pd.DataFrame(values[b, columns], index=pd.Index(keep, name="encoder"), columns=list(AXES))
        for scheme, scored in ((FIXED, score_profiles(profiles, standard)),
                               (COHORT, cohort_renormalised_scores(profiles, standard))):
            out[scheme][b] = scored.set_index(scored["encoder"].astype(str))["crs"].loc[keep].to_numpy(dtype=float)
    return out


#: Per scheme: the label of the insertion's comparison and of the ranking whose noise it is read against.
NOISE_LABELS: dict[str, tuple[str, str]] = {
    FIXED: ("the insertion under the fixed reference", "the fixed-reference ranking"),
    COHORT: ("the insertion under cohort renormalisation", "the cohort-renormalised ranking"),
}


def insertion_noise_table(
    result: InsertionResult, retest: pd.DataFrame, draws: dict[str, np.ndarray], interval: float = 0.95
) -> pd.DataFrame:
    """The insertion's tau per scheme beside both noise baselines of that scheme's ranking.

    :func:`crsbench_lib.scoring.retest.noise_baseline_table` with the labels
    :data:`NOISE_LABELS`: the insertion's tau-b (before against after) per
    scheme; the seed-redraw taus of the scheme's ranking
    (:func:`insertion_retest`); and its bootstrap-draw taus
    (:func:`crsbench_lib.scoring.retest.bootstrap_retest_taus` of
    :func:`scheme_draws`).

    Parameters
    ----------
    result : InsertionResult
    retest : pandas.DataFrame
        :func:`insertion_retest` output for the same existing encoders.
    draws : dict
        :func:`scheme_draws` output for the same existing encoders.
    interval : float
        Coverage of the bootstrap rows' range.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`crsbench_lib.scoring.retest.NOISE_BASELINE_COLUMNS`.

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> from crsbench_lib.scoring import freeze_standard
    >>> from crsbench_lib.scoring.axes import standard_axes
    >>> table = synthetic_results(n_encoders=5, corruptions=("noise",), random_state=0)
    >>> std = freeze_standard(table, "doc-v1", created="2026-01-01T00:00:00Z")
    >>> raw = standard_axes(table, std)
    >>> profiles = encoder_profiles(raw)
    >>> existing = list(profiles.index[:4])
    >>> result = insertion_test(profiles.iloc[:4], profiles.iloc[4:], std)
    >>> point = profiles[list(AXES)].to_numpy()
    >>> draws = scheme_draws(np.stack([point, point]), list(profiles.index), existing, std)
    >>> noise = insertion_noise_table(result, insertion_retest(raw, existing, std), draws)
    >>> noise[["source", "comparison"]].values.tolist()[0]
    ['observed', 'the insertion under the fixed reference']
    """
    return noise_baseline_table(
        {NOISE_LABELS[FIXED][0]: result.fixed_tau, NOISE_LABELS[COHORT][0]: result.cohort_tau},
        {NOISE_LABELS[s][1]: retest.loc[retest["scheme"] == s, "kendall_tau"] for s in SCHEMES},
        {NOISE_LABELS[s][1]: bootstrap_retest_taus(draws[s])["kendall_tau"] for s in SCHEMES},
        interval=interval)


@dataclass(frozen=True)
class InsertionFacts:
    """What the insertion page's action line reads.

    Attributes
    ----------
    n_newcomers, n_published : int
        Candidates inserted, and existing (published) encoders.
    max_fixed, max_cohort : float
        Largest change of a published CRS under the fixed reference and under cohort renormalisation.
    cohort_order_changes, n_pairs : int
        Pairs of published encoders cohort renormalisation reorders, of all their pairs.
    """

    n_newcomers: int
    n_published: int
    max_fixed: float
    max_cohort: float
    cohort_order_changes: int
    n_pairs: int


def insertion_facts(result: InsertionResult, n_newcomers: int) -> InsertionFacts:
    """The facts of the insertion page from its :class:`InsertionResult`."""
    return InsertionFacts(int(n_newcomers), len(result.existing), float(result.max_abs_fixed_displacement),
                          float(result.max_abs_cohort_displacement), int(result.cohort_order_changes),
                          int(result.n_pairs))
