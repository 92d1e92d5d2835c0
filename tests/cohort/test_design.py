"""The generators' visibility choices: the table reads the generators' own constants."""

from __future__ import annotations

import numpy as np

from crsbench_lib.cohort import cxr, derm, fundus
from crsbench_lib.cohort.datasets import pool_attributes, pretraining_pool
from crsbench_lib.cohort.design import DESIGN_COLUMNS, design_choices


def test_every_row_is_complete_and_names_a_dataset() -> None:
    table = design_choices()
    assert list(table.columns) == list(DESIGN_COLUMNS)
    assert set(table["dataset"]) == {"cxr", "derm", "fundus"}
    assert (table.map(lambda v: isinstance(v, str) and len(v) > 0)).all().all()


def test_settings_follow_the_constants(monkeypatch) -> None:
    # A changed constant changes the printed setting: the table cannot drift from the images.
    monkeypatch.setattr(cxr, "NODULE_RADIUS", (0.05, 0.10))
    monkeypatch.setattr(fundus, "MICROANEURYSM_SIGMA_PX", 0.4)
    monkeypatch.setattr(derm, "NETWORK_PERIOD_PX", 3.0)
    table = design_choices().set_index("choice")
    assert table.at["nodule size", "setting"] == "2-4 cm diameter"  # 2 x 0.05 x 20 cm per unit
    assert table.at["microaneurysm size", "setting"] == "blob sigma 0.4 px"
    assert table.at["structure sizes", "setting"].startswith(f"network period {3.0 * derm.LESION_ZOOM:g} px")
    monkeypatch.setattr(derm, "LESION_ZOOM", 1.0)
    table = design_choices().set_index("choice")
    assert table.at["structure sizes", "setting"].startswith("network period 3 px")
    assert table.at["lesion framing", "setting"].startswith("every lesion size x1: median diameter 34-42 %")


def test_the_lesion_zoom_scales_the_drawn_lesions(monkeypatch) -> None:
    # The same draws at two zooms: every radius inside both clips scales by the zoom.
    def radii(zoom: float) -> np.ndarray:
        monkeypatch.setattr(derm, "LESION_ZOOM", zoom)
        return np.asarray(derm.generate(np.random.default_rng(11), 64, 32).attributes["lesion_radius"])

    near, far = radii(1.5), radii(1.0)
    inside = (far > 0.14) & (near < 1.0)
    assert inside.sum() > 40
    np.testing.assert_allclose(near[inside], 1.5 * far[inside], rtol=1e-6)


def test_finding_targets_are_pool_attributes_gated_by_presence() -> None:
    listed = design_choices().set_index("choice").at["finding attributes among the pretraining targets", "setting"]
    names = listed.split(", ")
    assert len(names) == 3 and set(names) <= set(pool_attributes("cxr"))
    pool = pretraining_pool("cxr", 256, seed=3)
    for name, finding in zip(names, ("effusion", "nodule", "consolidation"), strict=True):
        values = np.asarray(pool.attributes[name])
        assert np.isfinite(values).all() and (values >= 0).all() and (values > 0).any()
        # An absent finding has no amount: the attribute is positive where the finding was drawn, so it agrees
        # with the (reader-noisy, 2 % flipped) label on all but a few images.
        label = pool.labels[:, cxr.CLASS_NAMES.index(finding)]
        assert np.mean((values > 0) != (label == 1)) < 0.06


def test_the_own_data_text_never_speaks_of_phantoms() -> None:
    from crsbench_lib.cohort.design import DESIGN_INTRO, OWN_DATA_TEXT

    assert "phantom" not in OWN_DATA_TEXT.lower() and "phantom" in DESIGN_INTRO.lower()
