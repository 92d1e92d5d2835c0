"""The selection gate: explicit per-axis thresholds plus the leading tier.

The study's operational advice is to treat encoder evaluation as a multi-axis
*gate* rather than a one-number leaderboard: a candidate that advances should
clear explicit expectations on discrimination, calibration, scarce-label
retention and robustness, and the aggregate score should only shortlist a
leading tier the data support, not crown a winner. This module applies both
rules to a table of encoder profiles:

* a threshold per axis in the axis's raw unit, with the axis's direction
  (method section 3): ``D >= t_D`` (macro-AUROC), ``C <= t_C`` (ECE),
  ``L >= t_L`` (retention), ``R <= t_R`` (loss), L and R on the standard's
  scales (a ratio and AUROC points on the study's; shares of the above-chance
  AUROC kept and lost on the chance scales). The thresholds are the
  caller's explicit choice (the book exposes them as notebook parameters);
  there is deliberately no library default, because acceptable values depend on
  the clinical use.
* the leading tier, read from a bootstrap summary's ``in_tier`` column and
  never recomputed here: the confidence set for the best candidate of
  :func:`~crsbench_lib.scoring.tier.best_confidence_set` (method section 9,
  amendment 15), the one definition every page of the book uses. A rank
  probability such as P(top k) describes the draws; it decides no membership.

Encoders named as *references* (e.g. one pretrained on the evaluation labels)
are gated and shown, but they are not candidates: they never join the tier and
never advance. :func:`threshold_failures` counts how many candidates each
threshold stops, so a report can say when a threshold binds nobody.

What neither rule can show is listed in :data:`DEPLOYMENT_EVIDENCE`: the
evidence a screening benchmark leaves to the intended deployment setting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from crsbench_lib.errors import SchemaError
from crsbench_lib.scoring.anchors import AXIS_UNITS, scale_key
from crsbench_lib.standard import AXES, HIGHER_IS_BETTER, ReferenceStandard

# A threshold on a higher-is-better axis is a floor (raw value >= threshold), else a ceiling.
AXIS_LABELS: dict[str, str] = {
    "D": "discrimination (macro-AUROC)",
    "C": "calibration (ECE)",
    "L": "label efficiency (AUROC retention)",
    "R": "robustness (AUROC loss)",
}

DEPLOYMENT_EVIDENCE: tuple[tuple[str, str], ...] = (
    ("institutional shift", "at most one second site per dataset; other scanners, sites and populations untested"),
    ("population and pathology change",
     "a second site's case mix is one population change; the corruptions model acquisition and image quality only"),
    ("adaptation",
     "a frozen-probe ranking need not survive adaptation; the transfer chapter measures how far it does here"),
    ("subgroups", "no subgroup or fairness analysis"),
    ("operating point", "AUROC and ECE are threshold-free; no operating point was chosen or validated"),
    ("human-AI interaction", "no reader study"),
    ("prospective validation", "retrospective test splits only"),
)


#: The gate's decision for a reference encoder, whatever it clears.
REFERENCE_DECISION = "reference, not a candidate"


def threshold_failures(gate: pd.DataFrame, thresholds: Mapping[str, float]) -> pd.DataFrame:
    """How many candidates each threshold stops: does it bind anyone?

    Parameters
    ----------
    gate : pandas.DataFrame
        The output of :func:`selection_gate` (``pass_<axis>`` columns, ``role``).
    thresholds : mapping of str to float
        The thresholds the gate applied.

    Returns
    -------
    pandas.DataFrame
        One row per gated axis (in D, C, L, R order): ``axis``, ``rule``,
        ``failing`` (candidates that miss it), ``failing_alone`` (candidates
        it is the only threshold to stop), ``candidates``, ``binds``
        (``failing > 0``).

    Examples
    --------
    >>> profiles = pd.DataFrame({"encoder": ["a", "b"], "D": [0.9, 0.6], "C": [0.05, 0.02]})
    >>> limits = {"D": 0.7, "C": 0.1}
    >>> threshold_failures(selection_gate(profiles, limits), limits)[["axis", "failing", "binds"]]
      axis  failing  binds
    0    D        1   True
    1    C        0  False
    """
    checked = _validate_thresholds(thresholds)
    gated = [a for a in AXES if a in checked]
    missing = [f"pass_{a}" for a in gated if f"pass_{a}" not in gate.columns] + [c for c in ("role",) if c not in gate.columns]
    if missing:
        raise SchemaError(f"gate: missing column {missing[0]!r} (expected the output of selection_gate)")
    candidates = gate[gate["role"] == "candidate"]
    passes = candidates[[f"pass_{a}" for a in gated]].to_numpy(dtype=bool)
    fails = ~passes
    alone = fails & (fails.sum(axis=1, keepdims=True) == 1)
    rules = describe_thresholds(checked).set_index("axis")["rule"]
    return pd.DataFrame({
        "axis": gated,
        "rule": [rules[a] for a in gated],
        "failing": fails.sum(axis=0).astype(int),
        "failing_alone": alone.sum(axis=0).astype(int),
        "candidates": len(candidates),
        "binds": fails.sum(axis=0) > 0,
    })


def _validate_thresholds(thresholds: Mapping[str, float]) -> dict[str, float]:
    unknown = sorted(set(thresholds) - set(AXES))
    if unknown:
        raise SchemaError(f"unknown threshold axis {unknown[0]!r} (expected some of {', '.join(AXES)})")
    if not thresholds:
        raise SchemaError(f"no thresholds given (expected some of {', '.join(AXES)})")
    out: dict[str, float] = {}
    for axis, value in thresholds.items():
        try:
            number = float(value)
        except (TypeError, ValueError) as exc:
            raise SchemaError(f"threshold for {axis!r} must be a number, got {value!r}") from exc
        if not np.isfinite(number):
            raise SchemaError(f"threshold for {axis!r} must be finite, got {value!r}")
        out[axis] = number
    return out


def describe_thresholds(thresholds: Mapping[str, float], standard: ReferenceStandard | None = None) -> pd.DataFrame:
    """The thresholds as a readable table: axis, meaning, rule (e.g. ``C <= 0.1``).

    With ``standard``, the meaning names the raw unit of the standard's scale
    (:data:`crsbench_lib.scoring.anchors.AXIS_UNITS`): the same ``R <= 0.15``
    allows a loss of 0.15 AUROC points on the study's scale and a loss of 15 %
    of the above-chance AUROC on the chance scale, a much stricter demand.

    Examples
    --------
    >>> from crsbench_lib.standard import load_template
    >>> describe_thresholds({"R": 0.15}, load_template())["meaning"].item()
    'robustness (share of above-chance AUROC lost)'
    >>> describe_thresholds({"R": 0.15})["meaning"].item()
    'robustness (AUROC loss)'
    """
    checked = _validate_thresholds(thresholds)

    def meaning(axis: str) -> str:
        if standard is None:
            return AXIS_LABELS[axis]
        return f"{AXIS_LABELS[axis].split(' (')[0]} ({AXIS_UNITS[scale_key(axis, standard)]})"

    return pd.DataFrame(
        [
            {"axis": axis, "meaning": meaning(axis), "rule": f"{axis} {'>=' if HIGHER_IS_BETTER[axis] else '<='} {value:g}"}
            for axis, value in ((a, checked[a]) for a in AXES if a in checked)
        ]
    )


def _tier_membership(summary: pd.DataFrame, encoders: pd.Series, is_reference: np.ndarray) -> np.ndarray:
    """The bootstrap's ``in_tier`` for every gated encoder, after checking the two agree on who competes."""
    for column in ("encoder", "in_tier"):
        if column not in summary.columns:
            raise SchemaError(f"bootstrap summary: missing column {column!r} (expected a bootstrap result's summary)")
    names = summary["encoder"].astype(str).to_numpy()
    if len(set(names)) != len(names):
        raise SchemaError("bootstrap summary: an encoder appears twice")
    in_tier = pd.Series(summary["in_tier"].to_numpy(dtype=bool), index=names)
    candidates = encoders[~is_reference]
    absent = sorted(set(candidates) - set(names))
    if absent:
        raise SchemaError(f"bootstrap summary: no row for encoder {absent[0]!r}")
    if "role" in summary.columns:
        roles = pd.Series(summary["role"].astype(str).to_numpy(), index=names)
        gated = encoders[encoders.isin(names)]
        expected = np.where(gated.isin(encoders[is_reference]), "reference", "candidate")
        differ = gated[roles.reindex(gated).to_numpy() != expected]
        if len(differ):
            raise SchemaError(f"bootstrap summary: encoder {differ.iloc[0]!r} is a "
                              f"{roles[differ.iloc[0]]} there but not in the gate (pass the same references to both)")
    out = np.zeros(len(encoders), dtype=bool)
    out[~is_reference] = in_tier.reindex(candidates).to_numpy(dtype=bool)
    return out


