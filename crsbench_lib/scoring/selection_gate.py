"""The selection gate: explicit per-axis thresholds plus the stable leading tier.

The study's operational advice is to treat encoder evaluation as a multi-axis
*gate* rather than a one-number leaderboard: a candidate that advances should
clear explicit expectations on discrimination, calibration, scarce-label
retention and robustness, and the aggregate score should only shortlist a
statistically stable leading tier, not crown a winner. This module applies both
rules to a table of encoder profiles:

* a threshold per axis in the axis's raw unit, with the axis's direction
  (method section 3): ``D >= t_D`` (macro-AUROC), ``C <= t_C`` (ECE),
  ``L >= t_L`` (retention), ``R <= t_R`` (AUROC loss). The thresholds are the
  caller's explicit choice (the book exposes them as notebook parameters);
  there is deliberately no library default, because acceptable values depend on
  the clinical use.
* the leading tier: encoders whose bootstrap probability of a top-k rank is at
  least ``tier_probability``.

Encoders named as *references* (e.g. one pretrained on the evaluation labels)
are gated and shown, but they are not candidates: they never join the tier and
never advance. :func:`threshold_failures` counts how many candidates each
threshold stops, so a report can say when a threshold binds nobody.

What neither rule can show is listed in :data:`DEPLOYMENT_EVIDENCE`: the
evidence a screening benchmark leaves to the intended deployment setting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from crsbench_lib.errors import SchemaError
from crsbench_lib.standard import AXES, HIGHER_IS_BETTER

# A threshold on a higher-is-better axis is a floor (raw value >= threshold), else a ceiling.
AXIS_LABELS: dict[str, str] = {
    "D": "discrimination (macro-AUROC)",
    "C": "calibration (ECE)",
    "L": "label efficiency (AUROC retention)",
    "R": "robustness (AUROC loss)",
}

DEPLOYMENT_EVIDENCE: tuple[tuple[str, str], ...] = (
    ("institutional shift", "one observed site pair only; other scanners, sites and populations untested"),
    ("population and pathology change", "the corruptions model acquisition and image quality, not case mix"),
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


def describe_thresholds(thresholds: Mapping[str, float]) -> pd.DataFrame:
    """The thresholds as a readable table: axis, meaning, rule (e.g. ``C <= 0.1``)."""
    checked = _validate_thresholds(thresholds)
    return pd.DataFrame(
        [
            {"axis": axis, "meaning": AXIS_LABELS[axis], "rule": f"{axis} {'>=' if HIGHER_IS_BETTER[axis] else '<='} {value:g}"}
            for axis, value in ((a, checked[a]) for a in AXES if a in checked)
        ]
    )


def selection_gate(
    profiles: pd.DataFrame,
    thresholds: Mapping[str, float],
    rank_probabilities: pd.DataFrame | None = None,
    tier_probability: float = 0.95,
    probability_column: str = "p_top3",
    references: Sequence[str] = (),
) -> pd.DataFrame:
    """Which encoders clear every threshold, and which form the stable leading tier.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Raw encoder profiles: an ``encoder`` column (or the encoder as index)
        and the axis columns named in ``thresholds``.
    thresholds : mapping of str to float
        Per-axis threshold in raw units; an axis not named is not gated.
    rank_probabilities : pandas.DataFrame, optional
        Bootstrap probabilities with ``encoder`` and ``probability_column``
        (e.g. the bootstrap summary's ``p_top3``). Without it no leading tier is computed.
    tier_probability : float
        Minimum probability for the leading tier, in (0, 1].
    probability_column : str
        Column of ``rank_probabilities`` to read.
    references : sequence of str
        Encoders that are shown but are not candidates: their decision is
        ``"reference, not a candidate"`` whatever they clear, they are never in
        the leading tier and need no rank probability.

    Returns
    -------
    pandas.DataFrame
        One row per encoder: ``encoder``, the gated axes, ``pass_<axis>`` per
        gated axis, ``clears_gate``, ``failed_axes`` (comma-separated, "" when
        none), and with rank probabilities ``p_tier`` and ``leading_tier``; then
        ``decision``: ``"advance"`` (leading tier and clears the gate),
        ``"leading tier, fails <axes>"``, ``"clears gate, outside leading tier"``
        or ``"fails <axes>"`` (``"reference, not a candidate"`` for a
        reference); ``role`` ("candidate" or "reference"). Sorted by decision
        then encoder, references last.

    Raises
    ------
    SchemaError
        On an unknown axis, a missing column, a non-finite threshold or profile
        value, or an encoder without a rank probability.
    ValueError
        If ``tier_probability`` is outside (0, 1].
    """
    checked = _validate_thresholds(thresholds)
    if isinstance(references, str):
        raise SchemaError(f"references must be a sequence of encoder names, got the string {references!r}")
    if not 0.0 < tier_probability <= 1.0:
        raise ValueError(f"tier_probability must lie in (0, 1], got {tier_probability!r}")
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
    if rank_probabilities is not None:
        for column in ("encoder", probability_column):
            if column not in rank_probabilities.columns:
                raise SchemaError(f"rank probabilities: missing column {column!r}")
        probs = pd.Series(
            rank_probabilities[probability_column].to_numpy(dtype=float),
            index=rank_probabilities["encoder"].astype(str).to_numpy(),
        )
        absent = sorted(set(out.loc[~is_reference, "encoder"]) - set(probs.index))
        if absent:
            raise SchemaError(f"rank probabilities: no value for encoder {absent[0]!r}")
        out["p_tier"] = np.where(is_reference, np.nan, probs.reindex(out["encoder"]).to_numpy())
        out["leading_tier"] = ~is_reference & (out["p_tier"].fillna(0.0) >= tier_probability)
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
