"""The generators' design choices that make class evidence visible at 32 px, and what each costs in realism.

World v3 (generators 8 and 9) changed no task, label or site: it made findings
that were drawn below a pixel visible at the working resolution, framed each
dermoscopy lesion closer (generator 9), and gave the
radiology pool the attributes a report would carry. Each choice trades some
realism for an image in which an encoder *can* learn what the label means;
the cohort chapter prints this table so that a reader sees both sides. The
settings are read from the generator modules' constants, so the table cannot
drift from the images; the measured effect of each choice (a throwaway
prototype, seed 0) is recorded in ``docs/default-cohort.md``.
"""

from __future__ import annotations

import pandas as pd

from crsbench_lib.cohort import cxr, derm, fundus

#: What the cohort chapter says before the table, on the phantom cohort.
DESIGN_INTRO = (
    "At 32 pixels a finding smaller than a pixel cannot be learned by any encoder, so a world drawn at real sizes "
    "would rank encoders by how well they guess. The phantom generators draw some findings larger, denser or more "
    "explicitly labelled than real images show them; each row of the table says what that buys and what it costs "
    "in realism. The settings are read from the generators themselves."
)
#: What it says on a run of the user's own data (no image of it was drawn).
OWN_DATA_TEXT = (
    "This run's images are the datasets' own, at the resolution its profile reads them: nothing in them was drawn "
    "larger or denser than it was acquired, so what an encoder cannot see at that resolution it cannot learn."
)
#: Columns of :func:`design_choices`.
DESIGN_COLUMNS: tuple[str, ...] = ("dataset", "choice", "setting", "why", "realism cost")


def _range(values: tuple[float, float], unit: str = "", scale: float = 1.0, digits: int = 2) -> str:
    low, high = (round(v * scale, digits) for v in values)
    return f"{low:g}-{high:g}{unit}"


def design_choices() -> pd.DataFrame:
    """One row per visibility choice of the phantom generators, with its reason and its realism cost.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`DESIGN_COLUMNS`; ``setting`` is computed from the
        generator modules' constants (sizes in pixels of a 32-px image, or
        centimetres of the chest film).

    Examples
    --------
    >>> table = design_choices()
    >>> sorted(set(table["dataset"]))
    ['cxr', 'derm', 'fundus']
    >>> table.loc[table["choice"] == "nodule size", "setting"].item()
    '4.4-7.2 cm diameter'
    """
    cm = cxr.FIELD_CM / 2.0  # centimetres per normalised unit (the field spans 2 units)
    px_cm = cxr.FIELD_CM / 32.0
    zoom = derm.LESION_ZOOM  # derm sizes as drawn (the module's constants are those of a lesion at zoom 1)
    finding_targets = [name for name in cxr.ATTRIBUTES if name.endswith(("_amount", "_conspicuity"))]
    rows = [
        ("cxr", "nodule size", _range(tuple(2 * r for r in cxr.NODULE_RADIUS), " cm diameter", cm, 1),
         f"one pixel is about {px_cm:.2f} cm at 32 px: a nodule under 3 cm is one or two pixels, "
         "indistinguishable from an ECG electrode",
         "by size a mass (over 3 cm), not the small nodule a radiologist hunts for"),
        ("cxr", "opacity contrast", f"nodule {_range(cxr.NODULE_CONTRAST)}, consolidation "
         f"{_range(cxr.CONSOLIDATION_CONTRAST)} (added density)",
         "fainter opacities vanished into the ribs and vessels at 32 px",
         "denser than the subtle early findings of real films"),
        ("cxr", "finding attributes among the pretraining targets", ", ".join(finding_targets),
         "the multi-task recipe regresses the scene attributes; without these it was asked about the heart's "
         "size and about none of the other three findings",
         "the broad multi-task encoder is report-supervised on chest films, as generalists trained on "
         "image-report pairs are: on cxr it is close to an in-task model"),
        ("derm", "lesion framing", f"every lesion size x{zoom:g}: median diameter "
         f"{_range((float(derm.RADIUS.min()), float(derm.RADIUS.max())), ' % of the frame width (by class)', 100 * zoom, 0)}",
         "framed at a tenth of the image area, a lesion was 11-13 px wide and its asymmetry, border and colour "
         "regions a pixel or less",
         "every image a close-up: less surrounding skin, and a large lesion cut by the frame more often"),
        ("derm", "structure sizes", f"network period {zoom * derm.NETWORK_PERIOD_PX:g} px, streaks "
         f"{zoom * derm.STREAK_WIDTH_PX:g} px, vessels {zoom * derm.VESSEL_WIDTH_PX:g} px wide, dots sigma "
         + ", ".join(f"{k} {zoom * v:g} px" for k, v in derm.DOT_SIGMA_PX.items()),
         "at smaller sizes the dermoscopic structures fell below a pixel in lesions a few pixels wide",
         "a 32-px thumbnail showing structures a real thumbnail would blur away"),
        ("derm", "structure strength", f"uniform {_range(derm.STRUCTURE_STRENGTH)} of full contrast",
         "faint structures below a pixel carried no signal", "every present structure is clearly marked"),
        ("fundus", "microaneurysm size", f"blob sigma {fundus.MICROANEURYSM_SIGMA_PX:g} px",
         "real microaneurysms (under 125 micrometres) are far below a 32-px fundus image's pixel",
         "a microaneurysm is drawn as the visible dot a cluster of them would make"),
        ("fundus", "new-vessel width", f"{fundus.NEW_VESSEL_WIDTH_PX:g} px strokes",
         "thinner strokes fell below a pixel", "new vessels coarser than real neovascularisation"),
    ]
    return pd.DataFrame(rows, columns=list(DESIGN_COLUMNS))


__all__ = ["DESIGN_COLUMNS", "DESIGN_INTRO", "OWN_DATA_TEXT", "design_choices"]
