"""The metrics layer: AUROC and calibration error on arrays (no torch, no images).

:mod:`.auroc` and :mod:`.calibration` hold each metric once, in its plain form
and in the weighted form under bootstrap draws of image multiplicities.
"""
