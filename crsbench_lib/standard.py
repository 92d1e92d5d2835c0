"""The versioned reference standard (method sections 4 and 5).

A reference standard fixes everything a CRS depends on besides the candidate's
own profile: the per-axis anchors, the component weights, the label fractions
that enter ``L``, the ECE binning, and the reference panel (names and
*normalised* profiles). It is a YAML file::

    format: crs-standard/1
    version: crs-default-v8
    created: '2026-11-30T05:00:00Z'
    description: ...
    arm: frozen                       # arm the panel was frozen from
    anchors: {D: {worst: .., best: ..}, C: {...}, L: {...}, R: {...}}
    weights: {dominance: .., balance: .., floor: ..}
    label_fractions: [1.0, ...]
    ece_bins: 15
    axis_scales: {L: chance, R: chance, chance_margin: 0.05}   # absent: the study's scales
    dominance: {form: noise_aware, noise_sd: {D: .., C: .., L: .., R: ..}}   # absent: Pareto
    robustness: {average: .., worst: .., shift: ..}   # absent: the study's equal shares
    source_results_hash: sha256:...   # the results table the panel came from
    panel:
      - {name: enc00, D: .., C: .., L: .., R: ..}
    content_hash: sha256:...          # over every field but created/description

The method's default numbers live only in ``standards/crs-template.yaml``;
the code reads them from there. This module sits below scoring (it imports only
the results schema), so that the runner, the registry and the report read the
format without the scorer; freezing a panel from results is
:func:`crsbench_lib.scoring.freeze.freeze_standard`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from crsbench_lib.atomic import atomic_write_text
from crsbench_lib.errors import ReferenceStandardError
from crsbench_lib.hashing import sha256_of
from crsbench_lib.paths import standards_dir
from crsbench_lib.results.validated import ValidatedResults, as_validated
from crsbench_lib.results.select import clean_rows

#: The axes in their fixed order (columns of every profile array; method section 3).
AXES: tuple[str, ...] = ("D", "C", "L", "R")
#: Direction of each axis: True where a higher raw value is better.
HIGHER_IS_BETTER: dict[str, bool] = {"D": True, "C": False, "L": True, "R": False}

FORMAT = "crs-standard/1"
WEIGHT_KEYS: tuple[str, ...] = ("dominance", "balance", "floor")
TEMPLATE_FILENAME = "crs-template.yaml"
#: The shipped default standard's name: the ``standard:`` of the shipped profiles and
#: ``crsbench score``'s default (a new version changes this one constant).
DEFAULT_STANDARD = "crs-default-v8"
DEFAULT_FILENAME = f"{DEFAULT_STANDARD}.yaml"
# Weights must sum to one up to float rounding of the decimal values in the file.
WEIGHT_SUM_TOLERANCE = 1e-9
# Fields that describe a standard but do not change any score: left out of the hash.
_UNHASHED = ("created", "description", "content_hash")
#: The AUROC of a ranking by chance: the zero of the chance-corrected scales.
CHANCE_AUROC = 0.5
#: Scales of the label-efficiency axis: the study's AUROC retention ratio
#: ``AUROC_f / AUROC_1.0``, or the retention of above-chance discrimination
#: ``(AUROC_f - 0.5) / (AUROC_1.0 - 0.5)`` (method section 9, amendment 14).
L_SCALES: tuple[str, ...] = ("ratio", "chance")
#: Scales of the robustness axis: the study's AUROC loss in points, or the loss as a
#: share of the clean above-chance discrimination, ``loss / (AUROC_clean - 0.5)``.
R_SCALES: tuple[str, ...] = ("points", "chance")
#: Forms of the dominance term: the study's count of panel members Pareto-dominated, or
#: the noise-aware count, each member weighted by the probability that the candidate
#: dominates it given the axes' measurement noise (method section 9, amendment 20).
DOMINANCE_FORMS: tuple[str, ...] = ("pareto", "noise_aware")
#: Estimators of the calibration axis: the study's plug-in binned ECE, or the same
#: ECE with its finite-sample bias estimated and removed (method section 9, amendment 21;
#: :func:`crsbench_lib.metrics.calibration.debiased_ece`).
ECE_ESTIMATORS: tuple[str, ...] = ("plugin", "debiased")
#: The pieces of the robustness axis, in their fixed order (method section 3): the average
#: corruption loss, the worst family's corruption loss and the site-B shift loss.
R_PIECES: tuple[str, ...] = ("average", "worst", "shift")


@dataclass(frozen=True)
class AxisScales:
    """On which scale a standard measures label efficiency and robustness (method section 9, amendment 14).

    A standard without an ``axis_scales`` field uses the study's scales
    (``AxisScales()``): standards frozen before the amendment keep their
    meaning and their content hash.

    Attributes
    ----------
    label_efficiency : {"ratio", "chance"}
        ``ratio``: mean over fractions of ``AUROC_f / AUROC_1.0``; ``chance``:
        mean of ``(AUROC_f - 0.5) / (AUROC_1.0 - 0.5)``.
    robustness : {"points", "chance"}
        ``points``: the losses in AUROC points; ``chance``: each loss divided by
        ``AUROC_clean - 0.5``.
    chance_margin : float or None
        Required when a scale is ``chance``: a cell whose clean AUROC lies less
        than this above 0.5 has no above-chance discrimination to measure; its
        chance-scaled ``L`` is 0 and its ``R`` is 1 (nothing retained, all lost).

    Examples
    --------
    >>> AxisScales().is_study
    True
    >>> AxisScales("chance", "chance", 0.05).is_study
    False
    """

    label_efficiency: str = "ratio"
    robustness: str = "points"
    chance_margin: float | None = None

    def __post_init__(self) -> None:
        if self.label_efficiency not in L_SCALES:
            raise ReferenceStandardError(
                f"reference standard: field 'axis_scales.L' must be one of {', '.join(L_SCALES)}, "
                f"found {self.label_efficiency!r}")
        if self.robustness not in R_SCALES:
            raise ReferenceStandardError(
                f"reference standard: field 'axis_scales.R' must be one of {', '.join(R_SCALES)}, "
                f"found {self.robustness!r}")
        margin = self.chance_margin
        if self.uses_chance:
            if not _finite(margin) or not 0.0 <= float(margin) < 0.5:
                raise ReferenceStandardError(
                    "reference standard: field 'axis_scales.chance_margin' must be a number in [0, 0.5) "
                    f"when a scale is 'chance', found {margin!r}")
            object.__setattr__(self, "chance_margin", float(margin))
        elif margin is not None:
            raise ReferenceStandardError(
                "reference standard: field 'axis_scales.chance_margin' applies only to a 'chance' scale")

    @property
    def uses_chance(self) -> bool:
        """Whether either axis is measured against chance."""
        return self.label_efficiency == "chance" or self.robustness == "chance"

    @property
    def is_study(self) -> bool:
        """Whether these are the study's scales (ratio and points)."""
        return not self.uses_chance

    def to_dict(self) -> dict[str, Any]:
        """The YAML mapping of the ``axis_scales`` field."""
        out: dict[str, Any] = {"L": self.label_efficiency, "R": self.robustness}
        if self.chance_margin is not None:
            out["chance_margin"] = self.chance_margin
        return out