def selection_gate(
    profiles: pd.DataFrame,
    thresholds: Mapping[str, float],
    bootstrap_summary: pd.DataFrame | None = None,
    references: Sequence[str] = (),
) -> pd.DataFrame:
    """Which encoders clear every threshold, and which belong to the leading tier.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Raw encoder profiles: an ``encoder`` column (or the encoder as index)
        and the axis columns named in ``thresholds``.
    thresholds : mapping of str to float
        Per-axis threshold in raw units; an axis not named is not gated.
    bootstrap_summary : pandas.DataFrame, optional
        The ``summary`` of a bootstrap
        (:func:`~crsbench_lib.scoring.two_level_bootstrap.two_level_bootstrap`
        or :func:`~crsbench_lib.scoring.bootstrap.paired_seed_bootstrap`) with
        ``encoder`` and ``in_tier`` (and ``role``, checked against
        ``references``). Its ``in_tier`` is the leading tier; the gate copies
        it and decides nothing about it. Without it no tier is read.
    references : sequence of str
        Encoders that are shown but are not candidates: their decision is
        ``"reference, not a candidate"`` whatever they clear, they are never in
        the leading tier and need no row in the bootstrap summary.

    Returns
    -------
    pandas.DataFrame
        One row per encoder: ``encoder``, the gated axes, ``pass_<axis>`` per
        gated axis, ``clears_gate``, ``failed_axes`` (comma-separated, "" when
        none), ``role`` ("candidate" or "reference"), and with a bootstrap
        summary ``leading_tier`` (its ``in_tier``); then ``decision``:
        ``"advance"`` (leading tier and clears the gate), ``"leading tier,
        fails <axes>"``, ``"clears gate, outside leading tier"`` or ``"fails
        <axes>"`` (``"clears gate"`` without a summary; ``"reference, not a
        candidate"`` for a reference). Sorted by decision then encoder,
        references last.

    Raises
    ------
    SchemaError
        On an unknown axis, a missing column, a non-finite threshold or profile
        value, a candidate without a row in the bootstrap summary, or an
        encoder that is a reference in one of the gate and the bootstrap and a
        candidate in the other (the tier depends on who competes).

    Examples
    --------
    >>> profiles = pd.DataFrame({"encoder": ["a", "b", "c"], "D": [0.9, 0.85, 0.6]})
    >>> summary = pd.DataFrame({"encoder": ["a", "b", "c"], "in_tier": [True, True, False]})
    >>> selection_gate(profiles, {"D": 0.7}, summary)[["encoder", "leading_tier", "decision"]]
      encoder  leading_tier decision
    0       a          True  advance
    1       b          True  advance
    2       c         False  fails D
    """
    checked = _validate_thresholds(thresholds)
    if isinstance(references, str):
        raise SchemaError(f"references must be a sequence of encoder names, got the string {references!r}")
    table = profiles.reset_index() if "encoder" not in profiles.columns else profiles.copy()
    if "encoder" not in table.columns:
        raise SchemaError("profiles: expected an 'encoder' column or index")
    gated = [a for a in AXES if a in checked]
    missing = [a for a in gated if a not in table.columns]
    if missing:
        raise SchemaError(f"profiles: missing axis column(s) {', '.join(repr(m) for m in missing)}")
    out = table[["encoder", *gated]].copy()
    out["encoder"] = out["encoder"].astype(str)
    values = out[gated].to_numpy(dtype=float)
    if not np.isfinite(values).all():
        bad = out.loc[~np.isfinite(values).all(axis=1), "encoder"].iloc[0]
        raise SchemaError(f"profiles: non-finite axis value for encoder {bad!r}")
    failed: list[list[str]] = [[] for _ in range(len(out))]
    for axis in gated:
        passes = out[axis] >= checked[axis] if HIGHER_IS_BETTER[axis] else out[axis] <= checked[axis]
        out[f"pass_{axis}"] = passes.to_numpy(dtype=bool)
        for i in np.flatnonzero(~passes.to_numpy()):
            failed[i].append(axis)
    out["clears_gate"] = [not f for f in failed]
    out["failed_axes"] = [", ".join(f) for f in failed]
    unknown = sorted(set(references) - set(out["encoder"]))
    if unknown:
        raise SchemaError(f"references: no profile for encoder {unknown[0]!r}")
    is_reference = out["encoder"].isin(set(references)).to_numpy()
    out["role"] = np.where(is_reference, "reference", "candidate")
    if bootstrap_summary is not None:
        out["leading_tier"] = _tier_membership(bootstrap_summary, out["encoder"], is_reference)
        out["decision"] = [
            _decision(tier, fails) for tier, fails in zip(out["leading_tier"], out["failed_axes"], strict=True)
        ]
    else:
        out["decision"] = ["clears gate" if not f else f"fails {f}" for f in out["failed_axes"]]
    out.loc[is_reference, "decision"] = REFERENCE_DECISION
    out["_order"] = out["decision"].map(_decision_order)
    out = out.sort_values(["_order", "encoder"], kind="mergesort").drop(columns="_order")
    return out.reset_index(drop=True)


