"""Schema of the results table and its validation.

One row is one evaluation of one encoder on one dataset at one seed, in one
arm, under one condition (method section 7). Columns that do not apply to a
condition hold a neutral value instead of a null, so that every row has a full
key and duplicate detection is exact:

* ``label_fraction`` is the *requested* fraction of the train split (1.0 for
  ``clean``, ``corruption`` and ``shift`` rows); ``label_fraction_used`` is the
  fraction actually used after stratification kept every class.
* ``corruption`` is ``"none"`` and ``severity`` is 0 outside ``corruption`` rows.
* ``calibration`` is ``"none"`` except in the post-hoc calibration ablation.
* ``standard_version`` is ``""`` until a table is scored against a standard.
* ``auroc_reference`` is NaN outside ``corruption`` rows. On a corruption row it
  is the clean AUROC on the very test images that were corrupted (each
  condition corrupts its own block of test images, ``corruptions.layout``), so that the robustness loss
  compares like with like instead of adding the sampling noise of two test sets.
  ``ece_reference`` is its calibration twin: the clean ECE on those same images.
* ``ece_floor`` is the expected ECE of a perfectly calibrated predictor with the
  row's confidences and n, ``ece_excess = ece - ece_floor`` (method section 9,
  amendment 5).
* ``c_rule`` and ``calibrator_split`` are protocol columns: the rule that chose
  the probe's ``C`` on the validation split (``probe_c``) and the split the
  post-hoc calibrators were fitted on (amendments 2 and 10). ``features`` is
  another: whether the row's probe was fitted on the frozen encoder's
  embeddings or on an adapted encoder's (amendment 12: in the LoRA arm, a label
  fraction whose validation subset is below ``lora.min_val_labels`` is not
  adapted, and its rows say ``frozen``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pandas as pd

from crsbench_lib.errors import SchemaError

ARMS: tuple[str, ...] = ("frozen", "lora")
CONDITIONS: tuple[str, ...] = ("clean", "label_fraction", "corruption", "shift", "cue_removed")
CALIBRATIONS: tuple[str, ...] = ("none", "temperature", "vector", "isotonic")
TASKS: tuple[str, ...] = ("binary", "multiclass", "multilabel")
#: Rules that choose the probe's C on the validation split (method section 9, amendment 10).
C_RULES: tuple[str, ...] = ("auroc", "log_loss")
#: The default rule: discrimination first (amendment 10).
DEFAULT_C_RULE: str = C_RULES[0]
#: What a row's probe was fitted on (column ``features``; "" in tables written before the column).
FEATURE_KINDS: tuple[str, ...] = ("frozen", "adapted")
#: The split post-hoc calibrators are fitted on (amendment 2).
CALIBRATOR_SPLIT = "calibration"
#: Corruption severities of the protocol (column ``severity``; 0 outside corruption rows).
SEVERITIES: tuple[int, ...] = (1, 2, 3, 4, 5)
#: The condition fields of a clean evaluation at 100% labels, uncalibrated: the neutral
#: values (see above) from which every other condition changes only its own fields.
CLEAN_CONDITION: Mapping[str, object] = MappingProxyType({
    "condition": "clean",
    "label_fraction": 1.0,
    "label_fraction_used": 1.0,
    "corruption": "none",
    "severity": 0,
    "calibration": "none",
})


@dataclass(frozen=True)
class Column:
    """One column of the results table.

    Attributes
    ----------
    name : str
        Column name.
    kind : {"str", "int", "float"}
        Logical type; checked on validation and enforced on write.
    description : str
        What the column holds (rendered in the book's schema appendix).
    required : bool
        Whether a table without it is rejected. Optional columns are filled with
        their default when missing.
    default : object
        Fill value for an optional column.
    """

    name: str
    kind: str
    description: str
    required: bool = True
    default: object = None


COLUMNS: tuple[Column, ...] = (
    Column("encoder", "str", "Encoder name (one family of the zoo or a hub model)."),
    Column("dataset", "str", "Dataset name."),
    Column("domain", "str", "Imaging domain: dermatology, ophthalmology, radiology, ..."),
    Column("task", "str", "Task type: binary, multiclass or multilabel.", False, "multiclass"),
    Column("seed", "int", "Seed of the probe's train subsample and solver."),
    Column("arm", "str", "frozen (linear probe on frozen features) or lora (adapted encoder)."),
    Column("condition", "str", "clean, label_fraction, corruption, shift or cue_removed (the test images without the shortcut cue)."),
    Column("label_fraction", "float", "Requested fraction of the train labels (1.0 unless condition is label_fraction)."),
    Column("label_fraction_used", "float", "Fraction of train labels actually used.", False, np.nan),
    Column("corruption", "str", "Corruption family, 'none' outside corruption rows."),
    Column("severity", "int", "Corruption severity 1..5, 0 outside corruption rows."),
    Column("calibration", "str", "Post-hoc calibrator: none, temperature, vector or isotonic."),
    Column("auroc", "float", "Macro-AUROC on the test split (one-vs-rest; mean over labels)."),
    Column("ece", "float", "Expected calibration error (bins and variant in ece_bins/ece_variant)."),
    Column("brier", "float", "Brier score (mean over classes or labels)."),
    Column("nll", "float", "Negative log-likelihood (mean per example)."),
    Column("accuracy", "float", "Top-1 accuracy (multi-label: mean per-label accuracy at 0.5)."),
    Column("n_test", "int", "Number of test examples."),
    Column(
        "auroc_reference",
        "float",
        "Corruption rows: clean AUROC of the same probe on the same (uncorrupted) test images, the paired "
        "reference of the robustness loss; NaN elsewhere.",
        False,
        np.nan,
    ),
    Column(
        "ece_reference",
        "float",
        "Corruption rows: clean ECE of the same probe on the same (uncorrupted) test images, the paired "
        "reference of the ECE increase; NaN elsewhere.",
        False,
        np.nan,
    ),
    Column(
        "ece_floor",
        "float",
        "Expected ECE of a perfectly calibrated predictor with the row's confidences and n (labels drawn from "
        "the model's own probabilities; same bins and variant as ece).",
        False,
        np.nan,
    ),
    Column("ece_excess", "float", "ece - ece_floor: the miscalibration the sample size does not explain.", False, np.nan),
    Column("ece_debiased", "float", "ECE with its finite-sample bias estimated and removed (Kumar et al. 2019; same bins "
           "and variant as ece; may be slightly negative); NaN in tables written before the column.", False, np.nan),
    Column("c_rule", "str", "Rule that chose the probe's C on the validation split: auroc or log_loss.", False, ""),
    Column("probe_c", "float", "The probe's inverse regularisation strength C chosen on validation.", False, np.nan),
    Column("calibrator_split", "str", "Split the post-hoc calibrators were fitted on.", False, ""),
    Column("features", "str", "Embeddings the row's probe was fitted on: frozen (the pretrained encoder's) or adapted "
           "(a LoRA adapter trained on the row's labels); '' in tables written before the column.", False, ""),
    Column("n_skipped", "int", "Classes or labels skipped by AUROC for having one outcome only.", False, 0),
    Column("ece_bins", "int", "Number of equal-width ECE bins.", False, 15),
    Column("ece_variant", "str", "ECE variant: top-label (multi-class) or binary-mean (multi-label).", False, ""),
    Column("config_hash", "str", "Hash of the run configuration that produced the row.", False, ""),
    Column("package_version", "str", "crsbench version that produced the row.", False, ""),
    Column("standard_version", "str", "Reference standard version, '' until scored.", False, ""),
)

COLUMN_BY_NAME: dict[str, Column] = {c.name: c for c in COLUMNS}
KEY_COLUMNS: tuple[str, ...] = (
    "encoder",
    "dataset",
    "seed",
    "arm",
    "condition",
    "label_fraction",
    "corruption",
    "severity",
    "calibration",
)
METRIC_COLUMNS: tuple[str, ...] = ("auroc", "ece", "brier", "nll", "accuracy")
# Metrics that must lie in [0, 1] whatever the task.
UNIT_INTERVAL_COLUMNS: tuple[str, ...] = ("auroc", "ece", "brier", "accuracy")

_PANDAS_DTYPES = {"str": "string", "int": "int64", "float": "float64"}


def empty_results() -> pd.DataFrame:
    """An empty results table with every column at its dtype."""
    return pd.DataFrame({c.name: pd.Series(dtype=_PANDAS_DTYPES[c.kind]) for c in COLUMNS})


def _rows(index: pd.Index, mask: np.ndarray | pd.Series, limit: int = 5) -> str:
    bad = list(index[np.asarray(mask, dtype=bool)])
    shown = ", ".join(str(i) for i in bad[:limit])
    more = f" and {len(bad) - limit} more" if len(bad) > limit else ""
    return f"row{'s' if len(bad) > 1 else ''} {shown}{more}"


def _coerce(frame: pd.DataFrame, column: Column, source: str) -> pd.Series:
    values = frame[column.name]
    if column.kind == "str":
        not_str = np.fromiter((not isinstance(v, str) for v in values), dtype=bool, count=len(values))
        if not_str.any():
            raise SchemaError(
                f"{source}: column '{column.name}' must hold text, "
                f"found {values[not_str].iloc[0]!r} in {_rows(frame.index, not_str)}"
            )
        return values.astype("string")
    numeric = pd.to_numeric(values, errors="coerce")
    not_numeric = numeric.isna() & values.notna()
    if not_numeric.any():
        raise SchemaError(
            f"{source}: column '{column.name}' must be numeric ({column.kind}), "
            f"found {values[not_numeric].iloc[0]!r} in {_rows(frame.index, not_numeric)}"
        )
    if column.kind == "int":
        missing = numeric.isna()
        if missing.any():
            raise SchemaError(f"{source}: column '{column.name}' has missing values in {_rows(frame.index, missing)}")
        fractional = numeric != np.round(numeric)
        if fractional.any():
            raise SchemaError(
                f"{source}: column '{column.name}' must hold integers, "
                f"found {numeric[fractional].iloc[0]!r} in {_rows(frame.index, fractional)}"
            )
        return numeric.astype("int64")
    return numeric.astype("float64")


def validate_results(frame: pd.DataFrame, source: str = "results table") -> pd.DataFrame:
    """Check a results table against the schema and return it with exact dtypes.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table to check. Extra columns are kept as they are.
    source : str
        Name used in error messages (a file path, say).

    Returns
    -------
    pandas.DataFrame
        A copy with every schema column at its dtype (text as pandas ``string``,
        ``int64``, ``float64``), optional columns filled, schema columns first.

    Raises
    ------
    SchemaError
        On a missing required column, a value of the wrong type, a NaN metric,
        a metric outside [0, 1] (AUROC, ECE, Brier, accuracy), a negative NLL,
        an unknown arm, condition, calibration or task, a severity outside 0..5,
        a label fraction outside (0, 1], or duplicate rows (same key). The
        message names the column and the rows at fault.
    """
    if not isinstance(frame, pd.DataFrame):
        raise SchemaError(f"{source}: expected a pandas DataFrame, got {type(frame).__name__}")
    missing = [c.name for c in COLUMNS if c.required and c.name not in frame.columns]
    if missing:
        raise SchemaError(f"{source}: missing required column{'s' if len(missing) > 1 else ''} {', '.join(repr(m) for m in missing)}")
    out = frame.copy()
    for column in COLUMNS:
        if column.name not in out.columns:
            out[column.name] = column.default
        out[column.name] = _coerce(out, column, source)

    for name in METRIC_COLUMNS:
        nan = out[name].isna()
        if nan.any():
            raise SchemaError(f"{source}: column '{name}' is NaN in {_rows(out.index, nan)}")
    for name in UNIT_INTERVAL_COLUMNS:
        outside = (out[name] < 0) | (out[name] > 1)
        if outside.any():
            raise SchemaError(
                f"{source}: column '{name}' must lie in [0, 1], "
                f"found {out.loc[outside, name].iloc[0]!r} in {_rows(out.index, outside)}"
            )
    for name in ("auroc_reference", "ece_reference", "ece_floor"):
        reference = out[name]
        outside = reference.notna() & ((reference < 0) | (reference > 1))
        if outside.any():
            raise SchemaError(f"{source}: column '{name}' must lie in [0, 1] or be NaN, in {_rows(out.index, outside)}")
    unknown_rule = (out["c_rule"] != "") & ~out["c_rule"].isin(C_RULES)
    if unknown_rule.any():
        raise SchemaError(
            f"{source}: column 'c_rule' has unknown value {out.loc[unknown_rule, 'c_rule'].iloc[0]!r} "
            f"in {_rows(out.index, unknown_rule)} (expected one of {', '.join(C_RULES)}, or '' when not recorded)"
        )
    unknown_features = (out["features"] != "") & ~out["features"].isin(FEATURE_KINDS)
    if unknown_features.any():
        raise SchemaError(
            f"{source}: column 'features' has unknown value {out.loc[unknown_features, 'features'].iloc[0]!r} "
            f"in {_rows(out.index, unknown_features)} (expected one of {', '.join(FEATURE_KINDS)}, or '' when not "
            "recorded)"
        )
    adapted_frozen = (out["features"] == "adapted") & (out["arm"] == "frozen")
    if adapted_frozen.any():
        raise SchemaError(f"{source}: frozen-arm rows cannot have adapted features, in {_rows(out.index, adapted_frozen)}")
    negative = out["nll"] < 0
    if negative.any():
        raise SchemaError(f"{source}: column 'nll' must be >= 0, found negative values in {_rows(out.index, negative)}")
    for name, allowed in (("arm", ARMS), ("condition", CONDITIONS), ("calibration", CALIBRATIONS), ("task", TASKS)):
        unknown = ~out[name].isin(allowed)
        if unknown.any():
            raise SchemaError(
                f"{source}: column '{name}' has unknown value {out.loc[unknown, name].iloc[0]!r} "
                f"in {_rows(out.index, unknown)} (expected one of {', '.join(allowed)})"
            )
    bad_severity = ~out["severity"].isin((0, *SEVERITIES))
    bad_severity |= (out["condition"] == "corruption") & (out["severity"] == 0)
    if bad_severity.any():
        raise SchemaError(
            f"{source}: column 'severity' must be 1..5 on corruption rows and 0 elsewhere, in {_rows(out.index, bad_severity)}"
        )
    bad_fraction = ~((out["label_fraction"] > 0) & (out["label_fraction"] <= 1))
    if bad_fraction.any():
        raise SchemaError(f"{source}: column 'label_fraction' must lie in (0, 1], in {_rows(out.index, bad_fraction)}")
    bad_count = out["n_test"] <= 0
    if bad_count.any():
        raise SchemaError(f"{source}: column 'n_test' must be positive, in {_rows(out.index, bad_count)}")
    duplicated = out.duplicated(subset=list(KEY_COLUMNS), keep=False)
    if duplicated.any():
        raise SchemaError(
            f"{source}: duplicate rows (same {', '.join(KEY_COLUMNS)}) in {_rows(out.index, duplicated)}"
        )
    ordered = [c.name for c in COLUMNS] + [c for c in out.columns if c not in COLUMN_BY_NAME]
    return out[ordered]