@dataclass(frozen=True)
class Dominance:
    """How a standard counts the panel members a candidate dominates (method section 9, amendment 20).

    A standard without a ``dominance`` field uses the study's Pareto count
    (``Dominance()``): standards frozen before the amendment keep their meaning
    and their content hash.

    Attributes
    ----------
    form : {"pareto", "noise_aware"}
        ``pareto``: the share of panel members ``p`` with ``s >= p`` on every
        axis and ``s > p`` on one; ``noise_aware``: the mean over panel members
        of ``prod_a Phi((s_a - p_a) / (sqrt(2) * noise_sd_a))``.
    noise_sd : tuple of float or None
        Required for ``noise_aware``: the standard error of each normalised
        axis (D, C, L, R) at the standard's protocol; both the candidate's and
        the panel member's value carry it, hence the ``sqrt(2)``.

    Examples
    --------
    >>> Dominance().is_pareto
    True
    >>> Dominance("noise_aware", (0.01, 0.02, 0.02, 0.02)).to_dict()["noise_sd"]["C"]
    0.02
    """

    form: str = "pareto"
    noise_sd: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if self.form not in DOMINANCE_FORMS:
            raise ReferenceStandardError(
                f"reference standard: field 'dominance.form' must be one of {', '.join(DOMINANCE_FORMS)}, "
                f"found {self.form!r}")
        if self.form == "pareto":
            if self.noise_sd is not None:
                raise ReferenceStandardError(
                    "reference standard: field 'dominance.noise_sd' applies only to the 'noise_aware' form")
            return
        values = self.noise_sd
        if values is None or len(values) != len(AXES) or not all(_finite(v) and float(v) > 0 for v in values):
            raise ReferenceStandardError(
                "reference standard: field 'dominance.noise_sd' must give a number > 0 for each of "
                f"{', '.join(AXES)} when the form is 'noise_aware', found {values!r}")
        object.__setattr__(self, "noise_sd", tuple(float(v) for v in values))

    @property
    def is_pareto(self) -> bool:
        """Whether this is the study's Pareto count."""
        return self.form == "pareto"

    def to_dict(self) -> dict[str, Any]:
        """The YAML mapping of the ``dominance`` field."""
        out: dict[str, Any] = {"form": self.form}
        if self.noise_sd is not None:
            out["noise_sd"] = dict(zip(AXES, self.noise_sd, strict=True))
        return out