def _decision(leading: bool, failed_axes: str) -> str:
    if leading and not failed_axes:
        return "advance"
    if leading:
        return f"leading tier, fails {failed_axes}"
    if not failed_axes:
        return "clears gate, outside leading tier"
    return f"fails {failed_axes}"


def _decision_order(decision: str) -> int:
    for rank, prefix in enumerate(("advance", "leading tier", "clears gate", "fails", REFERENCE_DECISION)):
        if decision.startswith(prefix):
            return rank
    return len(decision)  # pragma: no cover - every decision has one of the prefixes


def deployment_evidence() -> pd.DataFrame:
    """What a screening benchmark cannot show: one row per item of :data:`DEPLOYMENT_EVIDENCE`."""
    return pd.DataFrame(DEPLOYMENT_EVIDENCE, columns=["evidence still needed", "why the benchmark cannot supply it"])


@dataclass(frozen=True)
class GateFacts:
    """What the selection gate decided, for the words that say what a team does next.

    Attributes
    ----------
    n_candidates : int
        Candidates screened (references not counted).
    advance, tier, clears : tuple of str
        The candidates that advance, the leading tier and the candidates
        clearing every threshold (best first).
    idle_rules, binding_rules : tuple of str
        The thresholds that stop no candidate, and those that stop one or more.
    untrained_clearing : tuple of str
        Encoders with no pretraining that clear every threshold (a sign the
        thresholds are too lax for this cohort).
    """

    n_candidates: int
    advance: tuple[str, ...]
    tier: tuple[str, ...]
    clears: tuple[str, ...]
    idle_rules: tuple[str, ...]
    binding_rules: tuple[str, ...]
    untrained_clearing: tuple[str, ...]


def gate_facts(advance: Sequence[str], tier: Sequence[str], clears: Sequence[str], n_candidates: int,
               failures: pd.DataFrame, untrained_clearing: Sequence[str] = ()) -> GateFacts:
    """The gate page's facts from its decision and :func:`threshold_failures`.

    Examples
    --------
    >>> failures = pd.DataFrame({"rule": ["D >= 0.7", "C <= 0.1"], "failing": [1, 0]})
    >>> gate_facts(["a"], ["a", "b"], ["a"], 2, failures).idle_rules
    ('C <= 0.1',)
    """
    rules = failures[["rule", "failing"]].itertuples(index=False)
    idle, binding = [], []
    for rule, failing in rules:
        (binding if int(failing) > 0 else idle).append(str(rule))
    return GateFacts(int(n_candidates), tuple(map(str, advance)), tuple(map(str, tier)), tuple(map(str, clears)),
                     tuple(idle), tuple(binding), tuple(map(str, untrained_clearing)))