@dataclass(frozen=True)
class RobustnessComposite:
    """How a standard weighs the pieces of the robustness axis (method section 9, amendment 23).

    A standard without a ``robustness`` field uses the study's composite
    (``RobustnessComposite()``): ``R`` is the plain mean of the pieces a cell
    has among the average corruption loss, the worst family's loss and the
    shift loss. Standards frozen before the amendment keep their meaning,
    their scores to the last bit and their content hash.

    With declared weights ``w``, ``R`` is the weighted mean over the pieces the
    cell has, ``sum_i w_i x_i / sum_i w_i`` (the weights of the available
    pieces renormalised, as the study's mean renormalises its equal shares); a
    cell whose available pieces all weigh 0 has no ``R``.

    Attributes
    ----------
    weights : tuple of float or None
        ``(average, worst, shift)``, non-negative, summing to 1; ``None``: the
        study's equal shares.

    Examples
    --------
    >>> RobustnessComposite().is_study
    True
    >>> RobustnessComposite((0.5, 0.0, 0.5)).to_dict()
    {'average': 0.5, 'worst': 0.0, 'shift': 0.5}
    """

    weights: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if self.weights is None:
            return
        values = self.weights
        if len(values) != len(R_PIECES) or not all(_finite(v) and float(v) >= 0 for v in values):
            raise ReferenceStandardError(
                "reference standard: field 'robustness' must give a number >= 0 for each of "
                f"{', '.join(R_PIECES)}, found {values!r}")
        total = math.fsum(float(v) for v in values)
        if abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
            raise ReferenceStandardError(f"reference standard: field 'robustness' must sum to 1, found {total!r}")
        object.__setattr__(self, "weights", tuple(float(v) for v in values))

    @property
    def is_study(self) -> bool:
        """Whether this is the study's composite (equal shares of the available pieces)."""
        return self.weights is None

    def to_dict(self) -> dict[str, float]:
        """The YAML mapping of the ``robustness`` field (empty for the study's composite)."""
        return {} if self.weights is None else dict(zip(R_PIECES, self.weights, strict=True))


@dataclass(frozen=True, eq=False)
class ReferenceStandard:
    """A validated reference standard.

    Attributes
    ----------
    version : str
        Version id, named by every score computed against it.
    anchors : dict
        ``{axis: (worst, best)}`` for axes D, C, L, R.
    weights : dict
        ``{"dominance": w, "balance": w, "floor": w}``, non-negative, sum 1.
    label_fractions : tuple of float
        Fractions of the protocol; includes 1.0, the others enter ``L``.
    ece_bins : int
        Number of equal-width ECE bins the results must have used.
    panel_names : tuple of str
        Reference panel members (may be empty in a template).
    panel_profiles : numpy.ndarray
        Shape (k, 4), the panel's normalised profiles in [0, 1], axis order D, C, L, R.
    created, description, arm, source_results_hash : str
        Provenance.
    axis_scales : AxisScales
        The scales of ``L`` and ``R`` (default: the study's).
    dominance : Dominance
        How dominance counts panel members (default: the study's Pareto count).
    ece_estimator : {"plugin", "debiased"}
        The calibration axis's estimator (default: the study's plug-in ECE; a
        standard without the field keeps its meaning and its content hash).
    robustness : RobustnessComposite
        The weights of the robustness axis's pieces (default: the study's
        equal shares; a standard without the field keeps its meaning and hash).
    """

    version: str
    anchors: dict[str, tuple[float, float]]
    weights: dict[str, float]
    label_fractions: tuple[float, ...]
    ece_bins: int
    panel_names: tuple[str, ...] = ()
    panel_profiles: np.ndarray = field(default_factory=lambda: np.zeros((0, len(AXES))))
    created: str = ""
    description: str = ""
    arm: str = "frozen"
    source_results_hash: str = ""
    axis_scales: AxisScales = field(default_factory=AxisScales)
    dominance: Dominance = field(default_factory=Dominance)
    ece_estimator: str = "plugin"
    robustness: RobustnessComposite = field(default_factory=RobustnessComposite)

    def __post_init__(self) -> None:
        # Normalise containers so a standard built in code equals one read from disk.
        object.__setattr__(self, "anchors", {a: (float(w), float(b)) for a, (w, b) in self.anchors.items()})
        object.__setattr__(self, "weights", {k: float(v) for k, v in self.weights.items()})
        object.__setattr__(self, "label_fractions", tuple(float(f) for f in self.label_fractions))
        object.__setattr__(self, "panel_names", tuple(str(n) for n in self.panel_names))
        profiles = np.array(self.panel_profiles, dtype=float).reshape(-1, len(AXES))
        profiles.setflags(write=False)
        object.__setattr__(self, "panel_profiles", profiles)
        validate_standard(self)

    # Arrays in axis order, for the vectorised scorer.
    @property
    def worst(self) -> np.ndarray:
        """Worst anchors, shape (4,), axis order D, C, L, R."""
        return np.array([self.anchors[a][0] for a in AXES], dtype=float)

    @property
    def best(self) -> np.ndarray:
        """Best anchors, shape (4,), axis order D, C, L, R."""
        return np.array([self.anchors[a][1] for a in AXES], dtype=float)

    @property
    def weight_vector(self) -> np.ndarray:
        """Weights of (dominance, balance, floor), shape (3,)."""
        return np.array([self.weights[k] for k in WEIGHT_KEYS], dtype=float)

    @property
    def dominance_noise(self) -> np.ndarray | None:
        """The noise-aware dominance's per-axis noise, shape (4,); ``None`` for the Pareto count."""
        if self.dominance.noise_sd is None:
            return None
        return np.array(self.dominance.noise_sd, dtype=float)

    @property
    def panel(self) -> pd.DataFrame:
        """The panel's normalised profiles as a DataFrame (index encoder)."""
        return pd.DataFrame(self.panel_profiles, index=pd.Index(self.panel_names, name="encoder"), columns=list(AXES))

    @property
    def content_hash(self) -> str:
        """``sha256:<hex>`` of every field that can change a score."""
        return content_hash(self.to_dict())

    def require_panel(self) -> np.ndarray:
        """The panel profiles; raises if the panel is empty (a template).

        Raises
        ------
        ReferenceStandardError
            If the standard has no panel members.
        """
        if len(self.panel_names) == 0:
            raise ReferenceStandardError(
                f"reference standard '{self.version}' has an empty panel and cannot score; "
                "freeze one from a results table (crsbench freeze) and pass it with --standard"
            )
        return self.panel_profiles

    def to_dict(self) -> dict[str, Any]:
        """The YAML-ready mapping (without ``content_hash``)."""
        return {
            "format": FORMAT,
            "version": self.version,
            "created": self.created,
            "description": self.description,
            "arm": self.arm,
            "anchors": {a: {"worst": self.anchors[a][0], "best": self.anchors[a][1]} for a in AXES},
            "weights": {k: self.weights[k] for k in WEIGHT_KEYS},
            "label_fractions": list(self.label_fractions),
            "ece_bins": int(self.ece_bins),
            **({} if self.axis_scales.is_study else {"axis_scales": self.axis_scales.to_dict()}),
            **({} if self.dominance.is_pareto else {"dominance": self.dominance.to_dict()}),
            **({} if self.ece_estimator == "plugin" else {"ece_estimator": self.ece_estimator}),
            **({} if self.robustness.is_study else {"robustness": self.robustness.to_dict()}),
            "source_results_hash": self.source_results_hash,
            "panel": [
                {"name": name, **{a: float(v) for a, v in zip(AXES, row, strict=True)}}
                for name, row in zip(self.panel_names, self.panel_profiles, strict=True)
            ],
        }


def content_hash(mapping: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of a standard's mapping, ignoring created/description/content_hash.

    The text is :func:`crsbench_lib.hashing.canonical_json`: floats by ``repr``
    (exact round trip), keys sorted.
    """
    content = {k: v for k, v in mapping.items() if k not in _UNHASHED}
    return "sha256:" + sha256_of(content)


def _fail(source: str, where: str, what: str) -> ReferenceStandardError:
    return ReferenceStandardError(f"{source}: field '{where}' {what}")


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(float(value))


def validate_standard(std: ReferenceStandard, source: str = "reference standard") -> None:
    """Check a standard's fields.

    Raises
    ------
    ReferenceStandardError
        Naming the field: empty version; anchors not exactly D, C, L, R, not
        finite, worst == best, or pointing the wrong way (best must exceed worst
        on D and L, and lie below it on C and R); weights not exactly
        dominance/balance/floor, negative, or not summing to 1 within 1e-9;
        label fractions outside (0, 1], repeated, or without 1.0; ece_bins not a
        positive integer; ece_estimator not one of :data:`ECE_ESTIMATORS`; panel names empty or repeated; panel profiles outside
        [0, 1] or not of shape (k, 4).
    """
    if not isinstance(std.version, str) or not std.version.strip():
        raise _fail(source, "version", "must be a non-empty string")
    if set(std.anchors) != set(AXES):
        raise _fail(source, "anchors", f"must have exactly the axes {', '.join(AXES)}, found {sorted(std.anchors)}")
    for axis in AXES:
        worst, best = std.anchors[axis]
        if not (math.isfinite(worst) and math.isfinite(best)):
            raise _fail(source, f"anchors.{axis}", "must hold finite numbers")
        if worst == best:
            raise _fail(source, f"anchors.{axis}", f"has worst == best ({worst!r})")
        if (best > worst) != HIGHER_IS_BETTER[axis]:
            direction = "above" if HIGHER_IS_BETTER[axis] else "below"
            raise _fail(source, f"anchors.{axis}", f"best must lie {direction} worst (axis {axis})")
    if set(std.weights) != set(WEIGHT_KEYS):
        raise _fail(source, "weights", f"must have exactly {', '.join(WEIGHT_KEYS)}, found {sorted(std.weights)}")
    for key in WEIGHT_KEYS:
        if not math.isfinite(std.weights[key]) or std.weights[key] < 0:
            raise _fail(source, f"weights.{key}", f"must be a finite number >= 0, found {std.weights[key]!r}")
    total = math.fsum(std.weights.values())
    if abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
        raise _fail(source, "weights", f"must sum to 1, found {total!r}")
    fractions = std.label_fractions
    if not fractions:
        raise _fail(source, "label_fractions", "must not be empty")
    for f in fractions:
        if not (math.isfinite(f) and 0.0 < f <= 1.0):
            raise _fail(source, "label_fractions", f"must lie in (0, 1], found {f!r}")
    if len(set(fractions)) != len(fractions):
        raise _fail(source, "label_fractions", "must not repeat a fraction")
    if 1.0 not in fractions:
        raise _fail(source, "label_fractions", "must include 1.0")
    if isinstance(std.ece_bins, bool) or not isinstance(std.ece_bins, (int, np.integer)) or std.ece_bins < 1:
        raise _fail(source, "ece_bins", f"must be a positive integer, found {std.ece_bins!r}")
    if std.ece_estimator not in ECE_ESTIMATORS:
        raise _fail(source, "ece_estimator", f"must be one of {', '.join(ECE_ESTIMATORS)}, found {std.ece_estimator!r}")
    names = std.panel_names
    if any(not n.strip() for n in names):
        raise _fail(source, "panel", "has a member with an empty name")
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise _fail(source, "panel", f"names '{n}' twice")
        seen.add(n)
    profiles = std.panel_profiles
    if profiles.shape != (len(names), len(AXES)):
        raise _fail(source, "panel", f"profiles must have shape ({len(names)}, {len(AXES)}), found {profiles.shape}")
    outside = ~((profiles >= 0.0) & (profiles <= 1.0))  # also catches NaN
    if outside.any():
        i, a = (int(x[0]) for x in np.nonzero(outside))
        raise _fail(
            source, f"panel[{i}].{AXES[a]}", f"(member '{names[i]}') must lie in [0, 1], found {profiles[i, a]!r}"
        )


def _number(mapping: Mapping[str, Any], key: str, source: str, where: str) -> float:
    if key not in mapping:
        raise _fail(source, f"{where}.{key}", "is missing")
    value = mapping[key]
    if not _finite(value):
        raise _fail(source, f"{where}.{key}", f"must be a finite number, found {value!r}")
    return float(value)


def _axis_scales(value: object, source: str) -> AxisScales:
    """The ``axis_scales`` field (absent: the study's scales)."""
    if value is None:
        return AxisScales()
    if not isinstance(value, Mapping):
        raise _fail(source, "axis_scales", "must be a mapping with L, R and chance_margin")
    unknown = sorted(set(map(str, value)) - {"L", "R", "chance_margin"})
    if unknown:
        raise _fail(source, f"axis_scales.{unknown[0]}", "is not a field (expected L, R, chance_margin)")
    try:
        return AxisScales(str(value.get("L", "ratio")), str(value.get("R", "points")), value.get("chance_margin"))
    except ReferenceStandardError as exc:
        raise ReferenceStandardError(str(exc).replace("reference standard:", f"{source}:", 1)) from None


def _dominance(value: object, source: str) -> Dominance:
    """The ``dominance`` field (absent: the study's Pareto count)."""
    if value is None:
        return Dominance()
    if not isinstance(value, Mapping):
        raise _fail(source, "dominance", "must be a mapping with form and noise_sd")
    unknown = sorted(set(map(str, value)) - {"form", "noise_sd"})
    if unknown:
        raise _fail(source, f"dominance.{unknown[0]}", "is not a field (expected form, noise_sd)")
    noise = value.get("noise_sd")
    if noise is not None:
        if not isinstance(noise, Mapping) or set(map(str, noise)) != set(AXES):
            raise _fail(source, "dominance.noise_sd", f"must be a mapping of exactly the axes {', '.join(AXES)}")
        noise = tuple(_number(noise, a, source, "dominance.noise_sd") for a in AXES)
    try:
        return Dominance(str(value.get("form", "pareto")), noise)
    except ReferenceStandardError as exc:
        raise ReferenceStandardError(str(exc).replace("reference standard:", f"{source}:", 1)) from None


def _robustness(value: object, source: str) -> RobustnessComposite:
    """The ``robustness`` field (absent: the study's equal shares)."""
    if value is None:
        return RobustnessComposite()
    if not isinstance(value, Mapping) or set(map(str, value)) != set(R_PIECES):
        raise _fail(source, "robustness", f"must be a mapping of exactly {', '.join(R_PIECES)} to weights")
    weights = tuple(_number(value, piece, source, "robustness") for piece in R_PIECES)
    try:
        return RobustnessComposite(weights)
    except ReferenceStandardError as exc:
        raise ReferenceStandardError(str(exc).replace("reference standard:", f"{source}:", 1)) from None


def standard_from_dict(data: object, source: str = "reference standard") -> ReferenceStandard:
    """Build and validate a standard from its YAML mapping.

    Raises
    ------
    ReferenceStandardError
        On a missing or malformed field (named), or a ``content_hash`` that
        does not match the content (the file was edited after freezing).
    """
    if not isinstance(data, Mapping):
        raise ReferenceStandardError(f"{source}: expected a YAML mapping at the top level")
    fmt = data.get("format", FORMAT)
    if fmt != FORMAT:
        raise _fail(source, "format", f"must be '{FORMAT}', found {fmt!r}")
    for key in ("version", "anchors", "weights", "label_fractions", "ece_bins"):
        if key not in data:
            raise _fail(source, key, "is missing")
    version = data["version"]
    if not isinstance(version, str):
        raise _fail(source, "version", f"must be a string, found {version!r}")
    anchors_in = data["anchors"]
    if not isinstance(anchors_in, Mapping):
        raise _fail(source, "anchors", "must be a mapping of axis -> {worst, best}")
    anchors: dict[str, tuple[float, float]] = {}
    for axis, pair in anchors_in.items():
        if not isinstance(pair, Mapping):
            raise _fail(source, f"anchors.{axis}", "must be a mapping with worst and best")
        anchors[str(axis)] = (
            _number(pair, "worst", source, f"anchors.{axis}"),
            _number(pair, "best", source, f"anchors.{axis}"),
        )
    weights_in = data["weights"]
    if not isinstance(weights_in, Mapping):
        raise _fail(source, "weights", "must be a mapping of component -> weight")
    weights = {str(k): _number(weights_in, k, source, "weights") for k in weights_in}
    fractions_in = data["label_fractions"]
    if not isinstance(fractions_in, Sequence) or isinstance(fractions_in, str):
        raise _fail(source, "label_fractions", "must be a list of numbers")
    for f in fractions_in:
        if not _finite(f):
            raise _fail(source, "label_fractions", f"must hold numbers, found {f!r}")
    ece_bins = data["ece_bins"]
    if isinstance(ece_bins, bool) or not isinstance(ece_bins, int):
        raise _fail(source, "ece_bins", f"must be a positive integer, found {ece_bins!r}")
    panel_in = data.get("panel") or []
    if not isinstance(panel_in, Sequence) or isinstance(panel_in, str):
        raise _fail(source, "panel", "must be a list of {name, D, C, L, R}")
    names: list[str] = []
    rows: list[list[float]] = []
    for i, member in enumerate(panel_in):
        if not isinstance(member, Mapping) or not isinstance(member.get("name"), str):
            raise _fail(source, f"panel[{i}]", "must be a mapping with a string 'name' and axes D, C, L, R")
        names.append(member["name"])
        rows.append([_number(member, a, source, f"panel[{i}]") for a in AXES])
    scales = _axis_scales(data.get("axis_scales"), source)
    dominance = _dominance(data.get("dominance"), source)
    robustness = _robustness(data.get("robustness"), source)
    created = data.get("created", "")
    if isinstance(created, datetime):  # YAML parses an unquoted timestamp
        created = created.isoformat()
    try:
        std = ReferenceStandard(
            version=version,
            anchors=anchors,
            weights=weights,
            label_fractions=tuple(float(f) for f in fractions_in),
            ece_bins=ece_bins,
            panel_names=tuple(names),
            panel_profiles=np.array(rows, dtype=float).reshape(-1, len(AXES)),
            created=str(created),
            description=str(data.get("description", "") or ""),
            arm=str(data.get("arm", "frozen")),
            source_results_hash=str(data.get("source_results_hash", "") or ""),
            axis_scales=scales,
            dominance=dominance,
            ece_estimator=str(data.get("ece_estimator", "plugin")),
            robustness=robustness,
        )
    except ReferenceStandardError as exc:
        raise ReferenceStandardError(str(exc).replace("reference standard:", f"{source}:", 1)) from None
    recorded = data.get("content_hash")
    if recorded is not None and recorded != std.content_hash:
        raise _fail(
            source, "content_hash", "does not match the content (the file was edited after freezing; freeze a new version)"
        )
    return std


def load_standard(path: str | os.PathLike[str]) -> ReferenceStandard:
    """Read and validate a reference standard YAML file.

    Raises
    ------
    ReferenceStandardError
        If the file is missing, is not YAML, or a field is invalid (named).
    """
    source = Path(path)
    if not source.is_file():
        raise ReferenceStandardError(f"{source}: no such reference standard file")
    try:
        data = yaml.safe_load(source.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ReferenceStandardError(f"{source}: not a readable YAML file ({type(exc).__name__})") from exc
    return standard_from_dict(data, source=str(source))


def dump_standard(std: ReferenceStandard) -> str:
    """The YAML text of a standard, with its ``content_hash``."""
    mapping = std.to_dict()
    mapping["content_hash"] = std.content_hash
    header = (
        f"# CRS-Bench reference standard {std.version}: anchors, weights, label fractions, ECE bins\n"
        "# and the reference panel's normalised profiles. Do not edit: freeze a new version.\n"
    )
    return header + yaml.safe_dump(mapping, sort_keys=False, default_flow_style=None, width=100)


def save_standard(std: ReferenceStandard, path: str | os.PathLike[str]) -> Path:
    """Write a standard as YAML (atomically) and return the path."""
    destination = Path(path)
    atomic_write_text(destination, dump_standard(std))
    return destination


def template_standard_path() -> Path:
    """The shipped template (method defaults, empty panel)."""
    return standards_dir() / TEMPLATE_FILENAME


def load_template() -> ReferenceStandard:
    """The method's defaults, read from ``standards/crs-template.yaml``."""
    return load_standard(template_standard_path())


def default_standard_path() -> Path:
    """The shipped default standard, ``standards/<DEFAULT_STANDARD>.yaml``.

    Raises
    ------
    ReferenceStandardError
        If it does not exist yet, with what to do instead.
    """
    path = standards_dir() / DEFAULT_FILENAME
    if not path.is_file():
        raise ReferenceStandardError(
            f"no default reference standard at {path}; freeze one with "
            "'crsbench freeze RESULTS --version ID --out FILE' and pass it with --standard"
        )
    return path


def results_hash(results: pd.DataFrame | ValidatedResults) -> str:
    """``sha256:<hex>`` of a results table's schema columns, independent of row order.

    A :class:`~crsbench_lib.results.validated.ValidatedResults` gives its hash
    kept from the first call; a DataFrame is validated first.
    """
    return as_validated(results).hash


def check_ece_bins(results: pd.DataFrame, std: ReferenceStandard, arm: str = "frozen") -> None:
    """Raise if the arm's clean rows used a different ECE binning than the standard.

    Raises
    ------
    ReferenceStandardError
        Naming the bins found and the standard's.
    """
    rows = clean_rows(results, arm=arm)
    found = sorted({int(b) for b in rows["ece_bins"]}) if "ece_bins" in rows.columns else []
    if found and found != [int(std.ece_bins)]:
        raise ReferenceStandardError(
            f"results use ECE with {', '.join(map(str, found))} bins, but standard '{std.version}' "
            f"(field 'ece_bins') requires {std.ece_bins}"
        )


def as_standard(standard: ReferenceStandard | str | os.PathLike[str] | None) -> ReferenceStandard:
    """A standard from an object, a path, or ``None`` (the shipped default)."""
    if isinstance(standard, ReferenceStandard):
        return standard
    if standard is None:
        return load_standard(default_standard_path())
    if isinstance(standard, (str, os.PathLike)):
        return load_standard(standard)
    raise ReferenceStandardError(f"expected a ReferenceStandard or a path, got {type(standard).__name__}")


__all__ = [
    "AXES",
    "AxisScales",
    "DOMINANCE_FORMS",
    "ECE_ESTIMATORS",
    "Dominance",
    "CHANCE_AUROC",
    "L_SCALES",
    "R_PIECES",
    "R_SCALES",
    "RobustnessComposite",
    "DEFAULT_FILENAME",
    "DEFAULT_STANDARD",
    "FORMAT",
    "HIGHER_IS_BETTER",
    "ReferenceStandard",
    "TEMPLATE_FILENAME",
    "WEIGHT_KEYS",
    "as_standard",
    "check_ece_bins",
    "content_hash",
    "default_standard_path",
    "dump_standard",
    "load_standard",
    "load_template",
    "results_hash",
    "save_standard",
    "standard_from_dict",
    "template_standard_path",
    "validate_standard",
]
